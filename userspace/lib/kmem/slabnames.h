/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of merged SLUB caches. SLUB merges compatible caches; the merged kmem_cache keeps the
 * name of its first creator, so a BPF program reading s->name is told "pool_workqueue" for an
 * skbuff_fclone_cache object. /sys/kernel/slab shows the truth: every name of a merged group is
 * a symlink to one ":<flags>-<size>" directory, while an unmerged cache is a directory.
 * ps_slab_resolve() picks the member the call site belongs to (by matching the call-site
 * function's words against the member names); when the site does not decide, the tag is named
 * after the group (":0000512") so no member's name is claimed.
 */
#ifndef PS_KMEM_SLABNAMES_H
#define PS_KMEM_SLABNAMES_H

#include <stdbool.h>
#include <stddef.h>

struct ps_slab_alias {
	char *name;
	char *group;		/* ":0000512", or NULL for an unmerged cache */
};

struct ps_slabnames {
	char *dir;
	struct ps_slab_alias *a;
	size_t n;
};

/* Reads dir (normally /sys/kernel/slab). A missing dir gives an empty table (no merging info). */
int ps_slabnames_load(struct ps_slabnames **out, const char *dir);
void ps_slabnames_free(struct ps_slabnames *sn);
/* Group of a cache name, or NULL when it is not merged (or unknown). */
const char *ps_slab_group(const struct ps_slabnames *sn, const char *name);

/*
 * Resolves the name the kernel reported (s->name) for an allocation at site_func (function name
 * of the call site, may be NULL). kmalloc says the event came from kmalloc (then a kmalloc-*
 * member is the answer). Writes the name to show into out; returns true when the reported name
 * was replaced (merged cache), so the caller stores the reported one as cache_alias.
 */
bool ps_slab_resolve(const struct ps_slabnames *sn, const char *reported, const char *site_func,
		     bool kmalloc, char *out, size_t outlen);

/* Comma-separated members of a group (for meta slab_group.<group>); returns out. */
char *ps_slab_members(const struct ps_slabnames *sn, const char *group, char *out, size_t outlen);

#endif
