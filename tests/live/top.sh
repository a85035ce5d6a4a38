#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Live: poolscope top recording by itself, in a real terminal (tmux), while 15000 files are held open
# and the leak lab's noise runs: the screen counts intervals, shows filp among the kernel's
# growers once the files are open, q ends it with exit 0 and takes its recorder and temporary
# trace with it. Then top beside `record -o`: it follows the trace the recorder writes.
set -u
: "${POOLSCOPE:?POOLSCOPE not set}" "${PS_LIVE_BIN:?PS_LIVE_BIN not set}"
. "$(dirname "$0")/lib/record_common.sh"
. "$(dirname "$0")/lib/noise.sh"
command -v tmux > /dev/null || { echo "FAIL: tmux not found (make deps installs it)"; exit 1; }
T=$(mktemp -d)
export TMUX_TMPDIR=$T
S=pstoplive
trap 'tmux kill-server 2> /dev/null; noise_stop; kill $lp $rp 2> /dev/null; rm -rf "$T"' EXIT
lp= rp=
noise_start "$T" 90 || exit 1
screen() { tmux capture-pane -p -t $S; }
wait_for() { # pattern, seconds
	for _ in $(seq $(($2 * 10))); do screen | grep -q -- "$1" && return 0; sleep 0.1; done
	return 1
}
intervals() { screen | sed -n 's/.* \([0-9]*\) intervals,.*/\1/p'; }
before=$(ls -d /tmp/poolscope-top.* 2> /dev/null | wc -l)

tmux new-session -d -s $S -x 110 -y 30 "'$POOLSCOPE' top --sort growth; echo EXIT=\$?; sleep 120"
wait_for ' [1-9][0-9]* intervals,' 30 || { echo "FAIL: top never showed an interval: $(screen)"; exit 1; }
echo "ok: top records by itself: $(screen | head -1)"
mkdir "$T/d"
ps_start_ready lp "$T/leak.out" "$PS_LIVE_BIN/fileleak" 15000 60 "$T/d" || exit 1
if wait_for '^filp@' 15; then echo "ok: filp among the growers: $(screen | grep '^filp@' | head -1)"
else echo "FAIL: no filp row 15 s after 15000 files were opened:"; screen; exit 1; fi
n1=$(intervals); sleep 2.5; n2=$(intervals)
[ "$n2" -gt "$n1" ] || { echo "FAIL: intervals $n1 then $n2: the screen does not refresh"; exit 1; }
echo "ok: refreshes ($n1 -> $n2 intervals)"
tmux send-keys -t $S q
wait_for '^EXIT=0' 10 || { echo "FAIL: q did not end top with 0: $(screen | tail -3)"; exit 1; }
sleep 0.5
if pgrep -f 'poolscope record -o /tmp/poolscope-top' > /dev/null; then
	echo "FAIL: top's recorder still runs after q"; exit 1
fi
after=$(ls -d /tmp/poolscope-top.* 2> /dev/null | wc -l)
[ "$after" -le "$before" ] || { echo "FAIL: top left its temporary trace: $(ls -d /tmp/poolscope-top.*)"; exit 1; }
echo "ok: q stops the recorder and removes the temporary trace"
tmux kill-session -t $S
kill $lp 2> /dev/null; wait $lp 2> /dev/null; lp=

# beside record -o: top follows the file the recorder writes
"$POOLSCOPE" record -o "$T/run.db" -q --duration 15 > "$T/rec.out" 2>&1 &
rp=$!
tmux new-session -d -s $S -x 110 -y 30 "'$POOLSCOPE' top '$T/run.db'; echo EXIT=\$?; sleep 120"
wait_for ' [1-9][0-9]* intervals,' 20 || { echo "FAIL: top beside record showed no interval: $(screen)"; exit 1; }
n1=$(intervals); sleep 3; n2=$(intervals)
[ "$n2" -gt "$n1" ] || { echo "FAIL: beside record: intervals $n1 then $n2"; exit 1; }
echo "ok: top follows record -o ($n1 -> $n2 intervals)"
tmux send-keys -t $S q
wait_for '^EXIT=0' 10 || { echo "FAIL: q beside record: $(screen | tail -3)"; exit 1; }
kill -INT $rp; wait $rp; rp=
"$POOLSCOPE" report "$T/run.db" > /dev/null || { echo "FAIL: the trace top read while it was written does not report"; exit 1; }
echo "ok: the recorder's trace is whole after top read it"
