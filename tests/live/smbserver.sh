#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The private SMB server starts (netns and loopback), serves the pinned test file to smbclient,
# and `stop` leaves no smbd, no pin process and no namespace behind; a second stop is harmless.
# ksmbd: tests/live/ksmbd_config.sh and ksmbd_server.sh (skipped with the reason without ksmbd).
set -u
cd "${PS_SRCDIR:-.}"
export PS_SMB_DIR=$(mktemp -d /tmp/ps-smbsrv.XXXXXX)
export PS_PIN=$PS_LIVE_BIN/pspin
trap 'tests/smbserver.sh stop >/dev/null 2>&1; rm -rf "$PS_SMB_DIR"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
if [ -e /sys/class/ksmbd-control ]; then echo "ksmbd present"; else echo "note: ksmbd case not run: kernel has no ksmbd (/sys/class/ksmbd-control missing)"; fi
for mode in --netns --loopback; do
	env=$(tests/smbserver.sh start $mode --size 64M) || fail "start $mode"
	eval "$env"
	pid=$PS_SMB_PID
	kill -0 "$pid" || fail "smbd $pid not running"
	grep -q VmLck /proc/$(cat "$PS_SMB_DIR/run/pin.pid")/status || fail "no pin process"
	lck=$(awk '/VmLck/{print $2}' /proc/$(cat "$PS_SMB_DIR/run/pin.pid")/status)
	[ "$lck" -ge 65536 ] || fail "pinned only ${lck} kB"
	host=${PS_SMB_URL#smb://}; host=${host%%/*}; port=445
	case $host in *:*) port=${host#*:}; host=${host%:*};; esac
	$PS_SMB_CLIENT_EXEC smbclient -p $port //$host/share -U "$PS_SMB_USER" -c 'ls test.bin' | grep -q test.bin || fail "smbclient ls ($mode)"
	tests/smbserver.sh status >/dev/null || fail "status says down"
	tests/smbserver.sh stop
	sleep 0.3
	kill -0 "$pid" 2>/dev/null && fail "smbd $pid still alive after stop"
	pgrep -f -- "-s $PS_SMB_DIR/etc/smb.conf" && fail "smbd processes left"
	ip netns list | grep -E 'psrv0|pscli0' && fail "namespaces left"
	tests/smbserver.sh status >/dev/null && fail "status says up after stop"
	tests/smbserver.sh stop || fail "second stop"
	echo "ok $mode"
done
# interrupted start: kill the script while it starts; a stop must clean up what it left
( tests/smbserver.sh start --size 64M >/dev/null 2>&1 & p=$!; sleep 1; kill -TERM $p; wait $p ) || true
tests/smbserver.sh stop
ip netns list | grep -E 'psrv0|pscli0' && fail "namespaces left after interrupted start"
pgrep -f -- "-s $PS_SMB_DIR/etc/smb.conf" && fail "smbd left after interrupted start"
echo "ok interrupted start cleaned up"
