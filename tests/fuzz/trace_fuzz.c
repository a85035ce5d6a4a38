// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness (make fuzz) for the trace reader and the analysis on top: the input is not
 * a file but a recipe for one. A few intervals and tags, then rows for every table whose numbers
 * the input picks: small ones, the limits of trace.h and one past them, int64's ends, or (now
 * and then) text, a real number or a blob where an integer goes. The rows are inserted with SQL
 * into a fresh trace, as a hand edit or another tool would, and the trace is loaded; if it loads,
 * the report is built over a window the input picks and printed in every format, as `report`,
 * `report --by path` and `diff` do. Raw SQLite pages would mostly stop at SQLite's own checks;
 * a recipe reaches the reader's rules and the analysis's arithmetic, which UBSan watches.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/verdict.h"
#include "userspace/lib/trace/trace.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct recipe {
	const uint8_t *p, *end;
};

static unsigned byte(struct recipe *in)
{
	return in->p < in->end ? *in->p++ : 0;
}

static uint64_t raw64(struct recipe *in)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | byte(in);
	return v;
}

/* Binds parameter i of s to a value the recipe picks: mostly small, sometimes at an edge. */
static void bind_value(struct recipe *in, sqlite3_stmt *s, int i)
{
	static const int64_t edge[] = {
		0, 1, -1, PS_TRACE_ABSURD, -PS_TRACE_ABSURD, PS_TRACE_ABSURD + 1, PS_TRACE_SUM_MAX,
		PS_TRACE_TIME_MAX, PS_TRACE_TIME_MAX + 1, INT64_MAX, INT64_MIN, UINT32_MAX,
		(int64_t)UINT32_MAX + 1, 4096, 1000000000,
	};
	unsigned sel = byte(in);

	if (sel < 160)
		sqlite3_bind_int64(s, i, (int64_t)(sel << 8 | byte(in)));
	else if (sel < 160 + 2 * (sizeof(edge) / sizeof(edge[0])))
		sqlite3_bind_int64(s, i, edge[(sel - 160) / 2]);
	else if (sel < 210)
		sqlite3_bind_int64(s, i, -(int64_t)byte(in) - 1);
	else if (sel < 240)
		sqlite3_bind_int64(s, i, (int64_t)raw64(in));
	else if (sel < 246)
		sqlite3_bind_text(s, i, "12abc", -1, SQLITE_STATIC);
	else if (sel < 250)
		sqlite3_bind_double(s, i, 2.5);
	else if (sel < 253)
		sqlite3_bind_blob(s, i, "\1\2", 2, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

/* Inserts one row, parameters 1..nkey given, the rest picked; a refused row is left out. */
static void insert(sqlite3 *db, struct recipe *in, const char *sql, const int64_t *key, int nkey)
{
	sqlite3_stmt *s;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		abort();
	for (int i = 1; i <= sqlite3_bind_parameter_count(s); i++) {
		if (i <= nkey)
			sqlite3_bind_int64(s, i, key[i - 1]);
		else
			bind_value(in, s, i);
	}
	sqlite3_step(s);	/* NOT NULL and key constraints may refuse it: so be it */
	sqlite3_finalize(s);
}

static const char *const kinds[] = { PS_KIND_SLAB, PS_KIND_KMALLOC, PS_KIND_PAGE, PS_KIND_POOL };
static const char *const syms[] = { "smb2_read", "tcp_sendmsg", "alloc_skb", NULL };

static void build(sqlite3 *db, struct recipe *in)
{
	unsigned nint = 1 + byte(in) % 10, ntags = 1 + byte(in) % 6, nstacks = byte(in) % 3;
	char sql[256];

	sqlite3_exec(db, byte(in) & 1 ? "INSERT INTO meta VALUES('os', 'windows')" :
		     "INSERT INTO meta VALUES('os', 'linux')", NULL, NULL, NULL);
	for (unsigned k = 0; k < nint; k++) {
		/* mostly a sane clock, so that the rest is reached */
		int64_t key[4] = { k + (byte(in) == 255 ? 1000 : 0), (int64_t)(k + 1) * 1000000000,
				   1700000000000000000ll, 1000000000 };

		insert(db, in, "INSERT INTO intervals VALUES(?1, ?2, ?3, ?4)", key,
		       byte(in) < 224 ? 4 : 1);
	}
	for (unsigned t = 1; t <= ntags; t++) {
		unsigned b = byte(in);

		snprintf(sql, sizeof(sql), "INSERT INTO tags(id, kind, name, cache, site_sym, flags, "
			 "site) VALUES(?1, '%s', 'tag%u', 'cache%u', %s%s%s, ?2, ?3)",
			 kinds[b % 4], t, t % 3, syms[b / 4 % 4] ? "'" : "",
			 syms[b / 4 % 4] ? syms[b / 4 % 4] : "NULL", syms[b / 4 % 4] ? "'" : "");
		insert(db, in, sql, (int64_t[]){ t, b & 0x40 ? 2 : 0 }, byte(in) < 240 ? 2 : 1);
	}
	for (unsigned t = 1; t <= ntags + 1; t++)
		for (unsigned k = 0; k < nint; k++)
			if (byte(in) & 1)
				insert(db, in, "INSERT INTO samples VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7,"
				       " ?8)", (int64_t[]){ t, k }, 2);
	for (unsigned k = 0; k < nint; k++) {
		unsigned b = byte(in);

		if (b & 1)
			insert(db, in, b & 2 ? "INSERT INTO sysstat VALUES('NonPagedPool', ?1, ?2)" :
			       "INSERT INTO sysstat VALUES('SUnreclaim', ?1, ?2)", (int64_t[]){ k }, 1);
		if (b & 4)
			insert(db, in, "INSERT INTO counters VALUES('drops.ptr_map_full', ?1, ?2)",
			       (int64_t[]){ k }, 1);
		if (b & 8)
			insert(db, in, "INSERT INTO slabinfo VALUES('cache1', ?1, ?2, ?3, ?4, 1, 1)",
			       (int64_t[]){ k }, 1);
		if (b & 16)
			insert(db, in, "INSERT INTO workload VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
			       (int64_t[]){ k }, 1);
	}
	for (unsigned i = 1; i <= nstacks; i++) {
		unsigned nf = byte(in) % 4;

		insert(db, in, "INSERT INTO stacks VALUES(?1, ?2, ?3, ?4, ?5, ?6, 'smbd', 'task', ?7)",
		       (int64_t[]){ i, 1 + byte(in) % (ntags + 1) }, 2);
		for (unsigned d = 0; d < nf; d++)
			insert(db, in, "INSERT INTO frames VALUES(?1, ?2, ?3, ?4, ?5, 'srv2.sys')",
			       (int64_t[]){ i, d, (int64_t)0xfffff80000001000ull }, 3);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ps_rules *rs;
	struct recipe in = { data, data + size };
	struct ps_report rep = { 0 };
	struct ps_verdict v;
	struct ps_run *run = NULL;
	struct ps_trace *t;
	char path[128], db_path[128], err[600];
	sqlite3 *db;
	FILE *null;

	if (!rs && ps_rules_load(&rs, "analysis/rules/default.rules", err, sizeof(err))) {
		fprintf(stderr, "trace_fuzz: %s (run from the source tree's top)\n", err);
		abort();
	}
	fuzz_file(data, 0, path, db_path);
	if (ps_trace_create(&t, db_path, PS_TRACE_F_FORCE) || ps_trace_close(t))
		abort();
	if (sqlite3_open(db_path, &db) != SQLITE_OK)
		abort();
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	build(db, &in);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db);
	if (ps_run_load(&run, db_path, err, sizeof(err)))
		return 0;
	null = fopen("/dev/null", "w");
	if (!null)
		abort();
	if (run->nintervals) {
		uint64_t end = run->intervals[run->nintervals - 1].t_ns;
		uint64_t from = byte(&in) & 1 ? end / (1 + byte(&in)) : 0;
		uint64_t to = byte(&in) & 1 ? end / (1 + byte(&in)) : UINT64_MAX;

		/* the verdict over all domains or the kernel's, as report --domain chooses */
		if (!ps_report_build(&rep, run, rs, from, to) &&
		    !ps_verdict_build(&v, &rep, byte(&in) & 1 ? NULL : PS_DOMAIN_KERNEL)) {
			for (int f = PS_FMT_TEXT; f <= PS_FMT_MD; f++)
				ps_report_print(null, &rep, &v, f, byte(&in) & 1 ? 0 : 15);
			for (int f = PS_FMT_TEXT; f <= PS_FMT_JSON; f++)
				ps_report_print_paths(null, &v, f);
		}
		ps_report_free(&rep);
	}
	fclose(null);
	ps_run_free(run);
	return 0;
}
