// SPDX-License-Identifier: GPL-2.0
/*
 * The metrics endpoint's thread (server.h). Every connection is in one of three states: reading
 * its request head (until head_ms after the accept), sending its response (until send_ms after
 * the head), or, the response sent and the socket shut for writing, draining what the client
 * still sends (at most DRAIN_MS). A page is shared by the connections that send it and freed by the last one;
 * the reference counts change only under the mutex the publisher takes.
 */
#include "userspace/lib/prom/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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

#include "userspace/lib/prom/http.h"
#include "userspace/lib/util/util.h"

struct page {
	unsigned refs;
	size_t omlen, txtlen;
	char *om, *txt;		/* into data */
	char data[];
};

/* reading the head; sending the answer; after it, reading what the client still sends */
enum cstate { C_READ, C_SEND, C_DRAIN };

/* How long a connection is drained after its answer before it is closed anyway. */
#define DRAIN_MS 1000

struct conn {
	int fd;
	enum cstate state;
	uint64_t deadline_ms;
	size_t inlen;
	char in[PS_HTTP_MAX_HEAD];
	char hdr[320];
	size_t hdrlen, off;	/* off counts the header, then the body */
	const char *body;
	size_t bodylen;
	struct page *pg;	/* the page body points into, or NULL */
};

struct ps_httpd {
	struct ps_httpd_opts o;
	int lfd, wake[2];
	unsigned port;
	uint64_t accept_after_ms;	/* out of file descriptors: accept again from then */
	pthread_t thr;
	pthread_mutex_t mu;
	struct page *cur;	/* under mu */
	struct ps_httpd_stats st;	/* under mu */
	struct conn **c;
	size_t nc;
	struct pollfd *pfd;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int ps_httpd_parse_addr(const char *s, void *ssv, unsigned *sslen, char *err, size_t errlen)
{
	struct sockaddr_storage *ss = ssv;
	char host[64];
	const char *colon, *hs, *he;
	unsigned port;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		hs = s + 1;
		he = strchr(s, ']');
		colon = he ? he + 1 : NULL;
		if (!colon || *colon != ':')
			goto bad;
	} else {
		hs = s;
		colon = strrchr(s, ':');
		he = colon;
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			goto bad;
	}
	if (he == hs || (size_t)(he - hs) >= sizeof(host) ||
	    ps_parse_uint(colon + 1, 0, 65535, &port))
		goto bad;
	memcpy(host, hs, (size_t)(he - hs));
	host[he - hs] = 0;
	if (s[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			goto bad;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		*sslen = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			goto bad;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		*sslen = sizeof(*a);
	}
	return 0;
bad:
	snprintf(err, errlen, "%s: expected ADDRESS:PORT with a numeric IPv4 address or an IPv6 "
		 "address in brackets (127.0.0.1:9490, [::1]:9490, 0.0.0.0:9490 for every "
		 "interface)", s);
	return -EINVAL;
}

static void page_put(struct page *pg)
{
	if (pg && !--pg->refs)
		free(pg);
}

static void conn_close(struct ps_httpd *h, size_t i)
{
	struct conn *c = h->c[i];

	close(c->fd);
	if (c->pg) {
		pthread_mutex_lock(&h->mu);
		page_put(c->pg);
		pthread_mutex_unlock(&h->mu);
	}
	free(c);
	h->c[i] = h->c[--h->nc];
}

/* Prepares the response to a parsed (or refused) request. */
static void respond(struct ps_httpd *h, struct conn *c, int status, const struct ps_http_req *rq)
{
	static const char index_page[] = "poolscope exporter: metrics at /metrics\n";
	const char *ctype = "text/plain; charset=utf-8";
	bool head = rq && rq->head;
	char msg[96];

	pthread_mutex_lock(&h->mu);
	if (status == 200 && !strcmp(rq->path, "/metrics")) {
		if (!h->cur) {
			status = 503;
		} else {
			c->pg = h->cur;
			c->pg->refs++;
			if (rq->openmetrics) {
				c->body = c->pg->om;
				c->bodylen = c->pg->omlen;
				ctype = "application/openmetrics-text; version=1.0.0; charset=utf-8";
			} else {
				c->body = c->pg->txt;
				c->bodylen = c->pg->txtlen;
				ctype = "text/plain; version=0.0.4; charset=utf-8";
			}
		}
	} else if (status == 200 && !strcmp(rq->path, "/")) {
		c->body = index_page;
		c->bodylen = sizeof(index_page) - 1;
	} else if (status == 200) {
		status = 404;
	}
	h->st.responses[status / 100 < 6 ? status / 100 : 5]++;
	pthread_mutex_unlock(&h->mu);
	if (status != 200) {
		/* the message lives in hdr after the head, so it is sent as part of it */
		snprintf(msg, sizeof(msg), "%d %s\n", status,
			 status == 503 ? "no interval recorded yet" : ps_http_reason(status));
		c->body = NULL;
		c->bodylen = 0;
		/* HEAD gets the head GET would get, without its body */
		c->hdrlen = (size_t)snprintf(c->hdr, sizeof(c->hdr),
			"HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
			"Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
			status, ps_http_reason(status), strlen(msg), head ? "" : msg);
	} else {
		c->hdrlen = (size_t)snprintf(c->hdr, sizeof(c->hdr),
			"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			"Connection: close\r\n\r\n", ctype, c->bodylen);
		if (head)
			c->bodylen = 0;
	}
	c->state = C_SEND;
	c->off = 0;
	c->deadline_ms = now_ms() + h->o.send_ms;
}

/* Reads what the client sent; false when the connection is to be closed. */
static bool on_read(struct ps_httpd *h, struct conn *c)
{
	struct ps_http_req rq;
	ssize_t n;
	int st;

	n = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen, 0);
	if (n == 0)
		return false;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	c->inlen += (size_t)n;
	st = ps_http_parse(c->in, c->inlen, &rq);
	if (st)
		respond(h, c, st, st == 200 ? &rq : NULL);
	return true;
}

/*
 * Sends what the socket takes; false when it failed. Once all is sent, the connection is shut
 * for writing and drained: closing a socket with unread input (a pipelined request, a stray
 * CRLF) makes the kernel reset it and drop the answer's unsent end.
 */
static bool on_write(struct conn *c)
{
	while (c->off < c->hdrlen + c->bodylen) {
		const char *p;
		size_t left;
		ssize_t n;

		if (c->off < c->hdrlen) {
			p = c->hdr + c->off;
			left = c->hdrlen - c->off;
		} else {
			p = c->body + (c->off - c->hdrlen);
			left = c->hdrlen + c->bodylen - c->off;
		}
		n = send(c->fd, p, left, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR;
		c->off += (size_t)n;
	}
	if (shutdown(c->fd, SHUT_WR))
		return false;
	c->state = C_DRAIN;
	c->deadline_ms = now_ms() + DRAIN_MS;
	return true;
}

/* Reads and drops what the client sends after its answer; false at its end. */
static bool on_drain(struct conn *c)
{
	char buf[4096];
	ssize_t n;

	while ((n = recv(c->fd, buf, sizeof(buf), 0)) > 0)
		;
	return n < 0 && (errno == EAGAIN || errno == EINTR);
}

static void on_accept(struct ps_httpd *h)
{
	for (;;) {
		int fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct conn *c;

		if (fd < 0) {
			/* a full file table leaves the socket readable: wait, do not spin */
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				h->accept_after_ms = now_ms() + 100;
			return;
		}
		if (h->nc >= h->o.max_conn || !(c = calloc(1, sizeof(*c)))) {
			static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
				"Content-Length: 0\r\nConnection: close\r\n\r\n";

			(void)!send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			pthread_mutex_lock(&h->mu);
			h->st.refused++;
			h->st.responses[5]++;
			pthread_mutex_unlock(&h->mu);
			continue;
		}
		c->fd = fd;
		c->deadline_ms = now_ms() + h->o.head_ms;
		h->c[h->nc++] = c;
	}
}

static void *serve(void *arg)
{
	struct ps_httpd *h = arg;
	sigset_t all;

	/* signals are the recorder's main thread's to take */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		uint64_t now = now_ms(), next = UINT64_MAX;
		size_t np = 0;
		int tmo;

		for (size_t i = 0; i < h->nc;) {
			if (h->c[i]->deadline_ms <= now) {
				static const char late[] = "HTTP/1.1 408 Request Timeout\r\n"
					"Content-Length: 0\r\nConnection: close\r\n\r\n";

				/* a head that never came is told so; a response not taken is cut */
				if (h->c[i]->state == C_READ)
					(void)!send(h->c[i]->fd, late, sizeof(late) - 1,
						    MSG_NOSIGNAL | MSG_DONTWAIT);
				if (h->c[i]->state != C_DRAIN) {
					pthread_mutex_lock(&h->mu);
					h->st.timeouts++;
					pthread_mutex_unlock(&h->mu);
				}
				conn_close(h, i);
				continue;
			}
			if (h->c[i]->deadline_ms < next)
				next = h->c[i]->deadline_ms;
			i++;
		}
		if (h->accept_after_ms > now && h->accept_after_ms < next)
			next = h->accept_after_ms;
		h->pfd[np++] = (struct pollfd){ .fd = h->wake[0], .events = POLLIN };
		/* a negative fd is left out by poll(): no accepting while the pause lasts */
		h->pfd[np++] = (struct pollfd){ .fd = h->accept_after_ms > now ? -1 : h->lfd,
						.events = POLLIN };
		for (size_t i = 0; i < h->nc; i++)
			h->pfd[np++] = (struct pollfd){ .fd = h->c[i]->fd,
							.events = h->c[i]->state == C_SEND ? POLLOUT
											  : POLLIN };
		tmo = next == UINT64_MAX ? -1 : (int)(next - now);
		if (poll(h->pfd, np, tmo) < 0) {
			/* EINTR, or no memory for the poll table: try again shortly, do not leave */
			if (errno != EINTR)
				usleep(10000);
			continue;
		}
		if (h->pfd[0].revents)
			break;
		/* connections first: the indexes of pfd[2..] are those of c[] before any close */
		for (size_t i = h->nc; i-- > 0;) {
			struct pollfd *p = &h->pfd[2 + i];
			struct conn *c = h->c[i];
			bool keep = true;

			if (!p->revents)
				continue;
			if (c->state == C_DRAIN) {
				keep = on_drain(c);
			} else {
				if (c->state == C_READ)
					keep = (p->revents & (POLLIN | POLLHUP | POLLERR)) ?
					       on_read(h, c) : true;
				if (keep && c->state == C_SEND &&
				    ((p->revents & (POLLOUT | POLLHUP | POLLERR)) || c->off == 0))
					keep = on_write(c);
			}
			if (!keep)
				conn_close(h, i);
		}
		if (h->pfd[1].revents)
			on_accept(h);
	}
	return NULL;
}

int ps_httpd_start(struct ps_httpd **out, const char *addr, const struct ps_httpd_opts *o,
		   char *err, size_t errlen)
{
	struct sockaddr_storage ss, bound;
	unsigned sslen;
	socklen_t bl = sizeof(bound);
	struct ps_httpd *h;
	int one = 1, e;

	*out = NULL;
	e = ps_httpd_parse_addr(addr, &ss, &sslen, err, errlen);
	if (e)
		return e;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->o = *o;
	h->lfd = h->wake[0] = h->wake[1] = -1;
	h->c = calloc(o->max_conn + 1, sizeof(*h->c));
	h->pfd = calloc(o->max_conn + 2, sizeof(*h->pfd));
	if (!h->c || !h->pfd) {
		e = -ENOMEM;
		goto fail;
	}
	pthread_mutex_init(&h->mu, NULL);
	h->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->lfd < 0 ||
	    setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    (ss.ss_family == AF_INET6 &&
	     setsockopt(h->lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) ||
	    bind(h->lfd, (struct sockaddr *)&ss, sslen) || listen(h->lfd, 128) ||
	    getsockname(h->lfd, (struct sockaddr *)&bound, &bl)) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", addr, strerror(errno));
		goto fail_mu;
	}
	h->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
						    : ((struct sockaddr_in *)&bound)->sin_port);
	if (pipe2(h->wake, O_CLOEXEC | O_NONBLOCK)) {
		e = -errno;
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail_mu;
	}
	e = -pthread_create(&h->thr, NULL, serve, h);
	if (e) {
		snprintf(err, errlen, "thread: %s", strerror(-e));
		goto fail_mu;
	}
	*out = h;
	return 0;
fail_mu:
	pthread_mutex_destroy(&h->mu);
fail:
	if (h->lfd >= 0)
		close(h->lfd);
	if (h->wake[0] >= 0) {
		close(h->wake[0]);
		close(h->wake[1]);
	}
	free(h->c);
	free(h->pfd);
	free(h);
	return e;
}

unsigned ps_httpd_port(const struct ps_httpd *h)
{
	return h->port;
}

int ps_httpd_publish(struct ps_httpd *h, const char *om, size_t omlen, const char *txt,
		     size_t txtlen)
{
	struct page *pg = malloc(sizeof(*pg) + omlen + txtlen + 2);

	if (!pg)
		return -ENOMEM;
	pg->refs = 1;
	pg->om = pg->data;
	pg->txt = pg->data + omlen + 1;
	pg->omlen = omlen;
	pg->txtlen = txtlen;
	memcpy(pg->om, om, omlen);
	pg->om[omlen] = 0;
	memcpy(pg->txt, txt, txtlen);
	pg->txt[txtlen] = 0;
	pthread_mutex_lock(&h->mu);
	page_put(h->cur);
	h->cur = pg;
	pthread_mutex_unlock(&h->mu);
	return 0;
}

void ps_httpd_stats(struct ps_httpd *h, struct ps_httpd_stats *st)
{
	pthread_mutex_lock(&h->mu);
	*st = h->st;
	pthread_mutex_unlock(&h->mu);
}

void ps_httpd_stop(struct ps_httpd *h)
{
	if (!h)
		return;
	(void)!write(h->wake[1], "x", 1);
	pthread_join(h->thr, NULL);
	while (h->nc)
		conn_close(h, h->nc - 1);
	close(h->lfd);
	close(h->wake[0]);
	close(h->wake[1]);
	page_put(h->cur);
	pthread_mutex_destroy(&h->mu);
	free(h->c);
	free(h->pfd);
	free(h);
}
