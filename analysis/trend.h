/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trend statistics of one series y(x) (live bytes over time) that survive steps and outliers:
 *
 *   Theil-Sen slope      the median of the slopes between every pair of points. One step or a
 *                        few outliers move it little, where they drag a least-squares slope.
 *   Mann-Kendall test    S = sum over pairs i < j of sign(y_j - y_i); under "no trend" S is
 *                        near 0 with a known variance (ties corrected). Memory series are
 *                        autocorrelated (in-flight objects linger for several intervals), which
 *                        makes the plain test call trends in noise, so the variance is scaled
 *                        by the effective sample size of Yue and Wang (2004) for AR(1) noise,
 *                        from the lag-1 autocorrelation of the ranks of the detrended series.
 *                        With the IOs done as a second clock, detrended by the clock whose
 *                        line fits better: memory a workload leaks is a line in its IOs.
 *   Two segments         the best continuous two-piece line (a break at one of the points) and
 *                        its slopes before and after: growth that stops (a pool that filled,
 *                        QD16's in-flight buffers) has a flat second piece.
 *
 * Long series are first reduced to at most PS_TREND_MAX_POINTS points by averaging equal runs
 * of neighbours: a line stays a line under averaging, and the pair statistics are quadratic in n.
 * Everything here is pure and allocation-checked; nothing prints.
 */
#ifndef PS_ANALYSIS_TREND_H
#define PS_ANALYSIS_TREND_H

#include <stdbool.h>
#include <stddef.h>

#define PS_TREND_MAX_POINTS 512

struct ps_trend {
	size_t n;		/* points used (after reduction) */
	double slope;		/* Theil-Sen, y units per x unit */
	double intercept;	/* median of y - slope x */
	double s;		/* Mann-Kendall S */
	double var_s;		/* its variance, ties and autocorrelation corrected */
	double z;		/* (S -+ 1) / sqrt(var_s), 0 when S is 0 */
	double p_up;		/* one-sided p-value of "y increases" */
	double p_two;		/* two-sided p-value of "y has a monotonic trend" */
	double inflation;	/* of var_s by the autocorrelation, around the line in x */
	bool by_io;		/* var_s inflated as around the line in the IOs (fits better) */
	double slope_io;	/* Theil-Sen, y units per IO, when by_io; else 0 */
};

/*
 * Fits the trend of n points (x strictly increasing). Returns 0, -EINVAL for n < 3 or x not
 * increasing, -ENOMEM.
 */
int ps_trend_fit(const double *x, const double *y, size_t n, struct ps_trend *out);
/*
 * The same with io, the IOs done by each point (non-decreasing), as a second clock for the
 * autocorrelation correction (NULL: none). Slope and intercept stay per x; slope_io is the
 * slope against the IOs when their line fits better.
 */
int ps_trend_fit_io(const double *x, const double *io, const double *y, size_t n,
		    struct ps_trend *out);

struct ps_segments {
	size_t brk;		/* index of the break point, 0 < brk < n - 1 */
	double x_brk;		/* x at the break */
	double slope1, slope2;	/* least-squares slopes before and after the break */
	double sse2;		/* residual sum of squares of the two-piece line */
	double sse1;		/* of the single least-squares line */
};

/*
 * Best continuous two-piece line through n points, the break at least min_side points from
 * either end (min_side >= 2). Returns 0, -EINVAL when n < 2 * min_side + 1, -ENOMEM.
 */
int ps_segments_fit(const double *x, const double *y, size_t n, size_t min_side,
		    struct ps_segments *out);

/*
 * Wilcoxon signed-rank test of the changes y[i] - y[i-1] (unchanged intervals left out): *p_up,
 * the one-sided p of "the changes are symmetric about 0" against "rises outweigh falls", from
 * the normal approximation with ties corrected. Unlike the sign test it weighs how large each
 * change is: a staircase of large sampled rises with small falls between is a rise. 1 when no
 * interval changed. Returns 0 or -ENOMEM.
 */
int ps_signed_rank(const double *y, size_t n, double *p_up);

#endif
