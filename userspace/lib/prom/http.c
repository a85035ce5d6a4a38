// SPDX-License-Identifier: GPL-2.0
/* The request parser (http.h). */
#include "userspace/lib/prom/http.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "userspace/lib/util/util.h"

const char *ps_http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 413: return "Payload Too Large";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

/* Where the head ends (after CRLF CRLF, or LF LF from lenient clients), 0: not yet. */
static size_t head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (buf[i] == '\n' && buf[i + 1] == '\n')
			return i + 2;
		if (i + 3 < len && !memcmp(buf + i, "\r\n\r\n", 4))
			return i + 4;
	}
	return 0;
}

/* A field's value: leading and trailing blanks cut. */
static void field_value(const char *v, const char *end, const char **vs, size_t *vn)
{
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	*vs = v;
	*vn = (size_t)(end - v);
}

static bool contains_ci(const char *s, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	for (size_t i = 0; i + k <= n; i++)
		if (!strncasecmp(s + i, needle, k))
			return true;
	return false;
}

int ps_http_parse(const char *buf, size_t len, struct ps_http_req *rq)
{
	const char *p, *eol, *sp1, *sp2, *end;
	size_t hl = head_end(buf, len < PS_HTTP_MAX_HEAD ? len : PS_HTTP_MAX_HEAD), plen;

	memset(rq, 0, sizeof(*rq));
	/* bytes no request head holds (TLS, binary) are refused at once, complete or not */
	end = buf + (hl ? hl : len < PS_HTTP_MAX_HEAD ? len : PS_HTTP_MAX_HEAD);
	for (p = buf; p < end; p++)
		if (!*p || (*p & 0x80) || (iscntrl((unsigned char)*p) && *p != '\r' &&
					    *p != '\n' && *p != '\t'))
			return 400;
	if (!hl)
		return len >= PS_HTTP_MAX_HEAD ? 431 : 0;
	eol = memchr(buf, '\n', hl);
	sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	if (!sp1)
		return 400;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1));
	if (!sp2 || sp2 == sp1 + 1)
		return 400;
	if (sp1 - buf == 3 && !memcmp(buf, "GET", 3))
		rq->head = false;
	else if (sp1 - buf == 4 && !memcmp(buf, "HEAD", 4))
		rq->head = true;
	else {
		for (p = buf; p < sp1; p++)
			if (!isupper((unsigned char)*p))
				return 400;
		return 405;
	}
	{
		const char *v = sp2 + 1, *ve = eol;

		if (ve > v && ve[-1] == '\r')
			ve--;
		if (ve - v != 8 || (memcmp(v, "HTTP/1.1", 8) && memcmp(v, "HTTP/1.0", 8)))
			return ve - v < 5 || memcmp(v, "HTTP/", 5) ? 400 : 505;
	}
	if (sp1[1] != '/')
		return 400;
	plen = strcspn(sp1 + 1, "? ");
	if (plen >= sizeof(rq->path))
		return 414;
	memcpy(rq->path, sp1 + 1, plen);
	rq->path[plen] = 0;
	for (p = eol + 1; p < end; p = eol + 1) {
		const char *colon, *vs;
		size_t vn;

		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol || eol == p || (eol == p + 1 && *p == '\r'))
			break;
		colon = memchr(p, ':', (size_t)(eol - p));
		if (!colon || colon == p || *p == ' ' || *p == '\t')
			return 400;	/* no name, or an obsolete folded line */
		for (const char *q = p; q < colon; q++)
			if (*q == ' ' || *q == '\t')
				return 400;
		field_value(colon + 1, eol, &vs, &vn);
		if ((colon - p == 14 && !strncasecmp(p, "Content-Length", 14) &&
		     !(vn == 1 && *vs == '0')) ||
		    (colon - p == 17 && !strncasecmp(p, "Transfer-Encoding", 17)))
			return 413;
		if (colon - p == 6 && !strncasecmp(p, "Accept", 6) &&
		    contains_ci(vs, vn, "application/openmetrics-text"))
			rq->openmetrics = true;
	}
	return 200;
}
