// SPDX-License-Identifier: GPL-2.0
/*
 * UTF-8 <-> UTF-16 for the Windows API (wide.h).
 */
#include <stdlib.h>
#include <windows.h>

#include "userspace/win/wide.h"

wchar_t *ps_win_wide(const char *s)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
	wchar_t *w;

	if (n <= 0)
		return NULL;
	w = malloc((size_t)n * sizeof(*w));
	if (w && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n) {
		free(w);
		w = NULL;
	}
	return w;
}

char *ps_win_utf8(const wchar_t *w)
{
	int n = WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, -1, NULL, 0, NULL, NULL);
	char *s;

	if (n <= 0)
		return NULL;
	s = malloc((size_t)n);
	if (s && WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, -1, s, n, NULL, NULL) != n) {
		free(s);
		s = NULL;
	}
	return s;
}
