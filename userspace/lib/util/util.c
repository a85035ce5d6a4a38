// SPDX-License-Identifier: GPL-2.0
/* Portable helpers: see util.h. */
#include "userspace/lib/util/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define _PE(n, s) s,
static const char *const ps_err_text[] = { PS_ERRORS };
#undef _PE

const char *ps_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err > PS_ERR__START && err < PS_ERR__END)
		return ps_err_text[err - PS_ERR__START - 1];
	return strerror(err);
}

char *ps_fmt_bytes(char *buf, size_t len, double bytes, bool signed_)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = fabs(bytes);
	const char *sign = bytes < 0 ? "-" : (signed_ && bytes > 0 ? "+" : "");
	unsigned i = 0;

	while (v >= 1024 && i + 1 < ARRAY_SIZE(unit)) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%s%.0f B", sign, v);
	else
		/* three significant digits, decided after rounding: 99.96 is "100", not "100.0" */
		snprintf(buf, len, "%s%.*f %s", sign, round(v * 100) < 1000 ? 2 :
			 round(v * 10) < 1000 ? 1 : 0, v, unit[i]);
	return buf;
}

int ps_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 0: break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return -EINVAL;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

int ps_parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v;

	/* a digit first: strtoul would also take blanks, a sign, and "-1" as a huge number */
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

int ps_parse_cpu_list_end(const char *s, unsigned *out)
{
	unsigned long lo, hi, end = 0;
	char *p;

	if (!s)
		return -EINVAL;
	for (;;) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		errno = 0;
		lo = hi = strtoul(s, &p, 10);
		if (*p == '-') {
			if (p[1] < '0' || p[1] > '9')
				return -EINVAL;
			hi = strtoul(p + 1, &p, 10);
		}
		/* ids are ints in the kernel; a range runs upward */
		if (errno || hi < lo || hi >= INT_MAX)
			return -EINVAL;
		if (hi + 1 > end)
			end = hi + 1;
		if (*p != ',')
			break;
		s = p + 1;
	}
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*out = (unsigned)end;
	return 0;
}

int ps_parse_duration_ns(const char *s, uint64_t *out_ns)
{
	char *end;
	double v, mult = 1e9;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	if (!strcmp(end, "") || !strcmp(end, "s"))
		mult = 1e9;
	else if (!strcmp(end, "ms"))
		mult = 1e6;
	else if (!strcmp(end, "us"))
		mult = 1e3;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		mult = 60e9;
	else if (!strcmp(end, "h"))
		mult = 3600e9;
	else
		return -EINVAL;
	if (v * mult > 1e18)
		return -EINVAL;
	*out_ns = (uint64_t)(v * mult + 0.5);
	return 0;
}

void ps_json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

char *ps_strlcpy(char *dst, const char *src, size_t len)
{
	size_t n;

	if (!len)
		return dst;
	n = strlen(src);
	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
	return dst;
}

int ps_finish_stdout(int rc)
{
	if (fflush(stdout) || ferror(stdout)) {
		if (errno != EPIPE)
			fprintf(stderr, "poolscope: write to standard output failed: %s\n", strerror(errno));
		return rc ? rc : 1;
	}
	return rc;
}

/*
 * The k-th smallest of v[0..n-1] by selection with a three-way partition (equal values, common
 * in byte counts, do not make it quadratic). Leaves every value before index k <= v[k].
 */
static double select_kth(double *v, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1;

	while (hi > lo) {
		double pivot = v[lo + (hi - lo) / 2], t;
		ptrdiff_t lt = lo, gt = hi, p = lo;

		/* v[lo..lt-1] < pivot, v[lt..p-1] == pivot, v[gt+1..hi] > pivot */
		while (p <= gt) {
			if (v[p] < pivot) {
				t = v[lt]; v[lt] = v[p]; v[p] = t;
				lt++;
				p++;
			} else if (v[p] > pivot) {
				t = v[gt]; v[gt] = v[p]; v[p] = t;
				gt--;
			} else {
				p++;
			}
		}
		if ((ptrdiff_t)k < lt)
			hi = lt - 1;
		else if ((ptrdiff_t)k > gt)
			lo = gt + 1;
		else
			return pivot;
	}
	return v[k];
}

double ps_median(double *v, size_t n)
{
	double hi, lo;

	if (!n)
		return 0;
	hi = select_kth(v, n, n / 2);
	if (n % 2)
		return hi;
	/* after the selection every value below index n / 2 is <= hi: the largest of them */
	lo = v[0];
	for (size_t i = 1; i < n / 2; i++)
		if (v[i] > lo)
			lo = v[i];
	return (lo + hi) / 2;
}
