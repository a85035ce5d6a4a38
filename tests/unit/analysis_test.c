// SPDX-License-Identifier: GPL-2.0
/*
 * Analysis tests: rules parser (incl. bad files with line numbers), least squares and leak
 * score (leak vs plateau vs reclaimable), classification of this kernel's real symbols from
 * /proc/kallsyms with the shipped rules, and report output on Linux-like and Windows-like
 * fixture runs built in memory (80 columns, JSON shape, top suspect).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "analysis/analysis.h"
#include "analysis/diff.h"
#include "userspace/lib/util/util.h"
#include "analysis/verdict.h"

/* The report as the command prints it: with the kernel domain's verdict. */
static void print_report(FILE *m, const struct ps_report *rep, enum ps_fmt fmt)
{
	struct ps_verdict v;

	if (ASSERT_OK(ps_verdict_build(&v, rep, PS_DOMAIN_KERNEL), "verdict"))
		ps_report_print(m, rep, &v, fmt, 0);
}

static struct ps_rules *default_rules(void)
{
	struct ps_rules *rs = NULL;
	char err[256];

	if (ps_rules_load(&rs, ps_test_srcpath("analysis/rules/default.rules"), err, sizeof(err)))
		fprintf(stderr, "%s\n", err);
	return rs;
}

TEST(rules_bad_field_line)
{
	struct ps_rules *rs = NULL;
	char err[256] = "";
	int rc = ps_rules_parse(&rs, "x.rules", "# c\nnetwork frame tcp_*\nnetwork fram x\n",
				err, sizeof(err));

	if (!ASSERT_ERR(rc, "bad field rejected"))
		return;
	ASSERT_STRSTR(err, "x.rules:3:", "line number");
	ASSERT_STRSTR(err, "unknown field 'fram'", "names the field");
}

TEST(rules_bad_arity)
{
	struct ps_rules *rs = NULL;
	char err[256] = "";

	if (!ASSERT_ERR(ps_rules_parse(&rs, "y", "generic\n", err, sizeof(err)), "generic arity"))
		return;
	ASSERT_STRSTR(err, "y:1:", "line");
	ASSERT_ERR(ps_rules_parse(&rs, "y", "\n\nnetwork cache a b\n", err, sizeof(err)),
		   "module on cache");
	ASSERT_STRSTR(err, "y:3:", "line 3");
	ASSERT_ERR(ps_rules_parse(&rs, "y", "# only comments\n", err, sizeof(err)), "empty");
}

/* "lifetime cache|site PATTERN SECONDS": matched on the cache, or on the site without +off. */
TEST(rules_lifetime)
{
	struct ps_rules *rs = NULL;
	char err[256] = "";
	static const char *const bad[] = {
		"lifetime tw_sock_TCP 60\n",		/* the old two-field form */
		"lifetime frame x 60\n",
		"lifetime cache x 0\n",
		"lifetime cache x 86401\n",
		"lifetime cache x sixty\n",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		ASSERT_ERR(ps_rules_parse(&rs, "z", bad[i], err, sizeof(err)), bad[i]);
		ASSERT_STRSTR(err, "z:1: expected 'lifetime cache|site PATTERN SECONDS'", bad[i]);
	}
	if (!ASSERT_OK(ps_rules_parse(&rs, "z", "network cache TCP\nlifetime cache tw_sock_TCP* 60\n"
				      "lifetime site inet_bind2_bucket_create 61\n", err, sizeof(err)),
		       err))
		return;
	ASSERT_EQ(ps_rules_lifetime(rs, "tw_sock_TCPv6", NULL), 60, "cache glob");
	ASSERT_EQ(ps_rules_lifetime(rs, "kmalloc-128", "inet_bind2_bucket_create+0x2a"), 61,
		  "site without its offset");
	ASSERT_EQ(ps_rules_lifetime(rs, "TCP", "sk_prot_alloc+0x32"), 0, "neither");
	ASSERT_EQ(ps_rules_lifetime(rs, "inet_bind2_bucket_create", NULL), 0,
		  "a site rule does not match a cache");
	ps_rules_free(rs);
}

TEST(least_squares_known_slope)
{
	double x[5] = { 1, 2, 3, 4, 5 }, y[5];
	struct ps_fit f;

	for (int i = 0; i < 5; i++)
		y[i] = 100 + 4096.0 * x[i];
	f = ps_least_squares(x, y, 5);
	ASSERT_NEAR(f.slope, 4096.0, 1e-6, "slope");
	ASSERT_NEAR(f.r2, 1.0, 1e-9, "r2");
	y[1] += 3000;
	y[3] -= 3000;
	f = ps_least_squares(x, y, 5);
	ASSERT_TRUE(f.r2 < 0.9 && f.r2 > 0.3, "noisy r2 lower");
}

static struct ps_run *series_run(const int64_t *live, uint32_t n)
{
	struct ps_run *r = ps_run_new(n);

	for (uint32_t i = 0; i < n; i++)
		r->intervals[i].t_ns = (i + 1) * 1000000000ull;
	(void)live;
	return r;
}

TEST(score_leak_plateau_reclaim)
{
	int64_t leak[20], plat[20], noise[20];
	struct ps_growth gl, gp, gr, gn;
	struct ps_run *r = series_run(leak, 20);

	for (int i = 0; i < 20; i++) {
		leak[i] = 8192LL * i;
		plat[i] = i < 5 ? 32768LL * i : 131072 + (i % 2) * 512;
		noise[i] = 100000 + ((i * 7919) % 13) * 1000;
	}
	ps_growth_series(r, leak, 0, 19, false, &gl);
	ps_growth_series(r, plat, 0, 19, false, &gp);
	ps_growth_series(r, leak, 0, 19, true, &gr);
	ps_growth_series(r, noise, 0, 19, false, &gn);
	ASSERT_NEAR(gl.rate, 8192, 1e-6, "leak rate");
	ASSERT_TRUE(gl.score > 0.9, "leak scores high");
	ASSERT_TRUE(gp.score < 0.3, "plateau scores low");
	ASSERT_TRUE(gr.score < gl.score && gr.score > 0.4, "reclaimable halved, not hidden");
	ASSERT_TRUE(gn.score < 0.3, "noise scores low");
	ASSERT_NEAR(gl.grew_share, 1.0, 1e-9, "share");
	ps_run_free(r);
}

/* Looks sym up in /proc/kallsyms. */
static bool have_ksym(const char *sym)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256];
	bool found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %255s", name) == 1 && !strcmp(name, sym)) {
			found = true;
			break;
		}
	fclose(f);
	return found;
}

TEST(classify_kallsyms)
{
	static const struct { const char *sym, *mod, *cls; } cases[] = {
		{ "tcp_sendmsg_locked", NULL, "network" },
		{ "sk_prot_alloc", NULL, "network" },
		{ "__napi_poll", NULL, "network" },
		{ "ext4_alloc_inode", NULL, "file-services/filesystem" },
		{ "__d_alloc", NULL, "file-services/filesystem" },
		{ "alloc_empty_file", NULL, "file-services/filesystem" },
	};
	struct ps_rules *rs = default_rules();

	if (!ASSERT_TRUE(rs, "rules"))
		return;
	if (!have_ksym("tcp_sendmsg_locked")) {
		ps_test_skip("/proc/kallsyms not readable (no symbols)");
		goto out;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *c;

		ASSERT_TRUE(have_ksym(cases[i].sym), cases[i].sym);
		c = ps_classify_sym(rs, cases[i].sym, cases[i].mod, NULL);
		ASSERT_STREQ(c ? c : "(none)", cases[i].cls, cases[i].sym);
	}
	ASSERT_TRUE(have_ksym("__alloc_skb"), "__alloc_skb exists");
	/* skb data is network memory whatever asked for it: the walk stops at __alloc_skb */
	ASSERT_TRUE(!ps_rules_is_generic(rs, "__alloc_skb+0x10"), "__alloc_skb decides");
	ASSERT_STREQ(ps_classify_sym(rs, "__alloc_skb", NULL, NULL), "network", "__alloc_skb");
	ASSERT_STREQ(ps_classify_sym(rs, "kmalloc_reserve", NULL, NULL), "network",
		     "kmalloc_reserve");
	ASSERT_TRUE(ps_rules_is_generic(rs, "__kmalloc_node_track_caller_noprof"), "kmalloc");
	ASSERT_STREQ(ps_classify_sym(rs, "smb2_open", "ksmbd", NULL), "file-services/smb-server",
		     "smb2 ksmbd");
	ASSERT_STREQ(ps_classify_sym(rs, "smb2_open", "cifs", NULL), "other", "smb2 cifs");
out:
	ps_rules_free(rs);
}

static struct ps_tag_series *add(struct ps_run *r, const char *kind, const char *cache,
				 const char *site, int64_t step, int64_t id, uint32_t flags)
{
	struct ps_tag t = { .id = id, .kind = kind, .name = cache, .cache = cache,
			    .site_sym = site, .flags = flags };
	struct ps_tag_series *ts = ps_run_add_tag(r, &t);

	for (uint32_t i = 0; i < r->nintervals; i++) {
		ts->s[i].allocs = 10;
		ts->s[i].frees = step ? 5 : 10;
		ts->s[i].live_bytes = step * i;
	}
	return ts;
}

static struct ps_run *linux_run(void)
{
	struct ps_run *r = ps_run_new(10);
	struct ps_frame fr[3] = { { .sym = "kmalloc_reserve+0x20" },
				  { .sym = "__alloc_skb+0x99" },
				  { .sym = "tcp_stream_alloc_skb+0x30" } };
	struct ps_stack st = { .tag_id = 1, .hash = 1, .allocs = 4, .bytes = 4096,
			       .live_bytes = 4096, .nframes = 3, .frames = fr };
	struct ps_series *s;

	for (uint32_t i = 0; i < 10; i++)
		r->intervals[i].t_ns = (i + 1) * 1000000000ull;
	ps_run_set_meta(r, "os", "linux");
	st.tag_id = add(r, "kmalloc", "kmalloc-2k", "kmalloc_reserve+0x20", 65536, 1, 0)->tag.id;
	add(r, "slab", "dentry", NULL, 4096, 2, PS_TAG_F_RECLAIMABLE);
	add(r, "page", "order-0", "allocate_slab+0x1", 1 << 20, 3, PS_TAG_F_SLAB_BACKING);
	add(r, "slab", "filp", NULL, 0, 4, 0);
	ps_run_add_stack(r, &st);
	s = ps_run_add_sys(r, "SUnreclaim");
	for (uint32_t i = 0; i < 10; i++)
		s->v[i] = 100000000 + 70000 * i;
	ps_run_finish(r);
	return r;
}

TEST(report_linux_text_80)
{
	struct ps_rules *rs = default_rules();
	struct ps_run *r = linux_run();
	struct ps_report rep;
	char *buf = NULL, *line;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!ASSERT_TRUE(rs && r && m, "setup"))
		return;
	if (!ASSERT_OK(ps_report_build(&rep, r, rs, 0, UINT64_MAX), "build"))
		return;
	ASSERT_STREQ(rep.rows[0].a.cls, "network", "stack walks past generic helpers");
	ASSERT_STRSTR(rep.rows[0].a.evidence, "__alloc_skb", "evidence: the skb allocator frame");
	ASSERT_EQ(rep.tracked_growth, 65536 * 9 + 4096 * 9, "slab-backing pages not counted");
	ASSERT_EQ(rep.reclaimable_growth, 4096 * 9, "reclaimable flagged");
	print_report(m, &rep, PS_FMT_TEXT);
	fclose(m);
	/* filp never holds anything: not a suspect, in csv and json only */
	ASSERT_TRUE(strstr(buf, "filp") == NULL, "a tag that never held anything is not listed");
	ASSERT_STRSTR(buf, "dentry", "a tag that grew is");
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		ASSERT_TRUE(strlen(line) <= 80, line);
	free(buf);
	ps_report_free(&rep);
	ps_run_free(r);
	ps_rules_free(rs);
}

TEST(report_windows_json)
{
	struct ps_rules *rs = default_rules();
	struct ps_run *r = ps_run_new(6);
	struct ps_report rep;
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	if (!ASSERT_TRUE(rs && r, "setup"))
		return;
	for (uint32_t i = 0; i < 6; i++)
		r->intervals[i].t_ns = (i + 1) * 1000000000ull;
	ps_run_set_meta(r, "os", "windows");
	{
		struct ps_tag t = { .id = 7, .kind = "pool", .name = "LSbf", .cache = "LSbf",
				    .pool = "nonpaged", .owner = "srvnet.sys" };
		struct ps_tag_series *ts = ps_run_add_tag(r, &t);

		for (uint32_t i = 0; i < 6; i++)
			ts->s[i].live_bytes = 1000000LL * i;
	}
	add(r, "pool", "Ntfx", NULL, 10, 8, 0);
	ps_run_finish(r);
	if (!ASSERT_OK(ps_report_build(&rep, r, rs, 0, UINT64_MAX), "build"))
		return;
	ASSERT_STREQ(rep.sys_name, "NonPagedPool", "windows counter");
	ASSERT_STREQ(rep.rows[0].a.cls, "network/smb-transport", "LSbf class");
	m = open_memstream(&buf, &len);
	print_report(m, &rep, PS_FMT_JSON);
	fclose(m);
	ASSERT_STRSTR(buf, "\"schema\":\"poolscope.report/2\"", "schema id");
	ASSERT_STRSTR(buf, "\"verdict\":{\"state\":\"growing\"", "5 s: growing, never a leak");
	ASSERT_STRSTR(buf, "\"path\":\"network/smb-transport\"", "the path: LSbf's class");
	ASSERT_STRSTR(buf, "\"tag\":\"LSbf\"", "tag");
	ASSERT_TRUE(buf[strlen(buf) - 2] == '}', "closed");
	free(buf);
	ps_report_free(&rep);
	ps_run_free(r);
	ps_rules_free(rs);
}

TEST(report_by_path)
{
	struct ps_rules *rs = default_rules();
	struct ps_run *r = linux_run();
	struct ps_report rep;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!ASSERT_TRUE(rs && r && m, "setup"))
		return;
	if (!ASSERT_OK(ps_report_build(&rep, r, rs, 0, UINT64_MAX), "build"))
		return;
	{
		struct ps_verdict v;

		if (ASSERT_OK(ps_verdict_build(&v, &rep, PS_DOMAIN_KERNEL), "verdict"))
			ps_report_print_paths(m, &v, PS_FMT_CSV);
	}
	fclose(m);
	/*
	 * network: the kmalloc tag only (slab-backing page excluded): 9 * 64 KiB, rising clearly
	 * but over 9 s, too short to call; the page-cache tag is not kernel memory
	 */
	ASSERT_STRSTR(buf, "network,growing,589824,589824,", "network path total");
	ASSERT_STRSTR(buf, "\nfile-services,stable,0,0,", "filp flat; page cache is not kernel memory");
	free(buf);
	ps_report_free(&rep);
	ps_run_free(r);
	ps_rules_free(rs);
}

/* A tag of the network path (tag id 1). */
static const struct ps_tag tcp_tag = { .id = 1, .kind = "slab", .name = "TCP", .cache = "TCP",
				       .site_sym = "sk_prot_alloc+0x32" };

/*
 * Two paths that each grew less than the floor add up to a plateau of the domain: the sentence
 * names the path with most of it by its own state, never "PLATEAU on the network path" for a
 * path that is stable.
 */
TEST(verdict_spread_over_paths)
{
	struct ps_rules *rs = default_rules();
	struct ps_run *r = ps_run_new(31);
	struct ps_tag ot = { .id = 2, .kind = "slab", .name = "task_struct", .cache = "task_struct",
			     .site_sym = "copy_process+0x1a5" };
	struct ps_report rep;
	struct ps_verdict v;

	if (!ASSERT_TRUE(rs && r, "setup") || !ASSERT_NOT_NULL(ps_run_add_tag(r, &tcp_tag), "tag") ||
	    !ASSERT_NOT_NULL(ps_run_add_tag(r, &ot), "tag"))
		return;
	for (uint32_t i = 0; i < 31; i++) {
		r->intervals[i].t_ns = (i + 1) * 1000000000ull;
		r->tags[0].s[i].live_bytes = (int64_t)(i < 10 ? i : 10) * 21 * 1024;
		r->tags[1].s[i].live_bytes = (int64_t)(i < 10 ? i : 10) * 20 * 1024;
	}
	ps_run_finish(r);
	if (!ASSERT_OK(ps_report_build(&rep, r, rs, 0, UINT64_MAX), "build"))
		return;
	if (ASSERT_OK(ps_verdict_build(&v, &rep, PS_DOMAIN_KERNEL), "verdict")) {
		ASSERT_EQ(v.st.state, PS_V_PLATEAU, "410 KiB, then flat: the domain's plateau");
		ASSERT_STREQ(v.path, "network", "most of it");
		ASSERT_STRSTR(v.summary, "PLATEAU: unreclaimable kernel memory grew +410 KiB, then "
			      "stopped, most of it on the network path (stable)", "its own state");
	}
	ps_report_free(&rep);
	ps_run_free(r);
	ps_rules_free(rs);
}

/*
 * A leak per IO (7.3 bytes) under an IO rate that drifts +-30 %: around the line in time the
 * residuals are the drift integrated, and the trend test discounts them as autocorrelated
 * noise (p about 0.02, "trend not clear"). The verdict takes the workload's IOs as its clock
 * (ps_trend_fit_io) and calls it a leak, with its rate per IO.
 */
TEST(verdict_leak_per_io)
{
	struct ps_rules *rs = default_rules();
	struct ps_run *r = ps_run_new(61);
	struct ps_series *su;
	struct ps_report rep;
	struct ps_verdict v;
	double io = 0;

	if (!ASSERT_TRUE(rs && r && !ps_run_enable_workload(r), "setup") ||
	    !ASSERT_NOT_NULL(ps_run_add_tag(r, &tcp_tag), "tag") ||
	    !ASSERT_NOT_NULL(su = ps_run_add_sys(r, PS_SYS_SUNRECLAIM), "counter"))
		return;
	for (uint32_t i = 0; i < 61; i++) {
		uint64_t ios = i ? (uint64_t)(10000 * (1 + 0.3 * sin(2 * M_PI * i / 45))) : 0;

		io += (double)ios;
		r->intervals[i].t_ns = (i + 1) * 1000000000ull;
		r->workload[i].ios = ios;
		r->tags[0].s[i].live_bytes = (int64_t)(7.3 * io) + ((int64_t)(i % 3) - 1) * 256;
		su->v[i] = 100000000 + (int64_t)(7.3 * io) + ((int64_t)(i * 7 % 5) - 2) * 512;
	}
	ps_run_finish(r);
	if (!ASSERT_OK(ps_report_build(&rep, r, rs, 0, UINT64_MAX), "build"))
		return;
	if (ASSERT_OK(ps_verdict_build(&v, &rep, PS_DOMAIN_KERNEL), "verdict")) {
		ASSERT_EQ(v.st.state, PS_V_LEAK, "a leak, by the IOs");
		ASSERT_STREQ(v.path, "network", "its path");
		ASSERT_STREQ(v.confirmed_by, PS_SYS_SUNRECLAIM, "confirmed by its counter");
		ASSERT_NEAR(v.iops, io / 60, 1e-6, "IOs over the window's 60 s");
		/* the slope against the IOs; the rate over the mean IO rate would be 6.9 */
		ASSERT_NEAR(ps_verdict_per_io(&v), 7.3, 0.05, "7.3 bytes per IO");
		ASSERT_STRSTR(v.summary, ", 7.3 bytes per IO,", "in the sentence");
		ASSERT_STRSTR(v.summary, " bytes per IO, confirmed by SUnreclaim.", "said");
	}
	ps_report_free(&rep);
	ps_run_free(r);
	ps_rules_free(rs);
}

TEST(mixed_split_and_saved_trace)
{
	struct ps_rules *rs = default_rules();
	struct ps_run *r = linux_run(), *back = NULL;
	struct ps_frame fr[2] = { { .sym = "__kmalloc_noprof+0x1" }, { .sym = "ext4_find_extent+0x9" } };
	struct ps_stack st = { .tag_id = 1, .hash = 2, .allocs = 1, .bytes = 4096,
			       .live_bytes = 12288, .nframes = 2, .frames = fr };
	struct ps_report rep;
	char path[512], err[256] = "";
	int saved, found = 0;

	if (!ASSERT_TRUE(rs && r, "setup"))
		return;
	ps_run_add_stack(r, &st);
	snprintf(path, sizeof(path), "%s/fx.db", ps_test_tmpdir());
	saved = ps_run_save(r, path, 0, err, sizeof(err));
	if (!ASSERT_OK(saved, err) || !ASSERT_OK(ps_run_load(&back, path, err, sizeof(err)), err))
		return;
	if (!ASSERT_OK(ps_report_build(&rep, back, rs, 0, UINT64_MAX), "build"))
		return;
	for (size_t i = 0; i < rep.nrows; i++) {
		if (strcmp(rep.rows[i].ts->tag.cache, "kmalloc-2k"))
			continue;
		found++;
		/* 12 KiB live on the ext4 stack vs 4 KiB on the tcp stack */
		ASSERT_STREQ(rep.rows[i].a.cls, "file-services/filesystem", "heaviest stack wins");
		ASSERT_STRSTR(rep.rows[i].a.split, "network 25%", "split shows network share");
		ASSERT_STRSTR(rep.rows[i].a.split, "file-services/filesystem 75%", "split fs");
		ASSERT_NEAR(rep.rows[i].a.confidence, 0.9 * 0.75, 1e-9, "confidence");
	}
	ASSERT_EQ(found, 1, "kmalloc-2k row present after save/load");
	ps_report_free(&rep);
	ps_run_free(back);
	ps_run_free(r);
	ps_rules_free(rs);
}

/*
 * Ground truth: a kmalloc tag that grows 2 MiB while its cache's /proc/slabinfo line stays
 * flat (frees on an untraced path: kfree_rcu batches, kfree_bulk) is flagged unconfirmed and
 * its leak score scaled down; a dentry tag whose cache grew as much in slabinfo keeps its score.
 * A merged cache is looked up under the name the kernel reported (cache_alias).
 */
TEST(slabinfo_cross_check)
{
	struct ps_rules *rs = default_rules();
	struct ps_run *r = ps_run_new(10);
	struct ps_tag kt = { .id = 1, .kind = "kmalloc", .name = "kmalloc-256", .cache = "kmalloc-256",
			     .site_sym = "do_epoll_create+0x2d" };
	struct ps_tag dt = { .id = 2, .kind = "slab", .name = "skbuff_fclone_cache",
			     .cache = "skbuff_fclone_cache", .cache_alias = "pool_workqueue" };
	struct ps_tag_series *k, *d;
	struct ps_slab_series *sk, *sd;
	const struct ps_report_row *rk = NULL, *rd = NULL;
	struct ps_report rep;
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	if (!ASSERT_TRUE(rs && r, "setup"))
		return;
	k = ps_run_add_tag(r, &kt);
	d = ps_run_add_tag(r, &dt);
	sk = ps_run_add_slab(r, "kmalloc-256", 256);
	sd = ps_run_add_slab(r, "pool_workqueue", 512);
	if (!ASSERT_TRUE(k && d && sk && sd, "series"))
		return;
	/* each add may move the array: the first pointers are stale after the second add */
	k = &r->tags[0];
	d = &r->tags[1];
	sk = &r->slab[0];
	sd = &r->slab[1];
	for (uint32_t i = 0; i < 10; i++) {
		r->intervals[i].t_ns = (i + 1) * 1000000000ull;
		k->s[i].live_bytes = (int64_t)i * 8192 * 256 / 9;	/* 0 .. 2 MiB */
		d->s[i].live_bytes = (int64_t)i * 4096 * 512 / 9;	/* 0 .. 2 MiB */
		sk->active_objs[i] = 1000 + (i & 1);			/* flat */
		sd->active_objs[i] = 500 + (int64_t)i * 4096 / 9;	/* +4096 objects */
	}
	ps_run_finish(r);
	if (!ASSERT_OK(ps_report_build(&rep, r, rs, 0, UINT64_MAX), "build"))
		return;
	for (size_t i = 0; i < rep.nrows; i++) {
		if (rep.rows[i].ts->tag.id == 1)
			rk = &rep.rows[i];
		else
			rd = &rep.rows[i];
	}
	if (!ASSERT_TRUE(rk && rd, "rows"))
		goto out;
	ASSERT_TRUE(rk->slab.cache && rk->slab.unconfirmed, "kmalloc tag unconfirmed");
	ASSERT_EQ(rk->slab.tracked_growth, 8192 * 256, "tracked growth of the cache");
	ASSERT_EQ(rk->slab.slab_growth, 256, "slabinfo growth (one object)");
	ASSERT_TRUE(rk->g.score < 0.01, "unconfirmed score scaled down");
	ASSERT_TRUE(rd->slab.cache && !rd->slab.unconfirmed, "merged cache found by its alias");
	ASSERT_STREQ(rd->slab.cache, "pool_workqueue", "slabinfo name");
	ASSERT_NEAR(rd->slab.confirm, 1.0, 1e-9, "fully confirmed");
	ASSERT_TRUE(rd->g.score > 0.9, "confirmed steady growth keeps its score");
	ASSERT_TRUE(rep.rows[0].ts->tag.id == 2, "the confirmed leak ranks first");
	m = open_memstream(&buf, &len);
	print_report(m, &rep, PS_FMT_TEXT);
	fclose(m);
	ASSERT_STRSTR(buf, "tracked +2.00 MiB, 2.00 MiB of it freed untraced (slabinfo kmalloc-256)",
		      "text says why");
	free(buf);
	buf = NULL;
	m = open_memstream(&buf, &len);
	print_report(m, &rep, PS_FMT_JSON);
	fclose(m);
	ASSERT_STRSTR(buf, "\"slabinfo\":{\"cache\":\"kmalloc-256\",\"growth_bytes\":256,"
		      "\"tracked_growth_bytes\":2097152,\"confirmed_share\":0.0001,\"unconfirmed\":true}",
		      "json");
	free(buf);
out:
	ps_report_free(&rep);
	ps_run_free(r);
	ps_rules_free(rs);
}

/*
 * With the recorder's class counters the check compares what the traced events did to the
 * cache with slabinfo: a TCP tag that grows 2 MiB while as many bytes of sockets from before
 * the recording are freed leaves slabinfo flat, and the class counters (allocs and frees of
 * the same bytes, counted first at interval 3) explain it: confirmed. Without them the same
 * run would look like untraced frees.
 */
TEST(slabinfo_cross_check_class_counters)
{
	struct ps_rules *rs = default_rules();
	struct ps_run *r = ps_run_new(10);
	struct ps_tag tt = { .id = 1, .kind = "slab", .name = "TCP", .cache = "TCP",
			     .site_sym = "sk_prot_alloc+0x32" };
	struct ps_series *ca, *cf;
	struct ps_report rep;

	if (!ASSERT_TRUE(rs && r, "setup"))
		return;
	if (!ASSERT_NOT_NULL(ps_run_add_tag(r, &tt), "tag") ||
	    !ASSERT_NOT_NULL(ps_run_add_slab(r, "TCP", 2048), "slab") ||
	    !ASSERT_NOT_NULL(ps_run_add_counter(r, "class.TCP.alloc_bytes"), "counter") ||
	    !ASSERT_NOT_NULL(ps_run_add_counter(r, "class.TCP.free_bytes"), "counter"))
		return;
	ca = (struct ps_series *)ps_run_counter(r, "class.TCP.alloc_bytes");
	cf = (struct ps_series *)ps_run_counter(r, "class.TCP.free_bytes");
	for (uint32_t i = 0; i < 10; i++) {
		r->intervals[i].t_ns = (i + 1) * 1000000000ull;
		r->tags[0].s[i].live_bytes = (int64_t)i * 1024 * 2048 / 9;	/* 0 .. 2 MiB */
		r->slab[0].active_objs[i] = 3000;				/* flat */
		if (i >= 3)	/* a class counter first appears when the class is first seen */
			ca->v[i] = cf->v[i] = (int64_t)i * 1024 * 2048 / 9;
	}
	ps_run_finish(r);
	if (!ASSERT_OK(ps_report_build(&rep, r, rs, 0, UINT64_MAX), "build"))
		return;
	ASSERT_TRUE(rep.rows[0].slab.cache != NULL, "checked");
	ASSERT_FALSE(rep.rows[0].slab.unconfirmed, "old objects' frees explain flat slabinfo");
	ASSERT_NEAR(rep.rows[0].slab.confirm, 1.0, 1e-9, "fully confirmed");
	ps_report_free(&rep);
	/* the same without class counters: the tags alone cannot tell, so it is flagged */
	free(r->counters[0].v);
	free(r->counters[1].v);
	free(r->counters[0].name);
	free(r->counters[1].name);
	r->ncounters = 0;
	if (!ASSERT_OK(ps_report_build(&rep, r, rs, 0, UINT64_MAX), "build 2"))
		return;
	ASSERT_TRUE(rep.rows[0].slab.unconfirmed, "flagged without class counters");
	ps_report_free(&rep);
	ps_run_free(r);
	ps_rules_free(rs);
}

/*
 * SLUB counts the free objects of each CPU's slab and partial slabs as active, so a cache that
 * allocates out of them grows in the traced counters before slabinfo moves. A TCP cache (2368
 * bytes, 13 a slab: 5 slabs a CPU, 65 objects) whose slabinfo lags the class counters by 84
 * objects: on 2 CPUs that is within what slabinfo cannot see (nothing taken out), on 1 CPU 19
 * objects of it are beyond it, and without the slab geometry all 84 are taken out.
 */
TEST(slabinfo_hidden_free_objects)
{
	static const struct { const char *ncpus; uint32_t per; int64_t removed; } cases[] = {
		{ "2", 13, 0 }, { "1", 13, 19 * 2368 }, { "2", 0, 84 * 2368 },
	};
	struct ps_tag tt = { .id = 1, .kind = "slab", .name = "TCP", .cache = "TCP",
			     .site_sym = "sk_prot_alloc+0x32" };

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct ps_rules *rs = default_rules();
		struct ps_run *r = ps_run_new(10);
		struct ps_series *ca, *cf;
		struct ps_report rep;

		if (!ASSERT_TRUE(rs && r, "setup") || !ASSERT_NOT_NULL(ps_run_add_tag(r, &tt), "tag") ||
		    !ASSERT_NOT_NULL(ps_run_add_slab(r, "TCP", 2368), "slab") ||
		    !ASSERT_NOT_NULL(ps_run_add_counter(r, "class.TCP.alloc_bytes"), "counter") ||
		    !ASSERT_NOT_NULL(ps_run_add_counter(r, "class.TCP.free_bytes"), "counter") ||
		    !ASSERT_OK(ps_run_set_meta(r, "ncpus", cases[c].ncpus), "meta") ||
		    !ASSERT_OK(ps_run_set_meta(r, "page_size", "4096"), "meta"))
			return;
		r->slab[0].objperslab = cases[c].per;
		ca = (struct ps_series *)ps_run_counter(r, "class.TCP.alloc_bytes");
		cf = (struct ps_series *)ps_run_counter(r, "class.TCP.free_bytes");
		for (uint32_t i = 0; i < 10; i++) {
			int64_t objs = 18 * (int64_t)i;

			r->intervals[i].t_ns = (i + 1) * 1000000000ull;
			r->tags[0].s[i].live_bytes = objs * 2368;
			ca->v[i] = objs * 2368;
			cf->v[i] = 0;
			r->slab[0].active_objs[i] = 100 + (objs > 84 ? objs - 84 : 0);
		}
		ps_run_finish(r);
		if (!ASSERT_OK(ps_report_build(&rep, r, rs, 0, UINT64_MAX), "build"))
			return;
		ASSERT_EQ(rep.rows[0].g.growth - rep.rows[0].adj_growth, cases[c].removed,
			  "taken out: what slabinfo's hidden free objects cannot explain");
		ps_report_free(&rep);
		ps_run_free(r);
		ps_rules_free(rs);
	}
}

/*
 * A TCP cache that grows 12 sockets a second for 30 s: the class counters count them all, the
 * tags see 1 in 16, a staircase of 16-socket steps that fell a little short (304 of 360). Where
 * the sample and the counters agree, the rows take the counters' growth, interval by interval
 * (shape.c). They keep their own series when slabinfo says objects left on untraced paths (the
 * counters miss those frees), when the sample disagrees beyond sampling error (one step where
 * the counters say 360 sockets), and when another path's rows hold half of the cache's growth
 * or more (minor), and when a row of the same path shrank beside it (shrink: shares of a small
 * sum). Where another path holds less (mixed: a third), the network row takes the counters'
 * series less that path's sampled one. Where the cache also frees 50 sockets older than the
 * recording and the sampled estimate of those frees says 64 until the count reaches 64 (pre),
 * the estimate counts no more than the frees there were: the series is the counters' still.
 * Where 20 short-lived sockets a second come and go beside it, the cache held 100 sockets at
 * the start and those close by the tenth second, and the estimate takes every free for an
 * older object's (pre_over: as when the recorder's own objects were missing from its pointer
 * map), it counts no more of them than the cache held: the window still ends on all 360.
 */
enum shape_case { SHAPE_AGREE, SHAPE_PRE, SHAPE_PRE_OVER, SHAPE_UNTRACED, SHAPE_DISAGREE,
		  SHAPE_MIXED, SHAPE_MINOR, SHAPE_SHRINK };

static struct ps_run *shape_run(enum shape_case c)
{
	const int64_t sz = 2368;
	struct ps_tag t1 = { .id = 1, .kind = "slab", .name = "TCP", .cache = "TCP",
			     .site_sym = "sk_prot_alloc+0x32", .flags = PS_TAG_F_SAMPLED };
	struct ps_tag t2 = { .id = 2, .kind = "slab", .name = "TCP", .cache = "TCP",
			     .site_sym = c == SHAPE_SHRINK ? "tcp_v4_syn_recv_sock+0x2a" :
							     "alloc_empty_file+0x3c",
			     .flags = PS_TAG_F_SAMPLED };
	static const char *const ctr[] = { "class.TCP.alloc_bytes", "class.TCP.free_bytes",
					   "class.TCP.preexisting_free_bytes" };
	struct ps_run *r = ps_run_new(31);
	struct ps_series *cs[3];

	if (!r || !ps_run_add_tag(r, &t1) || !ps_run_add_slab(r, "TCP", (uint32_t)sz) ||
	    ps_run_set_meta(r, "site_sample_rate", "16") ||
	    (c >= SHAPE_MIXED && !ps_run_add_tag(r, &t2)))
		goto fail;
	for (size_t i = 0; i < 3; i++)
		if (!ps_run_add_counter(r, ctr[i]))
			goto fail;
	for (size_t i = 0; i < 3; i++)
		cs[i] = (struct ps_series *)ps_run_counter(r, ctr[i]);
	for (uint32_t i = 0; i < 31; i++) {
		int64_t objs = 12 * (int64_t)i, seen = objs * 7 / 8 / 16 * 16;

		r->intervals[i].t_ns = (i + 1) * 1000000000ull;
		if (c == SHAPE_DISAGREE)
			seen = i >= 15 ? 16 : 0;
		if (c == SHAPE_MIXED) {
			r->tags[1].s[i].live_bytes = seen / 3 * sz;
			seen -= seen / 3;
		} else if (c == SHAPE_MINOR) {
			r->tags[1].s[i].live_bytes = (seen - seen / 3) * sz;
			seen /= 3;
		} else if (c == SHAPE_SHRINK) {
			/* another network row frees 40 objects it held before the window */
			r->tags[1].s[i].live_bytes = (40 - 4 * (int64_t)(i < 10 ? i : 10)) * sz;
		}
		r->tags[0].s[i].live_bytes = seen * sz;
		/* what each interval allocated: the samples' turnover, their standard error */
		for (size_t t = 0; i && t < r->ntags; t++) {
			int64_t d = r->tags[t].s[i].live_bytes - r->tags[t].s[i - 1].live_bytes;

			r->tags[t].s[i].alloc_bytes = d > 0 ? (uint64_t)d : 0;
			r->tags[t].s[i].free_bytes = d < 0 ? (uint64_t)-d : 0;
		}
		cs[0]->v[i] = objs * sz;
		cs[1]->v[i] = cs[2]->v[i] = 0;
		r->slab[0].active_objs[i] = 100 + (c == SHAPE_UNTRACED ? 0 : objs);
		if (c == SHAPE_PRE) {
			int64_t freed = i < 2 ? 0 : i < 26 ? 50 : 64;

			cs[1]->v[i] = freed * sz;
			cs[2]->v[i] = (i < 2 ? 0 : 64) * sz;
			r->slab[0].active_objs[i] = 164 + objs - freed;
		} else if (c == SHAPE_PRE_OVER) {
			int64_t old = i < 10 ? 10 * (int64_t)i : 100, churn = 20 * (int64_t)i;

			cs[0]->v[i] = (objs + churn) * sz;
			cs[1]->v[i] = cs[2]->v[i] = (old + churn) * sz;
			r->slab[0].active_objs[i] = 100 + objs - old;
		}
	}
	ps_run_finish(r);
	return r;
fail:
	ps_run_free(r);
	return NULL;
}

TEST(exact_shape_from_class_counters)
{
	static const char *const names[] = { "agree", "pre", "pre_over", "untraced", "disagree",
					     "mixed", "minor", "shrink" };
	const int64_t sz = 2368;

	for (int c = SHAPE_AGREE; c <= SHAPE_SHRINK; c++) {
		struct ps_rules *rs = default_rules();
		struct ps_run *r = shape_run((enum shape_case)c);
		const struct ps_report_row *w = NULL;
		struct ps_report rep;
		char *buf = NULL;
		size_t len = 0;
		FILE *m;

		if (!ASSERT_TRUE(rs && r, names[c]) ||
		    !ASSERT_OK(ps_report_build(&rep, r, rs, 0, UINT64_MAX), names[c]))
			return;
		for (size_t i = 0; i < rep.nrows; i++)
			if (!strcmp(rep.rows[i].ts->tag.site_sym, "sk_prot_alloc+0x32"))
				w = &rep.rows[i];
		if (!ASSERT_NOT_NULL(w, names[c]))
			return;
		if (c == SHAPE_MIXED) {
			ASSERT_TRUE(w->exact_shape, "mixed: exact");
			for (uint32_t k = 0; k < 31; k++)
				ASSERT_EQ(ps_row_live(&rep, w, k),
					  12 * (int64_t)k * sz - r->tags[1].s[k].live_bytes,
					  "the counters' series less the other path's");
		} else if (c == SHAPE_PRE_OVER) {
			ASSERT_TRUE(w->exact_shape, "pre_over: exact");
			ASSERT_EQ(w->adj_growth, 360 * sz, "all 360 sockets, not 360 + 600 - 100");
		} else if (c != SHAPE_AGREE && c != SHAPE_PRE) {
			ASSERT_FALSE(w->exact_shape, names[c]);
			for (uint32_t k = 0; k < 31; k++)
				ASSERT_TRUE(ps_row_live(&rep, w, k) <= r->tags[0].s[k].live_bytes,
					    "its own series, or less");
		} else {
			ASSERT_TRUE(w->exact_shape, names[c]);
			ASSERT_EQ(w->adj_growth, 360 * sz, "all 360 sockets");
			for (uint32_t k = 0; k < 31; k++)
				ASSERT_EQ(ps_row_live(&rep, w, k), 12 * (int64_t)k * sz,
					  "the counters' series, not the staircase");
			if (c == SHAPE_PRE)
				goto next;
			m = open_memstream(&buf, &len);
			if (!ASSERT_NOT_NULL(m, "memstream"))
				return;
			print_report(m, &rep, PS_FMT_TEXT);
			fclose(m);
			ASSERT_STRSTR(buf, "sampled +703 KiB; growth from the exact TCP counters",
				      "the note says where the figure comes from");
			free(buf);
		}
next:
		ps_report_free(&rep);
		ps_run_free(r);
		ps_rules_free(rs);
	}
}

/*
 * Connection churn on a server: a TCP cache of 5000 sockets opened before the recording, whose
 * connections close at 10 a second while as many new ones open and stay. The tags see only the
 * new sockets and grow 10 a second (1.4 MiB over the minute), the class counters count as many
 * frees of older sockets as allocations, and the cache's /proc/slabinfo line stays flat: the
 * sockets were replaced, the memory did not grow. The verdict must not call it a leak
 * confirmed by /proc/slabinfo. With the line growing as much (the old sockets not closed),
 * the same rows are a leak, and slabinfo confirms it.
 */
static struct ps_run *churn_run(bool line_grows)
{
	static const char *const ctr[] = { "class.TCP.alloc_bytes", "class.TCP.free_bytes",
					   "class.TCP.preexisting_free_bytes" };
	const int64_t sz = 2368;
	struct ps_run *r = ps_run_new(61);
	struct ps_series *cs[3];

	if (!r || !ps_run_add_tag(r, &tcp_tag) || !ps_run_add_slab(r, "TCP", (uint32_t)sz) ||
	    ps_run_set_meta(r, "ncpus", "2") || ps_run_set_meta(r, "page_size", "4096"))
		goto fail;
	r->slab[0].objperslab = 13;
	for (size_t i = 0; i < 3; i++)
		if (!ps_run_add_counter(r, ctr[i]))
			goto fail;
	for (size_t i = 0; i < 3; i++)
		cs[i] = (struct ps_series *)ps_run_counter(r, ctr[i]);
	for (uint32_t i = 0; i < 61; i++) {
		int64_t objs = 10 * (int64_t)i;

		r->intervals[i].t_ns = (i + 1) * 1000000000ull;
		r->tags[0].s[i].live_bytes = objs * sz;
		r->tags[0].s[i].alloc_bytes = i ? 10 * sz : 0;
		cs[0]->v[i] = objs * sz;
		cs[1]->v[i] = cs[2]->v[i] = line_grows ? 0 : objs * sz;
		/* the per-CPU slabs' jitter on top */
		r->slab[0].active_objs[i] = 5000 + (line_grows ? objs : 0) + (int64_t)(i * 7 % 5);
	}
	ps_run_finish(r);
	return r;
fail:
	ps_run_free(r);
	return NULL;
}

TEST(verdict_slab_rows_shown_by_their_line)
{
	for (int grows = 0; grows < 2; grows++) {
		struct ps_rules *rs = default_rules();
		struct ps_run *r = churn_run(grows);
		struct ps_report rep;
		struct ps_verdict v;

		if (!ASSERT_TRUE(rs && r, "setup") ||
		    !ASSERT_OK(ps_report_build(&rep, r, rs, 0, UINT64_MAX), "build"))
			return;
		ASSERT_EQ(rep.rows[0].adj_growth, 600 * 2368, "the rows keep what they saw");
		if (ASSERT_OK(ps_verdict_build(&v, &rep, PS_DOMAIN_KERNEL), "verdict")) {
			if (grows) {
				ASSERT_EQ(v.st.state, PS_V_LEAK, "the line grew: a leak");
				ASSERT_STREQ(v.confirmed_by, "/proc/slabinfo", "confirmed by it");
				ASSERT_NEAR((double)v.confirm_growth, 600.0 * 2368, 5.0 * 2368,
					    "by the line's growth");
			} else {
				ASSERT_TRUE(v.st.state != PS_V_LEAK, "replaced sockets: no leak");
				ASSERT_TRUE(v.confirmed_by == NULL, "nothing confirms it");
				ASSERT_STRSTR(v.summary, "no counter confirms it", "and it says so");
			}
		}
		ps_report_free(&rep);
		ps_run_free(r);
		ps_rules_free(rs);
	}
}

/* One choice of system counter for report and plot: by the trace's os, absent when unrecorded. */
TEST(unreclaimable_counter)
{
	struct ps_run *l = linux_run(), *w = ps_run_new(2);
	const struct ps_series *s;
	const char *name = NULL;

	if (!ASSERT_TRUE(l && w, "setup"))
		return;
	s = ps_unreclaimable(l, &name);
	ASSERT_STREQ(name, "SUnreclaim", "linux");
	ASSERT_TRUE(s && s->v[1] == 100070000, "the SUnreclaim series");
	ps_run_set_meta(w, "os", "windows");
	ASSERT_TRUE(!ps_unreclaimable(w, &name), "windows run without the counter");
	ASSERT_STREQ(name, "NonPagedPool", "windows");
	ps_run_add_sys(w, "NonPagedPool");
	ASSERT_TRUE(ps_unreclaimable(w, &name) == ps_run_sys(w, "NonPagedPool"), "found");
	ps_run_free(l);
	ps_run_free(w);
}

/* The one spelling of a tag in every output: name, and the call site where a cache has several. */
TEST(tag_label_spelling)
{
	struct ps_tag km = { .kind = "kmalloc", .name = "kmalloc-256", .cache = "kmalloc-256",
			     .site_sym = "smb2_read+0x1a2", .site_module = "ksmbd" };
	struct ps_tag pool = { .kind = "pool", .name = "LSbf", .site_sym = "srvnet.sys+0x1a2b0",
			       .pool = "nonpaged" };
	struct ps_tag anon = { .kind = "slab", .cache = "dentry" }, none = { 0 };
	char b[64], small[8];

	ASSERT_STREQ(ps_tag_label(&km, b, sizeof(b)), "kmalloc-256@smb2_read+0x1a2", "kmalloc");
	ASSERT_STREQ(ps_tag_label(&pool, b, sizeof(b)), "LSbf", "a pool tag is its name");
	ASSERT_STREQ(ps_tag_label(&anon, b, sizeof(b)), "dentry", "cache when unnamed");
	ASSERT_STREQ(ps_tag_label(&none, b, sizeof(b)), "?", "nothing known");
	ASSERT_STREQ(ps_tag_label(&km, small, sizeof(small)), "kmalloc", "truncated to the buffer");
}

/* A kmalloc tag of a diff run, growing step bytes an interval; module NULL: vmlinux. */
static void diff_tag(struct ps_run *r, const char *cache, const char *site, const char *module,
		     int64_t step, uint32_t flags)
{
	struct ps_tag t = { .id = (int64_t)r->ntags + 100, .kind = "kmalloc", .name = cache,
			    .cache = cache, .site_sym = site, .site_module = module, .flags = flags };
	struct ps_tag_series *ts = ps_run_add_tag(r, &t);

	for (uint32_t i = 0; ts && i < r->nintervals; i++)
		ts->s[i].live_bytes = step * i;
}

/* Ten 1 s intervals; ios > 0: workload rows with that many IOs an interval. */
static struct ps_run *diff_run(uint64_t ios)
{
	struct ps_run *r = ps_run_new(10);

	for (uint32_t i = 0; r && i < 10; i++)
		r->intervals[i].t_ns = (i + 1) * 1000000000ull;
	if (r && ios && !ps_run_enable_workload(r))
		for (uint32_t i = 0; i < 10; i++)
			r->workload[i].ios = ios;
	return r;
}

static const struct ps_diff_row *diff_find(const struct ps_diff *d, const char *cache)
{
	for (size_t i = 0; i < d->nrows; i++)
		if (!strcmp(d->rows[i].row->ts->tag.cache, cache))
			return &d->rows[i];
	return NULL;
}

/*
 * diff aligns tags by kind, cache, symbol without offset and module (ids and offsets differ
 * between runs), lists B's tags that A's aligned tags did not grow a tenth as much as, leaves
 * out small growth and slab-backing pages, and normalises per second or, when both runs have
 * IOs, per IO.
 */
TEST(diff_align_and_normalise)
{
	struct ps_rules *rs = default_rules();
	struct ps_report ra = { 0 }, rb = { 0 };
	struct ps_diff d = { 0 };
	struct ps_run *a = NULL, *b = NULL;
	const struct ps_diff_row *dr;
	char k1[128], k2[128];

	for (int per_io = 0; per_io < 2; per_io++) {
		a = diff_run(per_io ? 100 : 0);
		b = diff_run(per_io ? 1000 : 0);
		if (!ASSERT_TRUE(rs && a && b, "setup"))
			goto out;
		diff_tag(a, "kmalloc-256", "smb2_read+0x10", "ksmbd", 65536, 0);
		diff_tag(a, "kmalloc-512", "foo+0x1", NULL, 0, 0);
		diff_tag(a, "kmalloc-1k", "bar+0x1", NULL, 65536, 0);
		diff_tag(a, "kmalloc-2k", "qux+0x1", NULL, 4096, 0);
		diff_tag(b, "kmalloc-256", "smb2_read+0x99", "ksmbd", 65536, 0);
		diff_tag(b, "kmalloc-512", "foo+0x2", NULL, 65536, 0);
		diff_tag(b, "kmalloc-1k", "bar+0x1", "cifs", 65536, 0);
		diff_tag(b, "kmalloc-2k", "qux+0x1", NULL, 65536, 0);
		diff_tag(b, "kmalloc-64", "baz+0x1", NULL, 1024, 0);
		diff_tag(b, "order-0", "allocate_slab+0x1", NULL, 1 << 20, PS_TAG_F_SLAB_BACKING);
		if (!ASSERT_OK(ps_report_build(&ra, a, rs, 0, UINT64_MAX), "report A") ||
		    !ASSERT_OK(ps_report_build(&rb, b, rs, 0, UINT64_MAX), "report B") ||
		    !ASSERT_OK(ps_diff_build(&d, &ra, &rb), "diff"))
			goto out;
		ASSERT_EQ(d.per_io, per_io, "per IO only when both runs have IOs");
		ASSERT_EQ(d.nrows, per_io ? 2 : 3, "the tags growing in B only");
		/* A grew 1/16 of B per second, but A did a tenth of B's IOs: per IO 0.625 of B */
		dr = diff_find(&d, "kmalloc-2k");
		ASSERT_TRUE(per_io ? !dr : dr && dr->a == 4096, "less than a tenth of B's, normalised");
		ASSERT_TRUE(!diff_find(&d, "kmalloc-256"), "aligned across offsets and ids: in A too");
		dr = diff_find(&d, "kmalloc-512");
		if (ASSERT_NOT_NULL(dr, "flat in A, growing in B")) {
			ASSERT_NEAR(dr->a, 0, 1e-9, "A's growth");
			/* 9 x 64 KiB over 9 s, or over 10 x 1000 IOs */
			ASSERT_NEAR(dr->b, per_io ? 9 * 65536 / 10000.0 : 65536, 1e-9, "B normalised");
		}
		dr = diff_find(&d, "kmalloc-1k");
		ASSERT_TRUE(dr && dr->a == 0, "another module is another tag");
		ps_diff_key(&a->tags[0].tag, k1, sizeof(k1));
		ps_diff_key(&b->tags[0].tag, k2, sizeof(k2));
		ASSERT_STREQ(k1, "kmalloc|kmalloc-256|smb2_read|ksmbd", "key");
		ASSERT_STREQ(k2, k1, "same key in B");
		ps_diff_free(&d);
		ps_report_free(&ra);
		ps_report_free(&rb);
		ps_run_free(a);
		ps_run_free(b);
		a = b = NULL;
	}
out:
	ps_diff_free(&d);
	ps_report_free(&ra);
	ps_report_free(&rb);
	ps_run_free(a);
	ps_run_free(b);
	ps_rules_free(rs);
}

/* The plot's ranking is the report's: same rows, same order, no rules needed. */
TEST(rank_without_rules)
{
	struct ps_rules *rs = default_rules();
	struct ps_run *r = linux_run();
	struct ps_report rep, rk;

	if (!ASSERT_TRUE(rs && r, "setup"))
		return;
	if (!ASSERT_OK(ps_report_build(&rep, r, rs, 0, UINT64_MAX), "build") ||
	    !ASSERT_OK(ps_report_rank(&rk, r, 0, UINT64_MAX), "rank"))
		return;
	if (ASSERT_EQ(rk.nrows, rep.nrows, "rows")) {
		for (size_t i = 0; i < rk.nrows; i++) {
			ASSERT_TRUE(rk.rows[i].ts == rep.rows[i].ts, "same order");
			ASSERT_STREQ(rk.rows[i].a.cls, "", "not attributed");
		}
	}
	ASSERT_STREQ(rk.rows[0].ts->tag.cache, "kmalloc-2k", "the leak first");
	ASSERT_TRUE(rk.rows[rk.nrows - 1].ts->tag.flags & PS_TAG_F_SLAB_BACKING, "backing last");
	ASSERT_EQ(rk.tracked_growth, rep.tracked_growth, "totals");
	/* kmalloc-2k 64 KiB and dentry 4 KiB an interval; the slab-backing page left out */
	ASSERT_EQ(ps_tracked_live(r, 9), 9 * (65536 + 4096), "tracked live bytes");
	ps_report_free(&rk);
	ps_report_free(&rep);
	ps_run_free(r);
	ps_rules_free(rs);
}

/*
 * The workload's span: from the end of the interval before the first IO; to the last interval
 * with IOs, or the one before when the recording went on after the load stopped inside it.
 */
TEST(workload_span)
{
	struct ps_run *r = ps_run_new(10);
	uint64_t f = 1, t = 1;

	if (!ASSERT_TRUE(r && !ps_run_enable_workload(r), "setup"))
		return;
	for (uint32_t i = 0; i < 10; i++)
		r->intervals[i].t_ns = (i + 1) * 1000000000ull;
	ASSERT_FALSE(ps_run_workload_span(r, &f, &t), "no IOs");
	for (uint32_t i = 2; i <= 7; i++)
		r->workload[i].ios = 1000;
	if (ASSERT_TRUE(ps_run_workload_span(r, &f, &t), "span")) {
		ASSERT_U64_EQ(f, 2000000000ull, "from the end of interval 1");
		ASSERT_U64_EQ(t, 7000000000ull, "to the end of interval 6: 7 holds the teardown");
	}
	for (uint32_t i = 8; i < 10; i++)
		r->workload[i].ios = 1000;
	if (ASSERT_TRUE(ps_run_workload_span(r, &f, &t), "to the end"))
		ASSERT_U64_EQ(t, 10000000000ull, "the load outlived the recording: its last interval");
	ps_run_free(r);
}
