#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Live: record a loopback TCP leak (receivers never read) and check that report names a
# network tag as its top suspect. Fails (not skips) when record is missing.
set -u
: "${POOLSCOPE:?POOLSCOPE not set}" "${PS_LIVE_BIN:?PS_LIVE_BIN not set}"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
if ! "$POOLSCOPE" help 2>&1 | grep -qw record; then
	echo "FAIL: $POOLSCOPE has no record command (merge the recorder branch)"; exit 1
fi
[ -x "$PS_LIVE_BIN/tcpleak" ] || { echo "FAIL: $PS_LIVE_BIN/tcpleak missing"; exit 1; }
timeout 60 "$POOLSCOPE" record -o "$T/run.db" --label tcpleak \
	--duration 4 -- "$PS_LIVE_BIN/tcpleak" 200 65536 20 >"$T/rec.out" 2>&1 || { cat "$T/rec.out"; echo "FAIL: record"; exit 1; }
"$POOLSCOPE" report "$T/run.db" --format csv --top 5 >"$T/r.csv" || { echo "FAIL: report"; exit 1; }
"$POOLSCOPE" report "$T/run.db" --top 5
top=$(sed -n 2p "$T/r.csv")
case "$top" in
*,network,*|*,network/*) echo "ok: top suspect is network: $top" ;;
*) echo "FAIL: top suspect not network: $top"; exit 1 ;;
esac
