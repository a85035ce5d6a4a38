/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure analysis over an in-memory run (struct ps_run): attribution rules (rules.c, loaded from
 * a data file, analysis/rules/default.rules), growth statistics per tag (growth.c: least
 * squares rate, R², share of intervals that grew, leak score), the slabinfo cross-check
 * (slabinfo.c), the ranked report (report.c, rank.c) and its formats (format_*.c). A tag's
 * name: label.h; two runs compared: diff.h. No SQLite here: tests build runs in memory.
 * docs/analysis.md documents the rules format and the score.
 */
#ifndef PS_ANALYSIS_H
#define PS_ANALYSIS_H

/* Path (class) names, "network", "file-services/smb-server", fit in this. */
#define PS_PATH_NAME_MAX 48

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "userspace/lib/trace/trace.h"
#include "analysis/label.h"

enum ps_rule_field { PS_RF_FRAME, PS_RF_SITE, PS_RF_CACHE, PS_RF_OWNER, PS_RF_COMM, PS_RF_CTX,
		     PS_RF_SRC, PS_RF__N };

struct ps_rule {
	char *cls;		/* NULL for a generic-helper rule */
	enum ps_rule_field field;
	char *pattern;
	char *module;		/* NULL: any; "-": vmlinux only */
	unsigned line;
};

/*
 * "lifetime cache|site PATTERN SECONDS": the kernel frees every object of the cache (or from the
 * call site) within SECONDS of its allocation (TIME_WAIT sockets: TCP_TIMEWAIT_LEN). Such memory
 * grows for that long under a steady load and then holds; growth over a shorter window says
 * nothing about a leak.
 */
struct ps_lifetime {
	bool site;
	char *pattern;
	unsigned secs;
	unsigned line;
};

struct ps_rules {
	char *path;
	size_t n;
	struct ps_rule *r;
	size_t nlife;
	struct ps_lifetime *life;
};

/*
 * Parses rules text (name is used in messages). On a bad line returns -PS_ERR__SYNTAX and writes
 * "name:LINE: what was expected" into err.
 */
int ps_rules_parse(struct ps_rules **out, const char *name, const char *text, char *err,
		   size_t errlen);
int ps_rules_load(struct ps_rules **out, const char *path, char *err, size_t errlen);
void ps_rules_free(struct ps_rules *rs);
/* The lifetime rules' seconds for a tag's cache or call site (either may be NULL), 0: none. */
unsigned ps_rules_lifetime(const struct ps_rules *rs, const char *cache, const char *site);
/* True when sym (without +off) is a generic allocator helper. */
bool ps_rules_is_generic(const struct ps_rules *rs, const char *sym);

struct ps_attr {
	char cls[48];		/* "unknown" when no rule matched */
	char evidence[160];	/* "frame tcp_sendmsg_locked (rule line 52)" */
	double confidence;	/* 0..1 */
	char split[160];	/* "network 70%, file-services/filesystem 30%" when stacks disagree */
};

/* Classifies a symbol with optional module (module NULL = vmlinux), frame rules only. */
const char *ps_classify_sym(const struct ps_rules *rs, const char *sym, const char *module,
			    unsigned *line);
void ps_attribute(const struct ps_rules *rs, const struct ps_run *r,
		  const struct ps_tag_series *ts, struct ps_attr *a);

/* Least squares y = a + b x. */
struct ps_fit {
	double slope;		/* per x unit */
	double r2;		/* 0..1; 1 when y is constant and slope 0 */
};
struct ps_fit ps_least_squares(const double *x, const double *y, size_t n);

struct ps_growth {
	int64_t start, end, growth;	/* live bytes at window start/end */
	double rate;			/* bytes/s, least squares */
	double r2;
	double grew_share;		/* share of intervals with live bytes increasing */
	double late_ratio;		/* slope of second half / slope of whole window */
	double score;			/* leak score 0..1, docs/analysis.md */
	uint64_t allocs, frees;
};
/* Growth over intervals [from, to] (inclusive indices) of a live-bytes series. */
void ps_growth_series(const struct ps_run *r, const int64_t *live, uint32_t from, uint32_t to,
		      bool reclaimable, struct ps_growth *g);

/*
 * Ground truth for a slab or kmalloc tag: the growth of its cache in /proc/slabinfo against what
 * the traced events did to the cache (the recorder's class counters, else the tags' growth).
 * Frees on untraced paths (kfree_rcu batches freed with kfree_bulk, sheaves, bulk APIs) make
 * tags grow while the cache does not. cache is NULL when the tag has no slabinfo line.
 */
struct ps_slab_check {
	const char *cache;		/* the name slabinfo lists (merged caches: the reported one) */
	int64_t slab_growth;		/* (active_objs end - start) x objsize */
	int64_t tracked_growth;		/* sum of the growth of the cache's tags */
	double confirm;			/* 1 - untraced bytes / tracked_growth, clamped to 0..1 */
	bool unconfirmed;		/* tracked growth large and mostly untraced frees */
};

struct ps_report_row {
	const struct ps_tag_series *ts;
	struct ps_growth g;
	struct ps_attr a;
	bool reclaimable;
	struct ps_slab_check slab;	/* slab.cache NULL: no slabinfo line for this tag */
	const char *domain;		/* PS_DOMAIN_*: ps_tag_domain() */
	int32_t fac_idx;		/* its correction series in rep->fac, -1: none */
	int64_t adj_growth;		/* growth with untraced frees and sampling excess taken out */
	int64_t untraced;		/* of that, frees on untraced paths (slab and kmalloc rows) */
	unsigned lifetime;		/* rules' lifetime of its cache in seconds, 0: none */
	bool exact_shape;		/* adj_growth and series from its class counters (shape.c) */
	double share;			/* with exact_shape: its share of them */
};

/* Page orders the sampling correction covers (0..11). */
#define PS_FAC_ORDERS 12

struct ps_report {
	const struct ps_run *run;
	uint32_t from, to;
	double secs;			/* from the end of interval from to the end of to */
	size_t nrows;
	struct ps_report_row *rows;	/* ranked, strongest suspect first */
	const char *sys_name;		/* "SUnreclaim" or "NonPagedPool" */
	int64_t sys_start, sys_end;
	int64_t tracked_growth;		/* sum of growth, slab-backing pages excluded */
	int64_t reclaimable_growth;
	int64_t drops;			/* the recorder's drops and the kernel's skipped events */
	int64_t ptr_map_full;		/* objects the recorder's pointer map could not take */
	int64_t recursion_misses;	/* events the kernel skipped (BPF re-entry) */
	/*
	 * Traces of absolute snapshots (poolmon, !poolused, sample files): the snapshots in the
	 * window (0 for other traces) and the tags first listed after the window's first snapshot,
	 * whose growth counts from their first listing (trace.h, ps_tag_series.first).
	 */
	uint32_t snapshots, listed_late;
	/*
	 * Per correction series (each slabinfo series, then each page order) and interval, the
	 * share of its tags' growth since the window start that the ground truth confirms (1 when
	 * there is nothing to correct): /proc/slabinfo for slab caches (objects freed on untraced
	 * paths), the exact class counters for page orders (pages that sampling overcounted).
	 */
	double *fac;			/* [(nslab + PS_FAC_ORDERS) * nintervals] */
	/*
	 * Per correction series and interval, its tags' growth since the window start from its
	 * exact class counters, where its rows take it (shape.c).
	 */
	double *shape;			/* [(nslab + PS_FAC_ORDERS) * nintervals], NULL: none */
	int64_t untraced_removed;	/* bytes taken out of the rows' growth that way */
	char *view_note;		/* a view's filters (view.h), printed with the rows; NULL */
};

/*
 * The system counter tracked growth is read against: SUnreclaim on Linux, NonPagedPool on
 * Windows. Sets *name; returns the series, NULL when the trace has none.
 */
const struct ps_series *ps_unreclaimable(const struct ps_run *r, const char **name);

/* Builds a report over [from_ns, to_ns] (0, UINT64_MAX: whole run). */
int ps_report_build(struct ps_report *rep, const struct ps_run *r, const struct ps_rules *rs,
		    uint64_t from_ns, uint64_t to_ns);
/*
 * The report without attribution (no rules needed, every row's a left zeroed, so not for
 * printing): the rows, their order, the totals. What the plot stacks, so its top N is the
 * report's.
 */
int ps_report_rank(struct ps_report *rep, const struct ps_run *r, uint64_t from_ns,
		   uint64_t to_ns);
void ps_report_free(struct ps_report *rep);
/*
 * The span of a trace's workload: from the end of the interval before its first IO to the end
 * of its last interval with IOs, or of the one before when the recording went on (the load
 * stopped inside that last one). False without workload rows or with under four intervals of
 * IOs. What report and diff judge by default: a load's own teardown (its connections and handles
 * closed when it exits) is not the server's behaviour under load.
 */
bool ps_run_workload_span(const struct ps_run *r, uint64_t *from_ns, uint64_t *to_ns);
/* Live bytes of every tag at interval k, slab-backing pages left out (counted by their slabs). */
int64_t ps_tracked_live(const struct ps_run *r, uint32_t k);

/*
 * Fills the rows' slab checks over the report's window and scales the leak score of the
 * unconfirmed ones (slabinfo.c).
 */
void ps_slab_checks(struct ps_report *rep);
/*
 * Takes frees on untraced paths out of the slab and kmalloc rows and the sampling excess out of
 * page rows: fills rep->fac, each row's adj_growth and rep->untraced_removed (slabinfo.c).
 * -ENOMEM.
 */
int ps_untraced_correct(struct ps_report *rep);
/*
 * A class's (slab cache, "page-order-N") cumulative byte counters from the recorder, looked up
 * once so that a loop over intervals does not search the run's counters by name each time.
 */
struct ps_class_ctrs {
	const struct ps_series *alloc, *free;
	const struct ps_series *pre;	/* frees of objects older than the recording; may be NULL */
};

/* The class counter class.CLS.FIELD (keys.h), NULL when the trace has none. */
const struct ps_series *ps_class_counter(const struct ps_run *r, const char *cls,
					 const char *field);
/*
 * How many objects one sampled object of class cls stands for: meta site_sample_rate (1
 * without), for "page-order-N" that / 2^N, at least 1.
 */
double ps_class_rate(const struct ps_run *r, const char *cls);
/* A cumulative counter's change from interval from to k (absent before its first row: 0). */
int64_t ps_counter_delta(const struct ps_series *s, uint32_t from, uint32_t k);
/* Finds cls's counters; false when the trace has no alloc and free counters for it. */
bool ps_class_ctrs(const struct ps_run *r, const char *cls, struct ps_class_ctrs *c);
/* What the traced events added to the class from interval from to k (slabinfo.c). */
int64_t ps_class_growth(const struct ps_class_ctrs *c, uint32_t from, uint32_t k);
/*
 * Bytes the class allocated since interval from that are still allocated at k: what it added,
 * frees of objects older than the recording not counted (sampled, scaled, at most the class's
 * frees and at most pre_max, the bytes that were allocated at from); false without the
 * pre-existing frees counter.
 */
bool ps_class_retained(const struct ps_class_ctrs *c, uint32_t from, uint32_t k,
		       int64_t pre_max, int64_t *out);
/*
 * Gives the rows that hold a correction series' growth their share of its exact class counters
 * in place of their own sampled steps (shape.c): their series and adj_growth. Needs the rows'
 * classes (ps_attribute); the caller ranks again. -ENOMEM.
 */
int ps_exact_shape(struct ps_report *rep);
/* A row's live bytes at interval k with the untraced frees taken out (k within the window). */
int64_t ps_row_live(const struct ps_report *rep, const struct ps_report_row *w, uint32_t k);
/*
 * A row's rate as the report shows it (RATE/s): the least-squares rate scaled as its GROWTH
 * where untraced frees or the exact counters changed it.
 */
double ps_row_rate(const struct ps_report_row *w);
/* Ranks rows, strongest suspect first, slab-backing pages last (the report's order). */
void ps_rank_rows(struct ps_report_row *rows, size_t n);

enum ps_fmt { PS_FMT_TEXT, PS_FMT_CSV, PS_FMT_JSON, PS_FMT_MD };
/* s as one CSV field: quoted, '"' doubled ("" for NULL). */
void ps_csv_str(FILE *f, const char *s);
/* "text", "csv", "json", "markdown" (or "md"); -EINVAL for another. */
int ps_fmt_parse(const char *s, enum ps_fmt *out);
struct ps_verdict;
/*
 * The report: the verdict's sentence first, then the rows of its domain (top of them, 0: all),
 * then a few of each other domain (text and markdown); csv lists rows; json has it all.
 */
int ps_report_print(FILE *f, const struct ps_report *rep, const struct ps_verdict *v,
		    enum ps_fmt fmt, size_t top);
/*
 * The words of s at most 79 columns a line (a longer word alone on its line), continuation
 * lines indented by indent + 2; the caller prints the first indent columns.
 */
void ps_print_wrapped(FILE *f, const char *s, int indent);
/*
 * The sampled stacks of the tags whose label matches glob (fnmatch), each with its part of the
 * tag's live bytes and allocations over the report's window (stackshare.h), top per tag (0:
 * all); text (and markdown), csv or json. -ENOENT when no tag matches, -ENODATA when those
 * that match hold nothing and allocated nothing in the window or are pages under slabs,
 * -ENOMEM.
 */
int ps_print_stacks(FILE *f, const struct ps_report *rep, const char *glob, size_t top,
		    enum ps_fmt fmt);
/* The verdict's paths with their states; text/csv/json. */
int ps_report_print_paths(FILE *f, const struct ps_verdict *v, enum ps_fmt fmt);

#endif
