// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for the portable half of "poolscope-win trace" (userspace/lib/etw/etwsession.c): the values here
 * are the ones the Windows kernel must receive, taken from etl-format.md §7.3/§9, so a slip
 * in a shift or a byte order shows up on Linux before anyone runs the program on a server.
 */
#include <errno.h>
#include <string.h>

#include "test.h"
#include "userspace/lib/etw/etl.h"
#include "userspace/lib/etw/etwkernel.h"
#include "userspace/lib/etw/etwsession.h"
#include "userspace/lib/etw/poolsample.h"

TEST(groupmask_pool)
{
	struct ps_perf_groupmask gm;

	memset(&gm, 0xff, sizeof(gm));
	/* EVENT_TRACE_FLAG_PROCESS|THREAD|IMAGE_LOAD = 0x1|0x2|0x4 */
	ps_etw_groupmask_pool(&gm, 0x7);
	ASSERT_U64_EQ(gm.masks[0], 0x7, "classic flags stay in word 0");
	ASSERT_U64_EQ(gm.masks[1], 0x40, "PERF_POOL is Masks[1] bit 0x40");
	for (int i = 2; i < PS_PERF_MASK_WORDS; i++)
		if (!ASSERT_U64_EQ(gm.masks[i], 0, "other words cleared"))
			return;
	ASSERT_TRUE(ps_etw_groupmask_test(&gm, PS_PERF_POOL), "test PERF_POOL");
	ASSERT_FALSE(ps_etw_groupmask_test(&gm, 0x20000001u), "PERF_MEMORY not set");
	ASSERT_EQ(sizeof(gm), 32, "PERFINFO_GROUPMASK is 32 bytes");
}

TEST(groupmask_index)
{
	struct ps_perf_groupmask gm = { { 0 } };

	ASSERT_EQ(PS_PERF_INDEX(PS_PERF_POOL), 1, "PERF_POOL index");
	ASSERT_U64_EQ(PS_PERF_BITS(PS_PERF_POOL), 0x40, "PERF_POOL bits");
	/* PERF_HEAP 0x40000020 lives in word 2 (etl-format.md §9). */
	ps_etw_groupmask_set(&gm, 0x40000020u);
	ASSERT_U64_EQ(gm.masks[2], 0x20, "word 2");
	ASSERT_U64_EQ(gm.masks[1], 0, "word 1 untouched");
}

/* A GUID as Windows lays it out, filled from an etwkernel.h initializer. */
struct win_guid {
	uint32_t d1;
	uint16_t d2, d3;
	uint8_t d4[8];
};

static const char *guid_text(struct win_guid g, char buf[37])
{
	uint8_t b[16];

	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(g.d1 >> (8 * i));
	b[4] = (uint8_t)g.d2;
	b[5] = (uint8_t)(g.d2 >> 8);
	b[6] = (uint8_t)g.d3;
	b[7] = (uint8_t)(g.d3 >> 8);
	memcpy(b + 8, g.d4, 8);
	return ps_etl_guid_str(b, buf);
}

/*
 * The names the recorder and the converter share, against the values of etl-format.md: the
 * class GUIDs (§6, PoolGuid with its correction), the pool and stack walk HookIds (§7.1, §8).
 */
TEST(kernel_names)
{
	struct win_guid pool = PS_ETW_POOL_GUID_INIT, sys = PS_ETW_SYSTEM_TRACE_CONTROL_GUID_INIT;
	char buf[37];

	ASSERT_STREQ(guid_text(pool, buf), "0268a8b6-74fd-4302-9dd0-6e8f1795c0cf", "PoolGuid");
	ASSERT_STREQ(guid_text(sys, buf), "9e814aad-3204-11d2-9a82-006008a86939",
		     "SystemTraceControlGuid");
	ASSERT_EQ(PS_ETW_GROUP_POOL << 8 | PS_ETW_POOL_ALLOC, 0x0e20, "PoolAlloc HookId");
	ASSERT_EQ(PS_ETW_GROUP_POOL << 8 | PS_ETW_POOL_ALLOC_SESSION, 0x0e21, "PoolAllocSession");
	ASSERT_EQ(PS_ETW_GROUP_POOL << 8 | PS_ETW_POOL_FREE, 0x0e22, "PoolFree HookId");
	ASSERT_EQ(PS_ETW_GROUP_POOL << 8 | PS_ETW_POOL_FREE_SESSION, 0x0e23, "PoolFreeSession");
	ASSERT_EQ(PS_ETW_GROUP_STACKWALK << 8 | PS_ETW_STACKWALK_STACK, 0x1820, "StackWalk");
	ASSERT_EQ(PS_ETW_STACKWALK_KEY_DELETE, 0x23, "KeyDelete");
	ASSERT_EQ(PS_ETW_STACKWALK_KEY_RUNDOWN, 0x24, "KeyRundown");
	ASSERT_EQ(PS_ETW_STACKWALK_KEY_KERNEL, 0x25, "StackKeyKernel");
	ASSERT_EQ(PS_ETW_STACKWALK_KEY_USER, 0x26, "StackKeyUser");
	ASSERT_STREQ(ps_etl_group_name(PS_ETW_GROUP_POOL), "Pool", "group 0x0e");
	ASSERT_STREQ(ps_etl_group_name(PS_ETW_GROUP_STACKWALK), "StackWalk", "group 0x18");
	ASSERT_STREQ(ps_etl_group_name(PS_ETW_GROUP_IMAGE), "Image", "group 0x14");
	ASSERT_STREQ(ps_etl_group_name(PS_ETW_GROUP_PROCESS), "Process", "group 0x03");
}

TEST(parse_buffers_mb)
{
	uint32_t mb = 0;

	ASSERT_OK(ps_etw_parse_buffers_mb("512", &mb), "512");
	ASSERT_EQ(mb, 512, "512 value");
	ASSERT_OK(ps_etw_parse_buffers_mb("16384", &mb), "max");
	ASSERT_ERR(ps_etw_parse_buffers_mb("16385", &mb), "above max");
	ASSERT_ERR(ps_etw_parse_buffers_mb("0", &mb), "zero");
	ASSERT_ERR(ps_etw_parse_buffers_mb("", &mb), "empty");
	ASSERT_ERR(ps_etw_parse_buffers_mb("512M", &mb), "suffix");
	ASSERT_ERR(ps_etw_parse_buffers_mb("-1", &mb), "negative");
	ASSERT_ERR(ps_etw_parse_buffers_mb("99999999999999999999999", &mb), "overflow");
}

TEST(plan_buffers)
{
	struct ps_etw_buffers b;

	if (!ASSERT_OK(ps_etw_plan_buffers(512, 8, &b), "512 MiB, 8 CPUs"))
		return;
	ASSERT_EQ(b.buffer_kb, 1024, "1 MiB buffers");
	ASSERT_EQ(b.max_buffers, 512, "512 buffers");
	ASSERT_EQ(b.min_buffers, 64, "an eighth preallocated");

	/* 16 MiB on 64 CPUs: needs 256 buffers -> 64 KiB each. */
	if (!ASSERT_OK(ps_etw_plan_buffers(16, 64, &b), "16 MiB, 64 CPUs"))
		return;
	ASSERT_EQ(b.buffer_kb, 64, "shrunk to 64 KiB");
	ASSERT_EQ(b.max_buffers, 256, "256 buffers");
	ASSERT_EQ(b.min_buffers, 128, "two per CPU minimum");
	ASSERT_TRUE((uint64_t)b.buffer_kb * b.max_buffers <= 16 * 1024, "within budget");

	/* 1 MiB on 64 CPUs: 8 KiB buffers give 128 = 2 per CPU, accepted. */
	if (!ASSERT_OK(ps_etw_plan_buffers(1, 64, &b), "1 MiB, 64 CPUs"))
		return;
	ASSERT_EQ(b.buffer_kb, 8, "8 KiB floor");
	ASSERT_EQ(b.min_buffers, b.max_buffers, "min capped at max");

	ASSERT_ERR(ps_etw_plan_buffers(1, 128, &b), "1 MiB cannot serve 128 CPUs");
	ASSERT_ERR(ps_etw_plan_buffers(0, 4, &b), "zero budget");
	ASSERT_ERR(ps_etw_plan_buffers(64, 0, &b), "zero CPUs");
}

TEST(parse_tags)
{
	uint32_t tags[PS_ETW_MAX_TAGS];
	unsigned int n = 99;
	char err[160] = "";
	char name[5];

	if (!ASSERT_OK(ps_etw_parse_tags("LSbf,Ntfx", tags, &n, err, sizeof(err)), err))
		return;
	ASSERT_EQ(n, 2, "two tags");
	/* Same ULONG the sample file stores for LSbf (docs/windows.md). */
	ASSERT_U64_EQ(tags[0], 0x6662534c, "LSbf byte order");
	ps_pool_tag_format(tags[1], name);
	ASSERT_STREQ(name, "Ntfx", "round trip through the shared formatter");

	ASSERT_OK(ps_etw_parse_tags("Cc", tags, &n, err, sizeof(err)), "short tag");
	ASSERT_U64_EQ(tags[0], 0x20206343, "short tag padded with spaces");

	ASSERT_OK(ps_etw_parse_tags("LSbf,LSbf,Ntfx,A,B", tags, &n, err, sizeof(err)),
		  "duplicates do not count");
	ASSERT_EQ(n, 4, "four distinct");
}

TEST(parse_tags_errors)
{
	uint32_t tags[PS_ETW_MAX_TAGS];
	unsigned int n = 0;
	char err[160] = "";

	ASSERT_EQ(ps_etw_parse_tags("A,B,C,D,E", tags, &n, err, sizeof(err)), -E2BIG, "5 tags");
	ASSERT_STRSTR(err, "at most 4", "5 tags message");
	ASSERT_EQ(n, 0, "no tags on error");
	ASSERT_EQ(ps_etw_parse_tags("LS*", tags, &n, err, sizeof(err)), -EINVAL, "wildcard");
	ASSERT_STRSTR(err, "wildcards", "wildcard message");
	ASSERT_EQ(ps_etw_parse_tags("LSbfx", tags, &n, err, sizeof(err)), -EINVAL, "5 chars");
	ASSERT_STRSTR(err, "LSbfx", "names the bad tag");
	ASSERT_EQ(ps_etw_parse_tags("LSbf,,Ntfx", tags, &n, err, sizeof(err)), -EINVAL, "empty");
	ASSERT_EQ(ps_etw_parse_tags("", tags, &n, err, sizeof(err)), -EINVAL, "empty list");
	ASSERT_EQ(ps_etw_parse_tags("LSbf,", tags, &n, err, sizeof(err)), -EINVAL, "trailing comma");
	ASSERT_EQ(ps_etw_parse_tags("A\tB", tags, &n, err, sizeof(err)), -EINVAL, "control char");
}

/* --max-file-mb: 0 or 16 MiB .. 4 TiB, plain decimal. */
TEST(parse_max_file_mb)
{
	uint32_t mb = 7;

	ASSERT_OK(ps_etw_parse_max_file_mb("0", &mb), "0: no limit");
	ASSERT_EQ(mb, 0, "0");
	ASSERT_OK(ps_etw_parse_max_file_mb("16", &mb), "the minimum");
	ASSERT_EQ(mb, 16, "16");
	ASSERT_OK(ps_etw_parse_max_file_mb("4194304", &mb), "4 TiB");
	ASSERT_ERR(ps_etw_parse_max_file_mb("15", &mb), "below the minimum");
	ASSERT_ERR(ps_etw_parse_max_file_mb("4194305", &mb), "above 4 TiB");
	ASSERT_ERR(ps_etw_parse_max_file_mb("1g", &mb), "units are not taken");
	ASSERT_ERR(ps_etw_parse_max_file_mb("-1", &mb), "negative");
	ASSERT_ERR(ps_etw_parse_max_file_mb("", &mb), "empty");
}

/*
 * A session gone or buffers lost: a file at its limit is said first (ETW stops writing it),
 * then a full volume, then what is left: stopped from outside, or a disk too slow.
 */
TEST(stop_why)
{
	const uint64_t unk = UINT64_MAX, gib = 1ull << 30;

	ASSERT_EQ(ps_etw_stop_why(false, false, 0, unk, 0, 1024), PS_ETW_STOP_NONE, "all well");
	ASSERT_EQ(ps_etw_stop_why(true, false, 10 * gib, gib, 8192, 1024), PS_ETW_STOP_OUTSIDE,
		  "gone, room left, far from the limit: stopped from outside");
	ASSERT_EQ(ps_etw_stop_why(true, false, 3 << 20, gib, 8192, 1024), PS_ETW_STOP_DISK_FULL,
		  "gone with 3 MiB free: the disk filled, not someone else");
	ASSERT_EQ(ps_etw_stop_why(false, true, 3 << 20, gib, 0, 1024), PS_ETW_STOP_DISK_FULL,
		  "buffers lost, no room");
	ASSERT_EQ(ps_etw_stop_why(false, true, 10 * gib, 8 * gib - (1 << 20), 8192, 1024),
		  PS_ETW_STOP_FILE_LIMIT, "a buffer short of --max-file-mb");
	ASSERT_EQ(ps_etw_stop_why(true, false, 10 * gib, 8 * gib, 8192, 1024),
		  PS_ETW_STOP_FILE_LIMIT, "gone at the limit");
	ASSERT_EQ(ps_etw_stop_why(false, true, 10 * gib, 8 * gib, 0, 1024), PS_ETW_STOP_WRITE_LAG,
		  "no limit set: a slow disk");
	ASSERT_EQ(ps_etw_stop_why(true, false, unk, unk, 8192, 1024), PS_ETW_STOP_OUTSIDE,
		  "nothing known: stopped from outside");
}

TEST(pick_logger)
{
	ASSERT_EQ(ps_etw_pick_logger(10, 0), PS_ETW_LOGGER_SYSTEM, "Windows 10/11/2016+");
	ASSERT_EQ(ps_etw_pick_logger(6, 3), PS_ETW_LOGGER_SYSTEM, "8.1 / 2012 R2");
	ASSERT_EQ(ps_etw_pick_logger(6, 2), PS_ETW_LOGGER_SYSTEM, "8 / 2012");
	ASSERT_EQ(ps_etw_pick_logger(6, 1), PS_ETW_LOGGER_NONE,
		  "7 / 2008 R2: no TraceSystemTraceEnableFlagsInfo");
	ASSERT_EQ(ps_etw_pick_logger(6, 0), PS_ETW_LOGGER_NONE, "Vista: no TraceSetInformation");
	ASSERT_EQ(ps_etw_pick_logger(5, 2), PS_ETW_LOGGER_NONE, "XP/2003");
}

TEST(errmsg)
{
	ASSERT_STRSTR(ps_etw_errmsg(PS_ETW_WIN32, 5), "elevated", "ERROR_ACCESS_DENIED");
	ASSERT_STRSTR(ps_etw_errmsg(PS_ETW_WIN32, 183), "trace --stop", "ERROR_ALREADY_EXISTS");
	ASSERT_STRSTR(ps_etw_errmsg(PS_ETW_WIN32, 112), "disk full", "ERROR_DISK_FULL");
	ASSERT_STRSTR(ps_etw_errmsg(PS_ETW_WIN32, 39), "disk full", "ERROR_HANDLE_DISK_FULL");
	ASSERT_STRSTR(ps_etw_errmsg(PS_ETW_WIN32, 4201), "no such", "ERROR_WMI_INSTANCE_NOT_FOUND");
	ASSERT_STRSTR(ps_etw_errmsg(PS_ETW_WIN32, 120), "does not implement",
		      "ERROR_CALL_NOT_IMPLEMENTED");
	ASSERT_STRSTR(ps_etw_errmsg(PS_ETW_WIN32, 161), "another trace session",
		      "ERROR_BAD_PATHNAME: StartTrace's reason first");
	ASSERT_STRSTR(ps_etw_errmsg(PS_ETW_NTSTATUS, 0xC0000022), "elevated", "STATUS_ACCESS_DENIED");
	ASSERT_STRSTR(ps_etw_errmsg(PS_ETW_NTSTATUS, 0xC0000003), "without --tags",
		      "STATUS_INVALID_INFO_CLASS");
	/* The same number means different things in the two spaces. */
	ASSERT_TRUE(ps_etw_errmsg(PS_ETW_NTSTATUS, 5) == NULL, "5 is not an NTSTATUS we know");
	ASSERT_TRUE(ps_etw_errmsg(PS_ETW_WIN32, 123456) == NULL, "unknown code");
}
