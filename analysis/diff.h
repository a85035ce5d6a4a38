/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Two runs compared (poolscope diff A B): the tags of B that grow where A's do not. A tag is
 * aligned across runs by kind + cache (or name) + call-site symbol without its offset +
 * module, never by id or address (both differ from run to run and boot to boot). Growth is
 * normalised per IO when both runs carry workload rows with IOs, else per second.
 */
#ifndef PS_ANALYSIS_DIFF_H
#define PS_ANALYSIS_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/analysis.h"

/* A tag must grow at least this much over run B to be listed (smaller is allocator noise). */
#define PS_DIFF_MIN_GROWTH (64 * 1024)

struct ps_diff_row {
	const struct ps_report_row *row;	/* the tag in B's report */
	double a, b;				/* normalised growth in A (aligned tags) and in B */
};

struct ps_diff {
	bool per_io;			/* normalised per IO, else per second */
	size_t nrows;
	struct ps_diff_row *rows;	/* in B's ranked order */
};

/* The key that aligns a tag across runs: "kind|cache|sym|module", sym without "+off". */
void ps_diff_key(const struct ps_tag *t, char *buf, size_t len);
/*
 * B's tags (slab-backing pages left out) that grew at least PS_DIFF_MIN_GROWTH over B's window
 * and whose aligned tags in A grew less than a tenth as much, normalised. 0 or -ENOMEM.
 */
int ps_diff_build(struct ps_diff *d, const struct ps_report *a, const struct ps_report *b);
void ps_diff_free(struct ps_diff *d);

struct ps_verdict;
/*
 * The comparison of runs na (A) and nb (B): the answer, both verdicts, B's growing tags (top,
 * 0: all) and the paths side by side, as text, csv, json or markdown (format_diff.c).
 */
void ps_diff_print(FILE *f, const struct ps_diff *d, const struct ps_verdict *va,
		   const struct ps_verdict *vb, const char *na, const char *nb, size_t top,
		   enum ps_fmt fmt);

#endif
