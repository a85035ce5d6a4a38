// SPDX-License-Identifier: GPL-2.0
/*
 * The /proc/kallsyms reader (userspace/lib/kmem/kallsyms.h) on excerpts written here: text
 * symbols only, sorted, module names without brackets, lookups inside, at and before symbols;
 * all-zero addresses (kptr_restrict) refused; a malformed line named by file and line; a
 * symbol name longer than any line buffer taken as one line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "userspace/lib/kmem/kallsyms.h"

/* Writes text as the file "kallsyms" of the scratch directory and loads it. */
static int load(const char *text, struct ps_kallsyms **ks, char *err, size_t errlen,
		char *path, size_t pathlen)
{
	FILE *f;

	snprintf(path, pathlen, "%s/kallsyms", ps_test_tmpdir());
	f = fopen(path, "w");
	if (!ASSERT_NOT_NULL(f, path))
		return -EIO;
	fputs(text, f);
	fclose(f);
	return ps_kallsyms_load(ks, path, err, errlen);
}

/* Out of order, with data symbols and weak ones, as the kernel lists them. */
static const char excerpt[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81a00000 D init_task\n"
	"ffffffff81200000 t __d_alloc\n"
	"ffffffff81100000 W arch_cpu_idle\n"
	"ffffffffc0a01000 t smb2_open\t[ksmbd]\n"
	"ffffffff81300000 T kmem_cache_alloc_noprof\n"
	"ffffffffc0a00000 t ksmbd_alloc_work\t[ksmbd]\n"
	"ffffffff81400000 r __ksymtab_kfree\n";

TEST(excerpt)
{
	char err[256], path[512];
	struct ps_kallsyms *ks = NULL;
	const struct ps_ksym *k;
	uint64_t off = 0;

	if (!ASSERT_OK(load(excerpt, &ks, err, sizeof(err), path, sizeof(path)), err))
		return;
	ASSERT_EQ(ks->n, 6, "text symbols only (T, t, W)");
	for (size_t i = 1; i < ks->n; i++)
		ASSERT_TRUE(ks->syms[i - 1].addr <= ks->syms[i].addr, "sorted by address");

	k = ps_kallsyms_find(ks, 0xffffffff81200010ull, &off);
	if (ASSERT_NOT_NULL(k, "inside __d_alloc")) {
		ASSERT_STREQ(k->name, "__d_alloc", "name");
		ASSERT_EQ(off, 0x10, "offset");
		ASSERT_TRUE(k->module == NULL, "vmlinux has no module");
	}
	k = ps_kallsyms_find(ks, 0xffffffff81300000ull, &off);
	if (ASSERT_NOT_NULL(k, "at a symbol's address")) {
		ASSERT_STREQ(k->name, "kmem_cache_alloc_noprof", "exact address");
		ASSERT_EQ(off, 0, "offset 0");
	}
	k = ps_kallsyms_find(ks, 0xffffffffc0a01abcull, NULL);
	if (ASSERT_NOT_NULL(k, "in a module")) {
		ASSERT_STREQ(k->name, "smb2_open", "module symbol");
		ASSERT_STREQ(k->module, "ksmbd", "module name without brackets");
	}
	k = ps_kallsyms_find(ks, 0xffffffffc0a00004ull, NULL);
	if (ASSERT_NOT_NULL(k, "first module symbol"))
		ASSERT_STREQ(k->module, "ksmbd", "module of the first module symbol");
	ASSERT_TRUE(ps_kallsyms_find(ks, 0xffffffff80ffffffull, NULL) == NULL, "below the first");
	ASSERT_TRUE(ps_kallsyms_find(NULL, 0xffffffff81000000ull, NULL) == NULL, "no table");
	ps_kallsyms_free(ks);
	ps_kallsyms_free(NULL);
}

TEST(zero_addresses_refused)
{
	char err[256], path[512];
	struct ps_kallsyms *ks = NULL;

	ASSERT_EQ(load("0000000000000000 T _stext\n0000000000000000 t __d_alloc\n", &ks, err,
		       sizeof(err), path, sizeof(path)), -EPERM, "kptr_restrict");
	ASSERT_TRUE(ks == NULL, "no table");
	ASSERT_EQ(load("", &ks, err, sizeof(err), path, sizeof(path)), -EPERM, "empty file");
}

TEST(malformed_line)
{
	static const char *const bad[] = {
		"ffffffff81000000 T _stext\nffffffff81100000 T\nffffffff81200000 t x\n",
		"ffffffff81000000 T _stext\nnot a symbol line\n",
		"ffffffff81000000 T _stext\n\n",
	};
	char err[256], path[512], where[600];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ps_kallsyms *ks = NULL;

		ASSERT_EQ(load(bad[i], &ks, err, sizeof(err), path, sizeof(path)), -EINVAL, bad[i]);
		ASSERT_TRUE(ks == NULL, "no table");
		snprintf(where, sizeof(where), "%s:2:", path);
		ASSERT_STRSTR(err, where, "names the file and line 2");
	}
}

TEST(missing_file)
{
	char err[256] = "x";
	struct ps_kallsyms *ks = NULL;
	char path[512];

	snprintf(path, sizeof(path), "%s/none", ps_test_tmpdir());
	ASSERT_EQ(ps_kallsyms_load(&ks, path, err, sizeof(err)), -ENOENT, "missing");
	ASSERT_STREQ(err, "", "the caller names the file");
}

/* Rust symbols reach 512 characters: one line, not a line and a malformed rest. */
TEST(long_name_is_one_line)
{
	char err[256], path[512], *text, name[701];
	struct ps_kallsyms *ks = NULL;
	const struct ps_ksym *k;

	memset(name, 'r', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	text = malloc(strlen(name) + 200);
	if (!ASSERT_NOT_NULL(text, "malloc"))
		return;
	sprintf(text, "ffffffff81000000 T _stext\nffffffff81100000 t %s\t[rust_mod]\n"
		"ffffffff81200000 t after_long\n", name);
	if (ASSERT_OK(load(text, &ks, err, sizeof(err), path, sizeof(path)), err)) {
		ASSERT_EQ(ks->n, 3, "three symbols");
		k = ps_kallsyms_find(ks, 0xffffffff81100008ull, NULL);
		if (ASSERT_NOT_NULL(k, "long symbol"))
			ASSERT_TRUE(!strncmp(k->name, name, 255), "name kept (up to 255)");
		k = ps_kallsyms_find(ks, 0xffffffff81200000ull, NULL);
		if (ASSERT_NOT_NULL(k, "the next line"))
			ASSERT_STREQ(k->name, "after_long", "the next line is its own symbol");
	}
	ps_kallsyms_free(ks);
	free(text);
}
