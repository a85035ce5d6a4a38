// SPDX-License-Identifier: GPL-2.0
/*
 * ps_etl_scan(): the file-order walk on several threads, for whole-file statistics (etl.h has
 * the contract).
 *
 * The buffer chain is sequential (each BufferSize gives the next buffer's offset), and it is the
 * one shared step: a worker takes the next buffer under a lock held for its read, then
 * decompresses and walks it alone. Memory is one buffer per worker, whatever the file size.
 * Statistics are summed per worker; problems are kept with their buffer number and merged back
 * in file order, so that the result reads as a single-threaded walk's. A negative return of the
 * callback ends the scan: the other workers finish the buffer they hold and take no other.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "userspace/lib/etw/etl_internal.h"

#define MAX_HELPERS (PS_ETL_SCAN_MAX - 1)	/* ps_etl_scan() helper threads */
/* Smaller files are scanned by the calling thread alone: a thread start costs more there. */
#define SCAN_MIN_FILE (1u << 20)

/* A problem a scan worker found, with the buffer it belongs to (the merge key). */
struct kept_problem {
	uint32_t buf;
	uint32_t seq;			/* order within the worker: a buffer's problems stay in order */
	uint64_t off;
	char msg[320];
};

struct scan;

/*
 * One worker: the calling thread (w[0], which walks through e->cur so the header buffer's memory
 * is reused) or a helper. Each holds one decoded buffer and its compressed bytes, whatever the
 * file size, and sums its buffers' statistics; problems are kept with their buffer number.
 */
struct scan_worker {
	struct scan *s;
	void *arg;
	struct cursor own;
	uint8_t *own_cbuf;
	size_t own_ccap;
	struct cursor *cur;
	uint8_t **cbuf;
	size_t *ccap;
	struct acct a;			/* the buffer being walked */
	struct ps_etl_stats st;		/* this worker's buffers */
	uint32_t nprob;			/* problems, kept or not */
	unsigned nkept;
	struct kept_problem kept[MAX_PROBLEMS];	/* its first ones: buffers come in rising order */
	pthread_t thread;
} __attribute__((aligned(128)));		/* no cache line shared between workers */

struct scan {
	struct ps_etl *e;
	ps_etl_scan_fn fn;
	pthread_mutex_t lock;		/* the buffer chain (e's file-order state), stop, rc */
	bool stop;
	int rc;
	void *const *args;
	bool placed;			/* the caller is held on its processor for the scan */
	cpu_set_t allowed;		/* the caller's own mask, given back at the end */
	unsigned nworkers;
	struct scan_worker w[1 + MAX_HELPERS];
};

/*
 * The chain lock is held for one pread of a buffer: longer than the adaptive mutex spins, so
 * the waiter went to sleep, and a futex sleep and wake-up cost more than the wait they replace.
 * So spin longer first, SCAN_SPIN tries, and sleep only after that: workers sharing a processor
 * (POOLSCOPE_ETL_THREADS above the count) still get out of the holder's way.
 */
#define SCAN_SPIN 2000

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

static void scan_lock(struct scan *s)
{
	for (unsigned i = 0; i < SCAN_SPIN; i++) {
		if (!pthread_mutex_trylock(&s->lock))
			return;
		cpu_relax();
	}
	pthread_mutex_lock(&s->lock);
}

/* Moves the walked buffer's statistics and problems into the worker's totals. */
static void worker_fold(struct scan_worker *w, uint32_t buf)
{
	struct acct *a = &w->a;

	ps_etl__stats_add(&w->st, &a->st);
	for (unsigned i = 0; i < a->nprob; i++, w->nprob++) {
		if (w->nkept >= MAX_PROBLEMS)
			continue;
		struct kept_problem *k = &w->kept[w->nkept];
		k->buf = buf;
		k->seq = w->nkept++;
		k->off = a->prob[i].off;
		memcpy(k->msg, a->prob[i].msg, sizeof(k->msg));
	}
	w->nprob += a->lost;
	memset(&a->st, 0, sizeof(a->st));
	a->nprob = a->lost = 0;
}

/*
 * Takes the next buffer in file order under the lock (reading it there: the chain of BufferSize
 * fields is sequential, and one pread per buffer also brings the next header), then decodes it
 * and hands its events to fn without the lock. No waiting on other workers: the only shared
 * step is the read, so nothing spins or sleeps except on a briefly held mutex.
 */
static void scan_work(struct scan_worker *w)
{
	struct scan *s = w->s;
	struct ps_etl *e = s->e;
	ps_etl_scan_fn fn = s->fn;	/* not read per event from beside the lock's cache line */
	void *arg = w->arg;
	struct ps_etl_event ev;

	scan_lock(s);
	while (!s->stop && !e->done) {
		uint32_t index = e->next_index;
		int r = ps_etl__chain_next(e, &w->a, w->cur, w->cbuf, w->ccap);

		pthread_mutex_unlock(&s->lock);
		if (r > 0)
			ps_etl__load_finish(&w->a, w->cur, *w->cbuf);
		while (cursor_next(e, &w->a, w->cur, &ev)) {
			int rc;

			w->a.st.events++;
			rc = fn(arg, &ev);
			if (rc < 0) {
				scan_lock(s);
				if (!s->stop) {
					s->stop = true;
					s->rc = rc;
				}
				pthread_mutex_unlock(&s->lock);
				w->cur->loaded = false;
				break;
			}
		}
		worker_fold(w, index);
		scan_lock(s);
	}
	pthread_mutex_unlock(&s->lock);
}

static void *scan_helper(void *arg)
{
	scan_work(arg);
	return NULL;
}

/*
 * Starts the helpers on processors other than the caller's, and keeps the caller on its own for
 * the scan (its mask comes back at the end). Left to itself the kernel queued a new thread on
 * its parent's processor, and an idle one took it over only at its next balancing tick; and a
 * thread woken from the mutex was queued beside its waker: one worker sat idle for a good part
 * of a scan, or both shared one processor. With the masks set the workers start at once and stay
 * apart. Helpers share the other processors.
 */
static void scan_start_helpers(struct scan *s, unsigned helpers)
{
	pthread_attr_t attr, *ap = NULL;
	cpu_set_t away, here;
	int cpu = sched_getcpu();

	if (cpu >= 0 && cpu < CPU_SETSIZE &&
	    !pthread_getaffinity_np(pthread_self(), sizeof(s->allowed), &s->allowed) &&
	    CPU_ISSET(cpu, &s->allowed)) {
		away = s->allowed;
		CPU_CLR(cpu, &away);
		if (CPU_COUNT(&away) && !pthread_attr_init(&attr)) {
			if (!pthread_attr_setaffinity_np(&attr, sizeof(away), &away))
				ap = &attr;
			else
				pthread_attr_destroy(&attr);
		}
	}
	if (ap) {
		CPU_ZERO(&here);
		CPU_SET(cpu, &here);
		s->placed = !pthread_setaffinity_np(pthread_self(), sizeof(here), &here);
	}
	for (unsigned i = 1; i <= helpers; i++) {
		struct scan_worker *w = &s->w[i];

		*w = (struct scan_worker){ .s = s, .arg = s->args[i] };
		w->cur = &w->own;
		w->cbuf = &w->own_cbuf;
		w->ccap = &w->own_ccap;
		if (pthread_create(&w->thread, ap, scan_helper, w))
			break;			/* fewer helpers: the others take its share */
		s->nworkers++;
	}
	if (ap)
		pthread_attr_destroy(ap);
}

/*
 * Helper threads: one less than the processors online for compressed files of 1 MiB or more.
 * Not for small files, where starting a thread costs more than it saves, nor for uncompressed
 * ones, whose buffers are walked so quickly that the threads made `etl info` slower (and whose
 * reading is a page-cache copy, less than handing a buffer between threads costs).
 * POOLSCOPE_ETL_THREADS=N sets N for any file (0 = none; the tests use it on small files).
 */
long ps_etl__helpers(const struct ps_etl *e)
{
	const char *env = getenv("POOLSCOPE_ETL_THREADS");

	if (env && *env)
		return strtol(env, NULL, 10);
	if (e->st.file_size < SCAN_MIN_FILE || !(e->hdr.log_file_mode & PS_ETL_MODE_COMPRESSED))
		return 0;
	return sysconf(_SC_NPROCESSORS_ONLN) - 1;
}

/* ps_etl__helpers(), at most MAX_HELPERS and nargs - 1 */
static unsigned scan_helpers(const struct ps_etl *e, unsigned nargs)
{
	long n = ps_etl__helpers(e);

	if (n > MAX_HELPERS)
		n = MAX_HELPERS;
	if (n > (long)nargs - 1)
		n = (long)nargs - 1;
	return n > 0 ? (unsigned)n : 0;
}

static int cmp_kept(const void *a, const void *b)
{
	const struct kept_problem *x = *(const struct kept_problem *const *)a;
	const struct kept_problem *y = *(const struct kept_problem *const *)b;

	if (x->buf != y->buf)
		return x->buf < y->buf ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Workers' statistics into e; their problems into e in file order (first MAX_PROBLEMS kept). */
static void scan_merge(struct ps_etl *e, struct scan *s)
{
	const struct kept_problem *all[(1 + MAX_HELPERS) * MAX_PROBLEMS];
	unsigned n = 0;
	uint32_t total = 0;

	for (unsigned i = 0; i < s->nworkers; i++) {
		struct scan_worker *w = &s->w[i];
		ps_etl__stats_add(&e->st, &w->st);
		total += w->nprob;
		for (unsigned k = 0; k < w->nkept; k++)
			all[n++] = &w->kept[k];
	}
	qsort(all, n, sizeof(all[0]), cmp_kept);
	for (unsigned i = 0; i < n; i++)
		ps_etl__problem(e, all[i]->off, "%s", all[i]->msg);
	e->st.problems += total - n;
}

int ps_etl_scan(struct ps_etl *e, ps_etl_scan_fn fn, void *const *args, unsigned nargs)
{
	struct ps_etl_event ev;
	struct scan *s;
	pthread_mutexattr_t ma;
	unsigned helpers;
	int r;

	if ((e->flags & PS_ETL_ORDERED) || !nargs)
		return -EINVAL;
	/* The rest of a buffer ps_etl_next() started comes first, as a walk would have it. */
	while (cursor_next(e, NULL, &e->cur, &ev)) {
		e->st.events++;
		r = fn(args[0], &ev);
		if (r < 0) {
			e->cur.loaded = false;
			e->done = true;
			return r;
		}
	}
	if (e->done)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->e = e;
	s->fn = fn;
	pthread_mutexattr_init(&ma);
#ifdef PTHREAD_MUTEX_ADAPTIVE_NP
	/* Held for one pread: spinning a little beats a futex sleep and wake-up. */
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	r = pthread_mutex_init(&s->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	if (r) {
		free(s);
		return -r;
	}
	s->w[0] = (struct scan_worker){ .s = s, .arg = args[0], .cur = &e->cur, .cbuf = &e->cbuf,
					.ccap = &e->ccap };
	s->nworkers = 1;
	s->args = args;
	helpers = scan_helpers(e, nargs);
	if (helpers)
		scan_start_helpers(s, helpers);
	scan_work(&s->w[0]);
	for (unsigned i = 1; i < s->nworkers; i++)
		pthread_join(s->w[i].thread, NULL);
	if (s->placed)
		pthread_setaffinity_np(pthread_self(), sizeof(s->allowed), &s->allowed);
	scan_merge(e, s);
	for (unsigned i = 1; i <= helpers; i++) {
		free(s->w[i].own.mem);
		free(s->w[i].own_cbuf);
	}
	r = s->rc;
	pthread_mutex_destroy(&s->lock);
	free(s);
	e->cur.loaded = false;
	e->done = true;
	return r;
}
