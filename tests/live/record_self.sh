#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Live: the recorder's own objects are not taken for objects older than the recording. The
# recorder reads /proc files every interval through seq_file buffers, and one buffer is
# allocated and freed again at each read. Its allocations get no tag, but its frees are sampled
# like anyone's: found nowhere, they would count as frees of objects allocated before the
# recording, which the analysis takes as memory the window retained (a false leak of the cache).
# With every address sampled and a short interval, the frees of older objects of each kmalloc
# cache over the recording must stay within the objects that could be older: the cache's
# active objects at the first interval, plus the frees counted before it. That bound holds
# whatever else runs on the machine; the recorder's reads alone pass it within seconds.
set -u
. "$(dirname "$0")/lib/record_common.sh"
ps_need_root
ps_test_dir /var/tmp/ps-rec-self.XXXXXX
fail() { echo "FAIL: $*"; exit 1; }

# every object tracked: the pointer map at the size it has without the kfunc, where it tracks
# every kmalloc object too, so that other work on the machine does not fill it
"$POOLSCOPE" record -o "$db" -q --site-sample 1 --map-size ptrs=2097152 --interval 100ms \
	--duration 15 > "$tmp/rec.log" 2>&1 || fail "record: $(cat "$tmp/rec.log")"
[ "$(q "$db" "SELECT max(value) FROM counters WHERE name = 'self_skipped'")" -gt 0 ] 2>/dev/null ||
	fail "no allocation of the recorder's own was seen: the check below would prove nothing"
[ "$(q "$db" "SELECT coalesce(max(value), 0) FROM counters WHERE name = 'drops.ptr_map_full'")" = 0 ] ||
	fail "the pointer map filled: frees of untracked objects look older than the recording"
# per kmalloc cache: active objects at interval 0, frees by interval 0, frees of older objects
q "$db" "WITH s AS (SELECT cache, active_objs AS a FROM slabinfo WHERE interval = 0
		      AND cache LIKE 'kmalloc-%'),
	     p AS (SELECT name, max(value) AS v FROM counters GROUP BY name)
	SELECT s.cache, s.a, coalesce(f.value, 0), coalesce(pre.v, 0) FROM s
	LEFT JOIN counters f ON f.name = 'class.' || s.cache || '.frees' AND f.interval = 0
	LEFT JOIN p pre ON pre.name = 'class.' || s.cache || '.preexisting_frees'" \
	> "$tmp/pre.txt" || fail "query"
[ -s "$tmp/pre.txt" ] || fail "no kmalloc cache in the trace's slabinfo"
bad=$(awk -F'|' '$4 > $2 + $3 { print $1 ": " $4 " frees of older objects, at most " $2 " + " $3 }' \
	"$tmp/pre.txt")
[ -z "$bad" ] || fail "more frees of objects older than the recording than there were objects: $bad"
echo "ok record_self ($(wc -l < "$tmp/pre.txt") kmalloc caches within bounds)"
