#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# One meaning per short option across the commands (README.md, "Options"): every "-X, --long"
# line of every command's -h names the long option the convention gives X; the command's
# getopt accepts each short option its -h lists; and it refuses the convention's letters it
# does not list (and the letters that were long-only values inside the option tables), so a
# short option cannot come back with another meaning unnoticed. Runs no command past its
# option parsing. No root; a few seconds. The SAN build (the same option tables, ten times
# the start-up cost) checks the -h listings against the convention only.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
. tests/cli/lib/fixtures.sh cliopts
failed=0
san=
[[ $POOLSCOPE == */san/poolscope ]] && san=1

# letter -> the long option(s) it stands for; -n is "how many to show" (etl dump's --limit)
declare -A conv=(
	[o]=output [f]=force [n]="top limit" [r]=rules [d]=duration [i]=interval [q]=quiet
	[h]=help [l]=label [p]=pooltag [t]=title [u]=user [b]=bs [w]=workers [s]=size [e]=engine
)
never="F T B c"

cmds=$("$POOLSCOPE" help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1}' |
	grep -vx 'help\|version')
[ -n "$cmds" ] || { echo "FAIL commands: poolscope help lists none"; exit 1; }

# stderr_of CMD ARGS...: the command's stderr (getopt's complaint if it refuses an option);
# etl takes its options after the subcommand
stderr_of() {
	local cmd=$1
	shift
	if [ "$cmd" = etl ]; then set -- etl dump "$@"; else set -- "$cmd" "$@"; fi
	"$POOLSCOPE" "$@" 2>&1 >/dev/null </dev/null
}

for cmd in $cmds; do
	help=$("$POOLSCOPE" "$cmd" -h 2>&1)
	bad=
	unset listed
	declare -A listed=()
	while read -r x long arg; do
		listed[$x]=1
		if [ -z "${conv[$x]:-}" ] || ! grep -qw -- "$long" <<< "${conv[$x]}"; then
			bad="$bad -$x is --$long (the convention: ${conv[$x]:-none});"
			continue
		fi
		[ -n "$san" ] && continue
		# -X (with a made-up argument) then -h: refused means getopt's message, anything else
		# (the help, or the argument's own error) is accepted
		if [ -n "$arg" ]; then err=$(stderr_of "$cmd" "-$x" 1 -h)
		else err=$(stderr_of "$cmd" "-$x" -h); fi
		if grep -q "invalid option\|requires an argument" <<< "$err"; then
			bad="$bad -$x listed but refused ($(head -1 <<< "$err"));"
		fi
	done < <(sed -n 's/^ *-\([a-zA-Z]\), --\([a-z-]*\)\( [^ ]*\)\{0,1\}.*/\1 \2 \3/p' <<< "$help")
	refuse=
	[ -n "$san" ] || refuse="${!conv[*]} $never"
	for x in $refuse; do
		[ -n "${listed[$x]:-}" ] && continue
		[ "$x" = h ] && continue
		# alone: every command stops for want of its arguments if -X were accepted
		grep -q "invalid option -- '$x'" <<< "$(stderr_of "$cmd" "-$x")" ||
			bad="$bad -$x not listed but accepted;"
	done
	if [ -z "$bad" ]; then echo "ok $cmd"; else echo "FAIL $cmd:$bad"; failed=1; fi
done
exit $failed
