// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope plot: renders a trace with gnuplot. One trace: the live bytes of the report's top N
 * tags (its ranking, from analysis/) stacked plus "other", the unreclaimable total (SUnreclaim on Linux, NonPagedPool on Windows)
 * as a line and the workload's IOPS on the second axis. Two traces: both runs on one time axis.
 * The data goes to gnuplot as a tab-separated file in a private temporary directory; the
 * scripts live in plots/ so they can be tuned without rebuilding.
 */
#include <errno.h>
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

#define MiB (1024.0 * 1024.0)

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
"      --by tag|path   group by tag (default) or by network/file-services path\n"
"  -t, --title TEXT    title (default: file name and label)\n"
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


static int run_gnuplot(const char *script, const char *out, char *const *vars, int nvars)
{
	char *argv[64];
	int argc = 0, st;
	pid_t pid;

	argv[argc++] = "gnuplot";
	for (int i = 0; i < nvars && argc < 60; i++) {
		argv[argc++] = "-e";
		argv[argc++] = vars[i];
	}
	argv[argc++] = (char *)script;
	argv[argc] = NULL;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		execvp("gnuplot", argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		unlink(out);
		fprintf(stderr, "poolscope plot: %s: gnuplot failed (%s %d) on %s\n", out,
			WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
			script);
		return -EIO;
	}
	return 0;
}

static char *quote(const char *k, const char *v)
{
	char *s;
	size_t n = strlen(k) + strlen(v) + 8;

	s = malloc(n);
	if (s)
		snprintf(s, n, "%s='%s'", k, v);
	for (char *p = s ? strchr(s, '=') + 2 : NULL; p && *p; p++)
		if (*p == '\'' && p[1])
			*p = '`';
	return s;
}

static char *num(const char *k, long v)
{
	char *s = malloc(64);

	if (s)
		snprintf(s, 64, "%s=%ld", k, v);
	return s;
}

/*
 * The tags to stack: the report's top N (ps_report_rank: the plot names the suspects the report
 * ranks first) less pages backing slabs, whose objects are counted already, and tags that never
 * hold live bytes (nothing to draw). Fills st[i] for row i; returns how many.
 */
static size_t stacked(const struct ps_report *rep, unsigned top, bool *st)
{
	size_t n = 0;

	for (size_t i = 0; i < rep->nrows && i < top; i++) {
		const struct ps_tag_series *ts = rep->rows[i].ts;

		if (ts->tag.flags & PS_TAG_F_SLAB_BACKING)
			continue;
		for (uint32_t k = 0; k < rep->run->nintervals && !st[i]; k++)
			st[i] = ts->s[k].live_bytes > 0;
		n += st[i];
	}
	return n;
}

/* In "other": neither stacked nor a page backing slabs. */
static bool other(const struct ps_report *rep, const bool *st, size_t i)
{
	return !st[i] && !(rep->rows[i].ts->tag.flags & PS_TAG_F_SLAB_BACKING);
}

static void default_title(const struct ps_run *r, const char *path, char *buf, size_t len)
{
	const char *label = ps_run_meta(r, PS_META_LABEL), *os = ps_run_meta(r, PS_META_OS);
	const char *slash = strrchr(path, '/');

	snprintf(buf, len, "%s%s%s%s - kernel memory by tag%s", slash ? slash + 1 : path,
		 label ? " (" : "", label ? label : "", label ? ")" : "",
		 os && !strcmp(os, PS_OS_WINDOWS) ? " (Windows pool)" : "");
	sanitize(buf);
}

static int plot_one(const struct ps_run *r, const char *path, const char *out, const char *term,
		    unsigned top, const char *title, const char *dir)
{
	const char *uname = NULL;
	const struct ps_series *u = ps_unreclaimable(r, &uname);
	bool abs_live = ps_run_live_absolute(r);
	struct ps_report rep = { 0 };
	bool *st = NULL;
	char data[PATH_MAX], script[PATH_MAX], ttl[256], ulabel[96], *vars[11] = { 0 };
	double peak = 0, div;
	size_t nstack, nother = 0, i;
	uint32_t k;
	int ret = 0, ucol = 0, icol = 0, bcol = 0, ncol;
	FILE *f = NULL;

	if (!r->nintervals) {
		fprintf(stderr, "poolscope plot: %s: no intervals to plot\n", path);
		return -EINVAL;
	}
	ret = ps_report_rank(&rep, r, 0, UINT64_MAX);
	st = calloc(rep.nrows + 1, sizeof(*st));
	if (ret || !st) {
		ret = ret ? ret : -ENOMEM;
		goto out;
	}
	nstack = stacked(&rep, top, st);
	for (k = 0; k < r->nintervals; k++) {
		double tot = 0;

		for (i = 0; i < r->ntags; i++)
			if (!(r->tags[i].tag.flags & PS_TAG_F_SLAB_BACKING))
				tot += fmax(0, (double)r->tags[i].s[k].live_bytes);
		peak = fmax(peak, tot);
		if (u && u->v[k] >= 0)
			peak = fmax(peak, (double)(abs_live ? u->v[k] : u->v[k] - u->v[0]));
	}
	div = peak >= 2.0 * 1024 * MiB ? 1024 * MiB : MiB;
	snprintf(data, sizeof(data), "%s/growth.tsv", dir);
	f = fopen(data, "w");
	if (!f) {
		ret = -errno;
		goto out;
	}
	fprintf(f, "t\tbase");
	for (i = 0; i < rep.nrows; i++) {
		char lab[256];

		nother += other(&rep, st, i);
		if (!st[i])
			continue;
		ps_tag_label(&rep.rows[i].ts->tag, lab, sizeof(lab));
		sanitize(lab);
		fprintf(f, "\t%s", lab);
	}
	fprintf(f, "\tother (%zu tags)", nother);
	ncol = 2 + (int)nstack + 1;
	if (u) {
		snprintf(ulabel, sizeof(ulabel), "%s%s (meminfo)", uname, abs_live ? "" : " growth");
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
		double cum = 0, rest = 0, dur = r->intervals[k].dur_ns / 1e9;

		fprintf(f, "%.3f\t0", r->intervals[k].t_ns / 1e9);
		for (i = 0; i < rep.nrows; i++) {
			double v = fmax(0, (double)rep.rows[i].ts->s[k].live_bytes) / div;

			if (st[i]) {
				cum += v;
				fprintf(f, "\t%.6f", cum);
			} else if (other(&rep, st, i)) {
				rest += v;
			}
		}
		fprintf(f, "\t%.6f", cum + rest);
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
		if (icol)
			fprintf(f, "\t%.1f", dur > 0 ? r->workload[k].ios / dur : 0);
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
	if (!title)
		default_title(r, path, ttl, sizeof(ttl));
	else
		ps_strlcpy(ttl, title, sizeof(ttl));
	vars[0] = quote("data", data);
	vars[1] = quote("out", out);
	vars[2] = quote("term", term);
	vars[3] = quote("title", ttl);
	vars[4] = quote("unit", div > MiB ? "GiB" : "MiB");
	vars[5] = num("nstack", (long)nstack + 1);
	vars[6] = num("ucol", ucol);
	vars[7] = quote("uname", ucol ? ulabel : "");
	vars[8] = num("icol", icol);
	vars[9] = num("bcol", bcol);
	for (i = 0; i < 10; i++)
		if (!vars[i]) {
			ret = -ENOMEM;
			goto out;
		}
	ret = run_gnuplot(script, out, vars, 10);
out:
	if (f)
		fclose(f);
	for (i = 0; i < ARRAY_SIZE(vars); i++)
		free(vars[i]);
	free(st);
	ps_report_free(&rep);
	return ret;
}

static const char *run_name(const struct ps_run *r, const char *path)
{
	const char *label = ps_run_meta(r, PS_META_LABEL), *slash = strrchr(path, '/');

	return label ? label : slash ? slash + 1 : path;
}

static int plot_two(const struct ps_run *a, const char *pa, const struct ps_run *b,
		    const char *pb, const char *out, const char *term, const char *title,
		    const char *dir)
{
	const struct ps_run *rs[2] = { a, b };
	const char *un[2];
	const struct ps_series *u[2];
	char data[PATH_MAX], script[PATH_MAX], ttl[256], na[64], nb[64], *vars[6] = { 0 };
	uint32_t n = MAX(a->nintervals, b->nintervals), k;
	double peak = 0, div;
	int ret = 0, j;
	FILE *f;

	for (j = 0; j < 2; j++)
		u[j] = ps_unreclaimable(rs[j], &un[j]);
	for (j = 0; j < 2; j++)
		for (k = 0; k < rs[j]->nintervals; k++) {
			peak = fmax(peak, fabs((double)ps_tracked_live(rs[j], k)));
			if (u[j] && u[j]->v[k] >= 0)
				peak = fmax(peak, fabs((double)(u[j]->v[k] - u[j]->v[0])));
		}
	div = peak >= 2.0 * 1024 * MiB ? 1024 * MiB : MiB;
	snprintf(data, sizeof(data), "%s/diff.tsv", dir);
	f = fopen(data, "w");
	if (!f)
		return -errno;
	ps_strlcpy(na, run_name(a, pa), sizeof(na));
	ps_strlcpy(nb, run_name(b, pb), sizeof(nb));
	sanitize(na);
	sanitize(nb);
	fprintf(f, "t\t%s: tracked live bytes\t%s: %s growth\t%s: tracked live bytes\t%s: %s growth"
		"\t%s: IOPS\t%s: IOPS\n", na, na, un[0], nb, nb, un[1], na, nb);
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

			if (k < r->nintervals && r->has_workload && r->intervals[k].dur_ns)
				fprintf(f, "\t%.1f", r->workload[k].ios / (r->intervals[k].dur_ns / 1e9));
			else
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
	if (title)
		ps_strlcpy(ttl, title, sizeof(ttl));
	else
		snprintf(ttl, sizeof(ttl), "%s vs %s - kernel memory growth and IOPS", na, nb);
	vars[0] = quote("data", data);
	vars[1] = quote("out", out);
	vars[2] = quote("term", term);
	vars[3] = quote("title", ttl);
	vars[4] = quote("unit", div > MiB ? "GiB" : "MiB");
	vars[5] = num("ncols", 7);
	for (j = 0; j < 6; j++)
		if (!vars[j])
			ret = -ENOMEM;
	if (!ret)
		ret = run_gnuplot(script, out, vars, 6);
	for (j = 0; j < 6; j++)
		free(vars[j]);
	return ret;
}

static int cmd_plot(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, 'n' },
		{ "by", required_argument, NULL, 'B' },
		{ "title", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *out = NULL, *title = NULL, *term, *ext;
	struct ps_run *runs[2] = { NULL, NULL };
	char err[512], dir[] = "/tmp/poolscope-plot.XXXXXX", path[PATH_MAX + 32];
	unsigned top = 8;
	bool by_path = false;
	int c, nruns, rc = PS_EXIT_FAIL, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:n:t:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 't': title = optarg; break;
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
	if (by_path) {
		/* the network/file-services classifier lives in analysis/, not merged on this branch */
		fprintf(stderr, "poolscope plot: --by path: this build has no path classifier "
			"(analysis/); use --by tag\n");
		return PS_EXIT_FAIL;
	}
	if (!have_gnuplot()) {
		fprintf(stderr, "poolscope plot: gnuplot not found in PATH (Debian: apt-get install "
			"gnuplot-nox)\n");
		return PS_EXIT_FAIL;
	}
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
	if (nruns == 1)
		ret = plot_one(runs[0], argv[optind], out, term, top, title, dir);
	else
		ret = plot_two(runs[0], argv[optind], runs[1], argv[optind + 1], out, term, title, dir);
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
	return rc;
}
PS_COMMAND(plot, cmd_plot, "plot live bytes by tag, the unreclaimable total and IOPS (gnuplot)");
