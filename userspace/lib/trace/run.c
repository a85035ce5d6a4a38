// SPDX-License-Identifier: GPL-2.0
/*
 * The in-memory run: construction (fixtures, converters), accessors and freeing. The reader
 * (reader.c) fills the same structure from a file, and ps_run_save() writes one out.
 */
#include "userspace/lib/trace/trace.h"
#include "userspace/lib/util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s, bool *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

/* Grows *arr (of *n elements of size sz) by one zeroed element; returns it or NULL. */
static void *grow(void *arrp, size_t *n, size_t sz)
{
	void **arr = arrp;
	char *p = realloc(*arr, (*n + 1) * sz);

	if (!p)
		return NULL;
	memset(p + *n * sz, 0, sz);
	*arr = p;
	return p + (*n)++ * sz;
}

struct ps_run *ps_run_new(uint32_t nintervals)
{
	struct ps_run *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->nintervals = nintervals;
	r->per_point = 1;
	r->src_intervals = nintervals;
	r->intervals = calloc(nintervals ? nintervals : 1, sizeof(*r->intervals));
	if (!r->intervals) {
		free(r);
		return NULL;
	}
	return r;
}

static void free_tag_strings(struct ps_tag *t)
{
	free((char *)t->kind);
	free((char *)t->name);
	free((char *)t->cache);
	free((char *)t->cache_alias);
	free((char *)t->site_sym);
	free((char *)t->site_module);
	free((char *)t->pool);
	free((char *)t->ctx);
	free((char *)t->comm);
	free((char *)t->owner);
	free((char *)t->domain);
}

static void free_stack(struct ps_stack *st)
{
	for (uint32_t i = 0; i < st->nframes; i++) {
		free((char *)st->frames[i].sym);
		free((char *)st->frames[i].module);
	}
	free(st->frames);
	free((char *)st->comm);
	free((char *)st->ctx);
}

static void free_src(struct ps_src *s)
{
	if (!s)
		return;
	free((char *)s->module);
	free((char *)s->sym);
	free((char *)s->file);
	free((char *)s->func);
	free((char *)s->caller);
	free((char *)s->call_file);
	free(s);
}

void ps_run_free(struct ps_run *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nmeta; i++) {
		free(r->meta[i].key);
		free(r->meta[i].value);
	}
	for (size_t i = 0; i < r->ntags; i++) {
		free_tag_strings(&r->tags[i].tag);
		free(r->tags[i].s);
	}
	for (size_t i = 0; i < r->nsys; i++) {
		free(r->sys[i].name);
		free(r->sys[i].v);
		free(r->sys[i].lo);
		free(r->sys[i].hi);
	}
	for (size_t i = 0; i < r->ncounters; i++) {
		free(r->counters[i].name);
		free(r->counters[i].v);
	}
	for (size_t i = 0; i < r->nslab; i++) {
		free(r->slab[i].cache);
		free(r->slab[i].active_objs);
		free(r->slab[i].num_objs);
	}
	for (size_t i = 0; i < r->nstacks; i++)
		free_stack(&r->stacks[i]);
	for (size_t i = 0; i < r->nsrcs; i++)
		free_src(r->srcs[i]);
	free(r->srcs);
	free(r->meta);
	free(r->tags);
	free(r->sys);
	free(r->counters);
	free(r->slab);
	free(r->stacks);
	free(r->workload);
	free(r->intervals);
	free(r->path);
	free(r);
}

struct ps_tag_series *ps_run_add_tag(struct ps_run *r, const struct ps_tag *tag)
{
	struct ps_tag_series *ts;
	bool oom = false;

	ts = grow(&r->tags, &r->ntags, sizeof(*ts));
	if (!ts)
		return NULL;
	ts->s = calloc(r->nintervals ? r->nintervals : 1, sizeof(*ts->s));
	ts->tag = *tag;
	ts->tag.site_src = NULL;	/* ps_run_link_srcs points it into this run */
	ts->tag.kind = dup_or_null(tag->kind ? tag->kind : "unknown", &oom);
	ts->tag.name = dup_or_null(tag->name, &oom);
	ts->tag.cache = dup_or_null(tag->cache, &oom);
	ts->tag.cache_alias = dup_or_null(tag->cache_alias, &oom);
	ts->tag.site_sym = dup_or_null(tag->site_sym, &oom);
	ts->tag.site_module = dup_or_null(tag->site_module, &oom);
	ts->tag.pool = dup_or_null(tag->pool, &oom);
	ts->tag.ctx = dup_or_null(tag->ctx, &oom);
	ts->tag.comm = dup_or_null(tag->comm, &oom);
	ts->tag.owner = dup_or_null(tag->owner, &oom);
	ts->tag.domain = dup_or_null(tag->domain, &oom);
	if (!ts->tag.id)
		ts->tag.id = (int64_t)r->ntags;
	if (oom || !ts->s) {
		free_tag_strings(&ts->tag);
		free(ts->s);
		r->ntags--;
		return NULL;
	}
	return ts;
}

void ps_run_finish(struct ps_run *r)
{
	for (size_t i = 0; i < r->ntags; i++) {
		struct ps_tag_series *ts = &r->tags[i];
		struct ps_sample tot = { 0 };

		for (uint32_t k = 0; k < r->nintervals; k++) {
			tot.allocs += ts->s[k].allocs;
			tot.frees += ts->s[k].frees;
			tot.alloc_bytes += ts->s[k].alloc_bytes;
			tot.free_bytes += ts->s[k].free_bytes;
		}
		if (r->nintervals) {
			tot.live_objs = ts->s[r->nintervals - 1].live_objs;
			tot.live_bytes = ts->s[r->nintervals - 1].live_bytes;
		}
		ts->total = tot;
	}
}

int ps_run_set_meta(struct ps_run *r, const char *key, const char *value)
{
	struct ps_meta_kv *kv;
	char *v;

	for (size_t i = 0; i < r->nmeta; i++) {
		if (strcmp(r->meta[i].key, key))
			continue;
		v = strdup(value ? value : "");
		if (!v)
			return -ENOMEM;
		free(r->meta[i].value);
		r->meta[i].value = v;
		return 0;
	}
	kv = grow(&r->meta, &r->nmeta, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	kv->key = strdup(key);
	kv->value = strdup(value ? value : "");
	if (!kv->key || !kv->value) {
		free(kv->key);
		free(kv->value);
		r->nmeta--;
		return -ENOMEM;
	}
	return 0;
}

const char *ps_run_meta(const struct ps_run *r, const char *key)
{
	for (size_t i = 0; i < r->nmeta; i++)
		if (!strcmp(r->meta[i].key, key))
			return r->meta[i].value;
	return NULL;
}

bool ps_run_live_absolute(const struct ps_run *r)
{
	const char *a = ps_run_meta(r, PS_META_LIVE_ABSOLUTE);

	return a && !strcmp(a, "1");
}

static struct ps_series *find_series(struct ps_series *arr, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(arr[i].name, name))
			return &arr[i];
	return NULL;
}

static struct ps_series *add_series(struct ps_run *r, struct ps_series **arr, size_t *n,
				    const char *name)
{
	struct ps_series *s = find_series(*arr, *n, name);

	if (s)
		return s;
	s = grow(arr, n, sizeof(*s));
	if (!s)
		return NULL;
	s->name = strdup(name);
	s->lo = s->hi = NULL;
	s->v = malloc((r->nintervals ? r->nintervals : 1) * sizeof(*s->v));
	if (!s->name || !s->v) {
		free(s->name);
		free(s->v);
		(*n)--;
		return NULL;
	}
	for (uint32_t k = 0; k < r->nintervals; k++)
		s->v[k] = -1;
	return s;
}

struct ps_series *ps_run_add_sys(struct ps_run *r, const char *name)
{
	return add_series(r, &r->sys, &r->nsys, name);
}

struct ps_series *ps_run_add_counter(struct ps_run *r, const char *name)
{
	return add_series(r, &r->counters, &r->ncounters, name);
}

const struct ps_series *ps_run_sys(const struct ps_run *r, const char *name)
{
	return find_series(r->sys, r->nsys, name);
}

const struct ps_series *ps_run_counter(const struct ps_run *r, const char *name)
{
	return find_series(r->counters, r->ncounters, name);
}

int64_t ps_run_counter_last(const struct ps_run *r, const char *name)
{
	const struct ps_series *s = ps_run_counter(r, name);

	if (!s)
		return 0;
	for (uint32_t k = r->nintervals; k-- > 0;)
		if (s->v[k] >= 0)
			return s->v[k];
	return 0;
}

struct ps_slab_series *ps_run_add_slab(struct ps_run *r, const char *cache, uint32_t objsize)
{
	struct ps_slab_series *s;
	size_t n = r->nintervals ? r->nintervals : 1;

	for (size_t i = 0; i < r->nslab; i++)
		if (!strcmp(r->slab[i].cache, cache))
			return &r->slab[i];
	s = grow(&r->slab, &r->nslab, sizeof(*s));
	if (!s)
		return NULL;
	s->cache = strdup(cache);
	s->objsize = objsize;
	s->active_objs = malloc(n * sizeof(int64_t));
	s->num_objs = malloc(n * sizeof(int64_t));
	if (!s->cache || !s->active_objs || !s->num_objs) {
		free(s->cache);
		free(s->active_objs);
		free(s->num_objs);
		r->nslab--;
		return NULL;
	}
	for (uint32_t k = 0; k < r->nintervals; k++)
		s->active_objs[k] = s->num_objs[k] = -1;
	return s;
}

int ps_run_enable_workload(struct ps_run *r)
{
	if (r->has_workload)
		return 0;
	r->workload = calloc(r->nintervals ? r->nintervals : 1, sizeof(*r->workload));
	if (!r->workload)
		return -ENOMEM;
	r->has_workload = true;
	return 0;
}

int ps_run_add_stack(struct ps_run *r, const struct ps_stack *st)
{
	struct ps_stack *d;
	bool oom = false;

	d = grow(&r->stacks, &r->nstacks, sizeof(*d));
	if (!d)
		return -ENOMEM;
	*d = *st;
	d->frames = NULL;
	d->nframes = 0;
	d->comm = dup_or_null(st->comm, &oom);
	d->ctx = dup_or_null(st->ctx, &oom);
	if (!d->id)
		d->id = (int64_t)r->nstacks;
	if (st->nframes) {
		d->frames = calloc(st->nframes, sizeof(*d->frames));
		if (!d->frames)
			oom = true;
		for (uint32_t i = 0; d->frames && i < st->nframes; i++) {
			d->frames[i] = st->frames[i];
			d->frames[i].src = NULL;
			d->frames[i].sym = dup_or_null(st->frames[i].sym, &oom);
			d->frames[i].module = dup_or_null(st->frames[i].module, &oom);
			d->nframes = i + 1;
		}
	}
	if (oom) {
		free_stack(d);
		r->nstacks--;
		return -ENOMEM;
	}
	return 0;
}

uint64_t ps_src_key(const char *sym, uint64_t off, char *base, size_t len)
{
	const char *plus = sym ? strchr(sym, '+') : NULL;
	size_t n = sym ? (plus ? (size_t)(plus - sym) : strlen(sym)) : 0;

	if (n >= len)
		n = len - 1;
	memcpy(base, sym ? sym : "", n);
	base[n] = 0;
	if (plus)
		off += strtoull(plus + 1, NULL, 16);
	return off;
}

static int src_cmp(const char *ma, const char *sa, uint64_t oa, const struct ps_src *b)
{
	int c = strcmp(ma, b->module);

	if (!c)
		c = strcmp(sa, b->sym);
	if (!c)
		c = oa < b->off ? -1 : oa > b->off;
	return c;
}

static int src_sort(const void *a, const void *b)
{
	const struct ps_src *x = *(const struct ps_src *const *)a;

	return src_cmp(x->module, x->sym, x->off, *(const struct ps_src *const *)b);
}

static struct ps_src *src_find(const struct ps_run *r, const char *module, const char *sym,
			       uint64_t off)
{
	char base[256];
	size_t lo = 0, hi = r->nsrcs;

	if (!sym || !r->nsrcs)
		return NULL;
	off = ps_src_key(sym, off, base, sizeof(base));
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = src_cmp(module ? module : "", base, off, r->srcs[mid]);

		if (!c)
			return r->srcs[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

int ps_run_add_src(struct ps_run *r, const struct ps_src *src)
{
	struct ps_src *d = calloc(1, sizeof(*d)), **arr;
	bool oom = !d;

	if (d) {
		d->module = dup_or_null(src->module ? src->module : "", &oom);
		d->sym = dup_or_null(src->sym ? src->sym : "", &oom);
		d->off = src->off;
		d->file = dup_or_null(src->file ? src->file : "", &oom);
		d->line = src->line;
		d->func = dup_or_null(src->func, &oom);
		d->caller = dup_or_null(src->caller, &oom);
		d->call_file = dup_or_null(src->call_file, &oom);
		d->call_line = src->call_line;
	}
	arr = oom ? NULL : realloc(r->srcs, (r->nsrcs + 1) * sizeof(*arr));
	if (!arr) {
		free_src(d);
		return -ENOMEM;
	}
	r->srcs = arr;
	r->srcs[r->nsrcs++] = d;
	return 0;
}

void ps_run_clear_srcs(struct ps_run *r)
{
	for (size_t i = 0; i < r->nsrcs; i++)
		free_src(r->srcs[i]);
	free(r->srcs);
	r->srcs = NULL;
	r->nsrcs = 0;
	ps_run_link_srcs(r);
}

void ps_run_link_srcs(struct ps_run *r)
{
	if (r->nsrcs)
		qsort(r->srcs, r->nsrcs, sizeof(*r->srcs), src_sort);
	for (size_t i = 0; i < r->ntags; i++) {
		struct ps_tag *t = &r->tags[i].tag;

		t->site_src = src_find(r, t->site_module, t->site_sym, 0);
	}
	for (size_t i = 0; i < r->nstacks; i++)
		for (uint32_t k = 0; k < r->stacks[i].nframes; k++) {
			struct ps_frame *f = &r->stacks[i].frames[k];

			f->src = src_find(r, f->module, f->sym, f->off);
		}
}

const struct ps_tag_series *ps_run_tag(const struct ps_run *r, int64_t id)
{
	/* Ids are dense from the writer (1..n): try the direct slot before searching. */
	if (id >= 1 && (size_t)id <= r->ntags && r->tags[id - 1].tag.id == id)
		return &r->tags[id - 1];
	for (size_t i = 0; i < r->ntags; i++)
		if (r->tags[i].tag.id == id)
			return &r->tags[i];
	return NULL;
}

uint32_t ps_run_interval_at(const struct ps_run *r, uint64_t t_ns)
{
	uint32_t lo = 0, hi = r->nintervals;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (r->intervals[mid].t_ns < t_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
