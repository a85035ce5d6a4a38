# SPDX-License-Identifier: GPL-2.0
# noise_start DIR SECS: starts the leak lab's noise generator (page-cache reads, process churn,
# connection churn) in the background for SECS, its scratch files and log under DIR, waits for
# it to be ready and 5 s more (past its start: the background of a server in its steady state).
# Sets noise_pid; noise_stop kills it. Needs PS_LIVE_BIN. Returns 1 with a message when the
# generator is missing or does not start.
noise_pid=
noise_start() {
	local gen=$PS_LIVE_BIN/../leaklab/noise
	[ -x "$gen" ] || { echo "FAIL: $gen missing"; return 1; }
	mkdir -p "$1/noise" || return 1
	"$gen" "$2" "$1/noise" >"$1/noise.out" 2>&1 &
	noise_pid=$!
	for _ in $(seq 100); do grep -q ready "$1/noise.out" && break; sleep 0.2; done
	grep -q ready "$1/noise.out" || { cat "$1/noise.out"; echo "FAIL: noise did not start"; return 1; }
	sleep 5
}
noise_stop() {
	[ -n "$noise_pid" ] && kill "$noise_pid" 2>/dev/null
	noise_pid=
	wait
}
