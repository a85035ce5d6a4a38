#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The ETL commands as a user runs them (no root, no BTF needed): etl info/dump on corpus files,
# convert of poolmon and !poolused text, the refusals (existing output, mixed inputs, unknown
# input, poolscope-win sample without its converter), and bad .etl input exits 1 with the
# offset. Bounded: a few seconds.
set -u
PS=${POOLSCOPE:?POOLSCOPE not set}
TOP=${PS_SRCDIR:-$(pwd)}
CORPUS=${PS_CORPUS:-$TOP/tests/corpus}
[ -d "$CORPUS/etl" ] || { echo "FAIL: corpus not found at $CORPUS (set PS_CORPUS)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

out=$("$PS" etl info "$CORPUS/etl/net.4.5.2.x64.etl") || fail "etl info exit $?"
grep -q '^buffers     360 (359 compressed)' <<< "$out" || fail "etl info buffers: $out"
grep -q '^events      179474 ' <<< "$out" || fail "etl info events"
grep -Eq 'StackWalk\(0x18\)/37 +PERFINFO64 +2061$' <<< "$out" || fail "etl info StackWalk/37 count"
n=$("$PS" etl dump "$CORPUS/etl/net.4.5.2.x64.etl" --limit 5 | wc -l)
[ "$n" = 5 ] || fail "etl dump --limit 5 printed $n lines"
"$PS" etl info "$CORPUS/etl/lxcore_kernel.etl" >/dev/null || fail "lxcore info"

# JSON: the same figures as the text, valid for jq, counts adding up to the events
j=$("$PS" etl info "$CORPUS/etl/net.4.5.2.x64.etl" --format json) || fail "etl info json exit $?"
jq -e '.schema == "poolscope.etl-info/1" and .events == 179474 and .buffers == 360 and
	.buffers_compressed == 359 and ([.kinds[].count] | add) == .events and
	([.kinds[] | select(.group_name == "StackWalk" and .type == 37)][0].count == 2061)' \
	<<< "$j" >/dev/null || fail "etl info json: $(head -c 300 <<< "$j")"
n=$("$PS" etl dump "$CORPUS/etl/net.4.5.2.x64.etl" --limit 5 --format json |
	jq -c 'select(.ms >= 0 and (.kind | length) > 0)' | wc -l)
[ "$n" = 5 ] || fail "etl dump json --limit 5 gave $n valid objects"
"$PS" etl info "$CORPUS/etl/lxcore_kernel.etl" --format xml 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "expected text or json" "$tmp/err" || fail "bad --format: exit $rc"

# truncated: exit 1, the offset in the message, what was sound still printed
head -c 8448 "$CORPUS/etl/lxcore_kernel.etl" > "$tmp/cut.etl"
out=$("$PS" etl info "$tmp/cut.etl" 2>"$tmp/err"); rc=$?
[ $rc = 1 ] || fail "truncated etl info exit $rc"
grep -q 'cut.etl: offset 0x2000: buffer 1 cut by the end of the file' "$tmp/err" || fail "message: $(cat "$tmp/err")"
grep -q '^buffers     2 ' <<< "$out" || fail "partial output"
printf 'not an etl at all, just text that is long enough to hold a buffer header.....' > "$tmp/x.etl"
"$PS" etl info "$tmp/x.etl" 2>"$tmp/err"; [ $? = 1 ] || fail "garbage exit"
grep -q 'x.etl: offset 0x0: not an ETL file' "$tmp/err" || fail "garbage message: $(cat "$tmp/err")"

# convert text
"$PS" convert "$CORPUS/windows/poolmon_n_snapshot_intel_mfd.txt" -o "$tmp/p.db" >"$tmp/out" ||
	fail "convert poolmon"
grep -q '1 snapshots, 13 tags' "$tmp/out" || fail "convert output: $(cat "$tmp/out")"
"$PS" convert "$CORPUS/windows/poolmon_n_snapshot_intel_mfd.txt" -o "$tmp/p.db" 2>"$tmp/err"
[ $? = 1 ] && grep -q -- '--force' "$tmp/err" || fail "existing output not refused"
"$PS" convert "$CORPUS/windows/poolmon_n_snapshot_intel_mfd.txt" -o "$tmp/p.db" --force >/dev/null ||
	fail "--force"
"$PS" convert "$CORPUS/windows/windbg_poolused_poolfind.txt" -o "$tmp/u.db" >/dev/null || fail "poolused"
"$PS" convert "$CORPUS/etl/lxcore_kernel.etl" "$CORPUS/windows/poolmon_n_snapshot_intel_mfd.txt" \
	-o "$tmp/m.db" 2>/dev/null; [ $? = 2 ] || fail "mixed inputs not refused"
"$PS" convert "$tmp/x.etl" -o "$tmp/x.db" 2>"$tmp/err"; [ $? = 1 ] || fail "unknown input"
grep -q 'not an .etl file, poolmon output' "$tmp/err" || fail "unknown input message"
printf '#poolscope-sample v1\n' > "$tmp/s.txt"
"$PS" convert "$tmp/s.txt" -o "$tmp/s.db" 2>"$tmp/err"; rc=$?
if grep -q 'poolscope-win sample files are converted by' "$tmp/err"; then
	[ $rc = 1 ] || fail "sample message with exit $rc"
	[ ! -e "$tmp/s.db" ] || fail "sample: output created"
fi
# an .etl without pool events converts to an empty timeline
"$PS" convert "$CORPUS/etl/ShutdownPerfDiagLogger.etl" -o "$tmp/e.db" >"$tmp/out" || fail "convert etl"
grep -q '17078 events, 0 pool allocs' "$tmp/out" || fail "convert etl output: $(cat "$tmp/out")"
"$PS" convert -h | grep -q EXAMPLES || fail "convert -h"
"$PS" etl -h | grep -q EXAMPLES || fail "etl -h"
# WPP messages (written by tests/unit/etl_bad_test.c's wpp_message_guid): by GUID and number
WPP=$TOP/tests/fuzz/convert-seeds/wpp-messages.etl
out=$("$PS" etl info "$WPP") || fail "etl info of WPP messages exit $?"
grep -Eq '^  \{44332211-6655-8877-99aa-bbccddeef001\} message 7 +MESSAGE +1$' <<< "$out" ||
	fail "WPP message with its GUID: $out"
grep -Eq '^  \(no GUID\) message 9 +MESSAGE +1$' <<< "$out" || fail "WPP message without a GUID: $out"
"$PS" etl info "$WPP" --format json | jq -e '[.kinds[] | select(.header == "MESSAGE")] |
	map({provider, id}) == [{"provider": null, "id": 9},
	{"provider": "44332211-6655-8877-99aa-bbccddeef001", "id": 7}]' > /dev/null ||
	fail "WPP kinds in json"
echo "ok"
