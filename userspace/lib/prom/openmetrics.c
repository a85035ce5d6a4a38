// SPDX-License-Identifier: GPL-2.0
/*
 * The metrics page (openmetrics.h). Integers up to 2^53 (bytes, counts) are printed exactly,
 * other values with 10 significant digits; NaN and infinities in the spelling both formats
 * accept.
 */
#include "userspace/lib/prom/openmetrics.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/lib/util/util.h"

void ps_om_init(struct ps_om *m, bool openmetrics)
{
	memset(m, 0, sizeof(*m));
	m->openmetrics = openmetrics;
}

void ps_om_free(struct ps_om *m)
{
	free(m->buf);
	m->buf = NULL;
	m->len = m->cap = 0;
}

static void grow(struct ps_om *m, size_t need)
{
	size_t cap = m->cap ? m->cap : 4096;
	char *nb;

	while (cap < m->len + need + 1)
		cap *= 2;
	if (cap == m->cap)
		return;
	nb = realloc(m->buf, cap);
	if (!nb) {
		m->err = -ENOMEM;
		return;
	}
	m->buf = nb;
	m->cap = cap;
}

static void put(struct ps_om *m, const char *s, size_t n)
{
	if (m->err)
		return;
	grow(m, n);
	if (m->err)
		return;
	memcpy(m->buf + m->len, s, n);
	m->len += n;
	m->buf[m->len] = 0;
}

static void puts_(struct ps_om *m, const char *s)
{
	put(m, s, strlen(s));
}

static __attribute__((format(printf, 2, 3))) void putf(struct ps_om *m, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		if (!m->err)
			m->err = -EINVAL;
		return;
	}
	put(m, tmp, (size_t)n);
}

/*
 * Escapes backslash and newline (both formats), and the double quote where quote is set.
 * Bytes that are not UTF-8 text do not occur: names come from kallsyms and slab caches.
 */
static void put_escaped(struct ps_om *m, const char *s, bool quote)
{
	for (; *s; s++) {
		if (*s == '\\')
			puts_(m, "\\\\");
		else if (*s == '\n')
			puts_(m, "\\n");
		else if (*s == '"' && quote)
			puts_(m, "\\\"");
		else
			put(m, s, 1);
	}
}

bool ps_om_valid_name(const char *s, bool label)
{
	if (!s || !*s)
		return false;
	for (size_t i = 0; s[i]; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			  (!label && c == ':') || (i && c >= '0' && c <= '9');

		if (!ok)
			return false;
	}
	return true;
}

void ps_om_family(struct ps_om *m, const char *name, const char *type, const char *unit,
		  const char *help)
{
	const char *total;

	if (m->err)
		return;
	if (!ps_om_valid_name(name, false) || strlen(name) + 7 > sizeof(m->family)) {
		m->err = -EINVAL;
		return;
	}
	if (unit) {
		size_t nl = strlen(name), ul = strlen(unit);

		/* OpenMetrics: a family with a unit has the unit as the name's suffix */
		if (ul + 1 > nl || strcmp(name + nl - ul, unit) || name[nl - ul - 1] != '_') {
			m->err = -EINVAL;
			return;
		}
	}
	m->counter = !strcmp(type, "counter");
	ps_strlcpy(m->family, name, sizeof(m->family));
	total = m->counter && !m->openmetrics ? "_total" : "";
	putf(m, "# HELP %s%s ", name, total);
	/* OpenMetrics escapes the double quote in HELP text too; the 0.0.4 format does not */
	put_escaped(m, help, m->openmetrics);
	puts_(m, "\n");
	putf(m, "# TYPE %s%s %s\n", name, total, type);
	if (unit && m->openmetrics)
		putf(m, "# UNIT %s %s\n", name, unit);
}

void ps_om_sample(struct ps_om *m, const char *const *labels, double v)
{
	bool first = true;

	if (m->err)
		return;
	if (!m->family[0]) {
		m->err = -EINVAL;
		return;
	}
	puts_(m, m->family);
	if (m->counter)
		puts_(m, "_total");
	for (size_t i = 0; labels && labels[i]; i += 2) {
		if (!labels[i + 1])
			continue;
		if (!ps_om_valid_name(labels[i], true)) {
			m->err = -EINVAL;
			return;
		}
		putf(m, "%s%s=\"", first ? "{" : ",", labels[i]);
		put_escaped(m, labels[i + 1], true);
		puts_(m, "\"");
		first = false;
	}
	if (!first)
		puts_(m, "}");
	if (isnan(v))
		puts_(m, " NaN\n");
	else if (isinf(v))
		puts_(m, v > 0 ? " +Inf\n" : " -Inf\n");
	else if (v == floor(v) && fabs(v) < 9007199254740992.0)
		putf(m, " %.0f\n", v);
	else
		putf(m, " %.10g\n", v);
}

int ps_om_finish(struct ps_om *m)
{
	if (m->openmetrics)
		puts_(m, "# EOF\n");
	if (!m->err && !m->buf)
		grow(m, 0);
	return m->err;
}
