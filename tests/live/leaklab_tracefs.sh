#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Live: the short leak lab's scenarios without noise (tcp_unread_fast, file_handles, pagecache;
# tests/live/leaklab_short.sh runs them with the BPF recorder) recorded with the tracefs backend
# (PS_LEAKLAB_RECORD_ARGS="--backend tracefs"): every verdict must be what it is with BPF, a
# leak on its path with a plausible first suspect and the negative not a leak; each trace must
# say it came from tracefs. Skips (77) without root. About 2 minutes.
set -u
: "${POOLSCOPE:?POOLSCOPE not set}"
cd "${PS_SRCDIR:-.}"
export O=${POOLSCOPE%/poolscope}
T=$(mktemp -d /var/tmp/ps-leaklab-tfs.XXXXXX) || exit 1
trap '[ -n "${PS_KEEP:-}" ] || rm -rf "$T"' EXIT
PS_LEAKLAB_OUT=$T/out PS_LEAKLAB_NOISE=0 PS_LEAKLAB_ONLY="tcp_unread_fast file_handles pagecache" \
	PS_LEAKLAB_SECS=30 PS_LEAKLAB_RECORD_ARGS="--backend tracefs" tests/leaklab/run.sh
rc=$?
[ $rc = 77 ] && exit 77
n=$(awk -F'\t' '$8 == "ok"' "$T/out/results.tsv" 2>/dev/null | wc -l)
[ $rc = 0 ] && [ "$n" = 3 ] || { echo "FAIL: the lab with tracefs exited $rc, $n of 3 verdicts right"; exit 1; }
for db in "$T"/out/*.db; do
	b=$(sqlite3 "$db" "SELECT value FROM meta WHERE key = 'backend'")
	[ "$b" = tracefs ] || { echo "FAIL: $db recorded by '$b', not tracefs"; exit 1; }
done
echo "ok: 3 verdicts right with the tracefs backend"
