#!/usr/bin/env bash
# Live: `poolscope record -o F -- CMD` starts CMD after the probes are attached, exports the
# workload counters file, stores one workload row per interval and stops when CMD exits; the
# trace is mode 0600 with the meta keys docs/record.md lists.
set -u
. "$(dirname "$0")/lib/record_common.sh"
ps_need_root
tmp=$(mktemp -d /tmp/ps-rec-cmd.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
db=$tmp/run.db

start=$(date +%s.%N)
"$POOLSCOPE" record -o "$db" -q --label cmdtest --interval 500ms -- "$PS_LIVE_BIN/wlfake" 3 \
	> "$tmp/out" 2> "$tmp/err"
rc=$?
secs=$(echo "$(date +%s.%N) - $start" | bc)
echo "record exit $rc after ${secs}s; child said: $(cat "$tmp/out")"
check "record exits 0" test $rc = 0
check "record stopped when the command exited (< 8 s)" awk -v s="$secs" 'BEGIN { exit !(s < 8) }'
check "command ran" grep -q "ios 30000" "$tmp/out"
check "file mode 0600" test "$(stat -c %a "$db")" = 600
ios=$(q "$db" "SELECT coalesce(sum(ios), 0) FROM workload")
check "workload rows sum to the IOs done (30000, got $ios)" test "$ios" = 30000
p50=$(q "$db" "SELECT max(lat_p50_ns) FROM workload WHERE ios > 0")
check "workload p50 within 12.5% of 50 us (got $p50)" within "$p50" 50000 13 1
infl=$(q "$db" "SELECT max(inflight) FROM workload")
check "workload inflight stored" test "$infl" = 16
for k in os source host kernel boot_id start_wall_ns interval_ns tool_version cmdline label \
	 stack_sample_rate site_sample_rate; do
	v=$(q "$db" "SELECT value FROM meta WHERE key = '$k'")
	check "meta $k present ($v)" test -n "$v"
done
check "meta label" test "$(q "$db" "SELECT value FROM meta WHERE key = 'label'")" = cmdtest
check "meta os=linux" test "$(q "$db" "SELECT value FROM meta WHERE key = 'os'")" = linux
check "shm file removed" test -z "$(ls /dev/shm/poolscope-wl.* 2>/dev/null)"
echo "$fails failure(s)"
[ $fails = 0 ]
