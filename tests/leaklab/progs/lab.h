/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the leak lab's scenario programs share. Each program makes one kind of real kernel (or
 * user) memory behaviour with a known answer, paced in time: work items at a steady rate for a
 * number of seconds, then everything it holds is released and it exits 0. SIGTERM or SIGINT
 * end the run early (and still release). Header-only: each scenario is one file.
 *
 * Output protocol (read by tests/leaklab/run.sh): one line "lab: NAME ready" when set up,
 * "lab: NAME done ITEMS" before releasing, errors on stderr with exit 1, usage with exit 2.
 */
#ifndef PS_LAB_H
#define PS_LAB_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t lab_stop;

static inline void lab_on_sig(int s)
{
	(void)s;
	lab_stop = 1;
}

static inline double lab_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Signal handlers, no SIGPIPE, and the descriptor limit raised to its hard limit. */
static inline rlim_t lab_setup(void)
{
	struct rlimit rl;

	signal(SIGTERM, lab_on_sig);
	signal(SIGINT, lab_on_sig);
	signal(SIGPIPE, SIG_IGN);
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return RLIM_INFINITY;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	return rl.rlim_cur;
}

/* A positive number from argv, or usage. */
static inline double lab_arg(const char *s, const char *usage)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= 0)) {
		fprintf(stderr, "usage: %s\n", usage);
		exit(2);
	}
	return v;
}

/*
 * Calls step(i, ctx) rate times a second, evenly spaced, for secs seconds (or until a signal or
 * step returns non-zero). Returns the number of steps made, or -1 when a step failed.
 */
static inline long lab_pace(double rate, double secs, int (*step)(long i, void *ctx), void *ctx)
{
	double t0 = lab_now(), t;
	long i = 0;

	while (!lab_stop && (t = lab_now() - t0) < secs) {
		long due = rate > 0 ? (long)(t * rate) + 1 : 0;

		while (i < due && !lab_stop) {
			if (step(i, ctx))
				return -1;
			i++;
		}
		usleep(rate > 0 && rate < 1000 ? (useconds_t)(1e6 / rate / 2) : 500);
	}
	return i;
}

/* Sleeps secs seconds or until a signal. */
static inline void lab_hold(double secs)
{
	double end = lab_now() + secs;

	while (!lab_stop && lab_now() < end)
		usleep(20000);
}

#endif
