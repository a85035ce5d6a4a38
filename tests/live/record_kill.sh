#!/usr/bin/env bash
# Live: SIGKILL of the recorder mid-run leaves a readable trace missing at most the interval
# being written; SIGTERM/--duration end cleanly.
set -u
. "$(dirname "$0")/lib/record_common.sh"
ps_need_root
tmp=$(mktemp -d /tmp/ps-rec-kill.XXXXXX)
trap 'kill -9 ${REC_PID:-} 2>/dev/null; rm -rf "$tmp"' EXIT
db=$tmp/run.db

ps_start_recorder "$db" --interval 200ms || exit 1
sleep 1.5
kill -9 $REC_PID; wait $REC_PID 2>/dev/null; REC_PID=
check "integrity_check ok after SIGKILL" test "$(q "$db" 'PRAGMA integrity_check')" = ok
n=$(q "$db" "SELECT count(*) FROM intervals")
check "intervals committed before the kill (>= 4, got $n)" test "$n" -ge 4
# Every committed interval is complete: its meminfo rows (written every interval), and the
# baseline every slabinfo cache and counter (the first interval writes every series in full;
# later ones only what changed, meta sparse_series).
bad=$(q "$db" "SELECT count(*) FROM intervals i WHERE NOT EXISTS (SELECT 1 FROM sysstat s
	WHERE s.interval = i.idx AND s.name = 'SUnreclaim')")
check "every committed interval has its meminfo rows" test "$bad" = 0
check "the baseline has every slabinfo cache" \
	test "$(q "$db" "SELECT count(*) FROM slabinfo WHERE interval = 0")" -ge 50
check "the baseline has the class counters" \
	test "$(q "$db" "SELECT count(*) FROM counters WHERE interval = 0 AND name LIKE 'class.%'")" -ge 50
check "file mode 0600" test "$(stat -c %a "$db")" = 600
if [ -x "$(dirname "$POOLSCOPE")/poolscope" ] && "$POOLSCOPE" help 2>&1 | grep -q '^  report'; then
	check "poolscope report reads the killed trace" "$POOLSCOPE" report "$db" >/dev/null
fi

db2=$tmp/run2.db
"$POOLSCOPE" record -o "$db2" -q --interval 200ms &
pid=$!
sleep 1
kill -TERM $pid; wait $pid
check "SIGTERM: exit 0" test $? = 0
check "SIGTERM: WAL checkpointed (no -wal left)" test ! -s "$db2-wal"
"$POOLSCOPE" record -o "$tmp/run3.db" -q --duration 700ms --interval 200ms
check "--duration: exit 0" test $? = 0
n=$(q "$tmp/run3.db" "SELECT max(t_ns) FROM intervals")
check "--duration 700ms: last interval at 0.7-1.2 s ($n ns)" awk -v n="$n" 'BEGIN { exit !(n >= 7e8 && n < 1.2e9) }'
echo "$fails failure(s)"
[ $fails = 0 ]
