// SPDX-License-Identifier: GPL-2.0
/* (u64, u32) -> u32 hash table, see kmap.h. */
#include <errno.h>
#include <stdlib.h>

#include "userspace/lib/etw/kmap.h"

#define DEAD UINT32_MAX		/* a removed key's slot: v of a slot, see kmap.h */

static inline size_t hash(uint64_t a, uint32_t b)
{
	uint64_t h = (a ^ ((uint64_t)b << 32 | b)) * 0x9e3779b97f4a7c15ULL;
	return (size_t)(h ^ (h >> 29));
}

bool ps_kmap_get(const struct ps_kmap *m, uint64_t a, uint32_t b, uint32_t *v)
{
	if (!m->cap)
		return false;
	for (size_t i = hash(a, b) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const struct ps_kmap_slot *s = &m->s[i];
		if (!s->v)
			return false;
		if (s->a == a && s->b == b) {
			if (s->v == DEAD)
				return false;
			*v = s->v - 1;
			return true;
		}
	}
}

/*
 * Rehashes the live keys into a table where they fill at most half, dropping the removed ones:
 * called when live and removed slots fill three quarters, so at least a quarter of the table's
 * operations separate two rebuilds and each operation pays a bounded share.
 */
static int rebuild(struct ps_kmap *m)
{
	size_t nc = m->cap ? m->cap : 1024;
	struct ps_kmap_slot *ns;

	while ((m->n + 1) * 2 > nc)
		nc *= 2;
	ns = calloc(nc, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		struct ps_kmap_slot *s = &m->s[i];
		if (!s->v || s->v == DEAD)
			continue;
		size_t j = hash(s->a, s->b) & (nc - 1);
		while (ns[j].v)
			j = (j + 1) & (nc - 1);
		ns[j] = *s;
	}
	free(m->s);
	m->s = ns;
	m->cap = nc;
	m->ndead = 0;
	return 0;
}

int ps_kmap_swap(struct ps_kmap *m, uint64_t a, uint32_t b, uint32_t v, uint32_t *old)
{
	struct ps_kmap_slot *hole = NULL;

	if ((m->n + m->ndead + 1) * 4 > m->cap * 3 && rebuild(m) < 0)
		return -ENOMEM;
	for (size_t i = hash(a, b) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct ps_kmap_slot *s = &m->s[i];
		if (!s->v) {
			/* absent: into the first removed slot on the way, else here */
			if (hole) {
				s = hole;
				m->ndead--;
			}
			s->a = a;
			s->b = b;
			s->v = v + 1;
			m->n++;
			return 0;
		}
		if (s->a == a && s->b == b) {
			if (s->v == DEAD) {
				/* an address used again: its own slot, where its lookups start */
				s->v = v + 1;
				m->ndead--;
				m->n++;
				return 0;
			}
			if (old)
				*old = s->v - 1;
			s->v = v + 1;
			return 1;
		}
		if (s->v == DEAD && !hole)
			hole = s;
	}
}

int ps_kmap_put(struct ps_kmap *m, uint64_t a, uint32_t b, uint32_t v)
{
	int e = ps_kmap_swap(m, a, b, v, NULL);

	return e < 0 ? e : 0;
}

bool ps_kmap_del(struct ps_kmap *m, uint64_t a, uint32_t b)
{
	return ps_kmap_take(m, a, b, NULL);
}

bool ps_kmap_take(struct ps_kmap *m, uint64_t a, uint32_t b, uint32_t *v)
{
	if (!m->cap)
		return false;
	for (size_t i = hash(a, b) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct ps_kmap_slot *s = &m->s[i];
		if (!s->v)
			return false;
		if (s->a == a && s->b == b) {
			if (s->v == DEAD)
				return false;
			if (v)
				*v = s->v - 1;
			/* the key stays, marked removed: no run moves, and its reuse finds it */
			s->v = DEAD;
			m->n--;
			m->ndead++;
			return true;
		}
	}
}

void ps_kmap_free(struct ps_kmap *m)
{
	free(m->s);
	m->s = NULL;
	m->n = m->ndead = m->cap = 0;
}

void ps_kmap_prefetch(const struct ps_kmap *m, uint64_t a, uint32_t b)
{
	if (m->cap)
		__builtin_prefetch(&m->s[hash(a, b) & (m->cap - 1)]);
}
