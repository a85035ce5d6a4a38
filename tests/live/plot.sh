#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# poolscope plot renders PNG and SVG from fixture traces (written now with this tree's trace
# library by $O/tests/mkfixtures, tests/fixtures/mkfixtures.c): a leaking Linux run with workload
# rows, an ETL-like Windows pool run, and the two-run comparison. Checks: valid PNG header and
# size, non-trivial file size, SVG well-formed with the legend naming tags, SUnreclaim/
# NonPagedPool and IOPS; and the errors (bad extension, not a trace, missing gnuplot).
set -u
cd "${PS_SRCDIR:-.}"
O=${O:-.output}
d=$(mktemp -d /tmp/ps-plot.XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# make all builds the generator next to the binary (the SAN=1 one under $O/san)
FIXGEN=${PS_FIXGEN:-$(dirname "$POOLSCOPE")/tests/mkfixtures}
[ -x "$FIXGEN" ] || fail "$FIXGEN missing (make all builds it)"
"$FIXGEN" "$d" || fail "fixtures"
check_png() {
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$1: not a PNG"
	w=$(od -An -tu1 -j16 -N8 "$1" | awk '{print $3*256+$4, $7*256+$8}')
	[ "$w" = "1200 700" ] || fail "$1: size $w, expected 1200 700"
	[ "$(stat -c %s "$1")" -gt 20000 ] || fail "$1: only $(stat -c %s "$1") bytes"
}
check_svg() { # file, legend strings...
	local f=$1; shift
	head -c 200 "$f" | grep -q '<svg\|<?xml' || fail "$f: not SVG"
	grep -q '</svg>' "$f" || fail "$f: truncated"
	python3 -c "import sys,xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])" "$f" 2>/dev/null \
		|| fail "$f: not well-formed XML"
	grep -q 'width="1200' "$f" || fail "$f: width"
	for s in "$@"; do grep -qF -- "$s" "$f" || fail "$f: legend lacks '$s'"; done
}
"$POOLSCOPE" plot "$d/linux.db" -o "$d/linux.png" || fail "linux png"
check_png "$d/linux.png"
"$POOLSCOPE" plot "$d/linux.db" -o "$d/linux.svg" || fail "linux svg"
check_svg "$d/linux.svg" "kmalloc-256@smb2_read+0x1a2" "other (4 tags)" "SUnreclaim growth" "IOPS (workload, right axis)" "live bytes (MiB)"
# the same ranking as the report: its top 8 stacked, in its order (a static tag with a large
# peak, ext4_inode_cache, is in "other")
want=$("$POOLSCOPE" report "$d/linux.db" --top 8 --format csv | tail -n +2 | cut -d'"' -f2 | paste -sd' ')
got=$(grep -o '<title>[^<]*@[^<]*' "$d/linux.svg" | sed 's/<title>//' | paste -sd' ')
[ -n "$want" ] && [ "$got" = "$want" ] || fail "linux.svg stacks '$got', the report ranks '$want'"
"$POOLSCOPE" plot "$d/windows.db" -o "$d/win.svg" --top 3 || fail "windows svg"
check_svg "$d/win.svg" "LSbf" "NonPagedPool growth (system counter)" "other (6 tags)"
grep -q "IOPS" "$d/win.svg" && fail "windows plot has an IOPS line without workload rows"
"$POOLSCOPE" plot "$d/windows.db" -o "$d/win.png" || fail "windows png"
check_png "$d/win.png"
"$POOLSCOPE" plot "$d/local.db" "$d/linux.db" -o "$d/diff.png" || fail "diff png"
check_png "$d/diff.png"
"$POOLSCOPE" plot "$d/local.db" "$d/linux.db" -o "$d/diff.svg" || fail "diff svg"
check_svg "$d/diff.svg" "local-8k-qd16: tracked live bytes" "remote-8k-qd16: IOPS" "remote-8k-qd16: SUnreclaim growth"
msg=$("$POOLSCOPE" plot "$d/linux.db" -o "$d/x.jpg" 2>&1); [ $? = 2 ] && grep -q '.png or .svg' <<< "$msg" || fail "bad ext: $msg"
echo "not a trace" > "$d/bad.db"
msg=$("$POOLSCOPE" plot "$d/bad.db" -o "$d/x.png" 2>&1); [ $? = 1 ] && grep -q 'bad.db' <<< "$msg" || fail "bad trace: $msg"
[ -e "$d/x.png" ] && fail "output left after an error"
msg=$(PATH=/nonexistent "$POOLSCOPE" plot "$d/linux.db" -o "$d/x.png" 2>&1); [ $? = 1 ] && grep -q 'gnuplot-nox' <<< "$msg" || fail "no gnuplot: $msg"
echo "ok: $(ls "$d" | grep -c -E 'png|svg') plots"
