// SPDX-License-Identifier: GPL-2.0
/*
 * .etl -> trace: the per-tag pool timeline. Events come in time order (PS_ETL_ORDERED); pool
 * allocations open a live record keyed by (Entry, session), frees close it with the size of the
 * allocation; each interval writes the tags that changed. Image loads and rundowns build the
 * kernel module map that turns stack addresses into driver+offset; StackWalk events attach to
 * the allocation with the same timestamp and thread; Win8+ stack keys (37) wait for the first
 * KeyDelete/KeyRundown (35/36) of their key that follows them. Memory holds the live
 * allocations, the distinct stacks and a short ring of recent allocations, not the file.
 *
 * This file is the driver: ps_convert_etl() and its event loop, with what each event does to
 * the state (the timeline's step, pool events, stack walks and keys, process names) next to it
 * so that the compiler inlines the per-event path. convert_etl_internal.h lists the others.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/lib/util/util.h"
#include "userspace/lib/etw/convert_etl_internal.h"
#include "userspace/lib/etw/etwkernel.h"

/* --- the timeline -------------------------------------------------------------------------- */

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
 * Moves the timeline to the interval holding the pool event at off, rel ns since T0. A time past
 * the header's run, or (without one) an hour past the last pool event, is a damaged timestamp
 * and not a reason for thousands of empty intervals (a running system allocates pool many
 * times a second): the event stays in the current interval, counted and reported.
 */
static int advance(struct conv *c, int64_t rel, uint64_t off)
{
	const int64_t hour = 3600LL * 1000000000;
	uint64_t iv = c->o->interval_ns, idx;

	if (rel < 0)
		rel = 0;
	if (rel > c->max_rel || (c->max_rel == INT64_MAX && rel - c->last_rel > hour)) {
		c->bad_ts++;
		ps_conv_etl__event_problem(c, off, "pool event %.3f s after the previous one, past "
					   "%s; kept in the interval of the previous one",
					   (double)(rel - c->last_rel) / 1e9,
					   c->max_rel == INT64_MAX ? "the hour a gap can be" :
					   "twice the run the header gives");
		return 0;
	}
	/* most events fall in the current interval: no division for them */
	uint64_t next;
	if (!__builtin_mul_overflow(c->cur_idx + 1, iv, &next) && (uint64_t)rel < next) {
		if (rel > c->last_rel)
			c->last_rel = rel;
		return 0;
	}
	idx = (uint64_t)rel / iv;
	if (idx >= PS_TRACE_MAX_INTERVALS || idx >= (uint64_t)PS_TRACE_TIME_MAX / iv) {
		c->bad_ts++;
		ps_conv_etl__event_problem(c, off, "pool event %.3f s after the start, past the %u "
					   "intervals of %.3f s a trace holds; kept in the interval "
					   "of the previous one", (double)rel / 1e9,
					   PS_TRACE_MAX_INTERVALS, (double)iv / 1e9);
		return 0;
	}
	if (rel > c->last_rel)
		c->last_rel = rel;
	while (c->cur_idx < idx) {
		if (ps_conv_etl__commit(c) < 0)
			return c->rc;
		c->cur_idx++;
		if (ps_conv_etl__begin(c) < 0)
			return c->rc;
	}
	return 0;
}

/* --- pool events --------------------------------------------------------------------------- */

static int tag_index(struct conv *c, uint32_t rawtag, uint8_t pool, bool reclaimable, uint32_t *out)
{
	uint32_t tag = rawtag & ~PS_POOL_TAG_PROTECTED, v;

	if (ps_kmap_get(&c->tagmap, tag, pool, &v)) {
		*out = v;
		return 0;
	}
	return ps_conv_etl__new_tag(c, tag, pool, reclaimable, out);
}

static void touch(struct conv *c, uint32_t ti)
{
	if (!c->tags[ti].dirty) {
		c->tags[ti].dirty = true;
		c->dirty[c->ndirty++] = ti;
	}
}

/* The allocation li is freed; the caller has taken its address out of livemap already. */
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
	if (l->agg >= 0) {
		struct kagg *g = &c->kagg[l->agg];

		if (g->stack >= 0)
			c->stacks[g->stack].live_bytes -= (int64_t)l->size;
		else
			g->live_bytes -= (int64_t)l->size;
	}
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

/*
 * A pool event whose payload holds its fields; the feed decoded them (pool type and tag, size,
 * entry, the session's id). The live map is keyed by (entry, session).
 */
static int on_pool(struct conv *c, const struct feed_pool *p)
{
	bool session = ps_conv_pool_session(p->type);
	bool alloc = p->type == PS_ETW_POOL_ALLOC || p->type == PS_ETW_POOL_ALLOC_SESSION;
	uint32_t ptype = p->ptype, sess = p->sess;
	uint64_t nbytes = p->nbytes, entry = p->entry;

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
		if (!ps_kmap_take(&c->livemap, entry, sess, &v)) {
			c->res->preexisting_frees++;
			return 0;
		}
		release(c, v, false);
		return 0;
	}
	c->res->pool_allocs++;
	if (nbytes > POOL_ABSURD) {
		c->bad_pool++;
		ps_conv_etl__event_problem(c, p->off, "pool allocation of %llu bytes, more than an "
					   "address space holds; event skipped",
					   (unsigned long long)nbytes);
		return 0;
	}
	/*
	 * Nor do a file's allocations add up past 2^52 bytes (4 PiB): below that, no tag's live
	 * bytes, no sum of them and no run total the trace reader bounds can be reached.
	 */
	if (nbytes > PS_CONVERT_ABSURD - c->alloc_total) {
		c->bad_pool++;
		ps_conv_etl__event_problem(c, p->off, "pool allocation of %llu bytes after %llu bytes in "
					   "this file: past 2^52 bytes (4 PiB) in all, which no pool "
					   "holds; event skipped", (unsigned long long)nbytes,
					   (unsigned long long)c->alloc_total);
		return 0;
	}
	c->alloc_total += nbytes;
	uint32_t ti = 0;
	if (tag_index(c, p->rawtag, pool, paged, &ti) < 0)
		return c->rc;
	uint32_t li;
	if (c->freelive != UINT32_MAX) {
		li = c->freelive;
		c->freelive = c->live[li].next_free;
	} else {
		struct live *n = grow(c->live, &c->caplive, c->nlive + 1, sizeof(*n));
		if (!n)
			return ps_conv_etl__oom(c);
		c->live = n;
		li = c->nlive++;
	}
	struct live *l = &c->live[li];
	l->entry = entry;
	l->session = sess;
	l->tag = ti;
	l->size = nbytes;
	l->seq = ++c->seq;
	l->stack = l->agg = -1;
	/* an address still live means its free was lost: freed implicitly, in the same probe */
	int had = ps_kmap_swap(&c->livemap, entry, sess, li, &v);
	if (had < 0)
		return ps_conv_etl__oom(c);
	if (had)
		release(c, v, true);
	struct wtag *w = &c->tags[ti];
	w->s.allocs++;
	w->s.alloc_bytes += nbytes;
	w->s.live_objs++;
	w->s.live_bytes += (int64_t)nbytes;
	touch(c, ti);

	struct ring_ent *r = &c->ring[c->ring_head];
	r->ts = p->ts;
	r->tid = p->tid;
	r->pid = p->pid;
	r->cpu = p->cpu;
	r->stacked = false;
	r->live = li;
	r->seq = l->seq;
	c->ring_head = (c->ring_head + 1) % RING;
	if (c->ring_n < RING)
		c->ring_n++;
	return 0;
}

/* --- stack walks and stack keys ------------------------------------------------------------ */

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
			int32_t si = ps_conv_etl__stack_for(c, l->tag, d + 16, (len - 16) / p, p,
							    pid);
			if (si < 0)
				return c->rc;
			attach(c, r->live, si);
			return 0;
		}
		/* a kernel stack key: counted in its (key, tag) aggregate until the key's frames */
		uint64_t key = first;
		uint32_t gi, head;
		if (!ps_kmap_get(&c->aggmap, key, l->tag, &gi)) {
			struct kagg *n = grow(c->kagg, &c->capkagg, c->nkagg + 1, sizeof(*n));
			if (!n)
				return ps_conv_etl__oom(c);
			c->kagg = n;
			gi = c->nkagg++;
			c->kagg[gi] = (struct kagg){ .key = key, .tag = l->tag, .stack = -1,
						     .next = ps_kmap_get(&c->keymap, key, 0, &head) ?
							     (int32_t)head : -1 };
			if (ps_kmap_put(&c->keymap, key, 0, gi) < 0 ||
			    ps_kmap_put(&c->aggmap, key, l->tag, gi) < 0)
				return ps_conv_etl__oom(c);
		}
		struct kagg *g = &c->kagg[gi];
		g->allocs++;
		g->bytes += l->size;
		g->live_bytes += (int64_t)l->size;
		l->agg = (int32_t)gi;
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
		/* the key may be handed out again after this: its next references start anew */
		ps_kmap_del(&c->keymap, key, 0);
		for (int32_t gi = (int32_t)head; gi >= 0;) {
			struct kagg *g = &c->kagg[gi];
			int32_t si = ps_conv_etl__stack_for(c, g->tag, d + p, (len - p) / p, p,
							    NOSESSION);
			if (si < 0)
				return c->rc;
			struct wstack *s = &c->stacks[si];
			s->allocs += g->allocs;
			s->bytes += g->bytes;
			s->live_bytes += g->live_bytes;
			g->live_bytes = 0;
			g->stack = si;
			ps_kmap_del(&c->aggmap, key, g->tag);
			gi = g->next;
		}
	}
	return 0;
}

/* --- processes ----------------------------------------------------------------------------- */

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
		return ps_conv_etl__oom(c);
	uint32_t v;
	if (ps_kmap_get(&c->pidmap, pid, 0, &v)) {
		free(c->names[v]);
		c->names[v] = name;
		return 0;
	}
	char **nn = grow(c->names, &c->capnames, c->nnames + 1, sizeof(*nn));
	if (!nn) {
		free(name);
		return ps_conv_etl__oom(c);
	}
	c->names = nn;
	c->names[c->nnames] = name;
	if (ps_kmap_put(&c->pidmap, pid, 0, c->nnames) < 0)
		return ps_conv_etl__oom(c);
	c->nnames++;
	return 0;
}

/* --- the driver ---------------------------------------------------------------------------- */

/* A pool event too short to hold its fields: it still moves the timeline. */
static int on_short_pool(struct conv *c, const struct ps_etl_event *ev)
{
	uint64_t off = ev->file_off + ev->buf_off;

	if (advance(c, ps_etl_rel_ns(c->h, ev->ts), off) < 0)
		return c->rc;
	c->bad_pool++;
	ps_conv_etl__event_problem(c, off, "pool event type 0x%x has %u bytes of payload, "
				   "expected %u", ev->type, ev->payload_len, ps_conv_pool_need(ev));
	return 0;
}

static void on_event(struct conv *c, const struct feed_event *r)
{
	struct ps_etl_event ev = r->ev;
	const uint8_t *raw = (const uint8_t *)(r + 1);

	ev.raw = raw;
	ev.payload = raw + r->payload_off;
	ev.guid = r->guid_off == UINT32_MAX ? NULL : raw + r->guid_off;
	switch (ev.group) {
	case PS_ETW_GROUP_POOL:
		on_short_pool(c, &ev);
		break;
	case PS_ETW_GROUP_STACKWALK:
		on_stackwalk(c, &ev);
		break;
	case PS_ETW_GROUP_IMAGE:
		ps_conv_etl__on_image(c, &ev);
		break;
	case PS_ETW_GROUP_PROCESS:
		if (ev.type == PS_ETW_PROCESS_IMAGE_LOAD)
			ps_conv_etl__on_image(c, &ev);
		else
			on_process(c, &ev);
		break;
	}
}

/* A record's size: pool records are fixed, the others say theirs at one offset. */
static inline size_t rec_size(const uint8_t *m)
{
	return *m == FEED_POOL ? sizeof(struct feed_pool) : ((const struct feed_event *)m)->size;
}

/*
 * The records of one batch, in order. The live-allocation slot of the pool record PREFETCH
 * records ahead is loaded while the ones before it are handled: that lookup is a memory access
 * per event that the table's size puts past the caches, and most of its wait then overlaps
 * other work.
 */
#define PREFETCH 8

static int run_batch(struct conv *c, const struct feed_batch *b)
{
	const uint8_t *m = b->mem, *end = b->mem + b->len, *ahead = m;

	for (unsigned k = 0; k < PREFETCH && ahead < end; k++)
		ahead += rec_size(ahead);
	while (m < end) {
		if (ahead < end) {
			if (*ahead == FEED_POOL) {
				const struct feed_pool *q = (const struct feed_pool *)ahead;
				ps_kmap_prefetch(&c->livemap, q->entry, q->sess);
			}
			ahead += rec_size(ahead);
		}
		switch (*m) {
		case FEED_POOL: {
			const struct feed_pool *p = (const struct feed_pool *)m;
			if (advance(c, ps_etl_rel_ns(c->h, p->ts), p->off) < 0)
				return c->rc;
			on_pool(c, p);
			break;
		}
		case FEED_EVENT:
			on_event(c, (const struct feed_event *)m);
			break;
		case FEED_STATS:
			c->st = *(const struct feed_stats *)m;
			break;
		}
		if (c->rc)
			return c->rc;
		m += rec_size(m);
	}
	return 0;
}

int ps_convert_etl(struct ps_trace *t, const char *path, const struct ps_convert_opts *o,
		   struct ps_convert_result *res, char *err, size_t errlen)
{
	struct conv c = { .path = path, .t = t, .o = o, .res = res, .err = err, .errlen = errlen,
			  .freelive = UINT32_MAX };
	struct ps_etl *e;
	struct feed *f = NULL;
	const struct feed_batch *b;
	bool thread;
	int r;

	memset(res, 0, sizeof(*res));
	if (!o->interval_ns || o->interval_ns > (uint64_t)PS_TRACE_TIME_MAX) {
		snprintf(err, errlen, "interval must be 1 ns..2^62 ns");
		return -EINVAL;
	}
	thread = ps_conv_feed_threaded(path);
	r = ps_etl_open(&e, path, PS_ETL_ORDERED | (thread ? PS_ETL_NO_HELPER : 0), err, errlen);
	if (r < 0)
		return r;
	c.h = ps_etl_logfile(e);
	c.max_rel = span_limit(c.h);
	if (ps_conv_etl__write_meta(&c) < 0 || ps_conv_etl__begin(&c) < 0)
		goto out;
	if (ps_conv_feed_open(&f, e, o, thread) < 0) {
		ps_conv_etl__oom(&c);
		goto out;
	}
	while ((b = ps_conv_feed_next(f))) {
		r = run_batch(&c, b);
		ps_conv_feed_done(f);
		if (r < 0)
			goto out;
	}
	/* the feed is at the end: the reader is the caller's again */
	r = ps_conv_feed_end(f, &res->events);
	if (r < 0) {
		snprintf(err, errlen, "%s: read error: %s", path, strerror(-r));
		c.rc = r;
		goto out;
	}
	c.st.flag_events_lost = ps_etl_stats(e)->flag_events_lost;
	c.st.flag_buffer_lost = ps_etl_stats(e)->flag_buffer_lost;
	c.st.problems = ps_etl_stats(e)->problems;
	res->stack_keys_unresolved = ps_conv_etl__unresolved_keys(&c);
	if (ps_conv_etl__write_stacks(&c) < 0 ||
	    ps_trace_set_meta_int(t, PS_META_STACKS_UNRESOLVED_KEYS,
				  (int64_t)res->stack_keys_unresolved) < 0 ||
	    ps_conv_etl__commit(&c) < 0)
		goto out;
	if (o->progress)
		o->progress(o->progress_arg, ps_etl_stats(e)->file_size, ps_etl_stats(e)->file_size,
			    res->events);
	res->problems += ps_etl_stats(e)->problems;
	if (ps_etl_problem(e, 0))
		ps_strlcpy(res->first_problem, ps_etl_problem(e, 0), sizeof(res->first_problem));
out:
	/* first: its thread reads e; the events read so far, also when the conversion failed */
	ps_conv_feed_close(f, &res->events);
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
	free(c.kagg);
	ps_kmap_free(&c.aggmap);
	ps_kmap_free(&c.tagmap);
	ps_kmap_free(&c.livemap);
	ps_kmap_free(&c.keymap);
	ps_kmap_free(&c.stackmap);
	ps_kmap_free(&c.pidmap);
	return c.rc;
}
