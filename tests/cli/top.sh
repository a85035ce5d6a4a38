#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# poolscope top in a real terminal: tmux runs it in a 100x20 pane on the fixture trace and
# capture-pane reads the screen as a user sees it: the status line, the verdict so far, the
# rows in the order of the sort key, each key's effect (sort, kind, path, tag glob, clear), a
# frame that never outgrows the pane, q restoring the terminal with exit 0. Then it follows a
# trace while `poolscope load --trace` writes it (the interval count goes up), and --batch
# prints plain frames. The live test (tests/live/top.sh) runs it recording by itself. No root.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
. tests/cli/lib/fixtures.sh clitop
failed=0
ok() { echo "ok $1${2:+ $2}"; }
bad() { echo "FAIL $1: $2"; failed=1; }
command -v tmux > /dev/null || { echo "FAIL tmux not found (make deps installs it)"; exit 1; }
export TMUX_TMPDIR=$d	# a private tmux server, gone with $d
S=pstop
trap 'tmux kill-server 2> /dev/null; rm -rf "$d"' EXIT
screen() { tmux capture-pane -p -t $S; }
# waits up to 5 s for the screen to show a pattern
wait_for() {
	for _ in $(seq 50); do screen | grep -q -- "$1" && return 0; sleep 0.1; done
	return 1
}
# the first data row's tag (row 6 of the frame)
first_row() { screen | sed -n 6p | awk '{ print $1 }'; }
rows_col() { screen | sed -n '6,$p' | awk -v c="$1" 'NF >= 6 { print $c }'; }

tmux new-session -d -s $S -x 100 -y 20 \
	"'$POOLSCOPE' top '$d/linux.db' --domain all -i 300ms; echo EXIT=\$?; sleep 60"
if wait_for '^poolscope top '; then ok starts; else bad starts "$(screen)"; fi
s=$(screen)
grep -q "30 s, 30 intervals, drops 37" <<< "$s" && ok status-line || bad status-line "$(head -1 <<< "$s")"
grep -q "^LEAK on the file-services path" <<< "$s" && ok verdict-so-far || bad verdict-so-far "$(sed -n 2p <<< "$s")"
[ "$(first_row)" = "kmalloc-256@smb2_read+0x1a2" ] && ok sort-rate-first || bad sort-rate-first "$(first_row)"
w=$(screen | awk '{ if (length > m) m = length } END { print m }')
[ "$w" -le 100 ] && [ "$(screen | wc -l)" -le 20 ] && ok fits-pane || bad fits-pane "width $w"

# g: the GROWTH column (the 5th) in descending order
tmux send-keys -t $S g
if wait_for '^sort growth '; then
	screen | sed -n '6,$p' | python3 -c '
import sys
u = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
rows = [l.split() for l in sys.stdin if len(l.split()) >= 9]
g = [float(r[5]) * u[r[6]] for r in rows]
sys.exit(0 if len(g) > 3 and g == sorted(g, reverse=True) else 1)' &&
		ok key-sort-growth || bad key-sort-growth "GROWTH not in descending order: $(screen)"
else bad key-sort-growth "$(screen | sed -n 4p)"; fi
tmux send-keys -t $S k
if wait_for 'kind slab'; then
	kinds=$(rows_col 2 | sort -u | paste -sd' ')
	[ "$kinds" = slab ] && ok key-kind || bad key-kind "kinds shown: $kinds"
else bad key-kind "no 'kind slab' after k"; fi
tmux send-keys -t $S c
wait_for 'kind all' && ok key-clear || bad key-clear "$(screen | sed -n 4p)"
tmux send-keys -t $S p
if wait_for 'path [a-z]'; then
	p=$(screen | sed -n 4p | sed 's/.*path \([^ ]*\).*/\1/')
	paths=$(rows_col 3 | sort -u | paste -sd' ')
	[ -n "$p" ] && [ "$paths" = "$p" ] && ok key-path "($p)" || bad key-path "path $p, rows of $paths"
else bad key-path "no path after p"; fi
tmux send-keys -t $S c / k m a l l o c - '*' Enter
if wait_for 'tag kmalloc-\*'; then
	tags=$(rows_col 1 | grep -vc '^kmalloc-')
	[ "$tags" = 0 ] && ok key-glob || bad key-glob "$tags rows not kmalloc-*"
else bad key-glob "no glob after /"; fi
tmux send-keys -t $S l
wait_for '^sort live ' && [ "$(first_row)" = "kmalloc-256@smb2_read+0x1a2" ] && ok key-sort-live ||
	bad key-sort-live "$(first_row)"
tmux send-keys -t $S q
if wait_for '^EXIT=0'; then
	# the alternate screen is left: what was there before top is back, no frame remains
	screen | grep -q '^TAG ' && bad quit "the frame is still on the screen" || ok quit
else bad quit "no EXIT=0 after q: $(screen | tail -3)"; fi
tmux kill-session -t $S

# following a trace while it is written: load --trace commits an interval a second
dd if=/dev/zero of="$d/file" bs=1M count=8 status=none
"$POOLSCOPE" load "$d/file" --bs 8k --qd 4 --duration 6 --trace "$d/live.db" --quiet > /dev/null 2>&1 &
lp=$!
tmux new-session -d -s $S -x 100 -y 20 "'$POOLSCOPE' top '$d/live.db' -i 300ms; echo EXIT=\$?; sleep 60"
n1= n2=
for _ in $(seq 40); do n1=$(screen | sed -n 's/.* \([0-9]*\) intervals,.*/\1/p'); [ -n "$n1" ] && break; sleep 0.1; done
sleep 2.5
n2=$(screen | sed -n 's/.* \([0-9]*\) intervals,.*/\1/p')
if [ -n "$n1" ] && [ -n "$n2" ] && [ "$n2" -gt "$n1" ]; then ok follows-growing-trace "($n1 -> $n2 intervals)"
else bad follows-growing-trace "intervals '$n1' then '$n2': $(screen | head -3)"; fi
tmux send-keys -t $S q
wait_for '^EXIT=0' && ok follow-quit || bad follow-quit "$(screen | tail -2)"
wait $lp

# --batch: plain frames (no escape sequences), one per interval
"$POOLSCOPE" top "$d/linux.db" --batch 2 -i 100ms > "$d/b.txt" 2>&1
if [ "$(grep -c '^poolscope top ' "$d/b.txt")" = 2 ] && ! grep -q $'\033' "$d/b.txt"; then ok batch
else bad batch "$(head -3 "$d/b.txt")"; fi
"$POOLSCOPE" top "$d/notatrace.db" --batch 1 > /dev/null 2> "$d/err"
[ $? = 1 ] && grep -q 'notatrace.db' "$d/err" && ok not-a-trace || bad not-a-trace "$(cat "$d/err")"
exit $failed
