#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# ksmbd (the in-kernel SMB server) end to end, where the kernel has it: the test server starts
# with --server ksmbd, `poolscope load` reads over it at QD16 for a few seconds, and stop
# leaves nothing behind. Skipped, with the reason, on kernels without ksmbd.
set -u
cd "${PS_SRCDIR:-.}"
if ! { [ -e /sys/class/ksmbd-control ] || [ -e /sys/module/ksmbd ] || modinfo ksmbd >/dev/null 2>&1; }; then
	echo "skip: the kernel has no ksmbd (no /sys/class/ksmbd-control, no ksmbd module for $(uname -r))"
	exit 77
fi
export PS_SMB_DIR=$(mktemp -d /tmp/ps-ksmbd.XXXXXX)
export PS_PIN=$PS_LIVE_BIN/pspin
trap 'tests/smbserver.sh stop >/dev/null 2>&1; rm -rf "$PS_SMB_DIR"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
eval "$(tests/smbserver.sh start --server ksmbd --size 64M)" || fail "start"
[ "$PS_SMB_SERVER" = ksmbd ] || fail "server is $PS_SMB_SERVER"
out=$($PS_SMB_CLIENT_EXEC "$POOLSCOPE" load "$PS_SMB_URL" --user "$PS_SMB_USER" --bs 8k --qd 16 \
	--workers 1 --duration 4 --random --read 2>&1) || fail "load: $out"
grep '^result:' <<< "$out" | grep -q ' errors=0 ' || fail "errors: $out"
tests/smbserver.sh stop
[ -e /sys/class/ksmbd-control ] && pgrep -x ksmbd.mountd && fail "ksmbd.mountd left"
ip netns list | grep -E 'psrv0|pscli0' && fail "namespaces left"
echo ok
