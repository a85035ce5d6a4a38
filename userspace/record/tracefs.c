// SPDX-License-Identifier: GPL-2.0
/*
 * The tracefs backend (record --backend tracefs): where BPF cannot run, the kmem tracepoints
 * through a private tracefs instance's per-CPU ring buffers, read with libtracefs and parsed
 * with libtraceevent from the kernel's own format files. Every event comes to userspace, which
 * keeps what the BPF maps keep: the live objects (pointer -> key, bytes), cumulative values
 * per tag key, the exact class counters. rec_tracefs_poll() hands them to the snapshot as the
 * BPF poll does, so that resolve.c, write.c and metrics.c serve both backends unchanged.
 *
 * What it keeps of each event: kmem_cache_alloc/free (cache name, call site), kmalloc/kfree
 * (the bucket from bytes_alloc and the gfp type, call site), mm_page_alloc/free (order,
 * migratetype) with the `stacktrace` trigger's kernel_stack for the page's call site and
 * whether it backs a slab (stacks.c reads it as it reads a BPF stack). No slab object stacks,
 * no sampling (scale 1), no task filter: docs/record.md says what that costs.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>
#include <event-parse.h>

#include "userspace/record/rec.h"

/* Bytes of each CPU's ring buffer: drained every REC_TRACEFS_DRAIN_MS, at up to ~1M events/s. */
#define TFS_BUFFER_KB (8 * 1024)
#define TFS_KMALLOC_MAX_CACHE 8192	/* SLUB's KMALLOC_MAX_CACHE_SIZE: 2 pages */
#define TRACE_FLAG_HARDIRQ 0x08
#define TRACE_FLAG_SOFTIRQ 0x10
/* gfp bits the kmalloc type is chosen by (include/linux/gfp_types.h) */
#define GFP_DMA_BIT (1ul << 0)
#define GFP_RECLAIMABLE_BIT (1ul << 4)
#define GFP_ACCOUNT_BIT (1ul << 22)

enum { EV_KMALLOC, EV_KFREE, EV_CACHE_ALLOC, EV_CACHE_FREE, EV_PAGE_ALLOC, EV_PAGE_FREE,
       EV_STACK, EV__N };

static const char *const ev_sys[EV__N] = { "kmem", "kmem", "kmem", "kmem", "kmem", "kmem",
					   "ftrace" };
static const char *const ev_name[EV__N] = { "kmalloc", "kfree", "kmem_cache_alloc",
					    "kmem_cache_free", "mm_page_alloc", "mm_page_free",
					    "kernel_stack" };

/* A key's cumulative values, as the BPF tags map holds them summed over CPUs. */
struct tkey {
	struct ps_tag_key k;
	struct ps_tag_val v;
	int32_t frames;		/* a page key's stack (index in stk), -1: none */
};

struct tcls {
	uint64_t cls;
	struct ps_class_val v;
	char name[40];		/* named caches; "" for the classes named by their number */
	uint32_t flags;		/* PS_CACHE_F_* */
	uint64_t size;		/* a named cache's object size with metadata (slab_size), 0 unknown */
};

/* A live object or page: its key (TOBJ_NO_KEY: the recorder's own) and class, and bytes. */
#define TOBJ_NO_KEY UINT32_MAX
struct tobj {
	uint32_t key, cls;
	uint64_t bytes;
};

struct tstack {
	uint32_t n;
	uint64_t ips[PS_MAX_STACK_DEPTH];
};

struct rec_tfs {
	struct tracefs_instance *inst;
	struct tep_handle *tep;
	int id[EV__N];
	struct tep_format_field *f_flags, *f_pid, *f_site[EV__N], *f_ptr[EV__N], *f_balloc[EV__N],
		*f_gfp,
		*f_name[EV__N], *f_pfn[EV__N], *f_order[EV__N], *f_mt, *f_ssize, *f_caller;
	bool stacks;			/* the stacktrace trigger is on mm_page_alloc */
	struct ps_htab keys;		/* ps_tag_key -> index + 1 in tk */
	struct tkey *tk;
	size_t ntk, captk;
	struct ps_htab cls;		/* cls -> index + 1 in tc */
	struct tcls *tc;
	size_t ntc, captc;
	struct ps_htab objs;		/* pointer (or pfn | 1 << 63) -> index + 1 in ob, or NULL */
	struct tobj *ob;
	size_t nob, capob;
	uint32_t *freelist;
	size_t nfree, capfree;
	struct ps_htab stk_by_hash;	/* stack content hash -> index + 1 in stk */
	struct tstack *stk;
	size_t nstk, capstk;
	/* per CPU: the page allocated last (pfn | 1 << 63), waiting for its kernel_stack; 0: none */
	uint64_t *pend_obj;
	struct ps_tag_key *pend_key;
	uint64_t ctr[PS_C_MAX];
	uint64_t overrun_base, overrun;
	int ncpus;
	int self;			/* our pid: our own allocations are not the server's */
	bool own_tep;			/* made here (live), not the trace.dat reader's */
	uint64_t page_size;		/* of the traced machine: its format files' */
};

static int tfs_fail(struct rec *r, int e, const char *what)
{
	return rec_fail(r, e, what, "(tracefs backend)");
}

/* --- the mirror ------------------------------------------------------------------------ */

static int key_index(struct rec_tfs *t, const struct ps_tag_key *k, uint32_t *out)
{
	void *v = ps_htab_get(&t->keys, k);

	if (v) {
		*out = (uint32_t)((uintptr_t)v - 1);
		return 0;
	}
	if (ps_array_reserve((void **)&t->tk, &t->captk, t->ntk + 1, sizeof(*t->tk)) ||
	    ps_htab_put(&t->keys, k, (void *)(uintptr_t)(t->ntk + 1)))
		return -ENOMEM;
	memset(&t->tk[t->ntk], 0, sizeof(t->tk[0]));
	t->tk[t->ntk].k = *k;
	t->tk[t->ntk].frames = -1;
	*out = (uint32_t)t->ntk++;
	return 0;
}

static int cls_index(struct rec_tfs *t, uint64_t cls, const char *name, size_t nlen,
		     uint32_t *out)
{
	void *v = ps_htab_get(&t->cls, &cls);
	struct tcls *c;

	if (v) {
		*out = (uint32_t)((uintptr_t)v - 1);
		return 0;
	}
	if (ps_array_reserve((void **)&t->tc, &t->captc, t->ntc + 1, sizeof(*t->tc)) ||
	    ps_htab_put(&t->cls, &cls, (void *)(uintptr_t)(t->ntc + 1)))
		return -ENOMEM;
	c = &t->tc[t->ntc];
	memset(c, 0, sizeof(*c));
	c->cls = cls;
	if (name) {
		char path[128];
		FILE *f;
		int rcl = 0;

		snprintf(c->name, sizeof(c->name), "%.*s", (int)nlen, name);
		/* SLAB_RECLAIM_ACCOUNT, as SLUB's sysfs shows it */
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/reclaim_account", c->name);
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%d", &rcl) == 1 && rcl)
				c->flags |= PS_CACHE_F_RECLAIM;
			fclose(f);
		}
		/* what a free of an object older than the recording takes: kmem_cache->size */
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/slab_size", c->name);
		f = fopen(path, "r");
		if (f) {
			unsigned long long sz;

			if (fscanf(f, "%llu", &sz) == 1)
				c->size = sz;
			fclose(f);
		}
	}
	*out = (uint32_t)t->ntc++;
	return 0;
}

/* A named cache's class: its name's hash, kept clear of the classes named by their number. */
static uint64_t name_cls(const char *name, size_t len)
{
	return ps_hash_bytes(name, len) | (1ull << 63);
}

static int obj_put(struct rec_tfs *t, uint64_t addr, uint32_t key, uint32_t cls, uint64_t bytes)
{
	void *v = ps_htab_get(&t->objs, &addr);
	uint32_t i;

	if (v) {
		/*
		 * an allocation at an address still live: its free was not traced (bulk frees have
		 * no tracepoint). The tag lets the old object go, as the BPF probes do; the class
		 * counters count traced events only, as theirs do (the analysis corrects them by
		 * /proc/slabinfo)
		 */
		struct tobj *o = &t->ob[(uintptr_t)v - 1];

		t->ctr[PS_C_IMPLICIT_FREES]++;
		if (o->key != TOBJ_NO_KEY) {
			t->tk[o->key].v.frees++;
			t->tk[o->key].v.free_bytes += o->bytes;
			t->tk[o->key].v.implicit_frees++;
		}
		*o = (struct tobj){ key, cls, bytes };
		return 0;
	}
	if (t->nfree) {
		i = t->freelist[--t->nfree];
	} else {
		if (ps_array_reserve((void **)&t->ob, &t->capob, t->nob + 1, sizeof(*t->ob)))
			return -ENOMEM;
		i = (uint32_t)t->nob++;
	}
	t->ob[i] = (struct tobj){ key, cls, bytes };
	return ps_htab_put(&t->objs, &addr, (void *)(uintptr_t)(i + 1));
}

/*
 * The object at addr freed: true when it was live, its key counted and *out a copy of it (the
 * caller counts the class: exactly, as the BPF probes do, also for objects older than us).
 */
static bool obj_free(struct rec_tfs *t, uint64_t addr, struct tobj *out)
{
	void *v = ps_htab_get(&t->objs, &addr);
	struct tobj *o;

	if (!v)
		return false;
	o = &t->ob[(uintptr_t)v - 1];
	*out = *o;
	if (o->key != TOBJ_NO_KEY) {
		t->tk[o->key].v.frees++;
		t->tk[o->key].v.free_bytes += o->bytes;
	}
	if (!ps_array_reserve((void **)&t->freelist, &t->capfree, t->nfree + 1,
			      sizeof(*t->freelist)))
		t->freelist[t->nfree++] = (uint32_t)((uintptr_t)v - 1);
	ps_htab_put(&t->objs, &addr, NULL);
	return true;
}

/*
 * An allocation: its class counts it; its tag too unless k is NULL (the recorder's own, which
 * its class counts as the BPF probes' do, but no tag ranks).
 */
static int alloc_one(struct rec_tfs *t, const struct ps_tag_key *k, uint64_t cls,
		     const char *name, size_t nlen, uint64_t addr, uint64_t bytes)
{
	uint32_t ki = TOBJ_NO_KEY, ci;

	if ((k && key_index(t, k, &ki)) || cls_index(t, cls, name, nlen, &ci))
		return -ENOMEM;
	if (k) {
		t->tk[ki].v.allocs++;
		t->tk[ki].v.alloc_bytes += bytes;
	}
	t->tc[ci].v.allocs++;
	t->tc[ci].v.alloc_bytes += bytes;
	return obj_put(t, addr, ki, ci, bytes);
}

/* --- events ---------------------------------------------------------------------------- */

static uint64_t num(struct tep_format_field *f, struct tep_record *rec)
{
	unsigned long long v = 0;

	if (f)
		tep_read_number_field(f, rec->data, &v);
	return v;
}

/* A __data_loc string field: its bytes (not NUL-terminated), *len of them. */
static const char *dl_str(struct tep_format_field *f, struct tep_record *rec, size_t *len)
{
	uint32_t dl;
	size_t off;

	if (!f || f->offset + 4 > rec->size)
		return NULL;
	memcpy(&dl, (const char *)rec->data + f->offset, 4);
	off = dl & 0xffff;
	*len = dl >> 16;
	if (off + *len > (size_t)rec->size)
		return NULL;
	while (*len && ((const char *)rec->data)[off + *len - 1] == '\0')
		(*len)--;
	return (const char *)rec->data + off;
}

static uint8_t ctx_of(struct rec_tfs *t, struct tep_record *rec)
{
	uint64_t fl = num(t->f_flags, rec);

	return fl & (TRACE_FLAG_HARDIRQ | TRACE_FLAG_SOFTIRQ) ? PS_CTX_IRQ : PS_CTX_TASK;
}

/* An allocation by the recorder itself (its reads of the buffers, its trace's page cache). */
static bool self(struct rec_tfs *t, struct tep_record *rec)
{
	if ((int)num(t->f_pid, rec) != t->self)
		return false;
	t->ctr[PS_C_SELF_SKIPPED]++;
	return true;
}

static uint8_t kmalloc_type(uint64_t gfp)
{
	if (gfp & GFP_DMA_BIT)
		return PS_KMT_DMA;
	if (gfp & GFP_RECLAIMABLE_BIT)
		return PS_KMT_RECLAIM;
	if (gfp & GFP_ACCOUNT_BIT)
		return PS_KMT_CGROUP;
	return PS_KMT_NORMAL;
}

static uint8_t mt_of(int64_t mt)
{
	/* MIGRATE_UNMOVABLE 0, MIGRATE_MOVABLE 1, MIGRATE_RECLAIMABLE 2 */
	return mt == 1 ? PS_MT_MOVABLE : mt == 2 ? PS_MT_RECLAIMABLE : PS_MT_UNMOVABLE;
}

/* A stack's index in t->stk, interned by content. */
static int stack_index(struct rec_tfs *t, const uint64_t *ips, uint32_t n, int32_t *out)
{
	uint64_t h = ps_hash_bytes(ips, n * sizeof(*ips));
	void *v = ps_htab_get(&t->stk_by_hash, &h);

	if (v) {
		*out = (int32_t)((uintptr_t)v - 1);
		return 0;
	}
	if (ps_array_reserve((void **)&t->stk, &t->capstk, t->nstk + 1, sizeof(*t->stk)) ||
	    ps_htab_put(&t->stk_by_hash, &h, (void *)(uintptr_t)(t->nstk + 1)))
		return -ENOMEM;
	t->stk[t->nstk].n = n;
	memcpy(t->stk[t->nstk].ips, ips, n * sizeof(*ips));
	*out = (int32_t)t->nstk++;
	return 0;
}

/*
 * The kernel_stack of the page allocated last on this CPU: the page's key becomes one with
 * this stack (keyed as BPF keys a page: by stack id + 1), and the page moves to it.
 */
static int on_stack(struct rec_tfs *t, struct tep_record *rec, int cpu)
{
	uint64_t ips[PS_MAX_STACK_DEPTH];
	uint32_t n = 0, size = (uint32_t)num(t->f_ssize, rec), ki;
	struct ps_tag_key k;
	struct tobj *o;
	int32_t sid;
	void *v;

	if (cpu < 0 || cpu >= t->ncpus || !t->pend_obj[cpu])
		return 0;
	for (uint32_t i = 0; i < size && n < PS_MAX_STACK_DEPTH; i++) {
		size_t off = t->f_caller->offset + i * 8;

		if (off + 8 > (size_t)rec->size)
			break;
		memcpy(&ips[n], (const char *)rec->data + off, 8);
		if (ips[n])
			n++;
	}
	v = ps_htab_get(&t->objs, &t->pend_obj[cpu]);
	t->pend_obj[cpu] = 0;
	if (!v || !n)
		return 0;
	o = &t->ob[(uintptr_t)v - 1];
	/*
	 * Not the allocation the stack followed: the page was freed and allocated again before
	 * its stack was read (the reader can take other CPUs' events between the two), by the
	 * recorder (no key to move it from) or under another key.
	 */
	if (o->key == TOBJ_NO_KEY || memcmp(&t->tk[o->key].k, &t->pend_key[cpu], sizeof(k)))
		return 0;
	if (stack_index(t, ips, n, &sid))
		return -ENOMEM;
	k = t->pend_key[cpu];
	k.site = (uint64_t)sid + 1;
	if (key_index(t, &k, &ki))
		return -ENOMEM;
	t->tk[ki].frames = sid;
	/* the allocation moves from the key without a stack to the one with it */
	t->tk[o->key].v.allocs--;
	t->tk[o->key].v.alloc_bytes -= o->bytes;
	t->tk[ki].v.allocs++;
	t->tk[ki].v.alloc_bytes += o->bytes;
	o->key = ki;
	return 0;
}

static int on_event(struct tep_event *ev, struct tep_record *rec, int cpu, void *ctx)
{
	struct rec *r = ctx;
	struct rec_tfs *t = r->tfs;
	struct ps_tag_key k = { 0 };
	const char *name;
	size_t nlen = 0;
	uint64_t ptr, bytes;
	int id = ev->id, e = 0;

	if (id == t->id[EV_KMALLOC]) {
		t->ctr[PS_C_EV_KMALLOC]++;
		ptr = num(t->f_ptr[EV_KMALLOC], rec);
		bytes = num(t->f_balloc[EV_KMALLOC], rec);
		if (!ptr)
			return 0;
		k.site = num(t->f_site[EV_KMALLOC], rec);
		k.ctx = ctx_of(t, rec);
		if (bytes > TFS_KMALLOC_MAX_CACHE) {
			k.kind = PS_K_KMALLOC_LARGE;
			k.cls = PS_CLASS_KMALLOC_LARGE;
		} else {
			k.kind = PS_K_KMALLOC;
			k.cls = PS_KMSIZE_CLASS(kmalloc_type(num(t->f_gfp, rec)), bytes);
		}
		e = alloc_one(t, self(t, rec) ? NULL : &k, k.cls, NULL, 0, ptr, bytes);
	} else if (id == t->id[EV_CACHE_ALLOC]) {
		t->ctr[PS_C_EV_CACHE_ALLOC]++;
		ptr = num(t->f_ptr[EV_CACHE_ALLOC], rec);
		name = dl_str(t->f_name[EV_CACHE_ALLOC], rec, &nlen);
		if (!ptr || !name)
			return 0;
		k.kind = PS_K_SLAB;
		k.cls = name_cls(name, nlen);
		k.site = num(t->f_site[EV_CACHE_ALLOC], rec);
		k.ctx = ctx_of(t, rec);
		e = alloc_one(t, self(t, rec) ? NULL : &k, k.cls, name, nlen, ptr,
			      num(t->f_balloc[EV_CACHE_ALLOC], rec));
	} else if (id == t->id[EV_KFREE] || id == t->id[EV_CACHE_FREE]) {
		bool cache = id == t->id[EV_CACHE_FREE];
		struct tobj o;
		uint32_t ci;

		t->ctr[cache ? PS_C_EV_CACHE_FREE : PS_C_EV_KFREE]++;
		ptr = num(t->f_ptr[cache ? EV_CACHE_FREE : EV_KFREE], rec);
		if (!ptr) {
			t->ctr[PS_C_KFREE_NULL]++;
			return 0;
		}
		if (obj_free(t, ptr, &o)) {
			t->tc[o.cls].v.frees++;
			t->tc[o.cls].v.free_bytes += o.bytes;
			return 0;
		}
		/* older than the recording: its cache counts it, when the event names one */
		t->ctr[PS_C_PREEXISTING_FREES]++;
		name = cache ? dl_str(t->f_name[EV_CACHE_FREE], rec, &nlen) : NULL;
		if (!name) {
			t->ctr[PS_C_NO_KMEM_CACHE]++;
			return 0;
		}
		if (cls_index(t, name_cls(name, nlen), name, nlen, &ci))
			return -ENOMEM;
		t->tc[ci].v.frees++;
		t->tc[ci].v.free_bytes += t->tc[ci].size;
		t->tc[ci].v.s_pre_frees++;
		t->tc[ci].v.s_pre_free_bytes += t->tc[ci].size;
	} else if (id == t->id[EV_PAGE_ALLOC]) {
		uint64_t pfn = num(t->f_pfn[EV_PAGE_ALLOC], rec);
		uint64_t order = num(t->f_order[EV_PAGE_ALLOC], rec);
		uint64_t *pend = cpu >= 0 && cpu < t->ncpus ? &t->pend_obj[cpu] : NULL;

		t->ctr[PS_C_EV_PAGE_ALLOC]++;
		/*
		 * The trigger's kernel_stack follows every page allocation on its CPU, ours and
		 * failed ones too: it is this one's, never an earlier one's whose stack was lost.
		 */
		if (pend)
			*pend = 0;
		if (pfn == UINT64_MAX || order > PS_MAX_ORDER)
			return 0;	/* a failed allocation */
		k.kind = PS_K_PAGE;
		k.cls = PS_CLASS_PAGE_BASE + order;
		k.site = PS_SITE_NOSTACK;
		k.ctx = ctx_of(t, rec);
		k.mt = mt_of((int64_t)(int32_t)num(t->f_mt, rec));
		bool mine = self(t, rec);

		e = alloc_one(t, mine ? NULL : &k, k.cls, NULL, 0, pfn | (1ull << 63),
			      t->page_size << order);
		if (!e && !mine && t->stacks && pend) {
			*pend = pfn | (1ull << 63);
			t->pend_key[cpu] = k;
		}
	} else if (id == t->id[EV_PAGE_FREE]) {
		uint64_t pfn = num(t->f_pfn[EV_PAGE_FREE], rec);
		uint64_t order = num(t->f_order[EV_PAGE_FREE], rec);
		uint64_t pbytes = t->page_size << (order & 31);
		struct tobj o;
		uint32_t ci;

		t->ctr[PS_C_EV_PAGE_FREE]++;
		if (obj_free(t, pfn | (1ull << 63), &o)) {
			t->tc[o.cls].v.frees++;
			t->tc[o.cls].v.free_bytes += o.bytes;
			return 0;
		}
		if (order > PS_MAX_ORDER)
			return 0;
		if (cls_index(t, PS_CLASS_PAGE_BASE + order, NULL, 0, &ci))
			return -ENOMEM;
		t->tc[ci].v.frees++;
		t->tc[ci].v.free_bytes += pbytes;
		t->tc[ci].v.s_pre_frees++;
		t->tc[ci].v.s_pre_free_bytes += pbytes;
	} else if (id == t->id[EV_STACK]) {
		e = on_stack(t, rec, cpu);
	}
	if (e) {
		tracefs_iterate_stop(t->inst);
		return e;
	}
	return 0;
}

/* Ring-buffer events lost (overwritten before they were read), summed over the CPUs. */
static uint64_t overruns(struct rec_tfs *t)
{
	uint64_t sum = 0;
	char file[64];

	for (int c = 0; c < t->ncpus; c++) {
		char *s, *p;

		snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", c);
		s = tracefs_instance_file_read(t->inst, file, NULL);
		if (!s)
			continue;
		if ((p = strstr(s, "overrun:")))
			sum += strtoull(p + 8, NULL, 10);
		if ((p = strstr(s, "dropped events:")))
			sum += strtoull(p + 15, NULL, 10);
		free(s);
	}
	return sum;
}

int rec_tracefs_event(struct rec *r, struct tep_record *record, int cpu)
{
	struct tep_event *ev = tep_find_event_by_record(r->tfs->tep, record);

	return ev ? on_event(ev, record, cpu, r) : 0;
}

int rec_tracefs_drain(struct rec *r)
{
	int e;

	if (!r->tfs || !r->tfs->inst)
		return 0;
	e = tracefs_iterate_raw_events(r->tfs->tep, r->tfs->inst, NULL, 0, on_event, r);
	return e < 0 ? tfs_fail(r, -EIO, "reading the ring buffers") : 0;
}

/* --- setup ----------------------------------------------------------------------------- */

static int find_fields(struct rec *r)
{
	struct rec_tfs *t = r->tfs;
	struct tep_event *ev[EV__N];

	for (int i = 0; i < EV__N; i++) {
		ev[i] = tep_find_event_by_name(t->tep, ev_sys[i], ev_name[i]);
		t->id[i] = ev[i] ? ev[i]->id : -1;
		if (!ev[i] && i != EV_STACK) {
			snprintf(r->err, r->errlen, "tracefs backend: the kernel has no %s:%s "
				 "tracepoint", ev_sys[i], ev_name[i]);
			return -ENOENT;
		}
	}
	t->f_flags = tep_find_common_field(ev[EV_KMALLOC], "common_flags");
	t->f_pid = tep_find_common_field(ev[EV_KMALLOC], "common_pid");
	for (int i = 0; i < EV_STACK; i++) {
		t->f_site[i] = tep_find_field(ev[i], "call_site");
		t->f_ptr[i] = tep_find_field(ev[i], "ptr");
		t->f_name[i] = tep_find_field(ev[i], "name");
		t->f_pfn[i] = tep_find_field(ev[i], "pfn");
		t->f_order[i] = tep_find_field(ev[i], "order");
		t->f_balloc[i] = tep_find_field(ev[i], "bytes_alloc");
	}
	t->f_gfp = tep_find_field(ev[EV_KMALLOC], "gfp_flags");
	t->f_mt = tep_find_field(ev[EV_PAGE_ALLOC], "migratetype");
	if (ev[EV_STACK]) {
		t->f_ssize = tep_find_field(ev[EV_STACK], "size");
		t->f_caller = tep_find_field(ev[EV_STACK], "caller");
	}
	if (!t->f_ptr[EV_KMALLOC] || !t->f_ptr[EV_KFREE] || !t->f_balloc[EV_KMALLOC] ||
	    !t->f_name[EV_CACHE_ALLOC] || !t->f_pfn[EV_PAGE_ALLOC] || !t->f_order[EV_PAGE_ALLOC]) {
		snprintf(r->err, r->errlen, "tracefs backend: the kmem tracepoints lack the fields "
			 "it reads (ptr, bytes_alloc, name, pfn, order)");
		return -ENOENT;
	}
	return 0;
}

/*
 * Instances of recorders that were killed (SIGKILL leaves no time to remove one): each holds
 * its ring buffers and keeps the kmem events enabled, so they go before a new one is made.
 */
static void remove_stale(void)
{
	/* a pattern that reads the same as a basic and as an extended regex */
	char **names = tracefs_instances("^poolscope-[0-9][0-9]*$");

	for (char **n = names; n && *n; n++) {
		int pid = atoi(*n + strlen("poolscope-"));
		struct tracefs_instance *inst;

		if (pid <= 0 || !kill(pid, 0) || errno != ESRCH)
			continue;
		inst = tracefs_instance_alloc(NULL, *n);
		if (inst) {
			tracefs_instance_destroy(inst);
			tracefs_instance_free(inst);
		}
	}
	tracefs_list_free(names);
}

int rec_tracefs_mirror(struct rec *r, struct tep_handle *tep, int self)
{
	struct rec_tfs *t = calloc(1, sizeof(*t));
	int e;
	if (!t)
		return tfs_fail(r, -ENOMEM, "memory");
	r->tfs = t;
	t->ncpus = r->ncpus;
	t->self = self;
	if (ps_htab_init(&t->keys, sizeof(struct ps_tag_key)) ||
	    ps_htab_init(&t->cls, sizeof(uint64_t)) || ps_htab_init(&t->objs, sizeof(uint64_t)) ||
	    ps_htab_init(&t->stk_by_hash, sizeof(uint64_t)) ||
	    !(t->pend_obj = calloc(t->ncpus, sizeof(*t->pend_obj))) ||
	    !(t->pend_key = calloc(t->ncpus, sizeof(*t->pend_key))))
		return tfs_fail(r, -ENOMEM, "memory");
	t->tep = tep;
	t->page_size = tep_get_page_size(tep) > 0 ? (uint64_t)tep_get_page_size(tep) :
		       (uint64_t)sysconf(_SC_PAGESIZE);
	e = find_fields(r);
	/* a capture's stacks come with it; live, open() turns the trigger on */
	t->stacks = !e && t->id[EV_STACK] >= 0 && t->f_ssize && t->f_caller;
	return e;
}

int rec_tracefs_open(struct rec *r)
{
	static const char *const systems[] = { "kmem", "ftrace", NULL };
	struct tep_handle *tep;
	struct rec_tfs *t;
	char name[64];
	int e;

	if (rec_filtered(r->o)) {
		snprintf(r->err, r->errlen, "tracefs backend: --comm, --pid and --cgroup need the "
			 "BPF backend");
		return -EINVAL;
	}
	/* finds tracefs, mounting it when it is not */
	if (!tracefs_tracing_dir()) {
		snprintf(r->err, r->errlen, "tracefs backend: tracefs is not mounted and cannot be "
			 "(mount -t tracefs nodev /sys/kernel/tracing)");
		return -ENOENT;
	}
	tep = tracefs_local_events_system(NULL, systems);
	if (!tep) {
		snprintf(r->err, r->errlen, "tracefs backend: cannot read the kmem event formats "
			 "(%s)", strerror(errno ? errno : EACCES));
		return -(errno ? errno : EACCES);
	}
	e = rec_tracefs_mirror(r, tep, (int)getpid());
	if (r->tfs)
		r->tfs->own_tep = true;
	else
		tep_free(tep);
	if (e)
		return e;
	t = r->tfs;
	remove_stale();
	snprintf(name, sizeof(name), "poolscope-%d", (int)getpid());
	t->inst = tracefs_instance_create(name);
	if (!t->inst) {
		e = errno ? -errno : -EACCES;
		snprintf(r->err, r->errlen, "tracefs backend: cannot create the instance %s: %s",
			 name, strerror(-e));
		return e;
	}
	tracefs_instance_set_buffer_size(t->inst, TFS_BUFFER_KB, -1);
	for (int i = 0; i < EV_STACK; i++)
		if (tracefs_event_enable(t->inst, ev_sys[i], ev_name[i])) {
			snprintf(r->err, r->errlen, "tracefs backend: cannot enable %s:%s",
				 ev_sys[i], ev_name[i]);
			return -EACCES;
		}
	/* a kernel stack after each page allocation: its call site, and whether it is a slab's */
	t->stacks = t->id[EV_STACK] >= 0 && t->f_ssize && t->f_caller &&
		    tracefs_event_file_write(t->inst, "kmem", "mm_page_alloc", "trigger",
					     "stacktrace") > 0;
	tracefs_trace_on(t->inst);
	t->overrun_base = overruns(t);
	return 0;
}

/* The mirror, as the BPF poll leaves it in the snapshot. */
int rec_tracefs_poll(struct rec *r)
{
	struct rec_tfs *t = r->tfs;
	struct snap *s = &r->snap;
	int e = rec_tracefs_drain(r);

	if (e)
		return e;
	/*
	 * A page whose stack event has not come yet stays in its tag without a stack: once this
	 * snapshot holds its allocation there, moving it would take it out of an interval that
	 * is already written (its tag's allocations in the next one below zero).
	 */
	memset(t->pend_obj, 0, t->ncpus * sizeof(*t->pend_obj));
	for (size_t i = 0; i < t->ntk; i++) {
		struct snap_tag *st;

		if (SNAP_PUSH(s->tags, s->ntags, s->cap_tags))
			return -ENOMEM;
		st = &s->tags[s->ntags++];
		st->key = t->tk[i].k;
		st->sum = t->tk[i].v;
		st->frames = -1;
		if (t->tk[i].frames >= 0 && !rec_tag_known(r, &st->key)) {
			const struct tstack *sk = &t->stk[t->tk[i].frames];
			struct snap_frames *f;

			if (SNAP_PUSH(s->frames, s->nframes, s->cap_frames))
				return -ENOMEM;
			f = &s->frames[s->nframes];
			memset(f, 0, sizeof(*f));
			f->id = t->tk[i].frames;
			f->n = sk->n;
			memcpy(f->ips, sk->ips, sk->n * sizeof(sk->ips[0]));
			st->frames = (int32_t)s->nframes++;
		}
	}
	for (size_t i = 0; i < t->ntc; i++) {
		struct snap_cache *c;

		if (SNAP_PUSH(s->classes, s->nclasses, s->cap_classes))
			return -ENOMEM;
		s->classes[s->nclasses].cls = t->tc[i].cls;
		s->classes[s->nclasses++].v = t->tc[i].v;
		if (!t->tc[i].name[0] || rec_class_known(r, t->tc[i].cls) ||
		    ps_htab_get(&s->cache_by_cls, &t->tc[i].cls))
			continue;
		if (SNAP_PUSH(s->caches, s->ncaches, s->cap_caches) ||
		    ps_htab_put(&s->cache_by_cls, &t->tc[i].cls, (void *)(uintptr_t)(s->ncaches + 1)))
			return -ENOMEM;
		c = &s->caches[s->ncaches++];
		memset(c, 0, sizeof(*c));
		c->cls = t->tc[i].cls;
		c->ok = true;
		memcpy(c->ci.name, t->tc[i].name, sizeof(c->ci.name));
		c->ci.flags = t->tc[i].flags;
	}
	t->overrun = t->inst ? overruns(t) - t->overrun_base : 0;
	t->ctr[PS_C_DROP_RING_OVERRUN] = t->overrun;
	for (int i = 0; i < PS_C_MAX; i++) {
		s->ctr[i] = t->ctr[i];
		s->ctr_ok[i] = true;
	}
	return 0;
}

void rec_tracefs_close(struct rec *r)
{
	struct rec_tfs *t = r->tfs;

	if (!t)
		return;
	if (t->inst) {
		tracefs_trace_off(t->inst);
		tracefs_instance_destroy(t->inst);
		tracefs_instance_free(t->inst);
	}
	if (t->own_tep)
		tep_free(t->tep);
	ps_htab_fini(&t->keys);
	ps_htab_fini(&t->cls);
	ps_htab_fini(&t->objs);
	ps_htab_fini(&t->stk_by_hash);
	free(t->tk);
	free(t->tc);
	free(t->ob);
	free(t->freelist);
	free(t->stk);
	free(t->pend_obj);
	free(t->pend_key);
	free(t);
	r->tfs = NULL;
}
