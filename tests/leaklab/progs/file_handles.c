// SPDX-License-Identifier: GPL-2.0
/*
 * file_handles RATE SECS DIR — file-services leak: RATE files a second created in DIR and
 * opened, none closed. Open files (struct file), their inodes and dentries stay pinned for SECS
 * seconds; the files are removed at the end. The answer: leak, file-services path.
 */
#include <fcntl.h>
#include <limits.h>

#include "lab.h"

struct ctx {
	const char *dir;
	int *fds;
};

static int step(long i, void *p)
{
	struct ctx *c = p;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/lab-fh-%d-%ld", c->dir, (int)getpid(), i);
	c->fds[i] = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (c->fds[i] < 0) {
		fprintf(stderr, "file_handles: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *usage = "file_handles RATE SECS DIR";
	struct ctx c;
	double rate, secs;
	long n, max;
	rlim_t lim;
	char path[PATH_MAX];

	if (argc != 4)
		return fprintf(stderr, "usage: %s\n", usage), 2;
	rate = lab_arg(argv[1], usage);
	secs = lab_arg(argv[2], usage);
	c.dir = argv[3];
	lim = lab_setup();
	max = (long)(rate * secs) + 2;
	if ((rlim_t)(max + 16) > lim) {
		fprintf(stderr, "file_handles: %ld files need as many fds, the limit is %llu\n", max,
			(unsigned long long)lim);
		return 1;
	}
	c.fds = calloc(max, sizeof(int));
	if (!c.fds)
		return 1;
	printf("lab: file_handles ready\n");
	fflush(stdout);
	n = lab_pace(rate, secs, step, &c);
	printf("lab: file_handles done %ld\n", n < 0 ? 0 : n);
	fflush(stdout);
	for (long i = 0; i < (n < 0 ? max : n); i++) {
		if (c.fds[i] <= 0)
			continue;
		close(c.fds[i]);
		snprintf(path, sizeof(path), "%s/lab-fh-%d-%ld", c.dir, (int)getpid(), i);
		unlink(path);
	}
	return n < 0;
}
