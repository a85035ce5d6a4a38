#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Live: the tracefs backend (record --backend tracefs) beside the BPF recorder, both recording
# the same 10000 open files, held until both traces end. Per cache (the inode cache, dentry,
# filp), the growth of the exact class counters at the peak must be within 5% of the BPF
# recorder's; the trace says it came from tracefs, counts every object (site sample 1), gives
# page tags their call sites (the stacktrace trigger) and flags the pages under slabs; in both
# traces the file-services path grows with the file leak's filp tag among its first three
# suspects; no tracefs instance is left behind, also after a SIGKILL (the next start removes
# it); filters are refused; and --backend auto, run where BPF is refused (capsh drops CAP_BPF,
# CAP_PERFMON and CAP_SYS_ADMIN), records through tracefs and says so.
set -u
. "$(dirname "$0")/lib/record_common.sh"
ps_need_root
T=$(mktemp -d /var/tmp/ps-rec-tfs.XXXXXX)
trap 'kill $bp $tp $lp 2> /dev/null; wait; rm -rf "$T"' EXIT
bp= tp= lp=
fail() { echo "FAIL: $*"; exit 1; }
inst() { ls /sys/kernel/tracing/instances 2> /dev/null | grep -c '^poolscope-'; }
mkdir "$T/leak"
case $(stat -f -c %T "$T/leak") in
ext2/ext3|ext4) icache=ext4_inode_cache ;;
tmpfs) icache=shmem_inode_cache ;;
*) echo "skip: $T is on $(stat -f -c %T "$T/leak"), the test knows ext4 and tmpfs"; exit 77 ;;
esac

# Both recorders run until the test stops them, after the files are held (fileleak says
# "ready") and each trace has committed an interval read after that: the leak is held at the end
# of both traces whatever either recorder's start took, and the report reads the whole trace.
# The tracefs recorder's ring buffers (~15 MiB of pages, allocated by its writes to tracefs:
# file-services frames) are in the BPF trace's baseline and still held at its end: it starts
# first and stops last. Started together, they were allocated before the BPF baseline and freed
# before its last interval when the teardown won the race, and that drop cancelled the file
# leak's growth on the path.
ps_start_recorder "$T/tfs.db" --duration 120 --backend tracefs || exit 1
tp=$REC_PID
ps_start_recorder "$T/bpf.db" --duration 120 --backend bpf || exit 1
bp=$REC_PID REC_PID=
sleep 1
ps_start_ready lp "$T/leak.out" "$PS_LIVE_BIN/fileleak" 10000 120 "$T/leak" || exit 1
for b in bpf tfs; do ps_next_idx "$T/$b.db" > /dev/null || fail "$b: no interval after the files were held"; done
sleep 1
kill -INT $bp
wait $bp || fail "the BPF recorder: $(cat "$T/bpf.db.err")"
kill -INT $tp
wait $tp || fail "the tracefs recorder: $(cat "$T/tfs.db.err")"
bp= tp=
kill $lp; wait $lp
lp=

# the growth of a class's exact counters from the first interval to their peak (a class that
# had no event yet has no row: 0)
peak() { # db cache
	sqlite3 "$1" "WITH a AS (SELECT interval, value FROM counter_values WHERE name = 'class.$2.alloc_bytes'),
		f AS (SELECT interval, value FROM counter_values WHERE name = 'class.$2.free_bytes')
		SELECT max(coalesce(a.value, 0) - coalesce(f.value, 0)) - coalesce((SELECT coalesce(a0.value, 0) -
		coalesce(f0.value, 0) FROM a a0 JOIN f f0 USING (interval) WHERE interval = 0), 0)
		FROM a JOIN f USING (interval)"
}
for c in $icache dentry filp; do
	b=$(peak "$T/bpf.db" $c) t=$(peak "$T/tfs.db" $c)
	[ -n "$b" ] && [ -n "$t" ] && [ "$b" -gt 1000000 ] || fail "$c: no growth to compare (bpf '$b', tracefs '$t')"
	awk -v b="$b" -v t="$t" 'BEGIN { d = (t - b) / b; exit !(d <= 0.05 && d >= -0.05) }' ||
		fail "$c: tracefs +$t bytes, BPF +$b: more than 5% apart"
	echo "ok: $c: tracefs +$t, BPF +$b bytes ($(awk -v b="$b" -v t="$t" 'BEGIN { printf "%+.1f%%", 100 * (t - b) / b }'))"
done

m() { sqlite3 "$T/tfs.db" "SELECT value FROM meta WHERE key = '$1'"; }
[ "$(m backend)" = tracefs ] && [ "$(m site_sample_rate)" = 1 ] && [ "$(m kmalloc_tracking)" = tracefs ] ||
	fail "meta: backend '$(m backend)', site_sample_rate '$(m site_sample_rate)', kmalloc_tracking '$(m kmalloc_tracking)'"
[ "$(sqlite3 "$T/bpf.db" "SELECT value FROM meta WHERE key = 'backend'")" = bpf ] || fail "the BPF trace's meta backend"
echo "ok: meta backend tracefs, every object counted"
sites=$(sqlite3 "$T/tfs.db" "SELECT count(*) FROM tags WHERE kind = 'page' AND site_sym IS NOT NULL")
backing=$(sqlite3 "$T/tfs.db" "SELECT count(*) FROM tags WHERE kind = 'page' AND flags & 2")
[ "$sites" -gt 0 ] && [ "$backing" -gt 0 ] || fail "page tags with a call site: $sites, flagged slab-backing: $backing"
echo "ok: $sites page tags with call sites, $backing under slabs"
# in both traces, which end with the files held, the file-services path grows and the file
# leak's filp tag is among its first three suspects (what else grows meanwhile, other work on the machine, may lead other paths
# or the verdict; the slab extension vectors of the new filp slabs, whose stacks reach the
# file opens, can rank above filp on the path)
for b in bpf tfs; do
	"$POOLSCOPE" report "$T/$b.db" --format json --path file-services \
		> "$T/$b.fs.json" || fail "$b: report --path file-services"
	st=$(jq -r '.paths[] | select(.path == "file-services") | .state' "$T/$b.fs.json")
	top=$(jq -r '[.tags[:3][].tag] | join(" ")' "$T/$b.fs.json")
	case "$st:$top" in
	stable:*|:*) fail "$b: the file-services path is '$st' (top: $top)" ;;
	*filp@*) echo "ok: $b: file-services $st, filp among its first suspects: $top" ;;
	*) fail "$b: no filp tag among the file-services path's first three: $top" ;;
	esac
done
[ "$(inst)" = 0 ] || fail "a tracefs instance is left: $(ls /sys/kernel/tracing/instances)"
echo "ok: no instance left"

# SIGKILL: the instance stays; the next recorder's start removes it
"$POOLSCOPE" record -o "$T/k.db" -q --backend tracefs --duration 20 > /dev/null 2>&1 &
kp=$!
for _ in $(seq 50); do [ "$(inst)" -gt 0 ] && break; sleep 0.1; done
sleep 1
kill -KILL $kp; wait $kp 2> /dev/null
[ "$(inst)" -gt 0 ] || fail "no instance after SIGKILL (expected one to clean up)"
"$POOLSCOPE" record -o "$T/k2.db" -q --backend tracefs --duration 1 > "$T/k2.log" 2>&1 || fail "$(cat "$T/k2.log")"
[ "$(inst)" = 0 ] || fail "the killed recorder's instance was not removed: $(ls /sys/kernel/tracing/instances)"
echo "ok: a killed recorder's instance is removed by the next one"

out=$("$POOLSCOPE" record -o "$T/c.db" --backend tracefs --comm smbd --duration 1 2>&1)
[ $? = 1 ] && grep -q 'need the BPF backend' <<< "$out" || fail "--comm with tracefs: $out"
echo "ok: filters refused with tracefs"

# auto where BPF is refused: no CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN
if ! command -v capsh > /dev/null; then fail "capsh not found (libcap2-bin)"; fi
mkdir "$T/auto"
capsh --drop=cap_bpf,cap_perfmon,cap_sys_admin -- -c \
	"'$POOLSCOPE' record -o '$T/auto.db' --backend auto -- '$PS_LIVE_BIN/fileleak' 2000 2 '$T/auto'" \
	> "$T/auto.log" 2>&1 || fail "auto without CAP_BPF: $(cat "$T/auto.log")"
grep -q 'BPF unavailable (.*): recording through tracefs' "$T/auto.log" || fail "auto did not say it fell back: $(cat "$T/auto.log")"
[ "$(sqlite3 "$T/auto.db" "SELECT value FROM meta WHERE key = 'backend'")" = tracefs ] || fail "auto's trace: backend not tracefs"
n=$(sqlite3 "$T/auto.db" "SELECT max(value) FROM counters WHERE name = 'class.filp.allocs'")
[ -n "$n" ] && [ "$n" -ge 2000 ] || fail "auto's trace: $n filp allocations for 2000 files opened"
echo "ok: auto without CAP_BPF records through tracefs ($n filp allocations) and says why: $(grep -o 'BPF unavailable ([^)]*)' "$T/auto.log")"
