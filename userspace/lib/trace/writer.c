// SPDX-License-Identifier: GPL-2.0
/*
 * Trace writer. Statements are prepared once; all writes between two commits form one
 * transaction, and ps_trace_commit_interval() ends it, so a writer killed at any point leaves the
 * file as of its last committed interval (WAL, synchronous=NORMAL: durable against a crash of the
 * process; a power loss may lose the last interval too).
 */
#include "userspace/lib/trace/schema.h"
#include "userspace/lib/trace/trace.h"
#include "userspace/lib/util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	ST_META, ST_TAG, ST_INTERVAL, ST_SAMPLE, ST_SYS, ST_SLAB, ST_COUNTER,
	ST_WORKLOAD, ST_STACK_FIND, ST_STACK_INS, ST_STACK_UPD, ST_FRAME, ST_SRC, ST__N
};

static const char *const stmt_sql[ST__N] = {
	[ST_META] = "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)",
	[ST_TAG] = "INSERT INTO tags(kind, name, cache, cache_alias, site, site_sym, site_module, pool,"
		   " ctx, comm, owner, flags, domain) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)",
	[ST_INTERVAL] = "INSERT OR REPLACE INTO intervals(idx, t_ns, wall_ns, dur_ns) VALUES(?1,?2,?3,?4)",
	[ST_SAMPLE] = "INSERT OR REPLACE INTO samples(tag, interval, allocs, frees, alloc_bytes, free_bytes,"
		      " live_objs, live_bytes) VALUES(?1,?2,?3,?4,?5,?6,?7,?8)",
	[ST_SYS] = "INSERT OR REPLACE INTO sysstat(name, interval, value) VALUES(?1,?2,?3)",
	[ST_SLAB] = "INSERT OR REPLACE INTO slabinfo(cache, interval, active_objs, num_objs, objsize,"
		    " objperslab, pagesperslab) VALUES(?1,?2,?3,?4,?5,?6,?7)",
	[ST_COUNTER] = "INSERT OR REPLACE INTO counters(name, interval, value) VALUES(?1,?2,?3)",
	[ST_WORKLOAD] = "INSERT OR REPLACE INTO workload(interval, ios, bytes, errors, lat_p50_ns,"
			" lat_p99_ns, lat_max_ns, inflight) VALUES(?1,?2,?3,?4,?5,?6,?7,?8)",
	[ST_STACK_FIND] = "SELECT id FROM stacks WHERE tag=?1 AND hash=?2",
	[ST_STACK_INS] = "INSERT INTO stacks(tag, hash, allocs, bytes, live_bytes, comm, ctx, nframes)"
			 " VALUES(?1,?2,?3,?4,?5,?6,?7,?8)",
	[ST_STACK_UPD] = "UPDATE stacks SET allocs=?2, bytes=?3, live_bytes=?4 WHERE id=?1",
	[ST_SRC] = "INSERT OR REPLACE INTO srclines(module, sym, off, file, line, func, caller,"
		   " call_file, call_line) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)",
	[ST_FRAME] = "INSERT OR REPLACE INTO frames(stack, depth, addr, sym, off, module)"
		     " VALUES(?1,?2,?3,?4,?5,?6)",
};

struct ps_trace {
	sqlite3 *db;
	sqlite3_stmt *st[ST__N];
	bool in_txn;
	bool in_interval;
	uint32_t interval;
	bool batch;		/* PS_TRACE_F_BATCH */
	uint32_t pending;	/* intervals done since the last commit */
	char *path;		/* for ps_trace_discard() */
	char err[512];
};

const char *ps_trace_errmsg(const struct ps_trace *t)
{
	return t && t->err[0] ? t->err : "no error";
}

static int fail(struct ps_trace *t, int rc, const char *what)
{
	snprintf(t->err, sizeof(t->err), "%s: %s", what, sqlite3_errmsg(t->db));
	return ps_trace_sqlite_err(rc);
}

static int begin(struct ps_trace *t)
{
	int rc;

	if (t->in_txn)
		return 0;
	rc = sqlite3_exec(t->db, "BEGIN", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return fail(t, rc, "begin");
	t->in_txn = true;
	return 0;
}

static int commit(struct ps_trace *t)
{
	int rc;

	if (!t->in_txn)
		return 0;
	rc = sqlite3_exec(t->db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return fail(t, rc, "commit");
	t->in_txn = false;
	return 0;
}

static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

/* Steps a statement that returns no row, and resets it. */
static int run(struct ps_trace *t, int which, const char *what)
{
	sqlite3_stmt *s = t->st[which];
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE)
		return fail(t, rc, what);
	return 0;
}

static int prepare_all(struct ps_trace *t)
{
	for (int i = 0; i < ST__N; i++) {
		int rc = sqlite3_prepare_v3(t->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
					    &t->st[i], NULL);
		if (rc != SQLITE_OK)
			return fail(t, rc, "prepare");
	}
	return 0;
}

static int tune(struct ps_trace *t)
{
	int rc = sqlite3_exec(t->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
			      NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		return fail(t, rc, "set WAL mode");
	sqlite3_busy_timeout(t->db, 5000);
	return 0;
}

/* SQLite's write-ahead log and its index, which a file removed by hand would leave behind. */
static void unlink_side_files(const char *path)
{
	char side[4200];

	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}

int ps_trace_create(struct ps_trace **out, const char *path, unsigned flags)
{
	struct ps_trace *t;
	char sql[128];
	int fd, rc, e;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->batch = flags & PS_TRACE_F_BATCH;
	t->path = strdup(path);
	if (!t->path) {
		e = -ENOMEM;
		goto out_free;
	}
	if (flags & PS_TRACE_F_FORCE) {
		if (unlink(path) && errno != ENOENT) {
			e = -errno;
			goto out_free;
		}
		unlink_side_files(path);
	}
	/* O_EXCL + 0600 before SQLite opens it: the trace names kernel addresses and commands. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		e = -errno;
		goto out_free;
	}
	close(fd);
	/* used by one thread (the recorder's main one): no mutex around each call */
	rc = sqlite3_open_v2(path, &t->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		e = fail(t, rc, "open");
		goto out_unlink;
	}
	e = tune(t);
	if (e)
		goto out_unlink;
	snprintf(sql, sizeof(sql), "PRAGMA application_id=%d; PRAGMA user_version=%d;",
		 PS_TRACE_APP_ID, PS_TRACE_SCHEMA_VERSION);
	rc = sqlite3_exec(t->db, "BEGIN", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(t->db, sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(t->db, ps_trace_schema_sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(t->db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		e = fail(t, rc, "create schema");
		goto out_unlink;
	}
	e = prepare_all(t);
	if (e)
		goto out_unlink;
	*out = t;
	return 0;

out_unlink:
	for (int i = 0; i < ST__N; i++)
		sqlite3_finalize(t->st[i]);
	sqlite3_close(t->db);
	unlink(path);
out_free:
	free(t->path);
	free(t);
	return e;
}

int ps_trace_close(struct ps_trace *t)
{
	int e = 0;

	if (!t)
		return 0;
	if (t->db) {
		e = commit(t);
		for (int i = 0; i < ST__N; i++)
			sqlite3_finalize(t->st[i]);
		/*
		 * Fold the WAL back so the file is self-contained when copied alone, and leave
		 * WAL mode: a finished trace opened read-only (report, plot, a copy on another
		 * machine) then needs no -wal/-shm beside it. With a reader still attached the
		 * switch fails (busy) and the file simply stays in WAL mode.
		 */
		sqlite3_wal_checkpoint_v2(t->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
		sqlite3_exec(t->db, "PRAGMA journal_mode=DELETE;", NULL, NULL, NULL);
		if (sqlite3_close(t->db) != SQLITE_OK && !e)
			e = -EIO;
	}
	free(t->path);
	free(t);
	return e;
}

void ps_trace_discard(struct ps_trace *t)
{
	if (!t)
		return;
	if (t->db) {
		for (int i = 0; i < ST__N; i++)
			sqlite3_finalize(t->st[i]);
		sqlite3_close(t->db);
	}
	if (t->path) {
		unlink(t->path);
		unlink_side_files(t->path);
	}
	free(t->path);
	free(t);
}

int ps_trace_set_meta(struct ps_trace *t, const char *key, const char *value)
{
	int e = begin(t);

	if (e)
		return e;
	bind_text(t->st[ST_META], 1, key);
	bind_text(t->st[ST_META], 2, value);
	return run(t, ST_META, "meta");
}

int ps_trace_set_meta_int(struct ps_trace *t, const char *key, int64_t value)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)value);
	return ps_trace_set_meta(t, key, buf);
}

static void bind_tag(sqlite3_stmt *s, const struct ps_tag *tag)
{
	bind_text(s, 1, tag->kind);
	bind_text(s, 2, tag->name);
	bind_text(s, 3, tag->cache);
	bind_text(s, 4, tag->cache_alias);
	sqlite3_bind_int64(s, 5, (int64_t)tag->site);
	bind_text(s, 6, tag->site_sym);
	bind_text(s, 7, tag->site_module);
	bind_text(s, 8, tag->pool);
	bind_text(s, 9, tag->ctx);
	bind_text(s, 10, tag->comm);
	bind_text(s, 11, tag->owner);
	sqlite3_bind_int64(s, 12, tag->flags);
	/* the domain the readers would decide, so that SQL by hand sees it too */
	bind_text(s, 13, tag->domain ? tag->domain : ps_tag_domain(tag));
}

int ps_trace_add_tag(struct ps_trace *t, struct ps_tag *tag)
{
	int e;

	if (!tag->kind) {
		snprintf(t->err, sizeof(t->err), "tag without a kind");
		return -EINVAL;
	}
	e = begin(t);
	if (e)
		return e;
	bind_tag(t->st[ST_TAG], tag);
	e = run(t, ST_TAG, "add tag");
	if (!e)
		tag->id = sqlite3_last_insert_rowid(t->db);
	return e;
}

int ps_trace_begin_interval(struct ps_trace *t, uint32_t idx, uint64_t t_ns, uint64_t wall_ns,
			    uint64_t dur_ns)
{
	sqlite3_stmt *s = t->st[ST_INTERVAL];
	int e;

	if (t->in_interval) {
		snprintf(t->err, sizeof(t->err), "interval %u begun inside interval %u", idx, t->interval);
		return -EINVAL;
	}
	/* what the reader would refuse: stop here, with every interval so far readable */
	if (idx >= PS_TRACE_MAX_INTERVALS) {
		snprintf(t->err, sizeof(t->err), "interval %u: a trace holds %u intervals", idx,
			 PS_TRACE_MAX_INTERVALS);
		return -ERANGE;
	}
	if (t_ns > (uint64_t)PS_TRACE_TIME_MAX || wall_ns > (uint64_t)PS_TRACE_TIME_MAX ||
	    dur_ns > (uint64_t)PS_TRACE_TIME_MAX) {
		snprintf(t->err, sizeof(t->err), "interval %u: times of %llu, %llu and %llu ns: a "
			 "trace holds times up to 2^62 ns", idx, (unsigned long long)t_ns,
			 (unsigned long long)wall_ns, (unsigned long long)dur_ns);
		return -ERANGE;
	}
	e = begin(t);
	if (e)
		return e;
	t->in_interval = true;
	t->interval = idx;
	sqlite3_bind_int64(s, 1, idx);
	sqlite3_bind_int64(s, 2, (int64_t)t_ns);
	sqlite3_bind_int64(s, 3, (int64_t)wall_ns);
	sqlite3_bind_int64(s, 4, (int64_t)dur_ns);
	return run(t, ST_INTERVAL, "add interval");
}

static int need_interval(struct ps_trace *t, const char *what)
{
	if (t->in_interval)
		return 0;
	snprintf(t->err, sizeof(t->err), "%s outside an interval", what);
	return -EINVAL;
}

int ps_trace_add_sample(struct ps_trace *t, int64_t tag_id, const struct ps_sample *x)
{
	sqlite3_stmt *s = t->st[ST_SAMPLE];
	int e = need_interval(t, "sample");

	if (e)
		return e;
	sqlite3_bind_int64(s, 1, tag_id);
	sqlite3_bind_int64(s, 2, t->interval);
	sqlite3_bind_int64(s, 3, (int64_t)x->allocs);
	sqlite3_bind_int64(s, 4, (int64_t)x->frees);
	sqlite3_bind_int64(s, 5, (int64_t)x->alloc_bytes);
	sqlite3_bind_int64(s, 6, (int64_t)x->free_bytes);
	sqlite3_bind_int64(s, 7, x->live_objs);
	sqlite3_bind_int64(s, 8, x->live_bytes);
	return run(t, ST_SAMPLE, "add sample");
}

static int add_named(struct ps_trace *t, int which, const char *name, int64_t value,
		     const char *what)
{
	sqlite3_stmt *s = t->st[which];
	int e = need_interval(t, what);

	if (e)
		return e;
	bind_text(s, 1, name);
	sqlite3_bind_int64(s, 2, t->interval);
	sqlite3_bind_int64(s, 3, value);
	return run(t, which, what);
}

int ps_trace_add_sysstat(struct ps_trace *t, const char *name, int64_t value)
{
	return add_named(t, ST_SYS, name, value, "sysstat");
}

int ps_trace_add_counter(struct ps_trace *t, const char *name, int64_t value)
{
	return add_named(t, ST_COUNTER, name, value, "counter");
}

int ps_trace_add_slabinfo(struct ps_trace *t, const struct ps_slabinfo *si)
{
	sqlite3_stmt *s = t->st[ST_SLAB];
	int e = need_interval(t, "slabinfo");

	if (e)
		return e;
	bind_text(s, 1, si->cache);
	sqlite3_bind_int64(s, 2, t->interval);
	sqlite3_bind_int64(s, 3, (int64_t)si->active_objs);
	sqlite3_bind_int64(s, 4, (int64_t)si->num_objs);
	sqlite3_bind_int64(s, 5, si->objsize);
	sqlite3_bind_int64(s, 6, si->objperslab);
	sqlite3_bind_int64(s, 7, si->pagesperslab);
	return run(t, ST_SLAB, "slabinfo");
}

int ps_trace_add_workload(struct ps_trace *t, const struct ps_workload *w)
{
	sqlite3_stmt *s = t->st[ST_WORKLOAD];
	int e = need_interval(t, "workload");

	if (e)
		return e;
	sqlite3_bind_int64(s, 1, t->interval);
	sqlite3_bind_int64(s, 2, (int64_t)w->ios);
	sqlite3_bind_int64(s, 3, (int64_t)w->bytes);
	sqlite3_bind_int64(s, 4, (int64_t)w->errors);
	sqlite3_bind_int64(s, 5, (int64_t)w->lat_p50_ns);
	sqlite3_bind_int64(s, 6, (int64_t)w->lat_p99_ns);
	sqlite3_bind_int64(s, 7, (int64_t)w->lat_max_ns);
	sqlite3_bind_int64(s, 8, w->inflight);
	return run(t, ST_WORKLOAD, "workload");
}

int ps_trace_commit_interval(struct ps_trace *t)
{
	int e = need_interval(t, "commit");

	if (e)
		return e;
	t->in_interval = false;
	/* a commit per interval would dominate a long conversion: a converter's intervals are many */
	if (t->batch && ++t->pending < PS_TRACE_BATCH)
		return 0;
	t->pending = 0;
	return commit(t);
}

int ps_trace_put_stack(struct ps_trace *t, struct ps_stack *st)
{
	sqlite3_stmt *s;
	int64_t id = 0;
	int rc, e;

	e = begin(t);
	if (e)
		return e;
	s = t->st[ST_STACK_FIND];
	sqlite3_bind_int64(s, 1, st->tag_id);
	sqlite3_bind_int64(s, 2, (int64_t)st->hash);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		id = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail(t, rc, "find stack");
	if (id) {
		s = t->st[ST_STACK_UPD];
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_int64(s, 2, (int64_t)st->allocs);
		sqlite3_bind_int64(s, 3, (int64_t)st->bytes);
		sqlite3_bind_int64(s, 4, st->live_bytes);
		st->id = id;
		return run(t, ST_STACK_UPD, "update stack");
	}
	s = t->st[ST_STACK_INS];
	sqlite3_bind_int64(s, 1, st->tag_id);
	sqlite3_bind_int64(s, 2, (int64_t)st->hash);
	sqlite3_bind_int64(s, 3, (int64_t)st->allocs);
	sqlite3_bind_int64(s, 4, (int64_t)st->bytes);
	sqlite3_bind_int64(s, 5, st->live_bytes);
	bind_text(s, 6, st->comm);
	bind_text(s, 7, st->ctx);
	sqlite3_bind_int64(s, 8, st->nframes);
	e = run(t, ST_STACK_INS, "add stack");
	if (e)
		return e;
	st->id = sqlite3_last_insert_rowid(t->db);
	for (uint32_t i = 0; i < st->nframes; i++) {
		const struct ps_frame *f = &st->frames[i];

		s = t->st[ST_FRAME];
		sqlite3_bind_int64(s, 1, st->id);
		sqlite3_bind_int64(s, 2, i);
		sqlite3_bind_int64(s, 3, (int64_t)f->addr);
		bind_text(s, 4, f->sym);
		sqlite3_bind_int64(s, 5, (int64_t)f->off);
		bind_text(s, 6, f->module);
		e = run(t, ST_FRAME, "add frame");
		if (e)
			return e;
	}
	return 0;
}

int ps_trace_put_src(struct ps_trace *t, const struct ps_src *src)
{
	sqlite3_stmt *s = t->st[ST_SRC];
	int e = begin(t);

	if (e)
		return e;
	bind_text(s, 1, src->module ? src->module : "");
	bind_text(s, 2, src->sym);
	sqlite3_bind_int64(s, 3, (int64_t)src->off);
	bind_text(s, 4, src->file);
	sqlite3_bind_int64(s, 5, src->line);
	bind_text(s, 6, src->func);
	bind_text(s, 7, src->caller);
	bind_text(s, 8, src->call_file);
	sqlite3_bind_int64(s, 9, src->call_line);
	return run(t, ST_SRC, "add source line");
}

int ps_trace_each_src_key(struct ps_trace *t,
			  int (*fn)(void *ctx, const char *module, const char *sym, uint64_t off),
			  void *ctx)
{
	static const char sql[] =
		"SELECT DISTINCT coalesce(site_module, ''), site_sym, 0 FROM tags"
		" WHERE site_sym IS NOT NULL UNION"
		" SELECT DISTINCT coalesce(module, ''), sym, off FROM frames WHERE sym IS NOT NULL";
	sqlite3_stmt *s;
	int rc, e = 0;

	rc = sqlite3_prepare_v2(t->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return fail(t, rc, "read call sites");
	while (!e && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		char base[256];
		uint64_t off = ps_src_key((const char *)sqlite3_column_text(s, 1),
					  (uint64_t)sqlite3_column_int64(s, 2), base, sizeof(base));

		e = fn(ctx, (const char *)sqlite3_column_text(s, 0), base, off);
	}
	if (!e && rc != SQLITE_DONE)
		e = fail(t, rc, "read call sites");
	sqlite3_finalize(s);
	return e;
}
