// SPDX-License-Identifier: GPL-2.0
/*
 * pagecache MIB SECS DIR — a negative: a MIB MiB file in DIR (written, then dropped from the
 * page cache) is read through the page cache at a steady pace over SECS seconds, as a file
 * server's reads would. The page cache grows, but it is reclaimable memory, not a kernel leak.
 * The answer: no leak in the kernel domain.
 */
#include <fcntl.h>
#include <limits.h>

#include "lab.h"

struct ctx {
	int fd;
	char *buf;
};

static int step(long i, void *p)
{
	struct ctx *c = p;

	if (pread(c->fd, c->buf, 1 << 20, (off_t)i << 20) < 0) {
		perror("pagecache: read");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *usage = "pagecache MIB SECS DIR";
	char path[PATH_MAX];
	struct ctx c;
	double mib, secs;
	long n;

	if (argc != 4)
		return fprintf(stderr, "usage: %s\n", usage), 2;
	mib = lab_arg(argv[1], usage);
	secs = lab_arg(argv[2], usage);
	lab_setup();
	snprintf(path, sizeof(path), "%s/lab-pc-%d", argv[3], (int)getpid());
	c.buf = malloc(1 << 20);
	c.fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (!c.buf || c.fd < 0) {
		fprintf(stderr, "pagecache: %s: %s\n", path, strerror(errno));
		return 1;
	}
	memset(c.buf, 'p', 1 << 20);
	for (long i = 0; i < (long)mib; i++)
		if (write(c.fd, c.buf, 1 << 20) != 1 << 20) {
			fprintf(stderr, "pagecache: writing %s: %s\n", path, strerror(errno));
			unlink(path);
			return 1;
		}
	fdatasync(c.fd);
	posix_fadvise(c.fd, 0, 0, POSIX_FADV_DONTNEED);
	printf("lab: pagecache ready\n");
	fflush(stdout);
	/* the whole file once over the run: MIB reads of 1 MiB */
	n = lab_pace(mib / secs, secs, step, &c);
	printf("lab: pagecache done %ld\n", n < 0 ? 0 : n);
	fflush(stdout);
	close(c.fd);
	unlink(path);
	return n < 0;
}
