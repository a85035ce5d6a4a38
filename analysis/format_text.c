// SPDX-License-Identifier: GPL-2.0
/*
 * The report as 80-column text (a tag line, its class and evidence, then notes) or as a
 * markdown table, both ending with the totals and what the recorder could not see; the paths
 * as text, sub-classes indented under their parent.
 */
#include <inttypes.h>
#include <string.h>

#include "analysis/format.h"
#include "userspace/lib/util/util.h"

/* The class column: "network (R) [softirq]" for a reclaimable tag split by context. */
static void class_cell(const struct ps_report_row *w, char *buf, size_t len)
{
	/* tags split by context share a label: say which one this is */
	const char *cx = w->ts->tag.ctx;
	bool show_cx = cx && strcmp(cx, "task");

	snprintf(buf, len, "%s%s%s%s%s", w->a.cls, w->reclaimable ? " (R)" : "",
		 show_cx ? " [" : "", show_cx ? cx : "", show_cx ? "]" : "");
}

/* A line of at most 79 columns. */
static void put_line79(FILE *f, char *lb)
{
	lb[79] = '\0';
	fprintf(f, "%s\n", lb);
}

static void text_row(FILE *f, const struct ps_report_row *w, const char *cls, const char *b1,
		     const char *b2, const char *b3)
{
	char lb[256];

	ps_tag_label(&w->ts->tag, lb, sizeof(lb));
	if (strlen(lb) > 28)
		lb[28] = '\0';
	fprintf(f, "%-28s %-7.7s %9.9s %9.9s %9.9s %4.2f %5.2f\n", lb, w->ts->tag.kind, b1, b2, b3,
		w->g.r2, w->g.score);
	/*
	 * 79 columns: a long evidence loses its "(rule N)", then its last words,
	 * never the confidence after it, and is never cut inside a symbol
	 */
	snprintf(lb, sizeof(lb), "  %s: %s", cls, w->a.evidence);
	if (strlen(lb) > 79 - 11 && strstr(lb, " (rule "))
		*strstr(lb, " (rule ") = '\0';
	if (strlen(lb) > 79 - 11) {
		char *sp, cut = lb[79 - 11];

		lb[79 - 11] = '\0';
		sp = strrchr(lb + 2, ' ');
		if (cut != ' ' && sp)
			*sp = '\0';
	}
	fprintf(f, "%s, conf %.2f\n", lb, w->a.confidence);
	if (w->a.split[0]) {
		snprintf(lb, sizeof(lb), "  by stack: %s", w->a.split);
		put_line79(f, lb);
	}
	if (w->slab.unconfirmed) {
		char sg[32], tg[32];

		ps_fmt_bytes(sg, sizeof(sg), (double)w->slab.slab_growth, true);
		ps_fmt_bytes(tg, sizeof(tg), (double)w->slab.tracked_growth, true);
		snprintf(lb, sizeof(lb), "  slabinfo %s %s of tracked %s: untraced frees?",
			 w->slab.cache, sg, tg);
		put_line79(f, lb);
	}
}

static void md_row(FILE *f, const struct ps_report_row *w, const char *cls, const char *b1,
		   const char *b2, const char *b3)
{
	char lb[256];

	fprintf(f, "| %s | %s | %s | %s | %s | %.2f | %.2f | %s |\n",
		ps_tag_label(&w->ts->tag, lb, sizeof(lb)), w->ts->tag.kind, b1, b2, b3, w->g.r2,
		w->g.score, cls);
}

/*
 * The one drop that changes how the table reads: objects the recorder's pointer map could not
 * take are in no tag (record.md, "A full pointer map"), so tags grew by at least what they show.
 * Said with the remedy, since the bare total does not say which map filled.
 */
static void print_ptr_map_full(FILE *f, const struct ps_report *rep)
{
	const char *size = ps_run_meta(rep->run, PS_META_MAP_PTRS);

	if (rep->ptr_map_full <= 0)
		return;
	fprintf(f, "pointer map full %" PRId64 " times: tags miss those objects, growth is a floor\n"
		"  record with a larger map: --map-size ptrs=N%s%s%s\n", rep->ptr_map_full,
		size ? " (this run: " : "", size ? size : "", size ? ")" : "");
}

/*
 * Events the kernel did not run a program for: a tracing program runs once per CPU at a time,
 * so an allocation or free in a softirq that an interrupt started inside the program is
 * skipped (record.md, "Events lost to re-entry"). Each moves one object of one class the wrong
 * way for good, and a sampled tag by the sample rate when its object was sampled.
 */
static void print_recursion_misses(FILE *f, const struct ps_report *rep)
{
	if (rep->recursion_misses <= 0)
		return;
	fprintf(f, "kernel skipped %" PRId64 " allocator events (BPF re-entry, recursion_misses):\n"
		"  counts may be off by as many objects (x the rate in sampled tags)\n",
		rep->recursion_misses);
}

static void print_totals(FILE *f, const struct ps_report *rep, bool md)
{
	char b1[32], b2[32];

	ps_fmt_bytes(b1, sizeof(b1), (double)rep->tracked_growth, true);
	ps_fmt_bytes(b2, sizeof(b2), (double)rep->reclaimable_growth, true);
	fprintf(f, "%stracked growth %s (reclaimable %s) over %.1f s\n", md ? "\n" : "", b1, b2,
		rep->secs);
	if (rep->sys_start >= 0 && rep->sys_end >= 0) {
		ps_fmt_bytes(b1, sizeof(b1), (double)(rep->sys_end - rep->sys_start), true);
		fprintf(f, "%s grew %s; drops %" PRId64 "\n", rep->sys_name, b1, rep->drops);
	} else {
		fprintf(f, "%s not in trace; drops %" PRId64 "\n", rep->sys_name, rep->drops);
	}
	print_ptr_map_full(f, rep);
	print_recursion_misses(f, rep);
}

void ps_format_text(FILE *f, const struct ps_report *rep, size_t n, bool md)
{
	char cls[64], b1[32], b2[32], b3[32];

	if (md)
		fprintf(f, "| tag | kind | end | growth | rate/s | R² | score | class |\n"
			"|---|---|---|---|---|---|---|---|\n");
	else
		fprintf(f, "%-28s %-7s %9s %9s %9s %4s %5s\n", "TAG", "KIND", "END", "GROWTH",
			"RATE/s", "R2", "SCORE");
	for (size_t i = 0; i < n; i++) {
		const struct ps_report_row *w = &rep->rows[i];

		class_cell(w, cls, sizeof(cls));
		ps_fmt_bytes(b1, sizeof(b1), (double)w->g.end, false);
		ps_fmt_bytes(b2, sizeof(b2), (double)w->g.growth, true);
		ps_fmt_bytes(b3, sizeof(b3), w->g.rate, true);
		if (md)
			md_row(f, w, cls, b1, b2, b3);
		else
			text_row(f, w, cls, b1, b2, b3);
	}
	print_totals(f, rep, md);
}

void ps_format_paths_text(FILE *f, const struct ps_paths *p)
{
	char b1[32], b2[32], b3[32];

	fprintf(f, "%-28s %9s %9s %9s %4s %5s\n", "PATH", "END", "GROWTH", "RATE/s", "R2", "SCORE");
	for (size_t k = 0; k < p->n; k++) {
		const char *name = p->rows[k].name;
		const struct ps_growth *g = &p->rows[k].g;
		int w = strchr(name, '/') ? 26 : 28;

		ps_fmt_bytes(b1, sizeof(b1), (double)g->end, false);
		ps_fmt_bytes(b2, sizeof(b2), (double)g->growth, true);
		ps_fmt_bytes(b3, sizeof(b3), g->rate, true);
		fprintf(f, "%s%-*.*s %9.9s %9.9s %9.9s %4.2f %5.2f\n", w == 26 ? "  " : "", w, w,
			name, b1, b2, b3, g->r2, g->score);
	}
}
