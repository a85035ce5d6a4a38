// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope report: top tags by growth with class, evidence and leak score (analysis/). Loads
 * the trace, the rules file (--rules, $POOLSCOPE_RULES, or analysis/rules/default.rules next to
 * the binary's build tree), builds the report and prints it.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "userspace/datafile.h"
#include "userspace/poolscope.h"
#include "userspace/srcline.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/trace/trace.h"
#include "analysis/analysis.h"
#include "analysis/caches.h"
#include "analysis/verdict.h"
#include "analysis/view.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: poolscope report TRACE [--by tag|path|cache] [--top N]\n"
		"                        [--format text|csv|json|markdown]\n"
		"                        [--domain kernel|reclaimable|user|all] [--from T] [--to T]\n"
		"                        [--sort KEY] [--kind K] [--path P] [--tag GLOB] [--comm GLOB]\n"
		"                        [--stacks GLOB] [--rules FILE]\n"
		"                        [--vmlinux FILE] [--debuginfo DIR]\n"
		"The verdict first (leak, growing, plateau or stable, on which path, confirmed by\n"
		"which counter), then the top tags of the domain with class, evidence and trend,\n"
		"then a few of the other domains.\n"
		"      --by B         tag (default), path (the verdict's paths), or cache (each\n"
		"                     cache's exact counters beside its tags' sampled estimate)\n"
		"  -n, --top N        show N tags (default 15, 0 = all)\n"
		"      --domain D     the memory the verdict is about: kernel (default: memory the\n"
		"                     kernel cannot reclaim), reclaimable, user, all\n"
		"      --format F     text (80 columns), csv, json (docs/analysis.md), markdown\n"
		"      --from T       start of the window (e.g. 10s: skip warm-up; default: the\n"
		"                     start, or the workload's first IO when the trace has one)\n"
		"      --to T         end of the window (default: the end, or its last IO)\n"
		"      --sort KEY     list by rank (default: strongest suspect first), growth,\n"
		"                     rate, live (END) or allocs\n"
		"      --kind K       only tags of kind K (slab, kmalloc, page, percpu, pool)\n"
		"      --path P       only tags of path P or under it (network, file-services/...)\n"
		"      --tag GLOB     only tags whose label matches ('kmalloc-*@smb2_*')\n"
		"      --comm GLOB    only tags of tasks matching (split by task, or a sampled\n"
		"                     stack of one); filters choose rows, the verdict reads all\n"
		"      --stacks GLOB  the sampled stacks of the matching tags with their bytes\n"
		"                     (--top stacks per tag, default 5) instead of the report\n"
		"  -r, --rules FILE   attribution rules (default analysis/rules/default.rules)\n"
		"      --vmlinux FILE the traced kernel's image with DWARF: call sites and frames\n"
		"                     get their source lines (the trace's own otherwise)\n"
		"      --debuginfo DIR a debug root searched as /usr/lib/debug is, for vmlinux\n"
		"                     and modules\n"
		"EXAMPLES\n"
		"  poolscope report run.db\n"
		"  poolscope report run.db --from 5s --format json\n"
		"  poolscope report run.db --kind slab --sort rate\n"
		"  poolscope report run.db --stacks 'filp@*'\n");
}

static int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 'n' },
		{ "format", required_argument, NULL, 'f' },
		{ "from", required_argument, NULL, 'F' },
		{ "to", required_argument, NULL, 'T' },
		{ "rules", required_argument, NULL, 'r' },
		{ "by", required_argument, NULL, 'b' },
		{ "domain", required_argument, NULL, 'D' },
		{ "sort", required_argument, NULL, 'S' },
		{ "kind", required_argument, NULL, 'K' },
		{ "path", required_argument, NULL, 'P' },
		{ "tag", required_argument, NULL, 'G' },
		{ "comm", required_argument, NULL, 'C' },
		{ "stacks", required_argument, NULL, 'k' },
		{ "vmlinux", required_argument, NULL, 'V' },
		{ "debuginfo", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 } };
	const char *rules_path = NULL;
	char err[512] = "";
	enum ps_fmt fmt = PS_FMT_TEXT;
	uint64_t from = 0, to = UINT64_MAX;
	struct ps_rules *rs = NULL;
	struct ps_run *run = NULL;
	struct ps_report rep = { 0 }, view = { 0 };
	struct ps_view_opts vo = { 0 };
	const char *stacks = NULL, *vmlinux = NULL, *debuginfo = NULL;
	unsigned top = 15;
	bool by_path = false, by_cache = false, window_set = false, top_set = false;
	bool domain_set = false;
	const char *domain = PS_DOMAIN_KERNEL;
	struct ps_verdict v;
	int c, rc;

	while ((c = getopt_long(argc, argv, "n:r:h", opts, NULL)) != -1) {
		switch (c) {
		case 'D':
			domain_set = true;
			if (!strcmp(optarg, "all")) {
				domain = NULL;
			} else if (!strcmp(optarg, PS_DOMAIN_KERNEL) ||
				   !strcmp(optarg, PS_DOMAIN_RECLAIMABLE) ||
				   !strcmp(optarg, PS_DOMAIN_USER)) {
				domain = optarg;
			} else {
				fprintf(stderr, "poolscope report: --domain: expected kernel, "
					"reclaimable, user or all, got '%s'\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 'S':
			if (ps_sort_parse(optarg, &vo.sort)) {
				fprintf(stderr, "poolscope report: --sort: expected rank, growth, "
					"rate, live or allocs, got '%s'\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 'K':
			if (strcmp(optarg, PS_KIND_SLAB) && strcmp(optarg, PS_KIND_KMALLOC) &&
			    strcmp(optarg, PS_KIND_PAGE) && strcmp(optarg, PS_KIND_PERCPU) &&
			    strcmp(optarg, PS_KIND_POOL)) {
				fprintf(stderr, "poolscope report: --kind: expected slab, kmalloc, "
					"page, percpu or pool, got '%s'\n", optarg);
				return PS_EXIT_USAGE;
			}
			vo.kind = optarg;
			break;
		case 'P':
			vo.path = optarg;
			break;
		case 'G':
			vo.tag = optarg;
			break;
		case 'C':
			vo.comm = optarg;
			break;
		case 'V':
			vmlinux = optarg;
			break;
		case 'I':
			debuginfo = optarg;
			break;
		case 'k':
			stacks = optarg;
			break;
		case 'n':
			top_set = true;
			if (ps_parse_uint(optarg, 0, UINT_MAX, &top)) {
				fprintf(stderr, "poolscope report: --top: expected a number >= 0, "
					"got '%s'\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 'f':
			if (ps_fmt_parse(optarg, &fmt)) {
				fprintf(stderr, "poolscope report: --format: expected text, csv, json "
					"or markdown, got '%s'\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 'F':
		case 'T':
			window_set = true;
			if (ps_parse_duration_ns(optarg, c == 'F' ? &from : &to)) {
				fprintf(stderr, "poolscope report: --%s: expected a duration "
					"(10s, 500ms), got '%s'\n", c == 'F' ? "from" : "to", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 'r':
			rules_path = optarg;
			break;
		case 'b':
			if (!strcmp(optarg, "path"))
				by_path = true;
			else if (!strcmp(optarg, "cache"))
				by_cache = true;
			else if (strcmp(optarg, "tag")) {
				fprintf(stderr, "poolscope report: --by: expected tag, path or cache, "
					"got '%s'\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return PS_EXIT_OK;
		default:
			usage(stderr);
			return PS_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return PS_EXIT_USAGE;
	}
	if (by_cache && (by_path || stacks || domain_set || vo.kind || vo.path || vo.tag ||
			 vo.comm || vo.sort != PS_SORT_RANK)) {
		fprintf(stderr, "poolscope report: --by cache lists every cache: --domain, --sort, "
			"--stacks and the filters choose tags\n");
		return PS_EXIT_USAGE;
	}
	if (stacks && (by_path || vo.kind || vo.path || vo.tag || vo.comm ||
		       vo.sort != PS_SORT_RANK)) {
		fprintf(stderr, "poolscope report: --stacks lists one tag's stacks: it goes without "
			"--by, --sort and the filters\n");
		return PS_EXIT_USAGE;
	}
	if (by_path && (vo.kind || vo.path || vo.tag || vo.comm || vo.sort != PS_SORT_RANK)) {
		fprintf(stderr, "poolscope report: --by path lists the paths: --sort and the "
			"filters choose tags\n");
		return PS_EXIT_USAGE;
	}
	if (ps_rules_open("report", rules_path, &rs))
		return PS_EXIT_FAIL;
	rc = ps_run_load(&run, argv[optind], err, sizeof(err));
	if (rc) {
		fprintf(stderr, "poolscope report: %s\n", err[0] ? err : ps_strerror(rc));
		rc = PS_EXIT_FAIL;
		goto out;
	}
	if (ps_srcline_apply("report", run, vmlinux, debuginfo, false)) {
		rc = PS_EXIT_FAIL;
		goto out;
	}
	/* a recorder stopped before its first interval leaves a valid trace with nothing to rank */
	if (!run->nintervals) {
		fprintf(stderr, "poolscope report: %s: no intervals (the recording ended before the "
			"first one)\n", argv[optind]);
		rc = PS_EXIT_FAIL;
		goto out;
	}
	if (from > run->intervals[run->nintervals - 1].t_ns) {
		fprintf(stderr, "poolscope report: %s: --from is after the end of the trace "
			"(%.3f s)\n", argv[optind], run->intervals[run->nintervals - 1].t_ns / 1e9);
		rc = PS_EXIT_FAIL;
		goto out;
	}
	if (!window_set)
		ps_run_workload_span(run, &from, &to);
	rc = ps_report_build(&rep, run, rs, from, to);
	if (rc) {
		fprintf(stderr, "poolscope report: %s: %s\n", argv[optind],
			rc == -ERANGE ? "--from is after --to" : ps_strerror(rc));
		rc = PS_EXIT_FAIL;
		goto out;
	}
	rc = ps_verdict_build(&v, &rep, domain);
	if (rc) {
		fprintf(stderr, "poolscope report: %s: %s\n", argv[optind], ps_strerror(rc));
		rc = PS_EXIT_FAIL;
		goto out;
	}
	if (stacks) {
		rc = ps_print_stacks(stdout, &rep, stacks, top_set ? top : 5, fmt);
		if (rc == -ENODATA) {
			fprintf(stderr, "poolscope report: %s: the tags matching '%s' hold no live "
				"bytes and allocated nothing in the window, or are pages under slabs "
				"(their slab tags count them)\n", argv[optind], stacks);
			rc = PS_EXIT_FAIL;
			goto out;
		}
		if (rc == -ENOENT) {
			fprintf(stderr, "poolscope report: %s: no tag matches '%s' (the labels are "
				"those of 'report --top 0', e.g. 'filp@alloc_empty_file+0x3c')\n",
				argv[optind], stacks);
			rc = PS_EXIT_FAIL;
			goto out;
		}
		if (rc) {
			fprintf(stderr, "poolscope report: %s: %s\n", argv[optind], ps_strerror(rc));
			rc = PS_EXIT_FAIL;
			goto out;
		}
		rc = ps_finish_stdout(PS_EXIT_OK);
		goto out;
	}
	if (by_cache) {
		rc = ps_report_print_caches(stdout, &rep, fmt == PS_FMT_MD ? PS_FMT_TEXT : fmt,
					    top_set ? (size_t)top : 15);
		if (rc) {
			fprintf(stderr, "poolscope report: %s: %s\n", argv[optind], ps_strerror(rc));
			rc = PS_EXIT_FAIL;
			goto out;
		}
	} else if (by_path) {
		ps_report_print_paths(stdout, &v, fmt == PS_FMT_MD ? PS_FMT_TEXT : fmt);
	} else {
		rc = ps_view_build(&view, &rep, &vo);
		if (rc) {
			fprintf(stderr, "poolscope report: %s: %s\n", argv[optind], ps_strerror(rc));
			rc = PS_EXIT_FAIL;
			goto out;
		}
		ps_report_print(stdout, &view, &v, fmt, (size_t)top);
	}
	rc = ps_finish_stdout(PS_EXIT_OK);
out:
	ps_view_free(&view);
	ps_report_free(&rep);
	ps_run_free(run);
	ps_rules_free(rs);
	return rc;
}

PS_COMMAND(report, cmd_report, "the verdict (leak, growing, plateau, stable) and the top tags");
