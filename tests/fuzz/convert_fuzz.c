// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness (make fuzz) for `poolscope convert` of an .etl file: the reader in time order
 * and the converter on top (pool events paired by Entry, image loads, stack events and stack
 * keys, intervals written into a trace). Slower per input than etl_fuzz.c (a trace is written
 * each time), so it has its own seeds: the corpus .etl files and tests/fuzz/convert-seeds, small
 * pool traces written by tests/unit/etlwriter.c (64-bit, 32-bit, compressed, with stacks and
 * stack keys). Its first run found the nanosecond overflow on damaged start times. A trace
 * converted without an error must load (fuzz_check_loads()).
 */
#include "userspace/lib/etw/convert.h"
#include "userspace/lib/trace/trace.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char in[128], db[128], err[600];
	struct ps_convert_opts o = { .interval_ns = 1000000000ull };	/* the default */
	struct ps_convert_result res;
	struct ps_trace *t;

	fuzz_file(data, size, in, db);
	if (!ps_trace_create(&t, db, PS_TRACE_F_FORCE | PS_TRACE_F_BATCH)) {
		int rc = ps_convert_etl(t, in, &o, &res, err, sizeof(err));

		if (!ps_trace_close(t) && !rc)
			fuzz_check_loads(db);
	}
	return 0;
}
