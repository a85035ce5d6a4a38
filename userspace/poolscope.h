/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command table. Each userspace/cmd-<name>.c registers its command with PS_COMMAND(); the
 * linker gathers them in the "ps_cmds" section, so adding a command touches no shared file.
 *
 * Exit codes, set by main() only: 0 ok, 1 failure, 2 usage. A command returns one of them.
 */
#ifndef POOLSCOPE_H
#define POOLSCOPE_H

#define PS_EXIT_OK	0
#define PS_EXIT_FAIL	1
#define PS_EXIT_USAGE	2

struct ps_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;	/* one line for `poolscope help` */
};

#define PS_COMMAND(n, f, s)						\
	static const struct ps_cmd __ps_cmd_##n				\
		__attribute__((used, section("ps_cmds"), aligned(8))) = { #n, f, s }

/* Looks a command up by name; NULL when there is none. */
const struct ps_cmd *ps_cmd_find(const char *name);

#endif
