// SPDX-License-Identifier: GPL-2.0
/*
 * Exact series for sampled rows. Tags are sampled (1 in 16 slab objects by address, pages by
 * bytes), so a slow leak of small objects is a staircase of a few samples in a short window,
 * and a staircase is a poor trend. The recorder also counts every allocation and free of each
 * class (slab cache, page order) exactly: what all tags of a class grew at each interval, its
 * class counters know without sampling. The rows of one path take the class's exact growth E(k)
 * less what its other rows grew, shared in proportion to their sampled growth at the window's
 * end, where that is the better series (below).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/caches.h"
#include "userspace/lib/trace/keys.h"
#include "userspace/lib/util/util.h"

/*
 * A group (the rows of one correction series) takes its exact growth when:
 * - no untraced frees were taken out of it: the class counters miss those frees as the tags
 *   do, so they are not its ground truth;
 * - the sampled growth T and the exact growth E at the window's end agree within SHAPE_SD
 *   standard errors. Each sampled object stands for `rate` objects, so T's variance is about
 *   rate x size x T; E is exact but for the frees of objects older than the recording, which
 *   are sampled the same way (variance rate x size x P). A larger difference means the two do
 *   not count the same objects (a full pointer map, a free path one side misses), and the
 *   rows keep their own series;
 * - the key (the rows of the domain and top path that grew or shrank most; slab-backing pages
 *   are never in it) carries more of the group's sampling error than the other rows do, by
 *   ps_row_stderr(). The key's rows take E less the other rows' sampled series as recorded
 *   (not scaled by a correction: the Horvitz-Thompson sum is the unbiased one), so the key is
 *   off by the others' sampling error where its own series is off by its own: the difference
 *   is the better series exactly when the others' error is the smaller. A kernel tag sharing
 *   page order 0 with a busier page cache keeps its own series; network page fragments sharing
 *   order 3 with fewer page-cache folios take the counters' shape less the folios' steps;
 * - the key's rows all grew: the shares of a sum of growth and shrinkage are each larger than
 *   the sum, and would carry the others' error many times over into each row.
 */
#define SHAPE_SD	3.0

static const struct ps_report *sort_rep;

static int by_group(const void *a, const void *b)
{
	const struct ps_report_row *x = &sort_rep->rows[*(const size_t *)a];
	const struct ps_report_row *y = &sort_rep->rows[*(const size_t *)b];

	return x->fac_idx < y->fac_idx ? -1 : x->fac_idx > y->fac_idx;
}

/* Same domain and same top path ("network" of "network/tcp"). */
static bool same_key(const struct ps_report_row *x, const struct ps_report_row *y)
{
	const char *a = x->a.cls[0] ? x->a.cls : "unknown", *b = y->a.cls[0] ? y->a.cls : "unknown";
	size_t n = strcspn(a, "/");

	return !strcmp(x->domain, y->domain) && n == strcspn(b, "/") && !strncmp(a, b, n);
}

static int64_t abs64(int64_t v)
{
	return v < 0 ? -v : v;
}

/*
 * Fills e[from..to] with group c's exact growth since the window start; false when the group
 * keeps its sampled series (the rules above). t_end: its rows' growth at the window's end.
 */
static bool group_exact(const struct ps_report *rep, size_t c, int64_t t_end, double *e)
{
	const struct ps_run *r = rep->run;
	double rate, size, var;
	uint32_t nint = r->nintervals;
	int64_t e_end, pre, v, pre_max = INT64_MAX;
	struct ps_class_ctrs cc;
	char cls[192];

	if (c < r->nslab) {
		for (uint32_t k = rep->from; k <= rep->to; k++)
			if (rep->fac[c * nint + k] < 1.0)
				return false;
		snprintf(cls, sizeof(cls), "%s", r->slab[c].cache);
		size = (double)r->slab[c].objsize;
		/* the sampled estimate of older objects' frees, bounded by the cache's line */
		if (r->slab[c].active_objs[rep->from] >= 0)
			pre_max = r->slab[c].active_objs[rep->from] * (int64_t)r->slab[c].objsize;
	} else {
		snprintf(cls, sizeof(cls), "page-order-%zu", c - r->nslab);
		size = 4096.0 * (double)(1u << (c - r->nslab));
	}
	rate = ps_class_rate(r, cls);
	if (t_end <= 0 || !ps_class_ctrs(r, cls, &cc) ||
	    !ps_class_retained(&cc, rep->from, rep->to, pre_max, &e_end))
		return false;
	pre = e_end - ps_class_growth(&cc, rep->from, rep->to);
	var = rate * (size > 0 ? size : 1) * ((double)(t_end > e_end ? t_end : e_end) + (double)pre);
	if (fabs((double)(t_end - e_end)) > SHAPE_SD * sqrt(var))
		return false;
	for (uint32_t k = rep->from; k <= rep->to; k++) {
		ps_class_retained(&cc, rep->from, k, pre_max, &v);
		e[c * nint + k] = (double)v;
	}
	return true;
}

/* A key row: not a slab's backing pages, grew or shrank, of the key's domain and top path. */
static bool in_key(const struct ps_report_row *w, const struct ps_report_row *key)
{
	return !(w->ts->tag.flags & PS_TAG_F_SLAB_BACKING) && w->adj_growth && same_key(w, key);
}

int ps_exact_shape(struct ps_report *rep)
{
	const struct ps_run *r = rep->run;
	size_t nfac = r->nslab + PS_FAC_ORDERS, *idx, n = 0;
	uint32_t nint = r->nintervals;

	if (!rep->fac || !rep->nrows)
		return 0;
	idx = malloc(rep->nrows * sizeof(*idx));
	rep->shape = calloc(nfac * nint, sizeof(*rep->shape));
	if (!idx || !rep->shape) {
		free(idx);
		free(rep->shape);
		rep->shape = NULL;
		return -ENOMEM;
	}
	for (size_t i = 0; i < rep->nrows; i++)
		if (rep->rows[i].fac_idx >= 0)
			idx[n++] = i;
	sort_rep = rep;
	qsort(idx, n, sizeof(*idx), by_group);
	for (size_t a = 0, b; a < n; a = b) {
		size_t c = (size_t)rep->rows[idx[a]].fac_idx;
		int64_t t_end = 0, best_sum = 0, key_end = 0;
		const struct ps_report_row *best = NULL;
		double var_key = 0, var_other = 0, *e = rep->shape + c * nint;
		bool mixed = false;

		for (b = a; b < n && rep->rows[idx[b]].fac_idx == (int32_t)c; b++)
			t_end += rep->rows[idx[b]].adj_growth;
		/* the key: the domain and top path whose rows grew or shrank most */
		for (size_t i = a; i < b; i++) {
			const struct ps_report_row *w = &rep->rows[idx[i]];
			int64_t sum = 0;

			if (w->ts->tag.flags & PS_TAG_F_SLAB_BACKING || !w->adj_growth)
				continue;
			for (size_t j = a; j < b; j++)
				if (in_key(&rep->rows[idx[j]], w))
					sum += abs64(rep->rows[idx[j]].adj_growth);
			if (sum > best_sum) {
				best_sum = sum;
				best = w;
			}
		}
		if (!best)
			continue;
		for (size_t i = a; i < b; i++) {
			const struct ps_report_row *w = &rep->rows[idx[i]];
			double se = ps_row_stderr(rep, w);

			if (in_key(w, best)) {
				var_key += se * se;
				key_end += w->adj_growth;
				/* shrank beside rows that grew: shares of a small sum, each large */
				if (w->adj_growth < 0)
					mixed = true;
			} else {
				var_other += se * se;
			}
		}
		if (key_end <= 0 || mixed || (var_other > 0 && var_other >= var_key) ||
		    !group_exact(rep, c, t_end, rep->shape))
			continue;
		/* the others' sampled series as recorded: unbiased, where E/T scaling is not */
		for (size_t i = a; i < b; i++) {
			const struct ps_report_row *w = &rep->rows[idx[i]];

			if (in_key(w, best))
				continue;
			for (uint32_t k = rep->from; k <= rep->to; k++)
				e[k] -= (double)(w->ts->s[k].live_bytes -
						 w->ts->s[rep->from].live_bytes);
		}
		for (size_t i = a; i < b; i++) {
			struct ps_report_row *w = &rep->rows[idx[i]];

			if (!in_key(w, best))
				continue;
			w->share = (double)w->adj_growth / (double)key_end;
			w->exact_shape = true;
			w->adj_growth = llround(w->share * e[rep->to]);
		}
	}
	free(idx);
	return 0;
}
