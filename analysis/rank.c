// SPDX-License-Identifier: GPL-2.0
/*
 * The ranking of a report's rows (the report's and the plot's "top N").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

double ps_row_rate(const struct ps_report_row *w)
{
	return w->g.rate * (w->g.growth > 0 && (w->exact_shape || w->adj_growth < w->g.growth) ?
			    (double)w->adj_growth / (double)w->g.growth : 1.0);
}
#include "userspace/lib/util/util.h"

static int row_cmp(const void *a, const void *b)
{
	const struct ps_report_row *x = a, *y = b;
	bool bx = x->ts->tag.flags & PS_TAG_F_SLAB_BACKING, by = y->ts->tag.flags & PS_TAG_F_SLAB_BACKING;
	double kx, ky;

	/* Slab-backing pages are counted by their slab tags: list them after the real suspects. */
	if (bx != by)
		return bx ? 1 : -1;
	/* the kernel's own memory first: what the verdict is about */
	kx = !strcmp(x->domain, PS_DOMAIN_KERNEL);
	ky = !strcmp(y->domain, PS_DOMAIN_KERNEL);
	if (kx != ky)
		return kx ? -1 : 1;
	kx = x->adj_growth * (0.25 + x->g.score); ky = y->adj_growth * (0.25 + y->g.score);

	return kx < ky ? 1 : kx > ky ? -1 : 0;
}

void ps_rank_rows(struct ps_report_row *rows, size_t n)
{
	qsort(rows, n, sizeof(*rows), row_cmp);
}
