#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Live: record thousands of files held open and check that report names a
# file-services/filesystem tag as its top suspect. Fails (not skips) when record is missing.
set -u
: "${POOLSCOPE:?POOLSCOPE not set}" "${PS_LIVE_BIN:?PS_LIVE_BIN not set}"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
if ! "$POOLSCOPE" help 2>&1 | grep -qw record; then
	echo "FAIL: $POOLSCOPE has no record command (merge the recorder branch)"; exit 1
fi
[ -x "$PS_LIVE_BIN/fileleak" ] || { echo "FAIL: $PS_LIVE_BIN/fileleak missing"; exit 1; }
mkdir "$T/d"
timeout 60 "$POOLSCOPE" record -o "$T/run.db" --label fileleak --duration 4 -- \
	"$PS_LIVE_BIN/fileleak" 5000 20 "$T/d" >"$T/rec.out" 2>&1 || { cat "$T/rec.out"; echo "FAIL: record"; exit 1; }
"$POOLSCOPE" report "$T/run.db" --format csv --top 5 >"$T/r.csv" || { echo "FAIL: report"; exit 1; }
"$POOLSCOPE" report "$T/run.db" --top 5
top=$(sed -n 2p "$T/r.csv")
case "$top" in
*,file-services/filesystem,*) echo "ok: top suspect is file-services/filesystem: $top" ;;
*) echo "FAIL: top suspect not file-services/filesystem: $top"; exit 1 ;;
esac
