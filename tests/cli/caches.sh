#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# report --by cache on a copy of the fixture trace given class counters: each cache's figures
# are the counters' change over the window (rows between written ones carried), its tags' sum
# is the report's rows of that cache, each row's standard error is rate x size x the smaller of
# its live bytes at the window's edges and its turnover, the class's the rows' added up (0 for
# tags that count every object), counts past 8 digits shorten, the text fits 80 columns, and
# --by cache goes without --domain and the tag filters. No root.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
. tests/cli/lib/fixtures.sh clicaches
failed=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1: $2"; failed=1; }
P=$POOLSCOPE
cd "$d" || exit 1
last=$(sqlite3 linux.db "SELECT max(idx) FROM intervals")

# kmalloc-256: 100 allocs and 50 frees before the window's first interval ends, then rows at
# interval 10 and the last; page-order-0 one row only at the last; a class "pages" (every
# order's sum) that must not get a row of its own
cp linux.db c.db
sqlite3 c.db "INSERT INTO counters VALUES
	('class.kmalloc-256.allocs', 0, 100), ('class.kmalloc-256.frees', 0, 50),
	('class.kmalloc-256.alloc_bytes', 0, 25600), ('class.kmalloc-256.free_bytes', 0, 12800),
	('class.kmalloc-256.allocs', 10, 80100), ('class.kmalloc-256.frees', 10, 400),
	('class.kmalloc-256.alloc_bytes', 10, 20505600), ('class.kmalloc-256.free_bytes', 10, 102400),
	('class.kmalloc-256.allocs', $last, 240100), ('class.kmalloc-256.frees', $last, 1000),
	('class.kmalloc-256.alloc_bytes', $last, 61465600), ('class.kmalloc-256.free_bytes', $last, 256000),
	('class.page-order-0.allocs', $last, 7), ('class.page-order-0.frees', $last, 2),
	('class.page-order-0.alloc_bytes', $last, 28672), ('class.page-order-0.free_bytes', $last, 8192),
	('class.pages.allocs', $last, 7), ('class.pages.frees', $last, 2),
	('class.pages.alloc_bytes', $last, 28672), ('class.pages.free_bytes', $last, 8192)" || exit 1
"$P" report c.db --by cache --format json > c.json || bad json "exit $?"
"$P" report c.db --top 0 --format json > r.json || bad report-json "exit $?"
row() { jq -c --arg c "$1" ".caches[] | select(.cache == \$c) | [.allocs, .frees, .net_objs, .net_bytes]" c.json; }
[ "$(row kmalloc-256)" = "[240000,950,239050,61196800]" ] && ok exact-delta ||
	bad exact-delta "kmalloc-256: $(row kmalloc-256), want [240000,950,239050,61196800]"
[ "$(row page-order-0)" = "[7,2,5,20480]" ] && ok first-row-late ||
	bad first-row-late "page-order-0: $(row page-order-0), want [7,2,5,20480] (0 before its first row)"
[ -z "$(row pages)" ] && ok no-sum-row || bad no-sum-row "a row for 'pages', every order's sum"
# frees of older objects, a sampled estimate: as recorded while under the class's frees (950,
# 243200 bytes in the window), capped at them above
pre() {
	cp c.db p.db
	sqlite3 p.db "INSERT INTO counters VALUES
		('class.kmalloc-256.preexisting_frees', 0, 0),
		('class.kmalloc-256.preexisting_free_bytes', 0, 0),
		('class.kmalloc-256.preexisting_frees', $last, $1),
		('class.kmalloc-256.preexisting_free_bytes', $last, $2)" || exit 1
	"$P" report p.db --by cache --format json |
		jq -c '.caches[] | select(.cache == "kmalloc-256") | [.preexisting_frees, .preexisting_free_bytes]'
}
[ "$(pre 300 76800)" = "[300,76800]" ] && ok preexisting-kept ||
	bad preexisting-kept "$(pre 300 76800), want [300,76800]"
[ "$(pre 2000 512000)" = "[950,243200]" ] && ok preexisting-capped ||
	bad preexisting-capped "$(pre 2000 512000), want [950,243200] (the window's frees)"
python3 - c.json r.json <<'PY' && ok tags-and-error || bad tags-and-error "see above"
import json, math, sys
c = {r["cache"]: r for r in json.load(open(sys.argv[1]))["caches"]}
rep = json.load(open(sys.argv[2]))
rows = [t for t in rep["tags"] if t["cache"] == "kmalloc-256" and not t["slab_backing"]]
want = sum(t["growth_bytes"] for t in rows)
k = c["kmalloc-256"]
assert k["tags"] == len(rows) and k["tags_growth_bytes"] == want, (k, want)
# the fixture has no site sample rate (1): its tags are a count, without error
assert k["sampled"] == any(t["sampled"] for t in rows) and k["tags_stderr_bytes"] == 0, k
PY
# a sample rate: the error is sqrt(rate x object size x |growth|) for sampled tags (flag 4,
# docs/trace-format.md)
cp c.db s.db
sqlite3 s.db "INSERT OR REPLACE INTO meta VALUES('site_sample_rate', '16');
	UPDATE tags SET flags = flags | 4 WHERE cache = 'kmalloc-256'" || exit 1
"$P" report s.db --by cache --format json > s.json || bad sampled-json "exit $?"
"$P" report s.db --top 0 --format json > sr.json || bad sampled-report "exit $?"
python3 - s.json sr.json s.db <<'PY' && ok sampled-error || bad sampled-error "see above"
import json, math, sqlite3, sys
k = [r for r in json.load(open(sys.argv[1]))["caches"] if r["cache"] == "kmalloc-256"][0]
rep = json.load(open(sys.argv[2]))
lo, hi = rep["window"]["from_interval"], rep["window"]["to_interval"]
db = sqlite3.connect(sys.argv[3])
var = 0.0
for (tag,) in db.execute("SELECT id FROM tags WHERE cache = 'kmalloc-256'"):
    def live(i):
        r = db.execute("SELECT live_bytes FROM samples WHERE tag = ? AND interval <= ?"
                       " ORDER BY interval DESC LIMIT 1", (tag, i)).fetchone()
        return r[0] if r else 0
    ab, fb = db.execute("SELECT coalesce(sum(alloc_bytes), 0), coalesce(sum(free_bytes), 0)"
                        " FROM samples WHERE tag = ? AND interval > ? AND interval <= ?",
                        (tag, lo, hi)).fetchone()
    # what crosses the window's edges: at most the live bytes at both, at most the turnover
    v = 16 * 256 * min(abs(live(lo)) + abs(live(hi)), ab + fb)
    row = [t for t in rep["tags"] if t["tag_id"] == tag][0]
    assert abs(row["growth_stderr_bytes"] - math.sqrt(v)) <= 1, (row["tag"], row["growth_stderr_bytes"], math.sqrt(v))
    var += v
assert k["sampled"] and abs(k["tags_stderr_bytes"] - math.sqrt(var)) <= 1, (k, math.sqrt(var))
assert k["tags_stderr_bytes"] > 0
PY

"$P" report c.db --by cache > c.txt || bad text "exit $?"
grep -q "^kmalloc-256 *240000 *950 *+239050 " c.txt && ok text-row || bad text-row "$(cat c.txt)"
long=$(awk 'length > 79' c.txt)
[ -z "$long" ] && ok text-width || bad text-width "$long"
# counts and sizes of a long recording still fit: 123456789012 allocations
cp c.db big.db && sqlite3 big.db "UPDATE counters SET value = value * 514403 WHERE name LIKE 'class.kmalloc-256.%'"
"$P" report big.db --by cache > big.txt || bad big "exit $?"
grep -q "^kmalloc-256 *123G *489M *+123G " big.txt && [ -z "$(awk 'length > 79' big.txt)" ] &&
	ok big-counts || bad big-counts "$(grep kmalloc-256 big.txt)"
"$P" report c.db --by cache --format csv | head -1 | grep -q '^cache,allocs,frees,net_objs,net_bytes,' &&
	ok csv-header || bad csv-header "$("$P" report c.db --by cache --format csv | head -1)"
"$P" report linux.db --by cache | grep -q "no class counters" && ok no-counters ||
	bad no-counters "a trace without class counters"
"$P" report c.db --by cache --kind slab > /dev/null 2> e.txt
[ $? = 2 ] && grep -q -- "--by cache lists every cache" e.txt && ok usage || bad usage "$(cat e.txt)"
"$P" report c.db --by cache --domain all > /dev/null 2> e.txt
[ $? = 2 ] && ok usage-domain || bad usage-domain "--domain with --by cache: $(cat e.txt)"
exit $failed
