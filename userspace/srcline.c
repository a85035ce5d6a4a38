// SPDX-License-Identifier: GPL-2.0
/*
 * Source lines from the kernel's debuginfo, through libdwfl (elfutils).
 *
 * Call sites and frames are stored as symbol+offset, which KASLR and module load addresses do
 * not change. libdwfl lays a debuginfo file out offline: vmlinux at its link addresses, a module
 * (ET_REL) section by section, relocating its DWARF; the symbol's address in that layout plus
 * the offset is the same instruction. One Dwfl per file keeps the layouts apart.
 *
 * Offsets are of return addresses (the tracepoints' call_site is _RET_IP_; stack frames above
 * the innermost are return addresses): the line looked up is the byte before, which is the
 * call instruction's, as perf and addr2line -i do for callers.
 */
#include "userspace/srcline.h"
#include "userspace/lib/trace/keys.h"
#include "userspace/lib/util/util.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <limits.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

struct srcsym {
	const char *name;	/* in the file's string table: lives as long as the Dwfl */
	uint64_t addr;
	uint64_t size;
};

struct srcmod {
	char *name;		/* "" for vmlinux, else the module name with '-' as '_' */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct srcsym *syms;	/* sorted by name, then address */
	size_t nsyms;
};

struct modfile {
	char *name;		/* module name, '-' as '_' */
	char *path;
};

struct ps_srcmap {
	struct srcmod *mods;	/* opened modules, and the names of those not found (no dwfl) */
	size_t nmods;
	char *vmlinux;
	char *moddir;		/* searched for NAME.ko* on first use */
	struct modfile *files;
	size_t nfiles;
	bool indexed;
	char why[512];		/* why there is no vmlinux, when there is none */
	char file[512], func[256], caller[256], call_file[512];
};

static char *dbg_path;		/* libdwfl's default: ":.debug:/usr/lib/debug" */
static const Dwfl_Callbacks offline_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &dbg_path,
};

static void modname(const char *in, char *out, size_t len)
{
	ps_strlcpy(out, in, len);
	for (char *p = out; *p; p++)
		if (*p == '-')
			*p = '_';
}

static int sym_cmp(const void *a, const void *b)
{
	const struct srcsym *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void mod_fini(struct srcmod *sm)
{
	if (sm->dwfl)
		dwfl_end(sm->dwfl);
	free(sm->syms);
	free(sm->name);
}

static int hex_build_id(Dwfl_Module *mod, char *buf, size_t len)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);

	buf[0] = 0;
	if (n <= 0 || (size_t)n * 2 >= len)
		return -ENOENT;
	for (int i = 0; i < n; i++)
		snprintf(buf + 2 * i, 3, "%02x", bits[i]);
	return 0;
}

/*
 * Opens path as the debuginfo of sm->name: ELF with DWARF, and when build_id is given, that
 * build id. -EINVAL with err naming the file otherwise.
 */
static int mod_load(struct srcmod *sm, const char *path, const char *build_id, char *err,
		    size_t errlen)
{
	Dwarf_Addr bias;
	char id[128];
	int n, e = -EINVAL;

	sm->dwfl = dwfl_begin(&offline_cb);
	if (!sm->dwfl)
		return -ENOMEM;
	dwfl_report_begin(sm->dwfl);
	sm->mod = dwfl_report_offline(sm->dwfl, sm->name[0] ? sm->name : "kernel", path, -1);
	dwfl_report_end(sm->dwfl, NULL, NULL);
	if (!sm->mod) {
		snprintf(err, errlen, "%s: not an ELF file libdw can read (%s)", path,
			 dwfl_errmsg(-1));
		goto fail;
	}
	if (build_id && *build_id && hex_build_id(sm->mod, id, sizeof(id))) {
		snprintf(err, errlen, "%s: no build id, but the trace's kernel has %s: nothing "
			 "says its lines are that build's", path, build_id);
		goto fail;
	}
	if (build_id && *build_id && strcasecmp(id, build_id)) {
		snprintf(err, errlen, "%s: build id %s, but the trace's kernel has %s: its lines "
			 "would be another build's", path, id, build_id);
		goto fail;
	}
	if (!dwfl_module_getdwarf(sm->mod, &bias)) {
		snprintf(err, errlen, "%s: no DWARF debuginfo in it (%s)", path, dwfl_errmsg(-1));
		goto fail;
	}
	n = dwfl_module_getsymtab(sm->mod);
	if (n <= 0) {
		snprintf(err, errlen, "%s: no symbol table in it", path);
		goto fail;
	}
	sm->syms = calloc((size_t)n, sizeof(*sm->syms));
	if (!sm->syms) {
		e = -ENOMEM;
		goto fail;
	}
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr a;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(sm->mod, i, &s, &a, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(s.st_info);

		if (!name || !*name || shndx == SHN_UNDEF || shndx == SHN_ABS ||
		    (type != STT_FUNC && type != STT_NOTYPE))
			continue;
		sm->syms[sm->nsyms++] = (struct srcsym){ name, a, s.st_size };
	}
	qsort(sm->syms, sm->nsyms, sizeof(*sm->syms), sym_cmp);
	return 0;
fail:
	dwfl_end(sm->dwfl);
	sm->dwfl = NULL;
	sm->mod = NULL;
	return e;
}

static struct srcmod *mod_add(struct ps_srcmap *m, const char *name)
{
	struct srcmod *n = realloc(m->mods, (m->nmods + 1) * sizeof(*n));
	char nm[128];

	if (!n)
		return NULL;
	m->mods = n;
	modname(name, nm, sizeof(nm));
	n = &m->mods[m->nmods];
	memset(n, 0, sizeof(*n));
	n->name = strdup(nm);
	if (!n->name)
		return NULL;
	m->nmods++;
	return n;
}

/* --- the module directory -------------------------------------------------------------------- */

static struct ps_srcmap *walk_map;	/* nftw has no context argument */
static int walk_err;

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	/* what libdw opens: zstd-compressed modules it reads from 0.191 on, not here */
	static const char *const ext[] = { ".ko", ".ko.debug", ".ko.xz", ".ko.gz" };
	const char *base = path + ftw->base;
	struct modfile *n;
	char nm[128];
	size_t bl = strlen(base), k;

	/* a FIFO or device would block the open */
	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	for (k = 0; k < ARRAY_SIZE(ext); k++) {
		size_t el = strlen(ext[k]);

		if (bl > el && !strcmp(base + bl - el, ext[k]))
			break;
	}
	if (k == ARRAY_SIZE(ext))
		return 0;
	bl = (size_t)(strstr(base, ".ko") - base);
	if (bl >= sizeof(nm))
		return 0;
	memcpy(nm, base, bl);
	nm[bl] = 0;
	n = realloc(walk_map->files, (walk_map->nfiles + 1) * sizeof(*n));
	if (!n) {
		walk_err = -ENOMEM;
		return 1;
	}
	walk_map->files = n;
	modname(nm, nm, sizeof(nm));
	n[walk_map->nfiles].name = strdup(nm);
	n[walk_map->nfiles].path = strdup(path);
	if (!n[walk_map->nfiles].name || !n[walk_map->nfiles].path) {
		free(n[walk_map->nfiles].name);
		free(n[walk_map->nfiles].path);
		walk_err = -ENOMEM;
		return 1;
	}
	walk_map->nfiles++;
	return 0;
}

/* .ko.debug (split debuginfo) before .ko before the compressed ones */
static int file_rank(const char *path)
{
	size_t l = strlen(path);

	if (l > 9 && !strcmp(path + l - 9, ".ko.debug"))
		return 0;
	return l > 3 && !strcmp(path + l - 3, ".ko") ? 1 : 2;
}

/* Loads the module's debuginfo: its files under the module directory, best first. */
static int module_load(struct ps_srcmap *m, struct srcmod *sm)
{
	char err[512];

	if (!m->moddir)
		return -ENOENT;
	if (!m->indexed) {
		m->indexed = true;
		walk_map = m;
		walk_err = 0;
		/* physical: a link loop cannot hold the walk (moddir itself is resolved) */
		nftw(m->moddir, walk_one, 16, FTW_PHYS);
		walk_map = NULL;
		if (walk_err) {
			/* out of memory: a partial index would hide modules; say so instead */
			for (size_t i = 0; i < m->nfiles; i++) {
				free(m->files[i].name);
				free(m->files[i].path);
			}
			free(m->files);
			m->files = NULL;
			m->nfiles = 0;
			m->indexed = false;
			return walk_err;
		}
	}
	for (int rank = 0; rank < 3; rank++)
		for (size_t i = 0; i < m->nfiles; i++) {
			int r;

			if (strcmp(m->files[i].name, sm->name) || file_rank(m->files[i].path) != rank)
				continue;
			r = mod_load(sm, m->files[i].path, NULL, err, sizeof(err));
			/* a file that does not load is skipped for the next; memory is not */
			if (!r || r == -ENOMEM)
				return r;
		}
	return -ENOENT;
}

/* --- opening --------------------------------------------------------------------------------- */

static bool is_file(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISREG(st.st_mode);
}

static bool is_dir(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

/*
 * Tries each usual place of vmlinux; 0 when one loaded, else err says what was tried, and
 * *other is set when one was there but of another build (or none).
 */
static int find_vmlinux(struct ps_srcmap *m, struct srcmod *vm, const struct ps_srcmap_opts *o,
			const char *root, char *err, size_t errlen, bool *other)
{
	char cand[6][512], why[512] = "";
	size_t n = 0;

	if (o->build_id && strlen(o->build_id) > 2)
		snprintf(cand[n++], sizeof(cand[0]), "%s/.build-id/%.2s/%s.debug", root, o->build_id,
			 o->build_id + 2);
	if (o->release) {
		snprintf(cand[n++], sizeof(cand[0]), "%s/boot/vmlinux-%s", root, o->release);
		snprintf(cand[n++], sizeof(cand[0]), "%s/lib/modules/%s/vmlinux", root, o->release);
		if (!o->debuginfo) {
			snprintf(cand[n++], sizeof(cand[0]), "/boot/vmlinux-%s", o->release);
			snprintf(cand[n++], sizeof(cand[0]), "/lib/modules/%s/build/vmlinux",
				 o->release);
		}
	}
	for (size_t i = 0; i < n; i++) {
		char e1[512];
		int e;

		if (!is_file(cand[i]))
			continue;
		e = mod_load(vm, cand[i], o->build_id, e1, sizeof(e1));
		if (!e) {
			m->vmlinux = strdup(cand[i]);
			return m->vmlinux ? 0 : -ENOMEM;
		}
		if (e == -ENOMEM)
			return e;
		ps_strlcpy(why, e1, sizeof(why));
		if (strstr(e1, "build id"))
			*other = true;
	}
	if (why[0])
		snprintf(err, errlen, "%s", why);
	else
		snprintf(err, errlen, "no vmlinux with debuginfo for kernel %s under %s%s",
			 o->release ? o->release : "(release unknown)", root,
			 o->debuginfo ? "" : ", /boot or /lib/modules/RELEASE/build");
	return -ENOENT;
}

int ps_srcmap_open(struct ps_srcmap **out, const struct ps_srcmap_opts *o, char *err,
		   size_t errlen)
{
	const char *root = o->debuginfo ? o->debuginfo : "/usr/lib/debug";
	struct ps_srcmap *m = calloc(1, sizeof(*m));
	struct srcmod *vm;
	char md[600], real[PATH_MAX], verr[512] = "";
	bool other = false;
	int e;

	*out = NULL;
	err[0] = 0;
	if (!m)
		return -ENOMEM;
	if (o->debuginfo && !is_dir(o->debuginfo)) {
		snprintf(err, errlen, "%s: not a directory (--debuginfo wants a debug root, as "
			 "/usr/lib/debug)", o->debuginfo);
		e = -EINVAL;
		goto fail;
	}
	vm = mod_add(m, "");
	if (!vm) {
		e = -ENOMEM;
		goto fail;
	}
	if (o->vmlinux) {
		if (!is_file(o->vmlinux)) {
			snprintf(err, errlen, "%s: %s", o->vmlinux,
				 access(o->vmlinux, F_OK) ? strerror(errno) : "not a regular file");
			e = -EINVAL;
			goto fail;
		}
		e = mod_load(vm, o->vmlinux, o->build_id, err, errlen);
		if (e)
			goto fail;
		m->vmlinux = strdup(o->vmlinux);
		if (!m->vmlinux) {
			e = -ENOMEM;
			goto fail;
		}
	} else {
		e = find_vmlinux(m, vm, o, root, verr, sizeof(verr), &other);
		if (e == -ENOMEM)
			goto fail;
		ps_strlcpy(m->why, verr, sizeof(m->why));
	}
	/*
	 * The modules beside a vmlinux of another build are that build's too (their own build ids
	 * are not in the trace to check them by).
	 */
	if (o->release && !other) {
		snprintf(md, sizeof(md), "%s/lib/modules/%s", root, o->release);
		if (is_dir(md) && realpath(md, real) && !(m->moddir = strdup(real))) {
			e = -ENOMEM;
			goto fail;
		}
	}
	if (!m->vmlinux && !m->moddir) {
		snprintf(err, errlen, "%s%s", verr, other ? " (its modules are not used either)" : "");
		e = -ENOENT;
		goto fail;
	}
	*out = m;
	return 0;
fail:
	ps_srcmap_free(m);
	return e;
}

void ps_srcmap_free(struct ps_srcmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nmods; i++)
		mod_fini(&m->mods[i]);
	for (size_t i = 0; i < m->nfiles; i++) {
		free(m->files[i].name);
		free(m->files[i].path);
	}
	free(m->files);
	free(m->mods);
	free(m->vmlinux);
	free(m->moddir);
	free(m);
}

const char *ps_srcmap_vmlinux(const struct ps_srcmap *m)
{
	return m->vmlinux;
}

/* --- lookup ---------------------------------------------------------------------------------- */

/* The module's debuginfo in *out: 0, -ENOENT when it has none, -ENOMEM. */
static int mod_get(struct ps_srcmap *m, const char *module, struct srcmod **out)
{
	char nm[128];
	struct srcmod *sm;
	int e;

	*out = NULL;
	modname(module ? module : "", nm, sizeof(nm));
	for (size_t i = 0; i < m->nmods; i++)
		if (!strcmp(m->mods[i].name, nm)) {
			*out = m->mods[i].mod ? &m->mods[i] : NULL;
			return *out ? 0 : -ENOENT;
		}
	/* looked up once: a module without debuginfo stays without */
	sm = mod_add(m, nm);
	if (!sm)
		return -ENOMEM;
	e = module_load(m, sm);
	if (e)
		return e;
	*out = sm;
	return 0;
}

static const struct srcsym *sym_find(const struct srcmod *sm, const char *name, uint64_t off)
{
	size_t lo = 0, hi = sm->nsyms, first, nsized = 0, n;
	const struct srcsym *only = NULL;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(sm->syms[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	/* a return address may be the function's end: after a call to a noreturn function */
	for (n = first; n < sm->nsyms && !strcmp(sm->syms[n].name, name); n++)
		if (sm->syms[n].size && sm->syms[n].size >= off) {
			nsized++;
			only = &sm->syms[n];
		}
	/*
	 * Static functions share names (kallsyms lists each): the one the offset fits in, and
	 * when several fit, none; a wrong line would be worse than no line.
	 */
	if (nsized == 1)
		return only;
	if (!nsized && n - first == 1 && !sm->syms[first].size)
		return &sm->syms[first];
	return NULL;
}

/* "a/./b/../c" -> "a/c" in place, lexically; a ".." past a relative start stays */
static void canon(char *p)
{
	char buf[1024], *comp[128], *save = NULL, *t;
	size_t n = 0, o = 0;
	bool abs = *p == '/';

	ps_strlcpy(buf, p, sizeof(buf));
	for (t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
		if (!strcmp(t, "."))
			continue;
		if (!strcmp(t, "..") && n && strcmp(comp[n - 1], ".."))
			n--;
		else if (!strcmp(t, "..") && abs)
			continue;
		else if (n < ARRAY_SIZE(comp))
			comp[n++] = t;
	}
	if (abs)
		p[o++] = '/';
	for (size_t i = 0; i < n; i++)
		o += (size_t)sprintf(p + o, "%s%s", i ? "/" : "", comp[i]);
	p[o] = 0;
}

/*
 * The path relative to the kernel tree: joined to the compilation directory and made canonical,
 * then without the longest directory it shares with the compilation directory (the tree
 * itself, or the tree holding an O= build directory: Debian builds in debian/build/... under
 * it). A path that shares nothing but "/" with it stays absolute.
 */
static void norm_path(const char *f, const char *comp, char *out, size_t len)
{
	char full[1024], cd[512];
	size_t k = 0, cut = 0;

	if (f[0] != '/' && comp && comp[0] == '/')
		snprintf(full, sizeof(full), "%s/%s", comp, f);
	else
		ps_strlcpy(full, f, sizeof(full));
	canon(full);
	if (full[0] != '/' || !comp || comp[0] != '/') {
		ps_strlcpy(out, full, len);
		return;
	}
	ps_strlcpy(cd, comp, sizeof(cd));
	canon(cd);
	/* the longest common prefix ending at a '/' of both (cd as a directory) */
	for (k = 0; full[k] && full[k] == cd[k]; k++)
		if (full[k] == '/')
			cut = k;
	if (!cd[k] && full[k] == '/')
		cut = k;
	ps_strlcpy(out, cut > 0 ? full + cut + 1 : full, len);
}

static const char *die_name(Dwarf_Die *d)
{
	const char *n = dwarf_diename(d);

	return n ? n : "?";
}

/* The first child of parent with tag holding pc, looking through lexical blocks. */
static bool find_pc_die(Dwarf_Die *parent, int tag, Dwarf_Addr pc, Dwarf_Die *out)
{
	Dwarf_Die c;

	if (dwarf_child(parent, &c))
		return false;
	do {
		int t = dwarf_tag(&c);

		if (t == tag && dwarf_haspc(&c, pc) == 1) {
			*out = c;
			return true;
		}
		if (t == DW_TAG_lexical_block && find_pc_die(&c, tag, pc, out))
			return true;
	} while (!dwarf_siblingof(&c, &c));
	return false;
}

int ps_srcmap_lookup(struct ps_srcmap *m, const char *module, const char *sym, uint64_t off,
		     struct ps_src *out)
{
	struct srcmod *sm;
	const struct srcsym *s;
	Dwarf_Die *cu, *scopes = NULL;
	Dwarf_Attribute at;
	const char *f, *comp = NULL;
	Dwarf_Addr bias, q;
	Dwfl_Line *l;
	Dwarf_Die prog, inl;
	bool inlined = false;
	int line = 0, n = mod_get(m, module, &sm);

	if (n)
		return n;
	if (!sym || !(s = sym_find(sm, sym, off)))
		return -ENOENT;
	/*
	 * +0x0 too: a return address at a function's start follows a call to a noreturn function
	 * that ended the one before it, whose line it is.
	 */
	q = s->addr + off - 1;
	l = dwfl_module_getsrc(sm->mod, q);
	f = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
	if (!f || line <= 0)
		return -ENOENT;
	cu = dwfl_module_addrdie(sm->mod, q, &bias);
	if (cu)
		comp = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &at));
	memset(out, 0, sizeof(*out));
	norm_path(f, comp, m->file, sizeof(m->file));
	out->file = m->file;
	out->line = (uint32_t)line;
	/*
	 * The innermost function from the scopes at the address; libdw continues an inlined
	 * instance's scopes with its abstract definition's, so the caller that inlined it is
	 * found in the CU: the subprogram holding the address, and in it the outermost inlined
	 * instance holding it.
	 */
	n = cu ? dwarf_getscopes(cu, q - bias, &scopes) : 0;
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
			ps_strlcpy(m->func, die_name(&scopes[i]), sizeof(m->func));
			out->func = m->func;
			inlined = tag == DW_TAG_inlined_subroutine;
			break;
		}
	}
	if (inlined && find_pc_die(cu, DW_TAG_subprogram, q - bias, &prog) &&
	    find_pc_die(&prog, DW_TAG_inlined_subroutine, q - bias, &inl)) {
		Dwarf_Word fidx = 0, cl = 0;
		Dwarf_Files *files;
		size_t nf;
		const char *cf = NULL;

		ps_strlcpy(m->caller, die_name(&prog), sizeof(m->caller));
		out->caller = m->caller;
		if (!dwarf_formudata(dwarf_attr(&inl, DW_AT_call_file, &at), &fidx) &&
		    !dwarf_getsrcfiles(cu, &files, &nf) && fidx < nf)
			cf = dwarf_filesrc(files, fidx, NULL, NULL);
		dwarf_formudata(dwarf_attr(&inl, DW_AT_call_line, &at), &cl);
		if (cf) {
			norm_path(cf, comp, m->call_file, sizeof(m->call_file));
			out->call_file = m->call_file;
			out->call_line = (uint32_t)cl;
		}
	}
	free(scopes);
	out->module = module && *module ? module : "";
	out->sym = sym;
	out->off = off;
	return 0;
}

/* --- whole runs and traces ------------------------------------------------------------------- */

struct key {
	const char *module;
	char sym[256];
	uint64_t off;
};

static int key_cmp(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	int c = strcmp(x->module, y->module);

	if (!c)
		c = strcmp(x->sym, y->sym);
	return c ? c : x->off < y->off ? -1 : x->off > y->off;
}

static int add_key(struct key **k, size_t *n, size_t *cap, const char *module, const char *sym,
		   uint64_t off)
{
	if (!sym)
		return 0;
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct key *nk = realloc(*k, c * sizeof(*nk));

		if (!nk)
			return -ENOMEM;
		*k = nk;
		*cap = c;
	}
	(*k)[*n].module = module ? module : "";
	(*k)[*n].off = ps_src_key(sym, off, (*k)[*n].sym, sizeof((*k)[*n].sym));
	(*n)++;
	return 0;
}

int ps_srcmap_annotate_run(struct ps_srcmap *m, struct ps_run *r, size_t *nkeys, size_t *nfound)
{
	struct key *k = NULL;
	size_t n = 0, cap = 0;
	int e = 0;

	*nkeys = *nfound = 0;
	for (size_t i = 0; !e && i < r->ntags; i++)
		e = add_key(&k, &n, &cap, r->tags[i].tag.site_module, r->tags[i].tag.site_sym, 0);
	for (size_t i = 0; !e && i < r->nstacks; i++)
		for (uint32_t j = 0; !e && j < r->stacks[i].nframes; j++)
			e = add_key(&k, &n, &cap, r->stacks[i].frames[j].module,
				    r->stacks[i].frames[j].sym, r->stacks[i].frames[j].off);
	if (e)
		goto out;
	if (n)
		qsort(k, n, sizeof(*k), key_cmp);
	ps_run_clear_srcs(r);
	for (size_t i = 0; !e && i < n; i++) {
		struct ps_src src;

		if (i && !key_cmp(&k[i - 1], &k[i]))
			continue;
		(*nkeys)++;
		e = ps_srcmap_lookup(m, k[i].module, k[i].sym, k[i].off, &src);
		if (e == -ENOENT) {
			e = 0;
			continue;
		}
		if (e)
			break;
		e = ps_run_add_src(r, &src);
		(*nfound)++;
	}
	ps_run_link_srcs(r);
out:
	free(k);
	return e;
}

struct trace_ctx {
	struct ps_srcmap *m;
	struct ps_trace *t;
	size_t nkeys, nfound;
};

static int trace_key(void *ctx, const char *module, const char *sym, uint64_t off)
{
	struct trace_ctx *c = ctx;
	struct ps_src src;
	int e;

	c->nkeys++;
	e = ps_srcmap_lookup(c->m, module, sym, off, &src);
	if (e)
		return e == -ENOENT ? 0 : e;
	c->nfound++;
	return ps_trace_put_src(c->t, &src);
}

int ps_srcmap_annotate_trace(struct ps_srcmap *m, struct ps_trace *t, size_t *nkeys,
			     size_t *nfound)
{
	struct trace_ctx c = { .m = m, .t = t };
	int e = ps_trace_each_src_key(t, trace_key, &c);

	*nkeys = c.nkeys;
	*nfound = c.nfound;
	return e;
}

/* --- build ids ------------------------------------------------------------------------------- */

int ps_kernel_build_id(const char *path, char *buf, size_t len)
{
	unsigned char notes[4096];
	size_t n, o = 0;
	FILE *f;

	buf[0] = 0;
	f = fopen(path ? path : "/sys/kernel/notes", "rb");
	if (!f)
		return -errno;
	n = fread(notes, 1, sizeof(notes), f);
	fclose(f);
	/* ELF notes: namesz, descsz, type, then name and desc, each padded to 4 bytes */
	while (o + 12 <= n) {
		uint32_t nsz, dsz, type;

		memcpy(&nsz, notes + o, 4);
		memcpy(&dsz, notes + o + 4, 4);
		memcpy(&type, notes + o + 8, 4);
		o += 12;
		if (nsz > n - o || ((nsz + 3) & ~3u) + (size_t)dsz > n - o)
			break;
		if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(notes + o, "GNU", 4) &&
		    dsz * 2 < len) {
			for (uint32_t i = 0; i < dsz; i++)
				snprintf(buf + 2 * i, 3, "%02x", notes[o + 4 + i]);
			return 0;
		}
		o += ((nsz + 3) & ~3u) + ((dsz + 3) & ~3u);
	}
	return -ENOENT;
}

int ps_srcline_apply(const char *cmd, struct ps_run *r, const char *vmlinux,
		     const char *debuginfo, bool lenient)
{
	struct ps_srcmap_opts o = {
		.vmlinux = vmlinux,
		.debuginfo = debuginfo,
		.release = ps_run_meta(r, PS_META_KERNEL),
		.build_id = ps_run_meta(r, PS_META_KERNEL_BUILD_ID),
	};
	struct ps_srcmap *m = NULL;
	size_t nkeys, nfound;
	char err[768];
	int e;

	if (!vmlinux && !debuginfo)
		return 0;
	e = ps_srcmap_open(&m, &o, err, sizeof(err));
	if (!e)
		e = ps_srcmap_annotate_run(m, r, &nkeys, &nfound);
	if (e == -ENOENT && lenient) {
		fprintf(stderr, "poolscope %s: %s: %s: its own source lines are used\n", cmd, r->path,
			err);
		return 0;
	}
	if (e) {
		fprintf(stderr, "poolscope %s: %s\n", cmd, e == -ENOMEM ? strerror(ENOMEM) : err);
		ps_srcmap_free(m);
		return -1;
	}
	fprintf(stderr, "poolscope %s: source lines for %zu of %zu call sites and frames (%s%s%s%s)\n",
		cmd, nfound, nkeys, m->vmlinux ? m->vmlinux : "no vmlinux: ",
		m->vmlinux ? "" : m->why, m->moddir ? "; modules under " : "",
		m->moddir ? m->moddir : "");
	ps_srcmap_free(m);
	return 0;
}
