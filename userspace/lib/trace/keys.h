/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace contract: every name a writer stores and a reader looks up, besides the SQL schema.
 * The recorder, the converters, load, analysis and plot spell these names only through this
 * header, so a key cannot be written one way and read another. docs/trace-format.md documents
 * what each one means; keep the two in step.
 *
 * Four kinds of name:
 *   meta       one text value per trace (table meta)
 *   sysstat    a system-wide counter in bytes per interval (table sysstat): /proc/meminfo
 *              fields under their own names on Linux, the pool totals on Windows
 *   counter    a cumulative number per interval (table counters): events seen, drops, the
 *              recorder's exact per-class totals and its costs
 *   tag field  the kind, pool and flags of a tag (table tags)
 */
#ifndef PS_TRACE_KEYS_H
#define PS_TRACE_KEYS_H

/* --- meta ------------------------------------------------------------------------------------ */

#define PS_META_OS			"os"		/* PS_OS_LINUX or PS_OS_WINDOWS */
#define PS_OS_LINUX			"linux"
#define PS_OS_WINDOWS			"windows"
#define PS_META_SOURCE			"source"	/* PS_SOURCE_* */
#define PS_SOURCE_RECORD		"record"
#define PS_SOURCE_LOAD			"load"
#define PS_SOURCE_ETL			"etl"
#define PS_SOURCE_POOLUSED		"poolused"
#define PS_SOURCE_POOLMON		"poolmon"
#define PS_SOURCE_WIN_SAMPLE		"poolscope-win-sample"
#define PS_SOURCE_TRACE_CMD		"trace-cmd"	/* convert of a trace-cmd trace.dat */
#define PS_META_LABEL			"label"
#define PS_META_HOST			"host"
#define PS_META_KERNEL			"kernel"
#define PS_META_KERNEL_BUILD_ID		"kernel_build_id" /* hex, /sys/kernel/notes */
#define PS_META_SRCLINES		"srclines"	/* the debuginfo the lines came from */
#define PS_META_ARCH			"arch"
#define PS_META_BOOT_ID			"boot_id"
#define PS_META_OS_VERSION		"os_version"
#define PS_META_OS_BUILD		"os_build"
#define PS_META_CPUS			"cpus"		/* converted traces */
#define PS_META_NCPUS			"ncpus"		/* recorded traces */
#define PS_META_POINTER_SIZE		"pointer_size"
#define PS_META_PAGE_SIZE		"page_size"
#define PS_META_START_WALL_NS		"start_wall_ns"
#define PS_META_INTERVAL_NS		"interval_ns"
#define PS_META_TOOL_VERSION		"tool_version"
#define PS_META_CMDLINE			"cmdline"
/* "1": live_* of samples are absolute (snapshots); "0" or absent: counted from the start. */
#define PS_META_LIVE_ABSOLUTE		"live_absolute"
#define PS_META_TORN_SNAPSHOTS		"torn_snapshots_dropped"
#define PS_META_CLOCK_STEPS_BACK	"clock_steps_back"	/* sample files */
#define PS_META_SITE_SAMPLE_RATE	"site_sample_rate"
#define PS_META_STACK_SAMPLE_RATE	"stack_sample_rate"
#define PS_META_PAGE_STACK_SAMPLE_RATE	"page_stack_sample_rate"
#define PS_META_STACKS_UNRESOLVED_KEYS	"stacks_unresolved_keys"
/* The recorder's BPF map sizes, so a report can name the one that filled. */
#define PS_META_MAP_TAGS		"map.tags"
#define PS_META_MAP_PTRS		"map.ptrs"
#define PS_META_MAP_STACKS		"map.stacks"
#define PS_META_MAP_STACK_COUNTS	"map.stack_counts"
#define PS_META_MAP_CLASSES		"map.classes"
#define PS_META_MAP_CLASS_SLOTS		"map.class_slots"
#define PS_META_FILTER_COMM		"filter.comm"
#define PS_META_FILTER_PID		"filter.pid"
#define PS_META_FILTER_CGROUP		"filter.cgroup"
#define PS_META_PAGES_POLICY		"pages.double_count_policy"
#define PS_META_DISABLED_TPS		"disabled_tracepoints"
#define PS_META_EMPTY_PROBES		"empty_probes"
#define PS_META_KMALLOC_TRACKING	"kmalloc_tracking"	/* "kmem-cache-kfunc" or "pointer-map" */
#define PS_META_BACKEND		"backend"		/* record: "bpf" or "tracefs" */
/*
 * "1": slabinfo and counters rows are written only when their value changed (and all of them
 * in the first and last interval and every PS_SPARSE_KEYFRAME intervals); a reader carries each
 * value forward to the next row of its series (sysstat too, should a writer leave rows out).
 */
#define PS_META_SPARSE_SERIES		"sparse_series"
#define PS_SPARSE_KEYFRAME		600
#define PS_META_ETL_LOGGER		"etl_logger"
#define PS_META_ETL_CLOCK_TYPE		"etl_clock_type"
#define PS_META_ETL_CPU_MHZ		"etl_cpu_mhz"
/* load: the workload's target, queue depth, workers, and "workload.step<N>" per step. */
#define PS_META_WORKLOAD_TARGET		"workload.target"
#define PS_META_WORKLOAD_QD		"workload.qd"
#define PS_META_WORKLOAD_WORKERS	"workload.workers"
#define PS_META_WORKLOAD_STEP_FMT	"workload.step%d"
#define PS_META_WORKLOAD_INJECT		"workload.inject"

/* --- sysstat --------------------------------------------------------------------------------- */

/* Linux: every /proc/meminfo field is stored under its name; these are the ones read. */
#define PS_SYS_SUNRECLAIM		"SUnreclaim"
#define PS_SYS_SRECLAIMABLE		"SReclaimable"
#define PS_SYS_SLAB			"Slab"
/* /proc/net/sockstat: memory charged to TCP and UDP sockets and IP reassembly, in bytes. */
#define PS_SYS_SOCK_TCP_MEM		"sock.tcp_mem"
#define PS_SYS_SOCK_UDP_MEM		"sock.udp_mem"
#define PS_SYS_SOCK_FRAG_MEM		"sock.frag_mem"
/* Windows: the pool totals of the system, and what the listed tags add up to. */
#define PS_SYS_NONPAGED			"NonPagedPool"
#define PS_SYS_PAGED			"PagedPool"
#define PS_SYS_AVAILABLE		"AvailableBytes"
#define PS_SYS_NONPAGED_TAGGED		"NonPagedPoolTagged"
#define PS_SYS_PAGED_TAGGED		"PagedPoolTagged"

/* --- counters -------------------------------------------------------------------------------- */

/* Every counter whose name starts with this counts something lost (report's drops total). */
#define PS_CTR_DROPS_PREFIX		"drops."
#define PS_CTR_DROP_PTR_MAP_FULL	"drops.ptr_map_full"
/* Per BPF program "recursion_misses.<prog>": events the kernel skipped for re-entry. */
#define PS_CTR_RECURSION_PREFIX		"recursion_misses"
#define PS_CTR_RECURSION_FMT		"recursion_misses.%s"
/* Per BPF program, only while kernel.bpf_stats_enabled=1. */
#define PS_CTR_BPF_RUN_NS_FMT		"bpf_stats.%s.run_ns"
#define PS_CTR_BPF_RUNS_FMT		"bpf_stats.%s.runs"
#define PS_CTR_RECORDER_CPU_NS		"recorder.cpu_ns"
/*
 * The recorder's exact per-class totals, "class.<class>.<field>": every traced alloc and free
 * of a slab cache or kmalloc bucket ("pages" and "percpu" too), whatever the sampling.
 */
#define PS_CTR_CLASS_FMT		"class.%s.%s"
#define PS_CTR_CLASS_ALLOCS		"allocs"
#define PS_CTR_CLASS_FREES		"frees"
#define PS_CTR_CLASS_ALLOC_BYTES	"alloc_bytes"
#define PS_CTR_CLASS_FREE_BYTES		"free_bytes"
#define PS_CTR_CLASS_PRE_FREES		"preexisting_frees"
#define PS_CTR_CLASS_PRE_FREE_BYTES	"preexisting_free_bytes"
/* Scaled estimates: frees implied by a reused address, frees of objects older than the run. */
#define PS_CTR_IMPLICIT_FREES		"implicit_frees"
#define PS_CTR_PREEXISTING_FREES	"preexisting_frees"
/* Text snapshots converted so far. */
#define PS_CTR_SNAPSHOTS		"snapshots"

/* --- tag fields ------------------------------------------------------------------------------ */

/* tags.kind */
#define PS_KIND_SLAB	"slab"		/* named kmem_cache (kmem_cache_alloc)           */
#define PS_KIND_KMALLOC	"kmalloc"	/* kmalloc-N bucket, keyed by call site          */
#define PS_KIND_PAGE	"page"		/* page allocator, order-N, keyed by call site   */
#define PS_KIND_PERCPU	"percpu"	/* percpu allocator                              */
#define PS_KIND_POOL	"pool"		/* Windows pool tag (pool = nonpaged/paged/...)  */

/* tags.pool */
#define PS_POOL_UNRECLAIMABLE	"unreclaimable"
#define PS_POOL_RECLAIMABLE	"reclaimable"
#define PS_POOL_NONPAGED	"nonpaged"
#define PS_POOL_PAGED		"paged"
#define PS_POOL_SESSION		"session"

/*
 * tags.domain: who can give the memory back (docs/trace-format.md, "Memory domains").
 *   kernel       the kernel cannot reclaim it: unreclaimable slabs and kmalloc, skb data and page
 *                frags, vmalloc, kernel stacks, percpu, other kernel pages; Windows non-paged pool
 *   reclaimable  reclaimable slabs (dentries, inodes), page cache; Windows paged pool
 *   user         process memory (anonymous, COW, user-mapped pages) and the page tables mapping it
 */
#define PS_DOMAIN_KERNEL	"kernel"
#define PS_DOMAIN_RECLAIMABLE	"reclaimable"
#define PS_DOMAIN_USER		"user"

/* tags.flags */
#define PS_TAG_F_RECLAIMABLE	0x1	/* SReclaimable / paged pool: can leave RAM under pressure */
#define PS_TAG_F_SLAB_BACKING	0x2	/* pages backing slabs or large kmalloc: counted elsewhere  */
#define PS_TAG_F_SAMPLED	0x4	/* counts are scaled from an address-hash sample          */
#define PS_TAG_F_OWNER_BUILTIN	0x8	/* owner from the built-in pool tag table, not pooltag.txt */
#define PS_TAG_F_BORN_LATE	0x10	/* snapshots: first listed with every allocation it ever made
					   since the previous refresh, so it held nothing before */


#endif
