// SPDX-License-Identifier: GPL-2.0
/*
 * The /proc/meminfo and /proc/slabinfo readers (userspace/lib/kmem/procstat.h) on texts written
 * here in the kernel's formats: kB fields in bytes, unitless fields as counts, slabinfo 2.1
 * columns, the tables reused from one read to the next; a wrong header or a malformed line is
 * an error naming the file and the line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "userspace/lib/kmem/procstat.h"
#include "userspace/lib/trace/keys.h"

/* The scratch file name holding text; returns its path. */
static const char *file(const char *name, const char *text)
{
	static char path[2][512];
	static int k;
	char *p = path[k++ & 1];
	FILE *f;

	snprintf(p, sizeof(path[0]), "%s/%s", ps_test_tmpdir(), name);
	f = fopen(p, "w");
	if (ASSERT_NOT_NULL(f, p)) {
		fputs(text, f);
		fclose(f);
	}
	return p;
}

static const char meminfo[] =
	"MemTotal:        4014232 kB\n"
	"Slab:              93496 kB\n"
	"SUnreclaim:        38612 kB\n"
	"HugePages_Total:       3\n"
	"Hugepagesize:       2048 kB\n";

static const char slabinfo[] =
	"slabinfo - version: 2.1\n"
	"# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : "
	"tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> "
	"<sharedavail>\n"
	"kmalloc-rcl-256      128    128    256   32    2 : tunables    0    0    0 : slabdata "
	"     4      4      0\n"
	"dentry             40950  41202    192   21    1 : tunables    0    0    0 : slabdata "
	"  1962   1962      0\n"
	":A-0000128            64     64    128   32    1 : tunables    0    0    0 : slabdata "
	"     2      2      0\n";

TEST(meminfo_fields)
{
	struct ps_meminfo_tab m = {};
	const char *p = file("meminfo", meminfo);
	char err[256];
	int64_t v = 0;

	if (!ASSERT_OK(ps_meminfo_read(&m, p, err, sizeof(err)), err))
		goto out;
	if (!ASSERT_EQ(m.n, 5, "five fields"))
		goto out;
	ASSERT_STREQ(m.f[0].name, "MemTotal", "first name");
	ASSERT_EQ(m.f[0].value, 4014232LL * 1024, "kB in bytes");
	ASSERT_STREQ(m.f[2].name, "SUnreclaim", "third name");
	ASSERT_EQ(m.f[2].value, 38612LL * 1024, "SUnreclaim bytes");
	ASSERT_STREQ(m.f[3].name, "HugePages_Total", "unitless field");
	ASSERT_EQ(m.f[3].value, 3, "a count, not scaled");
	/* A second read replaces the first. */
	p = file("meminfo2", "Slab: 1 kB\n");
	ASSERT_OK(ps_meminfo_read(&m, p, err, sizeof(err)), err);
	ASSERT_EQ(m.n, 1, "replaced");
	ASSERT_EQ(m.f[0].value, 1024, "new value");

	ASSERT_OK(ps_meminfo_get(file("meminfo", meminfo), "Slab", &v), "get Slab");
	ASSERT_EQ(v, 93496LL * 1024, "Slab bytes");
	ASSERT_EQ(ps_meminfo_get(p, "Cached", &v), -ENOENT, "absent field");
out:
	ps_meminfo_free(&m);
	ASSERT_TRUE(m.f == NULL && m.n == 0, "freed");
}

TEST(meminfo_bad)
{
	struct ps_meminfo_tab m = {};
	char err[256], where[600];
	const char *p;
	/* A field name longer than the reader keeps is refused rather than cut. */
	static const char *const bad[] = {
		"MemTotal: 1 kB\nno colon here\n",
		"MemTotal: 1 kB\nSlab: kB\n",
		"MemTotal: 1 kB\nAVeryLongFieldNameThatIsLongerThanSixtyFourCharactersIsNotMeminfo: 1\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = file("meminfo", bad[i]);
		ASSERT_EQ(ps_meminfo_read(&m, p, err, sizeof(err)), -EINVAL, bad[i]);
		snprintf(where, sizeof(where), "%s:2: expected", p);
		ASSERT_STRSTR(err, where, "names the file and line 2");
		ASSERT_EQ(m.n, 1, "the fields before the error");
	}
	snprintf(where, sizeof(where), "%s/none", ps_test_tmpdir());
	ASSERT_EQ(ps_meminfo_read(&m, where, err, sizeof(err)), -ENOENT, "missing file");
	ASSERT_STRSTR(err, where, "names the file");
	ps_meminfo_free(&m);
}

static const char sockstat[] =
	"sockets: used 180\n"
	"TCP: inuse 5 orphan 0 tw 2 alloc 7 mem 3\n"
	"UDP: inuse 2 mem 4\n"
	"UDPLITE: inuse 0\n"
	"RAW: inuse 0\n"
	"FRAG: inuse 1 memory 6000\n";

/* Appended after what the table holds, pages times the page size, FRAG in bytes. */
TEST(sockstat_fields)
{
	struct ps_meminfo_tab m = {};
	char err[256];

	ASSERT_EQ(ps_meminfo_read(&m, file("meminfo", meminfo), err, sizeof(err)), 0, err);
	ASSERT_EQ(ps_sockstat_read(&m, file("sockstat", sockstat), 4096, err, sizeof(err)), 0, err);
	if (ASSERT_EQ(m.n, 8, "5 meminfo fields and 3 socket fields")) {
		ASSERT_STREQ(m.f[5].name, PS_SYS_SOCK_TCP_MEM, "TCP");
		ASSERT_EQ(m.f[5].value, 3 * 4096, "TCP mem in bytes");
		ASSERT_STREQ(m.f[6].name, PS_SYS_SOCK_UDP_MEM, "UDP");
		ASSERT_EQ(m.f[6].value, 4 * 4096, "UDP mem in bytes");
		ASSERT_STREQ(m.f[7].name, PS_SYS_SOCK_FRAG_MEM, "FRAG");
		ASSERT_EQ(m.f[7].value, 6000, "FRAG memory is bytes already");
	}
	/* a kernel without one of the lines: the others still come */
	m.n = 0;
	ASSERT_EQ(ps_sockstat_read(&m, file("sockstat", "TCP: inuse 1 mem 2\n"), 4096, err,
				   sizeof(err)), 0, err);
	ASSERT_EQ(m.n, 1, "only TCP");
	ps_meminfo_free(&m);
}

TEST(sockstat_bad)
{
	struct ps_meminfo_tab m = {};
	char err[256], where[600];
	const char *p;
	static const char *const bad[] = {
		"sockets: used 1\nTCP: inuse 1 mem x\n",
		"sockets: used 1\nTCP: inuse 1 mem\n",
		"sockets: used 1\nUDP: inuse 1 mem -3\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = file("sockstat", bad[i]);
		ASSERT_EQ(ps_sockstat_read(&m, p, 4096, err, sizeof(err)), -EINVAL, bad[i]);
		snprintf(where, sizeof(where), "%s:2: expected", p);
		ASSERT_STRSTR(err, where, "names the file and line 2");
	}
	ps_meminfo_free(&m);
}

TEST(slabinfo_rows)
{
	struct ps_slabinfo_tab s = {};
	const char *p = file("slabinfo", slabinfo);
	char err[256];

	if (!ASSERT_OK(ps_slabinfo_read(&s, p, err, sizeof(err)), err))
		goto out;
	if (!ASSERT_EQ(s.n, 3, "three caches, header and comment skipped"))
		goto out;
	ASSERT_STREQ(s.row[0].cache, "kmalloc-rcl-256", "name");
	ASSERT_EQ(s.row[1].active_objs, 40950, "active_objs");
	ASSERT_EQ(s.row[1].num_objs, 41202, "num_objs");
	ASSERT_EQ(s.row[1].objsize, 192, "objsize");
	ASSERT_EQ(s.row[1].objperslab, 21, "objperslab");
	ASSERT_EQ(s.row[1].pagesperslab, 1, "pagesperslab");
	ASSERT_STREQ(s.row[2].cache, ":A-0000128", "merged group name");
	/* A header alone: no rows, and the table from before is not kept. */
	ASSERT_OK(ps_slabinfo_read(&s, file("slabinfo2", "slabinfo - version: 2.1\n"), err,
				   sizeof(err)), err);
	ASSERT_EQ(s.n, 0, "empty");
out:
	ps_slabinfo_free(&s);
}

TEST(slabinfo_bad)
{
	struct ps_slabinfo_tab s = {};
	char err[256], where[600];
	const char *p;

	p = file("slabinfo", "slabinfo - version: 1.1\ndentry 1 2 3 4 5\n");
	ASSERT_EQ(ps_slabinfo_read(&s, p, err, sizeof(err)), -EINVAL, "version 1.1");
	snprintf(where, sizeof(where), "%s:1: expected 'slabinfo - version: 2.x'", p);
	ASSERT_STREQ(err, where, "names the file and line 1");

	p = file("slabinfo", "slabinfo - version: 2.1\n# header\ndentry 1 2 3 4 5\nfilp 1 2 x 4 5\n");
	ASSERT_EQ(ps_slabinfo_read(&s, p, err, sizeof(err)), -EINVAL, "non-number column");
	snprintf(where, sizeof(where), "%s:4: expected", p);
	ASSERT_STRSTR(err, where, "names the file and line 4");
	ASSERT_EQ(s.n, 1, "the rows before the error");

	p = file("slabinfo", "slabinfo - version: 2.1\ndentry 1 2\n");
	ASSERT_EQ(ps_slabinfo_read(&s, p, err, sizeof(err)), -EINVAL, "short line");
	snprintf(where, sizeof(where), "%s:2: expected", p);
	ASSERT_STRSTR(err, where, "names the file and line 2");
	ps_slabinfo_free(&s);
}
