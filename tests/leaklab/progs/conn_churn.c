// SPDX-License-Identifier: GPL-2.0
/*
 * conn_churn RATE SECS — a negative: RATE short loopback TCP exchanges a second (connect, 4 KiB
 * request, 4 KiB reply, both read, client closes first, then the server) for SECS seconds, as
 * a server's clients come and go. Socket memory is allocated and freed all the time; the
 * client's TIME_WAIT entries live 60 s (TCP_TIMEWAIT_LEN) and then go, bounded by
 * net.ipv4.tcp_max_tw_buckets. So for its first 60 s the run grows kernel memory (the entries
 * fill up to about RATE x 60), then stays flat, as a server's does once it has run a minute;
 * tests/leaklab/run.sh records after that. The answer: no leak.
 */
#include "lab.h"
#include "net.h"

struct ctx {
	int lfd;
	struct sockaddr_in a;
	char buf[4096];
};

static int step(long i, void *p)
{
	struct ctx *c = p;

	(void)i;
	return lab_exchange(c->lfd, &c->a, c->buf, sizeof(c->buf));
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
