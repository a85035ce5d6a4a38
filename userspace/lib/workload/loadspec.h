/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure pieces of `poolscope load` that the unit tests check without a server: the IO pattern
 * names of a --sweep ("64k:rr,8k:oltp"), smb:// URL and --user splitting, the aligned random
 * offset generator and percentiles from the workload latency histogram (workload_shm.h).
 * Portable C (also builds with mingw), no I/O.
 */
#ifndef PS_LOADSPEC_H
#define PS_LOADSPEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "userspace/lib/workload/workload_shm.h"

/* One step of a workload: block size, random or sequential, percentage of reads. */
struct ps_load_pattern {
	uint64_t bs;
	bool random;
	unsigned read_pct;	/* 100 read, 0 write, 70 OLTP */
};

#define PS_LOAD_MAX_BS		(16ull << 20)
#define PS_LOAD_MAX_STEPS	32

/*
 * Parses "BS:PAT" where PAT is rr (random read), rw (random write), sr, sw (sequential) or oltp
 * (random, 70% reads). Returns 0 or -EINVAL; err (when not NULL) says what was expected.
 */
int ps_load_parse_step(const char *s, struct ps_load_pattern *out, char *err, size_t errlen);
/* Comma-separated list of steps; returns the count (>= 1) or -EINVAL with err filled. */
int ps_load_parse_sweep(const char *s, struct ps_load_pattern *out, int max, char *err,
			size_t errlen);
/* "8k randread", "64k oltp(70% read)", "4k seqwrite". Returns buf. */
char *ps_load_pattern_str(const struct ps_load_pattern *p, char *buf, size_t len);

/* smb://HOST[:PORT]/SHARE/PATH split; returns 0 or -EINVAL. */
struct ps_smb_url {
	char host[256];
	unsigned port;		/* 0: default */
	char share[256];
	char path[1024];	/* without leading '/' */
};
int ps_smb_url_parse(const char *url, struct ps_smb_url *out);

/* "user%pass", "DOMAIN\user%pass" or "user" (empty password). Returns 0 or -EINVAL. */
int ps_smb_user_parse(const char *s, char *domain, size_t dlen, char *user, size_t ulen,
		      char *pass, size_t plen);

/*
 * Offsets: block-aligned over [0, span) where span = nblocks * bs. Random offsets come from a
 * splitmix64 stream (uniform via a 128-bit multiply, no modulo bias worth measuring);
 * sequential ones wrap at the end. Each worker slot seeds its own stream.
 */
struct ps_offset_gen {
	uint64_t state;
	uint64_t nblocks;
	uint64_t bs;
	uint64_t next_seq;
	bool random;
};
void ps_offset_gen_init(struct ps_offset_gen *g, uint64_t seed, uint64_t span, uint64_t bs,
			bool random, uint64_t start_block);
uint64_t ps_offset_next(struct ps_offset_gen *g);
/* Next 64 random bits of the same stream (read/write choice). */
uint64_t ps_rand64(uint64_t *state);

/*
 * Percentile q (0..1) of a latency histogram: the upper bound of the bucket that holds the
 * q-th IO (bounded by max_ns when given, since the last bucket is open). 0 for an empty one.
 */
uint64_t ps_lat_hist_percentile(const uint64_t *hist, unsigned nbuckets, double q, uint64_t max_ns);

/* Median of n values (sorted in place). 0 when n == 0. */


#endif
