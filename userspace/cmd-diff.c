// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope diff A B: lists what grows in B but not in A, growth per second or per IO (how tags
 * are aligned across runs and growth normalised: analysis/diff.h), then the per-class totals
 * side by side.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "userspace/datafile.h"
#include "userspace/poolscope.h"
#include "userspace/lib/util/util.h"
#include "userspace/srcline.h"
#include "userspace/lib/trace/trace.h"
#include "analysis/analysis.h"
#include "analysis/diff.h"
#include "analysis/verdict.h"


static int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rules", required_argument, NULL, 'r' },
		{ "top", required_argument, NULL, 'n' },
		{ "format", required_argument, NULL, 'f' },
		{ "debuginfo", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 } };
	struct ps_run *ra = NULL, *rb = NULL;
	struct ps_report a = { 0 }, b = { 0 };
	struct ps_diff d = { 0 };
	struct ps_verdict va, vb;
	struct ps_rules *rs = NULL;
	char err[512] = "";
	const char *rules_path = NULL, *debuginfo = NULL;
	enum ps_fmt fmt = PS_FMT_TEXT;
	unsigned top = 15;
	int c, rc = PS_EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "r:n:h", opts, NULL)) != -1) {
		if (c == 'r') {
			rules_path = optarg;
		} else if (c == 'I') {
			debuginfo = optarg;
		} else if (c == 'f') {
			if (ps_fmt_parse(optarg, &fmt)) {
				fprintf(stderr, "poolscope diff: --format: expected text, csv, json "
					"or markdown, got '%s'\n", optarg);
				return PS_EXIT_USAGE;
			}
		} else if (c == 'n') {
			if (ps_parse_uint(optarg, 0, UINT_MAX, &top)) {
				fprintf(stderr, "poolscope diff: --top: expected a number >= 0, "
					"got '%s'\n", optarg);
				return PS_EXIT_USAGE;
			}
		} else {
			FILE *f = c == 'h' ? stdout : stderr;

			fprintf(f, "usage: poolscope diff A B [--rules FILE] [--top N] "
				"[--format text|csv|json|markdown]\n"
				"                         [--debuginfo DIR]\n"
				"Tags growing in B but not in A (growth per second, or per IO when both\n"
				"runs have workload counters; at least 64 KiB over run B), then the\n"
				"paths of both runs side by side.\n"
				"  -n, --top N       list N tags (default 15, 0 = all)\n"
				"      --format F    text (80 columns), csv, json, markdown\n"
				"  -r, --rules FILE  attribution rules (default analysis/rules/default.rules)\n"
				"      --debuginfo DIR  a debug root searched as /usr/lib/debug is, for\n"
				"                    each run's own kernel: call sites and frames get\n"
				"                    their source lines (the traces' own otherwise)\n"
				"EXAMPLES\n  poolscope diff local.db remote.db\n");
			return c == 'h' ? PS_EXIT_OK : PS_EXIT_USAGE;
		}
	}
	if (optind != argc - 2) {
		fprintf(stderr, "usage: poolscope diff A B [--rules FILE] [--top N] "
			"[--format text|csv|json|markdown]\n");
		return PS_EXIT_USAGE;
	}
	if (ps_rules_open("diff", rules_path, &rs))
		return PS_EXIT_FAIL;
	if (ps_run_load(&ra, argv[optind], err, sizeof(err)) ||
	    ps_run_load(&rb, argv[optind + 1], err, sizeof(err))) {
		fprintf(stderr, "poolscope diff: %s\n", err);
		goto out;
	}
	if (ps_srcline_apply("diff", ra, NULL, debuginfo, true) ||
	    ps_srcline_apply("diff", rb, NULL, debuginfo, true))
		goto out;
	if (!ra->nintervals || !rb->nintervals) {
		fprintf(stderr, "poolscope diff: %s: no intervals (the recording ended before the "
			"first one)\n", argv[ra->nintervals ? optind + 1 : optind]);
		goto out;
	}
	{
		/* each run over its workload's span, as report judges it */
		uint64_t fa = 0, ta = UINT64_MAX, fb = 0, tb = UINT64_MAX;

		ps_run_workload_span(ra, &fa, &ta);
		ps_run_workload_span(rb, &fb, &tb);
		if (ps_report_build(&a, ra, rs, fa, ta) || ps_report_build(&b, rb, rs, fb, tb)) {
			fprintf(stderr, "poolscope diff: out of memory\n");
			goto out;
		}
	}
	if (	    ps_diff_build(&d, &a, &b)) {
		fprintf(stderr, "poolscope diff: out of memory\n");
		goto out;
	}
	if (ps_verdict_build(&va, &a, PS_DOMAIN_KERNEL) || ps_verdict_build(&vb, &b, PS_DOMAIN_KERNEL)) {
		fprintf(stderr, "poolscope diff: out of memory\n");
		goto out;
	}
	ps_diff_print(stdout, &d, &va, &vb, argv[optind], argv[optind + 1], top, fmt);
	rc = ps_finish_stdout(PS_EXIT_OK);
out:
	ps_diff_free(&d);
	ps_report_free(&a);
	ps_report_free(&b);
	ps_run_free(ra);
	ps_run_free(rb);
	ps_rules_free(rs);
	return rc;
}

PS_COMMAND(diff, cmd_diff, "what grows in run B but not in run A");
