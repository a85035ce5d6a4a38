/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Converters from Windows inputs to the poolscope trace (trace/trace.h): raw .etl kernel traces
 * with pool events, text snapshots (poolmon /n files, poolmon console captures, windbg
 * !poolused) and poolscope-win sample files. Each writes into a trace its caller created and
 * closes, or discards when the conversion fails. docs/etw.md documents the mapping, the meta
 * keys and the counters they write.
 */
#ifndef PS_ETW_CONVERT_H
#define PS_ETW_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "userspace/lib/etw/pooltag.h"
#include "userspace/lib/trace/trace.h"

enum ps_input_kind {
	PS_INPUT_UNKNOWN = 0,
	PS_INPUT_ETL,
	PS_INPUT_POOLMON,	/* poolmon /n snapshot file or console capture */
	PS_INPUT_POOLUSED,	/* windbg !poolused */
	PS_INPUT_POOLSAMPLE,	/* poolscope-win sample ("#poolscope-sample" first line) */
};

struct ps_convert_opts {
	uint64_t interval_ns;			/* ETL timeline step; snapshot spacing for text */
	const struct ps_pooltags *pooltags;	/* NULL: no owners */
	/*
	 * Called now and then (about every 64k events) when not NULL; for an .etl of 1 MiB or
	 * more, on the thread that reads it, not the caller's (POOLSCOPE_ETL_THREADS).
	 */
	void (*progress)(void *arg, uint64_t bytes_done, uint64_t bytes_total, uint64_t events);
	void *progress_arg;
};

struct ps_convert_result {
	uint64_t events;
	uint64_t pool_allocs, pool_frees;
	uint64_t preexisting_frees;		/* frees of allocations made before the trace */
	uint64_t implicit_frees;		/* an alloc at a live address: its free was lost */
	uint64_t stacks_matched, stacks_unmatched, stack_keys_unresolved;
	uint32_t intervals;
	uint32_t tags;
	uint32_t stacks;
	uint32_t snapshots;
	uint32_t torn_snapshots;		/* sample file: its last snapshot cut short */
	uint32_t problems;			/* input problems (each printed to err_first) */
	uint32_t skipped;			/* text lines that are not pool rows */
	char first_problem[400];
};

/*
 * No pool counter or byte count gets near 2^52 (4 PiB): a number beyond it in a text input
 * (poolmon, !poolused, sample files) is damage, not a figure. The trace reader's bound, so that
 * what a converter lets through loads.
 */
#define PS_CONVERT_ABSURD ((uint64_t)PS_TRACE_ABSURD)

/* Looks at the first bytes of path. Returns a PS_INPUT_* or -errno. */
int ps_convert_detect(const char *path);
const char *ps_input_kind_name(int kind);

/*
 * Converts one .etl into t (created, empty). Returns 0 (also when the file had problems that
 * were skipped: res->problems), or a negative error with err filled ("file: offset ..: ...").
 */
int ps_convert_etl(struct ps_trace *t, const char *path, const struct ps_convert_opts *o,
		   struct ps_convert_result *res, char *err, size_t errlen);

/*
 * Converts text snapshots (poolmon, !poolused) from paths, in order: each snapshot is one
 * interval, interval_ns apart; live bytes are absolute (meta live_absolute = 1).
 */
int ps_convert_text(struct ps_trace *t, const char *const *paths, size_t n,
		    const struct ps_convert_opts *o, struct ps_convert_result *res, char *err,
		    size_t errlen);

/*
 * Converts a poolscope-win sample file (poolsample.h): each complete snapshot is one interval,
 * at its own wall clock, with live bytes absolute (meta live_absolute = 1). A torn last
 * snapshot is dropped and said in res->torn_snapshots and meta "torn_snapshots_dropped". The
 * file carries its clock and names no owners: o is not read. Returns 0, or -errno/-EINVAL/
 * -ERANGE with err naming the file, and the line and field where one is at fault.
 */
int ps_convert_poolsample(struct ps_trace *t, const char *path, const struct ps_convert_opts *o,
			  struct ps_convert_result *res, char *err, size_t errlen);

#endif
