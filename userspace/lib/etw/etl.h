/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Streaming reader for Windows .etl files (Event Trace Log), pure C, no Windows API.
 * docs/etw.md describes the format as implemented.
 *
 * A file is a sequence of WMI_BUFFER_HEADER buffers; buffer 0 is the header buffer whose first
 * event is TRACE_LOGFILE_HEADER. The reader holds one buffer per processor at most (never the
 * whole file): in PS_ETL_ORDERED mode it indexes the buffer headers first, then merges the
 * per-processor buffer sequences by event timestamp (global time order, what pairing and stack
 * matching need); otherwise it walks the file front to back (what `etl info` needs, fastest).
 * ps_etl_scan() is the file-order walk for whole-file statistics on several threads: each worker
 * reads, decompresses and walks whole buffers of its own (one buffer per worker in memory), and
 * statistics and problems are merged back in file order, identical to a single-threaded walk.
 *
 * Errors keep what is sound: a bad event ends its buffer, a bad buffer is skipped when its size
 * is believable, a truncated file ends the walk. Every problem is counted and the first ones are
 * kept as text naming the file offset (ps_etl_problem()).
 */
#ifndef PS_ETW_ETL_H
#define PS_ETW_ETL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PS_ETL_WMI_BUFFER_HEADER_SIZE	0x48
#define PS_ETL_MAX_BUFFER		(64u << 20)	/* absurd beyond this */

#define PS_ETL_BUF_EVENTS_LOST		0x0002
#define PS_ETL_BUF_BUFFER_LOST		0x0004
#define PS_ETL_BUF_COMPRESSED		0x0040
#define PS_ETL_MODE_CIRCULAR		0x00000002
#define PS_ETL_MODE_COMPRESSED		0x04000000

/* Trace header types (byte 2 of the marker). */
enum {
	PS_ETL_HT_SYSTEM32 = 1, PS_ETL_HT_SYSTEM64 = 2,
	PS_ETL_HT_COMPACT32 = 3, PS_ETL_HT_COMPACT64 = 4,
	PS_ETL_HT_FULL32 = 10, PS_ETL_HT_INSTANCE32 = 11, PS_ETL_HT_TIMED = 12,
	PS_ETL_HT_ERROR = 13, PS_ETL_HT_WNODE = 14, PS_ETL_HT_MESSAGE = 15,
	PS_ETL_HT_PERFINFO32 = 16, PS_ETL_HT_PERFINFO64 = 17,
	PS_ETL_HT_EVENT32 = 18, PS_ETL_HT_EVENT64 = 19,
	PS_ETL_HT_FULL64 = 20, PS_ETL_HT_INSTANCE64 = 21,
};

/* TRACE_LOGFILE_HEADER as read (32- or 64-bit layout), plus what the reader derives. */
struct ps_etl_logfile {
	uint32_t buffer_size;
	uint8_t version[4];		/* major, minor, sub, subminor */
	uint32_t provider_version;	/* OS build */
	uint32_t ncpus;
	int64_t end_time;		/* FILETIME */
	uint32_t timer_resolution;
	uint32_t max_file_size;
	uint32_t log_file_mode;
	uint32_t buffers_written;
	uint32_t start_buffers;
	uint32_t pointer_size;		/* bytes */
	uint32_t events_lost;
	uint32_t cpu_mhz;
	int32_t tz_bias;		/* minutes, UTC = local + bias */
	int64_t boot_time;		/* FILETIME */
	int64_t perf_freq;
	int64_t ns_per_tick;	/* 1e9 / perf_freq when that is whole (10 MHz: 100), else 0 */
	int64_t start_time;		/* FILETIME */
	uint32_t clock_type;		/* ReservedFlags: 1 QPC, 2 system time, 3 cycles */
	uint32_t buffers_lost;
	char logger_name[128];		/* UTF-16 converted to UTF-8 */
	char logfile_name[288];
	int64_t t0;			/* SystemTime of the header event: the clock's origin */
	uint32_t compression;		/* COMPRESSION_FORMAT_*: 0 none, 3 XPRESS */
	uint32_t header_buffer_flag;
	uint32_t header_buffer_state;
};

/*
 * One event as found in a buffer. Pointers are valid until the next ps_etl_next(). The reader
 * clears only the fields before raw per event: a field that some header kinds leave unset
 * belongs there.
 */
struct ps_etl_event {
	uint8_t htype;			/* PS_ETL_HT_* */
	uint8_t ptr_size;		/* 4 or 8: pointer size of the payload */
	bool kernel;			/* SYSTEM/COMPACT/PERFINFO header: group/type is a HookId */
	bool has_tid;			/* PERFINFO headers carry no thread/process */
	uint8_t group;			/* kernel group, or 0 */
	uint8_t type;			/* kernel type, classic Class.Type, EVENT_HEADER opcode */
	uint16_t version;
	uint16_t id;			/* EVENT_HEADER descriptor Id (0 otherwise) */
	uint16_t cpu;			/* buffer ProcessorIndex */
	uint32_t tid, pid;		/* (uint32_t)-1 when absent */
	int64_t ts;			/* raw timestamp (clock of the logfile header) */
	const uint8_t *guid;		/* provider / class GUID (16 bytes) or NULL (kernel) */
	const uint8_t *raw;		/* whole event */
	uint32_t size;			/* whole event, without the 8-byte alignment pad */
	const uint8_t *payload;
	uint32_t payload_len;
	uint64_t file_off;		/* buffer start in the file */
	uint32_t buf_off;		/* offset of the event in its (decompressed) buffer */
	uint32_t buf_index;		/* buffer number in file order */
};

struct ps_etl_stats {
	uint64_t file_size;
	uint64_t bytes_read;
	uint32_t buffers;
	uint32_t compressed;
	uint32_t flag_events_lost;	/* buffers flagged EVENTS_LOST */
	uint32_t flag_buffer_lost;
	uint64_t events;
	uint64_t data_bytes;		/* event data in the buffers read (after decompression) */
	uint32_t max_cpu;		/* highest ProcessorIndex seen + 1 */
	uint32_t problems;		/* bad events/buffers (each also in problem text) */
	bool truncated;			/* the walk ended before the end of the file */
};

#define PS_ETL_ORDERED	0x1
/* With PS_ETL_ORDERED: no read-ahead helper thread (the caller reads on a thread of its own). */
#define PS_ETL_NO_HELPER	0x2

struct ps_etl;

/*
 * Opens path, reads and checks the header buffer. On error returns -errno/-PS_ERR__* and writes
 * "path: offset 0x..: what" into err.
 */
int ps_etl_open(struct ps_etl **out, const char *path, unsigned flags, char *err, size_t errlen);
/* Same over an open file descriptor (not closed by ps_etl_close); name is used in messages. */
int ps_etl_open_fd(struct ps_etl **out, int fd, const char *name, unsigned flags, char *err,
		   size_t errlen);
void ps_etl_close(struct ps_etl *e);
const struct ps_etl_logfile *ps_etl_logfile(const struct ps_etl *e);
const struct ps_etl_stats *ps_etl_stats(const struct ps_etl *e);
/* i-th recorded problem ("name: offset 0x..: ..."), NULL past the last kept one (8 are kept). */
const char *ps_etl_problem(const struct ps_etl *e, unsigned i);

/*
 * Next event: 1 and *ev filled, 0 at the end. Problems in buffers do not stop the walk (see
 * ps_etl_stats()->problems); a read error returns -errno.
 */
int ps_etl_next(struct ps_etl *e, struct ps_etl_event *ev);

/*
 * Per-event callback of ps_etl_scan(), on the worker's thread; ev is valid during the call only.
 * A negative return stops the scan, which then returns it.
 */
typedef int (*ps_etl_scan_fn)(void *arg, const struct ps_etl_event *ev);

/*
 * Walks the rest of a file-order handle (flags without PS_ETL_ORDERED) and calls fn(args[w], ev)
 * for every event, on up to nargs workers: the calling thread (w = 0) and helper threads (one
 * less than the processors online, at most 3, for compressed files of 1 MiB or more;
 * POOLSCOPE_ETL_THREADS=N sets N for any file, 0 = none). The events of one buffer go to one
 * worker, in order; buffers are shared out in no fixed order, so what fn accumulates must not
 * depend on the order across buffers (ev->buf_index and ev->buf_off give each event's place in
 * the file). Afterwards
 * ps_etl_stats() and ps_etl_problem() read exactly as after a ps_etl_next() walk, and
 * ps_etl_next() returns 0. With helpers, the calling thread is held on its current processor
 * and the helpers start on the others (its own affinity mask is restored before returning).
 * Returns 0, fn's negative return, or -errno.
 */
int ps_etl_scan(struct ps_etl *e, ps_etl_scan_fn fn, void *const *args, unsigned nargs);
#define PS_ETL_SCAN_MAX 4	/* workers ps_etl_scan() uses at most: nargs beyond is unused */

/* Raw timestamp -> ns since the Unix epoch, as TraceEvent converts (see docs/etw.md). */
int64_t ps_etl_wall_ns(const struct ps_etl_logfile *h, int64_t ts);
/* Raw timestamp -> ns since the header event. */
int64_t ps_etl_rel_ns(const struct ps_etl_logfile *h, int64_t ts);

/* Group name ("Pool", "StackWalk", ...) or NULL. */
const char *ps_etl_group_name(uint8_t group);
/* GUID as text (36 chars + NUL). */
char *ps_etl_guid_str(const uint8_t *g, char buf[37]);
/* FILETIME (100 ns since 1601-01-01 UTC) as "YYYY-MM-DD HH:MM:SS.uuuuuu UTC" ("-" when <= 0). */
char *ps_etl_filetime_str(int64_t ft, char buf[64]);
/* UTF-16LE (NUL-terminated or bounded by len bytes) to UTF-8; returns bytes consumed incl. NUL. */
size_t ps_etl_utf16(const uint8_t *p, size_t len, char *out, size_t outlen);

/* Little-endian readers, bounds are the caller's job. */
static inline uint16_t ps_rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t ps_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t ps_rd64(const uint8_t *p) { return ps_rd32(p) | (uint64_t)ps_rd32(p + 4) << 32; }
static inline uint64_t ps_rdptr(const uint8_t *p, unsigned ptr) { return ptr == 8 ? ps_rd64(p) : ps_rd32(p); }

#endif
