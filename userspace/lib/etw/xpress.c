// SPDX-License-Identifier: GPL-2.0
/*
 * XPRESS plain LZ77 decoder ([MS-XCA] 2.4, "Plain LZ77 Decompression"), written from the
 * specification's description of the stream: 32-bit little-endian flag words read MSB first,
 * a 0 bit is a literal byte, a 1 bit a 16-bit match token (offset = (tok >> 3) + 1,
 * length = tok & 7) whose length escapes into a shared nibble, a byte, a u16 and a u32.
 * Every length and offset is checked against what is left, so the loop always advances through
 * the input and cannot run away.
 *
 * Two loops. The fast one runs while IN_MARGIN bytes of input and OUT_MARGIN of output are left
 * at the start of a flag word, so nothing it reads or writes within the word needs a bounds
 * check except what a token says (its distance, and the length of an escaped match): it copies
 * literal runs and short matches with fixed-size moves that overshoot into that margin (later
 * writes replace the excess). It also takes the literal/match decision without a branch per
 * bit: the flag bits live in a 64-bit word with a sentinel 1 after the last valid bit, so
 * counting zeros gives the length of the literal run before the next match (or before the
 * sentinel, when the word is used up). In relogged buffers literal runs are short and many
 * matches have length escapes, so the branch per bit is what an LZ77 decoder mostly pays for.
 * The careful loop finishes the last bytes one flag bit at a time, with every check, and
 * decides how a truncated or overlong stream ends.
 *
 * The flag word is bit-reversed once when loaded, so the next flag is the lowest bit: the fast
 * loop finds it with count-trailing-zeros and consumes it by clearing the lowest set bit, which
 * keeps the zero count off the chain from one token to the next. Counting leading zeros in the
 * word as stored (MSB first) compiles to BSR on baseline x86-64, slower and on that chain
 * (`ETL_BENCH_BASE=REV bash tests/bench/etl.sh` times this decoder against REV's on the same
 * buffers).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "userspace/lib/util/util.h"
#include "userspace/lib/etw/xpress.h"

/*
 * The fast loop checks its margins once per flag word, not per token: within a word it can
 * consume at most 4 + 32 x 2 input bytes (flag word, match tokens) plus 8 of one escape (after
 * which it checks again) and read 32 past that (the blind literal copy), so 128 bytes of input;
 * and write at most 32 x 9 bytes (literals and unescaped matches, length <= 9) plus a 32-byte
 * overshoot, so 320 bytes of output (escaped matches check their length against the end).
 */
#define IN_MARGIN	128
#define OUT_MARGIN	352
/* The flag word when all of its 32 bits are consumed: only the sentinel is left. */
#define FLAGS_EMPTY	1ull

static inline uint32_t rd16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * A flag word with its sentinel, reversed: bit 0 is the first flag (the stored word's bit 31),
 * bit 32 marks the end. Consumed flags are shifted out at the bottom (careful loop) or cleared
 * (fast loop, which keeps its own count of them).
 */
static inline uint64_t load_flags(const uint8_t *p)
{
	uint32_t x = rd32(p);

	x = (x >> 1 & 0x55555555u) | (x & 0x55555555u) << 1;
	x = (x >> 2 & 0x33333333u) | (x & 0x33333333u) << 2;
	x = (x >> 4 & 0x0f0f0f0fu) | (x & 0x0f0f0f0fu) << 4;
	return (uint64_t)__builtin_bswap32(x) | 1ull << 32;
}

/* Through a temporary: source and destination may overlap (a match closer than 16 bytes). */
static inline void copy16(uint8_t *d, const uint8_t *s)
{
	uint8_t t[16];

	memcpy(t, s, 16);
	memcpy(d, t, 16);
}

static inline void copy8(uint8_t *d, const uint8_t *s)
{
	uint64_t t;

	memcpy(&t, s, 8);
	memcpy(d, &t, 8);
}

/*
 * Copies a match of len bytes from off bytes back, with room for 16 bytes of overshoot past
 * d + len. A match may overlap itself (off < len: a repeated pattern): each chunk reads only
 * bytes already written, because chunks are never longer than the distance they copy from.
 */
static inline void copy_match(uint8_t *d, size_t off, size_t len)
{
	const uint8_t *src = d - off;
	uint8_t *end = d + len;

	if (off >= 16) {
		do {
			copy16(d, src);
			d += 16;
			src += 16;
		} while (d < end);
	} else if (off >= 8) {
		do {
			copy8(d, src);
			d += 8;
			src += 8;
		} while (d < end);
	} else if (off == 1) {
		/* a run of one byte (zero fill, mostly) */
		memset(d, *src, len);
	} else {
		/* short period: 8 bytes one by one, then chunks from a whole number of periods back */
		size_t per = off * ((8 + off - 1) / off);	/* 8..14 */

		for (size_t k = 0; k < 8; k++)
			d[k] = src[k];
		for (d += 8; d < end; d += 8)
			copy8(d, d - per);
	}
}

/* The same without overshoot, for a match that ends within 16 bytes of the output's end. */
static void copy_exact(uint8_t *d, size_t off, size_t len)
{
	const uint8_t *src = d - off;

	for (size_t k = 0; k < len; k++)
		d[k] = src[k];
}

long ps_xpress_decompress(const uint8_t *in, size_t inlen, uint8_t *out, size_t cap,
			  size_t *bad_off)
{
	const uint8_t *ip = in, *in_end = in + inlen, *tok_at, *nibble = NULL;
	uint8_t *op = out, *out_end = out + cap;
	uint64_t flags = FLAGS_EMPTY;
	size_t off, len;

	if (inlen > IN_MARGIN && cap > OUT_MARGIN) {
		const uint8_t *in_fast = in_end - IN_MARGIN;
		uint8_t *out_fast = out_end - OUT_MARGIN;

		while (ip <= in_fast && op <= out_fast) {
			unsigned pos = 0;	/* flags of this word consumed */

			flags = load_flags(ip);	/* flags is empty here */
			ip += 4;
			for (;;) {
				/* the literals before the next 1 bit: 0..32, copied blindly */
				unsigned nxt = (unsigned)__builtin_ctzll(flags);
				unsigned run = nxt - pos;

				copy16(op, ip);
				copy16(op + 16, ip + 16);
				op += run;
				ip += run;
				if (nxt == 32) {
					flags = FLAGS_EMPTY;
					break;		/* next word, margins checked again */
				}
				flags &= flags - 1;	/* the match bit */
				pos = nxt + 1;
				tok_at = ip;
				uint32_t tok = rd16(ip);
				ip += 2;
				off = (tok >> 3) + 1;
				len = tok & 7;
				if (len == 7) {
					/* a length escape: nibble, byte, u16, u32, inside the margin */
					if (!nibble) {
						nibble = ip++;
						len = *nibble & 15;
					} else {
						len = *nibble >> 4;
						nibble = NULL;
					}
					if (len == 15) {
						len = *ip++;
						if (len == 255) {
							len = rd16(ip);
							ip += 2;
							if (len == 0) {
								len = rd32(ip);
								ip += 4;
							}
							if (len < 15 + 7)
								goto corrupt_tok;
							len -= 15 + 7;
						}
						len += 15;
					}
					len += 7 + 3;
					if (off > (size_t)(op - out))
						goto corrupt_tok;
					if (len > (size_t)(out_end - op))
						goto nospace;
					if (off >= 16 && len <= 32) {
						/*
						 * most escaped matches: two moves and no loop (op
						 * is within 9 x 31 bytes of out_fast, so 32 fit)
						 */
						copy16(op, op - off);
						copy16(op + 16, op + 16 - off);
					} else if (len + 16 <= (size_t)(out_end - op)) {
						copy_match(op, off, len);
					} else {
						copy_exact(op, off, len);
					}
					op += len;
					/* the only unbounded step: check the margins before going on */
					if (ip > in_fast || op > out_fast) {
						flags >>= pos;	/* as the careful loop keeps it */
						goto careful;
					}
					continue;
				}
				len += 3;
				if (off > (size_t)(op - out))
					goto corrupt_tok;
				if (off >= len)
					copy16(op, op - off);	/* one move: the source is all behind */
				else
					copy_match(op, off, len);
				op += len;
			}
		}
	}
careful:
	/* The last bytes: one flag bit at a time, every read and write checked. */
	for (;;) {
		if (flags == FLAGS_EMPTY) {
			if (ip >= in_end)
				break;			/* stream ends on a flag-word boundary */
			if (in_end - ip < 4)
				goto corrupt;
			flags = load_flags(ip);
			ip += 4;
		}
		bool match = flags & 1;

		flags >>= 1;
		if (!match) {
			if (ip >= in_end)
				break;			/* end of stream */
			if (op >= out_end)
				goto nospace;
			*op++ = *ip++;
			continue;
		}
		if (ip >= in_end)
			break;				/* trailing 1 bits pad the last flag word */
		if (in_end - ip < 2)
			goto corrupt;
		tok_at = ip;
		uint32_t tok = rd16(ip);
		ip += 2;
		off = (tok >> 3) + 1;
		len = tok & 7;
		if (len == 7) {
			if (!nibble) {
				if (ip >= in_end)
					goto corrupt;
				nibble = ip++;
				len = *nibble & 15;
			} else {
				len = *nibble >> 4;
				nibble = NULL;
			}
			if (len == 15) {
				if (ip >= in_end)
					goto corrupt;
				len = *ip++;
				if (len == 255) {
					if (in_end - ip < 2)
						goto corrupt;
					len = rd16(ip);
					ip += 2;
					if (len == 0) {
						if (in_end - ip < 4)
							goto corrupt;
						len = rd32(ip);
						ip += 4;
					}
					if (len < 15 + 7)
						goto corrupt_tok;
					len -= 15 + 7;
				}
				len += 15;
			}
			len += 7;
		}
		len += 3;
		if (off > (size_t)(op - out))
			goto corrupt_tok;
		if (len > (size_t)(out_end - op))
			goto nospace;
		if (len + 16 <= (size_t)(out_end - op))
			copy_match(op, off, len);
		else
			copy_exact(op, off, len);
		op += len;
	}
	return (long)(op - out);
corrupt_tok:
	ip = tok_at;
corrupt:
	if (bad_off)
		*bad_off = (size_t)(ip - in);
	return -PS_ERR__CORRUPT;
nospace:
	if (bad_off)
		*bad_off = (size_t)(ip - in);
	return -ENOSPC;
}
