// SPDX-License-Identifier: GPL-2.0
/*
 * The .etl reader: buffer walk (file order or per-processor merge by timestamp), XPRESS
 * decompression of relogged buffers, event header dispatch for every header kind (8-byte
 * aligned), TRACE_LOGFILE_HEADER in its 32- and 64-bit layouts. See etl.h for the contract.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/lib/util/util.h"
#include "userspace/lib/etw/etl.h"
#include "userspace/lib/etw/etwkernel.h"
#include "userspace/lib/etw/xpress.h"

#define HDR PS_ETL_WMI_BUFFER_HEADER_SIZE
#define MAX_PROBLEMS 8
#define MAX_CPUS 4096
#define ACCT_PROBLEMS 4		/* per buffer: header, data and one event report one each at most */
#define MAX_HELPERS (PS_ETL_SCAN_MAX - 1)	/* ps_etl_scan() helper threads */
/* A read of a buffer's data also takes the next buffer's header when this little fill is between */
#define CHAIN_GAP 4096
/* Smaller files are scanned by the calling thread alone (a thread start costs ~50-100 us). */
#define SCAN_MIN_FILE (1u << 20)

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

/* Adds the counts of d to st (problems aside: they go with their text). */
static void stats_add(struct ps_etl_stats *st, const struct ps_etl_stats *d)
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

/* Adds a buffer's statistics and problems to the file's, and clears a for the next buffer. */
static void acct_apply(struct ps_etl *e, struct acct *a)
{
	stats_add(&e->st, &a->st);
	for (unsigned i = 0; i < a->nprob; i++)
		problem(e, a->prob[i].off, "%s", a->prob[i].msg);
	e->st.problems += a->lost;
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

/*
 * How many whole periods of len days *days holds, taken off it; below max when max is not 0 (the
 * last period of the enclosing one is a day longer, so its last day must not start another).
 */
static int64_t whole_periods(int64_t *days, int64_t len, int64_t max)
{
	int64_t n = *days / len;

	if (max && n >= max)
		n = max - 1;
	*days -= n * len;
	return n;
}

/*
 * Civil date by arithmetic, not gmtime_r(): glibc's loads the local time zone file on first use,
 * a few system calls on every `etl info` for a UTC string. 1601-01-01 starts a 400-year
 * Gregorian cycle (146097 days), so the cycle, century, 4-year and year within it follow by
 * division; the last year of a 4-year group and the last century of a cycle are one day longer.
 */
char *ps_etl_filetime_str(int64_t ft, char buf[64])
{
	static const uint8_t mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	const int64_t day = 864000000000LL;	/* 100 ns units */
	int64_t days, rem;
	int64_t n400, n100, n4, n1, year;
	unsigned month = 0;

	if (ft <= 0) {
		snprintf(buf, 64, "-");
		return buf;
	}
	days = ft / day;
	rem = ft % day;
	n400 = whole_periods(&days, 146097, 0);
	n100 = whole_periods(&days, 36524, 4);
	n4 = whole_periods(&days, 1461, 0);
	n1 = whole_periods(&days, 365, 4);
	year = 1601 + 400 * n400 + 100 * n100 + 4 * n4 + n1;
	bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
	for (;; month++) {
		int64_t len = mdays[month] + (month == 1 && leap);

		if (days < len)
			break;
		days -= len;
	}
	snprintf(buf, 64, "%04lld-%02u-%02lld %02lld:%02lld:%02lld.%06lld UTC", (long long)year,
		 month + 1, (long long)days + 1, (long long)(rem / 36000000000LL),
		 (long long)(rem / 600000000 % 60), (long long)(rem / 10000000 % 60),
		 (long long)(rem % 10000000 / 10));
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

/*
 * Nanoseconds beyond int64 (a timestamp or start time from a damaged header: 2^63 ns is 292
 * years) come out as its ends, never wrapped: the products are taken in 128 bits.
 */
static int64_t clamp64(__int128 v)
{
	return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

int64_t ps_etl_rel_ns(const struct ps_etl_logfile *h, int64_t ts)
{
	__int128 d = (__int128)ts - h->t0;

	switch (h->clock_type) {
	case 2:
		return clamp64(d * 100);
	case 3:
		return h->cpu_mhz ? clamp64(d * 1000 / h->cpu_mhz) : 0;
	default:
		return h->perf_freq > 0 ? clamp64(d * 1000000000 / h->perf_freq) : 0;
	}
}

int64_t ps_etl_wall_ns(const struct ps_etl_logfile *h, int64_t ts)
{
	/* FILETIME counts 100 ns since 1601-01-01; the Unix epoch is 11644473600 s later. */
	return clamp64(((__int128)h->start_time - 116444736000000000LL) * 100 +
		       ps_etl_rel_ns(h, ts));
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

	/*
	 * Only the fields before raw differ between header kinds: clear those (three stores, not
	 * the whole struct: a fifth of the per-event work of `etl info`); raw and what follows are
	 * set for every event returned (here, below, and by the caller).
	 */
	memset(ev, 0, offsetof(struct ps_etl_event, raw));
	ev->tid = UINT32_MAX;
	ev->pid = UINT32_MAX;
	ev->has_tid = true;
	ev->raw = p;
	ev->buf_off = off;
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
		acct_problem(a, off, "buffer %u: BufferSize %u is impossible (expected 0x48..0x%x); "
			     "cannot find the next buffer", index, ref->size, PS_ETL_MAX_BUFFER);
		return -1;
	}
	return 1;
}

/*
 * Reads the 0x48-byte header at off into ref. 1 ok, 0 clean end, -1 cannot continue. Touches
 * nothing in e but the fd (problems and counts go to a): scan workers call it.
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
	return parse_ref(a, h, off, index, ref);
}

/*
 * First half of loading ref into c: checks, and the read (compressed bytes into *cbuf, plain
 * data into c->mem). With next non-NULL the same read goes on through the next buffer's header
 * when at most CHAIN_GAP bytes of fill lie between (always for compressed buffers, whose size on
 * disk is their data), and *next then points at that header: one pread per buffer, not two.
 * 1: load_finish() completes c; 0: skip this buffer (problem recorded in a). Only reads e.
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
		acct_problem(a, ref->off, "buffer %u: SavedOffset 0x%x outside the buffer "
			     "(BufferSize 0x%x)", ref->index, ref->saved, ref->size);
		return 0;
	}
	if (ensure(&c->mem, &c->cap, ref->saved) < 0) {
		acct_problem(a, ref->off, "out of memory for a buffer of %u bytes", ref->saved);
		return 0;
	}
	if (ref->flag & PS_ETL_BUF_COMPRESSED) {
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
		ahead = next && avail >= (uint64_t)ref->size + HDR;
		len = ref->size + (ahead ? HDR : 0);
		if (ensure(cbuf, ccap, len) < 0)
			return 0;
		n = read_at(e, a, *cbuf, len, ref->off);
		if (n != (int)len) {
			acct_problem(a, ref->off, "short read of buffer %u", ref->index);
			return 0;
		}
		if (ahead)
			*next = *cbuf + ref->size;
		return 1;
	}
	uint32_t want = ref->saved;
	if (avail < want) {
		/* Keep the complete events before the cut. */
		acct_problem(a, ref->off, "buffer %u cut by the end of the file: %llu of %u "
			     "bytes of data", ref->index, (unsigned long long)avail, want);
		a->st.truncated = true;
		want = (uint32_t)avail;
	}
	ahead = next && ref->size - want <= CHAIN_GAP && avail >= (uint64_t)ref->size + HDR;
	len = ahead ? ref->size + HDR : want;
	if (ahead && ensure(&c->mem, &c->cap, len) < 0)
		ahead = false, len = want;
	n = read_at(e, a, c->mem, len, ref->off);
	if (n < 0 || (uint32_t)n < want) {
		acct_problem(a, ref->off, "short read of buffer %u", ref->index);
		return 0;
	}
	if (ahead && (size_t)n == len)
		*next = c->mem + ref->size;
	c->end = want;
	return 1;
}

/* Second half: decompresses a compressed buffer (the CPU work, no lock needed). 1 ok, 0 skip. */
static int load_finish(struct acct *a, struct cursor *c, const uint8_t *cbuf)
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
				acct_problem(a, ref->off + HDR + bad, "buffer %u: XPRESS stream is "
					     "corrupt (%s)", ref->index, got == -ENOSPC ?
					     "decodes to more than SavedOffset" : "bad token");
			else
				acct_problem(a, ref->off, "buffer %u: decompressed to %ld bytes, "
					     "SavedOffset says %u", ref->index, got, ref->saved - HDR);
			return 0;
		}
		c->end = ref->saved;
	}
	c->pos = HDR;
	c->loaded = true;
	a->st.data_bytes += c->end - HDR;
	return 1;
}

/* Loads the data of ref into c (decompressing through *cbuf). 1 ok, 0 skip (problem in a). */
static int load_buffer(struct ps_etl *e, struct acct *a, struct cursor *c, const struct bufref *ref,
		       uint8_t **cbuf, size_t *ccap)
{
	if (load_read(e, a, c, ref, cbuf, ccap, NULL) <= 0)
		return 0;
	return load_finish(a, c, *cbuf);
}

/*
 * Reads the next buffer of the file-order chain into c: 1 read (load_finish() makes it
 * walkable), 0 skipped (problem in a), -1 the chain ends (e->done set). Advances e's chain
 * state: ps_etl_scan() workers call it under their lock, one at a time.
 */
static int chain_next(struct ps_etl *e, struct acct *a, struct cursor *c, uint8_t **cbuf,
		      size_t *ccap)
{
	struct bufref ref;
	const uint8_t *next;
	int r;

	if (e->have_next) {
		e->have_next = false;
		r = parse_ref(a, e->next_hdr, e->next_off, e->next_index, &ref);
	} else {
		r = read_ref(e, a, e->next_off, e->next_index, &ref);
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

/* A malformed event ends its buffer: into a when given (scan workers), else straight into e. */
static __attribute__((noinline, cold)) void event_problem(struct ps_etl *e, struct acct *a,
							  const struct cursor *c, const char *why)
{
	if (a)
		acct_problem(a, c->ref.off + c->pos, "buffer %u, event at +0x%x: %s; rest of the "
			     "buffer skipped", c->ref.index, c->pos, why);
	else
		problem(e, c->ref.off + c->pos, "buffer %u, event at +0x%x: %s; rest of the "
			"buffer skipped", c->ref.index, c->pos, why);
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
			event_problem(e, a, c, why);
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
	struct ps_etl_event ev = { 0 };
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
	    !ev.kernel || ev.group != PS_ETW_GROUP_HEADER || ev.type != PS_ETW_HEADER_LOGFILE ||
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
		if (cursor_next(e, NULL, c, &c->ev)) {
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

/* --- file order on several threads: ps_etl_scan() ---------------------------------------- */

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
 * The chain lock is held for one pread (a buffer, ~14 KiB compressed): a few microseconds, more
 * than the adaptive mutex spins. The waiter then slept, and the futex sleep and wake-up cost
 * 40-80 us each, 15-20 times a scan of net.4.5.2.x64.etl on 2 vCPUs (perf sched timehist). So
 * spin longer first, SCAN_SPIN tries (~50-100 us), and sleep only after that: workers sharing a
 * processor (POOLSCOPE_ETL_THREADS above the count) still get out of the holder's way.
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

	stats_add(&w->st, &a->st);
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
		int r = chain_next(e, &w->a, w->cur, w->cbuf, w->ccap);

		pthread_mutex_unlock(&s->lock);
		if (r > 0)
			load_finish(&w->a, w->cur, *w->cbuf);
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
 * thread woken from the mutex was queued beside its waker: with 2 vCPUs, in 8 runs out of 8
 * one thread sat 1-4 ms of a ~9 ms scan, or both shared one processor. With the masks set the
 * two workers start within 0.1 ms and stay apart. Helpers share the other processors.
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
 * ones, where a buffer is walked in ~30 us and the threads made `etl info` on diaghub.kernel.1.etl
 * slower (4.8 ms against 4.0 ms a run). POOLSCOPE_ETL_THREADS=N sets N for any file (0 = none;
 * the tests use it on small files). At most MAX_HELPERS and nargs - 1.
 */
static unsigned scan_helpers(const struct ps_etl *e, unsigned nargs)
{
	const char *env = getenv("POOLSCOPE_ETL_THREADS");
	long n = sysconf(_SC_NPROCESSORS_ONLN) - 1;

	if (env && *env)
		n = strtol(env, NULL, 10);
	else if (e->st.file_size < SCAN_MIN_FILE || !(e->hdr.log_file_mode & PS_ETL_MODE_COMPRESSED))
		n = 0;
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
		stats_add(&e->st, &w->st);
		total += w->nprob;
		for (unsigned k = 0; k < w->nkept; k++)
			all[n++] = &w->kept[k];
	}
	qsort(all, n, sizeof(all[0]), cmp_kept);
	for (unsigned i = 0; i < n; i++)
		problem(e, all[i]->off, "%s", all[i]->msg);
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
		if (cursor_next(e, NULL, &e->cur, ev)) {
			e->st.events++;
			return 1;
		}
		if (e->done)
			return 0;
		struct acct a = { 0 };
		int r = chain_next(e, &a, &e->cur, &e->cbuf, &e->ccap);
		if (r > 0)
			load_finish(&a, &e->cur, e->cbuf);
		acct_apply(e, &a);
		if (r < 0)
			return 0;
	}
}
