// SPDX-License-Identifier: GPL-2.0
/*
 * proc_churn RATE SECS — a negative: RATE short-lived processes a second for SECS seconds, each
 * touching 1 MiB of its own memory and exiting, as a server's helpers and CGI-style workers
 * come and go. Task structs, kernel stacks, page tables and user pages are allocated and freed
 * all the time. The answer: no leak.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "lab.h"

static int step(long i, void *p)
{
	pid_t pid;

	(void)i;
	(void)p;
	pid = fork();
	if (pid < 0) {
		perror("proc_churn: fork");
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

int main(int argc, char **argv)
{
	const char *usage = "proc_churn RATE SECS";
	double rate, secs;
	long n;

	if (argc != 3)
		return fprintf(stderr, "usage: %s\n", usage), 2;
	rate = lab_arg(argv[1], usage);
	secs = lab_arg(argv[2], usage);
	lab_setup();
	printf("lab: proc_churn ready\n");
	fflush(stdout);
	n = lab_pace(rate, secs, step, NULL);
	printf("lab: proc_churn done %ld\n", n < 0 ? 0 : n);
	fflush(stdout);
	return n < 0;
}
