/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report --by cache: each class's exact counters over the report's window, beside its sampled
 * tags' estimate and its standard error (caches.c).
 */
#ifndef PS_ANALYSIS_CACHES_H
#define PS_ANALYSIS_CACHES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/analysis.h"

struct ps_cache_row {
	char cls[128];		/* "sock_inode_cache", "kmalloc-256", "page-order-0" */
	/* the class counters over the window: every allocation and free, exact */
	int64_t allocs, frees, alloc_bytes, free_bytes;
	int64_t net_objs, net_bytes;	/* allocs - frees */
	/* of the frees, those of objects older than the recording (an estimate from the sample) */
	int64_t pre_frees, pre_free_bytes;
	/* the class's tags: their summed growth, an estimate to compare with net + pre_free_bytes */
	size_t ntags;
	int64_t tags_growth;
	double tags_se;			/* its standard error from the sampling, 0 when not sampled */
	bool sampled;
	bool has_slab;			/* /proc/slabinfo has the cache: */
	int64_t slab_objs;		/* its active objects' change over the window */
};

struct ps_cache_table {
	struct ps_cache_row *rows;	/* largest net bytes (either sign) first */
	size_t n;
};

/* The table of rep's window; -ENOMEM. A trace without class counters gives none. */
int ps_cache_table(const struct ps_report *rep, struct ps_cache_table *out);
void ps_cache_table_free(struct ps_cache_table *t);
/*
 * One standard error of a row's GROWTH from the sampling; 0 when its tag counts every object
 * (not PS_TAG_F_SAMPLED) or is of no class. An address is in the sample or not for all its
 * objects, so objects allocated and freed within the window cancel out whichever it is; what
 * varies is the objects that cross the window's edges, at most the live bytes at its start and
 * at its end and at most its allocated and freed bytes: rate x object size x the smaller of
 * the two sums.
 */
double ps_row_stderr(const struct ps_report *rep, const struct ps_report_row *w);
/* Prints it: text (80 columns, top rows with allocations or frees; 0 = all), csv or json. */
int ps_report_print_caches(FILE *f, const struct ps_report *rep, enum ps_fmt fmt, size_t top);

#endif
