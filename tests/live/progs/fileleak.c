// SPDX-License-Identifier: GPL-2.0
/*
 * fileleak NFILES HOLD_SECS DIR: creates NFILES empty files in DIR and keeps them open
 * (inode, dentry, file objects), prints "ready", holds HOLD_SECS (or until SIGTERM), then
 * closes and unlinks them all. A bounded, reversible slab "leak" for live tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_sig(int s)
{
	(void)s;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct rlimit rl;
	long n, hold, made = 0;
	char path[4096];
	int *fds, rc = 0;
	struct timespec t;

	if (argc != 4 || (n = atol(argv[1])) <= 0 || (hold = atol(argv[2])) < 0) {
		fprintf(stderr, "usage: fileleak NFILES HOLD_SECS DIR\n");
		return 2;
	}
	signal(SIGTERM, on_sig);
	signal(SIGINT, on_sig);
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if ((rlim_t)(n + 16) > rl.rlim_cur) {
		fprintf(stderr, "fileleak: %ld files need %ld fds, limit is %llu\n", n, n + 16,
			(unsigned long long)rl.rlim_cur);
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
		clock_gettime(CLOCK_MONOTONIC, &t);
		for (time_t end = t.tv_sec + hold; !stop;) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec >= end)
				break;
			usleep(50000);
		}
	}
	for (long i = 0; i < made; i++) {
		snprintf(path, sizeof(path), "%s/fileleak-%d-%ld", argv[3], (int)getpid(), i);
		close(fds[i]);
		unlink(path);
	}
	return rc;
}
