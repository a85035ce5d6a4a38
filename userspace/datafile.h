/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The data files the binary reads at run time (the default attribution rules, the gnuplot
 * scripts), found in one order for every command:
 *   1. the environment variable that names them, when set;
 *   2. relative to the executable: the source tree it was built in (O=.output puts it one
 *      level down, SAN=1 two), then ../share/poolscope of a `make install`;
 *   3. the distribution's /usr/share/poolscope.
 */
#ifndef PS_DATAFILE_H
#define PS_DATAFILE_H

#include <stddef.h>

/*
 * Finds src_rel (a path in the source tree, "analysis/rules/default.rules") or its installed
 * name (share/poolscope/installed) and writes it into buf. When env is set in the environment
 * its value is taken as the path (env_is_dir: a directory that holds installed). 0, or -ENOENT
 * with buf holding the last place looked at.
 */
int ps_datafile(const char *env, int env_is_dir, const char *src_rel, const char *installed,
		char *buf, size_t len);

/* The default rules file: $POOLSCOPE_RULES, else as above. */
int ps_default_rules_path(char *buf, size_t len);

struct ps_rules;
/*
 * Loads the rules of path, or the default ones when path is NULL; on failure prints one line
 * "poolscope CMD: why" and returns -errno.
 */
int ps_rules_open(const char *cmd, const char *path, struct ps_rules **out);

#endif
