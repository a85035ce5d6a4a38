/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pooltag.txt (Debugging Tools for Windows, `<Tag> - <binary> - <Description>`): tag -> driver.
 * Lines are "rem"/"//" comments, blank, or entries; short tags are space padded; '?' matches
 * one character and a trailing '*' any rest; a tag may appear more than once (the first wins
 * for lookups). The project does not ship Microsoft's file: users pass their own (--pooltag).
 */
#ifndef PS_ETW_POOLTAG_H
#define PS_ETW_POOLTAG_H

#include <stdbool.h>
#include <stddef.h>

struct ps_pooltag_ent {
	char tag[5];		/* space padded, may hold '?' and '*' */
	char *binary;		/* "srv2.sys", "nt!cc", NULL for "<unknown>" */
	char *desc;
};

struct ps_pooltags {
	struct ps_pooltag_ent *ent;
	size_t n, cap;
	size_t skipped;		/* lines that are neither comments nor entries */
};

/* Loads path. -errno, or -PS_ERR__SYNTAX when nothing in it is an entry (err says where). */
int ps_pooltag_load(struct ps_pooltags *pt, const char *path, char *err, size_t errlen);
/* Entry for a 4-character tag (exact first, then patterns in file order), or NULL. */
const struct ps_pooltag_ent *ps_pooltag_find(const struct ps_pooltags *pt, const char tag[4]);
void ps_pooltag_free(struct ps_pooltags *pt);

/* Whether tag matches pattern pat of pooltag.txt ('?' one character, '*' the rest). */
bool ps_pooltag_match(const char *pat, const char tag[4]);
/* The driver of a well-known tag from the project's own table (pooltag_builtin.c), or NULL. */
const char *ps_pooltag_builtin(const char tag[4]);
/*
 * The owner of a tag: pt's (the user's pooltag.txt, may be NULL) when it names a binary, else
 * the built-in table's (*builtin set), else NULL.
 */
const char *ps_pool_owner(const struct ps_pooltags *pt, const char tag[4], bool *builtin);

#endif
