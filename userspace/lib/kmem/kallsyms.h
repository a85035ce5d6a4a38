/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel symbolization from /proc/kallsyms: text symbols sorted by address, binary search,
 * module names kept ("[ksmbd]" -> "ksmbd"). Load it after the BPF programs are loaded so their
 * JIT images ("bpf_prog_..." [bpf]) are in the table.
 */
#ifndef PS_KMEM_KALLSYMS_H
#define PS_KMEM_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ps_ksym {
	uint64_t addr;
	const char *name;
	const char *module;	/* NULL for vmlinux */
};

struct ps_kallsyms {
	struct ps_ksym *syms;
	size_t n;
	char *strs;		/* names and modules, one allocation */
};

/*
 * Loads path (normally /proc/kallsyms). -EPERM when every address reads as zero (not root or
 * kptr_restrict): symbolization would silently be wrong. -EINVAL for a line that is not
 * "address type name [module]", with "path:line: ..." in err; for the other errors err is
 * empty and the caller names the file.
 */
int ps_kallsyms_load(struct ps_kallsyms **out, const char *path, char *err, size_t errlen);
/* The symbol containing addr (the last one at or below it), or NULL. */
const struct ps_ksym *ps_kallsyms_find(const struct ps_kallsyms *ks, uint64_t addr, uint64_t *off);
void ps_kallsyms_free(struct ps_kallsyms *ks);

#endif
