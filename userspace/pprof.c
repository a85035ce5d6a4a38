// SPDX-License-Identifier: GPL-2.0
/*
 * `export --pprof`: the trace's sampled stacks as a pprof profile. The message is built with
 * protobuf-c from pprof's own profile.proto (generated at build time) and gzipped with zlib, as
 * pprof writes it. Functions are named as `export --folded` names frames (symbol without its
 * offset, module+offset, or the address), so the two views agree; one location per function.
 *
 * Values: the report's figures of each tag over its window split between the tag's sampled
 * stacks (analysis/stackshare.h), so that a tag's totals in pprof are the report's: inuse_space
 * its live bytes at the window's end, inuse_objects its live objects, alloc_objects and
 * alloc_space what it allocated within the window. A tag's share no sampled stack holds is one
 * sample under the frame "[no sampled stack]".
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "analysis/label.h"
#include "gen/profile.pb-c.h"
#include "userspace/lib/kmem/htab.h"
#include "userspace/lib/trace/keys.h"
#include "userspace/lib/util/util.h"
#include "userspace/pprof.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

enum { V_ALLOC_OBJECTS, V_ALLOC_SPACE, V_INUSE_OBJECTS, V_INUSE_SPACE, V__N };

/* Everything the profile points into, freed together. */
struct pb {
	Profile p;
	char **strs;
	size_t nstrs, capstrs;
	struct ps_htab str_idx;		/* FNV of a string -> its index + 1 */
	struct ps_htab fn_idx;		/* (name, mapping) -> function id */
	ValueType vt[V__N], period;
	ValueType *vtp[V__N];
	Mapping *maps;
	Mapping **mapp;
	size_t nmaps, capmaps;
	Function *fns;
	Location *locs;
	Line *lines;
	Line **linep;
	size_t nfns, capfns;
	Sample *samples;
	Sample **samplep;
	uint64_t *loc_ids;
	int64_t *values;
	Label *labels;
	Label **labelp;
	size_t nsamples;
};

static int64_t str_id(struct pb *b, const char *s)
{
	uint64_t h = ps_hash_bytes(s, strlen(s));
	void *v = ps_htab_get(&b->str_idx, &h);

	if (v && !strcmp(b->strs[(uintptr_t)v - 1], s))
		return (int64_t)((uintptr_t)v - 1);
	if (ps_array_reserve((void **)&b->strs, &b->capstrs, b->nstrs + 1, sizeof(*b->strs)))
		return -ENOMEM;
	b->strs[b->nstrs] = strdup(s);
	if (!b->strs[b->nstrs])
		return -ENOMEM;
	/* on a hash collision the second string is kept twice: harmless for pprof */
	if (!v && ps_htab_put(&b->str_idx, &h, (void *)(uintptr_t)(b->nstrs + 1)))
		return -ENOMEM;
	return (int64_t)b->nstrs++;
}

/* The mapping of a module (NULL: the kernel image), made on first use; 0 on ENOMEM. */
static uint64_t mapping_id(struct pb *b, const char *module, const char *kernel)
{
	const char *name = module ? module : kernel;
	int64_t s = str_id(b, name);

	if (s < 0)
		return 0;
	for (size_t i = 0; i < b->nmaps; i++)
		if (b->maps[i].filename == s)
			return b->maps[i].id;
	if (ps_array_reserve((void **)&b->maps, &b->capmaps, b->nmaps + 1, sizeof(*b->maps)))
		return 0;
	b->maps[b->nmaps] = (Mapping)PERFTOOLS__PROFILES__MAPPING__INIT;
	b->maps[b->nmaps].id = b->nmaps + 1;
	b->maps[b->nmaps].filename = s;
	b->maps[b->nmaps].has_functions = 1;
	return ++b->nmaps;
}

/*
 * The location (one per function) of a frame name in a mapping; 0 on ENOMEM. With a source
 * line, the function gets the file of the out-of-line function holding it, and the location
 * the line there of the first frame seen.
 */
static uint64_t location_id(struct pb *b, const char *name, uint64_t map, const struct ps_src *src)
{
	int64_t s = str_id(b, name), key[2];
	void *v;

	if (s < 0 || !map)
		return 0;
	key[0] = s;
	key[1] = (int64_t)map;
	v = ps_htab_get(&b->fn_idx, key);
	if (v)
		return (uint64_t)(uintptr_t)v;
	if (b->nfns == b->capfns) {
		Location *l;
		Line *ln;

		if (ps_array_reserve((void **)&b->fns, &b->capfns, b->nfns + 1, sizeof(*b->fns)))
			return 0;
		l = realloc(b->locs, b->capfns * sizeof(*b->locs));
		if (!l)
			return 0;
		b->locs = l;
		ln = realloc(b->lines, b->capfns * sizeof(*b->lines));
		if (!ln)
			return 0;
		b->lines = ln;
	}
	b->fns[b->nfns] = (Function)PERFTOOLS__PROFILES__FUNCTION__INIT;
	b->fns[b->nfns].id = b->nfns + 1;
	b->fns[b->nfns].name = s;
	b->fns[b->nfns].system_name = s;
	b->lines[b->nfns] = (Line)PERFTOOLS__PROFILES__LINE__INIT;
	b->lines[b->nfns].function_id = b->nfns + 1;
	if (src) {
		int64_t f = str_id(b, src->call_file ? src->call_file : src->file);

		if (f < 0)
			return 0;
		b->fns[b->nfns].filename = f;
		b->lines[b->nfns].line = src->call_file ? src->call_line : src->line;
	}
	b->locs[b->nfns] = (Location)PERFTOOLS__PROFILES__LOCATION__INIT;
	b->locs[b->nfns].id = b->nfns + 1;
	b->locs[b->nfns].mapping_id = map;
	b->nfns++;
	if (ps_htab_put(&b->fn_idx, key, (void *)(uintptr_t)b->nfns))
		return 0;
	return b->nfns;
}

static void frame_name(const struct ps_frame *fr, char *buf, size_t len)
{
	const char *plus;

	if (fr->sym) {
		plus = strchr(fr->sym, '+');
		snprintf(buf, len, "%.*s", plus ? (int)(plus - fr->sym) : (int)strlen(fr->sym),
			 fr->sym);
	} else if (fr->module) {
		snprintf(buf, len, "%s+0x%" PRIx64, fr->module, fr->off);
	} else {
		snprintf(buf, len, "0x%" PRIx64, fr->addr);
	}
}

static int build(struct pb *b, const struct ps_run *r, const struct ps_stack_share *e,
		 size_t ne)
{
	static const char *const names[V__N][2] = {
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	};
	const char *os = ps_run_meta(r, PS_META_OS), *wall = ps_run_meta(r, PS_META_START_WALL_NS);
	const char *kernel = os && !strcmp(os, PS_OS_WINDOWS) ? "ntoskrnl.exe" : "vmlinux";
	size_t nloc = 0, n = 0;
	int64_t tag_key;
	char name[512], lb[256];

	/* string 0 is "" by the format; mapping 1, the one pprof names as the profile's file */
	if (str_id(b, "") != 0 || !mapping_id(b, NULL, kernel))
		return -ENOMEM;
	for (int i = 0; i < V__N; i++) {
		b->vt[i] = (ValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
		b->vt[i].type = str_id(b, names[i][0]);
		b->vt[i].unit = str_id(b, names[i][1]);
		b->vtp[i] = &b->vt[i];
	}
	b->period = b->vt[V_INUSE_SPACE];
	tag_key = str_id(b, "tag");
	for (size_t i = 0; i < ne; i++)
		nloc += (e[i].st ? e[i].st->nframes : 1) + 1;
	b->samples = calloc(ne + 1, sizeof(*b->samples));
	b->samplep = calloc(ne + 1, sizeof(*b->samplep));
	b->loc_ids = calloc(nloc + 1, sizeof(*b->loc_ids));
	b->values = calloc((ne + 1) * V__N, sizeof(*b->values));
	b->labels = calloc(ne + 1, sizeof(*b->labels));
	b->labelp = calloc(ne + 1, sizeof(*b->labelp));
	if (!b->samples || !b->samplep || !b->loc_ids || !b->values || !b->labels || !b->labelp ||
	    tag_key < 0)
		return -ENOMEM;
	nloc = 0;
	for (size_t i = 0; i < ne; i++) {
		const struct ps_stack *st = e[i].st;
		Sample *s = &b->samples[n];
		int64_t *v = &b->values[n * V__N];
		uint64_t id;

		*s = (Sample)PERFTOOLS__PROFILES__SAMPLE__INIT;
		s->location_id = &b->loc_ids[nloc];
		/* the tag first, as the leaf: what was allocated, under the code that did it */
		ps_tag_label(&e[i].ts->tag, lb, sizeof(lb));
		id = location_id(b, lb, mapping_id(b, NULL, "poolscope tags"), NULL);
		if (!id)
			return -ENOMEM;
		b->loc_ids[nloc++] = id;
		for (uint32_t k = 0; st && k < st->nframes; k++) {
			const struct ps_frame *fr = &st->frames[k];

			frame_name(fr, name, sizeof(name));
			id = location_id(b, name, mapping_id(b, fr->module, kernel), fr->src);
			if (!id)
				return -ENOMEM;
			b->loc_ids[nloc++] = id;
		}
		if (!st) {
			id = location_id(b, PS_NO_STACK_FRAME, mapping_id(b, NULL, "poolscope tags"),
					 NULL);
			if (!id)
				return -ENOMEM;
			b->loc_ids[nloc++] = id;
		}
		s->n_location_id = (st ? st->nframes : 1) + 1;
		v[V_ALLOC_OBJECTS] = e[i].alloc_objs;
		v[V_ALLOC_SPACE] = e[i].alloc_bytes;
		v[V_INUSE_OBJECTS] = e[i].inuse_objs;
		v[V_INUSE_SPACE] = e[i].inuse_bytes;
		s->value = v;
		s->n_value = V__N;
		b->labels[n] = (Label)PERFTOOLS__PROFILES__LABEL__INIT;
		b->labels[n].key = tag_key;
		b->labels[n].str = str_id(b, lb);
		if (b->labels[n].str < 0)
			return -ENOMEM;
		b->labelp[n] = &b->labels[n];
		s->label = &b->labelp[n];
		s->n_label = 1;
		b->samplep[n] = s;
		n++;
	}
	b->mapp = calloc(b->nmaps + 1, sizeof(*b->mapp));
	b->linep = calloc(b->nfns + 1, sizeof(*b->linep));
	if (!b->mapp || !b->linep)
		return -ENOMEM;
	for (size_t i = 0; i < b->nmaps; i++)
		b->mapp[i] = &b->maps[i];
	b->p.n_mapping = b->nmaps;
	b->p.mapping = b->mapp;
	b->p.function = calloc(b->nfns + 1, sizeof(*b->p.function));
	b->p.location = calloc(b->nfns + 1, sizeof(*b->p.location));
	if (!b->p.function || !b->p.location)
		return -ENOMEM;
	for (size_t i = 0; i < b->nfns; i++) {
		b->linep[i] = &b->lines[i];
		b->locs[i].line = &b->linep[i];
		b->locs[i].n_line = 1;
		b->p.function[i] = &b->fns[i];
		b->p.location[i] = &b->locs[i];
	}
	b->p.n_function = b->p.n_location = b->nfns;
	b->p.sample_type = b->vtp;
	b->p.n_sample_type = V__N;
	b->p.sample = b->samplep;
	b->p.n_sample = n;
	b->p.period_type = &b->period;
	b->p.period = 1;
	b->p.default_sample_type = b->vt[V_INUSE_SPACE].type;
	b->p.time_nanos = wall ? strtoll(wall, NULL, 10) : 0;
	b->p.duration_nanos = r->nintervals ? (int64_t)r->intervals[r->nintervals - 1].t_ns : 0;
	b->p.string_table = b->strs;
	b->p.n_string_table = b->nstrs;
	b->nsamples = n;
	return 0;
}

static void pb_free(struct pb *b)
{
	for (size_t i = 0; i < b->nstrs; i++)
		free(b->strs[i]);
	free(b->strs);
	ps_htab_fini(&b->str_idx);
	ps_htab_fini(&b->fn_idx);
	free(b->maps);
	free(b->mapp);
	free(b->fns);
	free(b->locs);
	free(b->lines);
	free(b->linep);
	free(b->p.function);
	free(b->p.location);
	free(b->samples);
	free(b->samplep);
	free(b->loc_ids);
	free(b->values);
	free(b->labels);
	free(b->labelp);
}

int ps_pprof_write(const struct ps_run *r, const struct ps_stack_share *e, size_t ne,
		   const char *path, bool force, char *err, size_t errlen)
{
	struct pb b = { .p = PERFTOOLS__PROFILES__PROFILE__INIT };
	uint8_t *buf = NULL;
	size_t len;
	gzFile gz = NULL;
	int fd = -1, rc;

	if ((rc = ps_htab_init(&b.str_idx, sizeof(uint64_t))) ||
	    (rc = ps_htab_init(&b.fn_idx, 2 * sizeof(int64_t))) || (rc = build(&b, r, e, ne))) {
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		goto out;
	}
	len = perftools__profiles__profile__get_packed_size(&b.p);
	buf = malloc(len ? len : 1);
	if (!buf) {
		rc = -ENOMEM;
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		goto out;
	}
	perftools__profiles__profile__pack(&b.p, buf);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), 0644);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
			 errno == EEXIST ? " (use --force to replace it)" : "");
		goto out;
	}
	gz = gzdopen(fd, "wb");
	if (!gz) {
		rc = -ENOMEM;
		snprintf(err, errlen, "%s: cannot start gzip", path);
		goto out;
	}
	fd = -1;	/* the gzFile owns it */
	for (size_t off = 0; off < len;) {
		unsigned chunk = len - off > (1u << 30) ? 1u << 30 : (unsigned)(len - off);

		if (gzwrite(gz, buf + off, chunk) != (int)chunk) {
			rc = -EIO;
			snprintf(err, errlen, "%s: write failed (disk full?)", path);
			goto out;
		}
		off += chunk;
	}
	rc = gzclose(gz) == Z_OK ? 0 : -EIO;
	gz = NULL;
	if (rc)
		snprintf(err, errlen, "%s: write failed (disk full?)", path);
out:
	if (gz)
		gzclose(gz);
	if (fd >= 0)
		close(fd);
	free(buf);
	pb_free(&b);
	return rc;
}
