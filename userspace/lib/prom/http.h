/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The little HTTP/1.x a metrics endpoint needs: one request per connection, GET or HEAD, no
 * body. The parser is pure and strict, because the endpoint faces whatever the network sends:
 * it accepts a request head only when it is complete and well-formed, and names the status
 * to answer otherwise.
 */
#ifndef PS_PROM_HTTP_H
#define PS_PROM_HTTP_H

#include <stdbool.h>
#include <stddef.h>

/* The longest request head taken; a longer one is answered 431. */
#define PS_HTTP_MAX_HEAD 4096

struct ps_http_req {
	bool head;		/* HEAD, else GET */
	char path[256];		/* without the query string */
	bool openmetrics;	/* Accept names application/openmetrics-text */
};

/*
 * Parses the request head in buf[0..len). Returns 0 while the head is incomplete (no empty line
 * yet and len < PS_HTTP_MAX_HEAD), 200 when it is complete and valid (rq filled), or the status
 * to answer: 400 (malformed, or a byte no head holds: NUL, control, non-ASCII, even before the
 * head is complete), 405 (a method other than GET/HEAD), 414 (path too long), 431
 * (head too long), 505 (not HTTP/1.0 or 1.1), 413 (a request with a body).
 */
int ps_http_parse(const char *buf, size_t len, struct ps_http_req *rq);

/* The reason phrase of a status this endpoint answers. */
const char *ps_http_reason(int status);

#endif
