/* SPDX-License-Identifier: GPL-2.0 */
/* convert of a trace-cmd trace.dat (replay.c). */
#ifndef PS_RECORD_REPLAY_H
#define PS_RECORD_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "userspace/lib/trace/trace.h"

struct ps_replay_opts {
	uint64_t interval_ns;
	const char *label;
	const char *cmdline;
};

/* The first bytes of a trace-cmd trace.dat: "\027\010\104tracing". */
#define PS_TRACE_CMD_MAGIC "\027\010\104tracing"

/*
 * Writes the kmem events of path into t, as `record --backend tracefs` would have recorded them
 * (intervals of o->interval_ns on the capture's clock). 0, or -errno with err filled.
 */
int ps_replay_trace_cmd(struct ps_trace *t, const char *path, const struct ps_replay_opts *o,
			char *err, size_t errlen);

#endif
