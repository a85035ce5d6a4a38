// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope: kernel-memory tracing and analysis. main() dispatches to the subcommands that the
 * cmd-*.c files register (see poolscope.h), and maps nothing else: each command prints its own
 * errors and returns an exit code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/poolscope.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/util/version.h"
#include "userspace/lib/trace/trace.h"

extern const struct ps_cmd __start_ps_cmds[], __stop_ps_cmds[];

const struct ps_cmd *ps_cmd_find(const char *name)
{
	for (const struct ps_cmd *c = __start_ps_cmds; c < __stop_ps_cmds; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static int cmp_cmd(const void *a, const void *b)
{
	return strcmp((*(const struct ps_cmd *const *)a)->name, (*(const struct ps_cmd *const *)b)->name);
}

static void usage(FILE *f)
{
	size_t n = __stop_ps_cmds - __start_ps_cmds;
	const struct ps_cmd *sorted[64];

	fprintf(f, "usage: poolscope COMMAND [OPTIONS]\n\n"
		   "Kernel-memory tracing: record per-tag allocations (Linux eBPF), convert Windows\n"
		   "pool traces, and find what grows.\n\ncommands:\n");
	if (n > 64)
		n = 64;
	for (size_t i = 0; i < n; i++)
		sorted[i] = &__start_ps_cmds[i];
	qsort(sorted, n, sizeof(sorted[0]), cmp_cmd);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  %-10s %s\n", sorted[i]->name, sorted[i]->summary);
	fprintf(f, "\n'poolscope COMMAND -h' shows a command's options and examples.\n");
}

static int cmd_help(int argc, char **argv)
{
	const struct ps_cmd *c;
	char *hv[] = { NULL, "-h", NULL };

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return PS_EXIT_OK;
	}
	c = ps_cmd_find(argv[1]);
	if (!c) {
		fprintf(stderr, "poolscope help: no command '%s'\n", argv[1]);
		return PS_EXIT_USAGE;
	}
	if (c->fn == cmd_help) {
		usage(stdout);
		return PS_EXIT_OK;
	}
	hv[0] = argv[1];
	return c->fn(2, hv);
}
PS_COMMAND(help, cmd_help, "show the commands, or one command's options");

static int cmd_version(int argc, char **argv)
{
	printf("poolscope %s\n", POOLSCOPE_VERSION);
	printf("trace format %d\n", PS_TRACE_SCHEMA_VERSION);
	return PS_EXIT_OK;
}
PS_COMMAND(version, cmd_version, "print the tool and trace-format versions");

int main(int argc, char **argv)
{
	const struct ps_cmd *c;

	if (argc < 2) {
		usage(stderr);
		return PS_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return cmd_help(1, argv);
	if (!strcmp(argv[1], "--version"))
		return cmd_version(1, argv);
	c = ps_cmd_find(argv[1]);
	if (!c) {
		fprintf(stderr, "poolscope: unknown command '%s' (see 'poolscope help')\n", argv[1]);
		return PS_EXIT_USAGE;
	}
	return ps_finish_stdout(c->fn(argc - 1, argv + 1));
}
