// SPDX-License-Identifier: GPL-2.0
/*
 * The .etl reader: buffer walk (file order or per-processor merge by timestamp), XPRESS
 * decompression of relogged buffers, event header dispatch for every header kind (8-byte
 * aligned), TRACE_LOGFILE_HEADER in its 32- and 64-bit layouts. See etl.h for the contract.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "etw/etl.h"
#include "etw/xpress.h"

#define HDR PS_ETL_WMI_BUFFER_HEADER_SIZE
#define MAX_PROBLEMS 8
#define MAX_CPUS 4096
#define ACCT_PROBLEMS 4		/* per buffer: read_ref and load_buffer report one each at most */
#define RING 8			/* buffers decoded ahead of the reader (memory stays bounded) */
#define MAX_HELPERS 3

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
 * What reading one buffer adds to the file's statistics and problems. The reader thread applies
 * it (acct_apply) when it reaches that buffer, so with decoder threads working ahead the numbers
 * and the problem list come out in file order, exactly as a single thread would produce them.
 */
struct acct {
	struct ps_etl_stats st;			/* increments; max_cpu is a maximum */
	unsigned nprob, lost;			/* lost: problems beyond ACCT_PROBLEMS (counted) */
	struct {
		uint64_t off;
		char msg[240];
	} prob[ACCT_PROBLEMS];
};

/*
 * File-order walk of a compressed file with decoder threads: buffer i lives in slot[i % RING].
 * Whoever finds work (a helper, or the reader waiting for its next buffer) claims the next
 * buffer in file order under the lock (reading its 0x48-byte header there: the chain of
 * BufferSize fields is sequential), then reads and decompresses it without the lock.
 */
enum { SLOT_FREE, SLOT_BUSY, SLOT_READY };

struct slot {
	struct cursor cur;
	uint8_t *cbuf;				/* compressed bytes */
	size_t ccap;
	struct acct acct;
	int state;
	bool end;				/* the walk ends here (no buffer) */
};

struct pipe {
	pthread_mutex_t lock;
	pthread_cond_t cond;			/* a slot became ready or free, or stop */
	uint32_t gen;				/* bumped on each of those (spinning waits watch it) */
	pthread_t helper[MAX_HELPERS];
	unsigned nhelpers;
	uint32_t take;				/* next buffer the reader consumes */
	uint32_t claim;				/* next buffer to decode */
	uint64_t scan_off;			/* file offset of buffer `claim` */
	bool scan_done;				/* the buffer chain ended: nothing more to claim */
	bool held;				/* the reader parses slot[(take - 1) % RING] */
	bool stop;
	struct slot slot[RING];
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
	/* file order */
	uint64_t next_off;
	uint32_t next_index;
	struct cursor cur;
	bool done;
	/* ordered */
	struct bufref *refs;
	uint32_t nrefs;
	struct cursor *cpus;
	uint32_t ncpus;
	/* file order with decoder threads (compressed files), or NULL */
	struct pipe *pipe;
	struct cursor *walk;		/* file order: the buffer being parsed (&cur or a slot's) */
};

static void problem(struct ps_etl *e, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(struct ps_etl *e, uint64_t off, const char *fmt, ...)
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

static void acct_problem(struct acct *a, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void acct_problem(struct acct *a, uint64_t off, const char *fmt, ...)
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

/* Adds a buffer's statistics and problems to the file's, and clears a for the next buffer. */
static void acct_apply(struct ps_etl *e, struct acct *a)
{
	struct ps_etl_stats *st = &e->st;

	st->bytes_read += a->st.bytes_read;
	st->buffers += a->st.buffers;
	st->compressed += a->st.compressed;
	st->flag_events_lost += a->st.flag_events_lost;
	st->flag_buffer_lost += a->st.flag_buffer_lost;
	st->data_bytes += a->st.data_bytes;
	if (a->st.max_cpu > st->max_cpu)
		st->max_cpu = a->st.max_cpu;
	st->truncated |= a->st.truncated;
	for (unsigned i = 0; i < a->nprob; i++)
		problem(e, a->prob[i].off, "%s", a->prob[i].msg);
	st->problems += a->lost;
	memset(&a->st, 0, sizeof(a->st));
	a->nprob = a->lost = 0;
}

size_t ps_etl_utf16(const uint8_t *p, size_t len, char *out, size_t outlen)
{
	size_t i = 0, o = 0;

	for (; i + 1 < len; i += 2) {
		uint32_t c = ps_rd16(p + i);
		if (c == 0) {
			i += 2;
			break;
		}
		if (c >= 0xd800 && c < 0xdc00 && i + 3 < len) {
			uint32_t lo = ps_rd16(p + i + 2);
			if (lo >= 0xdc00 && lo < 0xe000) {
				c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
				i += 2;
			}
		}
		char tmp[4];
		int n;
		if (c < 0x80) {
			tmp[0] = (char)c; n = 1;
		} else if (c < 0x800) {
			tmp[0] = (char)(0xc0 | c >> 6); tmp[1] = (char)(0x80 | (c & 0x3f)); n = 2;
		} else if (c < 0x10000) {
			tmp[0] = (char)(0xe0 | c >> 12); tmp[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			tmp[2] = (char)(0x80 | (c & 0x3f)); n = 3;
		} else {
			tmp[0] = (char)(0xf0 | c >> 18); tmp[1] = (char)(0x80 | ((c >> 12) & 0x3f));
			tmp[2] = (char)(0x80 | ((c >> 6) & 0x3f)); tmp[3] = (char)(0x80 | (c & 0x3f)); n = 4;
		}
		if (outlen && o + n < outlen) {
			memcpy(out + o, tmp, n);
			o += n;
		}
	}
	if (outlen)
		out[o < outlen ? o : outlen - 1] = 0;
	return i > len ? len : i;
}

char *ps_etl_guid_str(const uint8_t *g, char buf[37])
{
	snprintf(buf, 37, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", ps_rd32(g),
		 ps_rd16(g + 4), ps_rd16(g + 6), g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
	return buf;
}

static const char *const group_names[] = {
	[0x00] = "EventTrace", [0x01] = "DiskIO", [0x02] = "Memory", [0x03] = "Process",
	[0x04] = "FileIO", [0x05] = "Thread", [0x06] = "TcpIp", [0x07] = "Job",
	[0x08] = "UdpIp", [0x09] = "Registry", [0x0a] = "DbgPrint", [0x0b] = "SystemConfig",
	[0x0c] = "Spare1", [0x0d] = "WmiTrace", [0x0e] = "Pool", [0x0f] = "PerfInfo",
	[0x10] = "Heap", [0x11] = "Object", [0x12] = "Power", [0x13] = "Modbound",
	[0x14] = "Image", [0x15] = "DPC", [0x16] = "CC", [0x17] = "Critsec",
	[0x18] = "StackWalk", [0x19] = "UMS", [0x1a] = "ALPC", [0x1b] = "Splitio",
	[0x1c] = "ThreadPool", [0x1d] = "HyperVisor", [0x1e] = "HyperVisorX",
};

const char *ps_etl_group_name(uint8_t group)
{
	return group < ARRAY_SIZE(group_names) ? group_names[group] : NULL;
}

int64_t ps_etl_rel_ns(const struct ps_etl_logfile *h, int64_t ts)
{
	__int128 d = (__int128)ts - h->t0;

	switch (h->clock_type) {
	case 2:
		return (int64_t)(d * 100);
	case 3:
		return h->cpu_mhz ? (int64_t)(d * 1000 / h->cpu_mhz) : 0;
	default:
		return h->perf_freq > 0 ? (int64_t)(d * 1000000000 / h->perf_freq) : 0;
	}
}

int64_t ps_etl_wall_ns(const struct ps_etl_logfile *h, int64_t ts)
{
	/* FILETIME counts 100 ns since 1601-01-01; the Unix epoch is 11644473600 s later. */
	return (h->start_time - 116444736000000000LL) * 100 + ps_etl_rel_ns(h, ts);
}

/* --- event headers ------------------------------------------------------------------------- */

/*
 * Parses the event at b[off..end). Returns the aligned advance (> 0), 0 at the normal end of
 * data (fill, end marker, no room for a marker), or -1 for a malformed event (why says what).
 */
static inline __attribute__((always_inline)) int
parse_event(const uint8_t *b, uint32_t off, uint32_t end, struct ps_etl_event *ev, char *why,
	    size_t whylen)
{
	uint32_t rem = end - off, hlen, size;
	const uint8_t *p = b + off;

	if (rem < 4)
		return 0;
	uint32_t marker = ps_rd32(p);
	if (marker == 0xffffffff)
		return 0;
	uint8_t flags = p[3], ht = p[2];

	*ev = (struct ps_etl_event){ .raw = p, .buf_off = off, .tid = UINT32_MAX,
				     .pid = UINT32_MAX, .has_tid = true };
	if ((flags & 0xc0) == 0xc0) {
		ev->htype = ht;
		switch (ht) {
		case PS_ETL_HT_SYSTEM32: case PS_ETL_HT_SYSTEM64:
		case PS_ETL_HT_COMPACT32: case PS_ETL_HT_COMPACT64:
			hlen = (ht <= PS_ETL_HT_SYSTEM64) ? 32 : 24;
			if (rem < hlen)
				goto short_hdr;
			size = ps_rd16(p + 4);
			ev->kernel = true;
			ev->version = ps_rd16(p);
			ev->type = p[6];
			ev->group = p[7];
			ev->tid = ps_rd32(p + 8);
			ev->pid = ps_rd32(p + 12);
			ev->ts = (int64_t)ps_rd64(p + 16);
			ev->ptr_size = (ht == PS_ETL_HT_SYSTEM64 || ht == PS_ETL_HT_COMPACT64) ? 8 : 4;
			break;
		case PS_ETL_HT_PERFINFO32: case PS_ETL_HT_PERFINFO64: {
			uint16_t v = ps_rd16(p);
			hlen = 16;
			if (rem < hlen)
				goto short_hdr;
			size = ps_rd16(p + 4);
			if (v & 0x8000)
				hlen += 8;		/* PEBS index */
			hlen += 8 * ((v >> 8) & 7);	/* PMC counters */
			ev->kernel = true;
			ev->has_tid = false;
			ev->version = v & ~0x8700;
			ev->type = p[6];
			ev->group = p[7];
			ev->ts = (int64_t)ps_rd64(p + 8);
			ev->ptr_size = ht == PS_ETL_HT_PERFINFO64 ? 8 : 4;
			break;
		}
		case PS_ETL_HT_FULL32: case PS_ETL_HT_FULL64:
		case PS_ETL_HT_INSTANCE32: case PS_ETL_HT_INSTANCE64:
			hlen = (ht == PS_ETL_HT_FULL32 || ht == PS_ETL_HT_FULL64) ? 48 : 72;
			if (rem < hlen)
				goto short_hdr;
			size = ps_rd16(p);
			ev->type = p[4];
			ev->version = ps_rd16(p + 6);
			ev->tid = ps_rd32(p + 8);
			ev->pid = ps_rd32(p + 12);
			ev->ts = (int64_t)ps_rd64(p + 16);
			ev->guid = p + 24;
			ev->ptr_size = (ht == PS_ETL_HT_FULL64 || ht == PS_ETL_HT_INSTANCE64) ? 8 : 4;
			break;
		case PS_ETL_HT_EVENT32: case PS_ETL_HT_EVENT64: {
			hlen = 80;
			if (rem < hlen)
				goto short_hdr;
			size = ps_rd16(p);
			uint16_t eflags = ps_rd16(p + 4);
			ev->tid = ps_rd32(p + 8);
			ev->pid = ps_rd32(p + 12);
			ev->ts = (int64_t)ps_rd64(p + 16);
			ev->guid = p + 24;
			ev->id = ps_rd16(p + 40);
			ev->version = p[42];
			ev->type = p[45];
			ev->ptr_size = (eflags & 0x20) ? 4 : (eflags & 0x40) ? 8 :
				       ht == PS_ETL_HT_EVENT64 ? 8 : 4;
			if (size > rem || size < hlen)
				break;			/* reported below */
			if (eflags & 0x1) {		/* extended data items */
				for (;;) {
					if (size - hlen < 8) {
						snprintf(why, whylen, "extended data item at +0x%x "
							 "overruns the event (size %u)", hlen, size);
						return -1;
					}
					uint16_t isz = ps_rd16(p + hlen);
					uint16_t link = ps_rd16(p + hlen + 4);
					if (isz < 8 || isz > size - hlen) {
						snprintf(why, whylen, "extended data item at +0x%x has "
							 "size %u (event size %u)", hlen, isz, size);
						return -1;
					}
					hlen += isz;
					if (!(link & 1))
						break;
				}
			}
			break;
		}
		default:
			/* TIMED, ERROR, WNODE and unknown: the size is the first u16. */
			hlen = 8;
			if (rem < hlen)
				goto short_hdr;
			size = ps_rd16(p);
			ev->ptr_size = 8;
			break;
		}
	} else if ((flags & 0xf0) == 0x90) {	/* WPP MESSAGE_TRACE_HEADER */
		uint16_t opt;
		ev->htype = PS_ETL_HT_MESSAGE;
		hlen = 8;
		if (rem < hlen)
			goto short_hdr;
		size = ps_rd16(p);
		opt = ps_rd16(p + 6);
		if (opt & 0x01) hlen += 4;
		if (opt & 0x02) hlen += 16;
		else if (opt & 0x04) hlen += 4;
		if (opt & 0x18) {
			if (size >= hlen + 8 && rem >= hlen + 8)
				ev->ts = (int64_t)ps_rd64(p + hlen);
			hlen += 8;
		}
		if (opt & 0x20) {
			if (size >= hlen + 8 && rem >= hlen + 8) {
				ev->tid = ps_rd32(p + hlen);
				ev->pid = ps_rd32(p + hlen + 4);
			}
			hlen += 8;
		} else {
			ev->has_tid = false;
		}
		ev->ptr_size = 8;
	} else {
		snprintf(why, whylen, "unknown event marker 0x%08x", marker);
		return -1;
	}
	if (size < hlen || size > rem) {
		snprintf(why, whylen, "event of header type %u has size %u (header %u, %u bytes left "
			 "in the buffer)", ev->htype, size, hlen, rem);
		return -1;
	}
	ev->size = size;
	ev->payload = p + hlen;
	ev->payload_len = size - hlen;
	uint32_t adv = (size + 7) & ~7u;
	return adv > rem ? (int)rem : (int)adv;
short_hdr:
	snprintf(why, whylen, "event header (type %u) cut by the end of the buffer (%u bytes left)",
		 ht, rem);
	return -1;
}

/* --- buffers ------------------------------------------------------------------------------- */

static int read_at(struct ps_etl *e, struct acct *a, void *dst, size_t len, uint64_t off)
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

static int ensure(uint8_t **mem, size_t *cap, size_t need)
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
 * Reads the 0x48-byte header at off into ref. 1 ok, 0 clean end, -1 cannot continue. Touches
 * nothing in e but the fd (problems and counts go to a): decoder threads call it.
 */
static int read_ref(struct ps_etl *e, struct acct *a, uint64_t off, uint32_t index,
		    struct bufref *ref)
{
	uint8_t h[HDR];
	int n;

	if (off >= e->st.file_size)
		return 0;
	n = read_at(e, a, h, HDR, off);
	if (n < 0) {
		acct_problem(a, off, "read error: %s", strerror(-n));
		return -1;
	}
	if (n < HDR) {
		acct_problem(a, off, "file ends inside buffer %u's header (%d of %d bytes)", index, n,
			     HDR);
		a->st.truncated = true;
		return -1;
	}
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
		acct_problem(a, off, "buffer %u: BufferSize %u is impossible (expected 0x48..0x%x); "
			     "cannot find the next buffer", index, ref->size, PS_ETL_MAX_BUFFER);
		return -1;
	}
	return 1;
}

/*
 * Loads the data of ref into c (decompressing through *cbuf). 1 ok, 0 skip this buffer (problem
 * recorded in a). Like read_ref, it only reads e: decoder threads call it.
 */
static int load_buffer(struct ps_etl *e, struct acct *a, struct cursor *c, const struct bufref *ref,
		       uint8_t **cbuf, size_t *ccap)
{
	uint64_t avail = e->st.file_size - ref->off;
	int n;

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
		acct_problem(a, ref->off, "buffer %u: SavedOffset 0x%x outside the buffer "
			     "(BufferSize 0x%x)", ref->index, ref->saved, ref->size);
		return 0;
	}
	if (ensure(&c->mem, &c->cap, ref->saved) < 0) {
		acct_problem(a, ref->off, "out of memory for a buffer of %u bytes", ref->saved);
		return 0;
	}
	if (ref->flag & PS_ETL_BUF_COMPRESSED) {
		size_t clen = ref->size - HDR;
		size_t bad = 0;
		long got;

		a->st.compressed++;
		if (e->hdr.compression != 3 && e->hdr.compression != 0) {
			acct_problem(a, ref->off, "buffer %u: compression format %u is not "
				     "supported (only XPRESS, 3)", ref->index, e->hdr.compression);
			return 0;
		}
		if (avail < ref->size) {
			acct_problem(a, ref->off, "compressed buffer %u of %u bytes cut by the end "
				     "of the file (%llu bytes left)", ref->index, ref->size,
				     (unsigned long long)avail);
			a->st.truncated = true;
			return 0;
		}
		if (ensure(cbuf, ccap, ref->size) < 0)
			return 0;
		n = read_at(e, a, *cbuf, ref->size, ref->off);
		if (n != (int)ref->size) {
			acct_problem(a, ref->off, "short read of buffer %u", ref->index);
			return 0;
		}
		memcpy(c->mem, *cbuf, HDR);
		got = ps_xpress_decompress(*cbuf + HDR, clen, c->mem + HDR, ref->saved - HDR, &bad);
		if (got < 0 || (size_t)got != ref->saved - HDR) {
			if (got < 0)
				acct_problem(a, ref->off + HDR + bad, "buffer %u: XPRESS stream is "
					     "corrupt (%s)", ref->index, got == -ENOSPC ?
					     "decodes to more than SavedOffset" : "bad token");
			else
				acct_problem(a, ref->off, "buffer %u: decompressed to %ld bytes, "
					     "SavedOffset says %u", ref->index, got, ref->saved - HDR);
			return 0;
		}
		c->end = ref->saved;
	} else {
		uint32_t want = ref->saved;
		if (avail < want) {
			/* Keep the complete events before the cut. */
			acct_problem(a, ref->off, "buffer %u cut by the end of the file: %llu of %u "
				     "bytes of data", ref->index, (unsigned long long)avail, want);
			a->st.truncated = true;
			want = (uint32_t)avail;
		}
		n = read_at(e, a, c->mem, want, ref->off);
		if (n < 0 || (uint32_t)n < want) {
			acct_problem(a, ref->off, "short read of buffer %u", ref->index);
			return 0;
		}
		c->end = want;
	}
	c->pos = HDR;
	c->loaded = true;
	a->st.data_bytes += c->end - HDR;
	return 1;
}

/*
 * Next event from the loaded buffer in c; false when the buffer is exhausted. Inlined with
 * parse_event: `etl info` calls this per event, and the calls cost more than a small header.
 */
static inline __attribute__((always_inline)) bool cursor_next(struct ps_etl *e, struct cursor *c, struct ps_etl_event *ev)
{
	char why[200];

	if (!c->loaded)
		return false;
	int adv = parse_event(c->mem, c->pos, c->end, ev, why, sizeof(why));
	if (adv <= 0) {
		if (adv < 0)
			problem(e, c->ref.off + c->pos, "buffer %u, event at +0x%x: %s; rest of the "
				"buffer skipped", c->ref.index, c->pos, why);
		c->loaded = false;
		return false;
	}
	ev->cpu = c->ref.cpu;
	ev->file_off = c->ref.off;
	ev->buf_index = c->ref.index;
	c->pos += adv;
	return true;
}

/* --- header -------------------------------------------------------------------------------- */

static int parse_logfile(struct ps_etl *e, const struct ps_etl_event *ev, char *err, size_t errlen)
{
	struct ps_etl_logfile *h = &e->hdr;
	const uint8_t *p = ev->payload;
	unsigned ptr = ev->ptr_size;
	uint32_t tz = 0x38 + 2 * ptr, after = tz + 176, fixed = after + 32;

	if (ev->payload_len < fixed) {
		snprintf(err, errlen, "%s: offset 0x%x: TRACE_LOGFILE_HEADER is %u bytes, the %u-bit "
			 "layout needs %u", e->name, ev->buf_off + 32, ev->payload_len, ptr * 8, fixed);
		return -PS_ERR__CORRUPT;
	}
	h->buffer_size = ps_rd32(p);
	memcpy(h->version, p + 4, 4);
	h->provider_version = ps_rd32(p + 8);
	h->ncpus = ps_rd32(p + 0x0c);
	h->end_time = (int64_t)ps_rd64(p + 0x10);
	h->timer_resolution = ps_rd32(p + 0x18);
	h->max_file_size = ps_rd32(p + 0x1c);
	h->log_file_mode = ps_rd32(p + 0x20);
	h->buffers_written = ps_rd32(p + 0x24);
	h->start_buffers = ps_rd32(p + 0x28);
	h->pointer_size = ps_rd32(p + 0x2c);
	h->events_lost = ps_rd32(p + 0x30);
	h->cpu_mhz = ps_rd32(p + 0x34);
	h->tz_bias = (int32_t)ps_rd32(p + tz);
	h->boot_time = (int64_t)ps_rd64(p + after);
	h->perf_freq = (int64_t)ps_rd64(p + after + 8);
	h->start_time = (int64_t)ps_rd64(p + after + 16);
	h->clock_type = ps_rd32(p + after + 24);
	h->buffers_lost = ps_rd32(p + after + 28);
	size_t used = ps_etl_utf16(p + fixed, ev->payload_len - fixed, h->logger_name,
				   sizeof(h->logger_name));
	ps_etl_utf16(p + fixed + used, ev->payload_len - fixed - used, h->logfile_name,
		     sizeof(h->logfile_name));
	h->t0 = ev->ts;
	if (h->clock_type == 0)
		h->clock_type = 1;
	return 0;
}

static int read_header(struct ps_etl *e, char *err, size_t errlen)
{
	struct bufref ref;
	struct ps_etl_event ev;
	uint8_t h[HDR];
	char why[200];
	struct acct a = { 0 };	/* bytes_read restarts after the header; nothing to apply */
	int n = read_at(e, &a, h, HDR, 0);

	if (n < 0) {
		snprintf(err, errlen, "%s: %s", e->name, strerror(-n));
		return n;
	}
	if (n < HDR) {
		snprintf(err, errlen, "%s: offset 0x0: file of %d bytes is too short for an ETL "
			 "buffer header (0x48 bytes)", e->name, n);
		return -PS_ERR__CORRUPT;
	}
	ref.off = 0;
	ref.index = 0;
	ref.size = ps_rd32(h);
	ref.saved = ps_rd32(h + 4);
	ref.seq = (int64_t)ps_rd64(h + 0x18);
	ref.cpu = ps_rd16(h + 0x28) & 0x07ff;
	ref.flag = ps_rd16(h + 0x34);
	uint16_t btype = ps_rd16(h + 0x36);
	if (ref.size < HDR || ref.size > PS_ETL_MAX_BUFFER || ref.saved < HDR + 32 ||
	    ref.saved > ref.size || (ref.flag & PS_ETL_BUF_COMPRESSED)) {
		snprintf(err, errlen, "%s: offset 0x0: not an ETL file (header buffer: BufferSize "
			 "0x%x, SavedOffset 0x%x, BufferFlag 0x%x)", e->name, ref.size, ref.saved,
			 ref.flag);
		return -PS_ERR__CORRUPT;
	}
	if (btype != 4)
		/* Not fatal: some writers leave it generic; the logfile event decides. */
		problem(e, 0, "header buffer has BufferType %u, expected 4 (HEADER)", btype);
	e->hdr.header_buffer_flag = ref.flag;
	e->hdr.header_buffer_state = ps_rd32(h + 0x2c);
	if (ensure(&e->cur.mem, &e->cur.cap, ref.saved) < 0)
		return -ENOMEM;
	n = read_at(e, &a, e->cur.mem, ref.saved, 0);
	if (n < (int)ref.saved) {
		snprintf(err, errlen, "%s: offset 0x0: file ends inside the header buffer's data "
			 "(%d of 0x%x bytes)", e->name, n < 0 ? 0 : n, ref.saved);
		return -PS_ERR__CORRUPT;
	}
	if (parse_event(e->cur.mem, HDR, ref.saved, &ev, why, sizeof(why)) <= 0 ||
	    !ev.kernel || ev.group != 0 || ev.type != 0 ||
	    (ev.htype != PS_ETL_HT_SYSTEM32 && ev.htype != PS_ETL_HT_SYSTEM64)) {
		snprintf(err, errlen, "%s: offset 0x48: not an ETL file (first event is not a "
			 "TRACE_LOGFILE_HEADER: marker 0x%08x)", e->name, ps_rd32(e->cur.mem + HDR));
		return -PS_ERR__CORRUPT;
	}
	ev.buf_off = HDR;
	n = parse_logfile(e, &ev, err, errlen);
	if (n < 0)
		return n;
	if (e->hdr.log_file_mode & PS_ETL_MODE_COMPRESSED)
		e->hdr.compression = e->hdr.header_buffer_state & 0xffff;
	if (e->hdr.perf_freq <= 0 && e->hdr.clock_type == 1) {
		snprintf(err, errlen, "%s: offset 0x%x: PerfFreq %lld is not a clock frequency",
			 e->name, HDR + 32 + 0x100, (long long)e->hdr.perf_freq);
		return -PS_ERR__CORRUPT;
	}
	return 0;
}

/* --- ordered mode: index, per-processor queues --------------------------------------------- */

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
		int r = read_ref(e, &a, off, i, &ref);

		acct_apply(e, &a);
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
			problem(e, off, "buffer %u: ProcessorIndex %u is impossible; buffer skipped",
				i, ref.cpu);
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
		if (cursor_next(e, c, &c->ev)) {
			c->have_ev = true;
			return;
		}
		if (c->qpos >= c->nq)
			return;
		struct acct a = { 0 };
		load_buffer(e, &a, c, &e->refs[c->q[c->qpos++]], &e->cbuf, &e->ccap);
		acct_apply(e, &a);
	}
}

/* --- file order with decoder threads ------------------------------------------------------ */

#define SPIN_ROUNDS 4096	/* ~100-500 us of pause: longer than decoding one 64 KiB buffer */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* A slot changed state (lock held). */
static void pipe_signal(struct pipe *p)
{
	__atomic_store_n(&p->gen, p->gen + 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&p->cond);
}

/*
 * Waits for pipe_signal() (lock held on entry and exit). Spins first: a buffer decodes in tens of
 * microseconds, while waking a sleeping thread on another (virtual) CPU can take as long again,
 * and a futex round trip per buffer made the threaded walk no faster than one thread.
 */
static void pipe_wait(struct pipe *p)
{
	uint32_t g = p->gen;

	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < SPIN_ROUNDS && __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE) == g; i++)
		cpu_relax();
	pthread_mutex_lock(&p->lock);
	if (p->gen == g)
		pthread_cond_wait(&p->cond, &p->lock);
}

/*
 * Claims the next buffer in file order (lock held): reads its header and returns its slot, to be
 * loaded without the lock. At the end of the chain marks the slot as the end and returns NULL.
 */
static struct slot *pipe_claim(struct ps_etl *e, struct pipe *p)
{
	struct slot *s = &p->slot[p->claim % RING];
	int r = read_ref(e, &s->acct, p->scan_off, p->claim, &s->cur.ref);

	p->claim++;
	if (r <= 0) {
		s->end = true;
		s->state = SLOT_READY;
		p->scan_done = true;
		pipe_signal(p);
		return NULL;
	}
	p->scan_off += s->cur.ref.size;
	s->end = false;
	s->state = SLOT_BUSY;
	return s;
}

/* Something to decode: the chain goes on and the ring has a free slot (lock held). */
static bool pipe_can_claim(const struct pipe *p)
{
	uint32_t lowest = p->take - (p->held ? 1 : 0);

	return !p->scan_done && p->claim - lowest < RING;
}

/* Loads a claimed slot without the lock, then publishes it (lock held on entry and exit). */
static void pipe_load(struct ps_etl *e, struct pipe *p, struct slot *s)
{
	struct bufref ref = s->cur.ref;

	pthread_mutex_unlock(&p->lock);
	load_buffer(e, &s->acct, &s->cur, &ref, &s->cbuf, &s->ccap);
	pthread_mutex_lock(&p->lock);
	s->state = SLOT_READY;
	pipe_signal(p);
}

static void *pipe_helper(void *arg)
{
	struct ps_etl *e = arg;
	struct pipe *p = e->pipe;

	pthread_mutex_lock(&p->lock);
	while (!p->stop && !p->scan_done) {
		if (!pipe_can_claim(p)) {
			pipe_wait(p);
			continue;
		}
		struct slot *s = pipe_claim(e, p);
		if (s)
			pipe_load(e, p, s);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/*
 * The reader's next buffer in file order: releases the one it parsed, then takes the next when
 * it is ready, decoding buffers itself rather than waiting while there is work. Applies the
 * buffer's statistics and problems in file order. NULL at the end of the walk.
 */
static struct cursor *pipe_next(struct ps_etl *e)
{
	struct pipe *p = e->pipe;
	struct slot *s;

	pthread_mutex_lock(&p->lock);
	if (p->held) {
		p->slot[(p->take - 1) % RING].state = SLOT_FREE;
		p->held = false;
		pipe_signal(p);
	}
	for (;;) {
		s = &p->slot[p->take % RING];
		if (s->state == SLOT_READY)
			break;
		if (pipe_can_claim(p)) {
			struct slot *c = pipe_claim(e, p);
			if (c)
				pipe_load(e, p, c);
			continue;
		}
		pipe_wait(p);
	}
	p->take++;
	p->held = true;
	pthread_mutex_unlock(&p->lock);
	acct_apply(e, &s->acct);
	return s->end ? NULL : &s->cur;
}

/*
 * Decoder threads pay off when buffers are compressed (decoding is most of the work, and buffers
 * decode independently) and there is a second processor. POOLSCOPE_ETL_THREADS=N sets the number
 * of helper threads (0: the reader alone, as for uncompressed files).
 */
static void pipe_start(struct ps_etl *e)
{
	const char *env = getenv("POOLSCOPE_ETL_THREADS");
	long n = sysconf(_SC_NPROCESSORS_ONLN) - 1;
	struct pipe *p;

	if (env && *env)
		n = strtol(env, NULL, 10);
	if (n > MAX_HELPERS)
		n = MAX_HELPERS;
	if (n <= 0 || !(e->hdr.log_file_mode & PS_ETL_MODE_COMPRESSED))
		return;
	p = calloc(1, sizeof(*p));
	if (!p)
		return;				/* not fatal: the reader decodes alone */
	if (pthread_mutex_init(&p->lock, NULL)) {
		free(p);
		return;
	}
	if (pthread_cond_init(&p->cond, NULL)) {
		pthread_mutex_destroy(&p->lock);
		free(p);
		return;
	}
	e->pipe = p;
	for (long i = 0; i < n; i++) {
		if (pthread_create(&p->helper[p->nhelpers], NULL, pipe_helper, e))
			break;			/* fewer helpers; the reader decodes what they don't */
		p->nhelpers++;
	}
}

static void pipe_stop(struct ps_etl *e)
{
	struct pipe *p = e->pipe;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pipe_signal(p);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nhelpers; i++)
		pthread_join(p->helper[i], NULL);
	for (unsigned i = 0; i < RING; i++) {
		free(p->slot[i].cur.mem);
		free(p->slot[i].cbuf);
	}
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
	e->pipe = NULL;
}

/* --- public -------------------------------------------------------------------------------- */

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
	r = read_header(e, err, errlen);
	if (r < 0)
		goto fail;
	e->st.bytes_read = 0;
	if (flags & PS_ETL_ORDERED) {
		r = build_index(e);
		if (r < 0) {
			snprintf(err, errlen, "%s: %s", name, strerror(-r));
			goto fail;
		}
		for (uint32_t c = 0; c < e->ncpus; c++)
			cpu_advance(e, &e->cpus[c]);
	} else {
		e->walk = &e->cur;
		pipe_start(e);
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
	pipe_stop(e);			/* before the fd closes: helpers read from it */
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
	if (e->flags & PS_ETL_ORDERED) {
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
		 * The event points into best->mem, which the advance may overwrite when it loads
		 * the next buffer: copy it aside first.
		 */
		if (ensure(&e->cur.mem, &e->cur.cap, ev->size) < 0)
			return -ENOMEM;
		memcpy(e->cur.mem, ev->raw, ev->size);
		ev->payload = e->cur.mem + (ev->payload - ev->raw);
		if (ev->guid)
			ev->guid = e->cur.mem + (ev->guid - ev->raw);
		ev->raw = e->cur.mem;
		cpu_advance(e, best);
		e->st.events++;
		return 1;
	}
	for (;;) {
		if (cursor_next(e, e->walk, ev)) {
			e->st.events++;
			return 1;
		}
		if (e->done)
			return 0;
		if (e->pipe) {
			e->walk = pipe_next(e);
			if (!e->walk) {
				e->walk = &e->cur;	/* not loaded: the walk stays ended */
				e->cur.loaded = false;
				e->done = true;
				return 0;
			}
			continue;
		}
		struct bufref ref;
		struct acct a = { 0 };
		int r = read_ref(e, &a, e->next_off, e->next_index, &ref);
		if (r > 0) {
			e->next_off += ref.size;
			e->next_index++;
			load_buffer(e, &a, &e->cur, &ref, &e->cbuf, &e->ccap);
		}
		acct_apply(e, &a);
		if (r <= 0) {
			e->done = true;
			return 0;
		}
	}
}
