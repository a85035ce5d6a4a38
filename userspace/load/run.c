// SPDX-License-Identifier: GPL-2.0
/*
 * Runs a workload: maps the counters, probes the target, forks the slots of each step, starts
 * them together, prints one line per second from the shared cumulative counters, writes the
 * per-second rows into a trace when asked, and stops every child (SIGKILL after a grace
 * period) whatever happens. Children die with the parent (PR_SET_PDEATHSIG).
 */
#include "userspace/load/load.h"
#include "userspace/lib/trace/trace.h"
#include "userspace/lib/util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TICK_NS		100000000ull	/* in-flight sampling and shm refresh */
#define SEC_NS		1000000000ull
#define STOP_GRACE_NS	(5 * SEC_NS)

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * SEC_NS + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t_ns)
{
	uint64_t now = ps_load_now_ns();
	struct timespec ts;

	if (t_ns <= now)
		return;
	ts.tv_sec = (time_t)((t_ns - now) / SEC_NS);
	ts.tv_nsec = (long)((t_ns - now) % SEC_NS);
	nanosleep(&ts, NULL);
}

/* The counters: record's file when we run under it, else private shared memory. */
static struct ps_workload_shm *map_counters(char *msg, size_t len)
{
	const char *path = getenv(PS_WORKLOAD_SHM_ENV);
	struct ps_workload_shm *wl;
	struct stat st;
	int fd;

	if (!path || !*path) {
		wl = mmap(NULL, sizeof(*wl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (wl == MAP_FAILED) {
			snprintf(msg, len, "mmap counters: %s", strerror(errno));
			return NULL;
		}
		wl->magic = PS_WORKLOAD_SHM_MAGIC;
		wl->version = PS_WORKLOAD_SHM_VERSION;
		wl->size = sizeof(*wl);
		return wl;
	}
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(msg, len, "%s (from %s): %s", path, PS_WORKLOAD_SHM_ENV, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || (st.st_size && (size_t)st.st_size < sizeof(*wl))) {
		snprintf(msg, len, "%s (from %s): %lld bytes, expected at least %zu", path,
			 PS_WORKLOAD_SHM_ENV, (long long)st.st_size, sizeof(*wl));
		close(fd);
		return NULL;
	}
	if (!st.st_size && ftruncate(fd, sizeof(*wl)) < 0) {
		snprintf(msg, len, "%s: ftruncate: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	wl = mmap(NULL, sizeof(*wl), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (wl == MAP_FAILED) {
		snprintf(msg, len, "%s: mmap: %s", path, strerror(errno));
		return NULL;
	}
	if (!wl->magic) {
		wl->magic = PS_WORKLOAD_SHM_MAGIC;
		wl->version = PS_WORKLOAD_SHM_VERSION;
		wl->size = sizeof(*wl);
	} else if (wl->magic != PS_WORKLOAD_SHM_MAGIC || wl->version != PS_WORKLOAD_SHM_VERSION) {
		snprintf(msg, len, "%s (from %s): offset 0: magic 0x%08x version %u, expected 0x%08x "
			 "version %u", path, PS_WORKLOAD_SHM_ENV, wl->magic, wl->version,
			 PS_WORKLOAD_SHM_MAGIC, PS_WORKLOAD_SHM_VERSION);
		munmap(wl, sizeof(*wl));
		return NULL;
	}
	return wl;
}

static void fmt_lat(char *buf, size_t len, uint64_t ns)
{
	if (ns < 10000)
		snprintf(buf, len, "%.2fus", ns / 1e3);
	else if (ns < 1000000)
		snprintf(buf, len, "%.0fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2fms", ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
}

pid_t ps_load_fork(void)
{
	pid_t ppid = getpid(), pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != ppid)
		_exit(1);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	return 0;
}

/* Waits for every child, SIGKILL after deadline; returns how many had to be killed. */
unsigned ps_load_reap(pid_t *pids, unsigned n, uint64_t grace_ns)
{
	uint64_t deadline = ps_load_now_ns() + grace_ns;
	unsigned left = 0, killed = 0;

	for (unsigned i = 0; i < n; i++)
		left += pids[i] > 0;
	while (left) {
		for (unsigned i = 0; i < n; i++) {
			if (pids[i] > 0 && waitpid(pids[i], NULL, WNOHANG) == pids[i]) {
				pids[i] = 0;
				left--;
			}
		}
		if (!left)
			break;
		if (ps_load_now_ns() > deadline) {
			for (unsigned i = 0; i < n; i++) {
				if (pids[i] > 0) {
					kill(pids[i], SIGKILL);
					waitpid(pids[i], NULL, 0);
					pids[i] = 0;
					killed++;
				}
			}
			break;
		}
		sleep_until(ps_load_now_ns() + 2000000);
	}
	return killed;
}

static int probe(struct ps_load_opts *o, struct ps_load_ctl *ctl, char *msg, size_t len)
{
	struct ps_load_slot *s = &ctl->slots[0];
	uint64_t deadline;
	pid_t pid;
	int ret;

	if (!o->smb)
		return ps_load_local_probe(o, &ctl->file_size, msg, len);
	/*
	 * Load the library in the parent, before any fork: the probe child and every slot inherit
	 * the mapping instead of each paying for the ~100 Samba libraries again. Loading runs only
	 * constructors, so the parent stays as clean as when the library was linked.
	 */
	ret = ps_load_smb_init(msg, len);
	if (ret)
		return ret;
	/* libsmbclient keeps global state: probe in a child so the slots fork from a clean parent */
	s->state = PS_SLOT_STARTING;
	pid = ps_load_fork();
	if (pid < 0) {
		snprintf(msg, len, "fork: %s", strerror(errno));
		return -errno;
	}
	if (!pid) {
		uint64_t size = 0;
		char m[sizeof(s->msg)];

		ret = ps_load_smb_probe(o, &size, m, sizeof(m));
		if (ret)
			ps_load_slot_fail(s, ret, "%s", m);
		else {
			ctl->file_size = size;
			__atomic_store_n(&s->state, PS_SLOT_READY, __ATOMIC_RELEASE);
		}
		_exit(ret ? 1 : 0);
	}
	deadline = ps_load_now_ns() + (uint64_t)o->timeout_ms * 1000000ull + 5 * SEC_NS;
	while (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == PS_SLOT_STARTING) {
		int st;

		if (waitpid(pid, &st, WNOHANG) == pid) {
			pid = 0;
			if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == PS_SLOT_STARTING) {
				snprintf(msg, len, "%s: cannot reach the server (the "
					 "connection attempt ended in %s)", o->target,
					 WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "an exit");
				return -EIO;
			}
			break;
		}
		if (ps_load_now_ns() > deadline || stop_signal) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			snprintf(msg, len, "%s: no answer from the server within %u ms", o->target,
				 o->timeout_ms + 5000);
			return -ETIMEDOUT;
		}
		sleep_until(ps_load_now_ns() + 5000000);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	if (s->state == PS_SLOT_FAILED) {
		ps_strlcpy(msg, s->msg, len);
		return s->err ? s->err : -EIO;
	}
	return 0;
}

struct step_result {
	double iops, iops_median, mbps, inflight_mean;
	uint64_t ios, errors, p50, p99, p999, max, inflight_max;
	double seconds;
	double cpu_busy_s, cpu_total_s;	/* whole machine over the measured part; total 0: unknown */
	bool interrupted;
};

/*
 * CPU time of the whole machine from /proc/stat's "cpu" line, in seconds: busy (user, nice,
 * system, irq, softirq) and all of it (busy, idle, iowait, steal). Whole machine, not this
 * process: the IO's cost is also the server's, the network stack's and, under `record`, the
 * recorder's. Steal is not busy: in a VM it is time the host gave to others. Returns -errno.
 */
static int cpu_times(double *busy, double *total)
{
	unsigned long long v[8] = { 0 };
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "re");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 7 || hz <= 0)
		return -EINVAL;
	*busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / (double)hz;
	*total = *busy + (double)(v[3] + v[4] + v[7]) / (double)hz;
	return 0;
}

struct run_state {
	struct ps_load_opts *o;
	struct ps_load_ctl *ctl;
	struct ps_trace *trace;
	uint64_t run_t0;	/* monotonic start of the first step */
	uint32_t interval_idx;
	unsigned qd_total;
};

static int write_interval(struct run_state *rs, uint64_t t_end, uint64_t dur,
			  const struct ps_workload *w, char *msg, size_t len)
{
	int ret;

	if (!rs->trace)
		return 0;
	ret = ps_trace_begin_interval(rs->trace, rs->interval_idx, t_end - rs->run_t0, wall_ns(), dur);
	if (!ret)
		ret = ps_trace_add_workload(rs->trace, w);
	if (!ret)
		ret = ps_trace_commit_interval(rs->trace);
	if (ret) {
		snprintf(msg, len, "%s: writing interval %u: %s", rs->o->trace_path, rs->interval_idx,
			 ps_trace_errmsg(rs->trace));
		return ret;
	}
	rs->interval_idx++;
	return 0;
}

static int run_step(struct run_state *rs, int stepno, struct step_result *res, char *msg,
		    size_t len)
{
	struct ps_load_opts *o = rs->o;
	struct ps_load_ctl *ctl = rs->ctl;
	struct ps_workload_shm *wl = ctl->wl;
	const struct ps_load_pattern *pat = &o->steps[stepno];
	bool uring = !o->smb && o->engine == PS_ENGINE_URING;
	unsigned nslots = uring ? o->workers : o->workers * o->qd, i;
	uint64_t *prev_hist = NULL, *cur_hist = NULL, *base_hist = NULL;
	uint64_t dur = o->nsteps > 1 ? o->step_ns : o->duration_ns;
	uint64_t t_start, t_ramp_end, t_end, next_tick, next_sec, last_report, deadline;
	uint64_t prev_ios, prev_bytes, prev_err, base_ios, base_bytes, base_err;
	double *secs_iops = NULL, inflight_sum = 0;
	size_t nsecs = 0, secs_cap;
	uint64_t inflight_n = 0, inflight_max = 0, run_max = 0, t_base;
	bool in_ramp = o->ramp_ns != 0, cpu_ok = false;
	double cpu_b0 = 0, cpu_t0 = 0, cpu_b1 = 0, cpu_t1 = 0;
	pid_t *pids;
	char pdesc[64];
	int ret = 0;

	memset(res, 0, sizeof(*res));
	pids = calloc(nslots, sizeof(*pids));
	prev_hist = calloc(PS_LAT_BUCKETS, sizeof(uint64_t));
	cur_hist = calloc(PS_LAT_BUCKETS, sizeof(uint64_t));
	base_hist = calloc(PS_LAT_BUCKETS, sizeof(uint64_t));
	secs_cap = dur / SEC_NS + 4;
	secs_iops = calloc(secs_cap, sizeof(double));
	if (!pids || !prev_hist || !cur_hist || !base_hist || !secs_iops) {
		snprintf(msg, len, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	ps_load_pattern_str(pat, pdesc, sizeof(pdesc));
	snprintf(wl->desc, sizeof(wl->desc), "%s %s qd%u x%u %s", o->target, pdesc, o->qd, o->workers,
		 o->smb ? "smb" : uring ? "io_uring" : "pread");
	__atomic_store_n(&wl->workers, o->workers, __ATOMIC_RELAXED);

	ctl->go = PS_LOAD_GO_WAIT;
	ctl->nslots = nslots;
	for (i = 0; i < nslots; i++) {
		memset(&ctl->slots[i], 0, sizeof(ctl->slots[i]));
		ctl->slots[i].state = PS_SLOT_STARTING;
	}
	for (i = 0; i < nslots; i++) {
		struct ps_load_job j = {
			.o = o, .pat = pat, .ctl = ctl, .slot = i, .depth = uring ? o->qd : 1,
			.span = o->span, .seed = o->seed * 0x9e3779b97f4a7c15ull + i * 7919 + stepno,
		};

		pids[i] = ps_load_fork();
		if (pids[i] < 0) {
			snprintf(msg, len, "fork slot %u of %u: %s", i, nslots, strerror(errno));
			ret = -errno;
			pids[i] = 0;
			goto out_stop;
		}
		if (!pids[i])
			_exit(o->smb ? ps_load_smb_slot(&j) : uring ? ps_load_uring_slot(&j)
							       : ps_load_pread_slot(&j));
	}
	/* every slot connected and opened its file, or one says why not */
	deadline = ps_load_now_ns() + (uint64_t)o->timeout_ms * 1000000ull + 10 * SEC_NS;
	for (;;) {
		unsigned ready = 0;

		for (i = 0; i < nslots; i++) {
			int st = __atomic_load_n(&ctl->slots[i].state, __ATOMIC_ACQUIRE);

			if (st == PS_SLOT_FAILED) {
				snprintf(msg, len, "%s", ctl->slots[i].msg);
				ret = ctl->slots[i].err ? ctl->slots[i].err : -EIO;
				goto out_stop;
			}
			if (st == PS_SLOT_READY)
				ready++;
			else if (pids[i] > 0 && waitpid(pids[i], NULL, WNOHANG) == pids[i]) {
				pids[i] = 0;
				snprintf(msg, len, "%s: worker process %u died while connecting", o->target, i);
				ret = -EIO;
				goto out_stop;
			}
		}
		if (ready == nslots)
			break;
		if (stop_signal || ps_load_now_ns() > deadline) {
			snprintf(msg, len, "%s: %s while %u of %u connections were set up", o->target,
				 stop_signal ? "interrupted" : "timed out", ready, nslots);
			ret = stop_signal ? -EINTR : -ETIMEDOUT;
			goto out_stop;
		}
		sleep_until(ps_load_now_ns() + 2000000);
	}

	prev_ios = __atomic_load_n(&wl->ios, __ATOMIC_ACQUIRE);
	prev_bytes = __atomic_load_n(&wl->bytes, __ATOMIC_RELAXED);
	prev_err = __atomic_load_n(&wl->errors, __ATOMIC_RELAXED);
	memcpy(prev_hist, (const void *)wl->lat_hist, sizeof(wl->lat_hist));
	t_start = ps_load_now_ns();
	if (!rs->run_t0)
		rs->run_t0 = t_start;
	if (!wl->start_wall_ns)
		wl->start_wall_ns = wall_ns();
	t_ramp_end = t_start + o->ramp_ns;
	t_end = t_ramp_end + dur;
	__atomic_exchange_n(&ctl->interval_max_ns, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->go, PS_LOAD_GO_RUN, __ATOMIC_RELEASE);
	if (!o->quiet) {
		printf("step %d: %s, %u slot%s, %s%s\n", stepno + 1, wl->desc, nslots,
		       nslots == 1 ? "" : "s", o->ramp_ns ? "ramp-up then " : "",
		       "one line per second");
		printf("  %7s %9s %8s %9s %9s %9s %8s %6s\n", "time", "IOPS", "MB/s", "p50", "p99",
		       "max", "inflight", "errors");
	}
	/* the measured part starts here, or at the ramp's last row; interrupted in the ramp, the
	 * summary counts what ran */
	base_ios = prev_ios; base_bytes = prev_bytes; base_err = prev_err;
	memcpy(base_hist, prev_hist, sizeof(wl->lat_hist));
	t_base = t_start;
	cpu_ok = !cpu_times(&cpu_b0, &cpu_t0);
	next_tick = t_start + TICK_NS;
	next_sec = t_start + SEC_NS;
	last_report = t_start;
	while (!stop_signal) {
		uint64_t now, sum = 0;

		sleep_until(next_tick < t_end ? next_tick : t_end);
		now = ps_load_now_ns();
		for (i = 0; i < nslots; i++)
			sum += __atomic_load_n(&ctl->slots[i].inflight, __ATOMIC_RELAXED);
		__atomic_store_n(&wl->inflight, sum, __ATOMIC_RELAXED);
		if (now >= t_ramp_end && now < t_end) {
			inflight_sum += (double)sum;
			inflight_n++;
			if (sum > inflight_max)
				inflight_max = sum;
		}
		for (i = 0; i < nslots; i++) {
			int st = 0;

			if (pids[i] > 0 && waitpid(pids[i], &st, WNOHANG) == pids[i]) {
				pids[i] = 0;
				snprintf(msg, len, "%s: worker process %u %s %d during the run%s%s",
					 o->target, i, WIFSIGNALED(st) ? "killed by signal" : "exited with",
					 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
					 ctl->slots[i].msg[0] ? ": " : "", ctl->slots[i].msg);
				ret = -EIO;
				goto out_stop;
			}
		}
		/* after a stall, sample from now on rather than catching up on missed ticks */
		while (next_tick <= now)
			next_tick += TICK_NS;
		if (now >= next_sec || now >= t_end) {
			uint64_t ios = __atomic_load_n(&wl->ios, __ATOMIC_ACQUIRE);
			uint64_t bytes = __atomic_load_n(&wl->bytes, __ATOMIC_RELAXED);
			uint64_t errs = __atomic_load_n(&wl->errors, __ATOMIC_RELAXED);
			uint64_t mx = __atomic_exchange_n(&ctl->interval_max_ns, 0, __ATOMIC_RELAXED);
			/*
			 * A row covers the time since the previous row, not a nominal second: when
			 * the machine stalls (seconds without a tick) the row is longer, and its
			 * rate is what ran in it; the next row goes back on the whole-second grid
			 * and is at least half a second long.
			 */
			uint64_t span_ns = now - last_report;
			struct ps_workload w = { 0 };
			char p50[16], p99[16], pmax[16];
			double secs = span_ns / 1e9;
			bool ramp_row = in_ramp;

			for (i = 0; i < PS_LAT_BUCKETS; i++) {
				uint64_t c = __atomic_load_n(&wl->lat_hist[i], __ATOMIC_RELAXED);

				cur_hist[i] = c - prev_hist[i];
				prev_hist[i] = c;
			}
			w.ios = ios - prev_ios;
			w.bytes = bytes - prev_bytes;
			w.errors = errs - prev_err;
			w.lat_max_ns = mx;
			w.lat_p50_ns = ps_lat_hist_percentile(cur_hist, PS_LAT_BUCKETS, 0.50, mx);
			w.lat_p99_ns = ps_lat_hist_percentile(cur_hist, PS_LAT_BUCKETS, 0.99, mx);
			w.inflight = (uint32_t)sum;
			prev_ios = ios; prev_bytes = bytes; prev_err = errs;
			if (mx > run_max && !ramp_row)
				run_max = mx;
			ret = write_interval(rs, now, span_ns, &w, msg, len);
			if (ret)
				goto out_stop;
			if (in_ramp && now + TICK_NS / 2 >= t_ramp_end) {
				/* the ramp's last row, however late: the measured part starts here */
				base_ios = ios; base_bytes = bytes; base_err = errs;
				for (i = 0; i < PS_LAT_BUCKETS; i++)
					base_hist[i] = prev_hist[i];
				t_base = now;
				cpu_ok = !cpu_times(&cpu_b0, &cpu_t0);
				in_ramp = false;
			} else if (!in_ramp && nsecs < secs_cap && secs > 0.5) {
				secs_iops[nsecs++] = w.ios / secs;
			}
			if (!o->quiet) {
				fmt_lat(p50, sizeof(p50), w.lat_p50_ns);
				fmt_lat(p99, sizeof(p99), w.lat_p99_ns);
				fmt_lat(pmax, sizeof(pmax), w.lat_max_ns);
				printf("  %6.1fs %9.0f %8.1f %9s %9s %9s %8llu %6llu%s\n",
				       (now - rs->run_t0) / 1e9, w.ios / secs, w.bytes / secs / 1e6,
				       p50, p99, pmax, (unsigned long long)sum,
				       (unsigned long long)w.errors, ramp_row ? "  ramp" : "");
				fflush(stdout);
			}
			last_report = now;
			/* the CPU to the row, as the IOs: an interrupted step ends at its last row */
			if (cpu_ok && !in_ramp && cpu_times(&cpu_b1, &cpu_t1))
				cpu_ok = false;
			while (next_sec < now + SEC_NS / 2)
				next_sec += SEC_NS;
		}
		if (now >= t_end)
			break;
	}
	res->interrupted = stop_signal != 0;
	{
		/*
		 * The counts go to the last row: a step interrupted between two rows ends at the
		 * last one (its time, IOs and CPU), or its rates would come out low.
		 */
		uint64_t end = res->interrupted ? last_report : t_end;

		if (cpu_ok && cpu_t1 > cpu_t0) {
			res->cpu_busy_s = cpu_b1 - cpu_b0;
			res->cpu_total_s = cpu_t1 - cpu_t0;
		}
		for (i = 0; i < PS_LAT_BUCKETS; i++)
			cur_hist[i] = prev_hist[i] - base_hist[i];
		res->seconds = (end > t_base ? end - t_base : 0) / 1e9;
		res->ios = prev_ios - base_ios;
		res->errors = prev_err - base_err;
		res->iops = res->seconds > 0 ? res->ios / res->seconds : 0;
		res->mbps = res->seconds > 0 ? (prev_bytes - base_bytes) / res->seconds / 1e6 : 0;
		res->iops_median = ps_median(secs_iops, nsecs);
		res->max = run_max;
		res->p50 = ps_lat_hist_percentile(cur_hist, PS_LAT_BUCKETS, 0.50, run_max);
		res->p99 = ps_lat_hist_percentile(cur_hist, PS_LAT_BUCKETS, 0.99, run_max);
		res->p999 = ps_lat_hist_percentile(cur_hist, PS_LAT_BUCKETS, 0.999, run_max);
		res->inflight_mean = inflight_n ? inflight_sum / inflight_n : 0;
		res->inflight_max = inflight_max;
	}
out_stop:
	__atomic_store_n(&ctl->go, PS_LOAD_GO_STOP, __ATOMIC_RELEASE);
	ps_load_reap(pids, nslots, STOP_GRACE_NS);
	__atomic_store_n(&wl->inflight, 0, __ATOMIC_RELAXED);
out:
	free(pids);
	free(prev_hist);
	free(cur_hist);
	free(base_hist);
	free(secs_iops);
	return ret;
}

static void print_result(const struct ps_load_opts *o, int stepno, const struct step_result *r,
			 unsigned qd_total)
{
	char pdesc[64], p50[16], p99[16], p999[16], mx[16];

	ps_load_pattern_str(&o->steps[stepno], pdesc, sizeof(pdesc));
	fmt_lat(p50, sizeof(p50), r->p50);
	fmt_lat(p99, sizeof(p99), r->p99);
	fmt_lat(p999, sizeof(p999), r->p999);
	fmt_lat(mx, sizeof(mx), r->max);
	printf("summary step %d: %s, qd %u x %u workers, %.1f s%s\n", stepno + 1, pdesc, o->qd,
	       o->workers, r->seconds, r->interrupted ? " (interrupted)" : "");
	printf("  %llu IOs, %.0f IOPS (median of seconds %.0f), %.1f MB/s, %llu errors\n",
	       (unsigned long long)r->ios, r->iops, r->iops_median, r->mbps,
	       (unsigned long long)r->errors);
	printf("  latency p50 %s, p99 %s, p99.9 %s, max %s; in flight mean %.1f, max %llu of %u\n",
	       p50, p99, p999, mx, r->inflight_mean, (unsigned long long)r->inflight_max, qd_total);
	/* a figure that was not measured is "-", never a number */
	char busy[32] = "-", perio[32] = "-";
	if (r->cpu_total_s > 0) {
		snprintf(busy, sizeof(busy), "%.2f", 100 * r->cpu_busy_s / r->cpu_total_s);
		if (r->ios)
			snprintf(perio, sizeof(perio), "%.3f", r->cpu_busy_s * 1e6 / r->ios);
		printf("  CPU of the whole machine: %.1f%% busy, ", 100 * r->cpu_busy_s / r->cpu_total_s);
		if (r->ios)
			printf("%.1f us per IO\n", r->cpu_busy_s * 1e6 / r->ios);
		else
			printf("no IO to share it\n");
	}
	if (o->rate)
		printf("  offered %llu IOPS: %s\n", (unsigned long long)o->rate,
		       r->iops >= 0.98 * o->rate ? "reached"
						 : "NOT reached (the target could not keep up)");
	printf("result: step=%d bs=%llu read_pct=%u random=%d qd=%u workers=%u seconds=%.2f "
	       "ios=%llu iops=%.0f iops_median=%.0f mbps=%.2f p50_us=%.1f p99_us=%.1f "
	       "p999_us=%.1f max_us=%.1f errors=%llu inflight_mean=%.2f inflight_max=%llu "
	       "qd_total=%u rate=%llu cpu_busy_pct=%s cpu_us_per_io=%s\n",
	       stepno + 1, (unsigned long long)o->steps[stepno].bs, o->steps[stepno].read_pct,
	       o->steps[stepno].random, o->qd, o->workers, r->seconds, (unsigned long long)r->ios,
	       r->iops, r->iops_median, r->mbps, r->p50 / 1e3, r->p99 / 1e3, r->p999 / 1e3,
	       r->max / 1e3, (unsigned long long)r->errors, r->inflight_mean,
	       (unsigned long long)r->inflight_max, qd_total, (unsigned long long)o->rate, busy,
	       perio);
}

int ps_load_run(struct ps_load_opts *o)
{
	struct run_state rs = { .o = o };
	struct step_result res[PS_LOAD_MAX_STEPS];
	struct sigaction sa = { .sa_handler = on_signal };
	struct ps_workload_shm *wl;
	pid_t inject_pids[PS_INJECT_KINDS] = { 0 };
	bool injecting = false;
	uint64_t max_bs = 0;
	char msg[512];
	int ret, s, done = 0;

	wl = map_counters(msg, sizeof(msg));
	if (!wl) {
		fprintf(stderr, "poolscope load: %s\n", msg);
		return 1;
	}
	rs.ctl = mmap(NULL, sizeof(*rs.ctl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rs.ctl == MAP_FAILED) {
		fprintf(stderr, "poolscope load: mmap: %s\n", strerror(errno));
		return 1;
	}
	rs.ctl->wl = wl;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (!o->smb && o->engine == PS_ENGINE_AUTO)
		o->engine = ps_load_uring_available() ? PS_ENGINE_URING : PS_ENGINE_PREAD;
	if (o->ninject)
		ps_load_inject_announce(o);

	ret = probe(o, rs.ctl, msg, sizeof(msg));
	if (ret) {
		fprintf(stderr, "poolscope load: %s\n", msg);
		goto out;
	}
	for (s = 0; s < o->nsteps; s++)
		if (o->steps[s].bs > max_bs)
			max_bs = o->steps[s].bs;
	if (o->span && rs.ctl->file_size < o->span) {
		fprintf(stderr, "poolscope load: %s: short file: %llu bytes, --size asks for %llu\n",
			o->target, (unsigned long long)rs.ctl->file_size, (unsigned long long)o->span);
		ret = -EINVAL;
		goto out;
	}
	if (!o->span)
		o->span = rs.ctl->file_size;
	o->span -= o->span % max_bs;
	if (o->span < max_bs) {
		fprintf(stderr, "poolscope load: %s: short file: %llu bytes, shorter than one %llu-byte "
			"block\n", o->target, (unsigned long long)rs.ctl->file_size,
			(unsigned long long)max_bs);
		ret = -EINVAL;
		goto out;
	}
	if (o->trace_path) {
		ret = ps_trace_create(&rs.trace, o->trace_path, o->trace_force ? PS_TRACE_F_FORCE : 0);
		if (ret) {
			fprintf(stderr, "poolscope load: %s: %s\n", o->trace_path,
				ret == -EEXIST ? "exists (use --force to replace it)" : ps_strerror(ret));
			rs.trace = NULL;
			goto out;
		}
		ps_trace_set_meta(rs.trace, PS_META_OS, PS_OS_LINUX);
		ps_trace_set_meta(rs.trace, PS_META_SOURCE, PS_SOURCE_LOAD);
		ps_trace_set_meta_int(rs.trace, PS_META_INTERVAL_NS, (int64_t)SEC_NS);
		ps_trace_set_meta_int(rs.trace, PS_META_START_WALL_NS, (int64_t)wall_ns());
		ps_trace_set_meta(rs.trace, PS_META_WORKLOAD_TARGET, o->target);
		ps_trace_set_meta_int(rs.trace, PS_META_WORKLOAD_QD, o->qd);
		ps_trace_set_meta_int(rs.trace, PS_META_WORKLOAD_WORKERS, o->workers);
		if (o->ninject) {
			char inj[128];

			ps_trace_set_meta(rs.trace, PS_META_WORKLOAD_INJECT,
					  ps_load_inject_str(o, inj, sizeof(inj)));
		}
	}
	if (o->ninject) {
		injecting = true;
		ret = ps_load_inject_start(o, rs.ctl, inject_pids, &stop_signal, msg, sizeof(msg));
		if (ret) {
			fprintf(stderr, "poolscope load: %s\n", msg);
			goto out;
		}
	}
	for (s = 0; s < o->nsteps && !stop_signal; s++) {
		if (rs.trace) {
			char key[32], pdesc[64];

			snprintf(key, sizeof(key), PS_META_WORKLOAD_STEP_FMT, s + 1);
			ps_trace_set_meta(rs.trace, key, ps_load_pattern_str(&o->steps[s], pdesc,
									      sizeof(pdesc)));
		}
		ret = run_step(&rs, s, &res[s], msg, sizeof(msg));
		if (ret) {
			fprintf(stderr, "poolscope load: %s\n", msg);
			goto out;
		}
		done++;
		print_result(o, s, &res[s], o->workers * o->qd);
		/* out now: releasing injected faults after the last step can take seconds */
		fflush(stdout);
	}
	if (done > 1) {
		printf("\nsweep: %-26s %10s %8s %9s %9s\n", "step", "IOPS", "MB/s", "p50", "p99");
		for (s = 0; s < done; s++) {
			char pdesc[64], p50[16], p99[16];

			fmt_lat(p50, sizeof(p50), res[s].p50);
			fmt_lat(p99, sizeof(p99), res[s].p99);
			printf("  %2d %-28s %10.0f %8.1f %9s %9s\n", s + 1,
			       ps_load_pattern_str(&o->steps[s], pdesc, sizeof(pdesc)), res[s].iops,
			       res[s].mbps, p50, p99);
		}
	}
out:
	if (injecting)
		ps_load_inject_stop(o, rs.ctl, inject_pids, !ret);
	if (rs.trace) {
		int cret = ps_trace_close(rs.trace);

		if (cret && !ret) {
			fprintf(stderr, "poolscope load: %s: closing: %s\n", o->trace_path,
				ps_strerror(cret));
			ret = cret;
		}
	}
	return ret ? 1 : 0;
}
