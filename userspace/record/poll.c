// SPDX-License-Identifier: GPL-2.0
/*
 * Poll: the reads of one interval, into r->snap and nowhere else. The BPF tags, class and
 * counter maps; the stacks (of page keys not seen before and, when the interval stores them,
 * of the sampled stacks); the cache_info of classes not named before; the programs'
 * statistics and the recorder's own CPU time; /proc/meminfo, /proc/slabinfo and the command's
 * workload counters. Nothing is looked up, scaled or written here: resolve.c and write.c do.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "userspace/record/rec.h"
#include "kmem.skel.h"
#include "kmem_empty.skel.h"

/* Reads stack id into snap.frames, once per interval; *idx is its index there. */
static int read_frames(struct rec *r, int32_t id, int32_t *idx)
{
	struct snap *s = &r->snap;
	void *known = ps_htab_get(&s->frames_by_id, &id);
	struct snap_frames *f;

	if (known) {
		*idx = (int32_t)((uintptr_t)known - 1);
		return 0;
	}
	if (SNAP_PUSH(s->frames, s->nframes, s->cap_frames) ||
	    ps_htab_put(&s->frames_by_id, &id, (void *)(uintptr_t)(s->nframes + 1)))
		return -ENOMEM;
	f = &s->frames[s->nframes];
	memset(f, 0, sizeof(*f));
	f->id = id;
	if (id >= 0 && !bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.stacks), &id, f->ips))
		while (f->n < PS_MAX_STACK_DEPTH && f->ips[f->n])
			f->n++;
	*idx = (int32_t)s->nframes++;
	return 0;
}

/* Reads the cache_info of a class resolve.c cannot name yet, once per interval. */
static int read_cache_info(struct rec *r, uint64_t cls)
{
	struct snap *s = &r->snap;
	struct snap_cache *c;

	if (rec_class_known(r, cls) || ps_htab_get(&s->cache_by_cls, &cls))
		return 0;
	if (SNAP_PUSH(s->caches, s->ncaches, s->cap_caches) ||
	    ps_htab_put(&s->cache_by_cls, &cls, (void *)(uintptr_t)(s->ncaches + 1)))
		return -ENOMEM;
	c = &s->caches[s->ncaches++];
	c->cls = cls;
	c->ok = !bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.cache_info), &cls, &c->ci);
	c->ci.name[sizeof(c->ci.name) - 1] = 0;
	return 0;
}

/*
 * Steps through a BPF hash map: the key after *key (the first when *started is false) into key;
 * false at the end. Keys are at most 32 bytes (ps_stack_key).
 */
static bool map_next(int fd, void *key, size_t size, bool *started)
{
	unsigned char next[32];

	if (size > sizeof(next) || bpf_map_get_next_key(fd, *started ? key : NULL, next))
		return false;
	memcpy(key, next, size);
	*started = true;
	return true;
}

static void tag_sum(struct ps_tag_val *sum, const struct ps_tag_val *vals, int ncpus)
{
	memset(sum, 0, sizeof(*sum));
	for (int c = 0; c < ncpus; c++) {
		sum->allocs += vals[c].allocs;
		sum->frees += vals[c].frees;
		sum->alloc_bytes += vals[c].alloc_bytes;
		sum->free_bytes += vals[c].free_bytes;
		sum->implicit_frees += vals[c].implicit_frees;
	}
}

static int poll_tags(struct rec *r)
{
	struct snap *s = &r->snap;
	int fd = bpf_map__fd(r->skel->maps.tags);
	struct ps_tag_key key;
	bool started = false;
	int e = 0;

	while (!e && map_next(fd, &key, sizeof(key), &started)) {
		struct snap_tag *t;

		if (bpf_map_lookup_elem(fd, &key, r->valbuf))
			continue;
		if (SNAP_PUSH(s->tags, s->ntags, s->cap_tags))
			return -ENOMEM;
		t = &s->tags[s->ntags++];
		t->key = key;
		t->frames = -1;
		tag_sum(&t->sum, r->valbuf, r->ncpus);
		if (rec_tag_known(r, &key))
			continue;
		/* What resolve.c needs to make the key's trace tag. */
		if (key.kind == PS_K_PAGE) {
			if (key.site != PS_SITE_NOSTACK)
				e = read_frames(r, (int32_t)(key.site - 1), &t->frames);
		} else if (key.kind != PS_K_PERCPU && key.kind != PS_K_KMALLOC_LARGE) {
			e = read_cache_info(r, key.cls);
		}
	}
	return e;
}

static int add_class(struct rec *r, uint64_t cls, const struct ps_class_val *v)
{
	struct snap *s = &r->snap;

	if (SNAP_PUSH(s->classes, s->nclasses, s->cap_classes))
		return -ENOMEM;
	s->classes[s->nclasses].cls = cls;
	s->classes[s->nclasses++].v = *v;
	return read_cache_info(r, cls);
}

/* A word of a mapped array that the programs write meanwhile, read whole. */
#define mapped_word(w)	__atomic_load_n((w), __ATOMIC_RELAXED)

/*
 * The exact class counters: each CPU's slots first (the mapped array, read while the programs
 * write it: word by word, each value as it was at some moment of the read; a slot's class never
 * changes once set), then the overflow map summed over CPUs.
 */
static int poll_classes(struct rec *r)
{
	int fd = bpf_map__fd(r->skel->maps.classes);
	size_t nslots = (size_t)r->cpu_ids * r->o->map_class_slots;
	struct ps_class_val *vals = r->valbuf;
	bool started = false;
	uint64_t key;
	int e = 0;

	for (size_t i = 0; i < nslots && !e; i++) {
		const struct ps_class_slot *sl = &r->slot_map[i];
		uint64_t cls = mapped_word(&sl->cls);
		struct ps_class_val v;

		if (!cls)
			continue;
		v.allocs = mapped_word(&sl->v.allocs);
		v.frees = mapped_word(&sl->v.frees);
		v.alloc_bytes = mapped_word(&sl->v.alloc_bytes);
		v.free_bytes = mapped_word(&sl->v.free_bytes);
		v.s_pre_frees = mapped_word(&sl->v.s_pre_frees);
		v.s_pre_free_bytes = mapped_word(&sl->v.s_pre_free_bytes);
		e = add_class(r, cls, &v);
	}
	while (!e && map_next(fd, &key, sizeof(key), &started)) {
		struct ps_class_val sum = {};

		if (bpf_map_lookup_elem(fd, &key, vals))
			continue;
		for (int c = 0; c < r->ncpus; c++)
			snap_class_add(&sum, &vals[c]);
		e = add_class(r, key, &sum);
	}
	return e;
}

static void poll_counters(struct rec *r)
{
	struct snap *s = &r->snap;

	for (uint32_t i = 0; i < PS_C_MAX; i++) {
		s->ctr[i] = 0;
		for (int c = 0; c < r->cpu_ids; c++)
			s->ctr[i] += mapped_word(&r->ctr_map[(size_t)c * PS_C_STRIDE + i]);
		s->ctr_ok[i] = true;
	}
}

static int poll_stacks(struct rec *r)
{
	struct snap *s = &r->snap;
	int fd = bpf_map__fd(r->skel->maps.stack_counts);
	struct ps_stack_key key;
	bool started = false;
	int e = 0;

	while (!e && map_next(fd, &key, sizeof(key), &started)) {
		struct snap_stack *st;

		if (SNAP_PUSH(s->stk, s->nstk, s->cap_stk))
			return -ENOMEM;
		st = &s->stk[s->nstk];
		if (bpf_map_lookup_elem(fd, &key, &st->val))
			continue;
		st->key = key;
		st->u = NULL;
		s->nstk++;
		e = read_frames(r, key.stackid, &st->frames);
	}
	return e;
}

/*
 * Per program: recursion misses (events lost to re-entry on a CPU) and, while
 * kernel.bpf_stats_enabled=1, run count and run time; then the recorder's own CPU time. Also
 * for the empty benchmark probes, whose run time is the floor the recorder's is compared with.
 */
static int poll_progs(struct rec *r)
{
	struct snap *s = &r->snap;
	struct bpf_object *obj = r->skel ? r->skel->obj : r->empty ? r->empty->obj : NULL;
	struct rusage ru;

	for (struct bpf_program *p = obj ? bpf_object__next_program(obj, NULL) : NULL; p;
	     p = bpf_object__next_program(obj, p)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_program__fd(p) < 0 || bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
			continue;
		if (SNAP_PUSH(s->progs, s->nprogs, s->cap_progs))
			return -ENOMEM;
		s->progs[s->nprogs++] = (struct snap_prog){
			.name = bpf_program__name(p),
			.recursion_misses = info.recursion_misses,
			.run_ns = info.run_time_ns,	/* run_* only while bpf_stats_enabled=1 */
			.run_cnt = info.run_cnt,
		};
	}
	/* The recorder's own CPU time (user + system), so a trace says what recording cost. */
	if (!getrusage(RUSAGE_SELF, &ru)) {
		s->cpu_ns = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
			    ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
		s->cpu_ok = true;
	}
	return 0;
}

int rec_poll(struct rec *r, uint32_t idx, uint64_t t_ns, uint64_t dur_ns, bool stacks)
{
	struct snap *s = &r->snap;
	int e = 0;

	snap_reset(s);
	s->idx = idx;
	s->t_ns = t_ns;
	s->dur_ns = dur_ns;
	/* Before the reads: an interval that began after an event has the event in its maps. */
	/* a capture has no wall clock: its intervals' is their time since its start */
	s->wall_ns = r->replay ? t_ns : rec_now_ns(CLOCK_REALTIME);
	s->bpf = r->skel || r->tfs;
	s->stacks = r->skel && stacks;
	if (r->tfs) {
		e = rec_tracefs_poll(r);
		if (e)
			return e;
	} else if (s->bpf) {
		e = poll_tags(r);
		if (!e)
			e = poll_classes(r);
		if (!e)
			poll_counters(r);
		if (!e && s->stacks)
			e = poll_stacks(r);
	}
	if (!e && !r->replay)
		e = poll_progs(r);
	if (e)
		return rec_fail(r, e, "memory", NULL);
	/* a capture's machine is not this one: its /proc is not here */
	if (r->replay)
		return 0;
	e = ps_meminfo_read(&s->meminfo, "/proc/meminfo", r->err, r->errlen);
	if (!e)
		e = ps_sockstat_read(&s->meminfo, "/proc/net/sockstat", sysconf(_SC_PAGESIZE), r->err,
				     r->errlen);
	if (!e)
		e = ps_slabinfo_read(&s->slabinfo, "/proc/slabinfo", r->err, r->errlen);
	if (e)
		return e;
	if (r->wl) {
		memcpy(&s->wl, r->wl, sizeof(s->wl));
		__sync_synchronize();
		s->wl_ok = true;
	}
	return 0;
}
