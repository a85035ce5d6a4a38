// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope diff A B: lists what grows in B but not in A, growth per second or per IO (how tags
 * are aligned across runs and growth normalised: analysis/diff.h), then the per-class totals
 * side by side.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>

#include "userspace/datafile.h"
#include "userspace/poolscope.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/trace/trace.h"
#include "analysis/analysis.h"
#include "analysis/diff.h"
#include "analysis/verdict.h"


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

/*
 * The answer first: is unreclaimable kernel memory leaking in B only, in both, in neither (or
 * only in A), and on which path.
 */
static void print_sentence(const struct ps_verdict *a, const struct ps_verdict *b)
{
	bool la = a->st.state == PS_V_LEAK, lb = b->st.state == PS_V_LEAK;

	if (lb && !la)
		printf("LEAK in B only, on the %s path: kernel memory it cannot reclaim\n"
		       "  grows in B and not in A.\n", b->path ? b->path : "(no one)");
	else if (la && lb)
		printf("LEAK in both runs: A on the %s path, B on the %s path.\n",
		       a->path ? a->path : "(no one)", b->path ? b->path : "(no one)");
	else if (la)
		printf("LEAK in A only, on the %s path; B does not leak.\n",
		       a->path ? a->path : "(no one)");
	else
		printf("No leak in either run: A %s, B %s.\n", ps_vstate_name(a->st.state),
		       ps_vstate_name(b->st.state));
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
	struct ps_diff d = { 0 };
	struct ps_verdict va, vb;
	struct ps_rules *rs = NULL;
	char rbuf[PATH_MAX], err[512] = "", lb[256], s1[32], s2[32];
	const char *rules_path = NULL;
	unsigned top = 15, unconfirmed = 0;
	size_t shown;
	int c, rc = PS_EXIT_FAIL;

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
	print_sentence(&va, &vb);
	{
		char line[1024];

		snprintf(line, sizeof(line), "  A %s: %s", argv[optind], va.summary);
		ps_print_wrapped(stdout, line, 2);
		snprintf(line, sizeof(line), "  B %s: %s", argv[optind + 1], vb.summary);
		ps_print_wrapped(stdout, line, 2);
		putchar('\n');
	}
	printf("growth per %s: A %s, B %s\n", d.per_io ? "IO" : "second", argv[optind],
	       argv[optind + 1]);
	printf("%-32s %9s %9s %s\n", "TAG (growing in B, not in A)", "A", "B", "CLASS");
	/* --top 0 lists every tag, as in report */
	for (shown = 0; shown < d.nrows && (!top || shown < top); shown++) {
		const struct ps_diff_row *dr = &d.rows[shown];
		const struct ps_report_row *w = dr->row;

		ps_tag_label(&w->ts->tag, lb, sizeof(lb));
		lb[32] = '\0';
		fmt_norm(s1, sizeof(s1), dr->a);
		fmt_norm(s2, sizeof(s2), dr->b);
		printf("%-32s %9.9s %9.9s %.24s%s\n", lb, s1, s2, w->a.cls,
		       w->slab.unconfirmed ? " ?" : "");
		unconfirmed += w->slab.unconfirmed;
	}
	if (!shown)
		printf("(none)\n");
	if (unconfirmed)
		printf("? /proc/slabinfo grew less: frees on untraced paths taken out of B\n");
	printf("\nper path, A then B:\n");
	ps_report_print_paths(stdout, &va, PS_FMT_TEXT);
	ps_report_print_paths(stdout, &vb, PS_FMT_TEXT);
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
