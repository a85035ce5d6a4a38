/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A trace's sampled stacks as a pprof profile (profile.proto, gzipped), for `go tool pprof`
 * and the tools that read it (pprof.c).
 */
#ifndef PS_PPROF_H
#define PS_PPROF_H

#include <stddef.h>

#include "userspace/lib/trace/trace.h"
#include "analysis/stackshare.h"

/*
 * Writes path (which must not exist unless force): one sample per entry of e (a tag's share
 * of a sampled stack, or the share no stack holds under PS_NO_STACK_FRAME), the root last, the
 * tag's label as a leaf frame (as `export --folded` does); sample types
 * alloc_objects/count, alloc_space/bytes, inuse_objects/count and inuse_space/bytes (the
 * default). Returns 0 or -errno with err filled.
 */
int ps_pprof_write(const struct ps_run *r, const struct ps_stack_share *e, size_t ne,
		   const char *path, bool force, char *err, size_t errlen);

#endif
