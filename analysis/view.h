/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What `report` lists of its rows: a sort order and filters (kind, path, tag glob, task name).
 * The verdict is always the whole domain's; a view only chooses which rows are printed and in
 * which order. The view is a report sharing everything with the original but its rows (copies,
 * so that the verdict's pointers into the original stay valid).
 */
#ifndef PS_ANALYSIS_VIEW_H
#define PS_ANALYSIS_VIEW_H

#include <stddef.h>

#include "analysis/analysis.h"

enum ps_sort { PS_SORT_RANK, PS_SORT_GROWTH, PS_SORT_RATE, PS_SORT_LIVE, PS_SORT_ALLOCS };

struct ps_view_opts {
	enum ps_sort sort;
	const char *kind;	/* PS_KIND_* or NULL */
	const char *path;	/* class prefix at a '/' boundary ("network", "file-services/smb-server") */
	const char *tag;	/* fnmatch() glob on the label */
	const char *comm;	/* fnmatch() glob on the tag's task name or a sampled stack's */
};

/* "growth" -> PS_SORT_GROWTH...; -EINVAL for a name it does not know. */
int ps_sort_parse(const char *s, enum ps_sort *out);
/* Whether a row passes the filters (sort ignored). */
bool ps_view_match(const struct ps_report *rep, const struct ps_report_row *w,
		   const struct ps_view_opts *o);
/*
 * Fills out as a view of rep: rep's fields, its rows filtered and sorted (ties keep the
 * report's order), and note set to what was filtered ("--kind slab: 3 of 135 tags"), or NULL
 * when nothing was. Free with ps_view_free(). -ENOMEM.
 */
int ps_view_build(struct ps_report *out, const struct ps_report *rep,
		  const struct ps_view_opts *o);
void ps_view_free(struct ps_report *view);

#endif
