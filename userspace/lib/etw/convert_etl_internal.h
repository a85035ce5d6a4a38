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
#include "userspace/lib/etw/kmap.h"

#define NOSESSION	UINT32_MAX
#define RING		1024
#define MAX_FRAMES	256

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
/* A damaged event: counted as a problem of the input, the first one described with its offset. */
void ps_conv_etl__event_problem(struct conv *c, const struct ps_etl_event *ev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int ps_conv_etl__begin(struct conv *c);
int ps_conv_etl__commit(struct conv *c, struct ps_etl *e);
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
