#!/usr/bin/env bash
# Recorder per-event cost. Driver: kmloop (1-byte write+read on an AF_UNIX socketpair: one skb
# alloc and free per iteration, see tests/bench/progs/kmloop.c). Configurations, alternated
# round by round: no probe; empty tp_btf programs on the same six tracepoints
# (poolscope record --empty-probes, bpf/kmem_empty.bpf.c); poolscope record at defaults.
# Prints ns/iteration per run, medians, tracepoint hits per iteration (from the recorder's
# event counters), ns/event added and the ratio recorder/empty.
set -u
cd "$(dirname "$0")/../.."
. tests/bench/record_common.sh.inc
ROUNDS=${PS_BENCH_ROUNDS:-7}
ITERS=${PS_BENCH_ITERS:-400000}
tmp=$(mktemp -d /tmp/ps-bench-cost.XXXXXX)
trap 'kill ${REC:-} 2>/dev/null; rm -rf "$tmp"' EXIT
pin=""
command -v taskset >/dev/null && [ "$(nproc)" -gt 1 ] && pin="taskset -c 1"

loop() { $pin "$BB/kmloop" "$ITERS" | awk '{ print $2 }'; }
echo "kmloop $ITERS iterations, $ROUNDS rounds, ${pin:-unpinned}; load: $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$tmp/none"; : > "$tmp/empty"; : > "$tmp/rec"; : > "$tmp/epi"
for r in $(seq 1 "$ROUNDS"); do
	n=$(loop); echo "$n" >> "$tmp/none"
	rec_start "$tmp/e.db" --empty-probes --interval 10s; e=$(loop); rec_stop; echo "$e" >> "$tmp/empty"
	rec_start "$tmp/r.db" --interval 10s
	ev0=$(sqlite3 "$tmp/r.db" "SELECT coalesce(sum(value),0) FROM counters WHERE name IN ('events.kmalloc','events.kfree','events.kmem_cache_alloc','events.kmem_cache_free','events.mm_page_alloc','events.mm_page_free') AND interval = 0")
	t0=$(date +%s%N); x=$(loop); t1=$(date +%s%N); rec_stop
	ev1=$(sqlite3 "$tmp/r.db" "SELECT coalesce(sum(value),0) FROM counters WHERE name IN ('events.kmalloc','events.kfree','events.kmem_cache_alloc','events.kmem_cache_free','events.mm_page_alloc','events.mm_page_free') AND interval = (SELECT max(idx) FROM intervals)")
	echo "$x" >> "$tmp/rec"
	echo "$ev0 $ev1" | awk -v it="$ITERS" '{ printf "%.3f\n", ($2 - $1) / it }' >> "$tmp/epi"
	printf 'round %d: none %s  empty %s  record %s ns/iter  (events/iter %s)\n' "$r" "$n" "$e" "$x" "$(tail -1 "$tmp/epi")"
done
mn=$(median < "$tmp/none"); me=$(median < "$tmp/empty"); mr=$(median < "$tmp/rec"); epi=$(median < "$tmp/epi")
for t in kmalloc kfree kmem_cache_alloc kmem_cache_free mm_page_alloc mm_page_free; do
	printf '  events.%s in the last record run: %s\n' $t "$(sqlite3 "$tmp/r.db" "SELECT max(value) FROM counters WHERE name = 'events.$t'")"
done
awk -v n="$mn" -v e="$me" -v r="$mr" -v epi="$epi" 'BEGIN {
	printf "median ns/iter: none %.1f  empty %.1f  record %.1f\n", n, e, r
	printf "tracepoint hits per iteration (record runs, includes background): %.2f\n", epi
	ae = (e - n) / epi; ar = (r - n) / epi
	printf "added ns/event: empty %.1f  record %.1f\n", ae, ar
	if (ae > 0) printf "ratio record/empty (added cost): %.2f (target <= 1.5)\n", ar / ae
	else printf "ratio: empty added cost not above noise\n"
}'

# In-kernel run time of the programs themselves (kernel.bpf_stats_enabled, restored after):
# what each program's body costs per invocation, empty vs recorder. The stats add their own
# clock reads to both, so compare the difference; dispatch (what the empty program's added
# cost above mostly is) is not included here.
prev=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q kernel.bpf_stats_enabled=$prev; kill ${REC:-} 2>/dev/null; rm -rf "$tmp"' EXIT
sysctl -q kernel.bpf_stats_enabled=1
stats() {
	bpftool prog show -j | python3 -c '
import json, sys
want = sys.argv[1].split(",")
for p in json.load(sys.stdin):
    n = p.get("name", "")
    if n in want and p.get("run_cnt"):
        print("%s %.1f %d" % (n, p["run_time_ns"] / p["run_cnt"], p["run_cnt"]))
' "$1"
}
for r in 1 2 3; do
	rec_start "$tmp/e.db" --empty-probes --interval 10s; loop >/dev/null
	stats e_cache_alloc,e_cache_free,e_kmalloc,e_kfree >> "$tmp/se"; rec_stop
	rec_start "$tmp/r.db" --interval 10s; loop >/dev/null
	stats kmem_cache_allo,kmem_cache_free,kmalloc,kfree >> "$tmp/sr"; rec_stop
done
sysctl -q kernel.bpf_stats_enabled=$prev
echo "program body ns/run (bpf_stats, median of 3 runs; names truncated by the kernel):"
for pair in kmem_cache_allo:e_cache_alloc kmem_cache_free:e_cache_free kmalloc:e_kmalloc kfree:e_kfree; do
	p=${pair%%:*}
	e=$(awk -v p="${pair#*:}" '$1 == p { print $2 }' "$tmp/se" | median)
	x=$(awk -v p="$p" '$1 == p { print $2 }' "$tmp/sr" | median)
	printf '  %-16s empty %6s  record %6s  difference %s\n' "$p" "$e" "$x" \
		"$(awk -v a="$x" -v b="$e" 'BEGIN { printf "%.1f", a - b }')"
done
