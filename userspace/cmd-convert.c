// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope convert IN... -o out.db: Windows inputs into a poolscope trace. The input kind is
 * decided by content, not by name: a raw .etl (pool events, stacks, image loads), poolmon
 * snapshot files or console captures, windbg !poolused text, or poolscope-win sample files.
 * Text inputs may be several (in order: one timeline); an .etl is converted alone.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "userspace/input.h"
#include "userspace/poolscope.h"
#include "userspace/record/replay.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/etw/convert.h"
#include "userspace/lib/trace/trace.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: poolscope convert IN... -o OUT.db [--pooltag FILE] [--interval 1s] [--force]\n\n"
		"Converts Windows pool data into a poolscope trace: a raw .etl kernel trace with\n"
		"pool events (xperf, WPR, poolscope-win trace), poolmon /n snapshot files or console\n"
		"captures, windbg !poolused output, poolscope-win sample files; and Linux kmem\n"
		"captures of trace-cmd (trace.dat). The kind is detected from the content. Each text\n"
		"snapshot becomes one interval.\n\n"
		"options:\n"
		"  -o, --output FILE     trace to write (refused if it exists, unless --force)\n"
		"  -p, --pooltag FILE    pooltag.txt: tag -> driver (owner column)\n"
		"  -i, --interval DUR    .etl timeline step / snapshot spacing (default 1s)\n"
		"  -f, --force           replace OUT\n"
		"  -h, --help            this text\n\n"
		"EXAMPLES\n"
		"  poolscope convert pool.etl -o win.db --pooltag pooltag.txt\n"
		"  poolscope convert snap1.log snap2.log -o win.db --interval 60s\n"
		"  poolscope convert poolused.txt -o win.db\n"
		"  poolscope convert trace.dat -o linux.db             # a trace-cmd kmem capture\n"
		"  poolscope convert pool.etl.xz -o win.db             # gzip, xz, zstd inflated\n"
		"  ssh srv cat pool.etl | poolscope convert - -o win.db  # a pipe, or - for stdin\n");
}

struct progress {
	struct timespec start, last;
	bool on;
};

static double secs(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void show_progress(void *arg, uint64_t done, uint64_t total, uint64_t events)
{
	struct progress *p = arg;
	struct timespec now;
	char a[32], b[32];

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (secs(&p->last, &now) < 0.25 && done < total)
		return;
	p->last = now;
	double el = secs(&p->start, &now);
	fprintf(stderr, "\rconvert: %s / %s, %llu events, %.0f events/s   ",
		ps_fmt_bytes(a, sizeof(a), (double)done, false),
		ps_fmt_bytes(b, sizeof(b), (double)total, false), (unsigned long long)events,
		el > 0 ? (double)events / el : 0.0);
	if (done >= total)
		fputc('\n', stderr);
}

/* Not one of the Windows kinds: a trace-cmd capture (userspace/record/replay.c). */
#define KIND_TRACE_DAT 1000

static bool is_trace_dat(const char *path)
{
	char head[sizeof(PS_TRACE_CMD_MAGIC) - 1];
	FILE *f = fopen(path, "rb");
	bool yes;

	if (!f)
		return false;
	yes = fread(head, 1, sizeof(head), f) == sizeof(head) &&
	      !memcmp(head, PS_TRACE_CMD_MAGIC, sizeof(head));
	fclose(f);
	return yes;
}

/* in: room for argc paths to read, which for a pipe are a copy's (input.c) */
static int convert_main(int argc, char **argv, const char **in)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pooltag", required_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 'i' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *out = NULL, *pooltag = NULL;
	struct ps_convert_opts o = { .interval_ns = 1000000000ULL };
	struct ps_convert_result res = { 0 };
	struct ps_pooltags pt = { 0 };
	struct progress prog = { 0 };
	struct ps_trace *t = NULL;
	bool force = false;
	char err[600], cmdline[512] = "convert";
	int c, r, kind = PS_INPUT_UNKNOWN;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:p:i:fh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'p': pooltag = optarg; break;
		case 'i':
			if (ps_parse_duration_ns(optarg, &o.interval_ns) < 0 || !o.interval_ns) {
				fprintf(stderr, "poolscope convert: --interval: '%s' is not a duration "
					"(1s, 500ms, 2m)\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 'f': force = true; break;
		case 'h': usage(stdout); return PS_EXIT_OK;
		default: usage(stderr); return PS_EXIT_USAGE;
		}
	}
	if (optind >= argc || !out) {
		fprintf(stderr, "poolscope convert: %s\n", !out ? "-o OUT.db is required" :
			"no input file");
		usage(stderr);
		return PS_EXIT_USAGE;
	}
	for (int i = 1; i < argc; i++) {
		size_t l = strlen(cmdline);

		snprintf(cmdline + l, sizeof(cmdline) - l, " %s", argv[i]);
	}
	const char *const *names = (const char *const *)argv + optind;
	size_t nin = argc - optind;
	for (size_t i = 0; i < nin; i++) {
		in[i] = ps_input_path(names[i], err, sizeof(err));
		if (!in[i]) {
			fprintf(stderr, "poolscope convert: %s\n", err);
			return PS_EXIT_FAIL;
		}
		int k = is_trace_dat(in[i]) ? KIND_TRACE_DAT : ps_convert_detect(in[i]);
		if (k < 0) {
			fprintf(stderr, "poolscope convert: %s: %s\n", names[i], strerror(-k));
			return PS_EXIT_FAIL;
		}
		if (k == PS_INPUT_UNKNOWN) {
			fprintf(stderr, "poolscope convert: %s: not an .etl file, poolmon output, "
				"!poolused output or poolscope-win sample file\n", names[i]);
			return PS_EXIT_FAIL;
		}
		if (k == PS_INPUT_POOLUSED)
			k = PS_INPUT_POOLMON;		/* one text converter reads both */
		if (i && k != kind) {
			fprintf(stderr, "poolscope convert: %s is %s input, %s is %s: convert them "
				"separately\n", names[0], ps_input_kind_name(kind), names[i],
				ps_input_kind_name(k));
			return PS_EXIT_USAGE;
		}
		kind = k;
	}
	if ((kind == PS_INPUT_ETL || kind == KIND_TRACE_DAT) && nin > 1) {
		fprintf(stderr, "poolscope convert: one %s at a time (got %zu inputs)\n",
			kind == PS_INPUT_ETL ? ".etl" : "trace.dat", nin);
		return PS_EXIT_USAGE;
	}
	if (kind == PS_INPUT_POOLSAMPLE && nin > 1) {
		fprintf(stderr, "poolscope convert: one sample file at a time (got %zu)\n", nin);
		return PS_EXIT_USAGE;
	}
	/* the sample converter sets no owners: --pooltag is not read for a sample file */
	if (pooltag && kind != PS_INPUT_POOLSAMPLE) {
		r = ps_pooltag_load(&pt, pooltag, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "poolscope convert: --pooltag: %s\n", err);
			return PS_EXIT_FAIL;
		}
		o.pooltags = &pt;
	}
	r = ps_trace_create(&t, out, PS_TRACE_F_BATCH | (force ? PS_TRACE_F_FORCE : 0));
	if (r < 0) {
		fprintf(stderr, "poolscope convert: %s: %s%s\n", out, ps_strerror(r),
			r == -EEXIST ? " (use --force to replace it)" : "");
		ps_pooltag_free(&pt);
		return PS_EXIT_FAIL;
	}
	if (isatty(STDERR_FILENO)) {
		prog.on = true;
		clock_gettime(CLOCK_MONOTONIC, &prog.start);
		o.progress = show_progress;
		o.progress_arg = &prog;
	}
	err[0] = 0;
	if (kind == KIND_TRACE_DAT) {
		struct ps_replay_opts ro = { .interval_ns = o.interval_ns, .cmdline = cmdline };

		r = ps_replay_trace_cmd(t, in[0], &ro, err, sizeof(err));
	} else if (kind == PS_INPUT_ETL)
		r = ps_convert_etl(t, in[0], &o, &res, err, sizeof(err));
	else if (kind == PS_INPUT_POOLSAMPLE)
		r = ps_convert_poolsample(t, in[0], &o, &res, err, sizeof(err));
	else
		r = ps_convert_text(t, in, nin, &o, &res, err, sizeof(err));
	ps_pooltag_free(&pt);
	if (res.torn_snapshots)
		fprintf(stderr, "poolscope convert: %s: warning: %u snapshots cut short (the "
			"sampler was stopped while writing them) were dropped\n", in[0],
			res.torn_snapshots);
	if (r < 0) {
		ps_trace_discard(t);
		fprintf(stderr, "poolscope convert: %s\n", err);
		return PS_EXIT_FAIL;
	}
	if (ps_trace_close(t) < 0) {
		fprintf(stderr, "poolscope convert: %s: closing the trace failed\n", out);
		unlink(out);
		return PS_EXIT_FAIL;
	}
	if (kind == KIND_TRACE_DAT)
		printf("%s: trace-cmd capture %s converted\n", out, names[0]);
	else if (kind == PS_INPUT_ETL)
		printf("%s: %llu events, %llu pool allocs, %llu frees (%llu of allocations made "
		       "before the trace), %u tags, %u stacks, %u intervals\n", out,
		       (unsigned long long)res.events, (unsigned long long)res.pool_allocs,
		       (unsigned long long)res.pool_frees, (unsigned long long)res.preexisting_frees,
		       res.tags, res.stacks, res.intervals);
	else
		printf("%s: %u snapshots, %u tags, %u lines that are not pool rows skipped\n",
		       out, res.snapshots, res.tags, res.skipped);
	if (res.problems) {
		fprintf(stderr, "poolscope convert: %s\n", res.first_problem);
		fprintf(stderr, "poolscope convert: %u problems in the input; %s keeps what was "
			"sound\n", res.problems, out);
		return ps_finish_stdout(PS_EXIT_FAIL);
	}
	return ps_finish_stdout(PS_EXIT_OK);
}

static int cmd_convert(int argc, char **argv)
{
	const char **paths = calloc(argc ? argc : 1, sizeof(*paths));
	int rc;

	if (!paths) {
		fprintf(stderr, "poolscope convert: out of memory\n");
		return PS_EXIT_FAIL;
	}
	rc = convert_main(argc, argv, paths);
	free(paths);
	if (rc != PS_EXIT_OK)
		ps_input_note(stderr, "poolscope convert");
	return rc;
}

PS_COMMAND(convert, cmd_convert, "convert Windows .etl, poolmon or !poolused output to a trace");
