// SPDX-License-Identifier: GPL-2.0
/* Two runs compared: alignment of tags and normalised growth (diff.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"

void ps_diff_key(const struct ps_tag *t, char *buf, size_t len)
{
	const char *s = t->site_sym ? t->site_sym : "";
	const char *plus = strchr(s, '+');

	snprintf(buf, len, "%s|%s|%.*s|%s", t->kind ? t->kind : "", t->cache ? t->cache :
		 t->name ? t->name : "", plus ? (int)(plus - s) : (int)strlen(s), s,
		 t->site_module ? t->site_module : "");
}

static uint64_t run_ios(const struct ps_run *r)
{
	uint64_t n = 0;

	for (uint32_t i = 0; r->has_workload && i < r->nintervals; i++)
		n += r->workload[i].ios;
	return n;
}

/* What a run's growth is divided by: its IOs, or its window's seconds (1 for an empty one). */
static double norm(const struct ps_report *rep, bool per_io)
{
	if (per_io)
		return (double)run_ios(rep->run);
	return rep->secs > 0 ? rep->secs : 1;
}

/* The normalised growth of the tags of rep that align with key. */
static double aligned_growth(const struct ps_report *rep, const char *key, double n)
{
	char k[512];
	double g = 0;

	for (size_t j = 0; j < rep->nrows; j++) {
		ps_diff_key(&rep->rows[j].ts->tag, k, sizeof(k));
		if (!strcmp(k, key))
			g += rep->rows[j].adj_growth / n;
	}
	return g;
}

int ps_diff_build(struct ps_diff *d, const struct ps_report *a, const struct ps_report *b)
{
	char key[512];
	double na, nb;

	memset(d, 0, sizeof(*d));
	d->rows = calloc(b->nrows ? b->nrows : 1, sizeof(*d->rows));
	if (!d->rows)
		return -ENOMEM;
	d->per_io = run_ios(a->run) && run_ios(b->run);
	na = norm(a, d->per_io);
	nb = norm(b, d->per_io);
	for (size_t i = 0; i < b->nrows; i++) {
		const struct ps_report_row *w = &b->rows[i];
		struct ps_diff_row *dr = &d->rows[d->nrows];

		/* below PS_DIFF_MIN_GROWTH over the whole run B a tag is noise, not a finding */
		if (w->adj_growth < PS_DIFF_MIN_GROWTH || (w->ts->tag.flags & PS_TAG_F_SLAB_BACKING))
			continue;
		ps_diff_key(&w->ts->tag, key, sizeof(key));
		dr->row = w;
		dr->a = aligned_growth(a, key, na);
		dr->b = w->adj_growth / nb;
		/* "not in A": A grew less than a tenth of B's normalised growth */
		if (dr->a <= dr->b / 10)
			d->nrows++;
	}
	return 0;
}

void ps_diff_free(struct ps_diff *d)
{
	free(d->rows);
	d->rows = NULL;
	d->nrows = 0;
}
