// SPDX-License-Identifier: GPL-2.0
/*
 * The converters' (u64, u32) -> u32 table (userspace/lib/etw/kmap.h) against a plain array of
 * what it should hold, over millions of random operations in the patterns a pool trace makes:
 * addresses freed and allocated again (their removed slots taken back), addresses never seen
 * again (removed slots piling up until a rebuild), sessions that tell equal addresses apart,
 * and lost frees (a key put twice). After every operation the answer must be the model's; at
 * checkpoints every key is looked up, the live count is exact and the table is neither full nor
 * grown past what its live keys need.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "userspace/lib/etw/kmap.h"

#define TEST_RNG_SEED 0x6b6d6170ull
#include "rand.h"

#define NKEYS 40000
#define ABSENT UINT32_MAX

/* The model: key i is (addr(i), sess(i)); val[i] its value or ABSENT. */
struct model {
	uint32_t val[NKEYS];
	size_t n, peak;		/* live keys now, and at most so far */
};

static uint64_t addr(uint32_t i, uint64_t base)
{
	return base + (uint64_t)i * 16;		/* pool entries are 16-byte aligned */
}

static uint32_t sess(uint32_t i)
{
	return i % 7 == 0 ? 1 : 0xffffffffu;	/* a few session-pool keys */
}

/*
 * Every key as the model has it; the count; at most three quarters full; and never grown past
 * four times the most keys live at once (it grows to keep them at most half full).
 */
static bool check_all(const struct ps_kmap *m, const struct model *d, uint64_t base,
		      const char *what)
{
	size_t wrong = 0;

	for (uint32_t i = 0; i < NKEYS; i++) {
		uint32_t v;
		bool got = ps_kmap_get(m, addr(i, base), sess(i), &v);

		wrong += got != (d->val[i] != ABSENT) || (got && v != d->val[i]);
	}
	return ASSERT_EQ(wrong, 0, what) && ASSERT_EQ(m->n, d->n, what) &&
	       ASSERT_TRUE((m->n + m->ndead) * 4 <= m->cap * 3, "at most three quarters full") &&
	       ASSERT_TRUE(m->cap <= 1024 || m->cap <= 4 * (d->peak + 1), "no larger than needed");
}

/*
 * ops random operations on keys below span (of NKEYS): put/swap, take, get, del. A small span
 * reuses every address many times; NKEYS with takes more frequent than puts leaves most
 * removed slots never taken back.
 */
static void run(uint32_t span, unsigned take_pct, unsigned long ops, uint64_t base,
		const char *what)
{
	struct ps_kmap m = { 0 };
	struct model *d = malloc(sizeof(*d));
	size_t wrong = 0;

	if (!ASSERT_NOT_NULL(d, "model"))
		return;
	memset(d->val, 0xff, sizeof(d->val));
	d->n = d->peak = 0;
	for (unsigned long k = 0; k < ops; k++) {
		uint32_t i = (uint32_t)(uniform() * span), v, old = 0;
		unsigned op = (unsigned)(uniform() * 100);
		uint64_t a = addr(i, base);

		if (op < take_pct) {
			bool got = ps_kmap_take(&m, a, sess(i), &v);

			wrong += got != (d->val[i] != ABSENT) || (got && v != d->val[i]);
			if (d->val[i] != ABSENT)
				d->n--;
			d->val[i] = ABSENT;
		} else if (op < take_pct + 10) {
			bool got = ps_kmap_get(&m, a, sess(i), &v);

			wrong += got != (d->val[i] != ABSENT) || (got && v != d->val[i]);
		} else if (op < take_pct + 15) {
			wrong += ps_kmap_del(&m, a, sess(i)) != (d->val[i] != ABSENT);
			if (d->val[i] != ABSENT)
				d->n--;
			d->val[i] = ABSENT;
		} else {
			uint32_t nv = (uint32_t)k;
			int r = ps_kmap_swap(&m, a, sess(i), nv, &old);

			if (!ASSERT_TRUE(r >= 0, "swap"))
				goto out;
			wrong += r != (d->val[i] != ABSENT) || (r == 1 && old != d->val[i]);
			if (d->val[i] == ABSENT && ++d->n > d->peak)
				d->peak = d->n;
			d->val[i] = nv;
		}
		if (k % (ops / 8) == ops / 8 - 1 && !check_all(&m, d, base, what))
			goto out;
	}
	ASSERT_EQ(wrong, 0, what);
	check_all(&m, d, base, what);
out:
	ps_kmap_free(&m);
	free(d);
}

TEST(addresses_reused)
{
	/* 2000 addresses, each freed and allocated again hundreds of times */
	run(2000, 40, 2000000, 0xffffa00000000000ull, "small span, reused");
}

TEST(addresses_left_behind)
{
	/* 40000 addresses, removals as frequent as insertions: removed slots pile up */
	run(NKEYS, 45, 2000000, 0xffffb00000000000ull, "wide span, left behind");
}

TEST(x86_addresses)
{
	run(NKEYS, 30, 1000000, 0x90000000ull, "32-bit addresses");
}

TEST(moving_window)
{
	/*
	 * Allocations that march through the address space, each freed a while later: every
	 * removed slot is left for good, so only rebuilds keep the table from filling.
	 */
	struct ps_kmap m = { 0 };
	const uint64_t base = 0xffffc00000000000ull, lag = 3000;
	size_t wrong = 0, maxcap = 0;

	for (uint64_t i = 0; i < 3000000; i++) {
		uint32_t v;

		if (!ASSERT_OK(ps_kmap_put(&m, base + i * 16, 0xffffffffu, (uint32_t)i), "put"))
			goto out;
		if (i >= lag)
			wrong += !ps_kmap_take(&m, base + (i - lag) * 16, 0xffffffffu, &v) ||
				 v != (uint32_t)(i - lag);
		if (m.cap > maxcap)
			maxcap = m.cap;
	}
	ASSERT_EQ(wrong, 0, "each taken with its value");
	ASSERT_EQ(m.n, lag, "the window is live");
	ASSERT_TRUE(maxcap <= 4 * lag * 2, "bounded by the window, not by the 3 M keys made");
	ASSERT_TRUE(!ps_kmap_get(&m, base, 0xffffffffu, &(uint32_t){ 0 }), "an old key is gone");
out:
	ps_kmap_free(&m);
}

TEST(replace_and_sessions)
{
	struct ps_kmap m = { 0 };
	uint32_t v = 0, old = 0;

	ASSERT_EQ(ps_kmap_swap(&m, 0x1000, 0xffffffffu, 5, &old), 0, "new key");
	ASSERT_EQ(ps_kmap_swap(&m, 0x1000, 2, 6, &old), 0, "same address, another session");
	ASSERT_EQ(ps_kmap_swap(&m, 0x1000, 0xffffffffu, 7, &old), 1, "a lost free: replaced");
	ASSERT_EQ(old, 5, "the value it held");
	ASSERT_TRUE(ps_kmap_take(&m, 0x1000, 2, &v) && v == 6, "the session's own");
	ASSERT_TRUE(!ps_kmap_take(&m, 0x1000, 2, &v), "taken once only");
	ASSERT_TRUE(ps_kmap_get(&m, 0x1000, 0xffffffffu, &v) && v == 7, "the other untouched");
	ASSERT_EQ(ps_kmap_swap(&m, 0x1000, 2, 8, &old), 0, "removed key put again: inserted");
	ASSERT_EQ(m.n, 2, "two live keys");
	ps_kmap_free(&m);
	ASSERT_TRUE(!ps_kmap_get(&m, 0x1000, 2, &v), "an empty table has nothing");
	ASSERT_TRUE(!ps_kmap_take(&m, 0x1000, 2, &v), "nor takes anything");
}
