#!/usr/bin/env bash
# poolscope test runner: unit tests and CLI tests (normal and ASan/UBSan builds, no root) and
# live tests (root, BTF).
#   tests/run.sh [--unit|--live] [FILTER]
# The unit part runs tests/unit/*_test binaries and tests/cli/*.sh (the real CLI on fixture
# traces: golden outputs, error cases) once per build; the live part runs tests/live/*.sh.
# Prints one line per test and ends with "N passed, N failed, N skipped".
set -u
O=${O:-.output}
mode=all
case "${1:-}" in --unit) mode=unit; shift;; --live) mode=live; shift;; esac
filter=${1:-}
export PS_SRCDIR=$(pwd)
pass=0 fail=0 skip=0
failed_names=()

# The unit part's commands run PS_TEST_JOBS at a time (default: one per CPU; they need no root
# and each works in a temporary directory of its own). Their lines are printed in the order the
# commands were started, each command's as soon as it and the ones before it are done.
njobs=${PS_TEST_JOBS:-$(nproc)}
case $njobs in ''|*[!0-9]*|0) echo "tests/run.sh: PS_TEST_JOBS=$njobs: expected a count of 1 or more"; exit 2;; esac
ud=$(mktemp -d) || { echo "tests/run.sh: no temporary directory for the unit part"; exit 2; }
trap 'rm -rf "$ud"' EXIT
labels=()
started=0 shown=0

# Counts the output of one command, which prints "ok NAME", "FAIL NAME: why" or "skip NAME: why"
# per test; exit 77 without such lines = the whole command skipped.
tally() { # $1 = label, $2 = its output, $3 = its exit status
	local label=$1 out=$2 rc=$3 line seen=0
	if [ "$rc" = 77 ] && ! grep -q '^\(ok\|FAIL\) ' <<< "$out"; then
		skip=$((skip+1)); echo "skip $label: $(grep -i 'skip' <<< "$out" | tail -1)"
		return
	fi
	while IFS= read -r line; do
		case "$line" in
		"ok "*) pass=$((pass+1)); seen=1; echo "ok   $label/${line#ok }";;
		"FAIL "*) fail=$((fail+1)); seen=1; echo "FAIL $label/${line#FAIL }"; failed_names+=("$label/${line#FAIL }");;
		"skip "*) skip=$((skip+1)); seen=1; echo "skip $label/${line#skip }";;
		*) echo "     $line";;
		esac
	done <<< "$out"
	if [ $seen = 0 ] || { [ "$rc" != 0 ] && ! grep -q '^FAIL ' <<< "$out"; }; then
		fail=$((fail+1)); echo "FAIL $label: binary exited $rc"; failed_names+=("$label")
	fi
}

# Prints the finished commands in the order they were started, up to the first still running.
show_done() {
	while [ $shown -lt $started ] && [ -e "$ud/$shown.rc" ]; do
		tally "${labels[$shown]}" "$(cat "$ud/$shown.out")" "$(cat "$ud/$shown.rc")"
		shown=$((shown+1))
	done
}

# Starts one command in the background once fewer than njobs are running.
queue() { # $1 = label, $2... = command
	local label=$1 i=$started
	shift
	while [ "$(jobs -rp | wc -l)" -ge "$njobs" ]; do
		wait -n
		show_done
	done
	labels[i]=$label
	# the status file appears once the command has exited
	( "$@" >"$ud/$i.out" 2>&1; echo $? >"$ud/$i.st"; mv "$ud/$i.st" "$ud/$i.rc" ) &
	started=$((started+1))
}

# After the last wait: a command whose status never appeared (its wrapper killed, the status
# not written) fails, and the ones after it are still counted.
show_rest() {
	show_done
	while [ $shown -lt $started ]; do
		fail=$((fail+1)); failed_names+=("${labels[$shown]}")
		echo "FAIL ${labels[$shown]}: no exit status"
		sed 's/^/     /' "$ud/$shown.out" 2>/dev/null | tail -20
		shown=$((shown+1))
		show_done
	done
}

if [ $mode != live ]; then
	for variant in "" san; do
		dir=$O/${variant:+$variant/}tests
		[ -d "$dir" ] || continue
		for bin in "$dir"/*_test; do
			[ -x "$bin" ] || continue
			name=$(basename "$bin")
			[ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
			queue "${variant:-unit}:${name%_test}" "$bin"
		done
		# the CLI of the same build; the SAN=1 one only when it was built
		[ -n "$variant" ] && [ ! -x "$O/$variant/poolscope" ] && continue
		for t in tests/cli/*.sh; do
			[ -f "$t" ] || continue
			name=$(basename "$t" .sh)
			[ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
			queue "${variant:+$variant-}cli:$name" env \
				POOLSCOPE="$(cd "$O" && pwd)/${variant:+$variant/}poolscope" \
				timeout --kill-after=10 "${PS_CLI_TIMEOUT:-300}" bash "$t"
		done
	done
	wait
	show_rest
fi

if [ $mode != unit ]; then
	export POOLSCOPE=$(cd "$O" && pwd)/poolscope
	export PS_LIVE_BIN=$(cd "$O" && pwd)/tests/live
	for t in tests/live/*.sh; do
		[ -f "$t" ] || continue
		name=$(basename "$t" .sh)
		[ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
		log=$(mktemp)
		start=$(date +%s)
		timeout --kill-after=10 "${PS_LIVE_TIMEOUT:-600}" bash "$t" >"$log" 2>&1
		rc=$?
		secs=$(( $(date +%s) - start ))
		if [ $rc = 0 ]; then
			pass=$((pass+1)); echo "ok   live/$name (${secs}s)"
		elif [ $rc = 77 ]; then
			skip=$((skip+1)); echo "skip live/$name: $(grep -i 'skip' "$log" | tail -1)"
		else
			fail=$((fail+1)); failed_names+=("live/$name")
			echo "FAIL live/$name (exit $rc${rc:+, }${secs}s)"; sed 's/^/     /' "$log" | tail -40
		fi
		if [ -n "${PS_VERBOSE:-}" ]; then sed 's/^/     /' "$log"; fi
		rm -f "$log"
	done
fi

[ ${#failed_names[@]} = 0 ] || printf 'failed: %s\n' "${failed_names[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
