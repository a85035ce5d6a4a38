#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Live: diff of a run without a leak (sleep) against one with the TCP leak must name a leaking
# network tag (tcp_sendmsg pages, TCP/skb caches), and the two recorded runs plot together
# (neither has workload rows). Fails (not skips) when record is missing.
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
# the two recorded runs on one plot, without workload rows: no IOPS axis, one line of output
"$POOLSCOPE" plot "$T/a.db" "$T/b.db" -o "$T/two.svg" >"$T/p.out" 2>&1 || { cat "$T/p.out"; echo "FAIL: plot of two runs"; exit 1; }
[ "$(wc -l < "$T/p.out")" = 1 ] && grep -q 'tracked live bytes' "$T/two.svg" && ! grep -q IOPS "$T/two.svg" ||
	{ cat "$T/p.out"; echo "FAIL: the two-run plot of recorded traces"; exit 1; }
echo "ok: the two recorded runs plot together"
