/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ground truth sampled beside the tracked numbers at every interval: /proc/meminfo (stored in
 * bytes under the meminfo field names) and /proc/slabinfo (one row per cache). The readers take
 * a path so tests can feed files; parse errors name the file and the line.
 */
#ifndef PS_KMEM_PROCSTAT_H
#define PS_KMEM_PROCSTAT_H

#include <stddef.h>
#include <stdint.h>

struct ps_trace;

/* Reads meminfo at path and adds every field as a sysstat of the open interval. */
int ps_meminfo_write(struct ps_trace *t, const char *path, char *err, size_t errlen);
/* Reads slabinfo (version 2.1) at path and adds every cache as a slabinfo row. */
int ps_slabinfo_write(struct ps_trace *t, const char *path, char *err, size_t errlen);
/* Reads one meminfo field in bytes; -ENOENT when absent. */
int ps_meminfo_get(const char *path, const char *field, int64_t *out);

#endif
