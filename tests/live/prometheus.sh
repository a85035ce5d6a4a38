#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Live: `record --listen` scraped by a real Prometheus (Debian's prometheus, on loopback, its own
# storage in a scratch directory) while the leak lab's file_handles leaks 150 open files a second
# and, for 20 s, 100 concurrent scrapers, a client that never reads, one that sends a byte a
# second and one that sends garbage hit the endpoint. Checked:
#   - the page passes `promtool check metrics` and holds no kernel address;
#   - the endpoint listens only on the address given;
#   - every scraper got whole pages, every bad request an error status;
#   - every interval was written on time (none longer than 1.5 intervals);
#   - Prometheus scraped the target and loaded docs/prometheus/rules.yml;
#   - the series it stored equal the trace written in the same run (the tags of the
#     file-services path at the last scrape, by the interval count of the same scrape);
#   - the file-services path was called a leak (state 3) in the run;
#   - `record --listen` without -o serves and writes no file.
# The leak lab's noise generator runs the whole time.
set -u
: "${POOLSCOPE:?POOLSCOPE not set}" "${PS_LIVE_BIN:?PS_LIVE_BIN not set}"
. "$(dirname "$0")/lib/noise.sh"
LAB=$PS_LIVE_BIN/../leaklab
SRC=${PS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
GET=$PS_LIVE_BIN/scrapers
for t in prometheus promtool jq sqlite3 ss; do
	command -v $t > /dev/null || { echo "FAIL: $t not found (make deps installs it)"; exit 1; }
done
[ -x "$LAB/file_handles" ] && [ -x "$GET" ] || { echo "FAIL: test programs missing"; exit 1; }
T=$(mktemp -d)
rec=0 prom=0
cleanup() {
	[ $rec != 0 ] && kill $rec 2> /dev/null
	[ $prom != 0 ] && kill $prom 2> /dev/null && wait $prom 2> /dev/null
	noise_stop
	rm -rf "$T"
}
trap cleanup EXIT
failed=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failed=1; }
free_port() {
	local p
	for p in $(shuf -i 20000-45000 -n 50); do
		ss -Htln "sport = :$p" | grep -q . || { echo $p; return 0; }
	done
	return 1
}
P=$(free_port) && PP=$(free_port) || { echo "FAIL: no free port"; exit 1; }
[ "$P" != "$PP" ] || PP=$((PP + 1))

noise_start "$T" 120 || exit 1
mkdir "$T/d"
"$POOLSCOPE" record --listen 127.0.0.1:$P -o "$T/run.db" --label prom --duration 45 -q \
	--listen-window 30s -- "$LAB/file_handles" 150 45 "$T/d" > "$T/rec.out" 2>&1 &
rec=$!
for i in $(seq 50); do "$GET" get $P /metrics > "$T/page.txt" 2> /dev/null && break; sleep 0.2; done
[ -s "$T/page.txt" ] || { cat "$T/rec.out"; echo "FAIL: no page from the endpoint"; exit 1; }

cat > "$T/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $SRC/docs/prometheus/rules.yml
scrape_configs:
  - job_name: poolscope
    static_configs:
      - targets: ['127.0.0.1:$P']
EOC
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address=127.0.0.1:$PP > "$T/prom.log" 2>&1 &
prom=$!

# listening only where told
socks=$(ss -Htlnp | grep "pid=$rec," | awk '{ print $4 }')
if [ "$socks" = "127.0.0.1:$P" ]; then ok "listens only on 127.0.0.1:$P"
else bad "listening sockets of record: '$socks'"; fi

"$GET" abuse $P 20 > "$T/abuse.out" 2>&1
if [ $? = 0 ]; then ok "under abuse: $(cat "$T/abuse.out")"
else bad "under abuse: $(cat "$T/abuse.out")"; fi

"$GET" get $P /metrics > "$T/page.txt" || bad "GET /metrics"
"$GET" get $P /metrics om > "$T/page.om" || bad "GET /metrics (OpenMetrics)"
if out=$(promtool check metrics < "$T/page.txt" 2>&1); then ok "promtool check metrics"
else bad "promtool check metrics: $out"; fi
tail -1 "$T/page.om" | grep -qx '# EOF' && ok "OpenMetrics page ends in # EOF" ||
	bad "OpenMetrics page does not end in # EOF"
if grep -Eq '0x[0-9a-f]{8,}|ffff[0-9a-f]{12}' "$T/page.txt" "$T/page.om"; then
	bad "a kernel address on the page: $(grep -Eo '0x[0-9a-f]{8,}|ffff[0-9a-f]{12}' "$T/page.txt" | head -3)"
else ok "no kernel address on the page"; fi

wait $rec
rc=$?
rec=0
[ $rc = 0 ] || { cat "$T/rec.out"; bad "record exited $rc"; }
sleep 3	# the last scrapes (the endpoint is gone now: the target goes down)

api() { "$GET" get $PP "/api/v1/$1"; }
q() { api "query?query=$1${2:+&time=$2}" | jq -r "$3"; }
health=$(api targets | jq -r '[.data.activeTargets[].lastError] | join(";")')
up_seen=$(q 'max_over_time(up%5B2m%5D)' '' '.data.result[0].value[1]')
[ "$up_seen" = 1 ] && ok "Prometheus scraped the endpoint" || bad "target never up: $health"
nrules=$(api rules | jq '[.data.groups[].rules[] | select(.health == "ok")] | length')
[ "$nrules" = 5 ] && ok "Prometheus loaded the 5 alerting rules" || bad "rules loaded: $nrules"

# the last scrape: its time, the interval count it saw, the file-services tags (a range query:
# once the target is down its series are marked stale, and an instant query at now is empty)
last=$(q 'poolscope_intervals_total%5B5m%5D' '' '.data.result[0].values[-1] | "\(.[0]) \(.[1])"')
ts=${last% *} n=${last#* }
nt=$(sqlite3 "$T/run.db" 'select count(*) from intervals')
if [ -n "$n" ] && [ "$n" != null ] && [ "$n" -le "$nt" ] && [ "$n" -ge $((nt - 5)) ]; then
	ok "last scrape saw $n intervals of the trace's $nt"
else bad "last scrape saw '$n' intervals, the trace has $nt"; fi
# a series is a tag label and its context (tags of one label in other contexts can be on
# other paths, by their stacks)
q 'poolscope_tag_live_bytes%7Bdomain%3D%22kernel%22%2Cpath%3D%22file-services%22%2Ctag!%3D%22other%22%7D' \
	"$ts" '.data.result[] | "\(.metric.tag)|\(.metric.ctx // "-") \(.value[1])"' | sort > "$T/prom.tags"
idx=$((n - 1))
sqlite3 -separator ' ' "$T/run.db" "
	with lab as (select id, case when site_sym is not null and kind in ('slab','kmalloc','page')
		then coalesce(name, cache, '?') || '@' || site_sym else coalesce(name, cache, '?') end l
		from tags),
	last as (select s.tag, s.live_bytes from samples s where s.interval = (select max(interval)
		from samples s2 where s2.tag = s.tag and s2.interval <= $idx))
	select l || '|' || coalesce(ctx, '-'), sum(live_bytes) from last join lab on lab.id = last.tag
		join tags on tags.id = last.tag group by 1" | sort > "$T/trace.tags"
ntags=$(wc -l < "$T/prom.tags")
missing=$(join -j1 -v1 "$T/prom.tags" "$T/trace.tags" | head -3)
differ=$(join -j1 "$T/prom.tags" "$T/trace.tags" | awk '$2 != $3' | head -3)
if [ "$ntags" -ge 1 ] && [ -z "$missing" ] && [ -z "$differ" ]; then
	ok "$ntags file-services tags in Prometheus equal the trace at interval $idx: $(head -2 "$T/prom.tags" | tr '\n' ' ')"
else bad "Prometheus against the trace at interval $idx ($ntags tags): missing '$missing' differ '$differ'"; fi

# the exact per-cache figures: filp's objects and bytes equal the trace's class counters then
pc=$(q 'poolscope_cache_objects%7Bcache%3D%22filp%22%7D' "$ts" '.data.result[0].value[1]')
pb=$(q 'poolscope_cache_bytes%7Bcache%3D%22filp%22%7D' "$ts" '.data.result[0].value[1]')
ctr() { sqlite3 "$T/run.db" "select coalesce((select value from counters where name = 'class.filp.$1'
	and interval <= $idx order by interval desc limit 1), 0)"; }
tc=$(( $(ctr allocs) - $(ctr frees) )) tb=$(( $(ctr alloc_bytes) - $(ctr free_bytes) ))
if [ "$pc $pb" = "$tc $tb" ] && [ "$tc" -gt 0 ]; then
	ok "filp in Prometheus equals the trace's class counters at interval $idx: $tc objects, $tb bytes"
else bad "filp: Prometheus '$pc' objects '$pb' bytes, the trace's counters $tc and $tb at interval $idx"; fi

st=$(q 'max_over_time(poolscope_path_state%7Bdomain%3D%22kernel%22%2Cpath%3D%22file-services%22%7D%5B5m%5D)' '' '.data.result[0].value[1]')
why=$(q 'poolscope_path_verdict_info%7Bpath%3D%22file-services%22%7D' "$ts" '.data.result[0].metric | "\(.state): \(.why)"')
[ "$st" = 3 ] && ok "the file-services path was called a leak" ||
	bad "file-services path state at most '$st', expected 3 (leak); at the end: $why"

late=$(sqlite3 "$T/run.db" 'select count(*) from intervals where idx > 0 and dur_ns > 1500000000')
worst=$(sqlite3 "$T/run.db" 'select max(dur_ns) / 1e6 from intervals where idx > 0')
[ "$late" = 0 ] && ok "every interval on time (longest ${worst} ms)" ||
	bad "$late intervals longer than 1.5 s (longest ${worst} ms)"

# serving only: no -o, no file
(cd "$T" && timeout 20 "$POOLSCOPE" record --listen 127.0.0.1:$P --duration 4 -q > "$T/only.out" 2>&1) &
only=$!
for i in $(seq 30); do "$GET" get $P /metrics > "$T/only.txt" 2> /dev/null && break; sleep 0.2; done
wait $only || bad "record --listen without -o: $(cat "$T/only.out")"
grep -q '^poolscope_intervals_total ' "$T/only.txt" && ok "record --listen without -o serves" ||
	bad "record --listen without -o served nothing"
[ -z "$(find "$T" -maxdepth 1 -newer "$T/only.out" -name '*.db')" ] && ok "and writes no trace" ||
	bad "record --listen without -o wrote a file"
exit $failed
