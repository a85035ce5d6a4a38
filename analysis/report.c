// SPDX-License-Identifier: GPL-2.0
/*
 * The report: the window, one row per tag (growth, attribution, slabinfo check), the rows
 * ranked, totals against the system's unreclaimable counter and the recorder's drops; and which
 * format prints it (format_*.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/format.h"
#include "userspace/lib/util/util.h"

/* Sum of the last values of the counters whose names start with prefix. */
static int64_t counters_last_sum(const struct ps_run *r, const char *prefix)
{
	size_t n = strlen(prefix);
	int64_t d = 0;

	for (size_t i = 0; i < r->ncounters; i++)
		if (!strncmp(r->counters[i].name, prefix, n))
			d += ps_run_counter_last(r, r->counters[i].name);
	return d;
}

/* The window [from_ns, to_ns] as interval indices; -ERANGE when it is empty. */
static int set_window(struct ps_report *rep, uint64_t from_ns, uint64_t to_ns)
{
	const struct ps_run *r = rep->run;

	rep->from = from_ns ? ps_run_interval_at(r, from_ns) : 0;
	rep->to = r->nintervals - 1;
	if (to_ns != UINT64_MAX) {
		uint32_t t = ps_run_interval_at(r, to_ns);

		rep->to = t < r->nintervals ? t : r->nintervals - 1;
	}
	if (rep->from > rep->to)
		return -ERANGE;
	rep->secs = (r->intervals[rep->to].t_ns - r->intervals[rep->from].t_ns) / 1e9;
	return 0;
}

/* A tag's row: its growth over the window (live is scratch, one value an interval). */
static void tag_row(const struct ps_report *rep, const struct ps_tag_series *ts, int64_t *live,
		    struct ps_report_row *row)
{
	const struct ps_run *r = rep->run;

	row->ts = ts;
	row->reclaimable = ts->tag.flags & PS_TAG_F_RECLAIMABLE;
	row->domain = ps_tag_domain(&ts->tag);
	for (uint32_t k = 0; k < r->nintervals; k++)
		live[k] = ts->s[k].live_bytes;
	ps_growth_series(r, live, rep->from, rep->to, row->reclaimable, &row->g);
	for (uint32_t k = rep->from; k <= rep->to; k++) {
		if (k == rep->from && rep->from > 0)
			continue;
		row->g.allocs += ts->s[k].allocs;
		row->g.frees += ts->s[k].frees;
	}
}

int ps_report_rank(struct ps_report *rep, const struct ps_run *r, uint64_t from_ns,
		   uint64_t to_ns)
{
	const struct ps_series *sys;
	int64_t *live;
	int rc;

	memset(rep, 0, sizeof(*rep));
	rep->run = r;
	if (r->nintervals == 0)
		return -PS_ERR__CORRUPT;
	rc = set_window(rep, from_ns, to_ns);
	if (rc)
		return rc;
	rep->rows = calloc(r->ntags ? r->ntags : 1, sizeof(*rep->rows));
	live = calloc(r->nintervals, sizeof(*live));
	if (!rep->rows || !live) {
		free(live);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->ntags; i++) {
		struct ps_report_row *row = &rep->rows[rep->nrows++];

		tag_row(rep, &r->tags[i], live, row);
		if (!(row->ts->tag.flags & PS_TAG_F_SLAB_BACKING)) {
			rep->tracked_growth += row->g.growth;
			if (row->reclaimable)
				rep->reclaimable_growth += row->g.growth;
		}
	}
	free(live);
	ps_slab_checks(rep);
	rc = ps_untraced_correct(rep);
	if (rc) {
		ps_report_free(rep);
		return rc;
	}
	ps_rank_rows(rep->rows, rep->nrows);
	sys = ps_unreclaimable(r, &rep->sys_name);
	rep->sys_start = sys ? sys->v[rep->from] : -1;
	rep->sys_end = sys ? sys->v[rep->to] : -1;
	rep->recursion_misses = counters_last_sum(r, PS_CTR_RECURSION_PREFIX);
	rep->drops = counters_last_sum(r, PS_CTR_DROPS_PREFIX) + rep->recursion_misses;
	rep->ptr_map_full = ps_run_counter_last(r, PS_CTR_DROP_PTR_MAP_FULL);
	if (ps_run_live_absolute(r)) {
		rep->snapshots = rep->to - rep->from + 1;
		for (size_t i = 0; i < r->ntags; i++)
			rep->listed_late += r->tags[i].first > rep->from &&
					    r->tags[i].first <= rep->to &&
					    !(r->tags[i].tag.flags & PS_TAG_F_BORN_LATE);
	}
	return 0;
}

int ps_report_build(struct ps_report *rep, const struct ps_run *r, const struct ps_rules *rs,
		    uint64_t from_ns, uint64_t to_ns)
{
	int rc = ps_report_rank(rep, r, from_ns, to_ns);

	if (rc)
		return rc;
	/* the class of a tag does not move it in the ranking */
	for (size_t i = 0; i < rep->nrows; i++) {
		const struct ps_tag *t = &rep->rows[i].ts->tag;

		ps_attribute(rs, r, rep->rows[i].ts, &rep->rows[i].a);
		if (!strcmp(t->kind, PS_KIND_SLAB) || !strcmp(t->kind, PS_KIND_KMALLOC))
			rep->rows[i].lifetime = ps_rules_lifetime(rs, t->cache, t->site_sym);
	}
	rc = ps_exact_shape(rep);
	if (rc) {
		ps_report_free(rep);
		return rc;
	}
	ps_rank_rows(rep->rows, rep->nrows);
	return 0;
}

bool ps_run_workload_span(const struct ps_run *r, uint64_t *from_ns, uint64_t *to_ns)
{
	uint32_t a = UINT32_MAX, b = 0;

	if (!r->has_workload)
		return false;
	for (uint32_t k = 0; k < r->nintervals; k++)
		if (r->workload[k].ios) {
			if (a == UINT32_MAX)
				a = k;
			b = k;
		}
	if (a == UINT32_MAX || b - a < 3)
		return false;
	/*
	 * From the end of the interval before the first IO, where the window's growth starts, to
	 * the last interval with IOs; when the recording went on after it, the load stopped inside
	 * that interval and its end already holds the teardown: to the one before.
	 */
	*from_ns = a ? r->intervals[a - 1].t_ns : 0;
	*to_ns = r->intervals[b + 1 < r->nintervals ? b - 1 : b].t_ns;
	return true;
}

int64_t ps_tracked_live(const struct ps_run *r, uint32_t k)
{
	int64_t tot = 0;

	for (size_t i = 0; i < r->ntags; i++)
		if (!(r->tags[i].tag.flags & PS_TAG_F_SLAB_BACKING))
			tot += r->tags[i].s[k].live_bytes;
	return tot;
}

void ps_report_free(struct ps_report *rep)
{
	free(rep->rows);
	free(rep->fac);
	free(rep->shape);
	rep->fac = NULL;
	rep->shape = NULL;
	rep->rows = NULL;
	rep->nrows = 0;
}

int ps_report_print(FILE *f, const struct ps_report *rep, const struct ps_verdict *v,
		    enum ps_fmt fmt, size_t top)
{
	size_t n = top && top < rep->nrows ? top : rep->nrows;

	if (fmt == PS_FMT_JSON)
		ps_format_json(f, rep, v, n);
	else if (fmt == PS_FMT_CSV)
		ps_format_csv(f, rep, n);
	else
		ps_format_text(f, rep, v, top, fmt == PS_FMT_MD);
	return 0;
}

int ps_report_print_paths(FILE *f, const struct ps_verdict *v, enum ps_fmt fmt)
{
	if (fmt == PS_FMT_CSV)
		ps_format_paths_csv(f, v);
	else if (fmt == PS_FMT_JSON)
		ps_format_paths_json(f, v);
	else
		ps_format_paths_text(f, v);
	return 0;
}

int ps_fmt_parse(const char *s, enum ps_fmt *out)
{
	if (!strcmp(s, "text"))
		*out = PS_FMT_TEXT;
	else if (!strcmp(s, "csv"))
		*out = PS_FMT_CSV;
	else if (!strcmp(s, "json"))
		*out = PS_FMT_JSON;
	else if (!strcmp(s, "markdown") || !strcmp(s, "md"))
		*out = PS_FMT_MD;
	else
		return -EINVAL;
	return 0;
}
