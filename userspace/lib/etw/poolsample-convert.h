/* SPDX-License-Identifier: GPL-2.0 */
/* Converts a poolscope-win sample file (userspace/lib/etw/poolsample.h) into an in-memory trace run. */
#ifndef PS_POOLSAMPLE_CONVERT_H
#define PS_POOLSAMPLE_CONVERT_H

#include <stddef.h>
#include "userspace/lib/trace/trace.h"

/* 0 or -errno/-EINVAL with err naming file, line and field. A torn last snapshot is dropped
 * and counted in meta "torn_snapshots_dropped". */
int ps_convert_poolsample(const char *path, struct ps_run **out, char *err, size_t errlen);

#endif
