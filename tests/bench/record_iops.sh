#!/usr/bin/env bash
# IOPS of a local 8 KiB random-read, 16-thread pread loop over a pinned (mlock) file, with and
# without `poolscope record` (defaults), alternated round by round; medians and paired ratio.
set -u
cd "$(dirname "$0")/../.."
. tests/bench/record_common.sh.inc
ROUNDS=${PS_BENCH_ROUNDS:-5}
SECS=${PS_BENCH_SECS:-5}
MB=${PS_BENCH_MB:-256}
tmp=$(mktemp -d /var/tmp/ps-bench-iops.XXXXXX)
trap 'kill ${REC:-} 2>/dev/null; rm -rf "$tmp"' EXIT
run() { "$BB/preadbench" "$tmp/file" "$MB" 16 "$SECS" | awk '{ print $2 }'; }
echo "preadbench ${MB} MiB mlocked, 16 threads, ${SECS}s x $ROUNDS rounds; load: $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$tmp/base"; : > "$tmp/rec"; : > "$tmp/pair"; : > "$tmp/tfs"; : > "$tmp/tpair"
for r in $(seq 1 "$ROUNDS"); do
	b=$(run)
	rec_start "$tmp/r.db" --interval 1s; x=$(run); rec_stop
	# the tracefs backend in the same round, against the same base
	rec_start "$tmp/t.db" --interval 1s --backend tracefs; y=$(run); rec_stop
	echo "$b" >> "$tmp/base"; echo "$x" >> "$tmp/rec"; echo "$y" >> "$tmp/tfs"
	echo "$x $b" | awk '{ printf "%.4f\n", $1 / $2 }' >> "$tmp/pair"
	echo "$y $b" | awk '{ printf "%.4f\n", $1 / $2 }' >> "$tmp/tpair"
	ev=$(sqlite3 "$tmp/r.db" "SELECT coalesce(sum(value),0) FROM counters WHERE name LIKE 'events.%' AND interval = (SELECT max(idx) FROM intervals)")
	printf 'round %d: base %s IOPS, record %s IOPS (%s tracepoint hits recorded), tracefs %s IOPS\n' \
		"$r" "$b" "$x" "$ev" "$y"
done
mb=$(median < "$tmp/base"); mr=$(median < "$tmp/rec"); mp=$(median < "$tmp/pair")
awk -v b="$mb" -v t="$(median < "$tmp/tfs")" -v p="$(median < "$tmp/tpair")" 'BEGIN {
	printf "tracefs backend: median IOPS %.0f (%.1f%%); median paired ratio %.3f\n", t, (t / b - 1) * 100, p }'
awk -v b="$mb" -v r="$mr" -v p="$mp" 'BEGIN {
	printf "median IOPS: base %.0f  record %.0f  (%.1f%%); median paired ratio %.3f\n", b, r, (r / b - 1) * 100, p }'
