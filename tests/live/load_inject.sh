#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `poolscope load --inject` against the private Samba server (netns): what each fault does to the
# server, measured on the server, beside a run of the same workload without a fault.
#   - handle-leak (default N): smbd's processes hold one more descriptor per handle the fault
#     reports, the handles are IOs/N, they are all open on the fault's files in the share, and
#     all are gone (descriptors and files) once load exits; the trace keeps the fault in meta.
#   - net-stall: every stalled connection's answers sit in the server's send queue, the TCP
#     memory of the test's own sockets (ss, both namespaces) grows by at least half a MiB per
#     connection, and /proc/net/sockstat's TCP mem grows by at least half of that more than in
#     the run without the fault. sockstat is global: when the rest of the machine moves it by
#     more than a quarter of this test's own growth during a run, that comparison cannot tell,
#     and the pair of runs is made once more (the second time it must hold). All of it is gone
#     once load exits, smbd's processes included.
# Every expectation comes from the counts load reports (inject: lines), not from an IOPS this
# machine may not reach when it is busy.
set -u
cd "${PS_SRCDIR:-.}" || exit 1
export PS_SMB_DIR=$(mktemp -d /tmp/ps-loadinject.XXXXXX)
export PS_PIN=$PS_LIVE_BIN/pspin
d=$PS_SMB_DIR/t
mkdir -p "$d"
sampler=
trap '[ -n "$sampler" ] && kill "$sampler" 2>/dev/null; tests/smbserver.sh stop >/dev/null 2>&1;
	rm -rf "$PS_SMB_DIR"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
eval "$(tests/smbserver.sh start --size 256M)" || fail "server start"
[ "$PS_SMB_SERVER" = samba ] ||
	{ echo "skip: the checks read smbd's processes; the server is $PS_SMB_SERVER"; exit 77; }
port=$(sed -n 's/^[[:space:]]*smb ports = //p' "$PS_SMB_CONF")
port=${port:-445}
SECS=20
NS_EVERY=6000
fdscan=

# smbd's processes: the server and its children (one per connection)
smbd_pids() { echo "$PS_SMB_PID"; pgrep -P "$PS_SMB_PID" -x smbd; }
# over the sockets ss prints: Σ(r + w + f) of skmem in pages, Σw (send queues) in KiB, and
# how many send queues hold more than 64 KiB
skmem_sum() {
	awk '{ while (match($0, /skmem:\([^)]*\)/)) {
		s = substr($0, RSTART + 7, RLENGTH - 8); $0 = substr($0, RSTART + RLENGTH)
		n = split(s, f, ","); for (i = 1; i <= n; i++) v[substr(f[i], 1, 1)] = substr(f[i], 2) + 0
		m += v["r"] + v["w"] + v["f"]; w += v["w"]; big += v["w"] > 65536 } }
		END { printf "%d %d %d", m / 4096, w / 1024, big }'
}
# one line: secs sockstat_mem ours_pages srv_sendq_kib nsmbd smbd_fds leak_fds filp others_pages
# srv_full
# (ours: this test's sockets, both namespaces; others: every socket of the initial namespace,
# where the rest of the machine's tests run theirs). The descriptors are read only when
# $fdscan is set: thousands of readlinks a sample slow a busy machine's sampling down.
sample() {
	local t g srv cli pids fds="0 0" oth
	t=$(date +%s.%N)
	g=$(awk '/^TCP:/ { for (i = 1; i < NF; i++) if ($i == "mem") print $(i + 1) }' /proc/net/sockstat)
	srv=$($PS_SMB_SERVER_EXEC ss -Htnm "( sport = :$port )" | skmem_sum)
	cli=$($PS_SMB_CLIENT_EXEC ss -Htnm "( dport = :$port )" | skmem_sum)
	oth=$(ss -Htanm "not ( sport = :$port or dport = :$port )" | skmem_sum)
	pids=$(smbd_pids)
	# shellcheck disable=SC2046
	[ -n "$fdscan" ] && fds=$(find $(for p in $pids; do echo "/proc/$p/fd"; done) -mindepth 1 \
		-printf '%l\n' 2>/dev/null | awk '{ n++ } /\/\.poolscope-inject\// { l++ } END { print n + 0, l + 0 }')
	set -- $srv
	echo "$t $g $(( $1 + ${cli%% *} )) $2 $(wc -w <<< "$pids") $fds" \
		"$(awk '$1 == "filp" { print $2 }' /proc/slabinfo) ${oth%% *} $3"
}
sampler_run() { while :; do sample; sleep 0.5; done; }

# run NAME ARGS...: the workload with ARGS for SECS, sampled from before it starts until it
# has exited; $d/NAME.out (its stdout), .err, .samples, and .window: when its step began and
# ended (its summary line's time, read as it comes: a date(1) a line lagged by up to a second on
# a busy machine, past the point where load stops the faults, just after its result line)
run() {
	local name=$1 rc t0
	shift
	sampler_run > "$d/$name.samples" &
	sampler=$!
	# ahead of the workload's 64 busy processes: samples on time on a busy machine too
	renice -n -10 -p "$sampler" > /dev/null
	sleep 1.5
	t0=$(date +%s.%N)
	{ $PS_SMB_CLIENT_EXEC "$POOLSCOPE" load "$PS_SMB_URL" --user "$PS_SMB_USER" --qd 16 \
		--workers 2 --duration $SECS --quiet "$@" 2> "$d/$name.err"; echo "exit $?"; } |
		while IFS= read -r l; do echo "${EPOCHREALTIME/,/.} $l"; done > "$d/$name.timed"
	sleep 1
	kill "$sampler"; wait "$sampler" 2>/dev/null; sampler=
	cut -d' ' -f2- "$d/$name.timed" | grep -v '^exit ' > "$d/$name.out"
	rc=$(sed -n 's/^[^ ]* exit //p' "$d/$name.timed")
	[ "$rc" = 0 ] || { cat "$d/$name.err"; fail "$name: load exited $rc"; }
	echo "$t0 $(awk '$2 == "summary" && $3 == "step" { print $1; exit }' "$d/$name.timed")" \
		> "$d/$name.window"
	grep '^result:' "$d/$name.out"
	grep '^inject:' "$d/$name.out"
	return 0
}
# the value of KEY on the inject: line of run NAME
field() { sed -n "s/^inject: .* $2=\([^ ]*\).*/\1/p" "$d/$1.out"; }
# column C of the first or last sample of the step (its first 2 s left out: the workload
# connects); every figure of one run compared with another comes from the same two samples
edge() { # name col first|last
	read -r t0 t1 < "$d/$1.window"
	awk -v c="$2" -v a="$t0" -v b="$t1" '$1 >= a + 2 && $1 <= b { print $c }' "$d/$1.samples" |
		if [ "$3" = first ]; then head -n 1; else tail -n 1; fi
}
maxcol() { awk -v c="$2" '$c > m { m = $c } END { print m + 0 }' "$d/$1.samples"; }

# --- handle-leak, with the default N, and a trace ---------------------------------------------
fdscan=1
run base
hl_every=$("$POOLSCOPE" load -h | sed -n 's/^ *handle-leak  .*(N default \([0-9]*\))$/\1/p')
run hl --inject handle-leak --trace "$d/hl.db"
grep -q "^poolscope load: injecting faults: handle-leak (every $hl_every IOs" "$d/hl.err" ||
	fail "no start line naming handle-leak: $(head -1 "$d/hl.err")"
[ "$(field hl every)" = "$hl_every" ] || fail "every=$(field hl every), -h says $hl_every"
handles=$(field hl handles); ios=$(field hl ios)
[ "$(field hl failed)" = 0 ] || fail "handle-leak: $(field hl failed) opens failed: $(cat "$d/hl.err")"
[ "$(field hl files)" = 64 ] || fail "handle-leak: files=$(field hl files), expected 64"
# 16 lanes, each with a connection of its own, all connected before the workload's first IO
lanes=$(field hl lanes)
[ "$lanes" = 16 ] && [ "$(field hl conns)" -ge "$lanes" ] ||
	fail "handle-leak: lanes=$lanes conns=$(field hl conns), expected 16 lanes and a connection each"
# the handles follow the IOs (the fault keeps up): at least 90% of IOs/N
awk -v h="$handles" -v i="$ios" -v n="$hl_every" 'BEGIN { exit !(h >= 0.9 * int(i / n) && h <= int(i / n)) }' ||
	fail "handle-leak: $handles handles for $ios IOs, expected about $ios/$hl_every"
# smbd holds them: its descriptors on the fault's files reach the count load reports, less
# what the fault opened after the last sample: at most the longest gap between two samples
# (half a second, more when the machine is busy) and half a second more
leak_max=$(maxcol hl 7)
gap=$(awk 'NR > 1 && $1 - t > g { g = $1 - t } { t = $1 } END { print g }' "$d/hl.samples")
rate=$(awk -v h="$handles" -v s=$SECS 'BEGIN { print h / s }')
echo "handle-leak: $handles handles ($rate/s), smbd holds at most $leak_max on the fault's" \
	"files (samples at most $gap s apart)"
awk -v l="$leak_max" -v h="$handles" -v r="$rate" -v g="$gap" \
	'BEGIN { exit !(l <= h && l >= h - (g + 0.5) * r - 10) }' ||
	fail "smbd held at most $leak_max descriptors on the fault's files, load reports $handles"
# and nothing else grows: while the workload runs, smbd's other descriptors are the run
# without the fault's, plus the fault's connections' own (about 32 each)
base_fds=$(maxcol base 6)
read -r t0 t1 < "$d/hl.window"
other=$(awk -v a="$t0" -v b="$t1" '$1 >= a + 2 && $1 <= b && $6 - $7 > m { m = $6 - $7 }
	END { print m + 0 }' "$d/hl.samples")
echo "smbd descriptors: $base_fds without the fault; with it at most $(maxcol hl 6)," \
	"$other of them not on the fault's files"
[ "$other" -ge "$base_fds" ] && [ "$other" -le $((base_fds + $(field hl conns) * 64)) ] ||
	fail "smbd's descriptors besides the leaked handles: $other, expected $base_fds and the fault's connections"
printf 'filp objects over the run: %+d (global: not checked)\n' $(( $(edge hl 8 last) - $(edge hl 8 first) ))
# released: no descriptor left on the files, which are gone, and the trace says what ran
last=$(tail -1 "$d/hl.samples" | awk '{ print $7 }')
[ "$last" = 0 ] || fail "smbd still holds $last descriptors on the fault's files after load exited"
[ ! -e "$PS_SMB_DIR/share/.poolscope-inject" ] || fail "the fault's files are still in the share"
meta=$(sqlite3 "$d/hl.db" "select value from meta where key = 'workload.inject'")
[ "$meta" = "handle-leak:$hl_every" ] || fail "trace meta workload.inject '$meta'"

# --- net-stall ----------------------------------------------------------------------------------
fdscan=
# ours: this test's sockets (ss); global: sockstat; others: the initial namespace's sockets
delta() { echo $(( $(edge "$1" "$2" last) - $(edge "$1" "$2" first) )); }
stall_round() {
	run base2
	run ns --inject net-stall:$NS_EVERY
	conns=$(field ns conns); ios=$(field ns ios); sent=$(field ns sent)
	[ "$(field ns failed)" = 0 ] || fail "net-stall: $(field ns failed) connections failed: $(cat "$d/ns.err")"
	[ "$(field ns open)" = "$conns" ] || fail "net-stall: the server ended $((conns - $(field ns open))) connections"
	[ "$conns" -ge $((ios / NS_EVERY - 1)) ] && [ "$conns" -le $((ios / NS_EVERY)) ] ||
		fail "net-stall: $conns connections for $ios IOs, expected $ios/$NS_EVERY"
	[ "$conns" -ge 5 ] || fail "net-stall: only $conns connections in $SECS s"
	# 16000 ECHOs a connection, never more; the last ones may be cut short by the end, more of
	# them when the server is slow
	[ "$sent" -le $((conns * 16000)) ] && [ "$sent" -ge $((conns * 8000)) ] ||
		fail "net-stall: sent=$sent for $conns connections of 16000 ECHOs"
	ours=$(delta ns 3); ours_base=$(delta base2 3)
	glob=$(delta ns 2); glob_base=$(delta base2 2)
	others=$(delta ns 9); others_base=$(delta base2 9)
	sendq=$(edge ns 4 last); full=$(edge ns 10 last)
	echo "net-stall: $conns connections, $sent ECHOs; at the step's last sample $full server" \
		"send queues hold $sendq KiB, the test's sockets +$ours TCP pages (without the" \
		"fault: +$ours_base); sockstat mem +$glob (without: +$glob_base); other sockets" \
		"of the machine $others/$others_base"
	# the answers pile up on the server: most connections' send queues are full by the last
	# sample (a busy machine samples seconds apart), with at least 256 KiB each, and the
	# test's TCP memory grows by half a MiB a connection
	[ "$full" -ge $((conns / 2)) ] || fail "$full of $conns connections fill the server's send queue"
	[ "$sendq" -ge $((full * 256)) ] || fail "server send queues hold $sendq KiB for $full connections"
	[ "$ours" -ge $((full * 128 + ours_base)) ] ||
		fail "TCP memory of the test's sockets grew by $ours pages for $full connections"
}
stall_round
busy() { [ $((${others#-} * 4)) -gt "$ours" ] || [ $((${others_base#-} * 4)) -gt "$ours" ]; }
if busy; then
	echo "sockets outside this test moved TCP memory during a run: once more"
	stall_round
	busy && fail "TCP memory of sockets outside this test moved by $others and $others_base" \
		"pages (more than a quarter of the test's own $ours) twice: sockstat cannot be compared"
fi
[ $((glob - glob_base)) -ge $((ours / 2)) ] ||
	fail "sockstat TCP mem grew by $glob pages with the fault, $glob_base without: less than half of $ours"
# released when load exits: the test's sockets hold nothing, smbd has no process left over
end=$(tail -1 "$d/ns.samples")
[ "$(awk '{ print $3 }' <<< "$end")" -le 64 ] || fail "TCP memory left after load: $end"
for _ in $(seq 20); do [ "$(smbd_pids | wc -l)" = 1 ] && break; sleep 0.5; done
[ "$(smbd_pids | wc -l)" = 1 ] || fail "smbd processes left after load: $(smbd_pids | tr '\n' ' ')"
echo "ok"
