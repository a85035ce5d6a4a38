// SPDX-License-Identifier: GPL-2.0
/*
 * pspin FILE: maps FILE and mlocks it so that its pages stay in the page cache while the test
 * server serves it (a DAMON pageout job on the project machines evicts cold page cache, and the
 * SMB numbers drift when reads go to disk). Prints "pinned N bytes" and sleeps until SIGTERM.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct stat st;
	void *p;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: pspin FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "pspin: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	p = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "pspin: %s: mmap: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (mlock(p, st.st_size) < 0) {
		fprintf(stderr, "pspin: %s: mlock %lld bytes: %s\n", argv[1], (long long)st.st_size,
			strerror(errno));
		return 1;
	}
	printf("pinned %lld bytes\n", (long long)st.st_size);
	fflush(stdout);
	for (;;)
		pause();
}
