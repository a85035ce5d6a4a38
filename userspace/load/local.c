// SPDX-License-Identifier: GPL-2.0
/*
 * Local engines: pread/pwrite with one IO in flight per process, and io_uring keeping QD IOs
 * in one ring per worker. Both run buffered (page cache, the server's view of a hot file) or
 * O_DIRECT (the disk).
 */
#include "userspace/load/load.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <liburing.h>

static int open_local(const struct ps_load_opts *o, bool writes)
{
	return open(o->target, (writes ? O_RDWR : O_RDONLY) | (o->direct ? O_DIRECT : 0) | O_CLOEXEC);
}

int ps_load_local_probe(const struct ps_load_opts *o, uint64_t *size, char *msg, size_t len)
{
	bool writes = false;
	struct stat st;
	int fd, err;

	for (int i = 0; i < o->nsteps; i++)
		writes |= o->steps[i].read_pct < 100;
	fd = open_local(o, writes);
	if (fd < 0) {
		err = errno;
		if (err == EINVAL && o->direct)
			snprintf(msg, len, "%s: O_DIRECT not supported by this filesystem", o->target);
		else
			snprintf(msg, len, "%s: cannot open%s: %s", o->target,
				 writes ? " for writing" : "", strerror(err));
		return -err;
	}
	if (fstat(fd, &st) < 0) {
		err = errno;
		snprintf(msg, len, "%s: fstat: %s", o->target, strerror(err));
		close(fd);
		return -err;
	}
	close(fd);
	if (S_ISDIR(st.st_mode)) {
		snprintf(msg, len, "%s: is a directory, expected a file", o->target);
		return -EISDIR;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		snprintf(msg, len, "%s: not a regular file or block device", o->target);
		return -EINVAL;
	}
	*size = (uint64_t)st.st_size;
	return 0;
}

static char *io_buf(uint64_t bs)
{
	char *buf = aligned_alloc(4096, (bs + 4095) & ~4095ull);

	if (buf)
		memset(buf, 0xa5, bs);
	return buf;
}

int ps_load_pread_slot(const struct ps_load_job *j)
{
	struct ps_load_slot *slot = &j->ctl->slots[j->slot];
	struct ps_load_batch b = { 0 };
	struct ps_load_pace pace;
	struct ps_offset_gen g;
	uint64_t rnd = j->seed ^ 0x5bd1e995ull;
	bool writes = j->pat->read_pct < 100;
	char *buf = io_buf(j->pat->bs);
	int fd;

	if (!buf) {
		ps_load_slot_fail(slot, -ENOMEM, "out of memory for the IO buffer");
		return 1;
	}
	fd = open_local(j->o, writes);
	if (fd < 0) {
		ps_load_slot_fail(slot, -errno, "%s: cannot open: %s", j->o->target, strerror(errno));
		return 1;
	}
	ps_offset_gen_init(&g, j->seed, j->span, j->pat->bs, j->pat->random,
			   (j->span / j->pat->bs) / j->ctl->nslots * j->slot);
	__atomic_store_n(&slot->state, PS_SLOT_READY, __ATOMIC_RELEASE);
	if (ps_load_wait_go(j->ctl)) {
		b.last_flush_ns = ps_load_now_ns();
		ps_load_pace_init(&pace, j, b.last_flush_ns);
		while (ps_load_running(j->ctl) && ps_load_pace_wait(&pace, j->ctl)) {
			uint64_t off = ps_offset_next(&g), t0, t1;
			bool is_read = !writes || (ps_rand64(&rnd) % 100) < j->pat->read_pct;
			ssize_t n;

			__atomic_store_n(&slot->inflight, 1, __ATOMIC_RELAXED);
			t0 = ps_load_now_ns();
			n = is_read ? pread(fd, buf, j->pat->bs, (off_t)off)
				    : pwrite(fd, buf, j->pat->bs, (off_t)off);
			t1 = ps_load_now_ns();
			__atomic_store_n(&slot->inflight, 0, __ATOMIC_RELAXED);
			ps_load_record(j->ctl, &b, t1 - t0, n > 0 ? (uint64_t)n : 0,
				       n == (ssize_t)j->pat->bs, t1);
		}
		ps_load_flush(j->ctl, &b, ps_load_now_ns());
	}
	close(fd);
	free(buf);
	return 0;
}

bool ps_load_uring_available(void)
{
	struct io_uring r;

	if (io_uring_queue_init(2, &r, 0) < 0)
		return false;
	io_uring_queue_exit(&r);
	return true;
}

struct uring_io {
	uint64_t t0;
	bool is_read;
	char *buf;
};

static void uring_prep(struct io_uring *r, struct uring_io *io, unsigned idx, int fd,
		       const struct ps_load_job *j, struct ps_offset_gen *g, uint64_t *rnd)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(r);
	bool writes = j->pat->read_pct < 100;
	uint64_t off = ps_offset_next(g);

	io->is_read = !writes || (ps_rand64(rnd) % 100) < j->pat->read_pct;
	if (io->is_read)
		io_uring_prep_read(sqe, fd, io->buf, (unsigned)j->pat->bs, off);
	else
		io_uring_prep_write(sqe, fd, io->buf, (unsigned)j->pat->bs, off);
	io_uring_sqe_set_data64(sqe, idx);
	io->t0 = ps_load_now_ns();
}

int ps_load_uring_slot(const struct ps_load_job *j)
{
	struct ps_load_slot *slot = &j->ctl->slots[j->slot];
	struct ps_load_batch b = { 0 };
	struct ps_offset_gen g;
	uint64_t rnd = j->seed ^ 0x5bd1e995ull;
	struct uring_io *ios = NULL;
	struct io_uring ring;
	struct ps_load_pace pace;
	unsigned qd = j->depth, inflight = 0, nfree = 0, *freel = NULL, i;
	int fd = -1, ret, rc = 1;

	ios = calloc(qd, sizeof(*ios));
	freel = calloc(qd, sizeof(*freel));
	if (!ios || !freel) {
		ps_load_slot_fail(slot, -ENOMEM, "out of memory");
		free(ios);
		free(freel);
		return 1;
	}
	for (i = 0; i < qd; i++) {
		ios[i].buf = io_buf(j->pat->bs);
		if (!ios[i].buf) {
			ps_load_slot_fail(slot, -ENOMEM, "out of memory for the IO buffers");
			goto out_free;
		}
	}
	fd = open_local(j->o, j->pat->read_pct < 100);
	if (fd < 0) {
		ps_load_slot_fail(slot, -errno, "%s: cannot open: %s", j->o->target, strerror(errno));
		goto out_free;
	}
	ret = io_uring_queue_init(qd, &ring, 0);
	if (ret < 0) {
		ps_load_slot_fail(slot, ret, "io_uring_queue_init(%u): %s (try --engine pread)", qd,
				  strerror(-ret));
		goto out_free;
	}
	ps_offset_gen_init(&g, j->seed, j->span, j->pat->bs, j->pat->random,
			   (j->span / j->pat->bs) / j->ctl->nslots * j->slot);
	__atomic_store_n(&slot->state, PS_SLOT_READY, __ATOMIC_RELEASE);
	if (!ps_load_wait_go(j->ctl)) {
		rc = 0;
		goto out_ring;
	}
	b.last_flush_ns = ps_load_now_ns();
	ps_load_pace_init(&pace, j, b.last_flush_ns);
	/* the IOs not in flight; unpaced, each is sent again as soon as it completes */
	for (i = 0; i < qd; i++)
		freel[nfree++] = qd - 1 - i;
	for (;;) {
		bool run = ps_load_running(j->ctl);
		uint64_t now = ps_load_now_ns(), wait_ns = 0;
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0, done = 0, sub = 0;

		while (run && nfree && !(wait_ns = ps_load_pace_due(&pace, now))) {
			uring_prep(&ring, &ios[freel[nfree - 1]], freel[nfree - 1], fd, j, &g, &rnd);
			nfree--;
			sub++;
		}
		if (sub) {
			io_uring_submit(&ring);
			inflight += sub;
		}
		/* after the IOs are sent again, not when they are reaped, as the other engines */
		__atomic_store_n(&slot->inflight, inflight, __ATOMIC_RELAXED);
		if (!inflight && !run)
			break;
		if (!inflight || (nfree && wait_ns)) {
			/* paced: wait for a completion or the next IO's turn, whichever is first */
			struct __kernel_timespec ts;

			if (wait_ns > 50000000ull)
				wait_ns = 50000000ull;
			ts.tv_sec = (long long)(wait_ns / 1000000000ull);
			ts.tv_nsec = (long long)(wait_ns % 1000000000ull);
			if (!inflight) {
				nanosleep(&(struct timespec){ (time_t)ts.tv_sec, (long)ts.tv_nsec }, NULL);
				continue;
			}
			ret = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
			if (ret == -ETIME)
				continue;
		} else {
			ret = io_uring_wait_cqe(&ring, &cqe);
		}
		if (ret == -EINTR)
			continue;
		if (ret < 0) {
			ps_load_slot_fail(slot, ret, "io_uring_wait_cqe: %s", strerror(-ret));
			goto out_ring;
		}
		now = ps_load_now_ns();
		io_uring_for_each_cqe(&ring, head, cqe) {
			unsigned idx = (unsigned)io_uring_cqe_get_data64(cqe);

			/* not one of ours: liburing's own timeout where the kernel lacks EXT_ARG */
			if (idx >= qd) {
				seen++;
				continue;
			}
			ps_load_record(j->ctl, &b, now - ios[idx].t0, cqe->res > 0 ? (uint64_t)cqe->res : 0,
				       cqe->res == (int)j->pat->bs, now);
			freel[nfree++] = idx;
			seen++;
			done++;
		}
		io_uring_cq_advance(&ring, seen);
		inflight -= done;
	}
	__atomic_store_n(&slot->inflight, 0, __ATOMIC_RELAXED);
	ps_load_flush(j->ctl, &b, ps_load_now_ns());
	rc = 0;
out_ring:
	io_uring_queue_exit(&ring);
out_free:
	if (fd >= 0)
		close(fd);
	for (i = 0; i < qd; i++)
		free(ios[i].buf);
	free(ios);
	free(freel);
	return rc;
}
