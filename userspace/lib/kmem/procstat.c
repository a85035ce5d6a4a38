// SPDX-License-Identifier: GPL-2.0
/* /proc/meminfo and /proc/slabinfo sampling: see procstat.h. */
#include "userspace/lib/kmem/procstat.h"
#include "userspace/lib/trace/keys.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/lib/kmem/htab.h"

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

static FILE *open_proc(const char *path, char *err, size_t errlen, int *e)
{
	FILE *f = fopen(path, "r");

	*e = 0;
	if (!f) {
		*e = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-*e));
	}
	return f;
}

static int nomem(const char *path, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
	return -ENOMEM;
}

int ps_meminfo_read(struct ps_meminfo_tab *m, const char *path, char *err, size_t errlen)
{
	char line[256];
	int lineno = 0, e;
	FILE *f = open_proc(path, err, errlen, &e);

	m->n = 0;
	if (!f)
		return e;
	while (fgets(line, sizeof(line), f)) {
		struct ps_meminfo_field *fld;

		lineno++;
		if (ps_array_reserve((void **)&m->f, &m->cap, m->n + 1, sizeof(*m->f))) {
			e = nomem(path, err, errlen);
			break;
		}
		fld = &m->f[m->n];
		if (parse_meminfo_line(line, fld->name, sizeof(fld->name), &fld->value)) {
			snprintf(err, errlen, "%s:%d: expected 'Field: value [kB]'", path, lineno);
			e = -EINVAL;
			break;
		}
		m->n++;
	}
	fclose(f);
	return e;
}

/* "PROTO: key v key v ...": the value of key, -ENOENT when absent, -EINVAL when not a number. */
static int sockstat_field(const char *line, const char *key, int64_t *out)
{
	char buf[512], *save = NULL, *k, *v, *end;
	long long n;

	snprintf(buf, sizeof(buf), "%s", strchr(line, ':') + 1);
	for (k = strtok_r(buf, " \t\n", &save); k; k = strtok_r(NULL, " \t\n", &save)) {
		v = strtok_r(NULL, " \t\n", &save);
		if (strcmp(k, key))
			continue;
		if (!v)
			return -EINVAL;
		errno = 0;
		n = strtoll(v, &end, 10);
		if (*end || end == v || n < 0 || errno)
			return -EINVAL;
		*out = n;
		return 0;
	}
	return -ENOENT;
}

int ps_sockstat_read(struct ps_meminfo_tab *m, const char *path, long page_size, char *err,
		     size_t errlen)
{
	static const struct {
		const char *proto, *key, *name;
		bool pages;
	} want[] = {
		{ "TCP:", "mem", PS_SYS_SOCK_TCP_MEM, true },
		{ "UDP:", "mem", PS_SYS_SOCK_UDP_MEM, true },
		{ "FRAG:", "memory", PS_SYS_SOCK_FRAG_MEM, false },
	};
	char line[512];
	int lineno = 0, e;
	FILE *f = open_proc(path, err, errlen, &e);

	if (!f)
		return e;
	e = 0;
	while (!e && fgets(line, sizeof(line), f)) {
		lineno++;
		for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
			struct ps_meminfo_field *fld;
			int64_t v;
			int r;

			if (strncmp(line, want[i].proto, strlen(want[i].proto)))
				continue;
			r = sockstat_field(line, want[i].key, &v);
			if (r == -ENOENT)
				break;
			if (r || (want[i].pages && v > INT64_MAX / page_size)) {
				snprintf(err, errlen, "%s:%d: expected '%s ... %s N' with N a count",
					 path, lineno, want[i].proto, want[i].key);
				e = -EINVAL;
				break;
			}
			if (ps_array_reserve((void **)&m->f, &m->cap, m->n + 1, sizeof(*m->f))) {
				e = nomem(path, err, errlen);
				break;
			}
			fld = &m->f[m->n++];
			snprintf(fld->name, sizeof(fld->name), "%s", want[i].name);
			fld->value = want[i].pages ? v * page_size : v;
			break;
		}
	}
	fclose(f);
	return e;
}

void ps_meminfo_free(struct ps_meminfo_tab *m)
{
	free(m->f);
	memset(m, 0, sizeof(*m));
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

int ps_slabinfo_read(struct ps_slabinfo_tab *s, const char *path, char *err, size_t errlen)
{
	char line[512];
	unsigned long long active, num;
	int lineno = 0, e;
	FILE *f = open_proc(path, err, errlen, &e);

	s->n = 0;
	if (!f)
		return e;
	while (fgets(line, sizeof(line), f)) {
		struct ps_slabinfo_row *row;

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
		if (ps_array_reserve((void **)&s->row, &s->cap, s->n + 1, sizeof(*s->row))) {
			e = nomem(path, err, errlen);
			break;
		}
		row = &s->row[s->n];
		if (sscanf(line, "%127s %llu %llu %u %u %u", row->cache, &active, &num,
			   &row->objsize, &row->objperslab, &row->pagesperslab) != 6) {
			snprintf(err, errlen, "%s:%d: expected 'name active num objsize objperslab "
				 "pagesperslab ...'", path, lineno);
			e = -EINVAL;
			break;
		}
		row->active_objs = active;
		row->num_objs = num;
		s->n++;
	}
	fclose(f);
	return e;
}

void ps_slabinfo_free(struct ps_slabinfo_tab *s)
{
	free(s->row);
	memset(s, 0, sizeof(*s));
}
