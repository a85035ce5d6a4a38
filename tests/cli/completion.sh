#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The bash completion (userspace/completion/poolscope) in a real bash: COMP_WORDS and
# COMP_CWORD set as readline would, the function called, COMPREPLY checked. Commands come from
# `poolscope help`, options from each command's -h (every long option a command's usage prints
# is offered), values of the fixed-choice options, traces for the commands that read them. With
# bash-completion's own loader, `complete -p poolscope` after it found the installed file is
# checked by tests/cli/install.sh's layout. No root.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
. tests/cli/lib/fixtures.sh clicomp
failed=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1: $2"; failed=1; }
PATH=$(dirname "$POOLSCOPE"):$PATH
. userspace/completion/poolscope
complete -p poolscope > /dev/null 2>&1 && ok registers || bad registers "no 'complete' for poolscope"

# comp WORDS...: the completions of the last word (the one being typed)
comp() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_poolscope
	printf '%s\n' "${COMPREPLY[@]}" | sort | paste -sd' '
}
check() { # name, want, words...
	local name=$1 want=$2 got
	shift 2
	got=$(comp "$@")
	[ "$got" = "$want" ] && ok "$name" || bad "$name" "'$*': got '$got', want '$want'"
}
cmds=$("$POOLSCOPE" help | awk '/^commands:/ { f = 1; next } f && !NF { exit } f { print $1 }' | sort | paste -sd' ')
check commands "$cmds" poolscope ''
check command-prefix "record report" poolscope re
check report-format-opt "--format" poolscope report x.db --form
check format-values "csv json markdown text" poolscope report x.db --format ''
check domain-values "all kernel reclaimable user" poolscope top --domain ''
check top-sort-values "allocs growth live rate" poolscope top --sort ''
check report-sort-values "allocs growth live rank rate" poolscope report x.db --sort ''
check kind-values "slab" poolscope report x.db --kind s
check csv-table "timeline" poolscope export x.db --csv ''
check help-command "diff" poolscope help di
# every long option each command's usage prints is offered after "--"
for c in $cmds; do
	[ "$c" = help ] || [ "$c" = version ] && continue
	want=$("$POOLSCOPE" "$c" -h 2>&1 | grep -oE -- '(^|[ ,[])--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u | paste -sd' ')
	got=$(comp poolscope "$c" --)
	[ -n "$want" ] && [ "$got" = "$want" ] || bad "options-$c" "got '$got', usage has '$want'"
done
[ $failed = 0 ] && ok options-of-every-command
# traces for the commands that read them
(cd "$d" && touch other.txt && check trace-files "empty.db foreign.db linux.db local.db notatrace.db windows.db" poolscope report '')
# a name with a space is one completion
mkdir "$d/sp" && touch "$d/sp/my run.db"
(cd "$d/sp" && comp poolscope report my > /dev/null
 [ "${#COMPREPLY[@]}" = 1 ] && [ "${COMPREPLY[0]}" = "my run.db" ] && ok space-in-name ||
	bad space-in-name "got ${#COMPREPLY[@]} completions: ${COMPREPLY[*]}")
exit $failed
