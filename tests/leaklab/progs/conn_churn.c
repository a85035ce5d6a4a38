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
	struct ctx c;
	double a[2];
	long n;

	lab_args(argc, argv, 2, 2, "conn_churn RATE SECS", a);
	lab_setup();
	memset(c.buf, 'c', sizeof(c.buf));
	if ((c.lfd = lab_listen(&c.a)) < 0)
		return 1;
	lab_ready("conn_churn");
	n = lab_pace(a[0], a[1], step, &c);
	lab_done("conn_churn", n);
	close(c.lfd);
	return n < 0;
}
