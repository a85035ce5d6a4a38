// SPDX-License-Identifier: GPL-2.0
/*
 * evleak N HOLD_SECS: opens N eventfds and keeps them (each one kmalloc'd eventfd_ctx in
 * do_eventfd(): the kmalloc/kfree path, besides a file and a dentry), prints "ready", holds
 * HOLD_SECS (or until SIGTERM), then closes them: close() frees the context with kfree().
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
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
	struct timespec t;
	int *fds;

	if (argc != 3 || (n = atol(argv[1])) <= 0 || (hold = atol(argv[2])) < 0) {
		fprintf(stderr, "usage: evleak N HOLD_SECS\n");
		return 2;
	}
	signal(SIGTERM, on_sig);
	signal(SIGINT, on_sig);
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	fds = calloc(n, sizeof(*fds));
	if (!fds)
		return 1;
	for (; made < n; made++) {
		fds[made] = eventfd(0, EFD_CLOEXEC);
		if (fds[made] < 0) {
			perror("evleak: eventfd");
			break;
		}
	}
	printf("ready %ld\n", made);
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (long end = t.tv_sec + hold; !stop; usleep(20000)) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec >= end)
			break;
	}
	for (long i = 0; i < made; i++)
		close(fds[i]);
	free(fds);
	printf("released\n");
	return made == n ? 0 : 1;
}
