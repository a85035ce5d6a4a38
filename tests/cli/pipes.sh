#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Inputs read from pipes and FIFOs (userspace/input.c): `convert <(xz -dc pool.etl.xz)`, "-" for
# standard input, a named FIFO. convert reads an input twice (its kind, then its contents) and the
# .etl reader seeks, so before they are copied to a file first a FIFO hung convert, a pipe gave
# "Illegal seek", and the bytes the first look took were lost. Each gives the same result as the
# file here, copies are removed, and a failure says which copy stands for what; gzip, xz and zstd
# inputs are inflated the same way. Uses the pool
# traces of tests/fuzz/convert-seeds (written by tests/unit/etlwriter.c). No root.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
. tests/cli/lib/fixtures.sh clipipe
ETL=$PWD/tests/fuzz/convert-seeds/pool-x64.etl
failed=0
mkdir "$d/tmp"
export TMPDIR=$d/tmp

ok() { echo "ok $1"; }
bad() { echo "FAIL $1: $2"; failed=1; }
ps() { "$POOLSCOPE" "$@"; }

cat > "$d/a.log" <<'TXT'
 Tag  Type     Allocs            Frees            Diff   Bytes       Per Alloc
 AfdB Nonp      100 (   0)        50 (   0)        50    64000 (     0)   1280
 Irp  Paged      7 (   0)         3 (   0)         4      512 (     0)    128
TXT
cat > "$d/b.log" <<'TXT'
 Tag  Type     Allocs            Frees            Diff   Bytes       Per Alloc
 AfdB Nonp      300 (   0)        50 (   0)       250   320000 (     0)   1280
 Irp  Paged      9 (   0)         3 (   0)         6      768 (     0)    128
TXT

# the same trace from a file and from a pipe: compared by their report
ps convert "$ETL" -o "$d/file.db" > /dev/null || bad etl-file "convert of the file failed"
ps report "$d/file.db" > "$d/file.txt"
if ps convert <(cat "$ETL") -o "$d/pipe.db" > /dev/null && ps report "$d/pipe.db" > "$d/pipe.txt" &&
   cmp -s "$d/file.txt" "$d/pipe.txt"; then ok etl-process-substitution
else bad etl-process-substitution "$(diff "$d/file.txt" "$d/pipe.txt" | head -5)"; fi

if cat "$ETL" | ps convert - -o "$d/stdin.db" > /dev/null && ps report "$d/stdin.db" > "$d/stdin.txt" &&
   cmp -s "$d/file.txt" "$d/stdin.txt"; then ok etl-stdin
else bad etl-stdin "report differs from the file's"; fi

# a named FIFO: the first look closed it, its writer went, the second open waited forever
mkfifo "$d/fifo"
cat "$ETL" > "$d/fifo" &
timeout 30 "$POOLSCOPE" convert "$d/fifo" -o "$d/fifo.db" > /dev/null
rc=$?
if [ $rc = 0 ] && ps report "$d/fifo.db" > "$d/fifo.txt" && cmp -s "$d/file.txt" "$d/fifo.txt"; then
	ok etl-fifo
else bad etl-fifo "exit $rc (124: still waiting after 30 s)"; fi
wait

# text: two snapshots, the second from a pipe, make one timeline as two files do
ps convert "$d/a.log" "$d/b.log" -o "$d/text-file.db" > /dev/null
ps report "$d/text-file.db" > "$d/text-file.txt"
if ps convert "$d/a.log" <(cat "$d/b.log") -o "$d/text-pipe.db" > /dev/null &&
   ps report "$d/text-pipe.db" > "$d/text-pipe.txt" && cmp -s "$d/text-file.txt" "$d/text-pipe.txt" &&
   grep -q "AfdB" "$d/text-pipe.txt"; then ok text-second-input-a-pipe
else bad text-second-input-a-pipe "$(diff "$d/text-file.txt" "$d/text-pipe.txt" | head -5)"; fi

# etl info from standard input: the same but for the file line, which names "-"
ps etl info "$ETL" | sed 1d > "$d/info-file.txt"
out=$(cat "$ETL" | ps etl info - 2>&1)
if [ "$(head -1 <<< "$out")" = "file        - ($(stat -c %s "$ETL") bytes)" ] &&
   [ "$(sed 1d <<< "$out")" = "$(cat "$d/info-file.txt")" ]; then ok etl-info-stdin
else bad etl-info-stdin "$(head -3 <<< "$out")"; fi

# a pipe cut short: the reader's error names the copy, and a note says what the copy is
out=$(head -c 3000 "$ETL" | ps etl info - 2>&1 >/dev/null)
rc=$?
if [ $rc = 1 ] && grep -q "$d/tmp/poolscope-input\.[A-Za-z0-9]*: offset 0x" <<< "$out" &&
   grep -q "^poolscope etl info: ($d/tmp/poolscope-input\.[A-Za-z0-9]* is a copy of standard input, which can be read only once)$" <<< "$out"; then
	ok etl-info-cut-pipe
else bad etl-info-cut-pipe "exit $rc: $out"; fi

# compressed inputs (userspace/decompress.c): gzip, xz and zstd files and pipes read as the
# file they hold; a stream cut short is an error naming the file and where, never a shorter input
for z in gzip xz zstd; do
	ext=${z/gzip/gz}; ext=${ext/zstd/zst}
	"$z" -q -c "$ETL" > "$d/pool.etl.$ext" || { bad "$z" "cannot run $z"; continue; }
	if ps convert "$d/pool.etl.$ext" -o "$d/$z.db" > /dev/null &&
	   ps report "$d/$z.db" > "$d/$z.txt" && cmp -s "$d/file.txt" "$d/$z.txt"; then
		ok "compressed-$z"
	else bad "compressed-$z" "$(diff "$d/file.txt" "$d/$z.txt" | head -5)"; fi
	if "$z" -q -c "$ETL" | ps etl info - | sed 1d | cmp -s - "$d/info-file.txt"; then
		ok "compressed-$z-stdin"
	else bad "compressed-$z-stdin" "etl info of the piped $z stream differs"; fi
	head -c $(( $(stat -c %s "$d/pool.etl.$ext") / 2 )) "$d/pool.etl.$ext" > "$d/cut.etl.$ext"
	out=$(ps etl info "$d/cut.etl.$ext" 2>&1 >/dev/null)
	rc=$?
	if [ $rc = 1 ] && grep -q "^poolscope etl info: $d/cut.etl.$ext: $z: .*cut short" <<< "$out"; then
		ok "compressed-$z-cut"
	else bad "compressed-$z-cut" "exit $rc: $out"; fi
done
gzip -c "$d/b.log" > "$d/b.log.gz"
if ps convert "$d/a.log" "$d/b.log.gz" -o "$d/text-gz.db" > /dev/null &&
   ps report "$d/text-gz.db" > "$d/text-gz.txt" && cmp -s "$d/text-file.txt" "$d/text-gz.txt"; then
	ok compressed-text
else bad compressed-text "$(diff "$d/text-file.txt" "$d/text-gz.txt" | head -5)"; fi

if [ -z "$(ls -A "$d/tmp")" ]; then ok copies-removed
else bad copies-removed "left in \$TMPDIR: $(ls "$d/tmp")"; fi

# nowhere to copy to: one clear line
out=$(cat "$ETL" | TMPDIR=$d/none "$POOLSCOPE" convert - -o "$d/none.db" 2>&1)
rc=$?
want="poolscope convert: -: a pipe, to be copied to a file first: $d/none/poolscope-input.XXXXXX: No such file or directory"
if [ $rc = 1 ] && [ "$out" = "$want" ] && [ ! -e "$d/none.db" ]; then ok no-tmpdir
else bad no-tmpdir "exit $rc: $out"; fi
exit $failed
