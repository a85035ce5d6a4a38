// SPDX-License-Identifier: GPL-2.0
/*
 * One frame of poolscope top: the report's rows over the trace so far, through report's view
 * (sort and filters) and a domain, and the verdict of the domain. Lines are cut at the
 * terminal's width and the rows stop at its height, so that the screen never scrolls.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "userspace/lib/util/util.h"
#include "userspace/top/screen.h"
#include "analysis/verdict.h"

static const char *const domains[PS_TOP_DOMAINS] = { PS_DOMAIN_KERNEL, PS_DOMAIN_RECLAIMABLE,
						     PS_DOMAIN_USER, "all" };
static const char *const kinds[PS_TOP_KINDS] = { "all", PS_KIND_SLAB, PS_KIND_KMALLOC,
						 PS_KIND_PAGE, PS_KIND_PERCPU, PS_KIND_POOL };

const char *ps_top_domain_name(int i)
{
	return domains[i % PS_TOP_DOMAINS];
}

const char *ps_top_kind_name(int i)
{
	return kinds[i % PS_TOP_KINDS];
}

static const char *sort_name(enum ps_sort s)
{
	return s == PS_SORT_GROWTH ? "growth" : s == PS_SORT_LIVE ? "live" :
	       s == PS_SORT_ALLOCS ? "allocs" : "rate";
}

/* One line, cut at cols. */
static void line(FILE *f, int cols, const char *s)
{
	fprintf(f, "%.*s\n", cols, s);
}

static int build(struct ps_report *rep, struct ps_verdict *v, const struct ps_run *r,
		 const struct ps_rules *rs, const char *domain)
{
	uint64_t from = 0, to = UINT64_MAX;
	int rc;

	ps_run_workload_span(r, &from, &to);
	rc = ps_report_build(rep, r, rs, from, to);
	if (!rc)
		rc = ps_verdict_build(v, rep, strcmp(domain, "all") ? domain : NULL);
	return rc;
}

void ps_top_next_path(const struct ps_run *r, const struct ps_rules *rs, char *cur, size_t len)
{
	struct ps_report rep = { 0 };
	struct ps_verdict v;
	size_t i;

	if (!r || !r->nintervals || build(&rep, &v, r, rs, PS_DOMAIN_KERNEL)) {
		cur[0] = '\0';
		goto out;
	}
	for (i = 0; i < v.npaths && cur[0] && strcmp(v.paths[i].name, cur); i++)
		;
	/* "" -> the first path; a path -> the next; the last (or one gone) -> "" */
	i = cur[0] ? i + 1 : 0;
	ps_strlcpy(cur, i < v.npaths ? v.paths[i].name : "", len);
out:
	ps_report_free(&rep);
}

int ps_top_render(FILE *f, const struct ps_run *r, const struct ps_rules *rs,
		  const struct ps_top_state *st, const char *src, const char *why, int rows,
		  int cols)
{
	const char *domain = ps_top_domain_name(st->domain);
	struct ps_view_opts vo = { .sort = st->sort };
	struct ps_report rep = { 0 }, view = { 0 };
	struct ps_verdict v;
	char buf[1024], lb[256], sl[256], b1[32], b2[32], b3[32];
	int tagw = cols - 52 < 20 ? 20 : cols - 52, left, rc;
	size_t shown = 0;
	double secs;

	if (!r || !r->nintervals) {
		snprintf(buf, sizeof(buf), "poolscope top  %s  %s", src,
			 why ? why : "waiting for the first interval");
		line(f, cols, buf);
		return 0;
	}
	if (rows < 7) {
		/* not even a row of tags fits under the five lines above them */
		snprintf(buf, sizeof(buf), "poolscope top: %d lines are too few (at least 7)", rows);
		line(f, cols, buf);
		return 0;
	}
	rc = build(&rep, &v, r, rs, domain);
	if (!rc) {
		vo.kind = st->kind ? ps_top_kind_name(st->kind) : NULL;
		vo.path = st->path[0] ? st->path : NULL;
		vo.tag = st->glob[0] ? st->glob : NULL;
		rc = ps_view_build(&view, &rep, &vo);
	}
	if (rc)
		goto out;
	secs = r->intervals[r->nintervals - 1].t_ns / 1e9;
	snprintf(buf, sizeof(buf), "poolscope top  %s  %.0f s, %u intervals, drops %" PRId64, src,
		 secs, r->src_intervals, rep.drops);
	line(f, cols, buf);
	/* the verdict so far, in two lines broken between words */
	snprintf(buf, sizeof(buf), "%s", v.summary);
	if ((int)strlen(buf) > cols) {
		char *sp = buf + cols;

		while (sp > buf && *sp != ' ')
			sp--;
		if (sp == buf)
			sp = buf + cols;
		fprintf(f, "%.*s\n", (int)(sp - buf), buf);
		line(f, cols, sp + (*sp == ' '));
	} else {
		line(f, cols, buf);
		fputc('\n', f);
	}
	snprintf(buf, sizeof(buf), "sort %s  domain %s  path %s  kind %s  tag %s   (keys: q "
		 "r g l a d p k / c)", sort_name(st->sort), domain, st->path[0] ? st->path : "all",
		 ps_top_kind_name(st->kind), st->glob[0] ? st->glob : "*");
	line(f, cols, buf);
	snprintf(buf, sizeof(buf), "%-*s %-7s %-13s %9s %9s %9s", tagw, "TAG", "KIND", "PATH",
		 "END", "GROWTH", "RATE/s");
	line(f, cols, buf);
	left = rows - 5;
	for (size_t i = 0; i < view.nrows && (int)shown < left; i++) {
		const struct ps_report_row *w = &view.rows[i];

		if (strcmp(domain, "all") && strcmp(w->domain, domain))
			continue;
		/* pages under slabs are the slabs' bytes; a tag that came and went says nothing */
		if (w->ts->tag.flags & PS_TAG_F_SLAB_BACKING ||
		    (w->adj_growth <= 0 && w->g.growth <= 0 && w->g.end <= 0))
			continue;
		ps_tag_label(&w->ts->tag, lb, sizeof(lb));
		ps_label_short(lb, sl, (size_t)tagw < sizeof(sl) - 1 ? (size_t)tagw : sizeof(sl) - 1);
		ps_fmt_bytes(b1, sizeof(b1), (double)w->g.end, false);
		ps_fmt_bytes(b2, sizeof(b2), (double)w->adj_growth, true);
		/* the report's RATE/s: scaled as GROWTH where untraced frees were taken out */
		ps_fmt_bytes(b3, sizeof(b3), ps_row_rate(w), true);
		snprintf(buf, sizeof(buf), "%-*s %-7.7s %-13.13s %9.9s %9.9s %9.9s", tagw, sl,
			 w->ts->tag.kind, w->a.cls, b1, b2, b3);
		line(f, cols, buf);
		shown++;
	}
	if (!shown)
		line(f, cols, "(no tag passes the filters)");
out:
	ps_view_free(&view);
	ps_report_free(&rep);
	return rc;
}
