// SPDX-License-Identifier: GPL-2.0
/*
 * bigtrace OUT SECONDS TAGS ACTIVE_PERCENT: writes a trace as a long recording would, for the
 * streaming benchmark (tests/bench/bigtrace.sh): SECONDS intervals of 1 s, TAGS slab and kmalloc
 * tags on call sites of the network, file-services and other paths, of which ACTIVE_PERCENT
 * change in each interval (a row only then, as the recorder writes), and three that leak (one
 * object a second on the network path, file-services and other take turns) all the time.
 * SUnreclaim and the caches' slabinfo follow the tags. Deterministic (fixed seed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/lib/trace/keys.h"
#include "userspace/lib/trace/trace.h"

static const char *const sites[] = {
	"tcp_sendmsg_locked", "__alloc_skb", "sk_prot_alloc", "inet_create", "tcp_conn_request",
	"alloc_empty_file", "d_alloc", "alloc_inode", "ext4_alloc_inode", "smb2_read",
	"copy_process", "mm_alloc", "vm_area_alloc", "proc_alloc_inode", "seq_open",
};
static const char *const caches[] = { "kmalloc-64", "kmalloc-128", "kmalloc-256", "kmalloc-512",
				      "kmalloc-1k", "filp", "dentry", "skbuff_head_cache",
				      "TCP", "vm_area_struct" };

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	struct ps_trace *t;
	long secs, ntags, active;
	int64_t *live, *ids;
	char syms[64], names[64];
	int e;

	if (argc != 5 || (secs = atol(argv[2])) < 2 || (ntags = atol(argv[3])) < 4 ||
	    (active = atol(argv[4])) < 0 || active > 100) {
		fprintf(stderr, "usage: bigtrace OUT SECONDS TAGS ACTIVE_PERCENT\n");
		return 2;
	}
	live = calloc(ntags, sizeof(*live));
	ids = calloc(ntags, sizeof(*ids));
	if (!live || !ids)
		return 1;
	e = ps_trace_create(&t, argv[1], PS_TRACE_F_FORCE | PS_TRACE_F_BATCH);
	if (e) {
		fprintf(stderr, "bigtrace: %s: %s\n", argv[1], strerror(-e));
		return 1;
	}
	e = ps_trace_set_meta(t, "os", "linux") ?: ps_trace_set_meta(t, "source", "record") ?:
	    ps_trace_set_meta(t, "label", "bigtrace") ?:
	    ps_trace_set_meta_int(t, "interval_ns", 1000000000) ?:
	    ps_trace_set_meta_int(t, "site_sample_rate", 16) ?:
	    ps_trace_set_meta_int(t, "stack_sample_rate", 1024);
	for (long i = 0; i < ntags && !e; i++) {
		const char *cache = caches[i % (sizeof(caches) / sizeof(caches[0]))];
		struct ps_tag tag = { .kind = strncmp(cache, "kmalloc", 7) ? PS_KIND_SLAB :
						  PS_KIND_KMALLOC,
				      .name = cache, .cache = cache, .flags = PS_TAG_F_SAMPLED,
				      .domain = PS_DOMAIN_KERNEL, .ctx = "task" };

		snprintf(syms, sizeof(syms), "%s+0x%lx",
			 sites[i % (sizeof(sites) / sizeof(sites[0]))], 16 + 8 * (i / 15));
		tag.site = 0xffffffff81000000ull + (uint64_t)i * 64;
		tag.site_sym = syms;
		e = ps_trace_add_tag(t, &tag);
		ids[i] = tag.id;
	}
	(void)names;
	for (long k = 0; k < secs && !e; k++) {
		int64_t total = 0;

		e = ps_trace_begin_interval(t, (uint32_t)k, (uint64_t)k * 1000000000ull,
					    1796000000000000000ull + (uint64_t)k * 1000000000ull,
					    k ? 1000000000ull : 0);
		for (long i = 0; i < ntags && !e; i++) {
			bool leak = i < 3;
			struct ps_sample s = { 0 };

			if (k && !leak && (long)(next() % 100) >= active)
				continue;
			if (leak) {
				s.allocs = 16;
				s.alloc_bytes = 16 * 256;
			} else {
				uint64_t a = next() % 64, f = next() % 64;

				/* a walk held near 0: frees never take it below what it holds */
				if (live[i] < (int64_t)(f * 128))
					f = 0;
				s.allocs = a * 16;
				s.frees = f * 16;
				s.alloc_bytes = a * 16 * 128;
				s.free_bytes = f * 16 * 128;
			}
			live[i] += (int64_t)s.alloc_bytes - (int64_t)s.free_bytes;
			s.live_bytes = live[i];
			s.live_objs = live[i] / (leak ? 256 : 128);
			e = ps_trace_add_sample(t, ids[i], &s);
		}
		for (long i = 0; i < ntags; i++)
			total += live[i];
		if (!e)
			e = ps_trace_add_sysstat(t, PS_SYS_SUNRECLAIM, 200000000 + total);
		for (size_t c = 0; c < sizeof(caches) / sizeof(caches[0]) && !e; c++) {
			int64_t sum = 0;
			struct ps_slabinfo si = { .cache = caches[c], .objsize = 128,
						  .objperslab = 32, .pagesperslab = 1 };

			for (long i = (long)c; i < ntags; i += sizeof(caches) / sizeof(caches[0]))
				sum += live[i];
			si.active_objs = 100000 + sum / 128;
			si.num_objs = si.active_objs + 64;
			e = ps_trace_add_slabinfo(t, &si);
		}
		if (!e)
			e = ps_trace_commit_interval(t);
	}
	if (e) {
		fprintf(stderr, "bigtrace: %s: %s\n", argv[1], ps_trace_errmsg(t));
		ps_trace_discard(t);
		return 1;
	}
	e = ps_trace_close(t);
	if (e) {
		fprintf(stderr, "bigtrace: %s: closing: %s\n", argv[1], strerror(-e));
		return 1;
	}
	return 0;
}
