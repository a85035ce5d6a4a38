// SPDX-License-Identifier: GPL-2.0
/*
 * wlfake SECS: a stand-in for `poolscope load` in the recorder's live test. Maps the workload
 * counters named by $POOLSCOPE_WORKLOAD_SHM and, for SECS seconds, completes 1000 "IOs" of
 * 8 KiB every 100 ms with a latency of 50 us (one histogram bucket), then prints the totals.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "userspace/lib/workload/workload_shm.h"

int main(int argc, char **argv)
{
	const char *path = getenv(PS_WORKLOAD_SHM_ENV);
	struct ps_workload_shm *w;
	long secs = argc > 1 ? atol(argv[1]) : 2, rounds;
	int fd;

	if (!path) {
		fprintf(stderr, "wlfake: %s not set\n", PS_WORKLOAD_SHM_ENV);
		return 1;
	}
	fd = open(path, O_RDWR);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	w = mmap(NULL, sizeof(*w), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (w == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	w->version = PS_WORKLOAD_SHM_VERSION;
	w->size = sizeof(*w);
	w->workers = 1;
	snprintf(w->desc, sizeof(w->desc), "wlfake 8k");
	__atomic_store_n(&w->magic, PS_WORKLOAD_SHM_MAGIC, __ATOMIC_RELEASE);
	rounds = secs * 10;
	for (long i = 0; i < rounds; i++) {
		__atomic_add_fetch(&w->ios, 1000, __ATOMIC_RELAXED);
		__atomic_add_fetch(&w->bytes, 1000 * 8192, __ATOMIC_RELAXED);
		__atomic_add_fetch(&w->lat_hist[ps_lat_bucket(50000)], 1000, __ATOMIC_RELAXED);
		w->lat_max_ns = 50000;
		w->inflight = 16;
		usleep(100000);
	}
	printf("ios %ld\n", rounds * 1000);
	return 0;
}
