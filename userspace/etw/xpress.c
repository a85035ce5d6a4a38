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
			if (ip >= inlen)
				break;			/* end of stream */
			if (op >= cap)
				goto nospace;
			out[op++] = in[ip++];
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
		/* Overlapping copy is the point (runs): byte by byte when the regions overlap. */
		if (off >= len) {
			memcpy(out + op, out + op - off, len);
			op += len;
		} else {
			for (size_t i = 0; i < len; i++, op++)
				out[op] = out[op - off];
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
