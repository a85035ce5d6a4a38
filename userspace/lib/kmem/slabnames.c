// SPDX-License-Identifier: GPL-2.0
/* Merged-cache name resolution from /sys/kernel/slab: see slabnames.h. */
#include "userspace/lib/kmem/slabnames.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/lib/util/util.h"

int ps_slabnames_load(struct ps_slabnames **out, const char *dir)
{
	struct ps_slabnames *sn;
	struct dirent *de;
	size_t cap = 0;
	DIR *d;

	*out = NULL;
	sn = calloc(1, sizeof(*sn));
	if (!sn)
		return -ENOMEM;
	sn->dir = strdup(dir);
	d = opendir(dir);
	if (!d) {
		*out = sn;
		return 0;
	}
	while ((de = readdir(d))) {
		char path[PATH_MAX], target[PATH_MAX];
		struct ps_slab_alias *na;
		ssize_t n;

		if (de->d_name[0] == '.' || de->d_name[0] == ':')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (sn->n == cap) {
			cap = cap ? cap * 2 : 256;
			na = realloc(sn->a, cap * sizeof(*na));
			if (!na)
				goto nomem;
			sn->a = na;
		}
		sn->a[sn->n].name = strdup(de->d_name);
		sn->a[sn->n].group = NULL;
		if (n > 0) {
			const char *base;

			target[n] = 0;
			base = strrchr(target, '/');
			sn->a[sn->n].group = strdup(base ? base + 1 : target);
		}
		sn->n++;
	}
	closedir(d);
	*out = sn;
	return 0;
nomem:
	closedir(d);
	ps_slabnames_free(sn);
	return -ENOMEM;
}

void ps_slabnames_free(struct ps_slabnames *sn)
{
	if (!sn)
		return;
	for (size_t i = 0; i < sn->n; i++) {
		free(sn->a[i].name);
		free(sn->a[i].group);
	}
	free(sn->a);
	free(sn->dir);
	free(sn);
}

const char *ps_slab_group(const struct ps_slabnames *sn, const char *name)
{
	for (size_t i = 0; sn && i < sn->n; i++)
		if (!strcmp(sn->a[i].name, name))
			return sn->a[i].group;
	return NULL;
}

/* Words of a cache name that say nothing about its owner. */
static bool generic_word(const char *w, size_t len)
{
	static const char *const g[] = { "cache", "cachep", "kmem", "head", "node", "slab", "data",
					 "struct", "info", "entry", "obj", "objs", "kmalloc", "cg",
					 "rcl", "dma", "rnd" };

	if (len < 3)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(g); i++)
		if (strlen(g[i]) == len && !strncmp(g[i], w, len))
			return true;
	return false;
}

/*
 * How well a call-site function matches a cache name: a cache word counts when it occurs in
 * the function name, or when a function word (3+ chars) starts it ("skb" in __alloc_skb vs
 * "skbuff" in skbuff_fclone_cache).
 */
static int match_score(const char *cache, const char *func)
{
	const char *p = cache;
	int score = 0;

	while (*p) {
		const char *w = p;
		size_t len;

		while (*p && *p != '_' && *p != '-')
			p++;
		len = p - w;
		if (*p)
			p++;
		if (generic_word(w, len))
			continue;
		{
			char word[64];

			if (len >= sizeof(word))
				len = sizeof(word) - 1;
			memcpy(word, w, len);
			word[len] = 0;
			if (strstr(func, word)) {
				score += 2;
				continue;
			}
		}
		for (const char *f = func; *f;) {
			const char *fw = f;
			size_t flen;

			while (*f && *f != '_')
				f++;
			flen = f - fw;
			while (*f == '_')
				f++;
			if (flen >= 3 && flen < len && !strncmp(w, fw, flen)) {
				score += 1;
				break;
			}
		}
	}
	return score;
}

bool ps_slab_resolve(const struct ps_slabnames *sn, const char *reported, const char *site_func,
		     bool kmalloc, char *out, size_t outlen)
{
	const char *group = ps_slab_group(sn, reported), *best = NULL;
	int best_score = 0, nbest = 0;

	if (!group) {
		ps_strlcpy(out, reported, outlen);
		return false;
	}
	if (kmalloc && !strncmp(reported, "kmalloc-", 8)) {
		ps_strlcpy(out, reported, outlen);
		return false;
	}
	for (size_t i = 0; site_func && i < sn->n; i++) {
		const char *name = sn->a[i].name;
		int sc;

		if (!sn->a[i].group || strcmp(sn->a[i].group, group))
			continue;
		if (!kmalloc && !strncmp(name, "kmalloc-", 8))
			continue;
		sc = match_score(name, site_func);
		if (sc > best_score) {
			best_score = sc;
			best = name;
			nbest = 1;
		} else if (sc && sc == best_score) {
			nbest++;
		}
	}
	if (best && nbest == 1) {
		ps_strlcpy(out, best, outlen);
	} else {
		/* Undecided: the group, never one member's name. */
		ps_strlcpy(out, group, outlen);
	}
	return strcmp(out, reported) != 0;
}

char *ps_slab_members(const struct ps_slabnames *sn, const char *group, char *out, size_t outlen)
{
	size_t len = 0;

	out[0] = 0;
	for (size_t i = 0; sn && i < sn->n; i++) {
		if (!sn->a[i].group || strcmp(sn->a[i].group, group))
			continue;
		len += snprintf(out + len, len < outlen ? outlen - len : 0, "%s%s", len ? "," : "",
				sn->a[i].name);
		if (len >= outlen) {
			out[outlen - 1] = 0;
			break;
		}
	}
	return out;
}
