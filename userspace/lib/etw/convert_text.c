// SPDX-License-Identifier: GPL-2.0
/*
 * poolmon and windbg !poolused text -> trace. A snapshot starts at poolmon's "Memory:" summary
 * line, at a column header that follows rows, or at a "!poolused"/"Sorting by" line; its rows
 * become one interval. poolmon rows are "Tag Type Allocs [(d)] Frees [(d)] Diff Bytes [(d)]
 * PerAlloc [driver]" (the tag is the 4 characters before the type, spaces included: "Io  ");
 * !poolused rows are "Tag NPAllocs NPUsed PAllocs PUsed<description>". Live counts are absolute
 * (meta live_absolute = 1); allocs/frees per interval are the differences of poolmon's
 * cumulative counters between snapshots (0 in the first).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "userspace/lib/util/util.h"
#include "userspace/lib/util/version.h"
#include "userspace/lib/etw/convert.h"
#include "userspace/lib/etw/etl.h"
#include "userspace/lib/etw/kmap.h"

enum { P_NONPAGED, P_PAGED, P_SESSION };
static const char *const pool_names[] = { PS_POOL_NONPAGED, PS_POOL_PAGED, PS_POOL_SESSION };

struct trow {
	char tag[5];
	uint8_t pool;
	uint64_t allocs, frees;
	int64_t live_objs, live_bytes;
	bool cumulative;	/* poolmon: allocs/frees are counters since boot */
	bool born;		/* poolmon: Allocs equals its "( delta )": no allocation before the
				   previous refresh, so the tag held nothing then */
	const char *path;	/* where the row is, for a problem found when it is written */
	unsigned lineno;
};

struct ttag {
	int64_t id;
	uint64_t allocs, frees;
	int64_t live;		/* |live bytes| + |live objects| last written: the reader carries it */
	bool seen;
};

struct tconv {
	struct ps_trace *t;
	const struct ps_convert_opts *o;
	struct ps_convert_result *res;
	char *err;
	size_t errlen;
	int rc;
	struct trow *rows;
	uint32_t nrows, caprows;
	int64_t np_bytes, p_bytes, avail_bytes, total_np, total_p;
	bool session;
	bool poolused;		/* current block is !poolused */
	struct ttag *tags;
	uint32_t ntags, captags;
	struct ps_kmap tagmap;
	int kind;		/* PS_INPUT_* of the first snapshot */
	const char *path;	/* the line being parsed */
	unsigned lineno;
	/*
	 * What the trace reader bounds by PS_TRACE_SUM_MAX: the tags' live figures of an interval
	 * (those carried from earlier snapshots too) and the allocs and frees over the run. Each row
	 * is within 2^52, but thousands of them are not within 2^61.
	 */
	int64_t live_sum, run_sum;
};

/* A line of the input that could not be used: counted, the first one named. */
static void line_problem(struct ps_convert_result *res, const char *path, unsigned lineno,
			const char *why)
{
	res->problems++;
	if (!res->first_problem[0])
		snprintf(res->first_problem, sizeof(res->first_problem), "%s: line %u: %s", path,
			 lineno, why);
}

static const char why_sum[] = "a pool row whose numbers take the tags' figures past 2^61 "
			      "(2 EiB) in all, more than any machine holds; row skipped";

static uint32_t tag_u32(const char *t)
{
	return (uint32_t)(uint8_t)t[0] | (uint32_t)(uint8_t)t[1] << 8 |
	       (uint32_t)(uint8_t)t[2] << 16 | (uint32_t)(uint8_t)t[3] << 24;
}

static int flush(struct tconv *c)
{
	uint64_t iv = c->o->interval_ns, idx = c->res->snapshots;
	int r;

	if (!c->nrows && c->np_bytes < 0 && c->p_bytes < 0)
		return 0;
	if (!c->kind)
		c->kind = c->poolused ? PS_INPUT_POOLUSED : PS_INPUT_POOLMON;
	r = ps_trace_begin_interval(c->t, (uint32_t)idx, (idx + 1) * iv, 0, iv);
	for (uint32_t i = 0; i < c->nrows && !r; i++) {
		struct trow *w = &c->rows[i];
		uint32_t v, key = tag_u32(w->tag);
		struct ps_sample s = { .live_objs = w->live_objs, .live_bytes = w->live_bytes };

		if (!ps_kmap_get(&c->tagmap, key, w->pool, &v)) {
			struct ps_tag pt = { .kind = PS_KIND_POOL, .name = w->tag, .cache = w->tag,
					     .pool = pool_names[w->pool],
					     .flags = w->pool == P_PAGED ? PS_TAG_F_RECLAIMABLE : 0 };
			pt.domain = ps_flags_domain(pt.flags);
			bool builtin;

			pt.owner = ps_pool_owner(c->o->pooltags, w->tag, &builtin);
			if (builtin)
				pt.flags |= PS_TAG_F_OWNER_BUILTIN;
			/* new since the previous refresh, listed after the first snapshot */
			if (w->born && idx > 0)
				pt.flags |= PS_TAG_F_BORN_LATE;
			r = ps_trace_add_tag(c->t, &pt);
			if (r)
				break;
			if (c->ntags == c->captags) {
				uint32_t nc = c->captags ? c->captags * 2 : 256;
				struct ttag *n = realloc(c->tags, nc * sizeof(*n));
				if (!n) {
					r = -ENOMEM;
					break;
				}
				c->tags = n;
				c->captags = nc;
			}
			c->tags[c->ntags] = (struct ttag){ .id = pt.id };
			if (ps_kmap_put(&c->tagmap, key, w->pool, c->ntags) < 0) {
				r = -ENOMEM;
				break;
			}
			v = c->ntags++;
			c->res->tags = c->ntags;
		}
		struct ttag *tt = &c->tags[v];
		int64_t live = llabs(s.live_bytes) + llabs(s.live_objs);
		uint64_t da = 0, df = 0;

		if (w->cumulative && tt->seen && w->allocs >= tt->allocs && w->frees >= tt->frees) {
			da = w->allocs - tt->allocs;
			df = w->frees - tt->frees;
		}
		if (c->live_sum - tt->live + live > PS_TRACE_SUM_MAX ||
		    c->run_sum + (int64_t)(da + df) > PS_TRACE_SUM_MAX) {
			line_problem(c->res, w->path, w->lineno, why_sum);
			continue;
		}
		c->live_sum += live - tt->live;
		c->run_sum += (int64_t)(da + df);
		tt->live = live;
		s.allocs = da;
		s.frees = df;
		if (w->cumulative) {
			tt->allocs = w->allocs;
			tt->frees = w->frees;
		}
		tt->seen = true;
		r = ps_trace_add_sample(c->t, tt->id, &s);
	}
	if (!r && c->np_bytes >= 0)
		r = ps_trace_add_sysstat(c->t, PS_SYS_NONPAGED, c->np_bytes);
	if (!r && c->p_bytes >= 0)
		r = ps_trace_add_sysstat(c->t, PS_SYS_PAGED, c->p_bytes);
	if (!r && c->avail_bytes >= 0)
		r = ps_trace_add_sysstat(c->t, PS_SYS_AVAILABLE, c->avail_bytes);
	if (!r && c->total_np >= 0)
		r = ps_trace_add_sysstat(c->t, PS_SYS_NONPAGED_TAGGED, c->total_np);
	if (!r && c->total_p >= 0)
		r = ps_trace_add_sysstat(c->t, PS_SYS_PAGED_TAGGED, c->total_p);
	if (!r)
		r = ps_trace_add_counter(c->t, PS_CTR_SNAPSHOTS, (int64_t)idx + 1);
	if (!r)
		r = ps_trace_commit_interval(c->t);
	if (r) {
		snprintf(c->err, c->errlen, "writing the trace: %s", ps_trace_errmsg(c->t));
		c->rc = r < 0 ? r : -EIO;
		return c->rc;
	}
	c->res->snapshots++;
	c->res->intervals++;
	c->nrows = 0;
	c->np_bytes = c->p_bytes = c->avail_bytes = c->total_np = c->total_p = -1;
	return 0;
}

static int add_row(struct tconv *c, const struct trow *row)
{
	if (c->nrows == c->caprows) {
		uint32_t nc = c->caprows ? c->caprows * 2 : 256;
		struct trow *n = realloc(c->rows, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->rows = n;
		c->caprows = nc;
	}
	c->rows[c->nrows] = *row;
	c->rows[c->nrows].path = c->path;
	c->rows[c->nrows++].lineno = c->lineno;
	return 0;
}

static const char why_numbers[] = "a pool row without its numbers (expected Allocs Frees Diff Bytes)";
static const char why_absurd[] = "a pool row with a number beyond 2^52 (a count or size no pool has)";

/*
 * The decimal number after the spaces at *s, *s moved past it: 1, 0 when no digit is there, -1
 * when it is beyond PS_CONVERT_ABSURD.
 */
static int next_number(const char **s, uint64_t *v)
{
	char *end;

	while (**s == ' ')
		(*s)++;
	if (!isdigit((unsigned char)**s))
		return 0;
	errno = 0;
	*v = strtoull(*s, &end, 10);
	*s = end;
	return !errno && *v <= PS_CONVERT_ABSURD ? 1 : -1;
}

/*
 * Numbers of a poolmon row after the type, skipping "( delta )" groups: how many, -1 for an
 * unclosed group, -2 for an impossible number. *alloc_delta: the group after the first number
 * (Allocs' change since the previous refresh), -1 when there is none.
 */
static int poolmon_numbers(const char *s, uint64_t *v, int max, int64_t *alloc_delta)
{
	int n = 0;

	*alloc_delta = -1;

	while (*s && n < max) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '(') {
			const char *e = strchr(s, ')'), *d = s + 1;
			uint64_t dv;

			if (!e)
				return -1;
			if (n == 1 && next_number(&d, &dv) == 1 && d <= e)
				*alloc_delta = (int64_t)dv;
			s = e + 1;
			continue;
		}
		int k = next_number(&s, &v[n]);
		if (k < 0)
			return -2;
		if (!k)
			break;
		n++;
	}
	return n;
}

/* The "<n>K" after key in bytes; -1 when absent or beyond PS_CONVERT_ABSURD (read as unknown). */
static int64_t kbytes_after(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	uint64_t kb;

	if (!p)
		return -1;
	p += strlen(key);
	if (next_number(&p, &kb) <= 0 || kb > PS_CONVERT_ABSURD / 1024)
		return -1;
	return (int64_t)kb * 1024;
}

/*
 * Text encodings of Windows captures: PowerShell 5's ">" and Out-File write UTF-16LE with a
 * byte-order mark, and editors may put a UTF-8 one in front. Read by their marks; the formats are
 * ASCII (tags, numbers, keywords), so a UTF-16 code unit above 0x7f reads as '?'.
 */
enum { ENC_BYTES, ENC_UTF16LE, ENC_UTF16BE };

/* The encoding that the first bytes b[0..n) announce, and the length of its mark. */
static int text_encoding(const uint8_t *b, size_t n, size_t *mark)
{
	*mark = 0;
	if (n >= 2 && b[0] == 0xff && b[1] == 0xfe) {
		*mark = 2;
		return ENC_UTF16LE;
	}
	if (n >= 2 && b[0] == 0xfe && b[1] == 0xff) {
		*mark = 2;
		return ENC_UTF16BE;
	}
	if (n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf)
		*mark = 3;
	return ENC_BYTES;
}

/* The character of the UTF-16 code unit in bytes a, b (in file order): ASCII, or '?'. */
static char utf16_char(int enc, unsigned a, unsigned b)
{
	unsigned u = enc == ENC_UTF16LE ? a | b << 8 : b | a << 8;

	return u < 0x80 ? (char)u : '?';
}

/* UTF-16 in[0..n) (after its mark) as bytes into out (cap > 0, NUL-terminated); its length. */
static size_t utf16_to_bytes(const uint8_t *in, size_t n, int enc, char *out, size_t cap)
{
	size_t k = 0;

	for (size_t i = 0; i + 1 < n && k + 1 < cap; i += 2)
		out[k++] = utf16_char(enc, in[i], in[i + 1]);
	out[k] = 0;
	return k;
}

/*
 * The next line of f into line[0..cap) without its end, as bytes. A longer line keeps its
 * start (the rest is skipped). False at the end of the file.
 */
static bool read_line(FILE *f, int enc, char *line, size_t cap)
{
	if (enc == ENC_BYTES) {
		/* fgets() fills the buffer to its last byte only for a line that does not fit */
		line[cap - 1] = 1;
		if (!fgets(line, (int)cap, f))
			return false;
		if (!line[cap - 1] && line[cap - 2] != '\n') {
			int ch;
			while ((ch = getc(f)) != EOF && ch != '\n')
				;
		}
		return true;
	}
	size_t k = 0;
	int a, b;
	bool any = false;

	while ((a = getc(f)) != EOF && (b = getc(f)) != EOF) {
		char ch = utf16_char(enc, (unsigned)a, (unsigned)b);
		any = true;
		if (ch == '\n')
			break;
		if (k + 1 < cap)
			line[k++] = ch;
	}
	line[k] = 0;
	return any;
}

/*
 * One line: a row joins the snapshot, a summary or header line sets the block. *why says what
 * is wrong with a row that is skipped (NULL when nothing is). 0, or -errno to stop.
 */
static int parse_line(struct tconv *c, char *line, const char **why)
{
	size_t len = strlen(line);
	struct trow row = { 0 };
	char *p;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = 0;
	*why = NULL;
	if (line[0] == '#' || !len)
		return 0;
	if (strstr(line, "Memory:") && strstr(line, "Avail:")) {
		if (flush(c) < 0)
			return c->rc;
		c->poolused = false;
		c->session = false;
		c->avail_bytes = kbytes_after(line, "Avail:");
		return 0;
	}
	if (strstr(line, "Pool N:")) {
		c->np_bytes = kbytes_after(line, "Pool N:");
		p = strstr(line, "Pool N:");
		c->p_bytes = kbytes_after(p, " P:");
		return 0;
	}
	if (strstr(line, "All sessions pool information")) {
		c->session = true;
		return 0;
	}
	if (strstr(line, "System pool information")) {
		c->session = false;
		return 0;
	}
	if (strstr(line, "!poolused") || strstr(line, "Sorting by")) {
		if (c->nrows && flush(c) < 0)
			return c->rc;
		c->poolused = true;
		c->session = strstr(line, "!poolused") && strstr(line, " 8");
		return 0;
	}
	if (strstr(line, "Tag") && strstr(line, "Allocs")) {
		/* column header: a new block when rows came before */
		if (c->nrows && flush(c) < 0)
			return c->rc;
		c->poolused = strstr(line, "Used") && !strstr(line, "Type");
		return 0;
	}
	if (c->poolused) {
		uint64_t v[4];
		const char *s = line;
		if (strstr(line, "NonPaged") || strstr(line, "Pool Used:"))
			return 0;
		if (*s == ' ')
			s++;
		if (!strncmp(s, "TOTAL", 5)) {
			s += 5;
			for (int i = 0; i < 4; i++) {
				int k = next_number(&s, &v[i]);
				if (k <= 0) {
					if (k < 0)
						*why = why_absurd;
					return 0;
				}
			}
			c->total_np = (int64_t)v[1];
			c->total_p = (int64_t)v[3];
			return 0;
		}
		if (strlen(s) < 5 || s[4] != ' ') {
			c->res->skipped++;
			return 0;
		}
		memcpy(row.tag, s, 4);
		s += 4;
		for (int i = 0; i < 4; i++) {
			int k = next_number(&s, &v[i]);
			if (k < 0) {
				*why = why_absurd;
				return 0;
			}
			if (!k) {
				/*
				 * No number after the tag: not a pool row (windbg's "2257 full
				 * reads broken into 2626 partial reads", a prompt, "..."). Some
				 * numbers but not four: a pool row cut short.
				 */
				if (!i || strstr(line, "...") || strstr(line, "kd>"))
					c->res->skipped++;
				else
					*why = why_numbers;
				return 0;
			}
		}
		uint8_t base = c->session ? P_SESSION : P_NONPAGED;
		row.pool = base;
		row.live_objs = (int64_t)v[0];
		row.live_bytes = (int64_t)v[1];
		if (add_row(c, &row) < 0)
			return -ENOMEM;
		row.pool = c->session ? P_SESSION : P_PAGED;
		row.live_objs = (int64_t)v[2];
		row.live_bytes = (int64_t)v[3];
		if (c->session) {
			/* session pool is paged: one session row holds both */
			c->rows[c->nrows - 1].live_objs += row.live_objs;
			c->rows[c->nrows - 1].live_bytes += row.live_bytes;
			return 0;
		}
		return add_row(c, &row) < 0 ? -ENOMEM : 0;
	}
	/*
	 * poolmon row: "<tag> <Nonp|Paged> numbers", the type at column 5 or later. Nothing past
	 * the line's end: fgets() leaves a longer earlier line's bytes after a short line's end,
	 * and a row read from them would be a tag that is not there.
	 */
	char *type = NULL;
	uint8_t pool = P_NONPAGED;
	if (len < 5)
		return 0;
	for (char *q = line + 5; *q; q++) {
		if (q[-1] != ' ')
			continue;
		if (!strncmp(q, "Nonp", 4) && (q[4] == ' ' || !q[4])) {
			type = q;
			pool = P_NONPAGED;
			break;
		}
		if (!strncmp(q, "Paged", 5) && (q[5] == ' ' || !q[5])) {
			type = q;
			pool = P_PAGED;
			break;
		}
	}
	if (!type) {
		c->res->skipped++;
		return 0;
	}
	/*
	 * The tag: what stands before the type, less the line's margin and the spaces between
	 * them; poolmon pads short tags with spaces ("Io  "), and layouts differ in how many
	 * spaces follow the tag ("Strg Paged", "Strg  Paged"). More than 4 characters: not a row.
	 */
	char *tb = line, *te = type;
	while (tb < te && (*tb == ' ' || *tb == '\t'))
		tb++;
	while (te > tb && (te[-1] == ' ' || te[-1] == '\t'))
		te--;
	if (te == tb || te - tb > 4) {
		c->res->skipped++;
		return 0;
	}
	uint64_t v[8];
	int64_t adelta;
	int n = poolmon_numbers(type + (pool == P_PAGED ? 5 : 4), v, 5, &adelta);
	if (n < 4) {
		*why = n == -2 ? why_absurd : why_numbers;
		return 0;
	}
	memset(row.tag, ' ', 4);
	memcpy(row.tag, tb, (size_t)(te - tb));
	row.pool = c->session ? P_SESSION : pool;
	row.allocs = v[0];
	row.frees = v[1];
	row.live_objs = (int64_t)v[2];
	row.live_bytes = (int64_t)v[3];
	row.cumulative = true;
	row.born = v[0] && adelta >= 0 && (uint64_t)adelta == v[0];
	return add_row(c, &row) < 0 ? -ENOMEM : 0;
}

int ps_convert_text(struct ps_trace *t, const char *const *paths, size_t npaths,
		    const struct ps_convert_opts *o, struct ps_convert_result *res, char *err,
		    size_t errlen)
{
	struct tconv c = { .t = t, .o = o, .res = res, .err = err, .errlen = errlen,
			   .np_bytes = -1, .p_bytes = -1, .avail_bytes = -1, .total_np = -1,
			   .total_p = -1 };
	char line[4096];
	int r = 0;

	memset(res, 0, sizeof(*res));
	if (!o->interval_ns || o->interval_ns > (uint64_t)PS_TRACE_TIME_MAX) {
		snprintf(err, errlen, "interval must be 1 ns..2^62 ns");
		return -EINVAL;
	}
	for (size_t i = 0; i < npaths && !r; i++) {
		FILE *f = fopen(paths[i], "r");
		unsigned lineno = 0;
		uint32_t before = res->snapshots + (c.nrows ? 1 : 0);

		if (!f) {
			r = -errno;
			snprintf(err, errlen, "%s: %s", paths[i], strerror(errno));
			break;
		}
		uint8_t head[3];
		size_t mark, nhead = fread(head, 1, sizeof(head), f);
		int enc = text_encoding(head, nhead, &mark);

		if (fseek(f, (long)mark, SEEK_SET)) {
			r = -errno;
			snprintf(err, errlen, "%s: %s", paths[i], strerror(errno));
			fclose(f);
			break;
		}
		while (read_line(f, enc, line, sizeof(line))) {
			const char *why;
			lineno++;
			c.path = paths[i];
			c.lineno = lineno;
			r = parse_line(&c, line, &why);
			if (r < 0) {
				if (!c.rc)
					snprintf(err, errlen, "%s: line %u: %s", paths[i], lineno,
						 strerror(-r));
				break;
			}
			if (why)
				line_problem(res, paths[i], lineno, why);
		}
		fclose(f);
		if (!r && res->snapshots + (c.nrows ? 1 : 0) == before && !c.nrows) {
			snprintf(err, errlen, "%s: no poolmon or !poolused pool rows found in %u lines",
				 paths[i], lineno);
			r = -PS_ERR__SYNTAX;
		}
		/* A snapshot does not continue into the next file. */
		if (!r)
			r = flush(&c);
	}
	if (!r) {
		r = ps_trace_set_meta(t, PS_META_OS, PS_OS_WINDOWS);
		r = r ?: ps_trace_set_meta(t, PS_META_SOURCE, c.kind == PS_INPUT_POOLUSED ?
					   PS_SOURCE_POOLUSED : PS_SOURCE_POOLMON);
		r = r ?: ps_trace_set_meta_int(t, PS_META_LIVE_ABSOLUTE, 1);
		r = r ?: ps_trace_set_meta_int(t, PS_META_INTERVAL_NS, (int64_t)o->interval_ns);
		r = r ?: ps_trace_set_meta_int(t, PS_META_START_WALL_NS, 0);
		r = r ?: ps_trace_set_meta(t, PS_META_TOOL_VERSION, POOLSCOPE_VERSION);
		if (r) {
			snprintf(err, errlen, "writing the trace: %s", ps_trace_errmsg(t));
			r = r < 0 ? r : -EIO;
		}
	}
	free(c.rows);
	free(c.tags);
	ps_kmap_free(&c.tagmap);
	return r ? r : c.rc;
}

int ps_convert_detect(const char *path)
{
	uint8_t b[4096];
	char text[2048];
	int fd = open(path, O_RDONLY | O_CLOEXEC), n;

	if (fd < 0)
		return -errno;
	n = (int)read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	/* ETL: a buffer header, then a SYSTEM32/64 event with HookId 0 (TRACE_LOGFILE_HEADER) */
	if (n >= 0x50 && b[0x4b] == 0xc0 && (b[0x4a] == 1 || b[0x4a] == 2) &&
	    b[0x4e] == 0 && b[0x4f] == 0)
		return PS_INPUT_ETL;
	size_t mark;
	int enc = text_encoding(b, (size_t)n, &mark);
	const char *s = (const char *)b + mark;

	if (enc != ENC_BYTES) {
		n = (int)utf16_to_bytes(b + mark, (size_t)n - mark, enc, text, sizeof(text));
		s = text;
	} else {
		b[n] = 0;
		n -= (int)mark;
	}
	if (memchr(s, 0, (size_t)n))
		return PS_INPUT_UNKNOWN;
	if (!strncmp(s, "#poolscope-sample", 17))
		return PS_INPUT_POOLSAMPLE;
	if (strstr(s, "!poolused") || strstr(s, "Sorting by") || strstr(s, "Pool Used:"))
		return PS_INPUT_POOLUSED;
	if (strstr(s, "Tag") && strstr(s, "Type") && (strstr(s, "Nonp") || strstr(s, "Paged")))
		return PS_INPUT_POOLMON;
	return PS_INPUT_UNKNOWN;
}

const char *ps_input_kind_name(int kind)
{
	switch (kind) {
	case PS_INPUT_ETL: return "etl";
	case PS_INPUT_POOLMON: return "poolmon";
	case PS_INPUT_POOLUSED: return "poolused";
	case PS_INPUT_POOLSAMPLE: return "poolscope-win sample";
	default: return "unknown";
	}
}
