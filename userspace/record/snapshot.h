/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One interval of the recorder in memory. poll.c fills the first part from the BPF maps and
 * /proc (raw values, nothing looked up); resolve.c and stacks.c fill the second part from the
 * first (trace tags, scaled samples, named class counters, symbols); write.c stores it in the
 * trace in one pass. The arrays are kept from one interval to the next and only refilled.
 */
#ifndef PS_RECORD_SNAPSHOT_H
#define PS_RECORD_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/poolscope_abi.h"
#include "userspace/lib/kmem/htab.h"
#include "userspace/lib/kmem/kallsyms.h"
#include "userspace/lib/kmem/procstat.h"
#include "userspace/lib/trace/trace.h"
#include "userspace/lib/workload/workload_shm.h"

struct utag;

/* One key of the BPF tags map, its values summed over the CPUs (cumulative since the start). */
struct snap_tag {
	struct ps_tag_key key;
	struct ps_tag_val sum;
	/* A page key not seen before: its stack (index in snap.frames), -1 when none was read. */
	int32_t frames;
};

/* One class of the exact counters: a per-CPU class slot, or a "classes" map key summed over CPUs. */
struct snap_class {
	uint64_t cls;
	struct ps_class_val v;
};

/* The cache_info entry of a class not named before; ok false when the map has none yet. */
struct snap_cache {
	uint64_t cls;
	struct ps_cache_info ci;
	bool ok;
};

/* One stack read from the BPF stack map; each stack id is read once per interval. */
struct snap_frames {
	int32_t id;
	uint32_t n;		/* 0: unreadable */
	uint64_t ips[PS_MAX_STACK_DEPTH];
	/* resolve: the symbol of each frame, NULL when unknown or too far from it */
	const struct ps_ksym *sym[PS_MAX_STACK_DEPTH];
	bool resolved;
};

/* One entry of the stack_counts map (a sampled stack of a tag). */
struct snap_stack {
	struct ps_stack_key key;
	struct ps_stack_val val;
	int32_t frames;		/* index in snap.frames */
	/* resolve: its trace tag (NULL: skipped), hash, scaled live bytes, context */
	const struct utag *u;
	uint64_t hash;
	int64_t live_bytes;
	const char *ctx;
};

/* One BPF program's statistics (bpf_prog_info). */
struct snap_prog {
	const char *name;
	uint64_t recursion_misses;
	uint64_t run_ns;
	uint64_t run_cnt;
};

/* Six counters of one class name (duplicate cache names summed), scaled as stored. */
#define SNAP_CLASS_VALS 6
struct snap_class_ctr {
	char name[64];
	struct ps_class_val v;
	int64_t val[SNAP_CLASS_VALS];
};

struct snap_sample {
	const struct utag *u;
	struct ps_sample s;
};

struct snap {
	/* --- poll ------------------------------------------------------------------------- */
	uint32_t idx;
	uint64_t t_ns, dur_ns;
	uint64_t wall_ns;		/* taken before the maps are read */
	bool bpf;			/* the maps were read (not the empty probes) */
	bool stacks;			/* this interval stores the sampled stacks */

	struct snap_tag *tags;
	size_t ntags, cap_tags;
	struct snap_class *classes;
	size_t nclasses, cap_classes;
	struct snap_cache *caches;
	size_t ncaches, cap_caches;
	struct ps_htab cache_by_cls;	/* cls -> index + 1 in caches */
	uint64_t ctr[PS_C_MAX];
	bool ctr_ok[PS_C_MAX];
	struct snap_stack *stk;
	size_t nstk, cap_stk;
	struct snap_frames *frames;
	size_t nframes, cap_frames;
	struct ps_htab frames_by_id;	/* stack id -> index + 1 in frames */
	struct snap_prog *progs;
	size_t nprogs, cap_progs;
	int64_t cpu_ns;			/* the recorder's own CPU time */
	bool cpu_ok;
	struct ps_meminfo_tab meminfo;
	struct ps_slabinfo_tab slabinfo;
	struct ps_workload_shm wl;
	bool wl_ok;			/* a command runs: wl is a copy of its shared memory */

	/* --- resolve ---------------------------------------------------------------------- */
	struct utag **new_tags;		/* trace tags first seen in this interval */
	size_t nnew_tags, cap_new_tags;
	struct snap_sample *samples;
	size_t nsamples, cap_samples;
	struct snap_class_ctr *cls_ctr;
	size_t ncls_ctr, cap_cls_ctr;
	int64_t implicit_frees, preexisting_frees;	/* scaled estimates */
	struct ps_workload w;
	bool has_w;
};

static inline void snap_class_add(struct ps_class_val *d, const struct ps_class_val *v)
{
	d->allocs += v->allocs;
	d->frees += v->frees;
	d->alloc_bytes += v->alloc_bytes;
	d->free_bytes += v->free_bytes;
	d->s_pre_frees += v->s_pre_frees;
	d->s_pre_free_bytes += v->s_pre_free_bytes;
}

int snap_init(struct snap *s);
/* Empties every list for the next interval (keeps the memory). */
void snap_reset(struct snap *s);
void snap_free(struct snap *s);
/* Makes room for one more element at the end of a list; 0 or -ENOMEM. */
#define SNAP_PUSH(arr, n, cap) ps_array_reserve((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr)))

#endif
