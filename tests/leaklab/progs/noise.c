// SPDX-License-Identifier: GPL-2.0
/*
 * noise SECS DIR — the background of a busy server, run beside a scenario: a 256 MiB file in
 * DIR read again and again through the page cache (dropped from it after each pass, so reads
 * keep allocating page cache) at 64 MiB/s, and about 21 short-lived processes a second. It
 * makes no leak of its own; a verdict must be the same with it as without it.
 */
#include "lab.h"

#define FILE_MIB 256

static int fd;
static char buf[1 << 20];

static int step(long i, void *p)
{
	long blk = i % FILE_MIB;

	(void)p;
	if (pread(fd, buf, sizeof(buf), (off_t)blk << 20) < 0) {
		perror("noise: read");
		return -1;
	}
	if (blk == FILE_MIB - 1)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	return i % 3 ? 0 : lab_short_process();
}

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	double a[1];
	long n;

	lab_args(argc, argv, 2, 1, "noise SECS DIR", a);
	lab_setup();
	fd = lab_make_file(argv[2], "noise", FILE_MIB, path, sizeof(path));
	if (fd < 0)
		return 1;
	lab_ready("noise");
	n = lab_pace(64, a[0], step, NULL);
	lab_done("noise", n);
	close(fd);
	unlink(path);
	return n < 0;
}
