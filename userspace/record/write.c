// SPDX-License-Identifier: GPL-2.0
/*
 * Write: the recorder's side of the trace contract (userspace/lib/trace/keys.h). The meta once
 * at the start; then each interval's snapshot, resolved, in one pass and one transaction: begin,
 * new tags, samples, sysstat, slabinfo, counters, workload, stacks, commit. Nothing is read or
 * looked up here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "userspace/record/rec.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/util/version.h"

static const char *const counter_names[PS_C_MAX] = {
	[PS_C_EV_KMALLOC] = "events.kmalloc",
	[PS_C_EV_KFREE] = "events.kfree",
	[PS_C_EV_CACHE_ALLOC] = "events.kmem_cache_alloc",
	[PS_C_EV_CACHE_FREE] = "events.kmem_cache_free",
	[PS_C_EV_PAGE_ALLOC] = "events.mm_page_alloc",
	[PS_C_EV_PAGE_FREE] = "events.mm_page_free",
	[PS_C_EV_PERCPU_ALLOC] = "events.percpu_alloc_percpu",
	[PS_C_EV_PERCPU_FREE] = "events.percpu_free_percpu",
	[PS_C_KFREE_NULL] = "kfree_null",
	[PS_C_FILTERED] = "filtered_allocs",
	[PS_C_SAMPLED_ALLOCS] = "sampled.allocs",
	[PS_C_SAMPLED_FREES] = "sampled.frees",
	[PS_C_IMPLICIT_FREES] = "sampled.implicit_frees",
	[PS_C_PREEXISTING_FREES] = "sampled.preexisting_frees",
	[PS_C_DROP_CLASS_FULL] = "drops.class_map_full",
	[PS_C_DROP_TAG_FULL] = "drops.tag_map_full",
	[PS_C_DROP_PTR_FULL] = PS_CTR_DROP_PTR_MAP_FULL,
	[PS_C_DROP_STACK_COLLISION] = "drops.stack_collision",
	[PS_C_DROP_STACK_ERR] = "drops.stack_error",
	[PS_C_DROP_STACKCNT_FULL] = "drops.stack_count_map_full",
	[PS_C_DROP_CACHEINFO_FULL] = "drops.cache_info_map_full",
	[PS_C_NO_KMEM_CACHE] = "kfree_untracked_nonslab",
	[PS_C_STACKS_TAKEN] = "stacks_taken",
	[PS_C_SELF_SKIPPED] = "self_skipped",
	[PS_C_DROP_RING_OVERRUN] = "drops.ring_overrun",
};

/* The trace's error as the recorder reports it; returns e. */
static int trace_fail(struct rec *r, int e)
{
	snprintf(r->err, r->errlen, "%s: %s", r->o->out, ps_trace_errmsg(r->t));
	return e;
}

/* Merged cache groups and their members, for a reader who wants to show the candidates. */
static int write_slab_groups(struct rec *r)
{
	char key[128], members[1024];
	int e = 0;

	for (size_t i = 0; r->sn && i < r->sn->n && !e; i++) {
		const char *g = r->sn->a[i].group;
		bool first = true;

		if (!g)
			continue;
		for (size_t j = 0; j < i; j++)
			if (r->sn->a[j].group && !strcmp(r->sn->a[j].group, g))
				first = false;
		if (!first)
			continue;
		snprintf(key, sizeof(key), "slab_group.%s", g);
		e = ps_trace_set_meta(r->t, key, ps_slab_members(r->sn, g, members, sizeof(members)));
	}
	return e;
}

int rec_write_meta(struct rec *r)
{
	const struct ps_record_opts *o = r->o;
	struct utsname u;
	char buf[256];
	int e = 0;
	FILE *f;

#define META(k, v) do { if (!e) e = ps_trace_set_meta(r->t, k, v); } while (0)
#define META_I(k, v) do { if (!e) e = ps_trace_set_meta_int(r->t, k, v); } while (0)
	uname(&u);
	META(PS_META_OS, PS_OS_LINUX);
	META(PS_META_SOURCE, r->replay ? r->replay_source : PS_SOURCE_RECORD);
	/* a capture converted here was made on another machine, maybe: nothing of this one */
	if (!r->replay) {
		META(PS_META_HOST, u.nodename);
		META(PS_META_KERNEL, u.release);
		if (r->build_id[0])
			META(PS_META_KERNEL_BUILD_ID, r->build_id);
		META(PS_META_ARCH, u.machine);
		f = fopen("/proc/sys/kernel/random/boot_id", "r");
		if (f) {
			if (fgets(buf, sizeof(buf), f)) {
				buf[strcspn(buf, "\n")] = 0;
				META(PS_META_BOOT_ID, buf);
			}
			fclose(f);
		}
	}
	META_I(PS_META_START_WALL_NS, r->replay ? 0 : (int64_t)rec_now_ns(CLOCK_REALTIME));
	META_I(PS_META_INTERVAL_NS, (int64_t)o->interval_ns);
	META(PS_META_TOOL_VERSION, POOLSCOPE_VERSION);
	META(PS_META_CMDLINE, o->cmdline);
	if (o->label)
		META(PS_META_LABEL, o->label);
	META_I(PS_META_NCPUS, r->ncpus);
	META_I(PS_META_PAGE_SIZE, sysconf(_SC_PAGESIZE));
	META_I(PS_META_SITE_SAMPLE_RATE, rec_filtered(o) ? 1 : (int64_t)r->scale);
	META_I(PS_META_STACK_SAMPLE_RATE, o->stack_sample && !r->tfs ?
	       (int64_t)o->stack_sample * (int64_t)r->scale : 0);
	META(PS_META_BACKEND, r->tfs ? "tracefs" : "bpf");
	META_I(PS_META_PAGE_STACK_SAMPLE_RATE, (int64_t)r->scale);
	META_I(PS_META_MAP_TAGS, o->map_tags);
	META_I(PS_META_MAP_PTRS, r->map_ptrs);
	META_I(PS_META_MAP_STACKS, o->map_stacks);
	META_I(PS_META_MAP_STACK_COUNTS, o->map_stack_counts);
	META_I(PS_META_MAP_CLASSES, o->map_classes);
	META_I(PS_META_MAP_CLASS_SLOTS, o->map_class_slots);
	if (o->comm)
		META(PS_META_FILTER_COMM, o->comm);
	if (o->pid)
		META_I(PS_META_FILTER_PID, o->pid);
	if (o->cgroup)
		META(PS_META_FILTER_CGROUP, o->cgroup);
	META(PS_META_PAGES_POLICY,
	     "page tags whose stack passes allocate_slab/new_slab/kmalloc_large are flagged "
	     "SLAB_BACKING (2): the slab side counts them");
	rec_bpf_disabled(r, buf, sizeof(buf));
	META(PS_META_DISABLED_TPS, buf);
	if (o->empty_probes)
		META(PS_META_EMPTY_PROBES, "1");
	else
		META(PS_META_KMALLOC_TRACKING, r->tfs ? "tracefs" : r->no_kfunc ? "pointer-map" :
		     "kmem-cache-kfunc");
#undef META
#undef META_I
	if (!e)
		e = ps_trace_set_meta(r->t, PS_META_SPARSE_SERIES, "1");
	if (!e)
		e = write_slab_groups(r);
	if (!e && !r->lastw_ok && !ps_htab_init(&r->lastw, 112))
		r->lastw_ok = true;
	return e ? trace_fail(r, e) : 0;
}

/*
 * Whether a row of the series kind+name with values (a, b) is to be written: the trace is sparse
 * (meta sparse_series), so only when they changed since the row last written, or in a keyframe
 * (all). Remembers them. On ENOMEM it says yes: a row too many, never one missing.
 */
static bool changed(struct rec *r, char kind, const char *name, int64_t a, int64_t b, bool all)
{
	char key[112] = { kind };
	uintptr_t i;

	if (!r->lastw_ok)
		return true;
	ps_strlcpy(key + 1, name, sizeof(key) - 1);
	i = (uintptr_t)ps_htab_get(&r->lastw, key);
	if (i) {
		if (!all && r->lastv[i - 1].a == a && r->lastv[i - 1].b == b)
			return false;
	} else {
		if (ps_array_reserve((void **)&r->lastv, &r->caplastv, r->nlastv + 1,
				     sizeof(*r->lastv)) ||
		    ps_htab_put(&r->lastw, key, (void *)(uintptr_t)(r->nlastv + 1)))
			return true;
		i = ++r->nlastv;
	}
	r->lastv[i - 1].a = a;
	r->lastv[i - 1].b = b;
	return true;
}

void rec_write_fini(struct rec *r)
{
	if (r->lastw_ok)
		ps_htab_fini(&r->lastw);
	r->lastw_ok = false;
	free(r->lastv);
	r->lastv = NULL;
	r->nlastv = r->caplastv = 0;
}

static int write_sysstat(struct rec *r, bool all)
{
	const struct snap *s = &r->snap;
	int e = 0;

	/* meminfo in full every interval: small, and what a reader of the file asks first */
	for (size_t i = 0; i < s->meminfo.n && !e; i++)
		e = ps_trace_add_sysstat(r->t, s->meminfo.f[i].name, s->meminfo.f[i].value);
	for (size_t i = 0; i < s->slabinfo.n && !e; i++) {
		const struct ps_slabinfo_row *row = &s->slabinfo.row[i];
		struct ps_slabinfo si = {
			.cache = row->cache,
			.active_objs = row->active_objs,
			.num_objs = row->num_objs,
			.objsize = row->objsize,
			.objperslab = row->objperslab,
			.pagesperslab = row->pagesperslab,
		};

		if (changed(r, 'l', row->cache, (int64_t)row->active_objs, (int64_t)row->num_objs,
			    all))
			e = ps_trace_add_slabinfo(r->t, &si);
	}
	return e;
}

/* A counter row when its value changed (or in a keyframe). */
static int counter(struct rec *r, const char *name, int64_t v, bool all)
{
	return changed(r, 'c', name, v, 0, all) ? ps_trace_add_counter(r->t, name, v) : 0;
}

/* Class counters, the probes' counters and corrections, the programs' statistics, our CPU. */
static int write_counters(struct rec *r, bool all)
{
	static const char *const fld[SNAP_CLASS_VALS] = {
		PS_CTR_CLASS_ALLOCS, PS_CTR_CLASS_FREES, PS_CTR_CLASS_ALLOC_BYTES,
		PS_CTR_CLASS_FREE_BYTES, PS_CTR_CLASS_PRE_FREES, PS_CTR_CLASS_PRE_FREE_BYTES };
	const struct snap *s = &r->snap;
	char name[128];
	int e = 0;

	for (size_t i = 0; i < s->ncls_ctr; i++)
		for (int f = 0; f < SNAP_CLASS_VALS && !e; f++) {
			snprintf(name, sizeof(name), PS_CTR_CLASS_FMT, s->cls_ctr[i].name, fld[f]);
			e = counter(r, name, s->cls_ctr[i].val[f], all);
		}
	for (uint32_t i = 0; s->bpf && i < PS_C_MAX && !e; i++)
		if (s->ctr_ok[i] && counter_names[i])
			e = counter(r, counter_names[i], s->ctr[i], all);
	if (s->bpf && !e)
		e = counter(r, PS_CTR_IMPLICIT_FREES, s->implicit_frees, all);
	if (s->bpf && !e)
		e = counter(r, PS_CTR_PREEXISTING_FREES, s->preexisting_frees, all);
	for (size_t i = 0; i < s->nprogs && !e; i++) {
		const struct snap_prog *p = &s->progs[i];

		snprintf(name, sizeof(name), PS_CTR_RECURSION_FMT, p->name);
		e = counter(r, name, (int64_t)p->recursion_misses, all);
		/* Only counted while kernel.bpf_stats_enabled=1 (it costs two clock reads a run). */
		if (!e && p->run_cnt) {
			snprintf(name, sizeof(name), PS_CTR_BPF_RUN_NS_FMT, p->name);
			e = counter(r, name, (int64_t)p->run_ns, all);
			snprintf(name, sizeof(name), PS_CTR_BPF_RUNS_FMT, p->name);
			if (!e)
				e = counter(r, name, (int64_t)p->run_cnt, all);
		}
	}
	if (!e && s->cpu_ok)
		e = counter(r, PS_CTR_RECORDER_CPU_NS, s->cpu_ns, all);
	return e;
}

static int write_stack(struct rec *r, const struct snap_stack *st)
{
	const struct snap_frames *f = &r->snap.frames[st->frames];
	struct ps_frame frames[PS_MAX_STACK_DEPTH];
	char syms[PS_MAX_STACK_DEPTH][160], mods[PS_MAX_STACK_DEPTH][64];
	struct ps_stack out = {};
	char comm[17];

	for (uint32_t i = 0; i < f->n; i++) {
		const struct ps_ksym *k = f->sym[i];

		frames[i] = (struct ps_frame){ .addr = f->ips[i] };
		if (!k)
			continue;
		ps_strlcpy(syms[i], k->name, sizeof(syms[i]));
		frames[i].sym = syms[i];
		frames[i].off = f->ips[i] - k->addr;
		if (k->module) {
			ps_strlcpy(mods[i], k->module, sizeof(mods[i]));
			frames[i].module = mods[i];
		}
	}
	memcpy(comm, st->val.comm, 16);
	comm[16] = 0;
	out.tag_id = st->u->tag.id;
	out.hash = st->hash;
	out.allocs = st->val.allocs;
	out.bytes = st->val.bytes;
	out.live_bytes = st->live_bytes;
	out.comm = comm;
	out.ctx = st->ctx;
	out.nframes = f->n;
	out.frames = frames;
	return ps_trace_put_stack(r->t, &out);
}

int rec_write(struct rec *r, bool final)
{
	const struct snap *s = &r->snap;
	/* keyframes: every series in full now and then, for readers of a part of the trace */
	bool all = final || s->idx % PS_SPARSE_KEYFRAME == 0;
	int e;

	e = ps_trace_begin_interval(r->t, s->idx, s->t_ns, s->wall_ns, s->dur_ns);
	for (size_t i = 0; i < s->nnew_tags && !e; i++)
		e = ps_trace_add_tag(r->t, &s->new_tags[i]->tag);
	for (size_t i = 0; i < s->nsamples && !e; i++)
		e = ps_trace_add_sample(r->t, s->samples[i].u->tag.id, &s->samples[i].s);
	if (!e)
		e = write_sysstat(r, all);
	if (!e)
		e = write_counters(r, all);
	if (!e && s->has_w)
		e = ps_trace_add_workload(r->t, &s->w);
	for (size_t i = 0; s->stacks && i < s->nstk && !e; i++)
		if (s->stk[i].u)
			e = write_stack(r, &s->stk[i]);
	if (!e)
		e = ps_trace_commit_interval(r->t);
	return e ? trace_fail(r, e) : 0;
}
