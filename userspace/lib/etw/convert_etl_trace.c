// SPDX-License-Identifier: GPL-2.0
/*
 * .etl -> trace, the trace side: what the converter writes while the events come. An interval
 * is begun when the timeline reaches it and committed with the samples of the tags that changed
 * in it and the counters whose value changed; a tag is added the first time a pool event names
 * it (with its owner from pooltag.txt); meta describes the logfile header. A damaged event is a
 * problem of the input, counted, the first one described; a failed write or allocation stops
 * the conversion with the first error kept.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "userspace/lib/util/util.h"
#include "userspace/lib/util/version.h"
#include "userspace/lib/etw/convert_etl_internal.h"
#include "userspace/lib/etw/poolsample.h"

static const char *const pool_names[] = { PS_POOL_NONPAGED, PS_POOL_PAGED, PS_POOL_SESSION };

int ps_conv_etl__fail_trace(struct conv *c, const char *what, int r)
{
	if (!c->rc) {
		snprintf(c->err, c->errlen, "writing the trace: %s: %s", what, ps_trace_errmsg(c->t));
		c->rc = r < 0 ? r : -EIO;
	}
	return c->rc;
}

int ps_conv_etl__oom(struct conv *c)
{
	if (!c->rc) {
		snprintf(c->err, c->errlen, "out of memory");
		c->rc = -ENOMEM;
	}
	return c->rc;
}

void ps_conv_etl__event_problem(struct conv *c, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	int n;

	c->res->problems++;
	if (c->res->first_problem[0])
		return;
	n = snprintf(c->res->first_problem, sizeof(c->res->first_problem), "%s: offset 0x%llx: ",
		     c->path, (unsigned long long)off);
	if (n < 0 || (size_t)n >= sizeof(c->res->first_problem))
		return;
	va_start(ap, fmt);
	vsnprintf(c->res->first_problem + n, sizeof(c->res->first_problem) - n, fmt, ap);
	va_end(ap);
}

/* --- intervals ----------------------------------------------------------------------------- */

/* advance() keeps the interval's end within what a trace holds; its wall clock may not be */
int ps_conv_etl__begin(struct conv *c)
{
	uint64_t iv = c->o->interval_ns;
	uint64_t t_ns = (c->cur_idx + 1) * iv;
	int64_t w0 = ps_etl_wall_ns(c->h, c->h->t0);
	uint64_t wall = w0 >= 0 && t_ns <= (uint64_t)(PS_TRACE_TIME_MAX - w0) ? w0 + t_ns : 0;
	int r = ps_trace_begin_interval(c->t, (uint32_t)c->cur_idx, t_ns, wall, iv);
	if (r < 0)
		return ps_conv_etl__fail_trace(c, "begin interval", r);
	c->in_interval = true;
	return 0;
}

int ps_conv_etl__commit(struct conv *c)
{
	struct ps_convert_result *res = c->res;
	const struct feed_stats *st = &c->st;
	int r = 0;

	for (uint32_t i = 0; i < c->ndirty && !r; i++) {
		struct wtag *w = &c->tags[c->dirty[i]];
		r = ps_trace_add_sample(c->t, w->id, &w->s);
		w->s.allocs = w->s.frees = w->s.alloc_bytes = w->s.free_bytes = 0;
		w->dirty = false;
	}
	c->ndirty = 0;
	if (r < 0)
		return ps_conv_etl__fail_trace(c, "sample", r);
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
		return ps_conv_etl__fail_trace(c, "counter", r);
	r = ps_trace_commit_interval(c->t);
	if (r < 0)
		return ps_conv_etl__fail_trace(c, "commit", r);
	c->in_interval = false;
	res->intervals++;
	return 0;
}

/* --- tags and meta ------------------------------------------------------------------------- */

int ps_conv_etl__new_tag(struct conv *c, uint32_t tag, uint8_t pool, bool reclaimable,
			 uint32_t *out)
{
	struct wtag *n = grow(c->tags, &c->captags, c->ntags + 1, sizeof(*n));
	if (!n)
		return ps_conv_etl__oom(c);
	c->tags = n;
	uint32_t *d = realloc(c->dirty, c->captags * sizeof(*d));
	if (!d)
		return ps_conv_etl__oom(c);
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
	pt.domain = ps_flags_domain(pt.flags);
	bool builtin;

	pt.owner = ps_pool_owner(c->o->pooltags, name, &builtin);
	if (builtin)
		pt.flags |= PS_TAG_F_OWNER_BUILTIN;
	int r = ps_trace_add_tag(c->t, &pt);
	if (r < 0)
		return ps_conv_etl__fail_trace(c, "tag", r);
	w->id = pt.id;
	if (ps_kmap_put(&c->tagmap, tag, pool, c->ntags) < 0)
		return ps_conv_etl__oom(c);
	*out = c->ntags++;
	c->res->tags = c->ntags;
	return 0;
}

int ps_conv_etl__write_meta(struct conv *c)
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
	return r < 0 ? ps_conv_etl__fail_trace(c, "meta", r) : 0;
}
