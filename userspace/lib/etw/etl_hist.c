// SPDX-License-Identifier: GPL-2.0
/*
 * Event histogram for `etl info` and the corpus tests: a small open-addressing table keyed by
 * (kernel group/type) or (GUID, id/type). Files have hundreds of kinds, not millions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/lib/etw/etl_hist.h"

/*
 * One multiply over the GUID as two words, not a pass over its bytes: `etl info` hashes every
 * non-kernel event, so the hash is a visible part of the histogram's cost. Kinds number in the
 * hundreds, so mixing quality beyond this does not matter.
 */
static uint64_t key_hash(bool kernel, uint8_t g, uint8_t t, uint16_t id, const uint8_t *guid)
{
	uint64_t a = 0, b = 0, h;

	if (guid) {
		memcpy(&a, guid, 8);
		memcpy(&b, guid + 8, 8);
	}
	h = a ^ (b << 29 | b >> 35) ^ ((uint64_t)kernel << 40 | (uint64_t)g << 32 |
				       (uint64_t)t << 16 | id);
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ h >> 29;
}

static bool same(const struct ps_etl_hist_ent *e, bool kernel, uint8_t g, uint8_t t, uint16_t id,
		 const uint8_t *guid)
{
	if (e->kernel != kernel || e->group != g || e->type != t || e->id != id)
		return false;
	return kernel || !memcmp(e->guid, guid, 16);
}

static int grow(struct ps_etl_hist *h)
{
	size_t ns = h->nslot ? h->nslot * 2 : 256;
	uint32_t *s = calloc(ns, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < h->n; i++) {
		struct ps_etl_hist_ent *e = &h->ent[i];
		uint64_t k = key_hash(e->kernel, e->group, e->type, e->id, e->kernel ? NULL : e->guid);
		size_t j = k & (ns - 1);
		while (s[j])
			j = (j + 1) & (ns - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(h->slot);
	h->slot = s;
	h->nslot = ns;
	return 0;
}

static inline unsigned recent_slot(const struct ps_etl_event *ev)
{
	return (ev->id * 7u + ev->type + (ev->guid ? ev->guid[0] : 0)) & 63;
}

/*
 * The entry for a kind, created with a zero count when new (kidx, not recent, updated then).
 * NULL when out of memory.
 */
static struct ps_etl_hist_ent *find_or_add(struct ps_etl_hist *h, bool kernel, uint8_t g,
					   uint8_t t, uint16_t id, const uint8_t *guid,
					   uint32_t *idx)
{
	uint64_t k;
	size_t j;

	if (kernel && !h->kidx[g] && !(h->kidx[g] = calloc(256, sizeof(*h->kidx[g]))))
		return NULL;
	if ((h->n + 1) * 2 > h->nslot && grow(h) < 0)
		return NULL;
	k = key_hash(kernel, g, t, id, guid);
	for (j = k & (h->nslot - 1); h->slot[j]; j = (j + 1) & (h->nslot - 1)) {
		struct ps_etl_hist_ent *e = &h->ent[h->slot[j] - 1];
		if (same(e, kernel, g, t, id, guid)) {
			*idx = h->slot[j];
			return e;
		}
	}
	if (h->n == h->cap) {
		size_t nc = h->cap ? h->cap * 2 : 64;
		struct ps_etl_hist_ent *n = realloc(h->ent, nc * sizeof(*n));
		if (!n)
			return NULL;
		h->ent = n;
		h->cap = nc;
	}
	struct ps_etl_hist_ent *e = &h->ent[h->n];
	memset(e, 0, sizeof(*e));
	e->kernel = kernel;
	e->group = g;
	e->type = t;
	e->id = id;
	e->first_buf = e->first_off = UINT32_MAX;
	if (guid)
		memcpy(e->guid, guid, 16);
	h->slot[j] = (uint32_t)++h->n;
	*idx = (uint32_t)h->n;
	if (kernel)
		h->kidx[g][t] = (uint32_t)h->n;
	return e;
}

/* The table lookup and insertion (kinds not found in kidx or recent). */
static __attribute__((noinline)) int hist_add_slow(struct ps_etl_hist *h,
						   const struct ps_etl_event *ev)
{
	static const uint8_t zero[16];
	bool kernel = ev->kernel;
	const uint8_t *guid = kernel ? NULL : ev->guid ? ev->guid : zero;
	uint32_t idx;
	struct ps_etl_hist_ent *e = find_or_add(h, kernel, kernel ? ev->group : 0, ev->type, ev->id,
						guid, &idx);

	if (!e)
		return -ENOMEM;
	if (!e->count++) {
		e->htype = ev->htype;
		e->first_buf = ev->buf_index;
		e->first_off = ev->buf_off;
	}
	if (!kernel)
		h->recent[recent_slot(ev)] = idx;
	return 0;
}

int ps_etl_hist_merge(struct ps_etl_hist *dst, const struct ps_etl_hist *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct ps_etl_hist_ent *s = &src->ent[i];
		uint32_t idx;
		struct ps_etl_hist_ent *e = find_or_add(dst, s->kernel, s->group, s->type, s->id,
							s->kernel ? NULL : s->guid, &idx);

		if (!e)
			return -ENOMEM;
		if (!e->count || s->first_buf < e->first_buf ||
		    (s->first_buf == e->first_buf && s->first_off < e->first_off)) {
			e->htype = s->htype;
			e->first_buf = s->first_buf;
			e->first_off = s->first_off;
		}
		e->count += s->count;
	}
	return 0;
}

/*
 * Called for every event of `etl info`: kernel kinds (most events) index a direct table, and
 * other kinds hit a small direct-mapped cache of recent kinds (a provider's events come in
 * bursts of a few ids) before the hash table. Kept small so the common case needs no spills.
 */
int ps_etl_hist_add(struct ps_etl_hist *h, const struct ps_etl_event *ev)
{
	if (ev->kernel) {
		const uint32_t *row = h->kidx[ev->group];
		uint32_t k = row ? row[ev->type] : 0;

		if (k) {
			h->ent[k - 1].count++;
			return 0;
		}
	} else if (ev->guid) {
		uint32_t k = h->recent[recent_slot(ev)];

		if (k) {
			struct ps_etl_hist_ent *e = &h->ent[k - 1];

			if (e->id == ev->id && e->type == ev->type && !e->kernel &&
			    !memcmp(e->guid, ev->guid, 16)) {
				e->count++;
				return 0;
			}
		}
	}
	return hist_add_slow(h, ev);
}

static int cmp_ent(const void *a, const void *b)
{
	const struct ps_etl_hist_ent *x = a, *y = b;

	if (x->kernel != y->kernel)
		return x->kernel ? -1 : 1;
	if (x->kernel) {
		if (x->group != y->group)
			return x->group - y->group;
		return x->type - y->type;
	}
	int c = memcmp(x->guid, y->guid, 16);
	if (c)
		return c;
	if (x->id != y->id)
		return x->id - y->id;
	return x->type - y->type;
}

void ps_etl_hist_sort(struct ps_etl_hist *h)
{
	qsort(h->ent, h->n, sizeof(*h->ent), cmp_ent);
	/* indexes moved: rebuild the slots and kernel rows, forget the recent kinds */
	memset(h->recent, 0, sizeof(h->recent));
	for (size_t i = 0; i < h->n; i++)
		if (h->ent[i].kernel)
			h->kidx[h->ent[i].group][h->ent[i].type] = (uint32_t)i + 1;
	free(h->slot);
	h->slot = NULL;
	h->nslot = 0;
	grow(h);
}

uint64_t ps_etl_hist_kernel(const struct ps_etl_hist *h, uint8_t group, uint8_t type)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->ent[i].kernel && h->ent[i].group == group && h->ent[i].type == type)
			return h->ent[i].count;
	return 0;
}

void ps_etl_hist_free(struct ps_etl_hist *h)
{
	free(h->ent);
	free(h->slot);
	for (unsigned g = 0; g < 256; g++)
		free(h->kidx[g]);
	memset(h, 0, sizeof(*h));
}

const char *ps_etl_htype_name(uint8_t t)
{
	static const char *const n[] = {
		[PS_ETL_HT_SYSTEM32] = "SYSTEM32", [PS_ETL_HT_SYSTEM64] = "SYSTEM64",
		[PS_ETL_HT_COMPACT32] = "COMPACT32", [PS_ETL_HT_COMPACT64] = "COMPACT64",
		[PS_ETL_HT_FULL32] = "FULL32", [PS_ETL_HT_INSTANCE32] = "INSTANCE32",
		[PS_ETL_HT_TIMED] = "TIMED", [PS_ETL_HT_ERROR] = "ERROR", [PS_ETL_HT_WNODE] = "WNODE",
		[PS_ETL_HT_MESSAGE] = "MESSAGE", [PS_ETL_HT_PERFINFO32] = "PERFINFO32",
		[PS_ETL_HT_PERFINFO64] = "PERFINFO64", [PS_ETL_HT_EVENT32] = "EVENT32",
		[PS_ETL_HT_EVENT64] = "EVENT64", [PS_ETL_HT_FULL64] = "FULL64",
		[PS_ETL_HT_INSTANCE64] = "INSTANCE64",
	};
	return t < sizeof(n) / sizeof(n[0]) && n[t] ? n[t] : "UNKNOWN";
}
