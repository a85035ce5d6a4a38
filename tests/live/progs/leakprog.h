/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the live tests' leak programs (tcpleak, fileleak, evleak) share: SIGTERM/SIGINT end the
 * hold early (the tests stop them that way), the descriptor limit goes up to its hard limit
 * (they hold thousands of fds), and the hold itself. Header-only: each program is one file.
 */
#ifndef PS_LIVE_LEAKPROG_H
#define PS_LIVE_LEAKPROG_H

#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_sig(int s)
{
	(void)s;
	stop = 1;
}

/* Installs the handlers and returns the descriptor limit now in force. */
static rlim_t leak_setup(void)
{
	struct rlimit rl;

	signal(SIGTERM, on_sig);
	signal(SIGINT, on_sig);
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return RLIM_INFINITY;		/* unknown: let the opens say */
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	return rl.rlim_cur;
}

/* Waits secs seconds, or until SIGTERM/SIGINT. */
static void leak_hold(long secs)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	for (time_t end = t.tv_sec + secs; !stop; usleep(20000)) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec >= end)
			break;
	}
}

#endif
