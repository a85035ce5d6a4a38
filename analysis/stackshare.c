// SPDX-License-Identifier: GPL-2.0
/* The report's per-tag figures split between the tag's sampled stacks (stackshare.h). */
#include <errno.h>
#include <stdlib.h>

#include "analysis/stackshare.h"

/* Stack indices ordered by tag, then by live bytes (largest first). */

static const struct ps_stack *sort_base;

static int by_tag(const void *a, const void *b)
{
	const struct ps_stack *x = &sort_base[*(const size_t *)a];
	const struct ps_stack *y = &sort_base[*(const size_t *)b];

	if (x->tag_id != y->tag_id)
		return x->tag_id < y->tag_id ? -1 : 1;
	if (x->live_bytes != y->live_bytes)
		return x->live_bytes > y->live_bytes ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* First index in idx[0..n) whose stack has tag id, n when none. */
static size_t first_of(const struct ps_run *r, const size_t *idx, size_t n, int64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->stacks[idx[mid]].tag_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * total split by weights w[0..n) (each >= 0, their sum W > 0): floor(total w / W) each, the
 * remainder (fewer than n units) one each to the first ones, so that the parts add up to total
 * exactly. Products in 128 bits: total and W are within 2^62.
 */
static void split(int64_t total, const uint64_t *w, size_t n, uint64_t sum, int64_t *part)
{
	int64_t given = 0;

	for (size_t i = 0; i < n; i++) {
		part[i] = (int64_t)((unsigned __int128)(uint64_t)total * w[i] / sum);
		given += part[i];
	}
	for (size_t i = 0; given < total && i < n; i++)
		if (w[i]) {
			part[i]++;
			given++;
		}
}

/* A tag's four figures over the window, split into its stacks' entries. */
static int tag_entries(const struct ps_report *rep, const struct ps_report_row *w,
		       const size_t *idx, size_t nidx, struct ps_stack_share *out, size_t *n)
{
	const struct ps_run *r = rep->run;
	const struct ps_tag_series *ts = w->ts;
	size_t lo = first_of(r, idx, nidx, ts->tag.id), hi = lo, ns;
	int64_t tot[4] = { w->g.end > 0 ? w->g.end : 0, 0, (int64_t)w->g.allocs, 0 };
	uint64_t *wt = NULL, sum[4] = { 0 };
	int64_t *part = NULL;
	bool rest = false;
	int rc = 0;

	tot[1] = ts->s[rep->to].live_objs > 0 && tot[0] ? ts->s[rep->to].live_objs : 0;
	for (uint32_t k = rep->from; k <= rep->to; k++)
		if (k > rep->from || rep->from == 0)
			tot[3] += (int64_t)ts->s[k].alloc_bytes;
	while (hi < nidx && r->stacks[idx[hi]].tag_id == ts->tag.id)
		hi++;
	ns = hi - lo;
	if (!tot[0] && !tot[2])
		return 0;
	wt = calloc(4 * (ns ? ns : 1), sizeof(*wt));
	part = calloc(4 * (ns ? ns : 1), sizeof(*part));
	if (!wt || !part) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ns; i++) {
		const struct ps_stack *st = &r->stacks[idx[lo + i]];
		uint64_t live = st->live_bytes > 0 ? (uint64_t)st->live_bytes : 0;
		uint64_t v[4] = { live, live, st->allocs, st->bytes };

		for (int f = 0; f < 4; f++) {
			wt[f * ns + i] = v[f];
			sum[f] += v[f];
		}
	}
	for (int f = 0; f < 4; f++) {
		if (sum[f])
			split(tot[f], &wt[f * ns], ns, sum[f], &part[f * ns]);
		else if (tot[f])
			rest = true;
	}
	for (size_t i = 0; i < ns; i++) {
		struct ps_stack_share *e = &out[*n];

		if (!part[i] && !part[ns + i] && !part[2 * ns + i] && !part[3 * ns + i])
			continue;
		*e = (struct ps_stack_share){ ts, &r->stacks[idx[lo + i]], part[i], part[ns + i],
					      part[2 * ns + i], part[3 * ns + i] };
		(*n)++;
	}
	if (rest) {
		out[*n] = (struct ps_stack_share){ ts, NULL, sum[0] ? 0 : tot[0],
						   sum[1] ? 0 : tot[1], sum[2] ? 0 : tot[2],
						   sum[3] ? 0 : tot[3] };
		(*n)++;
	}
out:
	free(wt);
	free(part);
	return rc;
}

int ps_stack_shares(const struct ps_report *rep, struct ps_stack_share **out, size_t *n)
{
	const struct ps_run *r = rep->run;
	size_t *idx = malloc((r->nstacks ? r->nstacks : 1) * sizeof(*idx));
	struct ps_stack_share *e = calloc(r->nstacks + rep->nrows + 1, sizeof(*e));
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!idx || !e) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < r->nstacks; i++)
		idx[i] = i;
	sort_base = r->stacks;
	qsort(idx, r->nstacks, sizeof(*idx), by_tag);
	for (size_t i = 0; i < rep->nrows && !rc; i++)
		if (!(rep->rows[i].ts->tag.flags & PS_TAG_F_SLAB_BACKING))
			rc = tag_entries(rep, &rep->rows[i], idx, r->nstacks, e, n);
	if (!rc) {
		*out = e;
		e = NULL;
	}
out:
	free(idx);
	free(e);
	return rc;
}
