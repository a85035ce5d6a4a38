#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# export --pprof read by the real pprof (Debian's golang-go: `go tool pprof`): the profile of the
# fixture traces parses, has the four heap sample types with inuse_space the default, and its
# top function by live bytes is the report's first suspect, for the Linux trace (kernel stacks)
# and the Windows one (driver frames). An existing file is refused unless --force, --force
# without --pprof is a usage error, and a trace without stacks gives one sample per tag without frames that
# pprof still reads, with a warning. No root.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
. tests/cli/lib/fixtures.sh clipprof
failed=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1: $2"; failed=1; }
command -v go > /dev/null || { echo "FAIL go not found (make deps installs golang-go)"; exit 1; }
export HOME=$d GOCACHE=$d/gocache GOFLAGS= PPROF_TMPDIR=$d

for t in linux windows; do
	"$POOLSCOPE" export "$d/$t.db" --pprof "$d/$t.pb.gz" 2> "$d/err" ||
		{ bad "$t-export" "$(cat "$d/err")"; continue; }
	gzip -t "$d/$t.pb.gz" 2> /dev/null || bad "$t-gzip" "not a gzip file"
	want=$("$POOLSCOPE" report "$d/$t.db" --format json | jq -r '.verdict.tag')
	# -top: the table's first row is the largest flat value, the leaf: the tag
	top=$(go tool pprof -top "$d/$t.pb.gz" 2> "$d/err" | awk '/flat%/ { getline; print $6; exit }')
	if [ -n "$want" ] && [ "$top" = "$want" ]; then ok "$t-top-is-first-suspect"
	else bad "$t-top-is-first-suspect" "pprof's top '$top', the report's first suspect '$want' $(cat "$d/err")"; fi
	types=$(go tool pprof -raw "$d/$t.pb.gz" 2> /dev/null | grep -m1 '^Samples:' -A1 | tail -1)
	if [ "$(echo $types)" = "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes[dflt]" ]
	then ok "$t-sample-types"; else bad "$t-sample-types" "got '$types'"; fi
done

"$POOLSCOPE" export "$d/linux.db" --pprof "$d/linux.pb.gz" 2> "$d/err"
rc=$?
if [ $rc = 1 ] && grep -q "File exists (use --force" "$d/err"; then ok exists-refused
else bad exists-refused "exit $rc: $(cat "$d/err")"; fi
if "$POOLSCOPE" export "$d/linux.db" --pprof "$d/linux.pb.gz" --force 2> "$d/err"; then ok force
else bad force "$(cat "$d/err")"; fi
"$POOLSCOPE" export "$d/linux.db" --folded --force > /dev/null 2> "$d/err"
rc=$?
if [ $rc = 2 ] && grep -q -- "--force goes with --pprof" "$d/err"; then ok force-without-pprof
else bad force-without-pprof "exit $rc: $(cat "$d/err")"; fi

# a stack of the page tag that backs slabs (flag 2): counted by the slab tags, left out of both
cp "$d/linux.db" "$d/backing.db" && sqlite3 "$d/backing.db" "UPDATE stacks SET tag =
	(SELECT id FROM tags WHERE flags & 2 LIMIT 1) WHERE tag = (SELECT id FROM tags WHERE name = 'maple_node')"
"$POOLSCOPE" export "$d/backing.db" --pprof "$d/backing.pb.gz" 2> "$d/err" || bad backing "$(cat "$d/err")"
# (maple_node keeps its bytes, under "[no sampled stack]": its one stack is the backing tag's now)
if go tool pprof -top "$d/backing.pb.gz" 2> /dev/null | grep -q 'mas_preallocate\|kmem_cache_alloc_bulk'; then
	bad backing-pprof "a slab-backing stack in the profile"
elif "$POOLSCOPE" export "$d/backing.db" --folded | grep -q 'mas_preallocate\|kmem_cache_alloc_bulk'; then
	bad backing-folded "a slab-backing stack in the folded stacks"
else ok slab-backing-left-out; fi

# the Linux trace without its stacks (what a recording without stack sampling holds): one
# sample per tag under "[no sampled stack]", with a warning
cp "$d/linux.db" "$d/nostacks.db" && sqlite3 "$d/nostacks.db" "DELETE FROM frames; DELETE FROM stacks"
"$POOLSCOPE" export "$d/nostacks.db" --pprof "$d/nostacks.pb.gz" 2> "$d/err"
rc=$?
if [ $rc = 0 ] && grep -q "no sampled stacks" "$d/err" &&
   go tool pprof -top "$d/nostacks.pb.gz" 2> /dev/null | grep -q 'no sampled stack' 
then ok no-stacks
else bad no-stacks "exit $rc: $(cat "$d/err")"; fi
exit $failed
