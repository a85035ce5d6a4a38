#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Live: record finds the running kernel's debuginfo by its build id and writes the source lines
# of the call sites and frames it recorded. This machine has no debuginfo for its kernel, so
# the test makes some: an ELF with the kernel's build id (from /sys/kernel/notes, read here
# without poolscope) whose alloc_empty_file and path_openat sit in fs/file_table.c and
# fs/namei.c (tests/fixtures/srcline/kernel.c), in a debug root at .build-id/xx/rest.debug.
# While 3000 files are opened, the filp call site must get the file and function of the fake,
# the line binutils' addr2line gives for the same address, and the src rule's class; a
# --vmlinux of another build and an empty debug root must stop the start.
set -u
. "$(dirname "$0")/lib/record_common.sh"
ps_need_root
for t in gcc nm addr2line python3 jq; do
	command -v $t > /dev/null || { echo "FAIL: $t not found (make deps)"; exit 1; }
done
src=$(cd "$(dirname "$0")/../fixtures/srcline" && pwd)
ps_test_dir /var/tmp/ps-rec-src.XXXXXX
fail() { echo "FAIL: $*"; exit 1; }
id=$(python3 - <<'PY'
import struct
d = open("/sys/kernel/notes", "rb").read()
o = 0
while o + 12 <= len(d):
    nsz, dsz, typ = struct.unpack_from("<III", d, o)
    o += 12
    name = d[o:o + nsz]
    o += (nsz + 3) & ~3
    if typ == 3 and name == b"GNU\0":
        print(d[o:o + dsz].hex())
        break
    o += (dsz + 3) & ~3
PY
)
[ -n "$id" ] || { echo "skip: the kernel has no build id in /sys/kernel/notes"; exit 77; }
root=$tmp/debug
mkdir -p "$root/.build-id/${id:0:2}" "$tmp/leak" "$tmp/empty"
CF="-g -O1 -fno-pie -no-pie -nostdlib -static"
gcc $CF -Wl,--build-id=0x$id -o "$root/.build-id/${id:0:2}/${id:2}.debug" "$src/kernel.c" &&
other=${id%?}$(printf '%x' $(( (16#${id: -1} + 1) % 16 )))
gcc $CF -Wl,--build-id=0x$other -o "$tmp/other" "$src/kernel.c" || fail "gcc"

"$POOLSCOPE" record -o "$db" --duration 8 --debuginfo "$root" > "$tmp/rec.log" 2>&1 &
rp=$!
sleep 2
"$PS_LIVE_BIN/fileleak" 3000 3 "$tmp/leak" > "$tmp/leak.out" 2>&1 || fail "fileleak: $(cat "$tmp/leak.out")"
wait $rp || fail "record: $(cat "$tmp/rec.log")"
grep -q "source lines for [1-9][0-9]* of [0-9]* call sites and frames ($root/.build-id/" "$tmp/rec.log" &&
	echo "ok found-by-build-id" || fail "record's log: $(cat "$tmp/rec.log")"
[ "$(q "$db" "SELECT value FROM meta WHERE key = 'kernel_build_id'")" = "$id" ] &&
	echo "ok meta-build-id" || fail "meta kernel_build_id is not $id"

# the filp call site: the fake's file and function, and addr2line's line for the same address
row=$(q "$db" "SELECT off, file, func FROM srclines WHERE sym = 'alloc_empty_file' AND module = ''
	ORDER BY off LIMIT 1")
[ -n "$row" ] || fail "no source line for alloc_empty_file: $(q "$db" "SELECT DISTINCT site_sym FROM tags WHERE name = 'filp'")"
IFS='|' read -r off file func <<< "$row"
[ "$file|$func" = "fs/file_table.c|alloc_empty_file" ] && echo "ok filp-site-file" ||
	fail "alloc_empty_file+$off: $file $func"
base=$(nm "$root/.build-id/${id:0:2}/${id:2}.debug" | awk '$3 == "alloc_empty_file" { print $1 }')
# (binutils 2.40 names this ELF's DWARF 5 file wrongly: its line is compared, the file above)
want=$(addr2line -e "$root/.build-id/${id:0:2}/${id:2}.debug" \
	"$(printf '0x%x' $((16#$base + off - 1)))" | sed 's|^.*:||')
got=$(q "$db" "SELECT line FROM srclines WHERE sym = 'alloc_empty_file' AND off = $off AND module = ''")
[ "$got" = "$want" ] && echo "ok filp-site-line" || fail "alloc_empty_file+$off: line $got, addr2line $want"
[ "$want" -ge 202 ] && [ "$want" -le 206 ] ||
	fail "addr2line puts alloc_empty_file+$off at line $want, outside the function (202-206)"

# the report: the site line, and the src rule deciding the filp tag's class
"$POOLSCOPE" report "$db" --top 0 --format json > "$tmp/r.json" || fail "report"
jq -e '[.tags[] | select(.tag | startswith("filp@alloc_empty_file")) |
	select(.site_src.file == "fs/file_table.c" and .class == "file-services/filesystem")] | length > 0' \
	"$tmp/r.json" > /dev/null && echo "ok report-site-src" ||
	fail "$(jq -c '[.tags[] | select(.tag | startswith("filp@")) | [.tag, .class, .evidence, .site_src]]' "$tmp/r.json")"
jq -e '[.tags[] | select(.tag | startswith("filp@alloc_empty_file")) |
	select(.evidence | startswith("src fs/"))] | length > 0' "$tmp/r.json" > /dev/null &&
	echo "ok src-rule-decides" ||
	fail "no filp tag decided by a src rule: $(jq -c '[.tags[] | select(.tag | startswith("filp@")) | .evidence]' "$tmp/r.json")"

# debuginfo that cannot serve stops the start, and leaves no trace
"$POOLSCOPE" record -o "$tmp/x.db" --duration 2 -q --vmlinux "$tmp/other" > "$tmp/x.log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "other: build id $other, but the trace's kernel has $id" "$tmp/x.log" &&
	[ ! -e "$tmp/x.db" ] && echo "ok other-build-refused" ||
	fail "exit $rc, $(cat "$tmp/x.log"), trace left: $(ls "$tmp/x.db" 2>&1)"
"$POOLSCOPE" record -o "$tmp/y.db" --duration 2 -q --debuginfo "$tmp/empty" > "$tmp/y.log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "no vmlinux with debuginfo for kernel $(uname -r) under $tmp/empty" "$tmp/y.log" &&
	[ ! -e "$tmp/y.db" ] && echo "ok empty-root-refused" || fail "exit $rc, $(cat "$tmp/y.log")"
echo "ok record_srclines"
