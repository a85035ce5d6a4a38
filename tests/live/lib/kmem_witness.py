#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What tests/live/record_kmalloc.sh's witness saw, against the recorder's pointer map.

The witness is a tracefs instance on kmem:kmalloc and kmem:kfree for the call sites of
fs/eventfd.c, pointers unhashed. Subcommands:

  mapid ID...             the ids among ID... of the maps named "ptrs" in bpftool's JSON map
                          list on stdin (the recorder's pointer map among the maps it holds).
  mapdump SITE OUT        bpftool's JSON dump of the recorder's map "ptrs" on stdin; writes
                          every tracked address with its site ("hexaddr site" a line) to OUT
                          and prints how many are at SITE.
  report TRACE MAP SITE PID N LOST LABEL LIVEOUT
                          two lines: one for people, then "fields LOST PIDALLOC LIVE PIDLIVE
                          LEFT_FREED LEFT_PIDLIVE PIDLIVE_NOTINMAP" for the checks. PID's
                          objects are the ones it allocated before the marker line the test
                          writes when it has waited for PID (a pid reused later is not PID).
                          MAP is mapdump's file, or - (not read: the last three are -1).
                          PID's live addresses go to LIVEOUT.
  probe TRACE LIVE MAP SITE PAGE LOST LABEL
                          where the objects in LIVE stand after the probe's allocations
                          recorded in TRACE; MAP (or -) is the pointer map read after it.
"""
import json
import re
import sys

EVENT = re.compile(r"-(\d+)\s+\[\d+\].*?\b(kmalloc|kfree): call_site=\S+ ptr=(?:0x)?([0-9a-f]+)")
MARK = "ps-witness-mark"


def events(path):
    """(kind, pid, address) of each kmalloc/kfree line; ("mark", None, None) for the marker."""
    for line in open(path, errors="replace"):
        if MARK in line:
            yield "mark", None, None
            continue
        m = EVENT.search(line)
        if m:
            yield m.group(2), m.group(1), int(m.group(3), 16)


def read_map(path):
    """{address: site} of mapdump's file, or None for -."""
    if path == "-":
        return None
    out = {}
    for line in open(path):
        a, s = line.split()
        out[int(a, 16)] = int(s)
    return out


def mapid(*ids):
    mine = set(int(x) for x in ids)
    print(" ".join(str(m["id"]) for m in json.load(sys.stdin)
                   if m.get("name") == "ptrs" and m["id"] in mine))


def mapdump(site, out):
    # The dump of a no-kfunc recorder's map is near a gigabyte of JSON, nearly all of it empty
    # buckets (raw bytes, then BTF-formatted): json.load takes a minute and gigabytes. Only
    # the formatted buckets with a tracked address are decoded.
    site, text = int(site), sys.stdin.read()
    rows, buckets, dec = [], 0, json.JSONDecoder()
    for m in re.finditer(r'"addr":\[([0-9,]*)\],"val":', text):
        buckets += 1
        if not m.group(1).strip("0,"):
            continue
        vals, _ = dec.raw_decode(text, m.end())
        rows += [(int(a) % (1 << 64), v["tag"]["site"])
                 for a, v in zip(m.group(1).split(","), vals) if int(a)]
    if not buckets:
        sys.exit("mapdump: no BTF-formatted buckets in the dump")
    with open(out, "w") as f:
        f.write("".join("%x %d\n" % r for r in rows))
    print(sum(1 for _, s in rows if s == site))


def report(trace, mapf, site, pid, n, lost, label, liveout):
    last, owner, nalloc, nfree, pidalloc, marked = {}, {}, 0, 0, 0, False
    for kind, p, a in events(trace):
        if kind == "mark":
            marked = True
        elif kind == "kmalloc":
            nalloc += 1
            mine = p == pid and not marked
            pidalloc += mine
            owner[a] = mine
            last[a] = kind
        else:
            nfree += 1
            last[a] = kind
    live = {a for a, k in last.items() if k == "kmalloc"}
    pidlive = {a for a in live if owner.get(a)}
    with open(liveout, "w") as f:
        f.write("".join("%x\n" % a for a in sorted(pidlive)))
    out = ("[%s] witness (tracefs instance, fs/eventfd.c call sites): %d kmalloc (%d of them "
           "evleak's), %d kfree, %d still live (%d of them evleak's), %s events lost" %
           (label, nalloc, pidalloc, nfree, len(live), len(pidlive), lost))
    tracked = read_map(mapf)
    if tracked is None:
        print(out + "; the pointer map was not read")
        print("fields %s %d %d %d -1 -1 -1" % (lost, pidalloc, len(live), len(pidlive)))
        return
    site = int(site)
    left = {a for a, s in tracked.items() if s == site}
    freed = sum(1 for a in left if last.get(a) == "kfree" and owner.get(a))
    # an address tracked under another site was handed out again: an implicit free, charged
    notinmap = len(pidlive - set(tracked))
    print(out + "; of the %d do_eventfd objects left in the pointer map, %d are evleak's with "
          "their kfree reported and %d evleak's never reported freed; %d of evleak's never "
          "reported freed are not in the map; %d left were never seen allocated" %
          (len(left), freed, len(left & pidlive), notinmap,
           sum(1 for a in left if a not in last)))
    print("fields %s %d %d %d %d %d %d" % (lost, pidalloc, len(live), len(pidlive), freed,
                                           len(left & pidlive), notinmap))


def probe(trace, livef, mapf, site, page, lost, label):
    left = [int(x, 16) for x in open(livef).read().split()]
    page, site = int(page), int(site)
    given, late, pages = set(), set(), set()
    for kind, _, a in events(trace):
        if kind == "kmalloc":
            given.add(a)
            pages.add(a // page)
        elif kind == "kfree" and a not in given:
            late.add(a)
    tracked = read_map(mapf)
    v = {"late": 0, "again": 0, "held": 0, "slab": 0, "none": 0}
    for a in left:
        if a in late:
            v["late"] += 1		# its kfree came after all, with its event
        elif a in given:
            v["again"] += 1		# free when the probe was handed it
        elif a // page not in pages:
            v["none"] += 1		# its slab gone (freed), full, or on no probed CPU
        elif tracked is not None and tracked.get(a) == site:
            v["held"] += 1		# slab drained, and no kmalloc took it meanwhile
        else:
            v["slab"] += 1		# slab drained, but another caller may have taken it
    print("[%s] probe of the %d objects the kernel never reported freed (kmalloc-64 drained "
          "from each CPU, %s events lost): %d freed late with their event; %d handed out "
          "again (freed with no kfree event); %d still allocated (their slab drained without "
          "them, and no kmalloc took them meanwhile); %d not handed out from a drained slab, "
          "unknown whether another caller holds them (no pointer map of every kmalloc); %d "
          "in no slab the probe drained" % (label, len(left), lost, v["late"], v["again"],
                                            v["held"], v["slab"], v["none"]))


if __name__ == "__main__":
    # argument counts; None: any number
    cmds = {"mapid": (mapid, None), "mapdump": (mapdump, 2), "report": (report, 8),
            "probe": (probe, 7)}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds or \
            cmds[sys.argv[1]][1] not in (None, len(sys.argv) - 2):
        sys.exit(__doc__)
    cmds[sys.argv[1]][0](*sys.argv[2:])
