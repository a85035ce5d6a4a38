#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Live: the per-cache figures of `report --by cache` are exact. A program makes N TCP sockets
# (one sock_inode_cache and one TCP object each) and holds them while `record --comm sockhold`
# counts its allocations alone (a real server is never idle: other tasks' sockets would be
# counted too without the filter); the report must say N allocations, 0 frees and N objects
# for both caches, and a second run of twice as many must say 2N; so must a run whose class
# slots all collide. The tags of an unfiltered recording of the same are an estimate: their sum
# must lie within 4 standard errors (as the report gives them) of the exact figure with the
# frees of older objects added back (the tags count objects allocated in the recording only).
set -u
. "$(dirname "$0")/lib/record_common.sh"
ps_need_root
ps_test_dir /var/tmp/ps-rec-exact.XXXXXX
fail() { echo "FAIL: $*"; exit 1; }
command -v jq > /dev/null || fail "jq not found (make deps)"

run() { # N DB [record args...]: records while sockhold holds N sockets; prints nothing
	local n=$1 out=$2
	shift 2
	"$POOLSCOPE" record -o "$out" -q --duration 7 "$@" > "$tmp/rec.log" 2>&1 &
	local rp=$!
	sleep 2.5
	rm -f "$tmp/hold.out"	# the last run's "ready" must not answer for this one
	"$PS_LIVE_BIN/sockhold" "$n" 8 > "$tmp/hold.out" 2>&1 &
	local hp=$!
	wait $rp || fail "record: $(cat "$tmp/rec.log")"
	kill $hp 2> /dev/null
	wait $hp 2> /dev/null
	grep -q "^ready $n" "$tmp/hold.out" 2>/dev/null || fail "sockhold: $(cat "$tmp/hold.out")"
}
cache() { # JSON CACHE FIELD
	jq -r --arg c "$2" ".caches[] | select(.cache == \$c) | .$3" "$1"
}

# 1000 and 2000 at the default map sizes; 1000 again with two class slots a CPU, so that the
# classes collide: the ones that find a slot probe past each other, the rest go to the
# overflow map, and the counts must not change.
for run in 1000 2000 1000-collide; do
	n=${run%-collide}
	extra=()
	[ "$run" = "$n" ] || extra=(--map-size class-slots=2)
	run $n "$tmp/f$run.db" --comm sockhold "${extra[@]}"
	"$POOLSCOPE" report "$tmp/f$run.db" --by cache --format json > "$tmp/f$run.json" || fail "report --by cache"
	for c in sock_inode_cache TCP; do
		got="$(cache "$tmp/f$run.json" $c allocs) $(cache "$tmp/f$run.json" $c frees) $(cache "$tmp/f$run.json" $c net_objs)"
		[ "$got" = "$n 0 $n" ] && echo "ok exact-$c-$run" ||
			fail "$c with $n sockets ($run): allocs, frees, net objects '$got', want '$n 0 $n'"
	done
done

# unfiltered: the tags' sum is an estimate, within 4 of its standard errors of the exact count
# of its class (which counts the other tasks' sockets too, so the comparison is per class)
run 2000 "$tmp/u.db"
"$POOLSCOPE" report "$tmp/u.db" --by cache --format json > "$tmp/u.json" || fail "report --by cache"
jq -e '.caches[] | select(.cache == "sock_inode_cache") |
	(.net_bytes + .preexisting_free_bytes - .tags_growth_bytes | fabs) <= 4 * .tags_stderr_bytes + 4096 and
	.sampled and .tags_stderr_bytes > 0' \
	"$tmp/u.json" > /dev/null && echo "ok tags-within-error" ||
	fail "sock_inode_cache unfiltered: $(jq -c '.caches[] | select(.cache == "sock_inode_cache")' "$tmp/u.json")"
"$POOLSCOPE" report "$tmp/u.db" --by cache > "$tmp/u.txt" || fail "report --by cache (text)"
grep -q "^sock_inode_cache .* +-" "$tmp/u.txt" && [ -z "$(awk 'length > 79' "$tmp/u.txt")" ] &&
	echo "ok text" || fail "$(cat "$tmp/u.txt")"
echo "ok record_exact"
