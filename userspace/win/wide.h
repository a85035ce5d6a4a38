/* SPDX-License-Identifier: GPL-2.0 */
/*
 * UTF-8 inside, UTF-16 at the Windows API: the program's strings (arguments, paths, messages)
 * are UTF-8, and every call that takes a path or a name uses the W form, so that a path outside
 * the ANSI code page works.
 */
#ifndef POOLSCOPE_WIN_WIDE_H
#define POOLSCOPE_WIN_WIDE_H

#include <wchar.h>

/* A malloc'ed UTF-16 copy of a UTF-8 string; NULL when it is not valid UTF-8 or on ENOMEM. */
wchar_t *ps_win_wide(const char *s);
/* A malloc'ed UTF-8 copy of a UTF-16 string; NULL on ENOMEM or a lone surrogate. */
char *ps_win_utf8(const wchar_t *w);

#endif
