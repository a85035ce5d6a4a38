// SPDX-License-Identifier: GPL-2.0
/*
 * conn_churn RATE SECS — a negative: RATE short loopback TCP exchanges a second (connect, 4 KiB
 * request, 4 KiB reply, both read, client closes first, then the server) for SECS seconds, as
 * a server's clients come and go. Socket memory is allocated and freed all the time; the
 * client's TIME_WAIT entries live 60 s (TCP_TIMEWAIT_LEN) and then go, bounded by
 * net.ipv4.tcp_max_tw_buckets. The answer: no leak.
 */
#include "lab.h"
#include "net.h"

struct ctx {
	int lfd;
	struct sockaddr_in a;
	char buf[4096];
};

static int read_all(int fd, char *buf, long n)
{
	while (n > 0) {
		ssize_t r = read(fd, buf, n);

		if (r <= 0)
			return -1;
		n -= r;
	}
	return 0;
}

static int step(long i, void *p)
{
	struct ctx *c = p;
	int cli, srv;

	(void)i;
	if (lab_pair(c->lfd, &c->a, &cli, &srv))
		return -1;
	if (write(cli, c->buf, sizeof(c->buf)) != sizeof(c->buf) ||
	    read_all(srv, c->buf, sizeof(c->buf)) ||
	    write(srv, c->buf, sizeof(c->buf)) != sizeof(c->buf) ||
	    read_all(cli, c->buf, sizeof(c->buf))) {
		perror("conn_churn: exchange");
		return -1;
	}
	close(cli);
	close(srv);
	return 0;
}

int main(int argc, char **argv)
{
	const char *usage = "conn_churn RATE SECS";
	struct ctx c;
	double rate, secs;
	long n;

	if (argc != 3)
		return fprintf(stderr, "usage: %s\n", usage), 2;
	rate = lab_arg(argv[1], usage);
	secs = lab_arg(argv[2], usage);
	lab_setup();
	memset(c.buf, 'c', sizeof(c.buf));
	if ((c.lfd = lab_listen(&c.a)) < 0)
		return 1;
	printf("lab: conn_churn ready\n");
	fflush(stdout);
	n = lab_pace(rate, secs, step, &c);
	printf("lab: conn_churn done %ld\n", n < 0 ? 0 : n);
	fflush(stdout);
	close(c.lfd);
	return n < 0;
}
