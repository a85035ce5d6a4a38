#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo: the mission on a built-in default. Starts the private Samba server in a network
# namespace pair, records kernel allocations while an 8 KiB QD16 random-read workload runs over
# SMB, then the same workload on the local file, and writes into demo-out/: both traces, the
# reports, the diff (local vs remote), the plots and the workload logs. Prints a short summary,
# cleans up the server and the namespaces. Needs root. Env: O (build dir), PS_DEMO_SECONDS
# (workload length, default 60), PS_DEMO_OUT (default demo-out), PS_DEMO_SIZE (test file, 1G).
set -u
cd "$(dirname "$0")/.."
O=${O:-.output}
P=$(cd "$O" && pwd)/poolscope
SECS=${PS_DEMO_SECONDS:-60}
OUT=${PS_DEMO_OUT:-demo-out}
SIZE=${PS_DEMO_SIZE:-1G}
export PS_SMB_DIR=${PS_SMB_DIR:-/tmp/poolscope-demo-smb}
export PS_PIN=$(cd "$O" && pwd)/tests/live/pspin
start=$(date +%s)

die() { echo "demo: $*" >&2; exit 1; }
cleanup() { tests/smbserver.sh stop >/dev/null 2>&1; }
trap cleanup EXIT
trap 'echo "demo: interrupted" >&2; exit 130' INT TERM

[ "$(id -u)" = 0 ] || die "must run as root (eBPF recording, namespaces, smbd)"
[ -x "$P" ] || die "$P missing: run make first"
for c in record report diff plot load; do
	"$P" help "$c" >/dev/null 2>&1 || die "this poolscope has no '$c' command ($P help $c failed)"
done
[[ "$SECS" =~ ^[0-9]+$ ]] && [ "$SECS" -ge 3 ] || die "PS_DEMO_SECONDS='$SECS': expected >= 3"
mkdir -p "$OUT" || die "cannot create $OUT"
rm -f "$OUT"/*.db "$OUT"/*.db-wal "$OUT"/*.db-shm

echo "demo: starting the private SMB server (network namespaces psrv0/pscli0, $SIZE test file)"
env=$(tests/smbserver.sh start --netns --size "$SIZE") || die "SMB server did not start"
eval "$env"
echo "demo: $PS_SMB_URL served from $PS_SMB_FILE (pinned in page cache)"

LOAD_ARGS=(--bs 8k --qd 16 --workers 2 --duration "$SECS" --random --read --quiet)
echo "demo: recording remote run: 8 KiB random reads, QD16 x 2 workers over SMB, ${SECS}s"
"$P" record -o "$OUT/remote.db" --force --label remote-8k-qd16 --duration $((SECS + 20)) -q -- \
	$PS_SMB_CLIENT_EXEC "$P" load "$PS_SMB_URL" --user "$PS_SMB_USER" "${LOAD_ARGS[@]}" \
	> "$OUT/remote-load.txt" 2> "$OUT/remote-record.log" || {
	tail -5 "$OUT/remote-record.log" "$OUT/remote-load.txt" >&2; die "remote recording failed"; }
echo "demo: recording local run: the same workload on $PS_SMB_FILE, ${SECS}s"
"$P" record -o "$OUT/local.db" --force --label local-8k-qd16 --duration $((SECS + 20)) -q -- \
	"$P" load "$PS_SMB_FILE" "${LOAD_ARGS[@]}" \
	> "$OUT/local-load.txt" 2> "$OUT/local-record.log" || {
	tail -5 "$OUT/local-record.log" "$OUT/local-load.txt" >&2; die "local recording failed"; }
tests/smbserver.sh stop

echo "demo: report, diff, plots"
"$P" report "$OUT/remote.db" > "$OUT/report-remote.txt" || die "report remote.db failed"
"$P" report "$OUT/local.db" > "$OUT/report-local.txt" || die "report local.db failed"
"$P" report "$OUT/remote.db" --format json > "$OUT/report-remote.json" || die "report --format json failed"
"$P" diff "$OUT/local.db" "$OUT/remote.db" > "$OUT/diff.txt" || die "diff failed"
"$P" plot "$OUT/remote.db" -o "$OUT/growth-remote.png" >/dev/null || die "plot remote failed"
"$P" plot "$OUT/remote.db" -o "$OUT/growth-remote.svg" >/dev/null || die "plot remote svg failed"
"$P" plot "$OUT/local.db" -o "$OUT/growth-local.png" >/dev/null || die "plot local failed"
"$P" plot "$OUT/local.db" "$OUT/remote.db" -o "$OUT/diff.png" >/dev/null || die "plot diff failed"
"$P" plot "$OUT/local.db" "$OUT/remote.db" -o "$OUT/diff.svg" >/dev/null || die "plot diff svg failed"

iops() { sed -n 's/^result:.* iops=\([0-9]*\).*/\1/p' "$1"; }
echo
echo "=== poolscope demo: 8 KiB random read, QD16 x 2 workers, ${SECS}s each"
printf '  remote (SMB over veth): %8s IOPS\n' "$(iops "$OUT/remote-load.txt")"
printf '  local  (page cache):    %8s IOPS\n' "$(iops "$OUT/local-load.txt")"
echo "--- diff local vs remote (head)"
head -15 "$OUT/diff.txt"
echo "--- files in $OUT/"
ls -1 "$OUT" | sed 's/^/  /'
echo "demo: done in $(( $(date +%s) - start ))s; server and namespaces cleaned up"
