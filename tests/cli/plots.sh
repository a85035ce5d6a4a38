#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# plot as a user reads it, on the fixture traces with the real gnuplot (SVG, whose tick labels
# and legend are text): --by path stacks the paths of the kernel's memory and the two other
# domains; the title carries the report's verdict; two runs without workload rows plot, with no
# IOPS axis; the x axis ends at the data; a shrinking unreclaimable total keeps its negative
# part in sight; IOPS ticks are plain numbers; every failure is one line of poolscope's own.
# The live analysis test plots --by path of a recorded trace. No root.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
. tests/cli/lib/fixtures.sh cliplots
failed=0
ok() { echo "ok $1${2:+ $2}"; }
bad() { echo "FAIL $1: $2"; failed=1; }
command -v gnuplot > /dev/null || { echo "FAIL gnuplot not found (make deps installs gnuplot-nox)"; exit 1; }

# "axis value" per tick label of an SVG gnuplot wrote: x (anchored middle), y (end), y2 (start)
ticks() {
	python3 - "$1" <<'PY'
import re, sys
svg = open(sys.argv[1]).read()
for m in re.finditer(r'text-anchor="(middle|end|start)">\s*<text><tspan[^>]*>([^<]*)</tspan>', svg):
    v = m.group(2).strip()
    if re.fullmatch(r'-?[0-9.]+(e[+-]?[0-9]+)?', v):
        print({"middle": "x", "end": "y", "start": "y2"}[m.group(1)], v)
PY
}

p=$d/path.svg
if "$POOLSCOPE" plot "$d/linux.db" --by path -o "$p" > /dev/null 2> "$d/err"; then
	miss=
	for s in "path file-services (kernel)" "reclaimable (page cache, reclaimable slabs)" \
		 "process memory" "SUnreclaim growth (meminfo)" "kernel memory by path"; do
		grep -qF -- "$s" "$p" || miss="$miss '$s'"
	done
	[ -z "$miss" ] && ok by-path || bad by-path "the SVG lacks$miss"
	# the kernel's paths are those the report's path table lists
	want=$("$POOLSCOPE" report "$d/linux.db" --by path --format csv | tail -n +2 | cut -d, -f1 | sort | paste -sd' ')
	got=$(grep -o '<title>path [^ <]* (kernel)' "$p" | sed 's/<title>path //; s/ (kernel)//' | sort | paste -sd' ')
	[ "$got" = "$want" ] && ok by-path-paths || bad by-path-paths "plot '$got', report '$want'"
else bad by-path "$(cat "$d/err")"; fi

# the verdict in the title: the report's state and path
state=$("$POOLSCOPE" report "$d/linux.db" --format json | jq -r '.verdict.state + " on " + (.verdict.path | split("/")[0])')
"$POOLSCOPE" plot "$d/linux.db" -o "$d/v.svg" > /dev/null 2>&1
if grep -q "verdict: $state" "$d/v.svg"; then ok title-verdict
else bad title-verdict "no 'verdict: $state' in the title: $(grep -o '<title>[^<]*verdict[^<]*' "$d/v.svg")"; fi

# two runs without workload rows: a plot, no IOPS axis
for t in local linux; do
	cp "$d/$t.db" "$d/$t-nowl.db" && sqlite3 "$d/$t-nowl.db" "DELETE FROM workload"
done
if "$POOLSCOPE" plot "$d/local-nowl.db" "$d/linux-nowl.db" -o "$d/two.svg" > /dev/null 2> "$d/err" &&
   [ ! -s "$d/err" ]; then
	if grep -q 'IOPS' "$d/two.svg"; then bad two-runs-no-workload "an IOPS axis without workload rows"
	else ok two-runs-no-workload; fi
else bad two-runs-no-workload "$(cat "$d/err")"; fi
"$POOLSCOPE" plot "$d/local.db" "$d/linux.db" -o "$d/two-wl.svg" > /dev/null 2>&1
y2=$(ticks "$d/two-wl.svg" | awk '$1 == "y2" { print $2 }' | paste -sd' ')
if [ -n "$y2" ] && ! grep -q '[xe^]' <<< "$y2"; then ok iops-plain-ticks "($y2)"
else bad iops-plain-ticks "IOPS ticks '$y2'"; fi

# the x axis ends at the data: a trace of 20.9 s has no tick at 25
cp "$d/linux.db" "$d/short.db" && sqlite3 "$d/short.db" "UPDATE intervals SET t_ns = t_ns * 7 / 10"
"$POOLSCOPE" plot "$d/short.db" -o "$d/short.svg" > /dev/null 2>&1
xt=$(ticks "$d/short.svg" | awk '$1 == "x" { print $2 }' | paste -sd' ')
if grep -qw 20 <<< "$xt" && ! grep -qw 25 <<< "$xt"; then ok x-axis-ends-at-data "($xt)"
else bad x-axis-ends-at-data "x ticks '$xt' for data ending at 20.9 s"; fi

# a shrinking SUnreclaim stays in sight: negative y ticks, and none when it only grows
cp "$d/linux.db" "$d/shrink.db" && sqlite3 "$d/shrink.db" "UPDATE sysstat SET value =
	(SELECT value FROM sysstat s0 WHERE s0.name = 'SUnreclaim' AND s0.interval = 0) - (value -
	(SELECT value FROM sysstat s0 WHERE s0.name = 'SUnreclaim' AND s0.interval = 0)) / 2
	WHERE name = 'SUnreclaim'"
"$POOLSCOPE" plot "$d/shrink.db" -o "$d/shrink.svg" > /dev/null 2>&1
neg=$(ticks "$d/shrink.svg" | awk '$1 == "y" && $2 < 0' | wc -l)
pos=$(ticks "$d/v.svg" | awk '$1 == "y" && $2 < 0' | wc -l)
if [ "$neg" -gt 0 ] && [ "$pos" = 0 ]; then ok negative-growth-visible
else bad negative-growth-visible "$neg negative y ticks when SUnreclaim shrinks, $pos when it grows"; fi

# failures: one line, ours
one_line() { # name, expected exit, message pattern, command...
	local name=$1 rc=$2 pat=$3 out got
	shift 3
	out=$("$@" 2>&1 > /dev/null); got=$?
	if [ "$got" = "$rc" ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] &&
	   grep -q "^poolscope plot: .*$pat" <<< "$out"; then ok "$name"
	else bad "$name" "exit $got, '$out'"; fi
}
one_line no-such-dir 1 "/nonexistent/x.png: No such file or directory" \
	"$POOLSCOPE" plot "$d/linux.db" -o /nonexistent/x.png
mkdir -p "$d/broken/plots" && printf 'set output out\nplot undefined_function(1)\n' > "$d/broken/plots/growth.gp"
one_line gnuplot-error 1 "gnuplot failed (exit 1): .*undefined" \
	env POOLSCOPE_PLOTS="$d/broken" "$POOLSCOPE" plot "$d/linux.db" -o "$d/b.png"
[ -e "$d/b.png" ] && bad gnuplot-error-output "a failed plot left $d/b.png"
# a quote in the output's name: the file named, not another
mkdir "$d/q" && "$POOLSCOPE" plot "$d/linux.db" -o "$d/q/it's.png" > /dev/null 2> "$d/err"
if [ -s "$d/q/it's.png" ] && [ "$(ls "$d/q" | wc -l)" = 1 ]; then ok quote-in-name
else bad quote-in-name "$(ls "$d/q") $(cat "$d/err")"; fi
one_line two-by-path 2 "--by path plots one trace" \
	"$POOLSCOPE" plot "$d/local.db" "$d/linux.db" --by path -o "$d/c.png"
exit $failed
