// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_noread CONNS BYTES_PER_SEC SECS — network leak from a peer that never reads: CONNS
 * loopback connections whose senders keep writing BYTES_PER_SEC in total while the receivers
 * never read. Data piles up in receive queues and, once a receive window is full, in the send
 * queues. With enough connections the buffers do not fill within SECS (each connection is
 * bounded by net.ipv4.tcp_rmem and tcp_wmem), so growth is steady. The answer: leak, network.
 */
#include "lab.h"
#include "net.h"

struct ctx {
	int *cli;
	long conns, chunk;
};

static int step(long i, void *p)
{
	struct ctx *c = p;

	/* round robin; a full connection takes nothing and the next one gets the data */
	for (long k = 0; k < c->conns; k++)
		if (lab_send(c->cli[(i + k) % c->conns], c->chunk) > 0)
			break;
	return 0;
}

int main(int argc, char **argv)
{
	const char *usage = "tcp_noread CONNS BYTES_PER_SEC SECS";
	struct ctx c;
	double rate, secs;
	int lfd, *srv;
	struct sockaddr_in a;
	long n;

	if (argc != 4)
		return fprintf(stderr, "usage: %s\n", usage), 2;
	c.conns = (long)lab_arg(argv[1], usage);
	rate = lab_arg(argv[2], usage);
	secs = lab_arg(argv[3], usage);
	if (c.conns < 1)
		return fprintf(stderr, "usage: %s\n", usage), 2;
	lab_setup();
	c.cli = calloc(c.conns, sizeof(int));
	srv = calloc(c.conns, sizeof(int));
	if (!c.cli || !srv || (lfd = lab_listen(&a)) < 0)
		return 1;
	for (long i = 0; i < c.conns; i++)
		if (lab_pair(lfd, &a, &c.cli[i], &srv[i]))
			return 1;
	/* 4 KiB writes, as many a second as the byte rate needs */
	c.chunk = 4096;
	printf("lab: tcp_noread ready\n");
	fflush(stdout);
	n = lab_pace(rate / c.chunk, secs, step, &c);
	printf("lab: tcp_noread done %ld\n", n);
	fflush(stdout);
	for (long i = 0; i < c.conns; i++) {
		close(c.cli[i]);
		close(srv[i]);
	}
	close(lfd);
	return 0;
}
