// SPDX-License-Identifier: GPL-2.0
/*
 * Resolve: what the snapshot's raw values mean, kept in the recorder's mirrors of the BPF keys.
 *
 * Classes: a class (slab cache, kmalloc size, page order, large kmalloc, percpu) gets its name
 * once; the exact class counters are summed by name (merged caches share one) into
 * `class.<name>.*` counters. Tags: every BPF tag key maps to a trace tag, made when the key is
 * first seen (kind, pool, flags, resolved cache name, call-site symbol); the sampled tag
 * counters become samples scaled by the sample rate (Horvitz-Thompson: every tracked object
 * stands for 2^site_bits objects). Page tags are keyed in BPF by stack id; each stack is reduced
 * to its call site and to whether the page backs a slab or a large kmalloc (stacks.c), and all
 * stacks with the same (order, site, backing, ctx) form one trace tag.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/record/rec.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/workload/loadspec.h"

/* A BPF tag key: its cumulative sampled values at the last poll, and its trace tag. */
struct btag {
	struct ps_tag_val prev;
	struct utag *u;
};

/* Page trace tags are keyed by what the stack resolves to. */
struct page_ukey {
	uint64_t order;
	uint64_t site;
	uint8_t backing;
	uint8_t ctx;
	uint8_t mt;
	uint8_t pad[5];
};

struct cls_info {
	char name[64];
	int kind;
	uint32_t flags;
};

const char *rec_ctx_name(uint8_t ctx)
{
	switch (ctx) {
	case PS_CTX_TASK: return "task";
	case PS_CTX_SOFTIRQ: return "softirq";
	case PS_CTX_HARDIRQ: return "hardirq";
	case PS_CTX_IRQ: return "irq";
	default: return NULL;
	}
}

int rec_resolve_init(struct rec *r)
{
	if (ps_htab_init(&r->btags, sizeof(struct ps_tag_key)) ||
	    ps_htab_init(&r->page_utags, sizeof(struct page_ukey)) ||
	    ps_htab_init(&r->classes, sizeof(uint64_t)))
		return -ENOMEM;
	return 0;
}

static void free_vals(struct ps_htab *h)
{
	for (size_t i = 0; i < h->cap; i++)
		if (h->used && h->used[i])
			free(h->vals[i]);
}

void rec_resolve_fini(struct rec *r)
{
	for (size_t i = 0; i < r->nutags; i++)
		free(r->utags[i]);
	free(r->utags);
	free_vals(&r->btags);
	free_vals(&r->classes);
	ps_htab_fini(&r->btags);
	ps_htab_fini(&r->page_utags);
	ps_htab_fini(&r->classes);
}

/* --- symbols --------------------------------------------------------------------------- */

static void symbolize(struct rec *r, uint64_t addr, char *sym, size_t symlen, char *mod,
		      size_t modlen, const char **func)
{
	const struct ps_ksym *k;
	uint64_t off;

	sym[0] = mod[0] = 0;
	if (func)
		*func = NULL;
	k = rec_sym(r, addr, &off);
	if (!k || off > (1u << 20))
		return;
	snprintf(sym, symlen, "%s+0x%llx", k->name, (unsigned long long)off);
	if (k->module)
		ps_strlcpy(mod, k->module, modlen);
	if (func)
		*func = k->name;
}

/* --- classes --------------------------------------------------------------------------- */

static bool is_page_class(uint64_t cls)
{
	return cls >= PS_CLASS_PAGE_BASE && cls <= PS_CLASS_PAGE_BASE + PS_MAX_ORDER;
}

/* Classes named by their number alone; the others by the cache_info map. */
static bool static_class(uint64_t cls)
{
	return cls == PS_CLASS_KMALLOC_LARGE || cls == PS_CLASS_PERCPU || is_page_class(cls) ||
	       (cls >= PS_CLASS_KMSIZE_BASE && cls < PS_CLASS_KMSIZE_END);
}

bool rec_class_known(const struct rec *r, uint64_t cls)
{
	return static_class(cls) || ps_htab_get(&r->classes, &cls);
}

/*
 * The kmalloc cache a size class stands for, named as /proc/slabinfo names it (mm/slab_common.c
 * kmalloc_info[]: sizes below 1 KiB in bytes, then in k; prefixes by kmalloc type).
 */
static void kmsize_name(uint64_t cls, char *buf, size_t len)
{
	static const char *const pre[] = { "kmalloc-", "kmalloc-cg-", "kmalloc-rcl-",
					   "dma-kmalloc-" };
	unsigned long long size = PS_KMSIZE_BYTES(cls);
	const char *p = pre[PS_KMSIZE_TYPE(cls)];

	if (size >= 1024 && !(size & 1023))
		snprintf(buf, len, "%s%lluk", p, size >> 10);
	else
		snprintf(buf, len, "%s%llu", p, size);
}

/* The name of a class; NULL while its cache_info is not visible (created concurrently). */
static struct cls_info *class_info(struct rec *r, uint64_t cls)
{
	struct cls_info *ci = ps_htab_get(&r->classes, &cls);
	const struct snap_cache *c;
	void *idx;

	if (ci)
		return ci;
	ci = calloc(1, sizeof(*ci));
	if (!ci)
		return NULL;
	if (cls == PS_CLASS_KMALLOC_LARGE) {
		strcpy(ci->name, "kmalloc-large");
	} else if (cls == PS_CLASS_PERCPU) {
		strcpy(ci->name, "percpu");
	} else if (is_page_class(cls)) {
		snprintf(ci->name, sizeof(ci->name), "page-order-%llu",
			 (unsigned long long)(cls - PS_CLASS_PAGE_BASE));
	} else if (cls >= PS_CLASS_KMSIZE_BASE && cls < PS_CLASS_KMSIZE_END) {
		kmsize_name(cls, ci->name, sizeof(ci->name));
		if (PS_KMSIZE_TYPE(cls) == PS_KMT_RECLAIM)
			ci->flags = PS_CACHE_F_RECLAIM;
	} else if ((idx = ps_htab_get(&r->snap.cache_by_cls, &cls)) &&
		   (c = &r->snap.caches[(uintptr_t)idx - 1])->ok) {
		ps_strlcpy(ci->name, (const char *)c->ci.name, sizeof(ci->name));
		ci->flags = c->ci.flags;
	} else {
		/* Try again next interval. */
		free(ci);
		return NULL;
	}
	if (ps_htab_put(&r->classes, &cls, ci)) {
		free(ci);
		return NULL;
	}
	return ci;
}

/* Classes tracked whole (every object in the pointer map): their preexisting frees are exact. */
static bool is_exact_class(const char *name)
{
	return !strcmp(name, "kmalloc-large") || !strcmp(name, "percpu");
}

/* Adds one class's values to its name's counters. */
static int class_ctr_add(struct snap *s, const char *name, const struct ps_class_val *v)
{
	size_t i;

	for (i = 0; i < s->ncls_ctr; i++)
		if (!strcmp(s->cls_ctr[i].name, name))
			break;
	if (i == s->ncls_ctr) {
		if (SNAP_PUSH(s->cls_ctr, s->ncls_ctr, s->cap_cls_ctr))
			return -ENOMEM;
		memset(&s->cls_ctr[i], 0, sizeof(s->cls_ctr[i]));
		ps_strlcpy(s->cls_ctr[i].name, name, sizeof(s->cls_ctr[i].name));
		s->ncls_ctr++;
	}
	snap_class_add(&s->cls_ctr[i].v, v);
	return 0;
}

/* The scale of a sampled page of this order (pages are sampled by bytes, poolscope_abi.h). */
static uint64_t page_scale(const struct rec *r, uint64_t order)
{
	return (uint64_t)1 << PS_PAGE_SAMPLE_BITS((uint64_t)__builtin_ctzll(r->scale), order);
}

/*
 * The exact class counters by name (duplicate cache names summed), and "pages" for all page
 * orders. The preexisting frees are sampled, so scaled (a page order by its own rate), but for
 * the classes tracked whole.
 */
static int resolve_classes(struct rec *r)
{
	struct snap *s = &r->snap;
	struct ps_class_val pages = {};
	uint64_t sc = rec_filtered(r->o) ? 1 : r->scale;
	int e = 0;

	for (size_t i = 0; i < s->nclasses && !e; i++) {
		const struct cls_info *ci = class_info(r, s->classes[i].cls);
		struct ps_class_val v = s->classes[i].v;

		if (!ci)
			continue;
		if (is_page_class(s->classes[i].cls)) {
			uint64_t ps = sc == 1 ? 1 : page_scale(r, s->classes[i].cls - PS_CLASS_PAGE_BASE);

			v.s_pre_frees *= ps;
			v.s_pre_free_bytes *= ps;
			snap_class_add(&pages, &v);
		} else if (!is_exact_class(ci->name)) {
			v.s_pre_frees *= sc;
			v.s_pre_free_bytes *= sc;
		}
		e = class_ctr_add(s, ci->name, &v);
	}
	if (e || SNAP_PUSH(s->cls_ctr, s->ncls_ctr, s->cap_cls_ctr))
		return -ENOMEM;
	memset(&s->cls_ctr[s->ncls_ctr], 0, sizeof(s->cls_ctr[0]));
	strcpy(s->cls_ctr[s->ncls_ctr].name, "pages");
	s->cls_ctr[s->ncls_ctr++].v = pages;

	for (size_t i = 0; i < s->ncls_ctr; i++) {
		struct snap_class_ctr *c = &s->cls_ctr[i];

		c->val[0] = c->v.allocs;
		c->val[1] = c->v.frees;
		c->val[2] = c->v.alloc_bytes;
		c->val[3] = c->v.free_bytes;
		c->val[4] = c->v.s_pre_frees;
		c->val[5] = c->v.s_pre_free_bytes;
	}
	return 0;
}

/* --- tags ------------------------------------------------------------------------------ */

bool rec_tag_known(const struct rec *r, const struct ps_tag_key *k)
{
	return ps_htab_get(&r->btags, k) != NULL;
}

const struct utag *rec_tag_of(const struct rec *r, const struct ps_tag_key *k)
{
	const struct btag *b = ps_htab_get(&r->btags, k);

	return b ? b->u : NULL;
}

/* A new trace tag, to be added to the trace by this interval's write. */
static struct utag *utag_new(struct rec *r)
{
	struct snap *s = &r->snap;
	struct utag *u;

	if (SNAP_PUSH(r->utags, r->nutags, r->cap_utags) ||
	    SNAP_PUSH(s->new_tags, s->nnew_tags, s->cap_new_tags))
		return NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	r->utags[r->nutags++] = u;
	s->new_tags[s->nnew_tags++] = u;
	return u;
}

/* The page tag of a key: one per (order, site, backing, ctx); *out NULL on ENOMEM. */
static struct utag *page_utag(struct rec *r, const struct snap_tag *st, uint64_t *site,
			      bool *backing, bool *made)
{
	const struct ps_tag_key *k = &st->key;
	struct page_ukey pk = { .order = k->cls - PS_CLASS_PAGE_BASE, .ctx = k->ctx, .mt = k->mt };
	struct utag *u;

	*backing = false;
	*made = false;
	if (k->site != PS_SITE_NOSTACK)
		*site = rec_page_site(r, st->frames >= 0 ? &r->snap.frames[st->frames] : NULL,
				      backing);
	else
		*site = 0;
	pk.site = *site;
	pk.backing = *backing;
	u = ps_htab_get(&r->page_utags, &pk);
	if (u)
		return u;
	u = utag_new(r);
	if (!u || ps_htab_put(&r->page_utags, &pk, u))
		return NULL;
	*made = true;
	snprintf(u->name, sizeof(u->name), "order-%llu", (unsigned long long)pk.order);
	u->tag.kind = PS_KIND_PAGE;
	u->tag.name = u->name;
	if (*backing)
		u->tag.flags |= PS_TAG_F_SLAB_BACKING;
	return u;
}

/* Kind, names, pool and flags of a new slab, kmalloc or percpu tag. */
static void describe_tag(struct rec *r, struct utag *u, const struct ps_tag_key *k,
			 const struct cls_info *ci, const char *func)
{
	switch (k->kind) {
	case PS_K_SLAB:
	case PS_K_KMALLOC:
		if (ps_slab_resolve(r->sn, ci->name, func, k->kind == PS_K_KMALLOC, u->cache,
				    sizeof(u->cache))) {
			ps_strlcpy(u->alias, ci->name, sizeof(u->alias));
			u->tag.cache_alias = u->alias;
		}
		ps_strlcpy(u->name, u->cache, sizeof(u->name));
		u->tag.kind = k->kind == PS_K_SLAB ? PS_KIND_SLAB : PS_KIND_KMALLOC;
		u->tag.name = u->name;
		u->tag.cache = u->cache;
		if (ci->flags & PS_CACHE_F_RECLAIM) {
			u->tag.pool = PS_POOL_RECLAIMABLE;
			u->tag.flags |= PS_TAG_F_RECLAIMABLE;
		} else {
			u->tag.pool = PS_POOL_UNRECLAIMABLE;
		}
		break;
	case PS_K_KMALLOC_LARGE:
		u->tag.kind = PS_KIND_KMALLOC;
		strcpy(u->name, "kmalloc-large");
		u->tag.name = u->tag.cache = u->name;
		u->tag.pool = PS_POOL_UNRECLAIMABLE;
		u->scale = 1;
		break;
	case PS_K_PERCPU:
		u->tag.kind = PS_KIND_PERCPU;
		strcpy(u->name, "percpu");
		u->tag.name = u->name;
		u->tag.pool = PS_POOL_UNRECLAIMABLE;
		u->scale = 1;
		break;
	default:
		break;
	}
}

/*
 * A page tag's domain. Pages backing slabs are the slab's (kernel, and counted there). The call
 * site says page cache or process memory through the page-cache and fault APIs; past those, the
 * mobility the allocation asked for: the kernel's own pages are unmovable or reclaimable (the
 * caller frees them under pressure), process memory is movable.
 */
static const char *page_domain(uint8_t mt, bool backing, const char *func)
{
	const char *d = backing ? NULL : ps_page_fn_domain(func);

	if (backing)
		return PS_DOMAIN_KERNEL;
	if (d)
		return d;
	switch (mt) {
	case PS_MT_MOVABLE:
		return PS_DOMAIN_USER;
	case PS_MT_RECLAIMABLE:
		return PS_DOMAIN_RECLAIMABLE;
	default:
		return PS_DOMAIN_KERNEL;
	}
}

/*
 * The trace tag of a BPF tag key seen for the first time. *out stays NULL while the key's class
 * has no name yet (the key is tried again next interval); -ENOMEM.
 */
static int make_utag(struct rec *r, const struct snap_tag *st, struct utag **out)
{
	const struct ps_tag_key *k = &st->key;
	struct cls_info *ci = NULL;
	const char *func = NULL;
	uint64_t site = k->site;
	bool backing = false;
	struct utag *u;

	*out = NULL;
	if (k->kind == PS_K_PAGE) {
		bool made;

		u = page_utag(r, st, &site, &backing, &made);
		if (!u)
			return -ENOMEM;
		if (!made) {
			*out = u;
			return 0;
		}
	} else {
		if (k->kind != PS_K_PERCPU && k->kind != PS_K_KMALLOC_LARGE) {
			ci = class_info(r, k->cls);
			if (!ci)
				return 0;
		}
		u = utag_new(r);
		if (!u)
			return -ENOMEM;
	}
	u->tag.ctx = rec_ctx_name(k->ctx);
	if (site) {
		u->tag.site = site;
		symbolize(r, site, u->site_sym, sizeof(u->site_sym), u->site_module,
			  sizeof(u->site_module), &func);
		if (u->site_sym[0])
			u->tag.site_sym = u->site_sym;
		if (u->site_module[0])
			u->tag.site_module = u->site_module;
	}
	u->scale = r->scale;
	if (k->kind == PS_K_PAGE)
		u->scale = page_scale(r, k->cls - PS_CLASS_PAGE_BASE);
	if (k->kind == PS_K_KMALLOC && r->no_kfunc)
		u->scale = 1;	/* every kmalloc object is tracked: exact counts */
	describe_tag(r, u, k, ci, func);
	if (k->kind == PS_K_PAGE)
		u->tag.domain = page_domain(k->mt, backing, func);
	else
		u->tag.domain = ps_flags_domain(u->tag.flags);
	if (k->kind == PS_K_PAGE && !strcmp(u->tag.domain, PS_DOMAIN_RECLAIMABLE)) {
		u->tag.pool = PS_POOL_RECLAIMABLE;
		u->tag.flags |= PS_TAG_F_RECLAIMABLE;
	}
	if (rec_filtered(r->o)) {
		u->scale = 1;
		u->tag.comm = r->o->comm;
	}
	if (u->scale > 1)
		u->tag.flags |= PS_TAG_F_SAMPLED;
	*out = u;
	return 0;
}

/* Maps every key to its trace tag and adds what the key did since the last poll to it. */
static int resolve_tags(struct rec *r)
{
	struct snap *s = &r->snap;

	for (size_t i = 0; i < s->ntags; i++) {
		const struct snap_tag *st = &s->tags[i];
		const struct ps_tag_val *sum = &st->sum;
		struct btag *b = ps_htab_get(&r->btags, &st->key);
		int e;

		if (!b) {
			b = calloc(1, sizeof(*b));
			if (!b)
				return -ENOMEM;
			e = make_utag(r, st, &b->u);
			if (e || !b->u) {
				free(b);
				if (e)
					return e;
				continue;	/* class name not visible yet */
			}
			if (ps_htab_put(&r->btags, &st->key, b)) {
				free(b);
				return -ENOMEM;
			}
		}
		if (sum->allocs != b->prev.allocs || sum->frees != b->prev.frees) {
			struct utag *u = b->u;

			u->d_allocs += sum->allocs - b->prev.allocs;
			u->d_frees += sum->frees - b->prev.frees;
			u->d_abytes += sum->alloc_bytes - b->prev.alloc_bytes;
			u->d_fbytes += sum->free_bytes - b->prev.free_bytes;
			u->dirty = true;
			b->prev = *sum;
		}
	}
	return 0;
}

/*
 * A sample for every tag that changed, scaled, with its live counts since the start; the live
 * total and the tag that gained most for the status line (chosen on live bytes before this
 * interval's deltas).
 */
static int resolve_samples(struct rec *r)
{
	struct snap *s = &r->snap;
	const struct utag *top = NULL;
	int64_t total = 0;

	for (size_t i = 0; i < r->nutags; i++) {
		struct utag *u = r->utags[i];
		struct ps_sample *sm;

		if (!(u->tag.flags & PS_TAG_F_SLAB_BACKING) && u->live_bytes > 0 &&
		    (!top || u->live_bytes > top->live_bytes))
			top = u;
		if (!u->dirty) {
			if (!(u->tag.flags & PS_TAG_F_SLAB_BACKING))
				total += u->live_bytes;
			continue;
		}
		if (SNAP_PUSH(s->samples, s->nsamples, s->cap_samples))
			return -ENOMEM;
		s->samples[s->nsamples].u = u;
		sm = &s->samples[s->nsamples++].s;
		sm->allocs = u->d_allocs * u->scale;
		sm->frees = u->d_frees * u->scale;
		sm->alloc_bytes = u->d_abytes * u->scale;
		sm->free_bytes = u->d_fbytes * u->scale;
		u->live_objs += ((int64_t)u->d_allocs - (int64_t)u->d_frees) * (int64_t)u->scale;
		u->live_bytes += ((int64_t)u->d_abytes - (int64_t)u->d_fbytes) * (int64_t)u->scale;
		sm->live_objs = u->live_objs;
		sm->live_bytes = u->live_bytes;
		if (!(u->tag.flags & PS_TAG_F_SLAB_BACKING))
			total += u->live_bytes;
		u->d_allocs = u->d_frees = u->d_abytes = u->d_fbytes = 0;
		u->dirty = false;
	}
	r->live_total = total;
	r->top = top;
	return 0;
}

/* --- counters and workload ------------------------------------------------------------- */

static void resolve_counters(struct rec *r)
{
	struct snap *s = &r->snap;
	uint64_t sc = rec_filtered(r->o) ? 1 : r->scale;

	for (uint32_t i = 0; i < PS_C_MAX; i++)
		if (s->ctr_ok[i])
			r->totals[i] = s->ctr[i];
	/* Scaled estimates of the corrections (raw sampled counts are stored as they are). */
	s->implicit_frees = r->totals[PS_C_IMPLICIT_FREES] * sc;
	s->preexisting_frees = r->totals[PS_C_PREEXISTING_FREES];
	if (sc == 1)
		return;
	/* unfiltered, every preexisting free is in a class, scaled by its own rate there */
	s->preexisting_frees = 0;
	for (size_t i = 0; i < s->ncls_ctr; i++)
		if (strcmp(s->cls_ctr[i].name, "pages"))
			s->preexisting_frees += s->cls_ctr[i].val[4];
}

/* The interval's IOs and latency percentiles from the workload's cumulative counters. */
static void resolve_workload(struct rec *r)
{
	struct snap *s = &r->snap;
	const struct ps_workload_shm *cur = &s->wl;
	struct ps_workload *w = &s->w;
	uint64_t d[PS_LAT_BUCKETS], n = 0;

	if (!s->wl_ok || cur->magic != PS_WORKLOAD_SHM_MAGIC ||
	    cur->version != PS_WORKLOAD_SHM_VERSION)
		return;
	memset(w, 0, sizeof(*w));
	w->ios = cur->ios - r->wl_prev.ios;
	w->bytes = cur->bytes - r->wl_prev.bytes;
	w->errors = cur->errors - r->wl_prev.errors;
	w->inflight = (uint32_t)cur->inflight;
	for (unsigned b = 0; b < PS_LAT_BUCKETS; b++) {
		d[b] = cur->lat_hist[b] - r->wl_prev.lat_hist[b];
		n += d[b];
	}
	if (n) {
		/* the same percentiles as load prints, capped by the run's largest latency */
		w->lat_p50_ns = ps_lat_hist_percentile(d, PS_LAT_BUCKETS, 0.50, cur->lat_max_ns);
		w->lat_p99_ns = ps_lat_hist_percentile(d, PS_LAT_BUCKETS, 0.99, cur->lat_max_ns);
		w->lat_max_ns = ps_lat_hist_percentile(d, PS_LAT_BUCKETS, 1.0, cur->lat_max_ns);
	}
	r->wl_prev = *cur;
	s->has_w = true;
}

int rec_resolve(struct rec *r)
{
	struct snap *s = &r->snap;
	int e = 0;

	if (s->bpf) {
		e = resolve_tags(r);
		if (!e)
			e = resolve_samples(r);
		if (!e)
			e = resolve_classes(r);
		if (e)
			return rec_fail(r, e, "memory", NULL);
		resolve_counters(r);
		if (s->stacks)
			rec_resolve_stacks(r);
	}
	r->recursion_misses = 0;
	for (size_t i = 0; i < s->nprogs; i++)
		r->recursion_misses += s->progs[i].recursion_misses;
	resolve_workload(r);
	return 0;
}
