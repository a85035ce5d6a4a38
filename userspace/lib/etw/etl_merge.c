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
 *
 * Read-ahead: in a compressed file of 1 MiB or more, one helper thread reads and
 * decompresses each processor's next buffer while the merge walks its current one, so that the
 * XPRESS decoding leaves the thread that hands out the events. Memory is then two buffers per
 * processor. The merge takes a buffer from the helper when it needs it, in the same order as it
 * would read it itself, and applies its statistics and problems then: they come out as without
 * the helper. Where the thread cannot start, the merge reads the buffers itself.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/lib/etw/etl_internal.h"

#define MAX_CPUS 4096

enum { RA_IDLE, RA_QUEUED, RA_READY };

/* A processor's next buffer: queued for the helper, loaded by it, taken by the merge. */
struct ra_slot {
	struct cursor buf;		/* mem, cap, end, pos, ref, loaded */
	struct acct a;			/* what loading it found, applied when it is taken */
	uint32_t refi;			/* the buffer: e->refs[refi] */
	int state;
};

struct readahead {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work;		/* the helper waits: a slot queued, or stop */
	pthread_cond_t ready;		/* the merge waits: a slot loaded */
	bool stop;
	uint32_t *queue, head, n;	/* queued processors, a ring of ncpus */
	struct ra_slot *slots;		/* one per processor */
	uint8_t *cbuf;			/* the helper's compressed bytes */
	size_t ccap;
};

static void *ra_main(void *arg)
{
	struct ps_etl *e = arg;
	struct readahead *ra = e->ra;

	pthread_mutex_lock(&ra->lock);
	for (;;) {
		while (!ra->stop && !ra->n)
			pthread_cond_wait(&ra->work, &ra->lock);
		if (ra->stop)
			break;
		struct ra_slot *sl = &ra->slots[ra->queue[ra->head]];

		ra->head = (ra->head + 1) % e->ncpus;
		ra->n--;
		/* the slot is the helper's until it says READY: the merge waits for it */
		pthread_mutex_unlock(&ra->lock);
		memset(&sl->a, 0, sizeof(sl->a));
		ps_etl__load_buffer(e, &sl->a, &sl->buf, &e->refs[sl->refi], &ra->cbuf, &ra->ccap);
		pthread_mutex_lock(&ra->lock);
		sl->state = RA_READY;
		pthread_cond_broadcast(&ra->ready);
	}
	pthread_mutex_unlock(&ra->lock);
	return NULL;
}

static void ra_free(struct ps_etl *e)
{
	struct readahead *ra = e->ra;

	for (uint32_t c = 0; c < e->ncpus; c++)
		free(ra->slots[c].buf.mem);
	free(ra->slots);
	free(ra->queue);
	free(ra->cbuf);
	free(ra);
	e->ra = NULL;
}

/*
 * Starts the helper where a helper thread may be used (ps_etl__helpers(): a compressed file of
 * 1 MiB or more, or POOLSCOPE_ETL_THREADS) and some processor has a buffer after its first;
 * without it (no memory, no thread) the merge reads alone.
 */
static void ra_start(struct ps_etl *e)
{
	struct readahead *ra;

	if ((e->flags & PS_ETL_NO_HELPER) || ps_etl__helpers(e) <= 0 || e->nrefs <= e->ncpus)
		return;
	ra = calloc(1, sizeof(*ra));
	if (!ra)
		return;
	e->ra = ra;
	ra->slots = calloc(e->ncpus, sizeof(*ra->slots));
	ra->queue = calloc(e->ncpus, sizeof(*ra->queue));
	if (!ra->slots || !ra->queue) {
		ra_free(e);
		return;
	}
	pthread_mutex_init(&ra->lock, NULL);
	pthread_cond_init(&ra->work, NULL);
	pthread_cond_init(&ra->ready, NULL);
	if (pthread_create(&ra->thread, NULL, ra_main, e)) {
		pthread_cond_destroy(&ra->ready);
		pthread_cond_destroy(&ra->work);
		pthread_mutex_destroy(&ra->lock);
		ra_free(e);
	}
}

void ps_etl__merge_close(struct ps_etl *e)
{
	struct readahead *ra = e->ra;

	if (!ra)
		return;
	pthread_mutex_lock(&ra->lock);
	ra->stop = true;
	pthread_cond_signal(&ra->work);
	pthread_mutex_unlock(&ra->lock);
	pthread_join(ra->thread, NULL);
	pthread_cond_destroy(&ra->ready);
	pthread_cond_destroy(&ra->work);
	pthread_mutex_destroy(&ra->lock);
	ra_free(e);
}

/* Queues processor cpu's buffer e->refs[refi] for the helper. */
static void ra_queue(struct ps_etl *e, uint32_t cpu, uint32_t refi)
{
	struct readahead *ra = e->ra;
	struct ra_slot *sl = &ra->slots[cpu];

	pthread_mutex_lock(&ra->lock);
	sl->refi = refi;
	sl->state = RA_QUEUED;
	ra->queue[(ra->head + ra->n) % e->ncpus] = cpu;
	ra->n++;
	pthread_cond_signal(&ra->work);
	pthread_mutex_unlock(&ra->lock);
}

/*
 * Makes c the buffer the helper loaded for processor cpu (waiting for it if need be) and its
 * accounting *a; false when nothing was queued for cpu.
 */
static bool ra_take(struct ps_etl *e, uint32_t cpu, struct cursor *c, struct acct *a)
{
	struct readahead *ra = e->ra;
	struct ra_slot *sl = &ra->slots[cpu];
	uint8_t *mem;
	size_t cap;

	pthread_mutex_lock(&ra->lock);
	if (sl->state == RA_IDLE) {
		pthread_mutex_unlock(&ra->lock);
		return false;
	}
	while (sl->state != RA_READY)
		pthread_cond_wait(&ra->ready, &ra->lock);
	sl->state = RA_IDLE;
	pthread_mutex_unlock(&ra->lock);
	/* the two buffers change places: the one walked so far is the next one's room */
	mem = c->mem;
	cap = c->cap;
	c->mem = sl->buf.mem;
	c->cap = sl->buf.cap;
	c->end = sl->buf.end;
	c->pos = sl->buf.pos;
	c->ref = sl->buf.ref;
	c->loaded = sl->buf.loaded;
	sl->buf.mem = mem;
	sl->buf.cap = cap;
	*a = sl->a;
	return true;
}

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
	uint32_t cpu = (uint32_t)(c - e->cpus);

	c->have_ev = false;
	for (;;) {
		if (cursor_next(e, NULL, c, &c->ev)) {
			c->have_ev = true;
			return;
		}
		if (c->qpos >= c->nq)
			return;
		struct acct a = { 0 };
		if (!e->ra || !ra_take(e, cpu, c, &a))
			ps_etl__load_buffer(e, &a, c, &e->refs[c->q[c->qpos]], &e->cbuf, &e->ccap);
		c->qpos++;
		ps_etl__acct_apply(e, &a);
		if (e->ra && c->qpos < c->nq)
			ra_queue(e, cpu, c->q[c->qpos]);
	}
}

int ps_etl__merge_open(struct ps_etl *e)
{
	int r = build_index(e);

	if (r < 0)
		return r;
	ra_start(e);
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
	e->st.events++;
	return 1;
}
