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
	struct sockaddr_in sa;
	double a[4], t0;
	long conns;
	int lfd, *fds;

	lab_args(argc, argv, 4, 4, "step DELAY CONNS BYTES SECS", a);
	conns = (long)a[1];
	fds = lab_fds("step", 2 * conns, lab_setup());
	if (!fds || (lfd = lab_listen(&sa)) < 0)
		return 1;
	t0 = lab_now();
	lab_ready("step");
	lab_hold(a[0]);
	for (long i = 0; i < conns && !lab_stop; i++) {
		if (lab_pair(lfd, &sa, &fds[2 * i], &fds[2 * i + 1]))
			return 1;
		lab_send(fds[2 * i], (long)a[2]);
	}
	lab_hold(a[3] - (lab_now() - t0));
	lab_done("step", conns);
	lab_close_fds(fds, 2 * conns);
	close(lfd);
	return 0;
}
