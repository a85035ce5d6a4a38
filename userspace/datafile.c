// SPDX-License-Identifier: GPL-2.0
/* Finds the data files the binary reads at run time: see datafile.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "userspace/datafile.h"
#include "userspace/lib/util/util.h"
#include "analysis/analysis.h"

int ps_datafile(const char *env, int env_is_dir, const char *src_rel, const char *installed,
		char *buf, size_t len)
{
	const char *val = env ? getenv(env) : NULL;
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (val && *val) {
		/* a file named outright is the user's: whoever opens it says what is wrong */
		if (!env_is_dir) {
			ps_strlcpy(buf, val, len);
			return 0;
		}
		snprintf(buf, len, "%s/%s", val, installed);
		return access(buf, R_OK) ? -ENOENT : 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(buf, len, "%s/../%s", exe, src_rel);
		if (!access(buf, R_OK))
			return 0;
		snprintf(buf, len, "%s/../../%s", exe, src_rel);
		if (!access(buf, R_OK))
			return 0;
		snprintf(buf, len, "%s/../share/poolscope/%s", exe, installed);
		if (!access(buf, R_OK))
			return 0;
	}
	snprintf(buf, len, "/usr/share/poolscope/%s", installed);
	return access(buf, R_OK) ? -ENOENT : 0;
}

int ps_default_rules_path(char *buf, size_t len)
{
	return ps_datafile("POOLSCOPE_RULES", 0, "analysis/rules/default.rules", "default.rules",
			   buf, len);
}

int ps_rules_open(const char *cmd, const char *path, struct ps_rules **out)
{
	char buf[PATH_MAX], err[512] = "";
	int rc;

	if (!path) {
		if (ps_default_rules_path(buf, sizeof(buf))) {
			fprintf(stderr, "poolscope %s: default rules not found (set --rules FILE or "
				"POOLSCOPE_RULES)\n", cmd);
			return -ENOENT;
		}
		path = buf;
	}
	rc = ps_rules_load(out, path, err, sizeof(err));
	if (rc)
		fprintf(stderr, "poolscope %s: %s\n", cmd, err[0] ? err : ps_strerror(rc));
	return rc;
}
