// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness (make fuzz) for `poolscope convert` of an .etl file: the reader in time order
 * and the converter on top (pool events paired by Entry, image loads, stack events and stack
 * keys, intervals written into a trace). Slower per input than etl_fuzz.c (a trace is written
 * each time), so it has its own seeds: the corpus .etl files and tests/fuzz/convert-seeds, small
 * pool traces written by tests/unit/etlwriter.c (64-bit, 32-bit, compressed, with stacks and
 * stack keys). Its first run found the nanosecond overflow on damaged start times.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "etw/convert.h"
#include "trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64] = "/tmp/ps-convfuzz.XXXXXX";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char in[128], db[128], err[600];
	struct ps_convert_opts o = { .interval_ns = 1000000000ull };	/* the default */
	struct ps_convert_result res;
	struct ps_trace *t;
	FILE *f;

	if (dir[sizeof("/tmp/ps-convfuzz.") - 1] == 'X' && !mkdtemp(dir))
		abort();
	snprintf(in, sizeof(in), "%s/in.etl", dir);
	snprintf(db, sizeof(db), "%s/t.db", dir);
	f = fopen(in, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	if (!ps_trace_create(&t, db, PS_TRACE_F_FORCE)) {
		ps_convert_etl(t, in, &o, &res, err, sizeof(err));
		ps_trace_close(t);
	}
	return 0;
}
