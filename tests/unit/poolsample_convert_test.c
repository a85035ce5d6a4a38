// SPDX-License-Identifier: GPL-2.0
/*
 * Round trip: write sample files with the shared writer, convert them into a trace as `convert`
 * does (create, convert, close or discard), load it back and check the fields; torn last
 * snapshot, a writer restarted after a kill, counters that wrap and a clock stepped back must
 * convert; bad magic, wrong version, absurd numbers and live figures past what a trace holds
 * must be reported.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "userspace/lib/etw/poolsample.h"
#include "userspace/lib/etw/convert.h"

static const char *write_file(const char *name, int torn)
{
	static char path[512];
	const char *meta[] = { "host", "srv1", "os_version", "6.3.9600", "interval_ns",
			       "1000000000", NULL };
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", ps_test_tmpdir(), name);
	f = fopen(path, "w");
	ps_poolsample_write_header(f, meta);
	ps_poolsample_begin(f, 0, 1000000000, 100, 200, 300);
	ps_poolsample_tag(f, 0x6662534c, false, 10, 4, 600);
	ps_poolsample_end(f, 0);
	ps_poolsample_begin(f, 1, 2000000000, 150, 250, 280);
	ps_poolsample_tag(f, 0x6662534c, false, 30, 5, 2500);
	ps_poolsample_tag(f, 0x7866744e, true, 7, 2, 512);	/* new tag "Ntfx" */
	ps_poolsample_end(f, 1);
	if (torn) {
		ps_poolsample_begin(f, 2, 3000000000, 1, 1, 1);
		ps_poolsample_tag(f, 0x6662534c, false, 99, 5, 9999);
	}
	fclose(f);
	return path;
}

static const char *write_text(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", ps_test_tmpdir(), name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return path;
}

/*
 * Converts path into <tmpdir>/<db> as `poolscope convert` does and loads the trace into *r. On
 * a failed conversion the trace is discarded, and nothing must be left of it.
 */
static int convert(const char *path, const char *db, struct ps_run **r,
		   struct ps_convert_result *res, char *err, size_t errlen)
{
	struct ps_convert_opts o = { .interval_ns = 1000000000ULL };
	struct ps_trace *t;
	char out[512];
	int rc;

	*r = NULL;
	snprintf(out, sizeof(out), "%s/%s", ps_test_tmpdir(), db);
	rc = ps_trace_create(&t, out, PS_TRACE_F_FORCE | PS_TRACE_F_BATCH);
	if (!ASSERT_OK(rc, out))
		return rc;
	rc = ps_convert_poolsample(t, path, &o, res, err, errlen);
	if (rc < 0) {
		ps_trace_discard(t);
		ASSERT_TRUE(access(out, F_OK) != 0, "a failed conversion leaves no trace");
		return rc;
	}
	if (!ASSERT_OK(ps_trace_close(t), "close"))
		return -EIO;
	return ps_run_load(r, out, err, errlen);
}

static const struct ps_tag_series *find_tag(const struct ps_run *r, const char *name)
{
	for (size_t i = 0; i < r->ntags; i++)
		if (!strcmp(r->tags[i].tag.name, name))
			return &r->tags[i];
	return NULL;
}

static void check_run(const struct ps_run *r)
{
	const struct ps_tag_series *ls = find_tag(r, "LSbf"), *nt = find_tag(r, "Ntfx");

	if (!ASSERT_EQ(r->nintervals, 2, "intervals"))
		return;
	ASSERT_STREQ(ps_run_meta(r, "os"), "windows", "os");
	ASSERT_STREQ(ps_run_meta(r, "host"), "srv1", "host");
	ASSERT_STREQ(ps_run_meta(r, "live_absolute"), "1", "live_absolute");
	ASSERT_U64_EQ(r->intervals[1].t_ns, 1000000000ULL, "t_ns");
	ASSERT_U64_EQ(r->intervals[1].dur_ns, 1000000000ULL, "dur_ns");
	ASSERT_EQ(ps_run_sys(r, "NonPagedPool")->v[1], 150, "nonpaged");
	ASSERT_EQ(ps_run_sys(r, "AvailableBytes")->v[0], 300, "avail");
	if (!ASSERT_NOT_NULL(ls, "LSbf") || !ASSERT_NOT_NULL(nt, "Ntfx"))
		return;
	ASSERT_STREQ(ls->tag.pool, "nonpaged", "LSbf pool");
	ASSERT_STREQ(ls->tag.kind, "pool", "kind");
	ASSERT_U64_EQ(ls->s[1].allocs, 20, "alloc delta");
	ASSERT_U64_EQ(ls->s[1].frees, 1, "free delta");
	ASSERT_EQ(ls->s[1].live_bytes, 2500, "live bytes");
	ASSERT_EQ(ls->s[1].live_objs, 25, "live objs");
	ASSERT_STREQ(nt->tag.pool, "paged", "Ntfx pool");
	ASSERT_TRUE(nt->tag.flags & PS_TAG_F_RECLAIMABLE, "paged reclaimable");
	ASSERT_EQ(nt->s[1].live_bytes, 512, "Ntfx live");
}

TEST(round_trip)
{
	struct ps_convert_result res;
	struct ps_run *r = NULL;
	char err[256] = "";

	if (!ASSERT_OK(convert(write_file("a.tsv", 0), "a.db", &r, &res, err, sizeof(err)), err))
		return;
	check_run(r);
	ASSERT_EQ(res.snapshots, 2, "snapshots");
	ASSERT_EQ(res.intervals, 2, "intervals");
	ASSERT_EQ(res.tags, 2, "tags");
	ASSERT_EQ(res.torn_snapshots, 0, "not torn");
	ASSERT_STREQ(ps_run_meta(r, "torn_snapshots_dropped"), "0", "none dropped");
	ASSERT_STREQ(ps_run_meta(r, "source"), "poolscope-win-sample", "source");
	ASSERT_STREQ(ps_run_meta(r, "start_wall_ns"), "1000000000", "start_wall_ns");
	ps_run_free(r);
}

TEST(torn_last)
{
	struct ps_convert_result res;
	struct ps_run *r = NULL;
	char err[256] = "";

	if (!ASSERT_OK(convert(write_file("t.tsv", 1), "t.db", &r, &res, err, sizeof(err)), err))
		return;
	ASSERT_EQ(r->nintervals, 2, "torn snapshot dropped");
	ASSERT_EQ(res.torn_snapshots, 1, "said in the result");
	ASSERT_STREQ(ps_run_meta(r, "torn_snapshots_dropped"), "1", "counted");
	ps_run_free(r);
}

/* A line of spaces is blank, as an empty one is (it had no record to look at: a crash). */
TEST(space_lines)
{
	struct ps_convert_result res;
	struct ps_run *r = NULL;
	char err[256] = "";
	const char *path = write_text("spaces.tsv", "#poolscope-sample 1\n   \n"
				      "S 0 1000000000 100 200 300\n \n"
				      "T 6662534c nonpaged 10 4 600\nE 0\n  \n");

	if (!ASSERT_OK(convert(path, "spaces.db", &r, &res, err, sizeof(err)), err))
		return;
	ASSERT_EQ(r->nintervals, 1, "one snapshot");
	ASSERT_EQ(r->ntags, 1, "one tag");
	ps_run_free(r);
}

/*
 * Written snapshot by snapshot: a duplicate record of a snapshot gives way to the last one, a
 * tag missing from a snapshot keeps its live figures with no counts, one seen again counts from
 * its last snapshot.
 */
TEST(duplicates_and_gaps)
{
	struct ps_convert_result res;
	const struct ps_tag_series *a, *b;
	struct ps_run *r = NULL;
	char err[256] = "";
	const char *path = write_text("gaps.tsv", "#poolscope-sample 1\n"
				      "S 0 10 1 2 3\nT 41414141 nonpaged 10 4 600\n"
				      "T 41414141 nonpaged 12 4 700\nT 42424242 paged 5 1 40\nE 0\n"
				      "S 1 20 1 2 3\nT 42424242 paged 9 1 72\nE 1\n"
				      "S 2 35 1 2 3\nT 41414141 nonpaged 20 5 900\nE 2\n");

	if (!ASSERT_OK(convert(path, "gaps.db", &r, &res, err, sizeof(err)), err))
		return;
	if (!ASSERT_EQ(r->nintervals, 3, "intervals") || !ASSERT_EQ(r->ntags, 2, "tags"))
		goto out;
	a = find_tag(r, "AAAA");
	b = find_tag(r, "BBBB");
	if (!ASSERT_NOT_NULL(a, "AAAA") || !ASSERT_NOT_NULL(b, "BBBB"))
		goto out;
	ASSERT_EQ(a->tag.id, 1, "ids in the order tags appear");
	ASSERT_EQ(a->s[0].live_bytes, 700, "the last duplicate wins");
	ASSERT_EQ(a->s[0].live_objs, 8, "its objects");
	ASSERT_EQ(a->s[1].live_bytes, 700, "carried over a snapshot without it");
	ASSERT_U64_EQ(a->s[1].allocs, 0, "no counts where it was missing");
	ASSERT_U64_EQ(a->s[2].allocs, 8, "allocs since the last snapshot that had it");
	ASSERT_U64_EQ(a->s[2].frees, 1, "frees since then");
	ASSERT_EQ(a->s[2].live_bytes, 900, "live bytes");
	ASSERT_U64_EQ(b->s[1].allocs, 4, "BBBB allocs");
	ASSERT_EQ(b->s[2].live_bytes, 72, "BBBB carried");
	ASSERT_U64_EQ(r->intervals[2].t_ns, 25, "t_ns from the first snapshot");
	ASSERT_U64_EQ(r->intervals[2].dur_ns, 15, "dur_ns from the previous one");
out:
	ps_run_free(r);
}

static void expect_error(const char *name, const char *text, const char *needle)
{
	struct ps_convert_result res;
	struct ps_run *r = NULL;
	char err[256] = "";

	ASSERT_ERR(convert(write_text(name, text), "bad.db", &r, &res, err, sizeof(err)), name);
	ASSERT_STRSTR(err, needle, name);
	ASSERT_STRSTR(err, name, "names the file");
	ps_run_free(r);
}

TEST(bad_inputs)
{
	expect_error("magic.tsv", "hello\n", ":1: not a poolscope sample");
	expect_error("ver.tsv", "#poolscope-sample 9\n", "unsupported version '9'");
	expect_error("absurd.tsv", "#poolscope-sample 1\nS 0 1 99999999999999999999 0 0\n",
		     ":2: field nonpaged_bytes");
	/* a wall clock past 2116, where a trace's times end */
	expect_error("wall.tsv", "#poolscope-sample 1\nS 0 4611686018427387905 0 0 0\n",
		     ":2: field wall_ns");
	expect_error("tag.tsv", "#poolscope-sample 1\nS 0 1 0 0 0\nT zz nonpaged 1 1 1\n",
		     ":3: field tag_hex");
	expect_error("none.tsv", "#poolscope-sample 1\nS 0 1 0 0 0\n", "no complete snapshot");
}

/*
 * A wall clock stepped back by time sync (snapshot 1 at 500 after 1000) gives no interval
 * length: the interval gets the nominal one and the step is counted, and the file converts. A
 * malformed line without a restart after it is still an error at its line.
 */
TEST(clock_step_back)
{
	static const char back[] = "#poolscope-sample 1\n#meta interval_ns\t250\nS 0 1000 1 2 3\n"
				   "E 0\nS 1 500 1 2 3\nE 1\nS 2 800 1 2 3\nE 2\n";
	struct ps_convert_result res;
	struct ps_run *r = NULL;
	char err[256] = "", text[256];

	if (ASSERT_OK(convert(write_text("back.tsv", back), "back.db", &r, &res, err, sizeof(err)),
		      err) && ASSERT_EQ(r->nintervals, 3, "every snapshot")) {
		ASSERT_U64_EQ(r->intervals[1].t_ns, 250, "the nominal interval over the step");
		ASSERT_U64_EQ(r->intervals[2].t_ns, 550, "then the clock's own steps");
		ASSERT_U64_EQ(r->intervals[1].wall_ns, 500, "the wall clock as written");
		ASSERT_STREQ(ps_run_meta(r, "clock_steps_back"), "1", "counted");
	}
	ps_run_free(r);
	snprintf(text, sizeof(text), "%sS 3 900 1 2 3\nT 4141 nonpaged 1 1 1\nE 3\n", back);
	expect_error("back-bad.tsv", text, ":10: field tag_hex");
}

/*
 * A writer killed in the middle of a line, then started again on the same file: the restart
 * starts a fresh line and writes no second header; the snapshot it was killed in is dropped as
 * torn, the cut line forgiven, and the file converts. An older writer's restart (the header
 * again, after a snapshot without its end) is read the same way. A cut line at the end of the
 * file is a torn snapshot too; a malformed line followed by more records is not.
 */
TEST(restart_after_kill)
{
	const char *meta[] = { "host", "srv1", "interval_ns", "1000000000", NULL };
	struct ps_convert_result res;
	struct ps_run *r = NULL;
	char path[512], err[256] = "", buf[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/restart.tsv", ps_test_tmpdir());
	f = fopen(path, "w+b");
	if (!ASSERT_NOT_NULL(f, path))
		return;
	ASSERT_OK(ps_poolsample_open(f, meta, 1000), "header on an empty file");
	ps_poolsample_begin(f, 0, 1000000000, 1, 2, 3);
	ps_poolsample_tag(f, 0x6662534c, false, 10, 4, 600);
	ps_poolsample_end(f, 0);
	ps_poolsample_begin(f, 1, 2000000000, 1, 2, 3);
	fputs("T 6662534c nonpa", f);		/* killed here */
	fclose(f);
	f = fopen(path, "a+b");
	if (!ASSERT_NOT_NULL(f, path))
		return;
	ASSERT_OK(ps_poolsample_open(f, meta, 3000000000), "restart");
	ps_poolsample_begin(f, 0, 3000000000, 1, 2, 3);
	ps_poolsample_tag(f, 0x6662534c, false, 30, 5, 2500);
	ps_poolsample_end(f, 0);
	fclose(f);
	f = fopen(path, "rb");
	n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	buf[n] = 0;
	if (f)
		fclose(f);
	ASSERT_STRSTR(buf, "nonpa\n#restart 3000000000\nS 0", "a fresh line, then the restart");
	ASSERT_TRUE(strstr(buf, "#poolscope-sample") &&
		    !strstr(strstr(buf, "#poolscope-sample") + 1, "#poolscope-sample"), "one header");
	if (ASSERT_OK(convert(path, "restart.db", &r, &res, err, sizeof(err)), err)) {
		ASSERT_EQ(r->nintervals, 2, "the two complete snapshots");
		ASSERT_EQ(res.torn_snapshots, 1, "the one killed");
		ASSERT_EQ(find_tag(r, "LSbf")->s[1].live_bytes, 2500, "after the restart");
	}
	ps_run_free(r);

	/* an older writer: killed between lines, then the header again */
	if (ASSERT_OK(convert(write_text("old.tsv",
			"#poolscope-sample 1\nS 0 10 1 2 3\nT 41414141 nonpaged 2 1 64\nE 0\n"
			"S 1 20 1 2 3\nT 41414141 nonpaged 3 1 96\n"
			"#poolscope-sample 1\n#meta host\tsrv1\nS 0 30 1 2 3\n"
			"T 41414141 nonpaged 4 1 128\nE 0\n"), "old.db", &r, &res, err,
			      sizeof(err)), err)) {
		ASSERT_EQ(r->nintervals, 2, "two complete snapshots");
		ASSERT_EQ(res.torn_snapshots, 1, "one torn");
	}
	ps_run_free(r);
	/* cut at the very end */
	if (ASSERT_OK(convert(write_text("cut.tsv",
			"#poolscope-sample 1\nS 0 10 1 2 3\nE 0\nS 1 20 1 2 3\nT 4141"),
			      "cut.db", &r, &res, err, sizeof(err)), err))
		ASSERT_EQ(res.torn_snapshots, 1, "torn at the end");
	ps_run_free(r);
	expect_error("mid.tsv", "#poolscope-sample 1\nS 0 10 1 2 3\nT 4141\nT 41414141 nonpaged "
		     "1 1 1\nE 0\n", ":3: tag line outside a snapshot or not 6 fields");
}

/*
 * The kernel's per-tag counters are 32 bits and wrap: 100 allocations (wrapped) against
 * 4294967196 frees are 200 live objects, not -4294967096.
 */
TEST(counter_wrap)
{
	struct ps_convert_result res;
	struct ps_run *r = NULL;
	char err[256] = "";

	if (ASSERT_OK(convert(write_text("wrap.tsv",
			"#poolscope-sample 1\nS 0 10 1 2 3\nT 41414141 nonpaged 100 4294967196 "
			"12800\nE 0\n"), "wrap.db", &r, &res, err, sizeof(err)), err))
		ASSERT_EQ(find_tag(r, "AAAA")->s[0].live_objs, 200, "modulo 2^32");
	ps_run_free(r);
}

/*
 * A record is within 2^52, but 512 tags of 4 PiB are 2^61, which the live figures of an interval
 * may reach and not pass: with a small tag carried from snapshot 0 they pass it.
 */
static const char *write_big(const char *name, int ntags)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", ps_test_tmpdir(), name);
	f = fopen(path, "w");
	if (!ASSERT_NOT_NULL(f, path))
		return path;
	fputs("#poolscope-sample 1\nS 0 1000 1 2 3\nT 5a5a5a5a nonpaged 1 0 1\nE 0\n"
	      "S 1 2000 1 2 3\n", f);
	for (int i = 0; i < ntags; i++)		/* "AAAA", "BAAA", ...: printable, distinct */
		fprintf(f, "T %08x nonpaged 0 0 %llu\n",
			0x41414141u + (i % 16) + ((i / 16 % 16) << 8) + ((i / 256) << 16),
			1ULL << 52);
	fputs("E 1\n", f);
	fclose(f);
	return path;
}

TEST(live_sum_bound)
{
	struct ps_convert_result res;
	struct ps_run *r = NULL;
	char err[256] = "";

	if (ASSERT_OK(convert(write_big("sum-ok.tsv", 511), "sum-ok.db", &r, &res, err,
			      sizeof(err)), err))
		ASSERT_EQ(r->ntags, 512, "all tags");
	ps_run_free(r);
	ASSERT_ERR(convert(write_big("sum-over.tsv", 512), "sum-over.db", &r, &res, err,
			   sizeof(err)), "past 2^61");
	ASSERT_STRSTR(err, "sum-over.tsv: the live bytes and objects of all tags at interval 1 "
		      "add up past 2^61", "which sum, where");
}
