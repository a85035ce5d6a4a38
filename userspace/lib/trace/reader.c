// SPDX-License-Identifier: GPL-2.0
/*
 * Reads a whole trace into a struct ps_run, and writes one back (ps_run_save).
 *
 * Samples are sparse on disk (a row only when a tag did something or its live count changed);
 * in memory every tag has a dense series, with live_* carried forward across intervals that
 * have no row. Intervals are read in idx order and renumbered densely, so a file whose writer
 * died between intervals still loads.
 *
 * Memory is bounded by tags, not by the length of the recording: a trace of more than
 * max_points intervals is read in one ordered pass into at most max_points points of equal runs
 * of intervals (per_point of them), each holding what happened in its intervals (counts summed)
 * and the state at the end of its last one (live bytes, counters, slabinfo, meminfo).
 *
 * Every number is checked as it is read (docs/trace-format.md, "What a reader checks"): a trace
 * comes from another machine, another poolscope or a hand edit, and the analysis must get either
 * the numbers that were recorded or an error naming the table, the row and the column, never
 * zeros from a text cell or sums that wrap.
 */
#include "userspace/lib/trace/keys.h"
#include "userspace/lib/trace/schema.h"
#include "userspace/lib/trace/trace.h"
#include "userspace/lib/util/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A count or size past 2^52 (4 PiB) is damage, as the converters judge it. */
#define ABSURD		PS_TRACE_ABSURD
#define TIME_MAX	PS_TRACE_TIME_MAX

struct loader {
	sqlite3 *db;
	struct ps_run *r;
	const char *path;
	char *err;
	size_t errlen;
	int64_t *idx;		/* on-disk interval idx of source position k (sorted) */
	uint32_t nsrc;		/* intervals in the file (the positions of idx) */
	uint32_t per;		/* source intervals per point of the run (1: each its own) */
	uint64_t prev_t;	/* t_ns of the previous source interval */
	double *p50w;		/* workload: per point, sum of p50 x IOs */
	int64_t max_tag_id;
	int32_t *tag_pos;	/* tag id -> position in r->tags, -1 */
	uint32_t nread;		/* intervals read so far */
	unsigned char *seen;	/* [tag pos][interval]: a sample row exists (carry-forward) */
	const char *table;	/* the table being read, and how many leading columns name a row */
	int nkey;
};

static int sql_fail(struct loader *L, int rc, const char *what)
{
	snprintf(L->err, L->errlen, "%s: reading %s: %s", L->path, what, sqlite3_errmsg(L->db));
	return ps_trace_sqlite_err(rc);
}

static int oom(struct loader *L)
{
	snprintf(L->err, L->errlen, "%s: out of memory", L->path);
	return -ENOMEM;
}

static char *col_dup(sqlite3_stmt *s, int i, bool *nomem)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	char *d;

	if (!t)
		return NULL;
	d = strdup((const char *)t);
	if (!d)
		*nomem = true;
	return d;
}

/* Source position of an on-disk interval idx, or -1 when no such interval. */
static long pos_of(const struct loader *L, int64_t idx)
{
	uint32_t lo = 0, hi = L->nread;

	/* the writers number intervals from 0 without gaps: position = idx */
	if (idx >= 0 && idx < hi && L->idx[idx] == idx)
		return (long)idx;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (L->idx[mid] == idx)
			return mid;
		if (L->idx[mid] < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The current row's key from its first nkey columns, as "tag 3, interval 17". */
static const char *row_key(const struct loader *L, sqlite3_stmt *s, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < L->nkey && n < len; i++) {
		const char *v = (const char *)sqlite3_column_text(s, i);
		int w = snprintf(buf + n, len - n, "%s%s %.40s", i ? ", " : "",
				 sqlite3_column_name(s, i), v ? v : "NULL");

		if (w < 0)
			break;
		n += (size_t)w;
	}
	return buf;
}

static int corrupt_row(struct loader *L, sqlite3_stmt *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "PATH: TABLE, KEY: what is wrong" */
static int corrupt_row(struct loader *L, sqlite3_stmt *s, const char *fmt, ...)
{
	char key[160], what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(L->err, L->errlen, "%s: %s, %s: %s", L->path, L->table,
		 row_key(L, s, key, sizeof(key)), what);
	return -PS_ERR__CORRUPT;
}

/* What is wrong with column i, which holds v of the given type where an integer in lo..hi goes. */
static int __attribute__((cold)) bad_int(struct loader *L, sqlite3_stmt *s, int i, int type,
					 int64_t v, int64_t lo, int64_t hi)
{
	const char *name = sqlite3_column_name(s, i), *text;

	switch (type) {
	case SQLITE_INTEGER:
		return corrupt_row(L, s, "%s is %lld, expected %lld..%lld", name, (long long)v,
				   (long long)lo, (long long)hi);
	case SQLITE_TEXT:
		text = (const char *)sqlite3_column_text(s, i);
		return corrupt_row(L, s, "%s holds the text \"%.40s\", expected an integer", name,
				   text ? text : "");
	case SQLITE_FLOAT:
		return corrupt_row(L, s, "%s holds the real number %g, expected an integer", name,
				   sqlite3_column_double(s, i));
	case SQLITE_NULL:
		return corrupt_row(L, s, "%s is NULL, expected an integer", name);
	default:
		return corrupt_row(L, s, "%s holds a blob, expected an integer", name);
	}
}

/*
 * Column i of the current row into *v, when it holds an integer in lo..hi. The type is asked
 * first: once SQLite has converted a value (text "abc" read as the integer 0), its type is lost.
 */
static inline int col_int(struct loader *L, sqlite3_stmt *s, int i, int64_t lo, int64_t hi,
			  int64_t *v)
{
	int type = sqlite3_column_type(s, i);

	*v = sqlite3_column_int64(s, i);
	if (type == SQLITE_INTEGER && *v >= lo && *v <= hi)
		return 0;
	return bad_int(L, s, i, type, *v, lo, hi);
}

/* Column i as any integer: an address, a hash, a key. */
static inline int col_any(struct loader *L, sqlite3_stmt *s, int i, int64_t *v)
{
	return col_int(L, s, i, INT64_MIN, INT64_MAX, v);
}

/* Column i as a name that must be there. */
static const char *col_name(struct loader *L, sqlite3_stmt *s, int i, int *e)
{
	const char *t = (const char *)sqlite3_column_text(s, i);

	if (!t)
		*e = corrupt_row(L, s, "%s is NULL, expected a name", sqlite3_column_name(s, i));
	return t;
}

/*
 * Column i as an interval: the run's point that holds it, or an error for an interval the trace
 * does not have.
 */
static int col_interval(struct loader *L, sqlite3_stmt *s, int i, long *k)
{
	int64_t idx;
	int e = col_any(L, s, i, &idx);

	if (e)
		return e;
	*k = pos_of(L, idx);
	if (*k >= 0) {
		*k /= L->per;
		return 0;
	}
	/* the writer adds rows only inside an interval, in the transaction that adds its row */
	return corrupt_row(L, s, "the intervals table has no interval %lld", (long long)idx);
}

/* Runs sql and calls row() for each result row; the first nkey columns name a row in errors. */
static int each_row(struct loader *L, const char *sql, const char *what, int nkey,
		    int (*row)(struct loader *, sqlite3_stmt *))
{
	sqlite3_stmt *s;
	int rc, e = 0;

	L->table = what;
	L->nkey = nkey;
	rc = sqlite3_prepare_v2(L->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sql_fail(L, rc, what);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		e = row(L, s);
		if (e)
			break;
	}
	if (!e && rc != SQLITE_DONE)
		e = sql_fail(L, rc, what);
	sqlite3_finalize(s);
	return e;
}

static int meta_row(struct loader *L, sqlite3_stmt *s)
{
	const char *k = (const char *)sqlite3_column_text(s, 0);
	const char *v = (const char *)sqlite3_column_text(s, 1);

	if (!k)
		return 0;
	return ps_run_set_meta(L->r, k, v) ? oom(L) : 0;
}

/*
 * Traces written before tags had a domain column lack it; their tags get one from
 * ps_tag_domain() when analysed. Adding the column kept older readers able to read new files, so
 * the format version stayed.
 */
static bool has_domain(sqlite3 *db)
{
	sqlite3_stmt *s;
	bool found = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('tags') WHERE name='domain'",
			       -1, &s, NULL) != SQLITE_OK)
		return false;
	found = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return found;
}

/* srclines came after the first traces: one without it has no source lines */
static bool has_srclines(sqlite3 *db)
{
	sqlite3_stmt *s;
	bool found;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND"
			       " name='srclines'", -1, &s, NULL) != SQLITE_OK)
		return false;
	found = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return found;
}

/*
 * The table's primary key makes a return address's line unique; a table made by hand without
 * it may hold two, and which one a frame got would be chance. Refused, naming the first.
 */
static int srclines_unique(struct loader *L)
{
	sqlite3_stmt *s;
	int rc, e = 0;

	rc = sqlite3_prepare_v2(L->db, "SELECT module, sym, off, count(*) FROM srclines"
				" GROUP BY module, sym, off HAVING count(*) > 1 LIMIT 1", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sql_fail(L, rc, "srclines");
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		snprintf(L->err, L->errlen, "%s: srclines, module '%s' sym '%s' off %lld: %d rows "
			 "for one return address, expected one (the table's key is module, sym, off)",
			 L->path, (const char *)sqlite3_column_text(s, 0) ?: "",
			 (const char *)sqlite3_column_text(s, 1) ?: "",
			 (long long)sqlite3_column_int64(s, 2), sqlite3_column_int(s, 3));
		e = -PS_ERR__CORRUPT;
	} else if (rc != SQLITE_DONE) {
		e = sql_fail(L, rc, "srclines");
	}
	sqlite3_finalize(s);
	return e;
}

static int count_rows(struct loader *L, const char *sql, int64_t *out)
{
	sqlite3_stmt *s;
	int rc;

	rc = sqlite3_prepare_v2(L->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sql_fail(L, rc, "counts");
	rc = sqlite3_step(s);
	*out = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : sql_fail(L, rc, "counts");
}

static int interval_row(struct loader *L, sqlite3_stmt *s)
{
	uint32_t k = L->nread;
	struct ps_interval *iv;
	int64_t idx, t, wall, dur;
	int e;

	/* rows come in idx order; the position is how many we have stored */
	if (k >= L->nsrc)
		return 0;
	e = col_any(L, s, 0, &idx) ?: col_int(L, s, 1, 0, TIME_MAX, &t) ?:
	    col_int(L, s, 2, 0, TIME_MAX, &wall) ?: col_int(L, s, 3, 0, TIME_MAX, &dur);
	if (e)
		return e;
	L->nread++;
	L->idx[k] = idx;
	if (k && (uint64_t)t < L->prev_t) {
		snprintf(L->err, L->errlen, "%s: interval %lld ends at %llu ns, before interval %lld",
			 L->path, (long long)L->idx[k], (unsigned long long)t,
			 (long long)L->idx[k - 1]);
		return -PS_ERR__CORRUPT;
	}
	L->prev_t = (uint64_t)t;
	/* a point ends where its last interval ends and lasts as long as its intervals together */
	iv = &L->r->intervals[k / L->per];
	iv->t_ns = (uint64_t)t;
	iv->wall_ns = (uint64_t)wall;
	iv->dur_ns += (uint64_t)dur;
	return 0;
}

static int tag_row(struct loader *L, sqlite3_stmt *s)
{
	struct ps_tag_series *ts;
	struct ps_tag tag = { 0 };
	bool nomem = false;
	int64_t id, site, flags;
	int e;

	e = col_any(L, s, 0, &id);
	if (e)
		return e;
	if (id <= 0 || id > L->max_tag_id) {
		snprintf(L->err, L->errlen, "%s: tags: id %lld out of range", L->path, (long long)id);
		return -PS_ERR__CORRUPT;
	}
	/* the analysis compares the kind with strcmp: a NULL one is damage, an unknown one is not */
	e = col_any(L, s, 5, &site) ?: col_int(L, s, 12, 0, UINT32_MAX, &flags);
	if (!e)
		col_name(L, s, 1, &e);
	if (e)
		return e;
	tag.id = id;
	tag.kind = col_dup(s, 1, &nomem);
	tag.name = col_dup(s, 2, &nomem);
	tag.cache = col_dup(s, 3, &nomem);
	tag.cache_alias = col_dup(s, 4, &nomem);
	tag.site = (uint64_t)site;
	tag.site_sym = col_dup(s, 6, &nomem);
	tag.site_module = col_dup(s, 7, &nomem);
	tag.pool = col_dup(s, 8, &nomem);
	tag.ctx = col_dup(s, 9, &nomem);
	tag.comm = col_dup(s, 10, &nomem);
	tag.owner = col_dup(s, 11, &nomem);
	tag.flags = (uint32_t)flags;
	tag.domain = col_dup(s, 13, &nomem);
	ts = nomem ? NULL : ps_run_add_tag(L->r, &tag);
	free((char *)tag.kind);
	free((char *)tag.name);
	free((char *)tag.cache);
	free((char *)tag.cache_alias);
	free((char *)tag.site_sym);
	free((char *)tag.site_module);
	free((char *)tag.pool);
	free((char *)tag.ctx);
	free((char *)tag.comm);
	free((char *)tag.owner);
	free((char *)tag.domain);
	if (!ts)
		return oom(L);
	L->tag_pos[id] = (int32_t)(L->r->ntags - 1);
	return 0;
}

/* The position of the tag named in column i, or an error for a tag the trace does not have. */
static int col_tag(struct loader *L, sqlite3_stmt *s, int i, int32_t *pos)
{
	int64_t id;
	int e = col_any(L, s, i, &id);

	if (e)
		return e;
	if (id <= 0 || id > L->max_tag_id || (*pos = L->tag_pos[id]) < 0)
		return corrupt_row(L, s, "the tags table has no tag %lld", (long long)id);
	return 0;
}

static int sample_row(struct loader *L, sqlite3_stmt *s)
{
	int64_t v[6];
	struct ps_sample *x;
	int32_t p;
	long k;
	int e;

	e = col_tag(L, s, 0, &p) ?: col_interval(L, s, 1, &k);
	/* allocs, frees and their bytes happened in the interval; live_* may be below the start */
	for (int i = 0; !e && i < 4; i++)
		e = col_int(L, s, 2 + i, 0, ABSURD, &v[i]);
	for (int i = 4; !e && i < 6; i++)
		e = col_int(L, s, 2 + i, -ABSURD, ABSURD, &v[i]);
	if (e)
		return e;
	x = &L->r->tags[p].s[k];
	/* a point holds what happened in its intervals and the state at the last one's end */
	if (x->allocs + (uint64_t)v[0] > ABSURD || x->frees + (uint64_t)v[1] > ABSURD ||
	    x->alloc_bytes + (uint64_t)v[2] > ABSURD || x->free_bytes + (uint64_t)v[3] > ABSURD)
		return corrupt_row(L, s, "the counts of %u intervals together pass 2^52", L->per);
	x->allocs += (uint64_t)v[0];
	x->frees += (uint64_t)v[1];
	x->alloc_bytes += (uint64_t)v[2];
	x->free_bytes += (uint64_t)v[3];
	x->live_objs = v[4];
	x->live_bytes = v[5];
	L->seen[(size_t)p * L->r->nintervals + k] = 1;
	return 0;
}

static int named_row(struct loader *L, sqlite3_stmt *s, bool sys)
{
	struct ps_series *ser;
	const char *name;
	int64_t v;
	long k;
	int e = 0;

	name = col_name(L, s, 0, &e);
	e = e ?: col_interval(L, s, 1, &k) ?: col_int(L, s, 2, 0, ABSURD, &v);
	if (e)
		return e;
	ser = sys ? ps_run_add_sys(L->r, name) : ps_run_add_counter(L->r, name);
	if (!ser)
		return oom(L);
	ser->v[k] = v;
	/* a point of several intervals keeps the range of a system counter's values in it */
	if (sys && L->per > 1) {
		if (!ser->lo) {
			ser->lo = malloc(L->r->nintervals * sizeof(*ser->lo));
			ser->hi = malloc(L->r->nintervals * sizeof(*ser->hi));
			if (!ser->lo || !ser->hi)
				return oom(L);
			for (uint32_t j = 0; j < L->r->nintervals; j++)
				ser->lo[j] = ser->hi[j] = -1;
		}
		if (ser->lo[k] < 0 || v < ser->lo[k])
			ser->lo[k] = v;
		if (v > ser->hi[k])
			ser->hi[k] = v;
	}
	return 0;
}

static int sys_row(struct loader *L, sqlite3_stmt *s)
{
	return named_row(L, s, true);
}

static int counter_row(struct loader *L, sqlite3_stmt *s)
{
	return named_row(L, s, false);
}

static int slab_row(struct loader *L, sqlite3_stmt *s)
{
	struct ps_slab_series *ss;
	int64_t active, num, objsize, per, pages;
	const char *cache;
	long k;
	int e = 0;

	cache = col_name(L, s, 0, &e);
	e = e ?: col_interval(L, s, 1, &k) ?: col_int(L, s, 2, 0, ABSURD, &active) ?:
	    col_int(L, s, 3, 0, ABSURD, &num) ?: col_int(L, s, 4, 0, UINT32_MAX, &objsize) ?:
	    col_int(L, s, 5, 0, UINT32_MAX, &per) ?: col_int(L, s, 6, 0, UINT32_MAX, &pages);
	if (e)
		return e;
	/* the analysis weighs object counts by their size */
	if (objsize && (active > ABSURD / objsize || num > ABSURD / objsize))
		return corrupt_row(L, s, "%lld objects of %lld bytes is more than 2^52 bytes",
				   (long long)(active > num ? active : num), (long long)objsize);
	ss = ps_run_add_slab(L->r, cache, (uint32_t)objsize);
	if (!ss)
		return oom(L);
	ss->active_objs[k] = active;
	ss->num_objs[k] = num;
	ss->objperslab = (uint32_t)per;
	ss->pagesperslab = (uint32_t)pages;
	return 0;
}

static int workload_row(struct loader *L, sqlite3_stmt *s)
{
	struct ps_workload *w;
	int64_t v[6], inflight;
	long k;
	int e;

	e = col_interval(L, s, 0, &k);
	for (int i = 0; !e && i < 6; i++)
		e = col_int(L, s, 1 + i, 0, ABSURD, &v[i]);
	e = e ?: col_int(L, s, 7, 0, UINT32_MAX, &inflight);
	if (e)
		return e;
	if (ps_run_enable_workload(L->r))
		return oom(L);
	w = &L->r->workload[k];
	if (L->per == 1) {
		w->ios = (uint64_t)v[0];
		w->bytes = (uint64_t)v[1];
		w->errors = (uint64_t)v[2];
		w->lat_p50_ns = (uint64_t)v[3];
		w->lat_p99_ns = (uint64_t)v[4];
		w->lat_max_ns = (uint64_t)v[5];
		w->inflight = (uint32_t)inflight;
		return 0;
	}
	/*
	 * A point of several intervals: their IOs summed, the median as the IO-weighted mean of
	 * theirs, the p99 and maximum as the largest (a point hides no slow interval), the IOs in
	 * flight at its end.
	 */
	if (!L->p50w && !(L->p50w = calloc(L->r->nintervals, sizeof(*L->p50w))))
		return oom(L);
	w->ios += (uint64_t)v[0];
	w->bytes += (uint64_t)v[1];
	w->errors += (uint64_t)v[2];
	L->p50w[k] += (double)v[3] * (double)v[0];
	w->lat_p50_ns = w->ios ? (uint64_t)(L->p50w[k] / (double)w->ios) : (uint64_t)v[3];
	if ((uint64_t)v[4] > w->lat_p99_ns)
		w->lat_p99_ns = (uint64_t)v[4];
	if ((uint64_t)v[5] > w->lat_max_ns)
		w->lat_max_ns = (uint64_t)v[5];
	w->inflight = (uint32_t)inflight;
	return 0;
}

static int stack_row(struct loader *L, sqlite3_stmt *s)
{
	struct ps_stack st = { 0 };
	int64_t hash, allocs, bytes, live;
	bool nomem = false;
	int32_t p;
	int e;

	e = col_any(L, s, 0, &st.id) ?: col_tag(L, s, 1, &p) ?: col_any(L, s, 2, &hash) ?:
	    col_int(L, s, 3, 0, ABSURD, &allocs) ?: col_int(L, s, 4, 0, ABSURD, &bytes) ?:
	    col_int(L, s, 5, -ABSURD, ABSURD, &live);
	if (e)
		return e;
	st.tag_id = L->r->tags[p].tag.id;
	st.hash = (uint64_t)hash;
	st.allocs = (uint64_t)allocs;
	st.bytes = (uint64_t)bytes;
	st.live_bytes = live;
	st.comm = col_dup(s, 6, &nomem);
	st.ctx = col_dup(s, 7, &nomem);
	e = nomem ? -ENOMEM : ps_run_add_stack(L->r, &st);
	free((char *)st.comm);
	free((char *)st.ctx);
	return e ? oom(L) : 0;
}

static int frame_row(struct loader *L, sqlite3_stmt *s)
{
	int64_t id, depth, addr, off;
	struct ps_stack *st = NULL;
	struct ps_frame *f, *nf;
	bool nomem = false;
	int e;

	e = col_any(L, s, 0, &id) ?: col_any(L, s, 1, &depth) ?: col_any(L, s, 2, &addr) ?:
	    col_any(L, s, 4, &off);
	if (e)
		return e;
	/* Stacks were read ordered by id; frames come ordered by (stack, depth). */
	for (size_t lo = 0, hi = L->r->nstacks; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (L->r->stacks[mid].id == id) {
			st = &L->r->stacks[mid];
			break;
		}
		if (L->r->stacks[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!st)
		return corrupt_row(L, s, "the stacks table has no stack %lld", (long long)id);
	if (depth != st->nframes || depth > 4096) {
		snprintf(L->err, L->errlen, "%s: frames: stack %lld has frame %lld after %u frames",
			 L->path, (long long)id, (long long)depth, st->nframes);
		return -PS_ERR__CORRUPT;
	}
	nf = realloc(st->frames, (st->nframes + 1) * sizeof(*nf));
	if (!nf)
		return oom(L);
	st->frames = nf;
	f = &nf[st->nframes];
	f->addr = (uint64_t)addr;
	f->sym = col_dup(s, 3, &nomem);
	f->off = (uint64_t)off;
	f->module = col_dup(s, 5, &nomem);
	st->nframes++;
	return nomem ? oom(L) : 0;
}

static int src_row(struct loader *L, sqlite3_stmt *s)
{
	struct ps_src src = {};
	int64_t off, line, call_line;
	bool nomem = false;
	int e;

	e = col_any(L, s, 2, &off) ?: col_any(L, s, 4, &line) ?: col_any(L, s, 8, &call_line);
	if (e)
		return e;
	if (line <= 0 || line > UINT32_MAX || call_line < 0 || call_line > UINT32_MAX)
		return corrupt_row(L, s, "line %lld is not a line number",
				   (long long)(line <= 0 || line > UINT32_MAX ? line : call_line));
	if (!sqlite3_column_text(s, 3) || !*sqlite3_column_text(s, 3) || !sqlite3_column_text(s, 1))
		return corrupt_row(L, s, "a source line without a file or symbol");
	src.module = col_dup(s, 0, &nomem);
	src.sym = col_dup(s, 1, &nomem);
	src.off = (uint64_t)off;
	src.file = col_dup(s, 3, &nomem);
	src.line = (uint32_t)line;
	src.func = col_dup(s, 5, &nomem);
	src.caller = col_dup(s, 6, &nomem);
	src.call_file = col_dup(s, 7, &nomem);
	src.call_line = (uint32_t)call_line;
	e = nomem ? -ENOMEM : ps_run_add_src(L->r, &src);
	free((char *)src.module);
	free((char *)src.sym);
	free((char *)src.file);
	free((char *)src.func);
	free((char *)src.caller);
	free((char *)src.call_file);
	return e ? oom(L) : 0;
}

/*
 * A sparse trace (meta sparse_series) writes a named series' row only when its value changed: a
 * point without one holds the value of the one before. Before a series' first row it stays absent.
 */
static void carry_series(int64_t *v, uint32_t n)
{
	for (uint32_t k = 1; k < n; k++)
		if (v[k] < 0)
			v[k] = v[k - 1];
}

static void carry_sparse(const struct loader *L)
{
	struct ps_run *r = L->r;
	const char *sp = ps_run_meta(r, PS_META_SPARSE_SERIES);

	if (!sp || strcmp(sp, "1"))
		return;
	for (size_t i = 0; i < r->nsys; i++)
		carry_series(r->sys[i].v, r->nintervals);
	for (size_t i = 0; i < r->ncounters; i++)
		carry_series(r->counters[i].v, r->nintervals);
	for (size_t i = 0; i < r->nslab; i++) {
		struct ps_slab_series *ss = &r->slab[i];

		for (uint32_t k = 1; k < r->nintervals; k++)
			if (ss->active_objs[k] < 0) {
				ss->active_objs[k] = ss->active_objs[k - 1];
				ss->num_objs[k] = ss->num_objs[k - 1];
			}
	}
}

static void carry_forward(const struct loader *L)
{
	struct ps_run *r = L->r;
	bool absolute = ps_run_live_absolute(r);

	for (size_t i = 0; i < r->ntags; i++) {
		struct ps_sample *s = r->tags[i].s;
		uint32_t first = 0;

		while (first < r->nintervals && !L->seen[i * r->nintervals + first])
			first++;
		r->tags[i].first = first;
		/*
		 * A snapshot that does not list a tag says nothing about it (trace.h), unless the
		 * tag's counters showed it was born after that snapshot: then it held nothing.
		 */
		for (uint32_t k = 0; absolute && !(r->tags[i].tag.flags & PS_TAG_F_BORN_LATE) &&
				     first < r->nintervals && k < first; k++) {
			s[k].live_objs = s[first].live_objs;
			s[k].live_bytes = s[first].live_bytes;
		}
		for (uint32_t k = first + 1; k < r->nintervals; k++) {
			if (L->seen[i * r->nintervals + k])
				continue;
			s[k].live_objs = s[k - 1].live_objs;
			s[k].live_bytes = s[k - 1].live_bytes;
		}
	}
}

int ps_run_load(struct ps_run **out, const char *path, char *err, size_t errlen)
{
	return ps_run_load_points(out, path, PS_RUN_MAX_POINTS, err, errlen);
}

int ps_run_load_points(struct ps_run **out, const char *path, uint32_t max_points, char *err,
		       size_t errlen)
{
	char dummy[8], what[200];
	struct loader L = { .path = path, .err = err ? err : dummy, .errlen = err ? errlen : sizeof(dummy) };
	int64_t nint = 0, ntags = 0;
	int e;

	L.err[0] = 0;
	e = ps_trace_db_open(&L.db, path, 0, L.err, L.errlen);
	if (e)
		return e;
	/* One read transaction: a recorder still writing cannot shift the snapshot under us. */
	if (sqlite3_exec(L.db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		e = sql_fail(&L, sqlite3_errcode(L.db), "begin");
		goto out;
	}
	e = count_rows(&L, "SELECT count(*) FROM intervals", &nint);
	if (!e)
		e = count_rows(&L, "SELECT coalesce(max(id), 0) FROM tags", &L.max_tag_id);
	if (!e)
		e = count_rows(&L, "SELECT count(*) FROM tags", &ntags);
	if (e)
		goto out;
	L.nsrc = nint > PS_TRACE_MAX_INTERVALS ? 0 : (uint32_t)nint;
	L.per = max_points && L.nsrc > max_points ? (L.nsrc + max_points - 1) / max_points : 1;
	if (nint > PS_TRACE_MAX_INTERVALS || L.max_tag_id > (1 << 26) ||
	    ntags * ((nint ? nint : 1) + L.per - 1) / L.per > (1ll << 31)) {
		snprintf(L.err, L.errlen, "%s: %lld intervals x %lld tags is more than poolscope loads",
			 path, (long long)nint, (long long)ntags);
		e = -E2BIG;
		goto out;
	}
	L.r = ps_run_new((L.nsrc + L.per - 1) / L.per);
	L.idx = malloc((nint ? nint : 1) * sizeof(*L.idx));
	L.tag_pos = malloc((L.max_tag_id + 1) * sizeof(*L.tag_pos));
	if (!L.r || !L.idx || !L.tag_pos || !(L.r->path = strdup(path))) {
		e = oom(&L);
		goto out;
	}
	for (int64_t i = 0; i <= L.max_tag_id; i++)
		L.tag_pos[i] = -1;

	e = each_row(&L, "SELECT key, value FROM meta", "meta", 1, meta_row);
	if (!e)
		e = each_row(&L, "SELECT idx AS interval, t_ns, wall_ns, dur_ns FROM intervals"
			     " ORDER BY idx", "intervals", 1, interval_row);
	if (!e) {
		L.r->nintervals = (L.nread + L.per - 1) / L.per;
		L.r->per_point = L.per;
		L.r->src_intervals = L.nread;
	}
	if (!e)
		e = each_row(&L, has_domain(L.db) ?
			     "SELECT id AS tag, kind, name, cache, cache_alias, site, site_sym,"
			     " site_module, pool, ctx, comm, owner, flags, domain FROM tags ORDER BY id" :
			     "SELECT id AS tag, kind, name, cache, cache_alias, site, site_sym,"
			     " site_module, pool, ctx, comm, owner, flags, NULL FROM tags ORDER BY id",
			     "tags", 1, tag_row);
	if (e)
		goto out;
	L.seen = calloc(L.r->ntags * (L.r->nintervals ? L.r->nintervals : 1) + 1, 1);
	if (!L.seen) {
		e = oom(&L);
		goto out;
	}
	/* in key order (the tables' own), so a point's state is that of its last interval */
	e = each_row(&L, "SELECT tag, interval, allocs, frees, alloc_bytes, free_bytes, live_objs,"
		     " live_bytes FROM samples ORDER BY tag, interval", "samples", 2, sample_row);
	if (!e)
		carry_forward(&L);
	if (!e)
		e = each_row(&L, "SELECT name, interval, value FROM sysstat ORDER BY name, interval",
			     "sysstat", 2, sys_row);
	if (!e)
		e = each_row(&L, "SELECT name, interval, value FROM counters ORDER BY name, interval",
			     "counters", 2,
			     counter_row);
	if (!e)
		e = each_row(&L, "SELECT cache, interval, active_objs, num_objs, objsize, objperslab, "
			     "pagesperslab FROM slabinfo ORDER BY cache, interval",
			     "slabinfo", 2, slab_row);
	if (!e)
		carry_sparse(&L);
	if (!e)
		e = each_row(&L, "SELECT interval, ios, bytes, errors, lat_p50_ns, lat_p99_ns,"
			     " lat_max_ns, inflight FROM workload ORDER BY interval", "workload", 1, workload_row);
	if (!e)
		e = each_row(&L, "SELECT id AS stack, tag, hash, allocs, bytes, live_bytes, comm, ctx"
			     " FROM stacks ORDER BY id", "stacks", 1, stack_row);
	if (!e)
		e = each_row(&L, "SELECT stack, depth, addr, sym, off, module FROM frames"
			     " ORDER BY stack, depth", "frames", 2, frame_row);
	if (!e && has_srclines(L.db))
		e = srclines_unique(&L) ?: each_row(&L, "SELECT module, sym, off, file, line, func,"
						   " caller, call_file, call_line FROM srclines",
						   "srclines", 3, src_row);
	if (e)
		goto out;
	ps_run_link_srcs(L.r);
	if (ps_run_check(L.r, what, sizeof(what))) {
		snprintf(L.err, L.errlen, "%s: %s", path, what);
		e = -PS_ERR__CORRUPT;
		goto out;
	}
	ps_run_finish(L.r);
	*out = L.r;
	L.r = NULL;
out:
	ps_run_free(L.r);
	free(L.idx);
	free(L.tag_pos);
	free(L.seen);
	free(L.p50w);
	sqlite3_close(L.db);
	return e;
}

/* --- save ------------------------------------------------------------------------------------ */

static bool sample_changed(const struct ps_sample *s, const struct ps_sample *prev)
{
	if (s->allocs || s->frees || s->alloc_bytes || s->free_bytes)
		return true;
	if (!prev)
		return s->live_objs || s->live_bytes;
	return s->live_objs != prev->live_objs || s->live_bytes != prev->live_bytes;
}

int ps_run_save(const struct ps_run *r, const char *path, unsigned flags, char *err, size_t errlen)
{
	char dummy[8], what[200];
	struct ps_trace *t = NULL;
	int64_t *ids = NULL;
	bool absolute;
	int e;

	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	/* what the reader would refuse is not written */
	e = ps_run_check(r, what, sizeof(what));
	if (e) {
		snprintf(err, errlen, "%s: %s", path, what);
		return e;
	}
	e = ps_trace_create(&t, path, flags);
	if (e) {
		snprintf(err, errlen, "%s: %s", path, e == -EEXIST ? "exists (use --force to replace it)"
			 : ps_strerror(e));
		return e;
	}
	absolute = ps_run_live_absolute(r);
	ids = calloc(r->ntags ? r->ntags : 1, sizeof(*ids));
	if (!ids) {
		e = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; !e && i < r->nmeta; i++)
		e = ps_trace_set_meta(t, r->meta[i].key, r->meta[i].value);
	for (size_t i = 0; !e && i < r->ntags; i++) {
		struct ps_tag tag = r->tags[i].tag;

		e = ps_trace_add_tag(t, &tag);
		ids[i] = tag.id;
	}
	for (uint32_t k = 0; !e && k < r->nintervals; k++) {
		const struct ps_interval *iv = &r->intervals[k];

		e = ps_trace_begin_interval(t, k, iv->t_ns, iv->wall_ns, iv->dur_ns);
		for (size_t i = 0; !e && i < r->ntags; i++) {
			const struct ps_sample *s = &r->tags[i].s[k];

			/*
			 * Not listed before its first row: no row there (trace.h). In a trace of
			 * snapshots the first row is written even when it is all zero, or the tag
			 * would seem first listed later.
			 */
			if (k < r->tags[i].first)
				continue;
			if ((absolute && k == r->tags[i].first) ||
			    sample_changed(s, k > r->tags[i].first ? s - 1 : NULL))
				e = ps_trace_add_sample(t, ids[i], s);
		}
		for (size_t i = 0; !e && i < r->nsys; i++)
			if (r->sys[i].v[k] >= 0)
				e = ps_trace_add_sysstat(t, r->sys[i].name, r->sys[i].v[k]);
		for (size_t i = 0; !e && i < r->ncounters; i++)
			if (r->counters[i].v[k] >= 0)
				e = ps_trace_add_counter(t, r->counters[i].name, r->counters[i].v[k]);
		for (size_t i = 0; !e && i < r->nslab; i++) {
			const struct ps_slab_series *ss = &r->slab[i];
			struct ps_slabinfo si = { .cache = ss->cache, .objsize = ss->objsize,
						  .objperslab = ss->objperslab,
						  .pagesperslab = ss->pagesperslab };

			if (ss->active_objs[k] < 0)
				continue;
			si.active_objs = (uint64_t)ss->active_objs[k];
			si.num_objs = ss->num_objs[k] < 0 ? 0 : (uint64_t)ss->num_objs[k];
			e = ps_trace_add_slabinfo(t, &si);
		}
		if (!e && r->has_workload)
			e = ps_trace_add_workload(t, &r->workload[k]);
		if (!e)
			e = ps_trace_commit_interval(t);
	}
	for (size_t i = 0; !e && i < r->nstacks; i++) {
		struct ps_stack st = r->stacks[i];
		size_t p;

		for (p = 0; p < r->ntags && r->tags[p].tag.id != st.tag_id; p++)
			;
		if (p == r->ntags) {
			snprintf(err, errlen, "%s: stack %lld names unknown tag %lld", path,
				 (long long)st.id, (long long)st.tag_id);
			e = -EINVAL;
			goto out;
		}
		st.tag_id = ids[p];
		e = ps_trace_put_stack(t, &st);
	}
	for (size_t i = 0; !e && i < r->nsrcs; i++)
		e = ps_trace_put_src(t, r->srcs[i]);
	if (e)
		snprintf(err, errlen, "%s: %s", path, ps_trace_errmsg(t));
out:
	free(ids);
	if (ps_trace_close(t) && !e) {
		snprintf(err, errlen, "%s: close failed", path);
		e = -EIO;
	}
	return e;
}
