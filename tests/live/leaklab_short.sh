#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Live: a short leak lab (tests/leaklab/run.sh): a network leak (tcp_unread_fast), a
# file-services leak (file_handles) and a negative (pagecache) alone in 30 s recordings (what
# the verdict is built to call), then a slow network leak (tcp_noread, 32 KiB/s) and a negative
# (step) beside the noise generator in 90 s recordings: the noise's own tasks allocate send
# page fragments at tcp_noread's site, megabytes that come and go, and in 60 s the leak's 2 MiB
# did not always stand out of them (docs/known-issues.md). Fails when any verdict is wrong: a
# leak not called a leak, on the wrong path or with an implausible first suspect, or a
# negative called a leak, and when the report has no verdict. Skips (the runner's exit 77)
# without root or BTF. About 6 minutes, one of them the noise generator's warm-up.
set -u
: "${POOLSCOPE:?POOLSCOPE not set}"
cd "${PS_SRCDIR:-.}" || exit 1
export O=${POOLSCOPE%/poolscope}
T=$(mktemp -d /var/tmp/ps-leaklab.XXXXXX) || exit 1
fails=0
# a failed run keeps its traces and reports: a wrong verdict is looked at in its own trace
trap 'if [ $fails != 0 ]; then echo "kept: $T"; elif [ -z "${PS_KEEP:-}" ]; then rm -rf "$T"; fi' EXIT

# part OUT NOISE ONLY ROWS SECS: one run of the lab, recordings of SECS; every one of its ROWS
# rows must be ok. A failed part does not stop the next: the log shows every verdict.
part() {
	local out=$T/$1 rc n
	PS_LEAKLAB_OUT=$out PS_LEAKLAB_NOISE=$2 PS_LEAKLAB_ONLY=$3 PS_LEAKLAB_SECS=$5 \
		tests/leaklab/run.sh
	rc=$?
	[ $rc = 77 ] && exit 77
	n=$(awk -F'\t' '$8 == "ok"' "$out/results.tsv" 2>/dev/null | wc -l)
	if [ $rc != 0 ]; then
		echo "FAIL: the lab's $1 part exited $rc"; fails=$((fails + 1))
	elif [ "$n" != "$4" ]; then
		echo "FAIL: $n rows ok in the $1 part, expected $4"; fails=$((fails + 1))
	else
		echo "ok: $1 part: $n verdicts right"
	fi
}
part quiet 0 "tcp_unread_fast file_handles pagecache" 3 30
part noise 1 "tcp_noread step" 2 90
[ $fails = 0 ]
