#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Golden tests: the real CLI ($POOLSCOPE) on the fixture traces that $O/tests/mkfixtures writes
# (tests/fixtures/mkfixtures.c), output compared byte for byte with tests/fixtures/expected/.
# No root needed; tests/run.sh runs this in the unit part against the normal and the SAN=1
# build. Prints "ok NAME" / "FAIL NAME: why" per case (a unified diff under a mismatch).
#
# Regenerate the expected files after an intended output change, then read the diff:
#   make all && PS_GOLDEN_UPDATE=1 tests/cli/golden.sh && git diff tests/fixtures/expected
#
# Besides the byte comparison, hand-computed numbers are checked in the expected files
# themselves (see "hand" below), so a regenerated file with wrong numbers still fails.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
EXP=$(pwd)/tests/fixtures/expected
UPDATE=${PS_GOLDEN_UPDATE:-}
. tests/cli/lib/fixtures.sh golden
[ -n "$UPDATE" ] && mkdir -p "$EXP"
failed=0

# golden NAME ARGS...: runs poolscope ARGS in the fixture directory (relative names, so the
# output does not depend on where the test runs), expects exit 0 and an empty stderr.
golden() {
	local name=$1 rc
	shift
	(cd "$d" && "$POOLSCOPE" "$@") >"$d/$name.out" 2>"$d/$name.err"
	rc=$?
	if [ $rc != 0 ] || [ -s "$d/$name.err" ]; then
		echo "FAIL $name: poolscope $* exited $rc"
		sed 's/^/     /' "$d/$name.err" | head -20
		failed=1
		return
	fi
	if [ -n "$UPDATE" ]; then
		cp "$d/$name.out" "$EXP/$name"
		echo "ok $name (updated)"
	elif [ ! -f "$EXP/$name" ]; then
		echo "FAIL $name: $EXP/$name missing (PS_GOLDEN_UPDATE=1 writes it)"
		failed=1
	elif cmp -s "$EXP/$name" "$d/$name.out"; then
		echo "ok $name"
	else
		echo "FAIL $name: poolscope $* differs from tests/fixtures/expected/$name"
		# JSON is one line: one field a line makes the diff readable (display only)
		local split=cat
		[[ $name == *.json ]] && split='sed s/,"/,\n"/g'
		diff -u --label "expected/$name" --label "actual" <($split < "$EXP/$name") \
			<($split < "$d/$name.out") | head -60 | sed 's/^/     /'
		failed=1
	fi
}

golden report_linux.txt report linux.db
golden report_linux.json report linux.db --format json
golden report_linux.csv report linux.db --format csv
golden report_linux.md report linux.db --format markdown
golden report_linux_top3.txt report linux.db --top 3
golden report_linux_path.txt report linux.db --by path
golden report_linux_path.json report linux.db --by path --format json
golden report_linux_window.txt report linux.db --from 10s --to 20s
golden report_linux_window.json report linux.db --from 10s --to 20s --format json
golden report_linux_reclaimable.txt report linux.db --domain reclaimable
golden report_linux_all.json report linux.db --domain all --format json
golden report_local.txt report local.db
golden report_windows.txt report windows.db
golden report_windows.json report windows.db --format json
golden report_windows_path.txt report windows.db --by path
golden diff_local_linux.txt diff local.db linux.db
golden diff_linux_local.txt diff linux.db local.db
golden export_linux.folded export linux.db --folded
golden export_windows.folded export windows.db --folded
golden export_linux_timeline.csv export linux.db --csv timeline
golden export_windows_timeline.csv export windows.db --csv timeline

# --- hand: numbers worked out from tests/fixtures/mkfixtures.c, checked in the expected files --
# has FILE NEEDLE WHY: a fixed-string match in an expected file
has() {
	if grep -qF -- "$2" "$EXP/$1"; then
		echo "ok hand/$3"
	else
		echo "FAIL hand/$3: $1 lacks '$2'"
		failed=1
	fi
}
# json_tag FILE TAG: the JSON object of one tag, for has-like checks on its fields
json_tag() {
	grep -o "{\"tag\":\"$2\"[^{}]*\\({[^{}]*}\\)\\?[^{}]*}" "$EXP/$1"
}
tag_has() { # FILE TAG NEEDLE WHY
	if json_tag "$1" "$2" | grep -qF -- "$3"; then
		echo "ok hand/$4"
	else
		echo "FAIL hand/$4: $2 in $1 lacks '$3'"
		failed=1
	fi
}
MiB=$((1024 * 1024))
leak=kmalloc-256@smb2_read+0x1a2
# the leak: LINE 2 MiB, growth live(29) - live(0) = 29 x 2 MiB; least squares 2 MiB/s exactly
tag_has report_linux.json "$leak" "\"growth_bytes\":$((29 * 2 * MiB))," leak-growth
tag_has report_linux.json "$leak" "\"rate_bps\":$((2 * MiB)).000,\"r2\":1.0000" leak-rate
tag_has report_linux.json "$leak" '"leak_score":1.0000' leak-score
# churn 100 a second plus 8192 new objects in each of intervals 1..29; frees only the churn
tag_has report_linux.json "$leak" "\"allocs\":$((30 * 100 + 29 * 8192)),\"frees\":3000," leak-allocs
tag_has report_linux.json "$leak" '"class":"file-services/smb-server","evidence":"frame smb2_read+0x1a2 [ksmbd]' leak-walks-past-kvmalloc
# slabinfo kmalloc-256 grows 8192 objects x 256 B a second: the leak, fully confirmed
tag_has report_linux.json "$leak" "\"growth_bytes\":$((29 * 8192 * 256)),\"tracked_growth_bytes\":$((29 * 2 * MiB)),\"confirmed_share\":1.0000,\"unconfirmed\":false" leak-slabinfo
# maple_node: tags 64 KiB/s, slabinfo 64 x 256 B/s: a quarter confirmed, score 1 x 0.25
tag_has report_linux.json maple_node@mas_alloc_nodes+0x1b8 "\"growth_bytes\":$((29 * 64 * 256)),\"tracked_growth_bytes\":$((29 * 64 * 1024)),\"confirmed_share\":0.2500,\"unconfirmed\":true" maple-unconfirmed
tag_has report_linux.json maple_node@mas_alloc_nodes+0x1b8 '"leak_score":0.2500' maple-score-scaled
# ... and the rest taken out of its growth: 29 x (64 KiB - 16 KiB) = 1.36 MiB freed untraced
has report_linux.txt "  tracked +1.81 MiB, 1.36 MiB of it freed untraced (slabinfo maple_node)" maple-text
tag_has report_linux.json maple_node@mas_alloc_nodes+0x1b8 "\"adjusted_growth_bytes\":$((29 * 64 * 256))," maple-adjusted
# the verdict: the leak is steady for 29 s, confirmed by its own cache in /proc/slabinfo,
# on the smb-server sub-path of file-services, first suspect the leak tag (99% of its growth)
has report_linux.json '"verdict":{"state":"leak",' verdict-leak
has report_linux.json "\"domain\":\"kernel\",\"path\":\"file-services/smb-server\",\"tag\":\"$leak\"," verdict-path-tag
has report_linux.json '"confirmed_by":"/proc/slabinfo"' verdict-confirmed
has report_linux.txt "LEAK on the file-services path: unreclaimable kernel memory grows 2.04 MiB/s (p" verdict-sentence
# the local run: maple_node's tags rise 64 KiB/s, its cache not at all: every byte taken out
has report_local.txt "STABLE: unreclaimable kernel memory does not grow" local-stable
has report_local.txt "  tracked +1.81 MiB, 1.81 MiB of it freed untraced (slabinfo maple_node)" local-taken-out
# --domain reclaimable: the page-cache line (256 KiB/s for 29 s) and dentry; no counter holds
# page cache in the fixture (no Cached series), so it rises but is not confirmed
has report_linux_reclaimable.txt "GROWING on the file-services path: reclaimable memory grows" reclaimable-verdict
has report_linux_reclaimable.txt "RECLAIMABLE MEMORY (page cache, reclaimable slabs)" reclaimable-section
has report_linux_all.json '"domain":"all"' all-domain
# Windows: LSbf on srvnet, confirmed by NonPagedPool
has report_windows.json '"verdict":{"state":"leak",' win-verdict-leak
has report_windows.json '"path":"network/smb-transport","tag":"LSbf"' win-verdict-path
has report_windows.json '"confirmed_by":"NonPagedPool"' win-verdict-confirmed
# page cache: a perfect line, but reclaimable: score halved, flagged (R)
tag_has report_linux.json order-0@filemap_alloc_folio_noprof+0x2e '"leak_score":0.5000' pagecache-halved
has report_linux.txt "  file-services/filesystem (R): site filemap_alloc_folio_noprof+0x2e, conf 0.80" pagecache-text
# plateau: min(k, 4) x 128 KiB: grows 512 KiB, second half flat, score 0
tag_has report_linux.json kmalloc-8k@ksmbd_conn_handler_loop+0x1c4 "\"growth_bytes\":$((512 * 1024)),\"rate_bps\"" plateau-growth
tag_has report_linux.json kmalloc-8k@ksmbd_conn_handler_loop+0x1c4 '"late_ratio":0.0000,"leak_score":0.0000' plateau-score
# mixed: stacks of 300, 150 and 50 KiB: 60/30/10, confidence 0.9 x 0.6
tag_has report_linux.json kmalloc-1k@__kvmalloc_node_noprof+0x4e '"confidence":0.54,"split":"network 60%, file-services/filesystem 30%, unknown 10%"' mixed-split
# slab-backing pages: ranked last, not in the totals
[ "$(grep -c . "$EXP/report_linux.csv")" = 14 ] && tail -1 "$EXP/report_linux.csv" | grep -q '^"order-0@allocate_slab+0x1c3"' \
	&& echo "ok hand/slab-backing-last" || { echo "FAIL hand/slab-backing-last"; failed=1; }
# totals: every non-backing tag's growth (LINE 29 x step, PLATEAU 4 x step, NOISE 3 x step)
tracked=$(( 29 * 2 * MiB + 29 * 256 * 1024 + 29 * 64 * 1024 + 29 * 16 * 1024 + 29 * 6144 \
	+ 4 * 128 * 1024 + 3 * 64 * 1024 + 29 * 1280 + 3 * 32 * 1024 + 3 * 8 * 1024 ))
has report_linux.json "\"tracked_growth\":$tracked,\"reclaimable_growth\":$(( 29 * 256 * 1024 + 29 * 6144 ))," totals
# SUnreclaim 180 MiB + 2 MiB k + 256 KiB (k odd); drops: 20 + 14 (last written, k = 28) + 3
has report_linux.json "\"system_start\":$((180 * MiB)),\"system_end\":$((238 * MiB + 256 * 1024)),\"drops\":37}" sunreclaim-drops
has report_linux.txt "SUnreclaim grew +58.2 MiB; drops 37" sunreclaim-text
# drops.ptr_map_full 20 at the end: said apart, with the remedy (no map.ptrs meta: no size)
has report_linux.txt "pointer map full 20 times: tags miss those objects, growth is a floor" ptrmap-full
has report_linux.txt "  record with a larger map: --map-size ptrs=N" ptrmap-remedy
# recursion_misses 3: said apart, with what it does to the counts
has report_linux.txt "kernel skipped 3 allocator events (BPF re-entry, recursion_misses):" reentry
has report_linux.txt "  counts may be off by as many objects (x the rate in sampled tags)" reentry-meaning
# window 10 s..20 s: intervals 9..19 (the first ending at or after T), 10 s, 10 x 2 MiB
has report_linux_window.json '"window":{"from_interval":9,"to_interval":19,"seconds":10.000,"intervals_per_point":1,"trace_intervals":30}' window
tag_has report_linux_window.json "$leak" "\"start_bytes\":$((9 * 2 * MiB)),\"end_bytes\":$((19 * 2 * MiB)),\"growth_bytes\":$((10 * 2 * MiB))," window-leak
has report_linux_top3.txt "tracked growth +68.5 MiB" top3-totals-all-tags
# --top 3: the kernel section lists 3 tags (the header, then lines starting with a tag)
[ "$(awk '/^KERNEL MEMORY/ { on = 1; next } on && /^$/ { exit } on && /^[^ ]/ && !/^TAG/' \
	"$EXP/report_linux_top3.txt" | wc -l)" = 3 ] && echo "ok hand/top3-rows" \
	|| { echo "FAIL hand/top3-rows: expected 3 tags in the kernel section"; failed=1; }
# diff: per IO, remote 30 x 1000, local 30 x 3000; the leak 58 MiB / 30000 = 2027.25 B
has diff_local_linux.txt "growth per IO (bytes per IO), A local.db, B linux.db" diff-per-io
has diff_local_linux.txt "TAG (growing in B, not in A)         A /IO     B /IO CLASS" diff-unit-header
has diff_local_linux.txt "file-services  -                -          - | leak     +58.5 MiB  +2.00 MiB" diff-paths-side-by-side
has diff_local_linux.txt "kmalloc-256@smb2_read+0x1a2            0 B +1.98 KiB file-services/smb-server" diff-leak
has diff_local_linux.txt "LEAK in B only, on the file-services path" diff-sentence
# maple_node's cache grows in B only (flat in A): listed; dentry grows in both, allocate_slab
# backs slabs: not listed
! sed -n '/^TAG (growing in B/,/^$/p' "$EXP/diff_local_linux.txt" | grep -q "dentry\|allocate_slab" \
	&& echo "ok hand/diff-both-runs-filtered" \
	|| { echo "FAIL hand/diff-both-runs-filtered: tags growing in both runs (or slab-backing) listed"; failed=1; }
# --by path: file-services = the leak 58 MiB + the 512 KiB plateau (kernel memory: the
# reclaimable dentry and page-cache tags are not in it); backing pages in no path
has report_linux_path.json "{\"path\":\"file-services\",\"state\":\"leak\",\"growth_bytes\":$((58 * MiB + 512 * 1024))," path-smb
! grep -q '^unknown' "$EXP/report_local.txt" "$EXP/report_linux_path.txt" && echo "ok hand/path-no-backing-row" \
	|| { echo "FAIL hand/path-no-backing-row"; failed=1; }
# export: stacks root first, the report's END of each tag split between its stacks; the
# all-freed skb stack is absent, the tag's bytes kept under "[no sampled stack]"
has export_linux.folded "ret_from_fork_asm;ret_from_fork;kthread;worker_thread;process_one_work;handle_ksmbd_work;__handle_ksmbd_work;__process_request;smb2_read;__kvmalloc_node_noprof;__kmalloc_node_noprof;kmalloc-256@smb2_read+0x1a2 $((58 * MiB))" folded-leak
[ "$(grep skbuff "$EXP/export_linux.folded")" = "[no_sampled_stack];skbuff_head_cache@__alloc_skb+0x7b 458752" ] &&
	echo "ok hand/folded-no-dead-stack" || { echo "FAIL hand/folded-no-dead-stack"; failed=1; }
has export_windows.folded "ntoskrnl.exe+0x2f1e5;srv2.sys+0x4c10;srvnet.sys+0x5c31;srvnet.sys+0x1a2b0;ntoskrnl.exe+0x3a1b20;LSbf $((58 * MiB))" folded-modules
has export_windows.folded "0xfffff80312345610;0xfffff80312345600;Xyzw 12288" folded-unmapped
# timeline: 13 tags x 30 intervals + header; last leak row: 29 x 2 MiB live, 8292 allocs, 100 frees
[ "$(wc -l < "$EXP/export_linux_timeline.csv")" = $((13 * 30 + 1)) ] && echo "ok hand/timeline-rows" \
	|| { echo "FAIL hand/timeline-rows"; failed=1; }
has export_linux_timeline.csv "30.000,\"$leak\",kmalloc,task,\"\",kernel,0,0,0,$((29 * 2 * MiB)),237568,8292,100," timeline-leak
# Windows: srvnet's LSbf leak from its module+offset frame; owner-only and mixed tags
tag_has report_windows.json LSbf "\"growth_bytes\":$((29 * 2 * MiB)),\"rate_bps\":$((2 * MiB)).000" win-leak
tag_has report_windows.json LSbf '"class":"network/smb-transport","evidence":"frame srvnet.sys+0x1a2b0' win-leak-frame
tag_has report_windows.json SrvW '"class":"file-services/smb-server","evidence":"owner srv2.sys' win-owner
tag_has report_windows.json FMfn '"reclaimable":true' win-paged-reclaimable
tag_has report_windows.json FMfn '"confidence":0.72,"split":"file-services/filesystem 80%, other 20%"' win-mixed
tag_has report_windows.json LSbf '"pool":"nonpaged","owner":"srvnet.sys"' win-pool-owner
# --by path: the verdict's paths are the top-level ones, each once
for f in report_linux_path.txt report_windows_path.txt diff_local_linux.txt; do
	awk '$1 == "path" { if ($2 ~ /\//) exit 1 }' "$EXP/$f" \
		&& echo "ok hand/path-top-level-$f" || { echo "FAIL hand/path-top-level-$f: a sub-class as a path"; failed=1; }
done
has report_windows.json "\"system_counter\":\"NonPagedPool\",\"system_start\":$((300 * MiB)),\"system_end\":$((358 * MiB + 256 * 1024))," win-nonpaged

# JSON must parse (other tools read it); python3 is there wherever plot's test runs
if command -v python3 >/dev/null; then
	for f in "$EXP"/*.json; do
		python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" 2>/dev/null \
			&& echo "ok json/$(basename "$f")" || { echo "FAIL json/$(basename "$f"): not valid JSON"; failed=1; }
	done
fi
# the text report fits 80 columns
for f in "$EXP"/report_*.txt "$EXP"/diff_*.txt; do
	awk 'length($0) > 79 { exit 1 }' "$f" && echo "ok width/$(basename "$f")" \
		|| { echo "FAIL width/$(basename "$f"): a line is longer than 79 columns"; failed=1; }
done
exit $failed
