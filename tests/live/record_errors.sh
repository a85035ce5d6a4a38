#!/usr/bin/env bash
# Live: the recorder's error lines: not root, existing output, bad options; and every loss is
# counted when the maps are made tiny on purpose.
set -u
. "$(dirname "$0")/lib/record_common.sh"
ps_need_root
tmp=$(mktemp -d /tmp/ps-rec-err.XXXXXX)
chmod 755 "$tmp"
trap 'mountpoint -q "$tmp/fs" && umount "$tmp/fs"; rm -rf "$tmp"' EXIT

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
for a in localhost:9490 :9490 127.0.0.1 127.0.0.1:70000 '[::1]9490'; do
	out=$("$POOLSCOPE" record --listen "$a" -d 1 2>&1); rc=$?
	check "--listen $a: usage error (2) naming ADDRESS:PORT" \
		test $rc = 2 -a -n "$(grep 'expected ADDRESS:PORT' <<< "$out")"
done
"$POOLSCOPE" record --listen 127.0.0.1:0 --listen-window 5s -d 1 2>/dev/null; rc=$?
check "--listen-window 5s: usage error (2)" test $rc = 2
"$POOLSCOPE" record --listen 127.0.0.1:0 --listen-top 0 -d 1 2>/dev/null; rc=$?
check "--listen-top 0: usage error (2)" test $rc = 2
# an address taken: exit 1 naming it, and no trace left behind
sport=$(shuf -i 20000-45000 -n 1)
"$POOLSCOPE" record --listen 127.0.0.1:$sport -q -d 5 2>/dev/null &
holder=$!
sleep 2
out=$("$POOLSCOPE" record --listen 127.0.0.1:$sport -o "$tmp/busy.db" -q -d 1 2>&1); rc=$?
wait $holder
echo "address in use: rc $rc: $out"
check "address in use: exit 1" test $rc = 1
check "address in use: names it" grep -q "127.0.0.1:$sport: Address already in use (--listen)" <<< "$out"
check "address in use: no trace left" test ! -e "$tmp/busy.db"

# the free-space floor, on a 64 MiB tmpfs: refused below it at the start; stopped when a
# writer fills the filesystem under it, with the trace kept and readable
mkdir "$tmp/fs"
if mount -t tmpfs -o size=64m tmpfs "$tmp/fs"; then
	dd if=/dev/zero of="$tmp/fs/fill" bs=1M count=30 status=none
	out=$("$POOLSCOPE" record -o "$tmp/fs/a.db" -q -d 3 --min-free 40M 2>&1); rc=$?
	echo "below the floor: rc $rc: $out"
	check "below the floor at the start: exit 1" test $rc = 1
	check "below the floor at the start: says so" grep -q 'below the floor of 40.0 MiB (--min-free): not starting' <<< "$out"
	check "below the floor at the start: no trace" test ! -e "$tmp/fs/a.db"
	rm "$tmp/fs/fill"
	"$POOLSCOPE" record -o "$tmp/fs/b.db" -q -d 30 --min-free 40M > "$tmp/floor.out" 2>&1 &
	rp=$!
	sleep 3
	dd if=/dev/zero of="$tmp/fs/fill" bs=1M count=30 status=none
	wait $rp; rc=$?
	out=$(cat "$tmp/floor.out")
	echo "filled under it: rc $rc: $out"
	check "filled under the floor: exit 1" test $rc = 1
	check "filled under the floor: says where it stopped" grep -q 'stopped after interval [0-9]*; the trace holds' <<< "$out"
	n=$(q "$tmp/fs/b.db" 'SELECT count(*) FROM intervals')
	check "filled under the floor: stopped well before --duration ($n intervals)" test "${n:-0}" -ge 2 -a "${n:-99}" -le 10
	"$POOLSCOPE" report "$tmp/fs/b.db" > /dev/null 2>&1
	check "filled under the floor: the trace reads" test $? = 0
	umount "$tmp/fs"
else
	echo "skip-part: cannot mount a tmpfs here, the free-space floor not checked"
	check "mount a tmpfs for the floor check" false
fi
"$POOLSCOPE" record --min-free 1x -o "$tmp/z.db" -d 1 2>/dev/null; rc=$?
check "--min-free 1x: usage error (2)" test $rc = 2

# a --pid that names no process, a command that cannot start, a command that fails
out=$("$POOLSCOPE" record -o "$tmp/p.db" -d 1 --pid 999999 2>&1); rc=$?
check "--pid 999999: exit 1 naming it" test $rc = 1 -a -n "$(grep -- '--pid 999999: no such process' <<< "$out")"
check "--pid 999999: no trace" test ! -e "$tmp/p.db"
out=$("$POOLSCOPE" record -o "$tmp/n.db" -- /nonexistent-cmd 2>&1); rc=$?
echo "unstartable command: rc $rc: $out"
check "a command that cannot start: exit 1" test $rc = 1
check "a command that cannot start: says so" grep -q '/nonexistent-cmd: cannot start: No such file or directory' <<< "$out"
check "a command that cannot start: the baseline is kept" test "$(q "$tmp/n.db" 'SELECT count(*) FROM intervals')" -ge 1
out=$("$POOLSCOPE" record -o "$tmp/s.db" -- sh -c 'sleep 1; exit 3' 2>&1); rc=$?
echo "failing command: rc $rc: $out"
check "a command that fails: exit 1" test $rc = 1
check "a command that fails: its status" grep -q 'sh exited with status 3 (the trace is complete)' <<< "$out"
check "the start line" grep -q "^poolscope record: recording to $tmp/s.db every 1 s" <<< "$out"
check "the closing line" grep -Eq "^poolscope record: wrote $tmp/s.db: [0-9]+ intervals, [0-9]+ tags, [0-9]+ drops" <<< "$out"
"$POOLSCOPE" report "$tmp/s.db" > /dev/null 2>&1
check "a command that fails: the trace reads" test $? = 0
out=$("$POOLSCOPE" record -o "$tmp/q.db" -q -d 1 2>&1)
check "-q: no start or closing line" test -z "$out"

"$POOLSCOPE" record -h | grep -q EXAMPLES
check "-h shows EXAMPLES" test $? = 0

# Tiny maps: every overflow must be counted, none silently. Three recordings: with a tiny class
# map or pointer map beside it, the classes or objects that got in first (whatever the machine
# was doing) can hold fewer call sites than the tag map, so the tag map would fill or not by
# chance.
tiny() { # $1 db, $2 map sizes
	"$POOLSCOPE" record -o "$1" -q -d 2 --interval 500ms --site-sample 1 --stack-sample 1 \
		--map-size "$2" &
	local pid=$!
	sleep 0.3
	"$PS_LIVE_BIN/negdent" 3000 "$tmp" >/dev/null
	ls -R /usr/share >/dev/null 2>&1
	wait $pid
}
last="(SELECT max(interval) FROM counters)"
counted() { # $1 db, $2 counter
	local v
	v=$(q "$1" "SELECT coalesce(max(value), 0) FROM counters WHERE name = '$2' AND interval = $last")
	check "$2 counted ($v)" test "$v" -gt 0
}
db=$tmp/tiny.db
tiny "$db" ptrs=64,stacks=4,stack-counts=8
check "tiny maps: record exits 0" test $? = 0
counted "$db" drops.ptr_map_full
# The tag map alone: beside a full pointer map, new tags come only from the objects the
# pointer map took first, and whether those hold more than 8 call sites is chance.
tiny "$tmp/tiny-tags.db" tags=8
check "tiny tag map: record exits 0" test $? = 0
counted "$tmp/tiny-tags.db" drops.tag_map_full
v=$(q "$db" "SELECT coalesce(sum(value), 0) FROM counters WHERE name IN ('drops.stack_collision',
	'drops.stack_error', 'drops.stack_count_map_full') AND interval = $last")
check "stack losses counted ($v)" test "$v" -gt 0
n=$(q "$db" "SELECT count(*) FROM counters WHERE name LIKE 'recursion_misses.%' AND interval = $last")
check "recursion_misses stored per program ($n)" test "$n" -ge 6
tiny "$tmp/tiny-classes.db" classes=8,class-slots=1
check "tiny class map: record exits 0" test $? = 0
counted "$tmp/tiny-classes.db" drops.class_map_full
echo "$fails failure(s)"
[ $fails = 0 ]
