// SPDX-License-Identifier: GPL-2.0
/*
 * gzip, xz and zstd inputs inflated by the libraries that own those formats (zlib, liblzma,
 * libzstd): a relogged .etl or a poolmon capture is often stored compressed, and reading it
 * through `xz -dc file | poolscope ...` costs the user a step and a pipe copy anyway. Every
 * stream is read to its end; concatenated members (gzip, xz, zstd frames) are all inflated, as
 * the command-line tools do. A stream that is corrupt or cut short is an error naming the file
 * and the compressed offset: never a silently shorter input.
 */
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "userspace/decompress.h"

#define CHUNK (1 << 16)

enum ps_zkind ps_zkind_of(const char *path)
{
	unsigned char b[6];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return PS_Z_NONE;
	n = read(fd, b, sizeof(b));
	close(fd);
	if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return PS_Z_GZIP;
	if (n >= 6 && !memcmp(b, "\xfd" "7zXZ\0", 6))
		return PS_Z_XZ;
	if (n >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd)
		return PS_Z_ZSTD;
	return PS_Z_NONE;
}

const char *ps_zkind_name(enum ps_zkind k)
{
	switch (k) {
	case PS_Z_GZIP: return "gzip";
	case PS_Z_XZ: return "xz";
	case PS_Z_ZSTD: return "zstd";
	default: return "none";
	}
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* One read of up to CHUNK bytes into in; its length, or -errno with the message in err. */
static ssize_t read_some(int fd, unsigned char *in, const char *path, char *err, size_t errlen)
{
	for (;;) {
		ssize_t n = read(fd, in, CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		}
		return n;
	}
}

/* Writes what was inflated; 0, or -errno with the message in err. */
static int emit(int out, const void *p, size_t n, const char *path, char *err, size_t errlen)
{
	int e = write_all(out, p, n);

	if (e)
		snprintf(err, errlen, "%s: writing the inflated copy: %s", path, strerror(-e));
	return e;
}

static int gunzip(int fd, int out, const char *path, char *err, size_t errlen)
{
	static unsigned char in[CHUNK], buf[CHUNK];
	z_stream z = { 0 };
	uint64_t off = 0;
	bool ended = true;
	int e = 0, zr = Z_OK;

	if (inflateInit2(&z, 15 + 16) != Z_OK) {
		snprintf(err, errlen, "%s: gzip: cannot start zlib", path);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n = read_some(fd, in, path, err, errlen);

		if (n <= 0) {
			e = (int)n;
			break;
		}
		z.next_in = in;
		z.avail_in = (uInt)n;
		while (z.avail_in) {
			if (zr == Z_STREAM_END) {
				inflateReset(&z);	/* the next member */
				ended = false;
			}
			z.next_out = buf;
			z.avail_out = sizeof(buf);
			zr = inflate(&z, Z_NO_FLUSH);
			if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
				snprintf(err, errlen, "%s: gzip: byte %llu: %s", path,
					 (unsigned long long)(off + (uint64_t)(n - z.avail_in)),
					 z.msg ? z.msg : "corrupt stream");
				e = -EINVAL;
				goto out;
			}
			ended = zr == Z_STREAM_END;
			e = emit(out, buf, sizeof(buf) - z.avail_out, path, err, errlen);
			if (e)
				goto out;
		}
		off += (uint64_t)n;
	}
	if (!e && !ended) {
		snprintf(err, errlen, "%s: gzip: cut short at byte %llu (the stream has no end)",
			 path, (unsigned long long)off);
		e = -EINVAL;
	}
out:
	inflateEnd(&z);
	return e;
}

static int unxz(int fd, int out, const char *path, char *err, size_t errlen)
{
	static unsigned char in[CHUNK], buf[CHUNK];
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_action act = LZMA_RUN;
	int e = 0;

	if (lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
		snprintf(err, errlen, "%s: xz: cannot start liblzma", path);
		return -ENOMEM;
	}
	for (;;) {
		lzma_ret lr;

		if (!s.avail_in && act == LZMA_RUN) {
			ssize_t n = read_some(fd, in, path, err, errlen);

			if (n < 0) {
				e = (int)n;
				break;
			}
			s.next_in = in;
			s.avail_in = (size_t)n;
			if (!n)
				act = LZMA_FINISH;
		}
		s.next_out = buf;
		s.avail_out = sizeof(buf);
		lr = lzma_code(&s, act);
		e = emit(out, buf, sizeof(buf) - s.avail_out, path, err, errlen);
		if (e)
			break;
		if (lr == LZMA_STREAM_END)
			break;
		if (lr != LZMA_OK) {
			snprintf(err, errlen, "%s: xz: byte %llu: %s", path,
				 (unsigned long long)s.total_in,
				 lr == LZMA_BUF_ERROR ? "cut short (the stream has no end)" :
				 lr == LZMA_DATA_ERROR || lr == LZMA_FORMAT_ERROR ? "corrupt stream" :
				 lr == LZMA_MEM_ERROR ? "out of memory" : "cannot be read");
			e = lr == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
			break;
		}
	}
	lzma_end(&s);
	return e;
}

static int unzstd(int fd, int out, const char *path, char *err, size_t errlen)
{
	static unsigned char in[CHUNK], buf[CHUNK];
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	uint64_t off = 0;
	size_t left = 0;	/* ZSTD_decompressStream's hint: 0 at the end of a frame */
	int e = 0;

	if (!dc) {
		snprintf(err, errlen, "%s: zstd: cannot start libzstd", path);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n = read_some(fd, in, path, err, errlen);
		ZSTD_inBuffer ib = { in, (size_t)(n > 0 ? n : 0), 0 };

		if (n <= 0) {
			e = (int)n;
			break;
		}
		while (ib.pos < ib.size) {
			ZSTD_outBuffer ob = { buf, sizeof(buf), 0 };

			left = ZSTD_decompressStream(dc, &ob, &ib);
			if (ZSTD_isError(left)) {
				snprintf(err, errlen, "%s: zstd: byte %llu: %s", path,
					 (unsigned long long)(off + ib.pos), ZSTD_getErrorName(left));
				e = -EINVAL;
				goto out;
			}
			e = emit(out, buf, ob.pos, path, err, errlen);
			if (e)
				goto out;
		}
		off += (uint64_t)n;
	}
	if (!e && left) {
		snprintf(err, errlen, "%s: zstd: cut short at byte %llu (the frame has no end)", path,
			 (unsigned long long)off);
		e = -EINVAL;
	}
out:
	ZSTD_freeDCtx(dc);
	return e;
}

int ps_decompress(const char *path, enum ps_zkind k, int out, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;

	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-e));
		return e;
	}
	switch (k) {
	case PS_Z_GZIP: e = gunzip(fd, out, path, err, errlen); break;
	case PS_Z_XZ: e = unxz(fd, out, path, err, errlen); break;
	case PS_Z_ZSTD: e = unzstd(fd, out, path, err, errlen); break;
	default: e = -EINVAL; snprintf(err, errlen, "%s: not compressed", path); break;
	}
	close(fd);
	return e;
}
