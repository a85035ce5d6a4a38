// SPDX-License-Identifier: GPL-2.0
/* Fixed-key open-addressing hash table: see htab.h. */
#include "userspace/lib/kmem/htab.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

uint64_t ps_hash_bytes(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int ps_htab_init(struct ps_htab *h, size_t key_size)
{
	memset(h, 0, sizeof(*h));
	h->key_size = key_size;
	h->cap = 1024;
	h->keys = calloc(h->cap, key_size);
	h->vals = calloc(h->cap, sizeof(void *));
	h->used = calloc(h->cap, 1);
	if (!h->keys || !h->vals || !h->used) {
		ps_htab_fini(h);
		return -ENOMEM;
	}
	return 0;
}

void ps_htab_fini(struct ps_htab *h)
{
	free(h->keys);
	free(h->vals);
	free(h->used);
	memset(h, 0, sizeof(*h));
}

static size_t slot(const struct ps_htab *h, const void *key)
{
	size_t i = ps_hash_bytes(key, h->key_size) & (h->cap - 1);

	while (h->used[i] && memcmp(h->keys + i * h->key_size, key, h->key_size))
		i = (i + 1) & (h->cap - 1);
	return i;
}

void *ps_htab_get(const struct ps_htab *h, const void *key)
{
	size_t i = slot(h, key);

	return h->used[i] ? h->vals[i] : NULL;
}

static int grow(struct ps_htab *h)
{
	struct ps_htab n;

	memset(&n, 0, sizeof(n));
	n.key_size = h->key_size;
	n.cap = h->cap * 2;
	n.keys = calloc(n.cap, n.key_size);
	n.vals = calloc(n.cap, sizeof(void *));
	n.used = calloc(n.cap, 1);
	if (!n.keys || !n.vals || !n.used) {
		ps_htab_fini(&n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < h->cap; i++) {
		size_t j;

		if (!h->used[i])
			continue;
		j = slot(&n, h->keys + i * h->key_size);
		memcpy(n.keys + j * n.key_size, h->keys + i * h->key_size, n.key_size);
		n.vals[j] = h->vals[i];
		n.used[j] = 1;
		n.n++;
	}
	ps_htab_fini(h);
	*h = n;
	return 0;
}

int ps_htab_put(struct ps_htab *h, const void *key, void *val)
{
	size_t i;

	if ((h->n + 1) * 2 > h->cap && grow(h))
		return -ENOMEM;
	i = slot(h, key);
	if (!h->used[i]) {
		memcpy(h->keys + i * h->key_size, key, h->key_size);
		h->used[i] = 1;
		h->n++;
	}
	h->vals[i] = val;
	return 0;
}

void ps_htab_clear(struct ps_htab *h)
{
	if (h->used)
		memset(h->used, 0, h->cap);
	h->n = 0;
}

int ps_array_reserve(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t nc = *cap ? *cap : 64;
	void *na;

	if (need <= *cap)
		return 0;
	while (nc < need) {
		if (nc > SIZE_MAX / 2 / size)
			return -ENOMEM;
		nc *= 2;
	}
	na = realloc(*arr, nc * size);
	if (!na)
		return -ENOMEM;
	*arr = na;
	*cap = nc;
	return 0;
}
