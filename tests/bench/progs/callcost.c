// SPDX-License-Identifier: GPL-2.0
/*
 * callcost OBJ [rev]: loads the programs of OBJ (tests/bench/progs/callcost.bpf.c), attaches
 * them in the object's order (rev: the reverse one: programs on one tracepoint run in the
 * order they were attached, and the first pays for what the others then find cached), prints
 * "ready" and holds them until killed.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAXP 32

int main(int argc, char **argv)
{
	struct bpf_program *p, *progs[MAXP];
	struct bpf_object *obj;
	int n = 0, rev = argc > 2 && !strcmp(argv[2], "rev"), e;

	if (argc < 2) {
		fprintf(stderr, "usage: callcost OBJ [rev]\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "callcost: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	e = bpf_object__load(obj);
	if (e) {
		fprintf(stderr, "callcost: %s: load: %s\n", argv[1], strerror(-e));
		return 1;
	}
	bpf_object__for_each_program(p, obj)
		if (n < MAXP)
			progs[n++] = p;
	for (int i = 0; i < n; i++) {
		p = progs[rev ? n - 1 - i : i];
		if (!bpf_program__attach(p)) {
			fprintf(stderr, "callcost: attach %s: %s\n", bpf_program__name(p),
				strerror(errno));
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	pause();
	return 0;
}
