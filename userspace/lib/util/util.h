/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small portable helpers shared by every side (Linux binary, analysis, converters and the
 * Windows capture program): byte formatting, size/duration parsing, error text.
 */
#ifndef PS_UTIL_H
#define PS_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif

/*
 * Project error codes, below every errno, with ps_strerror() for both kinds
 * (libtraceevent's pattern).
 */
#define PS_ERRORS							\
	_PE(CORRUPT,	"file is corrupt or truncated")			\
	_PE(FOREIGN,	"not a poolscope trace")			\
	_PE(VERSION,	"unsupported trace format version")		\
	_PE(SYNTAX,	"syntax error")					\
	_PE(NOBTF,	"kernel BTF not available")

#define _PE(n, s) PS_ERR__##n,
enum {
	PS_ERR__START = 100000,
	PS_ERRORS
	PS_ERR__END
};
#undef _PE

/* Text for a negative errno or a negative PS_ERR__* code. */
const char *ps_strerror(int err);

/*
 * Formats a byte count the way a human reads it: "512 B", "3.2 KiB", "61.9 GiB", with sign when
 * signed_ is true. Returns buf.
 */
char *ps_fmt_bytes(char *buf, size_t len, double bytes, bool signed_);

/*
 * Parses "8k", "1M", "1g", "4096" (binary multiples). Returns 0 or -EINVAL.
 */
int ps_parse_size(const char *s, uint64_t *out);

/*
 * Parses a whole decimal number from lo to hi, digits only ("16", not "-1", "+1", " 1", "1k"
 * or ""): the counts and limits of command-line options. Returns 0 or -EINVAL.
 */
int ps_parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out);

/*
 * Parses a kernel CPU list ("0-3,8-11", as in /sys/devices/system/cpu/possible; one trailing
 * newline allowed) into its highest CPU id + 1. Returns 0 or -EINVAL.
 */
int ps_parse_cpu_list_end(const char *s, unsigned *out);

/*
 * Parses a duration: "1s", "500ms", "2m", "1h", or a plain number of seconds ("1.5").
 * Returns 0 or -EINVAL.
 */
int ps_parse_duration_ns(const char *s, uint64_t *out_ns);

/* Copies at most len-1 bytes and always terminates; returns dst. */
char *ps_strlcpy(char *dst, const char *src, size_t len);
/* Median of v[0..n-1], the mean of the two middle values for even n; reorders v. 0 for n = 0. */
double ps_median(double *v, size_t n);

/* s as a JSON string ("null" for NULL): quotes, backslashes and control bytes escaped. */
void ps_json_str(FILE *f, const char *s);

/* Flushes stdout at exit of a command and turns a write error into a failure (exit 1). */
int ps_finish_stdout(int rc);

#endif
