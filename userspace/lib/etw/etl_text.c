// SPDX-License-Identifier: GPL-2.0
/*
 * Text from what an .etl holds (etl.h declares these): UTF-16LE strings as UTF-8, GUIDs in
 * their registry form, FILETIMEs (100 ns units since 1601-01-01 UTC) as calendar dates, and the
 * names of the kernel's event groups. Pure functions of their arguments, no reader handle.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "userspace/lib/util/util.h"
#include "userspace/lib/etw/etl.h"

size_t ps_etl_utf16(const uint8_t *p, size_t len, char *out, size_t outlen)
{
	size_t i = 0, o = 0;

	for (; i + 1 < len; i += 2) {
		uint32_t c = ps_rd16(p + i);
		if (c == 0) {
			i += 2;
			break;
		}
		if (c >= 0xd800 && c < 0xdc00 && i + 3 < len) {
			uint32_t lo = ps_rd16(p + i + 2);
			if (lo >= 0xdc00 && lo < 0xe000) {
				c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
				i += 2;
			}
		}
		char tmp[4];
		int n;
		if (c < 0x80) {
			tmp[0] = (char)c; n = 1;
		} else if (c < 0x800) {
			tmp[0] = (char)(0xc0 | c >> 6); tmp[1] = (char)(0x80 | (c & 0x3f)); n = 2;
		} else if (c < 0x10000) {
			tmp[0] = (char)(0xe0 | c >> 12); tmp[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			tmp[2] = (char)(0x80 | (c & 0x3f)); n = 3;
		} else {
			tmp[0] = (char)(0xf0 | c >> 18); tmp[1] = (char)(0x80 | ((c >> 12) & 0x3f));
			tmp[2] = (char)(0x80 | ((c >> 6) & 0x3f)); tmp[3] = (char)(0x80 | (c & 0x3f)); n = 4;
		}
		if (outlen && o + n < outlen) {
			memcpy(out + o, tmp, n);
			o += n;
		}
	}
	if (outlen)
		out[o < outlen ? o : outlen - 1] = 0;
	return i > len ? len : i;
}

char *ps_etl_guid_str(const uint8_t *g, char buf[37])
{
	snprintf(buf, 37, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", ps_rd32(g),
		 ps_rd16(g + 4), ps_rd16(g + 6), g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
	return buf;
}

/*
 * How many whole periods of len days *days holds, taken off it; below max when max is not 0 (the
 * last period of the enclosing one is a day longer, so its last day must not start another).
 */
static int64_t whole_periods(int64_t *days, int64_t len, int64_t max)
{
	int64_t n = *days / len;

	if (max && n >= max)
		n = max - 1;
	*days -= n * len;
	return n;
}

/*
 * Civil date by arithmetic, not gmtime_r(): glibc's loads the local time zone file on first use,
 * a few system calls on every `etl info` for a UTC string. 1601-01-01 starts a 400-year
 * Gregorian cycle (146097 days), so the cycle, century, 4-year and year within it follow by
 * division; the last year of a 4-year group and the last century of a cycle are one day longer.
 */
char *ps_etl_filetime_str(int64_t ft, char buf[64])
{
	static const uint8_t mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	const int64_t day = 864000000000LL;	/* 100 ns units */
	int64_t days, rem;
	int64_t n400, n100, n4, n1, year;
	unsigned month = 0;

	if (ft <= 0) {
		snprintf(buf, 64, "-");
		return buf;
	}
	days = ft / day;
	rem = ft % day;
	n400 = whole_periods(&days, 146097, 0);
	n100 = whole_periods(&days, 36524, 4);
	n4 = whole_periods(&days, 1461, 0);
	n1 = whole_periods(&days, 365, 4);
	year = 1601 + 400 * n400 + 100 * n100 + 4 * n4 + n1;
	bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
	for (;; month++) {
		int64_t len = mdays[month] + (month == 1 && leap);

		if (days < len)
			break;
		days -= len;
	}
	snprintf(buf, 64, "%04lld-%02u-%02lld %02lld:%02lld:%02lld.%06lld UTC", (long long)year,
		 month + 1, (long long)days + 1, (long long)(rem / 36000000000LL),
		 (long long)(rem / 600000000 % 60), (long long)(rem / 10000000 % 60),
		 (long long)(rem % 10000000 / 10));
	return buf;
}

static const char *const group_names[] = {
	[0x00] = "EventTrace", [0x01] = "DiskIO", [0x02] = "Memory", [0x03] = "Process",
	[0x04] = "FileIO", [0x05] = "Thread", [0x06] = "TcpIp", [0x07] = "Job",
	[0x08] = "UdpIp", [0x09] = "Registry", [0x0a] = "DbgPrint", [0x0b] = "SystemConfig",
	[0x0c] = "Spare1", [0x0d] = "WmiTrace", [0x0e] = "Pool", [0x0f] = "PerfInfo",
	[0x10] = "Heap", [0x11] = "Object", [0x12] = "Power", [0x13] = "Modbound",
	[0x14] = "Image", [0x15] = "DPC", [0x16] = "CC", [0x17] = "Critsec",
	[0x18] = "StackWalk", [0x19] = "UMS", [0x1a] = "ALPC", [0x1b] = "Splitio",
	[0x1c] = "ThreadPool", [0x1d] = "HyperVisor", [0x1e] = "HyperVisorX",
};

const char *ps_etl_group_name(uint8_t group)
{
	return group < ARRAY_SIZE(group_names) ? group_names[group] : NULL;
}
