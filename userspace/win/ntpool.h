/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place for the pool-tag NT declarations mingw-w64's headers lack (the ETW ones used
 * by "trace", including NtSetSystemInformation, are in etwdefs.h).  Layouts follow the public
 * phnt headers (ntexapi.h) as summarised in shared notes etl-format.md section 10:
 * SystemPoolTagInformation = 22 returns SYSTEM_POOLTAG_INFORMATION (Count, then Count entries
 * of 0x28 bytes on x64).
 */
#ifndef PS_NTPOOL_H
#define PS_NTPOOL_H

#include <windows.h>
#include <winternl.h>

#define PS_SYSTEM_POOLTAG_INFORMATION	22
#ifndef STATUS_INFO_LENGTH_MISMATCH
#define STATUS_INFO_LENGTH_MISMATCH	((NTSTATUS)0xC0000004L)
#endif

struct ps_system_pooltag {
	ULONG tag;
	ULONG paged_allocs;
	ULONG paged_frees;
	SIZE_T paged_used;
	ULONG nonpaged_allocs;
	ULONG nonpaged_frees;
	SIZE_T nonpaged_used;
};

struct ps_system_pooltag_information {
	ULONG count;
	struct ps_system_pooltag info[];
};

/* ntdll export, documented in the WDK (wdm.h); user-mode headers lack it. */
NTSYSAPI NTSTATUS NTAPI RtlGetVersion(PRTL_OSVERSIONINFOW info);

_Static_assert(sizeof(void *) != 8 || sizeof(struct ps_system_pooltag) == 0x28,
	       "SYSTEM_POOLTAG is 0x28 bytes on x64");

#endif
