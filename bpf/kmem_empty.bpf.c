// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark floor: empty tp_btf programs on the same six kmem tracepoints that
 * kmem.bpf.c uses. tests/bench/record_cost.sh attaches them (poolscope record --empty-probes)
 * to measure what attaching any BPF program costs per event, against which the recorder's
 * added cost is compared.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/kmem_cache_alloc")
int BPF_PROG(e_cache_alloc) { return 0; }
SEC("tp_btf/kmem_cache_free")
int BPF_PROG(e_cache_free) { return 0; }
SEC("tp_btf/kmalloc")
int BPF_PROG(e_kmalloc) { return 0; }
SEC("tp_btf/kfree")
int BPF_PROG(e_kfree) { return 0; }
SEC("tp_btf/mm_page_alloc")
int BPF_PROG(e_page_alloc) { return 0; }
SEC("tp_btf/mm_page_free")
int BPF_PROG(e_page_free) { return 0; }
