#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Live: record a loopback TCP leak (receivers never read) and check that report names a
# network tag as its top suspect. Fails (not skips) when record is missing.
# The leak lab's noise generator (page-cache reads, process churn) runs the whole time: a server
# is never idle, and the answer must not change.
set -u
: "${POOLSCOPE:?POOLSCOPE not set}" "${PS_LIVE_BIN:?PS_LIVE_BIN not set}"
. "$(dirname "$0")/lib/noise.sh"
T=$(mktemp -d)
trap 'noise_stop; rm -rf "$T"' EXIT
noise_start "$T" 90 || exit 1
if ! "$POOLSCOPE" help 2>&1 | grep -qw record; then
	echo "FAIL: $POOLSCOPE has no record command (merge the recorder branch)"; exit 1
fi
[ -x "$PS_LIVE_BIN/tcpleak" ] || { echo "FAIL: $PS_LIVE_BIN/tcpleak missing"; exit 1; }
timeout 60 "$POOLSCOPE" record -o "$T/run.db" --label tcpleak \
	--duration 4 -- "$PS_LIVE_BIN/tcpleak" 200 65536 20 >"$T/rec.out" 2>&1 || { cat "$T/rec.out"; echo "FAIL: record"; exit 1; }
"$POOLSCOPE" report "$T/run.db" --format csv --top 5 >"$T/r.csv" || { echo "FAIL: report"; exit 1; }
"$POOLSCOPE" report "$T/run.db" --format json >"$T/r.json" || { echo "FAIL: report json"; exit 1; }
"$POOLSCOPE" report "$T/run.db" --top 5
# the first suspect (kernel memory ranks first) and the verdict's path; a 4 s window is too short
# for "leak", but the growth is there and on its path
top=$(sed -n 2p "$T/r.csv")
case "$top" in
*,network,*|*,network/*) echo "ok: top suspect is network: $top" ;;
*) echo "FAIL: top suspect not network: $top"; exit 1 ;;
esac
path=$(jq -r '.verdict.path // "none"' "$T/r.json")
state=$(jq -r .verdict.state "$T/r.json")
case "$path" in
network|network/*) echo "ok: verdict $state on $path" ;;
*) echo "FAIL: verdict $state on $path, expected network"; exit 1 ;;
esac
