#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Live: diff of a run without a leak (sleep) against one with the TCP leak must name a leaking
# network tag (tcp_sendmsg pages, TCP/skb caches). Fails (not skips) when record is missing.
set -u
: "${POOLSCOPE:?POOLSCOPE not set}" "${PS_LIVE_BIN:?PS_LIVE_BIN not set}"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
if ! "$POOLSCOPE" help 2>&1 | grep -qw record; then
	echo "FAIL: $POOLSCOPE has no record command (merge the recorder branch)"; exit 1
fi
[ -x "$PS_LIVE_BIN/tcpleak" ] || { echo "FAIL: $PS_LIVE_BIN/tcpleak missing"; exit 1; }
timeout 60 "$POOLSCOPE" record -o "$T/a.db" --duration 4 >"$T/a.out" 2>&1 || { cat "$T/a.out"; echo "FAIL: record A"; exit 1; }
timeout 60 "$POOLSCOPE" record -o "$T/b.db" --duration 4 -- \
	"$PS_LIVE_BIN/tcpleak" 200 65536 20 >"$T/b.out" 2>&1 || { cat "$T/b.out"; echo "FAIL: record B"; exit 1; }
"$POOLSCOPE" diff "$T/a.db" "$T/b.db" >"$T/d.txt" || { echo "FAIL: diff"; exit 1; }
cat "$T/d.txt"
if sed -n '/^TAG/,/^$/p' "$T/d.txt" | grep -E 'tcp_sendmsg|^TCP |skbuff' | grep -q network; then
	echo "ok: diff names the leaking network tags"
else
	echo "FAIL: diff does not name tcp_sendmsg/TCP/skbuff tags as network"; exit 1
fi
