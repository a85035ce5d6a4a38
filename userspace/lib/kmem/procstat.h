/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ground truth sampled beside the tracked numbers at every interval: /proc/meminfo (in bytes
 * under the meminfo field names) and /proc/slabinfo (one row per cache), read into memory for
 * the recorder to store. The readers take a path so tests can feed files; parse errors name the
 * file and the line.
 */
#ifndef PS_KMEM_PROCSTAT_H
#define PS_KMEM_PROCSTAT_H

#include <stddef.h>
#include <stdint.h>

/* One meminfo field: bytes for a "kB" field, a plain count for one without a unit (HugePages_*). */
struct ps_meminfo_field {
	char name[64];
	int64_t value;
};

/* One slabinfo cache line (version 2.1: the first six columns). */
struct ps_slabinfo_row {
	char cache[128];
	uint64_t active_objs;
	uint64_t num_objs;
	uint32_t objsize;
	uint32_t objperslab;
	uint32_t pagesperslab;
};

/*
 * What a reader fills: n entries of an array it grows as needed and keeps between reads (one
 * allocation for a whole recording); zero-initialise, release with the matching _free().
 */
struct ps_meminfo_tab {
	struct ps_meminfo_field *f;
	size_t n, cap;
};

struct ps_slabinfo_tab {
	struct ps_slabinfo_row *row;
	size_t n, cap;
};

/*
 * Reads meminfo at path into m (replacing what it held). 0, or -errno / -EINVAL with a message
 * in err ("path: ..." or "path:line: ..."); m then holds the fields before the error.
 */
int ps_meminfo_read(struct ps_meminfo_tab *m, const char *path, char *err, size_t errlen);
void ps_meminfo_free(struct ps_meminfo_tab *m);
/*
 * Appends the socket memory of /proc/net/sockstat at path to m, in bytes: "TCP: ... mem N" and
 * "UDP: ... mem N" (pages, times page_size) as PS_SYS_SOCK_TCP_MEM and PS_SYS_SOCK_UDP_MEM, and
 * "FRAG: ... memory N" (bytes) as PS_SYS_SOCK_FRAG_MEM. The memory the network stack charges to
 * sockets: skb data and page frags in send and receive queues, which no meminfo field shows.
 * A line or field that is absent is left out; a malformed one is an error naming the line.
 */
int ps_sockstat_read(struct ps_meminfo_tab *m, const char *path, long page_size, char *err,
		     size_t errlen);
/* Reads slabinfo (version 2.x) at path into s, as ps_meminfo_read() does. */
int ps_slabinfo_read(struct ps_slabinfo_tab *s, const char *path, char *err, size_t errlen);
void ps_slabinfo_free(struct ps_slabinfo_tab *s);
/* Reads one meminfo field in bytes; -ENOENT when absent. */
int ps_meminfo_get(const char *path, const char *field, int64_t *out);

#endif
