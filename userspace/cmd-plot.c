// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope plot: renders a trace with gnuplot. One trace: the live bytes of the report's top N
 * tags (its ranking, from analysis/) stacked plus "other", or those of each path, the
 * unreclaimable total (SUnreclaim on Linux, NonPagedPool on Windows) as a line and the
 * workload's IOPS on the second axis, the report's verdict in the title. Two traces: both runs
 * on one time axis. The data goes to gnuplot as a tab-separated file in a private temporary
 * directory; the scripts live in plots/ so they can be tuned without rebuilding. gnuplot's own
 * messages are kept in that directory and become one line of ours when it fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "userspace/datafile.h"
#include "userspace/poolscope.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/trace/trace.h"
#include "analysis/analysis.h"
#include "analysis/verdict.h"

#define MiB (1024.0 * 1024.0)
/* Stacked series at most: 20 tags and "other", or the paths and the two other domains. */
#define MAX_SERIES 24

struct plot_opts {
	unsigned top;
	bool by_path;
	const struct ps_rules *rs;
	const char *title;
	const char *term;
	const char *out;
	const char *dir;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: poolscope plot TRACE [TRACE2] -o OUT.png|OUT.svg [OPTIONS]\n"
"\n"
"One trace: stacked live bytes of the top tags plus \"other\", the unreclaimable total\n"
"(SUnreclaim / NonPagedPool) as a line, IOPS on the second axis when the trace has workload\n"
"rows. Two traces (e.g. local.db remote.db): both runs on one time axis.\n"
"\n"
"options:\n"
"  -o, --output FILE   output, .png or .svg (required)\n"
"  -n, --top N         tags to stack, 1..20 (default 8)\n"
"      --by tag|path   stack the top tags (default), or each path of the kernel's\n"
"                      memory (network, file-services, ...) and the other domains\n"
"  -t, --title TEXT    title (default: file name, label and the report's verdict)\n"
"  -r, --rules FILE    attribution rules (default analysis/rules/default.rules)\n"
"  -h, --help          this text\n"
"\n"
"Needs gnuplot (Debian: apt-get install gnuplot-nox). Scripts: plots/ of the build tree,\n"
"share/poolscope/plots of the install, or $POOLSCOPE_PLOTS.\n"
"\n"
"EXAMPLES\n"
"  poolscope plot run.db -o growth.png\n"
"  poolscope plot local.db remote.db -o diff.svg\n");
}

static bool have_gnuplot(void)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX], *dup, *dir, *save = NULL;
	bool ok = false;

	if (!path)
		path = "/usr/bin:/bin";
	dup = strdup(path);
	if (!dup)
		return false;
	for (dir = strtok_r(dup, ":", &save); dir && !ok; dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, sizeof(buf), "%s/gnuplot", dir);
		ok = access(buf, X_OK) == 0;
	}
	free(dup);
	return ok;
}

/* A gnuplot script: $POOLSCOPE_PLOTS/name, plots/ of the build's source tree, or installed. */
static int find_script(const char *name, char *out, size_t len)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "plots/%s", name);
	return ps_datafile("POOLSCOPE_PLOTS", 1, rel, rel, out, len);
}

static void sanitize(char *s)
{
	for (; *s; s++)
		if (*s == '\t' || *s == '\n' || *s == '"' || *s == '\\')
			*s = ' ';
}


/*
 * The line of gnuplot's messages that says what went wrong: the last one naming an error or a
 * file, else the last non-empty one; "" when there are none.
 */
static void gnuplot_reason(const char *log, char *buf, size_t len)
{
	char line[512], *nl;
	FILE *f = fopen(log, "r");

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!line[strspn(line, " \t^")])
			continue;
		/* the caret line and the echo of the script's source say nothing by themselves */
		if (strstr(line, "error") || strstr(line, "cannot") || strstr(line, "undefined") ||
		    !buf[0] || strstr(line, "line "))
			ps_strlcpy(buf, line + strspn(line, " \t"), len);
	}
	fclose(f);
}

static int run_gnuplot(const char *script, const struct plot_opts *o, char *const *vars,
		       int nvars)
{
	char *argv[64], log[PATH_MAX], why[512];
	int argc = 0, st, fd;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/gnuplot.log", o->dir);
	argv[argc++] = "gnuplot";
	for (int i = 0; i < nvars && argc < 60; i++) {
		argv[argc++] = "-e";
		argv[argc++] = vars[i];
	}
	argv[argc++] = (char *)script;
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		/* its warnings and errors go to the log: one line of ours says what failed */
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		execvp("gnuplot", argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		unlink(o->out);
		gnuplot_reason(log, why, sizeof(why));
		fprintf(stderr, "poolscope plot: %s: gnuplot failed (%s %d)%s%s\n", o->out,
			WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
			why[0] ? ": " : "", why);
		unlink(log);
		return -EIO;
	}
	unlink(log);
	return 0;
}

/* k='v' for gnuplot -e: inside single quotes a quote is written twice. */
static char *quote(const char *k, const char *v)
{
	size_t n = strlen(k) + 2 * strlen(v) + 8, o;
	char *s = malloc(n);

	if (!s)
		return NULL;
	o = (size_t)snprintf(s, n, "%s='", k);
	for (; *v; v++) {
		if (*v == '\'')
			s[o++] = '\'';
		s[o++] = *v;
	}
	s[o++] = '\'';
	s[o] = '\0';
	return s;
}

static char *num(const char *k, long v)
{
	char *s = malloc(64);

	if (s)
		snprintf(s, 64, "%s=%ld", k, v);
	return s;
}

static char *fnum(const char *k, double v)
{
	char *s = malloc(64);

	if (s)
		snprintf(s, 64, "%s=%.6f", k, v);
	return s;
}

/* The stacked series: their names and, per report row, which one it adds to (-1: none). */
struct groups {
	size_t n;
	char name[MAX_SERIES][PS_PATH_NAME_MAX + 96];
	int *of;	/* [rep->nrows] */
};

static bool is_windows(const struct ps_run *r)
{
	const char *os = ps_run_meta(r, PS_META_OS);

	return os && !strcmp(os, PS_OS_WINDOWS);
}

/* A row that is drawn at all: pages backing slabs are counted by the slabs already. */
static bool drawn(const struct ps_report_row *w)
{
	return !(w->ts->tag.flags & PS_TAG_F_SLAB_BACKING);
}

/*
 * By tag: the report's top N (ps_report_rank: the plot names the suspects the report ranks
 * first) that ever hold live bytes, then "other" for the rest.
 */
static void group_tags(const struct ps_report *rep, unsigned top, struct groups *g)
{
	size_t nother = 0;

	for (size_t i = 0; i < rep->nrows; i++) {
		const struct ps_tag_series *ts = rep->rows[i].ts;
		bool holds = false;

		g->of[i] = -1;
		if (!drawn(&rep->rows[i]))
			continue;
		for (uint32_t k = 0; k < rep->run->nintervals && !holds; k++)
			holds = ts->s[k].live_bytes > 0;
		if (i < top && holds) {
			ps_tag_label(&ts->tag, g->name[g->n], sizeof(g->name[0]));
			sanitize(g->name[g->n]);
			g->of[i] = (int)g->n++;
		}
	}
	for (size_t i = 0; i < rep->nrows; i++)
		if (g->of[i] < 0 && drawn(&rep->rows[i])) {
			g->of[i] = (int)g->n;
			nother++;
		}
	snprintf(g->name[g->n++], sizeof(g->name[0]), "other (%zu tags)", nother);
}

/*
 * By path: the memory the kernel cannot reclaim by the path its rows are attributed to (the
 * first part of the class: "file-services/filesystem" adds to "file-services"), largest growth
 * first, then the reclaimable and the process memory, each one series: what the verdict reads
 * beside what it does not.
 */
static void group_paths(const struct ps_report *rep, struct groups *g)
{
	int64_t growth[MAX_SERIES] = { 0 };
	int order[MAX_SERIES], remap[MAX_SERIES];
	char names[MAX_SERIES][PS_PATH_NAME_MAX];
	size_t np = 0;

	for (size_t i = 0; i < rep->nrows; i++) {
		const struct ps_report_row *w = &rep->rows[i];
		size_t len = strcspn(w->a.cls, "/"), p;

		g->of[i] = -1;
		if (!drawn(w) || strcmp(w->domain, PS_DOMAIN_KERNEL))
			continue;
		if (len >= sizeof(names[0]))
			len = sizeof(names[0]) - 1;
		for (p = 0; p < np; p++)
			if (strlen(names[p]) == len && !strncmp(names[p], w->a.cls, len))
				break;
		if (p == np) {
			if (np == MAX_SERIES - 2)
				p = np - 1;	/* more paths than rules define: into the last */
			else
				snprintf(names[np++], sizeof(names[0]), "%.*s", (int)len, w->a.cls);
		}
		growth[p] += w->g.growth;
		g->of[i] = (int)p;
	}
	for (size_t p = 0; p < np; p++)
		order[p] = (int)p;
	for (size_t x = 1; x < np; x++)		/* insertion sort by growth, largest first */
		for (size_t y = x; y > 0 && growth[order[y]] > growth[order[y - 1]]; y--) {
			int t = order[y];

			order[y] = order[y - 1];
			order[y - 1] = t;
		}
	for (size_t p = 0; p < np; p++) {
		remap[order[p]] = (int)p;
		snprintf(g->name[p], sizeof(g->name[0]), "path %s (kernel)", names[order[p]]);
	}
	g->n = np;
	snprintf(g->name[g->n++], sizeof(g->name[0]), "%s", is_windows(rep->run) ?
		 "reclaimable (paged pool)" : "reclaimable (page cache, reclaimable slabs)");
	snprintf(g->name[g->n++], sizeof(g->name[0]), "process memory");
	for (size_t i = 0; i < rep->nrows; i++) {
		const struct ps_report_row *w = &rep->rows[i];

		if (g->of[i] >= 0)
			g->of[i] = remap[g->of[i]];
		else if (drawn(w) && !strcmp(w->domain, PS_DOMAIN_RECLAIMABLE))
			g->of[i] = (int)np;
		else if (drawn(w) && !strcmp(w->domain, PS_DOMAIN_USER))
			g->of[i] = (int)np + 1;
	}
}

/*
 * The report's verdict in a few words for a title: "leak on file-services, +42.6 KiB/s";
 * "" when it cannot be had (the window is empty).
 */
static void verdict_words(const struct ps_run *r, const struct ps_rules *rs, char *buf,
			  size_t len)
{
	struct ps_report rep = { 0 };
	struct ps_verdict v;
	uint64_t from = 0, to = UINT64_MAX;
	char rate[32];

	buf[0] = '\0';
	ps_run_workload_span(r, &from, &to);
	if (ps_report_build(&rep, r, rs, from, to) || ps_verdict_build(&v, &rep, PS_DOMAIN_KERNEL))
		goto out;
	ps_fmt_bytes(rate, sizeof(rate), v.st.rate, true);
	if (v.st.state >= PS_V_PLATEAU && v.path)
		snprintf(buf, len, "%s on %s, %s/s", ps_vstate_name(v.st.state), v.path, rate);
	else
		snprintf(buf, len, "%s", ps_vstate_name(v.st.state));
out:
	ps_report_free(&rep);
}

static void default_title(const struct ps_run *r, const char *path, const struct plot_opts *o,
			  char *buf, size_t len)
{
	const char *label = ps_run_meta(r, PS_META_LABEL), *os = ps_run_meta(r, PS_META_OS);
	const char *slash = strrchr(path, '/');
	char vw[160];

	verdict_words(r, o->rs, vw, sizeof(vw));
	snprintf(buf, len, "%s%s%s%s - kernel memory by %s%s%s%s", slash ? slash + 1 : path,
		 label ? " (" : "", label ? label : "", label ? ")" : "",
		 o->by_path ? "path" : "tag", os && !strcmp(os, PS_OS_WINDOWS) ? " (Windows pool)" : "",
		 vw[0] ? " - verdict: " : "", vw);
	sanitize(buf);
}

static int plot_one(const struct ps_run *r, const char *path, const struct plot_opts *o)
{
	const char *uname = NULL;
	const struct ps_series *u = ps_unreclaimable(r, &uname);
	bool abs_live = ps_run_live_absolute(r);
	struct ps_report rep = { 0 };
	struct groups *g = NULL;
	char data[PATH_MAX], script[PATH_MAX], ttl[512], ulabel[96], *vars[15] = { 0 };
	double peak = 0, low = 0, div, v[MAX_SERIES], imax = 0;
	size_t i, nv = 0;
	uint32_t k;
	int ret = 0, ucol = 0, icol = 0, bcol = 0, ncol;
	FILE *f = NULL;

	if (!r->nintervals) {
		fprintf(stderr, "poolscope plot: %s: no intervals to plot\n", path);
		return -ENOENT;	/* said: the caller adds nothing */
	}
	ret = o->by_path ? ps_report_build(&rep, r, o->rs, 0, UINT64_MAX) :
			   ps_report_rank(&rep, r, 0, UINT64_MAX);
	g = calloc(1, sizeof(*g));
	if (g)
		g->of = calloc(rep.nrows + 1, sizeof(*g->of));
	if (ret || !g || !g->of) {
		ret = ret ? ret : -ENOMEM;
		goto out;
	}
	if (o->by_path)
		group_paths(&rep, g);
	else
		group_tags(&rep, o->top, g);
	for (k = 0; k < r->nintervals; k++) {
		double tot = 0;

		for (i = 0; i < rep.nrows; i++)
			if (g->of[i] >= 0)
				tot += fmax(0, (double)rep.rows[i].ts->s[k].live_bytes);
		peak = fmax(peak, tot);
		if (u && u->v[k] >= 0) {
			double uv = (double)(abs_live ? u->v[k] : u->v[k] - u->v[0]);

			peak = fmax(peak, uv);
			low = fmin(low, uv);
		}
	}
	div = fmax(peak, -low) >= 2.0 * 1024 * MiB ? 1024 * MiB : MiB;
	snprintf(data, sizeof(data), "%s/growth.tsv", o->dir);
	f = fopen(data, "w");
	if (!f) {
		ret = -errno;
		goto out;
	}
	fprintf(f, "t\tbase");
	for (i = 0; i < g->n; i++)
		fprintf(f, "\t%s", g->name[i]);
	ncol = 2 + (int)g->n;
	if (u) {
		/* where the counter comes from: /proc/meminfo, or the Windows trace's own counter */
		snprintf(ulabel, sizeof(ulabel), "%s%s (%s)", uname, abs_live ? "" : " growth",
			 is_windows(r) ? "system counter" : "meminfo");
		fprintf(f, "\t%s", ulabel);
		ucol = ++ncol;
		/* a long trace read as points: the band of each point's smallest to largest value */
		if (u->lo) {
			fprintf(f, "\tmin\tmax");
			bcol = ++ncol;
			++ncol;
		}
	}
	if (r->has_workload) {
		fprintf(f, "\tIOPS");
		icol = ++ncol;
	}
	fprintf(f, "\n");
	for (k = 0; k < r->nintervals; k++) {
		double cum = 0, dur = r->intervals[k].dur_ns / 1e9;

		memset(v, 0, sizeof(v));
		for (i = 0; i < rep.nrows; i++)
			if (g->of[i] >= 0)
				v[g->of[i]] += fmax(0, (double)rep.rows[i].ts->s[k].live_bytes) / div;
		fprintf(f, "%.3f\t0", r->intervals[k].t_ns / 1e9);
		for (i = 0; i < g->n; i++) {
			cum += v[i];
			fprintf(f, "\t%.6f", cum);
		}
		if (u) {
			int64_t base = abs_live ? 0 : u->v[0];

			if (u->v[k] < 0)
				fprintf(f, "\tNaN");
			else
				fprintf(f, "\t%.6f", (double)(u->v[k] - base) / div);
			if (bcol && (u->lo[k] < 0 || u->hi[k] < 0))
				fprintf(f, "\tNaN\tNaN");
			else if (bcol)
				fprintf(f, "\t%.6f\t%.6f", (double)(u->lo[k] - base) / div,
					(double)(u->hi[k] - base) / div);
		}
		if (icol) {
			double iops = dur > 0 ? r->workload[k].ios / dur : 0;

			fprintf(f, "\t%.1f", iops);
			imax = fmax(imax, iops);
		}
		fprintf(f, "\n");
	}
	if (fclose(f)) {
		f = NULL;
		ret = -errno;
		goto out;
	}
	f = NULL;
	if (find_script("growth.gp", script, sizeof(script))) {
		fprintf(stderr, "poolscope plot: %s: gnuplot script not found (set POOLSCOPE_PLOTS)\n",
			script);
		ret = -ENOENT;
		goto out;
	}
	if (!o->title)
		default_title(r, path, o, ttl, sizeof(ttl));
	else
		ps_strlcpy(ttl, o->title, sizeof(ttl));
	vars[nv++] = quote("data", data);
	vars[nv++] = quote("out", o->out);
	vars[nv++] = quote("term", o->term);
	vars[nv++] = quote("title", ttl);
	vars[nv++] = quote("unit", div > MiB ? "GiB" : "MiB");
	vars[nv++] = num("nstack", (long)g->n);
	vars[nv++] = num("ucol", ucol);
	vars[nv++] = quote("uname", ucol ? ulabel : "");
	vars[nv++] = num("icol", icol);
	vars[nv++] = num("bcol", bcol);
	/* a shrinking unreclaimable total stays in sight below the stack's zero */
	vars[nv++] = fnum("ymin", low < 0 ? low * 1.05 / div : 0);
	vars[nv++] = num("nmuted", o->by_path ? 2 : 1);
	/* headroom above the IOPS line: a steady load is not drawn on the frame */
	vars[nv++] = fnum("imax", imax > 0 ? imax * 1.15 : 1);
	for (i = 0; i < nv; i++)
		if (!vars[i]) {
			ret = -ENOMEM;
			goto out;
		}
	ret = run_gnuplot(script, o, vars, (int)nv);
out:
	if (f)
		fclose(f);
	for (i = 0; i < ARRAY_SIZE(vars); i++)
		free(vars[i]);
	if (g)
		free(g->of);
	free(g);
	ps_report_free(&rep);
	return ret;
}

static const char *run_name(const struct ps_run *r, const char *path)
{
	const char *label = ps_run_meta(r, PS_META_LABEL), *slash = strrchr(path, '/');

	return label ? label : slash ? slash + 1 : path;
}

static int plot_two(const struct ps_run *a, const char *pa, const struct ps_run *b,
		    const char *pb, const struct plot_opts *o)
{
	const struct ps_run *rs[2] = { a, b };
	const char *un[2];
	const struct ps_series *u[2];
	char data[PATH_MAX], script[PATH_MAX], ttl[1024], na[64], nb[64], vw[2][160];
	char *vars[9] = { 0 };
	uint32_t n = MAX(a->nintervals, b->nintervals), k;
	double peak = 0, low = 0, div, imax = 0;
	int ret = 0, j, niops = 0, nv = 0;
	FILE *f;

	for (j = 0; j < 2; j++) {
		u[j] = ps_unreclaimable(rs[j], &un[j]);
		niops += rs[j]->has_workload;
	}
	for (j = 0; j < 2; j++)
		for (k = 0; k < rs[j]->nintervals; k++) {
			double t = (double)ps_tracked_live(rs[j], k);

			peak = fmax(peak, t);
			low = fmin(low, t);
			if (u[j] && u[j]->v[k] >= 0) {
				double uv = (double)(u[j]->v[k] - u[j]->v[0]);

				peak = fmax(peak, uv);
				low = fmin(low, uv);
			}
		}
	div = fmax(peak, -low) >= 2.0 * 1024 * MiB ? 1024 * MiB : MiB;
	snprintf(data, sizeof(data), "%s/diff.tsv", o->dir);
	f = fopen(data, "w");
	if (!f)
		return -errno;
	ps_strlcpy(na, run_name(a, pa), sizeof(na));
	ps_strlcpy(nb, run_name(b, pb), sizeof(nb));
	sanitize(na);
	sanitize(nb);
	fprintf(f, "t\t%s: tracked live bytes\t%s: %s growth\t%s: tracked live bytes\t%s: %s growth",
		na, na, un[0], nb, nb, un[1]);
	/* IOPS columns only for runs that have them: gnuplot refuses an axis with no point */
	for (j = 0; j < 2; j++)
		if (rs[j]->has_workload)
			fprintf(f, "\t%s: IOPS", j ? nb : na);
	fprintf(f, "\n");
	for (k = 0; k < n; k++) {
		const struct ps_run *t = k < a->nintervals ? a : b;

		fprintf(f, "%.3f", t->intervals[k].t_ns / 1e9);
		for (j = 0; j < 2; j++) {
			if (k >= rs[j]->nintervals) {
				fprintf(f, "\tNaN\tNaN");
				continue;
			}
			fprintf(f, "\t%.6f", (double)ps_tracked_live(rs[j], k) / div);
			if (u[j] && u[j]->v[k] >= 0)
				fprintf(f, "\t%.6f", (double)(u[j]->v[k] - u[j]->v[0]) / div);
			else
				fprintf(f, "\tNaN");
		}
		for (j = 0; j < 2; j++) {
			const struct ps_run *r = rs[j];

			if (!r->has_workload)
				continue;
			if (k < r->nintervals && r->intervals[k].dur_ns) {
				double iops = r->workload[k].ios / (r->intervals[k].dur_ns / 1e9);

				fprintf(f, "\t%.1f", iops);
				imax = fmax(imax, iops);
			} else
				fprintf(f, "\tNaN");
		}
		fprintf(f, "\n");
	}
	if (fclose(f))
		return -errno;
	if (find_script("diff.gp", script, sizeof(script))) {
		fprintf(stderr, "poolscope plot: %s: gnuplot script not found (set POOLSCOPE_PLOTS)\n",
			script);
		return -ENOENT;
	}
	if (o->title) {
		ps_strlcpy(ttl, o->title, sizeof(ttl));
	} else {
		verdict_words(a, o->rs, vw[0], sizeof(vw[0]));
		verdict_words(b, o->rs, vw[1], sizeof(vw[1]));
		snprintf(ttl, sizeof(ttl), "%s vs %s - kernel memory growth%s%s%s%s%s%s%s%s%s",
			 na, nb, niops ? " and IOPS" : "", vw[0][0] || vw[1][0] ? " - " : "",
			 vw[0][0] ? na : "", vw[0][0] ? ": " : "", vw[0],
			 vw[0][0] && vw[1][0] ? "; " : "", vw[1][0] ? nb : "", vw[1][0] ? ": " : "",
			 vw[1]);
		sanitize(ttl);
	}
	vars[nv++] = quote("data", data);
	vars[nv++] = quote("out", o->out);
	vars[nv++] = quote("term", o->term);
	vars[nv++] = quote("title", ttl);
	vars[nv++] = quote("unit", div > MiB ? "GiB" : "MiB");
	vars[nv++] = num("ncols", 5 + niops);
	vars[nv++] = num("niops", niops);
	vars[nv++] = fnum("imax", imax > 0 ? imax * 1.15 : 1);
	for (j = 0; j < nv; j++)
		if (!vars[j])
			ret = -ENOMEM;
	if (!ret)
		ret = run_gnuplot(script, o, vars, nv);
	for (j = 0; j < nv; j++)
		free(vars[j]);
	return ret;
}

/*
 * Whether gnuplot can write out: a missing directory or a read-only one is said in our words,
 * before any work. An existing file is replaced, as gnuplot does.
 */
static int check_output(const char *out)
{
	struct stat st;
	int fd;

	if (!stat(out, &st))
		return S_ISREG(st.st_mode) ? (access(out, W_OK) ? -errno : 0) : -EISDIR;
	fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	unlink(out);
	return 0;
}

static int cmd_plot(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, 'n' },
		{ "by", required_argument, NULL, 'B' },
		{ "title", required_argument, NULL, 't' },
		{ "rules", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *out = NULL, *title = NULL, *term, *ext, *rules_path = NULL;
	struct ps_run *runs[2] = { NULL, NULL };
	struct ps_rules *rs = NULL;
	struct plot_opts o;
	char err[512] = "", dir[] = "/tmp/poolscope-plot.XXXXXX", path[PATH_MAX + 32];
	unsigned top = 8;
	bool by_path = false;
	int c, nruns, rc = PS_EXIT_FAIL, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:n:t:r:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 't': title = optarg; break;
		case 'r': rules_path = optarg; break;
		case 'n':
			if (ps_parse_uint(optarg, 1, 20, &top)) {
				fprintf(stderr, "poolscope plot: --top '%s': expected 1..20\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 'B':
			if (!strcmp(optarg, "path"))
				by_path = true;
			else if (strcmp(optarg, "tag")) {
				fprintf(stderr, "poolscope plot: --by '%s': expected tag or path\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 'h': usage(stdout); return PS_EXIT_OK;
		default:
			fprintf(stderr, "poolscope plot: see 'poolscope plot -h'\n");
			return PS_EXIT_USAGE;
		}
	}
	nruns = argc - optind;
	if (nruns < 1 || nruns > 2 || !out) {
		fprintf(stderr, "poolscope plot: expected TRACE [TRACE2] -o OUT.png|OUT.svg\n");
		return PS_EXIT_USAGE;
	}
	ext = strrchr(out, '.');
	if (ext && !strcmp(ext, ".png"))
		term = "png";
	else if (ext && !strcmp(ext, ".svg"))
		term = "svg";
	else {
		fprintf(stderr, "poolscope plot: -o '%s': expected a .png or .svg file name\n", out);
		return PS_EXIT_USAGE;
	}
	if (!have_gnuplot()) {
		fprintf(stderr, "poolscope plot: gnuplot not found in PATH (Debian: apt-get install "
			"gnuplot-nox)\n");
		return PS_EXIT_FAIL;
	}
	ret = check_output(out);
	if (ret) {
		fprintf(stderr, "poolscope plot: %s: %s\n", out, strerror(-ret));
		return PS_EXIT_FAIL;
	}
	/* the rules: the paths of --by path and the verdict of the title */
	if (ps_rules_open("plot", rules_path, &rs))
		return PS_EXIT_FAIL;
	for (int i = 0; i < nruns; i++) {
		ret = ps_run_load(&runs[i], argv[optind + i], err, sizeof(err));
		if (ret) {
			fprintf(stderr, "poolscope plot: %s\n", err[0] ? err : ps_strerror(ret));
			goto out;
		}
	}
	if (!mkdtemp(dir)) {
		fprintf(stderr, "poolscope plot: mkdtemp: %s\n", strerror(errno));
		goto out;
	}
	o = (struct plot_opts){ .top = top, .by_path = by_path, .rs = rs, .title = title,
				.term = term, .out = out, .dir = dir };
	if (nruns == 2 && by_path) {
		/* two runs are compared by their totals: there is nothing to group */
		fprintf(stderr, "poolscope plot: --by path plots one trace (two are drawn by their "
			"totals)\n");
		rmdir(dir);
		rc = PS_EXIT_USAGE;
		goto out;
	}
	if (nruns == 1)
		ret = plot_one(runs[0], argv[optind], &o);
	else
		ret = plot_two(runs[0], argv[optind], runs[1], argv[optind + 1], &o);
	if (!ret) {
		struct stat st;

		if (stat(out, &st) || st.st_size == 0) {
			fprintf(stderr, "poolscope plot: %s: gnuplot wrote no output\n", out);
			ret = -EIO;
		}
	} else if (ret != -EIO && ret != -ENOENT) {
		unlink(out);
		fprintf(stderr, "poolscope plot: %s: %s\n", out, ps_strerror(ret));
	}
	snprintf(path, sizeof(path), "%s/growth.tsv", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/diff.tsv", dir);
	unlink(path);
	rmdir(dir);
	if (!ret) {
		printf("%s\n", out);
		rc = PS_EXIT_OK;
	}
out:
	ps_run_free(runs[0]);
	ps_run_free(runs[1]);
	ps_rules_free(rs);
	return rc;
}
PS_COMMAND(plot, cmd_plot, "plot live bytes by tag, the unreclaimable total and IOPS (gnuplot)");
