// SPDX-License-Identifier: GPL-2.0
/*
 * report --stacks GLOB: the sampled stacks of the tags whose label matches, each with its part
 * of the tag's live bytes at the window's end and of its allocations (stackshare.h: the parts
 * add up to the report's figures), largest first; frames innermost first, as perf prints them.
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/format.h"
#include "analysis/stackshare.h"
#include "userspace/lib/util/util.h"

static void frame_text(const struct ps_frame *fr, char *buf, size_t len)
{
	if (fr->sym && !strchr(fr->sym, '+') && fr->off)
		snprintf(buf, len, "%s+0x%" PRIx64 "%s%s%s", fr->sym, fr->off,
			 fr->module ? " [" : "", fr->module ? fr->module : "", fr->module ? "]" : "");
	else if (fr->sym)
		snprintf(buf, len, "%s%s%s%s", fr->sym, fr->module ? " [" : "",
			 fr->module ? fr->module : "", fr->module ? "]" : "");
	else if (fr->module)
		snprintf(buf, len, "%s+0x%" PRIx64, fr->module, fr->off);
	else
		snprintf(buf, len, "0x%" PRIx64, fr->addr);
}

static const struct ps_stack_share *sort_base;

/* A tag's entries together (in the report's order of tags), then by live bytes. */
static int by_bytes(const void *a, const void *b)
{
	const struct ps_stack_share *x = &sort_base[*(const size_t *)a];
	const struct ps_stack_share *y = &sort_base[*(const size_t *)b];

	if (x->ts != y->ts)
		return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
	if (x->inuse_bytes != y->inuse_bytes)
		return x->inuse_bytes > y->inuse_bytes ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static void print_entry_text(FILE *f, const struct ps_stack_share *e, int64_t total)
{
	char b[32], fr[320];

	ps_fmt_bytes(b, sizeof(b), (double)e->inuse_bytes, false);
	fprintf(f, "  %9s %3.0f%%  %" PRId64 " allocs", b,
		total > 0 ? 100.0 * (double)e->inuse_bytes / (double)total : 0.0, e->alloc_objs);
	if (e->st && e->st->comm)
		fprintf(f, "  comm %s", e->st->comm);
	fputc('\n', f);
	if (!e->st) {
		fprintf(f, "      (no sampled stack holds these bytes)\n");
		return;
	}
	for (uint32_t k = 0; k < e->st->nframes; k++) {
		char sb[512];

		frame_text(&e->st->frames[k], fr, sizeof(fr));
		if (e->st->frames[k].src)
			fprintf(f, "      %s  %s\n", fr, ps_src_str(e->st->frames[k].src, sb,
							       sizeof(sb)));
		else
			fprintf(f, "      %s\n", fr);
	}
}

static void print_entry_csv(FILE *f, const struct ps_stack_share *e, int64_t total)
{
	char lb[256], fr[320];

	ps_csv_str(f, ps_tag_label(&e->ts->tag, lb, sizeof(lb)));
	fprintf(f, ",%" PRId64 ",%s,%" PRId64 ",%.4f,%" PRId64 ",", e->ts->tag.id,
		e->ts->tag.ctx ? e->ts->tag.ctx : "", e->inuse_bytes,
		total > 0 ? (double)e->inuse_bytes / (double)total : 0.0, e->alloc_objs);
	ps_csv_str(f, e->st && e->st->comm ? e->st->comm : "");
	fputs(",\"", f);
	for (uint32_t k = 0; e->st && k < e->st->nframes; k++) {
		frame_text(&e->st->frames[k], fr, sizeof(fr));
		for (char *p = fr; *p; p++)
			if (*p == '"' || *p == ';')
				*p = '_';
		fprintf(f, "%s%s", k ? ";" : "", fr);
	}
	fprintf(f, "\"\n");
}

static void print_entry_json(FILE *f, const struct ps_stack_share *e, int64_t total, bool first)
{
	char lb[256], fr[320];

	fprintf(f, "%s{\"tag\":", first ? "" : ",");
	ps_json_str(f, ps_tag_label(&e->ts->tag, lb, sizeof(lb)));
	fprintf(f, ",\"tag_id\":%" PRId64 ",\"ctx\":", e->ts->tag.id);
	ps_json_str(f, e->ts->tag.ctx);
	fprintf(f, ",\"live_bytes\":%" PRId64 ",\"share\":%.4f,\"allocs\":%" PRId64 ",\"comm\":",
		e->inuse_bytes, total > 0 ? (double)e->inuse_bytes / (double)total : 0.0,
		e->alloc_objs);
	ps_json_str(f, e->st ? e->st->comm : NULL);
	fputs(",\"frames\":", f);
	if (!e->st) {
		fputs("null}", f);
		return;
	}
	fputc('[', f);
	for (uint32_t k = 0; k < e->st->nframes; k++) {
		frame_text(&e->st->frames[k], fr, sizeof(fr));
		if (k)
			fputc(',', f);
		ps_json_str(f, fr);
	}
	fputs("]}", f);
}

int ps_print_stacks(FILE *f, const struct ps_report *rep, const char *glob, size_t top,
		    enum ps_fmt fmt)
{
	struct ps_stack_share *e = NULL;
	size_t ne = 0, *idx = NULL, ntags = 0, shown = 0, printed = 0;
	const struct ps_tag_series *cur = NULL;
	int64_t total = 0;
	char lb[256], b[32];
	int rc;

	rc = ps_stack_shares(rep, &e, &ne);
	if (rc)
		return rc;
	idx = malloc((ne ? ne : 1) * sizeof(*idx));
	if (!idx) {
		free(e);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ne; i++)
		idx[i] = i;
	sort_base = e;
	qsort(idx, ne, sizeof(*idx), by_bytes);
	if (fmt == PS_FMT_CSV)
		fprintf(f, "tag,tag_id,ctx,live_bytes,share,allocs,comm,frames\n");
	else if (fmt == PS_FMT_JSON)
		fprintf(f, "{\"schema\":\"poolscope.stacks/1\",\"stacks\":[");
	for (size_t j = 0; j < ne; j++) {
		const struct ps_stack_share *x = &e[idx[j]];

		if (fnmatch(glob, ps_tag_label(&x->ts->tag, lb, sizeof(lb)), 0))
			continue;
		if (x->ts != cur) {
			cur = x->ts;
			ntags++;
			shown = 0;
			total = 0;
			for (size_t i = j; i < ne && e[idx[i]].ts == cur; i++)
				total += e[idx[i]].inuse_bytes;
			if (fmt == PS_FMT_TEXT || fmt == PS_FMT_MD) {
				size_t nst = 0;

				for (size_t i = j; i < ne && e[idx[i]].ts == cur; i++)
					nst += e[idx[i]].st != NULL;
				ps_fmt_bytes(b, sizeof(b), (double)total, false);
				fprintf(f, "%sSTACKS of %s (%s%s%s)\n  %s live at the window's end, "
					"%zu sampled stack%s\n", ntags > 1 ? "\n" : "", lb,
					cur->tag.kind, cur->tag.ctx ? ", " : "",
					cur->tag.ctx ? cur->tag.ctx : "", b, nst, nst == 1 ? "" : "s");
			}
		}
		if (top && shown >= top)
			continue;
		if (x->inuse_bytes <= 0 && x->alloc_objs <= 0)
			continue;
		if (fmt == PS_FMT_CSV)
			print_entry_csv(f, x, total);
		else if (fmt == PS_FMT_JSON)
			print_entry_json(f, x, total, !printed);
		else
			print_entry_text(f, x, total);
		shown++;
		printed++;
	}
	if (fmt == PS_FMT_JSON)
		fprintf(f, "]}\n");
	free(idx);
	free(e);
	if (ntags)
		return 0;
	/* a label that exists but has nothing to show is not one that does not exist */
	for (size_t i = 0; i < rep->nrows; i++)
		if (!fnmatch(glob, ps_tag_label(&rep->rows[i].ts->tag, lb, sizeof(lb)), 0))
			return -ENODATA;
	return -ENOENT;
}
