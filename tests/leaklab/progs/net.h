/* SPDX-License-Identifier: GPL-2.0 */
/* Loopback TCP helpers of the network scenarios: a listener and one connected pair. */
#ifndef PS_LAB_NET_H
#define PS_LAB_NET_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* Listens on an ephemeral loopback port; returns the fd and fills a, or -1. */
static inline int lab_listen(struct sockaddr_in *a)
{
	socklen_t alen = sizeof(*a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)a, sizeof(*a)) || listen(fd, 4096) ||
	    getsockname(fd, (struct sockaddr *)a, &alen)) {
		perror("lab: listen on loopback");
		return -1;
	}
	return fd;
}

/* Connects a client to the listener and accepts it: fds in cli and srv; 0 or -1. */
static inline int lab_pair(int lfd, const struct sockaddr_in *a, int *cli, int *srv)
{
	*cli = socket(AF_INET, SOCK_STREAM, 0);
	if (*cli < 0 || connect(*cli, (const struct sockaddr *)a, sizeof(*a))) {
		perror("lab: connect");
		return -1;
	}
	*srv = accept(lfd, NULL, NULL);
	if (*srv < 0) {
		perror("lab: accept");
		return -1;
	}
	return 0;
}

/* Writes up to n bytes without blocking; returns what the kernel took. */
static inline long lab_send(int fd, long n)
{
	static char buf[65536];
	long done = 0;

	memset(buf, 'x', sizeof(buf));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while (done < n) {
		ssize_t w = write(fd, buf, n - done < (long)sizeof(buf) ? (size_t)(n - done) : sizeof(buf));

		if (w <= 0)
			break;
		done += w;
	}
	return done;
}

/* Reads exactly n bytes into buf; 0 or -1. */
static inline int lab_read_all(int fd, char *buf, long n)
{
	while (n > 0) {
		ssize_t r = read(fd, buf, n);

		if (r <= 0)
			return -1;
		n -= r;
	}
	return 0;
}

/*
 * One short exchange on a new connection to the listener, as a client of a server makes it:
 * connect, n bytes of request, n bytes of reply, both read, the client closes first (its side
 * keeps the TIME_WAIT entry), then the server. 0 or -1.
 */
static inline int lab_exchange(int lfd, const struct sockaddr_in *a, char *buf, long n)
{
	int cli, srv, rc = -1;

	if (lab_pair(lfd, a, &cli, &srv))
		return -1;
	if (write(cli, buf, n) == n && !lab_read_all(srv, buf, n) && write(srv, buf, n) == n &&
	    !lab_read_all(cli, buf, n))
		rc = 0;
	else
		perror("lab: exchange");
	close(cli);
	close(srv);
	return rc;
}

#endif
