// SPDX-License-Identifier: GPL-2.0
/*
 * anon_grow MIB_PER_SEC SECS — a negative for the kernel domain: a process grows its own
 * anonymous memory by MIB_PER_SEC, touching every page, for SECS seconds. Pages and the page
 * tables that map them grow: user memory. The answer: no kernel leak (a user-domain leak).
 */
#include <sys/mman.h>

#include "lab.h"

struct ctx {
	char **chunks;
};

static int step(long i, void *p)
{
	struct ctx *c = p;
	/* one MiB a step, each page written once so it is really allocated */
	char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED) {
		perror("anon_grow: mmap");
		return -1;
	}
	for (long off = 0; off < 1 << 20; off += 4096)
		m[off] = 1;
	c->chunks[i] = m;
	return 0;
}

int main(int argc, char **argv)
{
	const char *usage = "anon_grow MIB_PER_SEC SECS";
	struct ctx c;
	double rate, secs;
	long n;

	if (argc != 3)
		return fprintf(stderr, "usage: %s\n", usage), 2;
	rate = lab_arg(argv[1], usage);
	secs = lab_arg(argv[2], usage);
	lab_setup();
	c.chunks = calloc((size_t)(rate * secs) + 2, sizeof(char *));
	if (!c.chunks)
		return 1;
	printf("lab: anon_grow ready\n");
	fflush(stdout);
	n = lab_pace(rate, secs, step, &c);
	printf("lab: anon_grow done %ld\n", n < 0 ? 0 : n);
	fflush(stdout);
	for (long i = 0; i < (n < 0 ? 0 : n); i++)
		munmap(c.chunks[i], 1 << 20);
	return n < 0;
}
