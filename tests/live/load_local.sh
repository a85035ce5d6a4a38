#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Local `poolscope load`: io_uring and pread engines keep QD in flight and report consistent
# numbers; --trace writes one workload row per second; a short file and a missing file give
# one clear line.
set -u
d=$(mktemp -d /tmp/ps-loadlocal.XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; [ -f "$d/out" ] && tail -20 "$d/out"; exit 1; }
head -c 64M /dev/urandom > "$d/f.bin"
for eng in uring pread; do
	"$POOLSCOPE" load "$d/f.bin" --engine $eng --bs 8k --qd 8 --workers 2 --duration 3 \
		--trace "$d/$eng.db" > "$d/out" 2>&1 || fail "$eng exited $?"
	res=$(grep '^result:' "$d/out") || fail "no result"
	echo "$eng: $res"
	get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$res"; }
	awk -v i="$(get iops)" 'BEGIN{exit !(i > 10000)}' || fail "$eng IOPS $(get iops)"
	[ "$(get errors)" = 0 ] || fail "$eng errors"
	[ "$(get qd_total)" = 16 ] || fail "qd_total"
	rows=$(sqlite3 "$d/$eng.db" 'select count(*) from workload') || fail "workload table"
	[ "$rows" -ge 3 ] || fail "$rows workload rows"
	tot=$(sqlite3 "$d/$eng.db" 'select sum(ios) from workload')
	awk -v t="$tot" -v a="$(get ios)" 'BEGIN{exit !(t >= a)}' || fail "trace ios $tot < $(get ios)"
done
"$POOLSCOPE" load "$d/f.bin" --sweep "64k:rr,8k:oltp" --step 1 --quiet > "$d/out" 2>&1 || fail "sweep"
[ "$(grep -c '^result:' "$d/out")" = 2 ] || fail "sweep results"
grep -q 'read_pct=70' "$d/out" || fail "oltp step"
head -c 4000 /dev/zero > "$d/short.bin"
msg=$("$POOLSCOPE" load "$d/short.bin" --duration 1 2>&1); rc=$?
[ $rc = 1 ] && grep -q "short file" <<< "$msg" || fail "short file: rc $rc: $msg"
msg=$("$POOLSCOPE" load "$d/nope.bin" --duration 1 2>&1); rc=$?
[ $rc = 1 ] && grep -q "No such file" <<< "$msg" || fail "missing file: rc $rc: $msg"
echo ok
