// SPDX-License-Identifier: GPL-2.0
/*
 * A client for the metrics endpoint and for Prometheus's HTTP API (no curl on a bare Debian):
 *   scrapers get PORT PATH [om]   GET http://127.0.0.1:PORT/PATH; the body on stdout; exit 1
 *                                 unless 200 ("om": ask for OpenMetrics)
 *   scrapers abuse PORT SECS      for SECS seconds: 100 scrapers in a loop, a client that never
 *                                 reads, one that sends a byte a second, one that sends garbage,
 *                                 malformed requests; prints "pages N errors M"; exit 1 when a
 *                                 scraper got something other than a whole page
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static unsigned port;
static double until;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long pages, errors;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int dial(int rcvbuf)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Sends req, reads the whole answer into a malloc'd buffer; its length in *len. */
static char *fetch(const char *req, size_t *len, double timeout)
{
	double end = now_s() + timeout;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	int fd = dial(0);

	if (fd < 0 || !buf || send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left = end - now_s();
		ssize_t k;

		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			break;
		if (n + 1 == cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		k = read(fd, buf + n, cap - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	buf[n] = 0;
	*len = n;
	return buf;
}

/*
 * The status of an answer and its body: whole when its length matches Content-Length, or,
 * without one, up to the close (an HTTP/1.0 answer).
 */
static int parse_answer(char *buf, size_t n, char **body, bool need_length)
{
	char *cl, *b = strstr(buf, "\r\n\r\n");

	*body = NULL;
	if (n < 12 || strncmp(buf, "HTTP/1.", 7) || !b)
		return -1;
	b += 4;
	cl = strcasestr(buf, "Content-Length:");
	if (cl > b)
		cl = NULL;
	if ((!cl && need_length) || (cl && strtoul(cl + 15, NULL, 10) != n - (size_t)(b - buf)))
		return -1;
	*body = b;
	return atoi(buf + 9);
}

static void *scraper(void *arg)
{
	(void)arg;
	while (now_s() < until) {
		size_t n;
		char *buf = fetch("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &n, 15), *body;
		int st = buf ? parse_answer(buf, n, &body, true) : -1;

		pthread_mutex_lock(&mu);
		if (st == 200 && strstr(body, "poolscope_intervals_total"))
			pages++;
		else
			errors++;
		pthread_mutex_unlock(&mu);
		free(buf);
	}
	return NULL;
}

/* Connects, asks, never reads; again when the server cuts it. */
static void *stuck(void *arg)
{
	(void)arg;
	while (now_s() < until) {
		int fd = dial(2048);
		char c;

		if (fd < 0)
			break;
		send(fd, "GET /metrics HTTP/1.1\r\n\r\n", 25, MSG_NOSIGNAL);
		/* wait for the cut without reading the page: peek only */
		while (now_s() < until) {
			struct pollfd p = { .fd = fd, .events = POLLRDHUP };

			if (poll(&p, 1, 200) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
				break;
		}
		(void)c;
		close(fd);
	}
	return NULL;
}

/* One byte a second. */
static void *slow(void *arg)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: slow\r\n\r\n";

	(void)arg;
	while (now_s() < until) {
		int fd = dial(0);

		if (fd < 0)
			break;
		for (size_t i = 0; i < sizeof(req) - 1 && now_s() < until; i++) {
			if (send(fd, req + i, 1, MSG_NOSIGNAL) != 1)
				break;
			sleep(1);
		}
		close(fd);
	}
	return NULL;
}

/* Garbage and malformed requests; each must get an error status, never a page. */
static void *junk(void *arg)
{
	static const char *const reqs[] = {
		"\x16\x03\x01\x02\xfe\x01\x00",
		"POST /metrics HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd",
		"GET /metrics HTTP/9.9\r\n\r\n",
		"GET /../../etc/passwd HTTP/1.1\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nX: \xff\xff\r\n\r\n",
		"BREW /metrics HTTP/1.1\r\n\r\n",
	};

	(void)arg;
	for (size_t i = 0; now_s() < until; i++) {
		size_t n;
		char *buf = fetch(reqs[i % 6], &n, 10), *body;
		int st = buf ? parse_answer(buf, n, &body, true) : -1;

		if (st < 400) {
			pthread_mutex_lock(&mu);
			errors++;
			fprintf(stderr, "scrapers: request %zu answered %d\n", i % 6, st);
			pthread_mutex_unlock(&mu);
		}
		free(buf);
		usleep(50000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[104];
	int nt = 0;

	signal(SIGPIPE, SIG_IGN);
	if (argc >= 4 && !strcmp(argv[1], "get")) {
		char req[4096], *buf, *body;
		size_t n;
		int st;

		port = (unsigned)atoi(argv[2]);
		/* HTTP/1.0: the server closes when done, and sends no chunks */
		snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n%s\r\n", argv[3],
			 argc > 4 && !strcmp(argv[4], "om") ?
			 "Accept: application/openmetrics-text; version=1.0.0\r\n" : "");
		buf = fetch(req, &n, 30);
		st = buf ? parse_answer(buf, n, &body, false) : -1;
		if (st != 200) {
			fprintf(stderr, "scrapers: GET %s: %s\n", argv[3], buf ? buf : "no answer");
			return 1;
		}
		fputs(body, stdout);
		free(buf);
		return 0;
	}
	if (argc != 4 || strcmp(argv[1], "abuse")) {
		fprintf(stderr, "usage: scrapers get PORT PATH [om] | scrapers abuse PORT SECS\n");
		return 2;
	}
	port = (unsigned)atoi(argv[2]);
	until = now_s() + atof(argv[3]);
	for (int i = 0; i < 100; i++)
		pthread_create(&t[nt++], NULL, scraper, NULL);
	pthread_create(&t[nt++], NULL, stuck, NULL);
	pthread_create(&t[nt++], NULL, slow, NULL);
	pthread_create(&t[nt++], NULL, junk, NULL);
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	printf("pages %ld errors %ld\n", pages, errors);
	return pages > 0 && errors == 0 ? 0 : 1;
}
