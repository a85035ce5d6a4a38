/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The converters read paths, so the harnesses that drive them write each input into a file:
 * "in" and a trace "t.db" in a directory made once per process and removed at exit.
 */
#ifndef PS_FUZZ_FILE_H
#define PS_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "userspace/lib/trace/trace.h"

static char fuzz_dir[64];

static void fuzz_cleanup(void)
{
	static const char *const names[] = { "in", "t.db", "t.db-journal", "t.db-wal", "t.db-shm",
					     "t2.db", "t2.db-journal", "t2.db-wal", "t2.db-shm" };
	char p[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", fuzz_dir, names[i]);
		unlink(p);
	}
	rmdir(fuzz_dir);
}

/* Writes data into the input file; its path into in, the trace's into db. Aborts on failure. */
static void fuzz_file(const uint8_t *data, size_t size, char in[128], char db[128])
{
	FILE *f;

	if (!fuzz_dir[0]) {
		snprintf(fuzz_dir, sizeof(fuzz_dir), "/tmp/ps-fuzz.XXXXXX");
		if (!mkdtemp(fuzz_dir))
			abort();
		atexit(fuzz_cleanup);
	}
	snprintf(in, 128, "%s/in", fuzz_dir);
	snprintf(db, 128, "%s/t.db", fuzz_dir);
	f = fopen(in, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
}

/*
 * A trace a converter wrote without an error loads: what the writers let through and what the
 * reader accepts are the same (trace.h, PS_TRACE_*). Aborts with the reader's message if not.
 */
static inline void fuzz_check_loads(const char *db)
{
	struct ps_run *r = NULL;
	char err[600];

	if (ps_run_load(&r, db, err, sizeof(err))) {
		fprintf(stderr, "fuzz: a converted trace does not load: %s\n", err);
		abort();
	}
	ps_run_free(r);
}

#endif
