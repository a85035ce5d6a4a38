/* SPDX-License-Identifier: GPL-2.0 */
/*
 * POOLSCOPE_VERSION: from the build's generated ps_version.h (git describe, rewritten only when
 * it changes, so what prints it is rebuilt), unless the compiler was given it (Windows, fuzz).
 */
#ifndef PS_UTIL_VERSION_H
#define PS_UTIL_VERSION_H

#ifndef POOLSCOPE_VERSION
#include "ps_version.h"
#endif

#endif
