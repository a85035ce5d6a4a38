#!/usr/bin/env bash
# Live: the recorder's error lines: not root, existing output, bad options; and every loss is
# counted when the maps are made tiny on purpose.
set -u
. "$(dirname "$0")/lib/record_common.sh"
ps_need_root
tmp=$(mktemp -d /tmp/ps-rec-err.XXXXXX)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT

out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$POOLSCOPE" record -o "$tmp/x.db" -d 1 2>&1)
rc=$?
echo "non-root: rc $rc: $out"
check "non-root fails with exit 1" test $rc = 1
check "non-root: one line" test "$(printf '%s\n' "$out" | wc -l)" = 1
check "non-root: names CAP_BPF and CAP_PERFMON" grep -q 'CAP_BPF.*CAP_PERFMON' <<< "$out"
check "non-root: no file created" test ! -e "$tmp/x.db"

touch "$tmp/exists.db"
out=$("$POOLSCOPE" record -o "$tmp/exists.db" -d 1 2>&1); rc=$?
echo "existing: rc $rc: $out"
check "existing output refused" test $rc = 1
check "existing output: says --force" grep -q -- '--force' <<< "$out"
"$POOLSCOPE" record -o "$tmp/exists.db" -q -d 300ms --force
check "--force replaces it" test "$(q "$tmp/exists.db" 'SELECT value FROM meta WHERE key = "os"')" = linux

"$POOLSCOPE" record -o "$tmp/y.db" --site-sample 3 2>/dev/null; rc=$?
check "--site-sample 3: usage error (2)" test $rc = 2
"$POOLSCOPE" record 2>/dev/null; rc=$?
check "no -o: usage error (2)" test $rc = 2
"$POOLSCOPE" record -h | grep -q EXAMPLES
check "-h shows EXAMPLES" test $? = 0

# Tiny maps: every overflow must be counted, none silently.
db=$tmp/tiny.db
"$POOLSCOPE" record -o "$db" -q -d 2 --interval 500ms --site-sample 1 --stack-sample 1 \
	--map-size tags=8,ptrs=64,stacks=4,stack-counts=8,classes=8,class-slots=1 &
pid=$!
sleep 0.3
"$PS_LIVE_BIN/negdent" 3000 "$tmp" >/dev/null
ls -R /usr/share >/dev/null 2>&1
wait $pid
check "tiny maps: record exits 0" test $? = 0
last="(SELECT max(interval) FROM counters)"
for c in drops.ptr_map_full drops.tag_map_full drops.class_map_full; do
	v=$(q "$db" "SELECT coalesce(max(value), 0) FROM counters WHERE name = '$c' AND interval = $last")
	check "$c counted ($v)" test "$v" -gt 0
done
v=$(q "$db" "SELECT coalesce(sum(value), 0) FROM counters WHERE name IN ('drops.stack_collision',
	'drops.stack_error', 'drops.stack_count_map_full') AND interval = $last")
check "stack losses counted ($v)" test "$v" -gt 0
n=$(q "$db" "SELECT count(*) FROM counters WHERE name LIKE 'recursion_misses.%' AND interval = $last")
check "recursion_misses stored per program ($n)" test "$n" -ge 6
echo "$fails failure(s)"
[ $fails = 0 ]
