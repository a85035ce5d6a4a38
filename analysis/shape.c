// SPDX-License-Identifier: GPL-2.0
/*
 * Exact series for sampled rows. Tags are sampled (1 in 16 slab objects by address, pages by
 * bytes), so a slow leak of small objects is a staircase of a few samples in a short window,
 * and a staircase is a poor trend. The recorder also counts every allocation and free of each
 * class (slab cache, page order) exactly: what all tags of a class grew at each interval, its
 * class counters know without sampling. Where the rows of a class are one path's memory, they
 * share its exact growth E(k) in proportion to their sampled growth at the window's end.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
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
 * - the rows of one domain and top path (the key) hold more of the group's growth than the
 *   other rows do (absolute values of adjusted growth, slab-backing pages among the others,
 *   as the counters include them). The key's rows take E less the other rows' sampled series:
 *   unbiased, and off by the others' sampling error, where their own series is off by theirs;
 *   sampling errors grow with the bytes sampled, so the difference is the better series
 *   exactly when the others hold less. A kernel tag sharing page order 0 with a larger page
 *   cache keeps its own series; network page fragments sharing order 3 with a few page-cache
 *   folios take the counters' shape less the folios' steps.
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
	int64_t e_end, pre, v;
	struct ps_class_ctrs cc;
	char cls[192];

	if (c < r->nslab) {
		for (uint32_t k = rep->from; k <= rep->to; k++)
			if (rep->fac[c * nint + k] < 1.0)
				return false;
		snprintf(cls, sizeof(cls), "%s", r->slab[c].cache);
		size = (double)r->slab[c].objsize;
	} else {
		snprintf(cls, sizeof(cls), "page-order-%zu", c - r->nslab);
		size = 4096.0 * (double)(1u << (c - r->nslab));
	}
	rate = ps_class_rate(r, cls);
	if (t_end <= 0 || !ps_class_ctrs(r, cls, &cc) ||
	    !ps_class_retained(&cc, rep->from, rep->to, &e_end))
		return false;
	pre = e_end - ps_class_growth(&cc, rep->from, rep->to);
	var = rate * (size > 0 ? size : 1) * ((double)(t_end > e_end ? t_end : e_end) + (double)pre);
	if (fabs((double)(t_end - e_end)) > SHAPE_SD * sqrt(var))
		return false;
	for (uint32_t k = rep->from; k <= rep->to; k++) {
		ps_class_retained(&cc, rep->from, k, &v);
		e[c * nint + k] = (double)v;
	}
	return true;
}

/* The row's adjusted growth since the window start at interval k. */
static double row_growth(const struct ps_report *rep, const struct ps_report_row *w, uint32_t k)
{
	return (double)(ps_row_live(rep, w, k) - w->ts->s[rep->from].live_bytes);
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
		int64_t t_end = 0, abs_sum = 0, best_sum = 0, key_end = 0;
		const struct ps_report_row *best = NULL;
		double *e;

		for (b = a; b < n && rep->rows[idx[b]].fac_idx == (int32_t)c; b++) {
			t_end += rep->rows[idx[b]].adj_growth;
			abs_sum += abs64(rep->rows[idx[b]].adj_growth);
		}
		for (size_t i = a; i < b && best_sum * 2 <= abs_sum; i++) {
			const struct ps_report_row *w = &rep->rows[idx[i]];
			int64_t sum = 0;

			if (w->ts->tag.flags & PS_TAG_F_SLAB_BACKING || !w->adj_growth)
				continue;
			for (size_t j = a; j < b; j++)
				if (!(rep->rows[idx[j]].ts->tag.flags & PS_TAG_F_SLAB_BACKING) &&
				    same_key(w, &rep->rows[idx[j]]))
					sum += abs64(rep->rows[idx[j]].adj_growth);
			if (sum > best_sum) {
				best_sum = sum;
				best = w;
			}
		}
		e = rep->shape + c * nint;
		if (!best || best_sum * 2 <= abs_sum || !group_exact(rep, c, t_end, rep->shape))
			continue;
		for (size_t i = a; i < b; i++) {
			const struct ps_report_row *w = &rep->rows[idx[i]];

			if (w->ts->tag.flags & PS_TAG_F_SLAB_BACKING || !w->adj_growth ||
			    !same_key(w, best)) {
				/* read before any row of the group takes the shape */
				for (uint32_t k = rep->from; k <= rep->to; k++)
					e[k] -= row_growth(rep, w, k);
			} else {
				key_end += w->adj_growth;
			}
		}
		if (key_end <= 0)
			continue;
		for (size_t i = a; i < b; i++) {
			struct ps_report_row *w = &rep->rows[idx[i]];

			if (w->ts->tag.flags & PS_TAG_F_SLAB_BACKING || !w->adj_growth ||
			    !same_key(w, best))
				continue;
			w->share = (double)w->adj_growth / (double)key_end;
			w->exact_shape = true;
			w->adj_growth = llround(w->share * e[rep->to]);
		}
	}
	free(idx);
	return 0;
}
