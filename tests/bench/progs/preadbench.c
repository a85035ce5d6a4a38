// SPDX-License-Identifier: GPL-2.0
/*
 * preadbench FILE SIZE_MB THREADS SECS: local 8 KiB random-read loop. Creates FILE (SIZE_MB),
 * maps and mlock()s it so the page cache cannot be evicted (DAMON pageout runs here), then
 * THREADS threads pread() 8 KiB at random aligned offsets for SECS seconds (one outstanding
 * read per thread: 16 threads = QD16). Prints "iops N".
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int fd;
static size_t nblocks;
static volatile int stop;

static void *worker(void *arg)
{
	unsigned long long seed = (unsigned long long)(long)arg * 0x9E3779B97F4A7C15ull + 1, n = 0;
	char buf[8192];

	while (!stop) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		if (pread(fd, buf, sizeof(buf), (off_t)(seed % nblocks) * 8192) != sizeof(buf))
			break;
		n++;
	}
	return (void *)(long)n;
}

int main(int argc, char **argv)
{
	long mb, threads, secs, total = 0;
	pthread_t th[256];
	void *map, *ret;
	size_t size;

	if (argc != 5 || (mb = atol(argv[2])) <= 0 || (threads = atol(argv[3])) <= 0 ||
	    threads > 256 || (secs = atol(argv[4])) <= 0) {
		fprintf(stderr, "usage: preadbench FILE SIZE_MB THREADS SECS\n");
		return 2;
	}
	size = (size_t)mb << 20;
	nblocks = size / 8192;
	fd = open(argv[1], O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, size)) {
		perror(argv[1]);
		return 1;
	}
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (size_t off = 0; off < size; off += 4096)
		((volatile char *)map)[off] = (char)off;
	if (mlock(map, size)) {
		perror("mlock");
		return 1;
	}
	for (long i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, worker, (void *)(i + 1));
	sleep(secs);
	stop = 1;
	for (long i = 0; i < threads; i++) {
		pthread_join(th[i], &ret);
		total += (long)ret;
	}
	printf("iops %.0f\n", (double)total / secs);
	return 0;
}
