// SPDX-License-Identifier: GPL-2.0
/*
 * What a call costs inside a tracing program on this machine (tests/bench/call_cost.sh): the
 * same work with and without helper calls, and the bpf_get_kmem_cache() kfunc that the
 * recorder's kmalloc and kfree programs call on every event. Attached all at once to
 * kmem_cache_alloc (a_*) and kmem_cache_free (f_*), so every event runs each of them and
 * bpf_stats gives each its own run time. Each program but the empty one stores to the same
 * global, so the differences between them are the calls alone.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

extern struct kmem_cache *bpf_get_kmem_cache(__u64 addr) __ksym __weak;

char LICENSE[] SEC("license") = "GPL";

__u64 sink;

#define VARIANTS(tp, p)									\
SEC("tp_btf/" #tp)									\
int BPF_PROG(p##_empty, unsigned long cs, const void *ptr) { return 0; }		\
SEC("tp_btf/" #tp)									\
int BPF_PROG(p##_store, unsigned long cs, const void *ptr)				\
{ sink += (__u64)ptr; return 0; }							\
SEC("tp_btf/" #tp)									\
int BPF_PROG(p##_call1, unsigned long cs, const void *ptr)				\
{ sink += bpf_get_prandom_u32(); return 0; }						\
SEC("tp_btf/" #tp)									\
int BPF_PROG(p##_call2, unsigned long cs, const void *ptr)				\
{ sink += bpf_get_prandom_u32() + bpf_get_prandom_u32(); return 0; }			\
SEC("tp_btf/" #tp)									\
int BPF_PROG(p##_kfunc, unsigned long cs, const void *ptr)				\
{											\
	struct kmem_cache *s = bpf_get_kmem_cache((__u64)ptr);				\
											\
	sink += s ? s->size : 0;							\
	return 0;									\
}

VARIANTS(kmem_cache_alloc, a)
VARIANTS(kmem_cache_free, f)
