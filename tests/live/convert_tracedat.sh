#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Live: a trace.dat that trace-cmd itself makes of a real induced leak, converted. The kmem
# events (and the stacktrace trigger on mm_page_alloc) are enabled in a private tracefs instance
# while 5000 files are held open; `trace-cmd extract -B` writes the instance's buffer to a
# trace.dat (this kernel refuses trace-cmd record's function-tracer files, EPERM, so the events
# are enabled by hand; the file is trace-cmd's all the same). convert must read it: source
# trace-cmd, at least 5000 filp allocations in the filp class, the report's first kernel suspect
# filp on the file-services path, page tags with call sites from the captured stacks; a cut file
# is refused in one line.
set -u
. "$(dirname "$0")/lib/record_common.sh"
ps_need_root
command -v trace-cmd > /dev/null || { echo "FAIL: trace-cmd not found (make deps installs it)"; exit 1; }
T=$(mktemp -d /var/tmp/ps-tracedat.XXXXXX)
NAME=pstracedat$$
I=/sys/kernel/tracing/instances/$NAME
cleanup() {
	[ -d "$I" ] && { echo 0 > "$I/tracing_on"; echo '!stacktrace' > "$I/events/kmem/mm_page_alloc/trigger"
		for e in kmalloc kfree kmem_cache_alloc kmem_cache_free mm_page_alloc mm_page_free; do
			echo 0 > "$I/events/kmem/$e/enable"; done; rmdir "$I"; } 2> /dev/null
	kill $lp 2> /dev/null
	rm -rf "$T"
}
lp=
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing || fail "cannot mount tracefs"
mkdir "$I" || fail "cannot make the instance $I"
echo 16384 > "$I/buffer_size_kb"
for e in kmalloc kfree kmem_cache_alloc kmem_cache_free mm_page_alloc mm_page_free; do
	echo 1 > "$I/events/kmem/$e/enable" || fail "cannot enable kmem:$e"
done
echo stacktrace > "$I/events/kmem/mm_page_alloc/trigger"
echo 1 > "$I/tracing_on"
sleep 0.5
mkdir "$T/d"
ps_start_ready lp "$T/leak.out" "$PS_LIVE_BIN/fileleak" 5000 20 "$T/d" || exit 1
sleep 1
echo 0 > "$I/tracing_on"
trace-cmd extract -B "$NAME" -o "$T/k.dat" > "$T/extract.log" 2>&1
[ -s "$T/k.dat" ] || fail "trace-cmd extract wrote nothing: $(tail -3 "$T/extract.log")"
kill $lp; wait $lp 2> /dev/null; lp=
echo "ok: trace-cmd extract wrote $(stat -c %s "$T/k.dat") bytes"

"$POOLSCOPE" convert "$T/k.dat" -o "$T/k.db" > "$T/conv.log" 2>&1 || fail "convert: $(cat "$T/conv.log")"
src=$(sqlite3 "$T/k.db" "SELECT value FROM meta WHERE key = 'source'")
[ "$src" = trace-cmd ] || fail "meta source '$src'"
n=$(sqlite3 "$T/k.db" "SELECT max(value) FROM counters WHERE name = 'class.filp.allocs'")
[ -n "$n" ] && [ "$n" -ge 5000 ] || fail "class filp: $n allocations, 5000 files were opened"
echo "ok: converted, source trace-cmd, $n filp allocations"
"$POOLSCOPE" report "$T/k.db" --from 0 --format json > "$T/r.json" || fail "report"
read -r tag cls < <(jq -r '.tags[0] | "\(.tag) \(.class)"' "$T/r.json")
case "$tag $cls" in
filp@*" file-services"*) echo "ok: the first suspect: $tag on $cls" ;;
*) fail "the first suspect is $tag on $cls, expected filp on file-services" ;;
esac
sites=$(sqlite3 "$T/k.db" "SELECT count(*) FROM tags WHERE kind = 'page' AND site_sym IS NOT NULL")
[ "$sites" -gt 0 ] || fail "no page tag has a call site (the captured stacks)"
echo "ok: $sites page tags with call sites from the captured stacks"
# Short intervals put boundaries between a page's allocation and the stack event that follows
# it: the allocation must stay counted once (no tag goes below zero in any interval, the tags'
# allocations add up to what they do at 1 s), and the trace must read.
"$POOLSCOPE" convert "$T/k.dat" -o "$T/k100.db" --interval 100us > "$T/conv100.log" 2>&1 ||
	fail "convert --interval 100us: $(cat "$T/conv100.log")"
"$POOLSCOPE" report "$T/k100.db" --from 0 --format json > "$T/r100.json" 2> "$T/r100.err" ||
	fail "report of the 100 us trace: $(cat "$T/r100.err")"
q="SELECT count(*) || ' ' || coalesce(sum(allocs), 0) FROM samples"
read -r rows allocs < <(sqlite3 "$T/k100.db" "$q")
read -r rows1 allocs1 < <(sqlite3 "$T/k.db" "$q")
[ "$allocs" = "$allocs1" ] || fail "100 us intervals: $allocs tag allocations, $allocs1 at 1 s"
neg=$(sqlite3 "$T/k100.db" "SELECT count(*) FROM samples WHERE allocs < 0 OR frees < 0")
[ "$neg" = 0 ] || fail "100 us intervals: $neg samples below zero"
echo "ok: 100 us intervals: $rows samples ($rows1 at 1 s), $allocs tag allocations as at 1 s, none below zero"
head -c 1000 "$T/k.dat" > "$T/cut.dat"
out=$("$POOLSCOPE" convert "$T/cut.dat" -o "$T/cut.db" 2>&1)
[ $? = 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && [ ! -e "$T/cut.db" ] || fail "a cut trace.dat: $out"
echo "ok: a cut trace.dat is refused: $out"
