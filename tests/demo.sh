#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo: the mission on a built-in default. Starts the private Samba server in a network
# namespace pair, records kernel allocations while an 8 KiB QD16 random-read workload runs over
# SMB, then the same workload on the local file, then over SMB again with a fault injected (the
# client opens a handle every 30 IOs and never closes it, so smbd piles up open files), and
# writes into demo-out/: the three traces, the reports, the diff (local vs remote), the plots and
# the workload logs. Prints the three verdicts (expected: stable or plateau, stable or plateau,
# LEAK on the file-services path) and exits 1 when one is not what it should be (only from
# 30 s runs on: a shorter window is never called a leak). Cleans up the server and the
# namespaces. Needs root. Env: O (build dir), PS_DEMO_SECONDS
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
command -v jq >/dev/null || die "jq missing: run make deps (or apt-get install jq)"
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
echo "demo: recording remote run with a fault: --inject handle-leak (a handle never closed every 30 IOs), ${SECS}s"
"$P" record -o "$OUT/remote-fault.db" --force --label remote-handle-leak --duration $((SECS + 20)) -q -- \
	$PS_SMB_CLIENT_EXEC "$P" load "$PS_SMB_URL" --user "$PS_SMB_USER" "${LOAD_ARGS[@]}" \
	--inject handle-leak > "$OUT/remote-fault-load.txt" 2> "$OUT/remote-fault-record.log" || {
	tail -5 "$OUT/remote-fault-record.log" "$OUT/remote-fault-load.txt" >&2
	die "remote recording with a fault failed"; }
tests/smbserver.sh stop

echo "demo: report, diff, plots"
"$P" report "$OUT/remote-fault.db" > "$OUT/report-remote-fault.txt" || die "report remote-fault.db failed"
for r in remote local remote-fault; do
	"$P" report "$OUT/$r.db" --format json > "$OUT/report-$r.json" || die "report $r.db --format json failed"
done
"$P" report "$OUT/remote.db" > "$OUT/report-remote.txt" || die "report remote.db failed"
"$P" report "$OUT/local.db" > "$OUT/report-local.txt" || die "report local.db failed"
"$P" diff "$OUT/local.db" "$OUT/remote.db" > "$OUT/diff.txt" || die "diff failed"
"$P" plot "$OUT/remote.db" -o "$OUT/growth-remote.png" >/dev/null || die "plot remote failed"
"$P" plot "$OUT/remote.db" -o "$OUT/growth-remote.svg" >/dev/null || die "plot remote svg failed"
"$P" plot "$OUT/local.db" -o "$OUT/growth-local.png" >/dev/null || die "plot local failed"
"$P" plot "$OUT/local.db" "$OUT/remote.db" -o "$OUT/diff.png" >/dev/null || die "plot diff failed"
"$P" plot "$OUT/local.db" "$OUT/remote.db" -o "$OUT/diff.svg" >/dev/null || die "plot diff svg failed"

iops() { sed -n 's/^result:.* iops=\([0-9]*\).*/\1/p' "$1"; }
# verdict RUN: "state path" from the report's JSON
verdict() { jq -r '.verdict.state + " " + (.verdict.path // "-")' "$OUT/report-$1.json"; }
echo
echo "=== poolscope demo: 8 KiB random read, QD16 x 2 workers, ${SECS}s each"
printf '  remote (SMB over veth):  %8s IOPS\n' "$(iops "$OUT/remote-load.txt")"
printf '  local  (page cache):     %8s IOPS\n' "$(iops "$OUT/local-load.txt")"
printf '  remote with handle-leak: %8s IOPS\n' "$(iops "$OUT/remote-fault-load.txt")"
echo "--- the verdicts (unreclaimable kernel memory)"
bad=0
for r in remote local remote-fault; do
	read -r st path <<< "$(verdict "$r")"
	case $r in
	remote-fault) want="leak on file-services"; ok=0
		[ "$st" = leak ] && [[ $path == file-services* ]] && ok=1 ;;
	*) want="stable or plateau"; ok=0
		[ "$st" = stable ] || [ "$st" = plateau ] && ok=1 ;;
	esac
	if [ "$SECS" -lt 30 ]; then
		mark="(not judged: under 30 s a window is never called a leak)"
	elif [ $ok = 1 ]; then
		mark="as expected"
	else
		mark="WRONG: expected $want"; bad=1
	fi
	printf '  %-13s %s\n' "$r:" "$mark"
	jq -r .verdict.summary "$OUT/report-$r.json" | fold -s -w 72 | sed 's/^/    /'
done
echo "--- diff local vs remote (head)"
head -15 "$OUT/diff.txt"
echo "--- files in $OUT/"
ls -1 "$OUT" | sed 's/^/  /'
echo "demo: done in $(( $(date +%s) - start ))s; server and namespaces cleaned up"
[ $bad = 0 ] || die "a verdict is not what the runs should give (see above)"
