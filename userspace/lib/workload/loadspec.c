// SPDX-License-Identifier: GPL-2.0
/*
 * Pure helpers of `poolscope load` (see loadspec.h): pattern and URL parsing, offsets and
 * latency percentiles. Kept here, not in userspace/load/, so the unit tests can link them.
 */
#include "userspace/lib/workload/loadspec.h"
#include "userspace/lib/util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A macro, so that -Wformat=2 sees each literal format. */
#define set_err(err, len, fmt, arg) do {				\
		if ((err) && (len))					\
			snprintf((err), (len), fmt, (arg));		\
	} while (0)

int ps_load_parse_step(const char *s, struct ps_load_pattern *out, char *err, size_t errlen)
{
	char buf[64], *colon;
	const char *pat;
	uint64_t bs;

	if (strlen(s) >= sizeof(buf)) {
		set_err(err, errlen, "'%.40s...': step too long (expected BS:PATTERN, e.g. 8k:rr)", s);
		return -EINVAL;
	}
	ps_strlcpy(buf, s, sizeof(buf));
	colon = strchr(buf, ':');
	if (!colon) {
		set_err(err, errlen, "'%s': expected BS:PATTERN, e.g. 8k:rr or 8k:oltp", s);
		return -EINVAL;
	}
	*colon = '\0';
	pat = colon + 1;
	if (ps_parse_size(buf, &bs) || bs < 512 || bs > PS_LOAD_MAX_BS || bs % 512) {
		set_err(err, errlen, "'%s': block size must be a multiple of 512 from 512 to 16M", s);
		return -EINVAL;
	}
	out->bs = bs;
	if (!strcmp(pat, "rr")) {
		out->random = true; out->read_pct = 100;
	} else if (!strcmp(pat, "rw")) {
		out->random = true; out->read_pct = 0;
	} else if (!strcmp(pat, "sr")) {
		out->random = false; out->read_pct = 100;
	} else if (!strcmp(pat, "sw")) {
		out->random = false; out->read_pct = 0;
	} else if (!strcmp(pat, "oltp")) {
		out->random = true; out->read_pct = 70;
	} else {
		set_err(err, errlen, "'%s': pattern must be rr, rw, sr, sw or oltp", s);
		return -EINVAL;
	}
	return 0;
}

int ps_load_parse_sweep(const char *s, struct ps_load_pattern *out, int max, char *err,
			size_t errlen)
{
	char buf[1024], *save = NULL, *tok;
	int n = 0, ret;

	if (!*s || strlen(s) >= sizeof(buf)) {
		set_err(err, errlen, "sweep '%.40s': expected a list like 64k:rr,8k:oltp", s);
		return -EINVAL;
	}
	ps_strlcpy(buf, s, sizeof(buf));
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max) {
			set_err(err, errlen, "sweep '%.40s': too many steps (at most 32)", s);
			return -EINVAL;
		}
		ret = ps_load_parse_step(tok, &out[n], err, errlen);
		if (ret)
			return ret;
		n++;
	}
	if (!n) {
		set_err(err, errlen, "sweep '%.40s': expected a list like 64k:rr,8k:oltp", s);
		return -EINVAL;
	}
	return n;
}

char *ps_load_pattern_str(const struct ps_load_pattern *p, char *buf, size_t len)
{
	char bs[32];

	if (p->bs % (1 << 20) == 0)
		snprintf(bs, sizeof(bs), "%lluM", (unsigned long long)(p->bs >> 20));
	else if (p->bs % 1024 == 0)
		snprintf(bs, sizeof(bs), "%lluk", (unsigned long long)(p->bs >> 10));
	else
		snprintf(bs, sizeof(bs), "%llu", (unsigned long long)p->bs);
	if (p->read_pct == 100 || p->read_pct == 0)
		snprintf(buf, len, "%s %s%s", bs, p->random ? "rand" : "seq",
			 p->read_pct ? "read" : "write");
	else
		snprintf(buf, len, "%s %s mix %u%% read", bs, p->random ? "rand" : "seq", p->read_pct);
	return buf;
}

int ps_smb_url_parse(const char *url, struct ps_smb_url *out)
{
	const char *p, *slash, *colon;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (strncmp(url, "smb://", 6))
		return -EINVAL;
	p = url + 6;
	if (strchr(p, '@'))	/* credentials belong in --user, not in the URL */
		return -EINVAL;
	slash = strchr(p, '/');
	if (!slash || slash == p)
		return -EINVAL;
	n = slash - p;
	if (n >= sizeof(out->host))
		return -EINVAL;
	memcpy(out->host, p, n);
	colon = strrchr(out->host, ':');
	if (colon && !strchr(out->host, ']')) {
		char *end;
		unsigned long port = strtoul(colon + 1, &end, 10);

		if (*end || !port || port > 65535)
			return -EINVAL;
		out->port = (unsigned)port;
		out->host[colon - out->host] = '\0';
	}
	p = slash + 1;
	slash = strchr(p, '/');
	if (!slash || slash == p)
		return -EINVAL;
	n = slash - p;
	if (n >= sizeof(out->share))
		return -EINVAL;
	memcpy(out->share, p, n);
	p = slash + 1;
	if (!*p || p[strlen(p) - 1] == '/' || strlen(p) >= sizeof(out->path))
		return -EINVAL;
	ps_strlcpy(out->path, p, sizeof(out->path));
	return 0;
}

int ps_smb_user_parse(const char *s, char *domain, size_t dlen, char *user, size_t ulen,
		      char *pass, size_t plen)
{
	const char *pct = strchr(s, '%'), *bs = strchr(s, '\\');
	size_t n;

	domain[0] = user[0] = pass[0] = '\0';
	if (bs && (!pct || bs < pct)) {
		n = bs - s;
		if (n >= dlen || !n)
			return -EINVAL;
		memcpy(domain, s, n);
		domain[n] = '\0';
		s = bs + 1;
	}
	n = pct ? (size_t)(pct - s) : strlen(s);
	if (!n || n >= ulen)
		return -EINVAL;
	memcpy(user, s, n);
	user[n] = '\0';
	if (pct) {
		if (strlen(pct + 1) >= plen)
			return -EINVAL;
		ps_strlcpy(pass, pct + 1, plen);
	}
	return 0;
}

uint64_t ps_rand64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void ps_offset_gen_init(struct ps_offset_gen *g, uint64_t seed, uint64_t span, uint64_t bs,
			bool random, uint64_t start_block)
{
	g->state = seed;
	g->bs = bs;
	g->nblocks = bs ? span / bs : 0;
	g->random = random;
	g->next_seq = g->nblocks ? start_block % g->nblocks : 0;
}

uint64_t ps_offset_next(struct ps_offset_gen *g)
{
	uint64_t blk;

	if (!g->nblocks)
		return 0;
	if (g->random) {
		blk = (uint64_t)(((unsigned __int128)ps_rand64(&g->state) * g->nblocks) >> 64);
	} else {
		blk = g->next_seq++;
		if (g->next_seq == g->nblocks)
			g->next_seq = 0;
	}
	return blk * g->bs;
}

uint64_t ps_lat_hist_percentile(const uint64_t *hist, unsigned nbuckets, double q, uint64_t max_ns)
{
	uint64_t total = 0, want, seen = 0, hi;
	unsigned b;

	for (b = 0; b < nbuckets; b++)
		total += hist[b];
	if (!total)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	want = (uint64_t)(q * (double)total + 0.999999);
	if (want < 1)
		want = 1;
	for (b = 0; b < nbuckets; b++) {
		seen += hist[b];
		if (seen >= want)
			break;
	}
	if (b >= nbuckets)
		b = nbuckets - 1;
	hi = b + 1 < nbuckets ? ps_lat_bucket_lo(b + 1) : (max_ns ? max_ns : ps_lat_bucket_lo(b));
	if (max_ns && hi > max_ns)
		hi = max_ns;
	return hi;
}
