/* SPDX-License-Identifier: GPL-2.0 */
/* "poolscope-win trace": ETW kernel pool session (trace.c). */
#ifndef PS_WIN_TRACE_H
#define PS_WIN_TRACE_H

/* argv[0] is "trace". Returns the exit code: 0 ok, 1 failure, 2 usage. */
int ps_win_trace(int argc, char **argv);
/*
 * After getopt_long returned '?' (with opterr 0): prints "poolscope-win CMD: unknown option
 * 'X'" or "... option 'X' needs a value", naming the option as given (main.c).
 */
void ps_win_bad_option(const char *cmd, char **argv);

#endif
