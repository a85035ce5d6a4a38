// SPDX-License-Identifier: GPL-2.0
/*
 * Attribution rules: parsing the rules file and classifying a tag from its evidence, strongest
 * first (sampled stack frames past generic helpers, call-site symbol, cache/pool tag, owner,
 * context). Class names and symbol lists live only in the rules file.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "userspace/lib/util/util.h"

static const char *const field_names[PS_RF__N] = { "frame", "site", "cache", "owner", "comm",
						   "ctx", "src" };
/* a src rule on a frame counts as the frame; on the call site alone, as the site */
static const double field_conf[PS_RF__N] = { 0.9, 0.8, 0.6, 0.5, 0.4, 0.3, 0.8 };

void ps_rules_free(struct ps_rules *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++) {
		free(rs->r[i].cls);
		free(rs->r[i].pattern);
		free(rs->r[i].module);
	}
	for (size_t i = 0; i < rs->nlife; i++)
		free(rs->life[i].pattern);
	free(rs->life);
	free(rs->r);
	free(rs->path);
	free(rs);
}

static void base_sym(const char *sym, char *buf, size_t len);

static int add_lifetime(struct ps_rules *rs, bool site, const char *pat, unsigned secs,
			unsigned line)
{
	struct ps_lifetime *n = realloc(rs->life, (rs->nlife + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	rs->life = n;
	n[rs->nlife].pattern = strdup(pat);
	if (!n[rs->nlife].pattern)
		return -ENOMEM;
	n[rs->nlife].secs = secs;
	n[rs->nlife].site = site;
	n[rs->nlife].line = line;
	rs->nlife++;
	return 0;
}

unsigned ps_rules_lifetime(const struct ps_rules *rs, const char *cache, const char *site)
{
	char b[256];

	if (site)
		base_sym(site, b, sizeof(b));
	for (size_t i = 0; i < rs->nlife; i++) {
		const char *v = rs->life[i].site ? (site ? b : NULL) : cache;

		if (v && !fnmatch(rs->life[i].pattern, v, 0))
			return rs->life[i].secs;
	}
	return 0;
}

static int add_rule(struct ps_rules *rs, const char *cls, enum ps_rule_field f, const char *pat,
		    const char *mod, unsigned line)
{
	struct ps_rule *n = realloc(rs->r, (rs->n + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	rs->r = n;
	n = &rs->r[rs->n];
	memset(n, 0, sizeof(*n));
	n->field = f;
	n->line = line;
	n->cls = cls ? strdup(cls) : NULL;
	n->pattern = strdup(pat);
	n->module = mod ? strdup(mod) : NULL;
	rs->n++;
	if ((cls && !n->cls) || !n->pattern || (mod && !n->module))
		return -ENOMEM;
	return 0;
}

int ps_rules_parse(struct ps_rules **out, const char *name, const char *text, char *err,
		   size_t errlen)
{
	struct ps_rules *rs = calloc(1, sizeof(*rs));
	const char *p = text;
	unsigned line = 0;
	int rc = 0;

	if (!rs)
		return -ENOMEM;
	rs->path = strdup(name);
	while (*p) {
		char buf[512], *tok[6], *save = NULL, *s;
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		int nt = 0;

		line++;
		if (len >= sizeof(buf)) {
			snprintf(err, errlen, "%s:%u: line longer than %zu bytes", name, line,
				 sizeof(buf) - 1);
			rc = -PS_ERR__SYNTAX;
			goto out_err;
		}
		memcpy(buf, p, len);
		buf[len] = '\0';
		p += len + (nl ? 1 : 0);
		if ((s = strchr(buf, '#')))
			*s = '\0';
		for (s = strtok_r(buf, " \t\r", &save); s; s = strtok_r(NULL, " \t\r", &save)) {
			if (nt == 5) {
				snprintf(err, errlen, "%s:%u: too many fields (expected CLASS FIELD "
					 "PATTERN [MODULE] or generic PATTERN)", name, line);
				rc = -PS_ERR__SYNTAX;
				goto out_err;
			}
			tok[nt++] = s;
		}
		if (nt == 0)
			continue;
		if (!strcmp(tok[0], "lifetime")) {
			unsigned secs;

			if (nt != 4 || (strcmp(tok[1], "cache") && strcmp(tok[1], "site")) ||
			    ps_parse_uint(tok[3], 1, 86400, &secs)) {
				snprintf(err, errlen, "%s:%u: expected 'lifetime cache|site PATTERN "
					 "SECONDS' (SECONDS 1..86400)", name, line);
				rc = -PS_ERR__SYNTAX;
				goto out_err;
			}
			rc = add_lifetime(rs, !strcmp(tok[1], "site"), tok[2], secs, line);
		} else if (!strcmp(tok[0], "generic")) {
			if (nt != 2) {
				snprintf(err, errlen, "%s:%u: expected 'generic PATTERN'", name, line);
				rc = -PS_ERR__SYNTAX;
				goto out_err;
			}
			rc = add_rule(rs, NULL, PS_RF_FRAME, tok[1], NULL, line);
		} else {
			int f;

			if (nt < 3 || nt > 4) {
				snprintf(err, errlen, "%s:%u: expected CLASS FIELD PATTERN [MODULE], "
					 "got %d field%s", name, line, nt, nt == 1 ? "" : "s");
				rc = -PS_ERR__SYNTAX;
				goto out_err;
			}
			for (f = 0; f < PS_RF__N; f++)
				if (!strcmp(tok[1], field_names[f]))
					break;
			if (f == PS_RF__N) {
				snprintf(err, errlen, "%s:%u: unknown field '%s' (expected frame, site, "
					 "src, cache, owner, comm or ctx)", name, line, tok[1]);
				rc = -PS_ERR__SYNTAX;
				goto out_err;
			}
			if (nt == 4 && f != PS_RF_FRAME && f != PS_RF_SITE && f != PS_RF_SRC) {
				snprintf(err, errlen, "%s:%u: MODULE only applies to frame, site and src "
					 "rules", name, line);
				rc = -PS_ERR__SYNTAX;
				goto out_err;
			}
			rc = add_rule(rs, tok[0], f, tok[2], nt == 4 ? tok[3] : NULL, line);
		}
		if (rc)
			goto out_err;
	}
	if (rs->n == 0) {
		snprintf(err, errlen, "%s: no rules", name);
		rc = -PS_ERR__SYNTAX;
		goto out_err;
	}
	*out = rs;
	return 0;
out_err:
	ps_rules_free(rs);
	return rc;
}

int ps_rules_load(struct ps_rules **out, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	FILE *m = open_memstream(&text, &len);
	char buf[4096];
	size_t n;

	if (!m) {
		fclose(f);
		return -ENOMEM;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, m);
	fclose(f);
	fclose(m);
	rc = ps_rules_parse(out, path, text, err, errlen);
	free(text);
	return rc;
}

/* Symbol without "+0x..". */
static void base_sym(const char *sym, char *buf, size_t len)
{
	const char *plus = strchr(sym, '+');
	size_t n = plus ? (size_t)(plus - sym) : strlen(sym);

	if (n >= len)
		n = len - 1;
	memcpy(buf, sym, n);
	buf[n] = '\0';
}

static bool module_ok(const struct ps_rule *r, const char *module)
{
	if (!r->module)
		return true;
	if (!strcmp(r->module, "-"))
		return !module || !*module;
	return module && !fnmatch(r->module, module, 0);
}

bool ps_rules_is_generic(const struct ps_rules *rs, const char *sym)
{
	char b[256];

	if (!sym)
		return false;
	base_sym(sym, b, sizeof(b));
	for (size_t i = 0; i < rs->n; i++)
		if (!rs->r[i].cls && !fnmatch(rs->r[i].pattern, b, 0))
			return true;
	return false;
}

static const char *match(const struct ps_rules *rs, enum ps_rule_field f, const char *val,
			 const char *module, unsigned *line)
{
	char b[256];

	if (!val)
		return NULL;
	if (f == PS_RF_FRAME || f == PS_RF_SITE)
		base_sym(val, b, sizeof(b));
	else
		ps_strlcpy(b, val, sizeof(b));
	for (size_t i = 0; i < rs->n; i++) {
		const struct ps_rule *r = &rs->r[i];

		if (!r->cls || r->field != f || !module_ok(r, module))
			continue;
		if (!fnmatch(r->pattern, b, 0)) {
			if (line)
				*line = r->line;
			return r->cls;
		}
	}
	return NULL;
}

/*
 * Paths are relative to the kernel tree ("net/ipv4/tcp.c", srcline.c makes them so) and
 * matched whole; one that stayed absolute matches only a pattern written for it ("*" + "/net/...").
 */
static bool src_path_match(const char *pat, const char *path)
{
	return path && *path && !fnmatch(pat, path, 0);
}

/*
 * The first src rule matching the file of a source line or of the function that inlined it
 * (a header's inline helper says which API was used, its caller's file whose code it is:
 * either may decide, in the rules' order). *file gets the file that matched.
 */
static const char *match_src(const struct ps_rules *rs, const struct ps_src *src,
			     const char *module, unsigned *line, const char **file)
{
	if (!src)
		return NULL;
	for (size_t i = 0; i < rs->n; i++) {
		const struct ps_rule *r = &rs->r[i];
		const char *f = NULL;

		if (!r->cls || r->field != PS_RF_SRC || !module_ok(r, module))
			continue;
		if (src_path_match(r->pattern, src->file))
			f = src->file;
		else if (src_path_match(r->pattern, src->call_file))
			f = src->call_file;
		if (f) {
			if (line)
				*line = r->line;
			if (file)
				*file = f;
			return r->cls;
		}
	}
	return NULL;
}

const char *ps_classify_sym(const struct ps_rules *rs, const char *sym, const char *module,
			    unsigned *line)
{
	return match(rs, PS_RF_FRAME, sym, module, line);
}

/*
 * Class of one stack: the first frame from the allocator outward that is not a generic helper
 * and matches a src rule by its source line, else a frame rule (or, for module+offset frames,
 * an owner rule on the module).
 */
static const char *stack_class(const struct ps_rules *rs, const struct ps_stack *st,
			       unsigned *line, const struct ps_frame **which, const char **srcfile)
{
	for (uint32_t i = 0; i < st->nframes; i++) {
		const struct ps_frame *fr = &st->frames[i];
		const char *c;

		if (fr->sym && ps_rules_is_generic(rs, fr->sym))
			continue;
		*srcfile = NULL;
		c = match_src(rs, fr->src, fr->module, line, srcfile);
		if (!c)
			c = fr->sym ? match(rs, PS_RF_FRAME, fr->sym, fr->module, line)
				    : match(rs, PS_RF_OWNER, fr->module, NULL, line);
		if (c) {
			*which = fr;
			return c;
		}
	}
	return NULL;
}

static void frame_str(const struct ps_frame *fr, char *buf, size_t len)
{
	if (fr->sym)
		snprintf(buf, len, "%s%s%s%s", fr->sym, fr->module ? " [" : "",
			 fr->module ? fr->module : "", fr->module ? "]" : "");
	else
		snprintf(buf, len, "%s+0x%llx", fr->module ? fr->module : "?",
			 (unsigned long long)fr->off);
}

/*
 * "frame X (rule N)"; with a source line "frame X at FILE:LINE (rule N)", and when a src rule
 * decided, "src FILE:LINE in X (rule N)" with the file that matched (the inlining caller's
 * when it was that one).
 */
static void src_evidence(char *buf, size_t len, const char *what, const char *name,
			 const struct ps_src *src, const char *srcfile, unsigned line)
{
	if (!src)
		snprintf(buf, len, "%s %s (rule %u)", what, name, line);
	else if (!srcfile)
		snprintf(buf, len, "%s %s at %s:%u (rule %u)", what, name, src->file, src->line,
			 line);
	else if (srcfile == src->call_file)
		snprintf(buf, len, "src %s:%u in %s (rule %u)", src->call_file, src->call_line,
			 name, line);
	else
		snprintf(buf, len, "src %s:%u in %s (rule %u)", src->file, src->line, name, line);
}

/*
 * The task a tag's memory was allocated for: the comm the recorder split it by, else the comm
 * of its heaviest sampled stack (the first task seen on it).
 */
static const char *tag_comm(const struct ps_run *r, const struct ps_tag *t)
{
	const char *c = NULL;
	uint64_t most = 0;

	if (t->comm)
		return t->comm;
	for (size_t i = 0; i < r->nstacks; i++)
		if (r->stacks[i].tag_id == t->id && r->stacks[i].comm &&
		    (!c || r->stacks[i].bytes > most)) {
			most = r->stacks[i].bytes;
			c = r->stacks[i].comm;
		}
	return c;
}

void ps_attribute(const struct ps_rules *rs, const struct ps_run *r,
		  const struct ps_tag_series *ts, struct ps_attr *a)
{
	const struct ps_tag *t = &ts->tag;
	struct { const char *cls; double w; } split[8];
	size_t nsplit = 0;
	double wsum = 0, best_w = -1;
	const char *best = NULL;
	char bestev[160] = "";
	unsigned line = 0;

	memset(a, 0, sizeof(*a));
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct ps_stack *st = &r->stacks[i];
		const struct ps_frame *fr = NULL;
		const char *c, *srcfile = NULL;
		double w;
		size_t k;

		if (st->tag_id != t->id)
			continue;
		c = stack_class(rs, st, &line, &fr, &srcfile);
		w = st->live_bytes > 0 ? (double)st->live_bytes : (double)st->bytes + 1;
		wsum += w;
		if (!c)
			c = "unknown";
		for (k = 0; k < nsplit; k++)
			if (!strcmp(split[k].cls, c))
				break;
		if (k == nsplit && nsplit < ARRAY_SIZE(split))
			split[nsplit++] = (typeof(split[0])){ c, 0 };
		if (k < nsplit)
			split[k].w += w;
		if (fr && w > best_w) {
			char fs[96];

			best_w = w;
			frame_str(fr, fs, sizeof(fs));
			src_evidence(bestev, sizeof(bestev), "frame", fs, fr->src, srcfile, line);
		}
	}
	if (nsplit) {
		double top = 0;

		for (size_t k = 0; k < nsplit; k++)
			if (split[k].w > top && strcmp(split[k].cls, "unknown")) {
				top = split[k].w;
				best = split[k].cls;
			}
		if (best) {
			ps_strlcpy(a->cls, best, sizeof(a->cls));
			ps_strlcpy(a->evidence, bestev, sizeof(a->evidence));
			a->confidence = 0.9 * top / wsum;
			if (a->confidence < 0.3)
				a->confidence = 0.3;
		}
		if (nsplit > 1) {
			size_t o = 0;

			for (size_t k = 0; k < nsplit && o < sizeof(a->split); k++)
				o += snprintf(a->split + o, sizeof(a->split) - o, "%s%s %.0f%%",
					      k ? ", " : "", split[k].cls, 100 * split[k].w / wsum);
		}
		if (best)
			return;
	}
	{
		static const enum ps_rule_field order[] = { PS_RF_SITE, PS_RF_CACHE, PS_RF_OWNER,
							    PS_RF_COMM, PS_RF_CTX };
		for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
			enum ps_rule_field f = order[i];
			const char *val = f == PS_RF_SITE ? t->site_sym : f == PS_RF_CACHE ? t->cache
					: f == PS_RF_OWNER ? (t->owner ? t->owner : t->site_module)
					: f == PS_RF_COMM ? tag_comm(r, t) : t->ctx;
			const char *c, *srcfile = NULL;

			bool generic = f == PS_RF_SITE && ps_rules_is_generic(rs, val);

			/* the site's source line decides before its symbol */
			if (f == PS_RF_SITE && (c = match_src(rs, t->site_src, t->site_module, &line,
							      &srcfile))) {
				ps_strlcpy(a->cls, c, sizeof(a->cls));
				src_evidence(a->evidence, sizeof(a->evidence), "site", val, t->site_src,
					     srcfile, line);
				a->confidence = field_conf[PS_RF_SRC];
				return;
			}
			if (f == PS_RF_CACHE && !val)
				val = t->name;
			/* a generic helper as the site decides only through a site rule naming it */
			c = match(rs, f, val, t->site_module, &line);
			/* the call site is the innermost frame of every stack: frame rules know it */
			if (!c && f == PS_RF_SITE && !generic)
				c = match(rs, PS_RF_FRAME, val, t->site_module, &line);
			if (c) {
				ps_strlcpy(a->cls, c, sizeof(a->cls));
				snprintf(a->evidence, sizeof(a->evidence), "%s %s%s (rule %u)",
					 field_names[f], val,
					 f == PS_RF_OWNER && (t->flags & PS_TAG_F_OWNER_BUILTIN) ?
					 " from the built-in tag table" : "", line);
				a->confidence = field_conf[f];
				return;
			}
		}
	}
	ps_strlcpy(a->cls, "unknown", sizeof(a->cls));
	ps_strlcpy(a->evidence, "no rule matched", sizeof(a->evidence));
	a->confidence = 0;
}
