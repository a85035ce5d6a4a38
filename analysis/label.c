// SPDX-License-Identifier: GPL-2.0
/* A tag's display name (label.h). */
#include <stdio.h>
#include <string.h>

#include "analysis/label.h"

static bool has_sites(const char *kind)
{
	return kind && (!strcmp(kind, PS_KIND_KMALLOC) || !strcmp(kind, PS_KIND_PAGE) ||
			!strcmp(kind, PS_KIND_PERCPU) ||
			!strcmp(kind, PS_KIND_SLAB));
}

const char *ps_tag_label(const struct ps_tag *t, char *buf, size_t len)
{
	const char *n = t->name ? t->name : t->cache ? t->cache : "?";

	/* a named cache can have several call sites (tags): the site tells them apart */
	if (t->site_sym && has_sites(t->kind))
		snprintf(buf, len, "%s@%s", n, t->site_sym);
	else
		snprintf(buf, len, "%s", n);
	return buf;
}
