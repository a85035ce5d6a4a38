// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope etl info|dump FILE: look inside a Windows .etl file without Windows. `info` walks
 * the file once in file order (fastest) and prints the logfile header, buffer statistics and
 * event counts by kind; `dump` prints events in time order, one a line.
 * Exit 1 when the file has problems (truncated, corrupt buffers); what was sound is still shown.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/input.h"
#include "userspace/poolscope.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/etw/etl.h"
#include "userspace/lib/etw/etl_hist.h"

static void etl_usage(FILE *f)
{
	fprintf(f,
		"usage: poolscope etl info FILE [--format text|json]\n"
		"       poolscope etl dump FILE [--limit N] [--format text|json]\n\n"
		"Reads a Windows Event Trace Log (.etl) natively: header, buffers (XPRESS-compressed\n"
		"relogged files included), event counts by kind (info), or events in time order (dump).\n\n"
		"options:\n"
		"  -n, --limit N   dump at most N events\n"
		"      --format F  text (default) or json: info one object (poolscope.etl-info/1),\n"
		"                  dump one object a line (poolscope.etl-dump/1)\n"
		"  -h, --help      this text\n\n"
		"EXAMPLES\n"
		"  poolscope etl info pool.etl\n"
		"  poolscope etl dump pool.etl --limit 50\n"
		"  poolscope etl info pool.etl --format json | jq .kinds\n"
		"  poolscope etl info pool.etl.zst\n"
		"  ssh srv cat pool.etl | poolscope etl info -\n");
}

static void print_problems(struct ps_etl *e, const char *cmd)
{
	const struct ps_etl_stats *st = ps_etl_stats(e);
	const char *p;

	for (unsigned i = 0; (p = ps_etl_problem(e, i)); i++)
		fprintf(stderr, "poolscope etl %s: %s\n", cmd, p);
	if (st->problems > 8)
		fprintf(stderr, "poolscope etl %s: ... %u problems in all\n", cmd, st->problems);
}

/* A WPP message's GUID: absent (a component id, or none) reads as all zero in the table. */
static bool zero_guid(const uint8_t *g)
{
	static const uint8_t zero[16];

	return !g || !memcmp(g, zero, 16);
}

static void kind_name(const struct ps_etl_hist_ent *x, char *buf, size_t len)
{
	char g[37];

	if (x->htype == PS_ETL_HT_MESSAGE && zero_guid(x->guid)) {
		snprintf(buf, len, "(no GUID) message %u", x->id);
	} else if (x->htype == PS_ETL_HT_MESSAGE) {
		/* WPP: the message number within its GUID (its format string in the PDB/TMF) */
		snprintf(buf, len, "{%s} message %u", ps_etl_guid_str(x->guid, g), x->id);
	} else if (x->kernel) {
		const char *gn = ps_etl_group_name(x->group);
		snprintf(buf, len, "%s(0x%02x)/%u", gn ? gn : "Group", x->group, x->type);
	} else if (x->htype == PS_ETL_HT_EVENT32 || x->htype == PS_ETL_HT_EVENT64) {
		/* kinds of one id that differ by opcode (start, stop) are told apart */
		snprintf(buf, len, "{%s} id %u opcode %u", ps_etl_guid_str(x->guid, g), x->id,
			 x->type);
	} else {
		snprintf(buf, len, "{%s} type %u", ps_etl_guid_str(x->guid, g), x->type);
	}
}

/* The fields that name a kind, as JSON members (after a comma). */
static void json_kind(FILE *f, bool kernel, uint8_t group, uint8_t type, uint16_t id,
		      uint8_t htype, const uint8_t *guid)
{
	bool manifest = htype == PS_ETL_HT_EVENT32 || htype == PS_ETL_HT_EVENT64;
	char g[37];

	fprintf(f, ",\"kernel\":%s,\"header\":", kernel ? "true" : "false");
	ps_json_str(f, ps_etl_htype_name(htype));
	if (kernel) {
		fprintf(f, ",\"group\":%u,\"group_name\":", group);
		ps_json_str(f, ps_etl_group_name(group));
		fprintf(f, ",\"type\":%u,\"provider\":null,\"id\":null", type);
		return;
	}
	fprintf(f, ",\"group\":null,\"group_name\":null,\"type\":%u,\"provider\":", type);
	ps_json_str(f, guid && !(htype == PS_ETL_HT_MESSAGE && zero_guid(guid)) ?
		       ps_etl_guid_str(guid, g) : NULL);
	if (manifest || htype == PS_ETL_HT_MESSAGE)
		fprintf(f, ",\"id\":%u", id);
	else
		fprintf(f, ",\"id\":null");
}

/*
 * What `etl info` gathers, one per ps_etl_scan() worker, merged at the end. Aligned apart: tmax
 * changes with nearly every event, and sharing a cache line with the next worker's table
 * pointers made two threads slower than one.
 */
struct info_acc {
	struct ps_etl_hist h;
	int64_t tmin, tmax;
} __attribute__((aligned(128)));

static int info_event(void *arg, const struct ps_etl_event *ev)
{
	struct info_acc *a = arg;

	if (ev->ts && ev->ts < a->tmin)
		a->tmin = ev->ts;
	if (ev->ts > a->tmax)
		a->tmax = ev->ts;
	return ps_etl_hist_add(&a->h, ev);
}

/* `etl info --format json`: one object, schema poolscope.etl-info/1 (docs/commands). */
static void info_json(FILE *f, const char *name, const struct ps_etl_logfile *lh,
		      const struct ps_etl_stats *st, const struct ps_etl_hist *h, int64_t tmin,
		      int64_t tmax)
{
	char t1[64], t2[64], k[96];

	fprintf(f, "{\"schema\":\"poolscope.etl-info/1\",\"file\":");
	ps_json_str(f, name);
	fprintf(f, ",\"file_bytes\":%llu,\"logger\":", (unsigned long long)st->file_size);
	ps_json_str(f, lh->logger_name);
	fprintf(f, ",\"logfile\":");
	ps_json_str(f, lh->logfile_name);
	fprintf(f, ",\"os\":{\"major\":%u,\"minor\":%u,\"build\":%u},\"cpus\":%u,"
		"\"pointer_bits\":%u,\"cpu_mhz\":%u,\"log_file_version\":\"%u.%u\","
		"\"log_file_mode\":%u,\"compressed\":%s,\"circular\":%s,\"compression\":%u,",
		lh->version[0], lh->version[1], lh->provider_version, lh->ncpus,
		lh->pointer_size * 8, lh->cpu_mhz, lh->version[2], lh->version[3],
		lh->log_file_mode, lh->log_file_mode & PS_ETL_MODE_COMPRESSED ? "true" : "false",
		lh->log_file_mode & PS_ETL_MODE_CIRCULAR ? "true" : "false", lh->compression);
	fprintf(f, "\"start\":");
	ps_json_str(f, ps_etl_filetime_str(lh->start_time, t1));
	fprintf(f, ",\"end\":");
	ps_json_str(f, ps_etl_filetime_str(lh->end_time, t2));
	fprintf(f, ",\"clock_type\":%u,\"perf_freq\":%lld,\"clock_origin\":%lld,\"span_s\":",
		lh->clock_type, (long long)lh->perf_freq, (long long)lh->t0);
	if (tmax >= tmin)
		fprintf(f, "%.6f", ((double)ps_etl_rel_ns(lh, tmax) -
				    (double)ps_etl_rel_ns(lh, tmin)) / 1e9);
	else
		fprintf(f, "null");
	fprintf(f, ",\"buffers\":%u,\"buffers_compressed\":%u,\"buffers_written_header\":%u,"
		"\"cpus_seen\":%u,\"buffer_size\":%u,\"data_bytes\":%llu,"
		"\"events_lost_header\":%u,\"buffers_lost_header\":%u,"
		"\"buffers_flagged_events_lost\":%u,\"buffers_flagged_buffer_lost\":%u,"
		"\"problems\":%u,\"events\":%llu,\"kinds\":[",
		st->buffers, st->compressed, lh->buffers_written, st->max_cpu, lh->buffer_size,
		(unsigned long long)st->data_bytes, lh->events_lost, lh->buffers_lost,
		st->flag_events_lost, st->flag_buffer_lost, st->problems,
		(unsigned long long)st->events);
	for (size_t i = 0; i < h->n; i++) {
		const struct ps_etl_hist_ent *x = &h->ent[i];

		kind_name(x, k, sizeof(k));
		fprintf(f, "%s{\"kind\":", i ? "," : "");
		ps_json_str(f, k);
		json_kind(f, x->kernel, x->group, x->type, x->id, x->htype, x->guid);
		fprintf(f, ",\"count\":%llu}", (unsigned long long)x->count);
	}
	fprintf(f, "]}\n");
}

/* path is what to read; name, what the user called it (they differ for a pipe) */
static int etl_info(const char *path, const char *name, bool json)
{
	struct ps_etl *e;
	struct info_acc acc[PS_ETL_SCAN_MAX];
	void *args[PS_ETL_SCAN_MAX];
	char err[512], t1[64], t2[64];
	int r;

	r = ps_etl_open(&e, path, 0, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "poolscope etl info: %s\n", err);
		return PS_EXIT_FAIL;
	}
	for (unsigned i = 0; i < PS_ETL_SCAN_MAX; i++) {
		acc[i] = (struct info_acc){ .tmin = INT64_MAX, .tmax = INT64_MIN };
		args[i] = &acc[i];
	}
	/* Buffers are counted on several threads; counts and extremes merge in any order. */
	r = ps_etl_scan(e, info_event, args, PS_ETL_SCAN_MAX);
	for (unsigned i = 1; i < PS_ETL_SCAN_MAX; i++) {
		if (r >= 0 && ps_etl_hist_merge(&acc[0].h, &acc[i].h) < 0)
			r = -ENOMEM;
		if (acc[i].tmin < acc[0].tmin)
			acc[0].tmin = acc[i].tmin;
		if (acc[i].tmax > acc[0].tmax)
			acc[0].tmax = acc[i].tmax;
		ps_etl_hist_free(&acc[i].h);
	}
	struct ps_etl_hist h = acc[0].h;
	int64_t tmin = acc[0].tmin, tmax = acc[0].tmax;
	const struct ps_etl_logfile *lh = ps_etl_logfile(e);
	const struct ps_etl_stats *st = ps_etl_stats(e);

	ps_etl_hist_sort(&h);
	if (json) {
		info_json(stdout, name, lh, st, &h, tmin, tmax);
		goto notes;
	}
	printf("file        %s (%llu bytes)\n", name, (unsigned long long)st->file_size);
	printf("logger      %s -> %s\n", lh->logger_name, lh->logfile_name);
	printf("os          %u.%u build %u, %u CPUs, %u-bit pointers, %u MHz\n", lh->version[0],
	       lh->version[1], lh->provider_version, lh->ncpus, lh->pointer_size * 8, lh->cpu_mhz);
	printf("format      log file version %u.%u, mode 0x%08x%s%s, compression %u\n",
	       lh->version[2], lh->version[3], lh->log_file_mode,
	       lh->log_file_mode & PS_ETL_MODE_COMPRESSED ? " compressed" : "",
	       lh->log_file_mode & PS_ETL_MODE_CIRCULAR ? " circular" : "", lh->compression);
	printf("time        start %s, end %s\n", ps_etl_filetime_str(lh->start_time, t1),
	       ps_etl_filetime_str(lh->end_time, t2));
	printf("clock       type %u, %lld Hz, origin %lld\n", lh->clock_type,
	       (long long)lh->perf_freq, (long long)lh->t0);
	if (tmax >= tmin)
		printf("span        %.3f s of events\n",
		       ((double)ps_etl_rel_ns(lh, tmax) - (double)ps_etl_rel_ns(lh, tmin)) / 1e9);
	printf("buffers     %u (%u compressed), header says %u written, %u CPUs seen, buffer size "
	       "%u\n", st->buffers, st->compressed, lh->buffers_written, st->max_cpu, lh->buffer_size);
	printf("data        %llu bytes of events in the buffers%s\n",
	       (unsigned long long)st->data_bytes, st->compressed ? " (after decompression)" : "");
	printf("lost        events %u, buffers %u (header); buffers flagged events-lost %u, "
	       "buffer-lost %u\n", lh->events_lost, lh->buffers_lost, st->flag_events_lost,
	       st->flag_buffer_lost);
	printf("events      %llu in %zu kinds\n", (unsigned long long)st->events, h.n);
	for (size_t i = 0; i < h.n; i++) {
		char k[96];
		kind_name(&h.ent[i], k, sizeof(k));
		printf("  %-60s %-10s %9llu\n", k, ps_etl_htype_name(h.ent[i].htype),
		       (unsigned long long)h.ent[i].count);
	}
notes:
	if (lh->buffers_written && st->buffers != lh->buffers_written)
		fprintf(stderr, "poolscope etl info: %s: note: the header says %u buffers were "
			"written, the file holds %u%s\n", path, lh->buffers_written, st->buffers,
			st->buffers < lh->buffers_written ? " (cut short, or still being written)" : "");
	print_problems(e, "info");
	r = (r < 0 || st->problems) ? PS_EXIT_FAIL : PS_EXIT_OK;
	ps_etl_hist_free(&h);
	ps_etl_close(e);
	return r;
}

/* One event of `etl dump --format json` (poolscope.etl-dump/1, one object a line). */
static void dump_json(FILE *f, const struct ps_etl_event *ev, double ms)
{
	char k[96];
	struct ps_etl_hist_ent x = { .kernel = ev->kernel, .group = ev->group, .type = ev->type,
				     .htype = ev->htype, .id = ev->id };

	if (ev->guid)
		memcpy(x.guid, ev->guid, sizeof(x.guid));
	if (ev->kernel || ev->guid || ev->htype == PS_ETL_HT_MESSAGE)
		kind_name(&x, k, sizeof(k));
	else
		snprintf(k, sizeof(k), "-");
	fprintf(f, "{\"ms\":%.3f,\"cpu\":%u,\"kind\":", ms, ev->cpu);
	ps_json_str(f, k);
	json_kind(f, ev->kernel, ev->group, ev->type, ev->id, ev->htype, ev->guid);
	fprintf(f, ",\"version\":%u,", ev->version);
	if (ev->has_tid)
		fprintf(f, "\"pid\":%d,\"tid\":%d", (int)ev->pid, (int)ev->tid);
	else
		fprintf(f, "\"pid\":null,\"tid\":null");
	fprintf(f, ",\"len\":%u}\n", ev->payload_len);
}

static int etl_dump(const char *path, uint64_t limit, bool json)
{
	struct ps_etl *e;
	struct ps_etl_event ev;
	char err[512], g[37];
	uint64_t n = 0;
	int r;

	r = ps_etl_open(&e, path, PS_ETL_ORDERED, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "poolscope etl dump: %s\n", err);
		return PS_EXIT_FAIL;
	}
	const struct ps_etl_logfile *lh = ps_etl_logfile(e);
	while ((!limit || n < limit) && (r = ps_etl_next(e, &ev)) > 0) {
		double ms = (double)ps_etl_rel_ns(lh, ev.ts) / 1e6;

		if (json) {
			dump_json(stdout, &ev, ms);
			n++;
			continue;
		}
		printf("%12.3f cpu%-2u %-10s ", ms, ev.cpu, ps_etl_htype_name(ev.htype));
		if (ev.kernel) {
			const char *gn = ps_etl_group_name(ev.group);
			printf("%s(0x%02x)/%u", gn ? gn : "Group", ev.group, ev.type);
		} else if (ev.htype == PS_ETL_HT_MESSAGE) {
			if (ev.guid)
				printf("{%s} message %u", ps_etl_guid_str(ev.guid, g), ev.id);
			else
				printf("(no GUID) message %u", ev.id);
		} else if (ev.guid && (ev.htype == PS_ETL_HT_EVENT32 ||
				       ev.htype == PS_ETL_HT_EVENT64)) {
			printf("{%s} id %u opcode %u", ps_etl_guid_str(ev.guid, g), ev.id, ev.type);
		} else if (ev.guid) {
			printf("{%s} type %u", ps_etl_guid_str(ev.guid, g), ev.type);
		} else {
			printf("-");
		}
		printf(" v%u", ev.version);
		if (ev.has_tid)
			printf(" pid=%d tid=%d", (int)ev.pid, (int)ev.tid);
		else
			printf(" pid=- tid=-");
		printf(" len=%u\n", ev.payload_len);
		n++;
	}
	print_problems(e, "dump");
	r = (r < 0 || ps_etl_stats(e)->problems) ? PS_EXIT_FAIL : PS_EXIT_OK;
	ps_etl_close(e);
	return ps_finish_stdout(r);
}

static int cmd_etl(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "limit", required_argument, NULL, 'n' },
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	uint64_t limit = 0;
	bool json = false;
	int c;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		etl_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? PS_EXIT_USAGE : PS_EXIT_OK;
	}
	const char *sub = argv[1];
	argc--;
	argv++;
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'F':	/* long only: -f is --force in every command */
			if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
				fprintf(stderr, "poolscope etl: --format: '%s' (expected text or "
					"json)\n", optarg);
				return PS_EXIT_USAGE;
			}
			json = !strcmp(optarg, "json");
			break;
		case 'n': {
			char *end;
			limit = strtoull(optarg, &end, 10);
			if (*end || !*optarg) {
				fprintf(stderr, "poolscope etl: --limit: '%s' is not a number\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		}
		case 'h':
			etl_usage(stdout);
			return PS_EXIT_OK;
		default:
			etl_usage(stderr);
			return PS_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "poolscope etl %s: expected one FILE\n", sub);
		return PS_EXIT_USAGE;
	}
	if (strcmp(sub, "info") && strcmp(sub, "dump")) {
		fprintf(stderr, "poolscope etl: unknown subcommand '%s' (info, dump)\n", sub);
		return PS_EXIT_USAGE;
	}
	/* the reader seeks: a pipe is read from a copy (input.c) */
	char err[600], prefix[32];
	const char *path = ps_input_path(argv[optind], err, sizeof(err));
	int rc;

	snprintf(prefix, sizeof(prefix), "poolscope etl %s", sub);
	if (!path) {
		fprintf(stderr, "%s: %s\n", prefix, err);
		return PS_EXIT_FAIL;
	}
	if (!strcmp(sub, "info"))
		rc = ps_finish_stdout(etl_info(path, argv[optind], json));
	else
		rc = etl_dump(path, limit, json);
	if (rc != PS_EXIT_OK)
		ps_input_note(stderr, prefix);
	return rc;
}

PS_COMMAND(etl, cmd_etl, "look inside a Windows .etl file (info, dump)");
