// SPDX-License-Identifier: GPL-2.0
/*
 * XPRESS plain LZ77: the two worked examples of [MS-XCA] 3.1, round trips through the test
 * compressor (etlwriter.c), and garbage that must end in an error (or a bounded result), never
 * a crash, an overrun or a hang. The real-file check (636 compressed buffers decoding to exactly
 * SavedOffset - 0x48) is in etl_corpus_test (every compressed corpus buffer is decoded there).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/etw/xpress.h"
#include "etlwriter.c"

TEST(ms_xca_example_literals)
{
	static const uint8_t z[] = { 0x3f, 0x00, 0x00, 0x00, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h',
				     'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r', 's', 't',
				     'u', 'v', 'w', 'x', 'y', 'z' };
	uint8_t out[64];
	long n = ps_xpress_decompress(z, sizeof(z), out, sizeof(out), NULL);

	if (ASSERT_EQ(n, 26, "length"))
		ASSERT_TRUE(!memcmp(out, "abcdefghijklmnopqrstuvwxyz", 26), "bytes");
}

TEST(ms_xca_example_run)
{
	/* "abc" repeated to 300 bytes: one literal run and one long match (u16 escape) */
	static const uint8_t z[] = { 0xff, 0xff, 0xff, 0x1f, 0x61, 0x62, 0x63, 0x17, 0x00, 0x0f,
				     0xff, 0x26, 0x01 };
	uint8_t out[400];
	long n = ps_xpress_decompress(z, sizeof(z), out, sizeof(out), NULL);

	if (!ASSERT_EQ(n, 300, "length"))
		return;
	for (int i = 0; i < 300; i++)
		if (!ASSERT_EQ(out[i], "abc"[i % 3], "byte"))
			return;
	/* one byte short of room: -ENOSPC, not an overrun */
	ASSERT_EQ(ps_xpress_decompress(z, sizeof(z), out, 299, NULL), -ENOSPC, "capacity");
}

static bool roundtrip(const uint8_t *in, size_t n, const char *what)
{
	size_t zl;
	uint8_t *z = xpress_compress(in, n, &zl);
	uint8_t *out = malloc(n + 1);
	long got = ps_xpress_decompress(z, zl, out, n, NULL);
	bool ok = ASSERT_EQ(got, (long)n, what) && ASSERT_TRUE(!memcmp(out, in, n), what);

	free(z);
	free(out);
	return ok;
}

TEST(roundtrip_through_test_compressor)
{
	size_t n = 200000;
	uint8_t *b = malloc(n);
	uint32_t x = 12345;

	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245 + 12345;
		/* mix of runs, repeats at many distances and noise: every length escape */
		b[i] = (i % 5000 < 3000) ? (uint8_t)(i % 7) : (i % 3 ? (uint8_t)(x >> 24) : b[i / 2]);
	}
	roundtrip(b, n, "mixed");
	memset(b, 'A', n);
	roundtrip(b, n, "one run (u16 escapes)");
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245 + 12345;
		b[i] = (uint8_t)(x >> 24);
	}
	roundtrip(b, n, "noise");
	roundtrip(b, 0, "empty");
	roundtrip(b, 1, "one byte");
	roundtrip(b, 31, "31 bytes");
	roundtrip(b, 32, "32 bytes (flag word boundary)");
	free(b);
}

/*
 * The fast loop hands over to the careful one at a word boundary or after an escaped match,
 * with the rest of the flag word pending. Outputs of every size from just over the fast loop's
 * margin to a few KiB move that hand-over across every kind of token and flag position.
 */
TEST(roundtrip_every_handover_point)
{
	size_t max = 4096;
	uint8_t *b = malloc(max);
	uint32_t x = 777;

	for (size_t i = 0; i < max; i++) {
		x = x * 1103515245 + 12345;
		/* literals, short repeats, and long ones (escaped lengths) at 16..600 bytes back */
		if (i % 700 < 350)
			b[i] = (uint8_t)(x >> 24);
		else if (i % 700 < 500)
			b[i] = b[i - 23];
		else
			b[i] = b[i - 300 - (i % 4)];
	}
	for (size_t n = 300; n <= max; n++) {
		char what[48];

		snprintf(what, sizeof(what), "%zu bytes", n);
		if (!roundtrip(b, n, what))
			break;
	}
	free(b);
}

TEST(garbage_never_overruns_or_hangs)
{
	uint8_t in[512], out[4096];
	uint32_t x = 99;
	int errors = 0;

	for (int round = 0; round < 20000; round++) {
		size_t n = (size_t)(round % 512);
		for (size_t i = 0; i < n; i++) {
			x = x * 1103515245 + 12345;
			in[i] = (uint8_t)(x >> 24);
		}
		size_t bad = 0;
		long r = ps_xpress_decompress(in, n, out, sizeof(out), &bad);
		if (r < 0) {
			errors++;
			if (!ASSERT_TRUE(bad <= n, "error offset inside the input"))
				return;
		} else if (!ASSERT_TRUE(r <= (long)sizeof(out), "bounded output")) {
			return;
		}
	}
	/* random bytes are mostly invalid: offsets before the start of the output */
	ASSERT_TRUE(errors > 10000, "garbage is rejected");
	/* a match before any output is the first thing checked */
	static const uint8_t early[] = { 0x00, 0x00, 0x00, 0x80, 0x08, 0x00 };
	ASSERT_EQ(ps_xpress_decompress(early, sizeof(early), out, sizeof(out), NULL), -PS_ERR__CORRUPT,
		  "match before the start");
	/* truncated token */
	static const uint8_t cut[] = { 0x00, 0x00, 0x00, 0x40, 'a', 0x00 };
	ASSERT_EQ(ps_xpress_decompress(cut, sizeof(cut), out, sizeof(out), NULL), -PS_ERR__CORRUPT,
		  "token cut");
}
