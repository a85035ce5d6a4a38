// SPDX-License-Identifier: GPL-2.0
/*
 * The ranking of a report's rows (the report's and the plot's "top N") and the rollup of the
 * rows into paths (network, file-services and their sub-classes) for --by path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "userspace/lib/util/util.h"

static int row_cmp(const void *a, const void *b)
{
	const struct ps_report_row *x = a, *y = b;
	bool bx = x->ts->tag.flags & PS_TAG_F_SLAB_BACKING, by = y->ts->tag.flags & PS_TAG_F_SLAB_BACKING;
	double kx, ky;

	/* Slab-backing pages are counted by their slab tags: list them after the real suspects. */
	if (bx != by)
		return bx ? 1 : -1;
	kx = x->g.growth * (0.25 + x->g.score); ky = y->g.growth * (0.25 + y->g.score);

	return kx < ky ? 1 : kx > ky ? -1 : 0;
}

void ps_rank_rows(struct ps_report_row *rows, size_t n)
{
	qsort(rows, n, sizeof(*rows), row_cmp);
}

/* The path names the rows' classes make: each parent of a sub-class, then the class itself. */
static size_t path_names(const struct ps_report *rep, char names[][PS_PATH_NAME_MAX], size_t max)
{
	size_t nn = 0;

	for (size_t i = 0; i < rep->nrows; i++) {
		const char *c = rep->rows[i].a.cls, *slash = strchr(c, '/');
		size_t k;

		/* their bytes are not summed below: their class alone would print an empty row */
		if (rep->rows[i].ts->tag.flags & PS_TAG_F_SLAB_BACKING)
			continue;

		for (int lvl = 0; lvl < 2; lvl++) {
			char nm[PS_PATH_NAME_MAX];

			if (lvl == 0 && slash)
				snprintf(nm, sizeof(nm), "%.*s", (int)(slash - c), c);
			else if (lvl == 0)
				continue;
			else
				ps_strlcpy(nm, c, sizeof(nm));
			for (k = 0; k < nn; k++)
				if (!strcmp(names[k], nm))
					break;
			if (k == nn && nn < max)
				ps_strlcpy(names[nn++], nm, PS_PATH_NAME_MAX);
		}
	}
	return nn;
}

/*
 * --by path: live bytes summed per class (slab-backing pages excluded) over the window, with
 * the same growth statistics as a tag. Sub-classes (network/smb-transport, file-services/...)
 * are their own rows; the network and file-services rows include their sub-classes.
 */
int ps_report_paths(const struct ps_report *rep, struct ps_paths *p)
{
	const struct ps_run *r = rep->run;
	char names[PS_PATHS_MAX][PS_PATH_NAME_MAX];
	size_t nn = path_names(rep, names, PS_PATHS_MAX);
	int64_t *live = calloc(r->nintervals, sizeof(*live));

	p->n = 0;
	if (!live)
		return -ENOMEM;
	/*
	 * Each sub-class right after its parent (the order rows first named them can put
	 * file-services/smb-server after other, where the indentation would file it under other).
	 * Stable: parents keep their order of first appearance, children theirs.
	 */
	for (size_t q = 0; q < nn; q++) {
		size_t plen = strlen(names[q]);

		if (strchr(names[q], '/'))
			continue;
		ps_strlcpy(p->rows[p->n++].name, names[q], PS_PATH_NAME_MAX);
		for (size_t c = 0; c < nn; c++)
			if (!strncmp(names[c], names[q], plen) && names[c][plen] == '/')
				ps_strlcpy(p->rows[p->n++].name, names[c], PS_PATH_NAME_MAX);
	}
	for (size_t k = 0; k < p->n; k++) {
		struct ps_path_row *pr = &p->rows[k];
		size_t plen = strlen(pr->name);

		memset(live, 0, r->nintervals * sizeof(*live));
		for (size_t i = 0; i < rep->nrows; i++) {
			const struct ps_report_row *w = &rep->rows[i];

			if (w->ts->tag.flags & PS_TAG_F_SLAB_BACKING)
				continue;
			if (strncmp(w->a.cls, pr->name, plen) ||
			    (w->a.cls[plen] && w->a.cls[plen] != '/'))
				continue;
			for (uint32_t t = 0; t < r->nintervals; t++)
				live[t] += w->ts->s[t].live_bytes;
		}
		ps_growth_series(r, live, rep->from, rep->to, false, &pr->g);
	}
	free(live);
	return 0;
}
