// SPDX-License-Identifier: GPL-2.0
/*
 * The system's own count of memory that cannot be reclaimed, against which tracked growth is
 * read: SUnreclaim on Linux, NonPagedPool on Windows (from the trace's os meta).
 */
#include <string.h>

#include "analysis/analysis.h"

const struct ps_series *ps_unreclaimable(const struct ps_run *r, const char **name)
{
	const char *os = ps_run_meta(r, PS_META_OS);

	*name = os && !strcmp(os, PS_OS_WINDOWS) ? PS_SYS_NONPAGED : PS_SYS_SUNRECLAIM;
	return ps_run_sys(r, *name);
}
