// SPDX-License-Identifier: GPL-2.0
/*
 * Text inputs through ps_convert_text() and back through ps_run_load(): the real poolmon -n
 * snapshot (Intel's fixture), Microsoft's poolmon console examples (before/after leak check,
 * session pools, /g mapping column), windbg !poolused, several files as one timeline, and the
 * pooltag.txt parser on a small file in that format written here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/etw/convert.h"
#include "userspace/lib/etw/pooltag.h"
#include "userspace/lib/trace/trace.h"
#include "analysis/analysis.h"
#include "etl_corpus.h"

static struct ps_run *convert(const char *const *paths, size_t n, const struct ps_pooltags *pt,
			      struct ps_convert_result *res)
{
	char db[1024], err[600];
	struct ps_trace *t;
	struct ps_run *r = NULL;

	snprintf(db, sizeof(db), "%s/t.db", ps_test_tmpdir());
	if (!ASSERT_OK(ps_trace_create(&t, db, PS_TRACE_F_FORCE), "create"))
		return NULL;
	struct ps_convert_opts o = { .interval_ns = 60000000000ULL, .pooltags = pt };
	int rc = ps_convert_text(t, paths, n, &o, res, err, sizeof(err));
	ps_trace_close(t);
	if (!ASSERT_OK(rc, err))
		return NULL;
	if (!ASSERT_OK(ps_run_load(&r, db, err, sizeof(err)), err))
		return NULL;
	return r;
}

static const struct ps_tag_series *tag(const struct ps_run *r, const char *name, const char *pool)
{
	for (size_t i = 0; i < r->ntags; i++)
		if (!strcmp(r->tags[i].tag.name, name) && !strcmp(r->tags[i].tag.pool, pool))
			return &r->tags[i];
	ps_test_fail(__FILE__, __LINE__, "no tag '%s' %s", name, pool);
	return NULL;
}

TEST(poolmon_n_snapshot_intel)
{
	struct ps_convert_result res;
	const char *p[] = { corpus_path("windows/poolmon_n_snapshot_intel_mfd.txt") };

	if (!corpus_have("windows/poolmon_n_snapshot_intel_mfd.txt"))
		return;
	ASSERT_EQ(ps_convert_detect(p[0]), PS_INPUT_POOLMON, "detected");
	struct ps_run *r = convert(p, 1, NULL, &res);
	if (!r)
		return;
	ASSERT_EQ(r->nintervals, 1, "one snapshot");
	ASSERT_EQ(r->ntags, 13, "13 rows");
	ASSERT_EQ(res.problems, 0, "problems");
	ASSERT_STREQ(ps_run_meta(r, "live_absolute"), "1", "live_absolute");
	ASSERT_STREQ(ps_run_meta(r, "source"), "poolmon", "source");
	const struct ps_tag_series *t = tag(r, "EtwB", "nonpaged");
	if (t) {
		ASSERT_EQ(t->s[0].live_objs, 2338, "EtwB Diff");
		ASSERT_EQ(t->s[0].live_bytes, 163418368, "EtwB Bytes");
		ASSERT_EQ(t->s[0].allocs, 0, "first snapshot: no interval allocs");
		ASSERT_EQ(t->tag.flags, 0, "nonpaged flags");
	}
	t = tag(r, "MmSt", "paged");
	if (t) {
		ASSERT_EQ(t->s[0].live_bytes, 156097152, "MmSt Bytes");
		ASSERT_EQ(t->tag.flags, PS_TAG_F_RECLAIMABLE | PS_TAG_F_OWNER_BUILTIN, "paged flags");
		ASSERT_STREQ(t->tag.owner, "nt!mm", "the memory manager, from the built-in table");
	}
	/* "Pool N:710920K P:983564K": N is nonpaged */
	const struct ps_series *np = ps_run_sys(r, "NonPagedPool"), *pp = ps_run_sys(r, "PagedPool");
	if (ASSERT_NOT_NULL(np, "NonPagedPool") && ASSERT_NOT_NULL(pp, "PagedPool")) {
		ASSERT_EQ(np->v[0], 710920LL * 1024, "NonPagedPool");
		ASSERT_EQ(pp->v[0], 983564LL * 1024, "PagedPool");
	}
	ps_run_free(r);
}

TEST(poolmon_console_examples)
{
	struct ps_convert_result res;
	const char *p[] = { corpus_path("windows/poolmon_display_examples.txt") };

	if (!corpus_have("windows/poolmon_display_examples.txt"))
		return;
	struct ps_run *r = convert(p, 1, NULL, &res);
	if (!r)
		return;
	/* Example 2, 2b (header only), 2c, 4 before, 4 after, 5 (sessions), display sample */
	ASSERT_EQ(r->nintervals, 7, "snapshots");
	ASSERT_EQ(res.problems, 0, res.first_problem);
	const struct ps_tag_series *d = tag(r, "Drsd", "paged");
	if (d) {
		ASSERT_EQ(d->s[3].live_objs, 21, "before: Diff");
		ASSERT_EQ(d->s[3].live_bytes, 17472, "before: Bytes");
		ASSERT_EQ(d->s[4].live_objs, 27, "after: Diff");
		ASSERT_EQ(d->s[4].live_bytes, 22464, "after: Bytes");
		ASSERT_EQ(d->s[4].allocs, 737 - 560, "allocs between snapshots");
		ASSERT_EQ(d->s[4].frees, 710 - 539, "frees between snapshots");
		ASSERT_EQ(d->s[4].live_bytes - d->s[3].live_bytes, 4992, "the documented leak");
	}
	const struct ps_tag_series *io = tag(r, "Io  ", "nonpaged");	/* tag with spaces */
	if (io)
		ASSERT_EQ(io->s[6].live_bytes, 91912, "Io bytes");
	ASSERT_TRUE(tag(r, "Bmfd", "session") != NULL, "session pool section");
	ASSERT_TRUE(tag(r, "1MEM", "nonpaged") != NULL, "'Unknown Driver' rows");
	const struct ps_tag_series *ip = tag(r, "IpSI", "nonpaged");
	if (ip)
		ASSERT_EQ(ip->s[2].live_bytes, 53272, "/g mapping column ignored");
	const struct ps_series *np = ps_run_sys(r, "NonPagedPool");
	if (ASSERT_NOT_NULL(np, "sysstat"))
		ASSERT_EQ(np->v[0], 8500LL * 1024, "Pool N");
	ps_run_free(r);
}

TEST(poolused_windbg)
{
	struct ps_convert_result res;
	const char *p[] = { corpus_path("windows/windbg_poolused_poolfind.txt") };

	if (!corpus_have("windows/windbg_poolused_poolfind.txt"))
		return;
	ASSERT_EQ(ps_convert_detect(p[0]), PS_INPUT_POOLUSED, "detected");
	struct ps_run *r = convert(p, 1, NULL, &res);
	if (!r)
		return;
	ASSERT_EQ(r->nintervals, 1, "one !poolused");
	ASSERT_STREQ(ps_run_meta(r, "source"), "poolused", "source");
	ASSERT_EQ(r->ntags, 17 * 2, "17 tags x (nonpaged, paged)");
	const struct ps_tag_series *t = tag(r, "8042", "nonpaged");
	if (t) {
		ASSERT_EQ(t->s[0].live_objs, 4, "8042 allocs");
		ASSERT_EQ(t->s[0].live_bytes, 3944, "8042 used");
	}
	t = tag(r, "Wmip", "paged");
	if (t) {
		ASSERT_EQ(t->s[0].live_objs, 182, "Wmip paged allocs");
		ASSERT_EQ(t->s[0].live_bytes, 18600, "Wmip paged used (text glued on)");
	}
	ASSERT_TRUE(tag(r, "AGP ", "paged") != NULL, "short tag padded");
	const struct ps_series *s = ps_run_sys(r, "NonPagedPoolTagged");
	if (ASSERT_NOT_NULL(s, "TOTAL"))
		ASSERT_EQ(s->v[0], 209120008, "TOTAL NonPaged used");
	ps_run_free(r);
}

static const char *write_file(const char *name, const char *text)
{
	static char path[4][1024];
	static int k;
	char *p = path[k++ & 3];
	FILE *f;

	snprintf(p, 1024, "%s/%s", ps_test_tmpdir(), name);
	f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
	return p;
}

TEST(several_files_one_timeline_with_pooltag)
{
	struct ps_convert_result res;
	struct ps_pooltags pt;
	char err[300];
	const char *a = write_file("a.log",
		" Tag  Type     Allocs         Frees    Diff   Bytes    Per Alloc\n\n"
		" LSbf Nonp       1000       900       100   102400       1024\n"
		" Io   Nonp         10         5         5     500        100\n");
	const char *b = write_file("b.log",
		" Tag  Type     Allocs         Frees    Diff   Bytes    Per Alloc\n\n"
		" LSbf Nonp       3000      1900      1100  1126400       1024\n"
		" Io   Nonp         10         5         5     500        100\n");
	const char *ptf = write_file("pooltag.txt",
		"rem comment\n// also a comment\n\n"
		"LSbf - srv2.sys - SMB2 buffers\n"
		"Io   - nt!io    - general IO allocations\n"
		"ATmp - AppTag mount point\n"
		"garbage line\n\x1a");
	if (!ASSERT_OK(ps_pooltag_load(&pt, ptf, err, sizeof(err)), err))
		return;
	ASSERT_EQ(pt.n, 3, "entries");
	ASSERT_EQ(pt.skipped, 1, "unparsable lines");
	const struct ps_pooltag_ent *e = ps_pooltag_find(&pt, "ATmp");
	if (ASSERT_NOT_NULL(e, "two-field entry")) {
		ASSERT_TRUE(e->binary == NULL, "no binary");
		ASSERT_STREQ(e->desc, "AppTag mount point", "desc");
	}
	const char *p[] = { a, b };
	struct ps_run *r = convert(p, 2, &pt, &res);
	if (r) {
		ASSERT_EQ(r->nintervals, 2, "two files, two intervals");
		const struct ps_tag_series *t = tag(r, "LSbf", "nonpaged");
		if (t) {
			ASSERT_STREQ(t->tag.owner, "srv2.sys", "owner");
			ASSERT_EQ(t->s[1].allocs, 2000, "allocs between the files");
			ASSERT_EQ(t->s[1].frees, 1000, "frees between the files");
			ASSERT_EQ(t->s[1].live_bytes - t->s[0].live_bytes, 1024000, "growth");
		}
		t = tag(r, "Io  ", "nonpaged");
		if (t)
			ASSERT_STREQ(t->tag.owner, "nt!io", "owner of a padded tag");
		ASSERT_U64_EQ(r->intervals[1].t_ns, 120000000000ULL, "interval spacing");
		ps_run_free(r);
	}
	ps_pooltag_free(&pt);
}

TEST(text_errors_name_the_line)
{
	char db[1024], err[600];
	struct ps_trace *t;
	struct ps_convert_result res;
	const char *none = write_file("none.txt", "hello\nworld\n");
	const char *bad = write_file("bad.log",
		" Tag  Type     Allocs         Frees    Diff   Bytes    Per Alloc\n"
		" LSbf Nonp       1000       900       100   102400       1024\n"
		" Bad1 Nonp       xx\n");
	struct ps_convert_opts o = { .interval_ns = 1000000000ULL };

	ASSERT_EQ(ps_convert_detect(none), PS_INPUT_UNKNOWN, "not pool text");
	snprintf(db, sizeof(db), "%s/e.db", ps_test_tmpdir());
	if (!ASSERT_OK(ps_trace_create(&t, db, PS_TRACE_F_FORCE), "create"))
		return;
	const char *p1[] = { none };
	ASSERT_EQ(ps_convert_text(t, p1, 1, &o, &res, err, sizeof(err)), -PS_ERR__SYNTAX, "no rows");
	ASSERT_STRSTR(err, "none.txt: no poolmon or !poolused pool rows found in 2 lines", "message");
	ps_trace_close(t);
	if (!ASSERT_OK(ps_trace_create(&t, db, PS_TRACE_F_FORCE), "create"))
		return;
	const char *p2[] = { bad };
	ASSERT_OK(ps_convert_text(t, p2, 1, &o, &res, err, sizeof(err)), "partial");
	ASSERT_EQ(res.problems, 1, "one bad row");
	ASSERT_STRSTR(res.first_problem, "bad.log: line 3", "names the line");
	ASSERT_STRSTR(res.first_problem, "without its numbers", "says what is missing");
	ps_trace_close(t);

	/*
	 * Numbers past 2^52 (strtoull() saturates at 2^64-1, which read as -1 live bytes) make
	 * their row a problem, in poolmon and in !poolused rows; the sound rows stay.
	 */
	const struct { const char *path, *line; size_t ntags; } absurd[] = {
		{ write_file("absurd.log",
			" Tag  Type     Allocs         Frees    Diff   Bytes    Per Alloc\n"
			" LSbf Nonp       1000       900       100   99999999999999999999       1024\n"
			" Irp  Paged         7         3         4      512        128\n"),
		  "absurd.log: line 2: a pool row with a number beyond 2^52", 1 },
		/* a !poolused row is a nonpaged and a paged tag */
		{ write_file("absurd-used.txt",
			"0: kd> !poolused\n"
			" Tag    Allocs     Used    Allocs     Used\n"
			" AcpA        3      192         1   9007199254740993ACPI Pooltags\n"
			" AcpB        0        0         4      576ACPI Pooltags\n"),
		  "absurd-used.txt: line 3: a pool row with a number beyond 2^52", 2 },
	};
	for (int i = 0; i < 2; i++) {
		const char *p3[] = { absurd[i].path };
		struct ps_run *r = convert(p3, 1, NULL, &res);

		if (!r)
			continue;
		ASSERT_EQ(res.problems, 1, absurd[i].path);
		ASSERT_STRSTR(res.first_problem, absurd[i].line, absurd[i].path);
		ASSERT_EQ(r->ntags, absurd[i].ntags, "the sound row only");
		for (size_t k = 0; k < r->ntags; k++)
			ASSERT_TRUE(r->tags[k].s[0].live_bytes >= 0, "no negative bytes");
		ps_run_free(r);
	}
	ASSERT_EQ(ps_pooltag_load(&(struct ps_pooltags){ 0 }, none, err, sizeof(err)),
		  -PS_ERR__SYNTAX, "not a pooltag file");
	ASSERT_STRSTR(err, "not a pooltag.txt", "pooltag message");
}

/*
 * The poolmon layouts of Microsoft's debugger documentation put one or two spaces between the
 * tag and the type ("Strg Paged", "Strg  Paged"), and tags shorter than 4 characters are padded
 * ("CM  "): every one keeps its whole tag, with the bytes of its row.
 */
TEST(poolmon_tag_columns)
{
	struct ps_convert_result res;
	const char *p[] = { write_file("layouts.log",
		" Tag  Type     Allocs            Frees            Diff   Bytes      Per Alloc\n"
		"\n"
		" Strg  Paged    10385 ( 10)    10385 ( 10)    0       0 (     0)       0\n"
		" CM    Paged      466 (  0)      413 (  0)   53   79552 (     0)    1500\n"
		" Fat   Nonp        20 (  0)       10 (  0)   10    4096 (     0)     409\n"
		"Io    Nonp       100 (  2)       90 (  1)   10    2048 (   128)     204\n"
		" Ntfx Nonp      5000           4000         1000  512000            512\n"
		" Toolong Nonp      1              0            1      64             64\n") };
	struct ps_run *r = convert(p, 1, NULL, &res);
	const struct ps_tag_series *t;

	if (!r)
		return;
	ASSERT_EQ(r->ntags, 5, "five rows; a 7-character 'tag' is not a row");
	ASSERT_EQ(res.problems, 0, "no problem");
	ASSERT_EQ(res.skipped, 1, "the line that is not a row counted");
	if ((t = tag(r, "Strg", "paged")))
		ASSERT_EQ(t->s[0].live_bytes, 0, "Strg bytes");
	if ((t = tag(r, "CM  ", "paged")))
		ASSERT_EQ(t->s[0].live_bytes, 79552, "CM bytes");
	if ((t = tag(r, "Fat ", "nonpaged")))
		ASSERT_EQ(t->s[0].live_bytes, 4096, "Fat bytes");
	if ((t = tag(r, "Io  ", "nonpaged")))
		ASSERT_EQ(t->s[0].live_bytes, 2048, "a row without the margin");
	if ((t = tag(r, "Ntfx", "nonpaged")))
		ASSERT_EQ(t->s[0].live_objs, 1000, "Ntfx objects");
	ps_run_free(r);
}

/*
 * Ordinary windbg output around !poolused: prompts, the cache manager's statistics lines whose
 * first word is a number ("2257 full reads broken into 2626 partial reads"). They are skipped
 * and counted, not problems; a row with some numbers but not four still is one.
 */
TEST(poolused_windbg_noise_lines)
{
	struct ps_convert_result res;
	const char *p[] = { write_file("windbg.txt",
		"0: kd> !poolused 2\n"
		"   Sorting by  NonPaged Pool Consumed\n"
		"\n"
		"  Pool Used:\n"
		"            NonPaged            Paged\n"
		" Tag    Allocs     Used    Allocs     Used\n"
		" LSbf      100   102400         0        0SMB buffers\n"
		" 2257 full reads broken into 2626 partial reads\n"
		" 1234 copy read hits\n"
		" CM31       10     4096        20    81920Configuration Manager\n"
		" Cut1       10     4096\n"
		"0: kd> g\n") };
	struct ps_run *r = convert(p, 1, NULL, &res);

	if (!r)
		return;
	ASSERT_EQ(r->ntags, 4, "LSbf and CM31, each nonpaged and paged");
	ASSERT_EQ(res.problems, 1, "the row cut short");
	ASSERT_STRSTR(res.first_problem, "windbg.txt: line 11", "names it");
	ASSERT_EQ(res.skipped, 3, "statistics lines and the prompt skipped");
	ps_run_free(r);
}

/*
 * `!poolused 2` and `!poolused 4` of one dump, converted as two snapshots: CM31 is listed only in
 * the second, Ntfx only in the first. A snapshot that does not list a tag says nothing about
 * it: neither tag grows (CM31 was counted from 0 before: +87.5 MiB), and a trace saved again
 * keeps where each tag was first listed.
 */
TEST(poolused_tag_not_listed_is_unknown)
{
	struct ps_convert_result res;
	const char *p[] = {
		write_file("used2.txt",
			"0: kd> !poolused 2\n"
			" Tag    Allocs     Used    Allocs     Used\n"
			" LSbf      100   102400         0        0SMB buffers\n"
			" Ntfx       10     4096         0        0NTFS\n"),
		write_file("used4.txt",
			"0: kd> !poolused 4\n"
			" Tag    Allocs     Used    Allocs     Used\n"
			" LSbf      100   102400         0        0SMB buffers\n"
			" CM31        0        0      700 91750400Configuration Manager\n"),
	};
	char db[1024], err[300];
	struct ps_run *r = convert(p, 2, NULL, &res), *r2 = NULL;
	const struct ps_tag_series *t;

	if (!r)
		return;
	ASSERT_EQ(r->nintervals, 2, "two snapshots");
	if ((t = tag(r, "CM31", "paged"))) {
		ASSERT_EQ(t->first, 1, "first listed in the second snapshot");
		ASSERT_EQ(t->s[1].live_bytes - t->s[0].live_bytes, 0, "no growth from 0");
	}
	if ((t = tag(r, "Ntfx", "nonpaged"))) {
		ASSERT_EQ(t->first, 0, "listed in the first");
		ASSERT_EQ(t->s[1].live_bytes, 4096, "carried over the snapshot that does not list it");
	}
	snprintf(db, sizeof(db), "%s/saved.db", ps_test_tmpdir());
	if (ASSERT_OK(ps_run_save(r, db, PS_TRACE_F_FORCE, err, sizeof(err)), err) &&
	    ASSERT_OK(ps_run_load(&r2, db, err, sizeof(err)), err)) {
		if ((t = tag(r2, "CM31", "paged")))
			ASSERT_EQ(t->first, 1, "saved and loaded: still first listed in the second");
		ps_run_free(r2);
	}
	ps_run_free(r);
}

/*
 * poolmon's console rows carry each counter's change since the previous refresh "( n)". A tag
 * first listed in a later screen whose Allocs equal their change made every allocation it ever
 * made since that refresh: it held nothing before, and its growth counts from 0 (a driver that
 * started leaking during the capture). One whose Allocs exceed their change existed before and
 * was not listed: unknown before, as with snapshots without the column. Both survive a save.
 */
TEST(poolmon_delta_tells_new_tag)
{
	struct ps_convert_result res;
	const char *p[] = {
		write_file("screen1.txt",
			" Tag  Type     Allocs            Frees            Diff   Bytes       Per Alloc\n"
			" LSbf Nonp       100 (   0)        50 (   0)        50    51200 (     0)   1024\n"),
		write_file("screen2.txt",
			" Tag  Type     Allocs            Frees            Diff   Bytes       Per Alloc\n"
			" LSbf Nonp       100 (   0)        50 (   0)        50    51200 (     0)   1024\n"
			" Leak Nonp       900 ( 900)       100 ( 100)       800   819200 (819200)   1024\n"
			" Old  Nonp      5000 (  10)      4000 (  10)      1000  1024000 (     0)   1024\n"),
	};
	char db[1024], err[300];
	struct ps_run *r = convert(p, 2, NULL, &res), *r2 = NULL;
	const struct ps_tag_series *t;
	struct ps_report rep;

	if (!r)
		return;
	ASSERT_EQ(res.problems, 0, res.first_problem);
	if ((t = tag(r, "Leak", "nonpaged"))) {
		ASSERT_TRUE(t->tag.flags & PS_TAG_F_BORN_LATE, "Allocs == their change: born late");
		ASSERT_EQ(t->s[0].live_bytes, 0, "held nothing in the first screen");
		ASSERT_EQ(t->s[1].live_bytes, 819200, "all of it grew");
	}
	if ((t = tag(r, "Old ", "nonpaged"))) {
		ASSERT_FALSE(t->tag.flags & PS_TAG_F_BORN_LATE, "Allocs > their change: existed");
		ASSERT_EQ(t->s[1].live_bytes - t->s[0].live_bytes, 0, "unknown before: no growth");
	}
	if (ASSERT_OK(ps_report_rank(&rep, r, 0, UINT64_MAX), "report")) {
		ASSERT_EQ(rep.listed_late, 1, "only Old counts as listed late");
		ps_report_free(&rep);
	}
	snprintf(db, sizeof(db), "%s/saved.db", ps_test_tmpdir());
	if (ASSERT_OK(ps_run_save(r, db, PS_TRACE_F_FORCE, err, sizeof(err)), err) &&
	    ASSERT_OK(ps_run_load(&r2, db, err, sizeof(err)), err)) {
		if ((t = tag(r2, "Leak", "nonpaged")))
			ASSERT_EQ(t->s[0].live_bytes, 0, "saved and loaded: still born late");
		ps_run_free(r2);
	}
	ps_run_free(r);
}

/*
 * Without pooltag.txt the well-known tags of the seed's question still get their drivers, from
 * the project's own table, flagged so; the user's pooltag.txt wins where it names a binary.
 */
TEST(builtin_pool_tag_owners)
{
	static const struct { const char *tag, *pool, *owner; } want[] = {
		{ "NtFs", "paged", "ntfs.sys" },    { "TcpE", "nonpaged", "tcpip.sys" },
		{ "LS2f", "nonpaged", "srv2.sys" }, { "LS05", "nonpaged", "srvnet.sys" },
		{ "LS20", "nonpaged", "srvnet.sys" }, { "LSbf", "nonpaged", "srvnet.sys" },
		{ "LSss", "nonpaged", "srv.sys" },  { "Afd?", NULL, NULL },
	};
	struct ps_convert_result res;
	struct ps_pooltags pt;
	char err[300];
	const char *text =
		" Tag  Type     Allocs         Frees    Diff   Bytes    Per Alloc\n"
		" NtFs Paged      1000       900       100   102400       1024\n"
		" TcpE Nonp         10         5         5     500        100\n"
		" LS2f Nonp         10         5         5     500        100\n"
		" LS05 Nonp         10         5         5     500        100\n"
		" LS20 Nonp         10         5         5     500        100\n"
		" LSbf Nonp         10         5         5     500        100\n"
		" LSss Nonp         10         5         5     500        100\n"
		" Zzzz Nonp         10         5         5     500        100\n";
	const char *p[] = { write_file("owners.log", text) };
	struct ps_run *r = convert(p, 1, NULL, &res);
	const struct ps_tag_series *t;

	if (!r)
		return;
	for (size_t i = 0; want[i].pool; i++) {
		if (!(t = tag(r, want[i].tag, want[i].pool)))
			continue;
		ASSERT_STREQ(t->tag.owner, want[i].owner, want[i].tag);
		ASSERT_TRUE(t->tag.flags & PS_TAG_F_OWNER_BUILTIN, "flagged built-in");
	}
	if ((t = tag(r, "Zzzz", "nonpaged")))
		ASSERT_TRUE(!t->tag.owner && !(t->tag.flags & PS_TAG_F_OWNER_BUILTIN), "unknown tag");
	/* the paths of the seed's question, with the shipped rules */
	struct ps_rules *rs = NULL;
	struct ps_report rep;

	if (ASSERT_OK(ps_rules_load(&rs, ps_test_srcpath("analysis/rules/default.rules"), err,
				    sizeof(err)), err) &&
	    ASSERT_OK(ps_report_build(&rep, r, rs, 0, UINT64_MAX), "report")) {
		for (size_t i = 0; i < rep.nrows; i++) {
			const struct ps_report_row *w = &rep.rows[i];
			const char *n = w->ts->tag.name;

			if (!strcmp(n, "NtFs")) {
				ASSERT_STREQ(w->a.cls, "file-services/filesystem", "NtFs");
				ASSERT_STRSTR(w->a.evidence, "from the built-in tag table", "says so");
			} else if (!strcmp(n, "TcpE")) {
				ASSERT_STREQ(w->a.cls, "network", "TcpE");
			} else if (!strcmp(n, "LS2f")) {
				ASSERT_STREQ(w->a.cls, "file-services/smb-server", "LS2f");
			} else if (!strcmp(n, "LSbf")) {
				ASSERT_STREQ(w->a.cls, "network/smb-transport", "LSbf");
			}
		}
		ps_report_free(&rep);
	}
	ps_rules_free(rs);
	ps_run_free(r);

	const char *ptf = write_file("mine.txt", "LSbf - mysrv.sys - mine\nNtFs - <unknown> - ?\n");
	if (!ASSERT_OK(ps_pooltag_load(&pt, ptf, err, sizeof(err)), err))
		return;
	p[0] = write_file("owners2.log", text);
	r = convert(p, 1, &pt, &res);
	if (r) {
		if ((t = tag(r, "LSbf", "nonpaged"))) {
			ASSERT_STREQ(t->tag.owner, "mysrv.sys", "the user's pooltag.txt wins");
			ASSERT_FALSE(t->tag.flags & PS_TAG_F_OWNER_BUILTIN, "not flagged");
		}
		if ((t = tag(r, "NtFs", "paged")))
			ASSERT_STREQ(t->tag.owner, "ntfs.sys", "an entry without a binary says nothing");
		ps_run_free(r);
	}
	ps_pooltag_free(&pt);
}

/*
 * Short lines in a console capture (a "q" typed to quit, a stray word) came after longer rows
 * in the same line buffer: the old loop started past a short line's end and read a second row
 * from the row before it, and a type word in column 4 made it copy a tag from before the line.
 */
TEST(poolmon_short_lines)
{
	struct ps_convert_result res;
	const char *p[] = { write_file("short.log",
		" Memory:  100000K Avail:   50000K  PageFlts:     0   InRam Krnl: 1000K P: 2000K\n"
		" Tag  Type     Allocs            Frees            Diff   Bytes       Per Alloc\n"
		"\n"
		" AfdB Nonp      100 (   0)        50 (   0)        50    64000 (     0)   1280\n"
		"ab\n"
		"q\n"
		" Nt Paged  2 862 94     94495\n"
		" Irp  Paged      7 (   0)         3 (   0)         4      512 (     0)    128\n") };
	struct ps_run *r = convert(p, 1, NULL, &res);

	if (!r)
		return;
	ASSERT_EQ(r->ntags, 2, "the two rows, nothing from the short lines");
	ASSERT_EQ(res.problems, 0, res.first_problem);
	const struct ps_tag_series *t = tag(r, "AfdB", "nonpaged");
	if (t)
		ASSERT_EQ(t->s[0].live_bytes, 64000, "AfdB Bytes");
	t = tag(r, "Irp ", "paged");
	if (t)
		ASSERT_EQ(t->s[0].live_bytes, 512, "Irp Bytes");
	ps_run_free(r);
}

/*
 * Summary figures past 2^52 bytes (the K figure times 1024 overflowed int64) read as absent,
 * not as a wrapped or negative size.
 */
TEST(poolmon_absurd_summary)
{
	struct ps_convert_result res;
	const char *p[] = { write_file("summary.log",
		" Memory:  100000K Avail:   99999999999999999999K  PageFlts:     0   InRam Krnl: 1000K\n"
		" Commit: 10000K Limit: 20000K Peak: 15000K            Pool N: 9007199254740993K P: 2000K\n"
		" Tag  Type     Allocs            Frees            Diff   Bytes       Per Alloc\n"
		" AfdB Nonp      100 (   0)        50 (   0)        50    64000 (     0)   1280\n") };
	struct ps_run *r = convert(p, 1, NULL, &res);

	if (!r)
		return;
	ASSERT_EQ(r->ntags, 1, "the row");
	ASSERT_TRUE(ps_run_sys(r, "NonPagedPool") == NULL, "no NonPagedPool figure");
	ASSERT_TRUE(ps_run_sys(r, "AvailableBytes") == NULL, "no AvailableBytes figure");
	const struct ps_series *pp = ps_run_sys(r, "PagedPool");
	if (ASSERT_NOT_NULL(pp, "PagedPool"))
		ASSERT_EQ(pp->v[0], 2000LL * 1024, "the sound figure stays");
	ps_run_free(r);
}

/*
 * Each row within 2^52 bytes, 600 of them past 2^61 (2 EiB) together, where the trace reader
 * calls a snapshot damaged: the rows that would pass it are skipped and reported, the first one
 * by its line, and the trace written loads (before, the reader refused it).
 */
TEST(poolmon_rows_past_2eib_skipped)
{
	struct ps_convert_result res;
	char *text = malloc(600 * 100 + 200), *q = text;

	if (!ASSERT_NOT_NULL(text, "malloc"))
		return;
	q += sprintf(q, " Tag  Type     Allocs            Frees            Diff   Bytes       Per Alloc\n");
	for (int i = 0; i < 600; i++)
		q += sprintf(q, " A%03d Nonp      1 (   0)        0 (   0)        1    4503599627370496 "
			     "(     0)   1\n", i);
	const char *p[] = { write_file("huge.log", text) };
	struct ps_run *r = convert(p, 1, NULL, &res);

	free(text);
	if (!r)
		return;
	/* 511 x (2^52 bytes + 1 object) is within 2^61, the 512th row passes it */
	ASSERT_EQ(r->ntags, 600, "every tag named");
	ASSERT_EQ(res.problems, 89, "the rows from the 512th");
	ASSERT_STRSTR(res.first_problem, "huge.log: line 513: a pool row whose numbers take the tags' "
		      "figures past 2^61", res.first_problem);
	const struct ps_tag_series *t = tag(r, "A510", "nonpaged");
	if (ASSERT_NOT_NULL(t, "A510"))
		ASSERT_EQ(t->s[0].live_bytes, 1ll << 52, "kept");
	t = tag(r, "A511", "nonpaged");
	if (ASSERT_NOT_NULL(t, "A511"))
		ASSERT_EQ(t->s[0].live_bytes, 0, "skipped");
	ps_run_free(r);
}

/* The file at src re-encoded as UTF-16 (le or be) with its byte-order mark, or with a UTF-8 mark. */
static const char *reencode(const char *src, const char *name, int how)
{
	static char path[2][1024];
	static int k;
	char *p = path[k++ & 1];
	FILE *in = fopen(src, "rb"), *out;
	int ch;

	snprintf(p, 1024, "%s/%s", ps_test_tmpdir(), name);
	out = fopen(p, "wb");
	if (!ASSERT_NOT_NULL(in, src) || !ASSERT_NOT_NULL(out, p))
		return p;
	if (how == 8)
		fputs("\xef\xbb\xbf", out);
	else
		fputs(how == 'l' ? "\xff\xfe" : "\xfe\xff", out);
	while ((ch = getc(in)) != EOF) {
		if (how == 'l')
			putc(ch, out), putc(0, out);
		else if (how == 'b')
			putc(0, out), putc(ch, out);
		else
			putc(ch, out);
	}
	fclose(in);
	fclose(out);
	return p;
}

/*
 * PowerShell 5 writes a redirected capture as UTF-16LE with a mark: it converts as the ASCII file
 * does, as do UTF-16BE and a UTF-8 mark.
 */
TEST(poolmon_utf16_and_marks)
{
	const char *src = corpus_path("windows/poolmon_n_snapshot_intel_mfd.txt");
	static const struct { int how; const char *name; } enc[] = {
		{ 'l', "le.txt" }, { 'b', "be.txt" }, { 8, "bom8.txt" },
	};

	if (!corpus_have("windows/poolmon_n_snapshot_intel_mfd.txt"))
		return;
	for (size_t i = 0; i < sizeof(enc) / sizeof(enc[0]); i++) {
		struct ps_convert_result res;
		const char *p[] = { reencode(src, enc[i].name, enc[i].how) };

		ASSERT_EQ(ps_convert_detect(p[0]), PS_INPUT_POOLMON, enc[i].name);
		struct ps_run *r = convert(p, 1, NULL, &res);
		if (!r)
			continue;
		ASSERT_EQ(r->ntags, 13, enc[i].name);
		ASSERT_EQ(res.problems, 0, res.first_problem);
		const struct ps_tag_series *t = tag(r, "EtwB", "nonpaged");
		if (t)
			ASSERT_EQ(t->s[0].live_bytes, 163418368, enc[i].name);
		const struct ps_series *np = ps_run_sys(r, "NonPagedPool");
		if (ASSERT_NOT_NULL(np, enc[i].name))
			ASSERT_EQ(np->v[0], 710920LL * 1024, enc[i].name);
		ps_run_free(r);
	}
}

/*
 * A NUL byte in a row (a damaged capture) ends what is read of that row, and the next row is
 * still read: the old overlong-line check looked for the newline with strchr() and, stopped by
 * the NUL, skipped the next line as the rest of this one.
 */
TEST(poolmon_nul_in_row)
{
	static const char text[] =
		" Tag  Type     Allocs            Frees            Diff   Bytes       Per Alloc\n"
		" AfdB Nonp      100 (   0)        50 (   0)        50    64000 (     0)   1280 afd\0.sys\n"
		" Irp  Paged      7 (   0)         3 (   0)         4      512 (     0)    128\n";
	char path[1024];
	struct ps_convert_result res;
	FILE *f;

	snprintf(path, sizeof(path), "%s/nul.log", ps_test_tmpdir());
	f = fopen(path, "wb");
	if (!ASSERT_NOT_NULL(f, path))
		return;
	fwrite(text, 1, sizeof(text) - 1, f);
	fclose(f);
	const char *p[] = { path };
	struct ps_run *r = convert(p, 1, NULL, &res);
	if (!r)
		return;
	ASSERT_EQ(r->ntags, 2, "both rows");
	const struct ps_tag_series *t = tag(r, "Irp ", "paged");
	if (t)
		ASSERT_EQ(t->s[0].live_bytes, 512, "the row after the NUL");
	ps_run_free(r);
}

TEST(detect_kinds)
{
	const char *s = write_file("s.txt", "#poolscope-sample v1\nfoo\n");
	ASSERT_EQ(ps_convert_detect(s), PS_INPUT_POOLSAMPLE, "sample magic");
	if (corpus_have("etl/lxcore_kernel.etl"))
		ASSERT_EQ(ps_convert_detect(corpus_path("etl/lxcore_kernel.etl")), PS_INPUT_ETL, "etl");
	if (corpus_have("etl/net.4.5.2.x86.etl"))
		ASSERT_EQ(ps_convert_detect(corpus_path("etl/net.4.5.2.x86.etl")), PS_INPUT_ETL, "etl");
	ASSERT_EQ(ps_convert_detect("/nonexistent/x"), -ENOENT, "missing");
}
