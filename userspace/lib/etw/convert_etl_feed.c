// SPDX-License-Identifier: GPL-2.0
/*
 * The converter's feed: the .etl's events in time order, handed to the driver in batches of
 * records (convert_etl_internal.h). Pool allocations and frees are decoded here into fixed
 * 56-byte records: what the driver needs of them and nothing else. The other events the driver
 * handles (stack walks, images, processes, pool events too short to decode) are copied whole.
 * Every other event is only counted. A change in the reader's drop and problem counts is a
 * record of its own, placed before the event after which the reader reported it, so that each
 * interval the driver closes sees the counts a single pass would have seen there.
 *
 * Where a helper thread may be used (ps_conv_feed_threaded()) the feed runs on it: reading,
 * decompressing, merging and decoding on one processor, the driver's table work on another.
 * Batches keep the hand-over to one lock per batch and the records small. The reader then
 * starts no read-ahead helper of its own: a third thread on two processors measured slower on
 * compressed files than the feed's thread decompressing as well. Otherwise the driver fills
 * each batch itself when it needs one. Either way the driver sees the same records in the
 * same order.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/lib/etw/convert_etl_internal.h"
#include "userspace/lib/etw/etwkernel.h"

#define NBATCH		4
#ifndef PS_FEED_BATCH_BYTES
#define PS_FEED_BATCH_BYTES	(256u * 1024)	/* the convert fuzzer's build makes it smaller */
#endif
#define BATCH_BYTES	PS_FEED_BATCH_BYTES
#define THREAD_MIN_FILE	(1u << 20)
_Static_assert(BATCH_BYTES >= sizeof(struct feed_stats) + sizeof(struct feed_event) + 65536,
	       "an empty batch holds the largest event");

struct feed {
	struct ps_etl *e;
	const struct ps_etl_stats *st;	/* the reader's, kept up to date by it */
	const struct ps_convert_opts *o;
	uint64_t events;
	struct feed_stats last;		/* the counts as last recorded */
	struct ps_etl_event pend;	/* read, but did not fit in the batch it was read for */
	bool have_pend, ended;
	int end_r;			/* ps_etl_next()'s last return, or -EMSGSIZE */

	struct feed_batch b[NBATCH];
	unsigned head, nfull;		/* the next batch to hand out; batches filled, not taken */
	bool threaded, stop, done;	/* done: the thread touches the reader no more */
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t filled, freed;
};

bool ps_conv_feed_threaded(const char *path)
{
	const char *env = getenv("POOLSCOPE_ETL_THREADS");
	struct stat st;

	if (env && *env)
		return strtol(env, NULL, 10) > 0;
	return !stat(path, &st) && st.st_size >= THREAD_MIN_FILE &&
	       sysconf(_SC_NPROCESSORS_ONLN) > 1;
}

/* n bytes at the end of b; NULL when b has not that much room left. */
static void *room(struct feed_batch *b, size_t n)
{
	if (b->len + n > b->cap)
		return NULL;
	void *p = b->mem + b->len;
	b->len += n;
	return p;
}

static inline bool is_pool(const struct ps_etl_event *ev)
{
	return ev->kernel && ev->group == PS_ETW_GROUP_POOL && ev->type >= PS_ETW_POOL_ALLOC &&
	       ev->type <= PS_ETW_POOL_FREE_SESSION;
}

static bool wanted(const struct ps_etl_event *ev)
{
	if (!ev->kernel)
		return false;
	switch (ev->group) {
	case PS_ETW_GROUP_POOL:
		return is_pool(ev);
	case PS_ETW_GROUP_STACKWALK:
		return true;
	case PS_ETW_GROUP_IMAGE:
		return ev->type == PS_ETW_IMAGE_UNLOAD || ev->type == PS_ETW_IMAGE_DCSTART ||
		       ev->type == PS_ETW_IMAGE_DCEND || ev->type == PS_ETW_IMAGE_LOAD;
	case PS_ETW_GROUP_PROCESS:
		return ev->type == PS_ETW_PROCESS_IMAGE_LOAD || ev->type == PS_ETW_PROCESS_START ||
		       ev->type == PS_ETW_PROCESS_DCSTART;
	}
	return false;
}

/*
 * ev as a record in b: 1, or 0 when it does not fit (b is then as it was). An empty batch holds
 * any event: an event's size is a 16-bit field.
 */
static int put_event(struct feed *f, struct feed_batch *b, const struct ps_etl_event *ev)
{
	const struct ps_etl_stats *st = f->st;
	size_t mark = b->len;

	if (st->flag_events_lost != f->last.flag_events_lost ||
	    st->flag_buffer_lost != f->last.flag_buffer_lost || st->problems != f->last.problems) {
		struct feed_stats *s = room(b, sizeof(*s));
		if (!s)
			return 0;
		*s = (struct feed_stats){ .kind = FEED_STATS, .size = sizeof(*s),
					  .flag_events_lost = st->flag_events_lost,
					  .flag_buffer_lost = st->flag_buffer_lost,
					  .problems = st->problems };
	}
	if (is_pool(ev) && ev->payload_len >= ps_conv_pool_need(ev)) {
		struct feed_pool *p = room(b, sizeof(*p));
		if (!p)
			goto undo;
		const uint8_t *d = ev->payload;
		unsigned w = ev->ptr_size;
		bool session = ps_conv_pool_session(ev->type);
		*p = (struct feed_pool){
			.kind = FEED_POOL, .type = ev->type, .cpu = ev->cpu,
			.rawtag = ps_rd32(d + 4), .ptype = ps_rd32(d),
			.ts = ev->ts, .entry = ps_rdptr(d + 8 + w, w), .nbytes = ps_rdptr(d + 8, w),
			.off = ev->file_off + ev->buf_off,
			.sess = session ? ps_rd32(d + 8 + 2 * w) : NOSESSION,
			.tid = ev->has_tid ? ev->tid : NOSESSION,
			.pid = ev->has_tid ? ev->pid : NOSESSION,
		};
	} else {
		size_t n = (sizeof(struct feed_event) + ev->size + 7) & ~(size_t)7;
		struct feed_event *r = room(b, n);
		if (!r)
			goto undo;
		r->kind = FEED_EVENT;
		r->size = (uint32_t)n;
		r->ev = *ev;
		r->payload_off = (uint32_t)(ev->payload - ev->raw);
		r->guid_off = ev->guid ? (uint32_t)(ev->guid - ev->raw) : UINT32_MAX;
		memcpy(r + 1, ev->raw, ev->size);
	}
	f->last.flag_events_lost = st->flag_events_lost;
	f->last.flag_buffer_lost = st->flag_buffer_lost;
	f->last.problems = st->problems;
	return 1;
undo:
	b->len = mark;
	return 0;
}

/* Fills b from the reader: until it is full or the reader is at its end (or failed). */
static void fill(struct feed *f, struct feed_batch *b)
{
	const struct ps_convert_opts *o = f->o;
	struct ps_etl_event ev;
	int r = 1;

	b->len = 0;
	if (f->have_pend) {
		f->have_pend = false;
		if (!put_event(f, b, &f->pend)) {
			r = -EMSGSIZE;		/* larger than a batch: not an event the reader gives */
			goto end;
		}
	}
	while (b->len + sizeof(struct feed_pool) + sizeof(struct feed_stats) <= b->cap) {
		/*
		 * Events the converter does not use take no room: a file of them fills no batch,
		 * so a converter that failed is not kept waiting until the end of the file.
		 */
		if (!(f->events & 0xfff) && __atomic_load_n(&f->stop, __ATOMIC_RELAXED))
			return;
		r = ps_etl_next(f->e, &ev);
		if (r <= 0)
			goto end;
		f->events++;
		if (o->progress && !(f->events & 0xffff))
			o->progress(o->progress_arg, f->st->bytes_read, f->st->file_size,
				    f->events);
		if (!wanted(&ev))
			continue;
		if (!put_event(f, b, &ev)) {
			/* its bytes stay valid until the next ps_etl_next() */
			f->pend = ev;
			f->have_pend = true;
			return;
		}
	}
	return;
end:
	f->end_r = r;
	f->ended = true;
}

static void *feeder(void *arg)
{
	struct feed *f = arg;

	pthread_mutex_lock(&f->lock);
	while (!f->ended) {
		while (!f->stop && f->nfull == NBATCH)
			pthread_cond_wait(&f->freed, &f->lock);
		if (f->stop)
			break;
		struct feed_batch *b = &f->b[(f->head + f->nfull) % NBATCH];
		pthread_mutex_unlock(&f->lock);
		fill(f, b);
		pthread_mutex_lock(&f->lock);
		f->nfull++;
		pthread_cond_signal(&f->filled);
	}
	f->done = true;
	pthread_cond_signal(&f->filled);
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

int ps_conv_feed_open(struct feed **out, struct ps_etl *e, const struct ps_convert_opts *o,
		      bool thread)
{
	struct feed *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->e = e;
	f->st = ps_etl_stats(e);
	f->o = o;
	for (unsigned i = 0; i < (thread ? NBATCH : 1u); i++) {
		f->b[i].mem = malloc(BATCH_BYTES);
		if (!f->b[i].mem) {
			ps_conv_feed_close(f, NULL);
			return -ENOMEM;
		}
		f->b[i].cap = BATCH_BYTES;
	}
	if (thread) {
		pthread_mutex_init(&f->lock, NULL);
		pthread_cond_init(&f->filled, NULL);
		pthread_cond_init(&f->freed, NULL);
		f->threaded = !pthread_create(&f->th, NULL, feeder, f);
		if (!f->threaded) {
			/* no thread to be had: the driver fills the batches itself */
			pthread_mutex_destroy(&f->lock);
			pthread_cond_destroy(&f->filled);
			pthread_cond_destroy(&f->freed);
		}
	}
	*out = f;
	return 0;
}

const struct feed_batch *ps_conv_feed_next(struct feed *f)
{
	struct feed_batch *b;

	if (!f->threaded) {
		b = &f->b[0];
		if (f->ended)
			return NULL;
		fill(f, b);
		return b;
	}
	pthread_mutex_lock(&f->lock);
	while (!f->nfull && !f->done)
		pthread_cond_wait(&f->filled, &f->lock);
	b = f->nfull ? &f->b[f->head] : NULL;
	pthread_mutex_unlock(&f->lock);
	return b;
}

void ps_conv_feed_done(struct feed *f)
{
	if (!f->threaded)
		return;
	pthread_mutex_lock(&f->lock);
	f->head = (f->head + 1) % NBATCH;
	f->nfull--;
	pthread_cond_signal(&f->freed);
	pthread_mutex_unlock(&f->lock);
}

int ps_conv_feed_end(const struct feed *f, uint64_t *events)
{
	*events = f->events;
	return f->end_r;
}

void ps_conv_feed_close(struct feed *f, uint64_t *events)
{
	if (!f)
		return;
	if (f->threaded) {
		pthread_mutex_lock(&f->lock);
		__atomic_store_n(&f->stop, true, __ATOMIC_RELAXED);
		pthread_cond_signal(&f->freed);
		pthread_mutex_unlock(&f->lock);
		pthread_join(f->th, NULL);
		pthread_mutex_destroy(&f->lock);
		pthread_cond_destroy(&f->filled);
		pthread_cond_destroy(&f->freed);
	}
	if (events)
		*events = f->events;
	for (unsigned i = 0; i < NBATCH; i++)
		free(f->b[i].mem);
	free(f);
}
