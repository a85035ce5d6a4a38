/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Input files that cannot be read twice (pipes, FIFOs, standard input): see input.c.
 */
#ifndef PS_INPUT_H
#define PS_INPUT_H

#include <stddef.h>
#include <stdio.h>

/*
 * The path to read for the input the user named: path itself for a regular file (or anything
 * that is not a pipe, FIFO or socket, left to the reader to judge), else a temporary copy of all
 * of it, removed at exit; a gzip, xz or zstd input (a file or a pipe) is inflated into such a
 * copy. "-" is standard input. NULL on error, with a message naming path in err.
 */
const char *ps_input_path(const char *path, char *err, size_t errlen);

/* For messages that name a copy: "(PATH is a copy of NAME)" lines, one per copy, to f. */
void ps_input_note(FILE *f, const char *prefix);

#endif
