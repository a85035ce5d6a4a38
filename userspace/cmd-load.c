// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope load: the IOmeter-like workload that makes a file server leak (8 KiB random reads,
 * 16 outstanding per worker), over SMB (libsmbclient) or on a local file (io_uring or pread).
 * Option parsing only; userspace/load/ does the work.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "userspace/poolscope.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/workload/loadspec.h"
#include "userspace/load/load.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: poolscope load TARGET [OPTIONS]\n"
"\n"
"Runs a block workload against TARGET, smb://HOST[:PORT]/SHARE/PATH (libsmbclient) or a\n"
"local file, and prints IOPS, MB/s and latency p50/p99/max every second and a summary.\n"
"Under `poolscope record -- poolscope load ...` the counters go into the recording.\n"
"\n"
"options:\n"
"  -u, --user U%%PASS    SMB user and password (DOMAIN\\user%%pass); default: guest\n"
"  -b, --bs SIZE        block size, 512..16M, multiple of 512 (default 8k)\n"
"      --qd N           outstanding IOs per worker, 1..256 (default 16)\n"
"  -w, --workers N      workers, 1..64 (default 1); smb and pread use QD processes each\n"
"  -d, --duration T     measured time, e.g. 60, 30s, 2m (default 60s)\n"
"      --ramp T         ramp-up before measuring (runs IO, not in the summary)\n"
"      --random         random block-aligned offsets (default)\n"
"      --seq            sequential offsets (each slot starts at its own place)\n"
"      --read           reads only (default)\n"
"      --write          writes only (overwrites the file!)\n"
"      --mix PCT        PCT%% reads, the rest writes (--mix 70 is OLTP)\n"
"      --sweep LIST     steps BS:PAT with PAT rr|rw|sr|sw|oltp, e.g. \"64k:rr,8k:oltp\"\n"
"      --step T         time per sweep step (default 60s)\n"
"  -s, --size SIZE      use only the first SIZE bytes of the file (default: all)\n"
"  -e, --engine E       local engine: uring or pread (default uring when available)\n"
"      --direct         O_DIRECT (local)\n"
"      --rate IOPS      offer at most IOPS IOs a second in all (paced per outstanding IO;\n"
"                       default: as fast as the target answers)\n"
"      --timeout T      SMB connect/IO timeout (default 10s)\n"
"      --seed N         offset seed (default: from the clock)\n"
"      --inject KIND[:N]\n"
"                       a fault on the server every N IOs, held until load exits\n"
"                       (smb:// only; may be repeated); KIND is one of\n"
"                         handle-leak  a file handle never closed (N default 30)\n"
"                         net-stall    a connection never read from (N default 30000)\n"
"      --trace FILE     write per-second workload rows into a new trace FILE\n"
"      --force          replace FILE\n"
"      --quiet          no per-second lines\n"
"  -h, --help           this text\n"
"\n"
"The last line of each step is `result: key=value ...` for scripts.\n"
"\n"
"EXAMPLES\n"
"  poolscope load smb://10.201.0.1/share/test.bin --user psuser%%pspass --bs 8k --qd 16 \\\n"
"      --workers 2 --duration 60 --random --read\n"
"  poolscope load /srv/share/test.bin --bs 8k --qd 16 --duration 60\n"
"  poolscope load smb://127.0.0.1/share/test.bin -u u%%p --sweep \"64k:rr,8k:rr,8k:oltp\" --step 60\n");
}

enum {
	OPT_RANDOM = 256, OPT_SEQ, OPT_READ, OPT_WRITE, OPT_MIX, OPT_SWEEP, OPT_STEP, OPT_DIRECT,
	OPT_TIMEOUT, OPT_SEED, OPT_TRACE, OPT_FORCE, OPT_QUIET, OPT_INJECT, OPT_RATE,
};

static int bad(const char *what, const char *val, const char *expected)
{
	fprintf(stderr, "poolscope load: %s '%s': %s\n", what, val, expected);
	return PS_EXIT_USAGE;
}

static int cmd_load(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "user", required_argument, NULL, 'u' },
		{ "bs", required_argument, NULL, 'b' },
		{ "qd", required_argument, NULL, 'q' },
		{ "workers", required_argument, NULL, 'w' },
		{ "duration", required_argument, NULL, 'd' },
		{ "ramp", required_argument, NULL, 'r' },
		{ "size", required_argument, NULL, 's' },
		{ "engine", required_argument, NULL, 'e' },
		{ "random", no_argument, NULL, OPT_RANDOM },
		{ "seq", no_argument, NULL, OPT_SEQ },
		{ "read", no_argument, NULL, OPT_READ },
		{ "write", no_argument, NULL, OPT_WRITE },
		{ "mix", required_argument, NULL, OPT_MIX },
		{ "sweep", required_argument, NULL, OPT_SWEEP },
		{ "step", required_argument, NULL, OPT_STEP },
		{ "direct", no_argument, NULL, OPT_DIRECT },
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "inject", required_argument, NULL, OPT_INJECT },
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct ps_load_opts *o;
	struct ps_load_pattern one = { .bs = 8192, .random = true, .read_pct = 100 };
	const char *sweep = NULL;
	char err[256];
	uint64_t v;
	unsigned u;
	int c, rc;

	o = calloc(1, sizeof(*o));
	if (!o) {
		fprintf(stderr, "poolscope load: out of memory\n");
		return PS_EXIT_FAIL;
	}
	o->qd = 16;
	o->workers = 1;
	o->duration_ns = 60 * 1000000000ull;
	o->step_ns = 60 * 1000000000ull;
	o->timeout_ms = 10000;
	o->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	optind = 1;
	while ((c = getopt_long(argc, argv, "u:b:w:d:s:e:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'u':
			if (ps_smb_user_parse(optarg, o->domain, sizeof(o->domain), o->user,
					      sizeof(o->user), o->pass, sizeof(o->pass))) {
				rc = bad("--user", "...", "expected USER%PASS or DOMAIN\\USER%PASS");
				goto out;
			}
			break;
		case 'b':
			if (ps_parse_size(optarg, &v) || v < 512 || v > PS_LOAD_MAX_BS || v % 512) {
				rc = bad("--bs", optarg, "expected a multiple of 512 from 512 to 16M");
				goto out;
			}
			one.bs = v;
			break;
		case 'q':
			if (ps_parse_uint(optarg, 1, PS_LOAD_MAX_QD, &o->qd)) {
				rc = bad("--qd", optarg, "expected 1..256");
				goto out;
			}
			break;
		case 'w':
			if (ps_parse_uint(optarg, 1, PS_LOAD_MAX_WORKERS, &o->workers)) {
				rc = bad("--workers", optarg, "expected 1..64");
				goto out;
			}
			break;
		case 'd':
			if (ps_parse_duration_ns(optarg, &v) || v < 1000000000ull || v > 86400000000000ull) {
				rc = bad("--duration", optarg, "expected 1s..24h");
				goto out;
			}
			o->duration_ns = v - v % 1000000000ull;
			break;
		case 'r':
			if (ps_parse_duration_ns(optarg, &v) || v > 3600000000000ull) {
				rc = bad("--ramp", optarg, "expected 0..1h in whole seconds");
				goto out;
			}
			o->ramp_ns = v - v % 1000000000ull;
			break;
		case OPT_STEP:
			if (ps_parse_duration_ns(optarg, &v) || v < 1000000000ull || v > 86400000000000ull) {
				rc = bad("--step", optarg, "expected 1s..24h");
				goto out;
			}
			o->step_ns = v - v % 1000000000ull;
			break;
		case 's':
			if (ps_parse_size(optarg, &v) || !v) {
				rc = bad("--size", optarg, "expected a size like 1g");
				goto out;
			}
			o->span = v;
			break;
		case 'e':
			if (!strcmp(optarg, "uring") || !strcmp(optarg, "io_uring"))
				o->engine = PS_ENGINE_URING;
			else if (!strcmp(optarg, "pread"))
				o->engine = PS_ENGINE_PREAD;
			else {
				rc = bad("--engine", optarg, "expected uring or pread");
				goto out;
			}
			break;
		case OPT_RANDOM: one.random = true; break;
		case OPT_SEQ: one.random = false; break;
		case OPT_READ: one.read_pct = 100; break;
		case OPT_WRITE: one.read_pct = 0; break;
		case OPT_MIX:
			if (ps_parse_uint(optarg, 0, 100, &u)) {
				rc = bad("--mix", optarg, "expected a read percentage 0..100");
				goto out;
			}
			one.read_pct = u;
			break;
		case OPT_SWEEP: sweep = optarg; break;
		case OPT_DIRECT: o->direct = true; break;
		case OPT_TIMEOUT:
			if (ps_parse_duration_ns(optarg, &v) || v < 100000000ull || v > 600000000000ull) {
				rc = bad("--timeout", optarg, "expected 100ms..10m");
				goto out;
			}
			o->timeout_ms = (unsigned)(v / 1000000);
			break;
		case OPT_RATE:
			if (ps_parse_uint(optarg, 1, 100000000u, &u)) {
				rc = bad("--rate", optarg, "expected IOs a second, 1..100000000");
				goto out;
			}
			o->rate = u;
			break;
		case OPT_SEED:
			if (ps_parse_uint(optarg, 0, 0xffffffffu, &u)) {
				rc = bad("--seed", optarg, "expected 0..4294967295");
				goto out;
			}
			o->seed = u;
			break;
		case OPT_INJECT:
			if (ps_load_inject_parse(o, optarg, err, sizeof(err))) {
				rc = bad("--inject", optarg, err);
				goto out;
			}
			break;
		case OPT_TRACE: o->trace_path = optarg; break;
		case OPT_FORCE: o->trace_force = true; break;
		case OPT_QUIET: o->quiet = true; break;
		case 'h':
			usage(stdout);
			rc = PS_EXIT_OK;
			goto out;
		default:
			fprintf(stderr, "poolscope load: see 'poolscope load -h'\n");
			rc = PS_EXIT_USAGE;
			goto out;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "poolscope load: %s (see 'poolscope load -h')\n",
			optind == argc ? "expected a TARGET (smb://HOST/SHARE/PATH or a file)"
				       : "expected exactly one TARGET");
		rc = PS_EXIT_USAGE;
		goto out;
	}
	o->target = argv[optind];
	if (!strncmp(o->target, "smb://", 6)) {
		struct ps_smb_url url;

		if (ps_smb_url_parse(o->target, &url)) {
			rc = bad("target", o->target, "expected smb://HOST[:PORT]/SHARE/PATH "
				 "(credentials go in --user)");
			goto out;
		}
		o->smb = true;
		o->engine = PS_ENGINE_SMB;
		if (o->direct) {
			rc = bad("--direct", o->target, "only for local files");
			goto out;
		}
	} else if (strstr(o->target, "://")) {
		rc = bad("target", o->target, "only smb:// URLs or local paths");
		goto out;
	}
	for (unsigned i = 0; i < o->ninject && !o->smb; i++) {
		if (ps_load_inject_smb_only(o->inject[i].kind)) {
			snprintf(err, sizeof(err), "%s", ps_load_inject_name(o->inject[i].kind));
			rc = bad("--inject", err, "only for smb:// targets (the fault is on the "
				 "SMB server)");
			goto out;
		}
	}
	if (sweep) {
		o->nsteps = ps_load_parse_sweep(sweep, o->steps, PS_LOAD_MAX_STEPS, err, sizeof(err));
		if (o->nsteps < 0) {
			fprintf(stderr, "poolscope load: --sweep %s\n", err);
			rc = PS_EXIT_USAGE;
			goto out;
		}
	} else {
		o->steps[0] = one;
		o->nsteps = 1;
	}
	if (o->engine != PS_ENGINE_URING && o->workers * o->qd > PS_LOAD_MAX_SLOTS) {
		snprintf(err, sizeof(err), "%u", o->workers * o->qd);
		rc = bad("--workers x --qd", err, "at most 1024 processes (one per outstanding IO)");
		goto out;
	}
	rc = ps_load_run(o);
out:
	memset(o->pass, 0, sizeof(o->pass));
	free(o);
	return rc;
}
PS_COMMAND(load, cmd_load, "run an 8 KiB QD16-style workload over SMB or on a local file");
