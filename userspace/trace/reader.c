// SPDX-License-Identifier: GPL-2.0
/*
 * Reads a whole trace into a struct ps_run, and writes one back (ps_run_save).
 *
 * Samples are sparse on disk (a row only when a tag did something or its live count changed);
 * in memory every tag has a dense series, with live_* carried forward across intervals that
 * have no row. Intervals are read in idx order and renumbered densely, so a file whose writer
 * died between intervals still loads.
 */
#include "schema.h"
#include "trace.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct loader {
	sqlite3 *db;
	struct ps_run *r;
	const char *path;
	char *err;
	size_t errlen;
	int64_t *idx;		/* on-disk interval idx of position k (sorted) */
	int64_t max_tag_id;
	int32_t *tag_pos;	/* tag id -> position in r->tags, -1 */
	uint32_t nread;		/* intervals read so far */
	unsigned char *seen;	/* [tag pos][interval]: a sample row exists (carry-forward) */
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

/* Position of an on-disk interval idx, or -1 when no such interval. */
static long pos_of(const struct loader *L, int64_t idx)
{
	uint32_t lo = 0, hi = L->r->nintervals;

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

/* Runs sql and calls row() for each result row. */
static int each_row(struct loader *L, const char *sql, const char *what,
		    int (*row)(struct loader *, sqlite3_stmt *))
{
	sqlite3_stmt *s;
	int rc, e = 0;

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

	/* rows come in idx order; the position is how many we have stored */
	if (k >= L->r->nintervals)
		return 0;
	L->nread++;
	iv = &L->r->intervals[k];
	L->idx[k] = sqlite3_column_int64(s, 0);
	iv->t_ns = (uint64_t)sqlite3_column_int64(s, 1);
	iv->wall_ns = (uint64_t)sqlite3_column_int64(s, 2);
	iv->dur_ns = (uint64_t)sqlite3_column_int64(s, 3);
	if (k && iv->t_ns < L->r->intervals[k - 1].t_ns) {
		snprintf(L->err, L->errlen, "%s: interval %lld ends at %llu ns, before interval %lld",
			 L->path, (long long)L->idx[k], (unsigned long long)iv->t_ns,
			 (long long)L->idx[k - 1]);
		return -PS_ERR__CORRUPT;
	}
	return 0;
}

static int tag_row(struct loader *L, sqlite3_stmt *s)
{
	struct ps_tag_series *ts;
	struct ps_tag tag = { 0 };
	bool nomem = false;
	int64_t id = sqlite3_column_int64(s, 0);

	if (id <= 0 || id > L->max_tag_id) {
		snprintf(L->err, L->errlen, "%s: tags: id %lld out of range", L->path, (long long)id);
		return -PS_ERR__CORRUPT;
	}
	tag.id = id;
	tag.kind = col_dup(s, 1, &nomem);
	tag.name = col_dup(s, 2, &nomem);
	tag.cache = col_dup(s, 3, &nomem);
	tag.cache_alias = col_dup(s, 4, &nomem);
	tag.site = (uint64_t)sqlite3_column_int64(s, 5);
	tag.site_sym = col_dup(s, 6, &nomem);
	tag.site_module = col_dup(s, 7, &nomem);
	tag.pool = col_dup(s, 8, &nomem);
	tag.ctx = col_dup(s, 9, &nomem);
	tag.comm = col_dup(s, 10, &nomem);
	tag.owner = col_dup(s, 11, &nomem);
	tag.flags = (uint32_t)sqlite3_column_int64(s, 12);
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
	if (!ts)
		return oom(L);
	L->tag_pos[id] = (int32_t)(L->r->ntags - 1);
	return 0;
}

static int sample_row(struct loader *L, sqlite3_stmt *s)
{
	int64_t id = sqlite3_column_int64(s, 0);
	long k = pos_of(L, sqlite3_column_int64(s, 1));
	struct ps_sample *x;
	int32_t p;

	if (id <= 0 || id > L->max_tag_id || (p = L->tag_pos[id]) < 0) {
		snprintf(L->err, L->errlen, "%s: samples: row for unknown tag %lld", L->path,
			 (long long)id);
		return -PS_ERR__CORRUPT;
	}
	if (k < 0)	/* a row of an interval whose own row was not committed: skip */
		return 0;
	x = &L->r->tags[p].s[k];
	x->allocs = (uint64_t)sqlite3_column_int64(s, 2);
	x->frees = (uint64_t)sqlite3_column_int64(s, 3);
	x->alloc_bytes = (uint64_t)sqlite3_column_int64(s, 4);
	x->free_bytes = (uint64_t)sqlite3_column_int64(s, 5);
	x->live_objs = sqlite3_column_int64(s, 6);
	x->live_bytes = sqlite3_column_int64(s, 7);
	L->seen[(size_t)p * L->r->nintervals + k] = 1;
	return 0;
}

static int named_row(struct loader *L, sqlite3_stmt *s, bool sys)
{
	const char *name = (const char *)sqlite3_column_text(s, 0);
	long k = pos_of(L, sqlite3_column_int64(s, 1));
	struct ps_series *ser;

	if (!name || k < 0)
		return 0;
	ser = sys ? ps_run_add_sys(L->r, name) : ps_run_add_counter(L->r, name);
	if (!ser)
		return oom(L);
	ser->v[k] = sqlite3_column_int64(s, 2);
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
	const char *cache = (const char *)sqlite3_column_text(s, 0);
	long k = pos_of(L, sqlite3_column_int64(s, 1));
	struct ps_slab_series *ss;

	if (!cache || k < 0)
		return 0;
	ss = ps_run_add_slab(L->r, cache, (uint32_t)sqlite3_column_int64(s, 4));
	if (!ss)
		return oom(L);
	ss->active_objs[k] = sqlite3_column_int64(s, 2);
	ss->num_objs[k] = sqlite3_column_int64(s, 3);
	return 0;
}

static int workload_row(struct loader *L, sqlite3_stmt *s)
{
	long k = pos_of(L, sqlite3_column_int64(s, 0));
	struct ps_workload *w;

	if (k < 0)
		return 0;
	if (ps_run_enable_workload(L->r))
		return oom(L);
	w = &L->r->workload[k];
	w->ios = (uint64_t)sqlite3_column_int64(s, 1);
	w->bytes = (uint64_t)sqlite3_column_int64(s, 2);
	w->errors = (uint64_t)sqlite3_column_int64(s, 3);
	w->lat_p50_ns = (uint64_t)sqlite3_column_int64(s, 4);
	w->lat_p99_ns = (uint64_t)sqlite3_column_int64(s, 5);
	w->lat_max_ns = (uint64_t)sqlite3_column_int64(s, 6);
	w->inflight = (uint32_t)sqlite3_column_int64(s, 7);
	return 0;
}

static int stack_row(struct loader *L, sqlite3_stmt *s)
{
	struct ps_stack st = { 0 };
	bool nomem = false;
	int e;

	st.id = sqlite3_column_int64(s, 0);
	st.tag_id = sqlite3_column_int64(s, 1);
	st.hash = (uint64_t)sqlite3_column_int64(s, 2);
	st.allocs = (uint64_t)sqlite3_column_int64(s, 3);
	st.bytes = (uint64_t)sqlite3_column_int64(s, 4);
	st.live_bytes = sqlite3_column_int64(s, 5);
	st.comm = col_dup(s, 6, &nomem);
	st.ctx = col_dup(s, 7, &nomem);
	e = nomem ? -ENOMEM : ps_run_add_stack(L->r, &st);
	free((char *)st.comm);
	free((char *)st.ctx);
	return e ? oom(L) : 0;
}

static int frame_row(struct loader *L, sqlite3_stmt *s)
{
	int64_t id = sqlite3_column_int64(s, 0);
	int64_t depth = sqlite3_column_int64(s, 1);
	struct ps_stack *st = NULL;
	struct ps_frame *f, *nf;
	bool nomem = false;

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
		return 0;
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
	f->addr = (uint64_t)sqlite3_column_int64(s, 2);
	f->sym = col_dup(s, 3, &nomem);
	f->off = (uint64_t)sqlite3_column_int64(s, 4);
	f->module = col_dup(s, 5, &nomem);
	st->nframes++;
	return nomem ? oom(L) : 0;
}

static void carry_forward(const struct loader *L)
{
	struct ps_run *r = L->r;

	for (size_t i = 0; i < r->ntags; i++) {
		struct ps_sample *s = r->tags[i].s;

		for (uint32_t k = 1; k < r->nintervals; k++) {
			if (L->seen[i * r->nintervals + k])
				continue;
			s[k].live_objs = s[k - 1].live_objs;
			s[k].live_bytes = s[k - 1].live_bytes;
		}
	}
}

int ps_run_load(struct ps_run **out, const char *path, char *err, size_t errlen)
{
	char dummy[8];
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
	if (nint > (1 << 24) || L.max_tag_id > (1 << 26) || ntags * (nint ? nint : 1) > (1ll << 31)) {
		snprintf(L.err, L.errlen, "%s: %lld intervals x %lld tags is more than poolscope loads",
			 path, (long long)nint, (long long)ntags);
		e = -E2BIG;
		goto out;
	}
	L.r = ps_run_new((uint32_t)nint);
	L.idx = malloc((nint ? nint : 1) * sizeof(*L.idx));
	L.tag_pos = malloc((L.max_tag_id + 1) * sizeof(*L.tag_pos));
	if (!L.r || !L.idx || !L.tag_pos || !(L.r->path = strdup(path))) {
		e = oom(&L);
		goto out;
	}
	for (int64_t i = 0; i <= L.max_tag_id; i++)
		L.tag_pos[i] = -1;

	e = each_row(&L, "SELECT key, value FROM meta", "meta", meta_row);
	if (!e)
		e = each_row(&L, "SELECT idx, t_ns, wall_ns, dur_ns FROM intervals ORDER BY idx",
			     "intervals", interval_row);
	if (!e)
		L.r->nintervals = L.nread;
	if (!e)
		e = each_row(&L, "SELECT id, kind, name, cache, cache_alias, site, site_sym, site_module,"
			     " pool, ctx, comm, owner, flags FROM tags ORDER BY id", "tags", tag_row);
	if (e)
		goto out;
	L.seen = calloc(L.r->ntags * (nint ? nint : 1) + 1, 1);
	if (!L.seen) {
		e = oom(&L);
		goto out;
	}
	e = each_row(&L, "SELECT tag, interval, allocs, frees, alloc_bytes, free_bytes, live_objs,"
		     " live_bytes FROM samples", "samples", sample_row);
	if (!e)
		carry_forward(&L);
	if (!e)
		e = each_row(&L, "SELECT name, interval, value FROM sysstat", "sysstat", sys_row);
	if (!e)
		e = each_row(&L, "SELECT name, interval, value FROM counters", "counters", counter_row);
	if (!e)
		e = each_row(&L, "SELECT cache, interval, active_objs, num_objs, objsize FROM slabinfo",
			     "slabinfo", slab_row);
	if (!e)
		e = each_row(&L, "SELECT interval, ios, bytes, errors, lat_p50_ns, lat_p99_ns,"
			     " lat_max_ns, inflight FROM workload", "workload", workload_row);
	if (!e)
		e = each_row(&L, "SELECT id, tag, hash, allocs, bytes, live_bytes, comm, ctx FROM stacks"
			     " ORDER BY id", "stacks", stack_row);
	if (!e)
		e = each_row(&L, "SELECT stack, depth, addr, sym, off, module FROM frames"
			     " ORDER BY stack, depth", "frames", frame_row);
	if (e)
		goto out;
	ps_run_finish(L.r);
	*out = L.r;
	L.r = NULL;
out:
	ps_run_free(L.r);
	free(L.idx);
	free(L.tag_pos);
	free(L.seen);
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
	char dummy[8];
	struct ps_trace *t = NULL;
	int64_t *ids = NULL;
	int e;

	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	e = ps_trace_create(&t, path, flags);
	if (e) {
		snprintf(err, errlen, "%s: %s", path, e == -EEXIST ? "exists (use --force to replace it)"
			 : ps_strerror(e));
		return e;
	}
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

			if (sample_changed(s, k ? s - 1 : NULL))
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
			struct ps_slabinfo si = { .cache = ss->cache, .objsize = ss->objsize };

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
