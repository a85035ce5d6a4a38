// SPDX-License-Identifier: GPL-2.0
/*
 * bigetl OUT PTR MIB COMPRESS STACKS LIVE: writes a kernel pool .etl of about MIB MiB for the
 * conversion benchmark (tests/bench/bigetl.sh) with the tests' writer (tests/unit/etlwriter.c):
 * PTR 8 (x64) or 4 (x86); COMPRESS 1 for XPRESS buffers; STACKS "none", "walk" (a stack walk of
 * 12 frames after every allocation) or "key" (a stack key reference after every allocation, the
 * keys' frames in a rundown at the end, as a session writes them). Two CPUs, 64 KiB buffers,
 * 1000 pool tags over ntoskrnl and srv2.sys; each allocation is freed LIVE allocations of its
 * tag later (1..4096: LIVE x 1000 allocations in flight), its address then reused by the tag, as
 * a lookaside list does; three tags ("Lk0a", "Lk0b", "Lk0c") never free: the leak a conversion
 * must put first. Deterministic. Prints the number of pool events written.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/etlwriter.c"

#define FREQ	10000000LL
#define T0	5000000000LL
#define FT0	132404548206236167LL
#define NTAGS	1000
#define DEPTH	4096
#define NKEYS	4096

int main(int argc, char **argv)
{
	unsigned p, depth;
	uint64_t limit, nt, srv, events = 0, nleak = 0;
	uint64_t (*live)[DEPTH];
	uint32_t *nlive;
	bool compress, walk, key;
	struct etlw *w;
	uint8_t d[512];
	uint32_t n;
	int64_t ts = T0 + 1000;

	if (argc != 7 || (atoi(argv[2]) != 4 && atoi(argv[2]) != 8) || atol(argv[3]) < 1 ||
	    (strcmp(argv[5], "none") && strcmp(argv[5], "walk") && strcmp(argv[5], "key")) ||
	    atoi(argv[6]) < 1 || atoi(argv[6]) > DEPTH) {
		fprintf(stderr, "usage: bigetl OUT 4|8 MIB 0|1 none|walk|key LIVE(1..%d)\n", DEPTH);
		return 2;
	}
	depth = (unsigned)atoi(argv[6]);
	p = (unsigned)atoi(argv[2]);
	limit = (uint64_t)atol(argv[3]) << 20;
	compress = atoi(argv[4]);
	walk = !strcmp(argv[5], "walk");
	key = !strcmp(argv[5], "key");
	nt = p == 8 ? 0xfffff80000000000ull : 0x82000000ull;
	srv = p == 8 ? 0xfffff88001000000ull : 0x8f000000ull;
	live = calloc(NTAGS, sizeof(*live));
	nlive = calloc(NTAGS, sizeof(*nlive));
	w = etlw_open(argv[1], p, 2, 65536, compress, T0, FREQ, FT0);
	if (!w || !live || !nlive) {
		perror(argv[1]);
		return 1;
	}
	n = ew_image(d, p, nt, 0x800000, "\\SystemRoot\\system32\\ntoskrnl.exe");
	etlw_event(w, 0, true, 0x14, 3, 3, 0, 0, T0 + 100, d, n);
	n = ew_image(d, p, srv, 0x100000, "\\SystemRoot\\System32\\DRIVERS\\srv2.sys");
	etlw_event(w, 0, true, 0x14, 3, 3, 0, 0, T0 + 110, d, n);
	n = ew_process(d, p, 4, "System");
	etlw_event(w, 0, true, 0x03, 3, 4, 0, 0, T0 + 120, d, n);
	for (uint64_t i = 0;; i++) {
		uint32_t c = (uint32_t)(i & 1), t = (uint32_t)((i * 2654435761u) % NTAGS);
		bool leak = t < 3;
		/* a tag's addresses are its LIVE slots; the leaks take new ones from their own region */
		uint64_t entry = leak ? (p == 8 ? 0xffffb00000000000ull : 0xc0000000ull) + nleak++ * 16 :
				 (p == 8 ? 0xffffa00000000000ull : 0x90000000ull) +
				 (((uint64_t)t * DEPTH + nlive[t] % depth) << 4);
		char tag[5];

		if (w->nbuffers * 65536ull >= limit && !compress)
			break;
		if (compress && (i & 0xfff) == 0 && (uint64_t)ftell(w->f) >= limit)
			break;
		if (leak)
			snprintf(tag, sizeof(tag), "Lk0%c", 'a' + t);
		else
			snprintf(tag, sizeof(tag), "T%03u", t);
		ts += 40;
		/* the allocation LIVE back of this tag is freed first, and its address reused */
		if (!leak && nlive[t] >= depth) {
			n = ew_pool(d, p, 512, tag, 0, live[t][nlive[t] % depth], -1);
			etlw_event(w, c, true, 0x0e, 0x22, 2, 0, 0, ts, d, n);
			events++;
		}
		n = ew_pool(d, p, 512, tag, 64 + 16 * (t % 64), entry, -1);
		etlw_event(w, c, true, 0x0e, 0x20, 2, 0, 0, ts, d, n);
		events++;
		if (!leak)
			live[t][nlive[t]++ % depth] = entry;
		if (walk) {
			uint64_t f[12];

			for (int k = 0; k < 12; k++)
				f[k] = (k % 3 ? nt : srv) + 0x1000 + 0x40 * ((t + k) % 509);
			n = ew_stack(d, p, ts, 4, 100 + c, f, 12);
			etlw_event(w, c, true, 0x18, 32, 2, 0, 0, ts + 13, d, n);
		} else if (key) {
			put64(d, (uint64_t)ts);
			put32(d + 8, 4);
			put32(d + 12, 100 + c);
			putptr(d + 16, (p == 8 ? 0xffffc00000000000ull : 0xa0000000ull) +
					       (t % NKEYS) * 32, p);
			etlw_event(w, c, true, 0x18, 37, 2, 0, 0, ts + 13, d, 16 + p);
		}
	}
	if (key) {
		for (uint64_t k = 0; k < NTAGS && k < NKEYS; k++) {
			uint64_t f[12];

			for (int j = 0; j < 12; j++)
				f[j] = (j % 3 ? nt : srv) + 0x1000 + 0x40 * ((k + j) % 509);
			n = ew_key(d, p, (p == 8 ? 0xffffc00000000000ull : 0xa0000000ull) + k * 32, f,
				   12);
			etlw_event(w, 0, true, 0x18, 36, 2, 0, 0, ts + 100, d, n);
		}
	}
	/* the header's end: the last event, a second later (FILETIME and this clock: 100 ns) */
	w->end_ft = FT0 + (ts - T0) + FREQ;
	if (etlw_close(w)) {
		perror(argv[1]);
		return 1;
	}
	printf("%llu\n", (unsigned long long)events);
	return 0;
}
