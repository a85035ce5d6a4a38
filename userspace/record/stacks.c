// SPDX-License-Identifier: GPL-2.0
/*
 * What a kernel stack means to the recorder. A page allocation's stack is reduced to its call
 * site (the first frame outside the page and slab allocators) and to whether the page backs a
 * slab or a large kmalloc, which the slab side counts already. A sampled stack of a tag gets its
 * trace tag, its frames' symbols and its live bytes scaled by the stack sample rate.
 */
#include <string.h>

#include "userspace/record/rec.h"
#include "userspace/lib/util/util.h"

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


uint64_t rec_page_site(const struct rec *r, const struct snap_frames *f, bool *backing)
{
	uint32_t n = f ? f->n : 0;

	*backing = false;
	for (uint32_t i = 0; i < n; i++) {
		const struct ps_ksym *k = rec_sym(r, f->ips[i], NULL);

		if (!k)
			return f->ips[i];
		if (has_prefix(k->name, slab_backing_fns, ARRAY_SIZE(slab_backing_fns))) {
			*backing = true;
			continue;
		}
		if (has_prefix(k->name, page_alloc_fns, ARRAY_SIZE(page_alloc_fns)))
			continue;
		if (*backing && has_prefix(k->name, slab_fns, ARRAY_SIZE(slab_fns)))
			continue;
		return f->ips[i];
	}
	return 0;
}

/* The symbol of each frame; one further than 1 MiB from it is left unnamed. */
static void symbolize_frames(const struct rec *r, struct snap_frames *f)
{
	for (uint32_t i = 0; i < f->n; i++) {
		uint64_t off;
		const struct ps_ksym *k = rec_sym(r, f->ips[i], &off);

		f->sym[i] = k && off < (1u << 20) ? k : NULL;
	}
	f->resolved = true;
}

void rec_resolve_stacks(struct rec *r)
{
	struct snap *s = &r->snap;
	uint64_t ss = r->o->stack_sample ? r->o->stack_sample : 1;

	for (size_t i = 0; i < s->nstk; i++) {
		struct snap_stack *st = &s->stk[i];
		struct snap_frames *f = &s->frames[st->frames];

		st->u = rec_tag_of(r, &st->key.tag);
		if (!st->u || !f->n) {
			st->u = NULL;
			continue;
		}
		if (!f->resolved)
			symbolize_frames(r, f);
		st->hash = ps_hash_bytes(f->ips, f->n * sizeof(f->ips[0]));
		/* every sampled page takes a stack: its stacks scale by the page's rate alone */
		if (st->key.tag.kind == PS_K_PAGE)
			st->live_bytes = st->val.live_bytes * (int64_t)st->u->scale;
		else
			st->live_bytes = st->val.live_bytes * (int64_t)(st->u->scale > 1 ?
									st->u->scale * ss : ss);
		st->ctx = rec_ctx_name(st->val.ctx);
	}
}
