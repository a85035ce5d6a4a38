// SPDX-License-Identifier: GPL-2.0
/*
 * Growth statistics and the ranked report: least squares rate and R² of live bytes over time,
 * share of intervals that grew, the leak score (docs/analysis.md), totals against the system's
 * unreclaimable counter, and the text/csv/json/markdown output.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "userspace/lib/util/util.h"

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

const char *ps_tag_label(const struct ps_tag *t, char *buf, size_t len)
{
	const char *n = t->name ? t->name : t->cache ? t->cache : "?";

	/* a named cache can have several call sites (tags): the site tells them apart */
	if (t->site_sym && (!strcmp(t->kind, PS_KIND_KMALLOC) || !strcmp(t->kind, PS_KIND_PAGE) ||
			    !strcmp(t->kind, PS_KIND_SLAB)))
		snprintf(buf, len, "%s@%s", n, t->site_sym);
	else
		snprintf(buf, len, "%s", n);
	return buf;
}

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
static void slab_checks(struct ps_report *rep)
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

int ps_report_build(struct ps_report *rep, const struct ps_run *r, const struct ps_rules *rs,
		    uint64_t from_ns, uint64_t to_ns)
{
	const char *os = ps_run_meta(r, PS_META_OS);
	const struct ps_series *sys;
	int64_t *live;

	memset(rep, 0, sizeof(*rep));
	rep->run = r;
	if (r->nintervals == 0)
		return -PS_ERR__CORRUPT;
	rep->from = from_ns ? ps_run_interval_at(r, from_ns) : 0;
	rep->to = r->nintervals - 1;
	if (to_ns != UINT64_MAX) {
		uint32_t t = ps_run_interval_at(r, to_ns);

		rep->to = t < r->nintervals ? t : r->nintervals - 1;
	}
	if (rep->from > rep->to)
		return -ERANGE;
	rep->rows = calloc(r->ntags ? r->ntags : 1, sizeof(*rep->rows));
	live = calloc(r->nintervals, sizeof(*live));
	if (!rep->rows || !live) {
		free(live);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->ntags; i++) {
		const struct ps_tag_series *ts = &r->tags[i];
		struct ps_report_row *row = &rep->rows[rep->nrows++];

		row->ts = ts;
		row->reclaimable = ts->tag.flags & PS_TAG_F_RECLAIMABLE;
		for (uint32_t k = 0; k < r->nintervals; k++)
			live[k] = ts->s[k].live_bytes;
		ps_growth_series(r, live, rep->from, rep->to, row->reclaimable, &row->g);
		for (uint32_t k = rep->from; k <= rep->to; k++) {
			if (k == rep->from && rep->from > 0)
				continue;
			row->g.allocs += ts->s[k].allocs;
			row->g.frees += ts->s[k].frees;
		}
		ps_attribute(rs, r, ts, &row->a);
		if (!(ts->tag.flags & PS_TAG_F_SLAB_BACKING)) {
			rep->tracked_growth += row->g.growth;
			if (row->reclaimable)
				rep->reclaimable_growth += row->g.growth;
		}
	}
	free(live);
	slab_checks(rep);
	qsort(rep->rows, rep->nrows, sizeof(*rep->rows), row_cmp);
	rep->sys_name = os && !strcmp(os, PS_OS_WINDOWS) ? PS_SYS_NONPAGED : PS_SYS_SUNRECLAIM;
	sys = ps_run_sys(r, rep->sys_name);
	rep->sys_start = sys ? sys->v[rep->from] : -1;
	rep->sys_end = sys ? sys->v[rep->to] : -1;
	return 0;
}

void ps_report_free(struct ps_report *rep)
{
	free(rep->rows);
	rep->rows = NULL;
	rep->nrows = 0;
}

static void json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

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

static int64_t drops_total(const struct ps_run *r)
{
	return counters_last_sum(r, PS_CTR_DROPS_PREFIX) + counters_last_sum(r, PS_CTR_RECURSION_PREFIX);
}

/*
 * The one drop that changes how the table reads: objects the recorder's pointer map could not
 * take are in no tag (record.md, "A full pointer map"), so tags grew by at least what they show.
 * Said with the remedy, since the bare total does not say which map filled.
 */
static void print_ptr_map_full(FILE *f, const struct ps_run *r)
{
	int64_t n = ps_run_counter_last(r, PS_CTR_DROP_PTR_MAP_FULL);
	const char *size = ps_run_meta(r, PS_META_MAP_PTRS);

	if (n <= 0)
		return;
	fprintf(f, "pointer map full %" PRId64 " times: tags miss those objects, growth is a floor\n"
		"  record with a larger map: --map-size ptrs=N%s%s%s\n", n,
		size ? " (this run: " : "", size ? size : "", size ? ")" : "");
}

/*
 * Events the kernel did not run a program for: a tracing program runs once per CPU at a time,
 * so an allocation or free in a softirq that an interrupt started inside the program is
 * skipped (record.md, "Events lost to re-entry"). Each moves one object of one class the wrong
 * way for good, and a sampled tag by the sample rate when its object was sampled.
 */
static void print_recursion_misses(FILE *f, const struct ps_run *r)
{
	int64_t n = counters_last_sum(r, PS_CTR_RECURSION_PREFIX);

	if (n <= 0)
		return;
	fprintf(f, "kernel skipped %" PRId64 " allocator events (BPF re-entry, recursion_misses):\n"
		"  counts may be off by as many objects (x the rate in sampled tags)\n", n);
}

int ps_report_print(FILE *f, const struct ps_report *rep, enum ps_fmt fmt, size_t top)
{
	const struct ps_run *r = rep->run;
	size_t n = top && top < rep->nrows ? top : rep->nrows;
	double secs = (r->intervals[rep->to].t_ns - r->intervals[rep->from].t_ns) / 1e9;
	char lb[256], b1[32], b2[32], b3[32];

	if (fmt == PS_FMT_JSON) {
		fprintf(f, "{\"schema\":\"poolscope.report/1\",\"trace\":");
		json_str(f, r->path);
		fprintf(f, ",\"os\":");
		json_str(f, ps_run_meta(r, PS_META_OS));
		fprintf(f, ",\"window\":{\"from_interval\":%u,\"to_interval\":%u,\"seconds\":%.3f},",
			rep->from, rep->to, secs);
		fprintf(f, "\"totals\":{\"tracked_growth\":%" PRId64 ",\"reclaimable_growth\":%" PRId64
			",\"system_counter\":\"%s\",\"system_start\":%" PRId64 ",\"system_end\":%" PRId64
			",\"drops\":%" PRId64 "},\"tags\":[", rep->tracked_growth,
			rep->reclaimable_growth, rep->sys_name, rep->sys_start, rep->sys_end,
			drops_total(r));
		for (size_t i = 0; i < n; i++) {
			const struct ps_report_row *w = &rep->rows[i];
			const struct ps_tag *t = &w->ts->tag;

			fprintf(f, "%s{\"tag\":", i ? "," : "");
			json_str(f, ps_tag_label(t, lb, sizeof(lb)));
			fprintf(f, ",\"kind\":");
			json_str(f, t->kind);
			fprintf(f, ",\"cache\":");
			json_str(f, t->cache);
			fprintf(f, ",\"site_sym\":");
			json_str(f, t->site_sym);
			fprintf(f, ",\"module\":");
			json_str(f, t->site_module);
			fprintf(f, ",\"pool\":");
			json_str(f, t->pool);
			fprintf(f, ",\"owner\":");
			json_str(f, t->owner);
			fprintf(f, ",\"start_bytes\":%" PRId64 ",\"end_bytes\":%" PRId64
				",\"growth_bytes\":%" PRId64 ",\"rate_bps\":%.3f,\"r2\":%.4f,"
				"\"grew_share\":%.4f,\"late_ratio\":%.4f,\"leak_score\":%.4f,"
				"\"allocs\":%" PRIu64 ",\"frees\":%" PRIu64 ",\"reclaimable\":%s,"
				"\"slab_backing\":%s,\"class\":", w->g.start, w->g.end, w->g.growth,
				w->g.rate, w->g.r2, w->g.grew_share, w->g.late_ratio, w->g.score,
				w->g.allocs, w->g.frees, w->reclaimable ? "true" : "false",
				t->flags & PS_TAG_F_SLAB_BACKING ? "true" : "false");
			json_str(f, w->a.cls);
			fprintf(f, ",\"evidence\":");
			json_str(f, w->a.evidence);
			fprintf(f, ",\"confidence\":%.2f,\"split\":", w->a.confidence);
			json_str(f, w->a.split[0] ? w->a.split : NULL);
			fprintf(f, ",\"slabinfo\":");
			if (w->slab.cache) {
				fprintf(f, "{\"cache\":");
				json_str(f, w->slab.cache);
				fprintf(f, ",\"growth_bytes\":%" PRId64 ",\"tracked_growth_bytes\":%"
					PRId64 ",\"confirmed_share\":%.4f,\"unconfirmed\":%s}",
					w->slab.slab_growth, w->slab.tracked_growth, w->slab.confirm,
					w->slab.unconfirmed ? "true" : "false");
			} else {
				fputs("null", f);
			}
			fputc('}', f);
		}
		fprintf(f, "]}\n");
		return 0;
	}
	if (fmt == PS_FMT_CSV) {
		fprintf(f, "tag,kind,start_bytes,end_bytes,growth_bytes,rate_bps,r2,grew_share,"
			"leak_score,allocs,frees,reclaimable,class,evidence,confidence\n");
		for (size_t i = 0; i < n; i++) {
			const struct ps_report_row *w = &rep->rows[i];

			csv_str(f, ps_tag_label(&w->ts->tag, lb, sizeof(lb)));
			fprintf(f, ",%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%.3f,%.4f,%.4f,%.4f,%"
				PRIu64 ",%" PRIu64 ",%d,%s,", w->ts->tag.kind, w->g.start, w->g.end,
				w->g.growth, w->g.rate, w->g.r2, w->g.grew_share, w->g.score,
				w->g.allocs, w->g.frees, w->reclaimable, w->a.cls);
			csv_str(f, w->a.evidence);
			fprintf(f, ",%.2f\n", w->a.confidence);
		}
		return 0;
	}
	{
		bool md = fmt == PS_FMT_MD;

		if (md)
			fprintf(f, "| tag | kind | end | growth | rate/s | R² | score | class |\n"
				"|---|---|---|---|---|---|---|---|\n");
		else
			fprintf(f, "%-28s %-7s %9s %9s %9s %4s %5s\n", "TAG", "KIND", "END",
				"GROWTH", "RATE/s", "R2", "SCORE");
		for (size_t i = 0; i < n; i++) {
			const struct ps_report_row *w = &rep->rows[i];
			/* tags split by context share a label: say which one this is */
			const char *cx = w->ts->tag.ctx;
			bool show_cx = cx && strcmp(cx, "task");
			char cls[64];

			ps_tag_label(&w->ts->tag, lb, sizeof(lb));
			snprintf(cls, sizeof(cls), "%s%s%s%s%s", w->a.cls, w->reclaimable ? " (R)" : "",
				 show_cx ? " [" : "", show_cx ? cx : "", show_cx ? "]" : "");
			ps_fmt_bytes(b1, sizeof(b1), (double)w->g.end, false);
			ps_fmt_bytes(b2, sizeof(b2), (double)w->g.growth, true);
			ps_fmt_bytes(b3, sizeof(b3), w->g.rate, true);
			if (md) {
				fprintf(f, "| %s | %s | %s | %s | %s | %.2f | %.2f | %s |\n", lb,
					w->ts->tag.kind, b1, b2, b3, w->g.r2, w->g.score, cls);
				continue;
			}
			if (strlen(lb) > 28)
				lb[28] = '\0';
			fprintf(f, "%-28s %-7.7s %9.9s %9.9s %9.9s %4.2f %5.2f\n", lb,
				w->ts->tag.kind, b1, b2, b3, w->g.r2, w->g.score);
			/*
			 * 79 columns: a long evidence loses its "(rule N)", then its last words,
			 * never the confidence after it, and is never cut inside a symbol
			 */
			snprintf(lb, sizeof(lb), "  %s: %s", cls, w->a.evidence);
			if (strlen(lb) > 79 - 11 && strstr(lb, " (rule "))
				*strstr(lb, " (rule ") = '\0';
			if (strlen(lb) > 79 - 11) {
				char *sp, cut = lb[79 - 11];

				lb[79 - 11] = '\0';
				sp = strrchr(lb + 2, ' ');
				if (cut != ' ' && sp)
					*sp = '\0';
			}
			fprintf(f, "%s, conf %.2f\n", lb, w->a.confidence);
			if (w->a.split[0]) {
				snprintf(lb, sizeof(lb), "  by stack: %s", w->a.split);
				lb[79] = '\0';
				fprintf(f, "%s\n", lb);
			}
			if (w->slab.unconfirmed) {
				ps_fmt_bytes(b1, sizeof(b1), (double)w->slab.slab_growth, true);
				ps_fmt_bytes(b2, sizeof(b2), (double)w->slab.tracked_growth, true);
				snprintf(lb, sizeof(lb), "  slabinfo %s %s of tracked %s: untraced frees?",
					 w->slab.cache, b1, b2);
				lb[79] = '\0';
				fprintf(f, "%s\n", lb);
			}
		}
		ps_fmt_bytes(b1, sizeof(b1), (double)rep->tracked_growth, true);
		ps_fmt_bytes(b2, sizeof(b2), (double)rep->reclaimable_growth, true);
		fprintf(f, "%stracked growth %s (reclaimable %s) over %.1f s\n", md ? "\n" : "", b1,
			b2, secs);
		if (rep->sys_start >= 0 && rep->sys_end >= 0) {
			ps_fmt_bytes(b3, sizeof(b3), (double)(rep->sys_end - rep->sys_start), true);
			fprintf(f, "%s grew %s; drops %" PRId64 "\n", rep->sys_name, b3, drops_total(r));
		} else {
			fprintf(f, "%s not in trace; drops %" PRId64 "\n", rep->sys_name, drops_total(r));
		}
		print_ptr_map_full(f, r);
		print_recursion_misses(f, r);
	}
	return 0;
}

/*
 * --by path: live bytes summed per class (slab-backing pages excluded) over the window, with
 * the same growth statistics as a tag. Sub-classes (network/smb-transport, file-services/...)
 * are their own rows; the network and file-services rows include their sub-classes.
 */
int ps_report_print_paths(FILE *f, const struct ps_report *rep, enum ps_fmt fmt)
{
	const struct ps_run *r = rep->run;
	char names[32][48];
	size_t nn = 0;
	int64_t *live = calloc(r->nintervals, sizeof(*live));
	char b1[32], b2[32], b3[32];

	if (!live)
		return -ENOMEM;
	for (size_t i = 0; i < rep->nrows; i++) {
		const char *c = rep->rows[i].a.cls, *slash = strchr(c, '/');
		size_t k;

		/* their bytes are not summed below: their class alone would print an empty row */
		if (rep->rows[i].ts->tag.flags & PS_TAG_F_SLAB_BACKING)
			continue;

		for (int lvl = 0; lvl < 2; lvl++) {
			char nm[48];

			if (lvl == 0 && slash)
				snprintf(nm, sizeof(nm), "%.*s", (int)(slash - c), c);
			else if (lvl == 0)
				continue;
			else
				ps_strlcpy(nm, c, sizeof(nm));
			for (k = 0; k < nn; k++)
				if (!strcmp(names[k], nm))
					break;
			if (k == nn && nn < ARRAY_SIZE(names))
				ps_strlcpy(names[nn++], nm, sizeof(names[0]));
		}
	}
	/*
	 * Each sub-class right after its parent (the order rows first named them can put
	 * file-services/smb-server after other, where the indentation would file it under other).
	 * Stable: parents keep their order of first appearance, children theirs.
	 */
	{
		char sorted[ARRAY_SIZE(names)][48];
		size_t ns = 0;

		for (size_t p = 0; p < nn; p++) {
			size_t plen = strlen(names[p]);

			if (strchr(names[p], '/'))
				continue;
			ps_strlcpy(sorted[ns++], names[p], sizeof(sorted[0]));
			for (size_t c = 0; c < nn; c++)
				if (!strncmp(names[c], names[p], plen) && names[c][plen] == '/')
					ps_strlcpy(sorted[ns++], names[c], sizeof(sorted[0]));
		}
		memcpy(names, sorted, ns * sizeof(sorted[0]));
		nn = ns;
	}
	if (fmt == PS_FMT_CSV)
		fprintf(f, "path,start_bytes,end_bytes,growth_bytes,rate_bps,r2,leak_score\n");
	else if (fmt == PS_FMT_JSON)
		fprintf(f, "{\"schema\":\"poolscope.paths/1\",\"paths\":[");
	else
		fprintf(f, "%-28s %9s %9s %9s %4s %5s\n", "PATH", "END", "GROWTH", "RATE/s", "R2",
			"SCORE");
	for (size_t k = 0; k < nn; k++) {
		size_t plen = strlen(names[k]);
		struct ps_growth g;

		memset(live, 0, r->nintervals * sizeof(*live));
		for (size_t i = 0; i < rep->nrows; i++) {
			const struct ps_report_row *w = &rep->rows[i];

			if (w->ts->tag.flags & PS_TAG_F_SLAB_BACKING)
				continue;
			if (strncmp(w->a.cls, names[k], plen) ||
			    (w->a.cls[plen] && w->a.cls[plen] != '/'))
				continue;
			for (uint32_t t = 0; t < r->nintervals; t++)
				live[t] += w->ts->s[t].live_bytes;
		}
		ps_growth_series(r, live, rep->from, rep->to, false, &g);
		if (fmt == PS_FMT_CSV) {
			fprintf(f, "%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%.3f,%.4f,%.4f\n",
				names[k], g.start, g.end, g.growth, g.rate, g.r2, g.score);
		} else if (fmt == PS_FMT_JSON) {
			fprintf(f, "%s{\"path\":", k ? "," : "");
			json_str(f, names[k]);
			fprintf(f, ",\"start_bytes\":%" PRId64 ",\"end_bytes\":%" PRId64
				",\"growth_bytes\":%" PRId64 ",\"rate_bps\":%.3f,\"r2\":%.4f,"
				"\"leak_score\":%.4f}", g.start, g.end, g.growth, g.rate, g.r2, g.score);
		} else {
			ps_fmt_bytes(b1, sizeof(b1), (double)g.end, false);
			ps_fmt_bytes(b2, sizeof(b2), (double)g.growth, true);
			ps_fmt_bytes(b3, sizeof(b3), g.rate, true);
			fprintf(f, "%s%-*.*s %9.9s %9.9s %9.9s %4.2f %5.2f\n", strchr(names[k], '/') ?
				"  " : "", strchr(names[k], '/') ? 26 : 28, strchr(names[k], '/') ? 26 : 28,
				names[k], b1, b2, b3, g.r2, g.score);
		}
	}
	if (fmt == PS_FMT_JSON)
		fprintf(f, "]}\n");
	free(live);
	return 0;
}
