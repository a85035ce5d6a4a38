// SPDX-License-Identifier: GPL-2.0
/*
 * The verdict's rule for one series (analysis/verdict.h) on shapes with a known answer: a
 * steady leak, a leak in bursts, a step in the middle and at the end, a pool that fills, noise,
 * random walks, a leak too short or too slow or without a counter; and the memory domain of
 * tags (userspace/lib/trace/domain.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "analysis/verdict.h"

#define N 31
#define KiB 1024.0

#define TEST_RNG_SEED 0x9e3779b97f4a7c15ULL
#include "rand.h"

static double t[N], y[N];

static enum ps_vstate state(bool confirmed, struct ps_vstat *st)
{
	for (int i = 0; i < N; i++)
		t[i] = i;
	if (ps_vstat_series(t, y, N, PS_V_MIN_RATE, confirmed, st))
		return (enum ps_vstate)-1;
	return st->state;
}

/* 1 MiB/min for 30 s, the smallest leak the floors promise to call, with allocator noise. */
TEST(steady_leak_at_the_promised_floor)
{
	struct ps_vstat st;

	for (int i = 0; i < N; i++)
		y[i] = 10e6 + i * (1048576 / 60.0) + 8 * KiB * normal();
	ASSERT_EQ(state(true, &st), PS_V_LEAK, "leak");
	ASSERT_TRUE(st.p < 0.001, "significant");
	ASSERT_NEAR(st.rate, 1048576 / 60.0, 2 * KiB, "Theil-Sen rate");
	ASSERT_EQ(state(false, &st), PS_V_GROWING, "without a counter: growing");
	ASSERT_STREQ(st.why, "no counter confirms it", "says why");
}

/* Bursts and pauses, never giving back: the autocorrelation correction must not hide it. */
TEST(bursty_leak)
{
	struct ps_vstat st;
	double v = 0;

	for (int i = 0; i < N; i++) {
		v += (i % 6 < 2) ? 150 * KiB : 2 * KiB;
		y[i] = v;
	}
	ASSERT_EQ(state(true, &st), PS_V_LEAK, "leak");
}

/*
 * A steady leak with a burst of in-flight memory two thirds of the way in: 4.4 MiB queued for
 * two intervals, half of it for a third, then freed (a loopback exchange that stalled). The
 * burst is not growth: it must neither bend the fit into "grew, then stopped" nor be the growth
 * that "came at once". The same burst held to the end is growth that came at once.
 */
TEST(burst_in_a_leak_is_not_a_stop)
{
	struct ps_vstat st;

	for (int i = 0; i < N; i++)
		y[i] = i * 35 * KiB + 4 * KiB * normal() +
		       (i == 20 || i == 21 ? 4400 * KiB : i == 22 ? 2200 * KiB : 0);
	ASSERT_EQ(state(true, &st), PS_V_LEAK, "leak");
	ASSERT_TRUE(st.late_rate >= 0.5 * st.rate, "the last piece rises with the rest");
	for (int i = 0; i < N; i++)
		y[i] = i * 35 * KiB + 4 * KiB * normal() + (i >= 20 ? 4400 * KiB : 0);
	ASSERT_EQ(state(true, &st), PS_V_GROWING, "a step that holds: not a leak");
	ASSERT_STREQ(st.why, "most of it came at once", "says why");
}

/* 1 MiB allocated in the second interval, then 13 KiB/s: the step stays an event, not a leak. */
TEST(step_at_the_start_is_not_a_leak)
{
	struct ps_vstat st;

	for (int i = 0; i < N; i++)
		y[i] = (i >= 1 ? 1024 * KiB : 0) + i * 13 * KiB + 2 * KiB * normal();
	ASSERT_TRUE(state(true, &st) != PS_V_LEAK, "not a leak");
}

TEST(step_in_the_middle_is_a_plateau)
{
	struct ps_vstat st;

	for (int i = 0; i < N; i++)
		y[i] = (i >= 15 ? 4e6 : 0) + 4 * KiB * normal();
	ASSERT_EQ(state(true, &st), PS_V_PLATEAU, "plateau");
}

/*
 * A step late in the window (another program loading 60 MiB of maps at 71% of a minute), flat
 * after it, over noise and short spikes of in-flight memory in a tenth of the intervals: the
 * continuous two-piece fit bends through the step, and then through a spike; a plateau all the
 * same, every time. The same step inside a steady leak is still a leak.
 */
TEST(late_step_then_flat_is_a_plateau)
{
	double tt[62], yy[62];
	struct ps_vstat st;
	int plateaus = 0;

	for (int i = 0; i < 62; i++)
		tt[i] = i;
	for (int run = 0; run < 200; run++) {
		for (int i = 0; i < 62; i++)
			yy[i] = (i >= 44 ? 60e6 : 0) + 16 * KiB * normal() +
				(uniform() < 0.1 ? 8e6 : 0);
		if (!ps_vstat_series(tt, yy, 62, PS_V_MIN_RATE, true, &st))
			plateaus += st.state == PS_V_PLATEAU;
	}
	ASSERT_EQ(plateaus, 200, "plateau in every run");
	for (int i = 0; i < N; i++)
		y[i] = (i >= 12 ? 2e6 : 0) + i * 100 * KiB + 8 * KiB * normal();
	ASSERT_EQ(state(true, &st), PS_V_LEAK, "a step inside a steady leak");
}

/* A program loading its maps in the last interval: not a leak, whatever the rest does. */
TEST(step_at_the_end_is_not_a_leak)
{
	struct ps_vstat st;

	for (int i = 0; i < N; i++)
		y[i] = i * 20 * KiB + (i == N - 1 ? 50e6 : 0);
	ASSERT_EQ(state(true, &st), PS_V_GROWING, "growing");
	ASSERT_STREQ(st.why, "most of it came at once", "says why");
}

/* QD16's buffers: grows for 10 s, then holds. */
TEST(pool_that_fills)
{
	struct ps_vstat st;

	for (int i = 0; i < N; i++)
		y[i] = (i < 10 ? i : 10) * 200 * KiB + 2 * KiB * normal();
	ASSERT_EQ(state(true, &st), PS_V_PLATEAU, "plateau");
}

TEST(too_slow_or_too_short)
{
	struct ps_vstat st;

	for (int i = 0; i < N; i++)
		y[i] = i * 6 * KiB;	/* 6 KiB/s: under the floor */
	ASSERT_EQ(state(true, &st), PS_V_STABLE, "under the floor");
	for (int i = 0; i < N; i++)
		t[i] = i * 0.5;
	for (int i = 0; i < N; i++)
		y[i] = i * 100 * KiB;
	ASSERT_OK(ps_vstat_series(t, y, N, PS_V_MIN_RATE, true, &st), "fit");
	ASSERT_EQ(st.state, PS_V_GROWING, "15 s is too short");
	ASSERT_STREQ(st.why, "window too short", "says why");
}

/*
 * Noise and random walks of in-flight memory (steps of 64 KiB a second, far above the floors)
 * must almost never be called leaks, confirmed or not: at most 1 in 100 here.
 */
TEST(random_walks_are_not_leaks)
{
	struct ps_vstat st;
	int leaks = 0, white = 0;

	for (int run = 0; run < 400; run++) {
		double v = 0;

		for (int i = 0; i < N; i++) {
			v += 64 * KiB * normal();
			y[i] = v;
		}
		leaks += state(true, &st) == PS_V_LEAK;
		for (int i = 0; i < N; i++)
			y[i] = 512 * KiB * normal();
		white += state(true, &st) == PS_V_LEAK;
	}
	printf("# random walks called leaks: %d of 400; white noise: %d of 400\n", leaks, white);
	ASSERT_TRUE(leaks <= 4, "random walks");
	ASSERT_EQ(white, 0, "white noise");
}

/*
 * A leak seen through a 1-in-16 sample: 35 KiB/s as steps of 64 KiB (a step in 35 of 64
 * seconds) with +-8 KiB of noise between. The rises are few and large, the falls many and
 * small: a test of the changes' signs alone ("rises and falls alike") missed one in four of
 * these; the signed-rank test weighs the sizes.
 */
TEST(sampled_staircase_is_a_leak)
{
	struct ps_vstat st;
	int leaks = 0;

	for (int run = 0; run < 400; run++) {
		double v = 0;

		for (int i = 0; i < N; i++) {
			if (uniform() < 35.0 / 64.0)
				v += 64 * KiB;
			y[i] = v + 8 * KiB * normal();
		}
		leaks += state(true, &st) == PS_V_LEAK;
	}
	printf("# sampled staircases called leaks: %d of 400\n", leaks);
	ASSERT_TRUE(leaks >= 340, "at least 85 %");
}

TEST(domains)
{
	struct ps_tag g = { .kind = PS_KIND_PAGE, .name = "order-0" };

	g.site_sym = "do_anonymous_page+0x1ff";
	ASSERT_STREQ(ps_tag_domain(&g), PS_DOMAIN_USER, "anonymous fault");
	g.site_sym = "pte_alloc_one+0x19";
	ASSERT_STREQ(ps_tag_domain(&g), PS_DOMAIN_USER, "page table");
	g.site_sym = "page_cache_ra_unbounded+0x90";
	ASSERT_STREQ(ps_tag_domain(&g), PS_DOMAIN_RECLAIMABLE, "readahead");
	g.site_sym = "tcp_sendmsg_locked+0x247";
	ASSERT_STREQ(ps_tag_domain(&g), PS_DOMAIN_KERNEL, "socket data");
	g.domain = PS_DOMAIN_USER;
	ASSERT_STREQ(ps_tag_domain(&g), PS_DOMAIN_USER, "a stored domain wins");
	g.domain = "bogus";
	ASSERT_STREQ(ps_tag_domain(&g), PS_DOMAIN_KERNEL, "an unknown one is decided again");
	g = (struct ps_tag){ .kind = PS_KIND_SLAB, .name = "dentry", .flags = PS_TAG_F_RECLAIMABLE };
	ASSERT_STREQ(ps_tag_domain(&g), PS_DOMAIN_RECLAIMABLE, "reclaimable slab");
	g = (struct ps_tag){ .kind = PS_KIND_POOL, .name = "LSbf", .pool = PS_POOL_NONPAGED };
	ASSERT_STREQ(ps_tag_domain(&g), PS_DOMAIN_KERNEL, "non-paged pool");
	g.flags = PS_TAG_F_RECLAIMABLE;
	ASSERT_STREQ(ps_tag_domain(&g), PS_DOMAIN_RECLAIMABLE, "paged pool");
}
