// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness (make fuzz) for the text inputs of `poolscope convert`: poolmon and
 * !poolused snapshots (ps_convert_text()) and poolscope-win sample files
 * (ps_convert_poolsample()), each into a trace, and pooltag.txt, each reading the same input
 * from a file, as the command does. Seeded with tests/corpus/windows and tests/fuzz/text-seeds.
 * Its first run found the short-line bug of parse_line() (test poolmon_short_lines) and the
 * crash on a sample line of spaces (space_lines).
 * A trace converted without an error must load (fuzz_check_loads()).
 */
#include "userspace/lib/etw/convert.h"
#include "userspace/lib/etw/pooltag.h"
#include "userspace/lib/trace/trace.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char in[128], db[128], err[600];
	struct ps_convert_opts o = { .interval_ns = 1000000000ull };
	struct ps_convert_result res;
	struct ps_pooltags pt = { 0 };
	struct ps_trace *t;

	fuzz_file(data, size, in, db);
	if (!ps_trace_create(&t, db, PS_TRACE_F_FORCE | PS_TRACE_F_BATCH)) {
		const char *paths[1] = { in };

		int rc = ps_convert_text(t, paths, 1, &o, &res, err, sizeof(err));

		if (!ps_trace_close(t) && !rc)
			fuzz_check_loads(db);
	}
	if (!ps_trace_create(&t, db, PS_TRACE_F_FORCE | PS_TRACE_F_BATCH)) {
		int rc = ps_convert_poolsample(t, in, &o, &res, err, sizeof(err));

		if (!ps_trace_close(t) && !rc)
			fuzz_check_loads(db);
	}
	if (!ps_pooltag_load(&pt, in, err, sizeof(err)))
		ps_pooltag_free(&pt);
	ps_convert_detect(in);
	return 0;
}
