#!/usr/bin/env bash
# Live: thousands of open files (fileleak). Tracked per-cache growth of the inode cache, dentry
# and filp must be within 5% of the /proc/slabinfo delta, the call-site tags must name the
# allocating functions, slab backing pages must be flagged (not double counted), and
# everything must return to the baseline after release.
set -u
. "$(dirname "$0")/lib/record_common.sh"
ps_need_root

N=${PS_FILELEAK_N:-10000}
ps_test_dir /var/tmp/ps-rec-files.XXXXXX
dir=$tmp/leak
mkdir "$dir"

fstype=$(stat -f -c %T "$dir")
case $fstype in
ext2/ext3|ext4) icache=ext4_inode_cache; isite=ext4_alloc_inode;;
tmpfs) icache=shmem_inode_cache; isite=shmem_alloc_inode;;
*) echo "skip: $dir is on $fstype, the test knows ext4 and tmpfs"; exit 77;;
esac
echo "dir $dir on $fstype: inode cache $icache"
caches="$icache dentry filp"

ps_start_recorder "$db" --interval 500ms || exit 1
sleep 1
ps_shrink $caches
bases=""; for c in $caches; do bases="$bases $c=$(proc_active $c)"; done
A=$(ps_next_idx "$db") || exit 1

ps_start_ready LEAK_PID "$tmp/leak.out" "$PS_LIVE_BIN/fileleak" "$N" 30 "$dir" || exit 1
sleep 0.3
ps_shrink $caches
B=$(ps_next_idx "$db") || exit 1

kill -TERM "$LEAK_PID"; wait "$LEAK_PID"; LEAK_PID=
rmdir "$dir"	# its negative dentries go with it
sleep 0.5
ps_wait_released $((N / 100)) $bases	# RCU-deferred inode frees
C=$(ps_next_idx "$db") || exit 1
ps_stop_recorder || { echo "FAIL: recorder exit status"; cat "$db.err"; exit 1; }
echo "intervals: baseline $A, held $B, released $C"
# Events the kernel skipped (re-entry): each may leave one object in a class (lib).
MH=$(lost_events "$db" $A $B) MC=$(lost_events "$db" $A $C)
rate=$(q "$db" "SELECT value FROM meta WHERE key = 'site_sample_rate'")
echo "allocator events skipped for re-entry: $MH to held, $MC to released (site sample 1 in $rate)"

for c in $caches; do
	tr=$(( $(class_live "$db" $c $B) - $(class_live "$db" $c $A) ))
	sl=$(( $(slab_active "$db" $c $B) - $(slab_active "$db" $c $A) ))
	trc=$(( $(class_live "$db" $c $C) - $(class_live "$db" $c $A) ))
	slc=$(( $(slab_active "$db" $c $C) - $(slab_active "$db" $c $A) ))
	echo "$c: tracked +$tr slabinfo +$sl (held); after release tracked $trc slabinfo $slc"
	if [ $c = dentry ]; then
		# On ext4, open(O_CREAT)+unlink leaves more dentries in slabinfo than the N dentry
		# allocations traced (docs/known-issues.md), and unlink frees N dentries never seen
		# allocated (counted as pre-existing frees). The dentry-vs-slabinfo 5% check is in
		# record_negdent.sh, where lookups are the only dentry source. Here: N were traced.
		check "dentry tracked growth within 5% of N (traced allocations) + $MH" within $tr $N 5 1 $MH
	else
		check "$c tracked growth within 5% of slabinfo + $MH" within $tr $sl 5 $((N * 9 / 10)) $MH
	fi
	[ $c = dentry ] || check "$c tracked after release within 5% of N + $MC" \
		test $(( trc < 0 ? -trc : trc )) -le $((N / 20 + MC))
	check "$c slabinfo after release within 5% of N" test $(( slc < 0 ? -slc : slc )) -le $((N / 20))
done

# Call-site tags (address-hash sampled, scaled): the right function, about the right size.
for spec in "$icache:$isite" "filp:alloc_empty_file" "dentry:__d_alloc"; do
	c=${spec%%:*} f=${spec#*:}
	w="t.cache = '$c' AND t.site_sym LIKE '$f+%'"
	g=$(( $(tag_sum "$db" live_objs "$w" $B) - $(tag_sum "$db" live_objs "$w" $A) ))
	gc=$(( $(tag_sum "$db" live_objs "$w" $C) - $(tag_sum "$db" live_objs "$w" $A) ))
	echo "tag $c @ $f: +$g held, $gc after release (sampled estimate)"
	check "tag $c@$f growth within 25% of N" within $g $N 25 $((N / 2)) $(lost_tag_slack $MH $rate)
	check "tag $c@$f back near baseline" \
		test $(( gc < 0 ? -gc : gc )) -le $((N / 8 + $(lost_tag_slack $MC $rate)))
done

# Pages: slab backing pages are flagged SLAB_BACKING (2) and carry the growth of the slab side.
# No page tag at the leak's slab sites may be left unflagged (that would count the slab growth
# twice). Unflagged page tags elsewhere are the rest of the machine (page cache, anonymous
# memory of whatever else runs) and say nothing about this leak, so they are not compared.
slab_bytes=0
for c in $caches; do
	sz=$(q "$db" "SELECT objsize FROM slabinfo WHERE cache = '$c' AND interval <= $B
		ORDER BY interval DESC LIMIT 1")
	d=$(( $(slab_active "$db" $c $B) - $(slab_active "$db" $c $A) ))
	slab_bytes=$(( slab_bytes + d * sz ))
done
sites="t.site_sym LIKE '$isite+%' OR t.site_sym LIKE 'alloc_empty_file+%' OR t.site_sym LIKE '__d_alloc+%'"
pb=$(( $(tag_sum "$db" live_bytes "t.kind = 'page' AND (t.flags & 2) != 0" $B) -
       $(tag_sum "$db" live_bytes "t.kind = 'page' AND (t.flags & 2) != 0" $A) ))
pn=$(( $(tag_sum "$db" live_bytes "t.kind = 'page' AND (t.flags & 2) = 0 AND ($sites)" $B) -
       $(tag_sum "$db" live_bytes "t.kind = 'page' AND (t.flags & 2) = 0 AND ($sites)" $A) ))
echo "slab object bytes +$slab_bytes; SLAB_BACKING page tags +$pb; unflagged page tags at the leak's sites +$pn"
check "slab backing pages flagged (>= 40% of slab growth)" test $pb -ge $((slab_bytes * 4 / 10))
check "no unflagged page tag at the leak's slab sites (< 5% of slab growth)" test $pn -lt $((slab_bytes / 20))
# Reclaimable (SLAB_RECLAIM_ACCOUNT, counted in SReclaimable): inodes and dentries are, open
# files are not. The flag's bit moved in 6.8 (enum _slab_flag_bits); the probe asks BTF.
for spec in "$icache:reclaimable:1" "dentry:reclaimable:1" "filp:unreclaimable:0"; do
	c=${spec%%:*} rest=${spec#*:}; pool=${rest%%:*} bit=${rest#*:}
	n=$(q "$db" "SELECT count(*) FROM tags WHERE cache = '$c' AND (pool != '$pool' OR (flags & 1) != $bit)")
	m=$(q "$db" "SELECT count(*) FROM tags WHERE cache = '$c'")
	check "$c tags are $pool ($m tags, $n otherwise)" test "$n" = 0 -a "$m" -ge 1
done
n=$(q "$db" "SELECT count(*) FROM tags WHERE kind = 'page' AND (flags & 2) != 0 AND site_sym LIKE '$isite+%'")
check "a SLAB_BACKING page tag names $isite" test "$n" -ge 1
echo "$fails failure(s)"
[ $fails = 0 ]
