// SPDX-License-Identifier: GPL-2.0
/*
 * The portable helpers: the median by selection against a sort of the same values, on runs
 * with ties, sorted and reversed input, and random values; the size formatter's width.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "userspace/lib/util/util.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double sorted_median(const double *v, size_t n)
{
	double *c = malloc(n * sizeof(*c)), m;

	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_double);
	m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

TEST(median_small)
{
	double a[] = { 5, 1, 3 }, b[] = { 4, 1, 3, 2 }, c[] = { 7 }, d[] = { 2, 2, 2, 9 };

	ASSERT_NEAR(ps_median(a, 3), 3, 1e-12, "odd");
	ASSERT_NEAR(ps_median(b, 4), 2.5, 1e-12, "even");
	ASSERT_NEAR(ps_median(c, 1), 7, 1e-12, "one");
	ASSERT_NEAR(ps_median(d, 4), 2, 1e-12, "ties in the middle");
	ASSERT_NEAR(ps_median(NULL, 0), 0, 1e-12, "none");
}

TEST(median_equals_sort)
{
	unsigned seed = 12345;
	double v[301], w[301];

	for (int round = 0; round < 400; round++) {
		size_t n = 1 + round % 301;
		int shape = round % 4;

		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			switch (shape) {
			case 0: v[i] = (double)(seed >> 8); break;		/* random */
			case 1: v[i] = (double)((seed >> 8) % 5); break;	/* many ties */
			case 2: v[i] = (double)i; break;			/* sorted */
			default: v[i] = (double)(n - i); break;		/* reversed */
			}
		}
		memcpy(w, v, n * sizeof(*v));
		if (!ASSERT_NEAR(ps_median(w, n), sorted_median(v, n), 1e-9, "median of a round"))
			return;
	}
}

/*
 * Sizes keep three significant digits, decided after rounding, so that a signed size fits the
 * report's 9-column cells: 99.96 KiB is "+100 KiB", never "+100.0 KiB".
 */
TEST(fmt_bytes_width)
{
	static const struct { double v; const char *want; } c[] = {
		{ 99.96 * 1024, "+100 KiB" }, { 99.94 * 1024, "+99.9 KiB" },
		{ 9.996 * 1024, "+10.0 KiB" }, { 9.994 * 1024, "+9.99 KiB" },
		{ 1023.4 * 1024, "+1023 KiB" }, { -4.76 * 1024 * 1024, "-4.76 MiB" },
		{ 1000, "+1000 B" }, { 0, "0 B" },
	};
	char b[32];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ps_fmt_bytes(b, sizeof(b), c[i].v, true);
		if (!ASSERT_STREQ(b, c[i].want, "formatted size") ||
		    !ASSERT_TRUE(strlen(b) <= 9, "fits 9 columns"))
			return;
	}
}

TEST(parse_cpu_list_end)
{
	unsigned n = 0;

	ASSERT_OK(ps_parse_cpu_list_end("0-1\n", &n), "0-1");
	ASSERT_EQ(n, 2, "0-1");
	ASSERT_OK(ps_parse_cpu_list_end("0", &n), "one CPU");
	ASSERT_EQ(n, 1, "one CPU");
	/* gaps: the ids, not the count of CPUs */
	ASSERT_OK(ps_parse_cpu_list_end("0-3,8-11\n", &n), "two ranges");
	ASSERT_EQ(n, 12, "two ranges");
	ASSERT_OK(ps_parse_cpu_list_end("0,2,4", &n), "single ids");
	ASSERT_EQ(n, 5, "single ids");
	ASSERT_OK(ps_parse_cpu_list_end("8-11,0-3", &n), "ranges out of order");
	ASSERT_EQ(n, 12, "ranges out of order");
	const char *bad[] = { "", "\n", "-1", "0-", "3-1", "a", "0-1,", ",0", "0 1", "0-1\n\n",
			      "0-99999999999999999999", "2147483647" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = 77;
		ASSERT_ERR(ps_parse_cpu_list_end(bad[i], &n), bad[i]);
		ASSERT_EQ(n, 77, "untouched on error");
	}
}
