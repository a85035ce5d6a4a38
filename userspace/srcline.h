/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Source lines of kernel call sites and stack frames from debuginfo (DWARF, through elfutils'
 * libdw): "fs/file_table.c:225" and the inlined function, for the srclines table and the
 * rules' src field (srcline.c).
 */
#ifndef PS_SRCLINE_H
#define PS_SRCLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "userspace/lib/trace/trace.h"

struct ps_srcmap;

/* Where a map's debuginfo comes from: any field may be NULL. */
struct ps_srcmap_opts {
	const char *vmlinux;	/* the kernel image with DWARF, used as given */
	const char *debuginfo;	/* a debug root searched as /usr/lib/debug is (the default) */
	const char *release;	/* the traced kernel (meta kernel): where vmlinux and modules are */
	const char *build_id;	/* the traced kernel's build id (hex): a vmlinux must have it */
};

/*
 * Finds the kernel's debuginfo: opts->vmlinux, else the usual places of the debug root (its
 * .build-id link, boot/vmlinux-RELEASE, lib/modules/RELEASE/vmlinux; and /boot/vmlinux-RELEASE,
 * /lib/modules/RELEASE/build/vmlinux for the default root), and the modules under
 * DEBUGROOT/lib/modules/RELEASE. Returns 0; -ENOENT when nothing was found (err says where it
 * looked); -EINVAL when a given file cannot serve (not ELF, no DWARF, another build id), with
 * err naming it.
 */
int ps_srcmap_open(struct ps_srcmap **out, const struct ps_srcmap_opts *opts, char *err,
		   size_t errlen);
void ps_srcmap_free(struct ps_srcmap *m);
/* The vmlinux file the map reads, or NULL when it has modules only. */
const char *ps_srcmap_vmlinux(const struct ps_srcmap *m);

/*
 * The source line of sym+off in module (NULL or "" for vmlinux). off is a return address's
 * offset (call sites and frames are): the line looked up is that of the byte before it.
 * Returns 0 with out filled (its strings live until the next lookup), -ENOENT when the module
 * has no debuginfo, the symbol is not in it (or is ambiguous) or the address has no line,
 * -ENOMEM.
 */
int ps_srcmap_lookup(struct ps_srcmap *m, const char *module, const char *sym, uint64_t off,
		     struct ps_src *out);

/* Resolves every call site and frame of r and links them (ps_run_link_srcs). */
int ps_srcmap_annotate_run(struct ps_srcmap *m, struct ps_run *r, size_t *nkeys,
			   size_t *nfound);
/* The same for a trace being written: the lines go into its srclines table. */
int ps_srcmap_annotate_trace(struct ps_srcmap *m, struct ps_trace *t, size_t *nkeys,
			     size_t *nfound);

/*
 * The running kernel's build id, hex, from /sys/kernel/notes (path: another notes file, for
 * modules). -ENOENT when it has none.
 */
int ps_kernel_build_id(const char *path, char *buf, size_t len);

/*
 * For the analysis commands: with --vmlinux or --debuginfo given (either may be NULL; both NULL
 * does nothing: the trace's own lines stay), reads the lines of r's call sites and frames from
 * that debuginfo instead of the trace's. Prints one line on stderr saying how many were found;
 * returns 0, or -1 after printing "poolscope CMD: ..." when the debuginfo cannot serve. lenient:
 * finding nothing for r's kernel keeps r's own lines, said on one line (diff: two kernels).
 */
int ps_srcline_apply(const char *cmd, struct ps_run *r, const char *vmlinux,
		     const char *debuginfo, bool lenient);

#endif
