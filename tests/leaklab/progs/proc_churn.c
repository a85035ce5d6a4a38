// SPDX-License-Identifier: GPL-2.0
/*
 * proc_churn RATE SECS — a negative: RATE short-lived processes a second for SECS seconds, each
 * touching 1 MiB of its own memory and exiting, as a server's helpers and CGI-style workers
 * come and go. Task structs, kernel stacks, page tables and user pages are allocated and freed
 * all the time. The answer: no leak.
 */
#include "lab.h"

static int step(long i, void *p)
{
	(void)i;
	(void)p;
	return lab_short_process();
}

int main(int argc, char **argv)
{
	double a[2];
	long n;

	lab_args(argc, argv, 2, 2, "proc_churn RATE SECS", a);
	lab_setup();
	lab_ready("proc_churn");
	n = lab_pace(a[0], a[1], step, NULL);
	lab_done("proc_churn", n);
	return n < 0;
}
