#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# export agrees with report on the fixture traces: per tag the folded stacks' bytes and pprof's
# inuse_space are the report's END and pprof's alloc_objects its allocs, for the report's default
# window and for a --from/--to one, slab-backing pages left out (tests/cli/lib/exports_agree.sh;
# the live analysis test checks the same on a recorded trace). The CSV timeline tells tags that
# share a label apart (tag_id, ctx, comm) and carries flags and domain. No root.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
. tests/cli/lib/fixtures.sh cliexports
. tests/cli/lib/exports_agree.sh
failed=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1: $2"; failed=1; }
command -v go > /dev/null || { echo "FAIL go not found (make deps installs golang-go)"; exit 1; }
export HOME=$d GOCACHE=$d/gocache GOFLAGS= PPROF_TMPDIR=$d

for t in linux windows; do
	exports_agree "$t" "$d/$t.db" "$d" || failed=1
	exports_agree "$t-window" "$d/$t.db" "$d" --from 5s --to 20s || failed=1
done
# the window changes the figures: a test that compared the whole trace twice would not see it
if cmp -s "$d/linux.folded" "$d/linux-window.folded"; then
	bad window-matters "the folded stacks of 5..20 s equal those of the whole trace"
else ok window-matters; fi

# a tag with live bytes and no sampled stack keeps them, under one frame that says so
cp "$d/linux.db" "$d/nostk.db" && sqlite3 "$d/nostk.db" "DELETE FROM frames WHERE stack IN
	(SELECT id FROM stacks WHERE tag = (SELECT id FROM tags WHERE name = 'kmalloc-256'));
	DELETE FROM stacks WHERE tag = (SELECT id FROM tags WHERE name = 'kmalloc-256')"
if grep -q '^\[no_sampled_stack\];kmalloc-256@' "$d/linux.folded"; then
	bad unsampled-kept "kmalloc-256 has stacks in the fixture, yet none in the folded output"
elif "$POOLSCOPE" export "$d/nostk.db" --folded | grep -q '^\[no_sampled_stack\];kmalloc-256@'; then
	ok unsampled-kept
else bad unsampled-kept "kmalloc-256 without stacks is not in the folded output under [no sampled stack]"; fi
exports_agree nostk "$d/nostk.db" "$d" || failed=1

# timeline: the columns, one row per tag and interval, the key unique
"$POOLSCOPE" export "$d/linux.db" --csv timeline > "$d/tl.csv" || bad timeline "exit $?"
hdr=$(head -1 "$d/tl.csv")
want="t_s,tag,kind,ctx,comm,domain,flags,reclaimable,slab_backing,live_bytes,live_objs,allocs,frees,alloc_bytes,free_bytes"
[ "$hdr" = "$want" ] && ok timeline-header || bad timeline-header "got '$hdr'"
python3 - "$d/tl.csv" "$(sqlite3 "$d/linux.db" 'SELECT count(*) FROM tags')" \
	"$(sqlite3 "$d/linux.db" 'SELECT count(*) FROM intervals')" <<'PY' && ok timeline-rows || bad timeline-rows "see above"
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
ntags, nint = int(sys.argv[2]), int(sys.argv[3])
assert len(rows) == ntags * nint, "rows %d, tags x intervals %d" % (len(rows), ntags * nint)
keys = collections.Counter((r["t_s"], r["tag"], r["kind"], r["ctx"], r["comm"]) for r in rows)
dup = [k for k, v in keys.items() if v > 1]
assert not dup, "rows that cannot be told apart: %s" % dup[:3]
assert all(r["domain"] in ("kernel", "reclaimable", "user") for r in rows), "a row without a domain"
assert any(r["slab_backing"] == "1" for r in rows), "the fixture's slab-backing tag has no flag"
assert any(r["ctx"] not in ("", "task") for r in rows), "no tag in IRQ context"
PY
exit $failed
