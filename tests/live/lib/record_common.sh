# shellcheck shell=bash
# Helpers for the recorder's live tests (sourced, not run: tests/run.sh only runs
# tests/live/*.sh). They read the trace with the sqlite3 CLI while the recorder writes it (WAL).

: "${POOLSCOPE:?POOLSCOPE must point at the poolscope binary}"
: "${PS_LIVE_BIN:?PS_LIVE_BIN must point at the built live-test programs}"

ps_need_root() {
	if [ "$(id -u)" != 0 ]; then echo "skip: needs root"; exit 77; fi
	if [ ! -r /sys/kernel/btf/vmlinux ]; then echo "skip: no kernel BTF"; exit 77; fi
	command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 CLI missing (make deps)"; exit 1; }
}

q() { sqlite3 -batch -noheader "$1" "$2"; }

# ps_test_dir TEMPLATE: a temporary directory in $tmp (mktemp -d TEMPLATE) and its trace path in
# $db; at exit the leak program ($LEAK_PID, when set) is killed, the recorder stopped and $tmp
# removed (kept when PS_KEEP is set, to look at the trace).
ps_test_dir() {
	tmp=$(mktemp -d "$1") || exit 1
	db=$tmp/run.db
	LEAK_PID=
	trap ps_test_cleanup EXIT
}
ps_test_cleanup() {
	[ -n "$LEAK_PID" ] && kill "$LEAK_PID" 2>/dev/null && wait "$LEAK_PID" 2>/dev/null
	ps_stop_recorder >/dev/null 2>&1
	[ -n "${PS_KEEP:-}" ] || rm -rf "$tmp"
}

# Highest committed interval (or -1).
# (The sqlite3 CLI creates a missing file, which would then make the recorder refuse it.)
ps_last_idx() {
	[ -s "$1" ] || { echo -1; return; }
	q "$1" "SELECT coalesce(max(idx), -1) FROM intervals" 2>/dev/null || echo -1
}

# Waits (bounded) for the first committed interval that began after this call, and prints its
# index: its maps were read after everything the test did before the call. The next committed
# interval is not enough: the recorder reads the maps at the start of an interval and commits at
# its end, so an interval committed after the call may have been read before it.
ps_next_idx() {
	local db=$1 t n i
	t=$(date +%s%N)
	for i in $(seq 1 100); do
		if [ -s "$db" ]; then
			n=$(q "$db" "SELECT coalesce(min(idx), -1) FROM intervals WHERE wall_ns >= $t" \
				2>/dev/null) || n=-1
			if [ "${n:--1}" -ge 0 ]; then echo "$n"; return 0; fi
		fi
		sleep 0.1
	done
	echo "FAIL: no interval began in $db in the 10 s after $t" >&2
	return 1
}

# Starts `poolscope record` in the background (REC_PID) and waits for its baseline interval.
ps_start_recorder() {
	local db=$1; shift
	"$POOLSCOPE" record -o "$db" -q "$@" 2>"$db.err" &
	REC_PID=$!
	for i in $(seq 1 100); do
		[ "$(ps_last_idx "$db")" -ge 0 ] && return 0
		if ! kill -0 $REC_PID 2>/dev/null; then
			echo "FAIL: recorder exited: $(cat "$db.err")"; return 1
		fi
		sleep 0.1
	done
	echo "FAIL: recorder wrote no interval in 10 s: $(cat "$db.err")"
	return 1
}

# ps_start_ready VAR OUT CMD...: runs a leak program in the background, its pid in the variable
# VAR (for the caller's cleanup, also when this fails) and its output in OUT (removed first, so
# that an earlier run's line cannot answer), and waits up to 30 s for the "ready" line it prints
# once it holds what it made. 0 when it did; else 1, with what it printed and where it is.
ps_start_ready() {
	local var=$1 out=$2 pid i
	shift 2
	rm -f "$out"
	"$@" > "$out" 2>&1 &
	pid=$!
	printf -v "$var" '%s' "$pid"
	for i in $(seq 1 300); do
		grep -q '^ready' "$out" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q '^ready' "$out" 2>/dev/null && return 0
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "FAIL: $(basename "$1") exited before it was ready: '$(cat "$out")'"
		return 1
	fi
	echo "FAIL: $(basename "$1") not ready in 30 s: '$(cat "$out")'; its state:" \
		"$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)," \
		"$(ls "/proc/$pid/fd" 2>/dev/null | wc -l) descriptors, in" \
		"$(cat "/proc/$pid/wchan" 2>/dev/null); kernel stack:" \
		"$(tr '\n' ' ' 2>/dev/null < "/proc/$pid/stack")"
	return 1
}

ps_stop_recorder() {
	[ -n "${REC_PID:-}" ] || return 0
	kill -INT $REC_PID 2>/dev/null
	wait $REC_PID
	local rc=$?
	REC_PID=
	return $rc
}

# The recorder writes counter and slabinfo rows only when they changed (meta sparse_series):
# a series' value at interval idx is that of its last row at or before idx.
# ctr_sql NAME IDX: the SQL expression of counter NAME's value at IDX (0 before its first row).
ctr_sql() {
	echo "coalesce((SELECT value FROM counters WHERE name = '$1' AND interval <= $2
		ORDER BY interval DESC LIMIT 1), 0)"
}
counter_at() { q "$1" "SELECT $(ctr_sql "$2" "$3")"; } # db name idx

# Exact tracked live objects of a slab cache (as /proc/slabinfo names it) at interval idx.
class_live() {
	q "$1" "SELECT $(ctr_sql "class.$2.allocs" "$3") - $(ctr_sql "class.$2.frees" "$3")"
}

class_counter() { counter_at "$1" "class.$2.$4" "$3"; }

slab_active() {
	q "$1" "SELECT coalesce((SELECT active_objs FROM slabinfo WHERE cache = '$2' AND interval <= $3
		ORDER BY interval DESC LIMIT 1), 0)"
}

# Sum of a column of tags matching a WHERE clause at interval idx (live carried forward).
tag_sum() { # db col where idx
	q "$1" "SELECT coalesce(sum(s.$2), 0) FROM tags t JOIN samples s ON s.tag = t.id
		WHERE ($3) AND s.interval = (SELECT max(s2.interval) FROM samples s2
			WHERE s2.tag = t.id AND s2.interval <= $4)"
}

# Flushes per-CPU slabs and sheaves so /proc/slabinfo active_objs counts only objects in use.
ps_shrink() { for c in "$@"; do echo 1 > "/sys/kernel/slab/$c/shrink" 2>/dev/null || true; done; }

# within TRACKED TRUTH PCT MIN [SLACK]: |tracked - truth| <= pct% of |truth| + SLACK, and
# |truth| >= MIN.
within() {
	awk -v a="$1" -v b="$2" -v p="$3" -v m="$4" -v s="${5:-0}" 'BEGIN {
		d = a - b; if (d < 0) d = -d; bb = b < 0 ? -b : b;
		exit !(bb >= m && d <= p / 100 * bb + s) }'
}

# Allocator events the kernel ran none of the recorder's programs for between two intervals:
# a tracing program runs once per CPU at a time, and an allocation or free in a softirq that
# an interrupt started inside the program is skipped and counted in
# bpf_prog_info.recursion_misses (docs/record.md, "Events lost to re-entry"; how often:
# docs/known-issues.md). Each lost event moves one object of one class, so a class count may
# be off by at most this many.
lost_events() { # db from to
	q "$1" "SELECT coalesce(sum(
		coalesce((SELECT value FROM counters c WHERE c.name = n.name AND c.interval <= $3
			ORDER BY c.interval DESC LIMIT 1), 0) -
		coalesce((SELECT value FROM counters c WHERE c.name = n.name AND c.interval <= $2
			ORDER BY c.interval DESC LIMIT 1), 0)), 0)
		FROM (SELECT DISTINCT name FROM counters WHERE name LIKE 'recursion_misses%') n"
}

# The same for a call-site tag sampled 1 in S and scaled by S: a lost free moves the tag by S
# when its object was sampled, M on average for M lost events; the slack allows four standard
# deviations (4 sqrt(M S)) and one sample more. 0 when nothing was lost.
lost_tag_slack() { # M S
	awk -v m="$1" -v s="$2" 'BEGIN { if (m <= 0) print 0; else printf "%d\n", m + 4 * sqrt(m * s) + s }'
}

fails=0
check() { # description, then a command
	local what=$1; shift
	if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

# Current active objects of a cache in /proc/slabinfo.
proc_active() { awk -v c="$1" '$1 == c { print $2 }' /proc/slabinfo; }

# After a release: shrinks and waits (up to 8 s, RCU-deferred frees) until every cache given as
# NAME=BASE is back within TOL objects of BASE.
ps_wait_released() { # tol name=base...
	local tol=$1 ok i kv; shift
	for i in $(seq 1 40); do
		ok=1
		for kv in "$@"; do
			ps_shrink "${kv%%=*}"
			local d=$(( $(proc_active "${kv%%=*}") - ${kv#*=} ))
			[ ${d#-} -le "$tol" ] || ok=0
		done
		[ $ok = 1 ] && return 0
		sleep 0.2
	done
	return 0	# the checks that follow report what is still there
}
