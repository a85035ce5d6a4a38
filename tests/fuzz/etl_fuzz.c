// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness (make fuzz): the .etl reader in both walk orders, the threaded file-order
 * scan (ps_etl_scan() with one helper) and the XPRESS decoder on the same input. Seeded with the
 * corpus .etl files. The reader reads through a file descriptor, so the input goes into a memfd.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "userspace/lib/etw/etl.h"
#include "userspace/lib/etw/xpress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int scan_event(void *arg, const struct ps_etl_event *ev)
{
	(void)arg;
	return ev->size == 0 ? -1 : 0;		/* never: every event has a header */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[1 << 17];
	char err[256];
	int fd;

	ps_xpress_decompress(data, size, out, sizeof(out), NULL);
	fd = memfd_create("fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		for (unsigned flags = 0; flags <= PS_ETL_ORDERED; flags++) {
			struct ps_etl *e;
			struct ps_etl_event ev;
			if (ps_etl_open_fd(&e, fd, "fuzz", flags, err, sizeof(err)) < 0)
				continue;
			while (ps_etl_next(e, &ev) > 0)
				(void)ps_etl_rel_ns(ps_etl_logfile(e), ev.ts);
			ps_etl_close(e);
		}
		struct ps_etl *e;
		void *args[2] = { NULL, NULL };
		setenv("POOLSCOPE_ETL_THREADS", "1", 1);
		if (ps_etl_open_fd(&e, fd, "fuzz", 0, err, sizeof(err)) == 0) {
			ps_etl_scan(e, scan_event, args, 2);
			ps_etl_close(e);
		}
	}
	close(fd);
	return 0;
}
