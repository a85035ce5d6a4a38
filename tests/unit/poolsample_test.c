// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for the shared pool sample writer and the tag helpers (formatting as poolmon does,
 * wildcard lists).  The reader/converter is not written yet, so the writer's output is
 * checked line by line.
 */
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "userspace/lib/etw/poolsample.h"

TEST(tag_format)
{
	char t[5];

	ps_pool_tag_format(0x6662534c, t);	/* bytes 'L','S','b','f' */
	if (!ASSERT_STREQ(t, "LSbf", "LSbf"))
		return;
	ps_pool_tag_format(0x20206f49, t);	/* "Io  ": trailing spaces kept */
	if (!ASSERT_STREQ(t, "Io  ", "trailing spaces"))
		return;
	ps_pool_tag_format(0x01416141, t);
	if (!ASSERT_STREQ(t, "AaA.", "non-printable as dot"))
		return;
	/*
	 * PROTECTED_POOL (bit 31) is a flag, not part of the tag: the kernel strips it before it
	 * counts the tag, so poolmon and !poolused print "Ntfx", never "Ntf.".
	 */
	ps_pool_tag_format(0x7866744e | 0x80000000u, t);
	if (!ASSERT_STREQ(t, "Ntfx", "protected bit cleared"))
		return;
	ps_pool_tag_format(0x80000000u, t);
	ASSERT_STREQ(t, "....", "only the protected bit");
}

TEST(tag_match)
{
	ASSERT_TRUE(ps_pool_tag_match("LS*", "LSbf"), "LS*");
	ASSERT_FALSE(ps_pool_tag_match("LS*", "Ntfx"), "LS* vs Ntfx");
	ASSERT_TRUE(ps_pool_tag_match("N?fx", "Ntfx"), "?");
	ASSERT_FALSE(ps_pool_tag_match("N?f", "Ntfx"), "short pattern");
	ASSERT_TRUE(ps_pool_tag_match_list("LS*,Tcp*", "TcpE"), "list second");
	ASSERT_FALSE(ps_pool_tag_match_list("LS*,Tcp*", "Ntfx"), "list none");
	ASSERT_TRUE(ps_pool_tag_match_list(NULL, "Ntfx"), "NULL list matches all");
}

TEST(writer_lines)
{
	const char *meta[] = { "host", "srv1", "interval_ns", "1000000000", NULL };
	char path[512], line[256];
	const char *want[] = {
		"#poolscope-sample 1\n", "#meta host\tsrv1\n", "#meta interval_ns\t1000000000\n",
	};
	FILE *f;
	int n = 0, saw_t = 0, saw_e = 0;

	snprintf(path, sizeof(path), "%s/p.tsv", ps_test_tmpdir());
	f = fopen(path, "w");
	if (!ASSERT_NOT_NULL(f, "fopen"))
		return;
	ASSERT_OK(ps_poolsample_write_header(f, meta), "header");
	ASSERT_OK(ps_poolsample_begin(f, 0, 123, 4096, 8192, 1 << 20), "begin");
	ASSERT_OK(ps_poolsample_tag(f, 0x6662534c, false, 10, 3, 7000), "tag");
	ASSERT_OK(ps_poolsample_end(f, 0), "end");
	fclose(f);
	f = fopen(path, "r");
	while (fgets(line, sizeof(line), f)) {
		if (n < 3 && !ASSERT_STREQ(line, want[n], "header line"))
			break;
		if (!strcmp(line, "T 6662534c nonpaged 10 3 7000\n"))
			saw_t = 1;
		if (!strcmp(line, "E 0\n"))
			saw_e = 1;
		n++;
	}
	fclose(f);
	ASSERT_TRUE(saw_t, "tag line");
	ASSERT_TRUE(saw_e, "end marker");
}

/* What "sample" says when the pool tag table cannot be read: advice for the codes it meets. */
TEST(query_errmsg)
{
	ASSERT_STRSTR(ps_poolsample_query_errmsg(0xC0000003), "does not provide the pool tag table",
		      "STATUS_INVALID_INFO_CLASS (Wine)");
	ASSERT_STRSTR(ps_poolsample_query_errmsg(0xC0000022), "elevated", "STATUS_ACCESS_DENIED");
	ASSERT_STRSTR(ps_poolsample_query_errmsg(0xC0000017), "memory", "STATUS_NO_MEMORY");
	ASSERT_TRUE(ps_poolsample_query_errmsg(0xC0000005) == NULL, "no advice: the code alone");
}
