/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reproducible random numbers for the statistical tests: xorshift64, then a standard normal by
 * Box-Muller. Define TEST_RNG_SEED before including; each test file has its own sequence.
 */
#ifndef PS_TEST_RAND_H
#define PS_TEST_RAND_H

#include <math.h>

#ifndef TEST_RNG_SEED
#error "define TEST_RNG_SEED before including rand.h"
#endif

static unsigned long long rng = TEST_RNG_SEED;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((rng >> 11) + 0.5) / 9007199254740992.0;
}

static inline double normal(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

#endif
