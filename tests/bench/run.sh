#!/usr/bin/env bash
# make bench: runs every tests/bench/*.sh except this one (each prints its own figures).
set -u
cd "$(dirname "$0")/../.."
rc=0
for b in tests/bench/*.sh; do
	[ "$(basename "$b")" = run.sh ] && continue
	echo "=== $b"
	bash "$b" || { echo "bench $b failed"; rc=1; }
done
exit $rc
