#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make install / make uninstall (Makefile, "install"): `make install DESTDIR=tmp PREFIX=/usr`
# of the build under test ($POOLSCOPE: the normal or the SAN=1 one) puts the binary in usr/bin
# and the default rules and plot scripts in usr/share/poolscope, where the binary looks for them
# relative to itself (userspace/cmd-report.c, cmd-plot.c). The installed binary, run away from
# the source tree (another directory, no PS_SRCDIR, no POOLSCOPE_RULES/POOLSCOPE_PLOTS), gives
# the same `report --by path` as the build and renders a plot; after `make uninstall` the files
# are gone and the same commands fail for want of them. No root; a few seconds.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
. tests/cli/lib/fixtures.sh cliinstall
command -v make >/dev/null || { echo "skip: make not installed"; exit 77; }
top=$PWD
dest=$d/dest
away=$d/away
mkdir "$away"
failed=0

ok() { echo "ok $1"; }
bad() { echo "FAIL $1: $2"; failed=1; }

# The make arguments that name this build: O=DIR for DIR/poolscope, O=DIR SAN=1 for
# DIR/san/poolscope. -o keeps make from rebuilding the binary (a source edited since the build
# would otherwise relink it here): what is installed is the binary under test.
bindir=$(dirname "$POOLSCOPE")
[ "$(basename "$POOLSCOPE")" = poolscope ] || { echo "skip: $POOLSCOPE is not a build's poolscope"; exit 77; }
if [ "$(basename "$bindir")" = san ]; then
	mk=(O="$(dirname "$bindir")" SAN=1)
else
	mk=(O="$bindir" SAN=)
fi
imake() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make --no-print-directory -C "$top" "${mk[@]}" \
		-o "$POOLSCOPE" DESTDIR="$dest" PREFIX=/usr "$@"
}
# installed: the installed binary in $away, with nothing pointing back at the source tree
installed() {
	(cd "$away" && env -u PS_SRCDIR -u POOLSCOPE_RULES -u POOLSCOPE_PLOTS \
		"$dest/usr/bin/poolscope" "$@")
}

if imake install > "$d/make.out" 2>&1; then ok make-install
else bad make-install "$(tail -5 "$d/make.out")"; exit 1; fi

missing=
for f in usr/bin/poolscope usr/share/poolscope/default.rules usr/share/poolscope/plots/growth.gp \
	 usr/share/poolscope/plots/diff.gp usr/share/bash-completion/completions/poolscope; do
	[ -f "$dest/$f" ] || missing="$missing $f"
done
if [ -z "$missing" ] && [ -x "$dest/usr/bin/poolscope" ]; then ok layout
else bad layout "missing or not executable:$missing"; fi
if cmp -s "$POOLSCOPE" "$dest/usr/bin/poolscope" &&
   cmp -s analysis/rules/default.rules "$dest/usr/share/poolscope/default.rules"; then
	ok installs-the-build
else bad installs-the-build "usr/bin/poolscope or default.rules differs from the build's"; fi
exe=$(find "$dest" -name '*.exe')
if [ -z "$exe" ]; then ok no-windows-binary; else bad no-windows-binary "installed $exe"; fi

# the rules: same report as the build's binary (which reads analysis/rules of the tree)
"$POOLSCOPE" report "$d/linux.db" --by path > "$d/build.txt" 2>&1
if installed report "$d/linux.db" --by path > "$d/inst.txt" 2> "$d/inst.err" &&
   [ ! -s "$d/inst.err" ] && [ -s "$d/build.txt" ] && cmp -s "$d/build.txt" "$d/inst.txt"; then
	ok installed-finds-rules
else
	bad installed-finds-rules "$(head -3 "$d/inst.err") $(diff "$d/build.txt" "$d/inst.txt" | head -5)"
fi

# the plot scripts: a PNG comes out (gnuplot is optional for poolscope)
have_gnuplot=
command -v gnuplot > /dev/null && have_gnuplot=1
if [ -n "$have_gnuplot" ]; then
	if installed plot "$d/linux.db" -o "$away/p.png" > /dev/null 2> "$d/plot.err" &&
	   [ "$(head -c 8 "$away/p.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
		ok installed-finds-plot-scripts
	else bad installed-finds-plot-scripts "$(head -3 "$d/plot.err")"; fi
else
	echo "skip installed-finds-plot-scripts: gnuplot not installed"
fi

if imake uninstall > "$d/make.out" 2>&1; then ok make-uninstall
else bad make-uninstall "$(tail -5 "$d/make.out")"; fi
left=$(find "$dest" -type f)
if [ -z "$left" ] && [ ! -e "$dest/usr/share/poolscope" ]; then ok uninstall-removes
else bad uninstall-removes "left: $left $(ls -d "$dest/usr/share/poolscope" 2>/dev/null)"; fi

# What was found above came from the install: without it the lookups fail. Only where no copy
# is installed system-wide (report also looks in /usr/share/poolscope), and the copied binary
# stands in for the removed one.
mkdir -p "$dest/usr/bin"
cp "$POOLSCOPE" "$dest/usr/bin/poolscope"
if [ -e /usr/share/poolscope/default.rules ]; then
	echo "skip uninstalled-rules-not-found: /usr/share/poolscope/default.rules exists"
elif installed report "$d/linux.db" --by path > /dev/null 2> "$d/inst.err"; then
	bad uninstalled-rules-not-found "report found rules with nothing installed"
elif grep -q 'default rules not found' "$d/inst.err"; then ok uninstalled-rules-not-found
else bad uninstalled-rules-not-found "$(head -1 "$d/inst.err")"; fi
if [ -n "$have_gnuplot" ]; then
	if installed plot "$d/linux.db" -o "$away/q.png" > /dev/null 2>&1; then
		bad uninstalled-plot-scripts-not-found "plot found its scripts with nothing installed"
	else ok uninstalled-plot-scripts-not-found; fi
fi
exit $failed
