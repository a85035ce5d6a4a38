// SPDX-License-Identifier: GPL-2.0
/*
 * The recorder's BPF side: what this kernel offers (BTF: the kmem_cache kfunc, the tracepoints,
 * the gfp bits, KASAN), the probes' read-only settings and map sizes, loading and attaching
 * bpf/kmem.bpf.c, or the empty probes of the benchmark floor.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "userspace/record/rec.h"
#include "userspace/lib/util/util.h"
#include "kmem.skel.h"
#include "kmem_empty.skel.h"

/* Tracepoints and their programs; a tracepoint missing from this kernel's BTF disables one. */
struct prog_desc {
	const char *tp;
	bool required;
};
static const struct prog_desc progs[] = {
	{ "kmem_cache_alloc", true }, { "kmem_cache_free", true }, { "kmalloc", true },
	{ "kfree", true }, { "mm_page_alloc", false }, { "mm_page_free", false },
	{ "percpu_alloc_percpu", false }, { "percpu_free_percpu", false },
};
_Static_assert(ARRAY_SIZE(progs) == REC_NPROGS, "REC_NPROGS is the number of programs");

void rec_bpf_disabled(const struct rec *r, char *buf, size_t len)
{
	buf[0] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++)
		if (r->disabled[i])
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "," : "",
				 progs[i].tp);
}

static bool btf_has(const struct btf *btf, const char *name, int kind)
{
	return btf && btf__find_by_name_kind(btf, name, kind) >= 0;
}

/*
 * The gfp flags kmalloc_type() looks at (__GFP_DMA, __GFP_RECLAIMABLE, __GFP_ACCOUNT, in that
 * order): 1 << their ___GFP_*_BIT enumerators, an anonymous enum since 6.10 that CO-RE cannot
 * name, found in one pass over the BTF types; the old defines' values where absent.
 */
static void gfp_flags(const struct btf *btf, uint32_t flags[3])
{
	static const char *const names[3] = { "___GFP_DMA_BIT", "___GFP_RECLAIMABLE_BIT",
					       "___GFP_ACCOUNT_BIT" };
	uint32_t n = btf__type_cnt(btf);

	flags[0] = 0x01;
	flags[1] = 0x10;
	flags[2] = 0x400000;
	for (uint32_t id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_enum *e;

		if (!btf_is_enum(t))
			continue;
		e = btf_enum(t);
		for (uint16_t i = 0; i < btf_vlen(t); i++) {
			const char *nm = btf__name_by_offset(btf, e[i].name_off);

			for (int k = 0; k < 3; k++)
				if (!strcmp(nm, names[k]) && e[i].val >= 0 && e[i].val < 32)
					flags[k] = 1u << e[i].val;
		}
	}
}

static int cgroup_id(const char *path, uint64_t *id)
{
	struct stat st;
	char full[4096];

	if (path[0] != '/' || strncmp(path, "/sys/fs/cgroup", 14))
		snprintf(full, sizeof(full), "/sys/fs/cgroup/%s", path[0] == '/' ? path + 1 : path);
	else
		ps_strlcpy(full, path, sizeof(full));
	if (stat(full, &st))
		return -errno;
	*id = st.st_ino;
	return 0;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("POOLSCOPE_BPF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	if (level == LIBBPF_DEBUG && getenv("POOLSCOPE_BPF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/*
 * THREAD_SIZE, which the probes need to tell a frame on the task stack from one on the IRQ
 * stack (bpf/kmem.bpf.c get_ctx). It is not in BTF: x86-64 and arm64 use 16 KiB (with 4 KiB
 * pages; at least one page with larger ones), doubled by KASAN, whose presence BTF does show.
 */
static uint32_t task_stack_size(const struct btf *btf)
{
	uint32_t sz = 16384, page = (uint32_t)sysconf(_SC_PAGESIZE);

	if (page > sz)
		sz = page;
	if (btf_has(btf, "kasan_report", BTF_KIND_FUNC))
		sz *= 2;
	return sz;
}

int rec_bpf_load_empty(struct rec *r)
{
	int e;

	r->empty = kmem_empty_bpf__open_and_load();
	if (!r->empty)
		return rec_fail(r, -errno, "loading the empty probes", NULL);
	e = kmem_empty_bpf__attach(r->empty);
	if (e)
		return rec_fail(r, e, "attaching the empty probes", NULL);
	return 0;
}

/* The probes' read-only settings: sampling, kernel layout, filters. */
static int set_rodata(struct rec *r, const struct btf *btf)
{
	const struct ps_record_opts *o = r->o;
	uint32_t gfp[3];
	int e;

	r->skel->rodata->site_bits = __builtin_ctz(o->site_sample);
	r->skel->rodata->stack_sample = o->stack_sample;
	r->skel->rodata->page_shift = __builtin_ctzl(sysconf(_SC_PAGESIZE));
	r->skel->rodata->thread_size = task_stack_size(btf);
	r->skel->rodata->no_kfunc = r->no_kfunc;
	r->skel->rodata->self_tgid = (uint32_t)getpid();
	r->skel->rodata->kmalloc_max = 2 * (uint32_t)sysconf(_SC_PAGESIZE);
	gfp_flags(btf, gfp);
	r->skel->rodata->gfp_dma = gfp[0];
	r->skel->rodata->gfp_reclaimable = gfp[1];
	r->skel->rodata->gfp_account = gfp[2];
	if (rec_filtered(o)) {
		r->skel->rodata->filter_on = 1;
		if (o->comm) {
			r->skel->rodata->filter_comm_on = 1;
			strncpy((char *)r->skel->rodata->filter_comm, o->comm, 15);
		}
		r->skel->rodata->filter_tgid = o->pid;
		if (o->cgroup) {
			uint64_t id = 0;

			e = cgroup_id(o->cgroup, &id);
			if (e)
				return rec_fail(r, e, "--cgroup", o->cgroup);
			r->skel->rodata->filter_cgid = id;
		}
	}
	return 0;
}

/* The pointer table holds buckets of PS_PTR_WAYS slots, a power of two of them. */
static uint32_t ptr_slots(uint32_t want)
{
	uint32_t n = PS_PTR_WAYS;

	while (n < want && n < (1u << 30))
		n <<= 1;
	return n;
}

/*
 * bpf_get_smp_processor_id() may return any id up to the highest possible one, and the possible
 * mask may have gaps (libbpf_num_possible_cpus() counts its bits): the arrays with a region per
 * CPU (bpf/kmem.bpf.c) have one for every id.
 */
int rec_bpf_cpu_ids(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	char buf[4096];
	unsigned n;
	int e;

	if (!f)
		return -errno;
	e = fgets(buf, sizeof(buf), f) ? ps_parse_cpu_list_end(buf, &n) : -EIO;
	fclose(f);
	return e ? e : (int)n;
}

static void set_map_sizes(struct rec *r)
{
	const struct ps_record_opts *o = r->o;
	uint32_t slots = (uint32_t)r->cpu_ids << __builtin_ctz(o->map_class_slots);

	bpf_map__set_max_entries(r->skel->maps.tags, o->map_tags);
	bpf_map__set_max_entries(r->skel->maps.ptrs, r->map_ptrs / PS_PTR_WAYS);
	r->skel->rodata->ptr_bucket_bits = __builtin_ctz(r->map_ptrs / PS_PTR_WAYS);
	bpf_map__set_max_entries(r->skel->maps.stacks, o->map_stacks);
	bpf_map__set_max_entries(r->skel->maps.stack_counts, o->map_stack_counts);
	bpf_map__set_max_entries(r->skel->maps.classes, o->map_classes);
	bpf_map__set_max_entries(r->skel->maps.class_slots, slots);
	r->skel->rodata->class_slot_bits = __builtin_ctz(o->map_class_slots);
	bpf_map__set_max_entries(r->skel->maps.counters, (uint32_t)r->cpu_ids * PS_C_STRIDE);
	bpf_map__set_max_entries(r->skel->maps.cache_info, o->map_classes);
}

/* An mmapable array's values, read-only; its length into *len. */
static int map_array(struct rec *r, const struct bpf_map *m, const void **p, size_t *len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t n = (size_t)bpf_map__max_entries(m) * bpf_map__value_size(m);
	void *v;

	n = (n + page - 1) / page * page;
	v = mmap(NULL, n, PROT_READ, MAP_SHARED, bpf_map__fd(m), 0);
	if (v == MAP_FAILED)
		return rec_fail(r, -errno, "mapping the BPF map", bpf_map__name(m));
	*p = v;
	*len = n;
	return 0;
}

void rec_bpf_close(struct rec *r)
{
	if (r->ctr_map)
		munmap((void *)r->ctr_map, r->ctr_map_len);
	if (r->slot_map)
		munmap((void *)r->slot_map, r->slot_map_len);
	r->ctr_map = NULL;
	r->slot_map = NULL;
	kmem_bpf__destroy(r->skel);
	r->skel = NULL;
}

/* Turns off the programs of optional tracepoints this kernel lacks; -ENOENT for a required one. */
static int check_tracepoints(struct rec *r, const struct btf *btf)
{
	char tpname[96];

	for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
		snprintf(tpname, sizeof(tpname), "btf_trace_%s", progs[i].tp);
		if (btf_has(btf, tpname, BTF_KIND_TYPEDEF))
			continue;
		if (progs[i].required) {
			snprintf(r->err, r->errlen, "tracepoint kmem:%s missing from this kernel",
				 progs[i].tp);
			return -ENOENT;
		}
		r->disabled[i] = true;
		bpf_program__set_autoload(bpf_object__find_program_by_name(r->skel->obj,
									 progs[i].tp), false);
		fprintf(stderr, "poolscope record: warning: tracepoint %s missing, its program is "
			"disabled\n", progs[i].tp);
	}
	return 0;
}

/* The skeleton's slot for a program's link: kmem_bpf__destroy() destroys what it holds. */
static struct bpf_link **link_slot(struct rec *r, const struct bpf_program *p)
{
	const struct bpf_object_skeleton *sk = r->skel->skeleton;

	for (int i = 0; i < sk->prog_cnt; i++)
		if (*sk->progs[i].prog == p)
			return sk->progs[i].link;
	return NULL;
}

/* Attaches each program on its own: one that fails is disabled, not the recording. */
static void attach(struct rec *r)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, r->skel->obj) {
		struct bpf_link *l, **slot;
		int e;

		if (!bpf_program__autoload(p))
			continue;
		l = bpf_program__attach(p);
		if (!l) {
			e = -errno;
			fprintf(stderr, "poolscope record: warning: cannot attach %s: %s; disabled\n",
				bpf_program__name(p), ps_strerror(e));
			for (size_t i = 0; i < ARRAY_SIZE(progs); i++)
				if (!strcmp(progs[i].tp, bpf_program__name(p)))
					r->disabled[i] = true;
			continue;
		}
		slot = link_slot(r, p);
		if (slot)
			*slot = l;
	}
}

int rec_bpf_load(struct rec *r)
{
	const struct ps_record_opts *o = r->o;
	struct btf *btf;
	int e;

	libbpf_set_print(libbpf_quiet);
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return rec_fail(r, -PS_ERR__NOBTF, "/sys/kernel/btf/vmlinux", NULL);
	r->no_kfunc = o->no_kfunc || !btf_has(btf, "bpf_get_kmem_cache", BTF_KIND_FUNC);
	if (r->no_kfunc && !o->no_kfunc)
		fprintf(stderr, "poolscope record: warning: this kernel has no bpf_get_kmem_cache() "
			"kfunc (6.13+): kmalloc classes are keyed by size and every kmalloc object is "
			"tracked in the pointer map (exact, costlier)\n");
	r->map_ptrs = ptr_slots(o->map_ptrs ? o->map_ptrs : r->no_kfunc ? 2097152 : 524288);
	r->skel = kmem_bpf__open();
	if (!r->skel) {
		btf__free(btf);
		return rec_fail(r, -errno, "opening the BPF object", NULL);
	}
	e = set_rodata(r, btf);
	if (!e) {
		set_map_sizes(r);
		e = check_tracepoints(r, btf);
	}
	btf__free(btf);
	if (e)
		return e;
	e = kmem_bpf__load(r->skel);
	if (e)
		return rec_fail(r, e, "loading the BPF programs (POOLSCOPE_BPF_DEBUG=1 shows the verifier log)", NULL);
	e = map_array(r, r->skel->maps.counters, (const void **)&r->ctr_map, &r->ctr_map_len);
	e = e ?: map_array(r, r->skel->maps.class_slots, (const void **)&r->slot_map,
			   &r->slot_map_len);
	if (e)
		return e;
	attach(r);
	return 0;
}
