/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unit-test harness: each tests/unit/<module>_test.c is one binary. TEST(name) registers a
 * function in the "ps_tests" section; harness.c runs them all (or those named on the command
 * line) and prints one line per test: "ok NAME", "FAIL NAME: why" or "skip NAME: why".
 * The ASSERT_* macros return bool in the kernel-selftests style so a test can clean up:
 *	if (!ASSERT_OK(err, "open")) goto out;
 */
#ifndef PS_TEST_H
#define PS_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <inttypes.h>

struct ps_test {
	const char *name;
	void (*fn)(void);
};

#define TEST(n)								\
	static void test_##n(void);					\
	static const struct ps_test __ps_test_##n			\
		__attribute__((used, section("ps_tests"), aligned(8))) = { #n, test_##n }; \
	static void test_##n(void)

void ps_test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ps_test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A scratch directory for the current test, removed after it unless PS_TEST_KEEP=1. */
const char *ps_test_tmpdir(void);
/* Path of a file under the source tree (tests are run from the top directory). */
const char *ps_test_srcpath(const char *rel);

#define ASSERT_TRUE(c, what) ({						\
	bool ___ok = (c);						\
	if (!___ok) ps_test_fail(__FILE__, __LINE__, "%s: expected true: %s", what, #c); \
	___ok; })
#define ASSERT_FALSE(c, what) ASSERT_TRUE(!(c), what)
#define ASSERT_OK(e, what) ({						\
	long long ___e = (e);						\
	bool ___ok = ___e == 0;						\
	if (!___ok) ps_test_fail(__FILE__, __LINE__, "%s: returned %lld (%s)", what, ___e, \
				 ___e < 0 ? strerror((int)-___e) : "");	\
	___ok; })
#define ASSERT_ERR(e, what) ({						\
	long long ___e = (e);						\
	bool ___ok = ___e < 0;						\
	if (!___ok) ps_test_fail(__FILE__, __LINE__, "%s: expected an error, got %lld", what, ___e); \
	___ok; })
#define ASSERT_EQ(a, b, what) ({					\
	long long ___a = (long long)(a), ___b = (long long)(b);	\
	bool ___ok = ___a == ___b;					\
	if (!___ok) ps_test_fail(__FILE__, __LINE__, "%s: %lld != %lld (%s vs %s)", what, ___a, ___b, #a, #b); \
	___ok; })
#define ASSERT_U64_EQ(a, b, what) ({					\
	unsigned long long ___a = (a), ___b = (b);			\
	bool ___ok = ___a == ___b;					\
	if (!___ok) ps_test_fail(__FILE__, __LINE__, "%s: %llu != %llu (0x%llx vs 0x%llx)", what, ___a, ___b, ___a, ___b); \
	___ok; })
#define ASSERT_NEAR(a, b, tol, what) ({				\
	double ___a = (a), ___b = (b), ___t = (tol);			\
	bool ___ok = (___a - ___b) <= ___t && (___b - ___a) <= ___t;	\
	if (!___ok) ps_test_fail(__FILE__, __LINE__, "%s: %g not within %g of %g", what, ___a, ___t, ___b); \
	___ok; })
#define ASSERT_STREQ(a, b, what) ({					\
	const char *___a = (a), *___b = (b);				\
	bool ___ok = ___a && ___b && strcmp(___a, ___b) == 0;		\
	if (!___ok) ps_test_fail(__FILE__, __LINE__, "%s: \"%s\" != \"%s\"", what, ___a ? ___a : "(null)", ___b ? ___b : "(null)"); \
	___ok; })
#define ASSERT_STRSTR(hay, needle, what) ({				\
	const char *___h = (hay), *___n = (needle);			\
	bool ___ok = ___h && ___n && strstr(___h, ___n);		\
	if (!___ok) ps_test_fail(__FILE__, __LINE__, "%s: \"%s\" not found in \"%.300s\"", what, ___n, ___h ? ___h : "(null)"); \
	___ok; })
#define ASSERT_NOT_NULL(p, what) ASSERT_TRUE((p) != NULL, what)

#endif
