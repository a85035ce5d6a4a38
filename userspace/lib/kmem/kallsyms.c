// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/kallsyms reader for the recorder: see kallsyms.h. The file has ~120k lines; it is read
 * once, names are copied into one string block and the table is sorted by address.
 */
#include "userspace/lib/kmem/kallsyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_sym(const void *a, const void *b)
{
	const struct ps_ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int ps_kallsyms_load(struct ps_kallsyms **out, const char *path, char *errbuf, size_t errlen)
{
	struct ps_kallsyms *ks;
	size_t cap = 0, scap = 0, slen = 0, nonzero = 0, linecap = 0;
	char *line = NULL, type, name[256], mod[128];
	unsigned long long addr;
	unsigned lineno = 0;
	FILE *f;
	int err = 0;

	*out = NULL;
	errbuf[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		fclose(f);
		return -ENOMEM;
	}
	/*
	 * Whole lines (getline), so that a symbol longer than a line buffer (Rust names reach
	 * KSYM_NAME_LEN, 512) is not read as a second, malformed line.
	 * Offsets into strs until the block stops moving; fixed up at the end.
	 */
	while (getline(&line, &linecap, f) > 0) {
		int n;
		size_t need;

		lineno++;
		mod[0] = 0;
		n = sscanf(line, "%llx %c %255s [%127[^]]]", &addr, &type, name, mod);
		if (n < 3) {
			snprintf(errbuf, errlen, "%s:%u: expected 'address type name [module]'", path,
				 lineno);
			err = -EINVAL;
			goto out;
		}
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (addr)
			nonzero++;
		if (ks->n == cap) {
			struct ps_ksym *ns;

			cap = cap ? cap * 2 : 65536;
			ns = realloc(ks->syms, cap * sizeof(*ns));
			if (!ns) {
				err = -ENOMEM;
				goto out;
			}
			ks->syms = ns;
		}
		need = strlen(name) + 1 + (mod[0] ? strlen(mod) + 1 : 0);
		if (slen + need > scap) {
			char *nb;

			scap = scap ? scap * 2 : 4 << 20;
			while (slen + need > scap)
				scap *= 2;
			nb = realloc(ks->strs, scap);
			if (!nb) {
				err = -ENOMEM;
				goto out;
			}
			ks->strs = nb;
		}
		ks->syms[ks->n].addr = addr;
		ks->syms[ks->n].name = (const char *)(uintptr_t)slen;
		strcpy(ks->strs + slen, name);
		slen += strlen(name) + 1;
		if (mod[0]) {
			ks->syms[ks->n].module = (const char *)(uintptr_t)(slen + 1);
			strcpy(ks->strs + slen, mod);
			slen += strlen(mod) + 1;
		} else {
			ks->syms[ks->n].module = NULL;
		}
		ks->n++;
	}
	if (ferror(f)) {
		err = -EIO;
		goto out;
	}
	if (!nonzero) {
		err = -EPERM;
		goto out;
	}
	for (size_t i = 0; i < ks->n; i++) {
		ks->syms[i].name = ks->strs + (uintptr_t)ks->syms[i].name;
		if (ks->syms[i].module)
			ks->syms[i].module = ks->strs + (uintptr_t)ks->syms[i].module - 1;
	}
	qsort(ks->syms, ks->n, sizeof(ks->syms[0]), cmp_sym);
out:
	free(line);
	fclose(f);
	if (err) {
		ps_kallsyms_free(ks);
		return err;
	}
	*out = ks;
	return 0;
}

const struct ps_ksym *ps_kallsyms_find(const struct ps_kallsyms *ks, uint64_t addr, uint64_t *off)
{
	size_t lo = 0, hi;

	if (!ks || !ks->n || addr < ks->syms[0].addr)
		return NULL;
	hi = ks->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (off)
		*off = addr - ks->syms[lo].addr;
	return &ks->syms[lo];
}

void ps_kallsyms_free(struct ps_kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->strs);
	free(ks);
}
