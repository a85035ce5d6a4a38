/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verdict: does the memory of one domain (by default the kernel's own, which it cannot
 * reclaim) keep growing, on which path, confirmed by which counter. docs/analysis.md states the
 * rule and why each threshold is what it is.
 *
 * One series (a path's or the domain's live bytes, frees on untraced paths taken out, caches
 * with a bounded object lifetime left out while the window is shorter than it) gets a state:
 *   leak     grows steadily to the end: Mann-Kendall p < PS_V_P_LEAK (PS_V_P_LEAK_MONOTONE
 *            when it never gave back much of its growth), Theil-Sen rate and
 *            growth above the floors, the last piece of a two-piece fit still rising at least
 *            half as fast, long enough, and the counter that holds this memory (SUnreclaim,
 *            socket memory, NonPagedPool, ...) grew at least half as much with a rising trend
 *   growing  rises, but too short, too noisy or not confirmed to call it a leak
 *   plateau  grew by more than the floor, then stopped (or fell back)
 *   stable   none of that
 */
#ifndef PS_ANALYSIS_VERDICT_H
#define PS_ANALYSIS_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"

enum ps_vstate { PS_V_STABLE, PS_V_PLATEAU, PS_V_GROWING, PS_V_LEAK };

/* Floors and levels (docs/analysis.md, "The verdict"). */
/*
 * The smallest leak poolscope promises to call is 1 MiB/min over a 30 s recording: 17.5 KiB/s
 * and 512 KiB. The floors are 70% of that, room for the noise of a busy machine around a leak
 * of exactly that size, and above the bounded drifts of a healthy one (regions of a DAMON
 * monitor, per-CPU caches filling).
 */
#define PS_V_MIN_RATE		(12.0 * 1024)	/* bytes/s */
#define PS_V_MIN_GROWTH		(360 * 1024)	/* bytes over the window */
#define PS_V_MIN_PER_IO		0.1		/* bytes per IO, with workload rows */
#define PS_V_P_LEAK		0.001
/*
 * A leak accumulates: it may pause, but it gives little back. A series that never fell by more
 * than PS_V_MAX_DRAWDOWN of its growth from an earlier peak needs only p < PS_V_P_LEAK_MONOTONE:
 * the autocorrelation correction makes bursty leaks (a burst, a pause, a burst) look like noise,
 * while a random walk gives back about as much as it gains.
 */
#define PS_V_P_LEAK_MONOTONE	0.01
#define PS_V_MAX_DRAWDOWN	0.25
/*
 * Memory that wanders (a random walk: allocations and frees that balance on average) changes
 * by as much up as down, and over a short window it can still rise far and significantly. A
 * leak's rises outweigh its falls: more of them, or larger ones (a staircase of sampled steps
 * with small noise between). The Wilcoxon signed-rank test of the interval-to-interval changes
 * must reject "symmetric about 0" at this level.
 */
#define PS_V_P_SIGNS		0.005
#define PS_V_P_GROWING		0.05
/*
 * A leak keeps allocating; an event (a program loading its maps, a cache filling on first use)
 * allocates once, in one interval or a few. Growth of which a tenth of the window (at least two
 * intervals) brought more than this share is an event, even when it comes last and nothing
 * shows yet whether it stops. A steady leak brings a tenth of its growth in a tenth.
 */
#define PS_V_MAX_JUMP		0.5
/*
 * The same for a burst over a few intervals: a leak that keeps allocating puts about half of its
 * growth in each half of the window. Growth of which the first half holds less than this share
 * came late: an event, or a leak that has just begun, and a longer recording tells which.
 */
#define PS_V_MIN_FIRST_HALF	0.2
/*
 * The shape tests take a running median over a tenth of the window each side, at most this
 * many intervals: bursts of in-flight memory last seconds, and the cost stays linear in a long
 * trace's intervals.
 */
#define PS_V_BURST_MAX		64
#define PS_V_MIN_POINTS		10
#define PS_V_MIN_SECS		19.5	/* 20 s, less what a timer slack shaves off */
#define PS_V_CONFIRM_SHARE	0.5		/* of the growth, shown by the counter */

const char *ps_vstate_name(enum ps_vstate s);

/* What the rule found for one series. */
struct ps_vstat {
	enum ps_vstate state;
	int64_t growth;		/* end - start */
	int64_t peak;		/* max - start */
	int64_t drawdown;	/* largest fall from an earlier maximum */
	double rate;		/* Theil-Sen, bytes/s */
	double per_io;		/* Theil-Sen against the workload's IOs, bytes/IO, when their
				   line fits better than the line in time; else 0 */
	double late_rate;	/* slope after the break of the two-piece fit (rate when none),
				   on the series without its bursts */
	double p;		/* Mann-Kendall one-sided p of "rises" (1 when not computed) */
	double p_signs;		/* signed-rank test of the changes: p of "as much up as down" */
	const char *why;	/* why not a leak, or NULL */
};

/*
 * The state of n points (t in seconds, strictly increasing; y in bytes) against the floors
 * (min_rate bytes/s). confirmed: the ground truth grew with it (only a confirmed series can be a
 * leak). Pure; -ENOMEM.
 */
int ps_vstat_series(const double *t, const double *y, size_t n, double min_rate, bool confirmed,
		    struct ps_vstat *out);
/* The same with io, the workload's IOs done by each point (non-decreasing), or NULL. */
int ps_vstat_series_io(const double *t, const double *io, const double *y, size_t n,
		       double min_rate, bool confirmed, struct ps_vstat *out);

#define PS_V_PATHS_MAX 16

struct ps_vpath {
	char name[PS_PATH_NAME_MAX];	/* "network", "file-services", "other", "unknown" */
	struct ps_vstat st;
	const struct ps_report_row *top;	/* its first suspect */
	int64_t top_growth;
	const char *confirmed_by;
};

struct ps_verdict {
	const char *domain;		/* PS_DOMAIN_* */
	struct ps_vstat st;		/* of the whole domain */
	const char *path;		/* the path the state is on, NULL: none or spread */
	const struct ps_report_row *tag;/* the first suspect, NULL */
	double tag_share;		/* of the path's growth, 0..1 */
	const char *confirmed_by;	/* counter name, NULL */
	int64_t confirm_growth;		/* its growth over the window */
	double min_rate;		/* the rate floor used, bytes/s */
	double iops;			/* workload IOs per second, 0 without workload rows */
	int64_t untraced_removed;	/* growth taken out for untraced frees */
	int64_t bounded_left_out;	/* growth of lifetime-bounded caches left out */
	size_t npaths;
	struct ps_vpath paths[PS_V_PATHS_MAX];
	char summary[512];		/* the one sentence */
};

/*
 * Bytes per IO of the verdict's state, 0 without IOs: its slope against the workload's IOs when
 * their line fits better (a leak per IO under a drifting IO rate), else its rate over the IO rate.
 */
double ps_verdict_per_io(const struct ps_verdict *v);

/*
 * The trend of one row over the window with the verdict's floor, as a word for the table:
 * "steady" (rises steadily to the end), "rising", "plateau", "flat". A row is never called a
 * leak on its own: only a path or the domain, with the counter that confirms it.
 */
const char *ps_row_trend(const struct ps_report *rep, const struct ps_report_row *w,
			 double min_rate);

/* The verdict for domain (NULL: all domains) over the report's window. 0, -ENOMEM. */
int ps_verdict_build(struct ps_verdict *v, const struct ps_report *rep, const char *domain);

#endif
