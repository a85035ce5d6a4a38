// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope diff A B: aligns tags across two runs by kind + cache + call-site symbol (offset
 * stripped) + module, never by id or address, normalises growth by duration (and by IOs when
 * both runs carry workload rows) and lists what grows in B but not in A, then the per-class
 * totals side by side.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/poolscope.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/trace/trace.h"
#include "analysis/analysis.h"

int ps_default_rules_path(char *buf, size_t len);

static void tag_key(const struct ps_tag *t, char *buf, size_t len)
{
	const char *s = t->site_sym ? t->site_sym : "";
	const char *plus = strchr(s, '+');

	snprintf(buf, len, "%s|%s|%.*s|%s", t->kind ? t->kind : "", t->cache ? t->cache :
		 t->name ? t->name : "", plus ? (int)(plus - s) : (int)strlen(s), s,
		 t->site_module ? t->site_module : "");
}

static double run_secs(const struct ps_report *rep)
{
	const struct ps_run *r = rep->run;
	double s = (r->intervals[rep->to].t_ns - r->intervals[rep->from].t_ns) / 1e9;

	return s > 0 ? s : 1;
}

/* A tag must grow at least this much over run B to be listed (smaller is allocator noise). */
#define PS_DIFF_MIN_GROWTH (64 * 1024)

/*
 * Normalised growth: per IO it is often a fraction of a byte (300 KB over a million IOs), which
 * the byte formatter would round to "+0 B".
 */
static void fmt_norm(char *buf, size_t len, double v)
{
	if (v != 0 && v > -10 && v < 10)
		snprintf(buf, len, "%+.2f B", v);
	else
		ps_fmt_bytes(buf, len, v, true);
}

static uint64_t run_ios(const struct ps_run *r)
{
	uint64_t n = 0;

	for (uint32_t i = 0; r->has_workload && i < r->nintervals; i++)
		n += r->workload[i].ios;
	return n;
}

static int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rules", required_argument, NULL, 'r' },
		{ "top", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 } };
	struct ps_run *ra = NULL, *rb = NULL;
	struct ps_report a = { 0 }, b = { 0 };
	struct ps_rules *rs = NULL;
	char rbuf[PATH_MAX], err[512] = "", k1[512], k2[512], lb[256], s1[32], s2[32];
	const char *rules_path = NULL;
	unsigned top = 15, shown = 0, unconfirmed = 0;
	int c, rc = PS_EXIT_FAIL;
	bool per_io;
	double na, nb;

	while ((c = getopt_long(argc, argv, "r:n:h", opts, NULL)) != -1) {
		if (c == 'r')
			rules_path = optarg;
		else if (c == 'n') {
			if (ps_parse_uint(optarg, 0, UINT_MAX, &top)) {
				fprintf(stderr, "poolscope diff: --top: expected a number >= 0, "
					"got '%s'\n", optarg);
				return PS_EXIT_USAGE;
			}
		} else {
			FILE *f = c == 'h' ? stdout : stderr;

			fprintf(f, "usage: poolscope diff A B [--rules FILE] [--top N]\n"
				"Tags growing in B but not in A (growth per second, or per IO when both\n"
				"runs have workload counters; at least 64 KiB over run B), then per-path\n"
				"totals side by side.\n"
				"  -n, --top N       list N tags (default 15, 0 = all)\n"
				"  -r, --rules FILE  attribution rules (default analysis/rules/default.rules)\n"
				"EXAMPLES\n  poolscope diff local.db remote.db\n");
			return c == 'h' ? PS_EXIT_OK : PS_EXIT_USAGE;
		}
	}
	if (optind != argc - 2) {
		fprintf(stderr, "usage: poolscope diff A B [--rules FILE] [--top N]\n");
		return PS_EXIT_USAGE;
	}
	if (!rules_path) {
		if (ps_default_rules_path(rbuf, sizeof(rbuf))) {
			fprintf(stderr, "poolscope diff: default rules not found (--rules FILE)\n");
			return PS_EXIT_FAIL;
		}
		rules_path = rbuf;
	}
	if (ps_rules_load(&rs, rules_path, err, sizeof(err)) ||
	    ps_run_load(&ra, argv[optind], err, sizeof(err)) ||
	    ps_run_load(&rb, argv[optind + 1], err, sizeof(err))) {
		fprintf(stderr, "poolscope diff: %s\n", err);
		goto out;
	}
	if (!ra->nintervals || !rb->nintervals) {
		fprintf(stderr, "poolscope diff: %s: no intervals (the recording ended before the "
			"first one)\n", argv[ra->nintervals ? optind + 1 : optind]);
		goto out;
	}
	if (ps_report_build(&a, ra, rs, 0, UINT64_MAX) || ps_report_build(&b, rb, rs, 0, UINT64_MAX)) {
		fprintf(stderr, "poolscope diff: out of memory\n");
		goto out;
	}
	per_io = ra->has_workload && rb->has_workload && run_ios(ra) && run_ios(rb);
	na = per_io ? (double)run_ios(ra) : run_secs(&a);
	nb = per_io ? (double)run_ios(rb) : run_secs(&b);
	printf("growth per %s: A %s, B %s\n", per_io ? "IO" : "second", argv[optind],
	       argv[optind + 1]);
	printf("%-32s %9s %9s %s\n", "TAG (growing in B, not in A)", "A", "B", "CLASS");
	/* --top 0 lists every tag, as in report */
	for (size_t i = 0; i < b.nrows && (!top || shown < top); i++) {
		const struct ps_report_row *w = &b.rows[i];
		double ga = 0, gb = w->g.growth / nb;

		/* below PS_DIFF_MIN_GROWTH over the whole run B a tag is noise, not a finding */
		if (w->g.growth < PS_DIFF_MIN_GROWTH || (w->ts->tag.flags & PS_TAG_F_SLAB_BACKING))
			continue;
		tag_key(&w->ts->tag, k2, sizeof(k2));
		for (size_t j = 0; j < a.nrows; j++) {
			tag_key(&a.rows[j].ts->tag, k1, sizeof(k1));
			if (!strcmp(k1, k2))
				ga += a.rows[j].g.growth / na;
		}
		/* "not in A": A grew less than a tenth of B's normalised growth */
		if (ga > gb / 10)
			continue;
		ps_tag_label(&w->ts->tag, lb, sizeof(lb));
		lb[32] = '\0';
		fmt_norm(s1, sizeof(s1), ga);
		fmt_norm(s2, sizeof(s2), gb);
		printf("%-32s %9.9s %9.9s %.24s%s\n", lb, s1, s2, w->a.cls,
		       w->slab.unconfirmed ? " ?" : "");
		unconfirmed += w->slab.unconfirmed;
		shown++;
	}
	if (!shown)
		printf("(none)\n");
	if (unconfirmed)
		printf("? /proc/slabinfo did not grow with these tags: their frees went untraced "
		       "(kfree_rcu/bulk)\n");
	printf("\nper path (A then B):\n");
	ps_report_print_paths(stdout, &a, PS_FMT_TEXT);
	ps_report_print_paths(stdout, &b, PS_FMT_TEXT);
	rc = ps_finish_stdout(PS_EXIT_OK);
out:
	ps_report_free(&a);
	ps_report_free(&b);
	ps_run_free(ra);
	ps_run_free(rb);
	ps_rules_free(rs);
	return rc;
}

PS_COMMAND(diff, cmd_diff, "what grows in run B but not in run A");
