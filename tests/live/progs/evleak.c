// SPDX-License-Identifier: GPL-2.0
/*
 * evleak N HOLD_SECS: opens N eventfds and keeps them (each one kmalloc'd eventfd_ctx in
 * do_eventfd(): the kmalloc/kfree path, besides a file and a dentry), prints "ready", holds
 * HOLD_SECS (or until SIGTERM), then closes them: close() frees the context with kfree().
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "leakprog.h"

int main(int argc, char **argv)
{
	long n, hold, made = 0;
	int *fds;

	if (argc != 3 || (n = atol(argv[1])) <= 0 || (hold = atol(argv[2])) < 0) {
		fprintf(stderr, "usage: evleak N HOLD_SECS\n");
		return 2;
	}
	leak_setup();
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
	leak_hold(hold);
	for (long i = 0; i < made; i++)
		close(fds[i]);
	free(fds);
	printf("released\n");
	return made == n ? 0 : 1;
}
