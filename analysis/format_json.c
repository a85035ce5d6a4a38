// SPDX-License-Identifier: GPL-2.0
/*
 * The report as JSON (poolscope.report/2) and the paths as JSON (poolscope.paths/2), one line
 * each; docs/analysis.md describes the fields.
 */
#include <inttypes.h>
#include <string.h>

#include "analysis/format.h"
#include "analysis/caches.h"
#include "userspace/lib/util/util.h"

/* ,"key":"value" */
static void json_field(FILE *f, const char *key, const char *s)
{
	fprintf(f, ",\"%s\":", key);
	ps_json_str(f, s);
}

/* {"file","line","func","caller","call_file","call_line"} or null */
static void json_src(FILE *f, const struct ps_src *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"file\":");
	ps_json_str(f, s->file);
	fprintf(f, ",\"line\":%u", s->line);
	json_field(f, "func", s->func);
	json_field(f, "caller", s->caller);
	json_field(f, "call_file", s->call_file);
	fprintf(f, ",\"call_line\":%u}", s->call_line);
}

static void json_slabinfo(FILE *f, const struct ps_slab_check *s)
{
	if (!s->cache) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"cache\":");
	ps_json_str(f, s->cache);
	fprintf(f, ",\"growth_bytes\":%" PRId64 ",\"tracked_growth_bytes\":%" PRId64
		",\"confirmed_share\":%.4f,\"unconfirmed\":%s}", s->slab_growth, s->tracked_growth,
		s->confirm, s->unconfirmed ? "true" : "false");
}

static void json_row(FILE *f, const struct ps_report *rep, const struct ps_report_row *w)
{
	const struct ps_tag *t = &w->ts->tag;
	char lb[256];

	fprintf(f, "{\"tag\":");
	ps_json_str(f, ps_tag_label(t, lb, sizeof(lb)));
	fprintf(f, ",\"tag_id\":%" PRId64, t->id);
	json_field(f, "kind", t->kind);
	json_field(f, "ctx", t->ctx);
	json_field(f, "comm", t->comm);
	fprintf(f, ",\"flags\":%" PRIu32 ",\"sampled\":%s", t->flags,
		t->flags & PS_TAG_F_SAMPLED ? "true" : "false");
	json_field(f, "cache", t->cache);
	json_field(f, "site_sym", t->site_sym);
	json_field(f, "module", t->site_module);
	fprintf(f, ",\"site_src\":");
	json_src(f, t->site_src);
	json_field(f, "pool", t->pool);
	json_field(f, "owner", t->owner);
	fprintf(f, ",\"start_bytes\":%" PRId64 ",\"end_bytes\":%" PRId64
		",\"growth_bytes\":%" PRId64 ",\"rate_bps\":%.3f,\"r2\":%.4f,"
		"\"grew_share\":%.4f,\"late_ratio\":%.4f,\"leak_score\":%.4f,"
		"\"allocs\":%" PRIu64 ",\"frees\":%" PRIu64 ",\"reclaimable\":%s,"
		"\"slab_backing\":%s,\"class\":", w->g.start, w->g.end, w->g.growth,
		w->g.rate, w->g.r2, w->g.grew_share, w->g.late_ratio, w->g.score,
		w->g.allocs, w->g.frees, w->reclaimable ? "true" : "false",
		t->flags & PS_TAG_F_SLAB_BACKING ? "true" : "false");
	ps_json_str(f, w->a.cls);
	json_field(f, "evidence", w->a.evidence);
	fprintf(f, ",\"confidence\":%.2f,\"split\":", w->a.confidence);
	ps_json_str(f, w->a.split[0] ? w->a.split : NULL);
	fprintf(f, ",\"slabinfo\":");
	json_slabinfo(f, &w->slab);
	json_field(f, "domain", w->domain);
	fprintf(f, ",\"adjusted_growth_bytes\":%" PRId64 ",\"untraced_bytes\":%" PRId64
		",\"exact_counters\":%s,\"lifetime_s\":%u,\"growth_stderr_bytes\":%.0f", w->adj_growth,
		w->untraced, w->exact_shape ? "true" : "false", w->lifetime, ps_row_stderr(rep, w));
	fputc('}', f);
}

static void json_vstat(FILE *f, const struct ps_vstat *st)
{
	fprintf(f, "\"state\":\"%s\",\"growth_bytes\":%" PRId64 ",\"peak_bytes\":%" PRId64
		",\"drawdown_bytes\":%" PRId64 ",\"rate_bps\":%.3f,\"late_rate_bps\":%.3f,"
		"\"p_value\":%.6f,\"p_signs\":%.6f,\"why\":", ps_vstate_name(st->state), st->growth,
		st->peak, st->drawdown, st->rate, st->late_rate, st->p, st->p_signs);
	ps_json_str(f, st->why);
}

static void json_paths(FILE *f, const struct ps_verdict *v)
{
	char lb[256];

	fputs("\"paths\":[", f);
	for (size_t k = 0; k < v->npaths; k++) {
		const struct ps_vpath *p = &v->paths[k];

		fprintf(f, "%s{\"path\":", k ? "," : "");
		ps_json_str(f, p->name);
		fputc(',', f);
		json_vstat(f, &p->st);
		json_field(f, "confirmed_by", p->confirmed_by);
		fputs(",\"tag\":", f);
		ps_json_str(f, p->top ? ps_tag_label(&p->top->ts->tag, lb, sizeof(lb)) : NULL);
		fputc('}', f);
	}
	fputc(']', f);
}

static void json_verdict(FILE *f, const struct ps_verdict *v)
{
	char lb[256];
	/* the leak's class: its first suspect's, which names the sub-path when there is one */
	const char *path = v->tag && v->path && !strncmp(v->tag->a.cls, v->path, strlen(v->path)) ?
			   v->tag->a.cls : v->path;

	fputs("\"verdict\":{", f);
	json_vstat(f, &v->st);
	json_field(f, "domain", v->domain ? v->domain : "all");
	json_field(f, "path", v->st.state >= PS_V_PLATEAU ? path : NULL);
	fputs(",\"tag\":", f);
	ps_json_str(f, v->tag && v->st.state >= PS_V_PLATEAU ?
		    ps_tag_label(&v->tag->ts->tag, lb, sizeof(lb)) : NULL);
	fprintf(f, ",\"tag_share\":%.4f", v->tag_share);
	json_field(f, "confirmed_by", v->confirmed_by);
	fprintf(f, ",\"confirm_growth_bytes\":%" PRId64 ",\"min_rate_bps\":%.1f,\"iops\":%.1f,"
		"\"bytes_per_io\":", v->confirm_growth, v->min_rate, v->iops);
	if (v->iops > 0)
		fprintf(f, "%.3f", ps_verdict_per_io(v));
	else
		fputs("null", f);
	fprintf(f, ",\"untraced_removed_bytes\":%" PRId64 ",\"bounded_left_out_bytes\":%" PRId64,
		v->untraced_removed, v->bounded_left_out);
	json_field(f, "summary", v->summary);
	fputc('}', f);
}

void ps_format_json(FILE *f, const struct ps_report *rep, const struct ps_verdict *v, size_t n)
{
	const struct ps_run *r = rep->run;

	fprintf(f, "{\"schema\":\"poolscope.report/2\",\"trace\":");
	ps_json_str(f, r->path);
	json_field(f, "os", ps_run_meta(r, PS_META_OS));
	json_field(f, "filter", rep->view_note);
	fprintf(f, ",\"window\":{\"from_interval\":%u,\"to_interval\":%u,\"seconds\":%.3f,"
		"\"intervals_per_point\":%u,\"trace_intervals\":%u},",
		rep->from, rep->to, rep->secs, r->per_point, r->src_intervals);
	json_verdict(f, v);
	fputc(',', f);
	json_paths(f, v);
	fprintf(f, ",\"totals\":{\"tracked_growth\":%" PRId64 ",\"reclaimable_growth\":%" PRId64
		",\"system_counter\":\"%s\",\"system_start\":%" PRId64 ",\"system_end\":%" PRId64
		",\"drops\":%" PRId64, rep->tracked_growth, rep->reclaimable_growth,
		rep->sys_name, rep->sys_start, rep->sys_end, rep->drops);
	if (rep->snapshots)
		fprintf(f, ",\"snapshots\":%u,\"tags_listed_late\":%u", rep->snapshots,
			rep->listed_late);
	fprintf(f, "},\"tags\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		json_row(f, rep, &rep->rows[i]);
	}
	fprintf(f, "]}\n");
}

void ps_format_paths_json(FILE *f, const struct ps_verdict *v)
{
	fprintf(f, "{\"schema\":\"poolscope.paths/2\",\"domain\":");
	ps_json_str(f, v->domain ? v->domain : "all");
	fputc(',', f);
	json_paths(f, v);
	fprintf(f, "}\n");
}
