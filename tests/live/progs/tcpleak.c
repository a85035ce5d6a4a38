// SPDX-License-Identifier: GPL-2.0
/*
 * tcpleak NCONN BYTES_PER_CONN HOLD_SECS: a bounded, reversible kernel-memory "leak" through
 * the network stack. Opens NCONN loopback TCP connections whose receivers never read, writes
 * BYTES_PER_CONN on each, prints "ready" once everything is queued (receive queues and unsent
 * write queues), holds HOLD_SECS, then closes everything and exits. Used by the recorder's and
 * the analysis live tests.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "leakprog.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	long nconn, bytes, hold;
	rlim_t lim;
	int lfd, *cli, *srv;
	long *left;
	static char buf[65536];
	double t0;

	if (argc != 4 || (nconn = atol(argv[1])) <= 0 || (bytes = atol(argv[2])) < 0 ||
	    (hold = atol(argv[3])) < 0) {
		fprintf(stderr, "usage: tcpleak NCONN BYTES_PER_CONN HOLD_SECS\n");
		return 2;
	}
	lim = leak_setup();
	signal(SIGPIPE, SIG_IGN);
	if ((rlim_t)(2 * nconn + 16) > lim) {
		fprintf(stderr, "tcpleak: %ld connections need %ld fds, limit is %llu\n", nconn,
			2 * nconn + 16, (unsigned long long)lim);
		return 1;
	}
	cli = calloc(nconn, sizeof(int));
	srv = calloc(nconn, sizeof(int));
	left = calloc(nconn, sizeof(long));
	if (!cli || !srv || !left)
		return 1;
	memset(buf, 'x', sizeof(buf));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 4096) ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen)) {
		perror("tcpleak: listen");
		return 1;
	}
	for (long i = 0; i < nconn; i++) {
		cli[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (cli[i] < 0 || connect(cli[i], (struct sockaddr *)&a, sizeof(a))) {
			perror("tcpleak: connect");
			return 1;
		}
		srv[i] = accept(lfd, NULL, NULL);
		if (srv[i] < 0) {
			perror("tcpleak: accept");
			return 1;
		}
		fcntl(cli[i], F_SETFL, O_NONBLOCK);
		left[i] = bytes;
	}
	/* Queue everything; a connection whose windows are full stays partially written. */
	t0 = now();
	for (;;) {
		long pending = 0, progress = 0;

		for (long i = 0; i < nconn; i++) {
			while (left[i] > 0) {
				ssize_t n = write(cli[i], buf, left[i] < (long)sizeof(buf) ?
						  (size_t)left[i] : sizeof(buf));

				if (n <= 0)
					break;
				left[i] -= n;
				progress += n;
			}
			pending += left[i];
		}
		if (!pending || stop)
			break;
		if (!progress && now() - t0 > 10) {
			fprintf(stderr, "tcpleak: %ld bytes could not be queued (windows full)\n",
				pending);
			break;
		}
		if (!progress)
			usleep(10000);
	}
	printf("ready\n");
	fflush(stdout);
	leak_hold(hold);
	for (long i = 0; i < nconn; i++) {
		close(cli[i]);
		close(srv[i]);
	}
	close(lfd);
	return 0;
}
