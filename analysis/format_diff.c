// SPDX-License-Identifier: GPL-2.0
/*
 * diff's output (poolscope diff A B): the answer, each run's verdict, the tags growing in B and
 * not in A with the unit of their growth (per IO or per second) in the header, and the paths
 * of both runs side by side; as text (80 columns), csv, json (poolscope.diff/1) or markdown.
 */
#include <inttypes.h>
#include <string.h>

#include "analysis/diff.h"
#include "analysis/format.h"
#include "userspace/lib/util/util.h"

/*
 * Normalised growth: per IO it is often a fraction of a byte (300 KB over a million IOs), which
 * the byte formatter would round to "+0 B".
 */
static void fmt_norm(char *buf, size_t len, double v)
{
	if (v != 0 && v > -10 && v < 10)
		snprintf(buf, len, "%+.2f B", v);
	else
		ps_fmt_bytes(buf, len, v, true);
}

/* The answer first: leaking in B only, in both, in neither (or only in A), and where. */
static void sentence(char *buf, size_t len, const struct ps_verdict *a, const struct ps_verdict *b)
{
	bool la = a->st.state == PS_V_LEAK, lb = b->st.state == PS_V_LEAK;

	if (lb && !la)
		snprintf(buf, len, "LEAK in B only, on the %s path: kernel memory it cannot reclaim "
			 "grows in B and not in A.", b->path ? b->path : "(no one)");
	else if (la && lb)
		snprintf(buf, len, "LEAK in both runs: A on the %s path, B on the %s path.",
			 a->path ? a->path : "(no one)", b->path ? b->path : "(no one)");
	else if (la)
		snprintf(buf, len, "LEAK in A only, on the %s path; B does not leak.",
			 a->path ? a->path : "(no one)");
	else
		snprintf(buf, len, "No leak in either run: A %s, B %s.",
			 ps_vstate_name(a->st.state), ps_vstate_name(b->st.state));
}

static const struct ps_vpath *find_path(const struct ps_verdict *v, const char *name)
{
	for (size_t i = 0; i < v->npaths; i++)
		if (!strcmp(v->paths[i].name, name))
			return &v->paths[i];
	return NULL;
}

/* The paths of both runs: B's in its order, then those only A has. */
static size_t path_union(const struct ps_verdict *a, const struct ps_verdict *b,
			 const char **names)
{
	size_t n = 0;

	for (size_t i = 0; i < b->npaths; i++)
		names[n++] = b->paths[i].name;
	for (size_t i = 0; i < a->npaths; i++)
		if (!find_path(b, a->paths[i].name))
			names[n++] = a->paths[i].name;
	return n;
}

static void text_side(FILE *f, const struct ps_vpath *p)
{
	char g[32], r[32];

	if (!p) {
		fprintf(f, "%-8s %9s %10s", "-", "-", "-");
		return;
	}
	ps_fmt_bytes(g, sizeof(g), (double)p->st.growth, true);
	ps_fmt_bytes(r, sizeof(r), p->st.rate, true);
	fprintf(f, "%-8s %9.9s %10.10s", ps_vstate_name(p->st.state), g, r);
}

static void print_text(FILE *f, const struct ps_diff *d, const struct ps_verdict *va,
		       const struct ps_verdict *vb, const char *na, const char *nb, size_t top,
		       bool md)
{
	const char *unit = d->per_io ? "/IO" : "/s", *names[2 * PS_V_PATHS_MAX];
	char line[1024], lb[256], s1[32], s2[32];
	size_t shown, np, unconfirmed = 0;

	sentence(line, sizeof(line), va, vb);
	ps_print_wrapped(f, line, 0);
	snprintf(line, sizeof(line), "  A %s: %s", na, va->summary);
	ps_print_wrapped(f, line, 2);
	snprintf(line, sizeof(line), "  B %s: %s", nb, vb->summary);
	ps_print_wrapped(f, line, 2);
	fprintf(f, "\n%sgrowth %s (bytes per %s), A %s, B %s\n", md ? "## " : "",
		d->per_io ? "per IO" : "per second", d->per_io ? "IO" : "second", na, nb);
	if (md)
		fprintf(f, "\n| tag (growing in B, not in A) | A %s | B %s | class |\n|---|---|---|---|\n",
			unit, unit);
	else
		fprintf(f, "%-32s %9s %9s %s\n", "TAG (growing in B, not in A)",
			d->per_io ? "A /IO" : "A /s", d->per_io ? "B /IO" : "B /s", "CLASS");
	/* --top 0 lists every tag, as in report */
	for (shown = 0; shown < d->nrows && (!top || shown < top); shown++) {
		const struct ps_diff_row *dr = &d->rows[shown];
		const struct ps_report_row *w = dr->row;

		ps_tag_label(&w->ts->tag, lb, sizeof(lb));
		fmt_norm(s1, sizeof(s1), dr->a);
		fmt_norm(s2, sizeof(s2), dr->b);
		if (md) {
			fprintf(f, "| %s | %s | %s | %s%s |\n", lb, s1, s2, w->a.cls,
				w->slab.unconfirmed ? " ?" : "");
		} else {
			lb[32] = '\0';
			fprintf(f, "%-32s %9.9s %9.9s %.24s%s\n", lb, s1, s2, w->a.cls,
				w->slab.unconfirmed ? " ?" : "");
		}
		unconfirmed += w->slab.unconfirmed;
	}
	if (!shown)
		fprintf(f, "(none)\n");
	if (unconfirmed)
		fprintf(f, "%s? /proc/slabinfo grew less: frees on untraced paths taken out of B\n",
			md ? "\n" : "");
	np = path_union(va, vb, names);
	if (md) {
		fprintf(f, "\n## kernel memory by path (rates per second)\n\n"
			"| path | A state | A growth | A rate/s | B state | B growth | B rate/s |\n"
			"|---|---|---|---|---|---|---|\n");
		for (size_t i = 0; i < np; i++) {
			const struct ps_vpath *p[2] = { find_path(va, names[i]),
							find_path(vb, names[i]) };

			fprintf(f, "| %s", names[i]);
			for (int j = 0; j < 2; j++) {
				if (!p[j]) {
					fprintf(f, " | - | - | -");
					continue;
				}
				ps_fmt_bytes(s1, sizeof(s1), (double)p[j]->st.growth, true);
				ps_fmt_bytes(s2, sizeof(s2), p[j]->st.rate, true);
				fprintf(f, " | %s | %s | %s", ps_vstate_name(p[j]->st.state), s1, s2);
			}
			fprintf(f, " |\n");
		}
		return;
	}
	snprintf(line, sizeof(line), "%-14.14s %-29.29s | %s", "", na, nb);
	fprintf(f, "\nKERNEL MEMORY BY PATH (A | B)\n%.79s\n", line);
	fprintf(f, "%-14s %-8s %9s %10s | %-8s %9s %10s\n", "PATH", "STATE", "GROWTH", "RATE/s",
		"STATE", "GROWTH", "RATE/s");
	for (size_t i = 0; i < np; i++) {
		fprintf(f, "%-14.14s ", names[i]);
		text_side(f, find_path(va, names[i]));
		fprintf(f, " | ");
		text_side(f, find_path(vb, names[i]));
		fputc('\n', f);
	}
}

static void print_csv(FILE *f, const struct ps_diff *d, const struct ps_verdict *va,
		      const struct ps_verdict *vb, size_t top)
{
	const char *names[2 * PS_V_PATHS_MAX];
	char lb[256];
	size_t np;

	fprintf(f, "section,name,tag_id,kind,ctx,class,a,b,unit,a_state,b_state,unconfirmed\n");
	for (size_t i = 0; i < d->nrows && (!top || i < top); i++) {
		const struct ps_report_row *w = d->rows[i].row;
		const struct ps_tag *t = &w->ts->tag;

		fprintf(f, "tag,");
		ps_csv_str(f, ps_tag_label(t, lb, sizeof(lb)));
		fprintf(f, ",%" PRId64 ",%s,%s,%s,%.4f,%.4f,%s,,,%d\n", t->id, t->kind,
			t->ctx ? t->ctx : "", w->a.cls, d->rows[i].a, d->rows[i].b,
			d->per_io ? "bytes/IO" : "bytes/s", w->slab.unconfirmed);
	}
	np = path_union(va, vb, names);
	for (size_t i = 0; i < np; i++) {
		const struct ps_vpath *pa = find_path(va, names[i]), *pb = find_path(vb, names[i]);

		fprintf(f, "path,%s,,,,%s,", names[i], names[i]);
		if (pa)
			fprintf(f, "%.3f", pa->st.rate);
		fputc(',', f);
		if (pb)
			fprintf(f, "%.3f", pb->st.rate);
		fprintf(f, ",bytes/s,%s,%s,\n", pa ? ps_vstate_name(pa->st.state) : "",
			pb ? ps_vstate_name(pb->st.state) : "");
	}
}

static void json_run(FILE *f, const char *name, const struct ps_verdict *v)
{
	fprintf(f, "{\"trace\":");
	ps_json_str(f, name);
	fprintf(f, ",\"state\":\"%s\",\"path\":", ps_vstate_name(v->st.state));
	ps_json_str(f, v->st.state >= PS_V_PLATEAU ? v->path : NULL);
	fprintf(f, ",\"growth_bytes\":%" PRId64 ",\"rate_bps\":%.3f,\"iops\":%.1f,\"summary\":",
		v->st.growth, v->st.rate, v->iops);
	ps_json_str(f, v->summary);
	fputc('}', f);
}

static void json_side(FILE *f, const struct ps_vpath *p)
{
	if (!p) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"state\":\"%s\",\"growth_bytes\":%" PRId64 ",\"rate_bps\":%.3f,"
		"\"p_value\":%.6f}", ps_vstate_name(p->st.state), p->st.growth, p->st.rate,
		p->st.p);
}

static void print_json(FILE *f, const struct ps_diff *d, const struct ps_verdict *va,
		       const struct ps_verdict *vb, const char *na, const char *nb, size_t top)
{
	const char *names[2 * PS_V_PATHS_MAX];
	char line[512], lb[256];
	size_t np;

	sentence(line, sizeof(line), va, vb);
	fprintf(f, "{\"schema\":\"poolscope.diff/1\",\"summary\":");
	ps_json_str(f, line);
	fprintf(f, ",\"a\":");
	json_run(f, na, va);
	fprintf(f, ",\"b\":");
	json_run(f, nb, vb);
	fprintf(f, ",\"unit\":\"%s\",\"tags\":[", d->per_io ? "bytes/IO" : "bytes/s");
	for (size_t i = 0; i < d->nrows && (!top || i < top); i++) {
		const struct ps_report_row *w = d->rows[i].row;
		const struct ps_tag *t = &w->ts->tag;

		fprintf(f, "%s{\"tag\":", i ? "," : "");
		ps_json_str(f, ps_tag_label(t, lb, sizeof(lb)));
		fprintf(f, ",\"tag_id\":%" PRId64 ",\"kind\":\"%s\",\"ctx\":", t->id, t->kind);
		ps_json_str(f, t->ctx);
		fprintf(f, ",\"class\":");
		ps_json_str(f, w->a.cls);
		fprintf(f, ",\"a\":%.4f,\"b\":%.4f,\"unconfirmed\":%s}", d->rows[i].a, d->rows[i].b,
			w->slab.unconfirmed ? "true" : "false");
	}
	fprintf(f, "],\"paths\":[");
	np = path_union(va, vb, names);
	for (size_t i = 0; i < np; i++) {
		fprintf(f, "%s{\"path\":", i ? "," : "");
		ps_json_str(f, names[i]);
		fprintf(f, ",\"a\":");
		json_side(f, find_path(va, names[i]));
		fprintf(f, ",\"b\":");
		json_side(f, find_path(vb, names[i]));
		fputc('}', f);
	}
	fprintf(f, "]}\n");
}

void ps_diff_print(FILE *f, const struct ps_diff *d, const struct ps_verdict *va,
		   const struct ps_verdict *vb, const char *na, const char *nb, size_t top,
		   enum ps_fmt fmt)
{
	if (fmt == PS_FMT_CSV)
		print_csv(f, d, va, vb, top);
	else if (fmt == PS_FMT_JSON)
		print_json(f, d, va, vb, na, nb, top);
	else
		print_text(f, d, va, vb, na, nb, top, fmt == PS_FMT_MD);
}
