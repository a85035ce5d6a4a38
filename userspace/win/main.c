// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope-win: Windows capture program.  "sample" polls the per-tag pool counters that
 * poolmon shows (NtQuerySystemInformation(SystemPoolTagInformation)) plus system totals and
 * appends them in the shared pool sample format (userspace/lib/etw/poolsample.h) so that a kill loses at
 * most the snapshot being written.  "trace" (trace.c) records pool events with ETW.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/win/ntpool.h"
#include "userspace/win/trace.h"
#include "userspace/win/wide.h"
#include <psapi.h>

#include "userspace/lib/etw/poolsample.h"
#include "userspace/lib/util/util.h"

static volatile LONG stop_flag;

static BOOL WINAPI on_ctrl(DWORD type)
{
	/* logoff reaches only services, for any user's logoff: a sampler keeps going */
	if (type == CTRL_LOGOFF_EVENT)
		return TRUE;
	InterlockedExchange(&stop_flag, 1);
	return TRUE;
}

static uint64_t wall_ns(void)
{
	FILETIME ft;
	ULARGE_INTEGER u;

	GetSystemTimeAsFileTime(&ft);
	u.LowPart = ft.dwLowDateTime;
	u.HighPart = ft.dwHighDateTime;
	/* FILETIME counts 100 ns since 1601; Unix epoch is 11644473600 s later. */
	return (u.QuadPart - 116444736000000000ULL) * 100;
}

/* Queries the pool tag table, growing the buffer while the kernel says it is too small. */
static NTSTATUS query_pooltags(void **buf, ULONG *len)
{
	for (;;) {
		ULONG need = 0;
		NTSTATUS st = NtQuerySystemInformation(PS_SYSTEM_POOLTAG_INFORMATION, *buf, *len,
						       &need);
		void *nb;

		if (st != STATUS_INFO_LENGTH_MISMATCH)
			return st;
		*len = need > *len ? need + 4096 : *len * 2;
		nb = realloc(*buf, *len);
		if (!nb)
			return (NTSTATUS)0xC0000017L; /* STATUS_NO_MEMORY */
		*buf = nb;
	}
}

void ps_win_bad_option(const char *cmd, char **argv)
{
	const char *arg = argv[optind - 1];

	/* a short option's letter, or the word as typed: mingw's own message names the .exe path */
	if (optopt && strchr(arg, optopt) && arg[0] == '-' && arg[1] != '-')
		fprintf(stderr, "poolscope-win %s: option '-%c' is unknown or needs a value\n", cmd,
			optopt);
	else
		fprintf(stderr, "poolscope-win %s: option '%s' is unknown or needs a value\n", cmd,
			arg);
}

/* True, with the reason printed, when the pool tag query failed. */
static bool query_failed(NTSTATUS st)
{
	const char *why = ps_poolsample_query_errmsg((uint32_t)st);

	if (st >= 0)
		return false;
	fprintf(stderr, "poolscope-win sample: cannot read the pool tag table "
		"(NtQuerySystemInformation, status 0x%08lx)%s%s\n", (unsigned long)st,
		why ? ": " : "", why ? why : "");
	return true;
}

static int do_sample(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "tags", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *out = NULL, *tags = NULL;
	uint64_t interval_ns = 1000000000ULL, duration_ns = 0, start;
	char host[256] = "unknown", ibuf[32], vbuf[64];
	DWORD hlen = sizeof(host);
	ULONG len = 1 << 16;
	void *buf = NULL;
	uint32_t snap = 0;
	FILE *f;
	int c, rc = 1;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:i:d:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 't': tags = optarg; break;
		case 'i':
			if (ps_parse_duration_ns(optarg, &interval_ns) || !interval_ns) {
				fprintf(stderr, "poolscope-win sample: bad --interval '%s'\n", optarg);
				return 2;
			}
			break;
		case 'd':
			if (ps_parse_duration_ns(optarg, &duration_ns)) {
				fprintf(stderr, "poolscope-win sample: bad --duration '%s'\n", optarg);
				return 2;
			}
			break;
		case 'h':
			printf("usage: poolscope-win sample -o FILE [--interval 1s] [--duration D] [--tags LIST]\n"
			       "EXAMPLES:\n  poolscope-win sample -o pool.tsv --interval 1s --duration 120\n");
			return 0;
		default:
			ps_win_bad_option("sample", argv);
			return 2;
		}
	}
	if (!out) {
		fprintf(stderr, "poolscope-win sample: -o FILE is required\n");
		return 2;
	}
	/*
	 * One query before the file is touched: a system without the table leaves it as it
	 * was, and says why.
	 */
	buf = malloc(len);
	if (!buf || query_failed(query_pooltags(&buf, &len))) {
		if (!buf)
			fprintf(stderr, "poolscope-win sample: out of memory\n");
		free(buf);
		return 1;
	}
	{
		wchar_t *wout = ps_win_wide(out);

		if (!wout) {
			fprintf(stderr, "poolscope-win sample: -o '%s': not a valid path\n", out);
			free(buf);
			return 2;
		}
		f = _wfopen(wout, L"a+b");
		free(wout);
	}
	if (!f) {
		fprintf(stderr, "poolscope-win sample: %s: %s\n", out, strerror(errno));
		free(buf);
		return 1;
	}
	{
		wchar_t whost[256];
		DWORD wlen = ARRAY_SIZE(whost);
		char *h;

		if (GetComputerNameW(whost, &wlen) && (h = ps_win_utf8(whost))) {
			ps_strlcpy(host, h, hlen);
			free(h);
		}
	}
	snprintf(ibuf, sizeof(ibuf), "%llu", (unsigned long long)interval_ns);
	{
		OSVERSIONINFOW vi = { .dwOSVersionInfoSize = sizeof(vi) };

		/* RtlGetVersion is not subject to the manifest version lie of GetVersionEx. */
		RtlGetVersion((PRTL_OSVERSIONINFOW)&vi);
		snprintf(vbuf, sizeof(vbuf), "%lu.%lu.%lu", vi.dwMajorVersion, vi.dwMinorVersion,
			 vi.dwBuildNumber);
	}
	{
		const char *meta[] = { "host", host, "os", "windows", "os_version", vbuf,
				       "interval_ns", ibuf, "source", "poolscope-win-sample", NULL };

		if (ps_poolsample_open(f, meta, wall_ns())) {
			fprintf(stderr, "poolscope-win sample: %s: write failed (disk full?)\n", out);
			goto out;
		}
	}
	SetConsoleCtrlHandler(on_ctrl, TRUE);
	/* the run's length by a clock that time sync does not step */
	start = GetTickCount64();
	while (!stop_flag) {
		PERFORMANCE_INFORMATION pi = { .cb = sizeof(pi) };
		struct ps_system_pooltag_information *ti;
		NTSTATUS st = query_pooltags(&buf, &len);
		uint64_t now = wall_ns();

		if (query_failed(st))
			goto out;
		if (!GetPerformanceInfo(&pi, sizeof(pi))) {
			fprintf(stderr, "poolscope-win sample: GetPerformanceInfo: error %lu\n",
				GetLastError());
			goto out;
		}
		ti = buf;
		ps_poolsample_begin(f, snap, now, (uint64_t)pi.KernelNonpaged * pi.PageSize,
				    (uint64_t)pi.KernelPaged * pi.PageSize,
				    (uint64_t)pi.PhysicalAvailable * pi.PageSize);
		for (ULONG i = 0; i < ti->count; i++) {
			const struct ps_system_pooltag *p = &ti->info[i];
			char name[5];

			ps_pool_tag_format(p->tag, name);
			if (!ps_pool_tag_match_list(tags, name))
				continue;
			if (p->nonpaged_allocs || p->nonpaged_used)
				ps_poolsample_tag(f, p->tag, false, p->nonpaged_allocs,
						  p->nonpaged_frees, p->nonpaged_used);
			if (p->paged_allocs || p->paged_used)
				ps_poolsample_tag(f, p->tag, true, p->paged_allocs,
						  p->paged_frees, p->paged_used);
		}
		if (ps_poolsample_end(f, snap)) {
			fprintf(stderr, "poolscope-win sample: %s: write failed (disk full?)\n", out);
			goto out;
		}
		snap++;
		if (duration_ns && (GetTickCount64() - start) * 1000000ULL >= duration_ns)
			break;
		Sleep((DWORD)(interval_ns / 1000000));
	}
	rc = 0;
out:
	free(buf);
	if (fclose(f) && !rc) {
		fprintf(stderr, "poolscope-win sample: %s: close failed\n", out);
		rc = 1;
	}
	return rc;
}

static int run(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		printf("usage: poolscope-win sample -o FILE [--interval 1s] [--duration D] [--tags LIST]\n"
		       "       poolscope-win trace -o FILE.etl [--stacks] [--tags T1,T2] [--duration D]\n"
		       "                           [--buffers-mb N] [--max-file-mb N]\n"
		       "       poolscope-win trace --stop\n");
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "sample"))
		return do_sample(argc - 1, argv + 1);
	if (!strcmp(argv[1], "trace"))
		return ps_win_trace(argc - 1, argv + 1);
	fprintf(stderr, "poolscope-win: unknown command '%s' (commands: sample, trace)\n",
		argv[1]);
	return 2;
}

/*
 * The arguments arrive as UTF-16 (mingw's -municode) and go on as UTF-8, so that a path
 * outside the ANSI code page survives; the console prints UTF-8.
 */
int wmain(int argc, wchar_t **wargv);
int wmain(int argc, wchar_t **wargv)
{
	char **argv = calloc((size_t)argc + 1, sizeof(*argv));
	int rc = 1;

	if (!argv) {
		fprintf(stderr, "poolscope-win: out of memory\n");
		return 1;
	}
	for (int i = 0; i < argc; i++) {
		argv[i] = ps_win_utf8(wargv[i]);
		if (!argv[i]) {
			fprintf(stderr, "poolscope-win: argument %d is not valid Unicode\n", i);
			rc = 2;
			goto out;
		}
	}
	SetConsoleOutputCP(CP_UTF8);
	rc = run(argc, argv);
out:
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
	return rc;
}
