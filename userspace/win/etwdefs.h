/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place for the ETW declarations "poolscope-win trace" needs and mingw-w64's
 * evntrace.h lacks (NT pool-tag declarations live in ntpool.h; the kernel's event numbers,
 * class GUIDs and group mask, which the converter reads back, in
 * userspace/lib/etw/etwkernel.h).  Every value and layout is from the shared notes
 * etl-format.md: §7.3 (enabling pool events, the pool tag filter), §9 (PERFINFO_GROUPMASK).
 * Where mingw-w64 already has a declaration the notes describe, a static assertion checks
 * that it agrees instead of declaring it twice.
 */
#ifndef PS_ETWDEFS_H
#define PS_ETWDEFS_H

#include <stddef.h>
#include <windows.h>
#include <evntrace.h>

#include "userspace/lib/etw/etwkernel.h"

/* PERFINFO_GROUPMASK [phnt ntwmi.h]: 8 ULONGs, the input of TraceSystemTraceEnableFlagsInfo. */
typedef struct _PERFINFO_GROUPMASK {
	ULONG Masks[PS_PERF_MASK_WORDS];
} PERFINFO_GROUPMASK;

_Static_assert(sizeof(PERFINFO_GROUPMASK) == 32, "PERFINFO_GROUPMASK is 32 bytes");
_Static_assert(sizeof(PERFINFO_GROUPMASK) == sizeof(struct ps_perf_groupmask),
	       "the portable group mask has the kernel's layout");

/* TRACE_INFO_CLASS values [ms-docs TRACE_QUERY_INFO_CLASS]; mingw-w64 has the enum. */
#define PS_TRACE_STACK_TRACING_INFO		((TRACE_INFO_CLASS)3)
#define PS_TRACE_SYSTEM_TRACE_ENABLE_FLAGS_INFO	((TRACE_INFO_CLASS)4)
_Static_assert(TraceStackTracingInfo == 3, "TraceStackTracingInfo");
_Static_assert(TraceSystemTraceEnableFlagsInfo == 4, "TraceSystemTraceEnableFlagsInfo");

/* CLASSIC_EVENT_ID {GUID EventGuid; UCHAR Type; UCHAR Reserved[7];}: mingw-w64 has it. */
_Static_assert(sizeof(CLASSIC_EVENT_ID) == 24 && offsetof(CLASSIC_EVENT_ID, Type) == 16,
	       "CLASSIC_EVENT_ID layout");

/*
 * Pool tag filter.  There is no public TracePoolTagFilterInfo; xperf's -PoolTag goes through
 * NtSetSystemInformation(SystemPerformanceTraceInformation = 31) with class
 * EventTracePoolTagFilterInformation = 10 and EVENT_TRACE_TAG_FILTER_INFORMATION
 * {class; TRACEHANDLE; ULONG Filter[]} (etl-format.md §7.3, phnt ntexapi.h).  Private
 * interface: declared here with the layout fixed by assertions.
 */
#define PS_SYSTEM_PERFORMANCE_TRACE_INFORMATION	31
#define PS_EVENT_TRACE_POOLTAG_FILTER_INFORMATION	10

struct ps_etw_tag_filter_info {
	ULONG info_class;		/* EVENT_TRACE_INFORMATION_CLASS (an int enum) */
	ULONG64 trace_handle;		/* TRACEHANDLE of the session */
	ULONG filter[PS_ETW_MAX_TAGS];	/* the kernel counts tags from the length passed */
};

_Static_assert(offsetof(struct ps_etw_tag_filter_info, trace_handle) == 8, "TraceHandle @8");
_Static_assert(offsetof(struct ps_etw_tag_filter_info, filter) == 16, "Filter @16");

/* ntdll export; mingw-w64's winternl.h declares only the Query side. */
NTSYSAPI LONG NTAPI NtSetSystemInformation(ULONG info_class, PVOID info, ULONG len);

#endif
