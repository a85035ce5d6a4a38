# shellcheck shell=bash
# Sourced by tests/cli/*.sh (from the source tree) with a name for the temporary directory:
#   . tests/cli/lib/fixtures.sh NAME
# Sets $POOLSCOPE (absolute; the build under test) and $FIXGEN, skips (77) when either is not
# built, writes the fixture traces of tests/fixtures/mkfixtures.c into $d (removed at exit), and
# clears what could leak in from the user's environment (rules path, locale).
O=${O:-.output}
POOLSCOPE=${POOLSCOPE:-$O/poolscope}
FIXGEN=${PS_FIXGEN:-$(dirname "$POOLSCOPE")/tests/mkfixtures}
for f in "$POOLSCOPE" "$FIXGEN"; do
	[ -x "$f" ] || { echo "skip: $f not built (make all)"; exit 77; }
done
POOLSCOPE=$(cd "$(dirname "$POOLSCOPE")" && pwd)/$(basename "$POOLSCOPE")
d=$(mktemp -d "/tmp/ps-$1.XXXXXX")
trap 'rm -rf "$d"' EXIT
# the default rules are found next to the binary: a user's $POOLSCOPE_RULES must not leak in
unset POOLSCOPE_RULES
export LC_ALL=C
"$FIXGEN" "$d" || { echo "FAIL fixtures: $FIXGEN exited $?"; exit 1; }
