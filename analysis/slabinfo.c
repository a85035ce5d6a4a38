// SPDX-License-Identifier: GPL-2.0
/*
 * The /proc/slabinfo cross-check of slab and kmalloc tags: how much of what the tags of a cache
 * grew the cache itself grew, and the leak score of the tags scaled down when most of it went
 * out on frees nothing traced.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

/* Below this much tracked growth a cache's slabinfo delta is per-CPU slab noise: no verdict. */
#define PS_SLAB_CHECK_MIN_BYTES (1 << 20)

static const struct ps_slab_series *slab_find(const struct ps_run *r, const char *cache)
{
	for (size_t i = 0; cache && i < r->nslab; i++)
		if (!strcmp(r->slab[i].cache, cache))
			return &r->slab[i];
	return NULL;
}

/* The slabinfo line a tag's objects are counted in, or NULL (pages, pools, percpu). */
static const struct ps_slab_series *tag_slab(const struct ps_run *r, const struct ps_tag *t)
{
	if (strcmp(t->kind, PS_KIND_SLAB) && strcmp(t->kind, PS_KIND_KMALLOC))
		return NULL;
	return slab_find(r, t->cache_alias ? t->cache_alias : t->cache);
}

/*
 * A cumulative counter at interval i: the last value written at or before i. A class counter
 * first appears when the class is first seen; before that it was 0.
 */
static int64_t cum_at(const struct ps_series *s, uint32_t i)
{
	for (;; i--) {
		if (s->v[i] >= 0)
			return s->v[i];
		if (!i)
			return 0;
	}
}

/*
 * Cross-checks slab and kmalloc tags against /proc/slabinfo over the window. The bytes nothing
 * traced can explain are the class growth (every traced alloc and free of the cache, frees of
 * objects older than the recording included) minus the slabinfo growth: frees on paths without
 * tracepoints (kfree_rcu batches freed with kfree_bulk, sheaves, bulk APIs). Without class
 * counters (converted or hand-made traces) the tags' own growth stands in for the class growth,
 * which cannot tell those frees from frees of old objects. When the tags grew by at least
 * PS_SLAB_CHECK_MIN_BYTES and the unexplained bytes are over half of that, the tags keep their
 * numbers (the report never rewrites what was measured) but their leak score is scaled by the
 * confirmed share, and the report says why.
 */
void ps_slab_checks(struct ps_report *rep)
{
	const struct ps_run *r = rep->run;
	const struct ps_slab_series **ss = calloc(rep->nrows ? rep->nrows : 1, sizeof(*ss));
	int64_t *sum = calloc(r->nslab ? r->nslab : 1, sizeof(*sum));

	if (!ss || !sum)
		goto out;	/* no verdict rather than a wrong one */
	/* each row's slabinfo line once, and the summed tag growth of every cache */
	for (size_t i = 0; i < rep->nrows; i++) {
		ss[i] = tag_slab(r, &rep->rows[i].ts->tag);
		if (ss[i])
			sum[ss[i] - r->slab] += rep->rows[i].g.growth;
	}
	for (size_t i = 0; i < rep->nrows; i++) {
		struct ps_report_row *w = &rep->rows[i];
		int64_t a, b, tracked;

		if (!ss[i])
			continue;
		a = ss[i]->active_objs[rep->from];
		b = ss[i]->active_objs[rep->to];
		if (a < 0 || b < 0)
			continue;
		tracked = sum[ss[i] - r->slab];
		w->slab.cache = ss[i]->cache;
		w->slab.slab_growth = (b - a) * (int64_t)ss[i]->objsize;
		w->slab.tracked_growth = tracked;
		w->slab.confirm = 1.0;
		if (tracked > 0) {
			int64_t cg = tracked, untraced;
			struct ps_class_ctrs cc;

			if (ps_class_ctrs(r, ss[i]->cache, &cc))
				cg = ps_class_growth(&cc, rep->from, rep->to);
			untraced = cg - w->slab.slab_growth;
			w->slab.confirm = untraced <= 0 ? 1.0 : untraced >= tracked ? 0.0 :
					  1.0 - (double)untraced / (double)tracked;
		}
		if (tracked >= PS_SLAB_CHECK_MIN_BYTES && w->slab.confirm < 0.5 && w->g.growth > 0) {
			w->slab.unconfirmed = true;
			w->g.score *= w->slab.confirm;
		}
	}
out:
	free(ss);
	free(sum);
}

/* The order of a page tag ("order-N"), -1 when not one. */
static int tag_order(const struct ps_tag *t)
{
	unsigned o;

	if (strcmp(t->kind, PS_KIND_PAGE) || !t->name || sscanf(t->name, "order-%u", &o) != 1 ||
	    o >= PS_FAC_ORDERS)
		return -1;
	return (int)o;
}

const struct ps_series *ps_class_counter(const struct ps_run *r, const char *cls,
					 const char *field)
{
	char name[192];

	snprintf(name, sizeof(name), PS_CTR_CLASS_FMT, cls, field);
	return ps_run_counter(r, name);
}

double ps_class_rate(const struct ps_run *r, const char *cls)
{
	const char *rate_s = ps_run_meta(r, PS_META_SITE_SAMPLE_RATE);
	double rate = rate_s ? fmax(1.0, strtod(rate_s, NULL)) : 1.0;
	unsigned o;

	/* an order-n page is sampled 1 in rate / 2^n, at least 1 in 1 (docs/record.md) */
	if (sscanf(cls, "page-order-%u", &o) == 1 && o < 32)
		rate = fmax(1.0, rate / (double)(1u << o));
	return rate;
}

bool ps_class_ctrs(const struct ps_run *r, const char *cls, struct ps_class_ctrs *c)
{
	c->alloc = ps_class_counter(r, cls, PS_CTR_CLASS_ALLOC_BYTES);
	c->free = ps_class_counter(r, cls, PS_CTR_CLASS_FREE_BYTES);
	c->pre = ps_class_counter(r, cls, PS_CTR_CLASS_PRE_FREE_BYTES);
	return c->alloc && c->free;
}

int64_t ps_counter_delta(const struct ps_series *s, uint32_t from, uint32_t k)
{
	return cum_at(s, k) - cum_at(s, from);
}

int64_t ps_class_growth(const struct ps_class_ctrs *c, uint32_t from, uint32_t k)
{
	return ps_counter_delta(c->alloc, from, k) - ps_counter_delta(c->free, from, k);
}

bool ps_class_retained(const struct ps_class_ctrs *c, uint32_t from, uint32_t k,
		       int64_t pre_max, int64_t *out)
{
	int64_t pre, freed;

	if (!c->pre)
		return false;
	/*
	 * The frees of objects older than the recording are some of the class's frees: a sampled
	 * estimate above the exact count is wrong by the excess, which would show as a rise that
	 * falls again when the count catches up.
	 */
	pre = ps_counter_delta(c->pre, from, k);
	freed = ps_counter_delta(c->free, from, k);
	if (pre > freed)
		pre = freed;
	/* an object older than the recording is freed once: no more of them than were live */
	if (pre > pre_max)
		pre = pre_max;
	*out = ps_class_growth(c, from, k) + pre;
	return true;
}

/*
 * How many bytes of free objects /proc/slabinfo can count as active in one cache: SLUB counts
 * only the free objects of the node partial lists as free, not those of each CPU's slab and
 * per-CPU partial slabs. Each CPU holds its slab and at most ceil(2 x cpu_partial / objperslab)
 * partial slabs, cpu_partial set by object size as mm/slub.c set_cpu_partial() does (6, 24, 52
 * or 120 objects; /sys/kernel/slab/NAME/cpu_partial). A cache that allocates out of those
 * hidden free objects grows in the traced counters while slabinfo stays flat, so up to this much
 * of a difference is not evidence of untraced frees. 0 when the slab geometry is not known.
 */
static int64_t slab_hidden_free(const struct ps_run *r, const struct ps_slab_series *ss)
{
	const char *v = ps_run_meta(r, PS_META_NCPUS), *ps = ps_run_meta(r, PS_META_PAGE_SIZE);
	uint64_t page = ps ? strtoull(ps, NULL, 10) : 4096, ncpus = v ? strtoull(v, NULL, 10) : 1;
	uint64_t per = ss->objperslab, partial, slabs;

	if (!per || !ss->objsize)
		return 0;
	if (!ncpus || ncpus > 65536)
		ncpus = 1;
	if (!page)
		page = 4096;
	partial = ss->objsize >= page ? 6 : ss->objsize >= 1024 ? 24 : ss->objsize >= 256 ? 52 : 120;
	slabs = 1 + (2 * partial + per - 1) / per;
	return (int64_t)(ncpus * slabs * per * ss->objsize);
}

/*
 * The correction is per interval, so that the corrected series keeps its shape. Slab caches: at
 * each k the tags of a cache grew T(k) since the window start, the traced events added C(k) to
 * the cache (class counters; T(k) without them) and slabinfo shows S(k). C(k) - S(k) left the
 * cache on paths nothing traced, less what slabinfo cannot tell apart (H, slab_hidden_free());
 * taken out of T(k), the tags keep the share 1 - (C - S - H) / T of their growth, 0..1. Frees
 * of objects older than the recording are in C, so they are not mistaken for untraced frees.
 *
 * Page orders: every page free is traced, but page tags are sampled, and one sampled page
 * stands for its order's rate times its size. The exact counters of the order say how many bytes
 * allocated since the window start are still allocated, E(k); page tags of the order that
 * together grew T(k) > E(k) keep the share E / T.
 */
int ps_untraced_correct(struct ps_report *rep)
{
	const struct ps_run *r = rep->run;
	uint32_t nint = r->nintervals;
	size_t nfac = r->nslab + PS_FAC_ORDERS;
	int64_t *t;

	for (size_t i = 0; i < rep->nrows; i++) {
		struct ps_report_row *w = &rep->rows[i];
		const struct ps_slab_series *ss = tag_slab(r, &w->ts->tag);
		int o = tag_order(&w->ts->tag);

		w->fac_idx = ss ? (int32_t)(ss - r->slab) : o >= 0 ? (int32_t)(r->nslab + o) : -1;
		w->adj_growth = w->g.growth;
	}
	rep->fac = malloc(nfac * nint * sizeof(*rep->fac));
	t = calloc(nfac * nint, sizeof(*t));
	if (!rep->fac || !t) {
		free(t);
		free(rep->fac);
		rep->fac = NULL;
		return -ENOMEM;
	}
	for (size_t c = 0; c < nfac * nint; c++)
		rep->fac[c] = 1.0;
	for (size_t i = 0; i < rep->nrows; i++) {
		const struct ps_report_row *w = &rep->rows[i];
		int64_t base = w->ts->s[rep->from].live_bytes;

		if (w->fac_idx < 0)
			continue;
		for (uint32_t k = rep->from; k <= rep->to; k++)
			t[(size_t)w->fac_idx * nint + k] += w->ts->s[k].live_bytes - base;
	}
	for (size_t c = 0; c < nfac; c++) {
		const struct ps_slab_series *ss = c < r->nslab ? &r->slab[c] : NULL;
		int64_t a = ss ? ss->active_objs[rep->from] : 0;
		int64_t hidden = ss ? slab_hidden_free(r, ss) : 0;
		struct ps_class_ctrs cc;
		bool have;
		char cls[32];

		if (ss && a < 0)
			continue;
		if (!ss)
			snprintf(cls, sizeof(cls), "page-order-%zu", c - r->nslab);
		have = ps_class_ctrs(r, ss ? ss->cache : cls, &cc);
		for (uint32_t k = rep->from + 1; k <= rep->to; k++) {
			int64_t tk = t[c * nint + k], ck = tk, kept;

			if (tk <= 0)
				continue;
			if (ss) {
				if (ss->active_objs[k] < 0)
					continue;
				if (have)
					ck = ps_class_growth(&cc, rep->from, k);
				/* kept = T - (C - S - H) */
				kept = ck - (ss->active_objs[k] - a) * (int64_t)ss->objsize - hidden;
				kept = tk - (kept > 0 ? kept : 0);
			} else if (!have || !ps_class_retained(&cc, rep->from, k, INT64_MAX, &kept)) {
				break;
			}
			if (kept < tk)
				rep->fac[c * nint + k] = kept <= 0 ? 0.0 : (double)kept / (double)tk;
		}
	}
	free(t);
	for (size_t i = 0; i < rep->nrows; i++) {
		struct ps_report_row *w = &rep->rows[i];

		w->adj_growth = ps_row_live(rep, w, rep->to) - w->ts->s[rep->from].live_bytes;
		w->untraced = w->fac_idx >= 0 && w->fac_idx < (int32_t)r->nslab &&
			      w->g.growth > w->adj_growth ? w->g.growth - w->adj_growth : 0;
		if (!(w->ts->tag.flags & PS_TAG_F_SLAB_BACKING))
			rep->untraced_removed += w->untraced;
	}
	return 0;
}

int64_t ps_row_live(const struct ps_report *rep, const struct ps_report_row *w, uint32_t k)
{
	int64_t base = w->ts->s[rep->from].live_bytes, v = w->ts->s[k].live_bytes;
	double f;

	if (w->exact_shape && rep->shape)
		return base + llround(w->share *
				      rep->shape[(size_t)w->fac_idx * rep->run->nintervals + k]);
	if (!rep->fac || w->fac_idx < 0 || v <= base)
		return v;
	f = rep->fac[(size_t)w->fac_idx * rep->run->nintervals + k];
	return base + (int64_t)((double)(v - base) * f);
}
