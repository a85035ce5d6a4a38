// SPDX-License-Identifier: GPL-2.0
/*
 * Pool events end to end: no public trace holds pool events, so these tests write their own
 * .etl files (etlwriter.c, the documented layout) - 64-bit, 32-bit and XPRESS-compressed, on two
 * processors with small buffers so the reader must merge buffers by time - run them through
 * ps_convert_etl() and read the trace file back (ps_run_load) to check every field: tags,
 * pools, owners from a pooltag file, per-interval samples, pairing by Entry (+session),
 * preexisting and implicit frees, module+offset stacks from image rundowns, StackWalk matching by
 * timestamp+thread, stack keys resolved by the first later KeyDelete/KeyRundown, key reuse,
 * lost-event counters, meta.
 */
#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/etw/convert.h"
#include "userspace/lib/etw/etl.h"
#include "userspace/lib/trace/trace.h"
#include "analysis/analysis.h"
#include "etlwriter.c"
#include "analysis/verdict.h"

/* The report as the command prints it: with the kernel domain's verdict. */
static void print_report(FILE *m, const struct ps_report *rep, enum ps_fmt fmt)
{
	struct ps_verdict v;

	if (ASSERT_OK(ps_verdict_build(&v, rep, PS_DOMAIN_KERNEL), "verdict"))
		ps_report_print(m, rep, &v, fmt, 0);
}

#define FREQ	10000000LL
#define T0	5000000000LL
#define SEC	FREQ
#define FT0	132404548206236167LL

struct scen {
	unsigned p;
	uint64_t nt, srv, user_img;
	uint64_t e1, e2, e3, e5, e7, e9;
	uint64_t k1, k9;
};

static struct scen scen_for(unsigned p)
{
	struct scen s = { .p = p };
	if (p == 8) {
		s.nt = 0xfffff80000000000ULL;
		s.srv = 0xfffff88001000000ULL;
		s.user_img = 0x7ff600000000ULL;
		s.e1 = 0xffffa00000001000ULL; s.e2 = 0xffffa00000002000ULL;
		s.e3 = 0xfffff90000003000ULL; s.e5 = 0xffffa00000005000ULL;
		s.e7 = 0xffffa00000007000ULL; s.e9 = 0xffffa00000009000ULL;
		s.k1 = 0xffffba0f6516bda0ULL; s.k9 = 0xffffba0f65119be0ULL;
	} else {
		s.nt = 0x80400000; s.srv = 0x91000000; s.user_img = 0x00400000;
		s.e1 = 0x85001000; s.e2 = 0x85002000; s.e3 = 0x95003000; s.e5 = 0x85005000;
		s.e7 = 0x85007000; s.e9 = 0x85009000;
		s.k1 = 0x8a16bda0; s.k9 = 0x8a119be0;
	}
	return s;
}

static const char *write_scenario(const char *name, unsigned p, bool compress)
{
	static char path[1024];
	struct scen s = scen_for(p);
	uint8_t d[512];
	uint32_t n;
	char tag[4];

	snprintf(path, sizeof(path), "%s/%s", ps_test_tmpdir(), name);
	struct etlw *w = etlw_open(path, p, 2, 512, compress, T0, FREQ, FT0);
	if (!w)
		return NULL;
	w->events_lost = 3;
	w->buffers_lost = 1;
	/* rundown: kernel images, a user image (ignored), the System process */
	n = ew_image(d, p, s.nt, 0x800000, "\\SystemRoot\\system32\\ntoskrnl.exe");
	etlw_event(w, 0, true, 0x14, 3, 3, 0, 0, T0 + 100, d, n);
	n = ew_image(d, p, s.srv, 0x100000, "\\SystemRoot\\System32\\DRIVERS\\srv2.sys");
	etlw_event(w, 0, true, 0x14, 3, 3, 0, 0, T0 + 110, d, n);
	n = ew_image(d, p, s.user_img, 0x10000, "C:\\Windows\\app.exe");
	etlw_event(w, 1, false, 0x03, 10, 3, 300, 300, T0 + 115, d, n);
	n = ew_process(d, p, 4, "System");
	etlw_event(w, 0, true, 0x03, 3, 4, 0, 0, T0 + 120, d, n);

	/* interval 0 */
	uint64_t f1[] = { s.nt + 0x1234, s.srv + 0x5678, s.srv + 0x9abc };
	n = ew_pool(d, p, 512, "LSbf", 0x100, s.e1, -1);		/* NonPagedPoolNx */
	etlw_event(w, 0, false, 0x0e, 0x20, 2, 100, 4, T0 + 1000, d, n);
	n = ew_stack(d, p, T0 + 1000, 4, 100, f1, 3);
	etlw_event(w, 0, true, 0x18, 32, 2, 0, 0, T0 + 1013, d, n);

	n = ew_pool(d, p, 1 | 0x10000000, "Leak", 0x3000, s.e2, -1);	/* paged, big pool */
	etlw_event(w, 1, true, 0x0e, 0x20, 2, 0, 0, T0 + 2000, d, n);
	put64(d, T0 + 2000); put32(d + 8, 4); put32(d + 12, 200); putptr(d + 16, s.k1, p);
	etlw_event(w, 1, true, 0x18, 37, 2, 0, 0, T0 + 2013, d, 16 + p);
	put64(d, T0 + 2000); put32(d + 8, 4); put32(d + 12, 200); putptr(d + 16, s.k9, p);
	etlw_event(w, 1, true, 0x18, 38, 2, 0, 0, T0 + 2020, d, 16 + p);

	n = ew_pool(d, p, 33, "Sess", 0x40, s.e3, 1);			/* PagedPoolSession */
	etlw_event(w, 0, false, 0x0e, 0x21, 2, 101, 500, T0 + 3000, d, n);
	n = ew_pool(d, p, 33, "Sess", 0x80, s.e3, 2);			/* same address, session 2 */
	etlw_event(w, 1, false, 0x0e, 0x21, 2, 102, 600, T0 + 3500, d, n);

	memcpy(tag, "LSbf", 4);
	tag[3] |= (char)0x80;						/* PROTECTED_POOL */
	n = ew_pool(d, p, 0, tag, 0x200, s.e5, -1);
	etlw_event(w, 0, false, 0x0e, 0x20, 2, 100, 4, T0 + 4000, d, n);
	n = ew_stack(d, p, T0 + 4000, 4, 100, f1, 3);
	etlw_event(w, 0, true, 0x18, 32, 2, 0, 0, T0 + 4013, d, n);

	/* interval 1 */
	n = ew_pool(d, p, 512, "LSbf", 0, s.e1, -1);
	etlw_event(w, 1, false, 0x0e, 0x22, 2, 100, 4, T0 + SEC + 100, d, n);
	n = ew_pool(d, p, 0, "Xxxx", 0, s.e9, -1);			/* allocated before the trace */
	etlw_event(w, 0, false, 0x0e, 0x22, 2, 100, 4, T0 + SEC + 200, d, n);
	n = ew_pool(d, p, 33, "Sess", 0, s.e3, 1);
	etlw_event(w, 1, false, 0x0e, 0x23, 2, 101, 500, T0 + SEC + 300, d, n);
	uint64_t f2[] = { s.srv + 0x1111, s.nt + 0x2222 };
	n = ew_key(d, p, s.k1, f2, 2);
	etlw_event(w, 0, true, 0x18, 35, 2, 0, 0, T0 + SEC + 400, d, n);	/* KeyDelete */
	n = ew_pool(d, p, 1, "Leak", 0x1000, s.e2, -1);		/* E2 again: its free was lost */
	etlw_event(w, 0, true, 0x0e, 0x20, 2, 0, 0, T0 + SEC + 500, d, n);
	put64(d, T0 + SEC + 500); put32(d + 8, 4); put32(d + 12, 200); putptr(d + 16, s.k1, p);
	etlw_event(w, 0, true, 0x18, 37, 2, 0, 0, T0 + SEC + 513, d, 16 + p);	/* key reused */

	/* interval 2 */
	n = ew_pool(d, p, 1, "Leak", 0x500, s.e7, -1);
	etlw_event(w, 1, true, 0x0e, 0x20, 2, 0, 0, T0 + 2 * SEC + 100, d, n);
	put64(d, T0 + 2 * SEC + 100); put32(d + 8, 4); put32(d + 12, 201); putptr(d + 16, s.k1, p);
	etlw_event(w, 1, true, 0x18, 37, 2, 0, 0, T0 + 2 * SEC + 113, d, 16 + p);
	n = ew_pool(d, p, 1, "Leak", 0, s.e7, -1);			/* freed while its key waits */
	etlw_event(w, 1, true, 0x0e, 0x22, 2, 0, 0, T0 + 2 * SEC + 800, d, n);
	uint64_t f3[] = { s.srv + 0x3333 };
	n = ew_key(d, p, s.k1, f3, 1);
	etlw_event(w, 0, true, 0x18, 36, 2, 0, 0, T0 + 2 * SEC + 900, d, n);	/* KeyRundown */
	/* filler so the processors' buffers interleave in the file */
	for (int i = 0; i < 40; i++) {
		n = ew_image(d, p, s.user_img + 0x100000 * (i + 1), 0x1000, "C:\\x.dll");
		etlw_event(w, i & 1, true, 0x14, 4, 3, 0, 0, T0 + 2 * SEC + 1000 + i, d, n);
	}
	etlw_close(w);
	return path;
}

static const struct ps_tag_series *find_tag(const struct ps_run *r, const char *name,
					    const char *pool)
{
	for (size_t i = 0; i < r->ntags; i++)
		if (!strcmp(r->tags[i].tag.name, name) && !strcmp(r->tags[i].tag.pool, pool))
			return &r->tags[i];
	return NULL;
}

static bool sample_is(const struct ps_tag_series *t, uint32_t i, uint64_t allocs, uint64_t frees,
		      uint64_t ab, uint64_t fb, int64_t lo, int64_t lb, const char *what)
{
	const struct ps_sample *s = &t->s[i];
	char w[96];

	snprintf(w, sizeof(w), "%s interval %u", what, i);
	return ASSERT_U64_EQ(s->allocs, allocs, w) && ASSERT_U64_EQ(s->frees, frees, w) &&
	       ASSERT_U64_EQ(s->alloc_bytes, ab, w) && ASSERT_U64_EQ(s->free_bytes, fb, w) &&
	       ASSERT_EQ(s->live_objs, lo, w) && ASSERT_EQ(s->live_bytes, lb, w);
}

static const struct ps_stack *find_stack(const struct ps_run *r, int64_t tag_id, uint64_t frame0)
{
	for (size_t i = 0; i < r->nstacks; i++)
		if (r->stacks[i].tag_id == tag_id && r->stacks[i].nframes &&
		    r->stacks[i].frames[0].addr == frame0)
			return &r->stacks[i];
	return NULL;
}

static bool frame_is(const struct ps_stack *st, uint32_t d, const char *module, uint64_t off)
{
	char w[64];
	snprintf(w, sizeof(w), "frame %u", d);
	return ASSERT_TRUE(d < st->nframes, w) && ASSERT_STREQ(st->frames[d].module, module, w) &&
	       ASSERT_U64_EQ(st->frames[d].off, off, w) && ASSERT_TRUE(st->frames[d].sym == NULL, w);
}

static void report_checks(const struct ps_run *r);

static void check_scenario(unsigned p, bool compress)
{
	char err[600], db[1024], ptf[1024];
	struct ps_convert_result res;
	struct ps_pooltags pt;
	struct ps_trace *t = NULL;
	struct ps_run *r = NULL;
	struct scen s = scen_for(p);
	const char *etl = write_scenario(compress ? "c.etl" : p == 8 ? "x64.etl" : "x86.etl", p,
					 compress);
	FILE *f;

	if (!ASSERT_NOT_NULL(etl, "write etl"))
		return;
	/* the reader sees what was written: buffers on both CPUs, compressed or not */
	{
		struct ps_etl *e;
		struct ps_etl_event ev;
		if (!ASSERT_OK(ps_etl_open(&e, etl, 0, err, sizeof(err)), err))
			return;
		while (ps_etl_next(e, &ev) > 0)
			;
		const struct ps_etl_stats *st = ps_etl_stats(e);
		ASSERT_TRUE(st->buffers > 4, "several buffers");
		ASSERT_EQ(st->compressed, compress ? st->buffers - 1 : 0, "compressed buffers");
		ASSERT_EQ(st->problems, 0, "problems");
		ASSERT_EQ(ps_etl_logfile(e)->pointer_size, p, "pointer size");
		ASSERT_EQ(ps_etl_logfile(e)->compression, compress ? 3 : 0, "compression");
		ps_etl_close(e);
	}
	snprintf(ptf, sizeof(ptf), "%s/pooltag.txt", ps_test_tmpdir());
	f = fopen(ptf, "w");
	fputs("rem test pool tags in pooltag.txt form\r\n"
	      "LSbf - srv2.sys     - SMB2 buffer\r\n"
	      "Lea? - leakdrv.sys  - a wildcard family\r\n"
	      "Sess - <unknown>    - session thing\r\n", f);
	fclose(f);
	if (!ASSERT_OK(ps_pooltag_load(&pt, ptf, err, sizeof(err)), err))
		return;
	snprintf(db, sizeof(db), "%s/out.db", ps_test_tmpdir());
	if (!ASSERT_OK(ps_trace_create(&t, db, 0), "create"))
		goto out;
	struct ps_convert_opts o = { .interval_ns = 1000000000ULL, .pooltags = &pt };
	int rc = ps_convert_etl(t, etl, &o, &res, err, sizeof(err));
	ps_trace_close(t);
	if (!ASSERT_OK(rc, err) || !ASSERT_EQ(res.problems, 0, res.first_problem))
		goto out;
	ASSERT_EQ(res.pool_allocs, 7, "allocs");
	ASSERT_EQ(res.pool_frees, 4, "frees");
	ASSERT_EQ(res.preexisting_frees, 1, "preexisting");
	ASSERT_EQ(res.implicit_frees, 1, "implicit");
	ASSERT_EQ(res.stacks_matched, 5, "stacks matched");
	ASSERT_EQ(res.stacks_unmatched, 0, "stacks unmatched");
	ASSERT_EQ(res.stack_keys_unresolved, 0, "keys unresolved");

	if (!ASSERT_OK(ps_run_load(&r, db, err, sizeof(err)), err))
		goto out;
	ASSERT_EQ(r->nintervals, 3, "intervals");
	for (uint32_t i = 0; i < r->nintervals && i < 3; i++) {
		ASSERT_U64_EQ(r->intervals[i].t_ns, (i + 1) * 1000000000ULL, "t_ns");
		ASSERT_U64_EQ(r->intervals[i].wall_ns, (uint64_t)((FT0 - 116444736000000000LL) * 100) +
			      (i + 1) * 1000000000ULL, "wall_ns");
	}
	ASSERT_STREQ(ps_run_meta(r, "os"), "windows", "meta os");
	ASSERT_STREQ(ps_run_meta(r, "source"), "etl", "meta source");
	ASSERT_STREQ(ps_run_meta(r, "pointer_size"), p == 8 ? "8" : "4", "meta pointer_size");
	ASSERT_STREQ(ps_run_meta(r, "cpus"), "2", "meta cpus");
	ASSERT_STREQ(ps_run_meta(r, "interval_ns"), "1000000000", "meta interval_ns");
	ASSERT_STREQ(ps_run_meta(r, "kernel"), "Windows 10.0 build 19041", "meta kernel");
	char wall[32];
	snprintf(wall, sizeof(wall), "%lld", (FT0 - 116444736000000000LL) * 100);
	ASSERT_STREQ(ps_run_meta(r, "start_wall_ns"), wall, "meta start_wall_ns");
	ASSERT_EQ(r->ntags, 3, "tags (Xxxx was only freed)");

	const struct ps_tag_series *ls = find_tag(r, "LSbf", "nonpaged");
	const struct ps_tag_series *lk = find_tag(r, "Leak", "paged");
	const struct ps_tag_series *ss = find_tag(r, "Sess", "session");
	if (!ASSERT_NOT_NULL(ls, "LSbf") || !ASSERT_NOT_NULL(lk, "Leak") || !ASSERT_NOT_NULL(ss, "Sess"))
		goto out;
	ASSERT_STREQ(ls->tag.kind, "pool", "kind");
	ASSERT_STREQ(ls->tag.cache, "LSbf", "cache");
	ASSERT_STREQ(ls->tag.owner, "srv2.sys", "owner from pooltag");
	ASSERT_STREQ(lk->tag.owner, "leakdrv.sys", "owner from a wildcard");
	ASSERT_TRUE(ss->tag.owner == NULL, "<unknown> owner is NULL");
	ASSERT_EQ(ls->tag.flags, 0, "nonpaged flags");
	ASSERT_EQ(lk->tag.flags, PS_TAG_F_RECLAIMABLE, "paged is reclaimable");
	ASSERT_EQ(ss->tag.flags, PS_TAG_F_RECLAIMABLE, "paged session is reclaimable");

	sample_is(ls, 0, 2, 0, 0x300, 0, 2, 0x300, "LSbf");
	sample_is(ls, 1, 0, 1, 0, 0x100, 1, 0x200, "LSbf");
	sample_is(ls, 2, 0, 0, 0, 0, 1, 0x200, "LSbf (carried)");
	sample_is(lk, 0, 1, 0, 0x3000, 0, 1, 0x3000, "Leak");
	sample_is(lk, 1, 1, 1, 0x1000, 0x3000, 1, 0x1000, "Leak (implicit free)");
	sample_is(lk, 2, 1, 1, 0x500, 0x500, 1, 0x1000, "Leak");
	sample_is(ss, 0, 2, 0, 0xc0, 0, 2, 0xc0, "Sess");
	sample_is(ss, 1, 0, 1, 0, 0x40, 1, 0x80, "Sess (session 1 freed)");

	ASSERT_EQ(ps_run_counter_last(r, "preexisting_frees"), 1, "counter preexisting_frees");
	ASSERT_EQ(ps_run_counter_last(r, "implicit_frees"), 1, "counter implicit_frees");
	ASSERT_EQ(ps_run_counter_last(r, "drops.events_lost"), 3, "counter drops.events_lost");
	ASSERT_EQ(ps_run_counter_last(r, "drops.buffers_lost"), 1, "counter drops.buffers_lost");
	ASSERT_EQ(ps_run_counter_last(r, "events.pool_alloc"), 7, "counter events.pool_alloc");
	ASSERT_EQ(ps_run_counter_last(r, "events.pool_free"), 4, "counter events.pool_free");
	ASSERT_EQ(ps_run_counter_last(r, "events.bigpool"), 1, "counter events.bigpool");
	ASSERT_EQ(ps_run_counter_last(r, "stacks.user_parts"), 1, "counter stacks.user_parts");

	ASSERT_EQ(r->nstacks, 3, "stacks");
	const struct ps_stack *s1 = find_stack(r, ls->tag.id, s.nt + 0x1234);
	const struct ps_stack *s2 = find_stack(r, lk->tag.id, s.srv + 0x1111);
	const struct ps_stack *s3 = find_stack(r, lk->tag.id, s.srv + 0x3333);
	if (!ASSERT_NOT_NULL(s1, "stack 1") || !ASSERT_NOT_NULL(s2, "stack 2 (key)") ||
	    !ASSERT_NOT_NULL(s3, "stack 3 (reused key)"))
		goto out;
	ASSERT_EQ(s1->nframes, 3, "s1 frames");
	frame_is(s1, 0, "ntoskrnl.exe", 0x1234);
	frame_is(s1, 1, "srv2.sys", 0x5678);
	frame_is(s1, 2, "srv2.sys", 0x9abc);
	ASSERT_EQ(s1->allocs, 2, "s1 allocs");
	ASSERT_EQ(s1->bytes, 0x300, "s1 bytes");
	ASSERT_EQ(s1->live_bytes, 0x200, "s1 live");
	ASSERT_STREQ(s1->comm, "System", "s1 comm");
	ASSERT_EQ(s2->nframes, 2, "s2 frames");
	frame_is(s2, 0, "srv2.sys", 0x1111);
	frame_is(s2, 1, "ntoskrnl.exe", 0x2222);
	ASSERT_EQ(s2->allocs, 1, "s2 allocs");
	ASSERT_EQ(s2->bytes, 0x3000, "s2 bytes");
	ASSERT_EQ(s2->live_bytes, 0, "s2 live (implicitly freed)");
	ASSERT_EQ(s3->nframes, 1, "s3 frames");
	frame_is(s3, 0, "srv2.sys", 0x3333);
	ASSERT_EQ(s3->allocs, 2, "s3 allocs");
	ASSERT_EQ(s3->bytes, 0x1500, "s3 bytes");
	ASSERT_EQ(s3->live_bytes, 0x1000, "s3 live (one freed while its key waited)");
	report_checks(r);
out:
	ps_run_free(r);
	ps_pooltag_free(&pt);
}

/*
 * The converted trace through the analysis, as `poolscope report` runs it: pool tags ranked,
 * attributed by their stacks' drivers (module+offset frames from the image rundowns) with the
 * shipped rules, the Windows system counter, live bytes at the end as converted.
 */
static void report_checks(const struct ps_run *r)
{
	const struct ps_report_row *ls = NULL, *lk = NULL, *ss = NULL;
	struct ps_rules *rs = NULL;
	struct ps_report rep;
	char err[256];
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	if (!ASSERT_OK(ps_rules_load(&rs, ps_test_srcpath("analysis/rules/default.rules"), err,
				     sizeof(err)), err))
		return;
	if (!ASSERT_OK(ps_report_build(&rep, r, rs, 0, UINT64_MAX), "report")) {
		ps_rules_free(rs);
		return;
	}
	for (size_t i = 0; i < rep.nrows; i++) {
		const char *c = rep.rows[i].ts->tag.cache;

		if (!strcmp(c, "LSbf"))
			ls = &rep.rows[i];
		else if (!strcmp(c, "Leak"))
			lk = &rep.rows[i];
		else if (!strcmp(c, "Sess"))
			ss = &rep.rows[i];
	}
	if (!ASSERT_TRUE(ls && lk && ss, "report rows"))
		goto out;
	ASSERT_STREQ(rep.sys_name, "NonPagedPool", "windows system counter");
	ASSERT_EQ(ls->g.end, 0x200, "LSbf live at the end");
	ASSERT_EQ(lk->g.end, 0x1000, "Leak live at the end");
	ASSERT_STREQ(ls->a.cls, "file-services/smb-server", "LSbf by its srv2.sys stack");
	ASSERT_STRSTR(ls->a.evidence, "srv2.sys", "LSbf evidence names the driver");
	ASSERT_STREQ(lk->a.cls, "file-services/smb-server", "Leak by its srv2.sys stacks");
	ASSERT_TRUE(lk->reclaimable && !ls->reclaimable, "paged flagged, nonpaged not");
	m = open_memstream(&buf, &len);
	if (m) {
		print_report(m, &rep, PS_FMT_TEXT);
		fclose(m);
		ASSERT_STRSTR(buf, "NonPagedPool not in trace", "text totals: an ETL has no pool counters");
		ASSERT_STRSTR(buf, "LSbf", "text lists the tag");
		free(buf);
	}
out:
	ps_report_free(&rep);
	ps_rules_free(rs);
}

TEST(pool_x64_end_to_end) { check_scenario(8, false); }
TEST(pool_x86_end_to_end) { check_scenario(4, false); }
TEST(pool_x64_compressed_end_to_end) { check_scenario(8, true); }

/* One 64-bit pool allocation of a small test file; len 0 means the whole payload. */
struct small_alloc {
	uint64_t bytes, entry;
	int64_t ts;
	uint32_t len;
};

/*
 * Writes name.etl (one processor, "Good" allocations as given), converts it at 1 s intervals into
 * name.db and loads that. NULL (a failed assertion) when a step fails; *res is the conversion's.
 */
/* The header's EndTime as written by etlw, or replaced by end_ft (0: none) */
#define END_AS_WRITTEN	(-1)

static struct ps_run *convert_small(const char *name, const struct small_alloc *a, size_t n,
				    int64_t end_ft, struct ps_convert_result *res)
{
	char err[600], db[1024], path[1024];
	struct ps_convert_opts o = { .interval_ns = 1000000000ULL };
	struct ps_trace *t;
	struct ps_run *r = NULL;
	uint8_t d[64];

	snprintf(path, sizeof(path), "%s/%s.etl", ps_test_tmpdir(), name);
	snprintf(db, sizeof(db), "%s/%s.db", ps_test_tmpdir(), name);
	struct etlw *w = etlw_open(path, 8, 1, 512, false, T0, FREQ, FT0);
	if (!ASSERT_NOT_NULL(w, "write etl"))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t len = ew_pool(d, 8, 0, "Good", a[i].bytes, a[i].entry, -1);
		etlw_event(w, 0, true, 0x0e, 0x20, 2, 0, 0, a[i].ts, d, a[i].len ? a[i].len : len);
	}
	etlw_close(w);
	if (end_ft != END_AS_WRITTEN) {
		/* EndTime of TRACE_LOGFILE_HEADER: 0x10 into the event after its 32-byte header */
		uint8_t le[8];
		struct ps_etl *e;
		FILE *f = fopen(path, "r+b");

		if (!ASSERT_NOT_NULL(f, path))
			return NULL;
		for (int i = 0; i < 8; i++)
			le[i] = (uint8_t)((uint64_t)end_ft >> 8 * i);
		fseek(f, EW_HDR + 32 + 0x10, SEEK_SET);
		fwrite(le, 1, 8, f);
		fclose(f);
		if (!ASSERT_OK(ps_etl_open(&e, path, 0, err, sizeof(err)), err))
			return NULL;
		ASSERT_EQ(ps_etl_logfile(e)->end_time, end_ft, "the header's end time");
		ps_etl_close(e);
	}
	if (!ASSERT_OK(ps_trace_create(&t, db, 0), "create"))
		return NULL;
	int rc = ps_convert_etl(t, path, &o, res, err, sizeof(err));
	ps_trace_close(t);
	if (!ASSERT_OK(rc, err) || !ASSERT_OK(ps_run_load(&r, db, err, sizeof(err)), err))
		return NULL;
	return r;
}

/*
 * A pool allocation larger than an address space is a damaged event: a problem naming its offset,
 * and not counted, so its tag's figures stay those of the sound events; so is one whose payload
 * is cut short.
 */
TEST(pool_absurd_size_skipped)
{
	static const struct small_alloc a[] = {
		{ 0x100, 0xffffa00000001000ULL, T0 + 1000, 0 },
		{ 1ull << 60, 0xffffa00000002000ULL, T0 + 2000, 0 },
		{ 0x100, 0xffffa00000003000ULL, T0 + 3000, 12 },	/* payload cut short */
	};
	struct ps_convert_result res;
	struct ps_run *r = convert_small("absurd", a, 3, END_AS_WRITTEN, &res);

	if (!r)
		return;
	ASSERT_EQ(res.problems, 2, "two problems");
	ASSERT_STRSTR(res.first_problem, "pool allocation of 1152921504606846976 bytes",
		      "names the size of the first");
	ASSERT_STRSTR(res.first_problem, "absurd.etl: offset 0x", "names the file and offset");
	const struct ps_tag_series *g = find_tag(r, "Good", "nonpaged");
	if (ASSERT_NOT_NULL(g, "tag Good"))
		ASSERT_EQ(g->s[r->nintervals - 1].live_bytes, 0x100, "the sound allocation only");
	ASSERT_EQ(ps_run_counter_last(r, "drops.bad_pool_events"), 2, "counted in the trace");
	ps_run_free(r);
}

/*
 * A pool event twelve hours after the others in a trace whose header says it ran a minute is a
 * damaged timestamp: counted in events.bad_timestamp and kept in the current interval, not the
 * reason for 43200 empty intervals (found as a hang by fuzzing convert).
 */
TEST(pool_timestamp_past_the_header_end)
{
	static const struct small_alloc a[] = {
		{ 0x100, 0xffffa00000001000ULL, T0 + 1000, 0 },
		{ 0x200, 0xffffa00000002000ULL, T0 + SEC + 1000, 0 },
		{ 0x300, 0xffffa00000003000ULL, T0 + 12 * 3600 * SEC, 0 },
	};
	struct ps_convert_result res;
	struct ps_run *r = convert_small("late", a, 3, END_AS_WRITTEN, &res);

	if (!r)
		return;
	ASSERT_EQ(res.pool_allocs, 3, "all three allocations counted");
	ASSERT_TRUE(res.intervals <= 3, "intervals of the sound events only");
	ASSERT_EQ(res.problems, 1, "reported");
	ASSERT_STRSTR(res.first_problem, "late.etl: offset 0x", "names the file and offset");
	ASSERT_STRSTR(res.first_problem, "past twice the run the header gives", "says why");
	ASSERT_EQ(ps_run_counter_last(r, "events.bad_timestamp"), 1, "counted");
	ps_run_free(r);
}

/*
 * Without an end time in the header (or with one before the start) nothing bounds the run: a
 * gap of ten minutes is believed, one of two hours is a damaged timestamp (a fuzzed header with
 * its end before its start and an event 12 h on took 14 s to convert).
 */
TEST(pool_timestamp_gap_without_header_end)
{
	static const struct small_alloc a[] = {
		{ 0x100, 0xffffa00000001000ULL, T0 + 1000, 0 },
		{ 0x200, 0xffffa00000002000ULL, T0 + 600 * SEC, 0 },
		{ 0x300, 0xffffa00000003000ULL, T0 + 600 * SEC + 2 * 3600 * SEC, 0 },
	};
	struct ps_convert_result res;
	struct ps_run *r = convert_small("noend", a, 3, 0, &res);

	if (!r)
		return;
	ASSERT_EQ(res.intervals, 601, "ten minutes of 1 s intervals, not two hours more");
	ASSERT_EQ(res.problems, 1, "reported");
	ASSERT_STRSTR(res.first_problem, "past the hour a gap can be", "says why");
	ASSERT_EQ(ps_run_counter_last(r, "events.bad_timestamp"), 1, "counted");
	const struct ps_tag_series *g = find_tag(r, "Good", "nonpaged");
	if (ASSERT_NOT_NULL(g, "tag Good"))
		ASSERT_EQ(g->s[r->nintervals - 1].live_bytes, 0x600, "all three allocations kept");
	ps_run_free(r);
}

/*
 * A header whose run is a century is sound as far as it goes, but an event 50 years in would
 * need 1.6 billion 1 s intervals where a trace holds 2^24: a damaged timestamp, reported, not a
 * loop through a billion empty intervals.
 */
TEST(pool_timestamp_past_the_intervals_a_trace_holds)
{
	static const struct small_alloc a[] = {
		{ 0x100, 0xffffa00000001000ULL, T0 + 1000, 0 },
		{ 0x200, 0xffffa00000002000ULL, T0 + 50LL * 31557600 * SEC, 0 },
	};
	struct ps_convert_result res;
	/* FILETIME counts 100 ns: a century after FT0 */
	struct ps_run *r = convert_small("century", a, 2, FT0 + 100LL * 31557600 * 10000000, &res);

	if (!r)
		return;
	ASSERT_EQ(res.intervals, 1, "one interval");
	ASSERT_EQ(res.problems, 1, "reported");
	ASSERT_STRSTR(res.first_problem, "century.etl: offset 0x", "names the file and offset");
	ASSERT_STRSTR(res.first_problem, "past the 16777216 intervals of 1.000 s a trace holds",
		      "says why");
	ASSERT_EQ(ps_run_counter_last(r, "events.bad_timestamp"), 1, "counted");
	ps_run_free(r);
}

/*
 * 33 allocations of 128 TiB each are each possible, but together past 2^52 bytes (4 PiB), where
 * the trace reader calls a tag's live bytes damage: the 33rd is skipped and reported, and the
 * trace written loads.
 */
TEST(pool_total_past_4pib_skipped)
{
	struct small_alloc a[33];
	struct ps_convert_result res;

	for (size_t i = 0; i < 33; i++)
		a[i] = (struct small_alloc){ 1ull << 47, 0xffffa00000001000ULL + 0x1000 * i,
					     T0 + 1000 * (int64_t)(i + 1), 0 };
	struct ps_run *r = convert_small("huge", a, 33, END_AS_WRITTEN, &res);

	if (!r)
		return;
	ASSERT_EQ(res.problems, 1, "the 33rd reported");
	ASSERT_STRSTR(res.first_problem, "after 4503599627370496 bytes in this file: past 2^52", "says why");
	const struct ps_tag_series *g = find_tag(r, "Good", "nonpaged");
	if (ASSERT_NOT_NULL(g, "tag Good"))
		ASSERT_EQ(g->s[r->nintervals - 1].live_bytes, 1ll << 52, "32 of them");
	ASSERT_EQ(ps_run_counter_last(r, "drops.bad_pool_events"), 1, "counted in the trace");
	ps_run_free(r);
}

/* An existing output is refused without FORCE (convert --force). */
TEST(trace_refuses_existing_output)
{
	char db[1024];
	struct ps_trace *t;

	snprintf(db, sizeof(db), "%s/x.db", ps_test_tmpdir());
	if (!ASSERT_OK(ps_trace_create(&t, db, 0), "create"))
		return;
	ps_trace_close(t);
	ASSERT_EQ(ps_trace_create(&t, db, 0), -EEXIST, "second create");
}

/*
 * Stack keys whose frames come only in the rundown at the end, as a real session writes them:
 * 3000 allocations of two tags reference two keys, a third of them are freed before the rundown,
 * and a third key is never defined. Each (key, tag) becomes one stack with every allocation and
 * the live bytes of those still live; the undefined key's allocations are counted unresolved.
 * The converter keeps counts per (key, tag), not an entry per allocation.
 */
TEST(stack_keys_resolved_at_rundown)
{
	const unsigned p = 8;
	const uint64_t nt = 0xfffff80000000000ULL, k1 = 0xffffc00000000100ULL,
		       k2 = 0xffffc00000000200ULL, k3 = 0xffffc00000000300ULL;
	char etl[1024], db[1024], err[512];
	struct ps_convert_result res;
	struct ps_convert_opts o = { .interval_ns = 1000000000ULL };
	struct ps_run *r = NULL;
	struct ps_trace *t;
	uint8_t d[256];
	uint32_t n;
	int64_t ts = T0 + 1000;

	snprintf(etl, sizeof(etl), "%s/keys.etl", ps_test_tmpdir());
	snprintf(db, sizeof(db), "%s/keys.db", ps_test_tmpdir());
	struct etlw *w = etlw_open(etl, p, 1, 4096, false, T0, FREQ, FT0);
	if (!ASSERT_NOT_NULL(w, "open"))
		return;
	n = ew_image(d, p, nt, 0x800000, "\\SystemRoot\\system32\\ntoskrnl.exe");
	etlw_event(w, 0, true, 0x14, 3, 3, 0, 0, T0 + 100, d, n);
	for (uint32_t i = 0; i < 3000; i++, ts += 100) {
		uint64_t entry = 0xffffa00000000000ULL + i * 0x100, key = i % 3 == 2 ? k3 :
									i % 2 ? k2 : k1;

		n = ew_pool(d, p, 512, i % 2 ? "TagB" : "TagA", 0x40, entry, -1);
		etlw_event(w, 0, true, 0x0e, 0x20, 2, 0, 0, ts, d, n);
		put64(d, (uint64_t)ts); put32(d + 8, 4); put32(d + 12, 100); putptr(d + 16, key, p);
		etlw_event(w, 0, true, 0x18, 37, 2, 0, 0, ts + 13, d, 16 + p);
		if (i % 3 == 1) {
			n = ew_pool(d, p, 512, i % 2 ? "TagB" : "TagA", 0, entry, -1);
			etlw_event(w, 0, true, 0x0e, 0x22, 2, 0, 0, ts + 50, d, n);
		}
	}
	uint64_t f1[] = { nt + 0x1000, nt + 0x2000 }, f2[] = { nt + 0x3000, nt + 0x4000 };
	n = ew_key(d, p, k1, f1, 2);
	etlw_event(w, 0, true, 0x18, 36, 2, 0, 0, ts, d, n);
	n = ew_key(d, p, k2, f2, 2);
	etlw_event(w, 0, true, 0x18, 36, 2, 0, 0, ts + 1, d, n);
	ASSERT_OK(etlw_close(w), "close");
	if (!ASSERT_OK(ps_trace_create(&t, db, 0), "create"))
		return;
	int rc = ps_convert_etl(t, etl, &o, &res, err, sizeof(err));
	ps_trace_close(t);
	if (!ASSERT_OK(rc, err) || !ASSERT_OK(ps_run_load(&r, db, err, sizeof(err)), err))
		goto out;
	ASSERT_EQ(res.stack_keys_unresolved, 1000, "the allocations of the undefined key");
	const struct ps_tag_series *a = find_tag(r, "TagA", "nonpaged"),
				   *b = find_tag(r, "TagB", "nonpaged");
	if (!ASSERT_NOT_NULL(a, "TagA") || !ASSERT_NOT_NULL(b, "TagB"))
		goto out;
	/*
	 * i % 3 == 2 took k3; of the rest, even i took k1 (TagA), odd i k2 (TagB); i % 3 == 1
	 * was freed. i in 0..2999: k1 gets i % 6 in {0, 4}, k2 {1, 3}; one of each pair freed.
	 */
	const struct ps_stack *sa = find_stack(r, a->tag.id, nt + 0x1000),
			      *sb = find_stack(r, b->tag.id, nt + 0x3000);
	if (!ASSERT_NOT_NULL(sa, "stack of k1") || !ASSERT_NOT_NULL(sb, "stack of k2"))
		goto out;
	ASSERT_EQ(sa->allocs, 1000, "k1 allocations");
	ASSERT_EQ(sb->allocs, 1000, "k2 allocations");
	ASSERT_EQ(sa->live_bytes, 500 * 0x40, "k1 live: half freed");
	ASSERT_EQ(sb->live_bytes, 500 * 0x40, "k2 live: half freed");
	ASSERT_EQ(r->nstacks, 2, "one stack per (key, tag)");
out:
	ps_run_free(r);
}

/* Every row of every table of the trace db, as text, in table and row order. */
static char *db_text(const char *db)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *tabs = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m || sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(h, "SELECT name FROM sqlite_master WHERE type = 'table' "
			       "ORDER BY name", -1, &tabs, NULL) != SQLITE_OK)
		goto out;
	while (sqlite3_step(tabs) == SQLITE_ROW) {
		char q[256];
		sqlite3_stmt *rows = NULL;

		snprintf(q, sizeof(q), "SELECT * FROM \"%s\" ORDER BY rowid",
			 (const char *)sqlite3_column_text(tabs, 0));
		if (sqlite3_prepare_v2(h, q, -1, &rows, NULL) != SQLITE_OK)
			continue;
		fprintf(m, "table %s\n", (const char *)sqlite3_column_text(tabs, 0));
		while (sqlite3_step(rows) == SQLITE_ROW) {
			for (int i = 0; i < sqlite3_column_count(rows); i++) {
				const unsigned char *v = sqlite3_column_text(rows, i);
				fprintf(m, "%s|", v ? (const char *)v : "NULL");
			}
			fputc('\n', m);
		}
		sqlite3_finalize(rows);
	}
out:
	sqlite3_finalize(tabs);
	sqlite3_close(h);
	if (m)
		fclose(m);
	return text;
}

/* The progress callback runs on the thread that reads the file: where it ran, and how often. */
struct progress_seen {
	pthread_t caller;
	unsigned calls, other_thread;
};

static void note_progress(void *arg, uint64_t done, uint64_t total, uint64_t events)
{
	struct progress_seen *p = arg;

	(void)done, (void)total, (void)events;
	p->calls++;
	if (!pthread_equal(pthread_self(), p->caller))
		p->other_thread++;
}

/* etl into db at 1 s intervals with POOLSCOPE_ETL_THREADS=threads; *seen, the progress calls. */
static int convert_with_threads(const char *etl, const char *db, const char *threads,
				struct ps_convert_result *res, struct progress_seen *seen,
				char *err, size_t errlen)
{
	struct ps_convert_opts o = { .interval_ns = 1000000000ULL, .progress = note_progress,
				     .progress_arg = seen };
	struct ps_trace *t;
	int rc;

	*seen = (struct progress_seen){ .caller = pthread_self() };
	unlink(db);
	setenv("POOLSCOPE_ETL_THREADS", threads, 1);
	rc = ps_trace_create(&t, db, 0);
	if (rc < 0) {
		snprintf(err, errlen, "%s: cannot create", db);
	} else {
		rc = ps_convert_etl(t, etl, &o, res, err, errlen);
		ps_trace_close(t);
	}
	unsetenv("POOLSCOPE_ETL_THREADS");
	return rc;
}

/*
 * The converter's feed runs on a helper thread for large files and in the caller's thread for
 * small ones: the trace must be the same either way, byte for byte. A file of many batches
 * (about 6 MB of records): pool events of 40 tags on two processors, addresses reused (implicit
 * and preexisting frees), a stack walk after every third allocation, a stack key after every
 * seventh with its KeyDelete now and then, images, a process, short pool events and absurd
 * sizes (problems), one timestamp past the header's end, over 4 intervals.
 */
TEST(feed_thread_gives_the_same_trace)
{
	const unsigned p = 8;
	const uint64_t nt = 0xfffff80000000000ULL, srv = 0xfffff88001000000ULL;
	char etl[1024], db0[1024], db1[1024], err[512];
	struct ps_convert_result r0, r1;
	uint8_t d[256];
	uint32_t n;

	snprintf(etl, sizeof(etl), "%s/feed.etl", ps_test_tmpdir());
	snprintf(db0, sizeof(db0), "%s/feed0.db", ps_test_tmpdir());
	snprintf(db1, sizeof(db1), "%s/feed1.db", ps_test_tmpdir());
	struct etlw *w = etlw_open(etl, p, 2, 65536, false, T0, FREQ, FT0);
	if (!ASSERT_NOT_NULL(w, "open"))
		return;
	n = ew_image(d, p, nt, 0x800000, "\\SystemRoot\\system32\\ntoskrnl.exe");
	etlw_event(w, 0, true, 0x14, 3, 3, 0, 0, T0 + 100, d, n);
	n = ew_process(d, p, 4, "System");
	etlw_event(w, 1, true, 0x03, 3, 4, 0, 0, T0 + 120, d, n);
	for (uint32_t i = 0; i < 100000; i++) {
		int64_t ts = T0 + 1000 + (int64_t)i * (4 * FREQ / 100000);
		uint32_t cpu = i & 1, tid = 100 + (i % 7);
		uint64_t entry = 0xffffa00000000000ULL + (uint64_t)(i % 6007) * 0x40;
		char tag[5];

		snprintf(tag, sizeof(tag), "T%03u", i % 40);
		if (i % 5 == 4) {
			n = ew_pool(d, p, 512, tag, 0, entry - 0x40 * 3, -1);
			etlw_event(w, cpu, false, 0x0e, 0x22, 2, tid, 4, ts, d, n);
			continue;
		}
		n = ew_pool(d, p, i % 11 ? 512 : 1, tag, i % 997 ? 0x40 + i % 300 : 1ULL << 60,
			    entry, -1);
		etlw_event(w, cpu, false, 0x0e, 0x20, 2, tid, 4, ts, d, i % 1999 ? n : 8);
		if (i % 3 == 0) {
			uint64_t f[] = { nt + 0x1000 + i % 13, srv + 0x500 + i % 5 };
			n = ew_stack(d, p, ts, 4, tid, f, 2);
			etlw_event(w, cpu, true, 0x18, 32, 2, 0, 0, ts, d, n);
		} else if (i % 7 == 0) {
			uint64_t key = 0xffffc00000000000ULL + (i % 9) * 0x100;
			put64(d, (uint64_t)ts); put32(d + 8, 4); put32(d + 12, tid);
			putptr(d + 16, key, p);
			etlw_event(w, cpu, true, 0x18, 37, 2, 0, 0, ts, d, 16 + p);
		}
		if (i % 5000 == 4999) {
			uint64_t f[] = { srv + 0x2000 + i % 3 };
			n = ew_key(d, p, 0xffffc00000000000ULL + (i % 9) * 0x100, f, 1);
			etlw_event(w, cpu, true, 0x18, 35, 2, 0, 0, ts, d, n);
			n = ew_image(d, p, srv, 0x100000, "\\SystemRoot\\System32\\DRIVERS\\srv2.sys");
			etlw_event(w, cpu, true, 0x14, 3, 3, 0, 0, ts, d, n);
		}
	}
	n = ew_pool(d, p, 512, "Late", 0x40, 0xffffa10000000000ULL, -1);
	etlw_event(w, 0, false, 0x0e, 0x20, 2, 100, 4, T0 + 1000 * FREQ, d, n);
	ASSERT_OK(etlw_close(w), "close");

	struct progress_seen p0, p1;
	if (!ASSERT_OK(convert_with_threads(etl, db0, "0", &r0, &p0, err, sizeof(err)), err) ||
	    !ASSERT_OK(convert_with_threads(etl, db1, "1", &r1, &p1, err, sizeof(err)), err))
		return;
	/* every 64k events and once at the end; on the reading thread, which is ours without one */
	ASSERT_TRUE(p0.calls >= 3 && p0.other_thread == 0, "without the thread: read by the caller");
	ASSERT_TRUE(p1.calls >= 3 && p1.other_thread == p1.calls - 1,
		    "with it: read on another thread (the last call is the caller's)");
	ASSERT_TRUE(r0.events > 130000 && r0.pool_allocs > 70000 && r0.pool_frees > 15000 &&
		    r0.stacks_matched > 20000 && r0.implicit_frees > 0 && r0.problems > 100,
		    "the file holds what the test wants of it");
	ASSERT_TRUE(memcmp(&r0, &r1, sizeof(r0)) == 0, "the same result, thread or not");
	char *t0 = db_text(db0), *t1 = db_text(db1);
	if (ASSERT_NOT_NULL(t0, db0) && ASSERT_NOT_NULL(t1, db1)) {
		ASSERT_TRUE(strlen(t0) > 20000, "the trace has rows");
		ASSERT_TRUE(strcmp(t0, t1) == 0, "the same trace, thread or not");
	}
	free(t0);
	free(t1);
}

/* A counter's value at each interval of a trace (its last row at or before it), n at most. */
static uint32_t counter_series(const char *db, const char *name, int64_t *v, uint32_t n)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	uint32_t k = 0;

	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(h, "SELECT coalesce(value, 0) FROM counter_values WHERE name = ? "
			       "ORDER BY interval", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		while (k < n && sqlite3_step(st) == SQLITE_ROW)
			v[k++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	sqlite3_close(h);
	return k;
}

/*
 * The reader's drop and problem counts go into the interval in which the reader reported them,
 * with the feed thread and without: two buffers flagged EVENTS_LOST and BUFFER_LOST and one
 * with a damaged event, early in a file of 10 intervals. The expected series comes from a walk
 * of the same file in time order: interval k's value is the count after the event that opened
 * interval k + 1 was read (the converter closes k then), the last one's the count at the end.
 */
TEST(reader_counts_land_in_their_interval)
{
	const unsigned p = 8, bufsize = 4096;
	char etl[1024], db[1024], err[512];
	const char *names[] = { "drops.buffers_flagged_events_lost", "drops.buffers_flagged_lost",
				"drops.etl_problems" };
	int64_t want[3][16] = { { 0 } }, got[16];
	struct ps_convert_result res;
	struct progress_seen seen;
	uint8_t d[64];

	snprintf(etl, sizeof(etl), "%s/counts.etl", ps_test_tmpdir());
	snprintf(db, sizeof(db), "%s/counts.db", ps_test_tmpdir());
	struct etlw *w = etlw_open(etl, p, 2, bufsize, false, T0, FREQ, FT0);
	if (!ASSERT_NOT_NULL(w, "open"))
		return;
	for (uint32_t i = 0; i < 4000; i++) {
		uint32_t n = ew_pool(d, p, 512, "Cnts", 0x40, 0xffffa00000000000ULL + i * 0x40, -1);
		etlw_event(w, i & 1, false, 0x0e, 0x20, 2, 100, 4, T0 + 1000 + (int64_t)i * (10 * SEC / 4000),
			   d, n);
	}
	ASSERT_OK(etlw_close(w), "close");
	/* buffer 0 is the header's; the data buffers follow it, bufsize bytes each */
	FILE *f = fopen(etl, "r+b");
	if (!ASSERT_NOT_NULL(f, etl))
		return;
	uint8_t flag[2] = { 0x06, 0x00 }, bad[2] = { 0xff, 0xff };
	fseek(f, 8L * bufsize + 0x34, SEEK_SET);		/* EVENTS_LOST | BUFFER_LOST */
	fwrite(flag, 1, 2, f);
	fseek(f, 20L * bufsize + 0x34, SEEK_SET);
	fwrite(flag, 1, 2, f);
	fseek(f, 30L * bufsize + EW_HDR + 4, SEEK_SET);	/* an event's size past its buffer */
	fwrite(bad, 1, 2, f);
	fclose(f);

	struct ps_etl *e;
	struct ps_etl_event ev;
	uint32_t cur = 0, nint;
	if (!ASSERT_OK(ps_etl_open(&e, etl, PS_ETL_ORDERED, err, sizeof(err)), err))
		return;
	const struct ps_etl_stats *st = ps_etl_stats(e);
	while (ps_etl_next(e, &ev) > 0) {
		if (ev.group != 0x0e)
			continue;
		uint32_t idx = (uint32_t)(ps_etl_rel_ns(ps_etl_logfile(e), ev.ts) / 1000000000);
		for (; cur < idx && cur < 16; cur++) {
			want[0][cur] = st->flag_events_lost;
			want[1][cur] = st->flag_buffer_lost;
			want[2][cur] = st->problems;
		}
	}
	nint = cur + 1;
	want[0][cur] = st->flag_events_lost;
	want[1][cur] = st->flag_buffer_lost;
	want[2][cur] = st->problems;
	ps_etl_close(e);
	if (!ASSERT_EQ(nint, 10, "10 intervals") ||
	    !ASSERT_TRUE(want[0][0] == 0 && want[0][8] == 2 && want[2][3] == 0 && want[2][8] == 1,
			 "the counts change within the file, not at its end"))
		return;
	for (int mode = 0; mode < 2; mode++) {
		if (!ASSERT_OK(convert_with_threads(etl, db, mode ? "1" : "0", &res, &seen, err,
						    sizeof(err)), err))
			return;
		for (int c = 0; c < 3; c++) {
			uint32_t n = counter_series(db, names[c], got, 16);
			ASSERT_EQ(n, nint, names[c]);
			for (uint32_t k = 0; k < n && k < nint; k++)
				if (!ASSERT_EQ(got[k], want[c][k], names[c]))
					break;
		}
	}
}
