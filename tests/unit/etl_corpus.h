/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the corpus tests (#included, the Makefile links each test alone): where the corpus
 * is. $PS_CORPUS, else $PS_SRCDIR/tests/corpus (the copy in the source tree, SOURCES.md there).
 * A missing corpus is a failure with a clear message, never a skip: every clone has it.
 */
#include <stdlib.h>
#include <sys/stat.h>

static const char *corpus_path(const char *rel)
{
	static char buf[8][1024];
	static int k;
	const char *top = getenv("PS_CORPUS");
	char *b = buf[k++ & 7];

	if (top && *top)
		snprintf(b, 1024, "%s/%s", top, rel);
	else
		snprintf(b, 1024, "%s/tests/corpus/%s",
			 getenv("PS_SRCDIR") ? getenv("PS_SRCDIR") : ".", rel);
	return b;
}

/* Fails the test (and returns false) when the corpus file is not there. */
static bool corpus_have(const char *rel)
{
	struct stat sb;
	const char *p = corpus_path(rel);

	if (stat(p, &sb) == 0)
		return true;
	ps_test_fail(__FILE__, __LINE__, "corpus file %s not found: set PS_CORPUS to the "
		     "corpus directory (tests/corpus of the source tree)", p);
	return false;
}
