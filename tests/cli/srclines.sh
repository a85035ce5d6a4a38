#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Source lines through libdw: the test builds a module-like object (ET_REL, as a .ko) and a
# vmlinux-like executable with DWARF and a build id (tests/fixtures/srcline/), points a copy of
# the fixture trace's call sites and frames at their functions, and checks that report, export
# and diff give each the file:line its source says (and binutils' addr2line agrees), the
# inlined helper with the line that inlined it, that src rules decide before symbol rules, that
# the trace's own srclines table is read, and that debuginfo which cannot serve (another build
# id, no DWARF, not ELF) is refused in one line. No root.
set -u
cd "${PS_SRCDIR:-$(dirname "$0")/../..}" || exit 1
. tests/cli/lib/fixtures.sh clisrclines
. tests/cli/lib/srcline.sh
failed=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1: $2"; failed=1; }
for t in gcc objdump addr2line objcopy jq sqlite3 go; do
	command -v $t > /dev/null || { echo "FAIL $t not found (make deps installs it)"; exit 1; }
done
export HOME=$d GOCACHE=$d/gocache GOFLAGS= PPROF_TMPDIR=$d
src=$PWD/tests/fixtures/srcline
id=0123456789abcdef0123456789abcdef01234567
rel=$(sqlite3 "$d/linux.db" "SELECT value FROM meta WHERE key = 'kernel'")
cd "$d" || exit 1

# the objects, built here from their sources: an optimizing build that keeps the calls calls
CF="-g -O1 -fno-optimize-sibling-calls -fno-inline-small-functions"
VF="-fno-toplevel-reorder -falign-functions=1 -fno-pie -no-pie -nostdlib -static"
mkdir -p "root/lib/modules/$rel/kernel/fs/smb/server" "root/.build-id/${id:0:2}"
gcc $CF -ffunction-sections -c "$src/ksmbd.c" -o ksmbd.ko &&
gcc $CF $VF -Wl,--build-id=0x$id -o vmlinux "$src/vmlinux.c" &&
gcc $CF $VF -Wl,--build-id=0x${id//0/f} -o vmlinux.other "$src/vmlinux.c" &&
gcc $CF $VF -Wl,--build-id=none -o vmlinux.noid "$src/vmlinux.c" ||
	{ echo "FAIL build: the test objects do not build"; exit 1; }
# f_noret ends in a call to a noreturn function, g_next right after it: its +0x0 is that call's
objdump -d --no-show-raw-insn vmlinux | grep -B2 '<g_next>:' | head -1 | grep -q 'call.*<die_now>' ||
	{ echo "FAIL build: g_next does not follow f_noret's last call"; exit 1; }
objcopy --strip-debug vmlinux vmlinux.stripped
cp ksmbd.ko "root/lib/modules/$rel/kernel/fs/smb/server/"
cp vmlinux "root/.build-id/${id:0:2}/${id:2}.debug"
readelf -h ksmbd.ko | grep -q 'Type: *REL' && readelf -h vmlinux | grep -q 'Type: *EXEC' &&
	ok objects || bad objects "ksmbd.ko is not ET_REL or vmlinux not ET_EXEC"

declare -A off line
while read -r f o; do off[$f]=$o; done < <( { objdump -d --no-show-raw-insn ksmbd.ko;
	objdump -d --no-show-raw-insn vmlinux; } | srcline_retoffs)
while read -r m l; do line[$m]=$l; done < <(cat "$src/ksmbd.c" "$src/vmlinux.c" | srcline_marks)
for k in smb2_read smb2_open vfs_mystery svc_mystery_alloc mystery_xmit; do
	[ -n "${off[$k]:-}" ] || { echo "FAIL offsets: no call found in $k"; exit 1; }
done
for k in read open inline vfs svc xmit noret; do
	[ -n "${line[$k]:-}" ] || { echo "FAIL marks: no MARK($k) in the sources"; exit 1; }
done

# binutils reads the same DWARF another way: its lines are the ones this test expects
a2l() { # ELF ADDRESS [SECTION] -> the outermost FILE:LINE (after -i, the last), build dir cut
	addr2line -i -e "$1" ${3:+-j "$3"} "$2" | tail -1 | sed "s|^$d/||"
}
vaddr() { printf '0x%x' $(( 16#$(nm vmlinux | awk -v f="$1" '$3 == f { print $1 }') + $2 - 1 )); }
got="$(a2l vmlinux "$(vaddr vfs_mystery "${off[vfs_mystery]}")") $(a2l ksmbd.ko \
	$((off[smb2_read] - 1)) .text.smb2_read) $(a2l ksmbd.ko $((off[smb2_open] - 1)) .text.smb2_open)"
want="${line[vfs]} ${line[read]} ${line[open]}"
[ "$got" = "$want" ] && ok addr2line-agrees || bad addr2line-agrees "addr2line says '$got', the sources '$want'"

# the fixture trace, its sites and one frame moved onto the objects' functions
cp linux.db t.db
sqlite3 t.db "UPDATE tags SET site_sym = 'smb2_read+${off[smb2_read]}' WHERE name = 'kmalloc-256';
	UPDATE frames SET sym = 'smb2_read+${off[smb2_read]}' WHERE sym = 'smb2_read+0x1a2';
	UPDATE tags SET site_sym = 'smb2_open+${off[smb2_open]}' WHERE name = 'kmalloc-8k';
	UPDATE tags SET site_sym = 'vfs_mystery+${off[vfs_mystery]}' WHERE name = 'TCP';
	UPDATE tags SET site_sym = 'svc_mystery_alloc+${off[svc_mystery_alloc]}'
		WHERE name = 'kmalloc-512';
	UPDATE tags SET site_sym = 'mystery_xmit+${off[mystery_xmit]}' WHERE name = 'dentry';
	UPDATE tags SET site_sym = 'g_next+0x0' WHERE name = 'ext4_inode_cache';
	INSERT OR REPLACE INTO meta VALUES('kernel_build_id', '$id')" || exit 1
P=$POOLSCOPE
tagq() { # JSON TAG-PREFIX JQ -> the value for the tag whose label starts so
	jq -r --arg t "$2" ".tags[] | select(.tag | startswith(\$t)) | $3" "$1"
}

# without debuginfo: no lines, and the symbol rules decide (vfs_* is the filesystem's)
"$P" report t.db --top 0 --format json > plain.json || bad plain "exit $?"
[ "$(jq '[.tags[] | select(.site_src != null)] | length' plain.json)" = 0 ] &&
	ok plain-no-lines || bad plain-no-lines "lines without debuginfo"
[ "$(tagq plain.json TCP@ .class)" = file-services/filesystem ] && ok plain-symbol-rule ||
	bad plain-symbol-rule "TCP@vfs_mystery: $(tagq plain.json TCP@ .class), not the vfs_* rule's"
[ "$(tagq plain.json ext4_inode_cache@ .class)" = file-services/filesystem ] &&
	ok plain-cache-rule || bad plain-cache-rule "ext4_inode_cache@g_next: $(tagq plain.json ext4_inode_cache@ .class)"

# --vmlinux and the module found under --debuginfo
"$P" report t.db --top 0 --format json --vmlinux vmlinux --debuginfo root > src.json 2> src.err ||
	bad src "exit $?: $(cat src.err)"
grep -q "source lines for 6 of [0-9]* call sites and frames (vmlinux; modules under $d/root/lib/modules/$rel)" src.err &&
	ok src-count || bad src-count "stderr: $(cat src.err)"
chk() { # NAME TAG JQ WANT
	local g
	g=$(tagq src.json "$2" "$3")
	[ "$g" = "$4" ] && ok "$1" || bad "$1" "$2 $3: got '$g', want '$4'"
}
chk module-line kmalloc-256@ '"\(.site_src.file):\(.site_src.line) \(.site_src.func)"' "${line[read]} smb2_read"
chk module-not-inlined kmalloc-256@ '.site_src.caller' null
chk inline-line kmalloc-8k@ '"\(.site_src.file):\(.site_src.line) \(.site_src.func)"' "${line[inline]} session_alloc"
chk inline-caller kmalloc-8k@ '"\(.site_src.call_file):\(.site_src.call_line) \(.site_src.caller)"' "${line[open]} smb2_open"
chk vmlinux-line TCP@ '"\(.site_src.file):\(.site_src.line)"' "${line[vfs]}"
chk vmlinux-line2 kmalloc-512@ '"\(.site_src.file):\(.site_src.line)"' "${line[svc]}"
# the src rule (net/*) decides before the symbol rule (vfs_*), and says so
chk src-before-symbol TCP@ .class network
chk src-evidence TCP@ '.evidence | sub(" in .*"; "")' "src ${line[vfs]}"
# net/sunrpc belongs to no one path: no src rule names it, and the walk goes on to the symbols
chk sunrpc-no-src-rule kmalloc-512@ '.evidence | startswith("src ")' false
# a path the build gave relative to a build directory under the tree ("../net/...")
chk relative-path dentry@ '"\(.site_src.file):\(.site_src.line)"' "${line[xmit]#../}"
chk relative-path-rule dentry@ .class network
# +0x0 of a function after a noreturn call: the line of that call, in the function before
chk noreturn-line ext4_inode_cache@ '"\(.site_src.file):\(.site_src.line) \(.site_src.func)"' "${line[noret]} f_noret"
chk noreturn-class ext4_inode_cache@ .class network
# a frame's line decides the stack walk: ksmbd's smb2_read frame, past two generic helpers
chk frame-src kmalloc-256@ '.evidence | sub(" in .*"; "")' "src ${line[read]}"
chk frame-class kmalloc-256@ .class file-services/smb-server

"$P" report t.db --top 0 --vmlinux vmlinux --debuginfo root > src.txt 2> /dev/null
grep -qx "  site ${line[read]} smb2_read" src.txt && ok text-site ||
	bad text-site "no '  site ${line[read]} smb2_read' line in the text report"
long=$(awk 'length > 79' src.txt)
[ -z "$long" ] && ok text-width || bad text-width "lines over 79 columns: $long"
"$P" report t.db --top 0 --format csv --vmlinux vmlinux --debuginfo root 2> /dev/null |
	python3 -c '
import csv, sys
rows = {r["tag"].split("@")[0]: r["site_src"] for r in csv.DictReader(sys.stdin)}
sys.exit(0 if rows.get("kmalloc-8k", "").startswith(sys.argv[1] + " smb2_open, inlined " + sys.argv[2])
	 and rows.get("maple_node") == "" else 1)' "${line[open]}" "${line[inline]}" &&
	ok csv-site-src || bad csv-site-src "the CSV's site_src column"
"$P" report t.db --stacks 'kmalloc-256@*' --vmlinux vmlinux --debuginfo root 2> /dev/null |
	grep -q "smb2_read+${off[smb2_read]} \[ksmbd\]  ${line[read]} smb2_read" &&
	ok stacks-frame-line || bad stacks-frame-line "report --stacks shows no line for the smb2_read frame"

# pprof: the function carries its file and line
"$P" export t.db --pprof p.pb.gz --vmlinux vmlinux --debuginfo root 2> /dev/null &&
	go tool pprof -lines -top -cum p.pb.gz 2> /dev/null | grep -q "smb2_read ${line[read]}\$" &&
	ok pprof-lines || bad pprof-lines "go tool pprof -lines shows no smb2_read ${line[read]}"

# the debug root alone: vmlinux found by its build id, the module under lib/modules/RELEASE
"$P" report t.db --top 0 --format json --debuginfo root > root.json 2> root.err &&
	grep -q "(root/.build-id/${id:0:2}/${id:2}.debug; modules" root.err &&
	[ "$(tagq root.json TCP@ .class)" = network ] && ok build-id-link ||
	bad build-id-link "$(cat root.err)"
"$P" diff t.db t.db --debuginfo root > diff.txt 2> diff.err
[ "$(grep -c 'source lines for 6 of' diff.err)" = 2 ] && ok diff-debuginfo ||
	bad diff-debuginfo "$(cat diff.err)"
# a run whose kernel the root has nothing for keeps its own lines; the diff goes on
cp t.db k2.db && sqlite3 k2.db "UPDATE meta SET value = '9.9.9-other' WHERE key = 'kernel';
	UPDATE meta SET value = '${id//0/e}' WHERE key = 'kernel_build_id'"
"$P" diff t.db k2.db --debuginfo root > diff2.txt 2> diff2.err && [ -s diff2.txt ] &&
	grep -q "k2.db: no vmlinux with debuginfo for kernel 9.9.9-other under root.*: its own source lines are used" diff2.err &&
	ok diff-other-kernel || bad diff-other-kernel "$(cat diff2.err)"

# debuginfo that cannot serve: one line naming the file and why, nothing on stdout
refuse() { # NAME WANT-IN-STDERR ARGS...
	local n=$1 w=$2 rc
	shift 2
	"$P" report t.db "$@" > r.out 2> r.err
	rc=$?
	if [ $rc = 1 ] && [ ! -s r.out ] && [ "$(wc -l < r.err)" = 1 ] && grep -q -- "$w" r.err; then
		ok "$n"
	else bad "$n" "exit $rc, stderr: $(cat r.err)"; fi
}
refuse other-build "vmlinux.other: build id ${id//0/f}, but the trace's kernel has $id" \
	--vmlinux vmlinux.other
refuse no-dwarf "vmlinux.stripped: no DWARF" --vmlinux vmlinux.stripped
refuse no-build-id "vmlinux.noid: no build id, but the trace's kernel has $id" --vmlinux vmlinux.noid
# a root whose vmlinux is another build's: refused with its modules, said why
mkdir -p "oroot/boot" "oroot/lib/modules/$rel" && cp vmlinux.other "oroot/boot/vmlinux-$rel" &&
	cp ksmbd.ko "oroot/lib/modules/$rel/"
refuse other-build-root "oroot/boot/vmlinux-$rel: build id ${id//0/f}, but .*(its modules are not used either)" \
	--debuginfo oroot
echo text > notelf
refuse not-elf "notelf: not an ELF file" --vmlinux notelf
refuse no-file "nothere: No such file" --vmlinux nothere
refuse no-root "nodir: not a directory" --debuginfo nodir
mkdir empty
refuse nothing-found "no vmlinux with debuginfo for kernel $rel under empty" --debuginfo empty

# a module tree with a FIFO where a module would be, and reached through a link: read as files
mkdir -p froot/lib/real/kernel && mkfifo froot/lib/real/kernel/ksmbd.ko &&
	cp ksmbd.ko froot/lib/real/kernel/ksmbd.ko.debug && mkdir -p froot/lib/modules &&
	ln -s ../real "froot/lib/modules/$rel"
timeout 20 "$P" report t.db --top 0 --format json --vmlinux vmlinux --debuginfo froot > f.json 2> f.err
rc=$?
[ $rc = 0 ] && [ "$(tagq f.json kmalloc-256@ .site_src.func)" = smb2_read ] && ok fifo-and-link ||
	bad fifo-and-link "exit $rc (124: it hung), $(cat f.err)"

# the trace's own lines (what record writes): read without options, a damaged one refused
cp t.db own.db
sqlite3 own.db "INSERT INTO srclines(module, sym, off, file, line, func) VALUES
	('ksmbd', 'smb2_read', ${off[smb2_read]}, 'fs/smb/server/smb2pdu.c', 77, 'smb2_read')"
"$P" report own.db --top 0 | grep -qx "  site fs/smb/server/smb2pdu.c:77 smb2_read" &&
	ok stored-lines || bad stored-lines "the srclines row is not shown"
# a path too long for the site line's 79 columns loses leading directories, marked '~/',
# never its file name, line or function
cp t.db long.db
ld=fs/smb/server/a-directory-with-a-long-name/and-another-one-below-it/and-a-third
sqlite3 long.db "INSERT INTO srclines(module, sym, off, file, line, func) VALUES
	('ksmbd', 'smb2_read', ${off[smb2_read]}, '$ld/smb2pdu.c', 77, 'smb2_read')"
sl=$("$P" report long.db --top 0 | grep '^  site ')
[ "${#sl}" -le 79 ] && [[ "$sl" == "  site ~/"*"/and-a-third/smb2pdu.c:77 smb2_read" ]] &&
	ok site-long-path || bad site-long-path "site line (${#sl} columns): '$sl'"
"$P" report own.db --top 0 --format json --vmlinux vmlinux --debuginfo root 2> /dev/null |
	jq -e ".tags[] | select(.tag | startswith(\"kmalloc-256@\")) | .site_src.line == ${line[read]#*:}" \
	> /dev/null && ok given-replaces-stored || bad given-replaces-stored "--vmlinux did not replace the stored line"
for dmg in "line = -4" "line = 0" "file = ''" "file = NULL"; do
	cp own.db dmg.db && sqlite3 dmg.db "PRAGMA ignore_check_constraints = 1;
		UPDATE OR IGNORE srclines SET $dmg" 2> /dev/null
	"$P" report dmg.db > r.out 2> r.err
	rc=$?
	if [ "$dmg" = "file = NULL" ] && ! sqlite3 dmg.db "SELECT 1 FROM srclines WHERE file IS NULL" | grep -q 1; then
		continue	# NOT NULL holds: nothing to read
	fi
	[ $rc = 1 ] && grep -q "dmg.db: srclines" r.err && ok "damaged-lines $dmg" ||
		bad "damaged-lines $dmg" "exit $rc, $(cat r.err)"
done
# a table made by hand without its key, two lines for one return address: refused, not chance
cp own.db dup.db && sqlite3 dup.db "ALTER TABLE srclines RENAME TO s0;
	CREATE TABLE srclines(module TEXT NOT NULL, sym TEXT NOT NULL, off INTEGER NOT NULL,
		file TEXT NOT NULL, line INTEGER NOT NULL, func TEXT, caller TEXT, call_file TEXT,
		call_line INTEGER NOT NULL DEFAULT 0);
	INSERT INTO srclines SELECT * FROM s0;
	INSERT INTO srclines(module, sym, off, file, line) SELECT module, sym, off, 'other.c', 5 FROM s0;
	DROP TABLE s0"
"$P" report dup.db > r.out 2> r.err
rc=$?
[ $rc = 1 ] && grep -qx "poolscope report: dup.db: srclines, module 'ksmbd' sym 'smb2_read' off $((off[smb2_read])): 2 rows for one return address, expected one (the table's key is module, sym, off)" r.err &&
	ok duplicate-lines || bad duplicate-lines "exit $rc, $(cat r.err)"
cp linux.db old.db && sqlite3 old.db "DROP TABLE srclines"
"$P" report old.db > /dev/null 2> r.err && ok trace-without-table ||
	bad trace-without-table "$(cat r.err)"

# a user's src rule, with a module: first match wins
printf 'network src fs/smb/server/* ksmbd\ngeneric __kmalloc*\ngeneric __kvmalloc*\n' > my.rules
"$P" report t.db --top 0 --format json --rules my.rules --vmlinux vmlinux --debuginfo root \
	2> /dev/null > my.json
[ "$(tagq my.json kmalloc-256@ .class)" = network ] && ok user-src-rule ||
	bad user-src-rule "$(tagq my.json kmalloc-256@ .class)"
printf 'network src\n' > bad.rules
"$P" report t.db --rules bad.rules > /dev/null 2> r.err
grep -q "bad.rules:1: expected CLASS FIELD PATTERN" r.err && ok src-rule-syntax ||
	bad src-rule-syntax "$(cat r.err)"
exit $failed
