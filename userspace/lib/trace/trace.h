/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The poolscope trace file: one SQLite database (WAL) per run, written by `record` (Linux eBPF)
 * and by `convert` (Windows ETL / poolmon / sample files), read by report, diff, export, plot.
 * docs/trace-format.md documents the schema; this header is its C face.
 *
 * Writer: ps_trace_create() -> meta, tags, then for each interval
 *	ps_trace_begin_interval() ... samples, sysstat, slabinfo, counters, workload ...
 *	ps_trace_commit_interval()
 * One transaction per interval, so a recorder killed by SIGKILL leaves a readable file that
 * misses at most the interval being written.
 *
 * Reader: ps_run_load() reads a whole trace into memory (struct ps_run) for analysis; analysis/
 * never touches SQLite, so its tests build runs in memory.
 */
#ifndef PS_TRACE_H
#define PS_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "userspace/lib/trace/keys.h"

#define PS_TRACE_SCHEMA_VERSION 1
/* SQLite application_id: "PSCP". A file without it is not ours. */
#define PS_TRACE_APP_ID 0x50534350

/*
 * What a trace holds (docs/trace-format.md, "What a reader checks"): at most 2^24 intervals;
 * times in ns up to 2^62 (146 years); counts and sizes up to 2^52 (4 PiB: more is damage); the
 * values one sum of the analysis meets add up to at most 2^61. The reader refuses a file past
 * these, and the writer refuses an interval past them, so what is written can be read.
 */
#define PS_TRACE_MAX_INTERVALS	(1u << 24)
#define PS_TRACE_TIME_MAX	(INT64_C(1) << 62)
#define PS_TRACE_ABSURD		(INT64_C(1) << 52)
#define PS_TRACE_SUM_MAX	(INT64_C(1) << 61)

struct ps_src;

/* One tag: what allocations are grouped by. Strings may be NULL (stored as NULL). */
struct ps_tag {
	int64_t id;		/* assigned by the writer / read back */
	const char *kind;	/* PS_KIND_* */
	const char *name;	/* display name: cache (named slab), "kmalloc-256", "order-3", "LSbf" */
	const char *cache;	/* slab cache (resolved real name), kmalloc bucket or pool tag */
	const char *cache_alias;/* name the kernel reported when it differs (merged SLUB caches) */
	uint64_t site;		/* call site address (0: none); Windows: 0 */
	const char *site_sym;	/* "tcp_sendmsg_locked+0x1a2" */
	const char *site_module;/* NULL for vmlinux, "ksmbd"; Windows: "srv2.sys" */
	const char *pool;	/* Linux "unreclaimable"/"reclaimable"; Windows "nonpaged"/"paged"/"session" */
	const char *ctx;	/* "task", "softirq", "hardirq" or NULL (not split) */
	const char *comm;	/* task comm class when the recorder splits by it, else NULL */
	const char *owner;	/* driver/description (pooltag.txt), else NULL */
	uint32_t flags;		/* PS_TAG_F_* */
	const char *domain;	/* PS_DOMAIN_*: decided by the writer; NULL in traces older than it */
	const struct ps_src *site_src;	/* the call site's source line (ps_run_link_srcs), or NULL */
};

/*
 * Per tag per interval. allocs, frees and the byte counts say what happened during the interval;
 * live_* is the state at its end, counted from the start of the recording (Linux record, ETL)
 * or absolute (poolmon snapshots: meta "live_absolute" = 1). Growth is live(end) - live(start)
 * either way.
 */
struct ps_sample {
	uint64_t allocs;
	uint64_t frees;
	uint64_t alloc_bytes;
	uint64_t free_bytes;
	int64_t live_objs;
	int64_t live_bytes;
};

/* One interval of the workload (poolscope load): IOs completed in it and their latency. */
struct ps_workload {
	uint64_t ios;
	uint64_t bytes;
	uint64_t errors;
	uint64_t lat_p50_ns;
	uint64_t lat_p99_ns;
	uint64_t lat_max_ns;
	uint32_t inflight;	/* outstanding IOs at the end of the interval (all workers) */
};

/* One /proc/slabinfo line (or the kmem_cache iterator), ground truth beside the tracked numbers. */
struct ps_slabinfo {
	const char *cache;
	uint64_t active_objs;
	uint64_t num_objs;
	uint32_t objsize;
	uint32_t objperslab;
	uint32_t pagesperslab;
};

/* One frame of a stack; depth 0 is the innermost (the allocator side). */
struct ps_frame {
	uint64_t addr;
	const char *sym;	/* NULL when unresolved */
	uint64_t off;		/* offset into sym, or into module when sym is NULL */
	const char *module;	/* NULL for vmlinux; "ksmbd", "srv2.sys" */
	const struct ps_src *src;	/* its source line (ps_run_link_srcs), or NULL */
};

/*
 * The source line of a code address (the srclines table), keyed by what call sites and frames
 * are stored as: the module ("" for vmlinux), the symbol without "+0x..", and the whole offset
 * into it. Read from the kernel's debuginfo (DWARF) when the trace was written or analyzed.
 */
struct ps_src {
	const char *module;
	const char *sym;
	uint64_t off;
	const char *file;	/* the line the address is on: "net/ipv4/tcp.c", relative to the build */
	uint32_t line;
	const char *func;	/* the function that line is in: an inlined one, or the caller itself */
	const char *caller;	/* when func was inlined: the out-of-line function holding it */
	const char *call_file;	/* and the line in caller that inlined it */
	uint32_t call_line;
};

/*
 * Splits a stored symbol ("name" or "name+0x1a2") and a frame's off into the srclines key:
 * base gets the name, the return is the whole offset.
 */
uint64_t ps_src_key(const char *sym, uint64_t off, char *base, size_t len);

/* A sampled stack of one tag with what was counted on it. */
struct ps_stack {
	int64_t id;
	int64_t tag_id;
	uint64_t hash;		/* content hash of the frame addresses (unique per tag) */
	uint64_t allocs;	/* sampled allocations seen with this stack */
	uint64_t bytes;		/* their bytes */
	int64_t live_bytes;	/* of them, still live at the end (estimate, scaled by sample rate) */
	const char *comm;	/* comm of the first sample */
	const char *ctx;
	uint32_t nframes;
	struct ps_frame *frames;
};

struct ps_trace;

#define PS_TRACE_F_FORCE 0x1	/* replace an existing file */
/*
 * Commit every PS_TRACE_BATCH intervals instead of each one: for writers whose output is
 * worthless unless finished (convert, which removes it on failure). A recorder, whose trace
 * must survive its being killed, commits each interval.
 */
#define PS_TRACE_F_BATCH 0x2
#define PS_TRACE_BATCH	1024

/* Creates a new trace (mode 0600). -EEXIST when path exists and !FORCE. */
int ps_trace_create(struct ps_trace **out, const char *path, unsigned flags);
/* Finishes (checkpoints the WAL) and frees. NULL is fine. Returns 0 or -errno. */
int ps_trace_close(struct ps_trace *t);
/*
 * Abandons a trace whose content is worthless (a recorder that failed to start, a conversion
 * that failed): closes it without committing and removes the file with SQLite's side files.
 * NULL is fine.
 */
void ps_trace_discard(struct ps_trace *t);
/* Last SQLite/format error text for messages, never NULL. */
const char *ps_trace_errmsg(const struct ps_trace *t);

int ps_trace_set_meta(struct ps_trace *t, const char *key, const char *value);
int ps_trace_set_meta_int(struct ps_trace *t, const char *key, int64_t value);

/* Adds a tag; sets tag->id. Tags may be added at any time, also inside an interval. */
int ps_trace_add_tag(struct ps_trace *t, struct ps_tag *tag);

/*
 * Interval idx (0, 1, ...), ending t_ns after the start of the run, wall clock wall_ns (ns since
 * the epoch, 0 when unknown), lasting dur_ns. Everything until commit belongs to it. -ERANGE for
 * an idx from PS_TRACE_MAX_INTERVALS or a time past PS_TRACE_TIME_MAX.
 */
int ps_trace_begin_interval(struct ps_trace *t, uint32_t idx, uint64_t t_ns, uint64_t wall_ns,
			    uint64_t dur_ns);
int ps_trace_add_sample(struct ps_trace *t, int64_t tag_id, const struct ps_sample *s);
/* /proc/meminfo-like counter in bytes: "SUnreclaim", "Slab", "NonPagedPool", ... */
int ps_trace_add_sysstat(struct ps_trace *t, const char *name, int64_t value);
int ps_trace_add_slabinfo(struct ps_trace *t, const struct ps_slabinfo *si);
/* Cumulative counter, e.g. "events.kmalloc", "drops.ptr_map_full", "recursion_misses". */
int ps_trace_add_counter(struct ps_trace *t, const char *name, int64_t value);
int ps_trace_add_workload(struct ps_trace *t, const struct ps_workload *w);
int ps_trace_commit_interval(struct ps_trace *t);

/* Adds or replaces (by tag_id, hash) a stack with its frames; sets st->id. */
int ps_trace_put_stack(struct ps_trace *t, struct ps_stack *st);
/* Adds or replaces (by module, sym, off) a source line. */
int ps_trace_put_src(struct ps_trace *t, const struct ps_src *src);
/*
 * Calls fn for each distinct (module, sym, off) the trace's tags and frames name so far, module
 * "" for vmlinux; stops at fn's first nonzero return, which it returns.
 */
int ps_trace_each_src_key(struct ps_trace *t,
			  int (*fn)(void *ctx, const char *module, const char *sym, uint64_t off),
			  void *ctx);


/* --- the in-memory run ------------------------------------------------------------------------ */

struct ps_meta_kv {
	char *key;
	char *value;
};

struct ps_interval {
	uint64_t t_ns;
	uint64_t wall_ns;
	uint64_t dur_ns;
};

/* A named per-interval series (sysstat, counters), value at each interval (-1 when absent). */
struct ps_series {
	char *name;
	int64_t *v;		/* [nintervals] */
	/*
	 * sysstat of a run read as points of several intervals (per_point > 1): the smallest and
	 * largest value of the point's intervals (-1: none), so a plot shows what v, the point's
	 * end, hides. NULL otherwise.
	 */
	int64_t *lo, *hi;
};

struct ps_tag_series {
	struct ps_tag tag;	/* strings owned by the run */
	struct ps_sample *s;	/* [nintervals]; live_* carried forward over intervals with no row */
	struct ps_sample total;	/* allocs/frees/bytes summed, live_* at the last interval */
	/*
	 * The first interval with a row of this tag (nintervals: none; 0 for runs built in
	 * memory). Before it, a trace of absolute snapshots (meta live_absolute = 1: poolmon,
	 * !poolused, sample files) did not list the tag, which says nothing about it: its live_*
	 * there are those of its first row, so that growth is measured only from where it is
	 * listed. In other traces they are 0 (nothing allocated since the start), and so are
	 * those of a tag flagged PS_TAG_F_BORN_LATE (its counters said it was new).
	 */
	uint32_t first;
};

struct ps_slab_series {
	char *cache;
	uint32_t objsize;
	uint32_t objperslab, pagesperslab;	/* 0 when not known */
	int64_t *active_objs;	/* [nintervals], -1 when absent */
	int64_t *num_objs;
};

struct ps_run {
	char *path;
	size_t nmeta;
	struct ps_meta_kv *meta;
	uint32_t nintervals;
	struct ps_interval *intervals;
	size_t ntags;
	struct ps_tag_series *tags;	/* index i has tags[i].tag.id, ids need not be dense */
	size_t nsys;
	struct ps_series *sys;
	size_t ncounters;
	struct ps_series *counters;
	size_t nslab;
	struct ps_slab_series *slab;
	bool has_workload;
	struct ps_workload *workload;	/* [nintervals] */
	size_t nstacks;
	struct ps_stack *stacks;
	/*
	 * Intervals of the file per interval of the run: 1, or more for a trace longer than the
	 * reader's max_points (ps_run_load_points); src_intervals is how many the file has.
	 */
	uint32_t per_point;
	uint32_t src_intervals;
	size_t nsrcs;
	struct ps_src **srcs;		/* sorted by key after ps_run_link_srcs */
};

/*
 * Loads a trace. On error returns -errno or -PS_ERR__* and writes a message naming the file and
 * what is wrong into err (when err is not NULL).
 */
int ps_run_load(struct ps_run **out, const char *path, char *err, size_t errlen);
/*
 * The most points a run holds; a longer trace is read as runs of intervals (trace.h, per_point).
 * The analysis reduces every series to PS_TREND_MAX_POINTS (512) for its statistics anyway; a
 * plot is about this many pixels wide. Memory then stays bounded by the tags: 48 bytes per tag
 * per point.
 */
#define PS_RUN_MAX_POINTS 1024
/* ps_run_load with another limit (0: none, every interval its own point). */
int ps_run_load_points(struct ps_run **out, const char *path, uint32_t max_points, char *err,
		       size_t errlen);
void ps_run_free(struct ps_run *r);

/*
 * In-memory construction (tests, converters): an empty run with n intervals. The series the
 * ps_run_add_* functions return live in arrays that the next add of the same kind may move:
 * fill each one before adding the next, or look it up again afterwards.
 */
struct ps_run *ps_run_new(uint32_t nintervals);
/* Adds a tag (strings copied); returns its series or NULL on ENOMEM. */
struct ps_tag_series *ps_run_add_tag(struct ps_run *r, const struct ps_tag *tag);
/* Recomputes every tag's total from its per-interval samples. */
void ps_run_finish(struct ps_run *r);
/*
 * 0 when the run's values and their sums are within PS_TRACE_ABSURD and PS_TRACE_SUM_MAX
 * (bounds.c says which sums); else -ERANGE and a message saying which sum passes.
 */
int ps_run_check(const struct ps_run *r, char *err, size_t errlen);
int ps_run_set_meta(struct ps_run *r, const char *key, const char *value);
/* Finds or adds a named series (values start at -1 = absent); NULL on ENOMEM. */
struct ps_series *ps_run_add_sys(struct ps_run *r, const char *name);
struct ps_series *ps_run_add_counter(struct ps_run *r, const char *name);
/* Finds or adds a slabinfo series for cache; NULL on ENOMEM. */
struct ps_slab_series *ps_run_add_slab(struct ps_run *r, const char *cache, uint32_t objsize);
/* Allocates the workload array (zeroed) and sets has_workload; -ENOMEM. */
int ps_run_enable_workload(struct ps_run *r);
/* Adds a copy of st (frames and strings copied); st->id is assigned when 0. -ENOMEM. */
int ps_run_add_stack(struct ps_run *r, const struct ps_stack *st);
/* Adds a source line (strings copied; one per key); -ENOMEM. */
int ps_run_add_src(struct ps_run *r, const struct ps_src *src);
/* Drops every source line (before reading them again from other debuginfo). */
void ps_run_clear_srcs(struct ps_run *r);
/* Points every tag's site_src and frame's src at its source line, or NULL. */
void ps_run_link_srcs(struct ps_run *r);
/* Index of the first interval whose end (t_ns) is >= t_ns, or nintervals. */
uint32_t ps_run_interval_at(const struct ps_run *r, uint64_t t_ns);

const char *ps_run_meta(const struct ps_run *r, const char *key);
/* Whether live_* are absolute snapshots (meta live_absolute = 1: poolmon, !poolused, samples). */
bool ps_run_live_absolute(const struct ps_run *r);
const struct ps_series *ps_run_sys(const struct ps_run *r, const char *name);
const struct ps_series *ps_run_counter(const struct ps_run *r, const char *name);
/* Last present value of a counter, or 0. */
int64_t ps_run_counter_last(const struct ps_run *r, const char *name);
const struct ps_tag_series *ps_run_tag(const struct ps_run *r, int64_t id);

/*
 * The memory domain of a tag (PS_DOMAIN_*, never NULL): the stored one, else decided from its
 * kind, pool, flags and call site, as the writers decide it (domain.c).
 */
const char *ps_tag_domain(const struct ps_tag *t);
/* PS_DOMAIN_RECLAIMABLE for a page-cache site, PS_DOMAIN_USER for a process-memory site, else NULL. */
const char *ps_page_fn_domain(const char *func);
/* The domain of a tag that is not a page: reclaimable when flagged so, else kernel. */
const char *ps_flags_domain(uint32_t flags);

/* Writes an in-memory run as a trace file (fixtures, converters that build the run first). */
int ps_run_save(const struct ps_run *r, const char *path, unsigned flags, char *err, size_t errlen);

#endif
