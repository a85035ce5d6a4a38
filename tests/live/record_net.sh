#!/usr/bin/env bash
# Live: loopback TCP connections whose receivers never read (tcpleak). Tracked growth of the
# TCP, socket-inode and skb caches must be within 5% of /proc/slabinfo, the page tag of
# tcp_sendmsg must carry the queued data, the merged skbuff_fclone_cache must be shown under
# its own name (cache_alias = what the kernel reports), and everything must return to the
# baseline after the connections close.
set -u
. "$(dirname "$0")/lib/record_common.sh"
ps_need_root

NCONN=${PS_TCPLEAK_N:-1000}
BYTES=131072
ps_test_dir /tmp/ps-rec-net.XXXXXX

fclone=skbuff_fclone_cache
fclone_slab=$fclone	# the name /proc/slabinfo (and the kernel) use for its kmem_cache
if [ -L /sys/kernel/slab/$fclone ]; then
	grp=$(basename "$(readlink /sys/kernel/slab/$fclone)")
	# slabinfo shows a merged group under its first member's name: the one whose sysfs
	# link was made first is not knowable here, so take the name slabinfo lists.
	for n in $(ls -l /sys/kernel/slab | awk -v g="$grp" '$NF == g { print $(NF-2) }'); do
		grep -q "^$n " /proc/slabinfo && fclone_slab=$n
	done
fi
echo "skbuff_fclone_cache is reported as '$fclone_slab'"
caches="TCP sock_inode_cache skbuff_small_head $fclone_slab"

# 1 in 4 addresses: the per-context split below is checked against 2 x NCONN sockets; slab
# objects sit at regular strides, so the address-hash sample of 2000 sockets varies more than
# a binomial one would, too much for the check at the default 1 in 16
ps_start_recorder "$db" --interval 500ms --site-sample 4 || exit 1
sleep 1
ps_shrink $caches
bases=""; for c in $caches; do bases="$bases $c=$(proc_active $c)"; done
A=$(ps_next_idx "$db") || exit 1
ps_start_ready LEAK_PID "$tmp/leak.out" "$PS_LIVE_BIN/tcpleak" "$NCONN" "$BYTES" 30 || exit 1
sleep 0.3
ps_shrink $caches
B=$(ps_next_idx "$db") || exit 1
kill -TERM "$LEAK_PID"; wait "$LEAK_PID"; LEAK_PID=
sleep 1.5
# closing 1000 sockets with 128 MB queued is not instant on a busy machine: wait (bounded)
# until the caches are back near their baseline before the "released" sample
ps_wait_released $((NCONN / 50)) $bases
C=$(ps_next_idx "$db") || exit 1
ps_stop_recorder || { echo "FAIL: recorder exit status"; cat "$db.err"; exit 1; }
echo "intervals: baseline $A, held $B, released $C"
# Events the kernel skipped (re-entry): each may leave one object in a class (lib).
MH=$(lost_events "$db" $A $B) MC=$(lost_events "$db" $A $C)
echo "allocator events skipped for re-entry: $MH to held, $MC to released"

for c in $caches; do
	tr=$(( $(class_live "$db" $c $B) - $(class_live "$db" $c $A) ))
	sl=$(( $(slab_active "$db" $c $B) - $(slab_active "$db" $c $A) ))
	trc=$(( $(class_live "$db" $c $C) - $(class_live "$db" $c $A) ))
	slc=$(( $(slab_active "$db" $c $C) - $(slab_active "$db" $c $A) ))
	# slabinfo beside the tracked count after the release: both high is frees that came late,
	# slabinfo back alone is frees the probes did not see (docs/known-issues.md)
	echo "$c: tracked +$tr slabinfo +$sl (held); tracked $trc slabinfo $slc after release"
	check "$c tracked growth within 5% of slabinfo + $MH" within $tr $sl 5 $((NCONN * 9 / 10)) $MH
	check "$c tracked back to baseline (within 5% of growth + $MC)" \
		test $(( trc < 0 ? -trc : trc )) -le $(( (tr < 0 ? -tr : tr) / 20 + 2 + MC ))
done

w="t.kind = 'page' AND t.site_sym LIKE 'tcp_sendmsg%' AND (t.flags & 2) = 0"
pg=$(( $(tag_sum "$db" live_bytes "$w" $B) - $(tag_sum "$db" live_bytes "$w" $A) ))
pgc=$(( $(tag_sum "$db" live_bytes "$w" $C) - $(tag_sum "$db" live_bytes "$w" $A) ))
want=$((NCONN * BYTES))
echo "page tags @ tcp_sendmsg*: +$pg held (data queued $want), $pgc after release"
check "page tag of tcp_sendmsg carries >= 60% of the queued data" test $pg -ge $((want * 6 / 10))
check "page tag of tcp_sendmsg at most 150% of the queued data" test $pg -le $((want * 3 / 2))
check "page tag of tcp_sendmsg back near baseline" test $(( pgc < 0 ? -pgc : pgc )) -le $((want / 10))

w="t.cache = 'skbuff_fclone_cache' AND t.site_sym LIKE '__alloc_skb+%'"
g=$(( $(tag_sum "$db" live_objs "$w" $B) - $(tag_sum "$db" live_objs "$w" $A) ))
echo "tag skbuff_fclone_cache@__alloc_skb: +$g (sampled estimate)"
check "skbuff_fclone_cache tag (by its own name) grows" test $g -ge $((NCONN / 2))
if [ "$fclone_slab" != "$fclone" ]; then
	n=$(q "$db" "SELECT count(*) FROM tags WHERE cache = '$fclone' AND cache_alias = '$fclone_slab'")
	check "merged cache: cache_alias keeps the reported name '$fclone_slab'" test "$n" -ge 1
	n=$(q "$db" "SELECT count(*) FROM tags WHERE cache = '$fclone_slab' AND site_sym LIKE '__alloc_skb+%'")
	check "no __alloc_skb tag is shown as '$fclone_slab'" test "$n" = 0
fi
tcp=$(q "$db" "SELECT count(*) FROM tags WHERE cache = 'TCP' AND site_sym LIKE 'sk_prot_alloc+%'")
check "TCP tag at sk_prot_alloc" test "$tcp" -ge 1
# Context: connect() allocates its socket in the task; the accepted child is created in
# softirq, on the IRQ stack, when the handshake's final ACK arrives. The tags are address-hash
# sampled (1 in 4 here: ~250 samples of 1000 sockets a side), so each side is checked for
# being clearly there and the two together against the 2 x NCONN sockets (~125 samples).
sum=0
for cx in task irq; do
	w="t.cache = 'TCP' AND t.site_sym LIKE 'sk_prot_alloc+%' AND t.ctx = '$cx'"
	g=$(( $(tag_sum "$db" live_objs "$w" $B) - $(tag_sum "$db" live_objs "$w" $A) ))
	echo "tag TCP@sk_prot_alloc ctx $cx: +$g (sampled estimate; $NCONN expected)"
	check "TCP sockets allocated in context $cx: at least a third of $NCONN" test $g -ge $((NCONN / 3))
	sum=$((sum + g))
done
check "TCP sockets over both contexts within 25% of $((2 * NCONN))" within $sum $((2 * NCONN)) 25 1
echo "$fails failure(s)"
[ $fails = 0 ]
