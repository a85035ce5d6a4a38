// SPDX-License-Identifier: GPL-2.0
/*
 * Writer side of the pool sample format and the tag helpers both the Windows program and the
 * Linux converter use.  Each snapshot ends with an "E" line and a flush so a reader can drop
 * a snapshot cut short by a kill instead of reporting half a snapshot as real numbers.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "userspace/lib/etw/etwkernel.h"
#include "userspace/lib/etw/poolsample.h"

static int io_err(FILE *f)
{
	return ferror(f) ? -EIO : 0;
}

int ps_poolsample_write_header(FILE *f, const char *const *meta)
{
	fprintf(f, "%s %d\n", PS_POOLSAMPLE_MAGIC, PS_POOLSAMPLE_VERSION);
	for (; meta && meta[0] && meta[1]; meta += 2)
		fprintf(f, "#meta %s\t%s\n", meta[0], meta[1]);
	fprintf(f, "#columns S snap wall_ns nonpaged_bytes paged_bytes avail_bytes\n");
	fprintf(f, "#columns T tag_hex pool allocs frees bytes\n");
	fprintf(f, "#columns E snap\n");
	if (fflush(f))
		return -errno;
	return io_err(f);
}

int ps_poolsample_open(FILE *f, const char *const *meta, uint64_t wall_ns)
{
	long size;
	int ch;

	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0)
		return -errno;
	if (!size)
		return ps_poolsample_write_header(f, meta);
	/* a writer killed mid-line left no newline: the restart line must not join its line */
	if (fseek(f, -1, SEEK_END))
		return -errno;
	ch = fgetc(f);
	if (fseek(f, 0, SEEK_END))
		return -errno;
	if (ch != '\n')
		fputc('\n', f);
	fprintf(f, "%s %" PRIu64 "\n", PS_POOLSAMPLE_RESTART, wall_ns);
	if (fflush(f))
		return -errno;
	return io_err(f);
}

int ps_poolsample_begin(FILE *f, uint32_t snap, uint64_t wall_ns, uint64_t nonpaged,
			uint64_t paged, uint64_t avail)
{
	fprintf(f, "S %" PRIu32 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", snap,
		wall_ns, nonpaged, paged, avail);
	return io_err(f);
}

int ps_poolsample_tag(FILE *f, uint32_t tag, bool paged, uint64_t allocs, uint64_t frees,
		      uint64_t bytes)
{
	fprintf(f, "T %08" PRIx32 " %s %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", tag,
		ps_pool_type_name(paged), allocs, frees, bytes);
	return io_err(f);
}

int ps_poolsample_end(FILE *f, uint32_t snap)
{
	fprintf(f, "E %" PRIu32 "\n", snap);
	if (fflush(f))
		return -errno;
	return io_err(f);
}

void ps_pool_tag_format(uint32_t tag, char out[5])
{
	tag &= ~PS_POOL_TAG_PROTECTED;
	for (int i = 0; i < 4; i++) {
		unsigned char c = (tag >> (8 * i)) & 0xff;

		out[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '.';
	}
	out[4] = '\0';
}

bool ps_pool_tag_match(const char *p, const char *t)
{
	if (!*p)
		return !*t;
	if (*p == '*')
		return ps_pool_tag_match(p + 1, t) || (*t && ps_pool_tag_match(p, t + 1));
	if (!*t)
		return false;
	if (*p == '?' || *p == *t)
		return ps_pool_tag_match(p + 1, t + 1);
	return false;
}

bool ps_pool_tag_match_list(const char *list, const char *tag)
{
	char pat[64];

	if (!list || !*list)
		return true;
	while (*list) {
		size_t n = strcspn(list, ",");

		if (n && n < sizeof(pat)) {
			memcpy(pat, list, n);
			pat[n] = '\0';
			if (ps_pool_tag_match(pat, tag))
				return true;
		}
		list += n;
		if (*list == ',')
			list++;
	}
	return false;
}

const char *ps_pool_type_name(bool paged)
{
	return paged ? "paged" : "nonpaged";
}

const char *ps_poolsample_query_errmsg(uint32_t status)
{
	switch (status) {
	case 0xC0000003:	/* STATUS_INVALID_INFO_CLASS */
	case 0xC0000002:	/* STATUS_NOT_IMPLEMENTED */
		return "this system does not provide the pool tag table (Wine does not; Windows "
		       "has since NT 4.0)";
	case 0xC0000022:	/* STATUS_ACCESS_DENIED */
		return "access denied: run from an elevated (Administrator) prompt";
	case 0xC0000017:	/* STATUS_NO_MEMORY */
		return "not enough memory for the pool tag table";
	default:
		return NULL;
	}
}
