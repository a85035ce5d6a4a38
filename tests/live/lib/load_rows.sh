# SPDX-License-Identifier: GPL-2.0
# load_rows_ios FILE: the IOs that `poolscope load`'s measured rows (not the ramp rows) account
# for, each row's IOPS times the time since the row before it (rows are not always one second
# long: a stalled reporter writes a longer row). Compared with the result line's ios=, this
# checks that rows neither overlap nor leave gaps. One step: times count from its start.
load_rows_ios() {
	awk '/^ +[0-9.]+s / {
		t = $1; sub(/s$/, "", t)
		if (!/ramp/) s += $2 * (t - prev)
		prev = t
	} END { printf "%.0f\n", s }' "$1"
}
