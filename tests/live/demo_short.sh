#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The shortened `make demo` (PS_DEMO_SECONDS=6, 256 MiB file) produces every output file and
# cleans up. Needs record, report and diff: fails (does not skip) when any is missing.
set -u
cd "${PS_SRCDIR:-.}"
out=$(mktemp -d /tmp/ps-demo.XXXXXX)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
O=$(dirname "$POOLSCOPE") PS_DEMO_SECONDS=6 PS_DEMO_SIZE=256M PS_DEMO_OUT=$out \
	PS_SMB_DIR=$out/smb timeout 300 tests/demo.sh || fail "demo exited $?"
for f in remote.db local.db remote-fault.db report-remote.txt report-local.txt report-remote-fault.txt \
	report-remote.json report-local.json report-remote-fault.json diff.txt \
	growth-remote.png growth-remote.svg growth-local.png diff.png diff.svg remote-load.txt local-load.txt \
	remote-fault-load.txt; do
	[ -s "$out/$f" ] || fail "$f missing or empty"
done
grep -q '^result:' "$out/remote-load.txt" || fail "no remote result"
ip netns list | grep -E 'psrv0|pscli0' && fail "namespaces left"
pgrep -f -- "$out/smb/etc/smb.conf" && fail "smbd left"
echo ok
