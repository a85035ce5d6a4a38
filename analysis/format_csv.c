// SPDX-License-Identifier: GPL-2.0
/* The report and the paths as CSV, a header line first. */
#include <inttypes.h>

#include "analysis/format.h"
#include "analysis/caches.h"

void ps_csv_str(FILE *f, const char *s)
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
		"leak_score,allocs,frees,reclaimable,class,evidence,confidence,domain,"
		"adjusted_growth_bytes,tag_id,ctx,comm,flags,sampled,slab_backing,late_ratio,"
		"untraced_bytes,exact_counters,lifetime_s,split,site_src,growth_stderr_bytes\n");
	for (size_t i = 0; i < n; i++) {
		const struct ps_report_row *w = &rep->rows[i];
		const struct ps_tag *t = &w->ts->tag;

		ps_csv_str(f, ps_tag_label(&w->ts->tag, lb, sizeof(lb)));
		fprintf(f, ",%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%.3f,%.4f,%.4f,%.4f,%"
			PRIu64 ",%" PRIu64 ",%d,%s,", w->ts->tag.kind, w->g.start, w->g.end,
			w->g.growth, w->g.rate, w->g.r2, w->g.grew_share, w->g.score,
			w->g.allocs, w->g.frees, w->reclaimable, w->a.cls);
		ps_csv_str(f, w->a.evidence);
		fprintf(f, ",%.2f,%s,%" PRId64 ",%" PRId64 ",%s,", w->a.confidence, w->domain,
			w->adj_growth, t->id, t->ctx ? t->ctx : "");
		ps_csv_str(f, t->comm);
		fprintf(f, ",%" PRIu32 ",%d,%d,%.4f,%" PRId64 ",%d,%u,", t->flags,
			!!(t->flags & PS_TAG_F_SAMPLED), !!(t->flags & PS_TAG_F_SLAB_BACKING),
			w->g.late_ratio, w->untraced, w->exact_shape, w->lifetime);
		ps_csv_str(f, w->a.split);
		fputc(',', f);
		ps_csv_str(f, t->site_src ? ps_src_str(t->site_src, lb, sizeof(lb)) : NULL);
		fprintf(f, ",%.0f\n", ps_row_stderr(rep, w));
	}
}

void ps_format_paths_csv(FILE *f, const struct ps_verdict *v)
{
	fprintf(f, "path,state,growth_bytes,peak_bytes,rate_bps,late_rate_bps,p_value,confirmed_by\n");
	for (size_t k = 0; k < v->npaths; k++) {
		const struct ps_vpath *p = &v->paths[k];

		fprintf(f, "%s,%s,%" PRId64 ",%" PRId64 ",%.3f,%.3f,%.6f,%s\n", p->name,
			ps_vstate_name(p->st.state), p->st.growth, p->st.peak, p->st.rate,
			p->st.late_rate, p->st.p, p->confirmed_by ? p->confirmed_by : "");
	}
}
