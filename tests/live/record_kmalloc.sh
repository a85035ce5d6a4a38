#!/usr/bin/env bash
# Live: N eventfds held open (evleak: one kmalloc'd eventfd_ctx each in do_eventfd, freed by
# kfree on close), recorded four times:
#  - kfunc: with the bpf_get_kmem_cache() kfunc (6.13+, the default here);
#  - no-kfunc: with --no-kfunc, the fallback of older kernels (kmalloc classes keyed by size,
#    every kmalloc object in the pointer map);
#  - full-map: --no-kfunc with a pointer map far too small for the objects;
#  - filter-full-map: the kfunc with --comm evleak (a filter tracks every object it lets in, and
#    counts only the frees it finds in the map) and the same small map.
# kfunc and no-kfunc: tracked growth of kmalloc-64 within 5% of /proc/slabinfo, the do_eventfd
# tag (sampled with the kfunc, exact without), and everything back to the baseline after
# release. The full maps: objects the map could not take are counted as drops and in neither
# their tag nor their class, so that nothing is left live after release (counted but never seen
# freed, they would make a leak that is not there). In the three exact cases a tracefs instance
# witnesses the kernel's own kmalloc and kfree events of fs/eventfd.c, and the checks are exact
# against it: no object may be left in the pointer map whose kfree the kernel reported (but for
# kfrees skipped for re-entry), and the tag comes back to the number of evleak's objects left
# in the map whose kfree the kernel never reported (0 when it reported them all). A free the
# tracepoint never reports cannot reach any probe; the case says so when it happens.
set -u
. "$(dirname "$0")/lib/record_common.sh"
ps_need_root

N=${PS_EVLEAK_N:-15000}
ps_test_dir /tmp/ps-rec-kmalloc.XXXXXX
cache=kmalloc-64

cnt() { counter_at "$db" "$1" "$2"; }
cnt_delta() { echo $(( $(cnt "$1" "$3") - $(cnt "$1" "$2") )); }	# name from to

# A witness for the cases whose tag must come back to exactly 0 (no-kfunc, full-map,
# filter-full-map): a tracefs instance of its own records the kernel's kmalloc and kfree events
# whose call site is in fs/eventfd.c, pointers unhashed. When objects are left in the pointer
# map, it tells whether the kernel reported their kfree (the tracepoint fired, the program did
# not charge it) or not. It is made once, before no-kfunc's baseline, and kept to the end, its
# buffer emptied before each case: no probe of its own leaves the tracepoints between cases.
W=
witness_stop() {
	[ -n "$W" ] && [ -d "$W" ] || return 0
	echo 0 > "$W/events/kmem/kmalloc/enable"
	echo 0 > "$W/events/kmem/kfree/enable"
}
witness_cleanup() {
	witness_stop
	[ -n "$W" ] && [ -d "$W" ] && rmdir "$W"
	W=
	ps_test_cleanup
}
# fs/eventfd.c's text: the run of eventfd functions around do_eventfd, to the next function.
eventfd_text() {
	LC_ALL=C sort /proc/kallsyms | awk '$2 ~ /^[tT]$/ && $3 !~ /^__pfx_/ {
		a[++n] = $1; s[n] = $3
		if ($3 == "do_eventfd") k = n
	} END {
		if (!k) exit
		for (i = k; i > 1 && s[i - 1] ~ /eventfd/; i--) ;
		for (j = k; j < n && s[j + 1] ~ /eventfd/; j++) ;
		if (j < n) print a[i], a[j + 1]
	}'
}
witness_start() {
	local lo hi f
	read -r lo hi < <(eventfd_text)
	# kptr_restrict hides addresses as 0
	if [ -z "${lo:-}" ] || [ $((0x$lo)) = 0 ] || [ $((0x$lo >= 0x$hi)) = 1 ]; then
		echo "[witness] none: no fs/eventfd.c text addresses in /proc/kallsyms"
		return 0
	fi
	# one fixed name: a run killed before its trap could run leaves it for the next to remove
	W=/sys/kernel/tracing/instances/ps-record-kmalloc-witness
	[ -d "$W" ] && { witness_stop; rmdir "$W"; }
	mkdir "$W" || { echo "[witness] none: cannot make $W"; W=; return 0; }
	echo 2048 > "$W/buffer_size_kb"
	echo nohash-ptr > "$W/trace_options"
	if ! grep -qx nohash-ptr "$W/trace_options"; then
		echo "[witness] none: pointers would be hashed"
		rmdir "$W"; W=; return 0
	fi
	for f in kmalloc kfree; do
		if ! echo "call_site >= 0x$lo && call_site < 0x$hi" > "$W/events/kmem/$f/filter" ||
		   ! echo 1 > "$W/events/kmem/$f/enable"; then
			echo "[witness] none: cannot filter and enable kmem:$f"
			witness_stop; rmdir "$W"; W=; return 0
		fi
	done
}
# witness_report LEFT_FILE|- PID [LABEL]: what the kernel reported in this case, in two lines.
# The first says it for people: its events, how many pointers are still live (last event a
# kmalloc), how many of them PID (evleak) allocated, what the buffer lost; and of the
# do_eventfd objects left in the pointer map (LEFT_FILE, one hex address a line; -: the map
# could not be read), how many of PID's had their kfree reported. The second holds the same
# for the checks: "fields LOST LIVE PIDLIVE LEFT_FREED LEFT_PIDLIVE PIDLIVE_NOTLEFT", where
# LEFT_FREED counts left objects of PID whose last event was a kfree, LEFT_PIDLIVE left objects
# of PID still live, PIDLIVE_NOTLEFT objects of PID still live and not in the map (-1 without a
# map). Only PID's objects: another process's eventfd may be closed between the map's reading
# and this one.
# PID's live addresses go to $tmp/wlive, one hex address a line (witness_probe reads them).
witness_report() {
	local lost
	if [ ! -r "$W/trace" ]; then	# removed under us: nothing to compare with
		echo "[${3:-$mode}] witness: $W is gone"
		echo "fields gone -1 -1 -1 -1 -1"
		return 0
	fi
	lost=$(cat "$W"/per_cpu/cpu*/stats |
		awk '/^(overrun|dropped events):/ { n += $NF } END { print n + 0 }')
	python3 -c '
import re, sys
trace, leftf, pid, lost, label, liveout = sys.argv[1:7]
last, nalloc, nfree, owner = {}, 0, 0, {}
ev = re.compile(r"-(\d+)\s+\[\d+\].*?\b(kmalloc|kfree): call_site=\S+ ptr=(?:0x)?([0-9a-f]+)")
for line in open(trace, errors="replace"):
    m = ev.search(line)
    if not m:
        continue
    a = int(m.group(3), 16)
    if m.group(2) == "kmalloc":
        nalloc += 1
        owner[a] = m.group(1)
    else:
        nfree += 1
    last[a] = m.group(2)
live = {a for a, v in last.items() if v == "kmalloc"}
pidlive = {a for a in live if owner.get(a) == pid}
open(liveout, "w").write("".join("%x\n" % a for a in sorted(pidlive)))
out = ("[%s] witness (tracefs instance, fs/eventfd.c call sites): %d kmalloc, %d kfree, "
       "%d still live (%d of them evleak\x27s), %s events lost" % (label, nalloc, nfree,
       len(live), len(pidlive), lost))
if leftf == "-":
    print(out + "; the pointer map was not read (no bpftool)")
    print("fields %s %d %d -1 -1 -1" % (lost, len(live), len(pidlive)))
    sys.exit(0)
left = {int(x, 16) for x in open(leftf).read().split()}
freed = sum(1 for a in left if last.get(a) == "kfree" and owner.get(a) == pid)
print(out + "; of the %d do_eventfd objects left in the pointer map, %d are evleak\x27s with "
      "their kfree reported, %d evleak\x27s never reported freed, %d were never seen "
      "allocated" % (len(left), freed, len(left & pidlive), sum(1 for a in left if a not in last)))
print("fields %s %d %d %d %d %d" % (lost, len(live), len(pidlive), freed, len(left & pidlive),
      len(pidlive - left)))
' "$W/trace" "$1" "$2" "$lost" "${3:-$mode}" "$tmp/wlive"
}
# witness_probe: where the objects in $tmp/wlive (evleak's, never reported freed) stand. Each
# CPU in turn opens and closes N eventfds, which takes kmalloc-64 objects from that CPU's slabs
# and partial lists before it takes new slabs, and the witness records where each one went. A
# left object handed out again had been freed (with no kfree event). One whose slab the probe
# used while never handing it out is still allocated: a slab with a free slot is used before a
# new one. Neither, and its slab was gone, which happens when its last object is freed.
witness_probe() {
	local cpu order
	order=$(cat /sys/kernel/slab/$cache/order 2>/dev/null) || order=0
	: > "$W/trace"
	for cpu in $(seq 0 $(( $(nproc) - 1 ))); do
		taskset -c "$cpu" "$PS_LIVE_BIN/evleak" "$N" 0 > /dev/null 2>&1
	done
	python3 -c '
import re, sys
trace, livef, order, label = sys.argv[1:5]
page = 4096 << int(order)
left = [int(x, 16) for x in open(livef).read().split()]
got = set()
for line in open(trace, errors="replace"):
    m = re.search(r"\bkmalloc: call_site=\S+ ptr=(?:0x)?([0-9a-f]+)", line)
    if m:
        got.add(int(m.group(1), 16))
pages = {g // page for g in got}
again = [a for a in left if a in got]
held = [a for a in left if a not in got and a // page in pages]
print("[%s] probe of %d objects the kernel never reported freed (kmalloc-64 filled from each "
      "CPU): %d handed out again (they had been freed with no kfree event), %d still allocated "
      "(the probe took their slab\x27s other slots), %d in no slab the probe used" %
      (label, len(left), len(again), len(held), len(left) - len(again) - len(held)))
' "$W/trace" "$tmp/wlive" "$order" "$mode"
}
# How many of PID's objects the witness has seen allocated and not freed.
witness_live() {
	witness_report - "$1" | awk '$1 == "fields" { print $4 }'
}

for mode in kfunc no-kfunc full-map filter-full-map; do
	db=$tmp/$mode.db
	extra=()
	[ $mode = no-kfunc ] && extra=(--no-kfunc)
	[ $mode = full-map ] && extra=(--no-kfunc --map-size ptrs=$((N / 8)))
	[ $mode = filter-full-map ] && extra=(--comm evleak --map-size ptrs=$((N / 8)))
	ps_start_recorder "$db" --interval 500ms "${extra[@]}" || exit 1
	trap witness_cleanup EXIT
	# before the baseline: the instance's own objects (thousands in kmalloc-64) are in it
	[ $mode = no-kfunc ] && witness_start
	[ $mode != kfunc ] && [ -n "$W" ] && : > "$W/trace"
	sleep 1
	ps_shrink $cache
	base=$(proc_active $cache)
	A=$(ps_next_idx "$db") || exit 1
	ps_start_ready LEAK_PID "$tmp/leak.out" "$PS_LIVE_BIN/evleak" "$N" 30 || exit 1
	grep -q "^ready $N\$" "$tmp/leak.out" || { echo "FAIL: evleak: $(cat "$tmp/leak.out")"; exit 1; }
	sleep 0.3
	ps_shrink $cache
	B=$(ps_next_idx "$db") || exit 1
	lpid=$LEAK_PID
	kill -TERM "$LEAK_PID"; wait "$LEAK_PID"; LEAK_PID=
	sleep 0.5
	ps_wait_released $((N / 100)) $cache=$base
	# /proc/slabinfo is near the baseline; in the exact cases the witness also says when the
	# kernel has reported a kfree for every object (up to 10 s), so that the released interval
	# comes after the last of them and not only after the count looked done.
	if [ $mode != kfunc ] && [ -n "$W" ]; then
		for i in $(seq 1 20); do
			[ "$(witness_live "$lpid")" -le 0 ] && break	# -1: the witness is gone
			sleep 0.5
		done
	fi
	C=$(ps_next_idx "$db") || exit 1
	# In the exact cases every tracked eventfd context is in the pointer map until its kfree is
	# seen: what is still there after release, read before the maps go with the recorder, tells
	# a kfree the program never saw (entry left) from one it saw but did not charge (none left).
	inmap=-
	left=-
	if [ $mode != kfunc ] && command -v bpftool >/dev/null; then
		left=$tmp/left
		site=$(printf '%u' "$(q "$db" "SELECT site FROM tags WHERE kind = 'kmalloc'
			AND site_sym LIKE 'do_eventfd+%' LIMIT 1")")
		# Buckets of slots; a slot is taken while its address is not 0.
		inmap=$(bpftool map dump name ptrs -j 2>/dev/null | python3 -c '
import json, sys
left = []
for e in json.load(sys.stdin):
    b = e.get("formatted", e)["value"]
    left += [a for a, v in zip(b["addr"], b["val"]) if a and v["tag"]["site"] == int(sys.argv[1])]
open(sys.argv[2], "w").write("".join("%x\n" % (a % (1 << 64)) for a in left))
print(len(left))' "$site" "$left")
	fi
	# wf: the witness's fields (witness_report) for the released checks, read right after the
	# map; empty when there is no witness, no map or the witness lost events.
	wf=
	if [ $mode != kfunc ] && [ -n "$W" ]; then
		wl=$(witness_report "$left" "$lpid"); echo "${wl%%$'\n'*}"
		wf=${wl##*$'\n'fields }
		# A kfree that comes late (a file whose last reference something else held) shows
		# up in a second reading; one the kernel never reported does not.
		if [ "$(echo "$wf" | cut -d' ' -f3)" -gt 0 ]; then
			sleep 3
			witness_report "$left" "$lpid" "$mode, read again 3 s later" | head -n 1
			witness_probe
		fi
		if [ "${wf%% *}" != 0 ] || [ "$left" = - ]; then
			echo "[$mode] the released checks take the kernel's kfrees as complete:" \
				"the witness lost events or is gone, or the pointer map was not read"
			wf=
		fi
	fi
	ps_stop_recorder || { echo "FAIL: recorder exit status"; cat "$db.err"; exit 1; }
	tracking=$(q "$db" "SELECT value FROM meta WHERE key = 'kmalloc_tracking'")
	echo "[$mode] kmalloc tracking: $tracking; intervals: baseline $A, held $B, released $C"
	want=pointer-map; [ $mode = kfunc ] || [ $mode = filter-full-map ] && want=kmem-cache-kfunc
	check "[$mode] meta kmalloc_tracking = $want" test "$tracking" = "$want"

	# Events the kernel skipped (re-entry): each may leave one object in a class (lib).
	MH=$(lost_events "$db" $A $B) MC=$(lost_events "$db" $A $C)
	rate=$(q "$db" "SELECT value FROM meta WHERE key = 'site_sample_rate'")
	echo "[$mode] allocator events skipped for re-entry: $MH to held, $MC to released"
	tr=$(( $(class_live "$db" $cache $B) - $(class_live "$db" $cache $A) ))
	sl=$(( $(slab_active "$db" $cache $B) - $(slab_active "$db" $cache $A) ))
	trc=$(( $(class_live "$db" $cache $C) - $(class_live "$db" $cache $A) ))
	echo "[$mode] $cache: tracked +$tr slabinfo +$sl (held); tracked $trc after release"
	if [ $mode = kfunc ] || [ $mode = no-kfunc ]; then
		check "[$mode] $cache tracked growth within 5% of slabinfo + $MH" \
			within $tr $sl 5 $((N * 9 / 10)) $MH
	fi
	check "[$mode] $cache tracked back near baseline (5% of N + $MC)" \
		test $(( trc < 0 ? -trc : trc )) -le $((N / 20 + MC))

	# The exact cases come back to what the kernel reported. The recorder can see only the
	# frees the kernel's tracepoint reports: an object whose kfree the witness never saw is
	# live to both, so the exact checks end at the number of evleak's objects still in the
	# pointer map that the kernel never reported freed (0 when every kfree came), not at 0.
	# Without a usable witness they end at 0.
	keep=0
	if [ -n "$wf" ]; then
		read -r _ _ w_pid w_freed keep w_notleft <<< "$wf"
		kf=$(cnt_delta recursion_misses.kfree $A $C) ka=$(cnt_delta recursion_misses.kmalloc $A $C)
		[ "$w_pid" = 0 ] || echo "[$mode] NOTE: the kernel reported no kfree for $w_pid of" \
			"evleak's objects; $keep of them are in the pointer map, and stay live here"
		# A kfree the kernel reported and the program did not run for (re-entry) leaves
		# its object in the map; nothing else may.
		what="no object left in the pointer map whose kfree the kernel reported"
		check "[$mode] $what (+- $kf kfree skipped)" test "$w_freed" -le "$kf"
		# No sample and no drop: every object the kernel still has is in the map.
		what="evleak's objects the kernel never reported freed: all in the pointer map"
		[ $mode = no-kfunc ] && check "[$mode] $what (+- $ka kmalloc skipped)" \
			test "$w_notleft" -le "$ka"
	fi
	# Under the filter only evleak's objects are counted, alloc and free, on whichever CPU
	# each ran: back to exactly the baseline, but for skipped events.
	d=$(( trc - keep ))
	[ $mode = filter-full-map ] && check "[$mode] $cache tracked back to baseline + $keep (+- $MC)" \
		test $(( d < 0 ? -d : d )) -le "$MC"

	w="t.kind = 'kmalloc' AND t.cache = '$cache' AND t.site_sym LIKE 'do_eventfd+%'"
	g=$(( $(tag_sum "$db" live_objs "$w" $B) - $(tag_sum "$db" live_objs "$w" $A) ))
	gc=$(( $(tag_sum "$db" live_objs "$w" $C) - $(tag_sum "$db" live_objs "$w" $A) ))
	drops=$(cnt_delta drops.ptr_map_full $A $C)
	echo "[$mode] tag $cache@do_eventfd: +$g held, $gc after release; pointer map full $drops times"
	# What a failure needs to be told apart: objects still there (slabinfo), frees the kernel
	# did not run the program for (recursion misses), frees of pointers not in the map.
	echo "[$mode] after release: slabinfo $cache" \
		"$(( $(slab_active "$db" $cache $C) - $(slab_active "$db" $cache $A) )), kfree" \
		"recursion misses +$(cnt_delta recursion_misses.kfree $A $C), kfree of pointers" \
		"not in the map +$(cnt_delta kfree_untracked_nonslab $A $C), kfree events" \
		"+$(cnt_delta events.kfree $A $C), do_eventfd objects still in the pointer map $inmap"
	case $mode in
	no-kfunc)
		check "[$mode] pointer map never full" test "$drops" = 0
		# every object tracked (no sample): exact, but for the events the kernel skipped
		check "[$mode] tag exact: +$N (+- $MH skipped)" within $g $N 0 $N $MH
		d=$(( gc - keep ))
		check "[$mode] tag back to $keep (+- $MC skipped)" test $(( d < 0 ? -d : d )) -le $MC;;
	kfunc)
		check "[$mode] tag within 25% of $N (address-hash sample)" \
			within $g $N 25 $((N / 2)) $(lost_tag_slack $MH $rate)
		check "[$mode] tag back near 0" \
			test $(( gc < 0 ? -gc : gc )) -le $((N / 8 + $(lost_tag_slack $MC $rate)));;
	full-map|filter-full-map)
		check "[$mode] the map was full: drops counted" test "$drops" -gt 0
		check "[$mode] tag held at most +$N" test "$g" -le "$N"
		d=$(( gc - keep ))
		check "[$mode] tag back to $keep (+- $MC skipped)" test $(( d < 0 ? -d : d )) -le $MC
		check "[$mode] report says the map was full" \
			grep -q "^pointer map full [0-9]* times" <("$POOLSCOPE" report "$db");;
	esac
done
echo "$fails failure(s)"
[ $fails = 0 ]
