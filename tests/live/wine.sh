#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# poolscope-win.exe under Wine (Debian's wine64), for what Wine can do: the help and option
# errors with their exit codes; "sample" where the pool tag table is not available (Wine has no
# SystemPoolTagInformation: a clear error, exit 1, the output file not touched); "trace" on a
# Windows that is too old (Wine reports 6.1 by default) and on one without the pool group
# call (Wine set to Windows 10: TraceSetInformation is not implemented, error 120); a path
# outside the ANSI code page; and the sample writer on the Windows C runtime
# (tests/win/sample_restart.c: a run killed mid-snapshot, then a restart), its file read by
# poolscope convert. No root needed. About 20 s, most of it Wine creating its prefix.
set -u
PS=${POOLSCOPE:?POOLSCOPE not set}
O=$(dirname "$PS")
EXE=$O/win/poolscope-win.exe
SR=$O/win/tests/sample_restart.exe
WINE=$(command -v wine64 || echo /usr/lib/wine/wine64)
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$WINE" ] || fail "wine64 not found (make deps installs it)"
[ -f "$EXE" ] && [ -f "$SR" ] || fail "$EXE or $SR not built (make windows)"
tmp=$(mktemp -d)
trap '"${WINE%64}server" -k 2>/dev/null; rm -rf "$tmp"' EXIT
export WINEPREFIX=$tmp/prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" LC_ALL=C.UTF-8
# a Wine path for a file under $tmp (drive Z: is /)
wpath() { printf 'Z:%s' "${1//\//\\}"; }
# runs the .exe, stdout in $tmp/out, stderr in $tmp/err, the exit code in $rc
run() { "$WINE" "$@" > "$tmp/out" 2> "$tmp/err"; rc=$?; }
expect() {	# RC PATTERN(stdout+stderr) WHAT
	[ "$rc" = "$1" ] || fail "$3: exit $rc, expected $1: $(cat "$tmp/out" "$tmp/err")"
	grep -q -- "$2" "$tmp/out" "$tmp/err" || fail "$3: no '$2' in: $(cat "$tmp/out" "$tmp/err")"
}

# the prefix made first, and waited for: its first-run setup goes on in the background, and a
# program started while it does can fail to start at all (exit 1, nothing printed)
"$WINE" wineboot --init > /dev/null 2>&1 || fail "wineboot --init failed"
"${WINE%64}server" -w

run "$EXE" --help
expect 0 'usage: poolscope-win sample' "--help"
run "$EXE"
expect 2 'usage:' "no command"
run "$EXE" frobnicate
expect 2 "unknown command 'frobnicate'" "unknown command"
run "$EXE" trace --bogus
expect 2 "poolscope-win trace: option '--bogus' is unknown" "unknown trace option"
run "$EXE" sample -x
expect 2 "poolscope-win sample: option '-x' is unknown" "unknown sample option"
run "$EXE" trace -o x.etl --max-file-mb 3
expect 2 "bad --max-file-mb '3'" "--max-file-mb below the minimum"
run "$EXE" trace --tags 'A,B,C,D,E' -o x.etl
expect 2 "poolscope-win trace: --tags" "a fifth tag"
run "$EXE" trace --stop -o x.etl
expect 2 "--stop takes no other options" "--stop with -o"
run "$EXE" sample
expect 2 "-o FILE is required" "sample without -o"

# sample: no pool tag table here; a new file is not created, an existing one not touched
run "$EXE" sample -o "$(wpath "$tmp/new.tsv")" --duration 2
expect 1 "cannot read the pool tag table" "sample without the pool tag table"
[ -e "$tmp/new.tsv" ] && fail "sample created $tmp/new.tsv although it could not sample"
printf 'keep me\n' > "$tmp/old.tsv"
run "$EXE" sample -o "$(wpath "$tmp/old.tsv")" --duration 2
expect 1 "cannot read the pool tag table" "sample on an existing file"
[ "$(cat "$tmp/old.tsv")" = "keep me" ] || fail "sample changed a file it could not sample into"

# trace: Wine's default Windows 7 is too old; as Windows 10 the pool group call is missing
run "$EXE" trace -o "$(wpath "$tmp/t.etl")" --duration 1
expect 1 "unsupported Windows version 6.1" "trace on Windows 7"
grep -q "use 'sample' there" "$tmp/err" || fail "the Windows 7 refusal does not point to sample"
"$WINE" winecfg -v win10 > /dev/null 2>&1 || fail "winecfg -v win10 failed"
run "$EXE" trace -o "$(wpath "$tmp/t.etl")" --duration 1
expect 1 "TraceSystemTraceEnableFlagsInfo.*does not implement.*(error 120)" \
	"trace without the pool group call"
[ -e "$tmp/t.etl" ] && fail "a trace that could not start left $tmp/t.etl"
# a path outside the ANSI code page: resolved, checked and printed as given
u="$tmp/pööl-€.etl"
: > "$u"
run "$EXE" trace -o "$(wpath "$u")" --duration 1
expect 1 "pööl-€.etl exists" "an existing file with a non-ANSI name"

# the sample writer on the Windows C runtime: killed mid-snapshot, restarted; convert reads it
run "$SR" "$(wpath "$tmp/sr.tsv")"
[ "$rc" = 0 ] || fail "sample_restart.exe: exit $rc: $(cat "$tmp/err")"
[ "$(grep -c '^#poolscope-sample' "$tmp/sr.tsv")" = 1 ] || fail "header written twice: $(cat "$tmp/sr.tsv")"
[ "$(grep -c '^#restart ' "$tmp/sr.tsv")" = 2 ] || fail "not two restart lines: $(cat "$tmp/sr.tsv")"
"$PS" convert "$tmp/sr.tsv" -o "$tmp/sr.db" > "$tmp/conv" 2>&1 || fail "convert: $(cat "$tmp/conv")"
grep -q "2 snapshots, 1 tags" "$tmp/conv" || fail "convert: $(cat "$tmp/conv")"
grep -q "1 snapshots cut short" "$tmp/conv" || fail "the torn snapshot not reported: $(cat "$tmp/conv")"
j=$("$PS" report "$tmp/sr.db" --format json) || fail "report of the sample file"
jq -e '[.tags[] | select(.tag == "LSbf")][0] | .start_bytes == 7168 and .end_bytes == 17408' \
	<<< "$j" > /dev/null || fail "LSbf across the restart: $(jq -c '.tags' <<< "$j")"
echo "ok: help, option errors, sample and trace refusals, a non-ANSI path, the sample writer's restart"
