// SPDX-License-Identifier: GPL-2.0
/*
 * The .etl reader's handle (etl.h is the contract; etl_internal.h says which file does what):
 * opening a file (its header buffer, and for time order the index of its buffers), closing it,
 * ps_etl_next() in file order (the buffer chain) or time order (etl_merge.c), and the file's
 * statistics and problems. Every problem is counted; the first MAX_PROBLEMS are kept as text
 * that names the file and the offset. A buffer's statistics and problems go through a struct
 * acct first, and reach the handle when the buffer is done with.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/lib/util/util.h"
#include "userspace/lib/etw/etl_internal.h"

void ps_etl__problem(struct ps_etl *e, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	unsigned i = e->st.problems++;

	if (i >= MAX_PROBLEMS)
		return;
	int n = snprintf(e->problems[i], sizeof(e->problems[i]), "%s: offset 0x%llx: ", e->name,
			 (unsigned long long)off);
	if (n < 0 || (size_t)n >= sizeof(e->problems[i]))
		return;
	va_start(ap, fmt);
	vsnprintf(e->problems[i] + n, sizeof(e->problems[i]) - n, fmt, ap);
	va_end(ap);
}

const char *ps_etl_problem(const struct ps_etl *e, unsigned i)
{
	return i < e->st.problems && i < MAX_PROBLEMS ? e->problems[i] : NULL;
}

const struct ps_etl_logfile *ps_etl_logfile(const struct ps_etl *e) { return &e->hdr; }
const struct ps_etl_stats *ps_etl_stats(const struct ps_etl *e) { return &e->st; }

void ps_etl__acct_problem(struct acct *a, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	if (a->nprob >= ACCT_PROBLEMS) {
		a->lost++;
		return;
	}
	a->prob[a->nprob].off = off;
	va_start(ap, fmt);
	vsnprintf(a->prob[a->nprob].msg, sizeof(a->prob[0].msg), fmt, ap);
	va_end(ap);
	a->nprob++;
}

void ps_etl__stats_add(struct ps_etl_stats *st, const struct ps_etl_stats *d)
{
	st->bytes_read += d->bytes_read;
	st->buffers += d->buffers;
	st->compressed += d->compressed;
	st->flag_events_lost += d->flag_events_lost;
	st->flag_buffer_lost += d->flag_buffer_lost;
	st->events += d->events;
	st->data_bytes += d->data_bytes;
	if (d->max_cpu > st->max_cpu)
		st->max_cpu = d->max_cpu;
	st->truncated |= d->truncated;
}

void ps_etl__acct_apply(struct ps_etl *e, struct acct *a)
{
	ps_etl__stats_add(&e->st, &a->st);
	for (unsigned i = 0; i < a->nprob; i++)
		ps_etl__problem(e, a->prob[i].off, "%s", a->prob[i].msg);
	e->st.problems += a->lost;
	memset(&a->st, 0, sizeof(a->st));
	a->nprob = a->lost = 0;
}

int ps_etl_open_fd(struct ps_etl **out, int fd, const char *name, unsigned flags, char *err,
		   size_t errlen)
{
	struct ps_etl *e = calloc(1, sizeof(*e));
	struct stat sb;
	int r;

	if (!e)
		return -ENOMEM;
	e->fd = fd;
	e->flags = flags;
	ps_strlcpy(e->name, name, sizeof(e->name));
	if (fstat(fd, &sb) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", name, strerror(errno));
		goto fail;
	}
	e->st.file_size = (uint64_t)sb.st_size;
#ifdef POSIX_FADV_SEQUENTIAL
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
	r = ps_etl__read_header(e, err, errlen);
	if (r < 0)
		goto fail;
	e->st.bytes_read = 0;
	if (flags & PS_ETL_ORDERED) {
		r = ps_etl__merge_open(e);
		if (r < 0) {
			snprintf(err, errlen, "%s: %s", name, strerror(-r));
			goto fail;
		}
	}
	*out = e;
	return 0;
fail:
	e->fd = -1;
	ps_etl_close(e);
	return r;
}

int ps_etl_open(struct ps_etl **out, const char *path, unsigned flags, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int r;

	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return r;
	}
	r = ps_etl_open_fd(out, fd, path, flags, err, errlen);
	if (r < 0) {
		close(fd);
		return r;
	}
	(*out)->own_fd = true;
	return 0;
}

void ps_etl_close(struct ps_etl *e)
{
	if (!e)
		return;
	ps_etl__merge_close(e);	/* first: its helper reads through e->fd */
	if (e->own_fd && e->fd >= 0)
		close(e->fd);
	free(e->cur.mem);
	free(e->cbuf);
	for (uint32_t c = 0; e->cpus && c < e->ncpus; c++) {
		free(e->cpus[c].mem);
		free(e->cpus[c].q);
	}
	free(e->cpus);
	free(e->refs);
	free(e);
}

int ps_etl_next(struct ps_etl *e, struct ps_etl_event *ev)
{
	if (e->flags & PS_ETL_ORDERED)
		return ps_etl__merge_next(e, ev);
	for (;;) {
		if (cursor_next(e, NULL, &e->cur, ev)) {
			e->st.events++;
			return 1;
		}
		if (e->done)
			return 0;
		struct acct a = { 0 };
		int r = ps_etl__chain_next(e, &a, &e->cur, &e->cbuf, &e->ccap);
		if (r > 0)
			ps_etl__load_finish(&a, &e->cur, e->cbuf);
		ps_etl__acct_apply(e, &a);
		if (r < 0)
			return 0;
	}
}
