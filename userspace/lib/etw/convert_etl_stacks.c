// SPDX-License-Identifier: GPL-2.0
/*
 * .etl -> trace, the stacks: the table of distinct stacks (one per frame addresses and tag, with
 * the allocations counted on it), the kernel module map that image loads, unloads and rundowns
 * build, and the end of the run, when each stack is written with its frames named
 * driver+offset through that map. Which allocation a stack walk or a stack key belongs to is
 * decided per event, in convert_etl.c.
 */
#include <string.h>

#include "userspace/lib/etw/convert_etl_internal.h"
#include "userspace/lib/etw/etwkernel.h"

int32_t ps_conv_etl__stack_for(struct conv *c, uint32_t tag, const uint8_t *fr, uint32_t n,
			       unsigned p, uint32_t pid)
{
	uint64_t h = 1469598103934665603ULL;
	uint32_t v;

	if (n > MAX_FRAMES)
		n = MAX_FRAMES;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ ps_rdptr(fr + i * p, p)) * 1099511628211ULL;
	if (ps_kmap_get(&c->stackmap, h, tag, &v))
		return (int32_t)v;
	struct wstack *ns = grow(c->stacks, &c->capstacks, c->nstacks + 1, sizeof(*ns));
	if (!ns) {
		ps_conv_etl__oom(c);
		return -1;
	}
	c->stacks = ns;
	struct wstack *s = &c->stacks[c->nstacks];
	memset(s, 0, sizeof(*s));
	s->tag = tag;
	s->hash = h;
	s->nframes = n;
	s->addr = malloc((n ? n : 1) * sizeof(uint64_t));
	if (!s->addr) {
		ps_conv_etl__oom(c);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++)
		s->addr[i] = ps_rdptr(fr + i * p, p);
	s->comm = -1;
	if (pid != NOSESSION && ps_kmap_get(&c->pidmap, pid, 0, &v))
		s->comm = (int32_t)v;
	if (ps_kmap_put(&c->stackmap, h, tag, c->nstacks) < 0) {
		ps_conv_etl__oom(c);
		return -1;
	}
	c->res->stacks = ++c->nstacks;
	return (int32_t)c->nstacks - 1;
}

uint64_t ps_conv_etl__unresolved_keys(const struct conv *c)
{
	uint64_t n = 0;

	for (size_t i = 0; i < c->keymap.cap; i++) {
		if (!c->keymap.s[i].v)
			continue;
		for (int32_t gi = (int32_t)(c->keymap.s[i].v - 1); gi >= 0; gi = c->kagg[gi].next)
			n += c->kagg[gi].allocs;
	}
	return n;
}

/* --- images -------------------------------------------------------------------------------- */

static const char *basename_w(const char *p)
{
	const char *s = strrchr(p, '\\');
	return s ? s + 1 : p;
}

/* Image load/unload/rundown: kernel modules only (pool stacks are kernel stacks). */
int ps_conv_etl__on_image(struct conv *c, const struct ps_etl_event *ev)
{
	unsigned p = ev->ptr_size;
	uint32_t name_off = 3 * p + 32;
	char path[520];

	if (ev->version < 2 || ev->payload_len < name_off)
		return 0;
	uint64_t base = ps_rdptr(ev->payload, p), size = ps_rdptr(ev->payload + p, p);
	if (!is_kernel_addr(base, p))
		return 0;
	bool unload = (ev->type == PS_ETW_IMAGE_UNLOAD || ev->type == PS_ETW_IMAGE_DCEND) &&
		      ev->group == PS_ETW_GROUP_IMAGE;
	for (uint32_t i = 0; i < c->nimg; i++) {
		if (c->img[i].base == base) {
			/* DCEnd keeps the map for late keys */
			if (unload && ev->type == PS_ETW_IMAGE_UNLOAD) {
				free(c->img[i].name);
				c->img[i] = c->img[--c->nimg];
			}
			return 0;
		}
	}
	if (unload && ev->type == PS_ETW_IMAGE_UNLOAD)
		return 0;
	ps_etl_utf16(ev->payload + name_off, ev->payload_len - name_off, path, sizeof(path));
	struct image *n = grow(c->img, &c->capimg, c->nimg + 1, sizeof(*n));
	if (!n)
		return ps_conv_etl__oom(c);
	c->img = n;
	c->img[c->nimg].base = base;
	c->img[c->nimg].size = size;
	c->img[c->nimg].name = strdup(basename_w(path));
	if (!c->img[c->nimg].name)
		return ps_conv_etl__oom(c);
	c->nimg++;
	return 0;
}

static const struct image *find_image(const struct conv *c, uint64_t a)
{
	for (uint32_t i = 0; i < c->nimg; i++)
		if (a >= c->img[i].base && a - c->img[i].base < c->img[i].size)
			return &c->img[i];
	return NULL;
}

/* --- the end of the run -------------------------------------------------------------------- */

int ps_conv_etl__write_stacks(struct conv *c)
{
	struct ps_frame fr[MAX_FRAMES];

	for (uint32_t i = 0; i < c->nstacks; i++) {
		struct wstack *s = &c->stacks[i];
		for (uint32_t k = 0; k < s->nframes; k++) {
			const struct image *im = find_image(c, s->addr[k]);
			fr[k].addr = s->addr[k];
			fr[k].sym = NULL;
			fr[k].module = im ? im->name : NULL;
			fr[k].off = im ? s->addr[k] - im->base : 0;
		}
		struct ps_stack st = {
			.tag_id = c->tags[s->tag].id, .hash = s->hash, .allocs = s->allocs,
			.bytes = s->bytes, .live_bytes = s->live_bytes,
			.comm = s->comm >= 0 ? c->names[s->comm] : NULL,
			.nframes = s->nframes, .frames = fr,
		};
		int r = ps_trace_put_stack(c->t, &st);
		if (r < 0)
			return ps_conv_etl__fail_trace(c, "stack", r);
	}
	return 0;
}
