#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Large .etl conversion (docs/performance.md, "Large ETL files"): `poolscope convert` of
# generated kernel pool traces (tests/bench/progs/bigetl.c: 1000 tags, three leaking, each other
# allocation freed LIVE allocations of its tag later) of BIGETL_MIB MiB (2048), x64 and x86,
# uncompressed and XPRESS-compressed, without stacks, with a stack walk after every allocation,
# and with a stack key after every allocation, with 16 allocations in flight per tag (16000 in
# all, what a server's in-flight IOs hold) and, once, 256 (256000: a live set far larger than the
# caches, the converter's worst case), against `poolscope etl info` of the same file in the same run (alternating; the
# file is read once before each run, so both find it in the page cache). Prints events/s, the
# ratio to etl info and the peak RSS against the targets (15 M events/s without stacks, 5 M with
# them, at most 4x etl info, under 256 MB), and whether the leaking tags come out first. Each file
# is written, measured and removed in turn. Knobs: BIGETL_MIB, BIGETL_ROUNDS (3), BIGETL_CONFIGS.
set -u
O=${O:-.output}
PS=${POOLSCOPE:-$O/poolscope}
TOP=${PS_SRCDIR:-$(pwd)}
MIB=${BIGETL_MIB:-2048}
ROUNDS=${BIGETL_ROUNDS:-3}
CONFIGS=${BIGETL_CONFIGS:-"8:0:none:16 8:0:none:256 8:0:walk:16 8:0:key:16 4:0:none:16 4:0:walk:16 8:1:none:16 8:1:walk:16"}
BB=$O/bench/etl
mkdir -p "$BB"
command -v /usr/bin/time > /dev/null || { echo "bigetl-bench: FAIL: /usr/bin/time not found (make deps)"; exit 1; }
[ -x "$PS" ] || { echo "bigetl-bench: FAIL: $PS not found"; exit 1; }
${CC:-cc} -O2 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$TOP" -o "$BB/bigetl" \
	"$TOP/tests/bench/progs/bigetl.c" || { echo "bigetl-bench: FAIL: cannot build the generator"; exit 1; }
trap 'rm -f "$BB"/big.etl "$BB"/big.db "$BB"/big.db-*' EXIT

median() { sort -g | awk '{ a[NR] = $1 } END { print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

for cfg in $CONFIGS; do
	IFS=: read -r ptr comp stacks live <<< "$cfg"
	f=$BB/big.etl
	name="x$([ "$ptr" = 8 ] && echo 64 || echo 86)$([ "$comp" = 1 ] && echo -xpress)-$stacks-$live"
	"$BB/bigetl" "$f" "$ptr" "$MIB" "$comp" "$stacks" "$live" > "$BB/gen.out" ||
		{ echo "bigetl-bench: FAIL: generator ($cfg)"; exit 1; }
	pool=$(cat "$BB/gen.out")
	events=$("$PS" etl info "$f" | awk '/^events/ { print $2 }')
	rm -f "$BB/info.m" "$BB/conv.m"
	for r in $(seq "$ROUNDS"); do
		for c in $([ $((r % 2)) = 1 ] && echo "info conv" || echo "conv info"); do
			cat "$f" > /dev/null
			if [ $c = info ]; then
				/usr/bin/time -f "%e %M" -a -o "$BB/info.m" "$PS" etl info "$f" > /dev/null ||
					{ echo "bigetl-bench: FAIL: etl info ($name)"; exit 1; }
			else
				/usr/bin/time -f "%e %M" -a -o "$BB/conv.m" "$PS" convert "$f" \
					-o "$BB/big.db" --force > /dev/null 2> "$BB/conv.err" ||
					{ echo "bigetl-bench: FAIL: convert ($name): $(tail -1 "$BB/conv.err")"; exit 1; }
			fi
		done
	done
	ti=$(awk '{ print $1 }' "$BB/info.m" | median)
	tc=$(awk '{ print $1 }' "$BB/conv.m" | median)
	rss=$(awk '{ print $2 }' "$BB/conv.m" | sort -n | tail -1)
	first=$("$PS" report "$BB/big.db" --domain all --format csv --top 3 | tail -n +2 | cut -d, -f1 | tr -d '"' |
		sort | tr '\n' ' ')
	awk -v n="$name" -v mib="$MIB" -v ev="$events" -v pool="$pool" -v ti="$ti" -v tc="$tc" \
	    -v rss="$rss" -v st="$stacks" -v first="$first" -v rounds="$ROUNDS" 'BEGIN {
		rate = ev / tc / 1e6; target = st == "none" ? 15 : 5; ratio = tc / ti;
		printf "bigetl-bench: %-20s %5d MiB %9d events (%d pool): convert %6.2f s %5.1f M events/s " \
		       "(target >= %d: %s), etl info %5.2f s, x%.1f (target <= 4: %s), peak RSS %d MB " \
		       "(target < 256: %s); first: %s(medians of %d)\n", n, mib, ev, pool, tc, rate, target,
		       (rate >= target ? "met" : "NOT met"), ti, ratio, (ratio <= 4 ? "met" : "NOT met"),
		       rss / 1024, (rss < 262144 ? "met" : "NOT met"), first, rounds }'
	rm -f "$f" "$BB/big.db" "$BB"/big.db-*
done
