#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The command pages (docs/commands/*.md) as man pages, and against the binary, so that they
# cannot go stale silently:
#   - `make man` builds every page with go-md2man (the Makefile's rule, into a temporary O=);
#   - groff renders each one with every warning on (-ww) and prints none;
#   - each page has the sections the command pages promise and a title naming its file;
#   - every command `poolscope help` lists has a page, and every page a command;
#   - every option that `poolscope help CMD` prints (the same text as `poolscope CMD -h`) is an
#     entry of the page's OPTIONS section, and every entry there is an option the help prints
#     (-h/--help aside: not every usage text lists it).
# No root. Prints "ok NAME" / "FAIL NAME: why" per check; exits 77 (skip) without go-md2man or
# groff (`make deps` installs them) or without a built binary.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
O=${O:-.output}
POOLSCOPE=${POOLSCOPE:-$O/poolscope}
GO_MD2MAN=${GO_MD2MAN:-go-md2man}
command -v "$GO_MD2MAN" > /dev/null || { echo "skip: $GO_MD2MAN not installed (make deps)"; exit 77; }
command -v groff > /dev/null || { echo "skip: groff not installed"; exit 77; }
[ -x "$POOLSCOPE" ] || { echo "skip: $POOLSCOPE not built (make all)"; exit 77; }
d=$(mktemp -d /tmp/ps-man.XXXXXX)
trap 'rm -rf "$d"' EXIT
export LC_ALL=C.UTF-8
failed=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1: $2"; failed=1; }

# The rule a `make install` will use; not a sub-make of the make that may be running us.
if env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make --no-print-directory O="$d" \
	GO_MD2MAN="$GO_MD2MAN" man > "$d/make.log" 2>&1; then
	ok make-man
else
	bad make-man "make man failed: $(tail -3 "$d/make.log")"
fi

# opts_help TEXT: the options a usage text mentions, one a line (-x, --long); a single letter
# after one dash, so `xz -dc` in an example is not taken for an option
opts_help() {
	grep -oE '(^|[^[:alnum:]_-])--?[[:alpha:]][[:alnum:]-]*' <<< "$1" | sed 's/^[^-]*//' |
		grep -E '^(-[[:alpha:]]|--[[:alpha:]][[:alnum:]-]*)$' | sort -u
}
# opts_page FILE: the options that head an entry of the page's OPTIONS section
opts_page() {
	awk '/^## / { in_opts = ($0 == "## OPTIONS") } in_opts && /^\*\*-/' "$1" |
		grep -oE '\*\*--?[[:alnum:]][[:alnum:]-]*\*\*' | tr -d '*' | sort -u
}

cmds=$("$POOLSCOPE" help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
[ -n "$cmds" ] && ok help-lists-commands || bad help-lists-commands "no command in 'poolscope help'"
for c in $cmds; do
	[ -f "docs/commands/poolscope-$c.md" ] && ok "page/$c" ||
		bad "page/$c" "'poolscope help' lists $c, docs/commands/poolscope-$c.md is missing"
done

sections="NAME SYNOPSIS DESCRIPTION OPTIONS OUTPUT COST CAVEATS EXAMPLES SEE.ALSO"
for md in docs/commands/*.md; do
	name=$(basename "$md" .md)
	cmd=${name#poolscope-}
	[ "$name" = poolscope ] && cmd=
	if [ -n "$cmd" ] && ! grep -qx "$cmd" <<< "$cmds"; then
		bad "$name/command" "no command '$cmd' in 'poolscope help'"
		continue
	fi
	page=$d/man/$name.1
	if [ ! -s "$page" ]; then
		bad "$name/built" "$page not built"
		continue
	fi
	upper=$(tr a-z A-Z <<< "$name")
	grep -q "^\.TH $upper 1 " "$page" && ok "$name/title" ||
		bad "$name/title" "expected '.TH $upper 1 ...' (the '% $upper 1' line), got '$(grep -m1 '^\.TH' "$page")'"
	missing=
	for s in $sections; do
		grep -qx "\.SH $s" "$page" || missing="$missing ${s/./ }"
	done
	[ -z "$missing" ] && ok "$name/sections" || bad "$name/sections" "missing:$missing"
	warn=$(groff -t -man -Tutf8 -ww -z "$page" 2>&1)
	[ -z "$warn" ] && ok "$name/groff" || bad "$name/groff" "$(head -5 <<< "$warn")"

	if [ -n "$cmd" ]; then
		help=$("$POOLSCOPE" help "$cmd" 2>&1)
		rc=$?
	else
		help=$("$POOLSCOPE" help 2>&1)
		rc=$?
	fi
	if [ $rc != 0 ]; then
		bad "$name/help" "poolscope help $cmd exited $rc"
		continue
	fi
	want=$(opts_help "$help")
	have=$(opts_page "$md")
	undocumented=$(comm -23 <(echo "$want") <(echo "$have") | grep . | tr '\n' ' ')
	[ -z "$undocumented" ] && ok "$name/options-documented" ||
		bad "$name/options-documented" "poolscope help $cmd prints ${undocumented}not in OPTIONS of $md"
	# the overview page also documents --version, which the command list does not print
	[ -z "$cmd" ] && continue
	stale=$(comm -13 <(echo "$want") <(echo "$have") | grep -vxE -- '-h|--help' | tr '\n' ' ')
	[ -z "$stale" ] && ok "$name/options-current" ||
		bad "$name/options-current" "$md documents ${stale}which poolscope help $cmd does not print"
done
exit $failed
