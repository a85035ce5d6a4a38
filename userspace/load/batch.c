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
