#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The SQL of docs/trace-format.md ("Reading a trace by hand"), each query marked
# "<!-- sql: NAME -->", run with the real sqlite3 on the fixture traces, and its answer compared
# with poolscope's own: the top tags with `report`'s END, the domain sums with
# `export --csv timeline`, the drops with the report's, the slab growth with its slabinfo
# check. Also that the views carry sparse rows forward. No root.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
. tests/cli/lib/fixtures.sh clisql
failed=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1: $2"; failed=1; }
command -v sqlite3 > /dev/null || { echo "FAIL sqlite3 not found (make deps installs it)"; exit 1; }

# the query after "<!-- sql: NAME -->", between its ```sql fence and the closing one
doc_sql() {
	awk -v n="<!-- sql: $1 -->" '$0 == n { f = 1; next } f == 1 && /^```sql/ { f = 2; next }
		f == 2 && /^```/ { exit } f == 2 { print }' docs/trace-format.md
}
for q in top-live domain-live drops slab-growth; do
	[ -n "$(doc_sql $q)" ] || bad "doc-$q" "no query marked '<!-- sql: $q -->' in docs/trace-format.md"
done

for t in linux windows; do
	db=$d/$t.db
	# the whole trace: --from 0 and a --to past its end
	"$POOLSCOPE" report "$db" --domain all --top 0 --format json --from 0 --to 1000000s > "$d/$t.json" ||
		{ bad "$t-report" "exit $?"; continue; }

	sqlite3 -separator ' ' "$db" "$(doc_sql top-live)" | awk '{ print $1, $NF }' > "$d/$t.top.sql" 2> "$d/err" ||
		bad "$t-top-live" "sqlite3: $(cat "$d/err")"
	jq -r '[.tags[] | select(.slab_backing | not)] | sort_by(-.end_bytes, .tag) | .[:10][]
		| "\(.tag) \(.end_bytes)"' "$d/$t.json" > "$d/$t.top.rep"
	if [ -s "$d/$t.top.sql" ] && cmp -s "$d/$t.top.sql" "$d/$t.top.rep"; then ok "$t-top-live"
	else bad "$t-top-live" "sql / report: $(paste -d'|' "$d/$t.top.sql" "$d/$t.top.rep" | head -12 | tr '\n' ';')"; fi

	sqlite3 -separator , "$db" "$(doc_sql domain-live)" > "$d/$t.dom.sql"
	"$POOLSCOPE" export "$db" --csv timeline | python3 -c '
import csv, sys, collections
s = collections.OrderedDict()
rows = list(csv.DictReader(sys.stdin))
ts = sorted({float(r["t_s"]) for r in rows})
for r in rows:
    if r["slab_backing"] == "1": continue
    k = (ts.index(float(r["t_s"])), r["domain"])
    s[k] = s.get(k, 0) + int(r["live_bytes"])
for (i, dom) in sorted(s): print("%d,%s,%d" % (i, dom, s[(i, dom)]))' > "$d/$t.dom.csv"
	if [ -s "$d/$t.dom.sql" ] && cmp -s "$d/$t.dom.sql" "$d/$t.dom.csv"; then ok "$t-domain-live ($(wc -l < "$d/$t.dom.sql") rows)"
	else bad "$t-domain-live" "$(diff "$d/$t.dom.sql" "$d/$t.dom.csv" | head -6 | tr '\n' ';')"; fi

	got=$(sqlite3 "$db" "$(doc_sql drops)") want=$(jq .totals.drops "$d/$t.json")
	if [ "$got" = "$want" ]; then ok "$t-drops ($got)"; else bad "$t-drops" "sql $got, report $want"; fi

	sqlite3 -separator ' ' "$db" "$(doc_sql slab-growth)" | sort > "$d/$t.slab.sql"
	jq -r '[.tags[] | select(.slabinfo != null) | .slabinfo | "\(.cache) \(.growth_bytes)"] | unique[]' \
		"$d/$t.json" | sort > "$d/$t.slab.rep"
	if [ -s "$d/$t.slab.rep" ] && join "$d/$t.slab.rep" "$d/$t.slab.sql" | awk '$2 != $3 { bad = 1 } END { exit bad }' &&
	   [ "$(join "$d/$t.slab.rep" "$d/$t.slab.sql" | wc -l)" = "$(wc -l < "$d/$t.slab.rep")" ]; then
		ok "$t-slab-growth ($(wc -l < "$d/$t.slab.rep") caches)"
	elif [ ! -s "$d/$t.slab.rep" ] && [ "$t" = windows ]; then
		ok "$t-slab-growth (no slabinfo in a Windows trace)"
	else bad "$t-slab-growth" "report / sql: $(join -a1 "$d/$t.slab.rep" "$d/$t.slab.sql" | head -5 | tr '\n' ';')"; fi
done

# carried forward: a sparse copy of the Linux trace (rows whose live figures did not change removed,
# as the recorder leaves out idle ones) reads through the views as the dense one from its tables
db=$d/linux.db
cp "$db" "$d/sparse.db"
sqlite3 "$d/sparse.db" "DELETE FROM samples WHERE interval > 0 AND EXISTS
	(SELECT 1 FROM samples p WHERE p.tag = samples.tag AND p.interval = samples.interval - 1
	 AND p.live_bytes = samples.live_bytes AND p.live_objs = samples.live_objs);
	DELETE FROM counters WHERE interval > 0 AND interval < (SELECT max(idx) FROM intervals) AND EXISTS
	(SELECT 1 FROM counters p WHERE p.name = counters.name AND p.interval = counters.interval - 1
	 AND p.value = counters.value);
	INSERT OR REPLACE INTO meta VALUES('sparse_series', '1')"
removed=$(( $(sqlite3 "$db" "SELECT count(*) FROM samples") - $(sqlite3 "$d/sparse.db" "SELECT count(*) FROM samples") ))
dense=$(sqlite3 "$db" "SELECT tag, interval, live_bytes, live_objs FROM samples ORDER BY 1, 2" | md5sum)
sparse=$(sqlite3 "$d/sparse.db" "SELECT tag, interval, live_bytes, live_objs FROM tag_live
	WHERE live_bytes IS NOT NULL ORDER BY 1, 2" | md5sum)
if [ "$removed" -gt 0 ] && [ "$dense" = "$sparse" ]; then ok "views-carry-forward ($removed rows removed)"
else bad views-carry-forward "$removed rows removed; the views of the sparse copy differ from the dense tables"; fi
for q in top-live domain-live drops; do
	if [ "$(sqlite3 "$db" "$(doc_sql $q)")" = "$(sqlite3 "$d/sparse.db" "$(doc_sql $q)")" ]; then ok "sparse-$q"
	else bad "sparse-$q" "the query answers differently on the sparse copy"; fi
done
exit $failed
