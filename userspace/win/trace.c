// SPDX-License-Identifier: GPL-2.0
/*
 * "poolscope-win trace": records kernel pool allocations and frees to an .etl file that
 * "poolscope convert" turns into a per-tag timeline.  There is no EVENT_TRACE_FLAG_* for pool
 * events: they are the PERF_POOL bit of the kernel's private group mask, set with
 * TraceSetInformation(TraceSystemTraceEnableFlagsInfo) on a kernel session (etl-format.md
 * §7.3), which Windows documents from Windows 8 / Server 2012.  The session is a
 * system-logger-mode session named "poolscope" (so it does not take the single NT Kernel
 * Logger from other tools); the NT Kernel Logger only where system-logger mode is refused.
 * Process, thread and image-load events go along so that stacks can be attributed to
 * drivers.
 *
 * A session outlives the process that started it: if this program dies, the kernel keeps
 * writing the file until "trace --stop".  Everything portable (group mask, buffer plan, tag
 * parsing, error texts) is in userspace/lib/etw/etwsession.c where the Linux build tests it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/win/etwdefs.h"
#include "userspace/win/ntpool.h"
#include "userspace/win/trace.h"
#include "userspace/win/wide.h"

#include "userspace/lib/etw/etwkernel.h"
#include "userspace/lib/etw/etwsession.h"
#include "userspace/lib/etw/poolsample.h"
#include "userspace/lib/util/util.h"

#define SESSION_NAME	"poolscope"
#define SESSION_NAMEW	L"poolscope"
#define NAME_CHARS	1024	/* ETW's limit for session and file names */
#define PATH_UTF8	(3 * NAME_CHARS)
/* Classic flags for attribution: process names, thread ids, driver load addresses. */
#define CLASSIC_FLAGS	(EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | \
			 EVENT_TRACE_FLAG_IMAGE_LOAD)
#define POLL_MS		250
#define QUERY_EVERY	8	/* polls: query the session every 2 s */

/*
 * EVENT_TRACE_PROPERTIES followed by the room ETW wants for the two names it returns, UTF-16:
 * the W calls, so that a path outside the ANSI code page works (wide.h).
 */
struct props {
	EVENT_TRACE_PROPERTIES p;
	WCHAR logger[NAME_CHARS];
	WCHAR file[NAME_CHARS];
};

struct session {
	enum ps_etw_logger kind;
	const char *name;	/* for messages */
	const WCHAR *wname;	/* for ETW */
	TRACEHANDLE h;
};

struct trace_opts {
	const char *out;
	bool stacks, stop;
	uint32_t tags[PS_ETW_MAX_TAGS];
	unsigned int ntags;
	uint64_t duration_ns;
	uint32_t buffers_mb;
	uint32_t max_file_mb;
};

static volatile LONG stop_flag;
static HANDLE done_event;

static BOOL WINAPI on_ctrl(DWORD type)
{
	/*
	 * Logoff reaches only processes running as services, and for any user's logoff: a
	 * capture started by a scheduled task or a service wrapper must outlive it.
	 */
	if (type == CTRL_LOGOFF_EVENT)
		return TRUE;
	InterlockedExchange(&stop_flag, 1);
	/*
	 * Closing the console and shutdown kill the process as soon as this handler returns: wait (Windows allows about 5 s) for the main thread to stop the session, or
	 * it would keep running with nobody to stop it.
	 */
	if (type == CTRL_CLOSE_EVENT || type == CTRL_SHUTDOWN_EVENT)
		WaitForSingleObject(done_event, 4500);
	return TRUE;
}

static void props_init(struct props *b)
{
	memset(b, 0, sizeof(*b));
	b->p.Wnode.BufferSize = sizeof(*b);
	b->p.LoggerNameOffset = offsetof(struct props, logger);
	b->p.LogFileNameOffset = offsetof(struct props, file);
}

/* Prints "what: message (error N)", the message from the shared table or from Windows. */
static void report(const char *what, enum ps_etw_err_src src, unsigned long code)
{
	const char *msg = ps_etw_errmsg(src, (uint32_t)code);
	WCHAR wsys[256];
	char *sys = NULL;
	size_t n;

	if (src == PS_ETW_NTSTATUS) {
		fprintf(stderr, "poolscope-win trace: %s: %s (status 0x%08lx)\n", what,
			msg ? msg : "failed", code);
		return;
	}
	/* Windows' own text, in the system's language: UTF-16, printed as UTF-8 */
	if (!msg && FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
				   NULL, (DWORD)code, 0, wsys, ARRAY_SIZE(wsys), NULL) &&
	    (sys = ps_win_utf8(wsys))) {
		n = strlen(sys);
		while (n && (sys[n - 1] == '\n' || sys[n - 1] == '\r' || sys[n - 1] == '.'))
			sys[--n] = '\0';
		msg = sys;
	}
	fprintf(stderr, "poolscope-win trace: %s: %s (error %lu)\n", what, msg ? msg : "failed",
		code);
	free(sys);
}

/* True unless the token says it is not elevated (older Windows cannot say: let ETW decide). */
static bool is_elevated(void)
{
	TOKEN_ELEVATION te = { 0 };
	DWORD len = 0;
	HANDLE tok;
	bool ok = true;

	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
		return true;
	if (GetTokenInformation(tok, TokenElevation, &te, sizeof(te), &len))
		ok = te.TokenIsElevated != 0;
	CloseHandle(tok);
	return ok;
}

/*
 * An elevated token holds SeSystemProfilePrivilege but disabled; the pool tag filter goes
 * through NtSetSystemInformation(SystemPerformanceTraceInformation), which, unlike the ETW
 * API, does not enable it for us.  Failure is not fatal: the call itself then reports.
 */
static void enable_profile_privilege(void)
{
	TOKEN_PRIVILEGES tp = { .PrivilegeCount = 1 };
	HANDLE tok;

	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_ADJUST_PRIVILEGES, &tok))
		return;
	if (LookupPrivilegeValueA(NULL, "SeSystemProfilePrivilege", &tp.Privileges[0].Luid)) {
		tp.Privileges[0].Attributes = SE_PRIVILEGE_ENABLED;
		AdjustTokenPrivileges(tok, FALSE, &tp, 0, NULL, NULL);
	}
	CloseHandle(tok);
}

static ULONG query_session(const WCHAR *name, struct props *b)
{
	props_init(b);
	return ControlTraceW(0, name, &b->p, EVENT_TRACE_CONTROL_QUERY);
}

/* ETW fills the file name on query/stop (UTF-8 in buf); a session without one is real-time. */
static const char *props_file(const struct props *b, char *buf, size_t len)
{
	char *u;

	if (!b->file[0] || !(u = ps_win_utf8(b->file)))
		return "(no file)";
	ps_strlcpy(buf, u, len);
	free(u);
	return buf;
}

static void print_stopped(const char *name, const struct props *b)
{
	const EVENT_TRACE_PROPERTIES *p = &b->p;
	char fb[PATH_UTF8];

	printf("stopped session '%s': %lu buffers written, %lu events lost, %lu buffers not "
	       "written; file %s\n", name, p->BuffersWritten, p->EventsLost, p->LogBuffersLost,
	       props_file(b, fb, sizeof(fb)));
	if (p->EventsLost)
		printf("  events were lost: the buffers filled faster than the disk took them; "
		       "raise --buffers-mb or narrow with --tags\n");
	if (p->LogBuffersLost)
		printf("  buffers could not be written to the file (disk full?)\n");
}

static ULONG stop_session(TRACEHANDLE h, const WCHAR *name, struct props *b)
{
	props_init(b);
	return ControlTraceW(h, name, &b->p, EVENT_TRACE_CONTROL_STOP);
}

static ULONG start_session(struct session *s, const struct ps_etw_buffers *bp, const WCHAR *path,
			   uint32_t max_file_mb)
{
	static const GUID kernel_guid = PS_ETW_SYSTEM_TRACE_CONTROL_GUID_INIT;
	static const GUID own_guid = PS_ETW_POOLSCOPE_SESSION_GUID_INIT;
	struct props b;

	props_init(&b);
	b.p.Wnode.Flags = WNODE_FLAG_TRACED_GUID;
	/* QPC timestamps (ClientContext 1): the clock the converter expects first. */
	b.p.Wnode.ClientContext = 1;
	b.p.LogFileMode = EVENT_TRACE_FILE_MODE_SEQUENTIAL;
	/* The NT Kernel Logger's GUID is fixed; a system-logger session gets its creator's. */
	if (s->kind == PS_ETW_LOGGER_SYSTEM) {
		b.p.LogFileMode |= EVENT_TRACE_SYSTEM_LOGGER_MODE;
		b.p.Wnode.Guid = own_guid;
	} else {
		b.p.Wnode.Guid = kernel_guid;
	}
	b.p.EnableFlags = CLASSIC_FLAGS;
	b.p.BufferSize = bp->buffer_kb;
	b.p.MinimumBuffers = bp->min_buffers;
	b.p.MaximumBuffers = bp->max_buffers;
	/*
	 * Buffers reach the file at least every second, not only when full or at the stop: a
	 * machine that dies of the leak being traced keeps what was written before.
	 */
	b.p.FlushTimer = 1;
	b.p.MaximumFileSize = max_file_mb;
	wcsncpy(b.logger, s->wname, NAME_CHARS - 1);
	wcsncpy(b.file, path, NAME_CHARS - 1);
	return StartTraceW(&s->h, s->wname, &b.p);
}

static void os_version(OSVERSIONINFOW *vi)
{
	memset(vi, 0, sizeof(*vi));
	vi->dwOSVersionInfoSize = sizeof(*vi);
	/* RtlGetVersion is not subject to the manifest version lie of GetVersionEx. */
	RtlGetVersion((PRTL_OSVERSIONINFOW)vi);
}

/* Free bytes on the volume of path, or UINT64_MAX when it cannot be told. */
static uint64_t free_bytes(const WCHAR *path)
{
	WCHAR dir[NAME_CHARS];
	ULARGE_INTEGER avail;
	WCHAR *slash;

	wcsncpy(dir, path, NAME_CHARS - 1);
	dir[NAME_CHARS - 1] = 0;
	slash = wcsrchr(dir, L'\\');
	if (slash)
		slash[1] = 0;
	if (!GetDiskFreeSpaceExW(dir, &avail, NULL, NULL))
		return UINT64_MAX;
	return avail.QuadPart;
}

static int do_stop(void)
{
	char fb[PATH_UTF8];
	struct props b;
	ULONG rc;

	if (!is_elevated()) {
		fprintf(stderr, "poolscope-win trace: not elevated: run from an elevated "
			"(Administrator) prompt\n");
		return 1;
	}
	rc = stop_session(0, SESSION_NAMEW, &b);
	if (!rc) {
		print_stopped(SESSION_NAME, &b);
		return 0;
	}
	if (rc != ERROR_WMI_INSTANCE_NOT_FOUND) {
		report("stop session '" SESSION_NAME "'", PS_ETW_WIN32, rc);
		return 1;
	}
	rc = query_session(KERNEL_LOGGER_NAMEW, &b);
	if (rc == ERROR_WMI_INSTANCE_NOT_FOUND) {
		fprintf(stderr, "poolscope-win trace: no poolscope trace session is running\n");
		return 1;
	}
	if (rc) {
		report("query '" KERNEL_LOGGER_NAMEA "'", PS_ETW_WIN32, rc);
		return 1;
	}
	/*
	 * poolscope starts the NT Kernel Logger only when system-logger mode is refused, and
	 * says so then; it may as well be another tool's: not stopped without being asked.
	 */
	fprintf(stderr, "poolscope-win trace: no '%s' session is running; the '%s' is running "
		"(file %s): if poolscope-win started it, stop it with: logman stop \"%s\" -ets\n",
		SESSION_NAME, KERNEL_LOGGER_NAMEA, props_file(&b, fb, sizeof(fb)), KERNEL_LOGGER_NAMEA);
	return 1;
}

/* The session exists already: say whose file it writes and how to clear it. */
static void report_exists(const struct session *s)
{
	struct props b;
	char fb[PATH_UTF8];
	const char *file = query_session(s->wname, &b) ? "unknown file" :
			   props_file(&b, fb, sizeof(fb));

	if (s->kind == PS_ETW_LOGGER_SYSTEM)
		fprintf(stderr, "poolscope-win trace: session '%s' is already running (writing %s), "
			"left by an earlier run? run 'poolscope-win trace --stop' first\n",
			s->name, file);
	else
		fprintf(stderr, "poolscope-win trace: the '%s' is already running (writing %s): if an "
			"earlier poolscope-win left it, run 'poolscope-win trace --stop'; otherwise "
			"another tool (xperf, WPR, Process Monitor) is using it\n", s->name, file);
}

/* Turns on stacks, the tag filter and the pool group, in that order. Returns 0 or -1. */
static int configure(const struct session *s, const struct trace_opts *o)
{
	static const UCHAR stack_types[PS_ETW_POOL_STACK_TYPES] = {
		PS_ETW_POOL_ALLOC, PS_ETW_POOL_ALLOC_SESSION,
		PS_ETW_POOL_FREE, PS_ETW_POOL_FREE_SESSION,
	};
	static const GUID pool_guid = PS_ETW_POOL_GUID_INIT;
	struct ps_perf_groupmask pgm;
	PERFINFO_GROUPMASK gm;
	ULONG rc;

	if (o->stacks) {
		CLASSIC_EVENT_ID ids[PS_ETW_POOL_STACK_TYPES];

		memset(ids, 0, sizeof(ids));
		for (int i = 0; i < PS_ETW_POOL_STACK_TYPES; i++) {
			ids[i].EventGuid = pool_guid;
			ids[i].Type = stack_types[i];
		}
		rc = TraceSetInformation(s->h, PS_TRACE_STACK_TRACING_INFO, ids, sizeof(ids));
		if (rc) {
			report("stack walks on pool events (TraceStackTracingInfo)", PS_ETW_WIN32, rc);
			return -1;
		}
	}
	/* The filter goes in before the pool group so no unfiltered event reaches the file. */
	if (o->ntags) {
		struct ps_etw_tag_filter_info fi = {
			.info_class = PS_EVENT_TRACE_POOLTAG_FILTER_INFORMATION,
			.trace_handle = s->h,
		};
		ULONG len = (ULONG)(offsetof(struct ps_etw_tag_filter_info, filter) +
				    o->ntags * sizeof(fi.filter[0]));
		LONG st;

		memcpy(fi.filter, o->tags, o->ntags * sizeof(fi.filter[0]));
		enable_profile_privilege();
		st = NtSetSystemInformation(PS_SYSTEM_PERFORMANCE_TRACE_INFORMATION, &fi, len);
		if (st < 0) {
			report("pool tag filter (NtSetSystemInformation)", PS_ETW_NTSTATUS,
			       (unsigned long)st);
			return -1;
		}
	}
	/* The whole mask is replaced: word 0 repeats the session's EnableFlags. */
	ps_etw_groupmask_pool(&pgm, CLASSIC_FLAGS);
	memcpy(&gm, &pgm, sizeof(gm));
	rc = TraceSetInformation(s->h, PS_TRACE_SYSTEM_TRACE_ENABLE_FLAGS_INFO, &gm, sizeof(gm));
	if (rc) {
		report("enable pool events (TraceSystemTraceEnableFlagsInfo)", PS_ETW_WIN32, rc);
		return -1;
	}
	return 0;
}

/* Bytes of path on disk, or UINT64_MAX when it cannot be told. */
static uint64_t file_bytes(const WCHAR *path)
{
	WIN32_FILE_ATTRIBUTE_DATA fa;

	if (!GetFileAttributesExW(path, GetFileExInfoStandard, &fa))
		return UINT64_MAX;
	return ((uint64_t)fa.nFileSizeHigh << 32) | fa.nFileSizeLow;
}

/*
 * Waits for Ctrl-C, --duration, or trouble.  Returns 0, or 1 when the session was stopped
 * from outside (*gone: nothing left to stop), the disk filled or the file reached
 * --max-file-mb (the caller still stops it).
 */
static int wait_trace(const struct session *s, const struct trace_opts *o, const char *path,
		      const WCHAR *wpath, const struct ps_etw_buffers *bp, bool *gone)
{
	ULONGLONG start = GetTickCount64();
	ULONG last_lost = 0;
	unsigned int tick = 0;

	*gone = false;
	while (!stop_flag) {
		struct props q;
		bool lost;
		ULONG rc;

		Sleep(POLL_MS);
		if (o->duration_ns && (GetTickCount64() - start) * 1000000ULL >= o->duration_ns)
			return 0;
		if (++tick % QUERY_EVERY)
			continue;
		props_init(&q);
		rc = ControlTraceW(s->h, s->wname, &q.p, EVENT_TRACE_CONTROL_QUERY);
		*gone = rc == ERROR_WMI_INSTANCE_NOT_FOUND;
		lost = !rc && q.p.LogBuffersLost > last_lost;
		switch (ps_etw_stop_why(*gone, lost, free_bytes(wpath), file_bytes(wpath),
					o->max_file_mb, bp->buffer_kb)) {
		case PS_ETW_STOP_NONE:
			continue;
		case PS_ETW_STOP_OUTSIDE:
			fprintf(stderr, "poolscope-win trace: the session was stopped from outside "
				"(trace --stop, logman, xperf); %s holds what was written\n", path);
			return 1;
		case PS_ETW_STOP_DISK_FULL:
			fprintf(stderr, "poolscope-win trace: %s: disk full: %lu buffers could not "
				"be written; stopping (the file holds what was written)\n", path,
				lost ? q.p.LogBuffersLost : 0UL);
			return 1;
		case PS_ETW_STOP_FILE_LIMIT:
			fprintf(stderr, "poolscope-win trace: %s reached --max-file-mb %lu; stopping "
				"(raise it, or 0 for no limit, for a longer trace)\n", path,
				(unsigned long)o->max_file_mb);
			return 1;
		case PS_ETW_STOP_WRITE_LAG:
			fprintf(stderr, "poolscope-win trace: warning: %lu buffers could not be "
				"written to %s so far (a slow disk?)\n", q.p.LogBuffersLost, path);
			last_lost = q.p.LogBuffersLost;
			continue;
		}
	}
	return 0;
}

static int do_trace(const struct trace_opts *o)
{
	struct session s = { .name = SESSION_NAME, .wname = SESSION_NAMEW };
	struct ps_etw_buffers bp;
	WCHAR wpath[NAME_CHARS], *wout;
	char path[PATH_UTF8], *u;
	OSVERSIONINFOW vi;
	struct props b;
	DWORD ncpu, n;
	bool gone;
	ULONG rc;
	int ret = 1;

	os_version(&vi);
	s.kind = ps_etw_pick_logger(vi.dwMajorVersion, vi.dwMinorVersion);
	/* the rule lives in one tested place, ps_etw_pick_logger() */
	if (s.kind == PS_ETW_LOGGER_NONE) {
		fprintf(stderr, "poolscope-win trace: unsupported Windows version %lu.%lu (build %lu): "
			"pool tracing needs Windows 8 / Server 2012 or later (the pool events are "
			"turned on with TraceSystemTraceEnableFlagsInfo); use 'sample' there\n",
			vi.dwMajorVersion, vi.dwMinorVersion, vi.dwBuildNumber);
		return 1;
	}
	if (!is_elevated()) {
		fprintf(stderr, "poolscope-win trace: not elevated: run from an elevated "
			"(Administrator) prompt\n");
		return 1;
	}
	/* ETW resolves the file in the kernel: give it an absolute path. */
	wout = ps_win_wide(o->out);
	n = wout ? GetFullPathNameW(wout, NAME_CHARS, wpath, NULL) : 0;
	free(wout);
	if (!n || n >= NAME_CHARS || !(u = ps_win_utf8(wpath))) {
		fprintf(stderr, "poolscope-win trace: %s: bad or too long path (at most %d "
			"characters, absolute)\n", o->out, NAME_CHARS - 1);
		return 1;
	}
	ps_strlcpy(path, u, sizeof(path));
	free(u);
	if (GetFileAttributesW(wpath) != INVALID_FILE_ATTRIBUTES) {
		fprintf(stderr, "poolscope-win trace: %s exists: remove it or choose another -o "
			"(a trace never overwrites a file)\n", path);
		return 1;
	}
	ncpu = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
	if (!ncpu)
		ncpu = 1;
	if (ps_etw_plan_buffers(o->buffers_mb, ncpu, &bp)) {
		fprintf(stderr, "poolscope-win trace: --buffers-mb %lu is too small for %lu "
			"processors: use at least %lu\n", (unsigned long)o->buffers_mb, ncpu,
			(ncpu * 16 + 1023) / 1024);
		return 2;
	}

	/* Before the session exists: a Ctrl-C during setup must still reach the stop below. */
	done_event = CreateEventA(NULL, TRUE, FALSE, NULL);
	SetConsoleCtrlHandler(on_ctrl, TRUE);
	rc = start_session(&s, &bp, wpath, o->max_file_mb);
	if ((rc == ERROR_INVALID_PARAMETER || rc == ERROR_NOT_SUPPORTED) &&
	    s.kind == PS_ETW_LOGGER_SYSTEM) {
		fprintf(stderr, "poolscope-win trace: note: system-logger mode refused (error %lu); "
			"using the NT Kernel Logger (if this run dies, stop it with: "
			"logman stop \"NT Kernel Logger\" -ets)\n", rc);
		s.kind = PS_ETW_LOGGER_KERNEL;
		s.name = KERNEL_LOGGER_NAMEA;
		s.wname = KERNEL_LOGGER_NAMEW;
		rc = start_session(&s, &bp, wpath, o->max_file_mb);
	}
	if (rc == ERROR_ALREADY_EXISTS) {
		report_exists(&s);
		goto out_done;
	}
	if (rc) {
		report("start trace session", PS_ETW_WIN32, rc);
		goto out_done;
	}
	if (configure(&s, o))
		goto out_abort;

	printf("tracing pool events to %s (session '%s', %lu x %lu KiB buffers, stacks %s, ",
	       path, s.name, (unsigned long)bp.max_buffers, (unsigned long)bp.buffer_kb,
	       o->stacks ? "on" : "off");
	if (o->ntags) {
		printf("tags");
		for (unsigned int i = 0; i < o->ntags; i++) {
			char t[5];

			ps_pool_tag_format(o->tags[i], t);
			printf(" '%s'", t);
		}
	} else {
		printf("all tags");
	}
	printf("); Ctrl-C%s stops\n", o->duration_ns ? " or --duration" : "");
	fflush(stdout);

	ret = wait_trace(&s, o, path, wpath, &bp, &gone);
	if (gone)
		goto out_done;
	/* Stopping flushes the buffers still in memory to the file. */
	rc = stop_session(s.h, s.wname, &b);
	if (rc) {
		report("stop trace session", PS_ETW_WIN32, rc);
		ret = 1;
		goto out_done;
	}
	print_stopped(s.name, &b);
	if (!ret)
		printf("convert with: poolscope convert %s -o pool.db\n", o->out);
	goto out_done;

out_abort:
	/* No half-configured session or file left behind: it would not hold pool events. */
	stop_session(s.h, s.wname, &b);
	DeleteFileW(wpath);
out_done:
	/* Lets a console-close handler waiting in on_ctrl() return. */
	if (done_event)
		SetEvent(done_event);
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: poolscope-win trace -o FILE.etl [--stacks] [--tags T1,T2,...] [--duration D]\n"
		"                           [--buffers-mb N] [--max-file-mb N]\n"
		"       poolscope-win trace --stop\n"
		"  -o FILE.etl      output (must not exist)\n"
		"  --stacks         stack walk on PoolAlloc/PoolFree (+Session)\n"
		"  --tags LIST      kernel pool tag filter, at most %d whole tags (no wildcards)\n"
		"  --duration D     stop after D (120, 90s, 5m); default: until Ctrl-C\n"
		"  --buffers-mb N   ETW buffer memory, non-paged (default %d)\n"
		"  --max-file-mb N  stop when the file reaches N MiB, 0: no limit (default %d)\n"
		"  --stop           stop a session left running by a crashed or killed run\n"
		"EXAMPLES:\n"
		"  poolscope-win trace -o pool.etl --stacks --tags LSbf --duration 120\n"
		"  poolscope-win trace --stop\n", PS_ETW_MAX_TAGS, PS_ETW_BUFFERS_MB_DEFAULT,
		PS_ETW_MAX_FILE_MB_DEFAULT);
}

int ps_win_trace(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "stacks", no_argument, NULL, 's' },
		{ "tags", required_argument, NULL, 't' },
		{ "duration", required_argument, NULL, 'd' },
		{ "buffers-mb", required_argument, NULL, 'b' },
		{ "max-file-mb", required_argument, NULL, 'm' },
		{ "stop", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct trace_opts o = { .buffers_mb = PS_ETW_BUFFERS_MB_DEFAULT,
				.max_file_mb = PS_ETW_MAX_FILE_MB_DEFAULT };
	bool other = false;
	char err[160];
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': o.out = optarg; other = true; break;
		case 's': o.stacks = true; other = true; break;
		case 'S': o.stop = true; break;
		case 't':
			other = true;
			if (ps_etw_parse_tags(optarg, o.tags, &o.ntags, err, sizeof(err))) {
				fprintf(stderr, "poolscope-win trace: --tags: %s\n", err);
				return 2;
			}
			break;
		case 'd':
			other = true;
			if (ps_parse_duration_ns(optarg, &o.duration_ns)) {
				fprintf(stderr, "poolscope-win trace: bad --duration '%s'\n", optarg);
				return 2;
			}
			break;
		case 'b':
			other = true;
			if (ps_etw_parse_buffers_mb(optarg, &o.buffers_mb)) {
				fprintf(stderr, "poolscope-win trace: bad --buffers-mb '%s': a number "
					"of MiB from 1 to %d\n", optarg, PS_ETW_BUFFERS_MB_MAX);
				return 2;
			}
			break;
		case 'm':
			other = true;
			if (ps_etw_parse_max_file_mb(optarg, &o.max_file_mb)) {
				fprintf(stderr, "poolscope-win trace: bad --max-file-mb '%s': 0 (no "
					"limit) or a number of MiB from %d to %u\n", optarg,
					PS_ETW_MAX_FILE_MB_MIN, PS_ETW_MAX_FILE_MB_MAX);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			ps_win_bad_option("trace", argv);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "poolscope-win trace: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (o.stop) {
		if (other) {
			fprintf(stderr, "poolscope-win trace: --stop takes no other options\n");
			return 2;
		}
		return do_stop();
	}
	if (!o.out) {
		fprintf(stderr, "poolscope-win trace: -o FILE.etl is required\n");
		usage(stderr);
		return 2;
	}
	return do_trace(&o);
}
