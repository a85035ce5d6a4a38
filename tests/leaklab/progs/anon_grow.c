// SPDX-License-Identifier: GPL-2.0
/*
 * anon_grow MIB_PER_SEC SECS — a negative for the kernel domain: a process grows its own
 * anonymous memory by MIB_PER_SEC, touching every page, for SECS seconds. Pages and the page
 * tables that map them grow: user memory. The answer: no kernel leak (a user-domain leak).
 */
#include "lab.h"

static int step(long i, void *p)
{
	char **chunks = p;
	/* one MiB a step, each page written once so it is really allocated */
	char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED) {
		perror("anon_grow: mmap");
		return -1;
	}
	for (long off = 0; off < 1 << 20; off += 4096)
		m[off] = 1;
	chunks[i] = m;
	return 0;
}

int main(int argc, char **argv)
{
	double a[2];
	char **chunks;
	long n;

	lab_args(argc, argv, 2, 2, "anon_grow MIB_PER_SEC SECS", a);
	lab_setup();
	chunks = calloc((size_t)(a[0] * a[1]) + 2, sizeof(char *));
	if (!chunks)
		return 1;
	lab_ready("anon_grow");
	n = lab_pace(a[0], a[1], step, chunks);
	lab_done("anon_grow", n);
	for (long i = 0; i < n; i++)
		munmap(chunks[i], 1 << 20);
	return n < 0;
}
