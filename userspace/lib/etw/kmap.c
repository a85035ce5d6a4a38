// SPDX-License-Identifier: GPL-2.0
/* (u64, u32) -> u32 hash table, see kmap.h. */
#include <errno.h>
#include <stdlib.h>

#include "userspace/lib/etw/kmap.h"

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
			*v = s->v - 1;
			return true;
		}
	}
}

static int grow(struct ps_kmap *m)
{
	size_t nc = m->cap ? m->cap * 2 : 1024;
	struct ps_kmap_slot *ns = calloc(nc, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		struct ps_kmap_slot *s = &m->s[i];
		if (!s->v)
			continue;
		size_t j = hash(s->a, s->b) & (nc - 1);
		while (ns[j].v)
			j = (j + 1) & (nc - 1);
		ns[j] = *s;
	}
	free(m->s);
	m->s = ns;
	m->cap = nc;
	return 0;
}

int ps_kmap_swap(struct ps_kmap *m, uint64_t a, uint32_t b, uint32_t v, uint32_t *old)
{
	if ((m->n + 1) * 4 > m->cap * 3 && grow(m) < 0)
		return -ENOMEM;
	for (size_t i = hash(a, b) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct ps_kmap_slot *s = &m->s[i];
		if (!s->v) {
			s->a = a;
			s->b = b;
			s->v = v + 1;
			m->n++;
			return 0;
		}
		if (s->a == a && s->b == b) {
			if (old)
				*old = s->v - 1;
			s->v = v + 1;
			return 1;
		}
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
	size_t mask = m->cap - 1, i;

	if (!m->cap)
		return false;
	for (i = hash(a, b) & mask;; i = (i + 1) & mask) {
		if (!m->s[i].v)
			return false;
		if (m->s[i].a == a && m->s[i].b == b)
			break;
	}
	if (v)
		*v = m->s[i].v - 1;
	/* Backward shift: move later entries of the run into the hole when their home allows. */
	for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
		if (!m->s[j].v)
			break;
		size_t home = hash(m->s[j].a, m->s[j].b) & mask;
		/* j may move to i when home is not cyclically in (i, j] */
		bool stay = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
		if (stay)
			continue;
		m->s[i] = m->s[j];
		i = j;
	}
	m->s[i].v = 0;
	m->n--;
	return true;
}

void ps_kmap_free(struct ps_kmap *m)
{
	free(m->s);
	m->s = NULL;
	m->n = m->cap = 0;
}

void ps_kmap_prefetch(const struct ps_kmap *m, uint64_t a, uint32_t b)
{
	if (m->cap)
		__builtin_prefetch(&m->s[hash(a, b) & (m->cap - 1)]);
}
