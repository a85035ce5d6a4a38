// SPDX-License-Identifier: GPL-2.0
/*
 * The recorder's containers (userspace/lib/kmem/htab.h): FNV-1a against its published test
 * vectors, the hash table through several doublings (every key still found, values replaced in
 * place, absent keys absent), clearing for reuse, and the growable array's reserve.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "test.h"
#include "userspace/lib/kmem/htab.h"

TEST(fnv1a_vectors)
{
	ASSERT_U64_EQ(ps_hash_bytes("", 0), 0xcbf29ce484222325ull, "empty");
	ASSERT_U64_EQ(ps_hash_bytes("a", 1), 0xaf63dc4c8601ec8cull, "a");
	ASSERT_U64_EQ(ps_hash_bytes("foobar", 6), 0x85944171f73967e8ull, "foobar");
}

/* A value that says which key it was stored under. */
static void *val_of(uint64_t k)
{
	return (void *)(uintptr_t)(k * 7 + 1);
}

TEST(put_get_through_growth)
{
	struct ps_htab h;
	size_t n = 5000, missing = 0, wrong = 0;

	if (!ASSERT_OK(ps_htab_init(&h, sizeof(uint64_t)), "init"))
		return;
	ASSERT_EQ(h.cap, 1024, "initial capacity");
	/* Keys 16 apart, as kmem_cache pointers are: the low bits say nothing. */
	for (uint64_t i = 0; i < n; i++) {
		uint64_t k = 0xffff888000000000ull + i * 16;

		if (!ASSERT_OK(ps_htab_put(&h, &k, val_of(k)), "put"))
			goto out;
	}
	ASSERT_EQ(h.n, n, "count");
	ASSERT_TRUE(h.cap >= 2 * n, "grown to at most half full");
	for (uint64_t i = 0; i < n; i++) {
		uint64_t k = 0xffff888000000000ull + i * 16;
		void *v = ps_htab_get(&h, &k);

		missing += !v;
		wrong += v && v != val_of(k);
	}
	ASSERT_EQ(missing, 0, "every key found after growth");
	ASSERT_EQ(wrong, 0, "every value the one put");
	{
		uint64_t absent = 0xffff888000000000ull + 8, k = 0xffff888000000000ull;

		ASSERT_TRUE(ps_htab_get(&h, &absent) == NULL, "absent key");
		ASSERT_OK(ps_htab_put(&h, &k, (void *)(uintptr_t)42), "replace");
		ASSERT_TRUE(ps_htab_get(&h, &k) == (void *)(uintptr_t)42, "replaced value");
		ASSERT_EQ(h.n, n, "a replace adds no key");
	}
out:
	ps_htab_fini(&h);
}

/* Byte keys with padding, as the recorder's 24-byte BPF tag keys are: all bytes count. */
TEST(struct_keys)
{
	struct key {
		uint64_t cls, site;
		uint8_t kind, ctx, pad[6];
	} a = { 1, 2, 3, 0, { 0 } }, b = a, c = a;
	struct ps_htab h;

	if (!ASSERT_OK(ps_htab_init(&h, sizeof(struct key)), "init"))
		return;
	b.ctx = 1;
	ASSERT_OK(ps_htab_put(&h, &a, val_of(1)), "put a");
	ASSERT_OK(ps_htab_put(&h, &b, val_of(2)), "put b");
	ASSERT_TRUE(ps_htab_get(&h, &c) == val_of(1), "equal key finds a");
	ASSERT_TRUE(ps_htab_get(&h, &b) == val_of(2), "b differs in one byte");
	ASSERT_EQ(h.n, 2, "two keys");
	ps_htab_fini(&h);
}

TEST(clear_for_reuse)
{
	struct ps_htab h, zero = {};
	int32_t k;
	size_t cap;

	ps_htab_clear(&zero);	/* never initialised: no crash */
	ASSERT_EQ(zero.n, 0, "zero table");
	if (!ASSERT_OK(ps_htab_init(&h, sizeof(k)), "init"))
		return;
	for (k = -1000; k < 1000; k++)
		ps_htab_put(&h, &k, val_of((uint64_t)(k + 1000)));
	cap = h.cap;
	ps_htab_clear(&h);
	ASSERT_EQ(h.n, 0, "no keys after clear");
	ASSERT_EQ(h.cap, cap, "memory kept");
	k = 5;
	ASSERT_TRUE(ps_htab_get(&h, &k) == NULL, "old key gone");
	ASSERT_OK(ps_htab_put(&h, &k, val_of(9)), "put after clear");
	ASSERT_TRUE(ps_htab_get(&h, &k) == val_of(9), "new value");
	ASSERT_EQ(h.n, 1, "one key");
	ps_htab_fini(&h);
	ASSERT_TRUE(h.keys == NULL && h.cap == 0, "fini leaves an empty table");
}

TEST(array_reserve)
{
	uint32_t *a = NULL;
	size_t cap = 0;

	ASSERT_OK(ps_array_reserve((void **)&a, &cap, 0, sizeof(*a)), "nothing needed");
	ASSERT_TRUE(a == NULL && cap == 0, "nothing allocated");
	if (!ASSERT_OK(ps_array_reserve((void **)&a, &cap, 1, sizeof(*a)), "first"))
		return;
	ASSERT_EQ(cap, 64, "first allocation");
	for (uint32_t i = 0; i < 64; i++)
		a[i] = i;
	if (!ASSERT_OK(ps_array_reserve((void **)&a, &cap, 65, sizeof(*a)), "grow"))
		goto out;
	ASSERT_EQ(cap, 128, "doubled");
	ASSERT_EQ(a[63], 63, "contents kept");
	ASSERT_OK(ps_array_reserve((void **)&a, &cap, 100, sizeof(*a)), "within capacity");
	ASSERT_EQ(cap, 128, "not grown when there is room");
	ASSERT_OK(ps_array_reserve((void **)&a, &cap, 1000, sizeof(*a)), "several doublings");
	ASSERT_EQ(cap, 1024, "power of two above need");
	{
		uint32_t *before = a;

		ASSERT_EQ(ps_array_reserve((void **)&a, &cap, SIZE_MAX / 2, sizeof(*a)), -ENOMEM,
			  "an impossible size");
		ASSERT_TRUE(a == before && cap == 1024, "unchanged after a failure");
	}
out:
	free(a);
}
