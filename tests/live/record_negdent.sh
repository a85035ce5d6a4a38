#!/usr/bin/env bash
# Live: negative dentries (negdent). Tracked dentry growth must be within 5% of the
# /proc/slabinfo delta, the __d_alloc call-site tag must carry it, and removing the directory
# must bring both back to the baseline.
set -u
. "$(dirname "$0")/lib/record_common.sh"
ps_need_root

N=${PS_NEGDENT_N:-40000}
ps_test_dir /var/tmp/ps-rec-neg.XXXXXX
dir=$tmp/neg
mkdir "$dir"

ps_start_recorder "$db" --interval 500ms || exit 1
sleep 1
ps_shrink dentry
base=$(proc_active dentry)
A=$(ps_next_idx "$db") || exit 1
out=$("$PS_LIVE_BIN/negdent" "$N" "$dir") || { echo "FAIL: negdent: $out"; exit 1; }
[ "$out" = done ] || { echo "FAIL: negdent printed '$out'"; exit 1; }
ps_shrink dentry
B=$(ps_next_idx "$db") || exit 1
rmdir "$dir"
sleep 0.5
ps_wait_released $((N / 100)) dentry=$base
C=$(ps_next_idx "$db") || exit 1
ps_stop_recorder || { echo "FAIL: recorder exit status"; cat "$db.err"; exit 1; }

tr=$(( $(class_live "$db" dentry $B) - $(class_live "$db" dentry $A) ))
sl=$(( $(slab_active "$db" dentry $B) - $(slab_active "$db" dentry $A) ))
trc=$(( $(class_live "$db" dentry $C) - $(class_live "$db" dentry $A) ))
slc=$(( $(slab_active "$db" dentry $C) - $(slab_active "$db" dentry $A) ))
# Events the kernel skipped (re-entry): each may leave one object in a class (lib).
MH=$(lost_events "$db" $A $B) MC=$(lost_events "$db" $A $C)
rate=$(q "$db" "SELECT value FROM meta WHERE key = 'site_sample_rate'")
echo "dentry: tracked +$tr slabinfo +$sl; after rmdir tracked $trc slabinfo $slc;" \
	"skipped for re-entry $MH, $MC"
check "dentry tracked growth within 5% of slabinfo + $MH" within $tr $sl 5 $((N * 9 / 10)) $MH
check "dentry tracked back to baseline (within 2% of N + $MC)" \
	test $(( trc < 0 ? -trc : trc )) -le $((N / 50 + MC))
check "dentry slabinfo back to baseline (within 2% of N)" test $(( slc < 0 ? -slc : slc )) -le $((N / 50))
w="t.cache = 'dentry' AND t.site_sym LIKE '__d_alloc+%'"
g=$(( $(tag_sum "$db" live_objs "$w" $B) - $(tag_sum "$db" live_objs "$w" $A) ))
echo "tag dentry@__d_alloc: +$g (sampled estimate)"
check "tag dentry@__d_alloc within 15% of N" within $g $N 15 $((N / 2)) $(lost_tag_slack $MH $rate)
n=$(q "$db" "SELECT count(*) FROM stacks st JOIN tags t ON t.id = st.tag JOIN frames f ON f.stack = st.id
	WHERE t.cache = 'dentry' AND f.sym IN ('__lookup_slow', 'lookup_slow', 'd_alloc_parallel')")
check "a sampled dentry stack goes through the lookup path" test "$n" -ge 1
echo "$fails failure(s)"
[ $fails = 0 ]
