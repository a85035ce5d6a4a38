// SPDX-License-Identifier: GPL-2.0
/*
 * The /proc/slabinfo cross-check of slab and kmalloc tags: how much of what the tags of a cache
 * grew the cache itself grew, and the leak score of the tags scaled down when most of it went
 * out on frees nothing traced.
 */
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
 * Bytes the traced events of a cache added over the window, from the recorder's exact class
 * counters (class.<cache>.alloc_bytes / .free_bytes, cumulative); false when the trace has none.
 */
static bool class_growth(const struct ps_run *r, const char *cache, uint32_t from, uint32_t to,
			 int64_t *growth)
{
	const struct ps_series *a, *f;
	char name[192];

	snprintf(name, sizeof(name), PS_CTR_CLASS_FMT, cache, PS_CTR_CLASS_ALLOC_BYTES);
	a = ps_run_counter(r, name);
	snprintf(name, sizeof(name), PS_CTR_CLASS_FMT, cache, PS_CTR_CLASS_FREE_BYTES);
	f = ps_run_counter(r, name);
	if (!a || !f)
		return false;
	*growth = (cum_at(a, to) - cum_at(a, from)) - (cum_at(f, to) - cum_at(f, from));
	return true;
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

			class_growth(r, ss[i]->cache, rep->from, rep->to, &cg);
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
