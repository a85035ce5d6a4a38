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

/*
 * A label in at most w columns (w >= 26): the call site loses its offset first, then the site
 * and, if it must, the cache are cut, each marked '~' where it was. Full labels are in csv,
 * json and markdown.
 */
void ps_label_short(const char *lb, char *out, size_t w)
{
	const char *at = strchr(lb, '@'), *site = at ? at + 1 : NULL;
	size_t nn = at ? (size_t)(at - lb) : strlen(lb), ns, bn, bs, o = 0;

	if (strlen(lb) <= w || !at) {
		bool cut = strlen(lb) > w;

		memcpy(out, lb, cut ? w - 1 : strlen(lb));
		o = cut ? w - 1 : strlen(lb);
		if (cut)
			out[o++] = '~';
		out[o] = '\0';
		return;
	}
	ns = strcspn(site, "+");
	if (nn + 1 + ns <= w) {
		bn = nn;
		bs = ns;
	} else {
		/*
		 * the cache keeps up to 16 columns (all of kmalloc-192, ext4_inode_cache: a
		 * bucket's size must not be cut), the site the rest, at least 8
		 */
		bn = nn < 16 ? nn : 16;
		if (w - 1 - bn > ns)
			bn = w - 1 - ns;
		if (w - 1 - bn < 8)
			bn = w - 1 - 8;
		bs = w - 1 - bn;
	}
	memcpy(out, lb, bn < nn ? bn - 1 : bn);
	o = bn < nn ? bn - 1 : bn;
	if (bn < nn)
		out[o++] = '~';
	out[o++] = '@';
	memcpy(out + o, site, bs < ns ? bs - 1 : bs);
	o += bs < ns ? bs - 1 : bs;
	if (bs < ns)
		out[o++] = '~';
	out[o] = '\0';
}

const char *ps_src_str(const struct ps_src *s, char *buf, size_t len)
{
	if (!s)
		snprintf(buf, len, "%s", "");
	else if (s->call_file)
		snprintf(buf, len, "%s:%u %s, inlined %s:%u %s", s->call_file, s->call_line,
			 s->caller ? s->caller : "?", s->file, s->line, s->func ? s->func : "?");
	else
		snprintf(buf, len, "%s:%u%s%s", s->file, s->line, s->func ? " " : "",
			 s->func ? s->func : "");
	return buf;
}
