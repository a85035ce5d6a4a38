// SPDX-License-Identifier: GPL-2.0
/*
 * fileleak NFILES HOLD_SECS DIR: creates NFILES empty files in DIR and keeps them open
 * (inode, dentry, file objects), prints "ready", holds HOLD_SECS (or until SIGTERM), then
 * closes and unlinks them all. A bounded, reversible slab "leak" for live tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leakprog.h"

int main(int argc, char **argv)
{
	long n, hold, made = 0;
	char path[4096];
	int *fds, rc = 0;
	rlim_t lim;

	if (argc != 4 || (n = atol(argv[1])) <= 0 || (hold = atol(argv[2])) < 0) {
		fprintf(stderr, "usage: fileleak NFILES HOLD_SECS DIR\n");
		return 2;
	}
	lim = leak_setup();
	if ((rlim_t)(n + 16) > lim) {
		fprintf(stderr, "fileleak: %ld files need %ld fds, limit is %llu\n", n, n + 16,
			(unsigned long long)lim);
		return 1;
	}
	fds = calloc(n, sizeof(int));
	if (!fds)
		return 1;
	for (; made < n && !stop; made++) {
		snprintf(path, sizeof(path), "%s/fileleak-%d-%ld", argv[3], (int)getpid(), made);
		fds[made] = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
		if (fds[made] < 0) {
			fprintf(stderr, "fileleak: %s: %s\n", path, strerror(errno));
			rc = 1;
			break;
		}
	}
	if (!rc) {
		printf("ready\n");
		fflush(stdout);
		leak_hold(hold);
	}
	for (long i = 0; i < made; i++) {
		snprintf(path, sizeof(path), "%s/fileleak-%d-%ld", argv[3], (int)getpid(), i);
		close(fds[i]);
		unlink(path);
	}
	return rc;
}
