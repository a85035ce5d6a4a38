/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recorder's containers: a small open-addressing hash table with fixed-size byte keys, for
 * its mirrors of BPF maps (BPF tag key -> userspace tag, class -> name; values are caller-owned
 * pointers), and a growable array for what it reads each interval.
 */
#ifndef PS_KMEM_HTAB_H
#define PS_KMEM_HTAB_H

#include <stddef.h>
#include <stdint.h>

struct ps_htab {
	size_t key_size;
	size_t cap;		/* power of two */
	size_t n;
	unsigned char *keys;
	void **vals;
	unsigned char *used;
};

int ps_htab_init(struct ps_htab *h, size_t key_size);
void ps_htab_fini(struct ps_htab *h);
void *ps_htab_get(const struct ps_htab *h, const void *key);
/* Adds key or replaces its value; -ENOMEM (the table is unchanged then). */
int ps_htab_put(struct ps_htab *h, const void *key, void *val);
/* Forgets every key and keeps the memory (for a table refilled at every interval). */
void ps_htab_clear(struct ps_htab *h);
/* FNV-1a, 64 bits. */
uint64_t ps_hash_bytes(const void *p, size_t len);

/*
 * Makes room in *arr (elements of size bytes, *cap of them allocated) for at least need
 * elements, growing it by doubling; 0 or -ENOMEM (then *arr and *cap are unchanged).
 */
int ps_array_reserve(void **arr, size_t *cap, size_t need, size_t size);

#endif
