// SPDX-License-Identifier: GPL-2.0
/*
 * Reader of the pool sample format and its conversion into a trace: one interval per complete
 * snapshot, written when its "E" line is read; one tag per (pool tag, pool type); alloc/free
 * deltas between snapshots, live bytes/objects absolute. Only snapshots closed by their "E" line
 * are used so that a sampler killed mid-write never yields half a snapshot as data. Memory holds
 * the snapshot being read and a few numbers per tag, not the file.
 *
 * A malformed line is the error wherever it is. What is found as the snapshots are written (a
 * wall clock that goes back, live figures or counts past what a trace holds) stops the writing
 * but is reported at the end of the file, unless a malformed line comes first: the same error a
 * reading of the whole file before any writing gives.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/lib/etw/poolsample.h"
#include "userspace/lib/etw/convert.h"
#include "userspace/lib/etw/kmap.h"

struct rec {
	uint32_t tag;
	int paged;
	uint64_t allocs, frees, bytes;
	uint32_t ti;		/* its series, once the snapshot ends */
};

/* One (tag, pool) series as the snapshots so far left it. */
struct stag {
	uint32_t raw;		/* the tag of its first record (series_of()) */
	bool seen;		/* a snapshot had it: the next one's counts are deltas */
	int64_t id;
	uint64_t allocs, frees;		/* the counters of the last snapshot that had it */
	int64_t live_objs, live_bytes;	/* since that snapshot (carried over those without it) */
	size_t hit;		/* its last record in the snapshot being written, + 1 */
};

struct sconv {
	const char *path;
	struct ps_trace *t;
	const struct ps_pooltags *pooltags;	/* --pooltag, or NULL */
	char *err;
	size_t errlen;
	/* the snapshot being read */
	uint64_t wall, np, pg, avail;
	struct rec *r;
	size_t n;
	/* the snapshots that ended */
	uint32_t nsnaps;
	uint64_t wall0, prev, t_prev;
	uint64_t nominal_ns;	/* #meta interval_ns, 0 when absent */
	uint32_t clock_steps;	/* snapshots whose wall clock went back */
	struct stag *tags;
	uint32_t ntags;
	struct ps_kmap tagmap;		/* (tag as formatted, paged) -> index into tags */
	uint64_t run_sum;	/* the tags' allocs and frees, until past PS_TRACE_SUM_MAX */
	/* for the end of the file: the first snapshot past the live sum */
	int64_t live_over;
	bool run_over;
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

static int write_failed(struct sconv *c, int r)
{
	snprintf(c->err, c->errlen, "writing the trace: %s", ps_trace_errmsg(c->t));
	return r < 0 ? r : -EIO;
}

/*
 * The series of rec, added at its first record. Series are told apart by the name the trace
 * shows (tags differing in the protected bit or in unprintable bytes share one): the records of
 * the first tag read under a name fill its series, the others' are left out.
 */
static int series_of(struct sconv *c, struct rec *rec)
{
	char name[5];
	uint32_t key, v;
	bool builtin;
	int r;

	ps_pool_tag_format(rec->tag, name);
	memcpy(&key, name, sizeof(key));
	if (ps_kmap_get(&c->tagmap, key, (uint32_t)rec->paged, &v)) {
		rec->ti = v;
		return 0;
	}
	struct stag *n = realloc(c->tags, (c->ntags + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	c->tags = n;
	struct ps_tag tag = { .kind = PS_KIND_POOL, .name = name, .cache = name,
			      .pool = ps_pool_type_name(rec->paged),
			      .flags = rec->paged ? PS_TAG_F_RECLAIMABLE : 0 };
	tag.domain = ps_flags_domain(tag.flags);
	tag.owner = ps_pool_owner(c->pooltags, name, &builtin);
	if (builtin)
		tag.flags |= PS_TAG_F_OWNER_BUILTIN;
	r = ps_trace_add_tag(c->t, &tag);
	if (r)
		return write_failed(c, r);
	c->tags[c->ntags] = (struct stag){ .raw = rec->tag, .id = tag.id };
	if (ps_kmap_put(&c->tagmap, key, (uint32_t)rec->paged, c->ntags) < 0)
		return -ENOMEM;
	rec->ti = c->ntags++;
	return 0;
}

/*
 * Live objects: allocations less frees. The kernel's SYSTEM_POOLTAG counters are 32 bits (ULONG)
 * and wrap on a busy server, so frees can read above allocations: their difference modulo 2^32
 * is the count, as long as fewer than 2^32 objects are live. Larger counters (a writer that
 * widens them) are taken as they are.
 */
static int64_t live_objs(const struct rec *h)
{
	if (h->allocs <= UINT32_MAX && h->frees <= UINT32_MAX)
		return (int64_t)(uint32_t)(h->allocs - h->frees);
	return (int64_t)(h->allocs - h->frees);
}

/*
 * The samples of a snapshot: a series it has gets its live figures and the deltas of its
 * counters since the last snapshot that had it (0 the first time); a series it lacks keeps its
 * live figures (the reader carries them). A row only when something changed, as the trace
 * reader expects.
 */
static int write_samples(struct sconv *c)
{
	int r = 0;

	for (size_t j = 0; j < c->n; j++) {
		r = series_of(c, &c->r[j]);
		if (r)
			return r;
		if (c->tags[c->r[j].ti].raw == c->r[j].tag)
			c->tags[c->r[j].ti].hit = j + 1;
	}
	for (size_t j = 0; j < c->n && !r; j++) {
		const struct rec *h = &c->r[j];
		struct stag *g = &c->tags[h->ti];
		struct ps_sample s = { .live_objs = live_objs(h), .live_bytes = (int64_t)h->bytes };

		if (g->hit != j + 1)
			continue;	/* a record of another tag, or an earlier duplicate */
		g->hit = 0;
		if (g->seen) {
			s.allocs = (uint32_t)(h->allocs - g->allocs);
			s.frees = (uint32_t)(h->frees - g->frees);
		}
		bool changed = s.allocs || s.frees || s.live_objs != g->live_objs ||
			       s.live_bytes != g->live_bytes;

		if (c->run_sum <= (uint64_t)PS_TRACE_SUM_MAX)
			c->run_sum += s.allocs + s.frees;
		g->seen = true;
		g->allocs = h->allocs;
		g->frees = h->frees;
		g->live_objs = s.live_objs;
		g->live_bytes = s.live_bytes;
		if (changed)
			r = ps_trace_add_sample(c->t, g->id, &s);
	}
	return r ? write_failed(c, r) : 0;
}

/*
 * An "E" line: the snapshot read is interval nsnaps, t_ns from the first snapshot's wall clock.
 * The trace reader bounds (PS_TRACE_SUM_MAX) the tags' live bytes and objects of each interval,
 * those carried from earlier snapshots too, and their allocs and frees over the run: each record
 * is within 2^52, but thousands of them are not within 2^61.
 */
static int end_snapshot(struct sconv *c)
{
	uint32_t k = c->nsnaps++;
	uint64_t prev = k ? c->prev : c->wall, t, dur;
	int64_t live = 0;
	int r;

	if (!k)
		c->wall0 = c->wall;
	/*
	 * Interval times accumulate the wall clock's steps forward. A wall clock that went back
	 * (time sync stepped it) gives no length: the interval gets the nominal one (#meta
	 * interval_ns, else the previous interval's, else 1 s) and the step is counted.
	 */
	if (c->wall >= prev) {
		dur = c->wall - prev;
	} else {
		dur = c->nominal_ns ? c->nominal_ns : k > 1 && c->t_prev ? c->t_prev / (k - 1) :
		      1000000000ull;
		c->clock_steps++;
	}
	t = k ? c->t_prev + dur : 0;
	c->prev = c->wall;
	c->t_prev = t;
	if (c->live_over >= 0)
		return 0;		/* the conversion fails */
	r = ps_trace_begin_interval(c->t, k, t, c->wall, dur);
	if (r)
		return write_failed(c, r);
	r = write_samples(c);
	if (r)
		return r;
	r = ps_trace_add_sysstat(c->t, PS_SYS_NONPAGED, (int64_t)c->np);
	r = r ?: ps_trace_add_sysstat(c->t, PS_SYS_PAGED, (int64_t)c->pg);
	r = r ?: ps_trace_add_sysstat(c->t, PS_SYS_AVAILABLE, (int64_t)c->avail);
	r = r ?: ps_trace_commit_interval(c->t);
	if (r)
		return write_failed(c, r);
	for (uint32_t i = 0; i < c->ntags; i++) {
		live += llabs(c->tags[i].live_objs) + c->tags[i].live_bytes;
		if (live > PS_TRACE_SUM_MAX) {
			c->live_over = k;
			break;
		}
	}
	if (c->run_sum > (uint64_t)PS_TRACE_SUM_MAX)
		c->run_over = true;
	return 0;
}

/* The end of a file read without a malformed line: what end_snapshot() found, then meta. */
static int finish(struct sconv *c, uint32_t torn, const char *host, const char *osver,
		  const char *ivl, struct ps_convert_result *res)
{
	static const char past[] = "add up past 2^61 (2 EiB), more than any machine holds";
	int r;

	if (!c->nsnaps) {
		snprintf(c->err, c->errlen, "%s: no complete snapshot", c->path);
		return -EINVAL;
	}
	res->torn_snapshots = torn;
	if (c->live_over >= 0) {
		snprintf(c->err, c->errlen, "%s: the live bytes and objects of all tags at "
			 "interval %lld %s", c->path, (long long)c->live_over, past);
		return -ERANGE;
	}
	if (c->run_over) {
		snprintf(c->err, c->errlen, "%s: the tags' allocs, frees and their bytes over the "
			 "run %s", c->path, past);
		return -ERANGE;
	}
	r = ps_trace_set_meta(c->t, PS_META_OS, PS_OS_WINDOWS);
	r = r ?: ps_trace_set_meta(c->t, PS_META_SOURCE, PS_SOURCE_WIN_SAMPLE);
	r = r ?: ps_trace_set_meta_int(c->t, PS_META_LIVE_ABSOLUTE, 1);
	r = r ?: ps_trace_set_meta_int(c->t, PS_META_TORN_SNAPSHOTS, torn);
	r = r ?: ps_trace_set_meta_int(c->t, PS_META_CLOCK_STEPS_BACK, c->clock_steps);
	if (host[0])
		r = r ?: ps_trace_set_meta(c->t, PS_META_HOST, host);
	if (osver[0])
		r = r ?: ps_trace_set_meta(c->t, PS_META_OS_VERSION, osver);
	if (ivl[0])
		r = r ?: ps_trace_set_meta(c->t, PS_META_INTERVAL_NS, ivl);
	r = r ?: ps_trace_set_meta_int(c->t, PS_META_START_WALL_NS, (int64_t)c->wall0);
	if (r)
		return write_failed(c, r);
	res->snapshots = res->intervals = c->nsnaps;
	res->tags = c->ntags;
	return 0;
}

int ps_convert_poolsample(struct ps_trace *t, const char *path, const struct ps_convert_opts *o,
			  struct ps_convert_result *res, char *err, size_t errlen)
{
	struct sconv c = { .path = path, .t = t, .pooltags = o ? o->pooltags : NULL, .err = err,
			   .errlen = errlen, .live_over = -1 };
	size_t lineno = 0, pending = 0;
	int in_snap = 0, pending_snap = 0, rc = -EINVAL;
	uint32_t torn = 0;
	bool cut = false;
	char line[512], host[128] = "", osver[64] = "", ivl[32] = "";
	FILE *f;

	memset(res, 0, sizeof(*res));
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		char *tok[8] = { 0 }, *save = NULL;
		int nt = 0;
		uint64_t v[6];

		lineno++;
		cut = !strchr(line, '\n');
		if (cut && !feof(f)) {
			snprintf(err, errlen, "%s:%zu: line too long", path, lineno);
			goto out;
		}
		line[strcspn(line, "\r\n")] = '\0';
		/*
		 * A restart of the writer (its restart line, or the header an older writer wrote
		 * again): the snapshot it was killed in is torn, and the line it was cut in the
		 * middle of is forgiven.
		 */
		if (lineno > 1 && (!strncmp(line, PS_POOLSAMPLE_RESTART " ",
					    strlen(PS_POOLSAMPLE_RESTART) + 1) ||
				   !strncmp(line, PS_POOLSAMPLE_MAGIC " ",
					    strlen(PS_POOLSAMPLE_MAGIC) + 1))) {
			torn += pending ? pending_snap : in_snap;
			pending = 0;
			in_snap = 0;
			err[0] = '\0';
			continue;
		}
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
			else if (!strcmp(k, "interval_ns") && !parse_u64(val, &c.nominal_ns) &&
				 c.nominal_ns <= (uint64_t)PS_TRACE_TIME_MAX / 2)
				snprintf(ivl, sizeof(ivl), "%s", val);
			else if (!strcmp(k, "interval_ns"))
				c.nominal_ns = 0;	/* not a duration: not stored either */
			continue;
		}
		if (line[0] == '#' || !line[0])
			continue;
		for (char *w = strtok_r(line, " ", &save); w && nt < 8; w = strtok_r(NULL, " ", &save))
			tok[nt++] = w;
		if (!nt)
			continue;		/* only spaces: a blank line */
		if (pending)
			goto out;		/* a malformed line, and no restart after it */
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
					goto bad;
				}
			}
			c.wall = v[1];
			c.np = v[2];
			c.pg = v[3];
			c.avail = v[4];
			c.n = 0;
			in_snap = 1;
		} else if (!strcmp(tok[0], "T")) {
			char *end;
			struct rec *nr;
			unsigned long tg;

			if (!in_snap || nt != 6) {
				snprintf(err, errlen, "%s:%zu: tag line outside a snapshot or not 6 fields",
					 path, lineno);
				goto bad;
			}
			tg = strtoul(tok[1], &end, 16);
			if (*end || strlen(tok[1]) != 8) {
				snprintf(err, errlen, "%s:%zu: field tag_hex: expected 8 hex digits", path, lineno);
				goto bad;
			}
			if (strcmp(tok[2], "paged") && strcmp(tok[2], "nonpaged")) {
				snprintf(err, errlen, "%s:%zu: field pool: expected paged or nonpaged", path, lineno);
				goto bad;
			}
			for (int i = 0; i < 3; i++) {
				static const char *const names[] = { "allocs", "frees", "bytes" };

				if (parse_u64(tok[i + 3], &v[i]) || v[i] > PS_CONVERT_ABSURD) {
					snprintf(err, errlen, "%s:%zu: field %s: expected a plausible unsigned number",
						 path, lineno, names[i]);
					goto bad;
				}
			}
			nr = realloc(c.r, (c.n + 1) * sizeof(*nr));
			if (!nr) {
				rc = -ENOMEM;
				goto out;
			}
			c.r = nr;
			c.r[c.n++] = (struct rec){ .tag = (uint32_t)tg, .paged = !strcmp(tok[2], "paged"),
						   .allocs = v[0], .frees = v[1], .bytes = v[2] };
		} else if (!strcmp(tok[0], "E")) {
			int e;

			if (!in_snap) {
				snprintf(err, errlen, "%s:%zu: end marker without a snapshot", path, lineno);
				goto out;
			}
			e = end_snapshot(&c);
			if (e) {
				rc = e;
				goto out;
			}
			in_snap = 0;
		} else {
			snprintf(err, errlen, "%s:%zu: unknown record '%s' (expected S, T or E)",
				 path, lineno, tok[0]);
			goto bad;
		}
		continue;
bad:
		/* fails at the next record, unless a restart or the cut end of the file follows */
		pending = lineno;
		pending_snap = in_snap || !strcmp(tok[0], "S");
		in_snap = 0;
	}
	if (lineno == 0) {
		snprintf(err, errlen, "%s: empty file (expected '%s 1')", path, PS_POOLSAMPLE_MAGIC);
		goto out;
	}
	/* the last line, cut short by a kill: its snapshot is torn */
	if (pending && !(pending == lineno && cut))
		goto out;
	torn += pending ? pending_snap : in_snap;
	err[0] = '\0';
	rc = finish(&c, torn, host, osver, ivl, res);
out:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	free(c.r);
	free(c.tags);
	ps_kmap_free(&c.tagmap);
	fclose(f);
	return rc;
}
