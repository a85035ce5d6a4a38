// SPDX-License-Identifier: GPL-2.0
/* Trace file writer/reader: round trips, format checks, crash safety, bad files. */
#include "test.h"
#include "userspace/lib/trace/trace.h"
#include "userspace/lib/trace/schema.h"
#include "userspace/lib/util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *tmpfile_path(const char *name)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%s/%s", ps_test_tmpdir(), name);
	return buf;
}

static int write_small(const char *path)
{
	struct ps_trace *t;
	struct ps_tag a = { .kind = PS_KIND_SLAB, .name = "dentry", .cache = "dentry",
			    .site = 0xffffffff81234567ull, .site_sym = "__d_alloc+0x2d",
			    .pool = "reclaimable", .flags = PS_TAG_F_RECLAIMABLE };
	struct ps_tag b = { .kind = PS_KIND_KMALLOC, .name = "kmalloc-256", .cache = "kmalloc-256",
			    .site_sym = "do_epoll_create+0x3c", .ctx = "task" };
	struct ps_frame fr[2] = { { .addr = 0xffffffff81000010ull, .sym = "kmem_cache_alloc_lru_noprof", .off = 0x235 },
				  { .addr = 0xffffffffc0001000ull, .sym = NULL, .off = 0x1000, .module = "ksmbd" } };
	struct ps_stack st = { .hash = 0xdeadbeefcafef00dull, .allocs = 3, .bytes = 600,
			       .live_bytes = 400, .comm = "smbd", .ctx = "task", .nframes = 2, .frames = fr };
	int e;

	e = ps_trace_create(&t, path, 0);
	if (e)
		return e;
	e = ps_trace_set_meta(t, "os", "linux") ?: ps_trace_set_meta_int(t, "interval_ns", 1000000000);
	e = e ?: ps_trace_add_tag(t, &a) ?: ps_trace_add_tag(t, &b);
	for (uint32_t k = 0; !e && k < 4; k++) {
		struct ps_sample sa = { .allocs = 10, .alloc_bytes = 1920, .live_objs = 10 * (k + 1),
					.live_bytes = 1920 * (k + 1) };
		struct ps_sample sb = { .allocs = 5, .frees = 5, .alloc_bytes = 1280, .free_bytes = 1280 };
		struct ps_slabinfo si = { .cache = "dentry", .active_objs = 100 + k, .num_objs = 200,
					  .objsize = 192, .objperslab = 21, .pagesperslab = 1 };
		struct ps_workload w = { .ios = 1000 + k, .bytes = 8192 * (1000 + k), .lat_p50_ns = 1000,
					 .lat_p99_ns = 3000, .lat_max_ns = 9000, .inflight = 16 };

		e = ps_trace_begin_interval(t, k, (k + 1) * 1000000000ull, 1700000000000000000ull + k,
					    1000000000ull);
		e = e ?: ps_trace_add_sample(t, a.id, &sa);
		/* tag b: a row only in interval 0 and 2: live must carry forward */
		if (!e && (k == 0 || k == 2))
			e = ps_trace_add_sample(t, b.id, &sb);
		e = e ?: ps_trace_add_sysstat(t, "SUnreclaim", 1000000 + k * 4096);
		e = e ?: ps_trace_add_counter(t, "drops.ptr_map_full", k);
		e = e ?: ps_trace_add_slabinfo(t, &si);
		e = e ?: ps_trace_add_workload(t, &w);
		e = e ?: ps_trace_commit_interval(t);
	}
	st.tag_id = a.id;
	e = e ?: ps_trace_put_stack(t, &st);
	/* put again: replaces the counts, keeps one row */
	st.allocs = 4;
	e = e ?: ps_trace_put_stack(t, &st);
	ps_trace_close(t);
	return e;
}

TEST(round_trip)
{
	const char *p = tmpfile_path("rt.db");
	struct ps_run *r = NULL;
	char err[256];
	struct stat sb;

	if (!ASSERT_OK(write_small(p), "write"))
		return;
	if (!ASSERT_OK(stat(p, &sb), "stat") || !ASSERT_EQ(sb.st_mode & 0777, 0600, "mode 0600"))
		return;
	if (!ASSERT_OK(ps_run_load(&r, p, err, sizeof(err)), err))
		return;
	ASSERT_EQ(r->nintervals, 4, "intervals");
	ASSERT_EQ(r->ntags, 2, "tags");
	ASSERT_STREQ(ps_run_meta(r, "os"), "linux", "meta os");
	ASSERT_STREQ(r->tags[0].tag.site_sym, "__d_alloc+0x2d", "site sym");
	ASSERT_U64_EQ(r->tags[0].tag.site, 0xffffffff81234567ull, "kernel address survives int64");
	ASSERT_EQ(r->tags[0].tag.flags, PS_TAG_F_RECLAIMABLE, "flags");
	ASSERT_TRUE(r->tags[1].tag.pool == NULL, "NULL stays NULL");
	ASSERT_EQ(r->tags[0].s[3].live_bytes, 4 * 1920, "live at end");
	ASSERT_EQ(r->tags[0].total.allocs, 40, "total allocs");
	ASSERT_EQ(r->tags[1].s[1].allocs, 0, "no row: no allocs");
	ASSERT_EQ(r->tags[1].total.allocs, 10, "tag b total");
	ASSERT_EQ(r->intervals[2].t_ns, 3000000000ull, "t_ns");
	ASSERT_EQ(ps_run_sys(r, "SUnreclaim")->v[3], 1000000 + 3 * 4096, "sysstat");
	ASSERT_EQ(ps_run_counter_last(r, "drops.ptr_map_full"), 3, "counter last");
	ASSERT_EQ(r->nslab, 1, "slab series");
	ASSERT_EQ(r->slab[0].active_objs[2], 102, "slabinfo");
	ASSERT_TRUE(r->has_workload, "workload");
	ASSERT_EQ(r->workload[3].ios, 1003, "workload ios");
	ASSERT_EQ(r->workload[0].inflight, 16, "inflight");
	if (!ASSERT_EQ(r->nstacks, 1, "one stack row after two puts"))
		goto out;
	ASSERT_EQ(r->stacks[0].allocs, 4, "stack replaced");
	ASSERT_EQ(r->stacks[0].nframes, 2, "frames");
	ASSERT_STREQ(r->stacks[0].frames[1].module, "ksmbd", "frame module");
	ASSERT_TRUE(r->stacks[0].frames[1].sym == NULL, "frame sym NULL");
	ASSERT_EQ(ps_run_tag(r, r->stacks[0].tag_id) - r->tags, 0, "stack tag");
out:
	ps_run_free(r);
}

TEST(carry_forward_live)
{
	const char *p = tmpfile_path("cf.db");
	struct ps_trace *t;
	struct ps_tag a = { .kind = PS_KIND_PAGE, .name = "order-3" };
	struct ps_sample s = { .allocs = 1, .alloc_bytes = 32768, .live_objs = 1, .live_bytes = 32768 };
	struct ps_run *r = NULL;
	char err[256];

	if (!ASSERT_OK(ps_trace_create(&t, p, 0), "create"))
		return;
	ASSERT_OK(ps_trace_add_tag(t, &a), "tag");
	for (uint32_t k = 0; k < 5; k++) {
		ASSERT_OK(ps_trace_begin_interval(t, k, k + 1, 0, 1), "begin");
		if (k == 1)
			ASSERT_OK(ps_trace_add_sample(t, a.id, &s), "sample");
		ASSERT_OK(ps_trace_commit_interval(t), "commit");
	}
	ASSERT_OK(ps_trace_close(t), "close");
	if (!ASSERT_OK(ps_run_load(&r, p, err, sizeof(err)), err))
		return;
	ASSERT_EQ(r->tags[0].s[0].live_bytes, 0, "before");
	ASSERT_EQ(r->tags[0].s[1].live_bytes, 32768, "at");
	ASSERT_EQ(r->tags[0].s[4].live_bytes, 32768, "carried");
	ASSERT_EQ(r->tags[0].s[4].allocs, 0, "allocs not carried");
	ps_run_free(r);
}

TEST(exists_needs_force)
{
	const char *p = tmpfile_path("ex.db");
	struct ps_trace *t;

	if (!ASSERT_OK(write_small(p), "write"))
		return;
	ASSERT_EQ(ps_trace_create(&t, p, 0), -EEXIST, "refuse existing");
	if (ASSERT_OK(ps_trace_create(&t, p, PS_TRACE_F_FORCE), "force"))
		ps_trace_close(t);
}

TEST(foreign_and_corrupt_files)
{
	const char *txt = tmpfile_path("text.db");
	char err[512], cmd[1024], path[600];
	struct ps_run *r = NULL;
	FILE *f;

	f = fopen(txt, "w");
	fputs("hello, not a trace\n", f);
	fclose(f);
	ASSERT_EQ(ps_run_load(&r, txt, err, sizeof(err)), -PS_ERR__FOREIGN, "text file");
	ASSERT_STRSTR(err, "text.db: not a poolscope trace", "message names the file");

	ASSERT_EQ(ps_run_load(&r, tmpfile_path("missing.db"), err, sizeof(err)), -ENOENT, "missing");
	ASSERT_STRSTR(err, "missing.db", "names file");

	/* A foreign SQLite database. */
	snprintf(path, sizeof(path), "%s", tmpfile_path("foreign.db"));
	snprintf(cmd, sizeof(cmd), "sqlite3 %s 'CREATE TABLE x(y)'", path);
	if (ASSERT_OK(system(cmd), "sqlite3 cli")) {
		ASSERT_EQ(ps_run_load(&r, path, err, sizeof(err)), -PS_ERR__FOREIGN, "foreign sqlite");
		ASSERT_STRSTR(err, "application_id", "says why");
	}

	/* Foreign, not unborn: a table is there. An unborn trace: WAL set up, nothing committed. */
	ASSERT_TRUE(!ps_trace_db_unborn(path), "a database with a table is not a trace being created");
	ASSERT_TRUE(!ps_trace_db_unborn(txt), "a text file is not a trace being created");
	snprintf(path, sizeof(path), "%s", tmpfile_path("unborn.db"));
	snprintf(cmd, sizeof(cmd), "sqlite3 %s 'PRAGMA journal_mode=WAL' > /dev/null", path);
	if (ASSERT_OK(system(cmd), "sqlite3 cli")) {
		ASSERT_EQ(ps_run_load(&r, path, err, sizeof(err)), -PS_ERR__FOREIGN, "unborn: foreign");
		ASSERT_TRUE(ps_trace_db_unborn(path), "a header and no schema is a trace being created");
	}
	snprintf(path, sizeof(path), "%s", tmpfile_path("born.db"));
	if (ASSERT_OK(write_small(path), "write"))
		ASSERT_TRUE(!ps_trace_db_unborn(path), "a written trace is not being created");

	/* Our file with a future version. */
	snprintf(path, sizeof(path), "%s", tmpfile_path("future.db"));
	if (ASSERT_OK(write_small(path), "write")) {
		snprintf(cmd, sizeof(cmd), "sqlite3 %s 'PRAGMA user_version=99'", path);
		ASSERT_OK(system(cmd), "bump version");
		ASSERT_EQ(ps_run_load(&r, path, err, sizeof(err)), -PS_ERR__VERSION, "version");
		ASSERT_STRSTR(err, "version 99", "says which");
	}

	/* Truncated: the header is there, the pages are not. */
	snprintf(path, sizeof(path), "%s", tmpfile_path("trunc.db"));
	if (ASSERT_OK(write_small(path), "write")) {
		int e;

		ASSERT_OK(truncate(path, 2048), "truncate");
		e = ps_run_load(&r, path, err, sizeof(err));
		ASSERT_ERR(e, "truncated file fails");
		ASSERT_STRSTR(err, "trunc.db", "names file");
		/* and a file cut inside the 100-byte header */
		ASSERT_OK(truncate(path, 40), "truncate more");
		ASSERT_EQ(ps_run_load(&r, path, err, sizeof(err)), -PS_ERR__CORRUPT, "cut header");
		ASSERT_STRSTR(err, "offset 40", "names offset");
	}
	ASSERT_TRUE(r == NULL, "no run on failure");
}

/* Runs sql on a fresh copy of the small trace and loads it: the error, or 0. */
static int load_damaged(const char *name, const char *sql, char *err, size_t errlen)
{
	const char *p = tmpfile_path(name);
	struct ps_run *r = NULL;
	sqlite3 *db;
	char *msg = NULL;
	int e;

	if (!ASSERT_OK(write_small(p), "write"))
		return -EIO;
	if (sqlite3_open(p, &db) != SQLITE_OK || sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		ps_test_fail(__FILE__, __LINE__, "%s: %s", sql, msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		sqlite3_close(db);
		return -EIO;
	}
	sqlite3_close(db);
	e = ps_run_load(&r, p, err, errlen);
	ASSERT_TRUE(!e == !!r, "a run exactly when the load succeeds");
	ps_run_free(r);
	return e;
}

/* 600 more tags, each with a sample in interval 0 whose column COL is 2^52. */
#define MANY_TAGS(col)									\
	"INSERT INTO tags(kind, name) WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL"		\
	" SELECT n + 1 FROM c WHERE n < 600) SELECT 'slab', 'x' || n FROM c;"			\
	"INSERT INTO samples(tag, interval, allocs, frees, alloc_bytes, free_bytes, live_objs,"	\
	" live_bytes) SELECT id, 0, 0, 0, 0, 0, 0, 0 FROM tags WHERE name LIKE 'x%';"		\
	"UPDATE samples SET " col " = 4503599627370496 WHERE tag > 2;"

/*
 * A trace edited by hand, written by another tool or damaged where SQLite cannot see it: every
 * number the analysis would use wrongly (a text cell read as 0, a negative count read as 2^64,
 * sums that wrap in the report) is an error naming the table, the row and the column.
 */
TEST(damaged_values_are_errors)
{
	static const struct { const char *sql, *want; } bad[] = {
		{ "UPDATE samples SET live_bytes = 'abc' WHERE tag = 1 AND interval = 2",
		  "samples, tag 1, interval 2: live_bytes holds the text \"abc\", expected an integer" },
		{ "UPDATE samples SET allocs = 2.5 WHERE tag = 1 AND interval = 1",
		  "samples, tag 1, interval 1: allocs holds the real number 2.5" },
		{ "UPDATE samples SET alloc_bytes = -1 WHERE tag = 2 AND interval = 0",
		  "samples, tag 2, interval 0: alloc_bytes is -1, expected 0..4503599627370496" },
		{ "UPDATE samples SET live_bytes = 9223372036854775807 WHERE tag = 1 AND interval = 3",
		  "live_bytes is 9223372036854775807, expected -4503599627370496..4503599627370496" },
		{ "UPDATE samples SET interval = 7 WHERE tag = 1 AND interval = 3",
		  "samples, tag 1, interval 7: the intervals table has no interval 7" },
		{ "UPDATE samples SET tag = 9 WHERE tag = 1 AND interval = 3",
		  "samples, tag 9, interval 3: the tags table has no tag 9" },
		{ "UPDATE intervals SET dur_ns = -1 WHERE idx = 1",
		  "intervals, interval 1: dur_ns is -1, expected 0..4611686018427387904" },
		{ "UPDATE intervals SET t_ns = 4611686018427387905 WHERE idx = 3",
		  "intervals, interval 3: t_ns is 4611686018427387905, expected 0..4611686018427387904" },
		{ "UPDATE tags SET flags = 4294967296 WHERE id = 2",
		  "tags, tag 2: flags is 4294967296, expected 0..4294967295" },
		{ "UPDATE sysstat SET value = -5 WHERE interval = 2",
		  "sysstat, name SUnreclaim, interval 2: value is -5" },
		{ "UPDATE counters SET interval = 9 WHERE interval = 3",
		  "counters, name drops.ptr_map_full, interval 9: the intervals table has no interval 9" },
		{ "UPDATE slabinfo SET num_objs = 4503599627370496 WHERE interval = 1",
		  "slabinfo, cache dentry, interval 1: 4503599627370496 objects of 192 bytes is more "
		  "than 2^52 bytes" },
		{ "UPDATE workload SET ios = x'00' WHERE interval = 0",
		  "workload, interval 0: ios holds a blob, expected an integer" },
		{ "UPDATE workload SET inflight = -16 WHERE interval = 3",
		  "workload, interval 3: inflight is -16" },
		{ "UPDATE stacks SET tag = 5", "stacks, stack 1: the tags table has no tag 5" },
		{ "UPDATE stacks SET bytes = -600", "stacks, stack 1: bytes is -600" },
		{ "UPDATE frames SET stack = 3", "frames, stack 3, depth 0: the stacks table has no stack 3" },
		/* per interval: 600 tags at 4 PiB live each is past 2^61 (512 of them reach it) */
		{ MANY_TAGS("live_bytes"), "the live bytes and objects of all tags at interval 0 add up "
		  "past 2^61" },
		/* over the run: the same counted as bytes allocated */
		{ MANY_TAGS("alloc_bytes"), "the tags' allocs, frees and their bytes over the run add up past 2^61" },
	};
	char err[512], name[32];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(name, sizeof(name), "bad%zu.db", i);
		err[0] = 0;
		if (ASSERT_EQ(load_damaged(name, bad[i].sql, err, sizeof(err)), -PS_ERR__CORRUPT, bad[i].sql))
			ASSERT_STRSTR(err, bad[i].want, bad[i].sql);
		ASSERT_STRSTR(err, name, "names the file");
	}
	/* what a trace may hold: live below its start, values at the bound, 500 tags at it */
	ASSERT_OK(load_damaged("ok1.db", "UPDATE samples SET live_bytes = -4503599627370496,"
			       " live_objs = -1 WHERE tag = 1", err, sizeof(err)), err);
	ASSERT_OK(load_damaged("ok2.db", "UPDATE sysstat SET value = 4503599627370496", err,
			       sizeof(err)), err);
	ASSERT_OK(load_damaged("ok3.db", MANY_TAGS("live_bytes") "DELETE FROM tags WHERE id > 502;"
			       "DELETE FROM samples WHERE tag > 502;", err, sizeof(err)), err);
}

TEST(garbage_pages_do_not_crash)
{
	const char *p = tmpfile_path("garbage.db");
	struct ps_run *r = NULL;
	char err[512];
	int fd, e;
	struct stat sb;

	if (!ASSERT_OK(write_small(p), "write"))
		return;
	stat(p, &sb);
	fd = open(p, O_WRONLY);
	/* Overwrite everything after the header page with a pattern. */
	for (off_t off = 4096; off < sb.st_size; off += 7) {
		unsigned char b = (unsigned char)(off * 131);

		if (pwrite(fd, &b, 1, off) != 1)
			break;
	}
	close(fd);
	e = ps_run_load(&r, p, err, sizeof(err));
	ASSERT_ERR(e, "garbage fails cleanly");
	ASSERT_STRSTR(err, "garbage.db", "names file");
	ps_run_free(r);
}

/* A writer SIGKILLed mid-run leaves every committed interval readable. */
TEST(sigkill_leaves_readable_file)
{
	const char *p = tmpfile_path("kill.db");
	int pfd[2];
	pid_t pid;
	char buf[16];
	struct ps_run *r = NULL;
	char err[256];
	int status;

	if (!ASSERT_OK(pipe(pfd), "pipe"))
		return;
	pid = fork();
	if (pid == 0) {
		struct ps_trace *t;
		struct ps_tag a = { .kind = PS_KIND_SLAB, .name = "filp" };

		close(pfd[0]);
		if (ps_trace_create(&t, p, 0) || ps_trace_add_tag(t, &a))
			_exit(1);
		for (uint32_t k = 0;; k++) {
			struct ps_sample s = { .allocs = 1, .live_objs = k + 1, .live_bytes = 256 * (k + 1) };

			if (ps_trace_begin_interval(t, k, k + 1, 0, 1) || ps_trace_add_sample(t, a.id, &s))
				_exit(1);
			if (ps_trace_commit_interval(t))
				_exit(1);
			if (k == 20 && write(pfd[1], "x", 1) != 1)
				_exit(1);
			/* leave an interval open when the kill lands */
			if (k >= 20) {
				ps_trace_begin_interval(t, k + 1, k + 2, 0, 1);
				ps_trace_add_sample(t, a.id, &s);
				pause();
			}
		}
	}
	close(pfd[1]);
	ASSERT_EQ(read(pfd[0], buf, 1), 1, "child ready");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(pfd[0]);
	if (!ASSERT_OK(ps_run_load(&r, p, err, sizeof(err)), err))
		return;
	ASSERT_EQ(r->nintervals, 21, "committed intervals kept, open one dropped");
	ASSERT_EQ(r->tags[0].s[20].live_bytes, 256 * 21, "last committed value");
	ps_run_free(r);
}

TEST(save_in_memory_run)
{
	const char *p = tmpfile_path("mem.db");
	struct ps_run *r = ps_run_new(3), *back = NULL;
	struct ps_tag tag = { .kind = PS_KIND_POOL, .name = "LSbf", .cache = "LSbf",
			      .pool = "nonpaged", .owner = "srvnet.sys" };
	struct ps_tag_series *ts;
	struct ps_series *np;
	struct ps_frame fr = { .addr = 0xfffff80000001234ull, .off = 0x1234, .module = "srvnet.sys" };
	struct ps_stack st = { .hash = 7, .allocs = 1, .bytes = 4096, .nframes = 1, .frames = &fr };
	char err[256];

	if (!ASSERT_NOT_NULL(r, "new"))
		return;
	ts = ps_run_add_tag(r, &tag);
	np = ps_run_add_sys(r, "NonPagedPool");
	ASSERT_OK(ps_run_set_meta(r, "os", "windows"), "meta");
	ASSERT_OK(ps_run_set_meta(r, "live_absolute", "1"), "meta");
	for (uint32_t k = 0; k < 3; k++) {
		r->intervals[k].t_ns = (k + 1) * 1000000000ull;
		r->intervals[k].dur_ns = 1000000000ull;
		ts->s[k].allocs = 100;
		ts->s[k].live_bytes = 1 << (20 + k);
		np->v[k] = 1ll << (30 + k);
	}
	st.tag_id = ts->tag.id;
	ASSERT_OK(ps_run_add_stack(r, &st), "stack");
	ps_run_finish(r);
	ASSERT_EQ(ts->total.allocs, 300, "finish totals");
	if (!ASSERT_OK(ps_run_save(r, p, 0, err, sizeof(err)), err))
		goto out;
	if (!ASSERT_OK(ps_run_load(&back, p, err, sizeof(err)), err))
		goto out;
	ASSERT_STREQ(ps_run_meta(back, "os"), "windows", "meta");
	ASSERT_STREQ(back->tags[0].tag.owner, "srvnet.sys", "owner");
	ASSERT_EQ(back->tags[0].s[2].live_bytes, 1 << 22, "live");
	ASSERT_EQ(back->tags[0].total.allocs, 300, "allocs");
	ASSERT_EQ(ps_run_sys(back, "NonPagedPool")->v[2], 1ll << 32, "sys");
	ASSERT_EQ(back->nstacks, 1, "stacks");
	ASSERT_STREQ(back->stacks[0].frames[0].module, "srvnet.sys", "frame");
	ASSERT_EQ(ps_run_interval_at(back, 1500000000ull), 1, "interval_at");
	ASSERT_EQ(ps_run_interval_at(back, 9000000000ull), 3, "interval_at past end");
out:
	ps_run_free(back);
	ps_run_free(r);
}

/*
 * What the reader refuses is not written: a built run whose tags' live bytes add up past 2^61
 * (600 tags of 4 PiB) is refused by ps_run_save before it creates the file, and an interval past
 * what a trace holds is refused by the writer with every earlier interval readable.
 */
TEST(save_and_write_refuse_what_the_reader_would)
{
	const char *p = tmpfile_path("sum.db");
	struct ps_run *r = ps_run_new(1), *back = NULL;
	struct ps_trace *t;
	char err[256], name[16];
	struct stat sb;

	if (!ASSERT_NOT_NULL(r, "new"))
		return;
	for (int i = 0; i < 600; i++) {
		struct ps_tag tag = { .kind = PS_KIND_POOL, .name = name };
		struct ps_tag_series *ts;

		snprintf(name, sizeof(name), "T%03d", i);
		ts = ps_run_add_tag(r, &tag);
		if (!ASSERT_NOT_NULL(ts, "tag"))
			goto out;
		ts->s[0].live_bytes = 1ll << 52;
	}
	r->intervals[0].t_ns = r->intervals[0].dur_ns = 1000000000ull;
	ASSERT_EQ(ps_run_save(r, p, 0, err, sizeof(err)), -ERANGE, "refused");
	ASSERT_STRSTR(err, "sum.db: the live bytes and objects of all tags at interval 0 add up past "
		      "2^61", err);
	ASSERT_TRUE(stat(p, &sb) && errno == ENOENT, "no file left");
	r->ntags = 500;		/* 500 x 2^52 is within 2^61 */
	ASSERT_OK(ps_run_save(r, p, 0, err, sizeof(err)), err);
	r->ntags = 600;		/* all of them freed */

	p = tmpfile_path("iv.db");
	if (!ASSERT_OK(ps_trace_create(&t, p, 0), "create"))
		goto out;
	ASSERT_OK(ps_trace_begin_interval(t, 0, 1, 0, 1), "interval 0");
	ASSERT_OK(ps_trace_commit_interval(t), "commit");
	ASSERT_EQ(ps_trace_begin_interval(t, 1, 2, 1ull << 63, 1), -ERANGE, "wall clock past 2^62");
	ASSERT_STRSTR(ps_trace_errmsg(t), "a trace holds times up to 2^62 ns", "says why");
	ASSERT_EQ(ps_trace_begin_interval(t, 1u << 24, 2, 0, 1), -ERANGE, "interval 2^24");
	ASSERT_STRSTR(ps_trace_errmsg(t), "a trace holds 16777216 intervals", "says why");
	ASSERT_OK(ps_trace_close(t), "close");
	if (ASSERT_OK(ps_run_load(&back, p, err, sizeof(err)), err))
		ASSERT_EQ(back->nintervals, 1, "the interval before");
out:
	ps_run_free(back);
	ps_run_free(r);
}

/*
 * PS_TRACE_F_BATCH (convert) commits every PS_TRACE_BATCH intervals: what a closed trace holds is
 * the same, and a reader opening it meanwhile sees whole batches only.
 */
TEST(batch_commits)
{
	const char *p = tmpfile_path("batch.db");
	struct ps_tag a = { .kind = PS_KIND_POOL, .name = "LSbf" };
	struct ps_run *r = NULL;
	struct ps_trace *t;
	char err[256];
	uint32_t n = 2 * PS_TRACE_BATCH + 5;

	if (!ASSERT_OK(ps_trace_create(&t, p, PS_TRACE_F_BATCH), "create"))
		return;
	ASSERT_OK(ps_trace_add_tag(t, &a), "tag");
	for (uint32_t k = 0; k < n; k++) {
		struct ps_sample s = { .allocs = 1, .alloc_bytes = 64, .live_objs = k + 1,
				       .live_bytes = 64 * (k + 1) };

		ASSERT_OK(ps_trace_begin_interval(t, k, k + 1, 0, 1), "begin");
		ASSERT_OK(ps_trace_add_sample(t, a.id, &s), "sample");
		ASSERT_OK(ps_trace_commit_interval(t), "commit");
		if (k == PS_TRACE_BATCH + 10) {
			if (ASSERT_OK(ps_run_load(&r, p, err, sizeof(err)), err))
				ASSERT_EQ(r->nintervals, PS_TRACE_BATCH, "one whole batch so far");
			ps_run_free(r);
			r = NULL;
		}
	}
	ASSERT_OK(ps_trace_close(t), "close");
	if (!ASSERT_OK(ps_run_load_points(&r, p, 0, err, sizeof(err)), err))
		return;
	ASSERT_EQ(r->nintervals, n, "every interval after close");
	ASSERT_EQ(r->tags[0].s[n - 1].live_bytes, 64 * (int64_t)n, "the last one");
	ASSERT_EQ(r->tags[0].total.allocs, n, "allocs");
	ps_run_free(r);
}

/*
 * A trace longer than the reader's points is read as runs of intervals: counts summed, the
 * state at each run's end, times and durations of the run, workload IOs summed with the
 * IO-weighted median and the largest p99; and the same totals as an exact load.
 */
TEST(long_trace_in_points)
{
	const char *p = tmpfile_path("long.db");
	struct ps_tag a = { .kind = PS_KIND_SLAB, .name = "filp" }, b = { .kind = PS_KIND_SLAB,
									     .name = "dentry" };
	struct ps_run *r = NULL, *x = NULL;
	struct ps_trace *t;
	char err[256];
	uint32_t n = 1000;

	if (!ASSERT_OK(ps_trace_create(&t, p, PS_TRACE_F_BATCH), "create"))
		return;
	ASSERT_OK(ps_trace_add_tag(t, &a), "tag a");
	ASSERT_OK(ps_trace_add_tag(t, &b), "tag b");
	for (uint32_t k = 0; k < n; k++) {
		struct ps_sample s = { .allocs = 2, .frees = 1, .alloc_bytes = 512,
				       .free_bytes = 256, .live_objs = k + 1,
				       .live_bytes = 256 * (int64_t)(k + 1) };
		struct ps_workload w = { .ios = k % 2 ? 300 : 100, .bytes = 8192,
					 .lat_p50_ns = k % 2 ? 2000 : 1000,
					 .lat_p99_ns = 5000 + k, .lat_max_ns = 9000,
					 .inflight = k };

		ASSERT_OK(ps_trace_begin_interval(t, k, (k + 1) * 1000000000ull, k, 1000000000ull),
			  "begin");
		ASSERT_OK(ps_trace_add_sample(t, a.id, &s), "sample a");
		/* b only in every 7th interval: carried forward between */
		if (k % 7 == 0)
			ASSERT_OK(ps_trace_add_sample(t, b.id, &s), "sample b");
		ASSERT_OK(ps_trace_add_sysstat(t, "SUnreclaim", 1000 + k), "sys");
		ASSERT_OK(ps_trace_add_workload(t, &w), "workload");
		ASSERT_OK(ps_trace_commit_interval(t), "commit");
	}
	ASSERT_OK(ps_trace_close(t), "close");
	if (!ASSERT_OK(ps_run_load_points(&r, p, 100, err, sizeof(err)), err) ||
	    !ASSERT_OK(ps_run_load_points(&x, p, 0, err, sizeof(err)), err))
		goto out;
	ASSERT_EQ(r->nintervals, 100, "points");
	ASSERT_EQ(r->per_point, 10, "intervals per point");
	ASSERT_EQ(r->src_intervals, n, "intervals in the file");
	ASSERT_EQ(x->per_point, 1, "exact load");
	ASSERT_EQ(r->intervals[0].t_ns, 10000000000ull, "a point ends at its last interval");
	ASSERT_EQ(r->intervals[1].dur_ns, 10000000000ull, "and lasts as long as they do");
	ASSERT_EQ(r->tags[0].s[1].allocs, 20, "counts summed");
	ASSERT_EQ(r->tags[0].s[1].live_bytes, 256 * 20, "state at the end");
	ASSERT_EQ(r->tags[0].total.allocs, x->tags[0].total.allocs, "totals as an exact load");
	ASSERT_EQ(r->tags[0].total.live_bytes, x->tags[0].total.live_bytes, "end as exact");
	/* b: rows at 0, 7, 14: point 1 (intervals 10..19) ends with the row of 14 */
	ASSERT_EQ(r->tags[1].s[1].live_bytes, 256 * 15, "carried within a point");
	ASSERT_EQ(r->tags[1].s[1].allocs, 2, "one row in point 1");
	ASSERT_EQ(r->tags[1].total.allocs, x->tags[1].total.allocs, "b's totals");
	ASSERT_EQ(ps_run_sys(r, "SUnreclaim")->v[99], 1999, "meminfo at the end");
	if (ASSERT_NOT_NULL(ps_run_sys(r, "SUnreclaim")->lo, "meminfo range kept")) {
		ASSERT_EQ(ps_run_sys(r, "SUnreclaim")->lo[3], 1030, "its smallest in point 3");
		ASSERT_EQ(ps_run_sys(r, "SUnreclaim")->hi[3], 1039, "its largest in point 3");
	}
	ASSERT_TRUE(ps_run_sys(x, "SUnreclaim")->lo == NULL, "no range in an exact load");
	ASSERT_EQ(r->workload[3].ios, 2000, "IOs summed");
	ASSERT_EQ(r->workload[3].lat_p50_ns, 1750, "median weighted by IOs");
	ASSERT_EQ(r->workload[3].lat_p99_ns, 5039, "the largest p99");
	ASSERT_EQ(r->workload[3].inflight, 39, "in flight at the end");
out:
	ps_run_free(r);
	ps_run_free(x);
}

TEST(util_parsers)
{
	uint64_t v;
	unsigned u;
	char b[32];

	ASSERT_OK(ps_parse_size("8k", &v), "8k");
	ASSERT_U64_EQ(v, 8192, "8k");
	ASSERT_OK(ps_parse_size("1GiB", &v), "1GiB");
	ASSERT_U64_EQ(v, 1ull << 30, "1GiB");
	ASSERT_ERR(ps_parse_size("-1", &v), "negative");
	ASSERT_ERR(ps_parse_size("12q", &v), "suffix");
	ASSERT_ERR(ps_parse_size("99999999999999999999", &v), "overflow");
	ASSERT_OK(ps_parse_duration_ns("500ms", &v), "500ms");
	ASSERT_U64_EQ(v, 500000000ull, "500ms");
	ASSERT_OK(ps_parse_duration_ns("2m", &v), "2m");
	ASSERT_U64_EQ(v, 120000000000ull, "2m");
	ASSERT_ERR(ps_parse_duration_ns("1x", &v), "bad unit");
	ASSERT_OK(ps_parse_uint("16", 1, 64, &u), "16");
	ASSERT_EQ(u, 16, "16");
	ASSERT_OK(ps_parse_uint("0", 0, 5, &u), "lowest");
	ASSERT_ERR(ps_parse_uint("0", 1, 5, &u), "below lo");
	ASSERT_ERR(ps_parse_uint("65", 1, 64, &u), "above hi");
	ASSERT_ERR(ps_parse_uint("-1", 0, 5, &u), "negative");
	ASSERT_ERR(ps_parse_uint("", 0, 5, &u), "empty");
	ASSERT_ERR(ps_parse_uint("+1", 0, 5, &u), "sign");
	ASSERT_ERR(ps_parse_uint(" 1", 0, 5, &u), "blank");
	ASSERT_ERR(ps_parse_uint("3k", 0, 5000, &u), "suffix");
	ASSERT_ERR(ps_parse_uint("99999999999999999999", 0, UINT_MAX, &u), "overflow");
	ASSERT_STREQ(ps_fmt_bytes(b, sizeof(b), 62.0 * (1ull << 30), false), "62.0 GiB", "GiB");
	ASSERT_STREQ(ps_fmt_bytes(b, sizeof(b), -512, true), "-512 B", "neg");
	ASSERT_STREQ(ps_fmt_bytes(b, sizeof(b), 1536, true), "+1.50 KiB", "KiB");
	ASSERT_STREQ(ps_strerror(-PS_ERR__FOREIGN), "not a poolscope trace", "strerror");
}

/*
 * A sparse trace (meta sparse_series = 1, as the recorder writes) has a counter, meminfo or
 * slabinfo row only when the value changed: the reader carries each value forward, and leaves a
 * series absent before its first row. Without the meta, a missing row stays absent.
 */
TEST(sparse_series_carried_forward)
{
	struct ps_slabinfo si = { .cache = "filp", .objsize = 256, .objperslab = 16,
				  .pagesperslab = 1 };
	struct ps_run *r = NULL;
	struct ps_trace *t;
	char err[256];

	for (int sparse = 0; sparse < 2; sparse++) {
		const char *p = tmpfile_path(sparse ? "sparse.db" : "dense.db");

		if (!ASSERT_OK(ps_trace_create(&t, p, 0), "create"))
			return;
		if (sparse)
			ASSERT_OK(ps_trace_set_meta(t, PS_META_SPARSE_SERIES, "1"), "meta");
		for (uint32_t k = 0; k < 6; k++) {
			ASSERT_OK(ps_trace_begin_interval(t, k, (k + 1) * 1000000000ull, 0, 1), "begin");
			if (k == 0 || k == 3)
				ASSERT_OK(ps_trace_add_counter(t, "events.kmalloc", 100 * (k + 1)), "ctr");
			if (k == 2)
				ASSERT_OK(ps_trace_add_sysstat(t, "SUnreclaim", 5000), "sys");
			if (k == 1) {
				si.active_objs = 70;
				si.num_objs = 80;
				ASSERT_OK(ps_trace_add_slabinfo(t, &si), "slab");
			}
			ASSERT_OK(ps_trace_commit_interval(t), "commit");
		}
		ASSERT_OK(ps_trace_close(t), "close");
		if (!ASSERT_OK(ps_run_load(&r, p, err, sizeof(err)), err))
			return;
		const struct ps_series *c = ps_run_counter(r, "events.kmalloc"),
				       *m = ps_run_sys(r, "SUnreclaim");
		if (ASSERT_NOT_NULL(c, "counter") && ASSERT_NOT_NULL(m, "sysstat") &&
		    ASSERT_EQ(r->nslab, 1, "slab series")) {
			ASSERT_EQ(c->v[2], sparse ? 100 : -1, "counter between rows");
			ASSERT_EQ(c->v[5], sparse ? 400 : -1, "counter after its last row");
			ASSERT_EQ(m->v[1], -1, "absent before its first row");
			ASSERT_EQ(m->v[4], sparse ? 5000 : -1, "sysstat after its row");
			ASSERT_EQ(r->slab[0].active_objs[0], -1, "slab before its first row");
			ASSERT_EQ(r->slab[0].active_objs[5], sparse ? 70 : -1, "slab carried");
			ASSERT_EQ(r->slab[0].num_objs[5], sparse ? 80 : -1, "slab num carried");
		}
		ps_run_free(r);
		r = NULL;
	}
}
