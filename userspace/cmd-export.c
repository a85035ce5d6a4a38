// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope export: --folded writes flamegraph.pl input (live bytes by sampled stack, root
 * first, frames "sym" or "module+0xoff", the tag as the leaf); --csv timeline writes one row
 * per interval and tag (t_s, tag, kind, live_bytes, allocs, frees) for gnuplot/spreadsheets;
 * --pprof FILE writes the stacks as a gzipped pprof profile (pprof.c).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "userspace/poolscope.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/trace/trace.h"
#include "analysis/analysis.h"
#include "userspace/pprof.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: poolscope export TRACE (--folded | --csv timeline | --pprof FILE [-f])\n"
		"  --folded        live bytes by stack (flamegraph.pl input), root first\n"
		"  --csv timeline  per-interval per-tag live bytes, allocs, frees\n"
		"  --pprof FILE    the stacks as a gzipped pprof profile (go tool pprof FILE)\n"
		"  -f, --force     with --pprof: replace FILE if it exists\n"
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

static int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "folded", no_argument, NULL, 'F' },
		{ "csv", required_argument, NULL, 'c' },
		{ "pprof", required_argument, NULL, 'P' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 } };
	struct ps_run *r = NULL;
	char err[512] = "", lb[256];
	const char *pprof = NULL;
	bool force = false;
	int c, mode = 0;

	while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		int want = c == 'F' ? 1 : c == 'c' ? 2 : c == 'P' ? 3 : 0;

		if (want && mode && mode != want) {
			/* one output a run: the second would silently win */
			fprintf(stderr, "poolscope export: --folded, --csv and --pprof exclude each "
				"other\n");
			return PS_EXIT_USAGE;
		}
		if (c == 'f') {
			force = true;
		} else if (c == 'P') {
			pprof = optarg;
			mode = 3;
		} else if (c == 'F') {
			mode = 1;
		} else if (c == 'c') {
			if (strcmp(optarg, "timeline")) {
				fprintf(stderr, "poolscope export: --csv: expected 'timeline', got "
					"'%s'\n", optarg);
				return PS_EXIT_USAGE;
			}
			mode = 2;
		} else {
			usage(c == 'h' ? stdout : stderr);
			return c == 'h' ? PS_EXIT_OK : PS_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || !mode) {
		usage(stderr);
		return PS_EXIT_USAGE;
	}
	if (force && mode != 3) {
		fprintf(stderr, "poolscope export: --force goes with --pprof (the others write to "
			"standard output)\n");
		return PS_EXIT_USAGE;
	}
	if (ps_run_load(&r, argv[optind], err, sizeof(err))) {
		fprintf(stderr, "poolscope export: %s\n", err);
		return PS_EXIT_FAIL;
	}
	if (mode == 3) {
		int e = ps_pprof_write(r, pprof, force, err, sizeof(err));

		if (!e && !r->nstacks)
			fprintf(stderr, "poolscope export: warning: %s has no sampled stacks: the "
				"profile is empty (record with stacks, or convert an .etl with stack "
				"walks)\n", argv[optind]);
		ps_run_free(r);
		if (e) {
			fprintf(stderr, "poolscope export: %s\n", err);
			return PS_EXIT_FAIL;
		}
		return PS_EXIT_OK;
	}
	if (mode == 1) {
		for (size_t i = 0; i < r->nstacks; i++) {
			const struct ps_stack *st = &r->stacks[i];
			const struct ps_tag_series *ts = ps_run_tag(r, st->tag_id);

			/* pages backing slabs are counted by their slab tags (trace-format.md) */
			if (st->live_bytes <= 0 || (ts && ts->tag.flags & PS_TAG_F_SLAB_BACKING))
				continue;
			for (uint32_t k = st->nframes; k-- > 0;) {
				const struct ps_frame *fr = &st->frames[k];

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
				putchar(';');
			}
			put_clean(ts ? ps_tag_label(&ts->tag, lb, sizeof(lb)) : "?");
			printf(" %" PRId64 "\n", st->live_bytes);
		}
	} else {
		printf("t_s,tag,kind,live_bytes,allocs,frees\n");
		for (uint32_t t = 0; t < r->nintervals; t++)
			for (size_t i = 0; i < r->ntags; i++) {
				const struct ps_tag_series *ts = &r->tags[i];

				ps_tag_label(&ts->tag, lb, sizeof(lb));
				printf("%.3f,\"", r->intervals[t].t_ns / 1e9);
				for (const char *p = lb; *p; p++)
					printf(*p == '"' ? "\"\"" : "%c", *p);
				printf("\",%s,%" PRId64 ",%" PRIu64 ",%" PRIu64 "\n", ts->tag.kind,
				       ts->s[t].live_bytes, ts->s[t].allocs, ts->s[t].frees);
			}
	}
	ps_run_free(r);
	return ps_finish_stdout(PS_EXIT_OK);
}

PS_COMMAND(export, cmd_export, "folded stacks, a CSV timeline or a pprof profile from a trace");
