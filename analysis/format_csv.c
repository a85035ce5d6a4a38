// SPDX-License-Identifier: GPL-2.0
/* The report and the paths as CSV, a header line first. */
#include <inttypes.h>

#include "analysis/format.h"

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void ps_format_csv(FILE *f, const struct ps_report *rep, size_t n)
{
	char lb[256];

	fprintf(f, "tag,kind,start_bytes,end_bytes,growth_bytes,rate_bps,r2,grew_share,"
		"leak_score,allocs,frees,reclaimable,class,evidence,confidence\n");
	for (size_t i = 0; i < n; i++) {
		const struct ps_report_row *w = &rep->rows[i];

		csv_str(f, ps_tag_label(&w->ts->tag, lb, sizeof(lb)));
		fprintf(f, ",%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%.3f,%.4f,%.4f,%.4f,%"
			PRIu64 ",%" PRIu64 ",%d,%s,", w->ts->tag.kind, w->g.start, w->g.end,
			w->g.growth, w->g.rate, w->g.r2, w->g.grew_share, w->g.score,
			w->g.allocs, w->g.frees, w->reclaimable, w->a.cls);
		csv_str(f, w->a.evidence);
		fprintf(f, ",%.2f\n", w->a.confidence);
	}
}

void ps_format_paths_csv(FILE *f, const struct ps_paths *p)
{
	fprintf(f, "path,start_bytes,end_bytes,growth_bytes,rate_bps,r2,leak_score\n");
	for (size_t k = 0; k < p->n; k++) {
		const struct ps_growth *g = &p->rows[k].g;

		fprintf(f, "%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%.3f,%.4f,%.4f\n",
			p->rows[k].name, g->start, g->end, g->growth, g->rate, g->r2, g->score);
	}
}
