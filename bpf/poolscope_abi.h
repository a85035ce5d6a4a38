/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared layout between bpf/kmem.bpf.c and the recorder (userspace/record). Both sides compile
 * this header (clang -target bpf with vmlinux.h, cc with <linux/types.h>), so every field is a
 * fixed-width __u8..__u64 with explicit padding and every struct size is pinned by a static
 * assert: a layout change breaks the build instead of silently garbling counters.
 *
 * The data model (docs/record.md explains the estimator):
 *  - class: one exact counter set per slab cache (key = struct kmem_cache pointer), per page
 *    order and for the two untyped classes (large kmalloc, percpu). Every event updates its
 *    class, so per-cache totals are exact and compare 1:1 with /proc/slabinfo.
 *  - tag: (kind, cache/order, call site or stack id, context). Only address-hash-sampled
 *    objects (1 in site_sample) update tags and the pointer map; userspace scales by the rate.
 *  - ptr: sampled live object -> (tag, size, stack id), so a free finds its tag.
 */
#ifndef PS_POOLSCOPE_ABI_H
#define PS_POOLSCOPE_ABI_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* Tag kinds (ps_tag_key.kind). */
#define PS_K_SLAB	1	/* kmem_cache_alloc on a named cache                         */
#define PS_K_KMALLOC	2	/* kmalloc from a kmalloc-N cache                             */
#define PS_K_KMALLOC_LARGE 3	/* kmalloc above the largest kmalloc cache: pages        */
#define PS_K_PAGE	4	/* page allocator; site is a stack id (resolved in userspace) */
#define PS_K_PERCPU	5	/* percpu allocator                                           */

/* Contexts (ps_tag_key.ctx). */
#define PS_CTX_TASK	0
#define PS_CTX_SOFTIRQ	1	/* in ksoftirqd */
#define PS_CTX_HARDIRQ	2
#define PS_CTX_UNKNOWN	3
#define PS_CTX_IRQ	4	/* on the IRQ stack: hardirq, or softirq run from irq exit / bh enable */

/* Class keys that are not kmem_cache pointers (kernel pointers are never this small). */
#define PS_CLASS_KMALLOC_LARGE	1ull
#define PS_CLASS_PERCPU		2ull
#define PS_CLASS_UNKNOWN_SLAB	3ull	/* kfree of a pointer bpf_get_kmem_cache() does not know */
#define PS_CLASS_PAGE_BASE	16ull	/* + order, 16..26 */
#define PS_MAX_ORDER		11
/*
 * Pages are sampled by bytes, not by count: an order-n page is sampled 2^n times as often as an
 * order-0 page (1 in 2^(site_bits - n), every one from order site_bits up), so that every 4 KiB
 * has the same chance whatever the order. Few large pages (skb page fragments, order 3) would
 * otherwise stand for 16 x 32 KiB each, and a slow leak of them would be a handful of steps.
 */
#define PS_PAGE_SAMPLE_BITS(site_bits, order) \
	((site_bits) > (order) ? (site_bits) - (order) : 0)
/*
 * kmalloc classes by size, for kernels without bpf_get_kmem_cache() (< 6.13): base +
 * (type << 14) + bytes_alloc, type as the kernel's kmalloc_type() picks the cache.
 */
#define PS_CLASS_KMSIZE_BASE	0x1000ull
#define PS_CLASS_KMSIZE_END	(PS_CLASS_KMSIZE_BASE + (4ull << 14))
#define PS_KMSIZE_CLASS(type, bytes) \
	(PS_CLASS_KMSIZE_BASE + ((__u64)(type) << 14) + ((__u64)(bytes) & 0x3fff))
#define PS_KMSIZE_TYPE(cls)	((unsigned)((((cls) - PS_CLASS_KMSIZE_BASE) >> 14) & 3))
#define PS_KMSIZE_BYTES(cls)	(((cls) - PS_CLASS_KMSIZE_BASE) & 0x3fff)
#define PS_KMT_NORMAL		0	/* kmalloc-N    */
#define PS_KMT_CGROUP		1	/* kmalloc-cg-N (__GFP_ACCOUNT) */
#define PS_KMT_RECLAIM		2	/* kmalloc-rcl-N (__GFP_RECLAIMABLE) */
#define PS_KMT_DMA		3	/* dma-kmalloc-N (__GFP_DMA) */

/*
 * ps_tag_key.mt: mm_page_alloc's migratetype, the mobility the gfp flags asked for. Kernel
 * allocations are unmovable (or reclaimable when the caller can give them back under pressure);
 * process and page-cache memory is movable. Values as the kernel's enum migratetype, which has
 * kept these three first since 2.6.24.
 */
#define PS_MT_UNMOVABLE		0
#define PS_MT_MOVABLE		1
#define PS_MT_RECLAIMABLE	2

/* ps_tag_key.site for pages when no stack id could be taken (stack error). */
#define PS_SITE_NOSTACK		0ull

/*
 * Counter slots (array "counters": PS_C_STRIDE of them per possible CPU id, CPU c's at
 * c * PS_C_STRIDE); their trace names are in userspace/record/write.c.
 */
enum ps_counter {
	PS_C_EV_KMALLOC,
	PS_C_EV_KFREE,
	PS_C_EV_CACHE_ALLOC,
	PS_C_EV_CACHE_FREE,
	PS_C_EV_PAGE_ALLOC,
	PS_C_EV_PAGE_FREE,
	PS_C_EV_PERCPU_ALLOC,
	PS_C_EV_PERCPU_FREE,
	PS_C_KFREE_NULL,
	PS_C_FILTERED,		/* allocs skipped by --comm/--pid/--cgroup                */
	PS_C_SAMPLED_ALLOCS,
	PS_C_SAMPLED_FREES,
	PS_C_IMPLICIT_FREES,	/* sampled alloc landed on a still-tracked address          */
	PS_C_PREEXISTING_FREES,	/* sampled free of an address not tracked (raw count)     */
	PS_C_DROP_CLASS_FULL,
	PS_C_DROP_TAG_FULL,
	PS_C_DROP_PTR_FULL,
	PS_C_DROP_STACK_COLLISION,	/* bpf_get_stackid -EEXIST (bucket holds another stack) */
	PS_C_DROP_STACK_ERR,		/* any other bpf_get_stackid error                   */
	PS_C_DROP_STACKCNT_FULL,
	PS_C_DROP_CACHEINFO_FULL,
	PS_C_NO_KMEM_CACHE,	/* kfree of a pointer with no slab cache and not tracked   */
	PS_C_STACKS_TAKEN,
	PS_C_SELF_SKIPPED,	/* sampled allocations by the recorder itself, not tagged      */
	PS_C_DROP_RING_OVERRUN,	/* tracefs backend: events the ring buffers lost (userspace) */
	PS_C_MAX
};
/* One CPU's counters fill whole cache lines, so two CPUs never write the same line. */
#define PS_C_STRIDE	((PS_C_MAX + 7) & ~7)

struct ps_class_val {
	__u64 allocs;
	__u64 frees;
	__u64 alloc_bytes;
	__u64 free_bytes;
	__u64 s_pre_frees;	/* sampled frees of objects allocated before the start */
	__u64 s_pre_free_bytes;
};
_Static_assert(sizeof(struct ps_class_val) == 48, "ps_class_val layout");

/*
 * Per-CPU class slots, open addressing: a class lives in the first of the PS_CLASS_PROBES slots
 * from hash(cls) >> (64 - PS_CLASS_SLOT_BITS) that it finds free or holding it on that CPU; a
 * class that finds them all taken falls back to the "classes" hash map. Userspace sums both,
 * per CPU, by cls. The slots are one array, a table of 2^class_slot_bits per possible CPU id
 * (CPU c's from c << class_slot_bits).
 */
#define PS_CLASS_SLOT_BITS 10
#define PS_CLASS_PROBES 4
struct ps_class_slot {
	__u64 cls;		/* 0: free */
	struct ps_class_val v;
};
_Static_assert(sizeof(struct ps_class_slot) == 56, "ps_class_slot layout");

struct ps_tag_key {
	__u64 cls;		/* class: kmem_cache pointer, PS_CLASS_* */
	__u64 site;		/* call site; for pages a stack id + 1 (0: none)  */
	__u8 kind;		/* PS_K_* */
	__u8 ctx;		/* PS_CTX_* */
	__u8 mt;		/* pages: the migratetype the allocation asked for (PS_MT_*) */
	__u8 pad[5];
};
_Static_assert(sizeof(struct ps_tag_key) == 24, "ps_tag_key layout");

/* Sampled counts; userspace multiplies by the sample rate when the tag is sampled. */
struct ps_tag_val {
	__u64 allocs;
	__u64 frees;
	__u64 alloc_bytes;
	__u64 free_bytes;
	__u64 implicit_frees;
};
_Static_assert(sizeof(struct ps_tag_val) == 40, "ps_tag_val layout");

/* The recorder's own object: in the map so that its free is known, charged to no tag. */
#define PS_PV_SELF	1u

struct ps_ptr_val {
	struct ps_tag_key tag;
	__u64 bytes;
	__s32 stackid;		/* -1: none */
	__u32 flags;		/* PS_PV_* */
};
_Static_assert(sizeof(struct ps_ptr_val) == 40, "ps_ptr_val layout");

/* A bucket of the pointer table: PS_PTR_WAYS slots; address 0 is an empty slot. */
#define PS_PTR_WAYS 8
struct ps_ptr_bucket {
	__u64 addr[PS_PTR_WAYS];
	struct ps_ptr_val val[PS_PTR_WAYS];
};
_Static_assert(sizeof(struct ps_ptr_bucket) == 384, "ps_ptr_bucket layout");

struct ps_stack_key {
	struct ps_tag_key tag;
	__s32 stackid;
	__u32 pad;
};
_Static_assert(sizeof(struct ps_stack_key) == 32, "ps_stack_key layout");

struct ps_stack_val {
	__u64 allocs;		/* sampled allocations with this stack */
	__u64 bytes;
	__s64 live_bytes;	/* of them still live */
	__u8 comm[16];		/* comm of the first sample */
	__u8 ctx;
	__u8 pad[7];
};
_Static_assert(sizeof(struct ps_stack_val) == 48, "ps_stack_val layout");

#define PS_CACHE_F_RECLAIM	0x1	/* SLAB_RECLAIM_ACCOUNT: counted in SReclaimable */

/* Written once per new kmem_cache (first event that creates its class). */
struct ps_cache_info {
	__u8 name[40];
	__u32 size;
	__u32 object_size;
	__u32 flags;		/* PS_CACHE_F_* (translated from slab_flags_t in BPF) */
	__u32 pad;
};
_Static_assert(sizeof(struct ps_cache_info) == 56, "ps_cache_info layout");

#define PS_MAX_STACK_DEPTH 32

#endif
