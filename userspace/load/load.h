/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `poolscope load` internals: options, the control block shared by the parent and its worker
 * processes, and the engines (SMB through libsmbclient, local pread, local io_uring).
 *
 * Why processes: Debian's libsmbclient 4.17 is not thread-safe (talloc stackframes are global,
 * smbc_thread_posix is not exported) and its sync API has one outstanding IO per context. So a
 * worker at queue depth QD is QD processes, each with its own context and TCP connection, each
 * keeping one IO in flight. Local pread uses the same slot-per-outstanding-IO model; io_uring
 * keeps QD IOs in one ring per worker.
 *
 * Counters: every slot batches its completions and adds them (relaxed atomics) to a
 * struct ps_workload_shm every few milliseconds. That struct is either the file `poolscope
 * record` hands over in POOLSCOPE_WORKLOAD_SHM or an anonymous shared mapping; the parent
 * reads the same cumulative counters every second to print its per-second lines.
 */
#ifndef PS_LOAD_H
#define PS_LOAD_H

#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "userspace/lib/workload/loadspec.h"
#include "userspace/lib/workload/workload_shm.h"

enum ps_load_engine {
	PS_ENGINE_AUTO,
	PS_ENGINE_SMB,
	PS_ENGINE_PREAD,
	PS_ENGINE_URING,
};

#define PS_LOAD_MAX_QD		256
#define PS_LOAD_MAX_WORKERS	64
#define PS_LOAD_MAX_SLOTS	1024	/* processes: workers * qd for smb and pread */

/*
 * Faults injected beside the workload (--inject KIND[:N]): every N IOs of the whole workload,
 * one more resource is taken on the server and held until load exits. Each runs in a process
 * of its own, with its own connections, so the workload's slots run and count as without it.
 */
enum ps_inject_kind {
	PS_INJECT_HANDLE_LEAK,		/* an SMB open of a file in the share, never closed */
	PS_INJECT_NET_STALL,		/* an SMB connection whose answers are never read */
	PS_INJECT_KINDS,
};

struct ps_load_inject {
	enum ps_inject_kind kind;
	uint64_t every;			/* IOs of the workload per resource taken */
};

struct ps_load_opts {
	const char *target;		/* smb://host/share/path or a local path */
	bool smb;
	char domain[64], user[128], pass[128];
	enum ps_load_engine engine;
	bool direct;			/* O_DIRECT (local) */
	unsigned qd, workers;
	uint64_t span;			/* bytes of the file used (0: all of it) */
	uint64_t duration_ns, ramp_ns, step_ns;
	int nsteps;
	struct ps_load_pattern steps[PS_LOAD_MAX_STEPS];
	unsigned timeout_ms;		/* SMB connect/IO timeout */
	uint64_t rate;			/* --rate: IOs a second offered in all (0: unpaced) */
	uint64_t seed;
	const char *trace_path;
	bool trace_force;
	bool quiet;			/* no per-second lines */
	unsigned ninject;
	struct ps_load_inject inject[PS_INJECT_KINDS];
};

enum ps_slot_state {
	PS_SLOT_STARTING,
	PS_SLOT_READY,
	PS_SLOT_FAILED,
	PS_SLOT_DONE,
};

struct ps_load_slot {
	int state;			/* enum ps_slot_state, written by the slot */
	int err;			/* -errno when FAILED */
	uint64_t inflight;		/* this slot's IOs in flight now */
	char msg[192];			/* what failed, for the one error line */
} __attribute__((aligned(64)));

#define PS_LOAD_GO_WAIT	0
#define PS_LOAD_GO_RUN	1
#define PS_LOAD_GO_STOP	2

/* One injected fault's process: its state and what it holds, read by the parent at the end. */
struct ps_load_fault {
	int state;			/* enum ps_slot_state, written by the fault process */
	int err;			/* -errno when FAILED */
	uint64_t ios;			/* workload IOs it has seen since it started */
	uint64_t taken;			/* resources taken (handles opened, connections made) */
	uint64_t failed;		/* attempts that failed */
	uint64_t conns;			/* SMB connections it holds (handle-leak: the handles' ones) */
	uint64_t sent;			/* net-stall: requests written and never answered by a read */
	uint64_t files;			/* handle-leak: files made for the handles (0: the target) */
	uint64_t capped;		/* the cap it reached and stopped at (0: none) */
	uint64_t due;			/* handle-leak: handles due so far (the fault process) */
	uint64_t claimed;		/* handle-leak: opens the lanes took on (done or failed) */
	uint64_t lanes;			/* handle-leak: lanes connected */
	uint64_t lanes_down;		/* handle-leak: lanes that could not connect */
	char msg[192];			/* why setup failed, or the first failure during the run */
	char note[192];			/* how it runs when that is not as asked, for the end */
} __attribute__((aligned(64)));

struct ps_load_ctl {
	int go;				/* PS_LOAD_GO_* written by the parent */
	int inject_go;			/* PS_LOAD_GO_* for the fault processes */
	uint64_t interval_max_ns;	/* max latency since the parent last took it */
	uint64_t file_size;		/* probe result */
	struct ps_workload_shm *wl;	/* same address in every process (mapped before fork) */
	unsigned nslots;
	struct ps_load_slot slots[PS_LOAD_MAX_SLOTS];
	struct ps_load_fault faults[PS_INJECT_KINDS];
};

/* Per-slot batch of completions, flushed to ctl->wl every few ms. */
struct ps_load_batch {
	uint64_t ios, bytes, errors, max_ns;
	uint64_t last_flush_ns;
	uint64_t hist[PS_LAT_BUCKETS];
	bool dirty;
};

uint64_t ps_load_now_ns(void);
void ps_load_record(struct ps_load_ctl *ctl, struct ps_load_batch *b, uint64_t lat_ns,
		    uint64_t bytes, bool ok, uint64_t now_ns);
void ps_load_flush(struct ps_load_ctl *ctl, struct ps_load_batch *b, uint64_t now_ns);
void ps_load_slot_fail(struct ps_load_slot *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * --rate: each slot issues its IOs on a schedule of its own, its share of the rate, the slots'
 * schedules spread over one period so that they do not issue together. After a stall a slot
 * catches up, one IO in flight at a time as ever, so that a short hiccup does not lower the
 * rate; one more than a second (or a period) behind, the target cannot keep up, and the slot
 * starts again from now instead. The offered rate is a ceiling, and the summary says when it
 * was not reached.
 */
struct ps_load_job;
struct ps_load_pace {
	uint64_t next_ns, period_ns;	/* period 0: unpaced */
};
void ps_load_pace_init(struct ps_load_pace *p, const struct ps_load_job *j, uint64_t now_ns);
/* Sleeps until the next IO is due (false if the run stopped meanwhile) and books it. */
bool ps_load_pace_wait(struct ps_load_pace *p, const struct ps_load_ctl *ctl);
/* Books the next IO and returns how long until it is due (0: now), without sleeping. */
uint64_t ps_load_pace_due(struct ps_load_pace *p, uint64_t now_ns);

/* Waits (spinning politely) until the parent says go; false when told to stop instead. */
bool ps_load_wait_go(const struct ps_load_ctl *ctl);
static inline bool ps_load_running(const struct ps_load_ctl *ctl)
{
	return __atomic_load_n(&ctl->go, __ATOMIC_RELAXED) == PS_LOAD_GO_RUN;
}

/* Engines. Each slot function runs in a forked child and returns its exit code. */
struct ps_load_job {
	const struct ps_load_opts *o;
	const struct ps_load_pattern *pat;
	struct ps_load_ctl *ctl;
	unsigned slot;			/* index into ctl->slots */
	unsigned depth;			/* IOs this slot keeps in flight (uring: qd, else 1) */
	uint64_t span;
	uint64_t seed;
};

/*
 * Loads libsmbclient (dlopen) once per process; the SMB functions below need it. On failure
 * returns -ENOENT with one line naming the library and its package in msg.
 */
int ps_load_smb_init(char *msg, size_t len);
/* Opens the target once (in a child for SMB) to learn its size; message in msg. */
int ps_load_smb_probe(const struct ps_load_opts *o, uint64_t *size, char *msg, size_t len);
int ps_load_local_probe(const struct ps_load_opts *o, uint64_t *size, char *msg, size_t len);
int ps_load_smb_slot(const struct ps_load_job *j);
int ps_load_pread_slot(const struct ps_load_job *j);
int ps_load_uring_slot(const struct ps_load_job *j);
bool ps_load_uring_available(void);

/* Processes of the run: forked children die with the parent; reaping kills after grace_ns. */
pid_t ps_load_fork(void);
unsigned ps_load_reap(pid_t *pids, unsigned n, uint64_t grace_ns);

/*
 * --inject. Parsing: "KIND" or "KIND:N" into o->inject (a kind given twice is an error);
 * returns 0, or -EINVAL with what was expected in err. str: "handle-leak:30,net-stall:30000".
 */
int ps_load_inject_parse(struct ps_load_opts *o, const char *arg, char *err, size_t len);
const char *ps_load_inject_name(enum ps_inject_kind kind);
bool ps_load_inject_smb_only(enum ps_inject_kind kind);
char *ps_load_inject_str(const struct ps_load_opts *o, char *buf, size_t len);
/*
 * Lifecycle, in the parent: start forks one process per fault and waits until each has set
 * itself up (connected, tried once) or says why not (msg); stop ends them, which releases what
 * they hold, and prints one `inject:` line each.
 */
int ps_load_inject_start(const struct ps_load_opts *o, struct ps_load_ctl *ctl, pid_t *pids,
			 const volatile sig_atomic_t *stop, char *msg, size_t len);
void ps_load_inject_stop(const struct ps_load_opts *o, struct ps_load_ctl *ctl, pid_t *pids,
			 bool report);
void ps_load_inject_announce(const struct ps_load_opts *o);
void ps_load_fault_fail(struct ps_load_fault *f, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* In a fault process: the resources due now (workload IOs since base / every). */
uint64_t ps_load_inject_due(struct ps_load_ctl *ctl, struct ps_load_fault *f, uint64_t base,
			    uint64_t every);
bool ps_load_inject_running(const struct ps_load_ctl *ctl);
/* The fault processes' bodies; each returns its exit code. */
int ps_load_smb_leak_handles(const struct ps_load_opts *o, struct ps_load_ctl *ctl,
			     struct ps_load_fault *f, uint64_t every);
int ps_load_smb_leak_cleanup(const struct ps_load_opts *o, char *msg, size_t len);
int ps_load_net_stall(const struct ps_load_opts *o, struct ps_load_ctl *ctl,
		      struct ps_load_fault *f, uint64_t every);

/* Runs the whole workload (all steps); prints per-second lines and the summary. */
int ps_load_run(struct ps_load_opts *o);

#endif
