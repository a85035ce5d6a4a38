#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make leaklab: the leak lab. Each scenario (the programs of tests/leaklab/progs, and two SMB
# workloads against the private Samba server) is started, recorded with `poolscope record` for
# PS_LEAKLAB_SECS while it runs, stopped, and the verdict of `poolscope report --format json`
# (schema poolscope.report/2) is set against the scenario's known answer; then every scenario
# again with the noise generator running beside it. Prints one row per run, the precision and
# recall of `leak` and the share of right paths among the leaks found, and exits 1 when a row
# is WRONG. docs/analysis.md, "Leak lab", says what each scenario does and why its answer is
# what it is. Needs root (recording, namespaces, smbd) and jq.
#
# Env: O (build dir, default .output); PS_LEAKLAB_OUT (where every trace, report and log is
# kept, default leaklab-out); PS_LEAKLAB_SECS (recording seconds, default 30);
# PS_LEAKLAB_ONLY (scenario names or globs, space- or comma-separated; default all);
# PS_LEAKLAB_NOISE (0: without noise only, 1: with noise only, both: the default);
# PS_LEAKLAB_REPORT (the report command, run as `CMD TRACE --format json`; default
# "$O/poolscope report": another command tests the runner itself); PS_LEAKLAB_RECORD_ARGS
# (more options of every recording, split on spaces: "--backend tracefs").
# Exit: 0 every row right, 1 a row WRONG, a run that failed or a report without a verdict, 2 bad
# settings, 77 cannot run here (not root, no kernel BTF).
set -u
cd "$(dirname "$0")/../.."
O=${O:-.output}
OUT=${PS_LEAKLAB_OUT:-leaklab-out}
SECS=${PS_LEAKLAB_SECS:-30}
ONLY=${PS_LEAKLAB_ONLY:-}
NOISE=${PS_LEAKLAB_NOISE:-both}

# The scenarios, in the order they run, one a line:
#   NAME  WARM  STATE  PATH  SUSPECT  PROGRAM ARGS...
# WARM: seconds the scenario runs before its recording starts. STATE: the verdict's state
# expected: `leak`, or `!leak` for a negative, for which stable, plateau and growing are all
# right (a negative must not be called a leak; how it moves without leaking is not what it
# tests). PATH: the verdict's path must be this class or one under it (`-`: not checked).
# SUSPECT: an extended regular expression, case ignored, the first suspect's label must match
# (`-`: not checked). In ARGS, @LEN is the scenario's length (WARM + SECS + 60 s: it outlives
# the recording, even one whose start a busy machine delays, and is stopped when the recording
# ends; file_handles needs 150 descriptors per second of it), @STEP about a third of the way
# into the recording (the recorder takes a few seconds to start), @DIR a scratch directory on
# disk.
# PROGRAM `smb` is `poolscope load` of 8 KiB random reads at QD16 against the private SMB
# server, with ARGS added to its options.
# The leaks grow kernel memory by about 2 MiB/min or more, twice the 1 MiB/min a 30 s
# recording must find: tcp_unread 3 connections a second with 8 KiB queued on each (about half
# of it slab objects), tcp_noread 32 KiB/s queued into 64 connections that never read,
# file_handles 150 open files a second (their unreclaimable part alone above 1 MiB/min).
# tcp_unread_fast is the same leak at 10 connections a second (about 9 MiB/min), the network
# leak the short lab of make test checks alone: tcp_unread sits where the recorder's sampling
# makes its 30 s series a staircase that is called growing now and then (known issues).
# conn_churn runs a minute before it is recorded: TIME_WAIT entries live 60 s, so a server
# making connections fills them up for its first minute and then holds them level, and the
# recording sees that server, not its first minute. It runs after the leaks, so the entries it
# leaves expiring after it never overlap a leak's recording.
SCENARIOS='
tcp_unread       0   leak   network        tcp|sock|skb                             tcp_unread 3 8192 @LEN
tcp_unread_fast  0   leak   network        tcp|sock|skb                             tcp_unread 10 8192 @LEN
tcp_noread       0   leak   network        tcp|sock|skb                             tcp_noread 64 32768 @LEN
file_handles     0   leak   file-services  filp|empty_file|file_alloc|inode|dentry  file_handles 150 @LEN @DIR
pagecache        0   !leak  -              -                                        pagecache 1024 @LEN @DIR
anon_grow        0   !leak  -              -                                        anon_grow 4 @LEN
step             0   !leak  -              -                                        step @STEP 200 65536 @LEN
conn_churn       65  !leak  -              -                                        conn_churn 100 @LEN
proc_churn       0   !leak  -              -                                        proc_churn 50 @LEN
smb_healthy      5   !leak  -              -                                        smb
smb_handle_leak  5   leak   file-services  filp|empty_file|file_alloc|inode|dentry  smb --inject handle-leak
'
# The noise generator runs through a whole round, started this long before its first recording
# (its own connection churn's TIME_WAIT entries level off after 60 s, as conn_churn's do).
NOISE_WARM=65

die() { echo "leaklab: $1" >&2; exit "${2:-1}"; }

[[ "$SECS" =~ ^[0-9]+$ ]] && [ "$SECS" -ge 5 ] || die "PS_LEAKLAB_SECS='$SECS': expected seconds >= 5" 2
case $NOISE in
0) rounds="quiet";; 1) rounds="noise";; both) rounds="quiet noise";;
*) die "PS_LEAKLAB_NOISE='$NOISE': expected 0, 1 or both" 2;;
esac
read -r -a only <<< "${ONLY//,/ }"
selected() { # name; the patterns are globs on purpose
	local g
	[ ${#only[@]} = 0 ] && return 0
	for g in "${only[@]}"; do
		[[ $1 == $g ]] && return 0
	done
	return 1
}
read -r -a names <<< "$(awk 'NF { printf "%s ", $1 }' <<< "$SCENARIOS")"
for g in "${only[@]}"; do
	for n in "${names[@]}"; do [[ $n == $g ]] && continue 2; done
	die "PS_LEAKLAB_ONLY: '$g' names no scenario (scenarios: ${names[*]})" 2
done

[ "$(id -u)" = 0 ] || die "skip: needs root (recording, namespaces, smbd)" 77
[ -r /sys/kernel/btf/vmlinux ] || die "skip: no kernel BTF" 77
command -v jq >/dev/null || die "jq missing (make deps)"
P=$(cd "$O" 2>/dev/null && pwd)/poolscope
B=$(cd "$O" 2>/dev/null && pwd)/tests/leaklab
[ -x "$P" ] || die "$O/poolscope missing: run make first"
for c in record report load; do
	"$P" help "$c" >/dev/null 2>&1 || die "this poolscope has no '$c' command"
done
for p in $(awk 'NF && $6 != "smb" { print $6 }' <<< "$SCENARIOS") noise; do
	[ -x "$B/$p" ] || die "$B/$p missing: run make first"
done
if [ -n "${PS_LEAKLAB_REPORT:-}" ]; then
	read -r -a REPORT <<< "$PS_LEAKLAB_REPORT"
else
	REPORT=("$P" report)
fi

mkdir -p "$OUT" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
SCRATCH=$OUT/scratch
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" || die "cannot create $SCRATCH"
# pagecache and noise read files back through the page cache: tmpfs has none to drop
[ "$(stat -f -c %T "$SCRATCH")" != tmpfs ] || die "$SCRATCH is on tmpfs: PS_LEAKLAB_OUT must be on a disk"

SCEN_PID= NOISE_PID= SMB_DIR= PS_SMB_PID=
# Stops the SMB server this script started. smbserver.sh stop empties the namespaces psrv0 and
# pscli0 whoever is in them: when our smbd is gone, another test's start has taken them over
# (its start stops what was there), and only our pin helper is left to stop.
smb_stop() {
	[ -n "$SMB_DIR" ] || return 0
	if [ -n "$PS_SMB_PID" ] && kill -0 "$PS_SMB_PID" 2>/dev/null; then
		PS_SMB_DIR=$SMB_DIR tests/smbserver.sh stop >/dev/null 2>&1
	elif [ -f "$SMB_DIR/run/pin.pid" ]; then
		kill "$(cat "$SMB_DIR/run/pin.pid")" 2>/dev/null
	fi
	rm -rf "$SMB_DIR"
	SMB_DIR= PS_SMB_PID=
}
cleanup() {
	[ -n "$SCEN_PID" ] && kill -TERM "$SCEN_PID" 2>/dev/null && wait "$SCEN_PID" 2>/dev/null
	[ -n "$NOISE_PID" ] && kill -TERM "$NOISE_PID" 2>/dev/null && wait "$NOISE_PID" 2>/dev/null
	smb_stop
	rm -rf "$SCRATCH"
}
trap cleanup EXIT
trap 'echo "leaklab: interrupted" >&2; exit 130' INT TERM

# The report must carry a verdict: checked once on a fixture trace rather than after the first
# recording.
"$O/tests/mkfixtures" "$SCRATCH" >/dev/null 2>&1 || die "$O/tests/mkfixtures failed: run make first"
"${REPORT[@]}" "$SCRATCH/linux.db" --format json > "$SCRATCH/check.json" 2>/dev/null
if ! jq -e '.verdict.state' "$SCRATCH/check.json" >/dev/null 2>&1; then
	die "'${REPORT[*]} TRACE --format json' gives no verdict.state (schema '$(jq -r '.schema // "none"' \
		"$SCRATCH/check.json" 2>/dev/null)', the lab reads poolscope.report/2)"
fi
rm -f "$SCRATCH"/*

# waits (bounded by secs) for a line matching the pattern in a file while pid lives; 0 or 1
wait_line() { # file pattern pid secs
	local i
	for i in $(seq $(( $4 * 10 ))); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# stops a process started by this script and waits for it (SIGKILL after 30 s)
stop_pid() {
	local i
	kill -TERM "$1" 2>/dev/null || { wait "$1" 2>/dev/null; return; }
	for i in $(seq 300); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# Starts the scenario in the background (SCEN_PID) and waits until it is ready. 0, or 1 with
# the reason in $why; 2 with the reason in $why for a skip.
start_scenario() { # id prog args...
	local id=$1 prog=$2 env
	shift 2
	# a file left by an earlier run of the same id must not answer for this one
	rm -f "$OUT/$id.out"
	if [ "$prog" != smb ]; then
		"$B/$prog" "$@" > "$OUT/$id.out" 2>&1 &
		SCEN_PID=$!
		wait_line "$OUT/$id.out" "^lab: $prog ready$" $SCEN_PID 120 && return 0
		why="$prog did not get ready: $(tail -1 "$OUT/$id.out")"
		return 1
	fi
	if [ "${1:-}" = --inject ] && ! "$P" load --help 2>&1 | grep -q -- --inject; then
		why="skip: load has no --inject"
		return 2
	fi
	# SMB: the private server in its network namespaces, which smbserver.sh takes over: another
	# server using them (a test, the demo) would be stopped, so that is a skip
	if ip netns list 2>/dev/null | grep -qw -e psrv0 -e pscli0; then
		why="skip: another SMB test server is running (network namespace psrv0/pscli0)"
		return 2
	fi
	SMB_DIR=$(mktemp -d /tmp/ps-leaklab-smb.XXXXXX) || { why="mktemp failed"; return 1; }
	env=$(PS_SMB_DIR=$SMB_DIR PS_PIN=$(cd "$O" && pwd)/tests/live/pspin \
		tests/smbserver.sh start --netns --size 256M 2> "$OUT/$id.smbserver.log") || {
		why="SMB server did not start: $(tail -1 "$OUT/$id.smbserver.log")"; return 1; }
	eval "$env"
	# PS_SMB_CLIENT_EXEC is a command prefix (empty in loopback mode): split on purpose
	$PS_SMB_CLIENT_EXEC "$P" load "$PS_SMB_URL" --user "$PS_SMB_USER" --bs 8k --qd 16 --random \
		--read --ramp 2 --duration "$LEN" "$@" > "$OUT/$id.out" 2>&1 &
	SCEN_PID=$!
	# ready: the first measured second (ramp-up lines say "ramp")
	wait_line "$OUT/$id.out" '^ *[0-9][0-9.]*s .*[0-9]$' $SCEN_PID 60 && return 0
	why="load did not start: $(tail -1 "$OUT/$id.out")"
	return 1
}

stop_scenario() {
	[ -n "$SCEN_PID" ] && stop_pid "$SCEN_PID"
	SCEN_PID=
	smb_stop
}

rows=()	# one tab-separated line per run: id noise exp_state exp_path got_state got_path tag result
# Runs one scenario and judges it: appends a row to rows, prints it.
run_one() { # noise(yes|no) name warm state path suspect prog args...
	local noisy=$1 name=$2 warm=$3 st=$4 pa=$5 su=$6 prog=$7 id args=() a rc
	local gs=- gp=- gt=- res why=
	shift 7
	id=$name
	[ "$noisy" = yes ] && id=$name+noise
	LEN=$((warm + SECS + 60))
	for a in "$@"; do
		a=${a//@LEN/$LEN}
		a=${a//@STEP/$((warm + 4 + SECS / 3))}
		a=${a//@DIR/$SCRATCH}
		args+=("$a")
	done
	rm -f "$OUT/$id".*
	if [ "$noisy" = yes ] && ! kill -0 "$NOISE_PID" 2>/dev/null; then
		why="the noise generator is not running: $(tail -1 "$OUT/noise.out")"
		res=WRONG
	else
		start_scenario "$id" "$prog" "${args[@]}"
		rc=$?
		if [ $rc = 2 ]; then
			res=skip
		elif [ $rc = 0 ]; then
			sleep "$warm"
			# shellcheck disable=SC2086
			if ! "$P" record -o "$OUT/$id.db" --label "$id" --duration "$SECS" -q \
				${PS_LEAKLAB_RECORD_ARGS:-} > "$OUT/$id.record.log" 2>&1; then
				why="record failed: $(tail -1 "$OUT/$id.record.log")"
			elif [ "$prog" = smb ] && ! kill -0 "$PS_SMB_PID" 2>/dev/null; then
				why="the SMB server went away during the run (another SMB test starting takes psrv0/pscli0 over)"
			elif ! kill -0 "$SCEN_PID" 2>/dev/null; then
				why="$prog ended before the recording did: $(tail -1 "$OUT/$id.out")"
			fi
		fi
		stop_scenario
		if [ -z "$why" ]; then
			"$P" report "$OUT/$id.db" > "$OUT/$id.txt" 2>&1
			if ! "${REPORT[@]}" "$OUT/$id.db" --format json > "$OUT/$id.json" 2> "$OUT/$id.report.log"; then
				why="report failed: $(tail -1 "$OUT/$id.report.log")"
			elif ! gs=$(jq -er '.verdict.state' "$OUT/$id.json" 2>/dev/null); then
				why="no verdict.state in $id.json"
				gs=-
			else
				gp=$(jq -r '.verdict.path // "-"' "$OUT/$id.json")
				gt=$(jq -r '.verdict.tag // "-"' "$OUT/$id.json")
			fi
		fi
		if [ -n "${res:-}" ]; then
			:
		elif [ -n "$why" ]; then
			res=WRONG
		elif [ "$st" = leak ]; then
			res=ok
			[ "$gs" = leak ] || res=WRONG
			[ "$pa" = - ] || [ "$gp" = "$pa" ] || [[ "$gp" == "$pa"/* ]] || res=WRONG
			[ "$su" = - ] || grep -Eiq -- "$su" <<< "$gt" || res=WRONG
		else
			case $gs in stable|plateau|growing) res=ok;; *) res=WRONG;; esac
		fi
	fi
	local exp="$st $pa"
	[ "$st" = '!leak' ] && exp="not leak"
	rows+=("$id	$noisy	$st	$pa	$gs	$gp	$gt	$res")
	printf '%-16s %-5s %-22s %-8s %-25s %-42s %s\n' "$name" "$noisy" "$exp" "$gs" "$gp" "$gt" "$res" |
		tee -a "$OUT/table.txt"
	[ -n "$why" ] && echo "  $why" | tee -a "$OUT/table.txt"
	# a wrong verdict says why in its own words (the traces of a test run may not be kept)
	if [ "$res" = WRONG ] && [ -z "$why" ] && [ -s "$OUT/$id.json" ]; then
		echo "  verdict: $(jq -r '.verdict.summary // "-"' "$OUT/$id.json")" |
			tee -a "$OUT/table.txt"
	fi
	return 0
}

start=$(date +%s)
: > "$OUT/table.txt"
echo "leaklab: ${SECS}s recordings, rounds: $rounds; traces and reports in $OUT"
printf '%-16s %-5s %-22s %-8s %-25s %-42s %s\n' scenario noise expected got path "first suspect" result |
	tee -a "$OUT/table.txt"
for round in $rounds; do
	noisy=no
	if [ $round = noise ]; then
		noisy=yes
		# one generator for the whole round, long enough for all of it; stopped at its end
		"$B/noise" 86400 "$SCRATCH" > "$OUT/noise.out" 2>&1 &
		NOISE_PID=$!
		wait_line "$OUT/noise.out" '^lab: noise ready$' $NOISE_PID 120 ||
			echo "leaklab: the noise generator did not start: $(tail -1 "$OUT/noise.out")" >&2
		sleep $NOISE_WARM
	fi
	while read -r name warm st pa su prog rest; do
		[ -n "$name" ] && selected "$name" || continue
		# not the table on its standard input: what it runs must not read the table's lines
		run_one $noisy "$name" "$warm" "$st" "$pa" "$su" "$prog" $rest < /dev/null
		sleep 3	# RCU-deferred frees of the scenario just released
	done <<< "$SCENARIOS"
	if [ -n "$NOISE_PID" ]; then
		stop_pid "$NOISE_PID"
		NOISE_PID=
	fi
done

printf '%s\n' "${rows[@]}" > "$OUT/results.tsv"
find "$OUT" -maxdepth 1 -name '*.log' -empty -delete
# precision and recall of `leak` over the rows that ran (a failed run counts as not found);
# among the leaks found, the share whose path is right
summary=$(printf '%s\n' "${rows[@]}" | awk -F'\t' '
	$8 == "skip" { skip++; next }
	{ n++; if ($8 != "ok") wrong++ }
	$3 == "leak" && $5 == "leak" { tp++; if ($4 == "-" || $6 == $4 || index($6, $4 "/") == 1) pr++ }
	$3 != "leak" && $5 == "leak" { fp++ }
	$3 == "leak" && $5 != "leak" { fn++ }
	function frac(a, b) { return b ? sprintf("%.2f (%d/%d)", a / b, a, b) : "- (0/0)" }
	END {
		printf "leak precision %s, recall %s; right path %s of the leaks found\n",
			frac(tp, tp + fp), frac(tp, tp + fn), frac(pr, tp)
		printf "%d runs, %d WRONG, %d skipped\n", n, wrong, skip
	}')
echo "$summary" | tee -a "$OUT/table.txt"
echo "leaklab: done in $(( $(date +%s) - start ))s"
! grep -q $'\tWRONG$' "$OUT/results.tsv"
