// SPDX-License-Identifier: GPL-2.0
/*
 * kmloop ITERS [unix|path]: the recorder's per-event cost drivers.
 *  unix: each iteration writes one byte into an AF_UNIX stream socketpair and reads it back:
 *        the write allocates an skb (kmem_cache_alloc on skbuff_head_cache, plus a kmalloc for
 *        its data) and the read frees them (kfree / kmem_cache_free): the kmalloc/kfree path,
 *        whose free needs the bpf_get_kmem_cache() kfunc. Writes go in batches of BATCH
 *        before they are read, so BATCH skbs at distinct addresses are alive at once: with one
 *        skb at a time the slab hands back the same address every iteration, and the
 *        recorder's address-hash sample would take all of them or none (a bimodal cost).
 *  path: each iteration is faccessat("/"): getname() takes a names_cache object and puts it
 *        back, one kmem_cache_alloc and one kmem_cache_free in one short syscall: the
 *        densest event stream a syscall gives, so the probe cost stands out of the noise.
 * Every iteration hits the tracepoints a fixed number of times (the bench script measures
 * how many from the recorder's own event counters). Prints "ns_per_iter N".
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 1000000;
	int path = argc > 2 && !strcmp(argv[2], "path");
	struct timespec a, b;
	int sv[2];
	char c = 'x';

	if (path) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (long i = 0; i < iters; i++) {
			if (faccessat(AT_FDCWD, "/", F_OK, 0)) {
				perror("kmloop: faccessat");
				return 1;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		goto out;
	}

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		perror("socketpair");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < iters; i += BATCH) {
		char buf[BATCH];
		long got = 0;

		for (int j = 0; j < BATCH; j++) {
			if (write(sv[0], &c, 1) != 1) {
				perror("kmloop: write");
				return 1;
			}
		}
		while (got < BATCH) {
			ssize_t n = read(sv[1], buf, BATCH - got);

			if (n <= 0) {
				perror("kmloop: read");
				return 1;
			}
			got += n;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	iters = (iters + BATCH - 1) / BATCH * BATCH;
out:
	printf("ns_per_iter %.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / iters);
	return 0;
}
