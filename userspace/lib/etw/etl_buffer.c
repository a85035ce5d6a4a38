// SPDX-License-Identifier: GPL-2.0
/*
 * One buffer of an .etl: reading it, checking its header, decompressing it, and the chain of
 * buffers in file order.
 *
 * A buffer is a 0x48-byte WMI_BUFFER_HEADER, then events up to SavedOffset (relative to the
 * buffer's start), then fill; the next buffer starts BufferSize bytes on. The header gives
 * BufferSize (0x00), SavedOffset (0x04), SequenceNumber (0x18), ProcessorIndex (0x28, 11 bits
 * when BufferFlag has 0x20) and BufferFlag (0x34). A compressed buffer (BufferFlag 0x40) holds
 * BufferSize - 0x48 bytes of XPRESS plain LZ77 that decode to exactly SavedOffset - 0x48 bytes.
 *
 * Checks: a BufferSize outside 0x48..PS_ETL_MAX_BUFFER leaves no way to the next buffer and ends
 * the walk; a SavedOffset outside the buffer, a compression format the header names other than
 * XPRESS, a short read or a stream that does not decode to SavedOffset skip the buffer. A buffer
 * cut by the end of the file marks the walk truncated: an uncompressed one keeps its complete
 * events, a compressed one is skipped. Each is a problem with the file offset, counted in a
 * struct acct and handed to the handle by the caller.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "userspace/lib/etw/etl_internal.h"
#include "userspace/lib/etw/xpress.h"

/* A read of a buffer's data also takes the next buffer's header when this little fill is between */
#define CHAIN_GAP 4096

int ps_etl__read_at(struct ps_etl *e, struct acct *a, void *dst, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(e->fd, (char *)dst + done, len - done, (off_t)(off + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += n;
	}
	a->st.bytes_read += done;
	return (int)done;
}

/*
 * Checks the 0x48-byte buffer header h, found at off, and fills ref. 1 ok, -1 cannot continue
 * (problem in a).
 */
static int parse_ref(struct acct *a, const uint8_t *h, uint64_t off, uint32_t index,
		     struct bufref *ref)
{
	ref->off = off;
	ref->index = index;
	ref->size = ps_rd32(h);
	ref->saved = ps_rd32(h + 4);
	ref->seq = (int64_t)ps_rd64(h + 0x18);
	ref->cpu = ps_rd16(h + 0x28);
	ref->flag = ps_rd16(h + 0x34);
	if (ref->flag & 0x20)
		ref->cpu &= 0x07ff;
	if (ref->size < HDR || ref->size > PS_ETL_MAX_BUFFER) {
		ps_etl__acct_problem(a, off, "buffer %u: BufferSize %u is impossible (expected "
				     "0x48..0x%x); cannot find the next buffer", index, ref->size,
				     PS_ETL_MAX_BUFFER);
		return -1;
	}
	return 1;
}

int ps_etl__read_ref(struct ps_etl *e, struct acct *a, uint64_t off, uint32_t index,
		     struct bufref *ref)
{
	uint8_t h[HDR];
	int n;

	if (off >= e->st.file_size)
		return 0;
	n = ps_etl__read_at(e, a, h, HDR, off);
	if (n < 0) {
		ps_etl__acct_problem(a, off, "read error: %s", strerror(-n));
		return -1;
	}
	if (n < HDR) {
		ps_etl__acct_problem(a, off, "file ends inside buffer %u's header (%d of %d bytes)",
				     index, n, HDR);
		a->st.truncated = true;
		return -1;
	}
	return parse_ref(a, h, off, index, ref);
}

/*
 * First half of loading ref into c: checks, and the read (compressed bytes into *cbuf, plain
 * data into c->mem). With next non-NULL the same read goes on through the next buffer's header
 * when at most CHAIN_GAP bytes of fill lie between (always for compressed buffers, whose size on
 * disk is their data), and *next then points at that header: one pread per buffer, not two.
 * 1: ps_etl__load_finish() completes c; 0: skip this buffer (problem recorded in a). Only reads e.
 */
static int load_read(struct ps_etl *e, struct acct *a, struct cursor *c, const struct bufref *ref,
		     uint8_t **cbuf, size_t *ccap, const uint8_t **next)
{
	uint64_t avail = e->st.file_size - ref->off;
	bool ahead = false;
	size_t len;
	int n;

	if (next)
		*next = NULL;
	c->loaded = false;
	c->ref = *ref;
	a->st.buffers++;
	if (ref->flag & PS_ETL_BUF_EVENTS_LOST)
		a->st.flag_events_lost++;
	if (ref->flag & PS_ETL_BUF_BUFFER_LOST)
		a->st.flag_buffer_lost++;
	if (ref->cpu + 1u > a->st.max_cpu)
		a->st.max_cpu = ref->cpu + 1u;
	if (ref->saved < HDR || ref->saved > PS_ETL_MAX_BUFFER ||
	    (!(ref->flag & PS_ETL_BUF_COMPRESSED) && ref->saved > ref->size)) {
		ps_etl__acct_problem(a, ref->off, "buffer %u: SavedOffset 0x%x outside the buffer "
				     "(BufferSize 0x%x)", ref->index, ref->saved, ref->size);
		return 0;
	}
	if (ps_etl__ensure(&c->mem, &c->cap, ref->saved) < 0) {
		ps_etl__acct_problem(a, ref->off, "out of memory for a buffer of %u bytes",
				     ref->saved);
		return 0;
	}
	if (ref->flag & PS_ETL_BUF_COMPRESSED) {
		a->st.compressed++;
		if (e->hdr.compression != 3 && e->hdr.compression != 0) {
			ps_etl__acct_problem(a, ref->off, "buffer %u: compression format %u is "
					     "not supported (only XPRESS, 3)", ref->index,
					     e->hdr.compression);
			return 0;
		}
		if (avail < ref->size) {
			ps_etl__acct_problem(a, ref->off, "compressed buffer %u of %u bytes cut by "
					     "the end of the file (%llu bytes left)", ref->index,
					     ref->size, (unsigned long long)avail);
			a->st.truncated = true;
			return 0;
		}
		ahead = next && avail >= (uint64_t)ref->size + HDR;
		len = ref->size + (ahead ? HDR : 0);
		if (ps_etl__ensure(cbuf, ccap, len) < 0)
			return 0;
		n = ps_etl__read_at(e, a, *cbuf, len, ref->off);
		if (n != (int)len) {
			ps_etl__acct_problem(a, ref->off, "short read of buffer %u", ref->index);
			return 0;
		}
		if (ahead)
			*next = *cbuf + ref->size;
		return 1;
	}
	uint32_t want = ref->saved;
	if (avail < want) {
		/* Keep the complete events before the cut. */
		ps_etl__acct_problem(a, ref->off, "buffer %u cut by the end of the file: %llu of "
				     "%u bytes of data", ref->index, (unsigned long long)avail,
				     want);
		a->st.truncated = true;
		want = (uint32_t)avail;
	}
	ahead = next && ref->size - want <= CHAIN_GAP && avail >= (uint64_t)ref->size + HDR;
	len = ahead ? ref->size + HDR : want;
	if (ahead && ps_etl__ensure(&c->mem, &c->cap, len) < 0)
		ahead = false, len = want;
	n = ps_etl__read_at(e, a, c->mem, len, ref->off);
	if (n < 0 || (uint32_t)n < want) {
		ps_etl__acct_problem(a, ref->off, "short read of buffer %u", ref->index);
		return 0;
	}
	if (ahead && (size_t)n == len)
		*next = c->mem + ref->size;
	c->end = want;
	return 1;
}

/* Second half: decompresses a compressed buffer (the CPU work, no lock needed). 1 ok, 0 skip. */
int ps_etl__load_finish(struct acct *a, struct cursor *c, const uint8_t *cbuf)
{
	const struct bufref *ref = &c->ref;

	if (ref->flag & PS_ETL_BUF_COMPRESSED) {
		size_t bad = 0;
		long got;

		memcpy(c->mem, cbuf, HDR);
		got = ps_xpress_decompress(cbuf + HDR, ref->size - HDR, c->mem + HDR,
					   ref->saved - HDR, &bad);
		if (got < 0 || (size_t)got != ref->saved - HDR) {
			if (got < 0)
				ps_etl__acct_problem(a, ref->off + HDR + bad, "buffer %u: XPRESS "
						     "stream is corrupt (%s)", ref->index,
						     got == -ENOSPC ? "decodes to more than "
						     "SavedOffset" : "bad token");
			else
				ps_etl__acct_problem(a, ref->off, "buffer %u: decompressed to %ld "
						     "bytes, SavedOffset says %u", ref->index, got,
						     ref->saved - HDR);
			return 0;
		}
		c->end = ref->saved;
	}
	c->pos = HDR;
	c->loaded = true;
	a->st.data_bytes += c->end - HDR;
	return 1;
}

int ps_etl__load_buffer(struct ps_etl *e, struct acct *a, struct cursor *c,
			const struct bufref *ref, uint8_t **cbuf, size_t *ccap)
{
	if (load_read(e, a, c, ref, cbuf, ccap, NULL) <= 0)
		return 0;
	return ps_etl__load_finish(a, c, *cbuf);
}

int ps_etl__chain_next(struct ps_etl *e, struct acct *a, struct cursor *c, uint8_t **cbuf,
		       size_t *ccap)
{
	struct bufref ref;
	const uint8_t *next;
	int r;

	if (e->have_next) {
		e->have_next = false;
		r = parse_ref(a, e->next_hdr, e->next_off, e->next_index, &ref);
	} else {
		r = ps_etl__read_ref(e, a, e->next_off, e->next_index, &ref);
	}
	if (r <= 0) {
		c->loaded = false;
		e->done = true;
		return -1;
	}
	e->next_off += ref.size;
	e->next_index++;
	r = load_read(e, a, c, &ref, cbuf, ccap, &next);
	if (next) {
		memcpy(e->next_hdr, next, HDR);
		e->have_next = true;
	}
	return r;
}

void ps_etl__event_problem(struct ps_etl *e, struct acct *a, const struct cursor *c,
			   const char *why)
{
	if (a)
		ps_etl__acct_problem(a, c->ref.off + c->pos, "buffer %u, event at +0x%x: %s; rest "
				     "of the buffer skipped", c->ref.index, c->pos, why);
	else
		ps_etl__problem(e, c->ref.off + c->pos, "buffer %u, event at +0x%x: %s; rest of the "
				"buffer skipped", c->ref.index, c->pos, why);
}
