// SPDX-License-Identifier: GPL-2.0
/*
 * The pool tags whose driver decides the seed's question, for users without pooltag.txt: the
 * SMB server (srv.sys, srv2.sys, its transport srvnet.sys, smbdirect.sys), the network stack's
 * best-known prefixes (tcpip.sys, afd.sys), NTFS, the filter manager and the cache and memory
 * managers. Written for this project from Microsoft's public documentation of pool tags; it is
 * not a copy of pooltag.txt, which the project does not ship. Matching is pooltag.txt's:
 * exact tags first, then patterns in this order ('?' one character, '*' the rest).
 */
#include <string.h>

#include "userspace/lib/etw/pooltag.h"

static const struct { const char tag[5]; const char *owner; } builtin[] = {
	/* srvnet.sys: the SMB server's transport (buffers, lookaside lists by size) */
	{ "LSbf", "srvnet.sys" }, { "LSrp", "srvnet.sys" }, { "SAad", "srvnet.sys" },
	{ "LS00", "srvnet.sys" }, { "LS01", "srvnet.sys" }, { "LS02", "srvnet.sys" },
	{ "LS03", "srvnet.sys" }, { "LS04", "srvnet.sys" }, { "LS05", "srvnet.sys" },
	{ "LS06", "srvnet.sys" }, { "LS07", "srvnet.sys" }, { "LS08", "srvnet.sys" },
	{ "LS09", "srvnet.sys" }, { "LS10", "srvnet.sys" }, { "LS11", "srvnet.sys" },
	{ "LS12", "srvnet.sys" }, { "LS13", "srvnet.sys" }, { "LS14", "srvnet.sys" },
	{ "LS15", "srvnet.sys" }, { "LS16", "srvnet.sys" }, { "LS17", "srvnet.sys" },
	{ "LS18", "srvnet.sys" }, { "LS19", "srvnet.sys" }, { "LS20", "srvnet.sys" },
	/* srv2.sys: SMB 2 and 3 */
	{ "LSfR", "srv2.sys" }, { "LShs", "srv2.sys" }, { "LSlb", "srv2.sys" },
	{ "LSnn", "srv2.sys" }, { "LSRp", "srv2.sys" }, { "LSSL", "srv2.sys" },
	{ "LS$S", "srv2.sys" }, { "LS2?", "srv2.sys" },
	/* srv.sys: SMB 1, the rest of the LS tags */
	{ "LS??", "srv.sys" },
	/* smbdirect.sys: SMB over RDMA */
	{ "SD  ", "smbdirect.sys" }, { "SD? ", "smbdirect.sys" },
	/* the network stack */
	{ "Tcp?", "tcpip.sys" }, { "Afd?", "afd.sys" },
	/* file systems and the managers that serve file IO */
	{ "NtF?", "ntfs.sys" }, { "Ntf?", "ntfs.sys" }, { "FM??", "fltmgr.sys" },
	{ "Cc??", "nt!cc" }, { "Mm??", "nt!mm" },
};

const char *ps_pooltag_builtin(const char tag[4])
{
	size_t n = sizeof(builtin) / sizeof(builtin[0]);

	for (size_t i = 0; i < n; i++)
		if (!memcmp(builtin[i].tag, tag, 4))
			return builtin[i].owner;
	for (size_t i = 0; i < n; i++)
		if (strpbrk(builtin[i].tag, "?*") && ps_pooltag_match(builtin[i].tag, tag))
			return builtin[i].owner;
	return NULL;
}

const char *ps_pool_owner(const struct ps_pooltags *pt, const char tag[4], bool *builtin_owner)
{
	const struct ps_pooltag_ent *e = pt ? ps_pooltag_find(pt, tag) : NULL;

	const char *o;

	*builtin_owner = false;
	if (e && e->binary)
		return e->binary;
	o = ps_pooltag_builtin(tag);
	*builtin_owner = o != NULL;
	return o;
}
