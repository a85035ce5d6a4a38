// SPDX-License-Identifier: GPL-2.0
/*
 * file_handles RATE SECS DIR — file-services leak: RATE files a second created in DIR and
 * opened, none closed. Open files (struct file), their inodes and dentries stay pinned for SECS
 * seconds; the files are removed at the end. The answer: leak, file-services path.
 */
#include "lab.h"

static const char *dir;

static void name(char *path, size_t len, long i)
{
	snprintf(path, len, "%s/lab-fh-%d-%ld", dir, (int)getpid(), i);
}

static int step(long i, void *p)
{
	int *fds = p;
	char path[PATH_MAX];

	name(path, sizeof(path), i);
	fds[i] = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fds[i] < 0) {
		fprintf(stderr, "file_handles: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	double a[2];
	long n, max;
	int *fds;

	lab_args(argc, argv, 3, 2, "file_handles RATE SECS DIR", a);
	dir = argv[3];
	max = (long)(a[0] * a[1]) + 2;
	fds = lab_fds("file_handles", max, lab_setup());
	if (!fds)
		return 1;
	lab_ready("file_handles");
	n = lab_pace(a[0], a[1], step, fds);
	lab_done("file_handles", n);
	/* a failed step leaves the files made before it: remove every name that was opened */
	for (long i = 0; i < max && fds[i] > 0; i++) {
		name(path, sizeof(path), i);
		unlink(path);
	}
	lab_close_fds(fds, max);
	return n < 0;
}
