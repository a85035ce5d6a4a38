/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside `poolscope record`: the state one recording keeps (struct rec) and the stages of an
 * interval, one file each. An interval goes one way, poll -> resolve -> write:
 *	bpf.c       open, load and attach the probes; what the kernel offers (BTF probes)
 *	poll.c      read every BPF map and /proc file into the snapshot (snapshot.h)
 *	resolve.c   the snapshot's keys become trace tags, scaled samples and class counters
 *	stacks.c    what a kernel stack means: a page's call site, a sampled stack's symbols
 *	write.c     the snapshot into the trace in one pass; the trace's meta
 *	metrics.c   --listen: the interval as a metrics page for the endpoint thread
 *	recorder.c  setup, the interval loop, the command and its workload, the status line
 * Only write.c adds to the trace (recorder.c creates and closes it).
 */
#ifndef PS_RECORD_REC_H
#define PS_RECORD_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "userspace/record/recorder.h"
#include "userspace/record/snapshot.h"
#include "userspace/lib/kmem/slabnames.h"
#include "userspace/lib/util/util.h"

/* The tracepoints the probes attach to (bpf.c); a missing optional one disables its program. */
#define REC_NPROGS 8

/* A trace tag, and what the BPF keys mapped to it did in the current interval. */
struct utag {
	struct ps_tag tag;
	char name[96], cache[96], alias[64], site_sym[160], site_module[64];
	uint64_t d_allocs, d_frees, d_abytes, d_fbytes;
	int64_t live_objs, live_bytes;	/* scaled, since start */
	bool dirty;
	uint64_t scale;
	/* metrics.c: the tag's top-level path (index in its table, -1: none), attributed yet */
	int16_t mpath;
	bool mattr, mstk;	/* attributed; by its stacks (then kept) */
};

struct rec_tfs;

struct rec {
	const struct ps_record_opts *o;
	struct rec_tfs *tfs;		/* the tracefs backend, NULL with BPF */
	/*
	 * replay.c: a trace-cmd capture converted. Nothing is read from /proc (the capture's
	 * machine is not this one), symbols come from the capture (sym_find), times from it.
	 */
	bool replay;
	const char *replay_source;	/* meta source */
	const struct ps_ksym *(*sym_find)(const struct rec *r, uint64_t addr, uint64_t *off);
	void *sym_ctx;
	struct kmem_bpf *skel;
	/* the arrays with a region per CPU, mapped (bpf.c): counters, class slots */
	const uint64_t *ctr_map;
	const struct ps_class_slot *slot_map;
	size_t ctr_map_len, slot_map_len;
	struct kmem_empty_bpf *empty;
	struct ps_trace *t;
	char build_id[128];		/* the running kernel's (hex), "" when it has none */
	struct ps_srcmap *srcmap;	/* the kernel's debuginfo, NULL without */
	char srcmap_why[256];		/* why there is none */
	struct ps_kallsyms *ks;
	struct ps_slabnames *sn;
	int ncpus;			/* possible CPUs: the values of a per-CPU map */
	int cpu_ids;			/* highest possible CPU id + 1: the arrays' regions */
	uint64_t scale;
	struct snap snap;
	/* resolve.c's mirrors of the BPF keys */
	struct ps_htab btags;		/* ps_tag_key -> btag */
	struct ps_htab page_utags;	/* page_ukey -> utag */
	struct ps_htab classes;		/* cls -> cls_info */
	struct utag **utags;
	size_t nutags, cap_utags;
	void *valbuf;			/* one per-CPU map value */
	uint64_t totals[PS_C_MAX];
	/* status */
	int64_t live_total;
	const struct utag *top;		/* most live bytes gained since start (no slab backing) */
	uint64_t events_prev;
	/* workload */
	struct ps_workload_shm *wl;
	char wl_path[64];
	struct ps_workload_shm wl_prev;
	bool disabled[REC_NPROGS];
	uint64_t recursion_misses;	/* summed over the programs, at the last interval */
	bool no_kfunc;			/* kmalloc classes by size, all kmalloc objects tracked */
	uint32_t map_ptrs;		/* effective size of the pointer map */
	struct rec_metrics *m;		/* --listen */
	/* write.c: the value last written of each sysstat, slabinfo and counter row */
	struct ps_htab lastw;		/* kind + name -> index + 1 in lastv */
	struct { int64_t a, b; } *lastv;
	size_t nlastv, caplastv;
	bool lastw_ok;
	char *err;
	size_t errlen;
};

/* The symbol at addr: the capture's (replay) or /proc/kallsyms'. */
static inline const struct ps_ksym *rec_sym(const struct rec *r, uint64_t addr, uint64_t *off)
{
	return r->sym_find ? r->sym_find(r, addr, off) : ps_kallsyms_find(r->ks, addr, off);
}

static inline uint64_t rec_now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* --filter options: every tracked object is counted, nothing is scaled. */
static inline bool rec_filtered(const struct ps_record_opts *o)
{
	return o->comm || o->pid || o->cgroup;
}

/* "what[ arg]: strerror(e)" into r->err; returns e. */
static inline int rec_fail(struct rec *r, int e, const char *what, const char *arg)
{
	snprintf(r->err, r->errlen, "%s%s%s: %s", what, arg ? " " : "", arg ? arg : "",
		 ps_strerror(e));
	return e;
}

/* bpf.c */
int rec_bpf_load(struct rec *r);
int rec_bpf_load_empty(struct rec *r);
/* Unmaps the arrays and destroys the skeleton (NULL or not). */
void rec_bpf_close(struct rec *r);
/* Highest possible CPU id + 1, or -errno. */
int rec_bpf_cpu_ids(void);
/* The disabled tracepoints, comma-separated, into buf. */
void rec_bpf_disabled(const struct rec *r, char *buf, size_t len);

/*
 * tracefs.c: the backend without BPF. open sets it up (an instance, the kmem events, the page
 * stack trigger); drain reads the ring buffers into its mirror (often: they are finite); poll
 * drains and fills the snapshot as poll.c does from the BPF maps.
 */
#define REC_TRACEFS_DRAIN_MS 100
int rec_tracefs_open(struct rec *r);
/*
 * The mirror alone, decoding by tep's formats (a trace.dat's: replay.c), and one record fed
 * to it; -ENOMEM, or -ENOENT with r->err when tep lacks the kmem events. self: the pid whose
 * allocations are the recorder's own (counted in their class, no tag); -1 for a capture,
 * which no poolscope process recorded.
 */
struct tep_handle;
struct tep_record;
int rec_tracefs_mirror(struct rec *r, struct tep_handle *tep, int self);
int rec_tracefs_event(struct rec *r, struct tep_record *record, int cpu);
int rec_tracefs_drain(struct rec *r);
int rec_tracefs_poll(struct rec *r);
void rec_tracefs_close(struct rec *r);

/* recorder.c: one interval, poll -> resolve -> write (-> metrics). */
int rec_interval(struct rec *r, uint32_t idx, uint64_t t_ns, uint64_t dur_ns, bool final);

/* poll.c: fills the first part of r->snap. */
int rec_poll(struct rec *r, uint32_t idx, uint64_t t_ns, uint64_t dur_ns, bool stacks);

/* resolve.c: fills the second part of r->snap and the totals the status line shows. */
int rec_resolve_init(struct rec *r);
void rec_resolve_fini(struct rec *r);
int rec_resolve(struct rec *r);
/* Whether a BPF tag key has its trace tag (poll reads a new page key's stack). */
bool rec_tag_known(const struct rec *r, const struct ps_tag_key *k);
/* Whether a class is named without the cache_info map (poll reads it for the others). */
bool rec_class_known(const struct rec *r, uint64_t cls);
/* The trace tag of a BPF tag key, NULL when it has none yet. */
const struct utag *rec_tag_of(const struct rec *r, const struct ps_tag_key *k);
const char *rec_ctx_name(uint8_t ctx);

/* stacks.c */
/* The call site of a page stack and whether the page backs a slab or a large kmalloc. */
uint64_t rec_page_site(const struct rec *r, const struct snap_frames *f, bool *backing);
void rec_resolve_stacks(struct rec *r);

/* metrics.c: the endpoint started, and one page per interval after the write. */
int rec_metrics_init(struct rec *r);
int rec_metrics_update(struct rec *r);
void rec_metrics_fini(struct rec *r);

/* write.c */
int rec_write_meta(struct rec *r);
/* final: the recording's last interval (every series is written in full) */
int rec_write(struct rec *r, bool final);
void rec_write_fini(struct rec *r);

#endif
