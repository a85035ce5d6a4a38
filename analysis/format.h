/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The report's output formats, one file each: format_text.c (the 80-column text and the
 * markdown table), format_csv.c, format_json.c (schema in docs/analysis.md). n is how many
 * ranked rows to print. Internal to analysis/: commands call ps_report_print() and
 * ps_report_print_paths().
 */
#ifndef PS_ANALYSIS_FORMAT_H
#define PS_ANALYSIS_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "analysis/verdict.h"

/* Rows shown of the domains besides the verdict's. */
#define PS_REPORT_OTHER_TOP 3
/* A row's note on bytes taken out for untraced frees, from this much. */
#define PS_UNTRACED_NOTE_MIN (64 * 1024)

void ps_format_text(FILE *f, const struct ps_report *rep, const struct ps_verdict *v, size_t n,
		    bool md);
void ps_format_csv(FILE *f, const struct ps_report *rep, size_t n);
void ps_format_json(FILE *f, const struct ps_report *rep, const struct ps_verdict *v, size_t n);

void ps_format_paths_text(FILE *f, const struct ps_verdict *v);
void ps_format_paths_csv(FILE *f, const struct ps_verdict *v);
void ps_format_paths_json(FILE *f, const struct ps_verdict *v);

#endif
