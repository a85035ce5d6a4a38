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
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
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

static inline void lab_usage(const char *usage)
{
	fprintf(stderr, "usage: %s\n", usage);
	exit(2);
}

/* A number >= 0 from argv, or usage. */
static inline double lab_arg(const char *s, const char *usage)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= 0))
		lab_usage(usage);
	return v;
}

/* Checks there are nargs arguments and reads the first nnum as numbers into v, or usage. */
static inline void lab_args(int argc, char **argv, int nargs, int nnum, const char *usage, double *v)
{
	if (argc != nargs + 1)
		lab_usage(usage);
	for (int i = 0; i < nnum; i++)
		v[i] = lab_arg(argv[i + 1], usage);
}

/* The protocol's two lines; stdout is flushed so the runner sees them at once. */
static inline void lab_ready(const char *name)
{
	printf("lab: %s ready\n", name);
	fflush(stdout);
}

static inline void lab_done(const char *name, long n)
{
	printf("lab: %s done %ld\n", name, n < 0 ? 0 : n);
	fflush(stdout);
}

/* A child that writes every page of 1 MiB of its own memory and exits; waited for. 0 or -1. */
static inline int lab_short_process(void)
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("lab: fork");
		return -1;
	}
	if (pid == 0) {
		char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m != MAP_FAILED)
			for (long off = 0; off < 1 << 20; off += 4096)
				m[off] = 1;
		_exit(0);
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return 0;
}

/*
 * Creates DIR/lab-TAG-PID of mib MiB (written, synced, then dropped from the page cache so that
 * reading it allocates page cache) and returns its fd with the name in path, or -1.
 */
static inline int lab_make_file(const char *dir, const char *tag, long mib, char *path, size_t len)
{
	static char buf[1 << 20];
	int fd;

	snprintf(path, len, "%s/lab-%s-%d", dir, tag, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "lab: %s: %s\n", path, strerror(errno));
		return -1;
	}
	memset(buf, 'l', sizeof(buf));
	for (long i = 0; i < mib; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			fprintf(stderr, "lab: writing %s: %s\n", path, strerror(errno));
			close(fd);
			unlink(path);
			return -1;
		}
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	return fd;
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

/* Allocates n ints for descriptors after checking the limit allows n + 16 open; NULL on error. */
static inline int *lab_fds(const char *name, long n, rlim_t lim)
{
	int *fds;

	if ((rlim_t)(n + 16) > lim) {
		fprintf(stderr, "%s: %ld descriptors needed, the limit is %llu\n", name, n,
			(unsigned long long)lim);
		return NULL;
	}
	fds = calloc(n + 1, sizeof(int));
	if (!fds)
		perror(name);
	return fds;
}

/* Closes the first n descriptors of fds (those > 0) and frees the array. */
static inline void lab_close_fds(int *fds, long n)
{
	for (long i = 0; i < n; i++)
		if (fds[i] > 0)
			close(fds[i]);
	free(fds);
}

/* Sleeps secs seconds or until a signal. */
static inline void lab_hold(double secs)
{
	double end = lab_now() + secs;

	while (!lab_stop && lab_now() < end)
		usleep(20000);
}

#endif
