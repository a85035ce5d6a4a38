// SPDX-License-Identifier: GPL-2.0
/*
 * pagecache MIB SECS DIR — a negative: a MIB MiB file in DIR (written, then dropped from the
 * page cache) is read through the page cache at a steady pace over SECS seconds, as a file
 * server's reads would. The page cache grows, but it is reclaimable memory, not a kernel leak.
 * The answer: no leak in the kernel domain.
 */
#include "lab.h"

static int fd;
static char buf[1 << 20];

static int step(long i, void *p)
{
	(void)p;
	if (pread(fd, buf, sizeof(buf), (off_t)i << 20) < 0) {
		perror("pagecache: read");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	double a[2];
	long n;

	lab_args(argc, argv, 3, 2, "pagecache MIB SECS DIR", a);
	lab_setup();
	fd = lab_make_file(argv[3], "pc", (long)a[0], path, sizeof(path));
	if (fd < 0)
		return 1;
	lab_ready("pagecache");
	/* the whole file once over the run: MIB reads of 1 MiB */
	n = lab_pace(a[0] / a[1], a[1], step, NULL);
	lab_done("pagecache", n);
	close(fd);
	unlink(path);
	return n < 0;
}
