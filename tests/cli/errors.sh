#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# CLI errors of report, diff and export: each prints one clear line on stderr (usage text for a
# missing argument), nothing on stdout, and exits 1 for a failure or 2 for a usage error
# (userspace/poolscope.h). Runs on the fixtures of $O/tests/mkfixtures (missing, text,
# foreign SQLite and interval-less files). No root; tests/run.sh runs it in the unit part.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
. tests/cli/lib/fixtures.sh clierr
printf 'network frame tcp_* -\nnetwork sites tcp_*\n' > "$d/bad.rules"
failed=0

# fails NAME RC MESSAGE ARGS...: poolscope ARGS (run in the fixture directory) exits RC, prints
# nothing on stdout and exactly MESSAGE (one line) on stderr.
fails() {
	local name=$1 want_rc=$2 want=$3 rc out err
	shift 3
	out=$(cd "$d" && "$POOLSCOPE" "$@" 2>"$d/err")
	rc=$?
	err=$(cat "$d/err")
	if [ "$rc" != "$want_rc" ] || [ -n "$out" ] || [ "$err" != "$want" ]; then
		echo "FAIL $name: poolscope $*: exit $rc (want $want_rc)"
		echo "     stderr: $err"
		echo "     want:   $want"
		[ -n "$out" ] && echo "     stdout: $(head -3 <<< "$out")"
		failed=1
	else
		echo "ok $name"
	fi
}
# usage NAME ARGS...: exit 2, stdout empty, the command's usage line first on stderr
usage() {
	local name=$1 rc out
	shift
	out=$(cd "$d" && "$POOLSCOPE" "$@" 2>"$d/err")
	rc=$?
	if [ "$rc" = 2 ] && [ -z "$out" ] && head -1 "$d/err" | grep -q "^usage: poolscope $1 "; then
		echo "ok usage-$name"
	else
		echo "FAIL usage-$name: poolscope $*: exit $rc, stderr: $(head -1 "$d/err")"
		failed=1
	fi
}

notsql='offset 0: expected the SQLite header "SQLite format 3"'
notours='application_id 0x0, expected 0x50534350'
noint='no intervals (the recording ended before the first one)'

fails report-missing 1 "poolscope report: missing.db: No such file or directory" report missing.db
fails report-text 1 "poolscope report: notatrace.db: not a poolscope trace ($notsql)" report notatrace.db
fails report-foreign 1 "poolscope report: foreign.db: not a poolscope trace ($notours)" report foreign.db
fails report-empty 1 "poolscope report: empty.db: $noint" report empty.db
fails report-format 2 "poolscope report: --format: expected text, csv, json or markdown, got 'xml'" \
	report linux.db --format xml
fails report-top-neg 2 "poolscope report: --top: expected a number >= 0, got '-1'" report linux.db --top -1
fails report-top-word 2 "poolscope report: --top: expected a number >= 0, got 'ten'" report linux.db --top ten
fails report-top-empty 2 "poolscope report: --top: expected a number >= 0, got ''" report linux.db --top ''
fails report-domain 2 "poolscope report: --domain: expected kernel, reclaimable, user or all, got 'disk'" report linux.db --domain disk
fails report-by 2 "poolscope report: --by: expected tag, path or cache, got 'size'" report linux.db --by size
fails report-from-word 2 "poolscope report: --from: expected a duration (10s, 500ms), got 'soon'" \
	report linux.db --from soon
fails report-from-after-to 1 "poolscope report: linux.db: --from is after --to" \
	report linux.db --from 20s --to 10s
fails report-from-after-end 1 "poolscope report: linux.db: --from is after the end of the trace (30.000 s)" \
	report linux.db --from 31s
fails report-rules-missing 1 "poolscope report: missing.rules: No such file or directory" \
	report linux.db --rules missing.rules
fails report-rules-bad 1 "poolscope report: bad.rules:2: unknown field 'sites' (expected frame, site, src, cache, owner, comm or ctx)" \
	report linux.db --rules bad.rules
usage report report
usage report report linux.db local.db

fails diff-missing 1 "poolscope diff: missing.db: No such file or directory" diff local.db missing.db
fails diff-foreign 1 "poolscope diff: foreign.db: not a poolscope trace ($notours)" diff foreign.db linux.db
fails diff-empty 1 "poolscope diff: empty.db: $noint" diff linux.db empty.db
fails diff-top 2 "poolscope diff: --top: expected a number >= 0, got 'x'" diff local.db linux.db --top x
usage diff diff linux.db

fails export-missing 1 "poolscope export: missing.db: No such file or directory" export missing.db --folded
fails export-text 1 "poolscope export: notatrace.db: not a poolscope trace ($notsql)" \
	export notatrace.db --csv timeline
fails export-csv-kind 2 "poolscope export: --csv: expected 'timeline', got 'tags'" export linux.db --csv tags
fails export-both 2 "poolscope export: --folded, --csv and --pprof exclude each other" \
	export linux.db --folded --csv timeline
usage export export linux.db

fails unknown-command 2 "poolscope: unknown command 'reprot' (see 'poolscope help')" reprot linux.db

# help takes -h as its own option: the command list on stdout, exit 0
for h in -h --help; do
	out=$("$POOLSCOPE" help $h 2>&1)
	[ $? = 0 ] && grep -q '^usage: poolscope COMMAND' <<< "$out" && echo "ok help$h" \
		|| { echo "FAIL help$h: $out"; failed=1; }
done

# A trace without intervals is not an error for export: it has nothing to export.
out=$(cd "$d" && "$POOLSCOPE" export empty.db --csv timeline 2>&1)
[ $? = 0 ] && [ "$out" = "$("$POOLSCOPE" export "$d/linux.db" --csv timeline | head -1)" ] && echo "ok export-empty" \
	|| { echo "FAIL export-empty: $out"; failed=1; }
exit $failed
