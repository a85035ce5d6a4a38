/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small open-addressing hash table with fixed-size byte keys, for the recorder's mirrors of
 * BPF maps (BPF tag key -> userspace tag, class -> name). Values are caller-owned pointers.
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
int ps_htab_put(struct ps_htab *h, const void *key, void *val);
uint64_t ps_hash_bytes(const void *p, size_t len);

#endif
