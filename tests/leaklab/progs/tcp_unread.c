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
	struct ctx c;
	double a[3];
	long n;

	lab_args(argc, argv, 3, 3, "tcp_unread RATE BYTES SECS", a);
	c.bytes = (long)a[1];
	c.fds = lab_fds("tcp_unread", 2 * ((long)(a[0] * a[2]) + 2), lab_setup());
	if (!c.fds || (c.lfd = lab_listen(&c.a)) < 0)
		return 1;
	lab_ready("tcp_unread");
	n = lab_pace(a[0], a[2], step, &c);
	lab_done("tcp_unread", n);
	lab_close_fds(c.fds, 2 * (n < 0 ? 0 : n));
	close(c.lfd);
	return n < 0;
}
