// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope record, the loop: set up (trace, probes, symbols, slab names, meta), then once per
 * interval poll -> resolve -> write (rec.h says which file does what), until the duration ends,
 * a signal comes or the command exits; the command itself (started once the probes are attached
 * and the baseline is written, with the shared memory its workload counters go to) and the
 * status line. See recorder.h and docs/record.md.
 */
#include "userspace/record/recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "userspace/record/rec.h"
#include "userspace/srcline.h"
#include "analysis/label.h"
#include "userspace/lib/util/util.h"
#include "kmem.skel.h"
#include "kmem_empty.skel.h"

static volatile sig_atomic_t stop_requested;
static int wake_pipe[2] = { -1, -1 };

void ps_record_stop(void)
{
	int saved = errno;

	stop_requested = 1;
	if (wake_pipe[1] >= 0)
		(void)!write(wake_pipe[1], "x", 1);
	errno = saved;
}

/* One interval; the sampled stacks are stored every 10th and at the end. */
int rec_interval(struct rec *r, uint32_t idx, uint64_t t_ns, uint64_t dur_ns, bool final)
{
	int e = rec_poll(r, idx, t_ns, dur_ns, final || (idx % 10) == 0);

	if (!e)
		e = rec_resolve(r);
	if (!e && r->t)
		e = rec_write(r, final);
	if (!e && r->m)
		e = rec_metrics_update(r);
	return e;
}

/* --- the command's workload ------------------------------------------------------------ */

static int workload_create(struct rec *r)
{
	int fd;

	snprintf(r->wl_path, sizeof(r->wl_path), "/dev/shm/poolscope-wl.%d", (int)getpid());
	fd = open(r->wl_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return rec_fail(r, -errno, r->wl_path, NULL);
	if (ftruncate(fd, sizeof(struct ps_workload_shm))) {
		close(fd);
		return rec_fail(r, -errno, r->wl_path, NULL);
	}
	r->wl = mmap(NULL, sizeof(*r->wl), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (r->wl == MAP_FAILED) {
		r->wl = NULL;
		return rec_fail(r, -errno, r->wl_path, "mmap");
	}
	setenv(PS_WORKLOAD_SHM_ENV, r->wl_path, 1);
	return 0;
}

/* --- the command ----------------------------------------------------------------------- */

/*
 * Forks the command, held until *gate is written. *errfd reads the errno of a failed exec (a
 * close-on-exec pipe: EOF when the exec succeeded), so that a command that cannot start is told
 * from one that ran and failed.
 */
static pid_t spawn(struct rec *r, int *gate, int *errfd)
{
	int pfd[2], efd[2];
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	if (pipe2(efd, O_CLOEXEC)) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		close(efd[0]);
		close(efd[1]);
		return -errno;
	}
	if (pid == 0) {
		char c;
		int e;

		close(pfd[1]);
		close(efd[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		/* Starts only once the probes are attached and interval 0 is written. */
		if (read(pfd[0], &c, 1) != 1)
			_exit(127);
		execvp(r->o->cmd[0], r->o->cmd);
		e = errno;
		(void)!write(efd[1], &e, sizeof(e));
		_exit(127);
	}
	close(pfd[0]);
	close(efd[1]);
	*gate = pfd[1];
	*errfd = efd[0];
	return pid;
}

/*
 * One line, rewritten in place: elapsed, event rate, tracked live bytes, the tag that gained
 * most since the start (live bytes are from the previous write, before this interval's
 * deltas: good enough for a glance), tags and drops.
 */
/* Events not recorded: full maps, and those the kernel skipped for re-entry (as the report counts). */
static uint64_t drops_of(const struct rec *r)
{
	uint64_t drops = r->recursion_misses;

	for (int i = PS_C_DROP_CLASS_FULL; i <= PS_C_DROP_CACHEINFO_FULL; i++)
		drops += r->totals[i];
	return drops;
}

static void status_line(struct rec *r, uint64_t elapsed_ns, uint64_t dur_ns)
{
	uint64_t ev = 0, drops = drops_of(r);
	char live[32], topb[32], top[80] = "-", label[36], line[256];
	struct winsize ws;
	int cols = 80, n;

	for (int i = PS_C_EV_KMALLOC; i <= PS_C_EV_PERCPU_FREE; i++)
		ev += r->totals[i];
	ps_fmt_bytes(live, sizeof(live), (double)r->live_total, true);
	if (r->top) {
		/* the report's spelling, cut to keep the line short */
		ps_tag_label(&r->top->tag, label, sizeof(label));
		ps_fmt_bytes(topb, sizeof(topb), (double)r->top->live_bytes, true);
		snprintf(top, sizeof(top), "%s %s", label, topb);
	}
	n = snprintf(line, sizeof(line), "%6.1fs %7.0f ev/s  live %s  top %s  tags %zu  drops %llu",
		     elapsed_ns / 1e9, dur_ns ? (ev - r->events_prev) * 1e9 / dur_ns : 0.0, live, top,
		     r->nutags, (unsigned long long)drops);
	/* one line that never wraps: a wrapped one scrolls at every rewrite */
	if (!ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) && ws.ws_col > 10)
		cols = ws.ws_col;
	if (n > cols - 1)
		n = cols - 1;
	fprintf(stderr, "\r\033[K%.*s", n > 0 ? n : 0, line);
	r->events_prev = ev;
}

/* --- the free-space floor --------------------------------------------------------------- */

/*
 * Free bytes for an unprivileged writer on the filesystem of the trace, and its size; -errno.
 * The floor counts what others may still write (f_bavail): a recorder running as root could
 * eat into the reserve meant to keep the system alive.
 */
static int fs_space(const char *path, uint64_t *avail, uint64_t *size)
{
	char dir[4096], *slash;
	struct statvfs sv;

	ps_strlcpy(dir, path, sizeof(dir));
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	if (statvfs(dir, &sv))
		return -errno;
	*avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	*size = (uint64_t)sv.f_blocks * sv.f_frsize;
	return 0;
}

/* The floor: the user's, else 1 GiB or 5 % of the filesystem, whichever is smaller. */
static uint64_t fs_floor(const struct ps_record_opts *o, uint64_t size)
{
	uint64_t pct = size / 20;

	if (o->min_free_set)
		return o->min_free;
	return pct < (1ull << 30) ? pct : 1ull << 30;
}

/* "DIR has X free, below the floor of Y (--min-free)" into err when under the floor. */
static bool below_floor(struct rec *r, uint64_t *floor_out)
{
	uint64_t avail, size, floor;
	char a[32], f[32];

	if (!r->t || (r->o->min_free_set && !r->o->min_free) ||
	    fs_space(r->o->out, &avail, &size))
		return false;
	floor = fs_floor(r->o, size);
	*floor_out = floor;
	if (avail >= floor)
		return false;
	ps_fmt_bytes(a, sizeof(a), (double)avail, false);
	ps_fmt_bytes(f, sizeof(f), (double)floor, false);
	snprintf(r->err, r->errlen, "%s: its filesystem has %s free, below the floor of %s "
		 "(--min-free)", r->o->out, a, f);
	return true;
}

static void on_signal(int sig)
{
	(void)sig;
	ps_record_stop();
}

static void on_child(int sig)
{
	int saved = errno;

	(void)sig;
	if (wake_pipe[1] >= 0)
		(void)!write(wake_pipe[1], "c", 1);
	errno = saved;
}

/*
 * The probes of the backend asked for. auto: BPF, and where the kernel refuses it (no BTF, no
 * CAP_BPF, lockdown, too old), tracefs, saying why.
 */
static int load_probes(struct rec *r)
{
	const struct ps_record_opts *o = r->o;
	char why[512];
	int e;

	if (o->empty_probes)
		return rec_bpf_load_empty(r);
	if (o->backend == PS_BACKEND_TRACEFS)
		return rec_tracefs_open(r);
	e = rec_bpf_load(r);
	if (!e || o->backend == PS_BACKEND_BPF || rec_filtered(o))
		return e;
	ps_strlcpy(why, r->err, sizeof(why));
	rec_bpf_close(r);
	r->err[0] = 0;
	r->scale = 1;
	if (!o->quiet)
		fprintf(stderr, "poolscope record: BPF unavailable (%s): recording through tracefs "
			"(docs/record.md, \"The tracefs backend\")\n", why);
	return rec_tracefs_open(r);
}

/*
 * The running kernel's debuginfo, opened before recording so that a --vmlinux that cannot serve
 * (another build, no DWARF) stops the start, not the end of an hour's recording. Without
 * --vmlinux or --debuginfo, having none is normal: the trace keeps symbol+offset.
 */
static int open_srcmap(struct rec *r)
{
	struct ps_srcmap_opts so = { .vmlinux = r->o->vmlinux, .debuginfo = r->o->debuginfo,
				     .build_id = r->build_id[0] ? r->build_id : NULL };
	struct utsname u;
	int e;

	uname(&u);
	so.release = u.release;
	e = ps_srcmap_open(&r->srcmap, &so, r->srcmap_why, sizeof(r->srcmap_why));
	if (!e || (e == -ENOENT && !r->o->vmlinux && !r->o->debuginfo))
		return 0;
	snprintf(r->err, r->errlen, "%s", e == -ENOMEM ? strerror(ENOMEM) : r->srcmap_why);
	return e;
}

/*
 * Source lines of every call site and frame written, into the srclines table. A failure goes
 * into err, or to stderr when err is NULL (another error is being reported).
 */
static int write_srclines(struct rec *r, char *err, size_t errlen)
{
	size_t nkeys, nfound;
	int e;

	if (!r->srcmap) {
		if (!r->o->quiet)
			fprintf(stderr, "poolscope record: call sites without source lines: %s "
				"(docs/record.md, \"Source lines\")\n", r->srcmap_why);
		return 0;
	}
	e = ps_srcmap_annotate_trace(r->srcmap, r->t, &nkeys, &nfound);
	if (!e && ps_srcmap_vmlinux(r->srcmap))
		e = ps_trace_set_meta(r->t, PS_META_SRCLINES, ps_srcmap_vmlinux(r->srcmap));
	if (e) {
		/* the lookups' own failure (memory) sets no message on the trace */
		const char *why = e == -ENOMEM ? strerror(ENOMEM) : ps_trace_errmsg(r->t);

		if (err)
			snprintf(err, errlen, "%s: source lines: %s", r->o->out, why);
		else
			fprintf(stderr, "poolscope record: %s: source lines: %s\n", r->o->out, why);
		return e;
	}
	if (!r->o->quiet)
		fprintf(stderr, "poolscope record: source lines for %zu of %zu call sites and "
			"frames (%s)\n", nfound, nkeys, ps_srcmap_vmlinux(r->srcmap) ?
			ps_srcmap_vmlinux(r->srcmap) : "modules only");
	return 0;
}

int ps_record_run(const struct ps_record_opts *o, char *err, size_t errlen)
{
	struct rec rr = { .o = o, .err = err, .errlen = errlen };
	struct rec *r = &rr;
	struct sigaction sa = {};
	uint64_t start, last, next, deadline = 0;
	uint32_t idx = 0;
	pid_t child = 0;
	int gate = -1, child_status = 0, e;
	bool child_done = false, floor_hit = false;
	int cmd_unstarted = 0;
	uint64_t floor = 0;

	err[0] = 0;
	r->ncpus = libbpf_num_possible_cpus();
	if (r->ncpus <= 0)
		return rec_fail(r, r->ncpus ? r->ncpus : -EINVAL, "possible CPUs", NULL);
	if (!o->empty_probes && o->backend != PS_BACKEND_TRACEFS) {
		r->cpu_ids = rec_bpf_cpu_ids();
		if (r->cpu_ids <= 0)
			return rec_fail(r, r->cpu_ids ? r->cpu_ids : -EINVAL,
					"/sys/devices/system/cpu/possible", NULL);
		/* a table of class slots per CPU id; the programs' keys are 32-bit */
		if ((uint64_t)r->cpu_ids * o->map_class_slots > (1u << 30)) {
			snprintf(r->err, r->errlen, "--map-size class-slots=%u: a table of that many "
				 "per CPU id, %d ids here, is over 2^30 slots", o->map_class_slots,
				 r->cpu_ids);
			return -E2BIG;
		}
	}
	/* the tracefs backend sees every object: nothing to scale */
	r->scale = o->backend == PS_BACKEND_TRACEFS ? 1 : o->site_sample;
	r->valbuf = calloc(r->ncpus, 64);	/* largest per-CPU value: ps_class_val (48) */
	if (!r->valbuf || rec_resolve_init(r) || snap_init(&r->snap)) {
		e = rec_fail(r, -ENOMEM, "memory", NULL);
		goto out;
	}
	stop_requested = 0;
	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK)) {
		e = rec_fail(r, -errno, "pipe", NULL);
		goto out;
	}

	e = o->out ? ps_trace_create(&r->t, o->out, o->force ? PS_TRACE_F_FORCE : 0) : 0;
	if (e) {
		if (e == -EEXIST)
			snprintf(err, errlen, "%s: exists (use --force to replace it)", o->out);
		else
			snprintf(err, errlen, "%s: %s", o->out, ps_strerror(e));
		r->t = NULL;
		goto out;
	}
	/* read once: the debuginfo must have it, and the trace's meta says it */
	if (ps_kernel_build_id(NULL, r->build_id, sizeof(r->build_id)))
		r->build_id[0] = '\0';
	if (o->out) {
		e = open_srcmap(r);
		if (e)
			goto out_unlink;
	}
	if (below_floor(r, &floor)) {
		size_t l = strlen(err);

		snprintf(err + l, errlen - l, ": not starting");
		e = -ENOSPC;
		goto out_unlink;
	}
	e = load_probes(r);
	if (e)
		goto out_unlink;
	/* After loading, so the JITed programs are in kallsyms too. */
	e = ps_kallsyms_load(&r->ks, "/proc/kallsyms", err, errlen);
	if (e) {
		if (!err[0])
			snprintf(err, errlen, "/proc/kallsyms: %s%s", ps_strerror(e),
				 e == -EPERM ? " (all addresses are zero: kptr_restrict?)" : "");
		goto out_unlink;
	}
	e = ps_slabnames_load(&r->sn, "/sys/kernel/slab");
	if (e) {
		snprintf(err, errlen, "/sys/kernel/slab: %s", ps_strerror(e));
		goto out_unlink;
	}
	if (o->cmd) {
		e = workload_create(r);
		if (e)
			goto out_unlink;
	}
	if (r->t) {
		e = rec_write_meta(r);
		if (e)
			goto out_unlink;
	}
	/* last: nothing is served until every check above has passed */
	if (o->listen) {
		e = rec_metrics_init(r);
		if (e)
			goto out_unlink;
	}

	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_child;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);

	start = last = rec_now_ns(CLOCK_MONOTONIC);
	e = rec_interval(r, idx++, 0, 0, false);	/* the baseline */
	if (e)
		goto out_close;
	if (o->cmd) {
		int errfd = -1, xe = 0;

		child = spawn(r, &gate, &errfd);
		if (child < 0) {
			e = child;
			snprintf(err, errlen, "%s: %s", o->cmd[0], ps_strerror(e));
			goto out_close;
		}
		(void)!write(gate, "g", 1);
		close(gate);
		/* blocks until the exec: EOF when it worked, its errno when not */
		if (read(errfd, &xe, sizeof(xe)) == sizeof(xe)) {
			waitpid(child, &child_status, 0);
			child_done = true;
			cmd_unstarted = xe;
		}
		close(errfd);
	}
	if (!o->quiet && !cmd_unstarted)
		fprintf(stderr, "poolscope record: recording%s%s every %.3g s%s (Ctrl-C stops)\n",
			o->out ? " to " : "", o->out ? o->out : "", o->interval_ns / 1e9,
			o->listen ? ", serving /metrics" : "");
	if (o->duration_ns)
		deadline = start + o->duration_ns;
	next = start + o->interval_ns;
	for (;;) {
		struct pollfd pfd = { .fd = wake_pipe[0], .events = POLLIN };
		uint64_t now = rec_now_ns(CLOCK_MONOTONIC), wake = next;
		bool final;
		char drain[64];

		if (deadline && deadline < wake)
			wake = deadline;
		/* tracefs: the ring buffers are drained between intervals, they are finite */
		if (r->tfs && wake > now + REC_TRACEFS_DRAIN_MS * 1000000ull)
			wake = now + REC_TRACEFS_DRAIN_MS * 1000000ull;
		if (!stop_requested && !child_done && now < wake)
			poll(&pfd, 1, (int)((wake - now + 999999) / 1000000));
		if (r->tfs) {
			e = rec_tracefs_drain(r);
			if (e)
				goto out_close;
		}
		while (read(wake_pipe[0], drain, sizeof(drain)) > 0)
			;
		if (child && !child_done && waitpid(child, &child_status, WNOHANG) == child)
			child_done = true;
		now = rec_now_ns(CLOCK_MONOTONIC);
		final = stop_requested || child_done || (deadline && now >= deadline);
		if (!final && now < next)
			continue;
		/* the floor: this interval is the last, and the run ends with an error */
		if (!floor_hit && below_floor(r, &floor)) {
			floor_hit = true;
			final = true;
		}
		e = rec_interval(r, idx++, now - start, now - last, final);
		if (e)
			goto out_close;
		if (o->status)
			status_line(r, now - start, now - last);
		last = now;
		while (next <= now)
			next += o->interval_ns;
		if (final)
			break;
	}
	if (o->status)
		fputc('\n', stderr);
	if (child && !child_done) {
		kill(child, SIGTERM);
		waitpid(child, &child_status, 0);
	}
	e = 0;
	if (cmd_unstarted) {
		snprintf(err, errlen, "%s: cannot start: %s (the trace holds the baseline only)",
			 o->cmd[0], strerror(cmd_unstarted));
		e = -cmd_unstarted;
	} else if (child && WIFEXITED(child_status) && WEXITSTATUS(child_status)) {
		/* the recording is whole; the exit status tells a script the command failed */
		snprintf(err, errlen, "%s exited with status %d (the trace is complete)", o->cmd[0],
			 WEXITSTATUS(child_status));
		e = -ECHILD;
	}
	if (floor_hit && !e) {
		size_t l = strlen(err);

		snprintf(err + l, errlen - l, ": stopped after interval %u; the trace holds "
			 "everything until then", idx - 1);
		e = -ENOSPC;
	}
out_close:
	rec_metrics_fini(r);
	/*
	 * The trace is whole when only the command failed; at the free-space floor nothing more
	 * is written. A failure here keeps an earlier error's message.
	 */
	if (r->t && (!e || e == -ECHILD)) {
		int se = write_srclines(r, e ? NULL : err, errlen);

		if (!e)
			e = se;
	} else if (r->t && e == -ENOSPC && r->srcmap && !o->quiet) {
		fprintf(stderr, "poolscope record: no source lines written: the disk is at its "
			"floor ('report --vmlinux' adds them)\n");
	}
	if (r->t) {
		int ce = ps_trace_close(r->t);

		r->t = NULL;
		if (!e && ce) {
			e = ce;
			snprintf(err, errlen, "%s: closing: %s", o->out, ps_strerror(ce));
		}
		if (!ce && !o->quiet)
			fprintf(stderr, "poolscope record: wrote %s: %u intervals, %zu tags, %llu "
				"drops\n", o->out, idx, r->nutags, (unsigned long long)drops_of(r));
	}
	goto out;
out_unlink:
	ps_trace_discard(r->t);
	r->t = NULL;
out:
	rec_metrics_fini(r);
	rec_write_fini(r);
	if (r->wl) {
		munmap(r->wl, sizeof(*r->wl));
		unlink(r->wl_path);
	}
	rec_bpf_close(r);
	kmem_empty_bpf__destroy(r->empty);
	rec_tracefs_close(r);
	ps_kallsyms_free(r->ks);
	ps_srcmap_free(r->srcmap);
	ps_slabnames_free(r->sn);
	rec_resolve_fini(r);
	snap_free(&r->snap);
	free(r->valbuf);
	close(wake_pipe[0]);
	close(wake_pipe[1]);
	wake_pipe[0] = wake_pipe[1] = -1;
	signal(SIGCHLD, SIG_DFL);
	return e;
}
