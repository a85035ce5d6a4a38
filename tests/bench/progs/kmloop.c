// SPDX-License-Identifier: GPL-2.0
/*
 * kmloop ITERS: the recorder's per-event cost driver. Each iteration writes one byte into an
 * AF_UNIX stream socketpair and reads it back: the write allocates an skb (kmem_cache_alloc
 * on skbuff_head_cache, plus a kmalloc/kmem_cache_alloc for its data) and the read frees them
 * (kfree / kmem_cache_free), so every iteration hits the slab tracepoints a fixed number of
 * times (the bench script measures how many from the recorder's own event counters).
 * Prints "ns_per_iter N".
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 1000000;
	struct timespec a, b;
	int sv[2];
	char c = 'x';

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		perror("socketpair");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < iters; i++) {
		if (write(sv[0], &c, 1) != 1 || read(sv[1], &c, 1) != 1) {
			perror("kmloop");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("ns_per_iter %.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / iters);
	return 0;
}
