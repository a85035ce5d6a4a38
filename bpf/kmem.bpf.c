// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope record: tp_btf programs on the kmem (and percpu) tracepoints.
 *
 * Cost is the design constraint (this runs on every slab allocation of a busy file server), so
 * the default path per event is one counter and one class slot, in this CPU's part of two arrays:
 *  - every event updates its class (slab cache / page order / large kmalloc / percpu) exactly;
 *    the cache of a kfree'd pointer comes from the bpf_get_kmem_cache() kfunc and
 *    kmem_cache_free names it, so no pointer map is needed for per-cache totals;
 *  - only objects whose address hashes into the sample (1 in 2^site_bits; pages by bytes,
 *    PS_PAGE_SAMPLE_BITS) go through the tag map (call site, context) and the pointer map (to
 *    find the tag at free time); userspace scales those counts. Large kmalloc and percpu
 *    objects are rare and always tracked.
 * Pages have no call site argument: a sampled page takes a stack id and userspace derives the
 * site (first frame outside the page allocator) and whether the page backs a slab.
 * The argument lists are the BTF prototypes of 6.1+ (identical on 6.18; the 6.18 change is in
 * the classic tracepoint record only).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "poolscope_abi.h"

#define EEXIST 17
#define E2BIG 7

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load. */
const volatile __u32 site_bits = 4;		/* sample 1 in 2^site_bits addresses */
const volatile __u32 stack_sample = 64;		/* stack on 1 in N sampled slab allocs; 0 off */
const volatile __u32 page_shift = 12;
const volatile __u32 class_slot_bits = PS_CLASS_SLOT_BITS;	/* slots = 2^bits (map size) */
const volatile __u32 ptr_bucket_bits = 16;	/* pointer buckets = 2^bits (map size) */
const volatile __u32 thread_size = 16384;	/* THREAD_SIZE of this kernel (task stack size) */
/*
 * Kernels before 6.13 have no bpf_get_kmem_cache(): kmalloc classes are then keyed by size and
 * every kmalloc object is tracked in the pointer map so that kfree() finds its class (exact,
 * but a map insert and delete per kmalloc/kfree). The loader sets this; a test can force it.
 */
const volatile __u8 no_kfunc;
const volatile __u32 kmalloc_max = 8192;	/* KMALLOC_MAX_CACHE_SIZE (2 pages) */
/* The gfp bits kmalloc_type() looks at; the loader reads them from BTF (an anonymous enum of
 * ___GFP_*_BIT since 6.10, which CO-RE cannot name), these are the values of the old defines. */
const volatile __u32 gfp_dma = 0x01, gfp_reclaimable = 0x10, gfp_account = 0x400000;
const volatile __u32 self_tgid;		/* the recorder: its own allocations get no tags */
const volatile __u8 filter_on;
const volatile __u8 filter_comm_on;
const volatile __u32 filter_tgid;
const volatile __u64 filter_cgid;
const volatile char filter_comm[16];

/* Weak: unresolved on kernels without it, where no_kfunc keeps the call unreachable. */
extern struct kmem_cache *bpf_get_kmem_cache(__u64 addr) __ksym __weak;

/*
 * The two maps every event touches, counters and class_slots, are plain arrays with one region
 * per possible CPU id, indexed by bpf_get_smp_processor_id() (which the verifier inlines into
 * one per-CPU load on x86-64 6.18; a helper call where it does not), not per-CPU arrays: a
 * per-CPU array's lookup first loads the element's per-CPU pointer from the map and then adds
 * the CPU's offset, one dependent load more on the path of every event. A CPU's counters fill
 * whole cache lines, and so do its class slots from 8 slots up. Userspace reads both through
 * mmap.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, PS_C_STRIDE);	/* resized to CPU ids * PS_C_STRIDE */
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct ps_class_val);
} classes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1 << PS_CLASS_SLOT_BITS);	/* resized to CPU ids << class_slot_bits */
	__type(key, __u32);
	__type(value, struct ps_class_slot);
} class_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct ps_cache_info);
} cache_info SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct ps_tag_key);
	__type(value, struct ps_tag_val);
} tags SEC(".maps");

/*
 * The tracked objects: an array of buckets of PS_PTR_WAYS slots (address, value), each address
 * with two candidate buckets. A hash map would take a bucket lock, a hash of the key and a
 * free-list operation on every sampled allocation and free; here a slot is found by scanning
 * one or two cache lines of addresses and claimed with one compare-and-swap. Events of one
 * address never run concurrently (its free event ends before the allocator can hand it out
 * again), so a claimed slot has a single writer; other CPUs only ever claim empty slots.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 16);		/* resized to 2^ptr_bucket_bits */
	__type(key, __u32);
	__type(value, struct ps_ptr_bucket);
} ptrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 32768);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PS_MAX_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct ps_stack_key);
	__type(value, struct ps_stack_val);
} stack_counts SEC(".maps");

/*
 * BTF-typed pointer arguments (struct page *, struct kmem_cache *) are trusted pointers to the
 * verifier, which forbids arithmetic on them (our hash). Read the raw argument as a number.
 */
static __always_inline __u64 arg_u64(unsigned long long *ctx, int i)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &ctx[i]);
	return v;
}

/*
 * A class key for a kmem_cache. The pointer itself cannot be hashed (a trusted pointer: no
 * arithmetic, and spilling it to read it back as a number is refused), and on 6.18 a char *
 * field (s->name) loads as untrusted memory, not a number. s->random is a plain unsigned long,
 * a per-cache random value (CONFIG_SLAB_FREELIST_HARDENED): one load, unique per kmem_cache
 * (merged aliases share the one kmem_cache). Without that field (CO-RE), the raw pointer
 * argument is read with a probe read, which costs a helper call.
 */
static __always_inline __u64 cache_id(const struct kmem_cache *s, unsigned long long *ctx,
				      int argi)
{
	__u64 v = 0;

	if (bpf_core_field_exists(s->random)) {
		v = s->random;
		if (v >= PS_CLASS_KMSIZE_END)	/* never one of the small synthetic keys */
			return v;
	}
	if (argi >= 0)
		bpf_probe_read_kernel(&v, sizeof(v), &ctx[argi]);
	else
		bpf_probe_read_kernel(&v, sizeof(v), &s->name);
	return v;
}

static __always_inline void count(__u32 idx)
{
	__u32 k = bpf_get_smp_processor_id() * PS_C_STRIDE + idx;
	__u64 *c = bpf_map_lookup_elem(&counters, &k);

	if (c)
		(*c)++;
}

/* Multiplicative hash: the same address always gives the same decision (alloc and free). */
static __always_inline bool addr_sampled_bits(__u64 addr, __u32 bits)
{
	if (!bits)
		return true;
	return ((addr * 0x9E3779B97F4A7C15ull) >> (64 - (bits & 63))) == 0;
}

static __always_inline bool addr_sampled(__u64 addr)
{
	return addr_sampled_bits(addr, site_bits);
}

/* A page's decision at free is the one at allocation: both know the order. */
static __always_inline bool page_sampled(__u64 addr, unsigned int order)
{
	return addr_sampled_bits(addr, PS_PAGE_SAMPLE_BITS(site_bits, order));
}

/*
 * Context of the sampled allocation. The direct way, preempt_count, is a per-CPU variable
 * (__preempt_count / pcpu_hot) that a typed __ksym cannot reach on a kernel without
 * CONFIG_KALLSYMS_ALL (the load fails with "ldimm64 failed to find the address"). The stack
 * tells instead: x86-64 and arm64 run hard interrupts, and softirqs started from irq exit or
 * from local_bh_enable(), on the per-CPU IRQ stack, so a BPF frame outside current's task
 * stack is interrupt context (hardirq or softirq: the IRQ stack does not say which); softirqs
 * deferred to ksoftirqd run on that thread's own stack and are told by its comm. Only the
 * sampled path calls this (one helper call), never the per-event class counting.
 */
static __always_inline __u8 get_ctx(void *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 base = (__u64)t->stack, sp = 0;

	/*
	 * Not the BPF frame: on 6.13+ x86 the JIT may give tracing programs a per-CPU private
	 * stack. ctx is the argument array that bpf_trace_runN() keeps on the kernel stack of
	 * the traced context; its address, read as a number (a pointer may not be compared).
	 */
	bpf_probe_read_kernel(&sp, sizeof(sp), &ctx);
	if (sp - base >= thread_size)
		return PS_CTX_IRQ;
	if ((t->flags & 0x00200000 /* PF_KTHREAD */) && t->comm[0] == 'k' && t->comm[1] == 's' &&
	    t->comm[2] == 'o' && t->comm[3] == 'f' && t->comm[4] == 't' && t->comm[5] == 'i' &&
	    t->comm[6] == 'r' && t->comm[7] == 'q' && t->comm[8] == 'd')
		return PS_CTX_SOFTIRQ;
	return PS_CTX_TASK;
}

/* With a filter, only allocations made by the selected tasks are counted (and all tracked). */
static __always_inline bool filter_pass(void)
{
	if (!filter_on)
		return true;
	if (filter_tgid && (bpf_get_current_pid_tgid() >> 32) != filter_tgid)
		return false;
	if (filter_cgid && bpf_get_current_cgroup_id() != filter_cgid)
		return false;
	if (filter_comm_on) {
		char comm[16];

		bpf_get_current_comm(comm, sizeof(comm));
		for (int i = 0; i < 16; i++) {
			if (comm[i] != filter_comm[i])
				return false;
			if (!comm[i])
				break;
		}
	}
	return true;
}

/*
 * SLAB_RECLAIM_ACCOUNT: 0x00020000 while slab flags were plain defines; since 6.8 (commit
 * "mm/slab: introduce kmem_cache flag bits") they are bits of enum _slab_flag_bits, and on 6.18
 * bit 17 is _SLAB_CMPXCHG_DOUBLE, set on most caches. Ask BTF for the bit.
 */
static __always_inline __u64 reclaim_account_bit(void)
{
	if (bpf_core_enum_value_exists(enum _slab_flag_bits, _SLAB_RECLAIM_ACCOUNT))
		return 1ull << bpf_core_enum_value(enum _slab_flag_bits, _SLAB_RECLAIM_ACCOUNT);
	return 0x00020000ull;
}

/* The size class of a kmalloc without the kfunc: which kmalloc-* cache kmalloc_type() picks. */
static __always_inline __u64 kmalloc_size_class(__u64 bytes, __u32 gfp)
{
	__u64 type = PS_KMT_NORMAL;

	if (gfp & gfp_dma)
		type = PS_KMT_DMA;
	else if (gfp & gfp_reclaimable)
		type = PS_KMT_RECLAIM;
	else if (gfp & gfp_account)
		type = PS_KMT_CGROUP;
	return PS_KMSIZE_CLASS(type, bytes);
}

static __noinline void cache_info_add(__u64 cls, const struct kmem_cache *s)
{
	struct ps_cache_info ci = {};
	const char *name;

	name = BPF_CORE_READ(s, name);
	bpf_probe_read_kernel_str(ci.name, sizeof(ci.name), name);
	ci.size = BPF_CORE_READ(s, size);
	ci.object_size = BPF_CORE_READ(s, object_size);
	ci.flags = (BPF_CORE_READ(s, flags) & reclaim_account_bit()) ? PS_CACHE_F_RECLAIM : 0;
	if (bpf_map_update_elem(&cache_info, &cls, &ci, BPF_NOEXIST) == -E2BIG)
		count(PS_C_DROP_CACHEINFO_FULL);
}

static __noinline struct ps_class_val *class_new(__u64 cls, const struct kmem_cache *s)
{
	struct ps_class_val zero = {};
	long err;

	err = bpf_map_update_elem(&classes, &cls, &zero, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		count(PS_C_DROP_CLASS_FULL);
		return NULL;
	}
	if (s)
		cache_info_add(cls, s);
	return bpf_map_lookup_elem(&classes, &cls);
}

static __always_inline __u32 class_slot(__u64 cls)
{
	if (!class_slot_bits)
		return 0;
	return (__u32)((cls * 0x9E3779B97F4A7C15ull) >> (64 - class_slot_bits));
}

/*
 * The hot path: a slot of this CPU's table (an inlined address computation, no hashing of a
 * key and no bucket walk). A class whose slot another class holds on this CPU tries the next
 * PS_CLASS_PROBES - 1 slots (linear probing: slots are never emptied, so a class is always
 * before the first empty slot of its run), and only then the hash map. Without probing, every
 * class that collides would pay a hash lookup on each of its events, and which classes collide
 * is random per boot (s->random). A slot is claimed with a compare-and-swap: a program that
 * interrupts this one on the same CPU may claim the same empty slot for another class.
 */
static __always_inline struct ps_class_val *class_get(__u64 cls, const struct kmem_cache *s)
{
	__u32 idx = class_slot(cls), mask = (1u << class_slot_bits) - 1;
	__u32 base = bpf_get_smp_processor_id() << class_slot_bits;
	struct ps_class_val *v;

	for (int i = 0; i < PS_CLASS_PROBES; i++) {
		__u32 k = base | ((idx + i) & mask);
		struct ps_class_slot *sl = bpf_map_lookup_elem(&class_slots, &k);
		__u64 old;

		if (!sl)
			break;
		old = sl->cls;
		if (old == cls)
			return &sl->v;
		if (old)
			continue;
		old = __sync_val_compare_and_swap(&sl->cls, 0, cls);
		if (!old) {
			if (s)
				cache_info_add(cls, s);
			return &sl->v;
		}
		if (old == cls)
			return &sl->v;
	}
	v = bpf_map_lookup_elem(&classes, &cls);
	if (v)
		return v;
	return class_new(cls, s);
}

static __always_inline struct ps_class_val *page_class(__u32 order)
{
	__u64 cls = PS_CLASS_PAGE_BASE + (order < PS_MAX_ORDER ? order : PS_MAX_ORDER);

	return class_get(cls, NULL);
}

static __always_inline struct ps_tag_val *tag_get(const struct ps_tag_key *key)
{
	struct ps_tag_val *tv = bpf_map_lookup_elem(&tags, key);
	struct ps_tag_val zero = {};
	long err;

	if (tv)
		return tv;
	err = bpf_map_update_elem(&tags, key, &zero, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		count(PS_C_DROP_TAG_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&tags, key);
}

static __always_inline void stack_free(const struct ps_tag_key *tag, __s32 stackid, __u64 bytes)
{
	struct ps_stack_key sk = { .tag = *tag, .stackid = stackid };
	struct ps_stack_val *sv;

	sv = bpf_map_lookup_elem(&stack_counts, &sk);
	if (sv)
		__sync_fetch_and_add(&sv->live_bytes, -(__s64)bytes);
}

static __always_inline void stack_alloc(const struct ps_tag_key *tag, __s32 stackid, __u64 bytes)
{
	struct ps_stack_key sk = { .tag = *tag, .stackid = stackid };
	struct ps_stack_val *sv, nv = {};
	long err;

	sv = bpf_map_lookup_elem(&stack_counts, &sk);
	if (!sv) {
		bpf_get_current_comm(nv.comm, sizeof(nv.comm));
		nv.ctx = tag->ctx;
		err = bpf_map_update_elem(&stack_counts, &sk, &nv, BPF_NOEXIST);
		if (err && err != -EEXIST) {
			count(PS_C_DROP_STACKCNT_FULL);
			return;
		}
		sv = bpf_map_lookup_elem(&stack_counts, &sk);
		if (!sv)
			return;
	}
	__sync_fetch_and_add(&sv->allocs, 1);
	__sync_fetch_and_add(&sv->bytes, bytes);
	__sync_fetch_and_add(&sv->live_bytes, (__s64)bytes);
}

static __always_inline __s32 take_stack(void *ctx)
{
	long id = bpf_get_stackid(ctx, &stacks, 2 & BPF_F_SKIP_FIELD_MASK);

	if (id >= 0) {
		count(PS_C_STACKS_TAKEN);
		return (__s32)id;
	}
	count(id == -EEXIST ? PS_C_DROP_STACK_COLLISION : PS_C_DROP_STACK_ERR);
	return -1;
}

/* A tracked object disappeared: charge its free to its tag (and stack). */
static __always_inline void tag_free(const struct ps_ptr_val *pv, bool implicit)
{
	struct ps_tag_val *tv;

	if (pv->flags & PS_PV_SELF)
		return;
	tv = bpf_map_lookup_elem(&tags, &pv->tag);
	if (tv) {
		tv->frees++;
		tv->free_bytes += pv->bytes;
		if (implicit)
			tv->implicit_frees++;
	}
	if (pv->stackid >= 0)
		stack_free(&pv->tag, pv->stackid, pv->bytes);
}

/* Bucket k (0 or 1) of an address: hashes independent of each other and of addr_sampled()'s. */
static __always_inline __u32 ptr_bucket_idx(__u64 addr, int k)
{
	__u64 h = (addr ^ (addr >> 31)) * (k ? 0xC2B2AE3D27D4EB4Full : 0xFF51AFD7ED558CCDull);

	return ptr_bucket_bits ? (__u32)(h >> (64 - ptr_bucket_bits)) : 0;
}

/*
 * The slot functions are global: the verifier checks each once, and to their callers their
 * result is one unknown number, not a path per way and bucket (which, inlined into every
 * program, took it past its instruction limit). A slot number is bucket * PS_PTR_WAYS + way.
 */

/* ptr_scan()'s result when the bucket holds the address: its slot in the low bits. */
#define PS_PTR_FOUND (1l << 40)

/*
 * Bucket idx, looked over once: PS_PTR_FOUND | slot when it holds addr, else its number of
 * empty slots (global too: a branch a way, verified once).
 */
__noinline long ptr_scan(__u32 idx, __u64 addr)
{
	struct ps_ptr_bucket *b = bpf_map_lookup_elem(&ptrs, &idx);
	long n = 0;

	if (!b)
		return 0;
	for (int i = 0; i < PS_PTR_WAYS; i++) {
		if (b->addr[i] == addr)
			return PS_PTR_FOUND | ((long)idx * PS_PTR_WAYS + i);
		n += b->addr[i] == 0;
	}
	return n;
}

/* The slot that holds addr, or -1. */
__noinline long ptr_locate(__u64 addr)
{
	long s = ptr_scan(ptr_bucket_idx(addr, 0), addr);

	if (!(s & PS_PTR_FOUND))
		s = ptr_scan(ptr_bucket_idx(addr, 1), addr);
	return s & PS_PTR_FOUND ? s & ~PS_PTR_FOUND : -1;
}

/*
 * The slot for a new object at addr: PS_PTR_FOUND | slot when addr is still tracked (freed
 * on a path no event reports), else a claimed empty slot of the emptier of its two buckets
 * (then of the other); -1 when both are full.
 */
__noinline long ptr_claim(__u64 addr)
{
	__u32 idx0 = ptr_bucket_idx(addr, 0), idx1 = ptr_bucket_idx(addr, 1), t;
	struct ps_ptr_bucket *b;
	long n0, n1;

	n0 = ptr_scan(idx0, addr);
	if (n0 & PS_PTR_FOUND)
		return n0;
	n1 = ptr_scan(idx1, addr);
	if (n1 & PS_PTR_FOUND)
		return n1;
	if (n1 > n0) {
		t = idx0;
		idx0 = idx1;
		idx1 = t;
	}
	for (int k = 0; k < 2; k++) {
		__u32 idx = k ? idx1 : idx0;

		b = bpf_map_lookup_elem(&ptrs, &idx);
		if (!b)
			return -1;
		for (int i = 0; i < PS_PTR_WAYS; i++)
			if (!b->addr[i] && __sync_val_compare_and_swap(&b->addr[i], 0, addr) == 0)
				return (long)idx * PS_PTR_WAYS + i;
	}
	return -1;
}

/* The value of a slot (and, when addrp is given, its address word), or NULL. */
static __always_inline struct ps_ptr_val *ptr_slot(long slot, __u64 **addrp)
{
	__u32 idx = (__u64)slot / PS_PTR_WAYS, w = slot & (PS_PTR_WAYS - 1);
	struct ps_ptr_bucket *b;

	if (slot < 0)
		return NULL;
	b = bpf_map_lookup_elem(&ptrs, &idx);
	if (!b)
		return NULL;
	if (addrp)
		*addrp = &b->addr[w];
	return &b->val[w];
}

/*
 * Stores pv for addr: in the slot that still holds addr (its old object was freed on an
 * untraced path: charged as an implicit free), else in a free slot. -1 when both buckets are full.
 */
static __always_inline int ptr_put(__u64 addr, const struct ps_ptr_val *pv)
{
	long slot = ptr_claim(addr);
	struct ps_ptr_val *v;

	v = ptr_slot(slot & ~PS_PTR_FOUND, NULL);
	if (!v)
		return -1;
	if (slot & PS_PTR_FOUND) {
		struct ps_ptr_val copy = *v;

		tag_free(&copy, true);
		count(PS_C_IMPLICIT_FREES);
	}
	*v = *pv;
	return 0;
}

/*
 * The slow path: a sampled (or always-tracked) allocation; pv has tag cls/site/kind and bytes.
 * Returns 1 when the pointer map holds the object, 0 when not (the map full). The tag (and
 * stack) count the allocation only when its free can be seen: an object counted but not in
 * the map would stay live in its tag forever, a leak that is not there. Callers do the same
 * for the classes whose frees are found only through the map.
 */
static __noinline int track_pv(void *ctx, __u64 addr, struct ps_ptr_val *pv_in)
{
	struct ps_ptr_val pv = *pv_in;
	struct ps_tag_val *tv;
	__u64 bytes = pv.bytes;
	long err;

	/*
	 * The recorder's own sampled allocations (the page cache of the trace it writes, the
	 * seq_file buffers of the /proc files it reads each interval) would rank among the
	 * suspects: counted in their class, not tagged. They still go in the map: their frees are
	 * sampled too, and one not found there would count as the free of an object older than
	 * the recording, which the analysis takes as memory the window retained: one seq_file
	 * buffer reused for every read, at a sampled address, would make its cache look like a
	 * leak. Objects the class side needs the map for (large kmalloc, percpu, kmalloc without
	 * the kfunc) are tagged as anyone's.
	 */
	if (self_tgid && (pv.tag.kind == PS_K_SLAB || pv.tag.kind == PS_K_PAGE ||
			  (pv.tag.kind == PS_K_KMALLOC && !no_kfunc)) &&
	    (bpf_get_current_pid_tgid() >> 32) == self_tgid) {
		count(PS_C_SELF_SKIPPED);
		pv.flags = PS_PV_SELF;
		pv.stackid = -1;
		if (ptr_put(addr, &pv)) {
			count(PS_C_DROP_PTR_FULL);
			return 0;
		}
		return 1;
	}
	count(PS_C_SAMPLED_ALLOCS);
	pv.tag.ctx = get_ctx(ctx);
	if (pv.tag.kind != PS_K_PAGE && stack_sample && bpf_get_prandom_u32() % stack_sample == 0)
		pv.stackid = take_stack(ctx);

	err = ptr_put(addr, &pv);
	if (err) {
		count(PS_C_DROP_PTR_FULL);
		return 0;
	}
	tv = tag_get(&pv.tag);
	if (tv) {
		tv->allocs++;
		tv->alloc_bytes += bytes;
	}
	if (pv.stackid >= 0)
		stack_alloc(&pv.tag, pv.stackid, bytes);
	return 1;
}

#define track(ctx_, addr_, cls_, site_, kind_, bytes_, stackid_) ({			\
	struct ps_ptr_val __pv = { .tag = { .cls = (cls_), .site = (site_), .kind = (kind_) },	\
				   .bytes = (bytes_), .stackid = (stackid_) };		\
	track_pv(ctx_, addr_, &__pv);							\
})

/*
 * Takes a tracked object out of the pointer map and charges its free to its tag (and stack);
 * false when the address is not tracked.
 */
static __always_inline bool take_ptr(__u64 addr, struct ps_ptr_val *out)
{
	struct ps_ptr_val *pv;
	__u64 *ap;

	pv = ptr_slot(ptr_locate(addr), &ap);
	if (!pv)
		return false;
	*out = *pv;
	/* Releases the slot after the copy: the exchange orders it after the reads. */
	__sync_lock_test_and_set(ap, 0);
	tag_free(out, false);
	return true;
}

/* A sampled free. Returns the tracked size, or 0 when the object predates the recording. */
static __noinline __u64 untrack(__u64 addr, struct ps_class_val *cv, __u64 known_bytes)
{
	struct ps_ptr_val copy;

	count(PS_C_SAMPLED_FREES);
	if (!take_ptr(addr, &copy)) {
		count(PS_C_PREEXISTING_FREES);
		if (cv) {
			cv->s_pre_frees++;
			cv->s_pre_free_bytes += known_bytes;
		}
		return 0;
	}
	return copy.bytes ? copy.bytes : 1;
}

static __always_inline void class_alloc(struct ps_class_val *cv, __u64 bytes)
{
	if (cv) {
		cv->allocs++;
		cv->alloc_bytes += bytes;
	}
}

static __always_inline void class_free(struct ps_class_val *cv, __u64 bytes)
{
	if (cv) {
		cv->frees++;
		cv->free_bytes += bytes;
	}
}

/*
 * kfree() without the kfunc: only the pointer map knows the object (every kmalloc object, and
 * the sampled slab objects); its class is the one recorded at allocation. An object not found
 * was allocated before the start, or is an unsampled kmem_cache object freed with kfree():
 * counted, charged to no class.
 */
static __noinline void untrack_class(__u64 addr)
{
	struct ps_ptr_val copy;

	if (!take_ptr(addr, &copy)) {
		count(PS_C_NO_KMEM_CACHE);
		return;
	}
	count(PS_C_SAMPLED_FREES);
	class_free(class_get(copy.tag.cls, NULL), copy.bytes);
}

/* Free of an object with a known, fixed size (slab object, page); sampled: its decision. */
static __always_inline void free_sized(__u64 addr, __u64 cls, const struct kmem_cache *s,
				       __u64 bytes, bool sampled)
{
	struct ps_class_val *cv;

	if (filter_on) {
		/*
		 * Only frees of objects the filter let in are counted. The class may so far be
		 * in the slots of other CPUs only: class_get(), not a lookup that could miss it.
		 */
		if (untrack(addr, NULL, 0))
			class_free(class_get(cls, s), bytes);
		return;
	}
	cv = class_get(cls, s);
	class_free(cv, bytes);
	if (sampled)
		untrack(addr, cv, bytes);
}

/*
 * Allocation of a slab object (kmem_cache or kmalloc with the kfunc), whose free names its
 * cache: the class counts every one and the sample goes to the tag side. Under a filter, frees
 * are counted only when found in the pointer map, so allocations only when the map took them.
 */
static __always_inline void slab_alloc(void *ctx, __u64 addr, __u64 cls,
				       const struct kmem_cache *s, __u64 site, __u8 kind,
				       __u64 bytes)
{
	if (filter_on) {
		if (track(ctx, addr, cls, site, kind, bytes, -1))
			class_alloc(class_get(cls, s), bytes);
		return;
	}
	class_alloc(class_get(cls, s), bytes);
	if (addr_sampled(addr))
		track(ctx, addr, cls, site, kind, bytes, -1);
}

SEC("tp_btf/kmem_cache_alloc")
int BPF_PROG(kmem_cache_alloc, unsigned long call_site, const void *ptr, struct kmem_cache *s,
	     gfp_t gfp, int node)
{
	count(PS_C_EV_CACHE_ALLOC);
	if (!ptr || !s)
		return 0;
	if (!filter_pass()) {
		count(PS_C_FILTERED);
		return 0;
	}
	slab_alloc(ctx, (__u64)ptr, cache_id(s, ctx, 2), s, call_site, PS_K_SLAB, s->size);
	return 0;
}

SEC("tp_btf/kmem_cache_free")
int BPF_PROG(kmem_cache_free, unsigned long call_site, const void *ptr, const struct kmem_cache *s)
{
	count(PS_C_EV_CACHE_FREE);
	if (!ptr || !s)
		return 0;
	free_sized((__u64)ptr, cache_id(s, ctx, 2), s, s->size, addr_sampled((__u64)ptr));
	return 0;
}

SEC("tp_btf/kmalloc")
int BPF_PROG(kmalloc, unsigned long call_site, const void *ptr, size_t bytes_req,
	     size_t bytes_alloc, gfp_t gfp, int node)
{
	__u64 addr = (__u64)ptr, cls;
	struct kmem_cache *s;

	count(PS_C_EV_KMALLOC);
	if (!ptr)
		return 0;
	if (!filter_pass()) {
		count(PS_C_FILTERED);
		return 0;
	}
	s = no_kfunc ? NULL : bpf_get_kmem_cache(addr);
	if (!s && (!no_kfunc || bytes_alloc > kmalloc_max)) {
		/*
		 * Large kmalloc: backed by pages; rare, so always tracked (exact). Its free is
		 * found only in the pointer map, so the class counts only what the map took.
		 */
		if (track(ctx, addr, PS_CLASS_KMALLOC_LARGE, call_site, PS_K_KMALLOC_LARGE,
			  bytes_alloc, -1))
			class_alloc(class_get(PS_CLASS_KMALLOC_LARGE, NULL), bytes_alloc);
		return 0;
	}
	if (no_kfunc) {
		/* Every object tracked: kfree() finds its class only through the pointer map. */
		cls = kmalloc_size_class(bytes_alloc, gfp);
		if (track(ctx, addr, cls, call_site, PS_K_KMALLOC, bytes_alloc, -1))
			class_alloc(class_get(cls, NULL), bytes_alloc);
		return 0;
	}
	slab_alloc(ctx, addr, cache_id(s, ctx, -1), s, call_site, PS_K_KMALLOC, bytes_alloc);
	return 0;
}

SEC("tp_btf/kfree")
int BPF_PROG(kfree, unsigned long call_site, const void *ptr)
{
	__u64 addr = (__u64)ptr, bytes;
	struct ps_class_val *cv;
	struct kmem_cache *s;

	count(PS_C_EV_KFREE);
	if (addr < 4096) {	/* NULL and ZERO_SIZE_PTR: nothing was freed */
		count(PS_C_KFREE_NULL);
		return 0;
	}
	if (no_kfunc) {
		untrack_class(addr);
		return 0;
	}
	s = bpf_get_kmem_cache(addr);
	if (s) {
		free_sized(addr, cache_id(s, ctx, -1), s, s->size, addr_sampled(addr));
		return 0;
	}
	/* Not a slab object: a large kmalloc, tracked exactly when allocated while recording. */
	if (filter_on) {
		bytes = untrack(addr, NULL, 0);
		if (bytes)
			class_free(class_get(PS_CLASS_KMALLOC_LARGE, NULL), bytes);
		else
			count(PS_C_NO_KMEM_CACHE);
		return 0;
	}
	cv = class_get(PS_CLASS_KMALLOC_LARGE, NULL);
	bytes = untrack(addr, cv, 0);
	if (!bytes)
		count(PS_C_NO_KMEM_CACHE);
	class_free(cv, bytes);
	return 0;
}

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(mm_page_alloc, struct page *page, unsigned int order, gfp_t gfp, int migratetype)
{
	__u64 addr, bytes = (__u64)1 << (page_shift + (order & 31));
	__s32 stackid;

	count(PS_C_EV_PAGE_ALLOC);
	if (!page)
		return 0;
	addr = arg_u64(ctx, 0);
	if (!filter_pass()) {
		count(PS_C_FILTERED);
		return 0;
	}
	if (!filter_on)
		class_alloc(page_class(order), bytes);
	if (filter_on || page_sampled(addr, order)) {
		struct ps_ptr_val pv = {
			.tag = { .cls = PS_CLASS_PAGE_BASE +
					(order < PS_MAX_ORDER ? order : PS_MAX_ORDER),
				 .kind = PS_K_PAGE, .mt = migratetype & 0xff },
			.bytes = bytes,
		};

		stackid = take_stack(ctx);
		pv.tag.site = stackid >= 0 ? (__u64)stackid + 1 : PS_SITE_NOSTACK;
		pv.stackid = stackid;
		if (track_pv(ctx, addr, &pv) && filter_on)
			class_alloc(page_class(order), bytes);	/* as for slab objects */
	}
	return 0;
}

SEC("tp_btf/mm_page_free")
int BPF_PROG(mm_page_free, struct page *page, unsigned int order)
{
	__u64 addr, bytes = (__u64)1 << (page_shift + (order & 31));

	count(PS_C_EV_PAGE_FREE);
	if (!page)
		return 0;
	addr = arg_u64(ctx, 0);
	free_sized(addr, PS_CLASS_PAGE_BASE + (order < PS_MAX_ORDER ? order : PS_MAX_ORDER), NULL,
		   bytes, page_sampled(addr, order));
	return 0;
}

SEC("tp_btf/percpu_alloc_percpu")
int BPF_PROG(percpu_alloc_percpu, unsigned long call_site, bool reserved, bool is_atomic,
	     size_t size, size_t align, void *base_addr, int off, void *ptr, size_t bytes_alloc,
	     gfp_t gfp)
{
	count(PS_C_EV_PERCPU_ALLOC);
	if (!ptr)
		return 0;
	if (!filter_pass()) {
		count(PS_C_FILTERED);
		return 0;
	}
	/* Found at free only in the pointer map (as large kmalloc). */
	if (track(ctx, (__u64)ptr, PS_CLASS_PERCPU, call_site, PS_K_PERCPU, bytes_alloc, -1))
		class_alloc(class_get(PS_CLASS_PERCPU, NULL), bytes_alloc);
	return 0;
}

SEC("tp_btf/percpu_free_percpu")
int BPF_PROG(percpu_free_percpu, void *base_addr, int off, void *ptr)
{
	struct ps_class_val *cv;
	__u64 bytes;

	count(PS_C_EV_PERCPU_FREE);
	if (!ptr)
		return 0;
	if (filter_on) {
		bytes = untrack((__u64)ptr, NULL, 0);
		if (bytes)
			class_free(class_get(PS_CLASS_PERCPU, NULL), bytes);
		return 0;
	}
	cv = class_get(PS_CLASS_PERCPU, NULL);
	bytes = untrack((__u64)ptr, cv, 0);
	class_free(cv, bytes);
	return 0;
}
