/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Workload counters shared between `poolscope load` and `poolscope record`.
 *
 * `poolscope record -- poolscope load ...` must put the workload's per-second IOs beside the
 * pool growth of the same interval. The recorder owns the trace file and its intervals, so the
 * workload does not write there: record creates a small file, maps it, and passes its path in
 * the environment (POOLSCOPE_WORKLOAD_SHM). `load` maps it too and keeps cumulative counters
 * up to date with relaxed atomic adds; the recorder reads them at each interval and stores the
 * deltas (workload table). Percentiles come from the delta of a log-linear latency histogram.
 *
 * Fixed-width fields only; the layout is versioned by magic+version+size.
 */
#ifndef PS_WORKLOAD_SHM_H
#define PS_WORKLOAD_SHM_H

#include <stddef.h>
#include <stdint.h>

#define PS_WORKLOAD_SHM_ENV	"POOLSCOPE_WORKLOAD_SHM"
#define PS_WORKLOAD_SHM_MAGIC	0x50534c44u	/* "PSLD" */
#define PS_WORKLOAD_SHM_VERSION	1

/*
 * Latency histogram: bucket b covers [lo(b), lo(b+1)) ns with 8 linear sub-buckets per power of
 * two, from 2^8 ns (256 ns) to 2^40 ns (~18 min); bucket 0 also takes everything below 256 ns and
 * the last one everything above. Resolution is within 12.5%.
 */
#define PS_LAT_SUB		8
#define PS_LAT_MIN_SHIFT	8
#define PS_LAT_MAX_SHIFT	40
#define PS_LAT_BUCKETS		((PS_LAT_MAX_SHIFT - PS_LAT_MIN_SHIFT) * PS_LAT_SUB)

struct ps_workload_shm {
	uint32_t magic;
	uint32_t version;
	uint32_t size;		/* sizeof(struct ps_workload_shm) of the writer */
	uint32_t workers;	/* set by load */
	uint64_t start_wall_ns;	/* set by load when the first IO is issued */
	uint64_t ios;		/* completed IOs, cumulative */
	uint64_t bytes;		/* completed bytes, cumulative */
	uint64_t errors;	/* failed IOs, cumulative */
	uint64_t inflight;	/* IOs issued and not completed, now (all workers) */
	uint64_t lat_max_ns;	/* max since start (record keeps its own per-interval max by delta of hist) */
	char desc[128];		/* "smb://127.0.0.1/share/test.bin 8k randread qd16 x2" */
	uint64_t lat_hist[PS_LAT_BUCKETS];
};

_Static_assert(sizeof(struct ps_workload_shm) == 192 + 8 * PS_LAT_BUCKETS, "workload shm layout");
/* tests/bench/smb.sh reads ios at this offset of the file (od), without a C reader */
_Static_assert(offsetof(struct ps_workload_shm, ios) == 24, "workload shm: ios offset");

/* Bucket of a latency in ns (see above). */
static inline unsigned ps_lat_bucket(uint64_t ns)
{
	unsigned shift, sub;

	if (ns < (1ull << PS_LAT_MIN_SHIFT))
		return 0;
	shift = 63 - __builtin_clzll(ns);
	if (shift >= PS_LAT_MAX_SHIFT)
		return PS_LAT_BUCKETS - 1;
	sub = (unsigned)((ns >> (shift - 3)) & (PS_LAT_SUB - 1));
	return (shift - PS_LAT_MIN_SHIFT) * PS_LAT_SUB + sub;
}

/* Lower bound in ns of bucket b. */
static inline uint64_t ps_lat_bucket_lo(unsigned b)
{
	unsigned shift = b / PS_LAT_SUB + PS_LAT_MIN_SHIFT, sub = b % PS_LAT_SUB;

	return (1ull << shift) + ((uint64_t)sub << (shift - 3));
}

#endif
