// SPDX-License-Identifier: GPL-2.0
/*
 * XPRESS plain LZ77 decoder ([MS-XCA] 2.4, "Plain LZ77 Decompression"), written from the
 * specification's description of the stream: 32-bit little-endian flag words read MSB first,
 * a 0 bit is a literal byte, a 1 bit a 16-bit match token (offset = (tok >> 3) + 1,
 * length = tok & 7) whose length escapes into a shared nibble, a byte, a u16 and a u32.
 * Every length and offset is checked against what is left, so the loop always advances through
 * the input and cannot run away.
 */
#include <errno.h>
#include <string.h>

#include "common/util.h"
#include "etw/xpress.h"

static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

long ps_xpress_decompress(const uint8_t *in, size_t inlen, uint8_t *out, size_t cap,
			  size_t *bad_off)
{
	size_t ip = 0, op = 0, nibble_pos = 0;
	int have_nibble = 0;
	uint32_t flags = 0;
	int nflags = 0;

	for (;;) {
		/*
		 * Fast path: with 64 bytes of input and 64 of output room ahead, a literal run (at
		 * most 32) or a match without a length escape needs no check but the distance.
		 * Fixed-size copies overshoot into that room; later writes replace the excess.
		 */
		if (nflags && inlen - ip >= 64 && cap - op >= 64) {
			nflags--;
			if (!(flags & (1u << nflags))) {
				uint32_t rest = flags << (31 - nflags);
				size_t run = rest ? (size_t)__builtin_clz(rest) : (size_t)nflags + 1;
				if (run > (size_t)nflags + 1)
					run = (size_t)nflags + 1;
				memcpy(out + op, in + ip, 32);
				op += run;
				ip += run;
				nflags -= (int)run - 1;
				continue;
			}
			uint32_t tok = (uint32_t)in[ip] | (uint32_t)in[ip + 1] << 8;
			if ((tok & 7) != 7) {
				size_t off = (tok >> 3) + 1, len = (tok & 7) + 3;
				if (off > op)
					goto corrupt;
				uint8_t *d = out + op;
				const uint8_t *src = d - off;
				if (off >= 16) {
					memcpy(d, src, 16);
				} else if (off >= 8) {
					memcpy(d, src, 8);
					memcpy(d + 8, src + 8, 8);
				} else {
					for (size_t k = 0; k < len; k++)
						d[k] = src[k];
				}
				ip += 2;
				op += len;
				continue;
			}
			nflags++;		/* a length escape: the general path below */
		}
		if (nflags == 0) {
			if (ip >= inlen)
				break;			/* stream ends on a flag-word boundary */
			if (inlen - ip < 4)
				goto corrupt;
			flags = rd32(in + ip);
			ip += 4;
			nflags = 32;
		}
		nflags--;
		if (!(flags & (1u << nflags))) {
			/*
			 * A run of literals: the 0 bits below this one say how many follow (the
			 * flag word's remaining bits, counted from the top).
			 */
			uint32_t rest = flags << (31 - nflags);	/* this bit at the top */
			size_t run = rest ? (size_t)__builtin_clz(rest) : (size_t)nflags + 1;
			if (run > (size_t)nflags + 1)
				run = (size_t)nflags + 1;
			if (ip >= inlen)
				break;			/* end of stream */
			if (run > inlen - ip)
				run = inlen - ip;
			if (run > cap - op) {
				if (op >= cap)
					goto nospace;
				run = cap - op;
			}
			memcpy(out + op, in + ip, run);
			op += run;
			ip += run;
			nflags -= (int)run - 1;
			continue;
		}
		if (ip >= inlen)
			break;				/* trailing 1 bits pad the last flag word */
		if (inlen - ip < 2)
			goto corrupt;
		uint32_t tok = (uint32_t)in[ip] | (uint32_t)in[ip + 1] << 8;
		size_t tok_off = ip;
		ip += 2;
		size_t off = (tok >> 3) + 1;
		size_t len = tok & 7;

		if (len == 7) {
			if (!have_nibble) {
				if (ip >= inlen)
					goto corrupt;
				nibble_pos = ip++;
				len = in[nibble_pos] & 15;
				have_nibble = 1;
			} else {
				len = in[nibble_pos] >> 4;
				have_nibble = 0;
			}
			if (len == 15) {
				if (ip >= inlen)
					goto corrupt;
				len = in[ip++];
				if (len == 255) {
					if (inlen - ip < 2)
						goto corrupt;
					len = (size_t)in[ip] | (size_t)in[ip + 1] << 8;
					ip += 2;
					if (len == 0) {
						if (inlen - ip < 4)
							goto corrupt;
						len = rd32(in + ip);
						ip += 4;
					}
					if (len < 15 + 7) {
						ip = tok_off;
						goto corrupt;
					}
					len -= 15 + 7;
				}
				len += 15;
			}
			len += 7;
		}
		len += 3;
		if (off > op) {
			ip = tok_off;
			goto corrupt;
		}
		if (len > cap - op)
			goto nospace;
		/*
		 * Overlapping copy is the point (runs). With room for 16 bytes of overshoot,
		 * chunks no longer than the distance are exact: each reads bytes already written.
		 */
		uint8_t *d = out + op;
		const uint8_t *src = d - off;
		op += len;
		if (__builtin_expect(cap - (op - len) >= len + 16, 1)) {
			uint8_t *end = d + len;
			if (off >= 16) {
				do {
					memcpy(d, src, 16);
					d += 16;
					src += 16;
				} while (d < end);
			} else if (off >= 8) {
				do {
					memcpy(d, src, 8);
					d += 8;
					src += 8;
				} while (d < end);
			} else {
				/* short period: bytes until the copy is 8 behind, then chunks */
				size_t k = 0;
				for (; k < 8 && k < len; k++)
					d[k] = src[k];
				if (k < len) {
					size_t per = off * ((8 + off - 1) / off);	/* >= 8 */
					for (d += k; d < end; d += 8)
						memcpy(d, d - per, 8);
				}
			}
		} else {
			for (size_t i = 0; i < len; i++)
				d[i] = src[i];
		}
	}
	return (long)op;
corrupt:
	if (bad_off)
		*bad_off = ip;
	return -PS_ERR__CORRUPT;
nospace:
	if (bad_off)
		*bad_off = ip;
	return -ENOSPC;
}
