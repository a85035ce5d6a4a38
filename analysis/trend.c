// SPDX-License-Identifier: GPL-2.0
/* Trend statistics: Theil-Sen, Mann-Kendall with an autocorrelation correction, two segments. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/trend.h"
#include "userspace/lib/util/util.h"

/*
 * Reduces n points to m <= PS_TREND_MAX_POINTS by averaging consecutive runs of equal length
 * (the last runs one longer when n is not a multiple). Returns m.
 */
static size_t reduce(const double *x, const double *y, size_t n, double *rx, double *ry)
{
	size_t m = n <= PS_TREND_MAX_POINTS ? n : PS_TREND_MAX_POINTS;

	for (size_t b = 0; b < m; b++) {
		size_t lo = b * n / m, hi = (b + 1) * n / m;
		double sx = 0, sy = 0;

		for (size_t i = lo; i < hi; i++) {
			sx += x[i];
			sy += y[i];
		}
		rx[b] = sx / (double)(hi - lo);
		ry[b] = sy / (double)(hi - lo);
	}
	return m;
}

static int sign(double d)
{
	return d > 0 ? 1 : d < 0 ? -1 : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sum over groups of tied values of t (t - 1) (2t + 5), the ties term of Var(S). */
static double ties_term(const double *y, size_t n, double *scratch)
{
	double sum = 0;
	size_t i = 0;

	memcpy(scratch, y, n * sizeof(*y));
	qsort(scratch, n, sizeof(*scratch), cmp_double);
	while (i < n) {
		size_t j = i + 1;

		while (j < n && scratch[j] == scratch[i])
			j++;
		if (j - i > 1) {
			double t = (double)(j - i);

			sum += t * (t - 1) * (2 * t + 5);
		}
		i = j;
	}
	return sum;
}

/* Ranks (1..n, ties get their mean rank) of v into rank; scratch holds n indices. */
static void ranks(const double *v, size_t n, double *rank, size_t *idx)
{
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	/* insertion sort of indices by value: n is at most PS_TREND_MAX_POINTS */
	for (size_t i = 1; i < n; i++) {
		size_t k = idx[i], j = i;

		while (j > 0 && v[idx[j - 1]] > v[k]) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = k;
	}
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && v[idx[j]] == v[idx[i]])
			j++;
		for (size_t k = i; k < j; k++)
			rank[idx[k]] = (double)(i + j + 1) / 2;
		i = j;
	}
}

/*
 * The variance inflation n / n* of Yue and Wang (2004) for a series whose noise is AR(1):
 * 1 + 2 sum over k = 1..n-1 of (1 - k/n) r1^k, r1 the lag-1 autocorrelation of the ranks of the
 * detrended series (ranks, so one wild interval does not set it). AR(1) is what memory noise
 * looks like: an object outlives an interval with some probability, so today's excess decays
 * geometrically. Never below 1: a negative correlation would make the test bolder than the
 * plain one. (Hamed and Rao's sum over every significant lag was tried: on short series it
 * finds too few lags and corrects too little.)
 */
static double autocorr_factor(const double *x, const double *y, size_t n, double slope,
			      double *work, size_t *idx)
{
	double *res = work, *rk = work + n, mean = 0, var = 0, c = 0, r1, f = 1, p = 1;
	double nn = (double)n;

	for (size_t i = 0; i < n; i++)
		res[i] = y[i] - slope * x[i];
	ranks(res, n, rk, idx);
	for (size_t i = 0; i < n; i++)
		mean += rk[i];
	mean /= nn;
	for (size_t i = 0; i < n; i++)
		var += (rk[i] - mean) * (rk[i] - mean);
	if (var <= 0)
		return 1;
	for (size_t i = 0; i + 1 < n; i++)
		c += (rk[i] - mean) * (rk[i + 1] - mean);
	r1 = c / var;
	if (r1 <= 0)
		return 1;
	for (size_t k = 1; k < n && p > 1e-12; k++) {
		p *= r1;
		f += 2 * (1 - (double)k / nn) * p;
	}
	return f;
}

/* The median absolute deviation of the residuals around y = slope x: how well the line fits. */
static double spread(const double *x, const double *y, size_t n, double slope, double *work)
{
	double m;

	for (size_t i = 0; i < n; i++)
		work[i] = y[i] - slope * x[i];
	m = ps_median(work, n);
	for (size_t i = 0; i < n; i++)
		work[i] = fabs(y[i] - slope * x[i] - m);
	return ps_median(work, n);
}

/*
 * The inflation of the residuals around the line y = a + b io (io non-decreasing: pairs with
 * equal io left out), when that line fits the points better than the line in x (slope per x
 * given) does; else 0, and 0 when io does not advance over at least half the pairs. *b gets
 * the slope against io.
 */
static double io_factor(const double *x, const double *io, const double *y, size_t n,
			double slope, double *pairs, double *work, size_t *idx, double *b)
{
	size_t np = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (io[j] > io[i])
				pairs[np++] = (y[j] - y[i]) / (io[j] - io[i]);
	if (np < n * (n - 1) / 4)
		return 0;
	*b = ps_median(pairs, np);
	if (!(spread(io, y, n, *b, work) < spread(x, y, n, slope, work)))
		return 0;
	return autocorr_factor(io, y, n, *b, work, idx);
}

int ps_trend_fit(const double *xin, const double *yin, size_t nin, struct ps_trend *out)
{
	return ps_trend_fit_io(xin, NULL, yin, nin, out);
}

int ps_trend_fit_io(const double *xin, const double *ioin, const double *yin, size_t nin,
		    struct ps_trend *out)
{
	double *x = NULL, *y = NULL, *io = NULL, *pairs = NULL, *work = NULL;
	size_t n, np = 0, *idx = NULL;
	double s = 0, var, f, fio, b = 0;
	int e = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (nin < 3)
		return -EINVAL;
	for (size_t i = 1; i < nin; i++)
		if (!(xin[i] > xin[i - 1]))
			return -EINVAL;
	/* sized for the points left after reduction: the pairs array is quadratic in them */
	n = nin <= PS_TREND_MAX_POINTS ? nin : PS_TREND_MAX_POINTS;
	x = malloc(n * sizeof(*x));
	y = malloc(n * sizeof(*y));
	work = malloc(2 * n * sizeof(*work));
	idx = malloc(n * sizeof(*idx));
	pairs = malloc(n * (n - 1) / 2 * sizeof(*pairs));
	io = ioin ? malloc(n * sizeof(*io)) : NULL;
	if (!x || !y || !work || !idx || !pairs || (ioin && !io))
		goto out;
	n = reduce(xin, yin, nin, x, y);
	if (io)
		reduce(ioin, yin, nin, io, work);

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			pairs[np++] = (y[j] - y[i]) / (x[j] - x[i]);
			s += sign(y[j] - y[i]);
		}
	out->n = n;
	out->slope = ps_median(pairs, np);
	for (size_t i = 0; i < n; i++)
		work[i] = y[i] - out->slope * x[i];
	out->intercept = ps_median(work, n);

	var = ((double)n * (n - 1) * (2.0 * n + 5) - ties_term(y, n, work)) / 18;
	f = autocorr_factor(x, y, n, out->slope, work, idx);
	out->inflation = f;
	/*
	 * Memory that grows by the IOs done is a line in the IOs, not in time: residuals around
	 * the time line then follow the workload's rate as it drifts, and the correction would
	 * read that as noise lingering. The noise is what is left around the line that fits
	 * better, whichever correction that gives: the clock is chosen by the fit, not by the
	 * smaller correction, which would favour a trend in every series.
	 */
	if (io) {
		fio = io_factor(x, io, y, n, out->slope, pairs, work, idx, &b);
		if (fio > 0) {
			f = fio;
			out->by_io = true;
			out->slope_io = b;
		}
	}
	var *= f;
	out->s = s;
	out->var_s = var;
	if (var > 0 && s != 0)
		out->z = (s - sign(s)) / sqrt(var);
	out->p_up = 0.5 * erfc(out->z / sqrt(2.0));
	out->p_two = erfc(fabs(out->z) / sqrt(2.0));
	e = 0;
out:
	free(x);
	free(y);
	free(io);
	free(work);
	free(idx);
	free(pairs);
	return e;
}

/*
 * For a break at x_b the model is y = a + b1 (x - x_b) for x <= x_b and a + b2 (x - x_b) after:
 * continuous, three parameters. With u = min(x - x_b, 0) and v = max(x - x_b, 0) it is linear
 * least squares in (a, b1, b2); the 3x3 normal equations are solved by Cramer's rule.
 */
static double fit_break(const double *x, const double *y, size_t n, double xb, double *b1,
			double *b2)
{
	double S[3][3] = { { 0 } }, T[3] = { 0 }, det, sol[3], sse = 0;

	for (size_t i = 0; i < n; i++) {
		double d = x[i] - xb, u = d < 0 ? d : 0, v = d > 0 ? d : 0, g[3] = { 1, u, v };

		for (int r = 0; r < 3; r++) {
			for (int c = 0; c < 3; c++)
				S[r][c] += g[r] * g[c];
			T[r] += g[r] * y[i];
		}
	}
	det = S[0][0] * (S[1][1] * S[2][2] - S[1][2] * S[2][1]) -
	      S[0][1] * (S[1][0] * S[2][2] - S[1][2] * S[2][0]) +
	      S[0][2] * (S[1][0] * S[2][1] - S[1][1] * S[2][0]);
	if (det == 0)
		return INFINITY;
	for (int k = 0; k < 3; k++) {
		double M[3][3];

		memcpy(M, S, sizeof(M));
		for (int r = 0; r < 3; r++)
			M[r][k] = T[r];
		sol[k] = (M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) -
			  M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
			  M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0])) / det;
	}
	for (size_t i = 0; i < n; i++) {
		double d = x[i] - xb, r = y[i] - (sol[0] + sol[1] * (d < 0 ? d : 0) +
						   sol[2] * (d > 0 ? d : 0));

		sse += r * r;
	}
	*b1 = sol[1];
	*b2 = sol[2];
	return sse;
}

int ps_segments_fit(const double *xin, const double *yin, size_t nin, size_t min_side,
		    struct ps_segments *out)
{
	double *x, *y, mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (min_side < 2)
		min_side = 2;
	x = malloc(PS_TREND_MAX_POINTS * sizeof(*x));
	y = malloc(PS_TREND_MAX_POINTS * sizeof(*y));
	if (!x || !y) {
		free(x);
		free(y);
		return -ENOMEM;
	}
	n = reduce(xin, yin, nin, x, y);
	if (n < 2 * min_side + 1) {
		free(x);
		free(y);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	for (size_t i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
		syy += (y[i] - my) * (y[i] - my);
	}
	out->sse1 = sxx > 0 ? syy - sxy * sxy / sxx : syy;
	out->sse2 = INFINITY;
	for (size_t b = min_side; b + min_side < n; b++) {
		double b1 = 0, b2 = 0, sse = fit_break(x, y, n, x[b], &b1, &b2);

		if (sse < out->sse2) {
			out->sse2 = sse;
			out->brk = b;
			out->x_brk = x[b];
			out->slope1 = b1;
			out->slope2 = b2;
		}
	}
	/* the break index in the caller's points, not the reduced ones */
	if (n < nin)
		for (size_t i = 0; i < nin; i++)
			if (xin[i] >= out->x_brk) {
				out->brk = i;
				break;
			}
	free(x);
	free(y);
	return 0;
}

static int cmp_abs(const void *a, const void *b)
{
	double x = fabs(*(const double *)a), y = fabs(*(const double *)b);

	return x < y ? -1 : x > y;
}

int ps_signed_rank(const double *y, size_t n, double *p_up)
{
	double *d, mean, var, w = 0, z;
	size_t m = 0;

	*p_up = 1;
	if (n < 2)
		return 0;
	d = malloc((n - 1) * sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (size_t i = 1; i < n; i++)
		if (y[i] != y[i - 1])
			d[m++] = y[i] - y[i - 1];
	qsort(d, m, sizeof(*d), cmp_abs);
	var = (double)m * (m + 1) * (2 * m + 1) / 24.0;
	for (size_t i = 0, j; i < m; i = j) {
		double t, rank;

		for (j = i; j < m && fabs(d[j]) == fabs(d[i]); j++)
			;
		t = (double)(j - i);
		rank = (double)(i + j + 1) / 2.0;	/* the average of ranks i+1 .. j */
		for (size_t k = i; k < j; k++)
			if (d[k] > 0)
				w += rank;
		var -= (t * t * t - t) / 48.0;
	}
	free(d);
	if (!m || var <= 0)
		return 0;
	mean = (double)m * (m + 1) / 4.0;
	z = (w - mean - 0.5) / sqrt(var);	/* continuity corrected */
	*p_up = 0.5 * erfc(z / sqrt(2.0));
	return 0;
}
