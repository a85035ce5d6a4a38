// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope record, the libbpf side: load and attach bpf/kmem.bpf.c, poll its maps once per
 * interval and write one trace interval per poll. See recorder.h and docs/record.md.
 *
 * Per interval: the exact class counters (per slab cache / page order / large kmalloc /
 * percpu) become `class.<name>.*` counters; the sampled tag counters become tag samples scaled
 * by the sample rate (Horvitz-Thompson: every tracked object stands for 2^site_bits objects);
 * /proc/meminfo and /proc/slabinfo are sampled beside them; every loss counter is stored.
 * Page tags are keyed in BPF by stack id; here each stack is reduced to its call site (first
 * frame outside the page and slab allocators) and to whether the page backs a slab or a large
 * kmalloc, and all stacks with the same (order, site, backing, ctx) form one trace tag.
 */
#include "userspace/record/recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "userspace/lib/util/util.h"
#include "userspace/lib/util/version.h"
#include "userspace/lib/workload/loadspec.h"
#include "userspace/lib/workload/workload_shm.h"
#include "userspace/lib/trace/trace.h"
#include "bpf/poolscope_abi.h"
#include "kmem.skel.h"
#include "kmem_empty.skel.h"
#include "userspace/lib/kmem/htab.h"
#include "userspace/lib/kmem/kallsyms.h"
#include "userspace/lib/kmem/procstat.h"
#include "userspace/lib/kmem/slabnames.h"

static volatile sig_atomic_t stop_requested;
static int wake_pipe[2] = { -1, -1 };

void ps_record_stop(void)
{
	int saved = errno;

	stop_requested = 1;
	if (wake_pipe[1] >= 0)
		(void)!write(wake_pipe[1], "x", 1);
	errno = saved;
}

static const char *const counter_names[PS_C_MAX] = {
	[PS_C_EV_KMALLOC] = "events.kmalloc",
	[PS_C_EV_KFREE] = "events.kfree",
	[PS_C_EV_CACHE_ALLOC] = "events.kmem_cache_alloc",
	[PS_C_EV_CACHE_FREE] = "events.kmem_cache_free",
	[PS_C_EV_PAGE_ALLOC] = "events.mm_page_alloc",
	[PS_C_EV_PAGE_FREE] = "events.mm_page_free",
	[PS_C_EV_PERCPU_ALLOC] = "events.percpu_alloc_percpu",
	[PS_C_EV_PERCPU_FREE] = "events.percpu_free_percpu",
	[PS_C_KFREE_NULL] = "kfree_null",
	[PS_C_FILTERED] = "filtered_allocs",
	[PS_C_SAMPLED_ALLOCS] = "sampled.allocs",
	[PS_C_SAMPLED_FREES] = "sampled.frees",
	[PS_C_IMPLICIT_FREES] = "sampled.implicit_frees",
	[PS_C_PREEXISTING_FREES] = "sampled.preexisting_frees",
	[PS_C_DROP_CLASS_FULL] = "drops.class_map_full",
	[PS_C_DROP_TAG_FULL] = "drops.tag_map_full",
	[PS_C_DROP_PTR_FULL] = "drops.ptr_map_full",
	[PS_C_DROP_STACK_COLLISION] = "drops.stack_collision",
	[PS_C_DROP_STACK_ERR] = "drops.stack_error",
	[PS_C_DROP_STACKCNT_FULL] = "drops.stack_count_map_full",
	[PS_C_DROP_CACHEINFO_FULL] = "drops.cache_info_map_full",
	[PS_C_NO_KMEM_CACHE] = "kfree_untracked_nonslab",
	[PS_C_STACKS_TAKEN] = "stacks_taken",
	[PS_C_SELF_SKIPPED] = "self_skipped",
};

/* Tracepoints and their programs; a tracepoint missing from this kernel's BTF disables one. */
struct prog_desc {
	const char *tp;
	bool required;
};
static const struct prog_desc progs[] = {
	{ "kmem_cache_alloc", true }, { "kmem_cache_free", true }, { "kmalloc", true },
	{ "kfree", true }, { "mm_page_alloc", false }, { "mm_page_free", false },
	{ "percpu_alloc_percpu", false }, { "percpu_free_percpu", false },
};

/* A trace tag, and what the BPF keys mapped to it did in the current interval. */
struct utag {
	struct ps_tag tag;
	char name[96], cache[96], alias[64], site_sym[160], site_module[64];
	uint64_t d_allocs, d_frees, d_abytes, d_fbytes;
	int64_t live_objs, live_bytes;	/* scaled, since start */
	bool dirty;
	uint64_t scale;
};

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
	uint8_t pad[6];
};

struct cls_info {
	char name[64];
	int kind;
	uint32_t flags;
};

struct rec {
	const struct ps_record_opts *o;
	struct kmem_bpf *skel;
	struct kmem_empty_bpf *empty;
	struct ps_trace *t;
	struct ps_kallsyms *ks;
	struct ps_slabnames *sn;
	int ncpus;
	uint64_t scale;
	struct ps_htab btags;		/* ps_tag_key -> btag */
	struct ps_htab page_utags;	/* page_ukey -> utag */
	struct ps_htab classes;		/* cls -> cls_info */
	struct utag **utags;
	size_t nutags, cap_utags;
	void *valbuf;
	uint64_t totals[PS_C_MAX];
	/* status */
	int64_t live_total;
	const struct utag *top;		/* most live bytes gained since start (no slab backing) */
	uint64_t events_prev;
	/* workload */
	struct ps_workload_shm *wl;
	char wl_path[64];
	struct ps_workload_shm wl_prev;
	bool disabled[ARRAY_SIZE(progs)];
	uint64_t recursion_misses;	/* summed over the programs, at the last interval */
	bool no_kfunc;			/* kmalloc classes by size, all kmalloc objects tracked */
	uint32_t map_ptrs;		/* effective size of the pointer map */
	struct ps_meminfo_tab meminfo;
	struct ps_slabinfo_tab slabinfo;
	char *err;
	size_t errlen;
};

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static const char *ctx_name(uint8_t ctx)
{
	switch (ctx) {
	case PS_CTX_TASK: return "task";
	case PS_CTX_SOFTIRQ: return "softirq";
	case PS_CTX_HARDIRQ: return "hardirq";
	case PS_CTX_IRQ: return "irq";
	default: return NULL;
	}
}

static int fail(struct rec *r, int e, const char *what, const char *arg)
{
	snprintf(r->err, r->errlen, "%s%s%s: %s", what, arg ? " " : "", arg ? arg : "",
		 ps_strerror(e));
	return e;
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
	k = ps_kallsyms_find(r->ks, addr, &off);
	if (!k || off > (1u << 20))
		return;
	snprintf(sym, symlen, "%s+0x%llx", k->name, (unsigned long long)off);
	if (k->module)
		ps_strlcpy(mod, k->module, modlen);
	if (func)
		*func = k->name;
}

static bool has_prefix(const char *s, const char *const *pre, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(s, pre[i], strlen(pre[i])))
			return true;
	return false;
}

/* Frames that belong to the page allocator itself (or the tracing machinery). */
static const char *const page_alloc_fns[] = {
	"__alloc_pages", "alloc_pages", "__alloc_frozen_pages", "alloc_frozen_pages",
	"__folio_alloc", "folio_alloc", "get_page_from_freelist", "__get_free_pages",
	"get_zeroed_page", "vma_alloc_folio", "__rmqueue", "rmqueue", "prep_new_page",
	"post_alloc_hook", "bpf_", "__bpf_trace", "trace_", "__traceiter", "__alloc_pages_bulk",
	"alloc_pages_bulk", "__page_frag_alloc", "page_frag_alloc", "__page_frag_cache_refill",
	"alloc_slab_obj_exts", "skb_page_frag_refill", "sk_page_frag_refill",
};
/* Frames that mean the page backs a slab or a large kmalloc (counted by the slab side). */
static const char *const slab_backing_fns[] = {
	"allocate_slab", "new_slab", "alloc_slab_page", "___kmalloc_large_node",
	"__kmalloc_large", "kmalloc_large",
};
/* Slab allocator frames skipped to find the site of a slab-backing page. */
static const char *const slab_fns[] = {
	"___slab_alloc", "__slab_alloc", "slab_alloc", "kmem_cache_alloc", "__kmalloc",
	"kmalloc_", "__do_kmalloc", "refill_sheaf", "__pcs_replace", "alloc_from_pcs",
	"__kmem_cache_alloc", "kmem_cache_alloc_bulk", "__kmem_cache_alloc_bulk", "alloc_full_sheaf",
	"barn_", "__refill", "refill_objects",
};

/*
 * Sites that put a page into the page cache (file data, reclaimable: counted in "Cached", not
 * in SUnreclaim). The report flags such tags instead of ranking them as leaks.
 */
static const char *const page_cache_fns[] = {
	"filemap_", "__filemap_", "page_cache_", "do_read_cache_", "read_cache_",
	"grab_cache_page",
};

/* Reads a stack from the BPF stack map; returns the frame count. */
static int read_stack(struct rec *r, int32_t id, uint64_t *ips)
{
	int n = 0;

	memset(ips, 0, PS_MAX_STACK_DEPTH * sizeof(*ips));
	if (id < 0 || bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.stacks), &id, ips))
		return 0;
	while (n < PS_MAX_STACK_DEPTH && ips[n])
		n++;
	return n;
}

/* The call site of a page stack and whether it is a slab/large-kmalloc backing page. */
static uint64_t page_site(struct rec *r, int32_t stackid, bool *backing)
{
	uint64_t ips[PS_MAX_STACK_DEPTH];
	int n = read_stack(r, stackid, ips);

	*backing = false;
	for (int i = 0; i < n; i++) {
		const struct ps_ksym *k = ps_kallsyms_find(r->ks, ips[i], NULL);

		if (!k)
			return ips[i];
		if (has_prefix(k->name, slab_backing_fns, ARRAY_SIZE(slab_backing_fns))) {
			*backing = true;
			continue;
		}
		if (has_prefix(k->name, page_alloc_fns, ARRAY_SIZE(page_alloc_fns)))
			continue;
		if (*backing && has_prefix(k->name, slab_fns, ARRAY_SIZE(slab_fns)))
			continue;
		return ips[i];
	}
	return 0;
}

/* --- classes --------------------------------------------------------------------------- */

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

static struct cls_info *class_info(struct rec *r, uint64_t cls)
{
	struct cls_info *ci = ps_htab_get(&r->classes, &cls);
	struct ps_cache_info kci;

	if (ci)
		return ci;
	ci = calloc(1, sizeof(*ci));
	if (!ci)
		return NULL;
	if (cls == PS_CLASS_KMALLOC_LARGE) {
		strcpy(ci->name, "kmalloc-large");
	} else if (cls == PS_CLASS_PERCPU) {
		strcpy(ci->name, "percpu");
	} else if (cls >= PS_CLASS_PAGE_BASE && cls <= PS_CLASS_PAGE_BASE + PS_MAX_ORDER) {
		snprintf(ci->name, sizeof(ci->name), "page-order-%llu",
			 (unsigned long long)(cls - PS_CLASS_PAGE_BASE));
	} else if (cls >= PS_CLASS_KMSIZE_BASE && cls < PS_CLASS_KMSIZE_END) {
		kmsize_name(cls, ci->name, sizeof(ci->name));
		if (PS_KMSIZE_TYPE(cls) == PS_KMT_RECLAIM)
			ci->flags = PS_CACHE_F_RECLAIM;
	} else if (!bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.cache_info), &cls, &kci)) {
		kci.name[sizeof(kci.name) - 1] = 0;
		ps_strlcpy(ci->name, (char *)kci.name, sizeof(ci->name));
		ci->flags = kci.flags;
	} else {
		/* Not yet visible (created concurrently): try again next interval. */
		free(ci);
		return NULL;
	}
	if (ps_htab_put(&r->classes, &cls, ci)) {
		free(ci);
		return NULL;
	}
	return ci;
}

/* Per-name accumulation of the exact class counters (duplicate cache names are summed). */
struct name_acc {
	char name[64];
	struct ps_class_val v;
};

static void class_add(struct ps_class_val *d, const struct ps_class_val *v)
{
	d->allocs += v->allocs;
	d->frees += v->frees;
	d->alloc_bytes += v->alloc_bytes;
	d->free_bytes += v->free_bytes;
	d->s_pre_frees += v->s_pre_frees;
	d->s_pre_free_bytes += v->s_pre_free_bytes;
}

/* Adds one class's values to its name's accumulator (and to the page total). */
static int acc_class(struct rec *r, uint64_t cls, const struct ps_class_val *v,
		     struct name_acc **accp, size_t *nacc, size_t *cap, struct ps_class_val *pages)
{
	struct cls_info *ci = class_info(r, cls);
	struct name_acc *acc = *accp;
	size_t i;

	if (!ci)
		return 0;
	if (cls >= PS_CLASS_PAGE_BASE && cls <= PS_CLASS_PAGE_BASE + PS_MAX_ORDER)
		class_add(pages, v);
	for (i = 0; i < *nacc; i++)
		if (!strcmp(acc[i].name, ci->name))
			break;
	if (i == *nacc) {
		if (*nacc + 1 >= *cap) {
			size_t nc = *cap ? *cap * 2 : 512;
			struct name_acc *na = realloc(acc, nc * sizeof(*na));

			if (!na)
				return -ENOMEM;
			*accp = acc = na;
			*cap = nc;
		}
		memset(&acc[i], 0, sizeof(acc[i]));
		ps_strlcpy(acc[i].name, ci->name, sizeof(acc[i].name));
		(*nacc)++;
	}
	class_add(&acc[i].v, v);
	return 0;
}

static int write_classes(struct rec *r)
{
	int fd = bpf_map__fd(r->skel->maps.classes);
	int sfd = bpf_map__fd(r->skel->maps.class_slots);
	struct ps_class_val *vals = r->valbuf;
	struct ps_class_slot *slots = r->valbuf;
	struct name_acc *acc = NULL;
	size_t nacc = 0, cap = 0;
	uint64_t key, next, *prev = NULL;
	struct ps_class_val pages = {};
	int e = 0;

	for (uint32_t idx = 0; idx < r->o->map_class_slots && !e; idx++) {
		if (bpf_map_lookup_elem(sfd, &idx, slots))
			continue;
		for (int c = 0; c < r->ncpus && !e; c++)
			if (slots[c].cls)
				e = acc_class(r, slots[c].cls, &slots[c].v, &acc, &nacc, &cap, &pages);
	}
	while (!e && !bpf_map_get_next_key(fd, prev, &next)) {
		struct ps_class_val sum = {};

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, vals))
			continue;
		for (int c = 0; c < r->ncpus; c++)
			class_add(&sum, &vals[c]);
		e = acc_class(r, key, &sum, &acc, &nacc, &cap, &pages);
	}
	if (e || (nacc + 1 >= cap && !(acc = realloc(acc, (nacc + 2) * sizeof(*acc))))) {
		free(acc);
		return e ? e : -ENOMEM;
	}
	memset(&acc[nacc], 0, sizeof(acc[nacc]));
	strcpy(acc[nacc].name, "pages");
	acc[nacc].v = pages;
	nacc++;

	for (size_t i = 0; i < nacc && !e; i++) {
		static const char *const fld[] = {
			PS_CTR_CLASS_ALLOCS, PS_CTR_CLASS_FREES, PS_CTR_CLASS_ALLOC_BYTES,
			PS_CTR_CLASS_FREE_BYTES, PS_CTR_CLASS_PRE_FREES, PS_CTR_CLASS_PRE_FREE_BYTES };
		int64_t v[6];
		char name[128];
		uint64_t sc = r->o->comm || r->o->pid || r->o->cgroup ? 1 : r->scale;
		bool exact = !strcmp(acc[i].name, "kmalloc-large") || !strcmp(acc[i].name, "percpu");

		v[0] = acc[i].v.allocs;
		v[1] = acc[i].v.frees;
		v[2] = acc[i].v.alloc_bytes;
		v[3] = acc[i].v.free_bytes;
		v[4] = acc[i].v.s_pre_frees * (exact ? 1 : sc);
		v[5] = acc[i].v.s_pre_free_bytes * (exact ? 1 : sc);
		for (int f = 0; f < 6 && !e; f++) {
			snprintf(name, sizeof(name), PS_CTR_CLASS_FMT, acc[i].name, fld[f]);
			e = ps_trace_add_counter(r->t, name, v[f]);
		}
	}
	free(acc);
	return e;
}

/* --- tags ------------------------------------------------------------------------------ */

static struct utag *utag_new(struct rec *r)
{
	struct utag *u;

	if (r->nutags == r->cap_utags) {
		size_t nc = r->cap_utags ? r->cap_utags * 2 : 1024;
		struct utag **nu = realloc(r->utags, nc * sizeof(*nu));

		if (!nu)
			return NULL;
		r->utags = nu;
		r->cap_utags = nc;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	r->utags[r->nutags++] = u;
	return u;
}

static struct utag *make_utag(struct rec *r, const struct ps_tag_key *k)
{
	bool filtered = r->o->comm || r->o->pid || r->o->cgroup;
	struct utag *u;
	struct cls_info *ci = NULL;
	const char *func = NULL;
	uint64_t site = k->site;
	bool backing = false;
	int e;

	if (k->kind == PS_K_PAGE) {
		struct page_ukey pk = { .order = k->cls - PS_CLASS_PAGE_BASE, .ctx = k->ctx };

		if (k->site != PS_SITE_NOSTACK)
			site = page_site(r, (int32_t)(k->site - 1), &backing);
		else
			site = 0;
		pk.site = site;
		pk.backing = backing;
		u = ps_htab_get(&r->page_utags, &pk);
		if (u)
			return u;
		u = utag_new(r);
		if (!u || ps_htab_put(&r->page_utags, &pk, u))
			return NULL;
		snprintf(u->name, sizeof(u->name), "order-%llu", (unsigned long long)pk.order);
		u->tag.kind = PS_KIND_PAGE;
		u->tag.name = u->name;
		if (backing)
			u->tag.flags |= PS_TAG_F_SLAB_BACKING;
	} else {
		if (k->kind != PS_K_PERCPU && k->kind != PS_K_KMALLOC_LARGE) {
			ci = class_info(r, k->cls);
			if (!ci)
				return NULL;
		}
		u = utag_new(r);
		if (!u)
			return NULL;
	}
	u->tag.ctx = ctx_name(k->ctx);
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
	if (k->kind == PS_K_KMALLOC && r->no_kfunc)
		u->scale = 1;	/* every kmalloc object is tracked: exact counts */
	if (k->kind == PS_K_PAGE && !backing && func &&
	    has_prefix(func, page_cache_fns, ARRAY_SIZE(page_cache_fns))) {
		u->tag.pool = PS_POOL_RECLAIMABLE;
		u->tag.flags |= PS_TAG_F_RECLAIMABLE;
	}
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
	if (filtered) {
		u->scale = 1;
		u->tag.comm = r->o->comm;
	}
	if (u->scale > 1)
		u->tag.flags |= PS_TAG_F_SAMPLED;
	e = ps_trace_add_tag(r->t, &u->tag);
	if (e) {
		snprintf(r->err, r->errlen, "%s: %s", r->o->out, ps_trace_errmsg(r->t));
		return NULL;
	}
	return u;
}

static int poll_tags(struct rec *r)
{
	int fd = bpf_map__fd(r->skel->maps.tags);
	struct ps_tag_val *vals = r->valbuf;
	struct ps_tag_key key, next, *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct ps_tag_val sum = {};
		struct btag *b;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, vals))
			continue;
		for (int c = 0; c < r->ncpus; c++) {
			sum.allocs += vals[c].allocs;
			sum.frees += vals[c].frees;
			sum.alloc_bytes += vals[c].alloc_bytes;
			sum.free_bytes += vals[c].free_bytes;
			sum.implicit_frees += vals[c].implicit_frees;
		}
		b = ps_htab_get(&r->btags, &key);
		if (!b) {
			b = calloc(1, sizeof(*b));
			if (!b)
				return -ENOMEM;
			b->u = make_utag(r, &key);
			if (!b->u) {
				free(b);
				if (r->err[0])
					return -EIO;
				continue;	/* class name not visible yet */
			}
			if (ps_htab_put(&r->btags, &key, b))
				return -ENOMEM;
		}
		if (sum.allocs != b->prev.allocs || sum.frees != b->prev.frees) {
			struct utag *u = b->u;

			u->d_allocs += sum.allocs - b->prev.allocs;
			u->d_frees += sum.frees - b->prev.frees;
			u->d_abytes += sum.alloc_bytes - b->prev.alloc_bytes;
			u->d_fbytes += sum.free_bytes - b->prev.free_bytes;
			u->dirty = true;
			b->prev = sum;
		}
	}
	return 0;
}

static int write_samples(struct rec *r)
{
	const struct utag *top = NULL;
	int64_t total = 0;

	for (size_t i = 0; i < r->nutags; i++) {
		struct utag *u = r->utags[i];
		struct ps_sample s;
		int e;

		if (!(u->tag.flags & PS_TAG_F_SLAB_BACKING) && u->live_bytes > 0 &&
		    (!top || u->live_bytes > top->live_bytes))
			top = u;
		if (!u->dirty) {
			if (!(u->tag.flags & PS_TAG_F_SLAB_BACKING))
				total += u->live_bytes;
			continue;
		}
		s.allocs = u->d_allocs * u->scale;
		s.frees = u->d_frees * u->scale;
		s.alloc_bytes = u->d_abytes * u->scale;
		s.free_bytes = u->d_fbytes * u->scale;
		u->live_objs += ((int64_t)u->d_allocs - (int64_t)u->d_frees) * (int64_t)u->scale;
		u->live_bytes += ((int64_t)u->d_abytes - (int64_t)u->d_fbytes) * (int64_t)u->scale;
		s.live_objs = u->live_objs;
		s.live_bytes = u->live_bytes;
		if (!(u->tag.flags & PS_TAG_F_SLAB_BACKING))
			total += u->live_bytes;
		e = ps_trace_add_sample(r->t, u->tag.id, &s);
		if (e) {
			snprintf(r->err, r->errlen, "%s: %s", r->o->out, ps_trace_errmsg(r->t));
			return e;
		}
		u->d_allocs = u->d_frees = u->d_abytes = u->d_fbytes = 0;
		u->dirty = false;
	}
	r->live_total = total;
	r->top = top;
	return 0;
}

/* --- stacks ---------------------------------------------------------------------------- */

static int write_stacks(struct rec *r)
{
	int fd = bpf_map__fd(r->skel->maps.stack_counts);
	struct ps_stack_key key, next, *prev = NULL;
	uint64_t rate = (uint64_t)r->scale * (r->o->stack_sample ? r->o->stack_sample : 1);

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct ps_stack_val sv;
		struct ps_frame frames[PS_MAX_STACK_DEPTH];
		char syms[PS_MAX_STACK_DEPTH][160], mods[PS_MAX_STACK_DEPTH][64];
		uint64_t ips[PS_MAX_STACK_DEPTH];
		struct ps_stack st = {};
		struct btag *b;
		char comm[17];
		int n, e;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &sv))
			continue;
		b = ps_htab_get(&r->btags, &key.tag);
		if (!b)
			continue;
		n = read_stack(r, key.stackid, ips);
		if (!n)
			continue;
		for (int i = 0; i < n; i++) {
			const struct ps_ksym *k;
			uint64_t off;

			frames[i].addr = ips[i];
			frames[i].sym = NULL;
			frames[i].module = NULL;
			frames[i].off = 0;
			k = ps_kallsyms_find(r->ks, ips[i], &off);
			if (k && off < (1u << 20)) {
				ps_strlcpy(syms[i], k->name, sizeof(syms[i]));
				frames[i].sym = syms[i];
				frames[i].off = off;
				if (k->module) {
					ps_strlcpy(mods[i], k->module, sizeof(mods[i]));
					frames[i].module = mods[i];
				}
			}
		}
		memcpy(comm, sv.comm, 16);
		comm[16] = 0;
		st.tag_id = b->u->tag.id;
		st.hash = ps_hash_bytes(ips, n * sizeof(ips[0]));
		st.allocs = sv.allocs;
		st.bytes = sv.bytes;
		st.live_bytes = sv.live_bytes * (int64_t)(b->u->scale > 1 ? rate :
				(r->o->stack_sample ? r->o->stack_sample : 1));
		st.comm = comm;
		st.ctx = ctx_name(sv.ctx);
		st.nframes = n;
		st.frames = frames;
		e = ps_trace_put_stack(r->t, &st);
		if (e) {
			snprintf(r->err, r->errlen, "%s: %s", r->o->out, ps_trace_errmsg(r->t));
			return e;
		}
	}
	return 0;
}

/* --- counters -------------------------------------------------------------------------- */

static int write_counters(struct rec *r)
{
	int fd = bpf_map__fd(r->skel->maps.counters);
	uint64_t *vals = r->valbuf;
	bool filtered = r->o->comm || r->o->pid || r->o->cgroup;
	uint64_t sc = filtered ? 1 : r->scale;
	int e = 0;

	for (uint32_t i = 0; i < PS_C_MAX; i++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (int c = 0; c < r->ncpus; c++)
			sum += vals[c];
		r->totals[i] = sum;
		if (counter_names[i])
			e = ps_trace_add_counter(r->t, counter_names[i], sum);
		if (e)
			return e;
	}
	/* Scaled estimates of the corrections (raw sampled counts are stored above). */
	e = ps_trace_add_counter(r->t, PS_CTR_IMPLICIT_FREES, r->totals[PS_C_IMPLICIT_FREES] * sc);
	if (!e)
		e = ps_trace_add_counter(r->t, PS_CTR_PREEXISTING_FREES,
					 r->totals[PS_C_PREEXISTING_FREES] * sc);
	return e;
}

/*
 * Per program: recursion misses (events lost to re-entry on a CPU) and, while
 * kernel.bpf_stats_enabled=1, run count and run time; then the recorder's own CPU time. Also
 * for the empty benchmark probes, whose run time is the floor the recorder's is compared with.
 */
static int write_prog_stats(struct rec *r, struct bpf_object *obj)
{
	int e = 0;

	r->recursion_misses = 0;
	for (struct bpf_program *p = bpf_object__next_program(obj, NULL); p && !e;
	     p = bpf_object__next_program(obj, p)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		char name[96];

		if (bpf_program__fd(p) < 0 || bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
			continue;
		snprintf(name, sizeof(name), PS_CTR_RECURSION_FMT, bpf_program__name(p));
		e = ps_trace_add_counter(r->t, name, info.recursion_misses);
		r->recursion_misses += info.recursion_misses;
		/* Only counted while kernel.bpf_stats_enabled=1 (it costs two clock reads a run). */
		if (!e && info.run_cnt) {
			snprintf(name, sizeof(name), PS_CTR_BPF_RUN_NS_FMT, bpf_program__name(p));
			e = ps_trace_add_counter(r->t, name, (int64_t)info.run_time_ns);
			snprintf(name, sizeof(name), PS_CTR_BPF_RUNS_FMT, bpf_program__name(p));
			if (!e)
				e = ps_trace_add_counter(r->t, name, (int64_t)info.run_cnt);
		}
	}
	/* The recorder's own CPU time (user + system), so a trace says what recording cost. */
	if (!e) {
		struct rusage ru;

		if (!getrusage(RUSAGE_SELF, &ru))
			e = ps_trace_add_counter(r->t, PS_CTR_RECORDER_CPU_NS,
						 ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
						 1000000000LL + ((int64_t)ru.ru_utime.tv_usec +
						 ru.ru_stime.tv_usec) * 1000LL);
	}
	return e;
}

/* --- workload -------------------------------------------------------------------------- */

static int workload_create(struct rec *r)
{
	int fd;

	snprintf(r->wl_path, sizeof(r->wl_path), "/dev/shm/poolscope-wl.%d", (int)getpid());
	fd = open(r->wl_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail(r, -errno, r->wl_path, NULL);
	if (ftruncate(fd, sizeof(struct ps_workload_shm))) {
		close(fd);
		return fail(r, -errno, r->wl_path, NULL);
	}
	r->wl = mmap(NULL, sizeof(*r->wl), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (r->wl == MAP_FAILED) {
		r->wl = NULL;
		return fail(r, -errno, r->wl_path, "mmap");
	}
	setenv(PS_WORKLOAD_SHM_ENV, r->wl_path, 1);
	return 0;
}

static int write_workload(struct rec *r)
{
	struct ps_workload_shm cur;
	struct ps_workload w = {};
	uint64_t d[PS_LAT_BUCKETS], n = 0;

	if (!r->wl)
		return 0;
	memcpy(&cur, r->wl, sizeof(cur));
	__sync_synchronize();
	if (cur.magic != PS_WORKLOAD_SHM_MAGIC || cur.version != PS_WORKLOAD_SHM_VERSION)
		return 0;
	w.ios = cur.ios - r->wl_prev.ios;
	w.bytes = cur.bytes - r->wl_prev.bytes;
	w.errors = cur.errors - r->wl_prev.errors;
	w.inflight = (uint32_t)cur.inflight;
	for (unsigned b = 0; b < PS_LAT_BUCKETS; b++) {
		d[b] = cur.lat_hist[b] - r->wl_prev.lat_hist[b];
		n += d[b];
	}
	if (n) {
		/* the same percentiles as load prints, capped by the run's largest latency */
		w.lat_p50_ns = ps_lat_hist_percentile(d, PS_LAT_BUCKETS, 0.50, cur.lat_max_ns);
		w.lat_p99_ns = ps_lat_hist_percentile(d, PS_LAT_BUCKETS, 0.99, cur.lat_max_ns);
		w.lat_max_ns = ps_lat_hist_percentile(d, PS_LAT_BUCKETS, 1.0, cur.lat_max_ns);
	}
	r->wl_prev = cur;
	return ps_trace_add_workload(r->t, &w);
}

/* --- one interval ---------------------------------------------------------------------- */

static int write_procstat(struct rec *r)
{
	int e = 0;

	for (size_t i = 0; i < r->meminfo.n && !e; i++)
		e = ps_trace_add_sysstat(r->t, r->meminfo.f[i].name, r->meminfo.f[i].value);
	for (size_t i = 0; i < r->slabinfo.n && !e; i++) {
		const struct ps_slabinfo_row *row = &r->slabinfo.row[i];
		struct ps_slabinfo si = {
			.cache = row->cache,
			.active_objs = row->active_objs,
			.num_objs = row->num_objs,
			.objsize = row->objsize,
			.objperslab = row->objperslab,
			.pagesperslab = row->pagesperslab,
		};

		e = ps_trace_add_slabinfo(r->t, &si);
	}
	return e;
}

static int write_interval(struct rec *r, uint32_t idx, uint64_t t_ns, uint64_t dur_ns, bool final)
{
	char perr[256] = "";
	int e;

	e = ps_trace_begin_interval(r->t, idx, t_ns, now_ns(CLOCK_REALTIME), dur_ns);
	if (e)
		goto out_trace;
	if (r->skel) {
		e = poll_tags(r);
		if (e)
			return e;
		e = write_samples(r);
		if (e)
			return e;
		e = write_classes(r);
		if (e)
			goto out_trace;
		e = write_counters(r);
		if (e)
			goto out_trace;
		if (final || (idx % 10) == 0) {
			e = write_stacks(r);
			if (e)
				return e;
		}
	}
	e = write_prog_stats(r, r->skel ? r->skel->obj : r->empty->obj);
	if (e)
		goto out_trace;
	e = ps_meminfo_read(&r->meminfo, "/proc/meminfo", perr, sizeof(perr));
	if (!e)
		e = ps_slabinfo_read(&r->slabinfo, "/proc/slabinfo", perr, sizeof(perr));
	if (e) {
		snprintf(r->err, r->errlen, "%s", perr);
		return e;
	}
	e = write_procstat(r);
	if (e)
		goto out_trace;
	e = write_workload(r);
	if (e)
		goto out_trace;
	e = ps_trace_commit_interval(r->t);
	if (e)
		goto out_trace;
	return 0;
out_trace:
	snprintf(r->err, r->errlen, "%s: %s", r->o->out, ps_trace_errmsg(r->t));
	return e;
}

/* --- setup ----------------------------------------------------------------------------- */

static int set_meta(struct rec *r)
{
	struct utsname u;
	char buf[256], key[128], members[1024];
	int e = 0;
	FILE *f;

#define META(k, v) do { if (!e) e = ps_trace_set_meta(r->t, k, v); } while (0)
#define META_I(k, v) do { if (!e) e = ps_trace_set_meta_int(r->t, k, v); } while (0)
	uname(&u);
	META(PS_META_OS, PS_OS_LINUX);
	META(PS_META_SOURCE, PS_SOURCE_RECORD);
	META(PS_META_HOST, u.nodename);
	META(PS_META_KERNEL, u.release);
	META(PS_META_ARCH, u.machine);
	f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\n")] = 0;
			META(PS_META_BOOT_ID, buf);
		}
		fclose(f);
	}
	META_I(PS_META_START_WALL_NS, (int64_t)now_ns(CLOCK_REALTIME));
	META_I(PS_META_INTERVAL_NS, (int64_t)r->o->interval_ns);
	META(PS_META_TOOL_VERSION, POOLSCOPE_VERSION);
	META(PS_META_CMDLINE, r->o->cmdline);
	if (r->o->label)
		META(PS_META_LABEL, r->o->label);
	META_I(PS_META_NCPUS, r->ncpus);
	META_I(PS_META_PAGE_SIZE, sysconf(_SC_PAGESIZE));
	META_I(PS_META_SITE_SAMPLE_RATE, r->o->comm || r->o->pid || r->o->cgroup ? 1 : (int64_t)r->scale);
	META_I(PS_META_STACK_SAMPLE_RATE, r->o->stack_sample ?
	       (int64_t)r->o->stack_sample * (int64_t)r->scale : 0);
	META_I(PS_META_PAGE_STACK_SAMPLE_RATE, (int64_t)r->scale);
	META_I(PS_META_MAP_TAGS, r->o->map_tags);
	META_I(PS_META_MAP_PTRS, r->map_ptrs);
	META_I(PS_META_MAP_STACKS, r->o->map_stacks);
	META_I(PS_META_MAP_STACK_COUNTS, r->o->map_stack_counts);
	META_I(PS_META_MAP_CLASSES, r->o->map_classes);
	META_I(PS_META_MAP_CLASS_SLOTS, r->o->map_class_slots);
	if (r->o->comm)
		META(PS_META_FILTER_COMM, r->o->comm);
	if (r->o->pid)
		META_I(PS_META_FILTER_PID, r->o->pid);
	if (r->o->cgroup)
		META(PS_META_FILTER_CGROUP, r->o->cgroup);
	META(PS_META_PAGES_POLICY,
	     "page tags whose stack passes allocate_slab/new_slab/kmalloc_large are flagged "
	     "SLAB_BACKING (2): the slab side counts them");
	buf[0] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++)
		if (r->disabled[i])
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s",
				 buf[0] ? "," : "", progs[i].tp);
	META(PS_META_DISABLED_TPS, buf);
	if (r->o->empty_probes)
		META(PS_META_EMPTY_PROBES, "1");
	else
		META(PS_META_KMALLOC_TRACKING, r->no_kfunc ? "pointer-map" : "kmem-cache-kfunc");
	/* Merged cache groups, for a reader who wants to show the candidates. */
	for (size_t i = 0; r->sn && i < r->sn->n && !e; i++) {
		const char *g = r->sn->a[i].group;
		bool first = true;

		if (!g)
			continue;
		for (size_t j = 0; j < i; j++)
			if (r->sn->a[j].group && !strcmp(r->sn->a[j].group, g))
				first = false;
		if (!first)
			continue;
		snprintf(key, sizeof(key), "slab_group.%s", g);
		META(key, ps_slab_members(r->sn, g, members, sizeof(members)));
	}
#undef META
#undef META_I
	if (e)
		snprintf(r->err, r->errlen, "%s: %s", r->o->out, ps_trace_errmsg(r->t));
	return e;
}

static bool btf_has(const struct btf *btf, const char *name, int kind)
{
	return btf && btf__find_by_name_kind(btf, name, kind) >= 0;
}

/*
 * The gfp flags kmalloc_type() looks at (__GFP_DMA, __GFP_RECLAIMABLE, __GFP_ACCOUNT, in that
 * order): 1 << their ___GFP_*_BIT enumerators, an anonymous enum since 6.10 that CO-RE cannot
 * name, found in one pass over the BTF types; the old defines' values where absent.
 */
static void gfp_flags(const struct btf *btf, uint32_t flags[3])
{
	static const char *const names[3] = { "___GFP_DMA_BIT", "___GFP_RECLAIMABLE_BIT",
					       "___GFP_ACCOUNT_BIT" };
	uint32_t n = btf__type_cnt(btf);

	flags[0] = 0x01;
	flags[1] = 0x10;
	flags[2] = 0x400000;
	for (uint32_t id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_enum *e;

		if (!btf_is_enum(t))
			continue;
		e = btf_enum(t);
		for (uint16_t i = 0; i < btf_vlen(t); i++) {
			const char *nm = btf__name_by_offset(btf, e[i].name_off);

			for (int k = 0; k < 3; k++)
				if (!strcmp(nm, names[k]) && e[i].val >= 0 && e[i].val < 32)
					flags[k] = 1u << e[i].val;
		}
	}
}

static int cgroup_id(const char *path, uint64_t *id)
{
	struct stat st;
	char full[4096];

	if (path[0] != '/' || strncmp(path, "/sys/fs/cgroup", 14))
		snprintf(full, sizeof(full), "/sys/fs/cgroup/%s", path[0] == '/' ? path + 1 : path);
	else
		ps_strlcpy(full, path, sizeof(full));
	if (stat(full, &st))
		return -errno;
	*id = st.st_ino;
	return 0;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("POOLSCOPE_BPF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	if (level == LIBBPF_DEBUG && getenv("POOLSCOPE_BPF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/*
 * THREAD_SIZE, which the probes need to tell a frame on the task stack from one on the IRQ
 * stack (bpf/kmem.bpf.c get_ctx). It is not in BTF: x86-64 and arm64 use 16 KiB (with 4 KiB
 * pages; at least one page with larger ones), doubled by KASAN, whose presence BTF does show.
 */
static uint32_t task_stack_size(const struct btf *btf)
{
	uint32_t sz = 16384, page = (uint32_t)sysconf(_SC_PAGESIZE);

	if (page > sz)
		sz = page;
	if (btf_has(btf, "kasan_report", BTF_KIND_FUNC))
		sz *= 2;
	return sz;
}

static int load_empty(struct rec *r)
{
	int e;

	r->empty = kmem_empty_bpf__open_and_load();
	if (!r->empty)
		return fail(r, -errno, "loading the empty probes", NULL);
	e = kmem_empty_bpf__attach(r->empty);
	if (e)
		return fail(r, e, "attaching the empty probes", NULL);
	return 0;
}

static int load(struct rec *r)
{
	const struct ps_record_opts *o = r->o;
	struct btf *btf;
	struct bpf_program *p;
	uint32_t gfp[3];
	char tpname[96];
	int e;

	libbpf_set_print(libbpf_quiet);
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return fail(r, -PS_ERR__NOBTF, "/sys/kernel/btf/vmlinux", NULL);
	r->no_kfunc = o->no_kfunc || !btf_has(btf, "bpf_get_kmem_cache", BTF_KIND_FUNC);
	if (r->no_kfunc && !o->no_kfunc)
		fprintf(stderr, "poolscope record: warning: this kernel has no bpf_get_kmem_cache() "
			"kfunc (6.13+): kmalloc classes are keyed by size and every kmalloc object is "
			"tracked in the pointer map (exact, costlier)\n");
	r->map_ptrs = o->map_ptrs ? o->map_ptrs : r->no_kfunc ? 1048576 : 262144;
	r->skel = kmem_bpf__open();
	if (!r->skel) {
		btf__free(btf);
		return fail(r, -errno, "opening the BPF object", NULL);
	}
	r->skel->rodata->site_bits = __builtin_ctz(o->site_sample);
	r->skel->rodata->stack_sample = o->stack_sample;
	r->skel->rodata->page_shift = __builtin_ctzl(sysconf(_SC_PAGESIZE));
	r->skel->rodata->thread_size = task_stack_size(btf);
	r->skel->rodata->no_kfunc = r->no_kfunc;
	r->skel->rodata->self_tgid = (uint32_t)getpid();
	r->skel->rodata->kmalloc_max = 2 * (uint32_t)sysconf(_SC_PAGESIZE);
	gfp_flags(btf, gfp);
	r->skel->rodata->gfp_dma = gfp[0];
	r->skel->rodata->gfp_reclaimable = gfp[1];
	r->skel->rodata->gfp_account = gfp[2];
	if (o->comm || o->pid || o->cgroup) {
		r->skel->rodata->filter_on = 1;
		if (o->comm) {
			r->skel->rodata->filter_comm_on = 1;
			strncpy((char *)r->skel->rodata->filter_comm, o->comm, 15);
		}
		r->skel->rodata->filter_tgid = o->pid;
		if (o->cgroup) {
			uint64_t id = 0;

			e = cgroup_id(o->cgroup, &id);
			if (e) {
				btf__free(btf);
				return fail(r, e, "--cgroup", o->cgroup);
			}
			r->skel->rodata->filter_cgid = id;
		}
	}
	bpf_map__set_max_entries(r->skel->maps.tags, o->map_tags);
	bpf_map__set_max_entries(r->skel->maps.ptrs, r->map_ptrs);
	bpf_map__set_max_entries(r->skel->maps.stacks, o->map_stacks);
	bpf_map__set_max_entries(r->skel->maps.stack_counts, o->map_stack_counts);
	bpf_map__set_max_entries(r->skel->maps.classes, o->map_classes);
	bpf_map__set_max_entries(r->skel->maps.class_slots, o->map_class_slots);
	r->skel->rodata->class_slot_bits = __builtin_ctz(o->map_class_slots);
	bpf_map__set_max_entries(r->skel->maps.cache_info, o->map_classes);
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
		snprintf(tpname, sizeof(tpname), "btf_trace_%s", progs[i].tp);
		if (btf_has(btf, tpname, BTF_KIND_TYPEDEF))
			continue;
		if (progs[i].required) {
			btf__free(btf);
			snprintf(r->err, r->errlen, "tracepoint kmem:%s missing from this kernel",
				 progs[i].tp);
			return -ENOENT;
		}
		r->disabled[i] = true;
		bpf_program__set_autoload(bpf_object__find_program_by_name(r->skel->obj,
									 progs[i].tp), false);
		fprintf(stderr, "poolscope record: warning: tracepoint %s missing, its program is "
			"disabled\n", progs[i].tp);
	}
	btf__free(btf);
	e = kmem_bpf__load(r->skel);
	if (e)
		return fail(r, e, "loading the BPF programs (POOLSCOPE_BPF_DEBUG=1 shows the verifier log)", NULL);
	bpf_object__for_each_program(p, r->skel->obj) {
		struct bpf_link *l;

		if (!bpf_program__autoload(p))
			continue;
		l = bpf_program__attach(p);
		if (!l) {
			e = -errno;
			fprintf(stderr, "poolscope record: warning: cannot attach %s: %s; disabled\n",
				bpf_program__name(p), ps_strerror(e));
			for (size_t i = 0; i < ARRAY_SIZE(progs); i++)
				if (!strcmp(progs[i].tp, bpf_program__name(p)))
					r->disabled[i] = true;
			continue;
		}
		/* Links are owned by the skeleton's bpf_object and freed with it. */
		(void)l;
	}
	return 0;
}

/* --- the command ----------------------------------------------------------------------- */

static pid_t spawn(struct rec *r, int *gate)
{
	int pfd[2];
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (pid == 0) {
		char c;

		close(pfd[1]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		/* Starts only once the probes are attached and interval 0 is written. */
		if (read(pfd[0], &c, 1) != 1)
			_exit(127);
		execvp(r->o->cmd[0], r->o->cmd);
		fprintf(stderr, "poolscope record: %s: %s\n", r->o->cmd[0], strerror(errno));
		_exit(127);
	}
	close(pfd[0]);
	*gate = pfd[1];
	return pid;
}

/*
 * One line, rewritten in place: elapsed, event rate, tracked live bytes, the tag that gained
 * most since the start (live bytes are from the previous write, before this interval's
 * deltas: good enough for a glance), tags and drops.
 */
static void status_line(struct rec *r, uint64_t elapsed_ns, uint64_t dur_ns)
{
	uint64_t ev = 0, drops = 0;
	char live[32], topb[32], top[80] = "-";

	for (int i = PS_C_EV_KMALLOC; i <= PS_C_EV_PERCPU_FREE; i++)
		ev += r->totals[i];
	for (int i = PS_C_DROP_CLASS_FULL; i <= PS_C_DROP_CACHEINFO_FULL; i++)
		drops += r->totals[i];
	drops += r->recursion_misses;	/* events skipped for re-entry: as the report counts */
	ps_fmt_bytes(live, sizeof(live), (double)r->live_total, true);
	if (r->top) {
		const char *site = r->top->site_sym[0] ? r->top->site_sym : "";
		int n = (int)strcspn(site, "+");

		ps_fmt_bytes(topb, sizeof(topb), (double)r->top->live_bytes, true);
		snprintf(top, sizeof(top), "%.20s%s%.*s %s", r->top->name, n ? "@" : "",
			 n > 16 ? 16 : n, site, topb);
	}
	fprintf(stderr, "\r\033[K%6.1fs %7.0f ev/s  live %s  top %s  tags %zu  drops %llu",
		elapsed_ns / 1e9, dur_ns ? (ev - r->events_prev) * 1e9 / dur_ns : 0.0, live, top,
		r->nutags, (unsigned long long)drops);
	r->events_prev = ev;
}

static void on_signal(int sig)
{
	(void)sig;
	ps_record_stop();
}

static void on_child(int sig)
{
	int saved = errno;

	(void)sig;
	if (wake_pipe[1] >= 0)
		(void)!write(wake_pipe[1], "c", 1);
	errno = saved;
}

int ps_record_run(const struct ps_record_opts *o, char *err, size_t errlen)
{
	struct rec rr = { .o = o, .err = err, .errlen = errlen };
	struct rec *r = &rr;
	struct sigaction sa = {};
	uint64_t start, last, next, deadline = 0;
	uint32_t idx = 0;
	pid_t child = 0;
	int gate = -1, child_status = 0, e;
	bool child_done = false;

	err[0] = 0;
	r->ncpus = libbpf_num_possible_cpus();
	if (r->ncpus <= 0)
		return fail(r, r->ncpus ? r->ncpus : -EINVAL, "possible CPUs", NULL);
	r->scale = o->site_sample;
	r->valbuf = calloc(r->ncpus, 64);	/* largest per-CPU value: ps_class_slot (56) */
	if (!r->valbuf || ps_htab_init(&r->btags, sizeof(struct ps_tag_key)) ||
	    ps_htab_init(&r->page_utags, sizeof(struct page_ukey)) ||
	    ps_htab_init(&r->classes, sizeof(uint64_t)))
		return fail(r, -ENOMEM, "memory", NULL);
	stop_requested = 0;
	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK))
		return fail(r, -errno, "pipe", NULL);

	e = ps_trace_create(&r->t, o->out, o->force ? PS_TRACE_F_FORCE : 0);
	if (e) {
		if (e == -EEXIST)
			snprintf(err, errlen, "%s: exists (use --force to replace it)", o->out);
		else
			snprintf(err, errlen, "%s: %s", o->out, ps_strerror(e));
		r->t = NULL;
		goto out;
	}
	e = o->empty_probes ? load_empty(r) : load(r);
	if (e)
		goto out_unlink;
	/* After loading, so the JITed programs are in kallsyms too. */
	e = ps_kallsyms_load(&r->ks, "/proc/kallsyms", err, errlen);
	if (e) {
		if (!err[0])
			snprintf(err, errlen, "/proc/kallsyms: %s%s", ps_strerror(e),
				 e == -EPERM ? " (all addresses are zero: kptr_restrict?)" : "");
		goto out_unlink;
	}
	e = ps_slabnames_load(&r->sn, "/sys/kernel/slab");
	if (e) {
		snprintf(err, errlen, "/sys/kernel/slab: %s", ps_strerror(e));
		goto out_unlink;
	}
	if (o->cmd) {
		e = workload_create(r);
		if (e)
			goto out_unlink;
	}
	e = set_meta(r);
	if (e)
		goto out_unlink;

	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_child;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);

	start = last = now_ns(CLOCK_MONOTONIC);
	e = write_interval(r, idx++, 0, 0, false);	/* the baseline */
	if (e)
		goto out_close;
	if (o->cmd) {
		child = spawn(r, &gate);
		if (child < 0) {
			e = child;
			snprintf(err, errlen, "%s: %s", o->cmd[0], ps_strerror(e));
			goto out_close;
		}
		(void)!write(gate, "g", 1);
		close(gate);
	}
	if (o->duration_ns)
		deadline = start + o->duration_ns;
	next = start + o->interval_ns;
	for (;;) {
		struct pollfd pfd = { .fd = wake_pipe[0], .events = POLLIN };
		uint64_t now = now_ns(CLOCK_MONOTONIC), wake = next;
		bool final;
		char drain[64];

		if (deadline && deadline < wake)
			wake = deadline;
		if (!stop_requested && !child_done && now < wake)
			poll(&pfd, 1, (int)((wake - now + 999999) / 1000000));
		while (read(wake_pipe[0], drain, sizeof(drain)) > 0)
			;
		if (child && !child_done && waitpid(child, &child_status, WNOHANG) == child)
			child_done = true;
		now = now_ns(CLOCK_MONOTONIC);
		final = stop_requested || child_done || (deadline && now >= deadline);
		if (!final && now < next)
			continue;
		e = write_interval(r, idx++, now - start, now - last, final);
		if (e)
			goto out_close;
		if (o->status)
			status_line(r, now - start, now - last);
		last = now;
		while (next <= now)
			next += o->interval_ns;
		if (final)
			break;
	}
	if (o->status)
		fputc('\n', stderr);
	if (child && !child_done) {
		kill(child, SIGTERM);
		waitpid(child, &child_status, 0);
	}
	if (child && WIFEXITED(child_status) && WEXITSTATUS(child_status))
		fprintf(stderr, "poolscope record: %s exited with status %d\n", o->cmd[0],
			WEXITSTATUS(child_status));
	e = 0;
out_close:
	{
		int ce = ps_trace_close(r->t);

		r->t = NULL;
		if (!e && ce) {
			e = ce;
			snprintf(err, errlen, "%s: closing: %s", o->out, ps_strerror(ce));
		}
	}
	goto out;
out_unlink:
	ps_trace_discard(r->t);
	r->t = NULL;
out:
	if (r->wl) {
		munmap(r->wl, sizeof(*r->wl));
		unlink(r->wl_path);
	}
	kmem_bpf__destroy(r->skel);
	kmem_empty_bpf__destroy(r->empty);
	ps_kallsyms_free(r->ks);
	ps_slabnames_free(r->sn);
	for (size_t i = 0; i < r->nutags; i++)
		free(r->utags[i]);
	free(r->utags);
	for (size_t i = 0; i < r->btags.cap; i++)
		if (r->btags.used && r->btags.used[i])
			free(r->btags.vals[i]);
	for (size_t i = 0; i < r->classes.cap; i++)
		if (r->classes.used && r->classes.used[i])
			free(r->classes.vals[i]);
	ps_htab_fini(&r->btags);
	ps_htab_fini(&r->page_utags);
	ps_htab_fini(&r->classes);
	free(r->valbuf);
	ps_meminfo_free(&r->meminfo);
	ps_slabinfo_free(&r->slabinfo);
	close(wake_pipe[0]);
	close(wake_pipe[1]);
	wake_pipe[0] = wake_pipe[1] = -1;
	signal(SIGCHLD, SIG_DFL);
	return e;
}
