// SPDX-License-Identifier: GPL-2.0
/*
 * The report as JSON (poolscope.report/1) and the paths as JSON (poolscope.paths/1), one line
 * each; docs/analysis.md describes the fields.
 */
#include <inttypes.h>

#include "analysis/format.h"

static void json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* ,"key":"value" */
static void json_field(FILE *f, const char *key, const char *s)
{
	fprintf(f, ",\"%s\":", key);
	json_str(f, s);
}

static void json_slabinfo(FILE *f, const struct ps_slab_check *s)
{
	if (!s->cache) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"cache\":");
	json_str(f, s->cache);
	fprintf(f, ",\"growth_bytes\":%" PRId64 ",\"tracked_growth_bytes\":%" PRId64
		",\"confirmed_share\":%.4f,\"unconfirmed\":%s}", s->slab_growth, s->tracked_growth,
		s->confirm, s->unconfirmed ? "true" : "false");
}

static void json_row(FILE *f, const struct ps_report_row *w)
{
	const struct ps_tag *t = &w->ts->tag;
	char lb[256];

	fprintf(f, "{\"tag\":");
	json_str(f, ps_tag_label(t, lb, sizeof(lb)));
	json_field(f, "kind", t->kind);
	json_field(f, "cache", t->cache);
	json_field(f, "site_sym", t->site_sym);
	json_field(f, "module", t->site_module);
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
	json_str(f, w->a.cls);
	json_field(f, "evidence", w->a.evidence);
	fprintf(f, ",\"confidence\":%.2f,\"split\":", w->a.confidence);
	json_str(f, w->a.split[0] ? w->a.split : NULL);
	fprintf(f, ",\"slabinfo\":");
	json_slabinfo(f, &w->slab);
	fputc('}', f);
}

void ps_format_json(FILE *f, const struct ps_report *rep, size_t n)
{
	const struct ps_run *r = rep->run;

	fprintf(f, "{\"schema\":\"poolscope.report/1\",\"trace\":");
	json_str(f, r->path);
	json_field(f, "os", ps_run_meta(r, PS_META_OS));
	fprintf(f, ",\"window\":{\"from_interval\":%u,\"to_interval\":%u,\"seconds\":%.3f},",
		rep->from, rep->to, rep->secs);
	fprintf(f, "\"totals\":{\"tracked_growth\":%" PRId64 ",\"reclaimable_growth\":%" PRId64
		",\"system_counter\":\"%s\",\"system_start\":%" PRId64 ",\"system_end\":%" PRId64
		",\"drops\":%" PRId64 "},\"tags\":[", rep->tracked_growth, rep->reclaimable_growth,
		rep->sys_name, rep->sys_start, rep->sys_end, rep->drops);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		json_row(f, &rep->rows[i]);
	}
	fprintf(f, "]}\n");
}

void ps_format_paths_json(FILE *f, const struct ps_paths *p)
{
	fprintf(f, "{\"schema\":\"poolscope.paths/1\",\"paths\":[");
	for (size_t k = 0; k < p->n; k++) {
		const struct ps_growth *g = &p->rows[k].g;

		fprintf(f, "%s{\"path\":", k ? "," : "");
		json_str(f, p->rows[k].name);
		fprintf(f, ",\"start_bytes\":%" PRId64 ",\"end_bytes\":%" PRId64
			",\"growth_bytes\":%" PRId64 ",\"rate_bps\":%.3f,\"r2\":%.4f,"
			"\"leak_score\":%.4f}", g->start, g->end, g->growth, g->rate, g->r2, g->score);
	}
	fprintf(f, "]}\n");
}
