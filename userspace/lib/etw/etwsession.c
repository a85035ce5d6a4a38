// SPDX-License-Identifier: GPL-2.0
/*
 * Portable decisions behind "poolscope-win trace" (see etwsession.h): group mask, buffer
 * plan, tag filter parsing, logger choice, and the table that turns Win32/NTSTATUS codes into
 * one-line messages with the fix.  No windows.h here, so the numbers of the error codes are
 * spelled out; each is the documented value of the named constant (winerror.h / ntstatus.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "userspace/lib/etw/etwsession.h"
#include "userspace/lib/util/util.h"

void ps_etw_groupmask_set(struct ps_perf_groupmask *gm, uint32_t perf_flag)
{
	gm->masks[PS_PERF_INDEX(perf_flag)] |= PS_PERF_BITS(perf_flag);
}

bool ps_etw_groupmask_test(const struct ps_perf_groupmask *gm, uint32_t perf_flag)
{
	uint32_t bits = PS_PERF_BITS(perf_flag);

	return bits && (gm->masks[PS_PERF_INDEX(perf_flag)] & bits) == bits;
}

void ps_etw_groupmask_pool(struct ps_perf_groupmask *gm, uint32_t classic_flags)
{
	memset(gm, 0, sizeof(*gm));
	/* Word 0 is the classic EnableFlags word: index 0, so the flags go in unchanged. */
	gm->masks[0] = classic_flags;
	ps_etw_groupmask_set(gm, PS_PERF_POOL);
}

int ps_etw_parse_buffers_mb(const char *s, uint32_t *mb)
{
	unsigned v;

	if (ps_parse_uint(s, 1, PS_ETW_BUFFERS_MB_MAX, &v))
		return -EINVAL;
	*mb = v;
	return 0;
}

int ps_etw_parse_max_file_mb(const char *s, uint32_t *mb)
{
	unsigned v;

	if (ps_parse_uint(s, 0, PS_ETW_MAX_FILE_MB_MAX, &v) ||
	    (v && v < PS_ETW_MAX_FILE_MB_MIN))
		return -EINVAL;
	*mb = v;
	return 0;
}

enum ps_etw_stop_why ps_etw_stop_why(bool gone, bool buffers_lost, uint64_t free_bytes,
				     uint64_t file_bytes, uint32_t max_file_mb,
				     uint32_t buffer_kb)
{
	uint64_t buf = (uint64_t)buffer_kb * 1024;

	if (!gone && !buffers_lost)
		return PS_ETW_STOP_NONE;
	if (max_file_mb && file_bytes != UINT64_MAX &&
	    file_bytes + 2 * buf >= (uint64_t)max_file_mb << 20)
		return PS_ETW_STOP_FILE_LIMIT;
	if (free_bytes != UINT64_MAX && free_bytes < 4 * buf)
		return PS_ETW_STOP_DISK_FULL;
	return gone ? PS_ETW_STOP_OUTSIDE : PS_ETW_STOP_WRITE_LAG;
}

int ps_etw_plan_buffers(uint32_t mb, uint32_t ncpu, struct ps_etw_buffers *out)
{
	uint64_t budget_kb = (uint64_t)mb * 1024;
	uint32_t kb = 1024, n;

	if (!mb || mb > PS_ETW_BUFFERS_MB_MAX || !ncpu)
		return -EINVAL;
	/*
	 * Large buffers cost less per event, but each CPU owns the buffer it is filling, so a
	 * small budget on a big machine must use small buffers or events are lost while every
	 * buffer is half full.  Four per CPU leaves one filling, one flushing and slack.
	 */
	while (kb > 8 && budget_kb / kb < 4ull * ncpu)
		kb /= 2;
	if (budget_kb / kb < 2ull * ncpu)
		return -EINVAL;
	n = (uint32_t)(budget_kb / kb);
	out->buffer_kb = kb;
	out->max_buffers = n;
	/*
	 * ETW buffers come from non-paged pool, the very thing under investigation: start with
	 * an eighth of the budget (at least the two per CPU ETW insists on) and let the session
	 * grow to the maximum only when the event rate needs it.
	 */
	out->min_buffers = MAX(2 * ncpu, n / 8);
	if (out->min_buffers > n)
		out->min_buffers = n;
	return 0;
}

int ps_etw_parse_tags(const char *list, uint32_t tags[PS_ETW_MAX_TAGS], unsigned int *ntags,
		      char *err, size_t errlen)
{
	unsigned int n = 0;
	const char *p = list;

	*ntags = 0;
	if (!list || !*list) {
		snprintf(err, errlen, "empty tag list");
		return -EINVAL;
	}
	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		uint32_t tag = 0;
		unsigned int i;
		bool dup = false;

		if (len == 0 || len > 4) {
			snprintf(err, errlen, "bad tag '%.*s': a pool tag has 1 to 4 characters",
				 (int)MIN(len, 32), p);
			return -EINVAL;
		}
		for (i = 0; i < 4; i++) {
			unsigned char c = i < len ? (unsigned char)p[i] : ' ';

			if (c == '*' || c == '?') {
				snprintf(err, errlen,
					 "bad tag '%.*s': the kernel tag filter takes whole tags, no wildcards",
					 (int)len, p);
				return -EINVAL;
			}
			if (c < 0x20 || c > 0x7e) {
				snprintf(err, errlen, "bad tag '%.*s': not printable ASCII", (int)len, p);
				return -EINVAL;
			}
			/* Memory order: the first character is the low byte of the ULONG. */
			tag |= (uint32_t)c << (8 * i);
		}
		for (i = 0; i < n; i++)
			dup |= tags[i] == tag;
		if (!dup) {
			if (n == PS_ETW_MAX_TAGS) {
				snprintf(err, errlen,
					 "too many tags: the kernel pool tag filter takes at most %d",
					 PS_ETW_MAX_TAGS);
				return -E2BIG;
			}
			tags[n++] = tag;
		}
		if (!end)
			break;
		p = end + 1;
	}
	*ntags = n;
	return 0;
}

enum ps_etw_logger ps_etw_pick_logger(uint32_t major, uint32_t minor)
{
	if (major > 6 || (major == 6 && minor >= 2))
		return PS_ETW_LOGGER_SYSTEM;
	return PS_ETW_LOGGER_NONE;
}

struct etw_err {
	uint8_t src;
	uint32_t code;
	const char *msg;
};

/* Only codes the trace controller can meet, each with what the user should do about it. */
static const struct etw_err etw_errs[] = {
	{ PS_ETW_WIN32, 5,	/* ERROR_ACCESS_DENIED */
	  "access denied: run from an elevated (Administrator) prompt" },
	{ PS_ETW_WIN32, 1314,	/* ERROR_PRIVILEGE_NOT_HELD */
	  "a required privilege is not held: run from an elevated (Administrator) prompt" },
	{ PS_ETW_WIN32, 183,	/* ERROR_ALREADY_EXISTS */
	  "the trace session is already running (left by an earlier run?): "
	  "run 'poolscope-win trace --stop' first" },
	{ PS_ETW_WIN32, 112,	/* ERROR_DISK_FULL */
	  "disk full: free space on the output volume or trace for a shorter --duration" },
	{ PS_ETW_WIN32, 39,	/* ERROR_HANDLE_DISK_FULL */
	  "disk full: free space on the output volume or trace for a shorter --duration" },
	{ PS_ETW_WIN32, 4201,	/* ERROR_WMI_INSTANCE_NOT_FOUND */
	  "no such trace session is running" },
	{ PS_ETW_WIN32, 1450,	/* ERROR_NO_SYSTEM_RESOURCES */
	  "not enough system resources: too many trace sessions, or --buffers-mb too large" },
	{ PS_ETW_WIN32, 8,	/* ERROR_NOT_ENOUGH_MEMORY */
	  "not enough memory for the trace buffers: use a smaller --buffers-mb" },
	{ PS_ETW_WIN32, 3,	/* ERROR_PATH_NOT_FOUND */
	  "output directory not found: the directory of -o must exist" },
	/* StartTrace: another session writes that file, or ETW cannot use the path as given */
	{ PS_ETW_WIN32, 161,	/* ERROR_BAD_PATHNAME */
	  "the output file is already written by another trace session, or its path is not a "
	  "local absolute path (such as C:\\traces\\pool.etl): stop that session or choose "
	  "another -o" },
	{ PS_ETW_WIN32, 32,	/* ERROR_SHARING_VIOLATION */
	  "the output file is in use by another program" },
	{ PS_ETW_WIN32, 120,	/* ERROR_CALL_NOT_IMPLEMENTED */
	  "this system does not implement the call (Wine does not; Windows 8 / Server 2012 "
	  "and later do)" },
	{ PS_ETW_WIN32, 50,	/* ERROR_NOT_SUPPORTED */
	  "not supported by this Windows version" },
	{ PS_ETW_WIN32, 87,	/* ERROR_INVALID_PARAMETER */
	  "invalid parameter: this Windows version does not accept this trace setting" },
	{ PS_ETW_WIN32, 24,	/* ERROR_BAD_LENGTH */
	  "structure size rejected: this Windows version does not accept this trace setting" },
	{ PS_ETW_NTSTATUS, 0xC0000022,	/* STATUS_ACCESS_DENIED */
	  "access denied: run from an elevated (Administrator) prompt" },
	{ PS_ETW_NTSTATUS, 0xC0000061,	/* STATUS_PRIVILEGE_NOT_HELD */
	  "a required privilege is not held: run from an elevated (Administrator) prompt" },
	{ PS_ETW_NTSTATUS, 0xC0000003,	/* STATUS_INVALID_INFO_CLASS */
	  "this Windows version has no kernel pool tag filter: trace without --tags" },
	{ PS_ETW_NTSTATUS, 0xC00000BB,	/* STATUS_NOT_SUPPORTED */
	  "this Windows version does not support the kernel pool tag filter: trace without --tags" },
	{ PS_ETW_NTSTATUS, 0xC000000D,	/* STATUS_INVALID_PARAMETER */
	  "the kernel rejected the pool tag filter: trace without --tags" },
	{ PS_ETW_NTSTATUS, 0xC0000004,	/* STATUS_INFO_LENGTH_MISMATCH */
	  "the kernel rejected the pool tag filter's size: trace without --tags" },
	{ PS_ETW_NTSTATUS, 0xC0000008,	/* STATUS_INVALID_HANDLE */
	  "the kernel did not accept the session for the pool tag filter: trace without --tags" },
};

const char *ps_etw_errmsg(enum ps_etw_err_src src, uint32_t code)
{
	for (size_t i = 0; i < ARRAY_SIZE(etw_errs); i++)
		if (etw_errs[i].src == src && etw_errs[i].code == code)
			return etw_errs[i].msg;
	return NULL;
}
