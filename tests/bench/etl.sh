#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# ETL parser throughput (docs/performance.md, "ETL parser throughput"): `poolscope etl info` on
# the largest uncompressed and the largest XPRESS-compressed corpus file, against
# `cat file >/dev/null` measured in the same run. Configurations alternate (the order flips every
# round), each sample runs the command REPS times back to back, and the medians of ROUNDS samples
# give MB/s of the file's on-disk size. The files are pinned in RAM (mmap + mlock) while measuring
# so page-cache eviction does not leak into the numbers. Targets: >= 50% of cat uncompressed,
# >= 25% compressed. Prints one line per file; exits 1 only when it cannot measure.
set -u
O=${O:-.output}
PS=${POOLSCOPE:-$O/poolscope}
TOP=${PS_SRCDIR:-$(pwd)}
CORPUS=${PS_CORPUS:-$TOP/tests/corpus}
ROUNDS=${ETL_BENCH_ROUNDS:-9}
REPS=${ETL_BENCH_REPS:-20}
UNC=$CORPUS/etl/diaghub.kernel.1.etl
CMP=$CORPUS/etl/net.4.5.2.x64.etl

for f in "$PS" "$UNC" "$CMP"; do
	[ -e "$f" ] || { echo "etl-bench: FAIL: $f not found (set PS_CORPUS / POOLSCOPE)"; exit 1; }
done

# Pin both files: a helper process maps and mlocks them until we are done.
pin_pid=
python3 - "$UNC" "$CMP" <<'PY' &
import ctypes, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
libc.mlock.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY)
    n = os.fstat(fd).st_size
    a = libc.mmap(None, n, 1, 1, fd, 0)          # PROT_READ, MAP_SHARED
    if a is None or a == ctypes.c_void_p(-1).value or libc.mlock(a, n) != 0:
        print("etl-bench: note: could not pin %s (errno %d)" % (p, ctypes.get_errno()),
              file=sys.stderr)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
while True:
    time.sleep(1)
PY
pin_pid=$!
trap '[ -n "$pin_pid" ] && kill $pin_pid 2>/dev/null' EXIT
sleep 0.5

now() { date +%s%N; }
run_cat() { for ((i = 0; i < REPS; i++)); do cat "$1" >/dev/null; done; }
run_info() { for ((i = 0; i < REPS; i++)); do "$PS" etl info "$1" >/dev/null || return 1; done; }
# A process that reads nothing: what the host charges every run for fork, exec and exit.
run_nul() { for ((i = 0; i < REPS; i++)); do cat /dev/null; done; }

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

bench_file() { # $1 label, $2 file, $3 target ratio
	local label=$1 f=$2 target=$3 size cat_ns=() info_ns=() nul_ns=() t0 t1 r
	size=$(stat -c %s "$f")
	data=$("$PS" etl info "$f" | awk '/^data/ {print $2}')
	[ -n "$data" ] || { echo "etl-bench: FAIL: etl info $f"; exit 1; }
	for ((r = 0; r < ROUNDS; r++)); do
		if ((r % 2)); then
			t0=$(now); run_info "$f"; t1=$(now); info_ns+=($((t1 - t0)))
			t0=$(now); run_cat "$f"; t1=$(now); cat_ns+=($((t1 - t0)))
		else
			t0=$(now); run_cat "$f"; t1=$(now); cat_ns+=($((t1 - t0)))
			t0=$(now); run_info "$f"; t1=$(now); info_ns+=($((t1 - t0)))
		fi
		t0=$(now); run_nul; t1=$(now); nul_ns+=($((t1 - t0)))
	done
	local mc mi mn
	mc=$(printf '%s\n' "${cat_ns[@]}" | median)
	mi=$(printf '%s\n' "${info_ns[@]}" | median)
	mn=$(printf '%s\n' "${nul_ns[@]}" | median)
	awk -v l="$label" -v f="$(basename "$f")" -v s="$size" -v n="$REPS" -v c="$mc" -v i="$mi" \
	    -v t="$target" -v rounds="$ROUNDS" -v data="$data" -v z="$mn" 'BEGIN {
		cm = s * n / (c / 1e9) / 1e6; im = s * n / (i / 1e9) / 1e6; ratio = im / cm;
		printf "etl-bench: %-12s %-28s %5.1f MB  cat %7.1f MB/s  etl info %7.1f MB/s  " \
		       "ratio %.2f (target >= %.2f: %s; medians of %d x %d runs)\n", l, f, s / 1e6,
		       cm, im, ratio, t, (ratio >= t ? "met" : "NOT met"), rounds, n;
		# The ratio counts process start on both sides, and hosts differ most in that.
		printf "etl-bench: %-12s   (a run: cat %.2f ms, etl info %.2f ms; an empty process, " \
		       "cat /dev/null, %.2f ms)\n", l, c / n / 1e6, i / n / 1e6, z / n / 1e6;
		if (data + 0 > s * 1.5)
			printf "etl-bench: %-12s   (%.1f MB of event data after decompression: %.0f MB/s " \
			       "decoded)\n", l, data / 1e6, data * n / (i / 1e9) / 1e6 }'
}

bench_file uncompressed "$UNC" 0.50
bench_file compressed "$CMP" 0.25

# The XPRESS decoder alone (most of `etl info` on the compressed file), built -O2 as the
# Makefile builds it, so the figure is the shipped decoder's. ETL_BENCH_BASE=REV also builds REV's userspace/lib/etw/xpress.c and runs the
# two alternately on the same buffers: median ratio of their times.
BB=$O/tests/bench
mkdir -p "$BB"
xb_build() { # $1 output, $2 decoder source
	${CC:-cc} -O2 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$TOP" \
		-o "$1" "$TOP/tests/bench/progs/xpressbench.c" "$2" ||
		{ echo "etl-bench: FAIL: building $1"; exit 1; }
}
xb_build "$BB/xpressbench" "$TOP/userspace/lib/etw/xpress.c"
XREPS=${ETL_BENCH_XREPS:-30}
if [ -n "${ETL_BENCH_BASE:-}" ]; then
	base_src=$BB/xpress-base.c
	git -C "$TOP" show "$ETL_BENCH_BASE:userspace/lib/etw/xpress.c" > "$base_src" ||
		{ echo "etl-bench: FAIL: no userspace/lib/etw/xpress.c at $ETL_BENCH_BASE"; exit 1; }
	xb_build "$BB/xpressbench-base" "$base_src"
fi
xs=() xbs=()
for ((r = 0; r < ROUNDS; r++)); do
	xs+=("$("$BB/xpressbench" "$CMP" "$XREPS" | awk '{print $8}')")
	[ -n "${ETL_BENCH_BASE:-}" ] && xbs+=("$("$BB/xpressbench-base" "$CMP" "$XREPS" | awk '{print $8}')")
done
out=$("$BB/xpressbench" "$CMP" 1) || { echo "etl-bench: FAIL: xpressbench $CMP"; exit 1; }
bytes=$(awk '{print $2}' <<< "$out")
mx=$(printf '%s\n' "${xs[@]}" | median)
awk -v b="$bytes" -v t="$mx" -v f="$(basename "$CMP")" -v r="$ROUNDS" -v n="$XREPS" 'BEGIN {
	printf "etl-bench: decoder      %-28s %5.1f MB out in %.2f ms: %6.0f MB/s decoded " \
	       "(median of %d rounds, each the best of %d passes)\n", f, b / 1e6, t / 1e6, b / (t / 1e9) / 1e6, r, n }'
if [ -n "${ETL_BENCH_BASE:-}" ]; then
	mb=$(printf '%s\n' "${xbs[@]}" | median)
	awk -v a="$mx" -v b="$mb" -v rev="$ETL_BENCH_BASE" 'BEGIN {
		printf "etl-bench: decoder at %s: %.2f ms; this tree takes %.2f of its time\n", rev, b / 1e6, a / b }'
fi
