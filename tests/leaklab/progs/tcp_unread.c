// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_unread RATE BYTES SECS — network leak: RATE new loopback TCP connections a second, BYTES
 * written on each, the receiving side never reads and nothing is closed. Sockets, their
 * receive queues (skbs) and the socket inodes pile up in the kernel for SECS seconds. The
 * answer: leak, network path.
 */
#include "lab.h"
#include "net.h"

struct ctx {
	int lfd, *fds;
	long bytes;
	struct sockaddr_in a;
};

static int step(long i, void *p)
{
	struct ctx *c = p;

	if (lab_pair(c->lfd, &c->a, &c->fds[2 * i], &c->fds[2 * i + 1]))
		return -1;
	lab_send(c->fds[2 * i], c->bytes);
	return 0;
}

int main(int argc, char **argv)
{
	const char *usage = "tcp_unread RATE BYTES SECS";
	struct ctx c;
	double rate, secs;
	long n, max;
	rlim_t lim;

	if (argc != 4)
		return fprintf(stderr, "usage: %s\n", usage), 2;
	rate = lab_arg(argv[1], usage);
	c.bytes = (long)lab_arg(argv[2], usage);
	secs = lab_arg(argv[3], usage);
	lim = lab_setup();
	max = (long)(rate * secs) + 2;
	if ((rlim_t)(2 * max + 16) > lim) {
		fprintf(stderr, "tcp_unread: %ld connections need %ld fds, the limit is %llu\n",
			max, 2 * max + 16, (unsigned long long)lim);
		return 1;
	}
	c.fds = calloc(2 * max, sizeof(int));
	if (!c.fds || (c.lfd = lab_listen(&c.a)) < 0)
		return 1;
	printf("lab: tcp_unread ready\n");
	fflush(stdout);
	n = lab_pace(rate, secs, step, &c);
	if (n < 0)
		return 1;
	printf("lab: tcp_unread done %ld\n", n);
	fflush(stdout);
	for (long i = 0; i < 2 * n; i++)
		close(c.fds[i]);
	close(c.lfd);
	free(c.fds);
	return 0;
}
