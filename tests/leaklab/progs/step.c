// SPDX-License-Identifier: GPL-2.0
/*
 * step DELAY CONNS BYTES SECS — a negative: after DELAY seconds, CONNS loopback connections
 * with BYTES unread on each are made at once, then held unchanged until SECS seconds have
 * passed since the start. Kernel memory on the network path steps up once and stays flat: what
 * a server's connection pool or a queue depth's in-flight buffers do. The answer: plateau (or
 * stable), never leak.
 */
#include "lab.h"
#include "net.h"

int main(int argc, char **argv)
{
	const char *usage = "step DELAY CONNS BYTES SECS";
	double delay, secs, t0;
	long conns, bytes;
	struct sockaddr_in a;
	int lfd, *fds;
	rlim_t lim;

	if (argc != 5)
		return fprintf(stderr, "usage: %s\n", usage), 2;
	delay = lab_arg(argv[1], usage);
	conns = (long)lab_arg(argv[2], usage);
	bytes = (long)lab_arg(argv[3], usage);
	secs = lab_arg(argv[4], usage);
	lim = lab_setup();
	if ((rlim_t)(2 * conns + 16) > lim) {
		fprintf(stderr, "step: %ld connections need %ld fds, the limit is %llu\n", conns,
			2 * conns + 16, (unsigned long long)lim);
		return 1;
	}
	fds = calloc(2 * conns + 1, sizeof(int));
	if (!fds || (lfd = lab_listen(&a)) < 0)
		return 1;
	t0 = lab_now();
	printf("lab: step ready\n");
	fflush(stdout);
	lab_hold(delay);
	for (long i = 0; i < conns && !lab_stop; i++) {
		if (lab_pair(lfd, &a, &fds[2 * i], &fds[2 * i + 1]))
			return 1;
		lab_send(fds[2 * i], bytes);
	}
	lab_hold(secs - (lab_now() - t0));
	printf("lab: step done %ld\n", conns);
	fflush(stdout);
	for (long i = 0; i < 2 * conns; i++)
		if (fds[i] > 0)
			close(fds[i]);
	close(lfd);
	return 0;
}
