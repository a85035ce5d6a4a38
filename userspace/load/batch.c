// SPDX-License-Identifier: GPL-2.0
/*
 * Completion accounting of one load slot. Each IO is counted in a private batch; every 5 ms
 * the batch is added to the shared cumulative counters with relaxed atomic adds, so 32 slots
 * at hundreds of thousands of IOPS do not all bounce one cache line per IO.
 */
#include "userspace/load/load.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define FLUSH_NS 5000000ull
/* --rate: how far behind a slot may fall and still catch up */
#define PACE_BACKLOG_NS 1000000000ull

uint64_t ps_load_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void atomic_max(uint64_t *p, uint64_t v)
{
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED,
						      __ATOMIC_RELAXED))
		;
}

void ps_load_flush(struct ps_load_ctl *ctl, struct ps_load_batch *b, uint64_t now_ns)
{
	struct ps_workload_shm *wl = ctl->wl;

	b->last_flush_ns = now_ns;
	if (!b->dirty)
		return;
	for (unsigned i = 0; i < PS_LAT_BUCKETS; i++) {
		if (b->hist[i]) {
			__atomic_fetch_add(&wl->lat_hist[i], b->hist[i], __ATOMIC_RELAXED);
			b->hist[i] = 0;
		}
	}
	atomic_max(&wl->lat_max_ns, b->max_ns);
	atomic_max(&ctl->interval_max_ns, b->max_ns);
	__atomic_fetch_add(&wl->bytes, b->bytes, __ATOMIC_RELAXED);
	__atomic_fetch_add(&wl->errors, b->errors, __ATOMIC_RELAXED);
	/* ios last: a reader that sees the IOs also sees their bytes and histogram */
	__atomic_fetch_add(&wl->ios, b->ios, __ATOMIC_RELEASE);
	b->ios = b->bytes = b->errors = b->max_ns = 0;
	b->dirty = false;
}

void ps_load_record(struct ps_load_ctl *ctl, struct ps_load_batch *b, uint64_t lat_ns,
		    uint64_t bytes, bool ok, uint64_t now_ns)
{
	if (ok) {
		b->ios++;
		b->bytes += bytes;
		b->hist[ps_lat_bucket(lat_ns)]++;
		if (lat_ns > b->max_ns)
			b->max_ns = lat_ns;
	} else {
		b->errors++;
	}
	b->dirty = true;
	if (now_ns - b->last_flush_ns >= FLUSH_NS)
		ps_load_flush(ctl, b, now_ns);
}

void ps_load_slot_fail(struct ps_load_slot *s, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
	va_end(ap);
	s->err = err;
	__atomic_store_n(&s->state, PS_SLOT_FAILED, __ATOMIC_RELEASE);
}

bool ps_load_wait_go(const struct ps_load_ctl *ctl)
{
	struct timespec ts = { 0, 1000000 };
	int go;

	while ((go = __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE)) == PS_LOAD_GO_WAIT)
		nanosleep(&ts, NULL);
	return go == PS_LOAD_GO_RUN;
}

void ps_load_pace_init(struct ps_load_pace *p, const struct ps_load_job *j, uint64_t now_ns)
{
	unsigned n = j->ctl->nslots ? j->ctl->nslots : 1;

	p->period_ns = j->o->rate ? (uint64_t)n * 1000000000ull / j->o->rate : 0;
	if (!p->period_ns && j->o->rate)
		p->period_ns = 1;
	p->next_ns = now_ns + p->period_ns / n * j->slot;
}

uint64_t ps_load_pace_due(struct ps_load_pace *p, uint64_t now_ns)
{
	if (!p->period_ns)
		return 0;
	if (p->next_ns > now_ns)
		return p->next_ns - now_ns;
	if (now_ns - p->next_ns > (p->period_ns > PACE_BACKLOG_NS ? p->period_ns : PACE_BACKLOG_NS))
		p->next_ns = now_ns;
	p->next_ns += p->period_ns;
	return 0;
}

bool ps_load_pace_wait(struct ps_load_pace *p, const struct ps_load_ctl *ctl)
{
	for (;;) {
		uint64_t d = ps_load_pace_due(p, ps_load_now_ns());
		struct timespec ts;

		if (!d)
			return true;
		if (!ps_load_running(ctl))
			return false;
		/* in steps, so that a stop is seen within 50 ms whatever the period */
		if (d > 50000000ull)
			d = 50000000ull;
		ts.tv_sec = (time_t)(d / 1000000000ull);
		ts.tv_nsec = (long)(d % 1000000000ull);
		nanosleep(&ts, NULL);
	}
}
