// SPDX-License-Identifier: GPL-2.0
/*
 * verdict_sim [RUNS]: how often the verdict's rule (analysis/verdict.c) calls simulated 31-point
 * windows (1 s intervals) a leak, for the figures docs/analysis.md quotes: series that must not be
 * leaks (random walks of in-flight memory, AR(1) noise) and leaks as sampled tags show them
 * (staircases of 64 KiB steps, one with a burst of in-flight memory). Then the same with the
 * IOs of a workload whose rate drifts as a second clock (ps_vstat_series_io): the series that
 * must not be leaks, in-flight memory that follows the IO rate, and a leak of so many bytes per
 * IO, judged with and without the clock. Deterministic: fixed xorshift seeds, the clock's
 * scenarios on a generator of their own. `make verdict-sim`.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/verdict.h"

#define N	31
#define KiB	1024.0

static unsigned long long rng = 0x12345678;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static double normal(void)
{
	double a = uniform(), b = uniform();

	return sqrt(-2 * log(a < 1e-12 ? 1e-12 : a)) * cos(2 * M_PI * b);
}

static double t[N], y[N], io[N];

static int leak(void)
{
	struct ps_vstat st;

	return !ps_vstat_series(t, y, N, PS_V_MIN_RATE, true, &st) && st.state == PS_V_LEAK;
}

static int leak_io(void)
{
	struct ps_vstat st;

	return !ps_vstat_series_io(t, io, y, N, PS_V_MIN_RATE, true, &st) && st.state == PS_V_LEAK;
}

/*
 * The clock's scenarios, one window each: the IO rate drifts around 10000 a second (AR(1) of
 * its logarithm, rho 0.9, sd 0.15: 7000 to 14000 within a window, as a busy machine's SMB load
 * does). res[]: walk, steps, AR(1), in flight, leak per IO judged by time alone, with the clock,
 * and the walk by time alone; then walks whose steps follow the IO rate (64 KiB a second at
 * 10000 IOPS) where the rate changes hard: x4 or /4 at a random point (load steps), and to 0 at
 * a random point (the load ends in the window), each by time alone and with the clock.
 */
static void with_clock(int *res)
{
	double lg = 0, v = 0, a = 0, rate[N];

	for (int i = 0; i < N; i++) {
		lg = 0.9 * lg + 0.15 * sqrt(1 - 0.81) * normal();
		rate[i] = 10000 * exp(lg);
		io[i] = i ? io[i - 1] + rate[i] : 0;
	}
	for (int i = 0; i < N; i++)
		y[i] = v += 64 * KiB * normal();
	res[0] += leak_io();
	res[6] += leak();
	v = 0;
	for (int i = 0; i < N; i++) {
		double q = uniform();

		y[i] = v += q < 0.3 ? 64 * KiB : q < 0.6 ? -64 * KiB : 0;
	}
	res[1] += leak_io();
	for (int i = 0; i < N; i++)
		y[i] = a = 0.9 * a + 512 * KiB * sqrt(1 - 0.81) * normal();
	res[2] += leak_io();
	for (int i = 0; i < N; i++)	/* 2 MiB in flight at 10000 IOPS, +-8 KiB */
		y[i] = 2048 * KiB * rate[i] / 10000 + 8 * KiB * normal();
	res[3] += leak_io();
	for (int i = 0; i < N; i++)	/* 35 KiB/s at 10000 IOPS, by the IO, +-1 KiB: exact counters */
		y[i] = 35 * KiB / 10000 * io[i] + KiB * normal();
	res[4] += leak();
	res[5] += leak_io();
	for (int k = 0; k < 2; k++) {
		int at = 3 + (int)(uniform() * (N - 6));
		double f = uniform() < 0.5 ? 4 : 0.25;

		v = 0;
		for (int i = 0; i < N; i++) {
			double r = i < at ? 10000 : k ? 0 : 10000 * f;

			io[i] = i ? io[i - 1] + r : 0;
			y[i] = v += 64 * KiB * sqrt(r / 10000) * normal();
		}
		res[7 + 2 * k] += leak();
		res[8 + 2 * k] += leak_io();
	}
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 20000, walk = 0, steps = 0, ar = 0, stair = 0, drops = 0;
	int burst = 0, clk[11] = { 0 };
	unsigned long long rng_clock = 0x9E3779B97F4A7C15ull, keep;

	if (runs <= 0) {
		fprintf(stderr, "usage: verdict_sim [RUNS > 0]\n");
		return 2;
	}
	for (int i = 0; i < N; i++)
		t[i] = i;
	for (int r = 0; r < runs; r++) {
		double v = 0, a = 0;

		for (int i = 0; i < N; i++)	/* random walk, 64 KiB a second */
			y[i] = v += 64 * KiB * normal();
		walk += leak();
		v = 0;
		for (int i = 0; i < N; i++) {	/* +-64 KiB or nothing, 3 in 10 each */
			double q = uniform();

			y[i] = v += q < 0.3 ? 64 * KiB : q < 0.6 ? -64 * KiB : 0;
		}
		steps += leak();
		for (int i = 0; i < N; i++)	/* AR(1), rho 0.9, sd 512 KiB */
			y[i] = a = 0.9 * a + 512 * KiB * sqrt(1 - 0.81) * normal();
		ar += leak();
		v = 0;
		for (int i = 0; i < N; i++) {	/* 35 KiB/s in 64 KiB sampled steps, +-8 KiB noise */
			if (uniform() < 35.0 / 64)
				v += 64 * KiB;
			y[i] = v + 8 * KiB * normal();
		}
		stair += leak();
		v = 0;
		for (int i = 0; i < N; i++) {	/* 32 KiB/s, 192 KiB given back at 5 % a second */
			if (uniform() < 0.5)
				v += 64 * KiB;
			if (uniform() < 0.05)
				v -= 192 * KiB;
			y[i] = v + 4 * KiB * normal();
		}
		drops += leak();
		v = 0;
		a = 3 + (int)(uniform() * (N - 6));	/* 35 KiB/s, a 2 MiB burst held 3 s */
		for (int i = 0; i < N; i++) {
			if (uniform() < 35.0 / 64)
				v += 64 * KiB;
			y[i] = v + 8 * KiB * normal() + (i >= a && i < a + 3 ? 2048 * KiB : 0);
		}
		burst += leak();
		keep = rng;
		rng = rng_clock;
		with_clock(clk);
		rng_clock = rng;
		rng = keep;
	}
	printf("%d windows of %d s each, called leaks:\n", runs, N - 1);
	printf("  must not be:  random walk 64 KiB/s %.2f %%, +-64 KiB steps %.2f %%, AR(1) 0.9 %.2f %%\n",
	       100.0 * walk / runs, 100.0 * steps / runs, 100.0 * ar / runs);
	printf("  leaks:        35 KiB/s staircase %.1f %%, "
	       "32 KiB/s staircase with 192 KiB drops %.1f %%,\n"
	       "                35 KiB/s staircase with a 2 MiB burst held 3 s %.1f %%\n",
	       100.0 * stair / runs, 100.0 * drops / runs, 100.0 * burst / runs);
	printf("with the IOs of a workload at 7000-14000 IOPS as a second clock:\n");
	printf("  must not be:  random walk %.2f %% (%.2f %% by time alone), +-64 KiB steps %.2f %%,\n"
	       "                AR(1) 0.9 %.2f %%, 2 MiB in flight following the IO rate %.2f %%\n",
	       100.0 * clk[0] / runs, 100.0 * clk[6] / runs, 100.0 * clk[1] / runs,
	       100.0 * clk[2] / runs, 100.0 * clk[3] / runs);
	printf("                walks following the IO rate: rate x4 or /4 at a random point %.2f %%\n"
	       "                (%.2f %% by time alone), load ending at a random point %.2f %% (%.2f %%)\n",
	       100.0 * clk[8] / runs, 100.0 * clk[7] / runs, 100.0 * clk[10] / runs,
	       100.0 * clk[9] / runs);
	printf("  leak:         35 KiB/s by the IO, +-1 KiB: %.1f %% without the clock, %.1f %% with\n",
	       100.0 * clk[4] / runs, 100.0 * clk[5] / runs);
	return 0;
}
