#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Bench: (1) IOPS of the 8 KiB QD16 x 2 random-read workload over SMB (private Samba in a netns
# pair, file pinned in page cache) against the same workload on the local file (io_uring and
# pread, page cache): the physical limits of this machine. (2) IOPS lost while `poolscope
# record` runs at defaults during the SMB load: rounds alternate without/with recording (order
# flipped every round), paired ratio per round, median. Target: <= 2% loss.
# (2b) The same loss resolved at a fixed offered load (load --rate, default half of a saturated
# run): the whole machine's busy CPU per IO in windows without and with the recorder beside one
# long load, a 95% interval over the pairs. (3) CPU taken by the recorder's BPF programs and process during one SMB run. (4) Trace
# bytes per hour and per day of that recording (target: a day under 2 GiB). (5) The allocator
# events a demo-length (60 s) recording of the load skipped for re-entry, per program.
# (6, not by default) The SMB load against the test server in the caller's session (the
# default) and in a session of its own, as a daemon runs: rounds alternate the two, the server
# restarted each time; IOPS, p99.9 and max latency, medians and the paired IOPS ratio.
# (7, not by default) ns a run of each kmem program under the load: empty, defaults, no
# sampled objects, no stacks.
# Env: O, POOLSCOPE, PS_BENCH_ROUNDS (5), PS_BENCH_SECS (15), PS_BENCH_SIZE_SECS (120),
# PS_BENCH_RATE, PS_BENCH_PAIRS (30), PS_BENCH_WINDOW (8 s), PS_BENCH_CPUIO_ARMS (rec; "empty rec"
# adds the floor of empty programs) for cpuio,
# PS_BENCH_PARTS ("compare loss cpuio size reentry cpu"; "session" and "progs" on request).
set -u
cd "$(dirname "$0")/../.."
O=${O:-.output}
P=${POOLSCOPE:-$(cd "$O" && pwd)/poolscope}
ROUNDS=${PS_BENCH_ROUNDS:-5}
SECS=${PS_BENCH_SECS:-15}
export PS_SMB_DIR=$(mktemp -d /tmp/ps-bench-smb.XXXXXX)
export PS_PIN=${PS_PIN:-$(dirname "$P")/tests/live/pspin}
trap 'tests/smbserver.sh stop >/dev/null 2>&1; rm -rf "$PS_SMB_DIR"' EXIT
die() { echo "bench smb: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
eval "$(tests/smbserver.sh start --size 1G)" || die "server start"
ARGS=(--bs 8k --qd 16 --workers 2 --duration "$SECS" --ramp 2 --quiet)
# field OUT NAME: NAME=VALUE of load's first result: line in OUT
field() { sed -n "s/^result:.* $2=\([0-9.]*\).*/\1/p" <<< "$1" | head -1; }
iops() { field "$1" iops; }
smb() { $PS_SMB_CLIENT_EXEC "$P" load "$PS_SMB_URL" --user "$PS_SMB_USER" "${ARGS[@]}" 2>&1; }
# rec_smb DB [record options]: the same load under `record` writing DB; prints the load's output
rec_smb() {
	local db=$1
	shift
	"$P" record -o "$db" --force -q "$@" --duration $((SECS + 20)) -- \
		$PS_SMB_CLIENT_EXEC "$P" load "$PS_SMB_URL" --user "$PS_SMB_USER" "${ARGS[@]}" 2>&1
}
# io_window DB PART: the last interval of DB with workload IOs; the window of the cpu and progs
# parts runs from the 3rd interval (after the ramp) to it, and must hold more than two
io_window() {
	local b
	b=$(sqlite3 "$1" "SELECT max(interval) FROM workload WHERE ios > 0")
	[ -n "$b" ] && [ "$b" -gt 5 ] || die "recorded run too short for the $2 part (3..$b)"
	echo "$b"
}
# ctr DB NAME IDX: the counter's value at interval IDX (the view holds each one's last row up to it)
ctr() { sqlite3 "$1" "SELECT coalesce(sum(value), 0) FROM counter_values WHERE name LIKE '$2' AND interval = $3"; }
med() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END{if(NR%2)print a[(NR+1)/2]; else printf "%.10g\n", (a[NR/2]+a[NR/2+1])/2}'; }
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) (shared machine: numbers are noisy)"
PARTS=${PS_BENCH_PARTS:-compare loss cpuio size reentry cpu}
part() { [[ " $PARTS " == *" $1 "* ]]; }
if part compare; then
echo "== SMB vs local, $ROUNDS rounds x ${SECS}s, 8k randread qd16 x2"
s_all="" u_all="" p_all="" ratios=""
for r in $(seq "$ROUNDS"); do
	o1=$(smb); s=$(iops "$o1")
	o2=$("$P" load "$PS_SMB_FILE" --engine uring "${ARGS[@]}" 2>&1); u=$(iops "$o2")
	o3=$("$P" load "$PS_SMB_FILE" --engine pread "${ARGS[@]}" 2>&1); p=$(iops "$o3")
	[ -n "$s" ] && [ -n "$u" ] && [ -n "$p" ] || { printf '%s\n' "$o1" "$o2" "$o3" | grep -v '^ '; die "a run failed in round $r"; }
	echo "  round $r: smb $s  local-io_uring $u  local-pread $p"
	s_all+=" $s"; u_all+=" $u"; p_all+=" $p"
	ratios+=" $(awk -v a="$u" -v b="$s" 'BEGIN{printf "%.1f", a/b}')"
done
ms=$(med <<< "$s_all"); mu=$(med <<< "$u_all"); mp=$(med <<< "$p_all")
echo "  median: smb $ms IOPS, local io_uring $mu, local pread $mp; local/smb (paired median) $(med <<< "$ratios")x"
fi
if part session; then
echo "== test server in the caller's session or its own, $ROUNDS rounds x ${SECS}s, 8k randread qd16 x2"
declare -A S_IOPS S_P999 S_MAX I
ratios=""
for r in $(seq "$ROUNDS"); do
	for sess in $([ $((r % 2)) = 1 ] && echo "own caller" || echo "caller own"); do
		tests/smbserver.sh stop
		eval "$(tests/smbserver.sh start --size 1G --session $sess)" || die "server start ($sess)"
		out=$(smb); i=$(iops "$out")
		[ -n "$i" ] || { echo "$out" | tail -5; die "the $sess-session run failed in round $r"; }
		S_IOPS[$sess]+=" $i"; S_P999[$sess]+=" $(field "$out" p999_us)"; S_MAX[$sess]+=" $(field "$out" max_us)"
		I[$sess]=$i
	done
	echo "  round $r: own session ${I[own]} IOPS, caller's session ${I[caller]} IOPS"
	ratios+=" $(awk -v a="${I[caller]}" -v b="${I[own]}" 'BEGIN{printf "%.3f", a/b}')"
done
for sess in own caller; do
	echo "  $sess session: median $(med <<< "${S_IOPS[$sess]}") IOPS, p99.9 $(med <<< "${S_P999[$sess]}") us, max $(med <<< "${S_MAX[$sess]}") us"
done
echo "  caller's session over its own (paired median IOPS ratio): $(med <<< "$ratios")"
# the parts after this one run against the default server, whichever round ended last
tests/smbserver.sh stop
eval "$(tests/smbserver.sh start --size 1G)" || die "server start"
fi
if part loss; then
echo "== IOPS lost while recording (record at defaults), $ROUNDS rounds x ${SECS}s"
if ! "$P" help record >/dev/null 2>&1; then
	echo "bench smb: FAIL: $P has no record command; recording-overhead part not run"
	exit 1
fi
base_all="" rec_all="" loss=""
for r in $(seq "$ROUNDS"); do
	for order in $([ $((r % 2)) = 1 ] && echo "base rec" || echo "rec base"); do
		if [ $order = base ]; then
			out=$(smb); b=$(iops "$out")
			[ -n "$b" ] || { echo "$out"; die "base run failed in round $r"; }
		else
			out=$(rec_smb "$PS_SMB_DIR/b.db")
			w=$(iops "$out")
			[ -n "$w" ] || { echo "$out" | tail -5; die "recorded run failed in round $r"; }
		fi
	done
	[ -n "$b" ] && [ -n "$w" ] || die "a run failed in round $r"
	l=$(awk -v b="$b" -v w="$w" 'BEGIN{printf "%.1f", (b-w)*100/b}')
	echo "  round $r: without $b  with record $w  loss $l%"
	base_all+=" $b"; rec_all+=" $w"; loss+=" $l"
done
ml=$(med <<< "$loss")
echo "  median: without $(med <<< "$base_all") IOPS, with record $(med <<< "$rec_all"); paired median loss $ml% (target <= 2%)"
awk -v l="$ml" 'BEGIN{exit !(l <= 2)}' && echo "  target met" || echo "  target NOT met"
fi
if part cpuio; then
# (2b) The same loss, resolved: one SMB load runs through the whole part at a fixed offered load
# below saturation (load --rate), and the recorder is started and stopped beside it, so that
# windows with and without recording alternate (the order changing every pair) on the same
# connections and smbd processes. At a fixed IO rate the recorder's cost shows as the whole
# machine's busy CPU time (/proc/stat: client, smbd, the network stack, the recorder's programs
# and process) over the IOs the load counted in the same window; on this CPU-bound load the IOPS
# at saturation are the CPUs over the CPU time per IO, so the IOPS recording takes away is
# 1 - (CPU per IO without) / (CPU per IO with). Each window starts a second after the recorder
# wrote its first interval (or two after it stopped), so neither its start nor its exit is in
# it. The interval is Student's t over the pairs.
RATE=${PS_BENCH_RATE:-}
WIN=${PS_BENCH_WINDOW:-8}
# PS_BENCH_CPUIO_ARMS: what runs beside the load in the windows that are not the baseline:
# rec (record at defaults) and, on request, empty (record --empty-probes: empty programs on the
# same tracepoints, the floor any BPF recorder pays); each against the same pair's baseline.
ARMS=${PS_BENCH_CPUIO_ARMS:-rec}
seen=" "
for a in $ARMS; do
	[ "$a" = rec ] || [ "$a" = empty ] || die "PS_BENCH_CPUIO_ARMS: $a: expected rec or empty"
	[[ $seen == *" $a "* ]] && die "PS_BENCH_CPUIO_ARMS: $a given twice"
	seen="$seen$a "
done
arm_name() { [ "$1" = rec ] && echo "with record" || echo "with empty programs"; }
PAIRS=${PS_BENCH_PAIRS:-30}
if [ -z "$RATE" ]; then
	out=$(smb); sat=$(iops "$out")
	[ -n "$sat" ] || { echo "$out" | tail -5; die "saturation run failed"; }
	RATE=$((sat / 2))
	echo "== IOPS lost while recording, at a fixed offered load: $RATE IOPS (half the $sat IOPS this machine reached just now), $PAIRS pairs of ${WIN}s windows: without, $ARMS"
else
	echo "== IOPS lost while recording, at a fixed offered load: $RATE IOPS, $PAIRS pairs of ${WIN}s windows: without, $ARMS"
fi
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
hz=$(getconf CLK_TCK)
# The load's own count of completed IOs (struct ps_workload_shm, userspace/lib/workload/
# workload_shm.h: ios, a u64 at offset 24), so that each window divides its busy CPU by the IOs
# it did and checks that it held the rate.
WL=$PS_SMB_DIR/cpuio.wl
: > "$WL"
wl_ios() { od -An -t u8 -j 24 -N 8 "$WL" 2> /dev/null | tr -d ' '; }
# window: "BUSY IOPS": the busy CPUs (0..nproc) and the load's IOPS over WIN seconds
window() { local a b i0 i1 t0 t1; a=$(busy); i0=$(wl_ios); t0=$(date +%s%N); sleep "$WIN"
	b=$(busy); i1=$(wl_ios); t1=$(date +%s%N)
	awk -v a="$a" -v b="$b" -v i0="$i0" -v i1="$i1" -v hz="$hz" -v t0="$t0" -v t1="$t1" \
		'BEGIN { s = (t1 - t0) / 1e9; printf "%.4f %.1f", (b - a) / hz / s, (i1 - i0) / s }'; }
confs=(base $ARMS)
# longer than the pairs can take: the part stops the load itself
total=$((PAIRS * ${#confs[@]} * (WIN + 30) + 60))
POOLSCOPE_WORKLOAD_SHM=$WL $PS_SMB_CLIENT_EXEC "$P" load "$PS_SMB_URL" --user "$PS_SMB_USER" \
	--bs 8k --qd 16 --workers 2 --duration "$total" --ramp 2 --rate "$RATE" \
	> "$PS_SMB_DIR/cpuio.load" 2>&1 &
lp=$!
# the load counts once all its connections are up: up to its connect timeout and more
for _ in $(seq 150); do
	[ "$(wl_ios)" -gt 0 ] 2> /dev/null && break
	kill -0 $lp 2> /dev/null || break
	sleep 0.2
done
kill -0 $lp 2> /dev/null || { tail -5 "$PS_SMB_DIR/cpuio.load"; die "the load did not start"; }
[ "$(wl_ios)" -gt 0 ] 2> /dev/null || die "the load's IO counter ($WL) counted nothing in 30 s"
sleep 2
for a in $ARMS; do : > "$PS_SMB_DIR/cpuio.$a"; done
# arm_window ARM: window's "BUSY IOPS" with that arm's recorder running beside the load
arm_window() {
	local rp started args=()
	[ "$1" = empty ] && args=(--empty-probes)
	rm -f "$PS_SMB_DIR/w.db"*
	"$P" record -o "$PS_SMB_DIR/w.db" -q "${args[@]}" --duration $((WIN + 30)) > "$PS_SMB_DIR/w.log" 2>&1 &
	rp=$!
	started=
	for _ in $(seq 100); do
		[ -s "$PS_SMB_DIR/w.db" ] && [ "$(sqlite3 "$PS_SMB_DIR/w.db" 'SELECT count(*) FROM intervals' 2> /dev/null)" -gt 0 ] 2> /dev/null && started=1 && break
		sleep 0.1
	done
	[ -n "$started" ] || { kill -INT $rp; cat "$PS_SMB_DIR/w.log" >&2; die "the recorder ($1) wrote no interval in 10 s in pair $r"; }
	sleep 1; window
	kill -INT $rp; wait $rp || { cat "$PS_SMB_DIR/w.log" >&2; die "the recorder ($1) failed in pair $r"; }
}
# A pair counts only when every window of it held the offered rate within 2 % (a load that
# falls behind, or catches up, does other work per IO); the part fails when more than a tenth
# of the pairs did not. Which windows missed it is counted per configuration: misses that
# fall on one arm would bias what is left.
skipped=0
declare -A offs=()
nc=${#confs[@]}
for r in $(seq "$PAIRS"); do
	# The order rotates every pair, so that drift hits all alike (with one arm: flips). With
	# more, the direction also turns every nc pairs, so that each configuration follows each
	# other one equally often (what stopping a recorder leaves lands on all alike).
	declare -A win=()	# emptied for every pair
	for j in $(seq 0 $((nc - 1))); do
		k=$(( (j + r - 1) % nc ))
		[ "$nc" -gt 2 ] && [ $(( (r - 1) / nc % 2 )) = 1 ] && k=$(( (r - 1 - j + nc) % nc ))
		c=${confs[$k]}
		if [ "$c" = base ]; then
			sleep 2; win[base]=$(window)
		else
			win[$c]=$(arm_window "$c") || exit 1
		fi
	done
	kill -0 $lp 2> /dev/null || { tail -5 "$PS_SMB_DIR/cpuio.load"; die "the load ended early, in pair $r"; }
	off=
	for c in "${confs[@]}"; do
		awk -v x="${win[$c]#* }" -v r="$RATE" 'BEGIN { exit !(x < 0.98 * r || x > 1.02 * r) }' &&
			off="${off:+$off,} $c at ${win[$c]#* } IOPS" && offs[$c]=$(( ${offs[$c]:-0} + 1 ))
	done
	if [ -n "$off" ]; then
		echo "  pair $r: not counted, a window off the rate of $RATE IOPS by more than 2 %:$off"
		skipped=$((skipped + 1))
		continue
	fi
	read -r b bi <<< "${win[base]}"
	line="  pair $r: busy CPUs without $b ($bi IOPS)"
	for a in $ARMS; do
		read -r w wi <<< "${win[$a]}"
		# CPU per IO of each window; 1 - without / with is the IOPS lost at saturation
		l=$(awk -v b="$b" -v bi="$bi" -v w="$w" -v wi="$wi" 'BEGIN { printf "%.2f", (1 - (b / bi) / (w / wi)) * 100 }')
		line="$line, $(arm_name "$a") $w ($wi IOPS): loss at saturation $l%"
		echo "$b $bi $w $wi $l" >> "$PS_SMB_DIR/cpuio.$a"
	done
	echo "$line"
done
kill -INT $lp; wait $lp
line="  pairs counted: $((PAIRS - skipped)) of $PAIRS"
if [ "$skipped" -gt 0 ]; then
	line="$line; windows off the rate by more than 2 %:"
	for c in "${confs[@]}"; do line="$line $c ${offs[$c]:-0}"; done
fi
echo "$line"
for a in $ARMS; do
awk -v name="$(arm_name "$a")" -v tgt="$([ "$a" = rec ] && echo 1 || echo 0)" '
	# two-sided 95% quantiles of Student t, 1..30 degrees of freedom; above, the Cornish-Fisher
	# expansion around the normal 1.96 (2.0227 at 39, exact to the 4th digit)
	BEGIN { split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086 2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 2.045 2.042", t, " ") }
	{ n++; cb += $1 / $2; cw += $3 / $4; sb += $1; sw += $3; l[n] = $5; s += $5 }
	END {
		if (n < 2) { print "  fewer than 2 pairs: no interval"; exit }
		m = s / n; for (i = 1; i <= n; i++) v += (l[i] - m) ^ 2
		z = 1.96; d = n - 1
		q = d <= 30 ? t[d] : z + (z ^ 3 + z) / (4 * d) + (5 * z ^ 5 + 16 * z ^ 3 + 3 * z) / (96 * d ^ 2)
		sd = sqrt(v / (n - 1)); h = q * sd / sqrt(n)
		printf "  mean CPU per IO: without %.1f us, %s %.1f us (busy CPUs %.3f and %.3f)\n",
			cb / n * 1e6, name, cw / n * 1e6, sb / n, sw / n
		printf "  IOPS lost %s: %.2f%% (95%% interval %.2f%% .. %.2f%%, %d pairs, sd %.2f%%)%s\n",
			name == "with record" ? "while recording" : name, m, m - h, m + h, n, sd,
			!tgt ? "" : sprintf("; target <= 2%%: %s", (m + h <= 2) ? "met" : (m - h > 2) ? "NOT met" : "not resolved (the interval spans 2%)")
	}' "$PS_SMB_DIR/cpuio.$a"
done
# after the figures: a run that fails here still shows what it measured
[ $((skipped * 10)) -le "$PAIRS" ] || die "the offered rate was not held in $skipped of $PAIRS pairs"
fi
if part size; then
# (4) What a long recording of this load costs on disk: one recorded SMB run of SIZE_SECS; the
# tables that grow with every interval, per table (dbstat), over the recorded seconds, give the
# bytes per hour and per day; tags, stacks and meta are written once and bounded.
SIZE_SECS=${PS_BENCH_SIZE_SECS:-120}
echo "== trace size: record at defaults during one ${SIZE_SECS}s SMB run"
db=$PS_SMB_DIR/size.db
out=$("$P" record -o "$db" --force -q --duration $((SIZE_SECS + 5)) -- \
	$PS_SMB_CLIENT_EXEC "$P" load "$PS_SMB_URL" --user "$PS_SMB_USER" --bs 8k --qd 16 \
	--workers 2 --duration "$SIZE_SECS" --ramp 2 --quiet 2>&1)
[ -n "$(iops "$out")" ] || { echo "$out" | tail -5; die "recorded run failed (size)"; }
secs=$(sqlite3 "$db" 'SELECT max(t_ns) / 1e9 FROM intervals')
sqlite3 -separator ' ' "$db" "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC" |
	awk -v secs="$secs" -v file="$(stat -c %s "$db")" '
	$1 ~ /^(samples|sysstat|counters|slabinfo|workload|intervals)$/ { grow += $2; g[$1] = $2; next }
	{ fixed += $2 }
	END {
		h = grow / secs * 3600
		printf "  %.0f s recorded, file %.1f MB: %.1f MB grows with the intervals, %.1f MB bounded (tags, stacks, meta)\n",
			secs, file / 1e6, grow / 1e6, fixed / 1e6
		printf "  per hour %.0f MB, per day %.2f GiB (target < 2 GiB a day: %s)\n", h / 1e6,
			h * 24 / 1073741824, h * 24 < 2 * 1073741824 ? "met" : "NOT met"
		for (t in g) printf "    %-10s %5.1f MB/h\n", t, g[t] / secs * 3600 / 1e6
	}'
fi
if part reentry; then
# (5) An event that comes while one of the recorder's programs runs on the same CPU (a softirq
# inside a program) is skipped by the kernel and only counted (recursion_misses.<program>,
# docs/known-issues.md): over one recording as long as the demo's, how many, of how many.
echo "== events skipped for re-entry: record at defaults during one 60 s SMB run"
db=$PS_SMB_DIR/reentry.db
out=$("$P" record -o "$db" --force -q --duration 65 -- \
	$PS_SMB_CLIENT_EXEC "$P" load "$PS_SMB_URL" --user "$PS_SMB_USER" --bs 8k --qd 16 \
	--workers 2 --duration 60 --ramp 2 --quiet 2>&1)
[ -n "$(iops "$out")" ] || { echo "$out" | tail -5; die "recorded run failed (reentry)"; }
# counters are cumulative and written when they change: each one's last row is its total
sqlite3 -separator ' ' "$db" "SELECT name, value FROM counters c WHERE interval =
	(SELECT max(interval) FROM counters WHERE name = c.name) AND
	(name LIKE 'recursion_misses.%' OR name LIKE 'events.%')" |
	awk -v iops="$(iops "$out")" '
	{ split($1, n, "."); if (n[1] == "events") { ev[n[2]] = $2; all += $2 } else { miss[n[2]] = $2; m += $2 } }
	END {
		printf "  %d IOPS; %d of %d allocator events skipped (%.2f per million)\n", iops, m, all,
			all ? 1e6 * m / all : 0
		for (p in miss) if (miss[p]) printf "    %-20s %6d of %d\n", p, miss[p], ev[p]
	}'
fi
if part progs; then
# (7, not by default) What each program costs a run under this load (bpf_stats, in the trace:
# counters bpf_stats.<prog>.run_ns and .runs from the 3rd interval to the last with IOs), for
# empty programs, record at defaults, without sampled objects (--site-sample 65536) and without
# stacks (--stack-sample 0); rounds rotate the order. Under a real load the caches are cold,
# which a tight loop (record_cost.sh) does not show: the reference table of docs/record.md.
echo "== ns a run of each kmem program during the SMB load, $ROUNDS rounds x ${SECS}s (bpf_stats on)"
prev=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q kernel.bpf_stats_enabled=$prev; tests/smbserver.sh stop >/dev/null 2>&1; rm -rf "$PS_SMB_DIR"' EXIT
sysctl -q kernel.bpf_stats_enabled=1
PCFG=("--empty-probes" "" "--site-sample 65536" "--stack-sample 0")
PNAME=("empty programs" "record (defaults)" "--site-sample 65536" "--stack-sample 0")
declare -A PR
progs_run() { # config index: one recorded SMB run; appends "cache_alloc cache_free kmalloc kfree all"
	local c=$1 db=$PS_SMB_DIR/p.db out b line="" tn=0 tr=0 pre=""
	# shellcheck disable=SC2086
	out=$(rec_smb "$db" ${PCFG[$c]})
	[ -n "$(iops "$out")" ] || { echo "$out" | tail -5; die "recorded run failed (${PNAME[$c]})"; }
	b=$(io_window "$db" progs) || exit 1
	[ "$c" = 0 ] && pre=e_
	for p in cache_alloc cache_free kmalloc kfree; do
		local name=$p n r
		[ "$c" != 0 ] && [ "${p#cache_}" != "$p" ] && name=kmem_$p
		n=$(( $(ctr "$db" "bpf_stats.$pre$name.run_ns" "$b") - $(ctr "$db" "bpf_stats.$pre$name.run_ns" 3) ))
		r=$(( $(ctr "$db" "bpf_stats.$pre$name.runs" "$b") - $(ctr "$db" "bpf_stats.$pre$name.runs" 3) ))
		[ "$r" -gt 0 ] || die "no runs of $pre$name in the trace"
		line+=" $(awk -v n=$n -v r=$r 'BEGIN { printf "%.1f", n / r }')"
		tn=$((tn + n)); tr=$((tr + r))
	done
	PR[$c]+="$line $(awk -v n=$tn -v r=$tr 'BEGIN { printf "%.1f", n / r }')
"
}
for r in $(seq "$ROUNDS"); do
	for k in 0 1 2 3; do progs_run $(( (k + r - 1) % 4 )); done
	echo "  round $r done"
done
printf '  %-22s %16s %16s %9s %9s %9s\n' configuration kmem_cache_alloc kmem_cache_free kmalloc kfree "all four"
for c in 0 1 2 3; do
	printf '  %-22s' "${PNAME[$c]}"
	for col in 1 2 3 4 5; do
		printf ' %*s' $([ $col -le 2 ] && echo 16 || echo 9) \
			"$(awk -v k=$col 'NF { print $k }' <<< "${PR[$c]}" | med)"
	done
	echo
done
echo "  (ns a run, medians of $ROUNDS; bpf_stats adds two clock reads to every run, the empty"
echo "  programs' figure; the tp_btf dispatch is not in these figures)"
sysctl -q kernel.bpf_stats_enabled=$prev
fi
part cpu || exit 0
# The IOPS of this CPU-bound workload swing from run to run on a shared host by more than the
# recorder can cost, so also measure what the recorder takes directly: the CPU time of its
# BPF programs (kernel.bpf_stats_enabled, which adds its own clock reads: an upper bound) and of
# its process, both stored in the trace every interval (counters bpf_stats.*, recorder.cpu_ns),
# over the intervals of one recorded SMB run after its ramp. On a CPU-bound load that share of
# the machine bounds the IOPS recording can take away.
echo "== CPU taken by the recorder during an SMB run (bpf_stats on)"
prev=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q kernel.bpf_stats_enabled=$prev; tests/smbserver.sh stop >/dev/null 2>&1; rm -rf "$PS_SMB_DIR"' EXIT
sysctl -q kernel.bpf_stats_enabled=1
# cpu_run LABEL [record options]: one recorded SMB run, then its CPU figures from the trace.
cpu_run() {
	local label=$1 db=$PS_SMB_DIR/c.db out w a=3 b
	shift
	out=$(rec_smb "$db" "$@")
	w=$(iops "$out")
	[ -n "$w" ] || { echo "$out" | tail -5; die "recorded run failed ($label)"; }
	b=$(io_window "$db" cpu) || exit 1
	tq() { sqlite3 "$db" "SELECT t_ns FROM intervals WHERE idx = $1"; }
	echo "$(ctr "$db" 'bpf_stats.%.run_ns' $a) $(ctr "$db" 'bpf_stats.%.run_ns' $b) $(ctr "$db" 'bpf_stats.%.runs' $a) \
$(ctr "$db" 'bpf_stats.%.runs' $b) $(ctr "$db" recorder.cpu_ns $a) $(ctr "$db" recorder.cpu_ns $b) $(tq $a) $(tq $b) \
$(nproc)" | awk -v w="$w" -v l="$label" '{
		dt = ($8 - $7) / 1e9; rt = ($2 - $1) / 1e9; n = $4 - $3; uc = ($6 - $5) / 1e9
		if (dt <= 0 || n <= 0) { print "  " l ": no bpf_stats in the trace"; exit 1 }
		printf "  %-22s BPF %5.2f%% of a CPU (%.0f ev/s, %3.0f ns/run), process %4.2f%%, together %4.2f%% of %d CPUs; %s IOPS\n",
			l, rt / dt * 100, n / dt, rt * 1e9 / n, uc / dt * 100, (rt + uc) / dt / $9 * 100, $9, w
	}'
}
echo "  (bpf_stats adds two clock reads to every run: compare against the empty programs, whose"
echo "  ns/run is that overhead; the tp_btf dispatch itself is not in these figures: see"
echo "  record_cost.sh's added ns/event of the empty programs)"
cpu_run "empty programs" --empty-probes
cpu_run "record (defaults)"
cpu_run "record --site-sample 64" --site-sample 64
sysctl -q kernel.bpf_stats_enabled=$prev
