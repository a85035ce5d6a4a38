// SPDX-License-Identifier: GPL-2.0
/*
 * noise SECS DIR — the background of a busy server, run beside a scenario: a 256 MiB file in
 * DIR read again and again through the page cache (dropped from it after each pass, so reads
 * keep allocating page cache) at up to 64 MiB/s, and in the same steps about 21 short-lived
 * processes and 16 short loopback TCP exchanges a second (4 KiB each way, client closes
 * first); a busy machine makes all of them slower together. It makes no leak of its own; a
 * verdict must be the same with it as without it. Like conn_churn's, its TIME_WAIT entries
 * fill up over the first 60 s (to about 1000) and then stay level: started a minute before a
 * recording, it is a server's steady background.
 */
#include "lab.h"
#include "net.h"

#define FILE_MIB 256

struct ctx {
	int fd, lfd;
	struct sockaddr_in a;
	char msg[4096];
};

static char buf[1 << 20];

static int step(long i, void *p)
{
	struct ctx *c = p;
	long blk = i % FILE_MIB;

	if (pread(c->fd, buf, sizeof(buf), (off_t)blk << 20) < 0) {
		perror("noise: read");
		return -1;
	}
	if (blk == FILE_MIB - 1)
		posix_fadvise(c->fd, 0, 0, POSIX_FADV_DONTNEED);
	if (i % 4 == 1 && lab_exchange(c->lfd, &c->a, c->msg, sizeof(c->msg)))
		return -1;
	return i % 3 ? 0 : lab_short_process();
}

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	struct ctx c;
	double a[1];
	long n;

	lab_args(argc, argv, 2, 1, "noise SECS DIR", a);
	lab_setup();
	memset(c.msg, 'n', sizeof(c.msg));
	if ((c.lfd = lab_listen(&c.a)) < 0)
		return 1;
	c.fd = lab_make_file(argv[2], "noise", FILE_MIB, path, sizeof(path));
	if (c.fd < 0)
		return 1;
	lab_ready("noise");
	n = lab_pace(64, a[0], step, &c);
	lab_done("noise", n);
	close(c.fd);
	close(c.lfd);
	unlink(path);
	return n < 0;
}
