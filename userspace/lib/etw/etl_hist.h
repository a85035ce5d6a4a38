/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Event counts of an .etl file by kind: kernel events by (group, type), classic/manifest events
 * by (provider GUID, type or id). What `etl info` prints and what the corpus tests compare with
 * TraceEvent's COUNT lines.
 */
#ifndef PS_ETW_ETL_HIST_H
#define PS_ETW_ETL_HIST_H

#include "userspace/lib/etw/etl.h"

struct ps_etl_hist_ent {
	bool kernel;
	uint8_t group, type;
	uint8_t htype;			/* header type of the first one in the file */
	uint16_t id;
	uint8_t guid[16];
	uint64_t count;
	uint32_t first_buf, first_off;	/* where that first one is (buffer index, offset) */
};

struct ps_etl_hist {
	struct ps_etl_hist_ent *ent;
	size_t n, cap;
	uint32_t *slot;			/* open addressing over ent indexes + 1 */
	size_t nslot;
	/*
	 * kernel kinds: kidx[group][type] -> ent index + 1, a 1 KiB row per group seen (a flat
	 * 256 KiB table was mmap()ed, faulted in and unmapped on every `etl info`, per thread)
	 */
	uint32_t *kidx[256];
	uint32_t recent[64];		/* non-kernel: (id, type, GUID byte) -> ent index + 1 */
};

int ps_etl_hist_add(struct ps_etl_hist *h, const struct ps_etl_event *ev);
/*
 * Adds src's counts into dst (histograms of different parts of a file, as ps_etl_scan() workers
 * build them); a kind's header type is that of its first event in the file, whichever part it
 * was in, so the result does not depend on how the buffers were shared out.
 */
int ps_etl_hist_merge(struct ps_etl_hist *dst, const struct ps_etl_hist *src);
/* Sorts entries: kernel first by (group, type), then by GUID and id. */
void ps_etl_hist_sort(struct ps_etl_hist *h);
uint64_t ps_etl_hist_kernel(const struct ps_etl_hist *h, uint8_t group, uint8_t type);
void ps_etl_hist_free(struct ps_etl_hist *h);

/* Header type name: "SYSTEM64", "PERFINFO64", "EVENT_HEADER64", ... */
const char *ps_etl_htype_name(uint8_t htype);

#endif
