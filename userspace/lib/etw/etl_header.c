// SPDX-License-Identifier: GPL-2.0
/*
 * The header buffer of an .etl and the clock it defines.
 *
 * Buffer 0 is the header buffer: never compressed, BufferType 4 (HEADER; another type is
 * reported, not fatal), and its first event is TRACE_LOGFILE_HEADER, a SYSTEM32/64 event of
 * group EventTrace, type 0, laid out with the producer's pointer size: 0x38 bytes of fixed
 * fields, two pointers, the 172-byte time zone and 4 bytes of padding, then BootTime, PerfFreq,
 * StartTime, ReservedFlags (the clock type) and BuffersLost, then the logger and log file names
 * in UTF-16. A file whose header buffer or first event does not fit this is not an .etl: it is
 * refused with -PS_ERR__CORRUPT and a message naming the offset. So is a QPC clock without a
 * frequency. When LogFileMode says the file is compressed, the low 16 bits of the header
 * buffer's State give the format (3 = XPRESS).
 *
 * The clock: the SystemTime of the header event is the origin (t0) and StartTime (a FILETIME)
 * the wall time at it; raw timestamps count QPC ticks at PerfFreq (clock type 1, and 0 read as
 * 1), 100 ns units (2), or CPU cycles at CpuSpeedInMHz (3).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "userspace/lib/util/util.h"
#include "userspace/lib/etw/etl_internal.h"
#include "userspace/lib/etw/etwkernel.h"

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
	/* the usual QPC rates divide a second evenly: a multiply per event, not a division */
	h->ns_per_tick = h->perf_freq > 0 && 1000000000 % h->perf_freq == 0 ?
			 1000000000 / h->perf_freq : 0;
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

int ps_etl__read_header(struct ps_etl *e, char *err, size_t errlen)
{
	struct bufref ref;
	struct ps_etl_event ev = { 0 };
	uint8_t h[HDR];
	char why[200];
	struct acct a = { 0 };	/* bytes_read restarts after the header; nothing to apply */
	int n = ps_etl__read_at(e, &a, h, HDR, 0);

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
		ps_etl__problem(e, 0, "header buffer has BufferType %u, expected 4 (HEADER)",
				btype);
	e->hdr.header_buffer_flag = ref.flag;
	e->hdr.header_buffer_state = ps_rd32(h + 0x2c);
	if (ps_etl__ensure(&e->cur.mem, &e->cur.cap, ref.saved) < 0)
		return -ENOMEM;
	n = ps_etl__read_at(e, &a, e->cur.mem, ref.saved, 0);
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
		if (h->ns_per_tick)
			return clamp64(d * h->ns_per_tick);
		return h->perf_freq > 0 ? clamp64(d * 1000000000 / h->perf_freq) : 0;
	}
}

int64_t ps_etl_wall_ns(const struct ps_etl_logfile *h, int64_t ts)
{
	/* FILETIME counts 100 ns since 1601-01-01; the Unix epoch is 11644473600 s later. */
	return clamp64(((__int128)h->start_time - 116444736000000000LL) * 100 +
		       ps_etl_rel_ns(h, ts));
}
