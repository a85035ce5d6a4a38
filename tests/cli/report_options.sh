#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# report's --sort, filters and --stacks, its text's width and legend, and diff's formats, on the
# fixture traces. Sorting is checked against the CSV's own columns, filters against every row
# they keep and the unfiltered count they should keep, --stacks against the report's END per
# tag; the verdict must not change with a filter. No root.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
. tests/cli/lib/fixtures.sh clireportopts
failed=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1: $2"; failed=1; }
db=$d/linux.db

# --sort KEY: the listed rows in the order of that column, largest first (rate: the RATE/s the
# text shows, the least-squares rate scaled as GROWTH), pages under slabs last whatever the key
for k in growth:adjusted_growth_bytes rate:shown_rate live:end_bytes allocs:allocs; do
	key=${k%%:*} col=${k#*:}
	"$POOLSCOPE" report "$db" --domain all --top 0 --sort "$key" --format csv > "$d/s.csv" ||
		{ bad "sort-$key" "exit $?"; continue; }
	python3 - "$d/s.csv" "$col" <<'PY' && ok "sort-$key" || bad "sort-$key" "not in descending $col"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def val(r):
    if sys.argv[2] != "shown_rate":
        return float(r[sys.argv[2]])
    g, a = int(r["growth_bytes"]), int(r["adjusted_growth_bytes"])
    scale = a / g if g > 0 and (r["exact_counters"] == "1" or a < g) else 1.0
    return float(r["rate_bps"]) * scale
back = [r["slab_backing"] == "1" for r in rows]
assert back == sorted(back), "a slab-backing row before a real one"
v = [val(r) for r in rows if r["slab_backing"] == "0"]
sys.exit(0 if len(v) > 3 and all(x >= y - 1e-3 for x, y in zip(v, v[1:])) and len(set(v)) > 1 else 1)
PY
done
"$POOLSCOPE" report "$db" --sort nope > /dev/null 2> "$d/err"
[ $? = 2 ] && grep -q "expected rank, growth" "$d/err" && ok sort-bad || bad sort-bad "$(cat "$d/err")"

# filters: every kept row passes, and as many as the unfiltered CSV has passing
"$POOLSCOPE" report "$db" --domain all --top 0 --format csv > "$d/all.csv"
filt() { # name, python predicate on row r, report options...
	local name=$1 pred=$2
	shift 2
	"$POOLSCOPE" report "$db" --domain all --top 0 --format csv "$@" > "$d/f.csv" ||
		{ bad "filter-$name" "exit $?"; return; }
	python3 - "$d/all.csv" "$d/f.csv" "$pred" <<'PY' && ok "filter-$name" || bad "filter-$name" "see above"
import csv, fnmatch, sys
pred = eval("lambda r: " + sys.argv[3])
allr = list(csv.DictReader(open(sys.argv[1])))
got = list(csv.DictReader(open(sys.argv[2])))
want = [r for r in allr if pred(r)]
if not got or not all(pred(r) for r in got) or len(got) != len(want) or len(got) == len(allr):
    print("kept %d, want %d of %d" % (len(got), len(want), len(allr))); sys.exit(1)
PY
}
filt kind 'r["kind"] == "slab"' --kind slab
filt path 'r["class"] == "network" or r["class"].startswith("network/")' --path network
filt tag 'fnmatch.fnmatchcase(r["tag"], "kmalloc-*")' --tag 'kmalloc-*'
filt combined 'r["kind"] == "kmalloc" and r["class"].startswith("file-services")' --kind kmalloc --path file-services
# --comm: the fixture's tags are not split by task; kmalloc-256's sampled stack is a kworker's
"$POOLSCOPE" report "$db" --domain all --top 0 --format csv --comm 'kworker*' > "$d/c.csv"
if grep -q '^"kmalloc-256@smb2_read' "$d/c.csv" && [ "$(wc -l < "$d/c.csv")" -lt "$(wc -l < "$d/all.csv")" ]
then ok filter-comm; else bad filter-comm "$(cat "$d/c.csv")"; fi
"$POOLSCOPE" report "$db" --domain all --top 0 --format csv --comm 'no-such-task' > "$d/c.csv"
[ "$(wc -l < "$d/c.csv")" = 1 ] && ok filter-comm-none || bad filter-comm-none "$(wc -l < "$d/c.csv") lines"
# the verdict reads every tag whatever is shown, and the text says what is shown
a=$("$POOLSCOPE" report "$db" --format json | jq -c .verdict)
b=$("$POOLSCOPE" report "$db" --format json --kind page | jq -c .verdict)
f=$("$POOLSCOPE" report "$db" --format json --kind page | jq -r .filter)
[ "$a" = "$b" ] && [ "$f" != null ] && ok filter-keeps-verdict || bad filter-keeps-verdict "filter '$f'"
"$POOLSCOPE" report "$db" --kind page | grep -q '^shown: --kind page: [0-9]* of [0-9]* tags' &&
	ok filter-note || bad filter-note "no 'shown:' line"

# --by path: top-level paths only, whose growth adds up to the domain's (no parent counted twice)
for t in linux windows local; do
	"$POOLSCOPE" report "$d/$t.db" --format json | jq -e '(.paths | map(.path | contains("/")) | any | not)
		and ([.paths[].growth_bytes] | add) == .verdict.growth_bytes' > /dev/null ||
		bad "paths-add-up-$t" "$("$POOLSCOPE" report "$d/$t.db" --by path --format csv | tr '\n' ' ')"
done
[ $failed = 0 ] && ok paths-add-up

# --stacks: per tag, the stacks' bytes add up to the report's END
"$POOLSCOPE" report "$db" --stacks '*' --top 0 --format csv > "$d/st.csv" || bad stacks "exit $?"
python3 - "$d/st.csv" "$d/all.csv" <<'PY' && ok stacks-add-up || bad stacks-add-up "see above"
import csv, sys, collections
s = collections.Counter()
for r in csv.DictReader(open(sys.argv[1])):
    s[r["tag_id"]] += int(r["live_bytes"])
rep = {r["tag_id"]: int(r["end_bytes"]) for r in csv.DictReader(open(sys.argv[2]))
       if r["slab_backing"] == "0" and int(r["end_bytes"]) > 0}
bad = {k: (s.get(k), v) for k, v in rep.items() if s.get(k) != v}
if bad or not rep: print("tag_id: (stacks, report END):", bad); sys.exit(1)
PY
"$POOLSCOPE" report "$db" --stacks 'kmalloc-256@*' > "$d/st.txt"
grep -q '^STACKS of kmalloc-256@smb2_read+0x1a2 (kmalloc, task)' "$d/st.txt" &&
grep -q '^      smb2_read+0x1a2 \[ksmbd\]$' "$d/st.txt" && ok stacks-text || bad stacks-text "$(head -5 "$d/st.txt")"
"$POOLSCOPE" report "$db" --stacks '*' --top 0 --format json | jq -e '.stacks | length > 0' > /dev/null &&
	ok stacks-json || bad stacks-json "not JSON with stacks"
"$POOLSCOPE" report "$db" --stacks 'nothing-like-this' > /dev/null 2> "$d/err"
[ $? = 1 ] && grep -q "no tag matches 'nothing-like-this'" "$d/err" && ok stacks-no-match || bad stacks-no-match "$(cat "$d/err")"
"$POOLSCOPE" report "$db" --stacks '*' --kind slab > /dev/null 2>&1
[ $? = 2 ] && ok stacks-usage || bad stacks-usage "--stacks with a filter accepted"

# text: 79 columns at most whatever the options, the legend under the table, no cut bucket size
set -f	# the options below are split on spaces, never globbed
for o in "" "--domain all --top 0" "--sort rate" "--kind kmalloc" "--stacks *"; do
	for t in linux windows local; do
		# shellcheck disable=SC2086
		"$POOLSCOPE" report "$d/$t.db" $o > "$d/w.txt" 2>&1
		w=$(awk '{ if (length > m) m = length } END { print m + 0 }' "$d/w.txt")
		[ "$w" -le 79 ] || bad "width-$t" "'report $o' has a line of $w columns: $(awk 'length > 79' "$d/w.txt" | head -1)"
	done
done
set +f
[ $failed = 0 ] && ok width-79
grep -q '^  END live at the end, GROWTH over the window; (R) reclaimable, \[irq\] context$' \
	<("$POOLSCOPE" report "$db") && ok legend || bad legend "no legend line"
# long labels keep the cache whole (kmalloc-192 and kmalloc-128 stay apart)
cp "$db" "$d/long.db" && sqlite3 "$d/long.db" "UPDATE tags SET site_sym = 'alloc_slab_obj_exts_with_a_long_name+0x58' WHERE name LIKE 'kmalloc-%'"
"$POOLSCOPE" report "$d/long.db" --domain all --top 0 > "$d/long.txt"
if grep -q '^kmalloc-256@alloc_slab_obj_~' "$d/long.txt" && grep -q '^kmalloc-1k@alloc_slab_obj_e~ ' "$d/long.txt"
then ok short-labels; else bad short-labels "$(grep '^kmalloc' "$d/long.txt" | head -3)"; fi

# diff --format: csv, json and markdown of the same comparison agree with the text's unit
"$POOLSCOPE" diff "$d/local.db" "$db" --format csv > "$d/d.csv" || bad diff-csv "exit $?"
python3 - "$d/d.csv" <<'PY' && ok diff-csv || bad diff-csv "see above"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tags = [r for r in rows if r["section"] == "tag"]
paths = [r for r in rows if r["section"] == "path"]
assert tags and paths, "tag and path rows"
assert all(r["unit"] == "bytes/IO" for r in tags), "the fixtures have workload rows: per IO"
assert any(r["name"] == "file-services" and r["b_state"] == "leak" and r["a_state"] == "" for r in paths)
PY
"$POOLSCOPE" diff "$d/local.db" "$db" --format json | jq -e '.schema == "poolscope.diff/1" and .unit == "bytes/IO"
	and (.tags | length) > 0 and (.paths | map(select(.path == "file-services"))[0].a == null)
	and .b.state == "leak"' > /dev/null && ok diff-json || bad diff-json "unexpected JSON"
"$POOLSCOPE" diff "$d/local.db" "$db" --format markdown > "$d/d.md"
grep -q '^| tag (growing in B, not in A) | A /IO | B /IO | class |$' "$d/d.md" &&
grep -q '^| file-services | - | - | - | leak |' "$d/d.md" && ok diff-markdown || bad diff-markdown "$(head -20 "$d/d.md")"
for t in local linux; do cp "$d/$t.db" "$d/$t-s.db" && sqlite3 "$d/$t-s.db" "DELETE FROM workload"; done
"$POOLSCOPE" diff "$d/local-s.db" "$d/linux-s.db" | grep -q '^TAG (growing in B, not in A)  *A /s  *B /s CLASS$' &&
	ok diff-per-second-unit || bad diff-per-second-unit "no '/s' header without workload rows"
"$POOLSCOPE" diff "$d/local.db" "$db" --format nope > /dev/null 2>&1
[ $? = 2 ] && ok diff-format-bad || bad diff-format-bad "accepted"
exit $failed
