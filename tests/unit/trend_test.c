// SPDX-License-Identifier: GPL-2.0
/*
 * Trend statistics (analysis/trend.c): Theil-Sen against lines with outliers, Mann-Kendall's
 * S, variance and p-value against values worked by hand, its false-positive rate on independent
 * and on autocorrelated noise (the reason for the Yue-Wang correction), the IOs as a second
 * clock for a leak per IO, and the two-segment fit on growth that stops.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "test.h"
#include "analysis/trend.h"

#define TEST_RNG_SEED 88172645463325252ULL
#include "rand.h"

TEST(theil_sen_line_and_outliers)
{
	double x[40], y[40];
	struct ps_trend t;

	for (int i = 0; i < 40; i++) {
		x[i] = i;
		y[i] = 5 + 3.0 * i;
	}
	if (!ASSERT_OK(ps_trend_fit(x, y, 40, &t), "fit"))
		return;
	ASSERT_NEAR(t.slope, 3, 1e-9, "slope of a line");
	ASSERT_NEAR(t.intercept, 5, 1e-9, "intercept");
	/* three wild points, as a burst of in-flight buffers would make */
	y[7] += 1e6;
	y[21] -= 1e6;
	y[33] += 5e5;
	if (!ASSERT_OK(ps_trend_fit(x, y, 40, &t), "fit with outliers"))
		return;
	ASSERT_NEAR(t.slope, 3, 0.2, "outliers barely move the slope");
}

TEST(mann_kendall_by_hand)
{
	double x[5] = { 0, 1, 2, 3, 4 }, y[5] = { 1, 2, 3, 4, 5 }, y2[5] = { 2, 1, 1, 3, 2 };
	struct ps_trend t;

	if (!ASSERT_OK(ps_trend_fit(x, y, 5, &t), "fit"))
		return;
	/* S = 10, Var = 5 * 4 * 15 / 18, z = 9 / sqrt(Var) */
	ASSERT_NEAR(t.s, 10, 1e-12, "S");
	ASSERT_NEAR(t.var_s, 50.0 / 3, 1e-9, "Var(S)");
	ASSERT_NEAR(t.z, 9 / sqrt(50.0 / 3), 1e-9, "z");
	ASSERT_NEAR(t.p_two, 0.027486, 1e-5, "two-sided p");
	ASSERT_NEAR(t.p_up, 0.013743, 1e-5, "one-sided p");
	/*
	 * pairs of 2 1 1 3 2: (2,1)- (2,1)- (2,3)+ (2,2)0 (1,1)0 (1,3)+ (1,2)+ (1,3)+ (1,2)+
	 * (3,2)- : S = 5 - 3 = 2. Ties: two groups of two: 2 * (2 * 1 * 9) = 36, so
	 * Var = (300 - 36) / 18 (no significant autocorrelation in five points).
	 */
	if (!ASSERT_OK(ps_trend_fit(x, y2, 5, &t), "fit with ties"))
		return;
	ASSERT_NEAR(t.s, 2, 1e-12, "S with ties");
	ASSERT_NEAR(t.var_s, 264.0 / 18, 1e-9, "Var(S) with ties");
}

TEST(bad_input)
{
	double x[3] = { 0, 1, 1 }, y[3] = { 1, 2, 3 };
	struct ps_trend t;
	struct ps_segments sg;

	ASSERT_EQ(ps_trend_fit(x, y, 2, &t), -EINVAL, "two points");
	ASSERT_EQ(ps_trend_fit(x, y, 3, &t), -EINVAL, "x not increasing");
	ASSERT_EQ(ps_segments_fit(x, y, 3, 2, &sg), -EINVAL, "too short for two segments");
}

/* Share of n-point noise series that the test calls increasing at 5%. */
static double false_positive_rate(double phi, int series, int n)
{
	double x[200], y[200];
	int hits = 0;

	for (int k = 0; k < series; k++) {
		double e = normal();
		struct ps_trend t;

		for (int i = 0; i < n; i++) {
			e = phi * e + sqrt(1 - phi * phi) * normal();
			x[i] = i;
			y[i] = 1e6 + 4096 * e;
		}
		if (ps_trend_fit(x, y, n, &t))
			return -1;
		hits += t.p_up < 0.05;
	}
	return (double)hits / series;
}

TEST(noise_is_no_trend)
{
	double white = false_positive_rate(0, 400, 60);
	double ar = false_positive_rate(0.8, 400, 60);

	fprintf(stderr, "false positives at 5%%: white noise %.3f, AR(1) 0.8 noise %.3f\n", white, ar);
	ASSERT_TRUE(white >= 0 && white <= 0.09, "independent noise: near the nominal 5%");
	/*
	 * The uncorrected test calls a quarter of these increasing. A lag-1 estimate from 60
	 * points is biased low, so the corrected rate stays above 5%; it must at least halve.
	 */
	ASSERT_TRUE(ar >= 0 && ar <= 0.125, "autocorrelated noise: corrected variance");
}

TEST(trend_in_noise_is_found)
{
	double x[60], y[60];
	struct ps_trend t;
	double e = 0;

	/* 1 KiB/s against noise of 4 KiB (autocorrelated) over a minute */
	for (int i = 0; i < 60; i++) {
		e = 0.8 * e + 0.6 * normal();
		x[i] = i;
		y[i] = 1e6 + 1024.0 * i + 4096 * e;
	}
	if (!ASSERT_OK(ps_trend_fit(x, y, 60, &t), "fit"))
		return;
	ASSERT_TRUE(t.p_up < 1e-3, "a steady leak is significant");
	ASSERT_NEAR(t.slope, 1024, 400, "its rate");
}

/*
 * Memory leaked per IO by a workload whose rate drifts (10000 IOPS +-30 %, a slow wave) over a
 * minute, with one object's worth of jitter: around the line in time its residuals follow the
 * wave, and the correction calls the trend unclear; with the IOs as the clock they are the
 * jitter. A line in time beside the same IOs keeps the time clock: its line fits better.
 */
TEST(leak_per_io_with_the_io_clock)
{
	double x[61], io[61], y[61], line[61];
	struct ps_trend t;

	for (int i = 0; i < 61; i++) {
		double jitter = (i % 3 - 1) * 256.0;

		x[i] = i;
		io[i] = i ? io[i - 1] + 10000 * (1 + 0.3 * sin(2 * M_PI * i / 45)) : 0;
		y[i] = 4e6 + 7.3 * io[i] + jitter;
		line[i] = 4e6 + 73000.0 * i + jitter;
	}
	if (!ASSERT_OK(ps_trend_fit(x, y, 61, &t), "fit by time"))
		return;
	ASSERT_TRUE(t.p_up > 1e-3 && t.inflation > 10, "by time: the wave reads as noise");
	ASSERT_FALSE(t.by_io, "no clock given");
	if (!ASSERT_OK(ps_trend_fit_io(x, io, y, 61, &t), "fit with the clock"))
		return;
	ASSERT_TRUE(t.by_io && t.p_up < 1e-6, "by the IOs: a clear trend");
	ASSERT_NEAR(t.slope, 73000, 25000, "the rate stays per second");
	ASSERT_NEAR(t.slope_io, 7.3, 0.01, "and the slope per IO is the leak's");
	if (!ASSERT_OK(ps_trend_fit_io(x, io, line, 61, &t), "a line in time"))
		return;
	ASSERT_FALSE(t.by_io, "a line in time keeps the time clock");
	ASSERT_TRUE(t.slope_io == 0, "and has no slope per IO");
	ASSERT_TRUE(t.p_up < 1e-6, "and its clear trend");
	/* a clock that does not advance (no IOs) is no clock */
	for (int i = 0; i < 61; i++)
		io[i] = 0;
	if (!ASSERT_OK(ps_trend_fit_io(x, io, y, 61, &t), "a stopped clock"))
		return;
	ASSERT_FALSE(t.by_io, "a stopped clock is not used");
}

TEST(long_series_are_reduced)
{
	static double x[20000], y[20000];
	struct ps_trend t;

	for (int i = 0; i < 20000; i++) {
		x[i] = i * 0.5;
		y[i] = 7 - 2.0 * x[i];
	}
	if (!ASSERT_OK(ps_trend_fit(x, y, 20000, &t), "fit"))
		return;
	ASSERT_EQ(t.n, PS_TREND_MAX_POINTS, "reduced");
	ASSERT_NEAR(t.slope, -2, 1e-9, "slope kept");
	ASSERT_TRUE(t.p_two < 1e-10 && t.p_up > 0.99, "decreasing");
}

TEST(segments_growth_that_stops)
{
	double x[60], y[60];
	struct ps_segments sg;

	for (int i = 0; i < 60; i++) {
		x[i] = i;
		y[i] = 2.0 * (i < 20 ? i : 20) + 0.01 * normal();
	}
	if (!ASSERT_OK(ps_segments_fit(x, y, 60, 3, &sg), "fit"))
		return;
	ASSERT_TRUE(sg.brk >= 19 && sg.brk <= 21, "break where growth stops");
	ASSERT_NEAR(sg.slope1, 2, 0.01, "slope before");
	ASSERT_NEAR(sg.slope2, 0, 0.01, "slope after");
	ASSERT_TRUE(sg.sse2 < sg.sse1 / 100, "two pieces fit far better than one");

	/* a straight line: the break buys nothing */
	for (int i = 0; i < 60; i++)
		y[i] = 3.0 * i;
	if (!ASSERT_OK(ps_segments_fit(x, y, 60, 3, &sg), "fit a line"))
		return;
	ASSERT_NEAR(sg.slope1, 3, 1e-6, "line before");
	ASSERT_NEAR(sg.slope2, 3, 1e-6, "line after");
}

/*
 * The signed-rank test by hand: changes +1 +2 +3 -4 (ranks 1 2 3 4), W+ = 6 against a mean of
 * 5 and a variance of 7.5: z = (6 - 5 - 0.5) / sqrt(7.5), p = 0.4276. Tied sizes share their
 * average rank and lower the variance; unchanged intervals are left out; no change at all is
 * p = 1. The sizes count: ten rises of 10 and ten falls of 1 are a rise (p = 0.029), where
 * the signs alone (10 of 20) say nothing.
 */
TEST(signed_rank_by_hand)
{
	const double a[] = { 0, 1, 3, 6, 2 }, b[] = { 5, 5, 5 };
	const double d[] = { 0, 1, 1, 0, 1, 1, 2 };
	double c[21] = { 0 }, p;

	for (int i = 1; i < 21; i++)
		c[i] = c[i - 1] + (i % 2 ? 10 : -1);

	ASSERT_OK(ps_signed_rank(a, 5, &p), "a");
	ASSERT_NEAR(p, 0.5 * erfc(0.5 / sqrt(7.5) / sqrt(2.0)), 1e-12, "W+ = 6 of 10");
	ASSERT_OK(ps_signed_rank(b, 3, &p), "b");
	ASSERT_NEAR(p, 1.0, 0, "nothing changed");
	ASSERT_OK(ps_signed_rank(c, 21, &p), "c");
	/* W+ = 11 + ... + 20 = 155, mean 105, var 717.5 - 2 x (1000 - 10) / 48 */
	ASSERT_NEAR(p, 0.5 * erfc((155 - 105 - 0.5) / sqrt(717.5 - 41.25) / sqrt(2.0)), 1e-12,
		    "large rises, small falls");
	ASSERT_TRUE(p < 0.05, "a rise");
	/* changes +1 0 -1 +1 0 +1: four of size 1 (rank 2.5 each), three up: W+ = 7.5,
	 * var = 4*5*9/24 - (64 - 4)/48 = 6.25 */
	ASSERT_OK(ps_signed_rank(d, 7, &p), "d");
	ASSERT_NEAR(p, 0.5 * erfc((7.5 - 5 - 0.5) / 2.5 / sqrt(2.0)), 1e-12, "ties");
}
