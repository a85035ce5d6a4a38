// SPDX-License-Identifier: GPL-2.0
/*
 * Merged-cache names (userspace/lib/kmem/slabnames.h) on a /sys/kernel/slab look-alike built
 * here: group directories (":0000512", ":A-0000128", ":a-0000256"), member symlinks, an
 * unmerged cache directory; the member a call site picks, the group when it does not decide,
 * kmalloc names kept; odd entries (a plain file, a dangling link, a target ending in '/') and a
 * missing directory read without a crash.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "userspace/lib/kmem/slabnames.h"

/* dir/name -> target (a symlink), or a directory when target is NULL. */
static bool entry(const char *dir, const char *name, const char *target)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return ASSERT_OK(target ? symlink(target, p) : mkdir(p, 0755), p);
}

static struct ps_slabnames *load_tree(void)
{
	static const char *const tree[][2] = {
		{ ":0000512", NULL }, { ":A-0000128", NULL }, { ":a-0000256", NULL },
		{ "kmalloc-512", ":0000512" }, { "skbuff_fclone_cache", ":0000512" },
		{ "pool_workqueue", ":0000512" },
		{ "eventpoll_epi", ":A-0000128" }, { "eventpoll_pwq", ":A-0000128" },
		{ "kmalloc-rcl-256", ":a-0000256" }, { "ext4_groupinfo_1k", ":a-0000256" },
		{ "dentry", NULL },
		{ "old_style", "../devices/slab/:0000064" },
		{ "ghost", ":9999999" },	/* dangling */
		{ "root", "/" },
	};
	char dir[600], p[700];
	struct ps_slabnames *sn = NULL;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/slab", ps_test_tmpdir());
	if (!ASSERT_OK(mkdir(dir, 0755), dir))
		return NULL;
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++)
		if (!entry(dir, tree[i][0], tree[i][1]))
			return NULL;
	snprintf(p, sizeof(p), "%s/plain_file", dir);
	f = fopen(p, "w");
	if (f)
		fclose(f);
	if (!ASSERT_OK(ps_slabnames_load(&sn, dir), "load"))
		return NULL;
	return sn;
}

TEST(groups)
{
	struct ps_slabnames *sn = load_tree();

	if (!sn)
		return;
	ASSERT_EQ(sn->n, 12, "every name, not the ':' groups");
	ASSERT_STREQ(ps_slab_group(sn, "skbuff_fclone_cache"), ":0000512", "member's group");
	ASSERT_STREQ(ps_slab_group(sn, "eventpoll_epi"), ":A-0000128", "flagged group");
	ASSERT_STREQ(ps_slab_group(sn, "kmalloc-rcl-256"), ":a-0000256", "kmalloc-rcl member");
	ASSERT_STREQ(ps_slab_group(sn, "old_style"), ":0000064", "the target's last component");
	ASSERT_TRUE(ps_slab_group(sn, "dentry") == NULL, "unmerged cache");
	ASSERT_TRUE(ps_slab_group(sn, "plain_file") == NULL, "not a link: unmerged");
	ASSERT_TRUE(ps_slab_group(sn, "nonexistent") == NULL, "unknown name");
	ASSERT_STREQ(ps_slab_group(sn, "ghost"), ":9999999", "a dangling link still names a group");
	ASSERT_STREQ(ps_slab_group(sn, "root"), "", "a target ending in '/': empty group");
	ps_slabnames_free(sn);
}

/* One resolution: the name shown, and whether it replaced the reported one. */
struct res_case {
	const char *reported, *func;
	bool kmalloc;
	const char *want;
	bool replaced;
	const char *why;
};

TEST(resolve)
{
	static const struct res_case cases[] = {
		/* SLUB reports the group's first name; "skb" in the site starts "skbuff". */
		{ "pool_workqueue", "__alloc_skb", false, "skbuff_fclone_cache", true,
		  "the member the site names" },
		{ "eventpoll_epi", "ep_insert_eventpoll", false, ":A-0000128", true,
		  "both members score the same: the group, never one member" },
		{ "pool_workqueue", NULL, false, ":0000512", true, "no site: the group" },
		/* "512" in the site names kmalloc-512: the answer for kmalloc only. */
		{ "pool_workqueue", "alloc_512_buf", true, "kmalloc-512", true,
		  "a kmalloc member for a kmalloc event" },
		{ "pool_workqueue", "alloc_512_buf", false, ":0000512", true,
		  "kmalloc-512 is not a kmem_cache_alloc answer" },
		{ "kmalloc-rcl-256", "ext4_mb_init", true, "kmalloc-rcl-256", false,
		  "a kmalloc event reported as kmalloc-N keeps its name" },
		{ "dentry", "__d_alloc", false, "dentry", false, "unmerged: as reported" },
	};
	struct ps_slabnames *sn = load_tree();
	char out[96];

	if (!sn)
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct res_case *c = &cases[i];

		ASSERT_EQ(ps_slab_resolve(sn, c->reported, c->func, c->kmalloc, out, sizeof(out)),
			  c->replaced, c->why);
		ASSERT_STREQ(out, c->want, c->why);
	}
	ASSERT_FALSE(ps_slab_resolve(sn, "nonexistent", "f", false, out, 4), "unknown");
	ASSERT_STREQ(out, "non", "cut to the buffer");
	ps_slabnames_free(sn);
}

TEST(members)
{
	struct ps_slabnames *sn = load_tree();
	char out[1024], small[12];

	if (!sn)
		return;
	/* readdir order: check the set, not the order. */
	ps_slab_members(sn, ":0000512", out, sizeof(out));
	ASSERT_EQ(strlen(out), strlen("kmalloc-512,skbuff_fclone_cache,pool_workqueue"), "length");
	ASSERT_STRSTR(out, "kmalloc-512", "member");
	ASSERT_STRSTR(out, "skbuff_fclone_cache", "member");
	ASSERT_STRSTR(out, "pool_workqueue", "member");
	ASSERT_STREQ(ps_slab_members(sn, ":nothing", out, sizeof(out)), "", "no members");
	ps_slab_members(sn, ":0000512", small, sizeof(small));
	ASSERT_EQ(strlen(small), sizeof(small) - 1, "cut to the buffer, terminated");
	ps_slabnames_free(sn);
}

TEST(missing_dir)
{
	struct ps_slabnames *sn = NULL;
	char dir[600], out[32];

	snprintf(dir, sizeof(dir), "%s/none", ps_test_tmpdir());
	if (!ASSERT_OK(ps_slabnames_load(&sn, dir), "a missing dir is no merging info"))
		return;
	ASSERT_EQ(sn->n, 0, "empty");
	ASSERT_FALSE(ps_slab_resolve(sn, "pool_workqueue", "__alloc_skb", false, out, sizeof(out)),
		     "nothing to resolve");
	ASSERT_STREQ(out, "pool_workqueue", "as reported");
	ASSERT_TRUE(ps_slab_group(NULL, "x") == NULL, "no table");
	ps_slabnames_free(sn);
	ps_slabnames_free(NULL);
}
