/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The libbpf side of `poolscope record`: loads bpf/kmem.bpf.c, attaches it, optionally starts
 * a command, polls the maps once per interval and writes one trace interval per poll
 * (userspace/lib/trace; out NULL: no trace, the metrics endpoint only). cmd-record.c parses options and checks privileges; everything that
 * touches BPF lives here.
 */
#ifndef PS_RECORD_RECORDER_H
#define PS_RECORD_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the probes are: BPF programs, the tracefs ring buffers, or BPF and tracefs where it fails. */
enum ps_backend { PS_BACKEND_AUTO, PS_BACKEND_BPF, PS_BACKEND_TRACEFS };

struct ps_record_opts {
	const char *out;
	const char *label;
	bool force;
	uint64_t duration_ns;		/* 0: until signal / command exit */
	uint64_t interval_ns;
	uint32_t site_sample;		/* power of two, 1 = every object */
	uint32_t stack_sample;		/* 1 in N sampled slab allocations get a stack; 0 off */
	const char *comm;
	int pid;
	const char *cgroup;
	uint32_t map_tags, map_ptrs, map_stacks, map_stack_counts, map_classes;	/* ptrs 0: auto */
	uint32_t map_class_slots;		/* power of two */
	bool empty_probes;		/* benchmark floor: attach empty programs, count nothing */
	bool no_kfunc;			/* act as on a kernel without bpf_get_kmem_cache() */
	bool status;			/* live status line on stderr (a terminal) */
	bool quiet;			/* no status line, no start and end lines */
	char **cmd;			/* NULL or argv of the command to run */
	const char *cmdline;		/* our own command line, for meta */
	uint64_t min_free;		/* stop when the trace's filesystem has less free; 0: never */
	bool min_free_set;		/* given by the user (else 1 GiB or 5 %, the smaller) */
	const char *listen;		/* ADDRESS:PORT of the metrics endpoint, or NULL */
	unsigned listen_top;		/* tags per path on the metrics page */
	uint64_t listen_window_ns;	/* the window of the page's verdict */
	enum ps_backend backend;
	const char *vmlinux;		/* debuginfo for source lines: as given, or searched */
	const char *debuginfo;		/* in this debug root (default /usr/lib/debug) */
};

/* Runs a whole recording. Returns 0, or -errno with a message in err. */
int ps_record_run(const struct ps_record_opts *o, char *err, size_t errlen);

/* Asks a running ps_record_run() to stop at the next poll (signal-safe). */
void ps_record_stop(void);

#endif
