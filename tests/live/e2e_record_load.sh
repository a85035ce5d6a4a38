#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# End to end: `poolscope record -- poolscope load smb://...` over the netns test server. The
# trace must hold per-second workload rows (IOs > 0, in flight ~32) beside the recorded tags.
# Needs `poolscope record`: fails (does not skip) when the binary has none.
set -u
cd "${PS_SRCDIR:-.}"
export PS_SMB_DIR=$(mktemp -d /tmp/ps-e2e.XXXXXX)
export PS_PIN=$PS_LIVE_BIN/pspin
trap 'tests/smbserver.sh stop >/dev/null 2>&1; rm -rf "$PS_SMB_DIR"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$POOLSCOPE" help record >/dev/null 2>&1 || fail "$POOLSCOPE has no record command"
eval "$(tests/smbserver.sh start --size 256M)" || fail "server start"
db=$PS_SMB_DIR/e2e.db
"$POOLSCOPE" record -o "$db" --label e2e --duration 30 -q -- $PS_SMB_CLIENT_EXEC "$POOLSCOPE" load \
	"$PS_SMB_URL" --user "$PS_SMB_USER" --bs 8k --qd 16 --workers 2 --duration 6 --quiet \
	> "$PS_SMB_DIR/load.txt" 2> "$PS_SMB_DIR/rec.txt" || { rc=$?; cat "$PS_SMB_DIR/rec.txt"; fail "record exited $rc"; }
cat "$PS_SMB_DIR/load.txt" | grep '^result:'
rows=$(sqlite3 "$db" 'select count(*) from workload where ios > 0') || fail "no workload table"
[ "$rows" -ge 4 ] || fail "$rows workload rows with IOs"
tios=$(sqlite3 "$db" 'select sum(ios) from workload')
lios=$(sed -n 's/^result:.* ios=\([0-9]*\).*/\1/p' "$PS_SMB_DIR/load.txt")
[ -n "$lios" ] && [ "$tios" -ge "$lios" ] || fail "trace has $tios IOs, load reported $lios"
infl=$(sqlite3 "$db" 'select max(inflight) from workload')
[ "$infl" -ge 28 ] || fail "max in flight in the trace $infl, expected ~32"
p50=$(sqlite3 "$db" 'select max(lat_p50_ns) from workload')
[ "$p50" -gt 0 ] || fail "no latency in the trace"
tags=$(sqlite3 "$db" 'select count(*) from tags')
[ "$tags" -ge 10 ] || fail "only $tags tags"
echo "ok: $rows workload rows, $tios IOs, max in flight $infl, $tags tags"
