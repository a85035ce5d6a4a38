/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the exports (folded stacks, pprof) show per sampled stack, so that their totals per tag
 * are the report's: each tag's figures over the report's window (live bytes and objects at its
 * end, allocations and their bytes within it) split between the tag's sampled stacks in
 * proportion to what each stack's sample holds. The stacks say who allocated; the tag's own
 * counters, sampled far more densely (or exact), say how much. A tag with no sampled stack
 * holding a figure keeps it in one entry without a stack. Pages backing slabs are left out:
 * their slab tags count them (trace-format.md).
 */
#ifndef PS_ANALYSIS_STACKSHARE_H
#define PS_ANALYSIS_STACKSHARE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"

/* The frame standing for the stack of a tag's share no sampled stack holds. */
#define PS_NO_STACK_FRAME "[no sampled stack]"

struct ps_stack_share {
	const struct ps_tag_series *ts;
	const struct ps_stack *st;	/* NULL: the tag's share no sampled stack holds */
	int64_t inuse_bytes, inuse_objs;
	int64_t alloc_objs, alloc_bytes;
};

/*
 * The entries of every row of rep (ranked order, a tag's stacks by their live bytes, largest
 * first); *out is malloc'ed. Within a tag the parts add up exactly to the tag's figures.
 * -ENOMEM.
 */
int ps_stack_shares(const struct ps_report *rep, struct ps_stack_share **out, size_t *n);

#endif
