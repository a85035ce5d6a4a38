// SPDX-License-Identifier: GPL-2.0
/*
 * Memory domains (keys.h, docs/trace-format.md): which tags hold memory the kernel cannot give
 * back. The recorder decides a page tag's domain from the page's migratetype and its call site;
 * the converters from the pool type (paged pool is flagged reclaimable); a trace written before tags had a domain gets the same
 * decision from what its tags say (kind, pool, flags, call site).
 */
#include <string.h>

#include "userspace/lib/trace/trace.h"

static bool has_prefix(const char *s, const char *const *pre, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(s, pre[i], strlen(pre[i])))
			return true;
	return false;
}

/*
 * Sites that put a page into the page cache: file data, counted in "Cached", reclaimable. The
 * prefixes are the page-cache API, through which every filesystem's reads and writes allocate.
 */
static const char *const page_cache_fns[] = {
	"filemap_", "__filemap_", "page_cache_", "do_read_cache_", "read_cache_",
	"grab_cache_page", "grow_dev_folio",
};

/*
 * Sites that give a process memory: anonymous and COW faults, swap-in, tmpfs/shmem pages, huge
 * page collapse, and the page tables that map them (fork copies them). Such memory is freed when
 * the process unmaps it or exits; it is the process's, not the kernel's.
 */
static const char *const user_fns[] = {
	"do_anonymous_page", "alloc_anon_folio", "do_wp_page", "wp_page_copy", "do_cow_fault",
	"do_huge_pmd_anonymous_page", "do_huge_pmd_wp_page", "do_swap_page",
	"__read_swap_cache_async", "swap_cache_alloc_folio", "shmem_alloc_folio",
	"shmem_alloc_and_add_folio", "shmem_get_folio", "collapse_huge_page",
	"alloc_charge_folio", "copy_present_page", "copy_present_ptes", "copy_pte_range",
	"__pte_alloc", "pte_alloc_one", "__pmd_alloc", "__pud_alloc", "__p4d_alloc", "pgd_alloc",
	"mm_alloc_pgd", "__get_user_pages", "handle_mm_fault", "__handle_mm_fault",
	"folio_prealloc", "do_fault",
};

const char *ps_page_fn_domain(const char *func)
{
	if (!func)
		return NULL;
	if (has_prefix(func, page_cache_fns, sizeof(page_cache_fns) / sizeof(*page_cache_fns)))
		return PS_DOMAIN_RECLAIMABLE;
	if (has_prefix(func, user_fns, sizeof(user_fns) / sizeof(*user_fns)))
		return PS_DOMAIN_USER;
	return NULL;
}

static bool is(const char *a, const char *b)
{
	return a && !strcmp(a, b);
}

const char *ps_tag_domain(const struct ps_tag *t)
{
	const char *d;
	char fn[128];
	size_t n;

	if (is(t->domain, PS_DOMAIN_KERNEL))
		return PS_DOMAIN_KERNEL;
	if (is(t->domain, PS_DOMAIN_RECLAIMABLE))
		return PS_DOMAIN_RECLAIMABLE;
	if (is(t->domain, PS_DOMAIN_USER))
		return PS_DOMAIN_USER;
	/* no (known) domain stored: decide from what the tag says */
	if (t->flags & PS_TAG_F_RECLAIMABLE)
		return PS_DOMAIN_RECLAIMABLE;
	if (!is(t->kind, PS_KIND_PAGE) || (t->flags & PS_TAG_F_SLAB_BACKING) || !t->site_sym)
		return PS_DOMAIN_KERNEL;
	n = strcspn(t->site_sym, "+");
	if (n >= sizeof(fn))
		n = sizeof(fn) - 1;
	memcpy(fn, t->site_sym, n);
	fn[n] = 0;
	d = ps_page_fn_domain(fn);
	return d ? d : PS_DOMAIN_KERNEL;
}

const char *ps_flags_domain(uint32_t flags)
{
	return flags & PS_TAG_F_RECLAIMABLE ? PS_DOMAIN_RECLAIMABLE : PS_DOMAIN_KERNEL;
}
