/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A hash table from (u64, u32) keys to u32 values below UINT32_MAX - 1: open addressing, linear
 * probing. A removed key keeps its slot, marked removed, until the table is rebuilt: a pool
 * address is freed and allocated again many times, and its next allocation then takes the slot
 * back where its lookups start, while a removal moves nothing. The table is rebuilt (removed
 * slots dropped, live keys at most half full) when live and removed slots fill three quarters,
 * so that a long conversion with millions of alloc/free pairs does not degrade. The converters
 * key live allocations by (address, session), tags by (tag, pool), stacks by (hash, tag), stack
 * keys and processes by id.
 */
#ifndef PS_ETW_KMAP_H
#define PS_ETW_KMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ps_kmap_slot {
	uint64_t a;
	uint32_t b;
	uint32_t v;		/* value + 1; 0 = empty; UINT32_MAX = removed */
};

struct ps_kmap {
	struct ps_kmap_slot *s;
	size_t n, ndead, cap;	/* live keys, removed slots; cap is a power of two */
};

/* Value for (a, b) into *v; false when absent. */
bool ps_kmap_get(const struct ps_kmap *m, uint64_t a, uint32_t b, uint32_t *v);
/* Inserts or replaces. 0 or -ENOMEM. */
int ps_kmap_put(struct ps_kmap *m, uint64_t a, uint32_t b, uint32_t v);
/*
 * Inserts or replaces in one probe: 1 when (a, b) held a value (then in *old, when not NULL),
 * 0 when inserted, -ENOMEM.
 */
int ps_kmap_swap(struct ps_kmap *m, uint64_t a, uint32_t b, uint32_t v, uint32_t *old);
/* Removes; false when absent. */
bool ps_kmap_del(struct ps_kmap *m, uint64_t a, uint32_t b);
/* Removes and returns the value in one probe (v may be NULL); false when absent. */
bool ps_kmap_take(struct ps_kmap *m, uint64_t a, uint32_t b, uint32_t *v);
void ps_kmap_free(struct ps_kmap *m);
/* Starts loading the slot (a, b) hashes to, for a lookup soon after. */
void ps_kmap_prefetch(const struct ps_kmap *m, uint64_t a, uint32_t b);

#endif
