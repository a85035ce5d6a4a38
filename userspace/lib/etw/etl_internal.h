/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal to the .etl reader: what its files share. etl.h is the contract; this is the handle
 * behind it and the calls the pieces make into each other:
 *
 *   etl.c         the handle: open, close, ps_etl_next(), statistics and problems
 *   etl_header.c  the header buffer, TRACE_LOGFILE_HEADER, and the clock it defines
 *   etl_buffer.c  one buffer: its header, the read, XPRESS decompression, the file-order chain
 *   etl_event.h   one event: the header kinds, decoded inline (it runs once per event)
 *   etl_merge.c   time order: per-processor buffer queues merged by event timestamp
 *   etl_scan.c    file order on several threads (ps_etl_scan())
 *   etl_text.c    text: UTF-16, GUIDs, FILETIME, kernel group names
 *
 * Statistics and problems of a buffer are gathered in a struct acct before they reach the
 * handle, so that scan workers, which take buffers in no fixed order, can hand them back in file
 * order. A function given no acct (NULL) reports straight into the handle.
 */
#ifndef PS_ETW_ETL_INTERNAL_H
#define PS_ETW_ETL_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "userspace/lib/etw/etl.h"
#include "userspace/lib/etw/etl_event.h"

#define HDR PS_ETL_WMI_BUFFER_HEADER_SIZE
#define MAX_PROBLEMS 8		/* problem texts a handle keeps (ps_etl_problem()) */
#define ACCT_PROBLEMS 4		/* per buffer: header, data and one event report one each at most */

/* A buffer as its header describes it. */
struct bufref {
	uint64_t off;
	uint32_t size, saved;
	int64_t seq;
	uint16_t cpu, flag;
	uint32_t index;
};

/* A decoded buffer and the cursor into it. */
struct cursor {
	uint8_t *mem;
	size_t cap;
	uint32_t end, pos;
	struct bufref ref;
	bool loaded;
	/* ordered mode: the queue of this processor's buffers and the next event */
	uint32_t *q;
	uint32_t nq, qpos;
	bool have_ev;
	struct ps_etl_event ev;
};

/*
 * What reading and walking one buffer adds to the file's statistics and problems, kept apart so
 * that ps_etl_scan() workers, which take buffers in no fixed order, can merge the problems back
 * in file order: the numbers and the problem list come out as a single thread would give them.
 */
struct acct {
	struct ps_etl_stats st;			/* increments; max_cpu is a maximum */
	unsigned nprob, lost;			/* lost: problems beyond ACCT_PROBLEMS (counted) */
	struct {
		uint64_t off;
		char msg[320];
	} prob[ACCT_PROBLEMS];
};

struct ps_etl {
	int fd;
	bool own_fd;
	char name[256];
	unsigned flags;
	struct ps_etl_logfile hdr;
	struct ps_etl_stats st;
	char problems[MAX_PROBLEMS][320];
	uint8_t *cbuf;			/* compressed bytes of the current buffer */
	size_t ccap;
	/* file order: the buffer chain (ps_etl_scan() workers advance it under their lock) */
	uint64_t next_off;
	uint32_t next_index;
	bool have_next;			/* next_hdr holds the header at next_off (read ahead) */
	uint8_t next_hdr[HDR];
	struct cursor cur;
	bool done;
	/* ordered */
	struct bufref *refs;
	uint32_t nrefs;
	struct cursor *cpus;
	uint32_t ncpus;
	struct readahead *ra;		/* ordered, large files: the helper loading next buffers */
};

/* --- etl.c: statistics and problems -------------------------------------------------------- */

/* Counts a problem of e and keeps its text ("name: offset 0x..: ...") while there is room. */
void ps_etl__problem(struct ps_etl *e, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same into a buffer's accounting (its first ACCT_PROBLEMS texts, the rest counted). */
void ps_etl__acct_problem(struct acct *a, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Adds the counts of d to st (problems aside: they go with their text). */
void ps_etl__stats_add(struct ps_etl_stats *st, const struct ps_etl_stats *d);
/* Adds a buffer's statistics and problems to the file's, and clears a for the next buffer. */
void ps_etl__acct_apply(struct ps_etl *e, struct acct *a);

/* --- etl_buffer.c: buffers ----------------------------------------------------------------- */

/* Reads up to len bytes at off (fewer at the end of the file): bytes read, or -errno. */
int ps_etl__read_at(struct ps_etl *e, struct acct *a, void *dst, size_t len, uint64_t off);
/*
 * Reads the 0x48-byte header at off into ref. 1 ok, 0 clean end, -1 cannot continue. Touches
 * nothing in e but the fd (problems and counts go to a): scan workers call it.
 */
int ps_etl__read_ref(struct ps_etl *e, struct acct *a, uint64_t off, uint32_t index,
		     struct bufref *ref);
/* Loads the data of ref into c (decompressing through *cbuf). 1 ok, 0 skip (problem in a). */
int ps_etl__load_buffer(struct ps_etl *e, struct acct *a, struct cursor *c,
			const struct bufref *ref, uint8_t **cbuf, size_t *ccap);
/* Second half of a load: decompresses a compressed buffer (the CPU work, no lock needed). */
int ps_etl__load_finish(struct acct *a, struct cursor *c, const uint8_t *cbuf);
/*
 * Reads the next buffer of the file-order chain into c: 1 read (ps_etl__load_finish() makes it
 * walkable), 0 skipped (problem in a), -1 the chain ends (e->done set). Advances e's chain
 * state: ps_etl_scan() workers call it under their lock, one at a time.
 */
int ps_etl__chain_next(struct ps_etl *e, struct acct *a, struct cursor *c, uint8_t **cbuf,
		       size_t *ccap);
/* A malformed event ends its buffer: into a when given (scan workers), else straight into e. */
void ps_etl__event_problem(struct ps_etl *e, struct acct *a, const struct cursor *c,
			   const char *why) __attribute__((noinline, cold));

/* Grows *mem to hold need bytes (doubling from 64 KiB). 0 or -ENOMEM. */
static inline int ps_etl__ensure(uint8_t **mem, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 65536;
	while (n < need)
		n *= 2;
	uint8_t *m = realloc(*mem, n);
	if (!m)
		return -ENOMEM;
	*mem = m;
	*cap = n;
	return 0;
}

/*
 * Next event from the loaded buffer in c; false when the buffer is exhausted. Inlined with
 * parse_event: `etl info` calls this per event, and the calls cost more than a small header.
 */
static inline __attribute__((always_inline)) bool
cursor_next(struct ps_etl *e, struct acct *a, struct cursor *c, struct ps_etl_event *ev)
{
	char why[200];

	if (!c->loaded)
		return false;
	int adv = parse_event(c->mem, c->pos, c->end, ev, why, sizeof(why));
	if (adv <= 0) {
		if (adv < 0)
			ps_etl__event_problem(e, a, c, why);
		c->loaded = false;
		return false;
	}
	ev->cpu = c->ref.cpu;
	ev->file_off = c->ref.off;
	ev->buf_index = c->ref.index;
	c->pos += adv;
	return true;
}

/* --- etl_scan.c ---------------------------------------------------------------------------- */

/* How many helper threads reading e may use (ps_etl_scan(), and the merge's read-ahead). */
long ps_etl__helpers(const struct ps_etl *e);

/* --- etl_header.c -------------------------------------------------------------------------- */

/* Reads and checks the header buffer into e->hdr. 0, or a negative code with err filled. */
int ps_etl__read_header(struct ps_etl *e, char *err, size_t errlen);

/* --- etl_merge.c: time order (PS_ETL_ORDERED) ---------------------------------------------- */

/* Indexes the buffers, queues them per processor and loads each one's first event. */
int ps_etl__merge_open(struct ps_etl *e);
/* ps_etl_next() in time order: 1 and *ev, 0 at the end, -ENOMEM. */
int ps_etl__merge_next(struct ps_etl *e, struct ps_etl_event *ev);
/* Stops the read-ahead helper (if any) and frees what it holds; ps_etl_close() calls it. */
void ps_etl__merge_close(struct ps_etl *e);

#endif
