// SPDX-License-Identifier: GPL-2.0
/*
 * Inputs that cannot be read twice. convert looks at an input's first bytes to tell its kind and
 * then opens it again to convert it, and the .etl reader seeks (pread). Given a pipe or a FIFO
 * (`poolscope convert <(xz -dc pool.etl.xz) -o pool.db`, or "-" for standard input), the second
 * open lost the bytes the first look took, pread failed with "Illegal seek", and a FIFO whose
 * writer had gone when the first look closed it made the second open wait forever. Such an input
 * is now copied once, as it streams, into a temporary file ($TMPDIR, else /tmp) that the rest
 * reads; the copies are removed at exit. A compressed input (gzip, xz, zstd, by its magic
 * bytes) is inflated into such a file the same way (decompress.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/decompress.h"
#include "userspace/input.h"

struct copy {
	char *path, *name;
};

static struct copy *copies;
static size_t ncopies;

static void remove_copies(void)
{
	for (size_t i = 0; i < ncopies; i++) {
		unlink(copies[i].path);
		free(copies[i].path);
		free(copies[i].name);
	}
	free(copies);
	copies = NULL;
	ncopies = 0;
}

/* Copies everything from fd to out; -errno. */
static int copy_all(int fd, int out)
{
	static char buf[1 << 16];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(out, buf + done, (size_t)(n - done));

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -errno;
			done += w;
		}
	}
}

/*
 * Remembers tmp as the copy of name, removed at exit; its path, or NULL when out of memory
 * (tmp removed, err says so).
 */
static const char *keep_copy(const char *tmp, const char *name, char *err, size_t errlen)
{
	struct copy *nc = realloc(copies, (ncopies + 1) * sizeof(*nc));

	if (nc) {
		copies = nc;
		copies[ncopies].path = strdup(tmp);
		copies[ncopies].name = strdup(name);
	}
	if (!nc || !copies[ncopies].path || !copies[ncopies].name) {
		if (nc) {
			free(copies[ncopies].path);
			free(copies[ncopies].name);
		}
		snprintf(err, errlen, "%s: out of memory", name);
		unlink(tmp);
		return NULL;
	}
	if (!ncopies++)
		atexit(remove_copies);
	return copies[ncopies - 1].path;
}

/* A new temporary file in $TMPDIR (else /tmp), its name in tmp; the fd, or -1 with err. */
static int new_temp(const char *path, const char *why, char tmp[4096], char *err, size_t errlen)
{
	const char *dir = getenv("TMPDIR");
	int out;

	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(tmp, 4096, "%s/poolscope-input.XXXXXX", dir);
	out = mkstemp(tmp);
	if (out < 0)	/* mkstemp may have filled in the X's: name the template */
		snprintf(err, errlen, "%s: %s: %s/poolscope-input.XXXXXX: %s", path, why, dir,
			 strerror(errno));
	return out;
}

/* A compressed input (.gz, .xz, .zst): the inflated copy to read instead, else read itself. */
static const char *inflated(const char *read, const char *name, char *err, size_t errlen)
{
	enum ps_zkind k = ps_zkind_of(read);
	char tmp[4096];
	int out, e;

	if (k == PS_Z_NONE)
		return read;
	out = new_temp(name, "compressed, to be inflated into a file first", tmp, err, errlen);
	if (out < 0)
		return NULL;
	e = ps_decompress(read, k, out, err, errlen);
	if (close(out) && !e) {
		e = -errno;
		snprintf(err, errlen, "%s: inflating it to %s: %s", name, tmp, strerror(-e));
	}
	if (e) {
		unlink(tmp);
		return NULL;
	}
	return keep_copy(tmp, name, err, errlen);
}

const char *ps_input_path(const char *path, char *err, size_t errlen)
{
	bool is_stdin = !strcmp(path, "-");
	const char *kept;
	char tmp[4096];
	struct stat st;
	int fd, out, e;

	if (is_stdin ? fstat(STDIN_FILENO, &st) : stat(path, &st))
		return is_stdin ? "/dev/stdin" : path;	/* the reader says what is wrong */
	/* not character devices: /dev/zero would fill the disk, a terminal is read as cat reads it */
	if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
		return is_stdin || !S_ISREG(st.st_mode) ? (is_stdin ? "/dev/stdin" : path) :
		       inflated(path, path, err, errlen);
	out = new_temp(path, "a pipe, to be copied to a file first", tmp, err, errlen);
	if (out < 0)
		return NULL;
	/* a FIFO's open waits for its writer, as cat's does */
	fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	e = fd < 0 ? -errno : copy_all(fd, out);
	if (fd >= 0 && !is_stdin)
		close(fd);
	if (close(out) && !e)
		e = -errno;
	if (e) {
		snprintf(err, errlen, "%s: copying it to %s: %s", path, tmp, strerror(-e));
		unlink(tmp);
		return NULL;
	}
	kept = keep_copy(tmp, path, err, errlen);
	return kept ? inflated(kept, path, err, errlen) : NULL;
}

void ps_input_note(FILE *f, const char *prefix)
{
	for (size_t i = 0; i < ncopies; i++)
		fprintf(f, "%s: (%s is a copy of %s, which can be read only once)\n", prefix,
			copies[i].path, strcmp(copies[i].name, "-") ? copies[i].name :
			"standard input");
}
