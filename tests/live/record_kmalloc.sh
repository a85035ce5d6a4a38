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
# against it: none of evleak's objects may be left in the pointer map with its kfree reported
# (but for kfrees skipped for re-entry), and the tag comes back to the number of evleak's
# objects left in the map whose kfree the kernel never reported (0 when it reported them all).
# A free the tracepoint never reports cannot reach any probe: the case says so when it
# happens, and probes whether those objects are still allocated.
set -u
. "$(dirname "$0")/lib/record_common.sh"
ps_need_root

N=${PS_EVLEAK_N:-15000}
ps_test_dir /tmp/ps-rec-kmalloc.XXXXXX
cache=kmalloc-64

cnt() { counter_at "$db" "$1" "$2"; }
cnt_delta() { echo $(( $(cnt "$1" "$3") - $(cnt "$1" "$2") )); }	# name from to

# A witness for the exact cases (no-kfunc, full-map, filter-full-map): a tracefs instance of
# its own records the kernel's kmalloc and kfree events whose call site is in fs/eventfd.c,
# pointers unhashed, and their checks are made against it (lib/kmem_witness.py reads it). It is
# made once, before no-kfunc's baseline, and kept to the end, its buffer emptied before each
# case: no probe of its own leaves the tracepoints between cases.
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
WPY="$(dirname "$0")/lib/kmem_witness.py"
# Events the witness's buffer lost (overwritten or dropped); "gone" when the instance is.
witness_lost() {
	[ -r "$W/trace" ] || { echo gone; return 0; }
	cat "$W"/per_cpu/cpu*/stats |
		awk '/^(overrun|commit overrun|dropped events):/ { n += $NF } END { print n + 0 }'
}
# witness_report MAP|- PID [LABEL]: what the kernel reported in this case, against the pointer
# map read into MAP (map_read); two lines, one for people and one of fields for the checks
# (lib/kmem_witness.py, "report"). PID's live addresses go to $tmp/wlive.
witness_report() {
	local lost
	lost=$(witness_lost)
	if [ "$lost" = gone ]; then	# removed under us: nothing to compare with
		echo "[${3:-$mode}] witness: $W is gone"
		echo "fields gone -1 -1 -1 -1 -1 -1"
		return 0
	fi
	python3 "$WPY" report "$W/trace" "$1" "${site:-0}" "$2" "$N" "$lost" "${3:-$mode}" \
		"$tmp/wlive"
}
# How many of PID's objects the witness has seen allocated and not freed (-1: no witness).
witness_live() {
	local n
	n=$(witness_report - "$1" | awk '$1 == "fields" { print $5 }')
	echo "${n:--1}"
}
# map_read OUT: every address in the recorder's pointer map with its site, into OUT (and the
# number at the do_eventfd site on stdout); OUT removed and "-" printed when it cannot be read.
# The map is the one named ptrs among those the recorder (REC_PID) holds: another program's
# map of that name is not it.
map_read() {
	local id
	rm -f "$1"
	id=$(command -v bpftool >/dev/null && bpftool map show -j 2>/dev/null | python3 "$WPY" mapid \
		$(awk '$1 == "map_id:" { print $2 }' /proc/"${REC_PID:-0}"/fdinfo/* 2>/dev/null))
	if [ -z "$id" ] || [ "$id" != "${id% *}" ] ||
	   ! bpftool map dump id "$id" -j 2>/dev/null | python3 "$WPY" mapdump "$site" "$1" 2>/dev/null
	then
		rm -f "$1"
		echo -
	fi
}
# witness_probe: where the objects in $tmp/wlive (evleak's, never reported freed) stand. Each
# online CPU in turn opens and closes N eventfds, which drains the kmalloc-64 slabs of that CPU
# and the node's partial slabs before it takes new ones (SLUB hands out a slab's whole
# freelist), and the witness records what each one got. An object handed out again had been
# freed with no kfree event. One in a slab the probe drained without it is still allocated,
# when the recorder's pointer map (of every kmalloc: no-kfunc, without a filter) still holds it
# at do_eventfd: a kmalloc that took it in between would have replaced it there. Per-CPU
# sheaves (a cache's sheaf_capacity) would hand objects out otherwise: then it says so and does
# not probe.
witness_probe() {
	local cpus cpu page sheaf map2=-
	sheaf=$(cat /sys/kernel/slab/$cache/sheaf_capacity 2>/dev/null || echo 0)
	if [ "$sheaf" != 0 ]; then
		echo "[$mode] probe not run: $cache has per-CPU sheaves ($sheaf objects)"
		return 0
	fi
	page=$(getconf PAGESIZE)
	page=$(( page << $(cat /sys/kernel/slab/$cache/order 2>/dev/null || echo 0) ))
	cpus=$(awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-");
		for (c = r[1]; c <= r[n]; c++) print c } }' /sys/devices/system/cpu/online)
	: > "$W/trace"
	for cpu in $cpus; do
		taskset -c "$cpu" "$PS_LIVE_BIN/evleak" "$N" 0 > "$tmp/probe.out" 2>&1 ||
			echo "[$mode] probe on CPU $cpu failed: $(head -c 200 "$tmp/probe.out")"
	done
	if [ $mode != filter-full-map ]; then
		map_read "$tmp/map2" > /dev/null
		[ -s "$tmp/map2" ] && map2=$tmp/map2
	fi
	python3 "$WPY" probe "$W/trace" "$tmp/wlive" "$map2" "$site" "$page" "$(witness_lost)" "$mode"
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
	# what evleak allocated ends here: a later process with its pid is not evleak
	[ $mode != kfunc ] && [ -n "$W" ] && [ -w "$W/trace_marker" ] &&
		echo ps-witness-mark > "$W/trace_marker"
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
	# The map and the witness are read after C: a kfree with its event in between would count
	# in the tag at C and not in the map, but only after the 10 s wait above ran out.
	inmap=-
	map=-
	if [ $mode != kfunc ]; then
		site=$(printf '%u' "$(q "$db" "SELECT site FROM tags WHERE kind = 'kmalloc'
			AND site_sym LIKE 'do_eventfd+%' LIMIT 1")")
		inmap=$(map_read "$tmp/map")
		[ "$inmap" = - ] || map=$tmp/map
	fi
	# wf: the witness's fields (witness_report) for the released checks; empty when there is
	# no witness, no map, or the witness is not whole: it lost events, or did not record all
	# of evleak's N kmallocs (disabled, replaced, or its lines not parsed).
	wf=
	if [ $mode != kfunc ] && [ -n "$W" ]; then
		wl=$(witness_report "$map" "$lpid"); echo "${wl%%$'\n'*}"
		wf=${wl##*$'\n'fields }
		read -r w_lost w_alloc _ w_pid _ <<< "$wf"
		# A kfree that comes late (a file whose last reference something else held) shows
		# up in a second reading; one the kernel never reported does not.
		if [ "${w_pid:-0}" -gt 0 ] 2>/dev/null; then
			sleep 3
			witness_report "$map" "$lpid" "$mode, read again 3 s later" | head -n 1
			witness_probe
		fi
		if [ "$w_lost" != 0 ] || [ "$w_alloc" != "$N" ] || [ "$map" = - ]; then
			echo "[$mode] the released checks take the kernel's kfrees as complete: the" \
				"witness lost events ($w_lost) or saw $w_alloc of evleak's $N kmallocs," \
				"or the pointer map was not read ($map)"
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
		read -r _ _ _ w_pid w_freed keep w_notmap <<< "$wf"
		kf=$(cnt_delta recursion_misses.kfree $A $C) ka=$(cnt_delta recursion_misses.kmalloc $A $C)
		[ "$w_pid" = 0 ] || echo "[$mode] NOTE: the kernel reported no kfree for $w_pid of" \
			"evleak's objects; $keep of them are in the pointer map, and stay live here"
		# A kfree the kernel reported and the program did not run for (re-entry) leaves
		# its object in the map; nothing else may.
		what="none of evleak's objects left in the pointer map had its kfree reported"
		check "[$mode] $what (+- $kf kfree skipped)" test "$w_freed" -le "$kf"
		# No sample and no drop: every object the kernel still has is in the map, at its
		# site or, handed out again by a kmalloc the recorder saw, at another.
		what="evleak's objects the kernel never reported freed: all in the pointer map"
		[ $mode = no-kfunc ] && check "[$mode] $what (+- $ka kmalloc skipped)" \
			test "$w_notmap" -le "$ka"
	fi
	# Under the filter only evleak's objects are counted, alloc and free, on whichever CPU
	# each ran: back to exactly the baseline, but for skipped events.
	[ $mode = filter-full-map ] && check "[$mode] $cache tracked back to baseline + $keep (+- $MC)" \
		within "$trc" "$keep" 0 0 "$MC"

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
		check "[$mode] tag back to $keep (+- $MC skipped)" within "$gc" "$keep" 0 0 "$MC";;
	kfunc)
		check "[$mode] tag within 25% of $N (address-hash sample)" \
			within $g $N 25 $((N / 2)) $(lost_tag_slack $MH $rate)
		check "[$mode] tag back near 0" \
			test $(( gc < 0 ? -gc : gc )) -le $((N / 8 + $(lost_tag_slack $MC $rate)));;
	full-map|filter-full-map)
		check "[$mode] the map was full: drops counted" test "$drops" -gt 0
		check "[$mode] tag held at most +$N" test "$g" -le "$N"
		check "[$mode] tag back to $keep (+- $MC skipped)" within "$gc" "$keep" 0 0 "$MC"
		check "[$mode] report says the map was full" \
			grep -q "^pointer map full [0-9]* times" <("$POOLSCOPE" report "$db");;
	esac
done
echo "$fails failure(s)"
[ $fails = 0 ]
