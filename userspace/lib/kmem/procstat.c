// SPDX-License-Identifier: GPL-2.0
/* /proc/meminfo and /proc/slabinfo sampling: see procstat.h. */
#include "userspace/lib/kmem/procstat.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "userspace/lib/trace/trace.h"

/* "Name:   1234 kB" -> name, bytes. Fields without a unit (HugePages_*) are plain counts. */
static int parse_meminfo_line(const char *line, char *name, size_t namelen, int64_t *val)
{
	const char *colon = strchr(line, ':');
	long long v;
	char unit[8] = "";
	int n;

	if (!colon || (size_t)(colon - line) >= namelen)
		return -EINVAL;
	memcpy(name, line, colon - line);
	name[colon - line] = 0;
	n = sscanf(colon + 1, "%lld %7s", &v, unit);
	if (n < 1)
		return -EINVAL;
	if (n == 2 && !strcmp(unit, "kB"))
		v *= 1024;
	*val = v;
	return 0;
}

int ps_meminfo_write(struct ps_trace *t, const char *path, char *err, size_t errlen)
{
	char line[256], name[64];
	int64_t v;
	int lineno = 0, e = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-e));
		return e;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (parse_meminfo_line(line, name, sizeof(name), &v)) {
			snprintf(err, errlen, "%s:%d: expected 'Field: value [kB]'", path, lineno);
			e = -EINVAL;
			break;
		}
		e = ps_trace_add_sysstat(t, name, v);
		if (e) {
			snprintf(err, errlen, "%s: %s", path, ps_trace_errmsg(t));
			break;
		}
	}
	fclose(f);
	return e;
}

int ps_meminfo_get(const char *path, const char *field, int64_t *out)
{
	char line[256], name[64];
	int64_t v;
	FILE *f = fopen(path, "r");
	int e = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!parse_meminfo_line(line, name, sizeof(name), &v) && !strcmp(name, field)) {
			*out = v;
			e = 0;
			break;
		}
	}
	fclose(f);
	return e;
}

int ps_slabinfo_write(struct ps_trace *t, const char *path, char *err, size_t errlen)
{
	char line[512], name[128];
	unsigned long long active, num;
	unsigned objsize, perslab, pages;
	int lineno = 0, e = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-e));
		return e;
	}
	while (fgets(line, sizeof(line), f)) {
		struct ps_slabinfo si;

		lineno++;
		if (lineno == 1) {
			if (strncmp(line, "slabinfo - version: 2.", 22)) {
				snprintf(err, errlen, "%s:1: expected 'slabinfo - version: 2.x'", path);
				e = -EINVAL;
				break;
			}
			continue;
		}
		if (line[0] == '#')
			continue;
		if (sscanf(line, "%127s %llu %llu %u %u %u", name, &active, &num, &objsize, &perslab,
			   &pages) != 6) {
			snprintf(err, errlen, "%s:%d: expected 'name active num objsize objperslab "
				 "pagesperslab ...'", path, lineno);
			e = -EINVAL;
			break;
		}
		si.cache = name;
		si.active_objs = active;
		si.num_objs = num;
		si.objsize = objsize;
		si.objperslab = perslab;
		si.pagesperslab = pages;
		e = ps_trace_add_slabinfo(t, &si);
		if (e) {
			snprintf(err, errlen, "%s: %s", path, ps_trace_errmsg(t));
			break;
		}
	}
	fclose(f);
	return e;
}
