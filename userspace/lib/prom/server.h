/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A metrics endpoint on its own thread: serves the last page published, and nothing a client
 * does can reach the publisher. The publisher (the recorder, once per interval) only swaps a
 * pointer under a mutex; reading requests and writing pages happen in the server thread on
 * non-blocking sockets under poll(), with a deadline for every connection, a cap on their number,
 * and one request per connection. It listens only on the address it is given.
 */
#ifndef PS_PROM_SERVER_H
#define PS_PROM_SERVER_H

#include <stddef.h>
#include <stdint.h>

struct ps_httpd;

struct ps_httpd_opts {
	unsigned max_conn;		/* open connections at once; more are answered 503 */
	unsigned head_ms;		/* a request head must arrive within this of the accept */
	unsigned send_ms;		/* a response must be taken within this */
};

#define PS_HTTPD_OPTS_DEFAULT { .max_conn = 256, .head_ms = 5000, .send_ms = 10000 }

struct ps_httpd_stats {
	uint64_t responses[6];		/* by class: [2] 2xx, [4] 4xx, [5] 5xx */
	uint64_t timeouts;		/* connections closed at their deadline */
	uint64_t refused;		/* answered 503 at the connection cap */
};

/*
 * Parses "ADDRESS:PORT" (numeric IPv4, or [IPv6]; port 0 picks a free one) into ss. 0 or
 * -EINVAL with what was expected in err.
 */
int ps_httpd_parse_addr(const char *s, void *ss, unsigned *sslen, char *err, size_t errlen);

/* Binds, listens and starts the thread. 0, or -errno with "ADDRESS: why" in err. */
int ps_httpd_start(struct ps_httpd **out, const char *addr, const struct ps_httpd_opts *o,
		   char *err, size_t errlen);
/* The port bound (for port 0). */
unsigned ps_httpd_port(const struct ps_httpd *h);
/*
 * Replaces the page served: the OpenMetrics text and the 0.0.4 text (copied). Requests answered
 * before a first page get 503. 0 or -ENOMEM (the old page stays).
 */
int ps_httpd_publish(struct ps_httpd *h, const char *om, size_t omlen, const char *txt,
		     size_t txtlen);
void ps_httpd_stats(struct ps_httpd *h, struct ps_httpd_stats *st);
/* Stops the thread, closes every connection, frees h (NULL is fine). */
void ps_httpd_stop(struct ps_httpd *h);

#endif
