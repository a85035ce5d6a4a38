/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pool sample file format shared by poolscope-win (writer) and the Linux converter (reader).
 * Text, one record per line, appended per snapshot and closed by an end marker so that a
 * snapshot torn by a kill is recognisable.  Layout:
 *   #poolscope-sample 1
 *   #meta <key>\t<value>
 *   #columns T tag pool allocs frees bytes
 *   S <snap> <wall_ns> <nonpaged_bytes> <paged_bytes> <avail_bytes>
 *   T <tag-hex8> <nonpaged|paged> <allocs> <frees> <bytes>
 *   E <snap>
 * A writer started again on the same file appends "#restart <wall_ns>" on a line of its own
 * and goes on; the snapshot it was killed in (an S without its E, maybe a line cut short)
 * ends there.
 */
#ifndef PS_POOLSAMPLE_H
#define PS_POOLSAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PS_POOLSAMPLE_MAGIC	"#poolscope-sample"
#define PS_POOLSAMPLE_VERSION	1

#define PS_POOLSAMPLE_RESTART	"#restart"

/* Writes the header lines (magic, meta pairs, columns). meta is key,value,...,NULL. */
int ps_poolsample_write_header(FILE *f, const char *const *meta);
/*
 * Starts writing to f, opened for reading and appending ("a+b"): the header when the file is
 * empty, else a restart line (after a newline when the last line was cut short). -errno.
 */
int ps_poolsample_open(FILE *f, const char *const *meta, uint64_t wall_ns);
int ps_poolsample_begin(FILE *f, uint32_t snap, uint64_t wall_ns, uint64_t nonpaged,
			uint64_t paged, uint64_t avail);
/* tag is the raw 4-byte pool tag as the kernel stores it (little-endian ULONG). */
int ps_poolsample_tag(FILE *f, uint32_t tag, bool paged, uint64_t allocs, uint64_t frees,
		      uint64_t bytes);
/* Writes the end marker and flushes: the snapshot is complete on disk after this. */
int ps_poolsample_end(FILE *f, uint32_t snap);

/*
 * Formats a tag as poolmon and !poolused show it, the one formatter of the project: the
 * protected bit (bit 31, PS_POOL_TAG_PROTECTED) cleared, as the kernel clears it before it
 * counts a tag; bytes outside 0x20..0x7e as '.'; trailing spaces kept ("Io  "). out >= 5.
 */
void ps_pool_tag_format(uint32_t tag, char out[5]);
/* Wildcard match of a formatted tag against a pattern with '*' and '?'. */
bool ps_pool_tag_match(const char *pattern, const char *tag);
/* Matches against a comma-separated list of patterns; NULL or "" matches everything. */
bool ps_pool_tag_match_list(const char *list, const char *tag);
/* "nonpaged"/"paged" */
const char *ps_pool_type_name(bool paged);
/*
 * What an NTSTATUS from NtQuerySystemInformation(SystemPoolTagInformation) means to the user
 * of "sample" (the pool tag table poolmon reads); NULL for a code without advice.
 */
const char *ps_poolsample_query_errmsg(uint32_t status);

#endif
