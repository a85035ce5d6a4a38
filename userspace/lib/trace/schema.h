/* SPDX-License-Identifier: GPL-2.0 */
/* Internal to userspace/lib/trace: the SQL schema and the checks that a file is one of ours. */
#ifndef PS_TRACE_SCHEMA_H
#define PS_TRACE_SCHEMA_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

extern const char ps_trace_schema_sql[];

/*
 * Opens path (read-only or read-write) and checks that it is a poolscope trace of a version we
 * read. Returns 0 and *db, or a negative code with a message naming the file in err.
 */
int ps_trace_db_open(sqlite3 **db, const char *path, int rw, char *err, size_t errlen);
/*
 * An SQLite file with no tables and no application_id: a trace whose writer has not yet
 * committed its schema (ps_trace_create() writes both in one transaction), which a follower
 * waits for rather than calling foreign.
 */
bool ps_trace_db_unborn(const char *path);

/* Maps the result of a failed sqlite call to -PS_ERR__CORRUPT / -ENOMEM / -EIO. */
int ps_trace_sqlite_err(int rc);

#endif
