/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tag's display name, the one spelling of every output: report, diff, plot, export and the
 * recorder's status line. Pure (no allocation, no I/O): it needs only the tag.
 */
#ifndef PS_ANALYSIS_LABEL_H
#define PS_ANALYSIS_LABEL_H

#include <stddef.h>

#include "userspace/lib/trace/trace.h"

/*
 * name (or cache, or "?"), and for slab, kmalloc and page tags "@site_sym" with its offset:
 * "kmalloc-256@smb2_read+0x1a2", "dentry", "LSbf". Truncated to len; returns buf.
 */
const char *ps_tag_label(const struct ps_tag *t, char *buf, size_t len);

/*
 * lb in at most w columns (w >= 26; out holds w + 1): the site's offset goes first, then the
 * site and, past 16 columns, the name are cut, each marked '~' where it was.
 */
void ps_label_short(const char *lb, char *out, size_t w);

/*
 * A source line as the outputs print it: "fs/file_table.c:225 alloc_empty_file"; when the
 * line is in an inlined function, the inlining caller's line first:
 * "net/ipv4/tcp.c:890 tcp_stream_alloc_skb, inlined include/linux/skbuff.h:1300 alloc_skb".
 * Returns buf ("" for NULL).
 */
const char *ps_src_str(const struct ps_src *s, char *buf, size_t len);

#endif
