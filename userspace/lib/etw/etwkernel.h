/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The NT kernel logger's numbers, named once for the program that records them (poolscope-win
 * trace, userspace/win/) and the code that reads them back (the .etl reader and converter).
 *
 * A kernel event carries no provider GUID in the file: its HookId names it, Group << 8 | Type,
 * the group in the high byte (EVENT_TRACE_GROUP_* >> 8) and the type, the consumer's opcode, in
 * the low one; the header's Version is the MOF class version. A controller names the same
 * events by class GUID and type (CLASSIC_EVENT_ID), and turns the groups with no classic
 * EnableFlags bit on through the kernel's private group mask (PERFINFO_GROUPMASK). Values are
 * those of phnt's ntwmi.h (EVENT_TRACE_GROUP_*, PERFINFO_LOG_TYPE_*, PERF_*) and the WDK's
 * wmicore.mof, as the shared research notes etl-format.md give them: section 5 (the logfile
 * header), 6 (groups, class GUIDs), 7 (pool events), 8 (stack walks) and 9 (group masks).
 *
 * Plain C on fixed-width types, no Windows or Linux header: the Linux build and the mingw-w64
 * build include it alike.
 */
#ifndef PS_ETW_ETWKERNEL_H
#define PS_ETW_ETWKERNEL_H

#include <stdint.h>

/* --- groups (high byte of the HookId) ----------------------------------------------------- */

#define PS_ETW_GROUP_HEADER	0x00	/* EventTrace: the logfile header, session events */
#define PS_ETW_GROUP_PROCESS	0x03
#define PS_ETW_GROUP_THREAD	0x05
#define PS_ETW_GROUP_POOL	0x0e
#define PS_ETW_GROUP_IMAGE	0x14
#define PS_ETW_GROUP_STACKWALK	0x18

/* --- types (low byte of the HookId), per group --------------------------------------------- */

/* EventTrace: TRACE_LOGFILE_HEADER, the first event of every file. */
#define PS_ETW_HEADER_LOGFILE		0

/* Process (MOF Process_V3 and later: ImageFileName follows the SID). */
#define PS_ETW_PROCESS_START		1
#define PS_ETW_PROCESS_DCSTART		3	/* rundown of the processes running at the start */
#define PS_ETW_PROCESS_IMAGE_LOAD	10	/* an image Load, logged in the Process group */

/* Image (MOF Image_Load: ImageBase, ImageSize, ..., FileName). */
#define PS_ETW_IMAGE_UNLOAD		2
#define PS_ETW_IMAGE_DCSTART		3	/* rundown of the images loaded at the start */
#define PS_ETW_IMAGE_DCEND		4	/* rundown at the end: the image stays loaded */
#define PS_ETW_IMAGE_LOAD		10

/*
 * Pool (ETW_POOL_EVENT: u32 PoolType, u32 Tag, pointer-sized NumberOfBytes and Entry, then a
 * u32 SessionId for the session types). These four are the ones that can carry a stack walk.
 */
#define PS_ETW_POOL_ALLOC		0x20
#define PS_ETW_POOL_ALLOC_SESSION	0x21
#define PS_ETW_POOL_FREE		0x22
#define PS_ETW_POOL_FREE_SESSION	0x23
#define PS_ETW_POOL_STACK_TYPES		4

/* StackWalk. */
#define PS_ETW_STACKWALK_STACK		32	/* EventTimeStamp, process, thread, frames */
#define PS_ETW_STACKWALK_KEY_DELETE	35	/* StackKey, frames: the key's cache entry evicted */
#define PS_ETW_STACKWALK_KEY_RUNDOWN	36	/* StackKey, frames: at the end of the session */
#define PS_ETW_STACKWALK_KEY_KERNEL	37	/* EventTimeStamp, process, thread, StackKey */
#define PS_ETW_STACKWALK_KEY_USER	38	/* the same for the user-mode half */

/* --- pool event fields --------------------------------------------------------------------- */

/* PoolType: POOL_TYPE values with flag bits. */
#define PS_ETW_POOLTYPE_PAGED		0x1u		/* BASE_POOL_TYPE_MASK: a paged pool */
#define PS_ETW_POOLTYPE_SESSION		0x20u		/* the session pools (NonPagedPoolSession 32) */
#define PS_ETW_POOLTYPE_BIGPOOL		0x10000000u	/* ETW_POOLTRACE_BIGPOOL_MASK, tracing only */

/*
 * PROTECTED_POOL: a flag a driver ORs into the tag it allocates and frees with, not part of the
 * tag. The kernel strips it before it counts the tag, so poolmon and !poolused, which read those
 * counts, show a protected tag as its four characters.
 */
#define PS_POOL_TAG_PROTECTED		0x80000000u

/* --- class GUIDs --------------------------------------------------------------------------- */

/*
 * Initializers of a GUID ({ Data1, Data2, Data3, { Data4[8] } }), not objects, so that no
 * translation unit needs INITGUID. SystemTraceControlGuid is the NT Kernel Logger's session
 * GUID; PoolGuid names pool events in CLASSIC_EVENT_ID (etl-format.md section 6, with its
 * correction: not ...-9dc9-44f0f99e0dd1).
 */
#define PS_ETW_SYSTEM_TRACE_CONTROL_GUID_INIT \
	{ 0x9e814aad, 0x3204, 0x11d2, { 0x9a, 0x82, 0x00, 0x60, 0x08, 0xa8, 0x69, 0x39 } }
#define PS_ETW_POOL_GUID_INIT \
	{ 0x0268a8b6, 0x74fd, 0x4302, { 0x9d, 0xd0, 0x6e, 0x8f, 0x17, 0x95, 0xc0, 0xcf } }
/*
 * poolscope's own system-logger session: EVENT_TRACE_PROPERTIES wants a session GUID of its
 * creator's choosing there (one session named "poolscope" at a time, so one GUID).
 * {d8d5469b-1e94-43f8-bd7a-4f57f5c905b5}
 */
#define PS_ETW_POOLSCOPE_SESSION_GUID_INIT \
	{ 0xd8d5469b, 0x1e94, 0x43f8, { 0xbd, 0x7a, 0x4f, 0x57, 0xf5, 0xc9, 0x05, 0xb5 } }

/* --- the kernel's group mask --------------------------------------------------------------- */

/*
 * Kernel "perf group" flags: the top 3 bits select the PERFINFO_GROUPMASK word, the rest is the
 * bit inside it (PERF_GET_MASK_INDEX / PERF_GET_MASK_GROUP). There is no EVENT_TRACE_FLAG_* for
 * pool events: PERF_POOL is only reachable through the group mask.
 */
#define PS_PERF_MASK_WORDS	8
#define PS_PERF_INDEX(gm)	(((gm) & 0xE0000000u) >> 29)
#define PS_PERF_BITS(gm)	((gm) & 0x1FFFFFFFu)
#define PS_PERF_POOL		0x20000040u	/* Masks[1] |= 0x40 */

/* The layout of PERFINFO_GROUPMASK (8 ULONGs, 32 bytes); word 0 is the classic EnableFlags. */
struct ps_perf_groupmask {
	uint32_t masks[PS_PERF_MASK_WORDS];
};

/* ETW_MAX_POOLTAG_FILTER: the kernel's pool tag filter holds at most 4 tags. */
#define PS_ETW_MAX_TAGS		4

#endif
