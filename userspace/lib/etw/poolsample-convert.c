// SPDX-License-Identifier: GPL-2.0
/*
 * Reader of the pool sample format and its conversion into a ps_run: one interval per
 * complete snapshot, one tag per (pool tag, pool type), alloc/free deltas between snapshots,
 * live bytes/objects absolute.  Only snapshots closed by their "E" line are used so that a
 * sampler killed mid-write never yields half a snapshot as data.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/lib/etw/poolsample.h"
#include "userspace/lib/etw/convert.h"
#include "userspace/lib/etw/poolsample-convert.h"

struct rec {
	uint32_t tag;
	int paged;
	uint64_t allocs, frees, bytes;
};

struct snap {
	uint64_t wall, np, pg, avail;
	size_t n;
	struct rec *r;
};

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return (errno || *end) ? -EINVAL : 0;
}

static void free_snaps(struct snap *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].r);
	free(s);
}

int ps_convert_poolsample(const char *path, struct ps_run **out, char *err, size_t errlen)
{
	struct snap *snaps = NULL, cur = { 0 };
	size_t nsnaps = 0, lineno = 0;
	int in_snap = 0, rc = -EINVAL, torn = 0;
	char line[512], host[128] = "", osver[64] = "", ivl[32] = "";
	struct ps_run *r = NULL;
	FILE *f = fopen(path, "r");

	*out = NULL;
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		char *tok[8] = { 0 }, *save = NULL;
		int nt = 0;
		uint64_t v[6];

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%zu: line too long", path, lineno);
			goto out;
		}
		line[strcspn(line, "\r\n")] = '\0';
		if (lineno == 1) {
			size_t ml = strlen(PS_POOLSAMPLE_MAGIC);

			if (strncmp(line, PS_POOLSAMPLE_MAGIC, ml) || line[ml] != ' ') {
				snprintf(err, errlen, "%s:1: not a poolscope sample file (expected '%s <version>')",
					 path, PS_POOLSAMPLE_MAGIC);
				goto out;
			}
			if (strcmp(line + ml + 1, "1")) {
				snprintf(err, errlen, "%s:1: unsupported version '%s' (expected 1)",
					 path, line + ml + 1);
				goto out;
			}
			continue;
		}
		if (!strncmp(line, "#meta ", 6)) {
			char *k = line + 6, *val = strchr(k, '\t');

			if (!val)
				continue;
			*val++ = '\0';
			if (!strcmp(k, "host"))
				snprintf(host, sizeof(host), "%s", val);
			else if (!strcmp(k, "os_version"))
				snprintf(osver, sizeof(osver), "%s", val);
			else if (!strcmp(k, "interval_ns"))
				snprintf(ivl, sizeof(ivl), "%s", val);
			continue;
		}
		if (line[0] == '#' || !line[0])
			continue;
		for (char *t = strtok_r(line, " ", &save); t && nt < 8; t = strtok_r(NULL, " ", &save))
			tok[nt++] = t;
		if (!nt)
			continue;		/* only spaces: a blank line */
		if (!strcmp(tok[0], "S")) {
			if (in_snap) {
				snprintf(err, errlen, "%s:%zu: snapshot started before the previous one ended",
					 path, lineno);
				goto out;
			}
			for (int i = 0; i < 5; i++) {
				static const char *const names[] = { "snap", "wall_ns", "nonpaged_bytes",
								     "paged_bytes", "avail_bytes" };

				/* the wall clock within what a trace holds (until 2116) */
				if (nt != 6 || parse_u64(tok[i + 1], &v[i]) ||
				    (i == 1 && v[i] > (uint64_t)PS_TRACE_TIME_MAX) ||
				    (i >= 2 && v[i] > PS_CONVERT_ABSURD)) {
					snprintf(err, errlen, "%s:%zu: field %s: expected a plausible unsigned number",
						 path, lineno, names[i]);
					goto out;
				}
			}
			free(cur.r);
			cur = (struct snap){ .wall = v[1], .np = v[2], .pg = v[3], .avail = v[4] };
			in_snap = 1;
		} else if (!strcmp(tok[0], "T")) {
			char *end;
			struct rec *nr;
			unsigned long tg;

			if (!in_snap || nt != 6) {
				snprintf(err, errlen, "%s:%zu: tag line outside a snapshot or not 6 fields",
					 path, lineno);
				goto out;
			}
			tg = strtoul(tok[1], &end, 16);
			if (*end || strlen(tok[1]) != 8) {
				snprintf(err, errlen, "%s:%zu: field tag_hex: expected 8 hex digits", path, lineno);
				goto out;
			}
			if (strcmp(tok[2], "paged") && strcmp(tok[2], "nonpaged")) {
				snprintf(err, errlen, "%s:%zu: field pool: expected paged or nonpaged", path, lineno);
				goto out;
			}
			for (int i = 0; i < 3; i++) {
				static const char *const names[] = { "allocs", "frees", "bytes" };

				if (parse_u64(tok[i + 3], &v[i]) || v[i] > PS_CONVERT_ABSURD) {
					snprintf(err, errlen, "%s:%zu: field %s: expected a plausible unsigned number",
						 path, lineno, names[i]);
					goto out;
				}
			}
			nr = realloc(cur.r, (cur.n + 1) * sizeof(*nr));
			if (!nr) {
				rc = -ENOMEM;
				goto out;
			}
			cur.r = nr;
			cur.r[cur.n++] = (struct rec){ (uint32_t)tg, !strcmp(tok[2], "paged"), v[0], v[1], v[2] };
		} else if (!strcmp(tok[0], "E")) {
			struct snap *ns;

			if (!in_snap) {
				snprintf(err, errlen, "%s:%zu: end marker without a snapshot", path, lineno);
				goto out;
			}
			ns = realloc(snaps, (nsnaps + 1) * sizeof(*ns));
			if (!ns) {
				rc = -ENOMEM;
				goto out;
			}
			snaps = ns;
			snaps[nsnaps++] = cur;
			cur = (struct snap){ 0 };
			in_snap = 0;
		} else {
			snprintf(err, errlen, "%s:%zu: unknown record '%s' (expected S, T or E)",
				 path, lineno, tok[0]);
			goto out;
		}
	}
	if (lineno == 0) {
		snprintf(err, errlen, "%s: empty file (expected '%s 1')", path, PS_POOLSAMPLE_MAGIC);
		goto out;
	}
	if (in_snap)
		torn = 1;
	if (!nsnaps) {
		snprintf(err, errlen, "%s: no complete snapshot", path);
		goto out;
	}
	r = ps_run_new((uint32_t)nsnaps);
	if (!r) {
		rc = -ENOMEM;
		goto out;
	}
	ps_run_set_meta(r, PS_META_OS, PS_OS_WINDOWS);
	ps_run_set_meta(r, PS_META_SOURCE, PS_SOURCE_WIN_SAMPLE);
	ps_run_set_meta(r, PS_META_LIVE_ABSOLUTE, "1");
	ps_run_set_meta(r, PS_META_TORN_SNAPSHOTS, torn ? "1" : "0");
	if (host[0])
		ps_run_set_meta(r, PS_META_HOST, host);
	if (osver[0])
		ps_run_set_meta(r, PS_META_OS_VERSION, osver);
	if (ivl[0])
		ps_run_set_meta(r, PS_META_INTERVAL_NS, ivl);
	{
		char b[32];

		snprintf(b, sizeof(b), "%" PRIu64, snaps[0].wall);
		ps_run_set_meta(r, PS_META_START_WALL_NS, b);
	}
	{
		struct ps_series *np, *pg, *av;

		/* Adding a series may move the array: take the pointers after all three exist. */
		if (!ps_run_add_sys(r, PS_SYS_NONPAGED) || !ps_run_add_sys(r, PS_SYS_PAGED) ||
		    !ps_run_add_sys(r, PS_SYS_AVAILABLE)) {
			rc = -ENOMEM;
			goto out;
		}
		np = (struct ps_series *)ps_run_sys(r, PS_SYS_NONPAGED);
		pg = (struct ps_series *)ps_run_sys(r, PS_SYS_PAGED);
		av = (struct ps_series *)ps_run_sys(r, PS_SYS_AVAILABLE);
		for (size_t i = 0; i < nsnaps; i++) {
			uint64_t prev = i ? snaps[i - 1].wall : snaps[0].wall;

			if (snaps[i].wall < prev) {
				snprintf(err, errlen, "%s: snapshot %zu: wall_ns goes backwards", path, i);
				goto out;
			}
			r->intervals[i].t_ns = snaps[i].wall - snaps[0].wall;
			r->intervals[i].wall_ns = snaps[i].wall;
			r->intervals[i].dur_ns = snaps[i].wall - prev;
			np->v[i] = (int64_t)snaps[i].np;
			pg->v[i] = (int64_t)snaps[i].pg;
			av->v[i] = (int64_t)snaps[i].avail;
		}
	}
	/* One tag series per (tag, pool) seen anywhere; absent snapshots carry live values. */
	for (size_t i = 0; i < nsnaps; i++) {
		for (size_t j = 0; j < snaps[i].n; j++) {
			struct rec *k = &snaps[i].r[j];
			char name[5];
			struct ps_tag tag = { .kind = PS_KIND_POOL };
			struct ps_tag_series *ts = NULL;
			const struct rec *last = NULL;

			ps_pool_tag_format(k->tag, name);
			for (size_t t = 0; t < r->ntags; t++)
				if (!strcmp(r->tags[t].tag.name, name) &&
				    !strcmp(r->tags[t].tag.pool, ps_pool_type_name(k->paged)))
					ts = &r->tags[t];
			if (ts)
				continue;
			tag.name = tag.cache = name;
			tag.pool = ps_pool_type_name(k->paged);
			tag.flags = k->paged ? PS_TAG_F_RECLAIMABLE : 0;
			tag.id = (int64_t)r->ntags + 1;
			ts = ps_run_add_tag(r, &tag);
			if (!ts) {
				rc = -ENOMEM;
				goto out;
			}
			for (size_t s = 0; s < nsnaps; s++) {
				const struct rec *hit = NULL;

				for (size_t q = 0; q < snaps[s].n; q++)
					if (snaps[s].r[q].tag == k->tag && snaps[s].r[q].paged == k->paged)
						hit = &snaps[s].r[q];
				if (!hit) {
					if (last) {
						ts->s[s].live_objs = (int64_t)(last->allocs - last->frees);
						ts->s[s].live_bytes = (int64_t)last->bytes;
					}
					continue;
				}
				if (last) {
					ts->s[s].allocs = (uint32_t)(hit->allocs - last->allocs);
					ts->s[s].frees = (uint32_t)(hit->frees - last->frees);
				}
				ts->s[s].live_objs = (int64_t)(hit->allocs - hit->frees);
				ts->s[s].live_bytes = (int64_t)hit->bytes;
				last = hit;
			}
		}
	}
	ps_run_finish(r);
	*out = r;
	r = NULL;
	rc = 0;
out:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	free(cur.r);
	free_snaps(snaps, nsnaps);
	ps_run_free(r);
	fclose(f);
	return rc;
}
