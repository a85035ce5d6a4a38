// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the pure parts of `poolscope load` (userspace/lib/workload/loadspec.c): sweep and pattern
 * parsing, smb:// URL and --user splitting, aligned offsets and latency percentiles.
 */
#include "test.h"
#include "userspace/lib/workload/loadspec.h"

#include <stdlib.h>

TEST(sweep_parse)
{
	struct ps_load_pattern p[PS_LOAD_MAX_STEPS];
	char err[128];
	int n = ps_load_parse_sweep("64k:rr,32k:rr,8k:oltp,4k:sw", p, PS_LOAD_MAX_STEPS, err, sizeof(err));

	if (!ASSERT_EQ(n, 4, "steps"))
		return;
	ASSERT_U64_EQ(p[0].bs, 65536, "bs0");
	ASSERT_TRUE(p[0].random && p[0].read_pct == 100, "rr");
	ASSERT_U64_EQ(p[2].bs, 8192, "bs2");
	ASSERT_EQ(p[2].read_pct, 70, "oltp reads");
	ASSERT_TRUE(p[2].random, "oltp random");
	ASSERT_TRUE(!p[3].random && p[3].read_pct == 0, "sw");
}

TEST(sweep_errors)
{
	struct ps_load_pattern p[PS_LOAD_MAX_STEPS];
	char err[128];

	ASSERT_ERR(ps_load_parse_sweep("8k:xx", p, 4, err, sizeof(err)), "bad pattern");
	ASSERT_STRSTR(err, "rr, rw, sr, sw or oltp", "message names patterns");
	ASSERT_ERR(ps_load_parse_sweep("8k", p, 4, err, sizeof(err)), "no colon");
	ASSERT_STRSTR(err, "BS:PATTERN", "message");
	ASSERT_ERR(ps_load_parse_sweep("100:rr", p, 4, err, sizeof(err)), "bs not 512-multiple");
	ASSERT_ERR(ps_load_parse_sweep("32M:rr", p, 4, err, sizeof(err)), "bs too big");
	ASSERT_ERR(ps_load_parse_sweep("", p, 4, err, sizeof(err)), "empty");
	ASSERT_ERR(ps_load_parse_sweep("8k:rr,8k:rr,8k:rr", p, 2, err, sizeof(err)), "too many");
}

TEST(url_parse)
{
	struct ps_smb_url u;

	if (!ASSERT_OK(ps_smb_url_parse("smb://10.201.7.1/share/dir/test.bin", &u), "parse"))
		return;
	ASSERT_STREQ(u.host, "10.201.7.1", "host");
	ASSERT_STREQ(u.share, "share", "share");
	ASSERT_STREQ(u.path, "dir/test.bin", "path");
	ASSERT_EQ(u.port, 0, "port");
	ASSERT_OK(ps_smb_url_parse("smb://127.0.0.1:4450/s/f", &u), "port url");
	ASSERT_EQ(u.port, 4450, "port");
	ASSERT_ERR(ps_smb_url_parse("smb://host/share", &u), "no path");
	ASSERT_ERR(ps_smb_url_parse("smb://host/share/", &u), "trailing slash");
	ASSERT_ERR(ps_smb_url_parse("smb://u:p@host/share/f", &u), "credentials in url");
	ASSERT_ERR(ps_smb_url_parse("smb://host:99999/share/f", &u), "bad port");
	ASSERT_ERR(ps_smb_url_parse("cifs://host/share/f", &u), "scheme");
}

TEST(user_parse)
{
	char d[32], u[32], p[32];

	ASSERT_OK(ps_smb_user_parse("root%pa%ss", d, sizeof(d), u, sizeof(u), p, sizeof(p)), "u%p");
	ASSERT_STREQ(u, "root", "user");
	ASSERT_STREQ(p, "pa%ss", "pass keeps later %");
	ASSERT_STREQ(d, "", "no domain");
	ASSERT_OK(ps_smb_user_parse("WG\\bob%x", d, sizeof(d), u, sizeof(u), p, sizeof(p)), "domain");
	ASSERT_STREQ(d, "WG", "domain");
	ASSERT_STREQ(u, "bob", "user");
	ASSERT_ERR(ps_smb_user_parse("%x", d, sizeof(d), u, sizeof(u), p, sizeof(p)), "empty user");
}

TEST(offsets_random_aligned_uniform)
{
	struct ps_offset_gen g;
	uint64_t span = 1000 * 8192 + 100, counts[1000] = { 0 };
	unsigned i, minc = ~0u, maxc = 0;

	ps_offset_gen_init(&g, 42, span, 8192, true, 0);
	ASSERT_U64_EQ(g.nblocks, 1000, "blocks (partial last block unused)");
	for (i = 0; i < 1000000; i++) {
		uint64_t off = ps_offset_next(&g);

		if (!ASSERT_TRUE(off % 8192 == 0 && off + 8192 <= span, "aligned, in range"))
			return;
		counts[off / 8192]++;
	}
	for (i = 0; i < 1000; i++) {
		if (counts[i] < minc) minc = counts[i];
		if (counts[i] > maxc) maxc = counts[i];
	}
	/* expected 1000 per block, sd ~32: 15% either way is > 4.5 sd */
	ASSERT_TRUE(minc > 850 && maxc < 1150, "uniform");
}

TEST(offsets_sequential_wrap)
{
	struct ps_offset_gen g;

	ps_offset_gen_init(&g, 1, 4 * 4096, 4096, false, 2);
	ASSERT_U64_EQ(ps_offset_next(&g), 8192, "start block");
	ASSERT_U64_EQ(ps_offset_next(&g), 12288, "next");
	ASSERT_U64_EQ(ps_offset_next(&g), 0, "wraps");
}

TEST(percentiles)
{
	uint64_t h[PS_LAT_BUCKETS] = { 0 };
	uint64_t p50, p99;

	/* 98 IOs at 1 ms, 2 at 10 ms */
	h[ps_lat_bucket(1000000)] = 98;
	h[ps_lat_bucket(10000000)] = 2;
	p50 = ps_lat_hist_percentile(h, PS_LAT_BUCKETS, 0.5, 10000000);
	p99 = ps_lat_hist_percentile(h, PS_LAT_BUCKETS, 0.99, 10000000);
	ASSERT_TRUE(p50 >= 1000000 && p50 <= 1125000, "p50 within a bucket above 1 ms");
	ASSERT_TRUE(p99 >= 9000000 && p99 <= 10000000, "p99 near 10 ms, capped by max");
	ASSERT_U64_EQ(ps_lat_hist_percentile(h, PS_LAT_BUCKETS, 0.98, 0),
		      ps_lat_bucket_lo(ps_lat_bucket(1000000) + 1), "p98 is the 1 ms bucket's top");
	memset(h, 0, sizeof(h));
	ASSERT_U64_EQ(ps_lat_hist_percentile(h, PS_LAT_BUCKETS, 0.5, 0), 0, "empty");
}

TEST(pattern_str)
{
	struct ps_load_pattern p = { 8192, true, 100 };
	char buf[64];

	ASSERT_STREQ(ps_load_pattern_str(&p, buf, sizeof(buf)), "8k randread", "rr");
	p.read_pct = 70;
	ASSERT_STREQ(ps_load_pattern_str(&p, buf, sizeof(buf)), "8k rand mix 70% read", "oltp");
}
