// SPDX-License-Identifier: GPL-2.0
/*
 * xpressbench FILE.etl REPS: the XPRESS decoder alone, on every compressed buffer of an .etl
 * file. Walks the buffer chain (BufferSize at +0, SavedOffset at +4, BufferFlag at +0x34 of each
 * 0x48-byte header), keeps the compressed payloads in memory, then decodes all of them REPS
 * times and prints "decoded BYTES in BUFFERS buffers: best NS ns, median NS ns" for one pass.
 * Linked with whichever xpress.c is being measured (tests/bench/etl.sh builds the tree's and,
 * when asked, another revision's), so two decoders run on the same bytes in the same run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "userspace/lib/etw/xpress.h"

#define HDR		0x48
#define BUF_COMPRESSED	0x0040

struct cbuf {
	const unsigned char *in;
	size_t inlen, outlen;
};

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static unsigned rd(const unsigned char *p, int n)
{
	unsigned v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct cbuf *bufs = NULL;
	unsigned char *file = NULL, *out = NULL;
	unsigned long long *t = NULL, total = 0;
	size_t n = 0, cap = 0, size, off = 0, maxout = 0;
	int reps, rc = 1;
	FILE *f;

	if (argc != 3 || (reps = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: xpressbench FILE.etl REPS\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f || fseek(f, 0, SEEK_END) || (long)(size = (size_t)ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) || !(file = malloc(size)) || fread(file, 1, size, f) != size) {
		fprintf(stderr, "xpressbench: %s: cannot read\n", argv[1]);
		goto out;
	}
	while (off + HDR <= size) {
		unsigned bsize = rd(file + off, 4), saved = rd(file + off + 4, 4);
		unsigned flag = rd(file + off + 0x34, 2);

		if (bsize < HDR || off + bsize > size) {
			fprintf(stderr, "xpressbench: %s: offset %zu: BufferSize %u is not a buffer\n",
				argv[1], off, bsize);
			goto out;
		}
		if ((flag & BUF_COMPRESSED) && saved > HDR) {
			if (n == cap && !(bufs = realloc(bufs, (cap = cap ? 2 * cap : 256) * sizeof(*bufs))))
				goto out;
			bufs[n++] = (struct cbuf){ file + off + HDR, bsize - HDR, saved - HDR };
			if (saved - HDR > maxout)
				maxout = saved - HDR;
		}
		off += bsize;
	}
	if (!n) {
		fprintf(stderr, "xpressbench: %s: no compressed buffers\n", argv[1]);
		goto out;
	}
	out = malloc(maxout);
	t = calloc((size_t)reps, sizeof(*t));
	if (!out || !t)
		goto out;
	for (int r = 0; r < reps; r++) {
		unsigned long long t0 = now_ns();

		total = 0;
		for (size_t i = 0; i < n; i++) {
			long got = ps_xpress_decompress(bufs[i].in, bufs[i].inlen, out, bufs[i].outlen,
							NULL);

			if (got != (long)bufs[i].outlen) {
				fprintf(stderr, "xpressbench: %s: buffer %zu decoded to %ld bytes, "
					"SavedOffset says %zu\n", argv[1], i, got, bufs[i].outlen);
				goto out;
			}
			total += (unsigned long long)got;
		}
		t[r] = now_ns() - t0;
	}
	qsort(t, (size_t)reps, sizeof(*t), cmp_ull);
	printf("decoded %llu bytes in %zu buffers: best %llu ns, median %llu ns\n", total, n, t[0],
	       t[reps / 2]);
	rc = 0;
out:
	if (f)
		fclose(f);
	free(file);
	free(bufs);
	free(out);
	free(t);
	return rc;
}
