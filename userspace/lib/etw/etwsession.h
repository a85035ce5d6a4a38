/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Portable half of "poolscope-win trace": the decisions that do not need Windows (which kernel
 * groups to enable, how to split --buffers-mb into ETW buffers, which pool tags to filter on,
 * which logger to use on which Windows version, what a Win32/NTSTATUS error means to the
 * user).  Kept free of windows.h and in fixed-width types so the Linux build unit-tests it;
 * userspace/win/trace.c only feeds the results to the ETW API.
 *
 * The kernel's numbers and the group mask layout are in etwkernel.h.
 */
#ifndef PS_ETWSESSION_H
#define PS_ETWSESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "userspace/lib/etw/etwkernel.h"

/*
 * Builds the group mask for a pool trace: word 0 holds the classic EVENT_TRACE_FLAG_* bits
 * (the session's EnableFlags: TraceSetInformation replaces the whole mask, so they must be
 * repeated here or process/image events would stop), plus PERF_POOL.
 */
void ps_etw_groupmask_pool(struct ps_perf_groupmask *gm, uint32_t classic_flags);
/* ORs one PERF_* group flag into the mask. */
void ps_etw_groupmask_set(struct ps_perf_groupmask *gm, uint32_t perf_flag);
bool ps_etw_groupmask_test(const struct ps_perf_groupmask *gm, uint32_t perf_flag);

/* The ETW buffer plan for a session: sizes in what EVENT_TRACE_PROPERTIES wants. */
struct ps_etw_buffers {
	uint32_t buffer_kb;	/* BufferSize, KiB, power of two in [8, 1024] */
	uint32_t min_buffers;	/* MinimumBuffers */
	uint32_t max_buffers;	/* MaximumBuffers: buffer_kb * max_buffers <= budget */
};

#define PS_ETW_BUFFERS_MB_DEFAULT	256
#define PS_ETW_BUFFERS_MB_MAX		16384

/* Parses --buffers-mb: a plain decimal number of MiB in [1, PS_ETW_BUFFERS_MB_MAX]. */
int ps_etw_parse_buffers_mb(const char *s, uint32_t *mb);

/*
 * --max-file-mb: the .etl's MaximumFileSize. A sequential ETW file without one grows until the
 * disk is full, which on a machine dying of a leak is the disk the evidence is on. 0: no limit.
 */
#define PS_ETW_MAX_FILE_MB_DEFAULT	8192
#define PS_ETW_MAX_FILE_MB_MIN		16
#define PS_ETW_MAX_FILE_MB_MAX		(1u << 22)	/* 4 TiB */

/* Parses --max-file-mb: 0, or a number of MiB in [PS_ETW_MAX_FILE_MB_MIN, _MAX]. */
int ps_etw_parse_max_file_mb(const char *s, uint32_t *mb);

/* Why a trace stops before it was asked to (wait_trace on Windows). */
enum ps_etw_stop_why {
	PS_ETW_STOP_NONE,		/* nothing wrong */
	PS_ETW_STOP_OUTSIDE,		/* someone stopped the session (trace --stop, logman) */
	PS_ETW_STOP_DISK_FULL,		/* the output volume has no room for more buffers */
	PS_ETW_STOP_FILE_LIMIT,		/* the file reached --max-file-mb */
	PS_ETW_STOP_WRITE_LAG,		/* buffers lost with room left: a slow disk, keep going */
};

/*
 * Tells apart what buffers lost or a session gone mean: the file at its size limit (within two
 * buffers), a volume without room for four more buffers, or, with neither, a session stopped
 * from outside (gone) or a disk too slow (buffers lost). free_bytes or file_bytes UINT64_MAX:
 * not known.
 */
enum ps_etw_stop_why ps_etw_stop_why(bool gone, bool buffers_lost, uint64_t free_bytes,
				     uint64_t file_bytes, uint32_t max_file_mb,
				     uint32_t buffer_kb);

/*
 * Splits a memory budget of mb MiB into ETW buffers for ncpu processors.  ETW buffers are
 * per-processor and the kernel wants at least two per processor, so the buffer size shrinks
 * (1 MiB, the ETW maximum, down to 8 KiB) until every CPU gets four.  Returns -EINVAL if
 * the budget cannot give each CPU two 8 KiB buffers.
 */
int ps_etw_plan_buffers(uint32_t mb, uint32_t ncpu, struct ps_etw_buffers *out);

/*
 * Parses "--tags LSbf,Ntfx" into pool tag ULONGs as the kernel stores them ("LSbf" =
 * 0x6662534c), padding short tags with spaces as pooltag.txt does ("Cc" = "Cc  ").
 * Duplicates are dropped.  Wildcards are refused: the kernel filter compares whole tags.
 * Returns 0, -E2BIG for more than PS_ETW_MAX_TAGS distinct tags, -EINVAL for a bad tag;
 * on error err says which.
 */
int ps_etw_parse_tags(const char *list, uint32_t tags[PS_ETW_MAX_TAGS], unsigned int *ntags,
		      char *err, size_t errlen);

enum ps_etw_logger {
	PS_ETW_LOGGER_NONE,		/* Windows too old for a pool trace */
	PS_ETW_LOGGER_KERNEL,		/* "NT Kernel Logger": only where 8+ refuses the other */
	PS_ETW_LOGGER_SYSTEM,		/* own session, EVENT_TRACE_SYSTEM_LOGGER_MODE (8+) */
};

/*
 * Which session kind to use on Windows major.minor (from RtlGetVersion). The pool events are
 * turned on through TraceSetInformation(TraceSystemTraceEnableFlagsInfo), which Windows
 * documents from 6.2 (Windows 8 / Server 2012), as system-logger mode: older versions get
 * PS_ETW_LOGGER_NONE (use "sample" there). Windows 7 has TraceSetInformation, but not that
 * class.
 */
enum ps_etw_logger ps_etw_pick_logger(uint32_t major, uint32_t minor);

/* Where an error code came from: the messages differ for the same number. */
enum ps_etw_err_src {
	PS_ETW_WIN32,		/* GetLastError() / ETW API ULONG result */
	PS_ETW_NTSTATUS,	/* NtSetSystemInformation() */
};

/*
 * The user-facing meaning of an error from the trace controller, with the fix: e.g. 5 ->
 * "access denied: run from an elevated (Administrator) prompt".  NULL when the code is not
 * one the table knows (the caller then prints the number and the system's text).
 */
const char *ps_etw_errmsg(enum ps_etw_err_src src, uint32_t code);

#endif
