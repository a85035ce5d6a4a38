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
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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
	typeof(&smbc_getFunctionMkdir) getFunctionMkdir;
	typeof(&smbc_getFunctionRmdir) getFunctionRmdir;
	typeof(&smbc_getFunctionUnlink) getFunctionUnlink;
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
	SMB_SYM(getFunctionMkdir), SMB_SYM(getFunctionRmdir), SMB_SYM(getFunctionUnlink),
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
	struct ps_load_pace pace;
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
	ps_load_pace_init(&pace, j, b.last_flush_ns);
	while (ps_load_running(j->ctl) && ps_load_pace_wait(&pace, j->ctl)) {
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

/*
 * --inject handle-leak: opens a file again every `every` workload IOs and never closes it. Each
 * open is an SMB2 CREATE that smbd serves with an open file of its own (a descriptor, a struct
 * file), held until the connection ends.
 *
 * The handles go round-robin over LEAK_FILES empty files the fault creates in a directory
 * beside the target, not all on the target: smbd keeps the opens of one file in one share-mode
 * record that it rewrites whole at every open, so thousands of opens of one file slow each
 * next open down until the fault falls behind the IOs. On a share it cannot write, it opens the
 * target itself. smbd refuses opens past its per-process limit (`max open files`): the lane
 * then goes on over a new connection, i.e. in a new smbd process. Past LEAK_MAX_HANDLES it
 * holds what it has and takes no more.
 *
 * The opens are made by lanes, each a process with a connection of its own doing one open at a
 * time: libsmbclient waits for each answer. How many opens a lane gets answered depends on how
 * often the server gets round to its smbd process, which a workload keeping the CPUs busy
 * decides, and on what an open costs the server, which differs between servers and machines.
 * So there are LEAK_LANES of them, enough to follow a fast workload on a busy machine; a lane
 * with nothing due sleeps. They all connect before the workload starts: each connection is a
 * process on the server (an smbd child) and one on the client, whose memory (page tables,
 * VMAs, task structs) would otherwise grow on another path while the leak runs and blur where
 * the leak is.
 */
#define LEAK_FILES	64
#define LEAK_DIR	".poolscope-inject"
#define LEAK_MAX_HANDLES	262144	/* in all: a long run must not use up the machine's files */
#define LEAK_MAX_CONNS	16		/* per lane; smbd takes about 16000 opens per process */
#define LEAK_RETRY_NS	100000000ull
#define LEAK_LANES		16

static void leak_path(const struct ps_load_opts *o, int i, char *buf, size_t len)
{
	const char *slash = strrchr(o->target, '/');
	int dir = (int)(slash - o->target);

	if (i < 0)
		snprintf(buf, len, "%.*s/%s", dir, o->target, LEAK_DIR);
	else
		snprintf(buf, len, "%.*s/%s/h%02d", dir, o->target, LEAK_DIR, i);
}

/*
 * The files the handles go to. Where they cannot all be made (a read-only share), false, and
 * what was made is removed again: the handles then go to the target.
 */
static bool leak_files_make(SMBCCTX *ctx, const struct ps_load_opts *o)
{
	char path[1400];
	SMBCFILE *h;
	int i;

	leak_path(o, -1, path, sizeof(path));
	if (smb.getFunctionMkdir(ctx)(ctx, path, 0755) < 0 && errno != EEXIST)
		return false;
	for (i = 0; i < LEAK_FILES; i++) {
		leak_path(o, i, path, sizeof(path));
		h = smb.getFunctionOpen(ctx)(ctx, path, O_WRONLY | O_CREAT, 0644);
		if (!h)
			break;
		smb.getFunctionClose(ctx)(ctx, h);
	}
	if (i == LEAK_FILES)
		return true;
	while (i-- > 0) {
		leak_path(o, i, path, sizeof(path));
		smb.getFunctionUnlink(ctx)(ctx, path);
	}
	leak_path(o, -1, path, sizeof(path));
	smb.getFunctionRmdir(ctx)(ctx, path);
	return false;
}

/* Opens path and closes it again (a context's first request connects it): 0 or errno. */
static int open_close(SMBCCTX *ctx, const char *path)
{
	SMBCFILE *h = smb.getFunctionOpen(ctx)(ctx, path, O_RDONLY, 0);

	if (!h)
		return errno ? errno : EIO;
	smb.getFunctionClose(ctx)(ctx, h);
	return 0;
}

/* The next handle due that no lane has taken on yet (its number from 0), or false. */
static bool leak_claim(struct ps_load_fault *f, uint64_t *k)
{
	uint64_t c = __atomic_load_n(&f->claimed, __ATOMIC_RELAXED);

	do {
		if (c >= __atomic_load_n(&f->due, __ATOMIC_RELAXED))
			return false;
	} while (!__atomic_compare_exchange_n(&f->claimed, &c, c + 1, false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	*k = c;
	return true;
}

/* A failed attempt: counted, and the first one's reason kept for the end. */
static void __attribute__((format(printf, 2, 3)))
leak_failed(struct ps_load_fault *f, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_fetch_add(&f->failed, 1, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
	va_end(ap);
}

/*
 * One lane of the leak: its own connection, taking the handles due one by one. libsmbclient
 * connects on a context's first request, so an open and close of the target connects the lane
 * (session and tree) before it counts as one.
 */
static void leak_lane(const struct ps_load_opts *o, struct ps_load_ctl *ctl,
		      struct ps_load_fault *f, unsigned lane)
{
	struct timespec nap = { 0, 5000000 };
	uint64_t retry_at = 0, conns = 1, held = 0, k;
	char path[1400];
	SMBCCTX *ctx = new_ctx(o);
	SMBCFILE *h;
	int err;

	/* a lane that cannot take part is counted down: the others go on */
	if (!ctx) {
		leak_failed(f, "lane %u: cannot initialise libsmbclient: %s", lane, strerror(errno));
		__atomic_fetch_add(&f->lanes_down, 1, __ATOMIC_RELEASE);
		return;
	}
	err = open_close(ctx, o->target);
	if (err) {
		leak_failed(f, "lane %u: cannot connect: %s", lane, strerror(err));
		__atomic_fetch_add(&f->lanes_down, 1, __ATOMIC_RELEASE);
		return;
	}
	__atomic_fetch_add(&f->conns, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&f->lanes, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&ctl->inject_go, __ATOMIC_ACQUIRE) == PS_LOAD_GO_WAIT)
		nanosleep(&nap, NULL);
	while (ps_load_inject_running(ctl)) {
		while (ps_load_inject_running(ctl) && ps_load_now_ns() >= retry_at &&
		       leak_claim(f, &k)) {
			bool fresh = false;
			SMBCCTX *c;

			if (f->files)
				leak_path(o, (int)(k % f->files), path, sizeof(path));
again:
			h = smb.getFunctionOpen(ctx)(ctx, f->files ? path : o->target, O_RDONLY, 0);
			if (h) {
				held++;
				__atomic_fetch_add(&f->taken, 1, __ATOMIC_RELAXED);
				/* a new connection counts once it has answered */
				if (fresh)
					__atomic_fetch_add(&f->conns, 1, __ATOMIC_RELAXED);
				continue;
			}
			err = errno ? errno : EIO;
			/*
			 * smbd's limit of open files per process (refused with EINVAL here), or a
			 * broken connection: a new connection, kept beside the old one, whose
			 * handles stay open, takes this open at once. Failing there too, it is a
			 * failure, and this lane takes no more for a while.
			 */
			c = held && conns < LEAK_MAX_CONNS ? new_ctx(o) : NULL;
			if (c) {
				ctx = c;
				conns++;
				held = 0;
				fresh = true;
				goto again;
			}
			leak_failed(f, "open %llu: %s", (unsigned long long)k + 1, strerror(err));
			retry_at = ps_load_now_ns() + LEAK_RETRY_NS;
		}
		nanosleep(&nap, NULL);
	}
}

/* A lane's process, or -errno. */
static int leak_lane_start(const struct ps_load_opts *o, struct ps_load_ctl *ctl,
			   struct ps_load_fault *f, pid_t *pid, unsigned lane)
{
	*pid = ps_load_fork();
	if (*pid < 0) {
		*pid = 0;
		return -errno;
	}
	if (!*pid) {
		leak_lane(o, ctl, f, lane);
		_exit(0);
	}
	return 0;
}

int ps_load_smb_leak_handles(const struct ps_load_opts *o, struct ps_load_ctl *ctl,
			     struct ps_load_fault *f, uint64_t every)
{
	struct timespec nap = { 0, 5000000 };
	pid_t lanes[LEAK_LANES] = { 0 };
	uint64_t base, up, down, dead = 0;
	unsigned n = 0;
	char msg[192], first[sizeof(f->msg)];
	SMBCCTX *ctx;
	int ret = 1, err, fork_err = 0;

	ctx = new_ctx(o);
	if (!ctx) {
		ps_load_fault_fail(f, -ENOMEM, "cannot initialise libsmbclient: %s", strerror(errno));
		return 1;
	}
	/* one open checks the target and is closed again: the leak starts with the run */
	err = open_close(ctx, o->target);
	if (err) {
		open_error(o, err, msg, sizeof(msg));
		ps_load_fault_fail(f, -err, "%s", msg);
		return 1;
	}
	f->files = leak_files_make(ctx, o) ? LEAK_FILES : 0;
	smb.free_context(ctx, 1);
	/* a lane that cannot be forked is one fewer: the others go on */
	for (unsigned i = 0; i < LEAK_LANES; i++) {
		err = leak_lane_start(o, ctl, f, &lanes[n], i);
		if (!err)
			n++;
		else
			fork_err = err;
	}
	if (!n) {
		ps_load_fault_fail(f, fork_err, "fork: %s", strerror(-fork_err));
		return 1;
	}
	/*
	 * Ready once every lane has connected or failed to, or died before either (killed, or a
	 * crash in libsmbclient): reaped here, counted with those that failed, and only those.
	 * load's setup deadline bounds the wait, and a stop ends it.
	 */
	for (;;) {
		up = __atomic_load_n(&f->lanes, __ATOMIC_ACQUIRE);
		down = __atomic_load_n(&f->lanes_down, __ATOMIC_ACQUIRE);
		if (up + down + dead >= n ||
		    __atomic_load_n(&ctl->inject_go, __ATOMIC_ACQUIRE) == PS_LOAD_GO_STOP)
			break;
		for (unsigned i = 0; i < n; i++) {
			int st;

			if (lanes[i] <= 0 || waitpid(lanes[i], &st, WNOHANG) != lanes[i])
				continue;
			lanes[i] = 0;
			/* a lane that could not connect exits 0 once it has counted itself down */
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				dead++;
		}
		nanosleep(&nap, NULL);
	}
	if (!up) {
		/* the first lane's reason is in f->msg, which the failure rewrites */
		memcpy(first, f->msg, sizeof(first));
		first[sizeof(first) - 1] = '\0';
		ps_load_fault_fail(f, -EIO, "no lane could connect: %.150s",
				   first[0] ? first : "its process died");
		goto out;
	}
	if (down + dead + (LEAK_LANES - n))
		snprintf(f->note, sizeof(f->note), "%llu of %u lanes could not connect or fork",
			 (unsigned long long)(down + dead + (LEAK_LANES - n)), LEAK_LANES);
	__atomic_store_n(&f->state, PS_SLOT_READY, __ATOMIC_RELEASE);
	while (__atomic_load_n(&ctl->inject_go, __ATOMIC_ACQUIRE) == PS_LOAD_GO_WAIT)
		nanosleep(&nap, NULL);
	base = __atomic_load_n(&ctl->wl->ios, __ATOMIC_RELAXED);
	while (ps_load_inject_running(ctl)) {
		uint64_t due = ps_load_inject_due(ctl, f, base, every);

		if (due > LEAK_MAX_HANDLES) {
			due = LEAK_MAX_HANDLES;
			__atomic_store_n(&f->capped, LEAK_MAX_HANDLES, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&f->due, due, __ATOMIC_RELAXED);
		nanosleep(&nap, NULL);
	}
	while (__atomic_load_n(&ctl->inject_go, __ATOMIC_ACQUIRE) != PS_LOAD_GO_STOP)
		nanosleep(&nap, NULL);
	ret = 0;
out:
	/*
	 * No close and no free_context in the lanes: closing each handle would be a round trip
	 * apiece. They die with this process, the kernel closes their connections, and smbd drops
	 * what each held.
	 */
	for (unsigned i = 0; i < n; i++)
		if (lanes[i] > 0)
			kill(lanes[i], SIGKILL);
	ps_load_reap(lanes, n, 0);
	return ret;
}

/*
 * After the fault process is gone: removes the files it made. smbd closes the handles of a
 * dropped connection by itself, a moment later, and refuses to delete a file still open, so
 * each removal is retried for a few seconds. Returns 0 or -errno with msg.
 */
int ps_load_smb_leak_cleanup(const struct ps_load_opts *o, char *msg, size_t len)
{
	uint64_t deadline = ps_load_now_ns() + 10000000000ull;
	struct timespec nap = { 0, 100000000 };
	char path[1400];
	SMBCCTX *ctx = new_ctx(o);
	int i = 0;

	if (!ctx) {
		snprintf(msg, len, "cannot initialise libsmbclient: %s", strerror(errno));
		return -ENOMEM;
	}
	while (i <= LEAK_FILES) {
		int r;

		leak_path(o, i < LEAK_FILES ? i : -1, path, sizeof(path));
		r = i < LEAK_FILES ? smb.getFunctionUnlink(ctx)(ctx, path)
				   : smb.getFunctionRmdir(ctx)(ctx, path);
		if (r == 0 || errno == ENOENT) {
			i++;
			continue;
		}
		if (ps_load_now_ns() > deadline) {
			int err = errno ? errno : EIO;

			snprintf(msg, len, "cannot remove %s: %s", path, strerror(err));
			smb.free_context(ctx, 1);
			return -err;
		}
		nanosleep(&nap, NULL);
	}
	smb.free_context(ctx, 1);
	return 0;
}
