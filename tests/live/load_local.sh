#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Local `poolscope load`: io_uring and pread engines keep QD in flight and report consistent
# numbers; --trace writes one workload row per second; --rate paces them; a short file and a
# missing file give one clear line.
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
	# io_uring: the IOs are in flight from their submission, all of them between two reaps
	[ $eng != uring ] || [ "$(get inflight_max)" = 16 ] || fail "uring: inflight_max $(get inflight_max) of 16"
	rows=$(sqlite3 "$d/$eng.db" 'select count(*) from workload') || fail "workload table"
	[ "$rows" -ge 3 ] || fail "$rows workload rows"
	tot=$(sqlite3 "$d/$eng.db" 'select sum(ios) from workload')
	awk -v t="$tot" -v a="$(get ios)" 'BEGIN{exit !(t >= a)}' || fail "trace ios $tot < $(get ios)"
done
# A reporter that stalls (stopped for 2 s while its workers go on) writes one longer row, not a
# missing second and a zero one: rows still add up to the total, the trace's intervals tile
# the run without overlap, and the ramp still ends the summary's part.
. tests/live/lib/load_rows.sh
"$POOLSCOPE" load "$d/f.bin" --engine pread --bs 8k --qd 4 --workers 2 --ramp 1 --duration 5 \
	--trace "$d/stall.db" > "$d/out" 2>&1 &
lp=$!
sleep 2.3; kill -STOP $lp; sleep 2; kill -CONT $lp
wait $lp || fail "stalled load exited $?"
res=$(grep '^result:' "$d/out") || fail "stall: no result"
echo "stall: $res"
get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$res"; }
sum=$(load_rows_ios "$d/out")
awk -v s="$sum" -v a="$(get ios)" 'BEGIN{d=s-a; if(d<0)d=-d; exit !(d <= a*0.03)}' \
	|| fail "stall: rows add up to $sum IOs, result says $(get ios)"
awk '/^ +[0-9.]+s / {t=$1; sub(/s$/,"",t); if (t-p > 1.5) long++; if (t-p < 0.45) short++; p=t}
     END {exit !(long >= 1 && !short)}' "$d/out" || fail "stall: expected one long row, no short one"
awk -v s="$(get seconds)" 'BEGIN{exit !(s >= 4.9 && s <= 5.3)}' || fail "stall: seconds $(get seconds)"
# each interval starts where the one before it ended (to the microsecond) and the rows' IOs add
# up to the trace's total
gaps=$(sqlite3 "$d/stall.db" "select count(*) from intervals a join intervals b on b.idx = a.idx + 1
	where abs(b.t_ns - b.dur_ns - a.t_ns) > 1000") || fail "stall: intervals table"
[ "$gaps" = 0 ] || fail "stall: $gaps intervals overlap or leave a gap"
# A worker held up during the ramp (stopped 1.5 s with IOs in flight): the ramp's rows show it,
# the summary's latencies (max included) leave it out.
"$POOLSCOPE" load "$d/f.bin" --engine uring --bs 8k --qd 4 --workers 1 --ramp 3 --duration 2 \
	> "$d/out" 2>&1 &
lp=$!
sleep 0.6
wk=$(pgrep -P $lp | head -1)
[ -n "$wk" ] || fail "ramp: no worker process"
kill -STOP "$wk"; sleep 1.5; kill -CONT "$wk"
wait $lp || fail "ramp load exited $?"
res=$(grep '^result:' "$d/out") || fail "ramp: no result"
echo "ramp: $res"
awk '/ramp$/ && ($6 ~ /s$/ && $6 !~ /[mu]s$/) {slow=1} END {exit !slow}' "$d/out" ||
	fail "ramp: no ramp row shows the 1.5 s stop"
awk -v m="$(get max_us)" 'BEGIN{exit !(m < 1000000)}' || fail "ramp: summary max $(get max_us) us includes the ramp"
# --rate: each engine offers 3000 IOPS and does them, evenly over the seconds (each second's rate
# within 10%), and says so; the whole machine's CPU per IO is in the result; a rate the engine
# cannot reach is said not reached; with a period longer than the run (1 IOPS over 16 pread slots)
# the run still ends on time.
for eng in uring pread; do
	"$POOLSCOPE" load "$d/f.bin" --engine $eng --bs 8k --qd 4 --workers 2 --ramp 1 --duration 3 \
		--rate 3000 > "$d/out" 2>&1 || fail "rate $eng exited $?"
	res=$(grep '^result:' "$d/out") || fail "rate $eng: no result"
	echo "rate $eng: $res"
	get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$res"; }
	awk -v i="$(get iops)" 'BEGIN{exit !(i >= 2940 && i <= 3030)}' || fail "rate $eng: $(get iops) IOPS for 3000"
	[ "$(get rate)" = 3000 ] && grep -q '^  offered 3000 IOPS: reached$' "$d/out" || fail "rate $eng: not said reached"
	awk '/^ +[0-9.]+s / && !/ramp$/ {n++; if ($2 < 2700 || $2 > 3300) bad++} END {exit !(n >= 3 && !bad)}' \
		"$d/out" || fail "rate $eng: a second off 3000 by more than 10%"
	# /proc/stat counts in 10 ms ticks: 3000 light IOs a second on a quiet machine may take
	# none in 3 s, so 0 is a measurement; the two figures must be numbers and agree.
	awk -v c="$(get cpu_us_per_io)" -v b="$(get cpu_busy_pct)" 'BEGIN{exit !(c ~ /^[0-9.]+$/ &&
		b ~ /^[0-9.]+$/ && b <= 100 && ((c == 0) == (b == 0)))}' ||
		fail "rate $eng: cpu_us_per_io '$(get cpu_us_per_io)', cpu_busy_pct '$(get cpu_busy_pct)'"
done
"$POOLSCOPE" load "$d/f.bin" --engine pread --qd 2 --duration 2 --rate 100000000 > "$d/out" 2>&1 ||
	fail "rate unreachable: exited $?"
grep -q '^  offered 100000000 IOPS: NOT reached (the target could not keep up)$' "$d/out" ||
	fail "rate unreachable: not said"
t0=$(date +%s%N)
"$POOLSCOPE" load "$d/f.bin" --engine pread --qd 16 --duration 2 --rate 1 --quiet > "$d/out" 2>&1 ||
	fail "rate 1: exited $?"
t=$((($(date +%s%N) - t0) / 1000000))
[ "$t" -lt 5000 ] || fail "rate 1: a 2 s run took $t ms"
echo "ok: --rate (a 2 s run at 1 IOPS took $t ms)"
# Without /proc/stat (masked in a mount namespace of this test's own) the CPU figures are "-"
# and the summary has no CPU line, never a 0 % that reads as measured.
if unshare -m true 2>/dev/null; then
	unshare -m sh -c 'mount --bind /dev/null /proc/stat && exec "$0" load "$1" --engine pread \
		--qd 2 --duration 1' "$POOLSCOPE" "$d/f.bin" > "$d/out" 2>&1 || fail "no /proc/stat: exited $?"
	res=$(grep '^result:' "$d/out") || fail "no /proc/stat: no result"
	get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$res"; }
	[ "$(get cpu_busy_pct)" = - ] && [ "$(get cpu_us_per_io)" = - ] ||
		fail "no /proc/stat: cpu_busy_pct '$(get cpu_busy_pct)', cpu_us_per_io '$(get cpu_us_per_io)'"
	! grep -q 'CPU of the whole machine' "$d/out" || fail "no /proc/stat: a CPU line"
	echo "ok: no /proc/stat: cpu figures '-'"
else
	echo "note: unshare -m refused: the check without /proc/stat needs a mount namespace"
fi
"$POOLSCOPE" load "$d/f.bin" --sweep "64k:rr,8k:oltp" --step 1 --quiet > "$d/out" 2>&1 || fail "sweep"
[ "$(grep -c '^result:' "$d/out")" = 2 ] || fail "sweep results"
grep -q 'read_pct=70' "$d/out" || fail "oltp step"
head -c 4000 /dev/zero > "$d/short.bin"
msg=$("$POOLSCOPE" load "$d/short.bin" --duration 1 2>&1); rc=$?
[ $rc = 1 ] && grep -q "short file" <<< "$msg" || fail "short file: rc $rc: $msg"
msg=$("$POOLSCOPE" load "$d/nope.bin" --duration 1 2>&1); rc=$?
[ $rc = 1 ] && grep -q "No such file" <<< "$msg" || fail "missing file: rc $rc: $msg"
echo ok
