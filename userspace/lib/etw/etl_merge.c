// SPDX-License-Identifier: GPL-2.0
/*
 * Time order (PS_ETL_ORDERED): the per-processor merge.
 *
 * Each buffer belongs to one processor (ProcessorIndex); a processor's events are in time order
 * within a buffer, and its buffers follow each other in SequenceNumber order, which is not file
 * order (processors interleave, and a circular file wraps). So the reader first reads every
 * buffer header (an index of offsets, no data), queues each processor's buffers by
 * SequenceNumber (file position breaking ties), then holds one decoded buffer per processor and
 * hands out the event with the lowest timestamp of the processors' next events (a k-way merge).
 * A buffer whose ProcessorIndex is MAX_CPUS or more is skipped and reported. Memory is one buffer
 * per processor and the index, never the file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/lib/etw/etl_internal.h"

#define MAX_CPUS 4096

static int cmp_ref(const void *a, const void *b, void *arg)
{
	const struct bufref *refs = arg;
	const struct bufref *x = &refs[*(const uint32_t *)a], *y = &refs[*(const uint32_t *)b];

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int build_index(struct ps_etl *e)
{
	uint64_t off = 0;
	uint32_t cap = 0;
	uint32_t maxcpu = 0;

	for (uint32_t i = 0;; i++) {
		struct bufref ref;
		struct acct a = { 0 };
		int r = ps_etl__read_ref(e, &a, off, i, &ref);

		ps_etl__acct_apply(e, &a);
		if (r <= 0)
			break;
		if (e->nrefs == cap) {
			cap = cap ? cap * 2 : 256;
			struct bufref *n = realloc(e->refs, cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			e->refs = n;
		}
		if (ref.cpu >= MAX_CPUS) {
			ps_etl__problem(e, off, "buffer %u: ProcessorIndex %u is impossible; buffer "
					"skipped", i, ref.cpu);
		} else {
			e->refs[e->nrefs++] = ref;
			if (ref.cpu + 1u > maxcpu)
				maxcpu = ref.cpu + 1u;
		}
		off += ref.size;
	}
	e->ncpus = maxcpu;
	e->cpus = calloc(maxcpu ? maxcpu : 1, sizeof(*e->cpus));
	if (!e->cpus)
		return -ENOMEM;
	for (uint32_t i = 0; i < e->nrefs; i++)
		e->cpus[e->refs[i].cpu].nq++;
	for (uint32_t c = 0; c < maxcpu; c++) {
		e->cpus[c].q = malloc((e->cpus[c].nq ? e->cpus[c].nq : 1) * sizeof(uint32_t));
		if (!e->cpus[c].q)
			return -ENOMEM;
		e->cpus[c].nq = 0;
	}
	for (uint32_t i = 0; i < e->nrefs; i++) {
		struct cursor *c = &e->cpus[e->refs[i].cpu];
		c->q[c->nq++] = i;
	}
	for (uint32_t c = 0; c < maxcpu; c++)
		qsort_r(e->cpus[c].q, e->cpus[c].nq, sizeof(uint32_t), cmp_ref, e->refs);
	return 0;
}

/* Makes c->ev the next event of processor c, loading buffers as needed. */
static void cpu_advance(struct ps_etl *e, struct cursor *c)
{
	c->have_ev = false;
	for (;;) {
		if (cursor_next(e, NULL, c, &c->ev)) {
			c->have_ev = true;
			return;
		}
		if (c->qpos >= c->nq)
			return;
		struct acct a = { 0 };
		ps_etl__load_buffer(e, &a, c, &e->refs[c->q[c->qpos++]], &e->cbuf, &e->ccap);
		ps_etl__acct_apply(e, &a);
	}
}

static void peek(struct ps_etl *e, const struct cursor *c)
{
	if (e->peek && c->have_ev)
		e->peek(e->peek_arg, &c->ev);
}

void ps_etl_set_peek(struct ps_etl *e, void (*fn)(void *arg, const struct ps_etl_event *ev),
		     void *arg)
{
	e->peek = fn;
	e->peek_arg = arg;
	for (uint32_t c = 0; c < e->ncpus; c++)
		peek(e, &e->cpus[c]);
}

int ps_etl__merge_open(struct ps_etl *e)
{
	int r = build_index(e);

	if (r < 0)
		return r;
	for (uint32_t c = 0; c < e->ncpus; c++)
		cpu_advance(e, &e->cpus[c]);
	return 0;
}

int ps_etl__merge_next(struct ps_etl *e, struct ps_etl_event *ev)
{
	struct cursor *best = NULL;
	for (uint32_t c = 0; c < e->ncpus; c++) {
		struct cursor *k = &e->cpus[c];
		if (k->have_ev && (!best || k->ev.ts < best->ev.ts))
			best = k;
	}
	if (!best)
		return 0;
	*ev = best->ev;
	/*
	 * The event points into best->mem. The processor's next event in the same buffer leaves
	 * those bytes as they are until the next call; loading its next buffer would overwrite
	 * them, so then the event is copied aside first.
	 */
	/* the room to copy it is made first: a failure then leaves the cursor where it was */
	if (ps_etl__ensure(&e->cur.mem, &e->cur.cap, ev->size) < 0)
		return -ENOMEM;
	if (!cursor_next(e, NULL, best, &best->ev)) {
		memcpy(e->cur.mem, ev->raw, ev->size);
		ev->payload = e->cur.mem + (ev->payload - ev->raw);
		if (ev->guid)
			ev->guid = e->cur.mem + (ev->guid - ev->raw);
		ev->raw = e->cur.mem;
		cpu_advance(e, best);
	}
	peek(e, best);
	e->st.events++;
	return 1;
}
