/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal to the .etl reader: the decoding of one event header.
 *
 * An event starts with a 32-bit marker whose byte 3 holds flags and byte 2 the header type:
 * flags 0xc0 mark the ETW header kinds (PS_ETL_HT_*), 0x9X a WPP MESSAGE_TRACE_HEADER, anything
 * else is not an event. The kind fixes where the size, the kernel group and type or the
 * provider's ids, the thread, the process and the timestamp are, how long the header is, and
 * the pointer size of the payload; the payload follows the header, and the event takes its size
 * rounded up to 8 bytes. An EVENT_HEADER event may carry extended data items before its payload
 * (each at least 8 bytes and within the event, bit 0 of its linkage word saying another one
 * follows); a PERFINFO header may be followed by a PEBS index and PMC counters; a WPP header by
 * the optional fields its flags announce. docs/etw.md gives the layouts.
 *
 * The normal end of a buffer's data is a 0xffffffff fill marker or too little room for a
 * marker. A marker of no known kind, a header cut by the end of the data, a size smaller than
 * the header or larger than the data left, or extended items that overrun the event make the
 * event malformed.
 *
 * Defined in this header, inline: it runs once per event, and each of the reader's walks (file
 * order, time order, the threaded scan) has it inlined into its loop.
 */
#ifndef PS_ETW_ETL_EVENT_H
#define PS_ETW_ETL_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "userspace/lib/etw/etl.h"

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
	 * the whole struct, which would be a good part of the work per event); raw and what
	 * follows are set for every event returned (here, below, and by the caller).
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
		ev->id = ps_rd16(p + 4);	/* MessageNumber: the message within its GUID */
		opt = ps_rd16(p + 6);
		if (opt & 0x01) hlen += 4;
		/* the message GUID (TRACE_MESSAGE_GUID), else a component id: no GUID */
		if (opt & 0x02) {
			if (size >= hlen + 16 && rem >= hlen + 16)
				ev->guid = p + hlen;
			hlen += 16;
		} else if (opt & 0x04) {
			hlen += 4;
		}
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

#endif
