// SPDX-License-Identifier: GPL-2.0
/* report's sort order and filters (view.h). */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/view.h"

int ps_sort_parse(const char *s, enum ps_sort *out)
{
	static const char *const names[] = { "rank", "growth", "rate", "live", "allocs" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i])) {
			*out = (enum ps_sort)i;
			return 0;
		}
	return -EINVAL;
}

/* cls is path or under it: "network" holds "network/smb-transport", not "networkfoo". */
static bool under(const char *cls, const char *path)
{
	size_t n = strlen(path);

	return !strncmp(cls, path, n) && (cls[n] == '\0' || cls[n] == '/');
}

static bool comm_match(const struct ps_run *r, const struct ps_tag_series *ts, const char *glob)
{
	if (ts->tag.comm)
		return !fnmatch(glob, ts->tag.comm, 0);
	/* tags not split by task: any sampled stack of the tag taken in such a task */
	for (size_t i = 0; i < r->nstacks; i++)
		if (r->stacks[i].tag_id == ts->tag.id && r->stacks[i].comm &&
		    !fnmatch(glob, r->stacks[i].comm, 0))
			return true;
	return false;
}

bool ps_view_match(const struct ps_report *rep, const struct ps_report_row *w,
		   const struct ps_view_opts *o)
{
	char lb[256];

	if (o->kind && strcmp(w->ts->tag.kind, o->kind))
		return false;
	if (o->path && !under(w->a.cls, o->path))
		return false;
	if (o->tag && fnmatch(o->tag, ps_tag_label(&w->ts->tag, lb, sizeof(lb)), 0))
		return false;
	return !o->comm || comm_match(rep->run, w->ts, o->comm);
}

static enum ps_sort sort_key;

static double key(const struct ps_report_row *w)
{
	switch (sort_key) {
	case PS_SORT_GROWTH:
		return (double)w->adj_growth;
	case PS_SORT_RATE:
		return ps_row_rate(w);	/* the RATE/s the report shows */
	case PS_SORT_LIVE:
		return (double)w->g.end;
	case PS_SORT_ALLOCS:
		return (double)w->g.allocs;
	default:
		return 0;
	}
}

/* Largest first; ties in the report's order. */
static int by_key(const void *a, const void *b)
{
	const struct ps_report_row *x = *(const struct ps_report_row *const *)a;
	const struct ps_report_row *y = *(const struct ps_report_row *const *)b;
	bool bx = x->ts->tag.flags & PS_TAG_F_SLAB_BACKING, by = y->ts->tag.flags & PS_TAG_F_SLAB_BACKING;
	double kx = key(x), ky = key(y);

	/* pages under slabs are the slabs' bytes counted again: last, whatever the key */
	if (bx != by)
		return bx ? 1 : -1;
	if (kx != ky)
		return kx > ky ? -1 : 1;
	return x < y ? -1 : x > y;	/* the report's order: rows are one array */
}

int ps_view_build(struct ps_report *out, const struct ps_report *rep,
		  const struct ps_view_opts *o)
{
	const struct ps_report_row **p = calloc(rep->nrows + 1, sizeof(*p));
	struct ps_report_row *rows = calloc(rep->nrows + 1, sizeof(*rows));
	size_t n = 0;
	char *note = NULL;

	if (!p || !rows) {
		free(p);
		free(rows);
		return -ENOMEM;
	}
	for (size_t i = 0; i < rep->nrows; i++)
		if (ps_view_match(rep, &rep->rows[i], o))
			p[n++] = &rep->rows[i];
	if (o->sort != PS_SORT_RANK) {
		sort_key = o->sort;
		qsort(p, n, sizeof(*p), by_key);
	}
	for (size_t i = 0; i < n; i++)
		rows[i] = *p[i];
	free(p);
	if (o->kind || o->path || o->tag || o->comm) {
		size_t len = 64 + (o->kind ? strlen(o->kind) : 0) + (o->path ? strlen(o->path) : 0) +
			     (o->tag ? strlen(o->tag) : 0) + (o->comm ? strlen(o->comm) : 0) + 64;

		note = malloc(len);
		if (!note) {
			free(rows);
			return -ENOMEM;
		}
		snprintf(note, len, "%s%s%s%s%s%s%s%s%s%s%s: %zu of %zu tags", o->kind ? "--kind " : "",
			 o->kind ? o->kind : "", o->path ? (o->kind ? " --path " : "--path ") : "",
			 o->path ? o->path : "",
			 o->tag ? (o->kind || o->path ? " --tag '" : "--tag '") : "",
			 o->tag ? o->tag : "", o->tag ? "'" : "",
			 o->comm ? (o->kind || o->path || o->tag ? " --comm '" : "--comm '") : "",
			 o->comm ? o->comm : "", o->comm ? "'" : "", "", n, rep->nrows);
	}
	*out = *rep;
	out->rows = rows;
	out->nrows = n;
	out->view_note = note;
	return 0;
}

void ps_view_free(struct ps_report *view)
{
	free(view->rows);
	free(view->view_note);
	view->rows = NULL;
	view->view_note = NULL;
}
