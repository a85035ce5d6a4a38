/* SPDX-License-Identifier: GPL-2.0 */
/*
 * poolscope top's screen: one frame of a trace as it stands (screen.c), drawn by cmd-top.c
 * every interval. What the keys change is struct ps_top_state.
 */
#ifndef PS_TOP_SCREEN_H
#define PS_TOP_SCREEN_H

#include <stdio.h>

#include "analysis/analysis.h"
#include "analysis/view.h"

enum { PS_TOP_DOMAINS = 4, PS_TOP_KINDS = 6 };

struct ps_top_state {
	enum ps_sort sort;		/* never PS_SORT_RANK: top lists growers */
	int domain;			/* kernel, reclaimable, user, all */
	int kind;			/* all, slab, kmalloc, page, percpu, pool */
	char path[PS_PATH_NAME_MAX];	/* "" for all */
	char glob[64];			/* "" for all */
};

const char *ps_top_domain_name(int i);
const char *ps_top_kind_name(int i);
/*
 * The path after cur among the report's paths of r (rules rs), "" after the last: the 'p' key.
 */
void ps_top_next_path(const struct ps_run *r, const struct ps_rules *rs, char *cur,
		      size_t len);
/*
 * Draws r (NULL: nothing to show yet, with why) as rows x cols of text into f: a status line
 * (src, its length, intervals, drops), the verdict so far, the sort and filters, then the tags
 * that pass them, largest first. -errno.
 */
int ps_top_render(FILE *f, const struct ps_run *r, const struct ps_rules *rs,
		  const struct ps_top_state *st, const char *src, const char *why, int rows,
		  int cols);

#endif
