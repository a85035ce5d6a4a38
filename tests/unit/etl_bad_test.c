// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input: every truncation prefix of the small corpus files (both walk orders), patched
 * corpus files (wrong magic, absurd BufferSize, SavedOffset outside the buffer, an event that
 * overruns its buffer, garbage in a compressed buffer) and truncated synthetic pool files
 * through the whole converter. What must hold: a clear error naming the offset, the sound part
 * kept, no crash (the SAN build runs this too), no hang (the harness alarm).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/etw/convert.h"
#include "userspace/lib/etw/etl.h"
#include "userspace/lib/trace/trace.h"
#include "etl_corpus.h"
#include "etlwriter.c"
#include "slurp.h"

static int memfd_with(const uint8_t *b, size_t n)
{
	int fd = memfd_create("etl", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, b, n) != (ssize_t)n) {
		close(fd);
		return -1;
	}
	return fd;
}

struct walk {
	int open_rc;
	char err[512];
	uint64_t events;
	uint32_t problems;
	char problem0[400];
};

/* What identifies the events handed out, in their order: their place, header and bytes. */
static uint64_t event_hash(uint64_t h, const struct ps_etl_event *ev)
{
	uint64_t v[5] = { (uint64_t)ev->ts, ev->cpu | (uint64_t)ev->type << 16 |
			  (uint64_t)ev->group << 24 | (uint64_t)ev->size << 32,
			  ev->file_off, ev->buf_index | (uint64_t)ev->payload_len << 32, 0 };

	for (uint32_t i = 0; i < ev->size; i++)
		v[4] = v[4] * 131 + ev->raw[i];
	for (unsigned i = 0; i < 5; i++)
		h = (h ^ v[i]) * 0x100000001b3ull;
	return h;
}

static int count_event(void *arg, const struct ps_etl_event *ev)
{
	(void)ev;
	++*(uint64_t *)arg;
	return 0;
}

/* s read the file as e did: the same statistics and every problem text, in order. */
static void same_reading(struct ps_etl *e, struct ps_etl *s, const char *what)
{
	const struct ps_etl_stats *a = ps_etl_stats(e), *b = ps_etl_stats(s);

	ASSERT_EQ(b->events, a->events, what);
	ASSERT_EQ(b->buffers, a->buffers, what);
	ASSERT_EQ(b->compressed, a->compressed, what);
	ASSERT_EQ(b->data_bytes, a->data_bytes, what);
	ASSERT_EQ(b->max_cpu, a->max_cpu, what);
	ASSERT_EQ(b->flag_events_lost, a->flag_events_lost, what);
	ASSERT_EQ(b->truncated, a->truncated, what);
	ASSERT_EQ(b->problems, a->problems, what);
	for (unsigned i = 0; ps_etl_problem(e, i) || ps_etl_problem(s, i); i++)
		ASSERT_STREQ(ps_etl_problem(s, i) ? ps_etl_problem(s, i) : "(none)",
			     ps_etl_problem(e, i) ? ps_etl_problem(e, i) : "(none)", what);
}

/*
 * The same file through ps_etl_scan() with two helper threads (buffers shared out in whatever
 * order the threads take them): statistics and every problem text must read exactly as after
 * the ps_etl_next() walk in e.
 */
static void check_scan(int fd, struct ps_etl *e, const char *what)
{
	uint64_t n[PS_ETL_SCAN_MAX] = { 0 };
	void *args[PS_ETL_SCAN_MAX];
	struct ps_etl *s;
	char err[512];

	for (unsigned i = 0; i < PS_ETL_SCAN_MAX; i++)
		args[i] = &n[i];
	setenv("POOLSCOPE_ETL_THREADS", "2", 1);
	if (!ASSERT_OK(ps_etl_open_fd(&s, fd, "t.etl", 0, err, sizeof(err)), what))
		goto out;
	ASSERT_OK(ps_etl_scan(s, count_event, args, PS_ETL_SCAN_MAX), what);
	ASSERT_EQ(n[0] + n[1] + n[2] + n[3], ps_etl_stats(e)->events, what);
	same_reading(e, s, what);
	ASSERT_EQ(ps_etl_next(s, &(struct ps_etl_event){ 0 }), 0, "nothing after a scan");
	ps_etl_close(s);
out:
	unsetenv("POOLSCOPE_ETL_THREADS");
}

/*
 * The same file in time order with the read-ahead helper (POOLSCOPE_ETL_THREADS=1, on files of
 * any size): the same events in the same order, statistics and every problem text must read
 * exactly as the merge's own reading of the buffers in e (the walk made without it).
 */
static void check_ahead(int fd, struct ps_etl *e, uint64_t hash, const char *what)
{
	struct ps_etl_event ev;
	struct ps_etl *s;
	uint64_t h = 0;
	char err[512];

	setenv("POOLSCOPE_ETL_THREADS", "1", 1);
	if (!ASSERT_OK(ps_etl_open_fd(&s, fd, "t.etl", PS_ETL_ORDERED, err, sizeof(err)), what))
		goto out;
	while (ps_etl_next(s, &ev) > 0)
		h = event_hash(h, &ev);
	ASSERT_EQ(h, hash, what);
	ASSERT_EQ(ps_etl_stats(s)->bytes_read, ps_etl_stats(e)->bytes_read, what);
	same_reading(e, s, what);
	ps_etl_close(s);
out:
	unsetenv("POOLSCOPE_ETL_THREADS");
}

static struct walk walk_fd(int fd, unsigned flags)
{
	struct walk w = { 0 };
	struct ps_etl *e;
	struct ps_etl_event ev;
	uint64_t h = 0;

	setenv("POOLSCOPE_ETL_THREADS", "0", 1);
	w.open_rc = ps_etl_open_fd(&e, fd, "t.etl", flags, w.err, sizeof(w.err));
	unsetenv("POOLSCOPE_ETL_THREADS");
	if (w.open_rc < 0)
		return w;
	while (ps_etl_next(e, &ev) > 0)
		h = event_hash(h, &ev);
	w.events = ps_etl_stats(e)->events;
	w.problems = ps_etl_stats(e)->problems;
	if (ps_etl_problem(e, 0))
		ps_strlcpy(w.problem0, ps_etl_problem(e, 0), sizeof(w.problem0));
	if (!(flags & PS_ETL_ORDERED))
		check_scan(fd, e, "scan reads as the walk");
	else
		check_ahead(fd, e, h, "read-ahead reads as the merge alone");
	ps_etl_close(e);
	return w;
}

/*
 * Prefixes from the whole file down to 0 bytes, every `step` bytes, plus every byte within 96 of
 * each buffer boundary and of the first 1 KiB (the header event). Events never increase as the
 * file shrinks; a failed open names the offset; a walk never crashes.
 */
static void truncations(const char *rel, size_t step)
{
	size_t n;
	uint8_t *b;
	int fd;

	if (!corpus_have(rel))
		return;
	b = test_slurp(corpus_path(rel), &n);
	if (!ASSERT_NOT_NULL(b, rel))
		return;
	fd = memfd_with(b, n);
	if (!ASSERT_TRUE(fd >= 0, "memfd")) {
		free(b);
		return;
	}
	uint32_t bs = ps_rd32(b);
	uint64_t last[2] = { UINT64_MAX, UINT64_MAX };
	for (size_t len = n + 1; len-- > 0;) {
		size_t rel_off = bs ? len % bs : 0;
		bool dense = len < 1024 || rel_off < 96 || bs - rel_off < 96 || len > n - 96;
		if (!dense && len % step)
			continue;
		if (ftruncate(fd, (off_t)len) < 0)
			break;
		for (unsigned flags = 0; flags <= PS_ETL_ORDERED; flags++) {
			struct walk w = walk_fd(fd, flags);
			char what[128];
			snprintf(what, sizeof(what), "%s prefix %zu flags %u", rel, len, flags);
			if (w.open_rc < 0) {
				if (!ASSERT_STRSTR(w.err, "offset 0x", what))
					goto out;
				w.events = 0;
			}
			if (!ASSERT_TRUE(w.events <= last[flags], what))
				goto out;
			if (w.problems && !ASSERT_STRSTR(w.problem0, "offset 0x", what))
				goto out;
			last[flags] = w.events;
		}
	}
out:
	close(fd);
	free(b);
}

/* Small files: every prefix. */
TEST(truncations_lxcore_every_prefix) { truncations("etl/lxcore_kernel.etl", 1); }
TEST(truncations_selfdescribing_compressed_every_prefix)
{
	truncations("etl/SelfDescribingSingleEvent.etl", 1);
}
TEST(truncations_primitive_types_every_prefix) { truncations("etl/primitive-types.etl", 1); }
TEST(truncations_first_buffer_every_prefix)
{
	truncations("etl/FIRST_BUFFER_BootPerfDiagLogger_0x2a8.bin", 1);
}
/* 128 KiB files: every 7th prefix plus every byte near buffer boundaries and the header. */
TEST(truncations_hw3d_step7) { truncations("etl/hw3d_trace.etl", 7); }
TEST(truncations_clrrundown_step7) { truncations("etl/PerfViewData.clrRundown.etl", 7); }

static struct walk walk_patched(const uint8_t *b, size_t n, unsigned flags)
{
	int fd = memfd_with(b, n);
	struct walk w = walk_fd(fd, flags);
	close(fd);
	return w;
}

TEST(wrong_magic)
{
	uint8_t b[4096];

	memset(b, 'x', sizeof(b));
	struct walk w = walk_patched(b, sizeof(b), 0);
	ASSERT_EQ(w.open_rc, -PS_ERR__CORRUPT, "open");
	ASSERT_STRSTR(w.err, "t.etl: offset 0x", "message names file and offset");
	w = walk_patched(b, 10, 0);
	ASSERT_STRSTR(w.err, "too short", "tiny file");
	w = walk_patched(b, 0, 0);
	ASSERT_STRSTR(w.err, "too short", "empty file");
}

/* lxcore_kernel.etl: 3 x 8 KiB buffers, events in buffers 0 and 1/2. */
TEST(absurd_sizes_and_offsets_keep_the_sound_part)
{
	size_t n;
	uint8_t *b, *c;

	if (!corpus_have("etl/lxcore_kernel.etl"))
		return;
	b = test_slurp(corpus_path("etl/lxcore_kernel.etl"), &n);
	if (!ASSERT_NOT_NULL(b, "read"))
		return;
	c = malloc(n);
	struct walk full = walk_patched(b, n, 0);
	ASSERT_EQ(full.events, 4, "events");

	/* buffer 1 claims 4 GiB: the walk stops there with the offset, buffer 0 is kept */
	memcpy(c, b, n);
	put32(c + 0x2000, 0xffffffff);
	struct walk w = walk_patched(c, n, 0);
	ASSERT_EQ(w.open_rc, 0, "open");
	ASSERT_TRUE(w.events >= 1 && w.events < 4, "buffer 0 kept");
	ASSERT_STRSTR(w.problem0, "offset 0x2000: buffer 1: BufferSize 4294967295 is impossible",
		      "message");

	/* SavedOffset outside the buffer: that buffer is skipped, the next one read */
	for (unsigned flags = 0; flags <= PS_ETL_ORDERED; flags++) {
		memcpy(c, b, n);
		put32(c + 0x2000 + 4, 0x100000);
		w = walk_patched(c, n, flags);
		ASSERT_STRSTR(w.problem0, "offset 0x2000: buffer 1: SavedOffset 0x100000 outside",
			      "message");
		ASSERT_EQ(w.problems, 1, "one problem");
	}

	/* the header buffer's SavedOffset outside: not an ETL file, offset 0 */
	memcpy(c, b, n);
	put32(c + 4, 0x100000);
	w = walk_patched(c, n, 0);
	ASSERT_EQ(w.open_rc, -PS_ERR__CORRUPT, "header");
	ASSERT_STRSTR(w.err, "offset 0x0: not an ETL file", "header message");

	/* an event whose size overruns its buffer: the rest of that buffer is skipped */
	memcpy(c, b, n);
	uint32_t saved1 = ps_rd32(c + 0x2000 + 4);
	if (ASSERT_TRUE(saved1 > 0x48 + 16, "buffer 1 has events")) {
		put16(c + 0x2000 + 0x48, 0xfff0);	/* EVENT_HEADER size @0 */
		w = walk_patched(c, n, 0);
		ASSERT_STRSTR(w.problem0, "offset 0x2048: buffer 1, event at +0x48", "message");
		ASSERT_EQ(w.problems, 1, "one problem");
	}
	free(c);
	free(b);
}

TEST(garbage_in_a_compressed_buffer)
{
	size_t n;
	uint8_t *b;

	if (!corpus_have("etl/SelfDescribingSingleEvent.etl"))
		return;
	b = test_slurp(corpus_path("etl/SelfDescribingSingleEvent.etl"), &n);
	if (!ASSERT_NOT_NULL(b, "read"))
		return;
	struct walk full = walk_patched(b, n, 0);
	uint32_t off1 = ps_rd32(b);		/* buffer 1 follows the header buffer */
	uint32_t size1 = ps_rd32(b + off1);
	if (!ASSERT_TRUE(ps_rd16(b + off1 + 0x34) & 0x40, "buffer 1 compressed"))
		goto out;
	uint32_t x = 7;
	for (uint32_t i = 0x48; i < size1; i++) {
		x = x * 1103515245 + 12345;
		b[off1 + i] = (uint8_t)(x >> 24);
	}
	for (unsigned flags = 0; flags <= PS_ETL_ORDERED; flags++) {
		struct walk w = walk_patched(b, n, flags);
		ASSERT_EQ(w.open_rc, 0, "open");
		ASSERT_TRUE(w.problems >= 1, "problem reported");
		ASSERT_STRSTR(w.problem0, "buffer 1", "names the buffer");
		ASSERT_STRSTR(w.problem0, "offset 0x", "names the offset");
		ASSERT_TRUE(w.events < full.events && w.events > 0, "other buffers kept");
	}
out:
	free(b);
}

/* The converter over every 5th prefix of a compressed synthetic pool file: never a crash,
 * allocations never increase as the file shrinks. */
TEST(convert_truncated_compressed_pool_file)
{
	char path[1024], db[1024], err[600];
	uint8_t d[64];
	size_t n;

	snprintf(path, sizeof(path), "%s/p.etl", ps_test_tmpdir());
	struct etlw *w = etlw_open(path, 8, 2, 512, true, 1000, 10000000, 132404548206236167LL);
	if (!ASSERT_NOT_NULL(w, "writer"))
		return;
	for (int i = 0; i < 200; i++) {
		uint32_t l = ew_pool(d, 8, 0, "Tst1", 64 + i, 0xffffa00000000000ULL + 64 * (i / 2), -1);
		etlw_event(w, i & 1, true, 0x0e, (i & 1) ? 0x22 : 0x20, 2, 0, 0, 1000 + 100000 * i,
			   d, l);
	}
	etlw_close(w);
	uint8_t *b = test_slurp(path, &n);
	if (!ASSERT_NOT_NULL(b, "the written file"))
		return;
	uint64_t last = UINT64_MAX;
	for (size_t len = n + 1; len-- > 0;) {
		if (len % 5 && len != n)
			continue;
		FILE *f = fopen(path, "wb");
		fwrite(b, 1, len, f);
		fclose(f);
		snprintf(db, sizeof(db), "%s/p.db", ps_test_tmpdir());
		struct ps_trace *t;
		if (!ASSERT_OK(ps_trace_create(&t, db, PS_TRACE_F_FORCE), "create"))
			break;
		struct ps_convert_opts o = { .interval_ns = 1000000000ULL };
		struct ps_convert_result res;
		int r = ps_convert_etl(t, path, &o, &res, err, sizeof(err));
		ps_trace_close(t);
		char what[64];
		snprintf(what, sizeof(what), "prefix %zu", len);
		if (r < 0) {
			if (!ASSERT_STRSTR(err, "offset 0x", what))
				break;
			res.pool_allocs = 0;
		} else if (len == n) {
			ASSERT_EQ(res.pool_allocs, 100, "full file allocs");
			ASSERT_EQ(res.pool_frees, 100, "full file frees");
			ASSERT_EQ(res.problems, 0, "full file problems");
		}
		if (!ASSERT_TRUE(res.pool_allocs <= last, what))
			break;
		last = res.pool_allocs;
	}
	free(b);
}

/*
 * A damaged header's start time or a damaged timestamp made the nanosecond arithmetic overflow
 * (found by fuzzing the converter): the results are the ends of int64, not wrapped values, and
 * the SAN build would abort on the overflow itself.
 */
TEST(extreme_times_clamp)
{
	struct ps_etl_logfile h = { .clock_type = 2, .t0 = INT64_MIN, .start_time = INT64_MIN };

	ASSERT_EQ(ps_etl_rel_ns(&h, INT64_MAX), INT64_MAX, "filetime clock, far future");
	ASSERT_EQ(ps_etl_wall_ns(&h, INT64_MIN), INT64_MIN, "start before 1601");
	h.clock_type = 1;
	h.perf_freq = 1;
	ASSERT_EQ(ps_etl_rel_ns(&h, INT64_MAX), INT64_MAX, "1 Hz counter");
	h.ns_per_tick = 1000000000;	/* the multiply taken for whole ratios clamps alike */
	ASSERT_EQ(ps_etl_rel_ns(&h, INT64_MAX), INT64_MAX, "1 Hz counter, multiplied");
	h.t0 = INT64_MAX;
	ASSERT_EQ(ps_etl_rel_ns(&h, INT64_MIN), INT64_MIN, "before t0");
	h.ns_per_tick = 0;
	h.clock_type = 3;
	h.cpu_mhz = 1;
	ASSERT_EQ(ps_etl_rel_ns(&h, INT64_MIN), INT64_MIN, "cycle clock");
	h.start_time = INT64_MAX;
	h.t0 = 0;
	ASSERT_EQ(ps_etl_wall_ns(&h, 0), INT64_MAX, "start after 2262");
	/* in range: unchanged (1 s after t0 on the 100 ns clock, start at the Unix epoch) */
	h = (struct ps_etl_logfile){ .clock_type = 2, .t0 = 1000,
				     .start_time = 116444736000000000LL };
	ASSERT_EQ(ps_etl_rel_ns(&h, 1000 + 10000000), 1000000000, "1 s");
	ASSERT_EQ(ps_etl_wall_ns(&h, 1000 + 10000000), 1000000000, "1 s after the epoch");
}

/*
 * A WPP message (MESSAGE_TRACE_HEADER, byte 3 0x90) with a sequence number, the message GUID,
 * a timestamp and thread/process ids, then one without its GUID (a component id): the first
 * reads with its GUID and message number, which etl info groups kinds by; the second has no
 * GUID (NULL, not zeros), and both keep their timestamps and ids.
 */
TEST(wpp_message_guid)
{
	static const uint8_t guid[16] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
					  0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xf0, 0x01 };
	char path[512], err[256];
	uint8_t m[64] = { 0 }, c[48] = { 0 };
	struct ps_etl_event ev;
	struct ps_etl *e;
	struct etlw *w;
	int n = 0;

	snprintf(path, sizeof(path), "%s/wpp.etl", ps_test_tmpdir());
	w = etlw_open(path, 8, 1, 512, false, 1000, 10000000, 132404548206236167LL);
	if (!ASSERT_NOT_NULL(w, "open writer"))
		return;
	/* size, reserved, flags 0x90; message 7; options seq|guid|timestamp|ids */
	put16(m, 52); m[3] = 0x90; put16(m + 4, 7); put16(m + 6, 0x01 | 0x02 | 0x08 | 0x20);
	put32(m + 8, 1);
	memcpy(m + 12, guid, 16);
	put64(m + 28, 5000);
	put32(m + 36, 44); put32(m + 40, 4);
	put32(m + 44, 0xabcd); put32(m + 48, 0);
	etlw_raw(w, 0, m, 52);
	/* component id instead of the GUID */
	put16(c, 32); c[3] = 0x90; put16(c + 4, 9); put16(c + 6, 0x04 | 0x08 | 0x20);
	put32(c + 8, 3);
	put64(c + 12, 6000);
	put32(c + 20, 45); put32(c + 24, 4);
	etlw_raw(w, 0, c, 32);
	if (!ASSERT_OK(etlw_close(w), "close writer"))
		return;
	if (!ASSERT_OK(ps_etl_open(&e, path, 0, err, sizeof(err)), err))
		return;
	while (ps_etl_next(e, &ev) > 0) {
		if (ev.htype != PS_ETL_HT_MESSAGE)	/* the logfile header event */
			continue;
		if (n == 0) {
			ASSERT_TRUE(ev.guid && !memcmp(ev.guid, guid, 16), "the message GUID");
			ASSERT_EQ(ev.id, 7, "message number");
			ASSERT_EQ(ev.ts, 5000, "timestamp");
			ASSERT_EQ(ev.tid, 44, "thread");
			ASSERT_EQ(ev.payload_len, 8, "the arguments after the header");
		} else {
			ASSERT_TRUE(ev.guid == NULL, "a component id is no GUID");
			ASSERT_EQ(ev.id, 9, "message number");
			ASSERT_EQ(ev.ts, 6000, "timestamp");
			ASSERT_EQ(ev.tid, 45, "thread");
		}
		n++;
	}
	ASSERT_EQ(n, 2, "two messages");
	ASSERT_EQ(ps_etl_stats(e)->problems, 0, ps_etl_problem(e, 0) ? ps_etl_problem(e, 0) : "");
	ps_etl_close(e);
}
