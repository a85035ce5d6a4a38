// SPDX-License-Identifier: GPL-2.0
/*
 * The sums a run may hold (trace.h, PS_TRACE_SUM_MAX). The analysis adds values up in int64
 * across tags, names, stacks and intervals; one row can be checked as it is read, but thousands
 * of rows each within 2^52 are not within 2^63. So the values one sum of the analysis can meet
 * are bounded together: per interval for what is a state (live bytes and objects over all tags,
 * sysstat and counters over their names, slab bytes over the caches), over the run for what is
 * counted per interval or per stack. No such sum, nor the difference of two, reaches 2^63.
 *
 * The reader checks a loaded run (so a hand-edited or foreign trace is an error, not a report
 * that wraps) and ps_run_save() checks a built one before writing it (so what is written loads).
 */
#include "userspace/lib/trace/trace.h"
#include "userspace/lib/util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

struct bsum {
	int64_t v;
	char *err;
	size_t errlen;
};

static int over(struct bsum *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int over(struct bsum *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b->err, b->errlen, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < b->errlen)
		snprintf(b->err + n, b->errlen - n, " past 2^61 (2 EiB), more than any machine holds");
	return -ERANGE;
}

/*
 * Adds |x| to the sum; false when x is beyond PS_TRACE_ABSURD or the sum passes
 * PS_TRACE_SUM_MAX. Each addend is at most 2^52 and the sum stops at 2^61: it cannot wrap.
 */
static inline bool add(struct bsum *b, int64_t x)
{
	if (x < -PS_TRACE_ABSURD || x > PS_TRACE_ABSURD)
		return false;
	b->v += x < 0 ? -x : x;
	return b->v <= PS_TRACE_SUM_MAX;
}

/* An unsigned count or size. */
static inline bool addu(struct bsum *b, uint64_t x)
{
	return x <= (uint64_t)PS_TRACE_ABSURD && add(b, (int64_t)x);
}

static int check_named(struct bsum *b, const struct ps_series *s, size_t n, uint32_t nint,
		       const char *what)
{
	for (uint32_t k = 0; k < nint; k++) {
		b->v = 0;
		for (size_t i = 0; i < n; i++)
			if (s[i].v[k] >= 0 && !add(b, s[i].v[k]))
				return over(b, "the %s of interval %" PRIu32 " add up", what, k);
	}
	return 0;
}

int ps_run_check(const struct ps_run *r, char *err, size_t errlen)
{
	struct bsum b = { .err = err, .errlen = errlen };
	int e;

	for (uint32_t k = 0; k < r->nintervals; k++) {
		b.v = 0;
		for (size_t i = 0; i < r->ntags; i++)
			if (!add(&b, r->tags[i].s[k].live_bytes) || !add(&b, r->tags[i].s[k].live_objs))
				return over(&b, "the live bytes and objects of all tags at interval %"
					    PRIu32 " add up", k);
	}
	b.v = 0;
	for (size_t i = 0; i < r->ntags; i++) {
		for (uint32_t k = 0; k < r->nintervals; k++) {
			const struct ps_sample *s = &r->tags[i].s[k];

			if (!addu(&b, s->allocs) || !addu(&b, s->frees) || !addu(&b, s->alloc_bytes) ||
			    !addu(&b, s->free_bytes))
				return over(&b, "the tags' allocs, frees and their bytes over the run "
					    "add up");
		}
	}
	e = check_named(&b, r->sys, r->nsys, r->nintervals, "sysstat values");
	e = e ?: check_named(&b, r->counters, r->ncounters, r->nintervals, "counters");
	if (e)
		return e;
	for (uint32_t k = 0; k < r->nintervals; k++) {
		b.v = 0;
		for (size_t i = 0; i < r->nslab; i++) {
			const struct ps_slab_series *ss = &r->slab[i];
			int64_t n = ss->num_objs[k] > ss->active_objs[k] ? ss->num_objs[k] :
				    ss->active_objs[k];

			/* objsize < 2^32 and n <= 2^52 / objsize: the product is within 2^52 */
			if (n > 0 && ss->objsize && (n > PS_TRACE_ABSURD / ss->objsize ||
						     !add(&b, n * (int64_t)ss->objsize)))
				return over(&b, "the slab caches' bytes at interval %" PRIu32 " add up",
					    k);
		}
	}
	b.v = 0;
	for (uint32_t k = 0; r->has_workload && k < r->nintervals; k++) {
		const struct ps_workload *w = &r->workload[k];

		if (!addu(&b, w->ios) || !addu(&b, w->bytes) || !addu(&b, w->errors) ||
		    !addu(&b, w->lat_p50_ns) || !addu(&b, w->lat_p99_ns) || !addu(&b, w->lat_max_ns))
			return over(&b, "the workload's counts and latencies over the run add up");
	}
	b.v = 0;
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct ps_stack *st = &r->stacks[i];

		if (!addu(&b, st->allocs) || !addu(&b, st->bytes) || !add(&b, st->live_bytes))
			return over(&b, "the stacks' counts add up");
	}
	return 0;
}
