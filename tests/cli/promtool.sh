#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The alerting rules shipped in docs/prometheus/rules.yml, checked by the real promtool
# (Debian's prometheus package): `promtool check rules` parses them, and `promtool test rules`
# runs tests/cli/prom/rules_test.yml, a firing and a quiet series for every alert. The example
# scrape configuration parses too. No root.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
failed=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1: $2"; failed=1; }
command -v promtool > /dev/null || { echo "FAIL promtool not found (make deps installs prometheus)"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

if out=$(promtool check rules docs/prometheus/rules.yml 2>&1); then ok check-rules
else bad check-rules "$out"; fi
if out=$(cd tests/cli/prom && promtool test rules rules_test.yml 2>&1); then ok test-rules
else bad test-rules "$out"; fi
# the example configuration names the rules by a path relative to itself
cp docs/prometheus/prometheus.yml docs/prometheus/rules.yml "$d/"
if out=$(promtool check config "$d/prometheus.yml" 2>&1); then ok check-config
else bad check-config "$out"; fi
# the tests can fail: a rule that never fires fails its test
sed 's/== 3/== 4/' docs/prometheus/rules.yml > "$d/rules.yml"
sed "s|../../../docs/prometheus/rules.yml|$d/rules.yml|" tests/cli/prom/rules_test.yml > "$d/t.yml"
if (cd "$d" && promtool test rules t.yml > /dev/null 2>&1); then bad test-can-fail "a broken rule passed"
else ok test-can-fail; fi
exit $failed
