// SPDX-License-Identifier: GPL-2.0
/*
 * noise SECS DIR — the background of a busy server, run beside a scenario: a 256 MiB file in
 * DIR read again and again through the page cache (dropped from it after each pass, so reads
 * keep allocating page cache) at 64 MiB/s, and 20 short-lived processes a second. It makes no
 * leak of its own; a verdict must be the same with it as without it.
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "lab.h"

#define FILE_MIB 256

struct ctx {
	int fd;
	char *buf;
};

static int step(long i, void *p)
{
	struct ctx *c = p;
	long blk = i % FILE_MIB;
	pid_t pid;

	if (pread(c->fd, c->buf, 1 << 20, (off_t)blk << 20) < 0) {
		perror("noise: read");
		return -1;
	}
	if (blk == FILE_MIB - 1)
		posix_fadvise(c->fd, 0, 0, POSIX_FADV_DONTNEED);
	/* every third step a process: 64 reads and about 21 processes a second */
	if (i % 3 == 0) {
		pid = fork();
		if (pid == 0) {
			char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (m != MAP_FAILED)
				for (long off = 0; off < 1 << 20; off += 4096)
					m[off] = 1;
			_exit(0);
		}
		if (pid > 0)
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *usage = "noise SECS DIR";
	char path[PATH_MAX];
	struct ctx c;
	double secs;
	long n;

	if (argc != 3)
		return fprintf(stderr, "usage: %s\n", usage), 2;
	secs = lab_arg(argv[1], usage);
	lab_setup();
	snprintf(path, sizeof(path), "%s/lab-noise-%d", argv[2], (int)getpid());
	c.buf = malloc(1 << 20);
	c.fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (!c.buf || c.fd < 0) {
		fprintf(stderr, "noise: %s: %s\n", path, strerror(errno));
		return 1;
	}
	memset(c.buf, 'n', 1 << 20);
	for (int i = 0; i < FILE_MIB; i++)
		if (write(c.fd, c.buf, 1 << 20) != 1 << 20) {
			fprintf(stderr, "noise: writing %s: %s\n", path, strerror(errno));
			unlink(path);
			return 1;
		}
	fdatasync(c.fd);
	posix_fadvise(c.fd, 0, 0, POSIX_FADV_DONTNEED);
	printf("lab: noise ready\n");
	fflush(stdout);
	n = lab_pace(64, secs, step, &c);
	printf("lab: noise done %ld\n", n < 0 ? 0 : n);
	fflush(stdout);
	close(c.fd);
	unlink(path);
	return n < 0;
}
