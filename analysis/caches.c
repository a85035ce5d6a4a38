// SPDX-License-Identifier: GPL-2.0
/*
 * report --by cache: each class (slab cache, kmalloc bucket, page order) as its exact counters
 * saw it over the window, beside what its sampled tags estimate and their sampling error.
 *
 * The recorder counts every allocation and free of a class (class.NAME.*); the tags count a
 * sample of the objects (1 in site_sample_rate by address) and scale it. A class's own figure
 * is therefore exact, and its tags' sum an estimate: one sampled object of size s stands for
 * rate objects; the standard error of the tags' sum is ps_row_stderr()'s, added up over the
 * class's tags (their samples are disjoint).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/caches.h"
#include "userspace/lib/trace/keys.h"
#include "userspace/lib/util/util.h"

static int64_t ctr(const struct ps_run *r, const char *cls, const char *field, uint32_t from,
		   uint32_t to)
{
	const struct ps_series *s = ps_class_counter(r, cls, field);

	return s ? ps_counter_delta(s, from, to) : 0;
}

/* The class a row's objects are counted in, as the recorder names it; false for none. */
static bool row_class(const struct ps_tag *t, char *buf, size_t len)
{
	unsigned o;

	if (!strcmp(t->kind, PS_KIND_PERCPU)) {
		ps_strlcpy(buf, "percpu", len);
		return true;
	}

	if (!strcmp(t->kind, PS_KIND_SLAB) || !strcmp(t->kind, PS_KIND_KMALLOC)) {
		const char *c = t->cache_alias ? t->cache_alias : t->cache;

		if (!c)
			return false;
		ps_strlcpy(buf, c, len);
		return true;
	}
	if (!strcmp(t->kind, PS_KIND_PAGE) && t->name && sscanf(t->name, "order-%u", &o) == 1) {
		snprintf(buf, len, "page-order-%u", o);
		return true;
	}
	return false;
}

static double object_size(const struct ps_run *r, const char *cls)
{
	unsigned o;

	for (size_t i = 0; i < r->nslab; i++)
		if (!strcmp(r->slab[i].cache, cls) && r->slab[i].objsize)
			return (double)r->slab[i].objsize;
	if (sscanf(cls, "page-order-%u", &o) == 1 && o < 32) {
		const char *ps = ps_run_meta(r, PS_META_PAGE_SIZE);
		double page = ps ? strtod(ps, NULL) : 0;

		return (page > 0 ? page : 4096.0) * (double)(1u << o);
	}
	return 0;
}

static double row_var(const struct ps_report *rep, const struct ps_report_row *w)
{
	const struct ps_sample *s = w->ts->s;
	double sz, edges, turnover;
	uint64_t n = 0, ab = 0, fb = 0;
	char cls[128];

	if (!(w->ts->tag.flags & PS_TAG_F_SAMPLED) || !row_class(&w->ts->tag, cls, sizeof(cls)))
		return 0;
	/* the window's own events: from the end of its first interval to the end of its last */
	for (uint32_t k = rep->from + 1; k <= rep->to; k++) {
		n += s[k].allocs;
		ab += s[k].alloc_bytes;
		fb += s[k].free_bytes;
	}
	sz = object_size(rep->run, cls);
	/* a class without a slabinfo line (kmalloc-large, percpu): its allocations' mean size */
	if (!sz)
		sz = n ? (double)ab / (double)n : 0;
	edges = fabs((double)s[rep->from].live_bytes) + fabs((double)s[rep->to].live_bytes);
	turnover = (double)ab + (double)fb;
	return ps_class_rate(rep->run, cls) * sz * (edges < turnover ? edges : turnover);
}

double ps_row_stderr(const struct ps_report *rep, const struct ps_report_row *w)
{
	return sqrt(row_var(rep, w));
}

static int by_net_bytes(const void *a, const void *b)
{
	const struct ps_cache_row *x = a, *y = b;
	int64_t p = x->net_bytes < 0 ? -x->net_bytes : x->net_bytes;
	int64_t q = y->net_bytes < 0 ? -y->net_bytes : y->net_bytes;

	if (p != q)
		return p > q ? -1 : 1;
	return strcmp(x->cls, y->cls);
}

int ps_cache_table(const struct ps_report *rep, struct ps_cache_table *out)
{
	const struct ps_run *r = rep->run;
	static const char sfx[] = "." PS_CTR_CLASS_ALLOCS;
	struct ps_cache_row *rows = NULL;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < r->ncounters; i++) {
		const char *nm = r->counters[i].name;
		size_t l = strlen(nm);
		struct ps_cache_row *c, *nr;

		/* "pages" is every order's sum: each order has its own row */
		if (strncmp(nm, "class.", 6) || l <= 6 + sizeof(sfx) - 1 ||
		    strcmp(nm + l - (sizeof(sfx) - 1), sfx) || !strcmp(nm, "class.pages.allocs"))
			continue;
		nr = realloc(rows, (n + 1) * sizeof(*rows));
		if (!nr) {
			free(rows);
			return -ENOMEM;
		}
		rows = nr;
		c = &rows[n++];
		memset(c, 0, sizeof(*c));
		snprintf(c->cls, sizeof(c->cls), "%.*s", (int)(l - 6 - (sizeof(sfx) - 1)), nm + 6);
		c->allocs = ctr(r, c->cls, PS_CTR_CLASS_ALLOCS, rep->from, rep->to);
		c->frees = ctr(r, c->cls, PS_CTR_CLASS_FREES, rep->from, rep->to);
		c->alloc_bytes = ctr(r, c->cls, PS_CTR_CLASS_ALLOC_BYTES, rep->from, rep->to);
		c->free_bytes = ctr(r, c->cls, PS_CTR_CLASS_FREE_BYTES, rep->from, rep->to);
		c->pre_frees = ctr(r, c->cls, PS_CTR_CLASS_PRE_FREES, rep->from, rep->to);
		c->pre_free_bytes = ctr(r, c->cls, PS_CTR_CLASS_PRE_FREE_BYTES, rep->from,
					rep->to);
		/* a sampled estimate of some of the frees: at most the exact count, as in the series */
		if (c->pre_frees > c->frees)
			c->pre_frees = c->frees;
		if (c->pre_free_bytes > c->free_bytes)
			c->pre_free_bytes = c->free_bytes;
		c->net_objs = c->allocs - c->frees;
		c->net_bytes = c->alloc_bytes - c->free_bytes;
		for (size_t s = 0; s < r->nslab; s++)
			if (!strcmp(r->slab[s].cache, c->cls) && r->slab[s].active_objs[rep->from] >= 0 &&
			    r->slab[s].active_objs[rep->to] >= 0) {
				c->has_slab = true;
				c->slab_objs = r->slab[s].active_objs[rep->to] -
					       r->slab[s].active_objs[rep->from];
			}
	}
	/*
	 * Every tag of the class, the pages under slabs too: the page-order counters count those
	 * pages as well. The variances add up: the tags' samples are disjoint.
	 */
	for (size_t i = 0; i < rep->nrows; i++) {
		const struct ps_report_row *w = &rep->rows[i];
		char cls[128];

		if (!row_class(&w->ts->tag, cls, sizeof(cls)))
			continue;
		for (size_t k = 0; k < n; k++)
			if (!strcmp(rows[k].cls, cls)) {
				rows[k].tags_growth += w->g.growth;
				rows[k].tags_se += row_var(rep, w);
				rows[k].ntags++;
				if (w->ts->tag.flags & PS_TAG_F_SAMPLED)
					rows[k].sampled = true;
				break;
			}
	}
	for (size_t k = 0; k < n; k++)
		rows[k].tags_se = sqrt(rows[k].tags_se);
	if (n)
		qsort(rows, n, sizeof(*rows), by_net_bytes);
	out->rows = rows;
	out->n = n;
	return 0;
}

void ps_cache_table_free(struct ps_cache_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

/* A count in 8 columns: as is below 10^8, else with k, M or G and three digits. */
static void fmt_count(char *buf, size_t len, int64_t v, bool sign)
{
	static const char sfx[] = "kMGTP";
	double d = (double)v;
	int u = -1;

	if (v > -10000000 && v < 100000000) {
		snprintf(buf, len, sign ? "%+lld" : "%lld", (long long)v);
		return;
	}
	while (fabs(d) >= 999.5 && u < 4) {
		d /= 1000;
		u++;
	}
	snprintf(buf, len, sign ? "%+.*f%c" : "%.*f%c", fabs(d) < 9.995 ? 2 : fabs(d) < 99.95 ? 1 : 0,
		 d, sfx[u]);
}

static void print_text(FILE *f, const struct ps_report *rep, const struct ps_cache_table *t,
		       size_t top)
{
	size_t shown = 0;

	fprintf(f, "CACHES: every allocation and free counted, %.1f s\n", rep->secs);
	fprintf(f, "%-19s %8s %8s %8s %10s %20s\n", "CACHE", "ALLOCS", "FREES", "NET OBJS",
		"NET BYTES", "TAGS (SAMPLED)");
	for (size_t i = 0; i < t->n && (!top || shown < top); i++) {
		const struct ps_cache_row *c = &t->rows[i];
		char nb[32], tg[32], se[32], est[72], nm[22], ca[24], cf[24], cn[24];

		if (!c->allocs && !c->frees)
			continue;
		shown++;
		ps_fmt_bytes(nb, sizeof(nb), (double)c->net_bytes, true);
		ps_fmt_bytes(tg, sizeof(tg), (double)c->tags_growth, true);
		ps_fmt_bytes(se, sizeof(se), c->tags_se, false);
		if (!c->ntags)
			snprintf(est, sizeof(est), "%s", "-");
		else if (c->sampled)
			snprintf(est, sizeof(est), "%s +-%s", tg, se);
		else
			snprintf(est, sizeof(est), "%s", tg);
		if (strlen(c->cls) > 19)
			snprintf(nm, sizeof(nm), "%.18s~", c->cls);
		else
			snprintf(nm, sizeof(nm), "%.19s", c->cls);
		fmt_count(ca, sizeof(ca), c->allocs, false);
		fmt_count(cf, sizeof(cf), c->frees, false);
		fmt_count(cn, sizeof(cn), c->net_objs, true);
		fprintf(f, "%-19s %8s %8s %8s %10s %20s\n", nm, ca, cf, cn, nb, est);
		/*
		 * The counters see the traced APIs only: a cache freed in bulk or by RCU batches
		 * (maple nodes) grows in them and not in the kernel's own count. SLUB's per-CPU
		 * free objects make /proc/slabinfo differ by a few slabs' worth anyway.
		 */
		if (c->has_slab && llabs(c->net_objs - c->slab_objs) > 1000 &&
		    llabs(c->net_objs - c->slab_objs) * 10 > llabs(c->net_objs))
			fprintf(f, "  /proc/slabinfo: %+lld objects; the rest went on untraced paths\n",
				(long long)c->slab_objs);
		/* tags count objects allocated in the recording; FREES also older ones' */
		if (c->ntags && c->pre_frees > 1000 && c->pre_frees * 10 > c->frees) {
			ps_fmt_bytes(se, sizeof(se), (double)c->pre_free_bytes, false);
			fmt_count(ca, sizeof(ca), c->pre_frees, false);
			fprintf(f, "  ~%s frees (%s) of older objects: TAGS compare with NET + that\n",
				ca, se);
		}
	}
	if (!shown)
		fprintf(f, "  %s\n", t->n ? "(no class allocated or freed in the window)" :
			"(no class counters: a converted or older trace)");
	fprintf(f, "  ALLOCS, FREES, NET: every event of the traced APIs; TAGS: the tags' sum,\n"
		"  estimated from a sample, +- one standard error\n");
}

static void print_csv(FILE *f, const struct ps_cache_table *t)
{
	fprintf(f, "cache,allocs,frees,net_objs,net_bytes,alloc_bytes,free_bytes,preexisting_frees,"
		"preexisting_free_bytes,tags,tags_growth_bytes,tags_stderr_bytes,sampled,"
		"slabinfo_objs\n");
	for (size_t i = 0; i < t->n; i++) {
		const struct ps_cache_row *c = &t->rows[i];

		ps_csv_str(f, c->cls);
		fprintf(f, ",%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%zu,%lld,%.0f,%d,",
			(long long)c->allocs, (long long)c->frees, (long long)c->net_objs,
			(long long)c->net_bytes, (long long)c->alloc_bytes, (long long)c->free_bytes,
			(long long)c->pre_frees, (long long)c->pre_free_bytes, c->ntags,
			(long long)c->tags_growth, c->tags_se, c->sampled);
		if (c->has_slab)
			fprintf(f, "%lld", (long long)c->slab_objs);
		fputc('\n', f);
	}
}

static void print_json(FILE *f, const struct ps_report *rep, const struct ps_cache_table *t)
{
	fprintf(f, "{\"schema\":\"poolscope.caches/1\",\"trace\":");
	ps_json_str(f, rep->run->path);
	fprintf(f, ",\"seconds\":%.3f,\"caches\":[", rep->secs);
	for (size_t i = 0; i < t->n; i++) {
		const struct ps_cache_row *c = &t->rows[i];

		fprintf(f, "%s{\"cache\":", i ? "," : "");
		ps_json_str(f, c->cls);
		fprintf(f, ",\"allocs\":%lld,\"frees\":%lld,\"net_objs\":%lld,\"net_bytes\":%lld,"
			"\"alloc_bytes\":%lld,\"free_bytes\":%lld,\"preexisting_frees\":%lld,"
			"\"preexisting_free_bytes\":%lld,\"tags\":%zu,\"tags_growth_bytes\":%lld,"
			"\"tags_stderr_bytes\":%.0f,\"sampled\":%s,\"slabinfo_objs\":",
			(long long)c->allocs, (long long)c->frees, (long long)c->net_objs,
			(long long)c->net_bytes, (long long)c->alloc_bytes, (long long)c->free_bytes,
			(long long)c->pre_frees, (long long)c->pre_free_bytes, c->ntags,
			(long long)c->tags_growth, c->tags_se, c->sampled ? "true" : "false");
		if (c->has_slab)
			fprintf(f, "%lld}", (long long)c->slab_objs);
		else
			fputs("null}", f);
	}
	fputs("]}\n", f);
}

int ps_report_print_caches(FILE *f, const struct ps_report *rep, enum ps_fmt fmt, size_t top)
{
	struct ps_cache_table t;
	int e = ps_cache_table(rep, &t);

	if (e)
		return e;
	if (fmt == PS_FMT_CSV)
		print_csv(f, &t);
	else if (fmt == PS_FMT_JSON)
		print_json(f, rep, &t);
	else
		print_text(f, rep, &t, top);
	ps_cache_table_free(&t);
	return 0;
}
