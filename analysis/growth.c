// SPDX-License-Identifier: GPL-2.0
/*
 * Growth statistics of one live-bytes series: least squares rate and R² over time, the share
 * of intervals that grew, the slope of the second half against the whole, and the leak score
 * (docs/analysis.md) built from them.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

struct ps_fit ps_least_squares(const double *x, const double *y, size_t n)
{
	struct ps_fit f = { 0, 0 };
	double mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0;

	if (n < 2)
		return f;
	for (size_t i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= n;
	my /= n;
	for (size_t i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
		syy += (y[i] - my) * (y[i] - my);
	}
	if (sxx == 0)
		return f;
	f.slope = sxy / sxx;
	f.r2 = syy == 0 ? 1.0 : (sxy * sxy) / (sxx * syy);
	return f;
}

static struct ps_fit fit_range(const struct ps_run *r, const int64_t *live, uint32_t a, uint32_t b)
{
	size_t n = b - a + 1;
	double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
	struct ps_fit f = { 0, 0 };

	if (x && y) {
		for (size_t i = 0; i < n; i++) {
			x[i] = r->intervals[a + i].t_ns / 1e9;
			y[i] = (double)live[a + i];
		}
		f = ps_least_squares(x, y, n);
	}
	free(x);
	free(y);
	return f;
}

void ps_growth_series(const struct ps_run *r, const int64_t *live, uint32_t from, uint32_t to,
		      bool reclaimable, struct ps_growth *g)
{
	struct ps_fit all, late;
	uint32_t grew = 0;

	memset(g, 0, sizeof(*g));
	if (to < from || to >= r->nintervals)
		return;
	g->start = live[from];
	g->end = live[to];
	g->growth = g->end - g->start;
	for (uint32_t i = from + 1; i <= to; i++)
		grew += live[i] > live[i - 1];
	g->grew_share = to > from ? (double)grew / (to - from) : 0;
	all = fit_range(r, live, from, to);
	g->rate = all.slope;
	g->r2 = all.r2;
	late = to - from >= 3 ? fit_range(r, live, from + (to - from) / 2, to) : all;
	g->late_ratio = all.slope > 0 ? late.slope / all.slope : 0;
	if (g->growth <= 0 || all.slope <= 0) {
		g->score = 0;
		return;
	}
	{
		double lr = g->late_ratio < 0 ? 0 : g->late_ratio > 1 ? 1 : g->late_ratio;

		g->score = g->r2 * lr * (0.5 + 0.5 * g->grew_share);
		if (reclaimable)
			g->score *= 0.5;
	}
}
