/* SPDX-License-Identifier: GPL-2.0 */
/*
 * XPRESS plain LZ77 ([MS-XCA] 2.3/2.4), the compression Windows 8+ uses for relogged .etl
 * buffers. Decoding is bounded by both buffers: no read past the input, no write past the output
 * capacity, and every step consumes input, so garbage ends in an error, never a crash or a loop.
 */
#ifndef PS_ETW_XPRESS_H
#define PS_ETW_XPRESS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decompresses in[0..inlen) into out[0..cap). Returns the number of bytes written (>= 0), or
 * -PS_ERR__CORRUPT when the stream is malformed (a match before the start of the output, a
 * truncated token, a length escape that underflows) or -ENOSPC when it decodes to more than cap.
 * *bad_off (when not NULL) receives the input offset where decoding failed.
 */
long ps_xpress_decompress(const uint8_t *in, size_t inlen, uint8_t *out, size_t cap,
			  size_t *bad_off);

#endif
