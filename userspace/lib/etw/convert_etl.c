// SPDX-License-Identifier: GPL-2.0
/*
 * .etl -> trace: the per-tag pool timeline. Events come in time order (PS_ETL_ORDERED); pool
 * allocations open a live record keyed by (Entry, session), frees close it with the size of the
 * allocation; each interval writes the tags that changed. Image loads and rundowns build the
 * kernel module map that turns stack addresses into driver+offset; StackWalk events attach to
 * the allocation with the same timestamp and thread; Win8+ stack keys (37) wait for the first
 * KeyDelete/KeyRundown (35/36) of their key that follows them. Memory holds the live
 * allocations, the distinct stacks and a short ring of recent allocations, not the file.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/lib/util/util.h"
#include "userspace/lib/util/version.h"
#include "userspace/lib/etw/convert.h"
#include "userspace/lib/etw/etl.h"
#include "userspace/lib/etw/etwkernel.h"
#include "userspace/lib/etw/kmap.h"
#include "userspace/lib/etw/poolsample.h"

#define NOSESSION	UINT32_MAX
#define RING		1024
#define MAX_FRAMES	256

enum { POOL_NONPAGED, POOL_PAGED, POOL_SESSION };
static const char *const pool_names[] = { PS_POOL_NONPAGED, PS_POOL_PAGED, PS_POOL_SESSION };

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
	int32_t pending;	/* index into pend, -1 */
	uint32_t next_free;
};

struct pend {
	uint64_t entry, seq, size;
	uint32_t session, tag;
	int32_t next;
	bool freed;
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

	struct pend *pend;
	uint32_t npend, cappend;
	int32_t freepend;
	struct ps_kmap keymap;

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

static void *grow(void *p, uint32_t *cap, uint32_t need, size_t sz)
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

static int fail_trace(struct conv *c, const char *what, int r)
{
	if (!c->rc) {
		snprintf(c->err, c->errlen, "writing the trace: %s: %s", what, ps_trace_errmsg(c->t));
		c->rc = r < 0 ? r : -EIO;
	}
	return c->rc;
}

static int oom(struct conv *c)
{
	if (!c->rc) {
		snprintf(c->err, c->errlen, "out of memory");
		c->rc = -ENOMEM;
	}
	return c->rc;
}

/* --- intervals ----------------------------------------------------------------------------- */

/* advance() keeps the interval's end within what a trace holds; its wall clock may not be */
static int begin(struct conv *c)
{
	uint64_t iv = c->o->interval_ns;
	uint64_t t_ns = (c->cur_idx + 1) * iv;
	int64_t w0 = ps_etl_wall_ns(c->h, c->h->t0);
	uint64_t wall = w0 >= 0 && t_ns <= (uint64_t)(PS_TRACE_TIME_MAX - w0) ? w0 + t_ns : 0;
	int r = ps_trace_begin_interval(c->t, (uint32_t)c->cur_idx, t_ns, wall, iv);
	if (r < 0)
		return fail_trace(c, "begin interval", r);
	c->in_interval = true;
	return 0;
}

static int commit(struct conv *c, struct ps_etl *e)
{
	struct ps_convert_result *res = c->res;
	const struct ps_etl_stats *st = ps_etl_stats(e);
	int r = 0;

	for (uint32_t i = 0; i < c->ndirty && !r; i++) {
		struct wtag *w = &c->tags[c->dirty[i]];
		r = ps_trace_add_sample(c->t, w->id, &w->s);
		w->s.allocs = w->s.frees = w->s.alloc_bytes = w->s.free_bytes = 0;
		w->dirty = false;
	}
	c->ndirty = 0;
	if (r < 0)
		return fail_trace(c, "sample", r);
	const struct { const char *n; int64_t v; } ctr[] = {
		{ "events.pool_alloc", (int64_t)res->pool_allocs },
		{ "events.pool_free", (int64_t)res->pool_frees },
		{ "events.stackwalk", (int64_t)c->stackwalk },
		{ "events.bigpool", (int64_t)c->bigpool },
		{ "events.bad_timestamp", (int64_t)c->bad_ts },
		{ "preexisting_frees", (int64_t)res->preexisting_frees },
		{ "implicit_frees", (int64_t)res->implicit_frees },
		{ "stacks.matched", (int64_t)res->stacks_matched },
		{ "stacks.unmatched", (int64_t)res->stacks_unmatched },
		{ "stacks.user_parts", (int64_t)c->stack_user_parts },
		{ "drops.events_lost", c->h->events_lost },
		{ "drops.buffers_lost", c->h->buffers_lost },
		{ "drops.buffers_flagged_events_lost", st->flag_events_lost },
		{ "drops.buffers_flagged_lost", st->flag_buffer_lost },
		{ "drops.etl_problems", st->problems },
		{ "drops.bad_pool_events", (int64_t)c->bad_pool },
	};
	_Static_assert(ARRAY_SIZE(ctr) == ARRAY_SIZE(c->ctr_written), "one slot per counter");
	/*
	 * A row only when a value changed (readers take the last earlier row): a day of 1 s
	 * intervals with no pool event in most is 86400 interval rows, not 1.4 million counter rows.
	 */
	for (size_t i = 0; i < ARRAY_SIZE(ctr) && !r; i++) {
		if (c->ctr_written[i] == ctr[i].v + 1)
			continue;
		r = ps_trace_add_counter(c->t, ctr[i].n, ctr[i].v);
		c->ctr_written[i] = ctr[i].v + 1;
	}
	if (r < 0)
		return fail_trace(c, "counter", r);
	r = ps_trace_commit_interval(c->t);
	if (r < 0)
		return fail_trace(c, "commit", r);
	c->in_interval = false;
	res->intervals++;
	return 0;
}

/* A damaged event: counted as a problem of the input, the first one described with its offset. */
static __attribute__((format(printf, 3, 4))) void event_problem(struct conv *c,
								const struct ps_etl_event *ev,
								const char *fmt, ...)
{
	va_list ap;
	int n;

	c->res->problems++;
	if (c->res->first_problem[0])
		return;
	n = snprintf(c->res->first_problem, sizeof(c->res->first_problem), "%s: offset 0x%llx: ",
		     c->path, (unsigned long long)(ev->file_off + ev->buf_off));
	if (n < 0 || (size_t)n >= sizeof(c->res->first_problem))
		return;
	va_start(ap, fmt);
	vsnprintf(c->res->first_problem + n, sizeof(c->res->first_problem) - n, fmt, ap);
	va_end(ap);
}

/*
 * The latest event time (ns since T0) to believe: twice the run the header's start and end
 * times give, plus a minute (relogged files carry events past the end time). INT64_MAX when the
 * header gives no such run (no end time: a session that did not stop cleanly; or an end before
 * the start: a damaged header); advance() then bounds each step instead.
 */
static int64_t span_limit(const struct ps_etl_logfile *h)
{
	const int64_t minute = 60LL * 1000000000;

	if (h->start_time <= 0 || h->end_time <= h->start_time ||
	    h->end_time - h->start_time > (INT64_MAX - minute) / 200)
		return INT64_MAX;
	return (h->end_time - h->start_time) * 200 + minute;
}

/*
 * Moves the timeline to the interval holding the pool event ev at rel ns since T0. A time past
 * the header's run, or (without one) an hour past the last pool event, is a damaged timestamp
 * and not a reason for thousands of empty intervals (a running system allocates pool many
 * times a second): the event stays in the current interval, counted and reported.
 */
static int advance(struct conv *c, struct ps_etl *e, int64_t rel, const struct ps_etl_event *ev)
{
	const int64_t hour = 3600LL * 1000000000;
	uint64_t iv = c->o->interval_ns, idx;

	if (rel < 0)
		rel = 0;
	if (rel > c->max_rel || (c->max_rel == INT64_MAX && rel - c->last_rel > hour)) {
		c->bad_ts++;
		event_problem(c, ev, "pool event %.3f s after the previous one, past %s; kept in "
			      "the interval of the previous one", (double)(rel - c->last_rel) / 1e9,
			      c->max_rel == INT64_MAX ? "the hour a gap can be" :
			      "twice the run the header gives");
		return 0;
	}
	idx = (uint64_t)rel / iv;
	if (idx >= PS_TRACE_MAX_INTERVALS || idx >= (uint64_t)PS_TRACE_TIME_MAX / iv) {
		c->bad_ts++;
		event_problem(c, ev, "pool event %.3f s after the start, past the %u intervals of "
			      "%.3f s a trace holds; kept in the interval of the previous one",
			      (double)rel / 1e9, PS_TRACE_MAX_INTERVALS, (double)iv / 1e9);
		return 0;
	}
	if (rel > c->last_rel)
		c->last_rel = rel;
	while (c->cur_idx < idx) {
		if (commit(c, e) < 0)
			return c->rc;
		c->cur_idx++;
		if (begin(c) < 0)
			return c->rc;
	}
	return 0;
}

/* --- tags, processes, images --------------------------------------------------------------- */

static int tag_index(struct conv *c, uint32_t rawtag, uint8_t pool, bool reclaimable, uint32_t *out)
{
	uint32_t tag = rawtag & ~PS_POOL_TAG_PROTECTED, v;

	if (ps_kmap_get(&c->tagmap, tag, pool, &v)) {
		*out = v;
		return 0;
	}
	struct wtag *n = grow(c->tags, &c->captags, c->ntags + 1, sizeof(*n));
	if (!n)
		return oom(c);
	c->tags = n;
	uint32_t *d = realloc(c->dirty, c->captags * sizeof(*d));
	if (!d)
		return oom(c);
	c->dirty = d;
	struct wtag *w = &c->tags[c->ntags];
	memset(w, 0, sizeof(*w));
	w->tag = tag;
	w->pool = pool;
	w->reclaimable = reclaimable;

	char name[5];
	ps_pool_tag_format(tag, name);
	struct ps_tag pt = { .kind = PS_KIND_POOL, .name = name, .cache = name,
			     .pool = pool_names[pool],
			     .flags = reclaimable ? PS_TAG_F_RECLAIMABLE : 0 };
	if (c->o->pooltags) {
		const struct ps_pooltag_ent *pe = ps_pooltag_find(c->o->pooltags, name);
		if (pe)
			pt.owner = pe->binary;
	}
	int r = ps_trace_add_tag(c->t, &pt);
	if (r < 0)
		return fail_trace(c, "tag", r);
	w->id = pt.id;
	if (ps_kmap_put(&c->tagmap, tag, pool, c->ntags) < 0)
		return oom(c);
	*out = c->ntags++;
	c->res->tags = c->ntags;
	return 0;
}

static void touch(struct conv *c, uint32_t ti)
{
	if (!c->tags[ti].dirty) {
		c->tags[ti].dirty = true;
		c->dirty[c->ndirty++] = ti;
	}
}

static bool is_kernel_addr(uint64_t a, unsigned ptr)
{
	return ptr == 8 ? a >= 0xffff800000000000ULL : a >= 0x80000000ULL;
}

static const char *basename_w(const char *p)
{
	const char *s = strrchr(p, '\\');
	return s ? s + 1 : p;
}

/* Image load/unload/rundown: kernel modules only (pool stacks are kernel stacks). */
static int on_image(struct conv *c, const struct ps_etl_event *ev)
{
	unsigned p = ev->ptr_size;
	uint32_t name_off = 3 * p + 32;
	char path[520];

	if (ev->version < 2 || ev->payload_len < name_off)
		return 0;
	uint64_t base = ps_rdptr(ev->payload, p), size = ps_rdptr(ev->payload + p, p);
	if (!is_kernel_addr(base, p))
		return 0;
	bool unload = (ev->type == PS_ETW_IMAGE_UNLOAD || ev->type == PS_ETW_IMAGE_DCEND) &&
		      ev->group == PS_ETW_GROUP_IMAGE;
	for (uint32_t i = 0; i < c->nimg; i++) {
		if (c->img[i].base == base) {
			/* DCEnd keeps the map for late keys */
			if (unload && ev->type == PS_ETW_IMAGE_UNLOAD) {
				free(c->img[i].name);
				c->img[i] = c->img[--c->nimg];
			}
			return 0;
		}
	}
	if (unload && ev->type == PS_ETW_IMAGE_UNLOAD)
		return 0;
	ps_etl_utf16(ev->payload + name_off, ev->payload_len - name_off, path, sizeof(path));
	struct image *n = grow(c->img, &c->capimg, c->nimg + 1, sizeof(*n));
	if (!n)
		return oom(c);
	c->img = n;
	c->img[c->nimg].base = base;
	c->img[c->nimg].size = size;
	c->img[c->nimg].name = strdup(basename_w(path));
	if (!c->img[c->nimg].name)
		return oom(c);
	c->nimg++;
	return 0;
}

static const struct image *find_image(const struct conv *c, uint64_t a)
{
	for (uint32_t i = 0; i < c->nimg; i++)
		if (a >= c->img[i].base && a - c->img[i].base < c->img[i].size)
			return &c->img[i];
	return NULL;
}

/* Process Start/DCStart (v3+): pid -> ImageFileName, for the comm of stacks. */
static int on_process(struct conv *c, const struct ps_etl_event *ev)
{
	unsigned p = ev->ptr_size;
	uint32_t off = 2 * p + 16, len = ev->payload_len;
	const uint8_t *d = ev->payload;

	if (ev->version < 3 || len < off + 4)
		return 0;
	uint32_t pid = ps_rd32(d + p);
	if (ev->version >= 4)
		off += 4;				/* Flags */
	if (len < off + 4)
		return 0;
	if (ps_rd32(d + off) == 0) {
		off += 4;
	} else {
		/* TOKEN_USER (two pointers) then a SID of 8 + 4 * SubAuthorityCount bytes */
		uint32_t tok = 2 * p;
		if (len < off + tok + 8)
			return 0;
		off += tok + 8 + 4u * d[off + tok + 1];
	}
	if (off >= len)
		return 0;
	size_t n = strnlen((const char *)d + off, len - off);
	char *name = strndup((const char *)d + off, n);
	if (!name)
		return oom(c);
	uint32_t v;
	if (ps_kmap_get(&c->pidmap, pid, 0, &v)) {
		free(c->names[v]);
		c->names[v] = name;
		return 0;
	}
	char **nn = grow(c->names, &c->capnames, c->nnames + 1, sizeof(*nn));
	if (!nn) {
		free(name);
		return oom(c);
	}
	c->names = nn;
	c->names[c->nnames] = name;
	if (ps_kmap_put(&c->pidmap, pid, 0, c->nnames) < 0)
		return oom(c);
	c->nnames++;
	return 0;
}

/* --- pool ---------------------------------------------------------------------------------- */

static void release(struct conv *c, uint32_t li, bool implicit)
{
	struct live *l = &c->live[li];
	struct wtag *w = &c->tags[l->tag];

	w->s.frees++;
	w->s.free_bytes += l->size;
	w->s.live_objs--;
	w->s.live_bytes -= (int64_t)l->size;
	touch(c, l->tag);
	if (l->stack >= 0)
		c->stacks[l->stack].live_bytes -= (int64_t)l->size;
	if (l->pending >= 0)
		c->pend[l->pending].freed = true;
	ps_kmap_del(&c->livemap, l->entry, l->session);
	l->next_free = c->freelive;
	c->freelive = li;
	if (implicit)
		c->res->implicit_frees++;
}

/*
 * No pool allocation is larger than the kernel half of the address space (128 TiB on x64): a
 * larger NumberOfBytes is a damaged event, and counting it would throw off every later figure
 * of its tag.
 */
#define POOL_ABSURD (1ull << 47)

static int on_pool(struct conv *c, const struct ps_etl_event *ev)
{
	unsigned p = ev->ptr_size;
	bool session = ev->type == PS_ETW_POOL_ALLOC_SESSION ||
		       ev->type == PS_ETW_POOL_FREE_SESSION;
	bool alloc = ev->type == PS_ETW_POOL_ALLOC || ev->type == PS_ETW_POOL_ALLOC_SESSION;
	uint32_t need = 8 + 2 * p + (session ? 4 : 0);
	const uint8_t *d = ev->payload;

	if (ev->payload_len < need) {
		c->bad_pool++;
		event_problem(c, ev, "pool event type 0x%x has %u bytes of payload, expected %u",
			      ev->type, ev->payload_len, need);
		return 0;
	}
	uint32_t ptype = ps_rd32(d), rawtag = ps_rd32(d + 4);
	uint64_t nbytes = ps_rdptr(d + 8, p), entry = ps_rdptr(d + 8 + p, p);
	uint32_t sess = session ? ps_rd32(d + 8 + 2 * p) : NOSESSION;

	if (ptype & PS_ETW_POOLTYPE_BIGPOOL) {
		c->bigpool++;
		ptype &= ~PS_ETW_POOLTYPE_BIGPOOL;
	}
	bool paged = ptype & PS_ETW_POOLTYPE_PAGED;
	uint8_t pool = session || (ptype & PS_ETW_POOLTYPE_SESSION) ? POOL_SESSION :
		       paged ? POOL_PAGED : POOL_NONPAGED;
	uint32_t v;

	if (!alloc) {
		c->res->pool_frees++;
		if (!ps_kmap_get(&c->livemap, entry, sess, &v)) {
			c->res->preexisting_frees++;
			return 0;
		}
		release(c, v, false);
		return 0;
	}
	c->res->pool_allocs++;
	if (nbytes > POOL_ABSURD) {
		c->bad_pool++;
		event_problem(c, ev, "pool allocation of %llu bytes, more than an address space "
			      "holds; event skipped", (unsigned long long)nbytes);
		return 0;
	}
	/*
	 * Nor do a file's allocations add up past 2^52 bytes (4 PiB): below that, no tag's live
	 * bytes, no sum of them and no run total the trace reader bounds can be reached.
	 */
	if (nbytes > PS_CONVERT_ABSURD - c->alloc_total) {
		c->bad_pool++;
		event_problem(c, ev, "pool allocation of %llu bytes after %llu bytes in this file: "
			      "past 2^52 bytes (4 PiB) in all, which no pool holds; event skipped",
			      (unsigned long long)nbytes, (unsigned long long)c->alloc_total);
		return 0;
	}
	c->alloc_total += nbytes;
	if (ps_kmap_get(&c->livemap, entry, sess, &v))
		release(c, v, true);
	uint32_t ti = 0;
	if (tag_index(c, rawtag, pool, paged, &ti) < 0)
		return c->rc;
	uint32_t li;
	if (c->freelive != UINT32_MAX) {
		li = c->freelive;
		c->freelive = c->live[li].next_free;
	} else {
		struct live *n = grow(c->live, &c->caplive, c->nlive + 1, sizeof(*n));
		if (!n)
			return oom(c);
		c->live = n;
		li = c->nlive++;
	}
	struct live *l = &c->live[li];
	l->entry = entry;
	l->session = sess;
	l->tag = ti;
	l->size = nbytes;
	l->seq = ++c->seq;
	l->stack = l->pending = -1;
	if (ps_kmap_put(&c->livemap, entry, sess, li) < 0)
		return oom(c);
	struct wtag *w = &c->tags[ti];
	w->s.allocs++;
	w->s.alloc_bytes += nbytes;
	w->s.live_objs++;
	w->s.live_bytes += (int64_t)nbytes;
	touch(c, ti);

	struct ring_ent *r = &c->ring[c->ring_head];
	r->ts = ev->ts;
	r->tid = ev->has_tid ? ev->tid : NOSESSION;
	r->pid = ev->has_tid ? ev->pid : NOSESSION;
	r->cpu = ev->cpu;
	r->stacked = false;
	r->live = li;
	r->seq = l->seq;
	c->ring_head = (c->ring_head + 1) % RING;
	if (c->ring_n < RING)
		c->ring_n++;
	return 0;
}

/* --- stacks -------------------------------------------------------------------------------- */

/* The allocation a stack event belongs to: same timestamp, same thread (or, for headers
 * without a thread, the same processor preferred). A kernel part takes an allocation that has
 * none yet; a user part may follow a kernel part. */
static struct ring_ent *ring_match(struct conv *c, int64_t ts, uint32_t tid, uint16_t cpu,
				   bool any)
{
	struct ring_ent *best = NULL;

	for (uint32_t k = 0; k < c->ring_n; k++) {
		struct ring_ent *r = &c->ring[(c->ring_head + RING - 1 - k) % RING];
		if (r->ts < ts)
			break;			/* the ring is in time order */
		if (r->ts != ts || (r->stacked && !any))
			continue;
		if (r->tid == tid)
			return r;
		if (r->tid == NOSESSION && (!best || r->cpu == cpu))
			best = r;
	}
	return best;
}

static int32_t stack_for(struct conv *c, uint32_t tag, const uint8_t *fr, uint32_t n, unsigned p,
			 uint32_t pid)
{
	uint64_t h = 1469598103934665603ULL;
	uint32_t v;

	if (n > MAX_FRAMES)
		n = MAX_FRAMES;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ ps_rdptr(fr + i * p, p)) * 1099511628211ULL;
	if (ps_kmap_get(&c->stackmap, h, tag, &v))
		return (int32_t)v;
	struct wstack *ns = grow(c->stacks, &c->capstacks, c->nstacks + 1, sizeof(*ns));
	if (!ns) {
		oom(c);
		return -1;
	}
	c->stacks = ns;
	struct wstack *s = &c->stacks[c->nstacks];
	memset(s, 0, sizeof(*s));
	s->tag = tag;
	s->hash = h;
	s->nframes = n;
	s->addr = malloc((n ? n : 1) * sizeof(uint64_t));
	if (!s->addr) {
		oom(c);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++)
		s->addr[i] = ps_rdptr(fr + i * p, p);
	s->comm = -1;
	if (pid != NOSESSION && ps_kmap_get(&c->pidmap, pid, 0, &v))
		s->comm = (int32_t)v;
	if (ps_kmap_put(&c->stackmap, h, tag, c->nstacks) < 0) {
		oom(c);
		return -1;
	}
	c->res->stacks = ++c->nstacks;
	return (int32_t)c->nstacks - 1;
}

static void attach(struct conv *c, uint32_t li, int32_t si)
{
	struct live *l = &c->live[li];
	struct wstack *s = &c->stacks[si];

	s->allocs++;
	s->bytes += l->size;
	s->live_bytes += (int64_t)l->size;
	l->stack = si;
}

static int on_stackwalk(struct conv *c, const struct ps_etl_event *ev)
{
	unsigned p = ev->ptr_size;
	const uint8_t *d = ev->payload;
	uint32_t len = ev->payload_len;

	c->stackwalk++;
	if (ev->type == PS_ETW_STACKWALK_STACK || ev->type == PS_ETW_STACKWALK_KEY_KERNEL ||
	    ev->type == PS_ETW_STACKWALK_KEY_USER) {
		if (len < 16 + p)
			return 0;
		int64_t ts = (int64_t)ps_rd64(d);
		uint32_t pid = ps_rd32(d + 8), tid = ps_rd32(d + 12);
		uint64_t first = ps_rdptr(d + 16, p);
		bool user = ev->type == PS_ETW_STACKWALK_KEY_USER ||
			    (ev->type == PS_ETW_STACKWALK_STACK && !is_kernel_addr(first, p));
		struct ring_ent *r = ring_match(c, ts, tid, ev->cpu, user);

		if (!r) {
			c->res->stacks_unmatched++;
			return 0;
		}
		if (user) {
			/* The user-mode half of a kernel event's stack: the driver frames are in
			 * the kernel half, which is what pool attribution uses. */
			c->stack_user_parts++;
			return 0;
		}
		struct live *l = &c->live[r->live];
		r->stacked = true;
		c->res->stacks_matched++;
		if (l->seq != r->seq)
			return 0;		/* freed and reused already: nothing live to attach */
		if (ev->type == PS_ETW_STACKWALK_STACK) {
			int32_t si = stack_for(c, l->tag, d + 16, (len - 16) / p, p, pid);
			if (si < 0)
				return c->rc;
			attach(c, r->live, si);
			return 0;
		}
		/* a kernel stack key: wait for the key's frames */
		uint64_t key = first;
		uint32_t head;
		int32_t pi;
		if (c->freepend >= 0) {
			pi = c->freepend;
			c->freepend = c->pend[pi].next;
		} else {
			struct pend *n = grow(c->pend, &c->cappend, c->npend + 1, sizeof(*n));
			if (!n)
				return oom(c);
			c->pend = n;
			pi = (int32_t)c->npend++;
		}
		struct pend *pe = &c->pend[pi];
		pe->entry = l->entry;
		pe->session = l->session;
		pe->seq = l->seq;
		pe->size = l->size;
		pe->tag = l->tag;
		pe->freed = false;
		pe->next = ps_kmap_get(&c->keymap, key, 0, &head) ? (int32_t)head : -1;
		if (ps_kmap_put(&c->keymap, key, 0, (uint32_t)pi) < 0)
			return oom(c);
		l->pending = pi;
		(void)pid;
		return 0;
	}
	if (ev->type == PS_ETW_STACKWALK_KEY_DELETE || ev->type == PS_ETW_STACKWALK_KEY_RUNDOWN) {
		uint32_t head;
		if (len < p)
			return 0;
		uint64_t key = ps_rdptr(d, p);
		if (!ps_kmap_get(&c->keymap, key, 0, &head))
			return 0;
		ps_kmap_del(&c->keymap, key, 0);
		for (int32_t pi = (int32_t)head; pi >= 0;) {
			struct pend *pe = &c->pend[pi];
			int32_t next = pe->next;
			int32_t si = stack_for(c, pe->tag, d + p, (len - p) / p, p, NOSESSION);
			if (si < 0)
				return c->rc;
			struct wstack *s = &c->stacks[si];
			s->allocs++;
			s->bytes += pe->size;
			uint32_t li;
			if (!pe->freed) {
				s->live_bytes += (int64_t)pe->size;
				if (ps_kmap_get(&c->livemap, pe->entry, pe->session, &li) &&
				    c->live[li].seq == pe->seq) {
					c->live[li].stack = si;
					c->live[li].pending = -1;
				}
			}
			pe->next = c->freepend;
			c->freepend = pi;
			pi = next;
		}
	}
	return 0;
}

static int write_stacks(struct conv *c)
{
	struct ps_frame fr[MAX_FRAMES];

	for (uint32_t i = 0; i < c->nstacks; i++) {
		struct wstack *s = &c->stacks[i];
		for (uint32_t k = 0; k < s->nframes; k++) {
			const struct image *im = find_image(c, s->addr[k]);
			fr[k].addr = s->addr[k];
			fr[k].sym = NULL;
			fr[k].module = im ? im->name : NULL;
			fr[k].off = im ? s->addr[k] - im->base : 0;
		}
		struct ps_stack st = {
			.tag_id = c->tags[s->tag].id, .hash = s->hash, .allocs = s->allocs,
			.bytes = s->bytes, .live_bytes = s->live_bytes,
			.comm = s->comm >= 0 ? c->names[s->comm] : NULL,
			.nframes = s->nframes, .frames = fr,
		};
		int r = ps_trace_put_stack(c->t, &st);
		if (r < 0)
			return fail_trace(c, "stack", r);
	}
	return 0;
}

static int write_meta(struct conv *c)
{
	const struct ps_etl_logfile *h = c->h;
	char buf[160];
	int r = 0;

	snprintf(buf, sizeof(buf), "Windows %u.%u build %u", h->version[0], h->version[1],
		 h->provider_version);
	r = r ?: ps_trace_set_meta(c->t, PS_META_OS, PS_OS_WINDOWS);
	r = r ?: ps_trace_set_meta(c->t, PS_META_SOURCE, PS_SOURCE_ETL);
	r = r ?: ps_trace_set_meta(c->t, PS_META_KERNEL, buf);
	r = r ?: ps_trace_set_meta_int(c->t, PS_META_OS_BUILD, h->provider_version);
	r = r ?: ps_trace_set_meta_int(c->t, PS_META_CPUS, h->ncpus);
	r = r ?: ps_trace_set_meta_int(c->t, PS_META_POINTER_SIZE, h->pointer_size);
	r = r ?: ps_trace_set_meta_int(c->t, PS_META_START_WALL_NS, ps_etl_wall_ns(h, h->t0));
	r = r ?: ps_trace_set_meta_int(c->t, PS_META_INTERVAL_NS, (int64_t)c->o->interval_ns);
	r = r ?: ps_trace_set_meta_int(c->t, PS_META_LIVE_ABSOLUTE, 0);
	r = r ?: ps_trace_set_meta_int(c->t, PS_META_STACK_SAMPLE_RATE, 1);
	r = r ?: ps_trace_set_meta(c->t, PS_META_ETL_LOGGER, h->logger_name);
	r = r ?: ps_trace_set_meta_int(c->t, PS_META_ETL_CLOCK_TYPE, h->clock_type);
	r = r ?: ps_trace_set_meta_int(c->t, PS_META_ETL_CPU_MHZ, h->cpu_mhz);
	r = r ?: ps_trace_set_meta(c->t, PS_META_TOOL_VERSION, POOLSCOPE_VERSION);
	return r < 0 ? fail_trace(c, "meta", r) : 0;
}

int ps_convert_etl(struct ps_trace *t, const char *path, const struct ps_convert_opts *o,
		   struct ps_convert_result *res, char *err, size_t errlen)
{
	struct conv c = { .path = path, .t = t, .o = o, .res = res, .err = err, .errlen = errlen,
			  .freelive = UINT32_MAX, .freepend = -1 };
	struct ps_etl *e;
	struct ps_etl_event ev;
	int r;

	memset(res, 0, sizeof(*res));
	if (!o->interval_ns || o->interval_ns > (uint64_t)PS_TRACE_TIME_MAX) {
		snprintf(err, errlen, "interval must be 1 ns..2^62 ns");
		return -EINVAL;
	}
	r = ps_etl_open(&e, path, PS_ETL_ORDERED, err, errlen);
	if (r < 0)
		return r;
	c.h = ps_etl_logfile(e);
	c.max_rel = span_limit(c.h);
	if (write_meta(&c) < 0 || begin(&c) < 0)
		goto out;
	while ((r = ps_etl_next(e, &ev)) > 0) {
		res->events++;
		if (o->progress && !(res->events & 0xffff))
			o->progress(o->progress_arg, ps_etl_stats(e)->bytes_read,
				    ps_etl_stats(e)->file_size, res->events);
		if (!ev.kernel)
			continue;
		switch (ev.group) {
		case PS_ETW_GROUP_POOL:
			if (ev.type < PS_ETW_POOL_ALLOC || ev.type > PS_ETW_POOL_FREE_SESSION)
				break;
			if (advance(&c, e, ps_etl_rel_ns(c.h, ev.ts), &ev) < 0)
				goto out;
			on_pool(&c, &ev);
			break;
		case PS_ETW_GROUP_STACKWALK:
			on_stackwalk(&c, &ev);
			break;
		case PS_ETW_GROUP_IMAGE:
			if (ev.type == PS_ETW_IMAGE_UNLOAD || ev.type == PS_ETW_IMAGE_DCSTART ||
			    ev.type == PS_ETW_IMAGE_DCEND || ev.type == PS_ETW_IMAGE_LOAD)
				on_image(&c, &ev);
			break;
		case PS_ETW_GROUP_PROCESS:
			if (ev.type == PS_ETW_PROCESS_IMAGE_LOAD)
				on_image(&c, &ev);
			else if (ev.type == PS_ETW_PROCESS_START ||
				 ev.type == PS_ETW_PROCESS_DCSTART)
				on_process(&c, &ev);
			break;
		}
		if (c.rc)
			goto out;
	}
	if (r < 0) {
		snprintf(err, errlen, "%s: read error: %s", path, strerror(-r));
		c.rc = r;
		goto out;
	}
	/* Keys never resolved: count the references still waiting. */
	for (size_t i = 0; i < c.keymap.cap; i++) {
		if (!c.keymap.s[i].v)
			continue;
		for (int32_t pi = (int32_t)(c.keymap.s[i].v - 1); pi >= 0; pi = c.pend[pi].next)
			res->stack_keys_unresolved++;
	}
	if (write_stacks(&c) < 0 || ps_trace_set_meta_int(t, PS_META_STACKS_UNRESOLVED_KEYS,
							  (int64_t)res->stack_keys_unresolved) < 0 ||
	    commit(&c, e) < 0)
		goto out;
	if (o->progress)
		o->progress(o->progress_arg, ps_etl_stats(e)->file_size, ps_etl_stats(e)->file_size,
			    res->events);
	res->problems += ps_etl_stats(e)->problems;
	if (ps_etl_problem(e, 0))
		ps_strlcpy(res->first_problem, ps_etl_problem(e, 0), sizeof(res->first_problem));
out:
	ps_etl_close(e);
	for (uint32_t i = 0; i < c.nstacks; i++)
		free(c.stacks[i].addr);
	for (uint32_t i = 0; i < c.nimg; i++)
		free(c.img[i].name);
	for (uint32_t i = 0; i < c.nnames; i++)
		free(c.names[i]);
	free(c.stacks);
	free(c.img);
	free(c.names);
	free(c.tags);
	free(c.dirty);
	free(c.live);
	free(c.pend);
	ps_kmap_free(&c.tagmap);
	ps_kmap_free(&c.livemap);
	ps_kmap_free(&c.keymap);
	ps_kmap_free(&c.stackmap);
	ps_kmap_free(&c.pidmap);
	return c.rc;
}
