// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope export: --folded writes flamegraph.pl input (live bytes by sampled stack, root
 * first, frames "sym" or "module+0xoff", the tag as the leaf); --csv timeline writes one row
 * per interval and tag for gnuplot and spreadsheets; --pprof FILE writes the stacks as a
 * gzipped pprof profile (pprof.c). Folded and pprof values are the report's figures of each tag
 * over the report's window, split between its sampled stacks (analysis/stackshare.h), so that
 * a flame graph's widths add up to what `report` says.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/poolscope.h"
#include "userspace/srcline.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/trace/trace.h"
#include "analysis/analysis.h"
#include "analysis/stackshare.h"
#include "userspace/pprof.h"

enum { M_NONE, M_FOLDED, M_CSV, M_PPROF };

static void usage(FILE *f)
{
	fprintf(f, "usage: poolscope export TRACE (--folded | --csv timeline | --pprof FILE [-f])\n"
		"                        [--from T] [--to T] [--vmlinux FILE] [--debuginfo DIR]\n"
		"  --folded        live bytes by stack (flamegraph.pl input), root first\n"
		"  --csv timeline  per-interval per-tag live bytes and objects, allocs, frees\n"
		"  --pprof FILE    the stacks as a gzipped pprof profile (go tool pprof FILE)\n"
		"  -f, --force     with --pprof: replace FILE if it exists\n"
		"  --from T, --to T  the window, as report takes it: folded and pprof give each\n"
		"                  tag the report's figures over it (default: report's window),\n"
		"                  the timeline lists its intervals (default: all)\n"
		"  --vmlinux FILE  with --pprof: functions get their source files and lines from\n"
		"                  this kernel image with DWARF (the trace's own otherwise)\n"
		"  --debuginfo DIR a debug root searched as /usr/lib/debug is\n"
		"EXAMPLES\n  poolscope export run.db --folded > leak.folded\n"
		"  poolscope export run.db --csv timeline > t.csv\n"
		"  poolscope export run.db --pprof leak.pb.gz && go tool pprof -top leak.pb.gz\n");
}

/* Folded-format frames must not contain ';' or spaces that end the stack. */
static void put_clean(const char *s)
{
	for (; *s; s++)
		putchar(*s == ';' || *s == ' ' ? '_' : *s);
}

static void put_frame(const struct ps_frame *fr)
{
	if (fr->sym) {
		char b[256];
		const char *plus = strchr(fr->sym, '+');

		snprintf(b, sizeof(b), "%.*s", plus ? (int)(plus - fr->sym) :
			 (int)strlen(fr->sym), fr->sym);
		put_clean(b);
	} else if (fr->module) {
		printf("%s+0x%" PRIx64, fr->module, fr->off);
	} else {
		/* in no known image: the offset means nothing, the address does */
		printf("0x%" PRIx64, fr->addr);
	}
}

static void print_folded(const struct ps_stack_share *e, size_t n)
{
	char lb[256];

	for (size_t i = 0; i < n; i++) {
		if (e[i].inuse_bytes <= 0)
			continue;
		if (e[i].st) {
			for (uint32_t k = e[i].st->nframes; k-- > 0;) {
				put_frame(&e[i].st->frames[k]);
				putchar(';');
			}
		} else {
			put_clean(PS_NO_STACK_FRAME);
			putchar(';');
		}
		put_clean(ps_tag_label(&e[i].ts->tag, lb, sizeof(lb)));
		printf(" %" PRId64 "\n", e[i].inuse_bytes);
	}
}

/* Intervals [from, end). */
static void print_timeline(const struct ps_run *r, uint32_t from, uint32_t end)
{
	char lb[256];

	printf("t_s,tag,kind,ctx,comm,domain,flags,reclaimable,slab_backing,live_bytes,live_objs,"
	       "allocs,frees,alloc_bytes,free_bytes\n");
	for (uint32_t t = from; t < end; t++)
		for (size_t i = 0; i < r->ntags; i++) {
			const struct ps_tag_series *ts = &r->tags[i];
			const struct ps_sample *s = &ts->s[t];

			printf("%.3f,", r->intervals[t].t_ns / 1e9);
			ps_csv_str(stdout, ps_tag_label(&ts->tag, lb, sizeof(lb)));
			printf(",%s,%s,", ts->tag.kind, ts->tag.ctx ? ts->tag.ctx : "");
			ps_csv_str(stdout, ts->tag.comm);
			printf(",%s,%" PRIu32 ",%d,%d,%" PRId64 ",%" PRId64 ",%" PRIu64 ",%" PRIu64
			       ",%" PRIu64 ",%" PRIu64 "\n", ps_tag_domain(&ts->tag),
			       ts->tag.flags, !!(ts->tag.flags & PS_TAG_F_RECLAIMABLE),
			       !!(ts->tag.flags & PS_TAG_F_SLAB_BACKING), s->live_bytes,
			       s->live_objs, s->allocs, s->frees, s->alloc_bytes, s->free_bytes);
		}
}

static int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "folded", no_argument, NULL, 'F' },
		{ "csv", required_argument, NULL, 'c' },
		{ "pprof", required_argument, NULL, 'P' },
		{ "force", no_argument, NULL, 'f' },
		{ "from", required_argument, NULL, 'a' },
		{ "to", required_argument, NULL, 'b' },
		{ "vmlinux", required_argument, NULL, 'V' },
		{ "debuginfo", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 } };
	struct ps_run *r = NULL;
	struct ps_report rep = { 0 };
	struct ps_stack_share *sh = NULL;
	size_t nsh = 0;
	char err[512] = "";
	const char *pprof = NULL, *trace, *vmlinux = NULL, *debuginfo = NULL;
	uint64_t from = 0, to = UINT64_MAX;
	bool force = false, window_set = false;
	int c, mode = M_NONE, rc;

	while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		int want = c == 'F' ? M_FOLDED : c == 'c' ? M_CSV : c == 'P' ? M_PPROF : M_NONE;

		if (want && mode && mode != want) {
			/* one output a run: the second would silently win */
			fprintf(stderr, "poolscope export: --folded, --csv and --pprof exclude each "
				"other\n");
			return PS_EXIT_USAGE;
		}
		if (c == 'f') {
			force = true;
		} else if (c == 'V') {
			vmlinux = optarg;
		} else if (c == 'I') {
			debuginfo = optarg;
		} else if (c == 'P') {
			pprof = optarg;
			mode = M_PPROF;
		} else if (c == 'F') {
			mode = M_FOLDED;
		} else if (c == 'c') {
			if (strcmp(optarg, "timeline")) {
				fprintf(stderr, "poolscope export: --csv: expected 'timeline', got "
					"'%s'\n", optarg);
				return PS_EXIT_USAGE;
			}
			mode = M_CSV;
		} else if (c == 'a' || c == 'b') {
			window_set = true;
			if (ps_parse_duration_ns(optarg, c == 'a' ? &from : &to)) {
				fprintf(stderr, "poolscope export: --%s: expected a duration (10s, "
					"500ms), got '%s'\n", c == 'a' ? "from" : "to", optarg);
				return PS_EXIT_USAGE;
			}
		} else {
			usage(c == 'h' ? stdout : stderr);
			return c == 'h' ? PS_EXIT_OK : PS_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || !mode) {
		usage(stderr);
		return PS_EXIT_USAGE;
	}
	if (force && mode != M_PPROF) {
		fprintf(stderr, "poolscope export: --force goes with --pprof (the others write to "
			"standard output)\n");
		return PS_EXIT_USAGE;
	}
	trace = argv[optind];
	if (ps_run_load(&r, trace, err, sizeof(err))) {
		fprintf(stderr, "poolscope export: %s\n", err);
		return PS_EXIT_FAIL;
	}
	if (ps_srcline_apply("export", r, vmlinux, debuginfo, false)) {
		rc = PS_EXIT_FAIL;
		goto out;
	}
	if (r->nintervals && from > r->intervals[r->nintervals - 1].t_ns) {
		fprintf(stderr, "poolscope export: %s: --from is after the end of the trace "
			"(%.3f s)\n", trace, r->intervals[r->nintervals - 1].t_ns / 1e9);
		rc = PS_EXIT_FAIL;
		goto out;
	}
	/* the report's window, so that the figures are the report's */
	if (!window_set && mode != M_CSV)
		ps_run_workload_span(r, &from, &to);
	/* a recording stopped before its first interval: nothing to export, not an error */
	rc = r->nintervals ? ps_report_rank(&rep, r, from, to) : 0;
	if (!rc && r->nintervals && mode != M_CSV)
		rc = ps_stack_shares(&rep, &sh, &nsh);
	if (rc) {
		fprintf(stderr, "poolscope export: %s: %s\n", trace,
			rc == -ERANGE ? "--from is after --to" : ps_strerror(rc));
		rc = PS_EXIT_FAIL;
		goto out;
	}
	if (mode == M_PPROF) {
		rc = ps_pprof_write(r, sh, nsh, pprof, force, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "poolscope export: %s\n", err);
			rc = PS_EXIT_FAIL;
			goto out;
		}
		if (!r->nstacks)
			fprintf(stderr, "poolscope export: warning: %s has no sampled stacks: each "
				"tag is one sample under \"%s\" (record with stacks, or convert an "
				".etl with stack walks)\n", trace, PS_NO_STACK_FRAME);
		rc = PS_EXIT_OK;
		goto out;
	}
	if (mode == M_FOLDED)
		print_folded(sh, nsh);
	else
		print_timeline(r, rep.from, r->nintervals ? rep.to + 1 : 0);
	rc = ps_finish_stdout(PS_EXIT_OK);
out:
	free(sh);
	ps_report_free(&rep);
	ps_run_free(r);
	return rc;
}

PS_COMMAND(export, cmd_export, "folded stacks, a CSV timeline or a pprof profile from a trace");
