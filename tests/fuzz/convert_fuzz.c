// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness (make fuzz) for `poolscope convert` of an .etl file: the reader in time order
 * and the converter on top (pool events paired by Entry, image loads, stack events and stack
 * keys, intervals written into a trace). Slower per input than etl_fuzz.c (a trace is written
 * each time), so it has its own seeds: the corpus .etl files and tests/fuzz/convert-seeds, small
 * pool traces written by tests/unit/etlwriter.c (64-bit, 32-bit, compressed, with stacks and
 * stack keys). Its first run found the nanosecond overflow on damaged start times. A trace
 * converted without an error must load (fuzz_check_loads()). Each input is converted twice,
 * with the converter's feed on a helper thread and without (POOLSCOPE_ETL_THREADS): the two
 * results and the two trace files must be the same, byte for byte. `make fuzz` builds it with
 * batches of 72 KiB (PS_FEED_BATCH_BYTES) so that an input holds several.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/lib/etw/convert.h"
#include "userspace/lib/trace/trace.h"
#include "fuzz_file.h"
#include "tests/unit/slurp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int convert(const char *in, const char *db, const char *threads,
		   struct ps_convert_result *res)
{
	struct ps_convert_opts o = { .interval_ns = 1000000000ull };	/* the default */
	struct ps_trace *t;
	char err[600];
	int rc = -1;

	setenv("POOLSCOPE_ETL_THREADS", threads, 1);
	if (!ps_trace_create(&t, db, PS_TRACE_F_FORCE | PS_TRACE_F_BATCH)) {
		rc = ps_convert_etl(t, in, &o, res, err, sizeof(err));
		if (ps_trace_close(t) && !rc)
			rc = -1;
	}
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char in[128], db[128], db2[128];
	struct ps_convert_result r0, r1;
	int rc0, rc1;

	fuzz_file(data, size, in, db);
	snprintf(db2, sizeof(db2), "%.*s2.db", (int)strlen(db) - 3, db);
	rc0 = convert(in, db, "0", &r0);
	rc1 = convert(in, db2, "1", &r1);
	if (rc0 != rc1 || (!rc0 && memcmp(&r0, &r1, sizeof(r0))))
		abort();		/* the helper thread changed the result */
	if (rc0)
		return 0;
	fuzz_check_loads(db);
	size_t n0 = 0, n1 = 0;
	uint8_t *t0 = test_slurp(db, &n0), *t1 = test_slurp(db2, &n1);
	if (!t0 || !t1 || n0 != n1 || memcmp(t0, t1, n0))
		abort();		/* ... or the trace */
	free(t0);
	free(t1);
	return 0;
}
