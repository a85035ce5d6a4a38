#!/usr/bin/env bash
# What a call costs in a tracing program here: the floor under the recorder's kmalloc and kfree
# programs, which call the bpf_get_kmem_cache() kfunc on every event. Five programs on each of
# kmem_cache_alloc and kmem_cache_free (tests/bench/progs/callcost.bpf.c): empty; one store to
# a global; the store of one helper call's result (bpf_get_prandom_u32()); of two; of the
# kfunc's cache size. All ten are attached at once, so each event runs all of them, and
# bpf_stats times each; the kmloop `path` driver (one names_cache alloc and free per faccessat)
# makes the events, pinned to CPU 1. Programs on one tracepoint run in attach order, and the
# first pays for what the others then find cached, so the ten are attached in one order and
# then in the reverse one, PS_BENCH_ROUNDS runs each. Prints each program's median ns a run in
# each order, and the cost of each step averaged over the two orders.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/bench/record_common.sh.inc
if ! bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -q "FUNC 'bpf_get_kmem_cache'"; then
	echo "call_cost: skipped: the kernel has no bpf_get_kmem_cache() kfunc (6.13+), whose cost this measures"
	exit 0
fi
ROUNDS=${PS_BENCH_ROUNDS:-3}
ITERS=${PS_BENCH_ITERS_PATH:-1500000}
ARCH=$(uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
src=tests/bench/progs
if [ ! -s "$BB/callcost.bpf.o" ] || [ "$src/callcost.bpf.c" -nt "$BB/callcost.bpf.o" ]; then
	${CLANG:-clang} -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_"$ARCH" -Ibpf/vmlinux/"$ARCH" \
		-Wall -Werror -c "$src/callcost.bpf.c" -o "$BB/callcost.bpf.o" || exit 1
fi
if [ ! -x "$BB/callcost" ] || [ "$src/callcost.c" -nt "$BB/callcost" ]; then
	${CC:-cc} -O2 -Wall -Wextra -Werror -o "$BB/callcost" "$src/callcost.c" -lbpf || exit 1
fi
tmp=$(mktemp -d /tmp/ps-bench-call.XXXXXX)
prev=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q kernel.bpf_stats_enabled=$prev; kill ${LD:-} 2>/dev/null; rm -rf "$tmp"' EXIT
sysctl -q kernel.bpf_stats_enabled=1
PROGS="a_empty a_store a_call1 a_call2 a_kfunc f_empty f_store f_call1 f_call2 f_kfunc"

stats() { prog_stats "$PROGS"; }

echo "--- kmloop $ITERS iterations (path), $ROUNDS runs an order, ${pin:-unpinned}; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for order in fwd rev; do
	# a killed loader's programs go once the kernel has released them
	for _ in $(seq 1 50); do [ -z "$(stats)" ] && break; sleep 0.1; done
	[ -z "$(stats)" ] || { echo "bench: programs named as this bench's are loaded already"; exit 1; }
	"$BB/callcost" "$BB/callcost.bpf.o" "$order" > "$tmp/ld.out" 2>&1 &
	LD=$!
	for _ in $(seq 1 50); do grep -q ready "$tmp/ld.out" && break; sleep 0.1; done
	grep -q ready "$tmp/ld.out" || { echo "bench: loader: $(cat "$tmp/ld.out")"; exit 1; }
	for r in $(seq 1 "$ROUNDS"); do
		stats > "$tmp/s0"
		$pin "$BB/kmloop" "$ITERS" path > /dev/null || exit 1
		stats > "$tmp/s1"
		join <(sort "$tmp/s0") <(sort "$tmp/s1") |
			awk -v o="$order" '$5 > $3 { printf "%s %s %.2f\n", o, $1, ($4 - $2) / ($5 - $3) }' >> "$tmp/runs"
	done
	kill "$LD"; wait "$LD" 2>/dev/null; LD=""
done
[ "$(wc -l < "$tmp/runs")" -eq $(( $(wc -w <<< "$PROGS") * 2 * ROUNDS )) ] || { echo "bench: the programs did not all run"; exit 1; }
for p in $PROGS; do
	f=$(awk -v p="$p" '$1 == "fwd" && $2 == p { print $3 }' "$tmp/runs" | median)
	r=$(awk -v p="$p" '$1 == "rev" && $2 == p { print $3 }' "$tmp/runs" | median)
	echo "$p $f $r"
done > "$tmp/med"
awk '{ printf "  %-8s ns a run: attached first-to-last %.1f, last-to-first %.1f\n", $1, $2, $3; m[$1] = ($2 + $3) / 2 }
END {
	for (i = 0; i < 2; i++) {
		t = i ? "f" : "a"; n = i ? "kmem_cache_free" : "kmem_cache_alloc"
		printf "%s, mean of the two orders, ns a run: store %+.1f over empty; one call %+.1f over the store; a second call %+.1f; the kfunc %+.1f over the store (%+.1f over one call)\n", n,
			m[t "_store"] - m[t "_empty"], m[t "_call1"] - m[t "_store"], m[t "_call2"] - m[t "_call1"],
			m[t "_kfunc"] - m[t "_store"], m[t "_kfunc"] - m[t "_call1"]
	}
}' "$tmp/med"
