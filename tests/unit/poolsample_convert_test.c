// SPDX-License-Identifier: GPL-2.0
/*
 * Round trip: write sample files with the shared writer, convert them into a run, check the
 * fields; torn last snapshot, bad magic, wrong version and absurd numbers must be reported.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "userspace/lib/etw/poolsample.h"
#include "userspace/lib/etw/poolsample-convert.h"

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

static void check_run(const struct ps_run *r)
{
	const struct ps_tag_series *ls = NULL, *nt = NULL;

	if (!ASSERT_EQ(r->nintervals, 2, "intervals"))
		return;
	ASSERT_STREQ(ps_run_meta(r, "os"), "windows", "os");
	ASSERT_STREQ(ps_run_meta(r, "host"), "srv1", "host");
	ASSERT_STREQ(ps_run_meta(r, "live_absolute"), "1", "live_absolute");
	ASSERT_U64_EQ(r->intervals[1].t_ns, 1000000000ULL, "t_ns");
	ASSERT_U64_EQ(r->intervals[1].dur_ns, 1000000000ULL, "dur_ns");
	ASSERT_EQ(ps_run_sys(r, "NonPagedPool")->v[1], 150, "nonpaged");
	ASSERT_EQ(ps_run_sys(r, "AvailableBytes")->v[0], 300, "avail");
	for (size_t i = 0; i < r->ntags; i++) {
		if (!strcmp(r->tags[i].tag.name, "LSbf"))
			ls = &r->tags[i];
		if (!strcmp(r->tags[i].tag.name, "Ntfx"))
			nt = &r->tags[i];
	}
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
	struct ps_run *r = NULL, *back = NULL;
	char err[256] = "", db[512];
	int rc = ps_convert_poolsample(write_file("a.tsv", 0), &r, err, sizeof(err));

	if (!ASSERT_OK(rc, err))
		return;
	check_run(r);
	snprintf(db, sizeof(db), "%s/a.db", ps_test_tmpdir());
	if (!ASSERT_OK(ps_run_save(r, db, 0, err, sizeof(err)), err))
		goto out;
	if (!ASSERT_OK(ps_run_load(&back, db, err, sizeof(err)), err))
		goto out;
	check_run(back);
out:
	ps_run_free(r);
	ps_run_free(back);
}

TEST(torn_last)
{
	struct ps_run *r = NULL;
	char err[256] = "";

	if (!ASSERT_OK(ps_convert_poolsample(write_file("t.tsv", 1), &r, err, sizeof(err)), err))
		return;
	ASSERT_EQ(r->nintervals, 2, "torn snapshot dropped");
	ASSERT_STREQ(ps_run_meta(r, "torn_snapshots_dropped"), "1", "counted");
	ps_run_free(r);
}

/* A line of spaces is blank, as an empty one is (it had no record to look at: a crash). */
TEST(space_lines)
{
	char path[512], err[256] = "";
	struct ps_run *r = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/spaces.tsv", ps_test_tmpdir());
	f = fopen(path, "w");
	if (!ASSERT_NOT_NULL(f, path))
		return;
	fputs("#poolscope-sample 1\n   \nS 0 1000000000 100 200 300\n \n"
	      "T 6662534c nonpaged 10 4 600\nE 0\n  \n", f);
	fclose(f);
	if (!ASSERT_OK(ps_convert_poolsample(path, &r, err, sizeof(err)), err))
		return;
	ASSERT_EQ(r->nintervals, 1, "one snapshot");
	ASSERT_EQ(r->ntags, 1, "one tag");
	ps_run_free(r);
}

static void expect_error(const char *name, const char *text, const char *needle)
{
	char path[512], err[256] = "";
	struct ps_run *r = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", ps_test_tmpdir(), name);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	ASSERT_ERR(ps_convert_poolsample(path, &r, err, sizeof(err)), name);
	ASSERT_STRSTR(err, needle, name);
	ASSERT_STRSTR(err, name, "names the file");
	ASSERT_TRUE(r == NULL, "no run");
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
}
