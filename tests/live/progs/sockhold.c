// SPDX-License-Identifier: GPL-2.0
/*
 * sockhold N SECS: makes N TCP sockets (socket(2) only: one sock_inode_cache and one TCP object
 * each), says "ready N" and holds them SECS seconds, for the exactness test
 * (tests/live/record_exact.sh). Named so that `record --comm sockhold` counts it alone.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rlimit rl;
	long n, secs;

	if (argc != 3 || (n = atol(argv[1])) <= 0 || (secs = atol(argv[2])) < 0) {
		fprintf(stderr, "usage: sockhold N SECS\n");
		return 2;
	}
	/* one descriptor a socket: the soft limit (often 1024) up to the hard one */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (long i = 0; i < n; i++)
		if (socket(AF_INET, SOCK_STREAM, 0) < 0) {
			perror("sockhold: socket");
			return 1;
		}
	printf("ready %ld\n", n);
	fflush(stdout);
	sleep((unsigned)secs);
	return 0;
}
