/* SPDX-License-Identifier: GPL-2.0 */
/* A whole file in memory, for the unit tests and the fuzzers that compare or patch files. */
#ifndef PS_TEST_SLURP_H
#define PS_TEST_SLURP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The file at path, *n bytes of it (a byte more allocated: an empty file is not NULL); NULL
 * when it cannot be opened, sized or read whole. */
static inline uint8_t *test_slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long len;

	if (f && !fseek(f, 0, SEEK_END) && (len = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
	    (b = malloc((size_t)len + 1)) && fread(b, 1, (size_t)len, f) == (size_t)len) {
		*n = (size_t)len;
	} else {
		free(b);
		b = NULL;
	}
	if (f)
		fclose(f);
	return b;
}

#endif
