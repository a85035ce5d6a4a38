#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `poolscope load` over SMB (netns server) sustains QD16 x 2 workers: client-side in-flight
# count stays at 32 (mean >= 30), the server side holds 32 established SMB connections (one per
# outstanding IO: libsmbclient is synchronous), per-second IOPS agree with the totals, and each
# error case gives one clear line with exit 1 or 2.
set -u
cd "${PS_SRCDIR:-.}"
export PS_SMB_DIR=$(mktemp -d /tmp/ps-loadsmb.XXXXXX)
export PS_PIN=$PS_LIVE_BIN/pspin
out=$PS_SMB_DIR/out
trap 'tests/smbserver.sh stop >/dev/null 2>&1; rm -rf "$PS_SMB_DIR"' EXIT
fail() { echo "FAIL: $*"; [ -f "$out" ] && tail -20 "$out"; exit 1; }
eval "$(tests/smbserver.sh start --size 256M)" || fail "server start"
$PS_SMB_CLIENT_EXEC "$POOLSCOPE" load "$PS_SMB_URL" --user "$PS_SMB_USER" --bs 8k --qd 16 --workers 2 \
	--duration 8 --ramp 1 --random --read > "$out" 2>&1 &
lp=$!
# Server side, counted by the kernel rather than by smbstatus (whose tdb view lagged in CI):
# established TCP connections on the server's SMB port, inside the server's namespace; the
# highest of the looks taken every half second for as long as the load runs (its slots connect
# one by one before the timed run starts; on a busy machine that alone has taken seconds).
port=$(sed -n 's/^[[:space:]]*smb ports = //p' "$PS_SMB_CONF")
conns=0 looks= t0=$SECONDS
while kill -0 $lp 2>/dev/null; do
	n=$($PS_SMB_SERVER_EXEC ss -Htn state established "( sport = :${port:-445} )" 2>/dev/null | wc -l)
	[ "$n" -gt "$conns" ] && conns=$n
	looks+=" $((SECONDS - t0))s:$n"
	sleep 0.5
done
wait $lp || fail "load exited $?"
res=$(grep '^result:' "$out") || fail "no result line"
get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$res"; }
echo "$res"
echo "server: $conns established SMB connections (looks, time:count:$looks)"
if [ "$conns" -lt 32 ]; then
	tail -5 "$PS_SMB_DIR/log/smbd.log" 2>/dev/null | sed 's/^/smbd.log: /'
	fail "server sees $conns connections, expected 32 (QD16 x 2)"
fi
awk -v m="$(get inflight_mean)" 'BEGIN{exit !(m >= 30)}' || fail "in-flight mean $(get inflight_mean) < 30"
[ "$(get inflight_max)" = 32 ] || fail "in-flight max $(get inflight_max) != 32"
[ "$(get errors)" = 0 ] || fail "errors"
iops=$(get iops); ios=$(get ios); secs=$(get seconds)
awk -v i="$iops" 'BEGIN{exit !(i > 1000)}' || fail "IOPS $iops too low"
awk -v a="$ios" -v s="$secs" -v i="$iops" 'BEGIN{d=a/s-i; if(d<0)d=-d; exit !(d <= i*0.01+1)}' || fail "ios/seconds != iops"
# the per-second rows (not the ramp one), each rate times its length, add up to the total
# within 3%
. tests/live/lib/load_rows.sh
sum=$(load_rows_ios "$out")
awk -v s="$sum" -v a="$ios" 'BEGIN{d=s-a; if(d<0)d=-d; exit !(d <= a*0.03)}' || fail "per-second sum $sum vs total $ios"
med=$(get iops_median)
awk -v m="$med" -v i="$iops" 'BEGIN{exit !(m > i*0.7 && m < i*1.3)}' || fail "median $med far from mean $iops"
C="$PS_SMB_CLIENT_EXEC $POOLSCOPE load"
check_err() { # expected-rc pattern args...
	local want=$1 pat=$2; shift 2
	local msg rc
	msg=$($C "$@" --duration 1 --qd 1 2>&1 >/dev/null); rc=$?
	[ $rc = $want ] || fail "'$*': exit $rc, expected $want ($msg)"
	[ "$(wc -l <<< "$msg")" = 1 ] || fail "'$*': more than one line: $msg"
	grep -q -- "$pat" <<< "$msg" || fail "'$*': '$msg' lacks '$pat'"
	echo "ok error: $msg"
}
check_err 1 "access denied" "$PS_SMB_URL" --user "root%wrongpass"
check_err 1 "no such file" "${PS_SMB_URL%/*}/missing.bin" --user "$PS_SMB_USER"
check_err 1 "connection refused" "smb://10.201.7.1:4455/share/test.bin" --user "$PS_SMB_USER"
check_err 1 "cannot reach" "smb://10.201.7.9/share/test.bin" --user "$PS_SMB_USER" --timeout 2s
check_err 1 "short file" "$PS_SMB_URL" --user "$PS_SMB_USER" --size 1T
check_err 2 "expected 1..256" "$PS_SMB_URL" --qd 0
check_err 2 "multiple of 512" "$PS_SMB_URL" --bs 1000
echo "ok"
