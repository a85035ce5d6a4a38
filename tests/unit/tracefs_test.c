// SPDX-License-Identifier: GPL-2.0
/*
 * The tracefs backend's page stacks (userspace/record/tracefs.c), fed records decoded by the
 * kernel's own event formats (those of Linux 6.18, with short print formats): the trigger's
 * kernel_stack moves a page allocation to a tag with that stack only when it is the stack of
 * that allocation. A stack whose page was freed and taken again by the recorder, or taken
 * again under another key, or a stack after a later page allocation of the same CPU, moves
 * nothing; the recorder's own allocations are untagged only when the pid is the one given.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>

#include "test.h"
#include "userspace/record/rec.h"

/* tracefs.c asks resolve.c whether a tag or class was written before: never, here. */
bool rec_class_known(const struct rec *r, uint64_t cls)
{
	(void)r;
	(void)cls;
	return false;
}

bool rec_tag_known(const struct rec *r, const struct ps_tag_key *k)
{
	(void)r;
	(void)k;
	return false;
}

#define COMMON "format:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

enum { ID_STACK = 4, ID_PAGE_ALLOC = 653, ID_PAGE_FREE = 655, ID_CACHE_FREE = 656,
       ID_KFREE = 657, ID_KMALLOC = 658, ID_CACHE_ALLOC = 659 };

static const struct {
	const char *sys, *fmt;
} formats[] = {
	{ "kmem", "name: kmalloc\nID: 658\n" COMMON
	  "\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:const void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n"
	  "\tfield:size_t bytes_req;\toffset:24;\tsize:8;\tsigned:0;\n"
	  "\tfield:size_t bytes_alloc;\toffset:32;\tsize:8;\tsigned:0;\n"
	  "\tfield:unsigned long gfp_flags;\toffset:40;\tsize:8;\tsigned:0;\n"
	  "\tfield:int node;\toffset:48;\tsize:4;\tsigned:1;\n\n"
	  "print fmt: \"ptr=%p\", REC->ptr\n" },
	{ "kmem", "name: kfree\nID: 657\n" COMMON
	  "\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:const void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n\n"
	  "print fmt: \"ptr=%p\", REC->ptr\n" },
	{ "kmem", "name: kmem_cache_alloc\nID: 659\n" COMMON
	  "\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:const void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n"
	  "\tfield:__data_loc char[] name;\toffset:24;\tsize:4;\tsigned:0;\n"
	  "\tfield:size_t bytes_req;\toffset:32;\tsize:8;\tsigned:0;\n"
	  "\tfield:size_t bytes_alloc;\toffset:40;\tsize:8;\tsigned:0;\n"
	  "\tfield:unsigned long gfp_flags;\toffset:48;\tsize:8;\tsigned:0;\n"
	  "\tfield:int node;\toffset:56;\tsize:4;\tsigned:1;\n"
	  "\tfield:bool accounted;\toffset:60;\tsize:1;\tsigned:0;\n\n"
	  "print fmt: \"ptr=%p\", REC->ptr\n" },
	{ "kmem", "name: kmem_cache_free\nID: 656\n" COMMON
	  "\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:const void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n"
	  "\tfield:__data_loc char[] name;\toffset:24;\tsize:4;\tsigned:0;\n\n"
	  "print fmt: \"ptr=%p\", REC->ptr\n" },
	{ "kmem", "name: mm_page_alloc\nID: 653\n" COMMON
	  "\tfield:unsigned long pfn;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:unsigned int order;\toffset:16;\tsize:4;\tsigned:0;\n"
	  "\tfield:unsigned long gfp_flags;\toffset:24;\tsize:8;\tsigned:0;\n"
	  "\tfield:int migratetype;\toffset:32;\tsize:4;\tsigned:1;\n\n"
	  "print fmt: \"pfn=0x%lx\", REC->pfn\n" },
	{ "kmem", "name: mm_page_free\nID: 655\n" COMMON
	  "\tfield:unsigned long pfn;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:unsigned int order;\toffset:16;\tsize:4;\tsigned:0;\n\n"
	  "print fmt: \"pfn=0x%lx\", REC->pfn\n" },
	{ "ftrace", "name: kernel_stack\nID: 4\n" COMMON
	  "\tfield:int size;\toffset:8;\tsize:4;\tsigned:1;\n"
	  "\tfield:unsigned long caller[8];\toffset:16;\tsize:64;\tsigned:0;\n\n"
	  "print fmt: \"=> %ps\", (void *)REC->caller[0]\n" },
};

#define SELF 4242	/* the recorder's pid in these tests */
#define PFN 0x1234

struct fix {
	struct tep_handle *tep;
	struct rec r;
	char err[256];
};

static bool fix_open(struct fix *f, int self)
{
	memset(f, 0, sizeof(*f));
	f->tep = tep_alloc();
	if (!ASSERT_NOT_NULL(f->tep, "tep_alloc"))
		return false;
	tep_set_long_size(f->tep, 8);
	tep_set_page_size(f->tep, 4096);
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!ASSERT_EQ(tep_parse_event(f->tep, formats[i].fmt, strlen(formats[i].fmt),
					       formats[i].sys), TEP_ERRNO__SUCCESS, "format"))
			return false;
	f->r.ncpus = 2;
	f->r.err = f->err;
	f->r.errlen = sizeof(f->err);
	if (!ASSERT_OK(snap_init(&f->r.snap), "snap_init"))
		return false;
	return ASSERT_OK(rec_tracefs_mirror(&f->r, f->tep, self), f->err);
}

static void fix_close(struct fix *f)
{
	rec_tracefs_close(&f->r);
	snap_free(&f->r.snap);
	if (f->tep)
		tep_free(f->tep);
}

static int feed(struct fix *f, int cpu, unsigned char *buf, int size)
{
	struct tep_record rec = { .data = buf, .size = size, .cpu = cpu };

	return rec_tracefs_event(&f->r, &rec, cpu);
}

static void head(unsigned char *b, uint16_t id, int32_t pid)
{
	memcpy(b, &id, 2);
	b[2] = 0;	/* flags: task context */
	b[3] = 0;
	memcpy(b + 4, &pid, 4);
}

static int page_alloc(struct fix *f, int cpu, int32_t pid, uint64_t pfn, int32_t mt)
{
	unsigned char b[40] = { 0 };
	uint64_t gfp = 0xcc0;
	uint32_t order = 0;

	head(b, ID_PAGE_ALLOC, pid);
	memcpy(b + 8, &pfn, 8);
	memcpy(b + 16, &order, 4);
	memcpy(b + 24, &gfp, 8);
	memcpy(b + 32, &mt, 4);
	return feed(f, cpu, b, sizeof(b));
}

static int page_free(struct fix *f, int cpu, uint64_t pfn)
{
	unsigned char b[24] = { 0 };
	uint32_t order = 0;

	head(b, ID_PAGE_FREE, 100);
	memcpy(b + 8, &pfn, 8);
	memcpy(b + 16, &order, 4);
	return feed(f, cpu, b, sizeof(b));
}

static int stack(struct fix *f, int cpu, int32_t pid)
{
	static const uint64_t ips[] = { 0xffffffff81234560ull, 0xffffffff81345670ull,
					0xffffffff81456780ull };
	unsigned char b[16 + sizeof(ips)] = { 0 };
	int32_t n = 3;

	head(b, ID_STACK, pid);
	memcpy(b + 8, &n, 4);
	memcpy(b + 16, ips, sizeof(ips));
	return feed(f, cpu, b, sizeof(b));
}

/* The page tags after a poll: allocs without a stack and with one, and keys with a stack. */
struct pages {
	uint64_t nostack, stacked, stacked_keys;
	int64_t live;
};

static bool pages_of(struct fix *f, struct pages *p)
{
	memset(p, 0, sizeof(*p));
	if (!ASSERT_OK(rec_tracefs_poll(&f->r), "poll"))
		return false;
	for (size_t i = 0; i < f->r.snap.ntags; i++) {
		const struct snap_tag *t = &f->r.snap.tags[i];

		if (t->key.kind != PS_K_PAGE)
			continue;
		if (t->key.site == PS_SITE_NOSTACK) {
			p->nostack += t->sum.allocs;
		} else {
			p->stacked += t->sum.allocs;
			p->stacked_keys++;
		}
		p->live += (int64_t)t->sum.allocs - (int64_t)t->sum.frees;
	}
	return true;
}

/* The control: a page and then its stack on the same CPU. */
TEST(stack_follows_its_page)
{
	struct fix f;
	struct pages p;

	if (!fix_open(&f, SELF))
		goto out;
	ASSERT_OK(page_alloc(&f, 0, 100, PFN, 0), "alloc");
	ASSERT_OK(stack(&f, 0, 100), "stack");
	if (!pages_of(&f, &p))
		goto out;
	ASSERT_U64_EQ(p.stacked, 1, "the page moved to its stack's tag");
	ASSERT_U64_EQ(p.stacked_keys, 1, "one tag with a stack");
	ASSERT_U64_EQ(p.nostack, 0, "none left without a stack");
out:
	fix_close(&f);
}

/*
 * The page's stack was lost; the page was freed on another CPU and the recorder took it. The
 * next stack on the first CPU (after a page of the recorder's own) is not the old page's:
 * nothing moves, and the recorder's page stays untagged.
 */
TEST(stack_of_page_taken_by_recorder)
{
	struct fix f;
	struct pages p;

	if (!fix_open(&f, SELF))
		goto out;
	ASSERT_OK(page_alloc(&f, 0, 100, PFN, 0), "alloc");
	ASSERT_OK(page_free(&f, 1, PFN), "free");
	ASSERT_OK(page_alloc(&f, 1, SELF, PFN, 0), "the recorder's alloc");
	ASSERT_OK(stack(&f, 0, 100), "a stack on the first CPU");
	if (!pages_of(&f, &p))
		goto out;
	ASSERT_U64_EQ(p.stacked, 0, "nothing moved to a stack");
	ASSERT_U64_EQ(p.nostack, 1, "the first page, without a stack");
	ASSERT_EQ(p.live, 0, "freed");
	ASSERT_U64_EQ(f.r.snap.ctr[PS_C_SELF_SKIPPED], 1, "the recorder's page untagged");
out:
	fix_close(&f);
}

/*
 * Taken again under another key (another migratetype) before the first CPU's stack came,
 * its free not traced: the stack is the first allocation's, not the second's.
 */
TEST(stack_of_page_taken_under_another_key)
{
	struct fix f;
	struct pages p;

	if (!fix_open(&f, SELF))
		goto out;
	ASSERT_OK(page_alloc(&f, 0, 100, PFN, 0), "alloc, unmovable");
	ASSERT_OK(page_alloc(&f, 1, 200, PFN, 1), "alloc again, movable");
	ASSERT_OK(stack(&f, 0, 100), "the first one's stack");
	if (!pages_of(&f, &p))
		goto out;
	ASSERT_U64_EQ(p.stacked, 0, "nothing moved to a stack");
	ASSERT_U64_EQ(p.nostack, 2, "both without a stack");
	ASSERT_EQ(p.live, 1, "the second live");
out:
	fix_close(&f);
}

/* A later page allocation of the same CPU (the recorder's) comes between: its stack is its own. */
TEST(stack_after_a_later_page)
{
	struct fix f;
	struct pages p;

	if (!fix_open(&f, SELF))
		goto out;
	ASSERT_OK(page_alloc(&f, 0, 100, PFN, 0), "alloc, its stack lost");
	ASSERT_OK(page_alloc(&f, 0, SELF, PFN + 1, 0), "the recorder's alloc");
	ASSERT_OK(stack(&f, 0, SELF), "the recorder's page's stack");
	if (!pages_of(&f, &p))
		goto out;
	ASSERT_U64_EQ(p.stacked, 0, "the first page did not take the later stack");
	ASSERT_U64_EQ(p.nostack, 1, "the first page without a stack");
out:
	fix_close(&f);
}

/* A capture (self -1): a pid equal to the converting process's is just another task's. */
TEST(capture_has_no_recorder)
{
	struct fix f;
	struct pages p;

	if (!fix_open(&f, -1))
		goto out;
	ASSERT_OK(page_alloc(&f, 0, (int32_t)getpid(), PFN, 0), "alloc");
	if (!pages_of(&f, &p))
		goto out;
	ASSERT_U64_EQ(p.nostack, 1, "tagged");
	ASSERT_U64_EQ(f.r.snap.ctr[PS_C_SELF_SKIPPED], 0, "not taken for the recorder's");
out:
	fix_close(&f);
}
