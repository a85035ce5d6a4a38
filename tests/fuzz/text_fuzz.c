// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness (make fuzz) for the text inputs of `poolscope convert`: poolmon and
 * !poolused snapshots (ps_convert_text() into a trace), poolscope-win sample files and
 * pooltag.txt, each reading the same input from a file, as the command does. Seeded with
 * ../shared/corpus/windows. Its first run found the short-line bug of parse_line() (test
 * poolmon_short_lines).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etw/convert.h"
#include "etw/poolsample-convert.h"
#include "etw/pooltag.h"
#include "trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64] = "/tmp/ps-textfuzz.XXXXXX";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char in[128], db[128], err[600];
	struct ps_convert_opts o = { .interval_ns = 1000000000ull };
	struct ps_convert_result res;
	struct ps_pooltags pt = { 0 };
	struct ps_run *run = NULL;
	struct ps_trace *t;
	FILE *f;

	if (dir[sizeof("/tmp/ps-textfuzz.") - 1] == 'X' && !mkdtemp(dir))
		abort();
	snprintf(in, sizeof(in), "%s/in.txt", dir);
	snprintf(db, sizeof(db), "%s/t.db", dir);
	f = fopen(in, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	if (!ps_trace_create(&t, db, PS_TRACE_F_FORCE)) {
		const char *paths[1] = { in };

		ps_convert_text(t, paths, 1, &o, &res, err, sizeof(err));
		ps_trace_close(t);
	}
	if (!ps_convert_poolsample(in, &run, err, sizeof(err)))
		ps_run_free(run);
	if (!ps_pooltag_load(&pt, in, err, sizeof(err)))
		ps_pooltag_free(&pt);
	ps_convert_detect(in);
	return 0;
}
