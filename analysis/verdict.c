// SPDX-License-Identifier: GPL-2.0
/*
 * The verdict of a report (verdict.h): the rule for one series, the series of the domain and of
 * each path, the counter that confirms them, and the sentence that says it.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/trend.h"
#include "analysis/verdict.h"
#include "userspace/lib/util/util.h"

const char *ps_vstate_name(enum ps_vstate s)
{
	static const char *const n[] = { "stable", "plateau", "growing", "leak" };

	return s <= PS_V_LEAK ? n[s] : "stable";
}

/* A tenth of the window, at least two intervals: how long a burst lasts. */
static size_t tenth(size_t n)
{
	return n / 10 > 2 ? n / 10 : 2;
}

static int vstat(const double *t, const double *io, const double *y, const double *kept, size_t n,
		 double min_rate, bool confirmed, struct ps_vstat *out)
{
	struct ps_trend tr;
	struct ps_segments sg;
	size_t side, jend = 0;
	double secs, top, jump = 0, ktop, kpeak;
	size_t burst = tenth(n);
	bool rising, steady;
	int e;

	memset(out, 0, sizeof(*out));
	out->p = 1;
	out->p_signs = 1;
	if (n < 3) {
		out->why = "too few intervals";
		return 0;
	}
	out->growth = (int64_t)(y[n - 1] - y[0]);
	top = y[0];
	ktop = kept[0];
	for (size_t i = 1; i < n; i++) {
		if (y[i] > top)
			top = y[i];
		if (top - y[i] > (double)out->drawdown)
			out->drawdown = (int64_t)(top - y[i]);
		if (kept[i] > ktop)
			ktop = kept[i];
		if (kept[i] - kept[i >= burst ? i - burst : 0] > jump) {
			jump = kept[i] - kept[i >= burst ? i - burst : 0];
			jend = i;
		}
	}
	kpeak = ktop - kept[0];
	e = ps_signed_rank(y, n, &out->p_signs);
	if (e)
		return e;
	out->peak = (int64_t)(top - y[0]);
	secs = t[n - 1] - t[0];
	e = ps_trend_fit_io(t, io, y, n, &tr);
	if (e)
		return e == -EINVAL ? 0 : e;
	out->rate = tr.slope;
	out->per_io = tr.by_io ? tr.slope_io : 0;
	out->p = tr.p_up;
	out->late_rate = tr.slope;
	/* the last piece must hold a fifth of the points: a break in the last two is noise */
	side = n / 5 > 3 ? n / 5 : 3;
	if (n >= 2 * side + 1) {
		e = ps_segments_fit(t, kept, n, side, &sg);
		if (e && e != -EINVAL)
			return e;
		if (!e)
			out->late_rate = sg.slope2;
	}
	rising = tr.p_up < PS_V_P_GROWING && tr.slope >= min_rate &&
		 (double)out->growth >= PS_V_MIN_GROWTH;
	if (!rising) {
		/* grew by the floor at some point, without a trend to the end */
		if ((double)out->peak >= PS_V_MIN_GROWTH) {
			out->state = PS_V_PLATEAU;
			out->why = "grew, then stopped";
		} else {
			out->state = PS_V_STABLE;
		}
		return 0;
	}
	steady = out->late_rate >= 0.5 * tr.slope && out->late_rate >= min_rate;
	/*
	 * The continuous two-piece fit cannot bend at a step: a pool that filled at once, late in
	 * the window, leaves its last piece rising through the step. Growth that came mostly at
	 * once and stayed flat for at least a fifth of the window after it is a plateau too, in a
	 * window long enough for the two-piece fit.
	 */
	if (steady && n >= 2 * side + 1 && jump > PS_V_MAX_JUMP * kpeak && n - jend >= side) {
		struct ps_trend tail;

		e = ps_trend_fit(t + jend, kept + jend, n - jend, &tail);
		if (e && e != -EINVAL)
			return e;
		if (!e && tail.slope < min_rate && tail.slope < 0.5 * tr.slope)
			steady = false;
	}
	if (!steady) {
		out->state = PS_V_PLATEAU;
		out->why = "grew, then stopped";
	} else if (tr.p_up >= PS_V_P_LEAK_MONOTONE ||
		   (tr.p_up >= PS_V_P_LEAK &&
		    (double)out->drawdown > PS_V_MAX_DRAWDOWN * (double)out->growth)) {
		out->state = PS_V_GROWING;
		out->why = "trend not clear";
	} else if (out->p_signs >= PS_V_P_SIGNS) {
		out->state = PS_V_GROWING;
		out->why = "rises and falls alike";
	} else if (jump > PS_V_MAX_JUMP * kpeak ||
		   kept[n / 2] - kept[0] < PS_V_MIN_FIRST_HALF * (kept[n - 1] - kept[0])) {
		out->state = PS_V_GROWING;
		out->why = "most of it came at once";
	} else if (n < PS_V_MIN_POINTS || secs < PS_V_MIN_SECS) {
		out->state = PS_V_GROWING;
		out->why = "window too short";
	} else if (!confirmed) {
		out->state = PS_V_GROWING;
		out->why = "no counter confirms it";
	} else {
		out->state = PS_V_LEAK;
	}
	return 0;
}

/* The k-th smallest of v[0..n-1] (v reordered): Hoare's selection. */
static double select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		double pivot = v[lo + (hi - lo) / 2], t;
		size_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				t = v[i], v[i] = v[j], v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return v[k];
}

/*
 * The shape tests (the two-piece fit, the step, growth that came at once) judge the series
 * without its short bursts: each point is the median of the points within a tenth of the
 * window on both sides (PS_V_BURST_MAX at most). In-flight memory freed within that (a
 * loopback exchange's queued skbs, a batch of short processes) is not growth, and left in it
 * bends the two-piece fit at the burst or is the growth that "came at once". A median keeps
 * what stays: a line is unchanged (a centred window has the point as its median), so is a
 * step that holds. Near the end the window narrows to stay centred, down to the last point
 * alone: what follows those points is not in the window, so whether a burst there stays is not
 * known and it is kept. Near the start the window takes what is there before the point and
 * the full tenth after it: a burst there is judged by what follows it, like any other (on a
 * line those points read up to half a tenth of the window later, which flattens only the
 * first tenth). The first point stays as it is: growth is measured from it, and a step that
 * holds from the second point on must stay a step. The trend, the signed-rank test and the
 * figures reported take the series as it is.
 */
int ps_vstat_series(const double *t, const double *y, size_t n, double min_rate, bool confirmed,
		    struct ps_vstat *out)
{
	return ps_vstat_series_io(t, NULL, y, n, min_rate, confirmed, out);
}

int ps_vstat_series_io(const double *t, const double *io, const double *y, size_t n,
		       double min_rate, bool confirmed, struct ps_vstat *out)
{
	size_t hold = tenth(n);
	double *kept, *win;
	int e;

	if (hold > PS_V_BURST_MAX)
		hold = PS_V_BURST_MAX;
	if (n < 3)
		return vstat(t, io, y, y, n, min_rate, confirmed, out);
	kept = malloc(n * sizeof(*kept));
	win = malloc((2 * hold + 1) * sizeof(*win));
	if (!kept || !win) {
		free(kept);
		free(win);
		return -ENOMEM;
	}
	kept[0] = y[0];
	for (size_t i = 1; i < n; i++) {
		size_t right = hold < n - 1 - i ? hold : n - 1 - i, left = i < right ? i : right;
		size_t w = left + right + 1;

		memcpy(win, y + i - left, w * sizeof(*win));
		kept[i] = select_kth(win, w, (w - 1) / 2);
	}
	e = vstat(t, io, y, kept, n, min_rate, confirmed, out);
	free(kept);
	free(win);
	return e;
}

/* --- the counters that hold each kind of memory ------------------------------------------ */

enum home { H_NONE, H_SLABINFO, H_PAGES, H_SUNRECLAIM, H_SRECLAIMABLE, H_PERCPU, H_SOCK, H_VMALLOC, H_KSTACK,
	    H_PAGETABLES, H_ANON, H_CACHED, H_NONPAGED, H_PAGED, H__N };

static const char *const home_names[H__N] = {
	[H_SLABINFO] = "/proc/slabinfo", [H_PAGES] = "the page allocator", [H_SUNRECLAIM] = PS_SYS_SUNRECLAIM, [H_SRECLAIMABLE] = PS_SYS_SRECLAIMABLE,
	[H_PERCPU] = "Percpu", [H_SOCK] = "socket memory", [H_VMALLOC] = "VmallocUsed",
	[H_KSTACK] = "KernelStack", [H_PAGETABLES] = "PageTables", [H_ANON] = "AnonPages",
	[H_CACHED] = "Cached", [H_NONPAGED] = PS_SYS_NONPAGED, [H_PAGED] = PS_SYS_PAGED,
};

static bool sym_is(const char *sym, const char *prefix)
{
	return sym && !strncmp(sym, prefix, strlen(prefix));
}

/*
 * The system counter a row's memory is counted in. Slab objects and large kmalloc (charged to
 * the slab counters since 5.9) are in S(Un)Reclaim; network pages are charged to their sockets.
 */
static enum home row_home(const struct ps_report *rep, const struct ps_report_row *w)
{
	const struct ps_tag *t = &w->ts->tag;
	const char *site = t->site_sym;

	if (!strcmp(t->kind, PS_KIND_POOL))
		return !strcmp(w->domain, PS_DOMAIN_KERNEL) ? H_NONPAGED : H_PAGED;
	/*
	 * A slab or kmalloc row with a slabinfo line keeps only the growth its own cache shows
	 * (ps_untraced_correct): that cache is its ground truth, and it is not moved by what
	 * the rest of the system allocates or frees, as SUnreclaim is on a busy machine.
	 */
	if ((!strcmp(t->kind, PS_KIND_SLAB) || !strcmp(t->kind, PS_KIND_KMALLOC)) &&
	    w->fac_idx >= 0 && w->fac_idx < (int32_t)rep->run->nslab && rep->fac)
		return H_SLABINFO;
	if (!strcmp(t->kind, PS_KIND_SLAB) || !strcmp(t->kind, PS_KIND_KMALLOC))
		return !strcmp(w->domain, PS_DOMAIN_RECLAIMABLE) ? H_SRECLAIMABLE : H_SUNRECLAIM;
	if (!strcmp(t->kind, PS_KIND_PERCPU))
		return H_PERCPU;
	/*
	 * Page frees are all traced, so what can make a page tag grow that did not is sampling:
	 * the exact counters of its order say whether that many pages stayed allocated.
	 */
	/* a page row with an order correction series (ps_untraced_correct decided it) */
	if (w->fac_idx >= (int32_t)rep->run->nslab &&
	    ps_run_counter(rep->run, "class.page-order-0.alloc_bytes"))
		return H_PAGES;
	if (!strcmp(w->domain, PS_DOMAIN_RECLAIMABLE))
		return H_CACHED;
	if (!strcmp(w->domain, PS_DOMAIN_USER))
		return sym_is(site, "pte_alloc") || sym_is(site, "__pte_alloc") ||
		       sym_is(site, "__pmd_alloc") || sym_is(site, "__pud_alloc") ? H_PAGETABLES : H_ANON;
	if (!strncmp(w->a.cls, "network", 7))
		return H_SOCK;
	if (sym_is(site, "__vmalloc") || sym_is(site, "vmalloc") || sym_is(site, "vm_area_alloc_pages"))
		return H_VMALLOC;
	if (sym_is(site, "alloc_thread_stack") || sym_is(site, "dup_task_struct"))
		return H_KSTACK;
	return H_NONE;
}

/* The counter's value at interval k, summed over its parts; -1 when a part is absent. */
static int64_t home_value(const struct ps_run *r, enum home h, uint32_t k)
{
	static const char *const sock[] = { PS_SYS_SOCK_TCP_MEM, PS_SYS_SOCK_UDP_MEM,
					    PS_SYS_SOCK_FRAG_MEM };
	const struct ps_series *s;
	int64_t sum = 0;

	if (h == H_SLABINFO)
		return -1;
	if (h != H_SOCK) {
		s = h == H_NONE ? NULL : ps_run_sys(r, home_names[h]);
		return s ? s->v[k] : -1;
	}
	s = ps_run_sys(r, PS_SYS_SOCK_TCP_MEM);
	if (!s || s->v[k] < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(sock); i++) {
		s = ps_run_sys(r, sock[i]);
		if (s && s->v[k] > 0)
			sum += s->v[k];
	}
	return sum;
}

/*
 * Whether the counter of home grew at least PS_V_CONFIRM_SHARE of expect over the window, with
 * a rising trend (Theil-Sen growth, so that one spike does not confirm). *growth gets its growth.
 */
static int confirm_home(const struct ps_report *rep, enum home h, int64_t expect, double *tt,
			double *yy, bool *ok, int64_t *growth)
{
	const struct ps_run *r = rep->run;
	struct ps_trend tr;
	size_t n = 0;
	int e;

	*ok = false;
	*growth = 0;
	if (h == H_NONE)
		return 0;
	for (uint32_t k = rep->from; k <= rep->to; k++) {
		int64_t v = home_value(r, h, k);

		if (v < 0)
			continue;
		tt[n] = r->intervals[k].t_ns / 1e9;
		yy[n++] = (double)v;
	}
	if (n < 3)
		return 0;
	e = ps_trend_fit(tt, yy, n, &tr);
	if (e)
		return e == -EINVAL ? 0 : e;
	*growth = (int64_t)(tr.slope * (tt[n - 1] - tt[0]));
	*ok = tr.p_up < PS_V_P_GROWING && (double)*growth >= PS_V_CONFIRM_SHARE * (double)expect;
	return 0;
}

/* --- the series of the domain and its paths ----------------------------------------------- */

static bool row_counts(const struct ps_verdict *v, const struct ps_report *rep,
		       const struct ps_report_row *w)
{
	if (w->ts->tag.flags & PS_TAG_F_SLAB_BACKING)
		return false;
	return !v->domain || !strcmp(w->domain, v->domain);
}

/* Caches whose objects live at most lifetime seconds can grow for that long without leaking. */
static bool row_bounded(const struct ps_report *rep, const struct ps_report_row *w)
{
	return w->lifetime && rep->secs < 2.0 * w->lifetime;
}

static void top_path(const char *cls, char *buf, size_t len)
{
	size_t n = strcspn(cls, "/");

	snprintf(buf, len, "%.*s", (int)n, cls);
}

struct work {
	double *t, *y, *ct, *cy;
	double *io;		/* the workload's IOs by each point, or NULL */
	int64_t *sum;		/* [npaths + 1][n]: per path, then the domain */
	int64_t (*home)[H__N];	/* [npaths + 1]: growth per counter */
	int64_t *slab;		/* [npaths + 1][nslab]: the H_SLABINFO rows' growth per cache */
	int64_t *slab_shown;	/* [nslab]: the growth each cache's own line shows */
};

/*
 * The growth of a cache's active objects over the window, in bytes: the Theil-Sen slope of
 * its /proc/slabinfo line times the window, so that the per-CPU slabs' jitter at one end does
 * not decide; 0 when the line has fewer than three points or shrank.
 */
static int slab_line_growth(const struct ps_report *rep, const struct ps_slab_series *ss,
			    double *tt, double *yy, int64_t *out)
{
	const struct ps_run *r = rep->run;
	struct ps_trend tr;
	size_t n = 0;
	int e;

	*out = 0;
	for (uint32_t k = rep->from; k <= rep->to; k++) {
		if (ss->active_objs[k] < 0)
			continue;
		tt[n] = r->intervals[k].t_ns / 1e9;
		yy[n++] = (double)ss->active_objs[k] * (double)ss->objsize;
	}
	if (n < 3)
		return 0;
	e = ps_trend_fit(tt, yy, n, &tr);
	if (e)
		return e == -EINVAL ? 0 : e;
	if (tr.slope > 0)
		*out = (int64_t)(tr.slope * (tt[n - 1] - tt[0]));
	return 0;
}

/*
 * How much of the growth of path p's slab rows their caches' own lines show. A row's tags (and
 * the exact class counters its series may take) also count objects that only replaced older
 * ones the recording never saw allocated, and a free the kernel does not report leaves its
 * object live in them: neither is memory the cache gained. Each cache shows at most what its
 * line grew. The line counts the free objects of each CPU's slabs as active, so it is off by
 * up to those either way: a leak smaller than twice them may go unconfirmed in one window; one
 * that keeps growing does not.
 */
static int64_t slab_shown(const struct ps_report *rep, const struct work *wk, size_t p)
{
	size_t nslab = rep->run->nslab;
	int64_t shown = 0;

	for (size_t c = 0; c < nslab; c++) {
		int64_t g = wk->slab[p * nslab + c];

		if (g > 0)
			shown += g < wk->slab_shown[c] ? g : wk->slab_shown[c];
	}
	return shown;
}

static int path_index(struct ps_verdict *v, const char *name)
{
	for (size_t i = 0; i < v->npaths; i++)
		if (!strcmp(v->paths[i].name, name))
			return (int)i;
	if (v->npaths == PS_V_PATHS_MAX)
		return -1;
	ps_strlcpy(v->paths[v->npaths].name, name, sizeof(v->paths[0].name));
	return (int)v->npaths++;
}

/*
 * The state of one summed series (index p; npaths: the domain) and its confirmation: at least
 * PS_V_CONFIRM_SHARE of its growth must be shown by the counters that hold it. Slab rows are
 * shown by their caches' lines up to what each line grew (slab_shown()); each other counter
 * confirms its rows' growth when it grew at least half as much with a rising trend.
 */
static int state_of(struct ps_verdict *v, const struct ps_report *rep, struct work *wk, size_t p,
		    struct ps_vstat *st, const char **by)
{
	const struct ps_run *r = rep->run;
	size_t n = rep->to - rep->from + 1;
	int64_t total = 0, shown = 0, most = 0;
	enum home best = H_NONE;
	bool counted = false, confirmed;
	int e;

	for (size_t i = 0; i < n; i++) {
		wk->t[i] = r->intervals[rep->from + i].t_ns / 1e9;
		wk->y[i] = (double)wk->sum[p * n + i];
	}
	*by = NULL;
	for (int h = 1; h < H__N; h++) {
		int64_t g = wk->home[p][h], cg = 0, part = 0;
		bool ok = false;

		if (g <= 0)
			continue;
		total += g;
		if (h == H_SLABINFO) {
			part = cg = slab_shown(rep, wk, p);
			counted = true;
		} else if (h == H_PAGES) {
			/* capped by the exact counters of their orders already */
			part = g;
			counted = true;
		} else {
			e = confirm_home(rep, (enum home)h, g, wk->ct, wk->cy, &ok, &cg);
			if (e)
				return e;
			part = ok ? g : 0;
			counted |= home_value(r, (enum home)h, rep->from) >= 0;
		}
		if (part > 0) {
			shown += part;
			if (part > most) {
				most = part;
				best = (enum home)h;
			}
		}
		if (p == v->npaths && part > 0 && (enum home)h == best)
			v->confirm_growth = h == H_PAGES ? g : cg;
	}
	confirmed = total > 0 && (double)shown >= PS_V_CONFIRM_SHARE * (double)total;
	if (best && confirmed)
		*by = home_names[best];
	e = ps_vstat_series_io(wk->t, wk->io, wk->y, n, v->min_rate, confirmed, st);
	if (!e && st->state == PS_V_GROWING && !counted && st->why &&
	    !strcmp(st->why, "no counter confirms it"))
		st->why = "no counter for it";
	return e;
}

/*
 * The workload's IOs done by each point of the window, from its start, into *out: NULL without
 * workload rows or when the window saw none. Memory a workload leaks follows them
 * (ps_trend_fit_io). -ENOMEM, or 0.
 */
static int workload_clock(const struct ps_report *rep, double **out)
{
	const struct ps_run *r = rep->run;
	size_t n = rep->to - rep->from + 1;
	double *io, sum = 0;

	*out = NULL;
	if (!r->has_workload)
		return 0;
	io = malloc(n * sizeof(*io));
	if (!io)
		return -ENOMEM;
	io[0] = 0;
	for (size_t k = 1; k < n; k++)
		io[k] = sum += (double)r->workload[rep->from + k].ios;
	if (sum <= 0)
		free(io);
	else
		*out = io;
	return 0;
}

double ps_verdict_per_io(const struct ps_verdict *v)
{
	if (v->iops <= 0)
		return 0;
	return v->st.per_io > 0 ? v->st.per_io : v->st.rate / v->iops;
}

static void fmt_rate(char *buf, size_t len, double bps)
{
	char b[24];

	ps_fmt_bytes(b, sizeof(b), bps, false);
	snprintf(buf, len, "%s/s", b);
}

static const char *domain_words(const char *d)
{
	if (!d)
		return "tracked memory";
	if (!strcmp(d, PS_DOMAIN_KERNEL))
		return "unreclaimable kernel memory";
	if (!strcmp(d, PS_DOMAIN_RECLAIMABLE))
		return "reclaimable memory";
	return "process memory";
}

/* The one sentence: the state, where, how fast, the evidence; the other main paths after it. */
static const struct ps_vpath *vpath(const struct ps_verdict *v, const char *name)
{
	for (size_t i = 0; name && i < v->npaths; i++)
		if (!strcmp(v->paths[i].name, name))
			return &v->paths[i];
	return NULL;
}

static void summarise(struct ps_verdict *v, const struct ps_report *rep)
{
	char *s = v->summary, rate[40], lb[128], pv[32];
	size_t len = sizeof(v->summary), o = 0;
	const struct ps_vstat *st = &v->st;
	const struct ps_vpath *vp = vpath(v, v->path);
	/*
	 * The domain's state on no one path (plateaus at different times add up to growth): the
	 * path is where most of it is, with its own state, not the place of the domain's.
	 */
	const char *on = vp && vp->st.state != st->state ? NULL : v->path;

	if (st->p < 0.001)
		snprintf(pv, sizeof(pv), "p < 0.001");
	else
		snprintf(pv, sizeof(pv), "p = %.3f", st->p);
	fmt_rate(rate, sizeof(rate), st->rate > 0 ? st->rate : 0);
	switch (st->state) {
	case PS_V_LEAK:
	case PS_V_GROWING:
		o += snprintf(s + o, len - o, "%s%s%s%s: %s grows %s (%s)",
			      st->state == PS_V_LEAK ? "LEAK" : "GROWING",
			      on ? " on the " : "", on ? on : "",
			      on ? " path" : "", domain_words(v->domain), rate, pv);
		if (!on && vp && o < len)
			o += snprintf(s + o, len - o, ", most of it on the %s path (%s)", vp->name,
				      ps_vstate_name(vp->st.state));
		if (v->tag && o < len)
			o += snprintf(s + o, len - o, ", %.0f%% of %s in %s", 100 * v->tag_share,
				      on || !vp ? "it" : "that",
				      ps_tag_label(&v->tag->ts->tag, lb, sizeof(lb)));
		if (v->iops > 0 && o < len)
			o += snprintf(s + o, len - o, ", %.1f bytes per IO", ps_verdict_per_io(v));
		if (st->state == PS_V_LEAK && v->confirmed_by && o < len)
			o += snprintf(s + o, len - o, ", confirmed by %s", v->confirmed_by);
		if (st->state == PS_V_GROWING && st->why && o < len)
			o += snprintf(s + o, len - o, ", not called a leak: %s", st->why);
		break;
	case PS_V_PLATEAU:
		ps_fmt_bytes(rate, sizeof(rate), (double)st->peak, true);
		o += snprintf(s + o, len - o, "PLATEAU%s%s%s: %s grew %s, then stopped",
			      on ? " on the " : "", on ? on : "",
			      on ? " path" : "", domain_words(v->domain), rate);
		if (!on && vp && o < len)
			o += snprintf(s + o, len - o, ", most of it on the %s path (%s)", vp->name,
				      ps_vstate_name(vp->st.state));
		break;
	default:
		ps_fmt_bytes(rate, sizeof(rate), (double)st->growth, true);
		o += snprintf(s + o, len - o, "STABLE: %s does not grow (%s over %.0f s)",
			      domain_words(v->domain), rate, rep->secs);
		break;
	}
	/* the seed's two paths always get their word */
	for (size_t i = 0; i < v->npaths && o < len; i++) {
		const struct ps_vpath *p = &v->paths[i];

		if (v->path && !strcmp(p->name, v->path))
			continue;
		if (strcmp(p->name, "network") && strcmp(p->name, "file-services"))
			continue;
		o += snprintf(s + o, len - o, "; %s %s", p->name, ps_vstate_name(p->st.state));
	}
	if (o < len)
		snprintf(s + o, len - o, ".");
}

int ps_verdict_build(struct ps_verdict *v, const struct ps_report *rep, const char *domain)
{
	size_t n = rep->to - rep->from + 1, nslab = rep->run->nslab, np;
	struct work wk = { 0 };
	const struct ps_vpath *best = NULL;
	int *pidx = NULL, e = -ENOMEM;
	bool short_window;

	memset(v, 0, sizeof(*v));
	v->domain = domain;
	if (workload_clock(rep, &wk.io))
		goto out;
	if (wk.io && rep->secs > 0)
		v->iops = wk.io[n - 1] / rep->secs;
	v->min_rate = PS_V_MIN_RATE;
	if (v->iops * PS_V_MIN_PER_IO > v->min_rate)
		v->min_rate = v->iops * PS_V_MIN_PER_IO;
	v->untraced_removed = 0;
	pidx = calloc(rep->nrows ? rep->nrows : 1, sizeof(*pidx));
	if (!pidx)
		goto out;
	for (size_t i = 0; i < rep->nrows; i++) {
		const struct ps_report_row *w = &rep->rows[i];
		char name[PS_PATH_NAME_MAX];

		pidx[i] = -1;
		if (!row_counts(v, rep, w))
			continue;
		v->untraced_removed += w->untraced;
		if (row_bounded(rep, w)) {
			if (w->adj_growth > 0)
				v->bounded_left_out += w->adj_growth;
			continue;
		}
		top_path(w->a.cls[0] ? w->a.cls : "unknown", name, sizeof(name));
		pidx[i] = path_index(v, name);
	}
	np = v->npaths;
	wk.t = malloc(n * sizeof(double));
	wk.y = malloc(n * sizeof(double));
	wk.ct = malloc(n * sizeof(double));
	wk.cy = malloc(n * sizeof(double));
	wk.sum = calloc((np + 1) * n, sizeof(*wk.sum));
	wk.home = calloc(np + 1, sizeof(*wk.home));
	wk.slab = calloc((np + 1) * (nslab ? nslab : 1), sizeof(*wk.slab));
	wk.slab_shown = calloc(nslab ? nslab : 1, sizeof(*wk.slab_shown));
	if (!wk.t || !wk.y || !wk.ct || !wk.cy || !wk.sum || !wk.home || !wk.slab ||
	    !wk.slab_shown)
		goto out;
	for (size_t i = 0; i < rep->nrows; i++) {
		const struct ps_report_row *w = &rep->rows[i];
		int64_t base;
		size_t p = pidx[i];
		enum home h;

		if (pidx[i] < 0)
			continue;
		base = w->ts->s[rep->from].live_bytes;
		for (size_t k = 0; k < n; k++) {
			int64_t d = ps_row_live(rep, w, rep->from + k) - base;

			wk.sum[p * n + k] += d;
			wk.sum[np * n + k] += d;
		}
		h = row_home(rep, w);
		wk.home[p][h] += w->adj_growth;
		wk.home[np][h] += w->adj_growth;
		if (h == H_SLABINFO) {
			wk.slab[p * nslab + w->fac_idx] += w->adj_growth;
			wk.slab[np * nslab + w->fac_idx] += w->adj_growth;
		}
		if (w->adj_growth > v->paths[p].top_growth) {
			v->paths[p].top_growth = w->adj_growth;
			v->paths[p].top = w;
		}
	}
	for (size_t c = 0; c < nslab; c++) {
		if (wk.slab[np * nslab + c] <= 0)
			continue;
		e = slab_line_growth(rep, &rep->run->slab[c], wk.ct, wk.cy, &wk.slab_shown[c]);
		if (e)
			goto out;
	}
	for (size_t p = 0; p < np; p++) {
		e = state_of(v, rep, &wk, p, &v->paths[p].st, &v->paths[p].confirmed_by);
		if (e)
			goto out;
	}
	e = state_of(v, rep, &wk, np, &v->st, &v->confirmed_by);
	if (e)
		goto out;
	/*
	 * The path the state is on: the worst path, the one with most growth among equals. In a
	 * window too short to call a leak, growing and plateau are guesses from a few points
	 * (a burst of process churn beside a pool that filled): the path that grew most.
	 */
	short_window = n < PS_V_MIN_POINTS || rep->secs < PS_V_MIN_SECS;
	for (size_t p = 0; p < np; p++) {
		const struct ps_vpath *pp = &v->paths[p];

		if (pp->st.state < PS_V_PLATEAU)
			continue;
		if (!best || (!short_window && pp->st.state > best->st.state) ||
		    ((short_window || pp->st.state == best->st.state) &&
		     pp->st.growth > best->st.growth))
			best = pp;
	}
	if (best && best->st.state >= v->st.state) {
		if (best->st.state > v->st.state) {
			v->st = best->st;
			v->confirmed_by = best->confirmed_by;
		}
		v->path = best->name;
		v->tag = best->top;
		v->tag_share = best->st.growth > 0 ? (double)best->top_growth / best->st.growth : 0;
	} else if (v->st.state >= PS_V_PLATEAU) {
		/* a domain-wide state on no one path: the path holding most of the growth */
		int64_t most = 0;

		for (size_t p = 0; p < np; p++)
			if (v->paths[p].st.peak > most && 2 * v->paths[p].st.peak >= v->st.peak) {
				most = v->paths[p].st.peak;
				v->path = v->paths[p].name;
				v->tag = v->paths[p].top;
				v->tag_share = (double)v->paths[p].top_growth / (double)most;
			}
	}
	if (v->tag_share > 1)
		v->tag_share = 1;
	summarise(v, rep);
	e = 0;
out:
	free(pidx);
	free(wk.t);
	free(wk.y);
	free(wk.ct);
	free(wk.cy);
	free(wk.sum);
	free(wk.home);
	free(wk.slab);
	free(wk.slab_shown);
	free(wk.io);
	return e;
}

const char *ps_row_trend(const struct ps_report *rep, const struct ps_report_row *w,
			 double min_rate)
{
	static const char *const words[] = { "flat", "plateau", "rising", "steady" };
	size_t n = rep->to - rep->from + 1;
	double *t = malloc(n * sizeof(*t)), *y = malloc(n * sizeof(*y)), *io;
	struct ps_vstat st = { .state = PS_V_STABLE };

	if (t && y && !workload_clock(rep, &io)) {
		for (size_t i = 0; i < n; i++) {
			t[i] = rep->run->intervals[rep->from + i].t_ns / 1e9;
			y[i] = (double)ps_row_live(rep, w, rep->from + i);
		}
		if (ps_vstat_series_io(t, io, y, n, min_rate, true, &st))
			st.state = PS_V_STABLE;
		free(io);
	}
	free(t);
	free(y);
	if (st.state == PS_V_GROWING && st.why && !strcmp(st.why, "window too short"))
		return "rising";
	return words[st.state];
}
