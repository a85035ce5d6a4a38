/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place for the ETW declarations "poolscope-win trace" needs and mingw-w64's
 * evntrace.h lacks (NT pool-tag declarations live in ntpool.h).  Every value and layout is
 * from the shared notes etl-format.md: §7.3 (enabling pool events, the pool tag filter),
 * §6 (PoolGuid), §9 (PERFINFO_GROUPMASK).  Where mingw-w64 already has a declaration the
 * notes describe, a static assertion checks that it agrees instead of declaring it twice.
 */
#ifndef PS_ETWDEFS_H
#define PS_ETWDEFS_H

#include <stddef.h>
#include <windows.h>
#include <evntrace.h>

#include "userspace/lib/etw/etwsession.h"

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
 * PoolGuid 0268a8b6-74fd-4302-9dd0-6e8f1795c0cf: the event class of kernel group 0x0E,
 * which names pool events in CLASSIC_EVENT_ID for stack tracing (etl-format.md §6, with the
 * correction there: not ...-9dc9-44f0f99e0dd1).  An initializer, not an object, so no TU
 * needs INITGUID.
 */
#define PS_POOL_GUID_INIT \
	{ 0x0268a8b6, 0x74fd, 0x4302, { 0x9d, 0xd0, 0x6e, 0x8f, 0x17, 0x95, 0xc0, 0xcf } }

/* SystemTraceControlGuid 9e814aad-3204-11d2-9a82-006008a86939, the NT Kernel Logger's. */
#define PS_SYSTEM_TRACE_CONTROL_GUID_INIT \
	{ 0x9e814aad, 0x3204, 0x11d2, { 0x9a, 0x82, 0x00, 0x60, 0x08, 0xa8, 0x69, 0x39 } }

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
