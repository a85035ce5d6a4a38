// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope record: options, privilege and environment checks, then userspace/record does the
 * work. Checks happen before anything is created so that a user without the capabilities gets
 * one line saying what is missing, not a libbpf error.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "userspace/poolscope.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/prom/server.h"
#include "userspace/record/recorder.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: poolscope record -o FILE [OPTIONS] [-- CMD [ARGS...]]\n"
"       poolscope record --listen ADDRESS:PORT [-o FILE] [OPTIONS] [-- CMD [ARGS...]]\n"
"\n"
"Records per-tag kernel allocations (slab caches, kmalloc call sites, pages, percpu)\n"
"with eBPF into a trace file, once per interval, until Ctrl-C/SIGTERM, --duration or\n"
"the end of CMD. Needs root (CAP_BPF + CAP_PERFMON) and kernel BTF.\n"
"\n"
"options:\n"
"  -o, --output FILE      trace file to create (mode 0600)\n"
"  -f, --force            replace FILE if it exists\n"
"  -l, --label L          name of the run (meta label)\n"
"  -d, --duration N       stop after N (\"120\", \"2m\", \"500ms\")\n"
"  -i, --interval N       sampling interval (default 1s)\n"
"      --site-sample N    track 1 in N objects (address hash, power of two) for\n"
"                         call-site tags and scale (default 16; 1 = every object)\n"
"      --stack-sample N   take a kernel stack for 1 in N tracked slab allocations\n"
"                         (default 64; 0 = no stacks)\n"
"      --comm C           count only allocations by tasks named C (implies exact\n"
"                         tracking of those objects)\n"
"      --pid P            count only allocations by process P\n"
"      --cgroup PATH      count only allocations by tasks in cgroup PATH (v2)\n"
"      --map-size M=N,... BPF map sizes: tags (65536), ptrs (524288; 2097152\n"
"                         without the kfunc; a power of two), stacks (32768),\n"
"                         stack-counts (65536),\n"
"                         classes (4096), class-slots (1024, a power of two)\n"
"      --empty-probes     benchmark only: attach empty programs, count nothing\n"
"                         (the floor of the probes' cost)\n"
"      --backend B        bpf, tracefs (the kmem tracepoints through tracefs, where\n"
"                         BPF cannot run: no sampling, page stacks only), or auto\n"
"                         (default: bpf, tracefs when the kernel refuses BPF)\n"
"      --vmlinux FILE     the running kernel's image with DWARF: call sites and frames\n"
"                         get source lines (default: searched in the debug root)\n"
"      --debuginfo DIR    the debug root to search (default /usr/lib/debug)\n"
"      --no-kfunc         do without bpf_get_kmem_cache() as on kernels before 6.13\n"
"                         (kmalloc classes by size, every kmalloc object tracked)\n"
"      --min-free SIZE    stop (exit 1, the trace kept) when the trace's filesystem\n"
"                         has less free (default 1G or 5%% of it, the smaller; 0 = never)\n"
"      --listen A:P       serve the live figures and the verdict per path at\n"
"                         http://A:P/metrics (Prometheus/OpenMetrics text); A is a\n"
"                         numeric address: 127.0.0.1, [::1], 0.0.0.0 for every interface\n"
"      --listen-top N     tags per path on the metrics page (default 10, 1..1000)\n"
"      --listen-window D  window of the page's verdict (default 5m, at least 20s)\n"
"  -q, --quiet            no live status line\n"
"  -h, --help             this text\n"
"\n"
"EXAMPLES\n"
"  poolscope record -o run.db --label remote-8k-qd16 --duration 120\n"
"  poolscope record -o run.db -- ./run-benchmark.sh\n"
"  poolscope record -o run.db --comm smbd --stack-sample 1 --duration 60\n"
"  poolscope record --listen 127.0.0.1:9490 -q\n"
"  poolscope report run.db\n");
}

/* One line naming what is missing, or 0 when BPF tracing is allowed. */
static int check_caps(char *msg, size_t len)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	uint64_t eff;
	bool bpf, perfmon, admin;

	if (syscall(SYS_capget, &hdr, data)) {
		snprintf(msg, len, "cannot read capabilities: %s", strerror(errno));
		return -errno;
	}
	eff = data[0].effective | ((uint64_t)data[1].effective << 32);
	admin = eff & (1ull << CAP_SYS_ADMIN);
	bpf = eff & (1ull << 39);	/* CAP_BPF */
	perfmon = eff & (1ull << 38);	/* CAP_PERFMON */
	if ((bpf && perfmon) || admin)
		return 0;
	snprintf(msg, len, "needs root or CAP_BPF+CAP_PERFMON (missing:%s%s)", bpf ? "" : " CAP_BPF",
		 perfmon ? "" : " CAP_PERFMON");
	return -EPERM;
}

static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int parse_map_sizes(char *arg, struct ps_record_opts *o)
{
	for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
		char *eq = strchr(tok, '=');
		uint32_t *dst, v;
		uint64_t sz;

		if (!eq)
			return -EINVAL;
		*eq = 0;
		if (!strcmp(tok, "tags"))
			dst = &o->map_tags;
		else if (!strcmp(tok, "ptrs"))
			dst = &o->map_ptrs;
		else if (!strcmp(tok, "stacks"))
			dst = &o->map_stacks;
		else if (!strcmp(tok, "stack-counts"))
			dst = &o->map_stack_counts;
		else if (!strcmp(tok, "classes"))
			dst = &o->map_classes;
		else if (!strcmp(tok, "class-slots"))
			dst = &o->map_class_slots;
		else
			return -EINVAL;
		if (ps_parse_size(eq + 1, &sz) || !sz || sz > (1u << 26))
			return -EINVAL;
		v = (uint32_t)sz;
		if (dst == &o->map_class_slots && (v & (v - 1)))
			return -EINVAL;
		*dst = v;
	}
	return 0;
}

static char *join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

static int cmd_record(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "label", required_argument, NULL, 'l' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "site-sample", required_argument, NULL, 1 },
		{ "stack-sample", required_argument, NULL, 2 },
		{ "comm", required_argument, NULL, 3 },
		{ "pid", required_argument, NULL, 4 },
		{ "cgroup", required_argument, NULL, 5 },
		{ "map-size", required_argument, NULL, 6 },
		{ "empty-probes", no_argument, NULL, 7 },
		{ "no-kfunc", no_argument, NULL, 8 },
		{ "listen", required_argument, NULL, 9 },
		{ "min-free", required_argument, NULL, 12 },
		{ "listen-top", required_argument, NULL, 10 },
		{ "listen-window", required_argument, NULL, 11 },
		{ "backend", required_argument, NULL, 13 },
		{ "vmlinux", required_argument, NULL, 14 },
		{ "debuginfo", required_argument, NULL, 15 },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct ps_record_opts o = {
		.interval_ns = 1000000000ull, .site_sample = 16, .stack_sample = 64,
		.map_tags = 65536, .map_ptrs = 0, .map_stacks = 32768,
		.map_stack_counts = 65536, .map_classes = 4096,
		.map_class_slots = 1024,
		.listen_top = 10, .listen_window_ns = 300000000000ull,
	};
	char err[1024], msg[256], *cmdline;
	bool quiet = false;
	uint32_t pid;
	int c, e;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:fl:d:i:qh", lopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.out = optarg; break;
		case 'f': o.force = true; break;
		case 'l': o.label = optarg; break;
		case 'd':
			if (ps_parse_duration_ns(optarg, &o.duration_ns) || !o.duration_ns) {
				fprintf(stderr, "poolscope record: --duration %s: expected a duration "
					"like 120, 2m, 500ms\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 'i':
			if (ps_parse_duration_ns(optarg, &o.interval_ns) ||
			    o.interval_ns < 10000000ull) {
				fprintf(stderr, "poolscope record: --interval %s: expected a duration "
					">= 10ms\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 1:
			if (parse_u32(optarg, &o.site_sample) || !o.site_sample ||
			    (o.site_sample & (o.site_sample - 1)) || o.site_sample > 65536) {
				fprintf(stderr, "poolscope record: --site-sample %s: expected a power of "
					"two from 1 to 65536\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 2:
			if (parse_u32(optarg, &o.stack_sample)) {
				fprintf(stderr, "poolscope record: --stack-sample %s: expected a number "
					"(0 = off)\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 3:
			if (!*optarg || strlen(optarg) > 15) {
				fprintf(stderr, "poolscope record: --comm %s: expected 1 to 15 "
					"characters (the kernel's comm)\n", optarg);
				return PS_EXIT_USAGE;
			}
			o.comm = optarg;
			break;
		case 4:
			if (parse_u32(optarg, &pid) || !pid || pid > INT32_MAX) {
				fprintf(stderr, "poolscope record: --pid %s: expected a process id\n",
					optarg);
				return PS_EXIT_USAGE;
			}
			/* a filter that matches nothing would record an empty trace, silently */
			if (kill((pid_t)pid, 0) && errno == ESRCH) {
				fprintf(stderr, "poolscope record: --pid %s: no such process\n", optarg);
				return PS_EXIT_FAIL;
			}
			o.pid = (int)pid;
			break;
		case 5: o.cgroup = optarg; break;
		case 6:
			if (parse_map_sizes(optarg, &o)) {
				fprintf(stderr, "poolscope record: --map-size: expected NAME=N[,...] with "
					"NAME tags, ptrs, stacks, stack-counts, classes or class-slots (2^k)\n");
				return PS_EXIT_USAGE;
			}
			break;
		case 7: o.empty_probes = true; break;
		case 8: o.no_kfunc = true; break;
		case 14: o.vmlinux = optarg; break;
		case 15: o.debuginfo = optarg; break;
		case 13:
			if (!strcmp(optarg, "bpf"))
				o.backend = PS_BACKEND_BPF;
			else if (!strcmp(optarg, "tracefs"))
				o.backend = PS_BACKEND_TRACEFS;
			else if (!strcmp(optarg, "auto"))
				o.backend = PS_BACKEND_AUTO;
			else {
				fprintf(stderr, "poolscope record: --backend: expected bpf, tracefs or "
					"auto, got '%s'\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 9: {
			struct sockaddr_storage ss;
			unsigned sl;

			if (ps_httpd_parse_addr(optarg, &ss, &sl, msg, sizeof(msg))) {
				fprintf(stderr, "poolscope record: --listen %s\n", msg);
				return PS_EXIT_USAGE;
			}
			o.listen = optarg;
			break;
		}
		case 10:
			if (ps_parse_uint(optarg, 1, 1000, &o.listen_top)) {
				fprintf(stderr, "poolscope record: --listen-top %s: expected a number "
					"from 1 to 1000\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 12:
			if (ps_parse_size(optarg, &o.min_free)) {
				fprintf(stderr, "poolscope record: --min-free %s: expected a size like "
					"512M, 2G or 0\n", optarg);
				return PS_EXIT_USAGE;
			}
			o.min_free_set = true;
			break;
		case 11:
			if (ps_parse_duration_ns(optarg, &o.listen_window_ns) ||
			    o.listen_window_ns < 20000000000ull) {
				fprintf(stderr, "poolscope record: --listen-window %s: expected a "
					"duration of at least 20s (the verdict needs 20 s)\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 'q': quiet = true; break;
		case 'h': usage(stdout); return PS_EXIT_OK;
		default: usage(stderr); return PS_EXIT_USAGE;
		}
	}
	if (!o.out && !o.listen) {
		fprintf(stderr, "poolscope record: -o FILE is required (or --listen alone, to "
			"serve metrics without a trace)\n");
		usage(stderr);
		return PS_EXIT_USAGE;
	}
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--")) {
			fprintf(stderr, "poolscope record: unexpected argument '%s' (put the command "
				"after --)\n", argv[optind]);
			return PS_EXIT_USAGE;
		}
		o.cmd = argv + optind;
	}
	if (o.listen && o.listen_window_ns / o.interval_ns > 4095) {
		fprintf(stderr, "poolscope record: --listen-window: at most 4096 intervals (a "
			"shorter window or a longer --interval)\n");
		return PS_EXIT_USAGE;
	}
	/* what BPF needs; auto goes on through tracefs without it, saying why */
	if (o.backend != PS_BACKEND_TRACEFS) {
		bool why = check_caps(msg, sizeof(msg));

		if (!why && access("/sys/kernel/btf/vmlinux", R_OK)) {
			snprintf(msg, sizeof(msg), "no kernel BTF (/sys/kernel/btf/vmlinux: %s); a "
				 "kernel built with CONFIG_DEBUG_INFO_BTF=y is needed", strerror(errno));
			why = true;
		}
		if (why && (o.backend == PS_BACKEND_BPF || o.empty_probes || o.comm || o.pid ||
			    o.cgroup)) {
			fprintf(stderr, "poolscope record: %s\n", msg);
			return PS_EXIT_FAIL;
		}
		/* tracefs is no way out either when its files are closed to us (root mounts it) */
		if (why && geteuid() &&
		    access("/sys/kernel/tracing/events/kmem/kmalloc/format", R_OK) &&
		    access("/sys/kernel/debug/tracing/events/kmem/kmalloc/format", R_OK)) {
			fprintf(stderr, "poolscope record: %s; the tracefs backend needs root too\n",
				msg);
			return PS_EXIT_FAIL;
		}
		if (why) {
			if (!o.quiet)
				fprintf(stderr, "poolscope record: BPF unavailable (%s): recording "
					"through tracefs (docs/record.md, \"The tracefs backend\")\n",
					msg);
			o.backend = PS_BACKEND_TRACEFS;
		}
	}
	if (o.out && !o.force && !access(o.out, F_OK)) {
		fprintf(stderr, "poolscope record: %s: exists (use --force to replace it)\n", o.out);
		return PS_EXIT_FAIL;
	}
	o.status = !quiet && isatty(STDERR_FILENO);
	o.quiet = quiet;
	cmdline = join_args(argc, argv);
	o.cmdline = cmdline ? cmdline : "record";
	e = ps_record_run(&o, err, sizeof(err));
	free(cmdline);
	if (e) {
		fprintf(stderr, "poolscope record: %s\n", err[0] ? err : ps_strerror(e));
		return PS_EXIT_FAIL;
	}
	return PS_EXIT_OK;
}
PS_COMMAND(record, cmd_record, "record per-tag kernel allocations into a trace file (eBPF)");
