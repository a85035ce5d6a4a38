// SPDX-License-Identifier: GPL-2.0
/*
 * convert trace.dat: a capture of `trace-cmd record -e kmem ...` replayed through the tracefs
 * backend's mirror (tracefs.c) and the recorder's resolve and write stages, interval by
 * interval of the capture's own clock, so that the trace has the tags, classes and counters a
 * live recording has. libtracecmd reads the file (its event formats, its kallsyms, the records
 * of all CPUs in time order); symbols come from the capture, not from this machine's
 * /proc/kallsyms, and nothing of this machine's /proc goes in.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trace-cmd.h>
#include <event-parse.h>

#include "userspace/record/rec.h"
#include "userspace/record/replay.h"

struct replay {
	struct rec *r;
	struct tep_handle *tep;
	uint64_t t0, iv, next;		/* the first event's time, the interval, the next boundary */
	uint32_t idx;
	bool started;
	int e;
	/* symbols found in the capture, by start address, each named once */
	struct ps_htab syms;
	struct ps_ksym **own;
	size_t nown, capown;
};

/* The capture's symbol at addr (its kallsyms, which trace-cmd stores in the file). */
static const struct ps_ksym *capture_sym(const struct rec *r, uint64_t addr, uint64_t *off)
{
	struct replay *p = r->sym_ctx;
	const char *name = tep_find_function(p->tep, addr);
	uint64_t start;
	struct ps_ksym *k;
	void *v;

	if (!name)
		return NULL;
	start = tep_find_function_address(p->tep, addr);
	if (off)
		*off = addr - start;
	v = ps_htab_get(&p->syms, &(uint64_t){ start });
	if (v)
		return v;
	if (ps_array_reserve((void **)&p->own, &p->capown, p->nown + 1, sizeof(*p->own)))
		return NULL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->addr = start;
	k->name = name;		/* the tep handle keeps it for as long as the replay runs */
	p->own[p->nown++] = k;
	if (ps_htab_put(&p->syms, &(uint64_t){ start }, k))
		return NULL;
	return k;
}

static int on_record(struct tracecmd_input *h, struct tep_record *record, int cpu, void *ctx)
{
	struct replay *p = ctx;
	uint64_t rel;

	(void)h;
	if (!p->started) {
		p->t0 = record->ts;
		p->next = p->iv;
		p->started = true;
	}
	rel = record->ts > p->t0 ? record->ts - p->t0 : 0;
	/* the intervals this record is past, written before it counts */
	while (rel >= p->next) {
		if (p->idx >= PS_TRACE_MAX_INTERVALS - 1) {
			snprintf(p->r->err, p->r->errlen, "past the %u intervals a trace holds: use a "
				 "longer --interval", PS_TRACE_MAX_INTERVALS);
			p->e = -E2BIG;
			return 1;
		}
		p->e = rec_interval(p->r, p->idx, p->next, p->iv, false);
		if (p->e)
			return 1;
		p->idx++;
		p->next += p->iv;
	}
	p->e = rec_tracefs_event(p->r, record, cpu);
	return p->e ? 1 : 0;
}

int ps_replay_trace_cmd(struct ps_trace *t, const char *path, const struct ps_replay_opts *o,
			char *err, size_t errlen)
{
	struct ps_record_opts ro = { .out = NULL, .label = o->label, .interval_ns = o->interval_ns,
				     .site_sample = 1, .cmdline = o->cmdline };
	struct rec rr = { .o = &ro, .err = err, .errlen = errlen };
	struct replay p = { .r = &rr, .iv = o->interval_ns };
	struct rec *r = &rr;
	struct tracecmd_input *h;
	int e;

	err[0] = 0;
	h = tracecmd_open(path, 0);
	if (!h) {
		snprintf(err, errlen, "%s: starts as a trace-cmd trace.dat, but libtracecmd cannot read "
			 "its headers (cut short or damaged)", path);
		return -PS_ERR__CORRUPT;
	}
	p.tep = tracecmd_get_tep(h);
	r->t = t;
	r->replay = true;
	r->replay_source = PS_SOURCE_TRACE_CMD;
	r->sym_find = capture_sym;
	r->sym_ctx = &p;
	r->scale = 1;
	r->ncpus = tep_get_cpus(p.tep) > 0 ? tep_get_cpus(p.tep) : 1;
	if (ps_htab_init(&p.syms, sizeof(uint64_t)) || rec_resolve_init(r) ||
	    snap_init(&r->snap) || ps_slabnames_load(&r->sn, "/sys/kernel/slab")) {
		e = -ENOMEM;
		snprintf(err, errlen, "%s: %s", path, ps_strerror(e));
		goto out;
	}
	e = rec_tracefs_mirror(r, p.tep, -1);
	if (e) {
		if (e == -ENOENT)
			snprintf(err, errlen, "%s: no kmem events: record with trace-cmd record -e "
				 "kmem:kmalloc -e kmem:kfree -e kmem:kmem_cache_alloc -e "
				 "kmem:kmem_cache_free -e kmem:mm_page_alloc -e kmem:mm_page_free", path);
		goto out;
	}
	e = rec_write_meta(r);
	if (!e)
		e = rec_interval(r, p.idx++, 0, 0, false);	/* the baseline, as record's */
	if (e)
		goto out;
	if (tracecmd_iterate_events(h, NULL, 0, on_record, &p) < 0 && !p.e) {
		snprintf(err, errlen, "%s: reading its events failed", path);
		e = -EIO;
		goto out;
	}
	/* `trace-cmd record/extract -B NAME` keeps an instance's events in a buffer of its own */
	for (int i = 0; !p.started && !p.e && i < tracecmd_buffer_instances(h); i++) {
		struct tracecmd_input *b = tracecmd_buffer_instance_handle(h, i);

		if (!b)
			continue;
		if (tracecmd_iterate_events(b, NULL, 0, on_record, &p) < 0 && !p.e) {
			snprintf(err, errlen, "%s: reading the events of its buffer %s failed", path,
				 tracecmd_buffer_instance_name(h, i));
			p.e = -EIO;
		}
		tracecmd_close(b);
	}
	e = p.e;
	if (!e)
		e = rec_interval(r, p.idx++, p.next, p.iv, true);
	if (!e && !p.started)
		snprintf(err, errlen, "%s: holds no kmem event", path), e = -ENODATA;
out:
	if (e && !err[0])
		snprintf(err, errlen, "%s: %s", path, ps_strerror(e));
	rec_write_fini(r);
	rec_tracefs_close(r);
	rec_resolve_fini(r);
	snap_free(&r->snap);
	ps_slabnames_free(r->sn);
	for (size_t i = 0; i < p.nown; i++)
		free(p.own[i]);
	free(p.own);
	ps_htab_fini(&p.syms);
	tracecmd_close(h);
	return e;
}
