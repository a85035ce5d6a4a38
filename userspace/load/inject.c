// SPDX-License-Identifier: GPL-2.0
/*
 * --inject: faults that make the server pile up kernel memory while the workload runs, so that
 * a recording has a leak to find. Each fault is one process beside the workload's slots, with
 * connections of its own; it watches the workload's cumulative IO counter and takes one more
 * resource on the server every N IOs, so the leak follows the load like a real per-request
 * leak does. Nothing is given back before the end: when load exits the fault processes close
 * their connections (or die with the parent), and the server frees what it held.
 */
#include "userspace/load/load.h"
#include "userspace/lib/util/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SEC_NS		1000000000ull
#define MAX_EVERY	1000000000ull
#define STOP_GRACE_NS	(15 * SEC_NS)	/* more than net-stall's drain takes at most */

static const struct {
	const char *name;
	uint64_t every;		/* default N */
	bool smb_only;
	const char *what;	/* for the start line: what one resource is */
} kinds[PS_INJECT_KINDS] = {
	[PS_INJECT_HANDLE_LEAK] = { "handle-leak", 30, true,
		"an open handle on the share left open" },
	[PS_INJECT_NET_STALL] = { "net-stall", 30000, true,
		"an SMB connection that never reads its responses" },
};

const char *ps_load_inject_name(enum ps_inject_kind kind)
{
	return kind < PS_INJECT_KINDS ? kinds[kind].name : "?";
}

bool ps_load_inject_smb_only(enum ps_inject_kind kind)
{
	return kind < PS_INJECT_KINDS && kinds[kind].smb_only;
}

int ps_load_inject_parse(struct ps_load_opts *o, const char *arg, char *err, size_t len)
{
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
	uint64_t every;
	int k;

	for (k = 0; k < PS_INJECT_KINDS; k++)
		if (strlen(kinds[k].name) == n && !strncmp(arg, kinds[k].name, n))
			break;
	if (k == PS_INJECT_KINDS) {
		snprintf(err, len, "expected KIND[:N], KIND one of handle-leak, net-stall");
		return -EINVAL;
	}
	every = kinds[k].every;
	if (colon) {
		char *end;

		errno = 0;
		every = strtoull(colon + 1, &end, 10);
		if (colon[1] < '0' || colon[1] > '9' || *end || errno || !every || every > MAX_EVERY) {
			snprintf(err, len, "expected %s:N, N the IOs between two faults, 1..%llu",
				 kinds[k].name, MAX_EVERY);
			return -EINVAL;
		}
	}
	for (unsigned i = 0; i < o->ninject; i++) {
		if (o->inject[i].kind == (enum ps_inject_kind)k) {
			snprintf(err, len, "%s is already on (give each fault once)", kinds[k].name);
			return -EINVAL;
		}
	}
	o->inject[o->ninject].kind = k;
	o->inject[o->ninject].every = every;
	o->ninject++;
	return 0;
}

char *ps_load_inject_str(const struct ps_load_opts *o, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < o->ninject && off < len; i++) {
		int n = snprintf(buf + off, len - off, "%s%s:%llu", i ? "," : "",
				 kinds[o->inject[i].kind].name,
				 (unsigned long long)o->inject[i].every);

		if (n < 0)
			break;
		off += (size_t)n;
	}
	return buf;
}

void ps_load_fault_fail(struct ps_load_fault *f, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
	va_end(ap);
	f->err = err;
	__atomic_store_n(&f->state, PS_SLOT_FAILED, __ATOMIC_RELEASE);
}

bool ps_load_inject_running(const struct ps_load_ctl *ctl)
{
	return __atomic_load_n(&ctl->inject_go, __ATOMIC_RELAXED) == PS_LOAD_GO_RUN;
}

uint64_t ps_load_inject_due(struct ps_load_ctl *ctl, struct ps_load_fault *f, uint64_t base,
			    uint64_t every)
{
	uint64_t ios = __atomic_load_n(&ctl->wl->ios, __ATOMIC_RELAXED) - base;

	__atomic_store_n(&f->ios, ios, __ATOMIC_RELAXED);
	return ios / every;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

int ps_load_inject_start(const struct ps_load_opts *o, struct ps_load_ctl *ctl, pid_t *pids,
			 const volatile sig_atomic_t *stop, char *msg, size_t len)
{
	uint64_t deadline;
	char desc[128];

	ctl->inject_go = PS_LOAD_GO_WAIT;
	for (unsigned i = 0; i < o->ninject; i++) {
		struct ps_load_fault *f = &ctl->faults[i];

		memset(f, 0, sizeof(*f));
		f->state = PS_SLOT_STARTING;
		pids[i] = ps_load_fork();
		if (pids[i] < 0) {
			snprintf(msg, len, "--inject %s: fork: %s", kinds[o->inject[i].kind].name,
				 strerror(errno));
			pids[i] = 0;
			return -errno;
		}
		if (pids[i])
			continue;
		switch (o->inject[i].kind) {
		case PS_INJECT_HANDLE_LEAK:
			_exit(ps_load_smb_leak_handles(o, ctl, f, o->inject[i].every));
		case PS_INJECT_NET_STALL:
			_exit(ps_load_net_stall(o, ctl, f, o->inject[i].every));
		default:
			_exit(1);
		}
	}
	deadline = ps_load_now_ns() + (uint64_t)o->timeout_ms * 1000000ull + 10 * SEC_NS;
	for (;;) {
		unsigned ready = 0;

		for (unsigned i = 0; i < o->ninject; i++) {
			struct ps_load_fault *f = &ctl->faults[i];
			int st = __atomic_load_n(&f->state, __ATOMIC_ACQUIRE);

			if (st == PS_SLOT_FAILED) {
				snprintf(msg, len, "--inject %s: %s", kinds[o->inject[i].kind].name,
					 f->msg);
				return f->err ? f->err : -EIO;
			}
			if (st == PS_SLOT_READY) {
				ready++;
			} else if (pids[i] > 0 && waitpid(pids[i], NULL, WNOHANG) == pids[i]) {
				pids[i] = 0;
				snprintf(msg, len, "--inject %s: its process died while setting up",
					 kinds[o->inject[i].kind].name);
				return -EIO;
			}
		}
		if (ready == o->ninject)
			break;
		if (*stop || ps_load_now_ns() > deadline) {
			snprintf(msg, len, "--inject %s: %s while setting up the faults",
				 ps_load_inject_str(o, desc, sizeof(desc)),
				 *stop ? "interrupted" : "timed out");
			return *stop ? -EINTR : -ETIMEDOUT;
		}
		sleep_ms(2);
	}
	__atomic_store_n(&ctl->inject_go, PS_LOAD_GO_RUN, __ATOMIC_RELEASE);
	return 0;
}

/* The handle-leak's files, removed by a child (libsmbclient's state stays out of the parent). */
static void cleanup(const struct ps_load_opts *o, struct ps_load_fault *f)
{
	char first[sizeof(f->msg)];
	pid_t pid;

	/* the child reports in f->msg: keep the run's first failure for the end line */
	memcpy(first, f->msg, sizeof(first));
	f->msg[0] = '\0';
	f->state = PS_SLOT_STARTING;
	pid = ps_load_fork();
	if (pid < 0) {
		f->state = PS_SLOT_READY;
		return;
	}
	if (!pid) {
		char msg[sizeof(f->msg)];
		int ret = ps_load_smb_leak_cleanup(o, msg, sizeof(msg));

		if (ret)
			ps_load_fault_fail(f, ret, "%s", msg);
		else
			__atomic_store_n(&f->state, PS_SLOT_DONE, __ATOMIC_RELEASE);
		_exit(ret ? 1 : 0);
	}
	ps_load_reap(&pid, 1, 15 * SEC_NS);
	if (f->state != PS_SLOT_DONE)
		fprintf(stderr, "poolscope load: --inject handle-leak: %s\n",
			f->msg[0] ? f->msg : "removing its files took too long");
	memcpy(f->msg, first, sizeof(first));
	f->state = PS_SLOT_READY;
}

void ps_load_inject_stop(const struct ps_load_opts *o, struct ps_load_ctl *ctl, pid_t *pids,
			 bool report)
{
	unsigned killed;

	__atomic_store_n(&ctl->inject_go, PS_LOAD_GO_STOP, __ATOMIC_RELEASE);
	/* net-stall reads its connections empty before it closes them (inject_net.c) */
	killed = ps_load_reap(pids, o->ninject, STOP_GRACE_NS);
	for (unsigned i = 0; i < o->ninject; i++)
		if (o->inject[i].kind == PS_INJECT_HANDLE_LEAK && ctl->faults[i].files)
			cleanup(o, &ctl->faults[i]);
	for (unsigned i = 0; i < o->ninject; i++) {
		const struct ps_load_fault *f = &ctl->faults[i];
		enum ps_inject_kind k = o->inject[i].kind;

		if (!report || f->state != PS_SLOT_READY)
			continue;	/* the run failed, or this fault never ran: one error line */
		printf("inject: %s every=%llu ios=%llu", kinds[k].name,
		       (unsigned long long)o->inject[i].every, (unsigned long long)f->ios);
		if (k == PS_INJECT_HANDLE_LEAK)
			printf(" handles=%llu failed=%llu conns=%llu lanes=%llu files=%llu",
			       (unsigned long long)f->taken, (unsigned long long)f->failed,
			       (unsigned long long)f->conns, (unsigned long long)f->lanes,
			       (unsigned long long)f->files);
		else
			printf(" conns=%llu failed=%llu open=%llu sent=%llu",
			       (unsigned long long)f->taken, (unsigned long long)f->failed,
			       (unsigned long long)f->conns, (unsigned long long)f->sent);
		printf(" capped=%d\n", f->capped != 0);
		if (f->note[0])
			fprintf(stderr, "poolscope load: --inject %s: %s\n", kinds[k].name, f->note);
		if (f->capped)
			fprintf(stderr, "poolscope load: --inject %s: stopped growing at its cap of "
				"%llu %s (held until the end)\n", kinds[k].name,
				(unsigned long long)f->capped,
				k == PS_INJECT_HANDLE_LEAK ? "handles" : "connections");
		if (f->failed)
			fprintf(stderr, "poolscope load: --inject %s: %llu of %llu attempts failed "
				"(first: %s)\n", kinds[k].name, (unsigned long long)f->failed,
				(unsigned long long)(f->failed + f->taken), f->msg);
		else if (k == PS_INJECT_NET_STALL && f->conns < f->taken)
			fprintf(stderr, "poolscope load: --inject %s: the server ended %llu of the "
				"%llu connections (first: %s)\n", kinds[k].name,
				(unsigned long long)(f->taken - f->conns),
				(unsigned long long)f->taken, f->msg);
	}
	if (killed)
		fprintf(stderr, "poolscope load: --inject: %u fault process%s killed after %llu s\n",
			killed, killed == 1 ? "" : "es", STOP_GRACE_NS / SEC_NS);
	fflush(stdout);
}

/* The line on stderr at the start of a run with faults. */
void ps_load_inject_announce(const struct ps_load_opts *o)
{
	fprintf(stderr, "poolscope load: injecting faults:");
	for (unsigned i = 0; i < o->ninject; i++) {
		enum ps_inject_kind k = o->inject[i].kind;

		fprintf(stderr, "%s %s (every %llu IOs, %s)", i ? ";" : "", kinds[k].name,
			(unsigned long long)o->inject[i].every, kinds[k].what);
	}
	fprintf(stderr, "; held until load exits\n");
}
