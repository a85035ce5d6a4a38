// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only .etl writer (#included by the tests that need it: each test binary links only the
 * harness and libpscore.a). It writes the documented layout (docs/etw.md): an uncompressed
 * header buffer with TRACE_LOGFILE_HEADER (32- or 64-bit), then per-processor buffers of kernel
 * events (SYSTEM or PERFINFO headers, 8-byte aligned, 0xFF fill), optionally XPRESS-compressed
 * with a simple greedy LZ77 compressor ([MS-XCA] 2.3 format, valid for any decoder).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EW_HDR 0x48

/* Not every including test uses every helper. */
#pragma GCC diagnostic ignored "-Wunused-function"

/* --- XPRESS plain LZ77 compressor ---------------------------------------------------------- */

struct xw {
	uint8_t *out;
	size_t n, cap;
	size_t flag_pos;
	uint32_t flags;
	int nflags;
	size_t nibble_pos;
	int have_nibble;
};

static void xw_byte(struct xw *w, uint8_t b)
{
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 4096;
		w->out = realloc(w->out, w->cap);
	}
	w->out[w->n++] = b;
}

static void xw_put32(struct xw *w, size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		w->out[at + i] = (uint8_t)(v >> (8 * i));
}

static void xw_flag(struct xw *w, int bit)
{
	w->flags = (w->flags << 1) | (uint32_t)bit;
	w->nflags++;
}

/* After an item's bytes: a full flag word is stored and the next one reserved. */
static void xw_after(struct xw *w)
{
	if (w->nflags == 32) {
		xw_put32(w, w->flag_pos, w->flags);
		w->flag_pos = w->n;
		for (int i = 0; i < 4; i++)
			xw_byte(w, 0);
		w->flags = 0;
		w->nflags = 0;
	}
}

static void xw_match(struct xw *w, size_t off, size_t len)
{
	size_t m = len - 3;
	uint32_t tok = (uint32_t)((off - 1) << 3);

	xw_flag(w, 1);
	if (m < 7) {
		tok |= (uint32_t)m;
		xw_byte(w, tok & 0xff);
		xw_byte(w, tok >> 8);
		xw_after(w);
		return;
	}
	tok |= 7;
	xw_byte(w, tok & 0xff);
	xw_byte(w, tok >> 8);
	m -= 7;
	uint8_t nib = m < 15 ? (uint8_t)m : 15;
	if (!w->have_nibble) {
		w->nibble_pos = w->n;
		xw_byte(w, nib);
		w->have_nibble = 1;
	} else {
		w->out[w->nibble_pos] |= (uint8_t)(nib << 4);
		w->have_nibble = 0;
	}
	if (m >= 15) {
		m -= 15;
		if (m < 255) {
			xw_byte(w, (uint8_t)m);
		} else {
			xw_byte(w, 255);
			m = len - 3;
			xw_byte(w, m & 0xff);
			xw_byte(w, (m >> 8) & 0xff);
		}
	}
	xw_after(w);
}

/* Compresses in[0..n) into a malloc'ed stream (*outlen bytes). */
static uint8_t *xpress_compress(const uint8_t *in, size_t n, size_t *outlen)
{
	struct xw w = { 0 };
	static int32_t head[4096];
	size_t i = 0;

	for (size_t k = 0; k < 4096; k++)
		head[k] = -1;
	w.flag_pos = 0;
	for (int k = 0; k < 4; k++)
		xw_byte(&w, 0);
	while (i < n) {
		size_t best = 0, boff = 0;
		if (i + 3 <= n) {
			uint32_t h = ((uint32_t)in[i] << 8 ^ (uint32_t)in[i + 1] << 4 ^ in[i + 2]) & 4095;
			int32_t cand = head[h];
			head[h] = (int32_t)i;
			if (cand >= 0 && i - (size_t)cand <= 8192) {
				size_t l = 0;
				while (i + l < n && l < 65535 && in[cand + l] == in[i + l])
					l++;
				if (l >= 3) {
					best = l;
					boff = i - (size_t)cand;
				}
			}
		}
		if (best) {
			xw_match(&w, boff, best);
			i += best;
		} else {
			xw_flag(&w, 0);
			xw_byte(&w, in[i++]);
			xw_after(&w);
		}
	}
	/* fill the last flag word with 1s: a decoder sees a match marker at the end of input */
	uint32_t f = w.nflags ? (w.flags << (32 - w.nflags)) | ((1u << (32 - w.nflags)) - 1) :
		     0xffffffffu;
	xw_put32(&w, w.flag_pos, f);
	*outlen = w.n;
	return w.out;
}

/* --- the writer ---------------------------------------------------------------------------- */

struct etlw_cpu {
	uint8_t *buf;
	uint32_t used;
};

struct etlw {
	FILE *f;
	unsigned ptr;
	uint32_t bufsize, ncpus;
	bool compress;
	int64_t t0, freq, start_ft;
	int64_t seq;
	uint32_t nbuffers;
	uint32_t events_lost, buffers_lost;
	int64_t end_ft;		/* the header's EndTime; 0: a minute after the start */
	struct etlw_cpu cpu[16];
};

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, (uint32_t)(v >> 32)); }
static void putptr(uint8_t *p, uint64_t v, unsigned ptr) { if (ptr == 8) put64(p, v); else put32(p, (uint32_t)v); }

static void etlw_buffer_header(uint8_t *h, uint32_t size, uint32_t saved, int64_t seq, uint16_t cpu,
			       uint16_t flag, uint16_t type, uint32_t state)
{
	memset(h, 0, EW_HDR);
	put32(h, size);
	put32(h + 4, saved);
	put32(h + 8, saved);
	put64(h + 0x18, (uint64_t)seq);
	put16(h + 0x28, cpu);
	put16(h + 0x2a, 1);		/* LoggerId */
	put32(h + 0x2c, state);
	put32(h + 0x30, saved);
	put16(h + 0x34, flag);
	put16(h + 0x36, type);
}

static void etlw_write_header(struct etlw *w)
{
	uint8_t *b = malloc(w->bufsize);
	unsigned p = w->ptr;
	uint32_t tz = 0x38 + 2 * p, after = tz + 176, fixed = after + 32;
	static const char *names[2] = { "poolscope test", "test.etl" };
	uint32_t strl = 0;

	memset(b, 0xff, w->bufsize);
	uint8_t *e = b + EW_HDR, *d = e + 32;
	memset(e, 0, 32 + fixed + 64);
	d[0] = 0;
	put32(d, w->bufsize);
	d[4] = 10; d[5] = 0; d[6] = 1; d[7] = 5;
	put32(d + 8, 19041);
	put32(d + 0x0c, w->ncpus);
	put64(d + 0x10, (uint64_t)(w->end_ft ? w->end_ft : w->start_ft + 600000000));
	put32(d + 0x18, 156250);
	put32(d + 0x20, 0x00000001 | (w->compress ? 0x04010000 : 0));
	put32(d + 0x24, w->nbuffers);
	put32(d + 0x28, 1);
	put32(d + 0x2c, p);
	put32(d + 0x30, w->events_lost);
	put32(d + 0x34, 2400);
	put32(d + tz, (uint32_t)-60);
	put64(d + after, (uint64_t)(w->start_ft - 36000000000LL));
	put64(d + after + 8, (uint64_t)w->freq);
	put64(d + after + 16, (uint64_t)w->start_ft);
	put32(d + after + 24, 1);
	put32(d + after + 28, w->buffers_lost);
	for (int s = 0; s < 2; s++) {
		const char *n = names[s];
		for (size_t i = 0; i <= strlen(n); i++) {
			put16(d + fixed + strl, (uint8_t)n[i]);
			strl += 2;
		}
	}
	uint32_t size = 32 + fixed + strl;
	put16(e, 2);
	e[2] = p == 8 ? 2 : 1;
	e[3] = 0xc0;
	put16(e + 4, (uint16_t)size);
	e[6] = 0; e[7] = 0;
	put32(e + 8, 1234);
	put32(e + 12, 4321);
	put64(e + 16, (uint64_t)w->t0);
	uint32_t saved = EW_HDR + ((size + 7) & ~7u);
	etlw_buffer_header(b, w->bufsize, saved, 0, 0, 0x01, 4, w->compress ? 3 : 3);
	fseek(w->f, 0, SEEK_SET);
	fwrite(b, 1, w->bufsize, w->f);
	free(b);
}

static struct etlw *etlw_open(const char *path, unsigned ptr, uint32_t ncpus, uint32_t bufsize,
			      bool compress, int64_t t0, int64_t freq, int64_t start_ft)
{
	struct etlw *w = calloc(1, sizeof(*w));

	w->f = fopen(path, "wb+");
	if (!w->f) {
		free(w);
		return NULL;
	}
	w->ptr = ptr;
	w->ncpus = ncpus;
	w->bufsize = bufsize;
	w->compress = compress;
	w->t0 = t0;
	w->freq = freq;
	w->start_ft = start_ft;
	w->nbuffers = 1;
	w->seq = 1;
	for (uint32_t c = 0; c < ncpus; c++) {
		w->cpu[c].buf = malloc(bufsize);
		w->cpu[c].used = EW_HDR;
	}
	etlw_write_header(w);		/* placeholder, rewritten at close */
	return w;
}

static void etlw_flush(struct etlw *w, uint32_t c)
{
	struct etlw_cpu *k = &w->cpu[c];

	if (k->used == EW_HDR)
		return;
	fseek(w->f, 0, SEEK_END);
	if (w->compress) {
		size_t clen;
		uint8_t *z = xpress_compress(k->buf + EW_HDR, k->used - EW_HDR, &clen);
		uint8_t h[EW_HDR];
		etlw_buffer_header(h, (uint32_t)(EW_HDR + clen), k->used, w->seq++, (uint16_t)c, 0x60,
				   0, 3);
		fwrite(h, 1, EW_HDR, w->f);
		fwrite(z, 1, clen, w->f);
		free(z);
	} else {
		memset(k->buf + k->used, 0xff, w->bufsize - k->used);
		etlw_buffer_header(k->buf, w->bufsize, k->used, w->seq++, (uint16_t)c, 0x20, 0, 3);
		fwrite(k->buf, 1, w->bufsize, w->f);
	}
	w->nbuffers++;
	k->used = EW_HDR;
}

/* A kernel event: perfinfo = PERFINFO header (no TID/PID), else SYSTEM (full). */
static void etlw_event(struct etlw *w, uint32_t c, bool perfinfo, uint8_t group, uint8_t type,
		       uint16_t version, uint32_t tid, uint32_t pid, int64_t ts, const void *payload,
		       uint32_t len)
{
	uint32_t hl = perfinfo ? 16 : 32, size = hl + len, adv = (size + 7) & ~7u;
	struct etlw_cpu *k = &w->cpu[c];

	if (k->used + adv > w->bufsize)
		etlw_flush(w, c);
	uint8_t *e = k->buf + k->used;
	memset(e, 0, adv);
	put16(e, version);
	e[2] = perfinfo ? (w->ptr == 8 ? 17 : 16) : (w->ptr == 8 ? 2 : 1);
	e[3] = 0xc0;
	put16(e + 4, (uint16_t)size);
	e[6] = type;
	e[7] = group;
	if (perfinfo) {
		put64(e + 8, (uint64_t)ts);
	} else {
		put32(e + 8, tid);
		put32(e + 12, pid);
		put64(e + 16, (uint64_t)ts);
	}
	memcpy(e + hl, payload, len);
	k->used += adv;
}

/* An event whose header the caller built (a WPP message, ...): size bytes at ev. */
static void etlw_raw(struct etlw *w, uint32_t c, const void *ev, uint32_t size)
{
	uint32_t adv = (size + 7) & ~7u;
	struct etlw_cpu *k = &w->cpu[c];

	if (k->used + adv > w->bufsize)
		etlw_flush(w, c);
	memset(k->buf + k->used, 0, adv);
	memcpy(k->buf + k->used, ev, size);
	k->used += adv;
}

static int etlw_close(struct etlw *w)
{
	for (uint32_t c = 0; c < w->ncpus; c++) {
		etlw_flush(w, c);
		free(w->cpu[c].buf);
	}
	etlw_write_header(w);
	int r = fclose(w->f);
	free(w);
	return r;
}

/* --- payload helpers ----------------------------------------------------------------------- */

static uint32_t ew_pool(uint8_t *d, unsigned p, uint32_t pooltype, const char *tag, uint64_t bytes,
			uint64_t entry, int64_t session)
{
	put32(d, pooltype);
	memcpy(d + 4, tag, 4);
	putptr(d + 8, bytes, p);
	putptr(d + 8 + p, entry, p);
	if (session < 0)
		return 8 + 2 * p;
	put32(d + 8 + 2 * p, (uint32_t)session);
	return 12 + 2 * p;
}

static uint32_t ew_image(uint8_t *d, unsigned p, uint64_t base, uint64_t size, const char *path)
{
	uint32_t off = 3 * p + 32;
	memset(d, 0, off);
	putptr(d, base, p);
	putptr(d + p, size, p);
	for (size_t i = 0; i <= strlen(path); i++)
		put16(d + off + 2 * i, (uint8_t)path[i]);
	return off + 2 * (uint32_t)(strlen(path) + 1);
}

/* Process DCStart v4 with a NULL SID. */
static uint32_t ew_process(uint8_t *d, unsigned p, uint32_t pid, const char *name)
{
	uint32_t off = 2 * p + 16 + 4;
	memset(d, 0, off + 4);
	put32(d + p, pid);
	off += 4;			/* SID = 0 */
	memcpy(d + off, name, strlen(name) + 1);
	off += (uint32_t)strlen(name) + 1;
	put16(d + off, 0);		/* CommandLine "" */
	return off + 2;
}

static uint32_t ew_stack(uint8_t *d, unsigned p, int64_t evts, uint32_t pid, uint32_t tid,
			 const uint64_t *frames, uint32_t n)
{
	put64(d, (uint64_t)evts);
	put32(d + 8, pid);
	put32(d + 12, tid);
	for (uint32_t i = 0; i < n; i++)
		putptr(d + 16 + i * p, frames[i], p);
	return 16 + n * p;
}

static uint32_t ew_key(uint8_t *d, unsigned p, uint64_t key, const uint64_t *frames, uint32_t n)
{
	putptr(d, key, p);
	for (uint32_t i = 0; i < n; i++)
		putptr(d + p + i * p, frames[i], p);
	return p + n * p;
}
