// SPDX-License-Identifier: GPL-2.0
/*
 * Runs the sample writer as poolscope-win's "sample" does, on the Windows C runtime (under
 * Wine in make test, tests/live/wine.sh): three runs on one file, opened for append in binary
 * mode with _wfopen. The first writes the header and a snapshot; the second is killed in the
 * middle of a snapshot (its last line cut, no end marker); the third starts again. Whether
 * that runtime positions, reads back and appends as the writer expects (the header is not
 * written twice, the restart starts a fresh line) is what `poolscope convert` of the file then
 * shows. Usage: sample_restart FILE (a path the process can write, UTF-8).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>

#include "userspace/lib/etw/poolsample.h"
#include "userspace/win/wide.h"

#define LSBF 0x6662534c	/* "LSbf" */

static FILE *open_append(const char *path)
{
	wchar_t *w = ps_win_wide(path);
	FILE *f = w ? _wfopen(w, L"a+b") : NULL;

	free(w);
	return f;
}

static int run(const char *path, int n, uint64_t wall, uint64_t allocs, bool killed)
{
	const char *meta[] = { "host", "wine", "os", "windows", "interval_ns", "1000000000",
			       "source", "poolscope-win-sample", NULL };
	FILE *f = open_append(path);
	int e;

	if (!f) {
		fprintf(stderr, "sample_restart: run %d: cannot open %s\n", n, path);
		return 1;
	}
	e = ps_poolsample_open(f, meta, wall);
	if (!e)
		e = ps_poolsample_begin(f, 0, wall, 1 << 20, 2 << 20, 1u << 30);
	if (!e && !killed)
		e = ps_poolsample_tag(f, LSBF, false, allocs, 3, (allocs - 3) * 1024);
	if (!e && !killed)
		e = ps_poolsample_end(f, 0);
	if (!e && killed)	/* a tag line cut by the kill: no newline, no end marker */
		e = fputs("T 6662534c nonpaged 4", f) < 0 ? -EIO : 0;
	if (fclose(f) || e) {
		fprintf(stderr, "sample_restart: run %d: write failed (%d)\n", n, e);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const uint64_t t0 = 1764700000000000000ull, s = 1000000000ull;

	if (argc != 2) {
		fprintf(stderr, "usage: sample_restart FILE\n");
		return 2;
	}
	if (run(argv[1], 1, t0, 10, false) || run(argv[1], 2, t0 + s, 15, true) ||
	    run(argv[1], 3, t0 + 2 * s, 20, false))
		return 1;
	return 0;
}
