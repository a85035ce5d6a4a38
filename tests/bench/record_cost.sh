#!/usr/bin/env bash
# Recorder per-event cost. Drivers (tests/bench/progs/kmloop.c): "path" (faccessat: one
# kmem_cache_alloc + one kmem_cache_free per short syscall, the densest stream, so the probe
# cost stands out of the noise) and "unix" (1-byte AF_UNIX write+read: skb kmem_cache and
# kmalloc/kfree, whose free goes through the bpf_get_kmem_cache() kfunc). Configurations,
# run round by round in an order that rotates every round (drift hits all four alike): no
# probe; empty tp_btf programs on the same six tracepoints (poolscope record --empty-probes,
# bpf/kmem_empty.bpf.c: the floor); poolscope record at defaults; poolscope record --backend
# tracefs (every event into the ring buffers; the recorder reads them on another CPU). The loop is pinned to CPU 1,
# the recorder's own work (1 s polls) runs elsewhere. Prints ns/iteration per run, medians,
# tracepoint hits per iteration (from the recorder's event counters), ns/event added over no
# probe, and the ratio recorder/empty of the added cost (target <= 1.5), with the median of the
# per-round ratios and a 95 % interval for it (the rounds' spread on a noisy host). PS_BENCH_RECORD_ARGS:
# more options for the recorder's configuration (--site-sample 65536: its every-event path alone).
# PS_BENCH_COMPARE: more recorder configurations, their options separated by ';', run in the same
# rounds; each is printed as the others are, and as its per-round difference from the recorder's in
# ns/iteration with a 95 % interval (how much a part costs end to end: runs a quarter of an hour
# apart differ by more than that on this host). PS_BENCH_DRIVERS: the drivers (path unix).
set -u
cd "$(dirname "$0")/../.."
. tests/bench/record_common.sh.inc
ROUNDS=${PS_BENCH_ROUNDS:-9}
ITERS_PATH=${PS_BENCH_ITERS_PATH:-1500000}
ITERS_UNIX=${PS_BENCH_ITERS:-400000}
tmp=$(mktemp -d /tmp/ps-bench-cost.XXXXXX)
# Program run-time statistics add two clock reads to every run of every program: off for the
# rounds (whatever the machine had), restored at exit.
prev=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q kernel.bpf_stats_enabled=$prev; kill ${REC:-} 2>/dev/null; rm -rf "$tmp"' EXIT
sysctl -q kernel.bpf_stats_enabled=0
EVQ="SELECT coalesce(sum(value),0) FROM counters WHERE name IN ('events.kmalloc','events.kfree','events.kmem_cache_alloc','events.kmem_cache_free','events.mm_page_alloc','events.mm_page_free')"

loop() { $pin "$BB/kmloop" "$ITERS" "$DRIVER" | awk '{ print $2 }'; }
# ratios CONF: per round, CONF's added cost over empty's (rounds where empty did not measure
# above none are left out)
ratios() { paste "$tmp/none" "$tmp/empty" "$tmp/$1" | awk '{ if ($2 > $1) print ($3 - $1) / ($2 - $1) }'; }
run_none() { loop >> "$tmp/none"; }
run_empty() { rec_start "$tmp/e.db" --empty-probes --interval 10s; loop >> "$tmp/empty"; rec_stop; }
run_tfs() { rec_start "$tmp/t.db" --backend tracefs --interval 10s; loop >> "$tmp/tfs"; rec_stop; }
IFS=';' read -r -a alt_args <<< "${PS_BENCH_COMPARE:-}"
alts=()
for i in "${!alt_args[@]}"; do alts+=("alt$((i + 1))"); done
# shellcheck disable=SC2086
run_alt() { rec_start "$tmp/a.db" --interval 10s ${alt_args[$(( ${1#alt} - 1 ))]}; loop >> "$tmp/$1"; rec_stop; }
run_rec() {
	local ev0 ev1
	# shellcheck disable=SC2086
	rec_start "$tmp/r.db" --interval 10s ${PS_BENCH_RECORD_ARGS:-}
	ev0=$(sqlite3 "$tmp/r.db" "$EVQ AND interval = 0")
	loop >> "$tmp/rec"
	rec_stop
	ev1=$(sqlite3 "$tmp/r.db" "$EVQ AND interval = (SELECT max(idx) FROM intervals)")
	echo "$ev0 $ev1" | awk -v it="$ITERS" '{ printf "%.3f\n", ($2 - $1) / it }' >> "$tmp/epi"
}

for DRIVER in ${PS_BENCH_DRIVERS:-path unix}; do
	case $DRIVER in
	path) ITERS=$ITERS_PATH ;;
	unix) ITERS=$ITERS_UNIX ;;
	*) echo "bench: no driver $DRIVER (path unix)"; exit 1 ;;
	esac
	echo "--- driver $DRIVER: kmloop $ITERS iterations, $ROUNDS rounds, ${pin:-unpinned}; record ${PS_BENCH_RECORD_ARGS:-at defaults}; load: $(cut -d' ' -f1-3 /proc/loadavg)"
	for i in "${!alts[@]}"; do echo "$DRIVER: ${alts[$i]}: record ${alt_args[$i]}"; done
	cfgs=(none empty rec tfs "${alts[@]}")
	for c in "${cfgs[@]}"; do : > "$tmp/$c"; done
	: > "$tmp/epi"
	# each round starts one configuration later in the list, so that each runs in every place
	for r in $(seq 1 "$ROUNDS"); do
		for j in "${!cfgs[@]}"; do
			c=${cfgs[$(( (r - 1 + j) % ${#cfgs[@]} ))]}
			case $c in alt*) run_alt "$c" ;; *) "run_$c" ;; esac
		done
		printf 'round %d: none %s  empty %s  record %s  tracefs %s' "$r" \
			"$(tail -1 "$tmp/none")" "$(tail -1 "$tmp/empty")" "$(tail -1 "$tmp/rec")" \
			"$(tail -1 "$tmp/tfs")"
		for c in "${alts[@]}"; do printf '  %s %s' "$c" "$(tail -1 "$tmp/$c")"; done
		printf ' ns/iter  (events/iter %s)\n' "$(tail -1 "$tmp/epi")"
	done
	mn=$(median < "$tmp/none"); me=$(median < "$tmp/empty"); mr=$(median < "$tmp/rec"); epi=$(median < "$tmp/epi")
	mt=$(median < "$tmp/tfs")
	ratios rec > "$tmp/pr"
	awk -v n="$mn" -v e="$me" -v r="$mr" -v t="$mt" -v epi="$epi" -v d="$DRIVER" -v pr="$(median < "$tmp/pr")" \
		-v ci="$(median_ci < "$tmp/pr")" -v nr="$(wc -l < "$tmp/pr")" 'BEGIN {
		printf "%s: median ns/iter: none %.1f  empty %.1f  record %.1f\n", d, n, e, r
		printf "%s: tracepoint hits per iteration (record runs, includes background): %.2f\n", d, epi
		ae = (e - n) / epi; ar = (r - n) / epi
		printf "%s: added ns/event: empty %.1f  record %.1f\n", d, ae, ar
		if (ae > 0) {
			printf "%s: ratio record/empty (added cost, of medians): %.2f; median of per-round ratios: %.2f (target <= 1.5)\n", d, ar / ae, pr
			split(ci, c, " ")
			if (ci != "none") printf "%s: 95%% interval of the per-round median: %.2f to %.2f (%d rounds)\n", d, c[1], c[2], nr
			else printf "%s: no 95%% interval of the per-round median from %d rounds (6 or more needed)\n", d, nr
		} else printf "%s: ratio: empty added cost not above noise\n", d
		at = (t - n) / epi
		printf "%s: tracefs backend: median %.1f ns/iter, added %.1f ns/event (%.1fx the BPF recorder'"'"'s)\n", d, t, at, (ar > 0 ? at / ar : 0)
	}'
	for c in "${alts[@]}"; do
		ratios "$c" > "$tmp/pr_$c"
		paste "$tmp/$c" "$tmp/rec" | awk '{ print $1 - $2 }' > "$tmp/d_$c"
		awk -v n="$mn" -v e="$me" -v a="$(median < "$tmp/$c")" -v epi="$epi" -v d="$DRIVER" -v c="$c" \
			-v pr="$(median < "$tmp/pr_$c")" -v ci="$(median_ci < "$tmp/pr_$c")" \
			-v dd="$(median < "$tmp/d_$c")" -v dci="$(median_ci < "$tmp/d_$c")" 'BEGIN {
			ae = (e - n) / epi; aa = (a - n) / epi
			printf "%s: %s: median %.1f ns/iter, added %.1f ns/event", d, c, a, aa
			if (ae > 0) printf "; ratio to empty %.2f, median of per-round ratios %.2f", aa / ae, pr
			if (ci != "none") { split(ci, x, " "); printf " (95%% interval %.2f to %.2f)", x[1], x[2] }
			printf "\n%s: %s minus record, per round: median %.1f ns/iter", d, c, dd
			if (dci != "none") { split(dci, x, " "); printf " (95%% interval %.1f to %.1f)", x[1], x[2] }
			printf "\n"
		}'
	done
done
DRIVER=unix ITERS=$ITERS_UNIX

# In-kernel run time of the programs themselves (kernel.bpf_stats_enabled, restored after):
# what each program's body costs per invocation, empty vs recorder. The stats add their own
# clock reads to both, so compare the difference; dispatch (what the empty program's added
# cost above mostly is) is not included here.
sysctl -q kernel.bpf_stats_enabled=1
# names,... -> "name ns-a-run runs" of those that ran
stats() { prog_stats "${1//,/ }" | awk '$3 > 0 { printf "%s %.1f %d\n", $1, $2 / $3, $3 }'; }
for r in 1 2 3; do
	rec_start "$tmp/e.db" --empty-probes --interval 10s; loop >/dev/null
	stats e_cache_alloc,e_cache_free,e_kmalloc,e_kfree >> "$tmp/se"; rec_stop
	# shellcheck disable=SC2086
	rec_start "$tmp/r.db" --interval 10s ${PS_BENCH_RECORD_ARGS:-}; loop >/dev/null
	stats kmem_cache_alloc,kmem_cache_free,kmalloc,kfree >> "$tmp/sr"; rec_stop
done
sysctl -q kernel.bpf_stats_enabled=0
echo "program body ns/run (bpf_stats, median of 3 runs):"
for pair in kmem_cache_alloc:e_cache_alloc kmem_cache_free:e_cache_free kmalloc:e_kmalloc kfree:e_kfree; do
	p=${pair%%:*}
	e=$(awk -v p="${pair#*:}" '$1 == p { print $2 }' "$tmp/se" | median)
	x=$(awk -v p="$p" '$1 == p { print $2 }' "$tmp/sr" | median)
	printf '  %-16s empty %6s  record %6s  difference %s\n' "$p" "$e" "$x" \
		"$(awk -v a="$x" -v b="$e" 'BEGIN { printf "%.1f", a - b }')"
done
