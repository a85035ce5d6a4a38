#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Long traces (docs/performance.md, "Long traces"): report, diff (the trace with itself), plot
# and export --folded on generated traces of 1 h and 24 h x 2000 tags x 1 s
# (tests/bench/progs/bigtrace.c; in the 1 h trace every tag has a row every interval, in the
# 24 h one 10 % of them, as a quieter server writes), each against a raw sqlite3 scan of the same
# samples (every column of every row summed) measured in the same run (two scans for diff, which
# reads the trace twice). The configurations
# alternate in each round and the file is read once before each measurement, so the page
# cache serves both alike. Prints the median time, its ratio to the scan and the peak RSS of
# each command against the targets: within 2x the scan, under 256 MB. The traces are kept in
# $O/bench/big and reused. Knobs: BIG_BENCH_ROUNDS (3), BIG_BENCH_SIZES ("1h:3600:100
# 24h:86400:10", NAME:SECONDS:ACTIVE_PERCENT).
set -u
O=${O:-.output}
PS=${POOLSCOPE:-$O/poolscope}
TOP=${PS_SRCDIR:-$(pwd)}
ROUNDS=${BIG_BENCH_ROUNDS:-3}
SIZES=${BIG_BENCH_SIZES:-"1h:3600:100 24h:86400:10"}
BB=$O/bench/big
mkdir -p "$BB"
for t in sqlite3 /usr/bin/time; do
	command -v $t > /dev/null || { echo "big-bench: FAIL: $t not found (make deps)"; exit 1; }
done
[ -x "$PS" ] || { echo "big-bench: FAIL: $PS not found"; exit 1; }
cc -O2 -std=gnu11 -I"$TOP" -I"$O" -o "$BB/bigtrace" "$TOP/tests/bench/progs/bigtrace.c" \
	"$O/libpscore.a" -Wl,-Bstatic -lsqlite3 -Wl,-Bdynamic -lm -lpthread ||
	{ echo "big-bench: FAIL: cannot build the generator"; exit 1; }

median() { sort -g | awk '{ a[NR] = $1 } END { print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# run NAME CMD...: appends "seconds maxrss_kb" to $BB/NAME.m
run() {
	local name=$1; shift
	/usr/bin/time -f "%e %M" -o "$BB/$name.t" "$@" > /dev/null 2> "$BB/$name.err" ||
		{ echo "big-bench: FAIL: $name: $(tail -1 "$BB/$name.err")"; exit 1; }
	cat "$BB/$name.t" >> "$BB/$name.m"
}

for size in $SIZES; do
	IFS=: read -r name secs active <<< "$size"
	f=$BB/big-$name-2000-$active.db
	if [ ! -s "$f" ] || [ "$f" -ot "$TOP/tests/bench/progs/bigtrace.c" ]; then
		echo "big-bench: writing $f ($secs intervals x 2000 tags, $active % active)"
		"$BB/bigtrace" "$f" "$secs" 2000 "$active" || { echo "big-bench: FAIL: generator"; exit 1; }
	fi
	rows=$(sqlite3 "$f" 'SELECT count(*) FROM samples')
	mb=$(( $(stat -c %s "$f") / 1048576 ))
	cmds="scan report diff plot folded"
	for c in $cmds; do rm -f "$BB/$name-$c.m"; done
	for r in $(seq "$ROUNDS"); do
		order=$cmds
		[ $((r % 2)) = 0 ] && order=$(echo $cmds | tr ' ' '\n' | tac | tr '\n' ' ')
		for c in $order; do
			cat "$f" > /dev/null
			case $c in
			scan) run "$name-$c" sqlite3 "$f" 'SELECT sum(tag), sum(interval), sum(allocs),
				sum(frees), sum(alloc_bytes), sum(free_bytes), sum(live_objs),
				sum(live_bytes) FROM samples' ;;
			report) run "$name-$c" "$PS" report "$f" ;;
			diff) run "$name-$c" "$PS" diff "$f" "$f" ;;
			plot) run "$name-$c" "$PS" plot "$f" -o "$BB/$name.png" ;;
			folded) run "$name-$c" "$PS" export "$f" --folded ;;
			esac
		done
	done
	scan=$(awk '{ print $1 }' "$BB/$name-scan.m" | median)
	echo "big-bench: $name: $f, $mb MB, $rows sample rows; sqlite3 scan median $scan s ($ROUNDS rounds)"
	for c in report diff plot folded; do
		t=$(awk '{ print $1 }' "$BB/$name-$c.m" | median)
		rss=$(awk '{ print $2 }' "$BB/$name-$c.m" | sort -n | tail -1)
		# diff reads the trace twice: its baseline is two scans
		k=1 of="the scan"
		[ $c = diff ] && k=2 of="two scans"
		ratio=$(awk -v a="$t" -v b="$scan" -v k=$k 'BEGIN { printf "%.2f", a / (k * b) }')
		ok=met
		awk -v r="$ratio" -v m="$rss" 'BEGIN { exit !(r <= 2 && m < 262144) }' || ok="NOT MET"
		printf 'big-bench: %-4s %-7s %6.2f s  x%s of %s (target <= 2)  peak RSS %4d MB (target < 256)  %s\n' \
			"$name" "$c" "$t" "$ratio" "$of" $((rss / 1024)) "$ok"
	done
done
