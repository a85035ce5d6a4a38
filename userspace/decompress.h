/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Compressed inputs (.gz, .xz, .zst): recognised by their magic bytes and inflated through
 * zlib, liblzma and libzstd into a file the readers can seek in.
 */
#ifndef PS_DECOMPRESS_H
#define PS_DECOMPRESS_H

#include <stddef.h>

enum ps_zkind { PS_Z_NONE, PS_Z_GZIP, PS_Z_XZ, PS_Z_ZSTD };

/* The compression of the file at path by its first bytes; PS_Z_NONE when none or unreadable. */
enum ps_zkind ps_zkind_of(const char *path);
const char *ps_zkind_name(enum ps_zkind k);

/*
 * Inflates path (of kind k) into the open file out. 0, or -errno / -EINVAL with a message in
 * err naming path, the compressed offset and what is wrong (a corrupt or cut stream).
 */
int ps_decompress(const char *path, enum ps_zkind k, int out, char *err, size_t errlen);

#endif
