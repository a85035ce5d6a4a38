// SPDX-License-Identifier: GPL-2.0
/* pooltag.txt parser and lookup, see pooltag.h. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/lib/util/util.h"
#include "userspace/lib/etw/pooltag.h"

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n' ||
		     s[n - 1] == 0x1a))
		s[--n] = 0;
	return s;
}

/* "Tag - binary - desc": the separators are " - " with any spaces around. */
static int parse_line(char *line, struct ps_pooltag_ent *e)
{
	char *s = line, *sep1, *sep2;
	size_t tl;

	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	if (!*s || !strncasecmp(s, "rem", 3) || !strncmp(s, "//", 2) || *s == 0x1a)
		return 0;
	sep1 = strstr(s, " - ");
	if (!sep1)
		return -1;
	*sep1 = 0;
	char *tag = trim(s);
	tl = strlen(tag);
	if (tl == 0 || tl > 4 || strchr(tag, ' '))
		return -1;
	memset(e->tag, ' ', 4);
	memcpy(e->tag, tag, tl);
	e->tag[4] = 0;
	s = sep1 + 3;
	sep2 = strstr(s, " - ");
	if (sep2) {
		*sep2 = 0;
		e->desc = strdup(trim(sep2 + 3));
	} else {
		e->desc = NULL;
	}
	char *bin = trim(s);
	if (!sep2) {
		/* two fields: "ATmp - AppTag mount point": the second is a description */
		e->desc = strdup(bin);
		e->binary = NULL;
	} else {
		e->binary = (*bin && strcmp(bin, "<unknown>")) ? strdup(bin) : NULL;
	}
	return 1;
}

int ps_pooltag_load(struct ps_pooltags *pt, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	unsigned lineno = 0, first_bad = 0;

	memset(pt, 0, sizeof(*pt));
	if (!f) {
		int r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return r;
	}
	while (fgets(line, sizeof(line), f)) {
		struct ps_pooltag_ent e = { 0 };
		lineno++;
		int r = parse_line(line, &e);
		if (r < 0) {
			pt->skipped++;
			if (!first_bad)
				first_bad = lineno;
			continue;
		}
		if (r == 0)
			continue;
		if (pt->n == pt->cap) {
			size_t nc = pt->cap ? pt->cap * 2 : 1024;
			struct ps_pooltag_ent *n = realloc(pt->ent, nc * sizeof(*n));
			if (!n) {
				fclose(f);
				ps_pooltag_free(pt);
				return -ENOMEM;
			}
			pt->ent = n;
			pt->cap = nc;
		}
		pt->ent[pt->n++] = e;
	}
	fclose(f);
	if (!pt->n) {
		snprintf(err, errlen, "%s: line %u: no '<Tag> - <binary> - <Description>' entry in the "
			 "file (not a pooltag.txt?)", path, first_bad ? first_bad : lineno);
		return -PS_ERR__SYNTAX;
	}
	return 0;
}

bool ps_pooltag_match(const char *pat, const char tag[4])
{
	for (int i = 0; i < 4; i++) {
		if (pat[i] == '*')
			return true;
		if (pat[i] != '?' && pat[i] != tag[i])
			return false;
	}
	return true;
}

const struct ps_pooltag_ent *ps_pooltag_find(const struct ps_pooltags *pt, const char tag[4])
{
	for (size_t i = 0; i < pt->n; i++)
		if (!memcmp(pt->ent[i].tag, tag, 4))
			return &pt->ent[i];
	for (size_t i = 0; i < pt->n; i++)
		if (strpbrk(pt->ent[i].tag, "?*") && ps_pooltag_match(pt->ent[i].tag, tag))
			return &pt->ent[i];
	return NULL;
}

void ps_pooltag_free(struct ps_pooltags *pt)
{
	for (size_t i = 0; i < pt->n; i++) {
		free(pt->ent[i].binary);
		free(pt->ent[i].desc);
	}
	free(pt->ent);
	memset(pt, 0, sizeof(*pt));
}
