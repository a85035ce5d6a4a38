// SPDX-License-Identifier: GPL-2.0
/*
 * The report as 80-column text (a tag line, its class and evidence, then notes) or as a
 * markdown table, both ending with the totals and what the recorder could not see; the paths
 * as text.
 */
#include <inttypes.h>
#include <string.h>

#include "analysis/format.h"
#include "analysis/verdict.h"
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

/*
 * The path starting at path (up to its ':') by at least over bytes shorter: leading
 * directories go, "~/" marking where (never the file's own name). Over is unsigned when
 * nothing is too long: (size_t)-x does nothing.
 */
static void shorten_path(char *path, size_t over)
{
	char *p = path, *colon = strchr(path, ':');

	if (over > 1000)
		return;
	while ((size_t)(p - path) < over + 2 && strchr(p, '/') && (!colon || strchr(p, '/') < colon))
		p = strchr(p, '/') + 1;
	if (p - path > 2) {
		path[0] = '~';
		path[1] = '/';
		memmove(path + 2, p, strlen(p) + 1);
	}
}

static void text_row(FILE *f, const struct ps_report *rep, const struct ps_report_row *w,
		     const char *cls, const char *b1, const char *b2, const char *b3,
		     const char *trend)
{
	char lb[256];

	char sl[32];

	ps_tag_label(&w->ts->tag, lb, sizeof(lb));
	ps_label_short(lb, sl, 28);
	fprintf(f, "%-28s %-7.7s %9.9s %9.9s %9.9s %s\n", sl, w->ts->tag.kind, b1, b2, b3, trend);
	/*
	 * 79 columns: a long evidence loses its "(rule N)", then its last words,
	 * never the confidence after it, and is never cut inside a symbol
	 */
	snprintf(lb, sizeof(lb), "  %s: %s", cls, w->a.evidence);
	if (strlen(lb) > 79 - 11 && strstr(lb, " (rule "))
		*strstr(lb, " (rule ") = '\0';
	/* a frame's source line, or the function a src rule matched in: the site line has it */
	if (strlen(lb) > 79 - 11 && strstr(lb, " at "))
		*strstr(lb, " at ") = '\0';
	if (strlen(lb) > 79 - 11 && !strncmp(w->a.evidence, "src ", 4) && strstr(lb, " in "))
		*strstr(lb, " in ") = '\0';
	/* and a long path loses its leading directories, marked '~' */
	if (strlen(lb) > 79 - 11 && !strncmp(w->a.evidence, "src ", 4))
		shorten_path(strstr(lb, ": src ") + 6, strlen(lb) - (79 - 11));
	if (strlen(lb) > 79 - 11) {
		char *sp, cut = lb[79 - 11];

		lb[79 - 11] = '\0';
		sp = strrchr(lb + 2, ' ');
		if (cut != ' ' && sp)
			*sp = '\0';
	}
	fprintf(f, "%s, conf %.2f\n", lb, w->a.confidence);
	if (w->ts->tag.site_src) {
		char sb[240];

		/* the allocating line first: an inlined helper's part goes when it does not fit */
		ps_src_str(w->ts->tag.site_src, sb, sizeof(sb));
		snprintf(lb, sizeof(lb), "  site %s", sb);
		if (strlen(lb) > 79 && strstr(lb, ", inlined "))
			*strstr(lb, ", inlined ") = '\0';
		shorten_path(lb + 7, strlen(lb) - 79);
		put_line79(f, lb);
	}
	if (w->a.split[0]) {
		snprintf(lb, sizeof(lb), "  by stack: %s", w->a.split);
		put_line79(f, lb);
	}
	if (w->lifetime && rep->secs < 2.0 * w->lifetime) {
		snprintf(lb, sizeof(lb), "  freed within %u s (lifetime rule): left out of %.0f s",
			 w->lifetime, rep->secs);
		put_line79(f, lb);
	}
	if (w->exact_shape && (w->g.growth - w->adj_growth >= PS_UNTRACED_NOTE_MIN ||
			       w->adj_growth - w->g.growth >= PS_UNTRACED_NOTE_MIN)) {
		char sg[32];

		ps_fmt_bytes(sg, sizeof(sg), (double)w->g.growth, true);
		snprintf(lb, sizeof(lb), "  sampled %s; growth from the exact %s counters", sg,
			 w->slab.cache ? w->slab.cache : w->ts->tag.name);
		put_line79(f, lb);
	} else if (w->g.growth - w->adj_growth >= PS_UNTRACED_NOTE_MIN) {
		char sg[32], tg[32];

		ps_fmt_bytes(sg, sizeof(sg), (double)w->g.growth, true);
		ps_fmt_bytes(tg, sizeof(tg), (double)(w->g.growth - w->adj_growth), false);
		if (w->untraced)
			snprintf(lb, sizeof(lb), "  tracked %s, %s of it freed untraced (slabinfo %s)",
				 sg, tg, w->slab.cache);
		else
			snprintf(lb, sizeof(lb), "  tracked %s, %s of it sampling excess (%s counters)",
				 sg, tg, w->ts->tag.name);
		put_line79(f, lb);
	}
}

static void md_row(FILE *f, const struct ps_report_row *w, const char *cls, const char *b1,
		   const char *b2, const char *b3, const char *trend)
{
	char lb[256];

	fprintf(f, "| %s | %s | %s | %s | %s | %s | %s |\n",
		ps_tag_label(&w->ts->tag, lb, sizeof(lb)), w->ts->tag.kind, b1, b2, b3, trend, cls);
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
	if (rep->snapshots)
		fprintf(f, "%u snapshots; %u tags first listed after the first one: their growth counts "
			"from where they are listed\n", rep->snapshots, rep->listed_late);
	if (rep->run->per_point > 1)
		fprintf(f, "%u intervals read as %u points of %u (the trace is longer than the "
			"reader's %u points)\n", rep->run->src_intervals, rep->run->nintervals,
			rep->run->per_point, PS_RUN_MAX_POINTS);
	print_ptr_map_full(f, rep);
	print_recursion_misses(f, rep);
}

void ps_print_wrapped(FILE *f, const char *s, int indent)
{
	size_t lead = strspn(s, " "), col = lead;

	fprintf(f, "%.*s", (int)lead, s);
	s += lead;
	while (*s) {
		size_t w = strcspn(s, " ");

		if (col > lead && col + 1 + w > 79) {
			fprintf(f, "\n%*s", indent + 2, "");
			col = indent + 2;
		} else if (col > lead) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", (int)w, s);
		col += w;
		s += w;
		s += strspn(s, " ");
	}
	fputc('\n', f);
}

static const char *section_title(const char *domain)
{
	if (!domain)
		return "ALL TRACKED MEMORY";
	if (!strcmp(domain, PS_DOMAIN_KERNEL))
		return "KERNEL MEMORY (the kernel cannot reclaim it)";
	if (!strcmp(domain, PS_DOMAIN_RECLAIMABLE))
		return "RECLAIMABLE MEMORY (page cache, reclaimable slabs)";
	return "PROCESS MEMORY (anonymous, copy-on-write, page tables)";
}

/*
 * Up to n rows of domain (NULL: all), in the report's order, but those that neither grew nor
 * hold anything at the end (a tag whose objects came and went): csv and json list them; here
 * they would only fill a short list of suspects.
 */
static void rows_of(FILE *f, const struct ps_report *rep, const struct ps_verdict *v,
		    const char *domain, size_t n, bool md)
{
	char cls[64], b1[32], b2[32], b3[32];
	size_t shown = 0;

	if (md)
		fprintf(f, "| tag | kind | end | growth | rate/s | trend | class |\n"
			"|---|---|---|---|---|---|---|\n");
	else
		fprintf(f, "%-28s %-7s %9s %9s %9s %s\n", "TAG", "KIND", "END", "GROWTH",
			"RATE/s", "TREND");
	for (size_t i = 0; i < rep->nrows && (!n || shown < n); i++) {
		const struct ps_report_row *w = &rep->rows[i];
		const char *trend;

		if ((domain && strcmp(w->domain, domain)) ||
		    (w->adj_growth <= 0 && w->g.growth <= 0 && w->g.end <= 0))
			continue;
		shown++;
		trend = ps_row_trend(rep, w, v->min_rate);
		class_cell(w, cls, sizeof(cls));
		ps_fmt_bytes(b1, sizeof(b1), (double)w->g.end, false);
		ps_fmt_bytes(b2, sizeof(b2), (double)w->adj_growth, true);
		ps_fmt_bytes(b3, sizeof(b3), ps_row_rate(w), true);
		if (md)
			md_row(f, w, cls, b1, b2, b3, trend);
		else
			text_row(f, rep, w, cls, b1, b2, b3, trend);
	}
	if (!shown)
		fprintf(f, "%s(none)\n", md ? "\n" : "  ");
}

static void print_paths(FILE *f, const struct ps_verdict *v)
{
	char b1[32], b2[32], lb[128];

	for (size_t i = 0; i < v->npaths; i++) {
		const struct ps_vpath *p = &v->paths[i];

		ps_fmt_bytes(b1, sizeof(b1), (double)p->st.growth, true);
		ps_fmt_bytes(b2, sizeof(b2), p->st.rate, true);
		snprintf(lb, sizeof(lb), "  path %-14s %-8s %9s %9s/s%s%s", p->name,
			 ps_vstate_name(p->st.state), b1, b2, p->st.why ? "  " : "",
			 p->st.why ? p->st.why : "");
		put_line79(f, lb);
	}
}

static void print_removed(FILE *f, const struct ps_verdict *v)
{
	char b[32];

	if (v->untraced_removed > 0) {
		ps_fmt_bytes(b, sizeof(b), (double)v->untraced_removed, false);
		fprintf(f, "  taken out: %s freed on untraced paths (kfree_rcu, bulk frees):\n"
			"    their caches did not grow in /proc/slabinfo\n", b);
	}
	if (v->bounded_left_out > 0) {
		ps_fmt_bytes(b, sizeof(b), (double)v->bounded_left_out, false);
		fprintf(f, "  left out: %s in caches whose objects the kernel frees on a timer\n"
			"    (lifetime rules), in a window too short to tell\n", b);
	}
}

void ps_format_text(FILE *f, const struct ps_report *rep, const struct ps_verdict *v, size_t n,
		    bool md)
{
	static const char *const others[] = { PS_DOMAIN_KERNEL, PS_DOMAIN_RECLAIMABLE,
					      PS_DOMAIN_USER };

	ps_print_wrapped(f, v->summary, 0);
	if (rep->view_note)
		fprintf(f, md ? "\n_shown: %s (the verdict reads them all)_\n" :
			"\nshown: %s (the verdict reads them all)\n", rep->view_note);
	fprintf(f, "\n%s%s\n", md ? "## " : "", section_title(v->domain));
	if (md)
		fputc('\n', f);
	rows_of(f, rep, v, v->domain, n, md);
	if (!md) {
		/* what the columns and marks mean, once, under the table they belong to */
		fprintf(f, "  END live at the end, GROWTH over the window; (R) reclaimable, [irq] "
			"context\n");
		print_paths(f, v);
		print_removed(f, v);
	}
	for (size_t d = 0; v->domain && d < ARRAY_SIZE(others); d++) {
		if (!strcmp(others[d], v->domain))
			continue;
		fprintf(f, "\n%s%s, top %d\n", md ? "## " : "", section_title(others[d]),
			PS_REPORT_OTHER_TOP);
		if (md)
			fputc('\n', f);
		rows_of(f, rep, v, others[d], PS_REPORT_OTHER_TOP, md);
	}
	print_totals(f, rep, md);
}

void ps_format_paths_text(FILE *f, const struct ps_verdict *v)
{
	fprintf(f, "%s\n", section_title(v->domain));
	print_paths(f, v);
}
