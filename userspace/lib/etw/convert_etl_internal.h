/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal to the .etl converter (ps_convert_etl(), convert.h): the state its files share and
 * the calls they make into each other.
 *
 *   convert_etl.c         the driver: the event loop and what each event does to the state
 *                         (the timeline's step, pool allocations and frees, stack walks and
 *                         stack keys matched to them, process names)
 *   convert_etl_trace.c   what goes into the trace as the events come: intervals with their
 *                         samples and counters, tags, meta, the input's problems
 *   convert_etl_stacks.c  the distinct stacks, the kernel module map that names their frames
 *                         (image loads and rundowns), and writing the stacks at the end
 *   convert_etl_feed.c    the events in time order as batches of records, decoded for pool
 *                         events, read on a helper thread where one may be used
 *
 * Every function an event goes through stays in convert_etl.c, where the compiler inlines it
 * into the loop; the calls the others offer are made once per interval, per new tag or stack,
 * per image event, or once per run.
 */
#ifndef PS_ETW_CONVERT_ETL_INTERNAL_H
#define PS_ETW_CONVERT_ETL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "userspace/lib/etw/convert.h"
#include "userspace/lib/etw/etl.h"
#include "userspace/lib/etw/etwkernel.h"
#include "userspace/lib/etw/kmap.h"

#define NOSESSION	UINT32_MAX
#define RING		1024
#define MAX_FRAMES	256

/* --- convert_etl_feed.c: the records a batch holds, each 8-byte aligned ------------------- */

enum { FEED_POOL = 1, FEED_EVENT, FEED_STATS };

/* A pool allocation or free whose payload holds its fields (ps_conv_pool_need()). */
struct feed_pool {
	uint8_t kind, type;		/* FEED_POOL; PS_ETW_POOL_* */
	uint16_t cpu;
	uint32_t rawtag;
	int64_t ts;			/* raw, as in the file */
	uint64_t entry, nbytes;
	uint64_t off;			/* in the file, for the problem text */
	uint32_t ptype, sess;		/* sess NOSESSION for the events without one */
	uint32_t tid, pid;		/* NOSESSION when the header had none */
};
_Static_assert(sizeof(struct feed_pool) == 56, "a pool record is 56 bytes");

/* Any other event the driver handles: ev, then its size bytes; ev's pointers are offsets. */
struct feed_event {
	uint8_t kind, pad[3];
	uint32_t size;			/* of the record, aligned */
	uint32_t payload_off, guid_off;	/* guid_off UINT32_MAX: none */
	struct ps_etl_event ev;
};

/* The reader's drop and problem counts changed before the next record's event. */
struct feed_stats {
	uint8_t kind, pad[3];
	uint32_t size;
	uint32_t flag_events_lost, flag_buffer_lost, problems, pad2;
};
/* a record that is not a pool record has its size where a feed_event has it */
_Static_assert(offsetof(struct feed_stats, size) == offsetof(struct feed_event, size),
	       "records other than pool records keep their size at one offset");

struct feed_batch {
	uint8_t *mem;
	size_t cap, len;
};

struct feed;
/*
 * Whether the feed of path runs on a helper thread: POOLSCOPE_ETL_THREADS above 0, or unset
 * with a file of 1 MiB or more and two processors or more. The reader is then opened with
 * PS_ETL_NO_HELPER: the feed's thread reads and decompresses as well.
 */
bool ps_conv_feed_threaded(const char *path);
/* The feed of e (opened PS_ETL_ORDERED), on a helper thread when thread and one starts. */
int ps_conv_feed_open(struct feed **f, struct ps_etl *e, const struct ps_convert_opts *o,
		      bool thread);
/* The next batch, NULL at the end; then ps_conv_feed_end(). */
const struct feed_batch *ps_conv_feed_next(struct feed *f);
/* The batch ps_conv_feed_next() gave is done with. */
void ps_conv_feed_done(struct feed *f);
/* At the end: 0 or the reader's negative error; *events, every event of the file. */
int ps_conv_feed_end(const struct feed *f, uint64_t *events);
/* Stops the thread if there is one; *events (if not NULL), the events read. f may be NULL. */
void ps_conv_feed_close(struct feed *f, uint64_t *events);

/* The pool event types (PS_ETW_POOL_*) whose payload ends with a session id. */
static inline bool ps_conv_pool_session(uint8_t type)
{
	return type == PS_ETW_POOL_ALLOC_SESSION || type == PS_ETW_POOL_FREE_SESSION;
}

/* A pool event's least payload: pool type and tag, size and entry, the session's id. */
static inline uint32_t ps_conv_pool_need(const struct ps_etl_event *ev)
{
	return 8 + 2 * ev->ptr_size + (ps_conv_pool_session(ev->type) ? 4 : 0);
}

enum { POOL_NONPAGED, POOL_PAGED, POOL_SESSION };

struct wtag {
	uint32_t tag;
	uint8_t pool;
	bool dirty, reclaimable;
	int64_t id;
	struct ps_sample s;	/* this interval's counts + running live */
};

struct live {
	uint64_t entry;
	uint32_t session;
	uint32_t tag;		/* index into tags */
	uint64_t size;
	uint64_t seq;
	int32_t stack;		/* index into stacks, -1 */
	int32_t agg;		/* index into kagg (a stack key's), -1 */
	uint32_t next_free;
};

/*
 * The allocations of one tag that referenced one stack key, until the key's frames arrive (a
 * KeyDelete when the kernel's key cache evicts it, else the rundown at the end of the session):
 * counts, not one entry per allocation, so memory stays bounded by keys and tags however long
 * the trace. Once resolved, stack is set and the live allocations still pointing here free
 * through it.
 */
struct kagg {
	uint64_t key;
	uint64_t allocs, bytes;
	int64_t live_bytes;	/* while unresolved */
	uint32_t tag;
	int32_t next;		/* the key's next aggregate, -1 */
	int32_t stack;		/* -1 while unresolved */
};

struct wstack {
	uint32_t tag;
	uint64_t hash;
	uint32_t nframes;
	uint64_t *addr;
	uint64_t allocs, bytes;
	int64_t live_bytes;
	int32_t comm;		/* index into names, -1 */
};

struct ring_ent {
	int64_t ts;
	uint32_t tid;		/* NOSESSION when the header had none */
	uint16_t cpu;
	bool stacked;
	uint32_t live;
	uint64_t seq;
	uint32_t pid;
};

struct image {
	uint64_t base, size;
	char *name;
};

struct conv {
	const char *path;		/* the .etl, for problem text */
	struct ps_trace *t;
	const struct ps_convert_opts *o;
	struct ps_convert_result *res;
	const struct ps_etl_logfile *h;
	char *err;
	size_t errlen;
	int rc;

	struct wtag *tags;
	uint32_t ntags, captags;
	uint32_t *dirty;
	uint32_t ndirty;
	struct ps_kmap tagmap;

	struct live *live;
	uint32_t nlive, caplive, freelive;
	struct ps_kmap livemap;
	uint64_t seq;

	struct kagg *kagg;
	uint32_t nkagg, capkagg;
	struct ps_kmap keymap;		/* key -> its first unresolved aggregate */
	struct ps_kmap aggmap;		/* (key, tag) -> unresolved aggregate */

	struct wstack *stacks;
	uint32_t nstacks, capstacks;
	struct ps_kmap stackmap;

	struct ring_ent ring[RING];
	uint32_t ring_n, ring_head;

	struct image *img;
	uint32_t nimg, capimg;

	char **names;
	uint32_t nnames, capnames;
	struct ps_kmap pidmap;

	uint64_t cur_idx;
	bool in_interval;
	int64_t last_rel;
	int64_t max_rel;	/* past the header's end time and some: a damaged timestamp */
	uint64_t events_lost_flag, stack_user_parts, bad_ts, bigpool, stackwalk;
	uint64_t bad_pool;	/* pool events skipped: short payload, impossible size */
	uint64_t alloc_total;	/* bytes of the allocations counted, <= PS_CONVERT_ABSURD */
	struct feed_stats st;	/* the reader's counts as of the event last handled */
	int64_t ctr_written[16];	/* commit()'s counters as last written, plus 1 (0: never) */
};

/* p grown (doubling, from 256) to hold need elements of sz bytes; NULL when out of memory. */
static inline void *grow(void *p, uint32_t *cap, uint32_t need, size_t sz)
{
	if (need <= *cap)
		return p;
	uint32_t nc = *cap ? *cap * 2 : 256;
	while (nc < need)
		nc *= 2;
	void *n = realloc(p, (size_t)nc * sz);
	if (n)
		*cap = nc;
	return n;
}

static inline bool is_kernel_addr(uint64_t a, unsigned ptr)
{
	return ptr == 8 ? a >= 0xffff800000000000ULL : a >= 0x80000000ULL;
}

/* convert_etl_trace.c. Failures set c->rc and c->err once (the first one) and return c->rc. */
int ps_conv_etl__fail_trace(struct conv *c, const char *what, int r);
int ps_conv_etl__oom(struct conv *c);
/* A damaged event at off: counted as a problem of the input, the first one described. */
void ps_conv_etl__event_problem(struct conv *c, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int ps_conv_etl__begin(struct conv *c);
int ps_conv_etl__commit(struct conv *c);
/* Adds the tag (tag without its protected bit, pool) to the trace and the table; *out its index. */
int ps_conv_etl__new_tag(struct conv *c, uint32_t tag, uint8_t pool, bool reclaimable,
			 uint32_t *out);
int ps_conv_etl__write_meta(struct conv *c);

/* convert_etl_stacks.c */
int32_t ps_conv_etl__stack_for(struct conv *c, uint32_t tag, const uint8_t *fr, uint32_t n,
			       unsigned p, uint32_t pid);
int ps_conv_etl__on_image(struct conv *c, const struct ps_etl_event *ev);
/* Stack keys whose frames never came: the references still waiting. */
uint64_t ps_conv_etl__unresolved_keys(const struct conv *c);
int ps_conv_etl__write_stacks(struct conv *c);

#endif
