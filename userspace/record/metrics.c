// SPDX-License-Identifier: GPL-2.0
/*
 * `record --listen`: the recorder's state as a metrics page, once per interval, handed to the
 * endpoint thread (userspace/lib/prom/server.h). Runs in the recorder's thread after the
 * interval is written; its cost is a pass over the tags and a sort, never a wait on a client.
 *
 * What the page holds (docs/prometheus.md lists every family):
 *   - live bytes since the start per domain, per path, and per tag for the top N tags of each
 *     path (the rest summed in one series per path, tag="other"): the cardinality stays about
 *     N x paths x domains whatever the kernel does;
 *   - the verdict's state per path of the kernel domain over a sliding window: the report's rule
 *     (ps_vstat_series) on the path's live bytes, confirmed as the report confirms: slab growth
 *     by each cache's own growth in /proc/slabinfo (a path's growth in a cache counts up to what
 *     the cache grew), page growth as it is (the exact counters of the orders bound it), the
 *     rest (large kmalloc, percpu) by SUnreclaim plus socket memory rising at least half as much;
 *   - the recorder's own figures: events, drops, CPU, intervals.
 * Paths come from the attribution rules the report uses, by call site, cache and owner; at the
 * intervals that read the sampled stacks, tags with stacks are attributed again by their frames.
 * Kernel addresses are never served: labels hold symbol+offset names only.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/record/rec.h"
#include "userspace/datafile.h"
#include "userspace/lib/prom/openmetrics.h"
#include "userspace/lib/prom/server.h"
#include "userspace/lib/trace/keys.h"
#include "userspace/lib/util/version.h"
#include "analysis/analysis.h"
#include "analysis/trend.h"
#include "analysis/verdict.h"

#define M_PATHS PS_V_PATHS_MAX
#define M_DOMAINS 3
#define M_RING_MAX 4096

static const char *const domains[M_DOMAINS] = { PS_DOMAIN_KERNEL, PS_DOMAIN_RECLAIMABLE,
						PS_DOMAIN_USER };

/* A path's live bytes in one slab cache over the ring (p M_PATHS: the domain's). */
struct cache_ring {
	int p;
	size_t slab;		/* index in slab[] */
	int64_t cur, *v;
};

/* A cache's bytes in /proc/slabinfo over the ring, -1 where it has no line. */
struct slab_ring {
	char cache[64], alias[64];
	int64_t *v;
};

struct cr_key {
	int32_t p;
	char cache[64];
};

struct rec_metrics {
	struct ps_rules *rules;
	struct ps_httpd *httpd;
	unsigned top;
	char paths[M_PATHS][PS_PATH_NAME_MAX];
	size_t npaths;
	/* the ring of the kernel domain's path series: [cap] points */
	size_t cap, n, head;
	double *t;			/* seconds since the start */
	int64_t (*live)[M_PATHS + 1];	/* per path, then the domain */
	int64_t (*pages)[M_PATHS + 1];	/* of it, in page tags */
	int64_t *truth;			/* SUnreclaim + socket memory */
	struct ps_vstat st[M_PATHS + 1];
	struct cache_ring *cr;
	size_t ncr, capcr;
	struct ps_htab cr_idx;		/* cr_key -> index + 1 */
	struct slab_ring *slab;
	size_t nslab, capslab;
	double *wt, *wy, *wc;		/* scratch [cap] */
	uint32_t intervals;
};

static int domain_index(const struct ps_tag *t)
{
	const char *d = ps_tag_domain(t);

	for (int i = 0; i < M_DOMAINS; i++)
		if (!strcmp(d, domains[i]))
			return i;
	return 0;
}

static int path_index(struct rec_metrics *m, const char *cls)
{
	size_t n = strcspn(cls, "/");
	char top[PS_PATH_NAME_MAX];

	snprintf(top, sizeof(top), "%.*s", (int)n, cls);
	for (size_t i = 0; i < m->npaths; i++)
		if (!strcmp(m->paths[i], top))
			return (int)i;
	if (m->npaths == M_PATHS)
		return -1;
	ps_strlcpy(m->paths[m->npaths], top, sizeof(m->paths[0]));
	return (int)m->npaths++;
}

/* The path of a tag from stacks (NULL: by call site, cache and owner only). */
static void attribute(struct rec_metrics *m, struct utag *u, const struct ps_stack *stacks,
		      size_t nstacks)
{
	struct ps_run run = { .nstacks = nstacks, .stacks = (struct ps_stack *)stacks };
	struct ps_tag_series ts = { .tag = u->tag };
	struct ps_attr a;
	int p;

	ts.tag.id = 1;	/* the stacks below carry tag_id 1: a recorder without -o has no ids */
	ps_attribute(m->rules, &run, &ts, &a);
	p = path_index(m, a.cls);
	if (p < 0)
		p = path_index(m, "unknown");	/* more top-level paths than the page keeps */
	u->mpath = (int16_t)p;
	u->mattr = true;
}

struct stk_ref {
	const struct utag *u;
	size_t i;
};

static int cmp_stk(const void *a, const void *b)
{
	const struct stk_ref *x = a, *y = b;

	if (x->u != y->u)
		return x->u < y->u ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* At a stacks interval: every tag with sampled stacks attributed again by their frames. */
static int attribute_stacks(struct rec *r, struct rec_metrics *m)
{
	const struct snap *s = &r->snap;
	struct stk_ref *refs;
	struct ps_stack *st = NULL;
	struct ps_frame *fr = NULL;
	size_t n = 0, most = 0;
	int e = 0;

	refs = calloc(s->nstk ? s->nstk : 1, sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	for (size_t i = 0; i < s->nstk; i++)
		if (s->stk[i].u && s->stk[i].frames >= 0)
			refs[n++] = (struct stk_ref){ s->stk[i].u, i };
	qsort(refs, n, sizeof(*refs), cmp_stk);
	/* scratch for one tag's stacks at a time: the largest group's */
	for (size_t g = 0, end; g < n; g = end) {
		for (end = g; end < n && refs[end].u == refs[g].u; end++)
			;
		if (end - g > most)
			most = end - g;
	}
	st = calloc(most ? most : 1, sizeof(*st));
	fr = calloc((most ? most : 1) * PS_MAX_STACK_DEPTH, sizeof(*fr));
	if (!st || !fr) {
		e = -ENOMEM;
		goto out;
	}
	for (size_t g = 0; g < n;) {
		size_t k = 0, end = g;

		while (end < n && refs[end].u == refs[g].u)
			end++;
		for (size_t j = g; j < end; j++) {
			const struct snap_stack *ss = &s->stk[refs[j].i];
			const struct snap_frames *f = &s->frames[ss->frames];
			struct ps_frame *ff = fr + k * PS_MAX_STACK_DEPTH;

			for (uint32_t q = 0; q < f->n; q++) {
				const struct ps_ksym *ks = f->sym[q];

				ff[q] = (struct ps_frame){ .addr = f->ips[q] };
				if (ks) {
					ff[q].sym = ks->name;
					ff[q].off = f->ips[q] - ks->addr;
					ff[q].module = ks->module;
				}
			}
			st[k++] = (struct ps_stack){ .tag_id = 1, .allocs = ss->val.allocs,
						     .bytes = ss->val.bytes,
						     .live_bytes = ss->live_bytes, .ctx = ss->ctx,
						     .nframes = f->n, .frames = ff };
		}
		/*
		 * Once per tag: moving a tag to another path later would move its live bytes since
		 * the start at once, a step in both paths' series the verdict would misread.
		 */
		if (!refs[g].u->mstk) {
			attribute(m, (struct utag *)refs[g].u, st, k);
			((struct utag *)refs[g].u)->mstk = true;
		}
		g = end;
	}
out:
	free(refs);
	free(st);
	free(fr);
	return e;
}

int rec_metrics_init(struct rec *r)
{
	const struct ps_record_opts *o = r->o;
	struct ps_httpd_opts ho = PS_HTTPD_OPTS_DEFAULT;
	struct rec_metrics *m;
	char path[4096];
	int e;

	m = calloc(1, sizeof(*m));
	if (!m)
		return rec_fail(r, -ENOMEM, "memory", NULL);
	r->m = m;
	m->top = o->listen_top;
	m->cap = (size_t)(o->listen_window_ns / o->interval_ns) + 1;
	if (m->cap > M_RING_MAX)
		m->cap = M_RING_MAX;
	if (m->cap < 3)
		m->cap = 3;
	m->t = calloc(m->cap, sizeof(*m->t));
	m->live = calloc(m->cap, sizeof(*m->live));
	m->pages = calloc(m->cap, sizeof(*m->pages));
	m->truth = calloc(m->cap, sizeof(*m->truth));
	m->wt = calloc(m->cap, sizeof(double));
	m->wy = calloc(m->cap, sizeof(double));
	m->wc = calloc(m->cap, sizeof(double));
	if (!m->t || !m->live || !m->pages || !m->truth || !m->wt || !m->wy || !m->wc)
		return rec_fail(r, -ENOMEM, "memory", NULL);
	if (ps_htab_init(&m->cr_idx, sizeof(struct cr_key)))
		return rec_fail(r, -ENOMEM, "memory", NULL);
	if (ps_default_rules_path(path, sizeof(path)))
		return rec_fail(r, -ENOENT, "attribution rules", "(set POOLSCOPE_RULES)");
	e = ps_rules_load(&m->rules, path, r->err, r->errlen);
	if (e)
		return e;
	e = ps_httpd_start(&m->httpd, o->listen, &ho, r->err, r->errlen);
	if (e) {
		size_t l = strlen(r->err);

		snprintf(r->err + l, r->errlen - l, " (--listen)");
		return e;
	}
	return 0;
}

void rec_metrics_fini(struct rec *r)
{
	struct rec_metrics *m = r->m;

	if (!m)
		return;
	ps_httpd_stop(m->httpd);
	ps_rules_free(m->rules);
	for (size_t i = 0; i < m->ncr; i++)
		free(m->cr[i].v);
	for (size_t i = 0; i < m->nslab; i++)
		free(m->slab[i].v);
	free(m->cr);
	free(m->slab);
	ps_htab_fini(&m->cr_idx);
	free(m->t);
	free(m->live);
	free(m->pages);
	free(m->truth);
	free(m->wt);
	free(m->wy);
	free(m->wc);
	free(m);
	r->m = NULL;
}

static int64_t meminfo(const struct snap *s, const char *name)
{
	for (size_t i = 0; i < s->meminfo.n; i++)
		if (!strcmp(s->meminfo.f[i].name, name))
			return s->meminfo.f[i].value;
	return 0;
}

/* The slab ring of a cache, made on first use; SIZE_MAX on ENOMEM. */
static size_t slab_ring(struct rec_metrics *m, const struct ps_tag *t)
{
	const char *c = t->cache ? t->cache : t->name;
	struct slab_ring *sr;

	for (size_t i = 0; i < m->nslab; i++)
		if (!strcmp(m->slab[i].cache, c))
			return i;
	if (ps_array_reserve((void **)&m->slab, &m->capslab, m->nslab + 1, sizeof(*m->slab)))
		return SIZE_MAX;
	sr = &m->slab[m->nslab];
	memset(sr, 0, sizeof(*sr));
	ps_strlcpy(sr->cache, c, sizeof(sr->cache));
	ps_strlcpy(sr->alias, t->cache_alias ? t->cache_alias : "", sizeof(sr->alias));
	sr->v = malloc(m->cap * sizeof(*sr->v));
	if (!sr->v)
		return SIZE_MAX;
	for (size_t i = 0; i < m->cap; i++)
		sr->v[i] = -1;
	return m->nslab++;
}

/* Adds a slab or kmalloc tag's live bytes to its (path, cache) ring's current value. */
static int cache_add(struct rec_metrics *m, int p, const struct ps_tag *t, int64_t live)
{
	struct cr_key key = { .p = p };
	struct cache_ring *cr;
	uintptr_t i;

	ps_strlcpy(key.cache, t->cache ? t->cache : t->name ? t->name : "?", sizeof(key.cache));
	i = (uintptr_t)ps_htab_get(&m->cr_idx, &key);
	if (!i) {
		size_t sl = slab_ring(m, t);

		if (sl == SIZE_MAX || ps_array_reserve((void **)&m->cr, &m->capcr, m->ncr + 1,
							sizeof(*m->cr)))
			return -ENOMEM;
		cr = &m->cr[m->ncr];
		*cr = (struct cache_ring){ .p = p, .slab = sl };
		cr->v = calloc(m->cap, sizeof(*cr->v));
		if (!cr->v || ps_htab_put(&m->cr_idx, &key, (void *)(uintptr_t)(m->ncr + 1))) {
			free(cr->v);
			return -ENOMEM;
		}
		i = ++m->ncr;
	}
	m->cr[i - 1].cur += live;
	return 0;
}

/* This interval's slabinfo bytes of every cache a ring follows. */
static void slab_fill(struct rec_metrics *m, const struct snap *s, size_t k)
{
	for (size_t i = 0; i < m->nslab; i++) {
		struct slab_ring *sr = &m->slab[i];

		sr->v[k] = -1;
		for (size_t j = 0; j < s->slabinfo.n; j++) {
			const struct ps_slabinfo_row *row = &s->slabinfo.row[j];

			if (!strcmp(row->cache, sr->cache) || (sr->alias[0] &&
							       !strcmp(row->cache, sr->alias))) {
				sr->v[k] = (int64_t)(row->active_objs * row->objsize);
				break;
			}
		}
	}
}

/*
 * Of a column's slab growth, what /proc/slabinfo shows: per cache, the path's growth in it up to
 * the cache's own growth (as the report keeps of a row only what its cache shows). *net gets
 * the net growth of the column's slab tags.
 */
static int64_t slab_shown(const struct rec_metrics *m, size_t col, size_t first, size_t n,
			  int64_t *net)
{
	size_t last = (first + n - 1) % m->cap;
	int64_t shown = 0;

	*net = 0;
	for (size_t i = 0; i < m->ncr; i++) {
		const struct cache_ring *cr = &m->cr[i];
		const struct slab_ring *sr = &m->slab[cr->slab];
		size_t from = first;
		int64_t g, sg;

		/*
		 * A cache without a slabinfo line (large kmalloc) is not the slab side's to
		 * confirm: its growth stays with the rest, which SUnreclaim confirms.
		 */
		if ((size_t)cr->p != col || sr->v[last] < 0)
			continue;
		/* from the window's oldest slot the cache has a line in (it may have come later) */
		for (size_t j = 0; j < n && sr->v[from] < 0; j++)
			from = (first + j + 1) % m->cap;
		g = cr->v[last] - cr->v[first];
		*net += g;
		if (sr->v[from] < 0)
			continue;
		/* the tags' growth since that slot, up to the cache's own growth over it */
		g = cr->v[last] - cr->v[from];
		sg = sr->v[last] - sr->v[from];
		if (g > 0 && sg > 0)
			shown += sg < g ? sg : g;
	}
	return shown;
}

/* The kernel domain's state per path (and the domain's, index npaths) over the ring. */
static int verdicts(struct rec_metrics *m)
{
	size_t n = m->n, first = (m->head + m->cap - n) % m->cap;
	double truth_growth = 0;	/* Theil-Sen growth of SUnreclaim + socket memory, if rising */
	struct ps_trend tr;
	int e;

	/* the same confirming counter for every path: its trend once */
	for (size_t i = 0; i < n; i++) {
		size_t k = (first + i) % m->cap;

		m->wt[i] = m->t[k];
		m->wc[i] = (double)m->truth[k];
	}
	if (n >= 3) {
		e = ps_trend_fit(m->wt, m->wc, n, &tr);
		if (e && e != -EINVAL)
			return e;
		if (!e && tr.p_up < PS_V_P_GROWING)
			truth_growth = tr.slope * (m->wt[n - 1] - m->wt[0]);
	}
	for (size_t p = 0; p <= m->npaths; p++) {
		size_t col = p == m->npaths ? M_PATHS : p;
		size_t last = (first + n - 1) % m->cap;
		int64_t g = m->live[last][col] - m->live[first][col];
		int64_t pg = m->pages[last][col] - m->pages[first][col];
		int64_t slab_net, shown = (pg > 0 ? pg : 0) + slab_shown(m, col, first, n,
									&slab_net);
		/* neither pages nor slab objects: large kmalloc, percpu */
		int64_t rest = g - pg - slab_net;
		bool confirmed = false;

		for (size_t i = 0; i < n; i++)
			m->wy[i] = (double)m->live[(first + i) % m->cap][col];
		if (rest > 0 && truth_growth >= PS_V_CONFIRM_SHARE * (double)rest)
			shown += rest;
		confirmed = g > 0 && (double)shown >= PS_V_CONFIRM_SHARE * (double)g;
		e = ps_vstat_series(m->wt, m->wy, n, PS_V_MIN_RATE, confirmed, &m->st[p]);
		if (e)
			return e;
	}
	return 0;
}

/* A tag's series: tags with the same label and context (another kind, module) are summed. */
struct trow {
	int d, p;
	int64_t live;
	const char *ctx;
	char label[128];
};

static int cmp_key(const struct trow *x, const struct trow *y)
{
	int c;

	if (x->d != y->d)
		return x->d - y->d;
	if (x->p != y->p)
		return x->p - y->p;
	c = strcmp(x->label, y->label);
	return c ? c : strcmp(x->ctx ? x->ctx : "", y->ctx ? y->ctx : "");
}

static int cmp_trow_key(const void *a, const void *b)
{
	return cmp_key(a, b);
}

/* By path, then live bytes down; ties by name, so the page is stable. */
static int cmp_trow(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;

	if (x->d != y->d)
		return x->d - y->d;
	if (x->p != y->p)
		return x->p - y->p;
	if (x->live != y->live)
		return x->live > y->live ? -1 : 1;
	return cmp_key(x, y);
}

/* Sums the rows of one series; returns how many are left. */
static size_t merge_rows(struct trow *rows, size_t n)
{
	size_t o = 0;

	qsort(rows, n, sizeof(*rows), cmp_trow_key);
	for (size_t i = 0; i < n; i++) {
		if (o && !cmp_key(&rows[o - 1], &rows[i]))
			rows[o - 1].live += rows[i].live;
		else
			rows[o++] = rows[i];
	}
	qsort(rows, o, sizeof(*rows), cmp_trow);
	return o;
}

static const struct snap_class_ctr *cache_base;

static int cmp_cache_bytes(const void *a, const void *b)
{
	const struct snap_class_ctr *x = &cache_base[*(const size_t *)a];
	const struct snap_class_ctr *y = &cache_base[*(const size_t *)b];
	int64_t p = llabs(x->val[2] - x->val[3]), q = llabs(y->val[2] - y->val[3]);

	if (p != q)
		return p > q ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * The exact class counters: objects and bytes each cache gained since the recording started,
 * counted at every allocation and free (not sampled), for the 2 x --listen-top caches that
 * moved most; the rest summed in cache="other". The all-orders "pages" sum is left out.
 */
static void render_caches(struct rec *r, struct ps_om *om)
{
	const struct snap *s = &r->snap;
	size_t *idx = malloc((s->ncls_ctr + 1) * sizeof(*idx)), n = 0;
	int64_t rest_o = 0, rest_b = 0;

	if (!idx)
		return;
	for (size_t i = 0; i < s->ncls_ctr; i++)
		if (strcmp(s->cls_ctr[i].name, "pages"))
			idx[n++] = i;
	cache_base = s->cls_ctr;
	qsort(idx, n, sizeof(*idx), cmp_cache_bytes);
	for (int f = 0; f < 2; f++) {
		if (!f)
			ps_om_family(om, "poolscope_cache_objects", "gauge", NULL,
				     "Objects each cache gained since the recording started: every "
				     "allocation and free counted (exact, not sampled)");
		else
			ps_om_family(om, "poolscope_cache_bytes", "gauge", "bytes",
				     "Bytes each cache gained since the recording started: every "
				     "allocation and free counted (exact, not sampled)");
		for (size_t k = 0; k < n; k++) {
			const struct snap_class_ctr *c = &s->cls_ctr[idx[k]];
			int64_t v = f ? c->val[2] - c->val[3] : c->val[0] - c->val[1];

			if (k < 2 * (size_t)r->m->top)
				ps_om_sample(om, (const char *[]){ "cache", c->name, NULL }, (double)v);
			else if (f)
				rest_b += v;
			else
				rest_o += v;
		}
		if (n > 2 * (size_t)r->m->top)
			ps_om_sample(om, (const char *[]){ "cache", "other", NULL },
				     (double)(f ? rest_b : rest_o));
	}
	free(idx);
}

static void render(struct rec *r, struct ps_om *om, const struct trow *rows, size_t nrows,
		   const int64_t (*dp)[M_PATHS], const int64_t *dlive)
{
	struct rec_metrics *m = r->m;
	const struct snap *s = &r->snap;
	char num[32];
	struct ps_httpd_stats hs;
	uint64_t drops = 0;
	static const char *const ev[] = { "kmalloc", "kfree", "kmem_cache_alloc",
					  "kmem_cache_free", "mm_page_alloc", "mm_page_free",
					  "percpu_alloc_percpu", "percpu_free_percpu" };
	static const struct { int c; const char *why; } dr[] = {
		{ PS_C_DROP_CLASS_FULL, "class_map_full" }, { PS_C_DROP_TAG_FULL, "tag_map_full" },
		{ PS_C_DROP_PTR_FULL, "pointer_map_full" },
		{ PS_C_DROP_STACK_COLLISION, "stack_collision" },
		{ PS_C_DROP_STACK_ERR, "stack_error" },
		{ PS_C_DROP_STACKCNT_FULL, "stack_count_map_full" },
		{ PS_C_DROP_CACHEINFO_FULL, "cache_info_map_full" },
	};

	ps_om_family(om, "poolscope_info", "gauge", NULL,
		     "The recorder: version, run label and the site sampling rate");
	snprintf(num, sizeof(num), "%u", r->o->site_sample);
	ps_om_sample(om, (const char *[]){ "version", POOLSCOPE_VERSION, "label", r->o->label,
					   "site_sample", num, NULL }, 1);
	ps_om_family(om, "poolscope_intervals", "counter", NULL, "Intervals recorded");
	ps_om_sample(om, NULL, m->intervals);
	ps_om_family(om, "poolscope_last_interval_timestamp_seconds", "gauge", "seconds",
		     "Wall-clock time of the last interval (Unix seconds)");
	ps_om_sample(om, NULL, (double)s->wall_ns / 1e9);

	ps_om_family(om, "poolscope_domain_live_bytes", "gauge", "bytes",
		     "Tracked live bytes gained since the recording started, per memory domain");
	for (int d = 0; d < M_DOMAINS; d++)
		ps_om_sample(om, (const char *[]){ "domain", domains[d], NULL }, (double)dlive[d]);
	ps_om_family(om, "poolscope_path_live_bytes", "gauge", "bytes",
		     "Tracked live bytes gained since the recording started, per domain and path");
	for (int d = 0; d < M_DOMAINS; d++)
		for (size_t p = 0; p < m->npaths; p++)
			if (dp[d][p] || d == 0)
				ps_om_sample(om, (const char *[]){ "domain", domains[d], "path",
								   m->paths[p], NULL },
					     (double)dp[d][p]);
	ps_om_family(om, "poolscope_tag_live_bytes", "gauge", "bytes",
		     "Tracked live bytes gained since the recording started: the top tags of "
		     "each path by live bytes (ctx: the context that allocated, when the tag is "
		     "split by it), the rest of the path in tag=\"other\"");
	for (size_t i = 0; i < nrows;) {
		size_t end = i, k = 0;
		int64_t rest = 0;

		while (end < nrows && rows[end].d == rows[i].d && rows[end].p == rows[i].p)
			end++;
		for (size_t j = i; j < end; j++) {
			if (k++ < m->top && rows[j].live > 0) {
				ps_om_sample(om, (const char *[]){ "domain", domains[rows[i].d],
								   "path", m->paths[rows[i].p],
								   "tag", rows[j].label,
								   "ctx", rows[j].ctx, NULL },
					     (double)rows[j].live);
			} else {
				rest += rows[j].live;
			}
		}
		if (k > m->top || rest)
			ps_om_sample(om, (const char *[]){ "domain", domains[rows[i].d], "path",
							   m->paths[rows[i].p], "tag", "other",
							   NULL }, (double)rest);
		i = end;
	}

	render_caches(r, om);
	ps_om_family(om, "poolscope_path_state", "gauge", NULL,
		     "The verdict on the path's kernel memory over the window: 0 stable, "
		     "1 plateau, 2 growing, 3 leak");
	for (size_t p = 0; p < m->npaths; p++)
		ps_om_sample(om, (const char *[]){ "domain", PS_DOMAIN_KERNEL, "path", m->paths[p],
						   NULL }, m->st[p].state);
	ps_om_family(om, "poolscope_path_verdict_info", "gauge", NULL,
		     "The path's verdict in words: its state, and why it is not a leak");
	for (size_t p = 0; p < m->npaths; p++)
		ps_om_sample(om, (const char *[]){ "domain", PS_DOMAIN_KERNEL, "path", m->paths[p],
						   "state", ps_vstate_name(m->st[p].state),
						   "why", m->st[p].why ? m->st[p].why : "", NULL }, 1);
	ps_om_family(om, "poolscope_domain_state", "gauge", NULL,
		     "The verdict on the domain's memory over the window: 0 stable, 1 plateau, "
		     "2 growing, 3 leak");
	ps_om_sample(om, (const char *[]){ "domain", PS_DOMAIN_KERNEL, NULL },
		     m->st[m->npaths].state);
	ps_om_family(om, "poolscope_path_rate_bytes_per_second", "gauge", "bytes_per_second",
		     "Theil-Sen slope of the path's kernel live bytes over the window");
	for (size_t p = 0; p < m->npaths; p++)
		ps_om_sample(om, (const char *[]){ "domain", PS_DOMAIN_KERNEL, "path", m->paths[p],
						   NULL }, m->st[p].rate);
	ps_om_family(om, "poolscope_window_seconds", "gauge", "seconds",
		     "The span the verdict covers (grows to --listen-window)");
	ps_om_sample(om, NULL, m->n > 1 ? m->t[(m->head + m->cap - 1) % m->cap] -
					  m->t[(m->head + m->cap - m->n) % m->cap] : 0);
	ps_om_family(om, "poolscope_confirming_bytes", "gauge", "bytes",
		     "What confirms kernel growth for the verdict: SUnreclaim (/proc/meminfo) and "
		     "socket memory (/proc/net/sockstat)");
	ps_om_sample(om, (const char *[]){ "source", PS_SYS_SUNRECLAIM, NULL },
		     (double)meminfo(s, PS_SYS_SUNRECLAIM));
	ps_om_sample(om, (const char *[]){ "source", "sock", NULL },
		     (double)(meminfo(s, PS_SYS_SOCK_TCP_MEM) + meminfo(s, PS_SYS_SOCK_UDP_MEM) +
			      meminfo(s, PS_SYS_SOCK_FRAG_MEM)));

	ps_om_family(om, "poolscope_memory_total_bytes", "gauge", "bytes",
		     "MemTotal of /proc/meminfo: what the alerting rules compare growth with");
	ps_om_sample(om, NULL, (double)meminfo(s, "MemTotal"));

	ps_om_family(om, "poolscope_events", "counter", NULL,
		     "Allocator events seen by the probes, per tracepoint");
	for (size_t i = 0; i < ARRAY_SIZE(ev); i++)
		ps_om_sample(om, (const char *[]){ "event", ev[i], NULL },
			     (double)r->totals[PS_C_EV_KMALLOC + i]);
	ps_om_family(om, "poolscope_drops", "counter", NULL,
		     "Events the recorder could not count, per reason (recursion: skipped by the "
		     "kernel for BPF re-entry)");
	for (size_t i = 0; i < ARRAY_SIZE(dr); i++) {
		ps_om_sample(om, (const char *[]){ "reason", dr[i].why, NULL },
			     (double)r->totals[dr[i].c]);
		drops += r->totals[dr[i].c];
	}
	ps_om_sample(om, (const char *[]){ "reason", "recursion", NULL },
		     (double)r->recursion_misses);
	ps_om_family(om, "poolscope_recorder_cpu_seconds", "counter", "seconds",
		     "CPU time of the recorder process");
	/* a counter is never NaN: no sample when the time could not be read */
	if (s->cpu_ok)
		ps_om_sample(om, NULL, (double)s->cpu_ns / 1e9);
	ps_httpd_stats(m->httpd, &hs);
	ps_om_family(om, "poolscope_http_responses", "counter", NULL,
		     "Responses of this endpoint by status class (refused: at the connection cap)");
	ps_om_sample(om, (const char *[]){ "class", "2xx", NULL }, (double)hs.responses[2]);
	ps_om_sample(om, (const char *[]){ "class", "4xx", NULL }, (double)hs.responses[4]);
	ps_om_sample(om, (const char *[]){ "class", "5xx", NULL }, (double)hs.responses[5]);
	ps_om_sample(om, (const char *[]){ "class", "timeout", NULL }, (double)hs.timeouts);
	(void)drops;
}

int rec_metrics_update(struct rec *r)
{
	struct rec_metrics *m = r->m;
	const struct snap *s = &r->snap;
	int64_t dp[M_DOMAINS][M_PATHS] = {}, dlive[M_DOMAINS] = {};
	struct ps_om om, txt;
	struct trow *rows;
	size_t nrows = 0, k;
	int e = 0;

	m->intervals++;
	for (size_t i = 0; i < r->nutags; i++)
		if (!r->utags[i]->mattr)
			attribute(m, r->utags[i], NULL, 0);
	if (s->stacks) {
		e = attribute_stacks(r, m);
		if (e)
			return rec_fail(r, e, "metrics", NULL);
	}
	rows = calloc(r->nutags ? r->nutags : 1, sizeof(*rows));
	if (!rows)
		return rec_fail(r, -ENOMEM, "metrics", NULL);
	k = m->head;
	for (size_t i = 0; i < m->ncr; i++)
		m->cr[i].cur = 0;
	memset(m->live[k], 0, sizeof(m->live[k]));
	memset(m->pages[k], 0, sizeof(m->pages[k]));
	for (size_t i = 0; i < r->nutags; i++) {
		const struct utag *u = r->utags[i];
		int d;

		if ((u->tag.flags & PS_TAG_F_SLAB_BACKING) || !u->live_bytes || u->mpath < 0)
			continue;
		d = domain_index(&u->tag);
		dp[d][u->mpath] += u->live_bytes;
		dlive[d] += u->live_bytes;
		rows[nrows] = (struct trow){ .d = d, .p = u->mpath, .live = u->live_bytes,
					     .ctx = u->tag.ctx };
		ps_tag_label(&u->tag, rows[nrows].label, sizeof(rows[nrows].label));
		nrows++;
		if (d == 0) {
			bool page = !strcmp(u->tag.kind, PS_KIND_PAGE);

			if (!strcmp(u->tag.kind, PS_KIND_SLAB) || !strcmp(u->tag.kind, PS_KIND_KMALLOC)) {
				if (cache_add(m, u->mpath, &u->tag, u->live_bytes) ||
				    cache_add(m, M_PATHS, &u->tag, u->live_bytes)) {
					free(rows);
					return rec_fail(r, -ENOMEM, "metrics", NULL);
				}
			}

			m->live[k][u->mpath] += u->live_bytes;
			m->live[k][M_PATHS] += u->live_bytes;
			if (page) {
				m->pages[k][u->mpath] += u->live_bytes;
				m->pages[k][M_PATHS] += u->live_bytes;
			}
		}
	}
	nrows = merge_rows(rows, nrows);
	for (size_t i = 0; i < m->ncr; i++)
		m->cr[i].v[k] = m->cr[i].cur;
	slab_fill(m, s, k);
	m->t[k] = (double)s->t_ns / 1e9;
	m->truth[k] = meminfo(s, PS_SYS_SUNRECLAIM) + meminfo(s, PS_SYS_SOCK_TCP_MEM) +
		      meminfo(s, PS_SYS_SOCK_UDP_MEM) + meminfo(s, PS_SYS_SOCK_FRAG_MEM);
	m->head = (m->head + 1) % m->cap;
	if (m->n < m->cap)
		m->n++;
	e = verdicts(m);
	if (e) {
		free(rows);
		return rec_fail(r, e, "metrics", NULL);
	}
	ps_om_init(&om, true);
	ps_om_init(&txt, false);
	render(r, &om, rows, nrows, (const int64_t (*)[M_PATHS])dp, dlive);
	render(r, &txt, rows, nrows, (const int64_t (*)[M_PATHS])dp, dlive);
	free(rows);
	e = ps_om_finish(&om);
	if (!e)
		e = ps_om_finish(&txt);
	if (!e)
		e = ps_httpd_publish(m->httpd, om.buf, om.len, txt.buf, txt.len);
	ps_om_free(&om);
	ps_om_free(&txt);
	return e ? rec_fail(r, e, "metrics page", NULL) : 0;
}
