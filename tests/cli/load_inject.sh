#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `poolscope load --inject KIND[:N]` up to the point where it would start: every malformed value
# (of --rate too) gives one line on stderr naming the option and what was expected, nothing on
# stdout, exit 2; a fault given twice and faults on a local target are refused the same way
# (before the file is opened); -h lists the option with the kinds and their defaults; and the
# line announcing the faults comes before anything else, --quiet or not (here on a loopback port
# nothing listens on, so the run fails right after it). No root; the live test
# (tests/live/load_inject.sh) checks what the faults do to a server.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
. tests/cli/lib/fixtures.sh cliinject
failed=0
url=smb://127.0.0.1:1/share/test.bin

# fails NAME RC MESSAGE ARGS...: poolscope load ARGS exits RC, prints nothing on stdout and
# exactly MESSAGE (one line) on stderr.
fails() {
	local name=$1 want_rc=$2 want=$3 rc out err
	shift 3
	out=$(cd "$d" && "$POOLSCOPE" load "$@" 2>"$d/err")
	rc=$?
	err=$(cat "$d/err")
	if [ "$rc" != "$want_rc" ] || [ -n "$out" ] || [ "$err" != "$want" ]; then
		echo "FAIL $name: poolscope load $*: exit $rc (want $want_rc)"
		echo "     stderr: $err"
		echo "     want:   $want"
		[ -n "$out" ] && echo "     stdout: $(head -3 <<< "$out")"
		failed=1
	else
		echo "ok $name"
	fi
}

kinds="expected KIND[:N], KIND one of handle-leak, net-stall"
range() { echo "expected $1:N, N the IOs between two faults, 1..1000000000"; }
E="poolscope load: --inject"
fails unknown 2 "$E 'bogus': $kinds" "$url" --inject bogus
fails empty 2 "$E '': $kinds" "$url" --inject ''
fails prefix 2 "$E 'handle': $kinds" "$url" --inject handle
fails case 2 "$E 'Handle-Leak': $kinds" "$url" --inject Handle-Leak
fails zero 2 "$E 'handle-leak:0': $(range handle-leak)" "$url" --inject handle-leak:0
fails no-number 2 "$E 'handle-leak:': $(range handle-leak)" "$url" --inject handle-leak:
fails not-number 2 "$E 'net-stall:x': $(range net-stall)" "$url" --inject net-stall:x
fails negative 2 "$E 'net-stall:-5': $(range net-stall)" "$url" --inject net-stall:-5
fails plus 2 "$E 'net-stall:+5': $(range net-stall)" "$url" --inject net-stall:+5
fails trailing 2 "$E 'net-stall:5k': $(range net-stall)" "$url" --inject net-stall:5k
fails two-colons 2 "$E 'handle-leak:5:6': $(range handle-leak)" "$url" --inject handle-leak:5:6
fails too-big 2 "$E 'handle-leak:1000000001': $(range handle-leak)" "$url" --inject handle-leak:1000000001
fails overflow 2 "$E 'handle-leak:99999999999999999999': $(range handle-leak)" "$url" \
	--inject handle-leak:99999999999999999999
fails twice 2 "$E 'handle-leak:5': handle-leak is already on (give each fault once)" "$url" \
	--inject handle-leak --inject handle-leak:5
fails twice-other-order 2 "$E 'net-stall': net-stall is already on (give each fault once)" \
	"$url" --inject net-stall:9 --inject handle-leak --inject net-stall
smbonly="only for smb:// targets (the fault is on the SMB server)"
printf 'not touched\n' > "$d/local.bin"
touch -d @1000000000 "$d/local.bin"
fails local-handle-leak 2 "$E 'handle-leak': $smbonly" "$d/local.bin" --inject handle-leak
fails local-net-stall 2 "$E 'net-stall': $smbonly" "$d/local.bin" --inject net-stall:10
fails local-missing 2 "$E 'handle-leak': $smbonly" "$d/missing.bin" --inject handle-leak
# --rate, refused before anything starts
R="poolscope load: --rate"
rr="expected IOs a second, 1..100000000"
fails rate-zero 2 "$R '0': $rr" "$url" --rate 0
fails rate-word 2 "$R 'fast': $rr" "$url" --rate fast
fails rate-negative 2 "$R '-5': $rr" "$url" --rate -5
fails rate-huge 2 "$R '100000001': $rr" "$url" --rate 100000001
fails rate-unit 2 "$R '10k': $rr" "$url" --rate 10k
if [ "$(stat -c %X.%Y "$d/local.bin")" = 1000000000.1000000000 ]; then
	echo "ok local-untouched"
else
	echo "FAIL local-untouched: the refused run opened $d/local.bin"
	failed=1
fi

# -h: the option and its kinds with their defaults, the ones a run uses
help=$("$POOLSCOPE" load -h)
hl=$(sed -n 's/^ *handle-leak  .*(N default \([0-9]*\))$/\1/p' <<< "$help")
ns=$(sed -n 's/^ *net-stall  .*(N default \([0-9]*\))$/\1/p' <<< "$help")
if grep -q -- '^ *--inject KIND\[:N\]$' <<< "$help" && [ -n "$hl" ] && [ -n "$ns" ]; then
	echo "ok help"
else
	echo "FAIL help: 'poolscope load -h' does not describe --inject and both kinds"
	failed=1
fi

# the announcement comes first, with --quiet too, then the run's own error
for q in "" --quiet; do
	name=announce${q:+-quiet}
	out=$("$POOLSCOPE" load "$url" --user u%p --timeout 2s $q --inject net-stall \
		--inject handle-leak 2>"$d/err")
	rc=$?
	first=$(head -1 "$d/err")
	want="poolscope load: injecting faults: net-stall (every ${ns:-?} IOs, "
	if [ "$rc" = 1 ] && [ -z "$out" ] && [[ "$first" == "$want"* ]] &&
	   [[ "$first" == *"; handle-leak (every ${hl:-?} IOs, "*"held until load exits" ]] &&
	   [ "$(wc -l < "$d/err")" = 2 ] && grep -q "connection refused" "$d/err"; then
		echo "ok $name"
	else
		echo "FAIL $name: exit $rc, stdout '$out', stderr:"
		sed 's/^/     /' "$d/err"
		failed=1
	fi
done
exit $failed
