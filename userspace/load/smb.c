// SPDX-License-Identifier: GPL-2.0
/*
 * The SMB engine: one libsmbclient context per process, one IO in flight per context (the sync
 * API blocks in each call). lseek on an SMBCFILE only sets the client's offset, so each IO is one
 * SMB2 READ/WRITE round trip.
 *
 * libsmbclient is loaded with dlopen() on the first SMB run, not linked: it pulls in about a
 * hundred Samba libraries whose loading and relocation every process start would pay, and
 * every other command (etl info, report, ...) would pay it for nothing.
 */
#include "userspace/load/load.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libsmbclient.h>

#include "userspace/lib/util/util.h"

#ifndef SMBCLIENT_SONAME
#define SMBCLIENT_SONAME "libsmbclient.so.0"	/* -D only to test the missing-library path */
#endif

/*
 * The smbc_* entry points this file uses, resolved by name. typeof() keeps each pointer's type
 * the header's prototype, so a call through the table is checked like a direct call.
 */
static struct {
	typeof(&smbc_new_context) new_context;
	typeof(&smbc_free_context) free_context;
	typeof(&smbc_init_context) init_context;
	typeof(&smbc_set_context) set_context;
	typeof(&smbc_setDebug) setDebug;
	typeof(&smbc_setFunctionAuthDataWithContext) setFunctionAuthDataWithContext;
	typeof(&smbc_setOptionUseKerberos) setOptionUseKerberos;
	typeof(&smbc_setOptionFallbackAfterKerberos) setOptionFallbackAfterKerberos;
	typeof(&smbc_setOptionNoAutoAnonymousLogin) setOptionNoAutoAnonymousLogin;
	typeof(&smbc_setTimeout) setTimeout;
	typeof(&smbc_getFunctionOpen) getFunctionOpen;
	typeof(&smbc_getFunctionFstat) getFunctionFstat;
	typeof(&smbc_getFunctionClose) getFunctionClose;
	typeof(&smbc_getFunctionLseek) getFunctionLseek;
	typeof(&smbc_getFunctionRead) getFunctionRead;
	typeof(&smbc_getFunctionWrite) getFunctionWrite;
} smb;

#define SMB_SYM(f) { "smbc_" #f, offsetof(typeof(smb), f) }
static const struct {
	const char *name;
	size_t off;
} smb_syms[] = {
	SMB_SYM(new_context), SMB_SYM(free_context), SMB_SYM(init_context), SMB_SYM(set_context),
	SMB_SYM(setDebug), SMB_SYM(setFunctionAuthDataWithContext),
	SMB_SYM(setOptionUseKerberos), SMB_SYM(setOptionFallbackAfterKerberos),
	SMB_SYM(setOptionNoAutoAnonymousLogin), SMB_SYM(setTimeout),
	SMB_SYM(getFunctionOpen), SMB_SYM(getFunctionFstat), SMB_SYM(getFunctionClose),
	SMB_SYM(getFunctionLseek), SMB_SYM(getFunctionRead), SMB_SYM(getFunctionWrite),
};

int ps_load_smb_init(char *msg, size_t len)
{
	static void *lib;
	void *h;

	if (lib)
		return 0;
	/*
	 * RTLD_NOW: a library too old for one of our symbols fails here, in one line, not in the
	 * middle of a run. RTLD_LOCAL: nothing else in the process should bind to Samba symbols.
	 */
	h = dlopen(SMBCLIENT_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(msg, len, "SMB needs %s, which cannot be loaded (install the package "
			 "libsmbclient): %s", SMBCLIENT_SONAME, dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; i < ARRAY_SIZE(smb_syms); i++) {
		void *f = dlsym(h, smb_syms[i].name);

		if (!f) {
			snprintf(msg, len, "SMB needs %s from %s, which this version lacks (install "
				 "a newer libsmbclient package)", smb_syms[i].name, SMBCLIENT_SONAME);
			memset(&smb, 0, sizeof(smb));
			dlclose(h);
			return -ENOENT;
		}
		memcpy((char *)&smb + smb_syms[i].off, &f, sizeof(f));
	}
	lib = h;
	return 0;
}

static const struct ps_load_opts *auth_opts;

static void auth_fn(SMBCCTX *c, const char *srv, const char *shr, char *wg, int wglen,
		    char *un, int unlen, char *pw, int pwlen)
{
	const struct ps_load_opts *o = auth_opts;

	if (o->domain[0])
		snprintf(wg, wglen, "%s", o->domain);
	snprintf(un, unlen, "%s", o->user[0] ? o->user : "guest");
	snprintf(pw, pwlen, "%s", o->pass);
}

static SMBCCTX *new_ctx(const struct ps_load_opts *o)
{
	SMBCCTX *ctx = smb.new_context();

	if (!ctx)
		return NULL;
	auth_opts = o;
	smb.setDebug(ctx, 0);
	smb.setFunctionAuthDataWithContext(ctx, auth_fn);
	smb.setOptionUseKerberos(ctx, false);
	smb.setOptionFallbackAfterKerberos(ctx, true);
	/* a wrong password must fail, not fall back to an anonymous session */
	smb.setOptionNoAutoAnonymousLogin(ctx, o->user[0] != '\0');
	smb.setTimeout(ctx, (int)o->timeout_ms);
	if (!smb.init_context(ctx)) {
		smb.free_context(ctx, 1);
		return NULL;
	}
	smb.set_context(ctx);
	return ctx;
}

/* One line for what went wrong opening the target: the server, the login, the share or the file. */
static void open_error(const struct ps_load_opts *o, int err, char *msg, size_t len)
{
	struct ps_smb_url u;

	ps_smb_url_parse(o->target, &u);
	switch (err) {
	case ECONNREFUSED:
		snprintf(msg, len, "%s: cannot connect to %s: connection refused (no SMB server "
			 "listening; tests/smbserver.sh start starts one)", o->target, u.host);
		break;
	case ETIMEDOUT: case EHOSTUNREACH: case ENETUNREACH: case EHOSTDOWN:
		snprintf(msg, len, "%s: cannot reach server %s: %s (after %u ms)", o->target, u.host,
			 strerror(err), o->timeout_ms);
		break;
	case EACCES: case EPERM:
		snprintf(msg, len, "%s: access denied for user '%s' (bad user or password?)",
			 o->target, o->user[0] ? o->user : "guest");
		break;
	case ENOENT:
		snprintf(msg, len, "%s: no such file (or no share '%s')", o->target, u.share);
		break;
	case ENODEV:
		snprintf(msg, len, "%s: no share '%s' on %s", o->target, u.share, u.host);
		break;
	case EISDIR:
		snprintf(msg, len, "%s: is a directory, expected a file", o->target);
		break;
	default:
		snprintf(msg, len, "%s: cannot open: %s", o->target, strerror(err));
	}
}

int ps_load_smb_probe(const struct ps_load_opts *o, uint64_t *size, char *msg, size_t len)
{
	SMBCCTX *ctx = new_ctx(o);
	SMBCFILE *f;
	struct stat st;
	int err;

	if (!ctx) {
		snprintf(msg, len, "cannot initialise libsmbclient: %s", strerror(errno));
		return -ENOMEM;
	}
	f = smb.getFunctionOpen(ctx)(ctx, o->target, O_RDONLY, 0);
	if (!f) {
		err = errno ? errno : EIO;
		open_error(o, err, msg, len);
		smb.free_context(ctx, 1);
		return -err;
	}
	if (smb.getFunctionFstat(ctx)(ctx, f, &st) < 0) {
		err = errno ? errno : EIO;
		snprintf(msg, len, "%s: fstat: %s", o->target, strerror(err));
		smb.free_context(ctx, 1);
		return -err;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(msg, len, "%s: is a directory, expected a file", o->target);
		smb.free_context(ctx, 1);
		return -EISDIR;
	}
	*size = (uint64_t)st.st_size;
	smb.getFunctionClose(ctx)(ctx, f);
	smb.free_context(ctx, 1);
	return 0;
}

int ps_load_smb_slot(const struct ps_load_job *j)
{
	const struct ps_load_opts *o = j->o;
	struct ps_load_slot *slot = &j->ctl->slots[j->slot];
	struct ps_load_batch b = { 0 };
	struct ps_offset_gen g;
	uint64_t rnd = j->seed ^ 0x5bd1e995ull;
	SMBCCTX *ctx;
	SMBCFILE *f;
	smbc_lseek_fn seek;
	smbc_read_fn rd;
	smbc_write_fn wr;
	char msg[192];
	char *buf;
	bool writes = j->pat->read_pct < 100;

	buf = aligned_alloc(4096, (j->pat->bs + 4095) & ~4095ull);
	if (!buf) {
		ps_load_slot_fail(slot, -ENOMEM, "out of memory for a %llu-byte buffer",
				  (unsigned long long)j->pat->bs);
		return 1;
	}
	memset(buf, 0xa5, j->pat->bs);
	ctx = new_ctx(o);
	if (!ctx) {
		ps_load_slot_fail(slot, -errno, "cannot initialise libsmbclient: %s", strerror(errno));
		return 1;
	}
	f = smb.getFunctionOpen(ctx)(ctx, o->target, writes ? O_RDWR : O_RDONLY, 0);
	if (!f) {
		int err = errno ? errno : EIO;

		open_error(o, err, msg, sizeof(msg));
		ps_load_slot_fail(slot, -err, "%s", msg);
		return 1;
	}
	seek = smb.getFunctionLseek(ctx);
	rd = smb.getFunctionRead(ctx);
	wr = smb.getFunctionWrite(ctx);
	ps_offset_gen_init(&g, j->seed, j->span, j->pat->bs, j->pat->random,
			   (j->span / j->pat->bs) / (j->ctl->nslots ? j->ctl->nslots : 1) * j->slot);
	__atomic_store_n(&slot->state, PS_SLOT_READY, __ATOMIC_RELEASE);
	if (!ps_load_wait_go(j->ctl))
		goto out;
	b.last_flush_ns = ps_load_now_ns();
	while (ps_load_running(j->ctl)) {
		uint64_t off = ps_offset_next(&g), t0, t1;
		bool is_read = !writes || (ps_rand64(&rnd) % 100) < j->pat->read_pct;
		ssize_t n;

		__atomic_store_n(&slot->inflight, 1, __ATOMIC_RELAXED);
		t0 = ps_load_now_ns();
		if (seek(ctx, f, (off_t)off, SEEK_SET) < 0)
			n = -1;
		else
			n = is_read ? rd(ctx, f, buf, j->pat->bs) : wr(ctx, f, buf, j->pat->bs);
		t1 = ps_load_now_ns();
		__atomic_store_n(&slot->inflight, 0, __ATOMIC_RELAXED);
		ps_load_record(j->ctl, &b, t1 - t0, n > 0 ? (uint64_t)n : 0,
			       n == (ssize_t)j->pat->bs, t1);
	}
	ps_load_flush(j->ctl, &b, ps_load_now_ns());
out:
	smb.getFunctionClose(ctx)(ctx, f);
	smb.free_context(ctx, 1);
	free(buf);
	return 0;
}
