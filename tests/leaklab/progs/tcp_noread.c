// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_noread CONNS BYTES_PER_SEC SECS — network leak from peers that never read: CONNS
 * loopback connections whose senders keep writing BYTES_PER_SEC in total while the receivers
 * never read. Data piles up in receive queues and, once a receive window is full, in the send
 * queues. With enough connections the buffers do not fill within SECS (each connection is
 * bounded by net.ipv4.tcp_rmem and tcp_wmem), so growth is steady. The answer: leak, network.
 */
#include "lab.h"
#include "net.h"

#define CHUNK 4096

struct ctx {
	int *fds;
	long conns;
};

static int step(long i, void *p)
{
	struct ctx *c = p;

	/* round robin; a full connection takes nothing and the next one gets the data */
	for (long k = 0; k < c->conns; k++)
		if (lab_send(c->fds[2 * ((i + k) % c->conns)], CHUNK) > 0)
			break;
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	struct ctx c;
	double a[3];
	int lfd;
	long n;

	lab_args(argc, argv, 3, 3, "tcp_noread CONNS BYTES_PER_SEC SECS", a);
	c.conns = (long)a[0];
	if (c.conns < 1)
		lab_usage("tcp_noread CONNS BYTES_PER_SEC SECS");
	c.fds = lab_fds("tcp_noread", 2 * c.conns, lab_setup());
	if (!c.fds || (lfd = lab_listen(&sa)) < 0)
		return 1;
	for (long i = 0; i < c.conns; i++)
		if (lab_pair(lfd, &sa, &c.fds[2 * i], &c.fds[2 * i + 1]))
			return 1;
	lab_ready("tcp_noread");
	n = lab_pace(a[1] / CHUNK, a[2], step, &c);
	lab_done("tcp_noread", n);
	lab_close_fds(c.fds, 2 * c.conns);
	close(lfd);
	return n < 0;
}
