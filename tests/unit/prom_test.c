// SPDX-License-Identifier: GPL-2.0
/*
 * The metrics endpoint (userspace/lib/prom): the page writer in both formats (counter names,
 * units, escaping, EOF), the request parser on good and malformed heads, and the server thread
 * against the clients a production endpoint meets: 100 at once, one that never reads, one that
 * sends a byte a second, one that sends garbage, more than the connection cap. Every one of
 * them must leave the others served and the publisher unblocked.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/prom/http.h"
#include "userspace/lib/prom/openmetrics.h"
#include "userspace/lib/prom/server.h"

TEST(page_formats)
{
	struct ps_om a, b;

	ps_om_init(&a, true);
	ps_om_init(&b, false);
	for (int i = 0; i < 2; i++) {
		struct ps_om *m = i ? &b : &a;

		ps_om_family(m, "x_events", "counter", NULL, "Events\nseen \\ \"here\"");
		ps_om_sample(m, (const char *[]){ "tag", "a\"b\\c\nd", "skip", NULL, NULL }, 3);
		ps_om_family(m, "x_live_bytes", "gauge", "bytes", "Live");
		ps_om_sample(m, NULL, -1.5);
		ps_om_sample(m, NULL, 9007199254740991.0);
		ASSERT_OK(ps_om_finish(m), "finish");
	}
	ASSERT_STREQ(a.buf,
		"# HELP x_events Events\\nseen \\\\ \\\"here\\\"\n# TYPE x_events counter\n"
		"x_events_total{tag=\"a\\\"b\\\\c\\nd\"} 3\n"
		"# HELP x_live_bytes Live\n# TYPE x_live_bytes gauge\n# UNIT x_live_bytes bytes\n"
		"x_live_bytes -1.5\nx_live_bytes 9007199254740991\n# EOF\n", "openmetrics");
	ASSERT_STREQ(b.buf,
		"# HELP x_events_total Events\\nseen \\\\ \"here\"\n# TYPE x_events_total counter\n"
		"x_events_total{tag=\"a\\\"b\\\\c\\nd\"} 3\n"
		"# HELP x_live_bytes Live\n# TYPE x_live_bytes gauge\n"
		"x_live_bytes -1.5\nx_live_bytes 9007199254740991\n", "0.0.4 text");
	ps_om_free(&a);
	ps_om_free(&b);
}

TEST(page_rejects_bad_names)
{
	struct ps_om m;

	ps_om_init(&m, true);
	ps_om_family(&m, "x_live", "gauge", "bytes", "unit not the suffix");
	ASSERT_EQ(ps_om_finish(&m), -EINVAL, "unit");
	ps_om_free(&m);
	ps_om_init(&m, true);
	ps_om_family(&m, "9x", "gauge", NULL, "h");
	ASSERT_EQ(ps_om_finish(&m), -EINVAL, "name");
	ps_om_free(&m);
	ps_om_init(&m, true);
	ps_om_family(&m, "x", "gauge", NULL, "h");
	ps_om_sample(&m, (const char *[]){ "a:b", "v", NULL }, 1);
	ASSERT_EQ(ps_om_finish(&m), -EINVAL, "label name");
	ps_om_free(&m);
	ASSERT_TRUE(ps_om_valid_name("a_b:c", false), "colon in a metric");
	ASSERT_FALSE(ps_om_valid_name("a-b", true), "dash");
}

static int parse(const char *s, struct ps_http_req *rq)
{
	return ps_http_parse(s, strlen(s), rq);
}

TEST(http_parse)
{
	struct ps_http_req rq;
	char big[PS_HTTP_MAX_HEAD + 16];

	ASSERT_EQ(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &rq), 200, "get");
	ASSERT_STREQ(rq.path, "/metrics", "path");
	ASSERT_FALSE(rq.openmetrics || rq.head, "plain get");
	ASSERT_EQ(parse("HEAD /metrics?x=1 HTTP/1.0\n"
			"Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5\n\n",
			&rq), 200, "head");
	ASSERT_TRUE(rq.head && rq.openmetrics, "head, openmetrics");
	ASSERT_STREQ(rq.path, "/metrics", "query cut");
	ASSERT_EQ(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n", &rq), 0, "incomplete");
	ASSERT_EQ(parse("GET /metrics HTTP/1.1", &rq), 0, "incomplete line");
	ASSERT_EQ(parse("POST /metrics HTTP/1.1\r\n\r\n", &rq), 405, "post");
	ASSERT_EQ(parse("get /metrics HTTP/1.1\r\n\r\n", &rq), 400, "lowercase method");
	ASSERT_EQ(parse("GET /metrics HTTP/2.0\r\n\r\n", &rq), 505, "version");
	ASSERT_EQ(parse("GET /metrics FTP/1.1\r\n\r\n", &rq), 400, "protocol");
	ASSERT_EQ(parse("GET metrics HTTP/1.1\r\n\r\n", &rq), 400, "relative path");
	ASSERT_EQ(parse("GET  HTTP/1.1\r\n\r\n", &rq), 400, "no path");
	ASSERT_EQ(parse("\r\n\r\n", &rq), 400, "empty");
	ASSERT_EQ(parse("GET / HTTP/1.1\r\nNoColon\r\n\r\n", &rq), 400, "field without colon");
	ASSERT_EQ(parse("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", &rq), 400, "folded");
	ASSERT_EQ(parse("GET / HTTP/1.1\r\nBad Name: b\r\n\r\n", &rq), 400, "space in name");
	ASSERT_EQ(parse("GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\n", &rq), 413, "body");
	ASSERT_EQ(parse("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &rq), 413,
		  "chunked");
	ASSERT_EQ(parse("GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &rq), 200, "no body");
	ASSERT_EQ(ps_http_parse("GET /\0 HTTP/1.1\r\n\r\n", 20, &rq), 400, "NUL");
	ASSERT_EQ(parse("GET /\x01 HTTP/1.1\r\n\r\n", &rq), 400, "control byte");
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET /", 5);
	ASSERT_EQ(ps_http_parse(big, sizeof(big), &rq), 431, "head too long");
	memcpy(big + 300, " HTTP/1.1\r\n\r\n", 13);
	ASSERT_EQ(ps_http_parse(big, 313, &rq), 414, "path too long");
}

TEST(http_addr)
{
	struct sockaddr_storage ss;
	unsigned sl;
	char err[256];

	ASSERT_OK(ps_httpd_parse_addr("127.0.0.1:9490", &ss, &sl, err, sizeof(err)), "v4");
	ASSERT_EQ(ss.ss_family, AF_INET, "family");
	ASSERT_OK(ps_httpd_parse_addr("[::1]:0", &ss, &sl, err, sizeof(err)), "v6");
	ASSERT_EQ(ss.ss_family, AF_INET6, "family 6");
	ASSERT_ERR(ps_httpd_parse_addr(":9490", &ss, &sl, err, sizeof(err)), "no host");
	ASSERT_STRSTR(err, "expected ADDRESS:PORT", "message");
	ASSERT_ERR(ps_httpd_parse_addr("localhost:9490", &ss, &sl, err, sizeof(err)), "name");
	ASSERT_ERR(ps_httpd_parse_addr("127.0.0.1", &ss, &sl, err, sizeof(err)), "no port");
	ASSERT_ERR(ps_httpd_parse_addr("127.0.0.1:65536", &ss, &sl, err, sizeof(err)), "port");
	ASSERT_ERR(ps_httpd_parse_addr("::1:9490", &ss, &sl, err, sizeof(err)), "v6 bare");
	ASSERT_ERR(ps_httpd_parse_addr("[::1]9490", &ss, &sl, err, sizeof(err)), "v6 colon");
}

/* --- the server --------------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A connection to port; rcvbuf > 0 shrinks its receive buffer first (a slow reader). */
static int dial(unsigned port, int rcvbuf)
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

/* Reads until EOF or timeout_s; returns the bytes read (NUL-terminated in buf). */
static ssize_t read_all(int fd, char *buf, size_t len, double timeout_s)
{
	double end = now_s() + timeout_s;
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left = end - now_s();
		ssize_t k;

		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			break;
		k = read(fd, buf + n, len - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	buf[n] = 0;
	return (ssize_t)n;
}

/* Drains fd; true when the peer closed it within timeout_s. */
static bool closed_within(int fd, double timeout_s)
{
	double end = now_s() + timeout_s;
	char buf[65536];

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left = end - now_s();
		ssize_t k;

		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			return false;
		k = read(fd, buf, sizeof(buf));
		if (k == 0 || (k < 0 && errno == ECONNRESET))
			return true;
		if (k < 0)
			return false;
	}
}

/* One request; the status code of the answer, -1 when none came within timeout_s. */
static int request(unsigned port, const char *req, char *buf, size_t len, double timeout_s)
{
	int fd = dial(port, 0), st = -1;

	if (fd < 0)
		return -1;
	if (write(fd, req, strlen(req)) == (ssize_t)strlen(req) &&
	    read_all(fd, buf, len, timeout_s) > 12 && !strncmp(buf, "HTTP/1.1 ", 9))
		st = atoi(buf + 9);
	close(fd);
	return st;
}

static char *big_page(size_t n, char fill)
{
	char *p = malloc(n + 1);

	if (p) {
		memset(p, fill, n);
		p[n] = 0;
	}
	return p;
}

TEST(server_answers)
{
	struct ps_httpd_opts o = { .max_conn = 16, .head_ms = 1000, .send_ms = 2000 };
	struct ps_httpd *h = NULL;
	char err[256], buf[4096];

	if (!ASSERT_OK(ps_httpd_start(&h, "127.0.0.1:0", &o, err, sizeof(err)), err))
		return;
	ASSERT_EQ(request(ps_httpd_port(h), "GET /metrics HTTP/1.1\r\n\r\n", buf, sizeof(buf), 5),
		  503, "before the first page");
	ASSERT_OK(ps_httpd_publish(h, "om 1\n# EOF\n", 11, "txt 1\n", 6), "publish");
	ASSERT_EQ(request(ps_httpd_port(h), "GET /metrics HTTP/1.1\r\n\r\n", buf, sizeof(buf), 5),
		  200, "get");
	ASSERT_STRSTR(buf, "text/plain; version=0.0.4", "content type");
	ASSERT_STRSTR(buf, "\r\n\r\ntxt 1\n", "text body");
	ASSERT_EQ(request(ps_httpd_port(h), "GET /metrics HTTP/1.1\r\nAccept: "
			  "application/openmetrics-text\r\n\r\n", buf, sizeof(buf), 5), 200, "om");
	ASSERT_STRSTR(buf, "application/openmetrics-text; version=1.0.0", "om type");
	ASSERT_STRSTR(buf, "Content-Length: 11\r\n", "om length");
	ASSERT_EQ(request(ps_httpd_port(h), "HEAD /metrics HTTP/1.0\r\n\r\n", buf, sizeof(buf), 5),
		  200, "head");
	ASSERT_TRUE(strstr(buf, "txt 1") == NULL, "no body for HEAD");
	ASSERT_EQ(request(ps_httpd_port(h), "GET /x HTTP/1.1\r\n\r\n", buf, sizeof(buf), 5), 404,
		  "404");
	ASSERT_STRSTR(buf, "Content-Length: 14\r\n", "404's length");
	ASSERT_EQ(request(ps_httpd_port(h), "HEAD /x HTTP/1.1\r\n\r\n", buf, sizeof(buf), 5), 404,
		  "HEAD 404");
	ASSERT_STRSTR(buf, "Content-Length: 14\r\n", "HEAD 404: the length GET gets");
	ASSERT_TRUE(!strstr(buf, "404 Not Found\n"), "HEAD 404: no body");
	ASSERT_EQ(request(ps_httpd_port(h), "DELETE /metrics HTTP/1.1\r\n\r\n", buf, sizeof(buf),
			  5), 405, "405");
	ASSERT_EQ(request(ps_httpd_port(h), "\x16\x03\x01\x02\xfe\x01", buf, sizeof(buf), 5), 400,
		  "a TLS hello, refused before a head could end");
	ASSERT_EQ(request(ps_httpd_port(h), "GET /metrics HTTP/1.1\r\n", buf, sizeof(buf), 8), 408,
		  "a head that never ends");
	ASSERT_OK(ps_httpd_publish(h, "om 2\n", 5, "txt 2\n", 6), "publish again");
	ASSERT_EQ(request(ps_httpd_port(h), "GET /metrics HTTP/1.1\r\n\r\n", buf, sizeof(buf), 5),
		  200, "get 2");
	ASSERT_STRSTR(buf, "txt 2", "the new page");
	ps_httpd_stop(h);
}

struct scraper {
	unsigned port;
	int rounds, ok;
	size_t want;
};

static void *scrape_loop(void *arg)
{
	struct scraper *s = arg;
	char *buf = malloc(s->want + 4096);

	for (int i = 0; buf && i < s->rounds; i++) {
		const char *body;

		if (request(s->port, "GET /metrics HTTP/1.1\r\n\r\n", buf, s->want + 4096, 20) ==
		    200 && (body = strstr(buf, "\r\n\r\n")) && strlen(body + 4) == s->want)
			s->ok++;
	}
	free(buf);
	return NULL;
}

struct publisher {
	struct ps_httpd *h;
	char *page;
	size_t len;
	int n;
	double worst;	/* the longest publish, seconds */
};

static void *publish_loop(void *arg)
{
	struct publisher *p = arg;

	for (int i = 0; i < p->n; i++) {
		double t0 = now_s(), d;

		ps_httpd_publish(p->h, p->page, p->len, p->page, p->len);
		d = now_s() - t0;
		if (d > p->worst)
			p->worst = d;
		usleep(20000);
	}
	return NULL;
}

/*
 * 100 scrapers at once, beside a client that never reads a 1 MiB page, one that sends its
 * request a byte at a time, one that sends garbage without end and connections past the cap:
 * every scraper gets whole pages, the publisher never waits, the slow clients are cut at their
 * deadlines. The response deadline is the exporter's own (send_ms, 10 s): 100 MiB a round to
 * 100 clients must be taken within what `record --listen` allows, on a loaded machine too (the
 * never-reading client's cut is server_cuts_a_client_that_never_reads's).
 */
TEST(server_under_abuse)
{
	struct ps_httpd_opts o = PS_HTTPD_OPTS_DEFAULT;
	struct ps_httpd *h = NULL;
	struct scraper sc[100];
	pthread_t thr[100], pt;
	struct publisher pub = { .n = 100 };
	struct ps_httpd_stats st;
	size_t page = 1 << 20;
	int stuck = -1, slow = -1, junk = -1, extra[230], nextra = 0, ok = 0;
	char err[256], buf[256];
	double t0;

	/* a scraper's next connection may come before the server saw its last one close */
	o.max_conn = 220;	/* 230 more connections pass it */
	o.head_ms = 1500;	/* the byte-a-second client is told 408 soon */
	signal(SIGPIPE, SIG_IGN);	/* the server closes on the junk client */
	if (!ASSERT_OK(ps_httpd_start(&h, "127.0.0.1:0", &o, err, sizeof(err)), err))
		return;
	pub.h = h;
	pub.page = big_page(page, 'x');
	pub.len = page;
	if (!ASSERT_NOT_NULL(pub.page, "page"))
		goto out;
	ps_httpd_publish(h, pub.page, page, pub.page, page);

	/* never reads: its response fills the socket buffers and waits there */
	stuck = dial(ps_httpd_port(h), 4096);
	(void)!write(stuck, "GET /metrics HTTP/1.1\r\n\r\n", 25);
	/* a byte a second, never finishing within the head deadline */
	slow = dial(ps_httpd_port(h), 0);
	(void)!write(slow, "G", 1);
	junk = dial(ps_httpd_port(h), 0);

	pthread_create(&pt, NULL, publish_loop, &pub);
	for (int i = 0; i < 100; i++) {
		sc[i] = (struct scraper){ .port = ps_httpd_port(h), .rounds = 3, .want = page };
		pthread_create(&thr[i], NULL, scrape_loop, &sc[i]);
	}
	t0 = now_s();
	for (int i = 0; i < 3; i++) {
		(void)!write(slow, "E", 1);
		for (int k = 0; k < 64; k++)
			(void)!write(junk, "\xff\xfe garbage", 10);
		usleep(300000);
	}
	for (int i = 0; i < 100; i++) {
		pthread_join(thr[i], NULL);
		ok += sc[i].ok;
	}
	pthread_join(pt, NULL);
	ps_httpd_stats(h, &st);
	snprintf(err, sizeof(err), "whole pages served to the 100 scrapers (server: %llu refused "
		 "at the cap, %llu cut at a deadline, %llu 2xx)", (unsigned long long)st.refused,
		 (unsigned long long)st.timeouts, (unsigned long long)st.responses[2]);
	ASSERT_EQ(ok, 300, err);
	/* waiting on a client would take its deadline (send_ms); scheduling takes far less */
	ASSERT_TRUE(pub.worst < 1.0, "publishing never waits on a client");
	/* past the cap: answered 503 at once */
	for (nextra = 0; nextra < (int)ARRAY_SIZE(extra); nextra++)
		extra[nextra] = dial(ps_httpd_port(h), 0);
	ASSERT_EQ(request(ps_httpd_port(h), "GET /metrics HTTP/1.1\r\n\r\n", buf, sizeof(buf), 5),
		  503, "over the cap");
	for (int i = 0; i < nextra; i++)
		if (extra[i] >= 0)
			close(extra[i]);
	/* the slow client is told 408 at its head deadline */
	ASSERT_EQ(read_all(slow, buf, sizeof(buf), 5) > 9 ? atoi(buf + 9) : -1, 408,
		  "the byte-a-second client");
	ASSERT_TRUE(now_s() - t0 < 30, "deadlines");
	ASSERT_EQ(read_all(junk, buf, sizeof(buf), 5) > 9 ? atoi(buf + 9) : -1, 400, "garbage");
	ps_httpd_stats(h, &st);
	ASSERT_TRUE(st.timeouts >= 1, "the slow client timed out");
	ASSERT_TRUE(st.refused >= 1, "refused at the cap");
out:
	if (stuck >= 0)
		close(stuck);
	if (slow >= 0)
		close(slow);
	if (junk >= 0)
		close(junk);
	free(pub.page);
	ps_httpd_stop(h);
}

/*
 * A client that sends more after its request (a pipelined second request): the whole page
 * still arrives, and the connection ends cleanly (closing a socket with unread input would
 * reset it and drop the page's unsent end).
 */
TEST(server_pipelined_request)
{
	struct ps_httpd_opts o = { .max_conn = 8, .head_ms = 2000, .send_ms = 5000 };
	static const char req[] = "GET /metrics HTTP/1.1\r\n\r\n",
			  more[] = "GET /metrics HTTP/1.1\r\n\r\n\r\n";
	struct ps_httpd *h = NULL;
	size_t page = 16 << 20, cap = page + 4096;
	char err[256], *pg = big_page(page, 'z'), *buf = malloc(cap);
	ssize_t n;
	int fd;

	signal(SIGPIPE, SIG_IGN);
	if (!ASSERT_NOT_NULL(pg, "page") || !ASSERT_NOT_NULL(buf, "buffer") ||
	    !ASSERT_OK(ps_httpd_start(&h, "127.0.0.1:0", &o, err, sizeof(err)), err))
		goto out;
	ps_httpd_publish(h, pg, page, pg, page);
	fd = dial(ps_httpd_port(h), 0);
	if (!ASSERT_TRUE(fd >= 0, "dial"))
		goto out;
	ASSERT_EQ(write(fd, req, sizeof(req) - 1), (ssize_t)sizeof(req) - 1, "send");
	usleep(100000);		/* the server has read the head: the next bytes stay unread */
	ASSERT_EQ(write(fd, more, sizeof(more) - 1), (ssize_t)sizeof(more) - 1, "send more");
	usleep(200000);
	n = read_all(fd, buf, cap, 10);
	close(fd);
	{
		const char *body = strstr(buf, "\r\n\r\n");

		ASSERT_TRUE(body && n - (body + 4 - buf) == (ssize_t)page,
			    "the whole page after a pipelined request");
	}
out:
	ps_httpd_stop(h);
	free(pg);
	free(buf);
}

/*
 * A client that never reads a page larger than the socket buffers can hold: the server cuts it
 * at its send deadline, while a client that reads takes the same page whole and the publisher
 * goes on replacing it.
 */
TEST(server_cuts_a_client_that_never_reads)
{
	struct ps_httpd_opts o = { .max_conn = 8, .head_ms = 1000, .send_ms = 1500 };
	struct ps_httpd *h = NULL;
	struct scraper sc = { .rounds = 1, .want = 32 << 20 };
	struct publisher pub = { .n = 20 };
	struct ps_httpd_stats st;
	pthread_t thr, pt;
	char err[256];
	int stuck = -1;
	double t1;

	signal(SIGPIPE, SIG_IGN);
	if (!ASSERT_OK(ps_httpd_start(&h, "127.0.0.1:0", &o, err, sizeof(err)), err))
		return;
	pub.h = h;
	pub.len = sc.want;
	pub.page = big_page(pub.len, 'y');
	if (!ASSERT_NOT_NULL(pub.page, "page"))
		goto out;
	ps_httpd_publish(h, pub.page, pub.len, pub.page, pub.len);
	stuck = dial(ps_httpd_port(h), 4096);
	if (!ASSERT_TRUE(stuck >= 0, "dial"))
		goto out;
	(void)!write(stuck, "GET /metrics HTTP/1.1\r\n\r\n", 25);
	sc.port = ps_httpd_port(h);
	pthread_create(&pt, NULL, publish_loop, &pub);
	pthread_create(&thr, NULL, scrape_loop, &sc);
	pthread_join(thr, NULL);
	pthread_join(pt, NULL);
	ASSERT_EQ(sc.ok, 1, "the reader took the whole page");
	ASSERT_TRUE(pub.worst < 1.0, "publishing never waits on a client");
	/*
	 * Wait for the cut before reading: reading would let the page through. Its deadline is
	 * send_ms without progress; it is timed from when the reader's 32 MiB are through, which
	 * under ASan on a busy machine can take seconds, and must come within send_ms and a
	 * head_ms after that.
	 */
	t1 = now_s();
	do {
		usleep(100000);
		ps_httpd_stats(h, &st);
	} while (!st.timeouts && now_s() - t1 < 10);
	ASSERT_TRUE(st.timeouts >= 1, "cut as a timeout");
	ASSERT_TRUE(now_s() - t1 < (o.send_ms + o.head_ms) / 1000.0 + 1.0, "at its deadline");
	ASSERT_TRUE(closed_within(stuck, 10), "then closed");
out:
	if (stuck >= 0)
		close(stuck);
	free(pub.page);
	ps_httpd_stop(h);
}
