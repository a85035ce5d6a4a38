// SPDX-License-Identifier: GPL-2.0
/*
 * The trace schema (docs/trace-format.md explains every table) and the open-time checks.
 *
 * A trace is an SQLite database with application_id "PSCP" and user_version = schema version:
 * both are in the 100-byte file header, so `file` and sqlite3 see them, and a foreign SQLite file
 * is refused before any table is read. 64-bit unsigned values (kernel addresses, hashes) are
 * stored as the signed INTEGER with the same bits.
 */
#include "userspace/lib/trace/schema.h"
#include "userspace/lib/trace/trace.h"
#include "userspace/lib/util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char ps_trace_schema_sql[] =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);\n"
	"CREATE TABLE tags(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT, cache TEXT,\n"
	"  cache_alias TEXT, site INTEGER NOT NULL DEFAULT 0, site_sym TEXT, site_module TEXT,\n"
	"  pool TEXT, ctx TEXT, comm TEXT, owner TEXT, flags INTEGER NOT NULL DEFAULT 0, domain TEXT);\n"
	"CREATE TABLE intervals(idx INTEGER PRIMARY KEY, t_ns INTEGER NOT NULL,\n"
	"  wall_ns INTEGER NOT NULL, dur_ns INTEGER NOT NULL);\n"
	"CREATE TABLE samples(tag INTEGER NOT NULL, interval INTEGER NOT NULL,\n"
	"  allocs INTEGER NOT NULL, frees INTEGER NOT NULL, alloc_bytes INTEGER NOT NULL,\n"
	"  free_bytes INTEGER NOT NULL, live_objs INTEGER NOT NULL, live_bytes INTEGER NOT NULL,\n"
	"  PRIMARY KEY(tag, interval)) WITHOUT ROWID;\n"
	"CREATE TABLE sysstat(name TEXT NOT NULL, interval INTEGER NOT NULL, value INTEGER NOT NULL,\n"
	"  PRIMARY KEY(name, interval)) WITHOUT ROWID;\n"
	"CREATE TABLE counters(name TEXT NOT NULL, interval INTEGER NOT NULL, value INTEGER NOT NULL,\n"
	"  PRIMARY KEY(name, interval)) WITHOUT ROWID;\n"
	"CREATE TABLE slabinfo(cache TEXT NOT NULL, interval INTEGER NOT NULL,\n"
	"  active_objs INTEGER NOT NULL, num_objs INTEGER NOT NULL, objsize INTEGER NOT NULL,\n"
	"  objperslab INTEGER NOT NULL, pagesperslab INTEGER NOT NULL,\n"
	"  PRIMARY KEY(cache, interval)) WITHOUT ROWID;\n"
	"CREATE TABLE workload(interval INTEGER PRIMARY KEY, ios INTEGER NOT NULL,\n"
	"  bytes INTEGER NOT NULL, errors INTEGER NOT NULL, lat_p50_ns INTEGER NOT NULL,\n"
	"  lat_p99_ns INTEGER NOT NULL, lat_max_ns INTEGER NOT NULL, inflight INTEGER NOT NULL);\n"
	"CREATE TABLE stacks(id INTEGER PRIMARY KEY, tag INTEGER NOT NULL, hash INTEGER NOT NULL,\n"
	"  allocs INTEGER NOT NULL, bytes INTEGER NOT NULL, live_bytes INTEGER NOT NULL,\n"
	"  comm TEXT, ctx TEXT, nframes INTEGER NOT NULL, UNIQUE(tag, hash));\n"
	"CREATE TABLE frames(stack INTEGER NOT NULL, depth INTEGER NOT NULL, addr INTEGER NOT NULL,\n"
	"  sym TEXT, off INTEGER NOT NULL, module TEXT, PRIMARY KEY(stack, depth)) WITHOUT ROWID;\n"
	"CREATE TABLE srclines(module TEXT NOT NULL, sym TEXT NOT NULL, off INTEGER NOT NULL,\n"
	"  file TEXT NOT NULL, line INTEGER NOT NULL, func TEXT, caller TEXT, call_file TEXT,\n"
	"  call_line INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(module, sym, off)) WITHOUT ROWID;\n"
	/*
	 * Views for reading by hand (docs/trace-format.md, "Views"): rows of samples, counters and
	 * slabinfo are written only when they change, so a query of one interval must take each
	 * series' last row at or before it. Nothing reads them but people: a trace written before
	 * them reads the same.
	 */
	"CREATE VIEW tag_labels AS SELECT id, CASE WHEN site_sym IS NOT NULL AND kind IN\n"
	"  ('slab', 'kmalloc', 'page', 'percpu') THEN coalesce(name, cache, '?') || '@' || site_sym\n"
	"  ELSE coalesce(name, cache, '?') END AS label, kind, ctx, comm, domain, flags FROM tags;\n"
	"CREATE VIEW tag_live AS SELECT i.idx AS interval, i.t_ns AS t_ns, t.id AS tag,\n"
	"  (SELECT s.live_bytes FROM samples s WHERE s.tag = t.id AND s.interval <= i.idx\n"
	"   ORDER BY s.interval DESC LIMIT 1) AS live_bytes,\n"
	"  (SELECT s.live_objs FROM samples s WHERE s.tag = t.id AND s.interval <= i.idx\n"
	"   ORDER BY s.interval DESC LIMIT 1) AS live_objs\n"
	"  FROM intervals i, tags t;\n"
	"CREATE VIEW counter_values AS SELECT n.name AS name, i.idx AS interval, i.t_ns AS t_ns,\n"
	"  (SELECT c.value FROM counters c WHERE c.name = n.name AND c.interval <= i.idx\n"
	"   ORDER BY c.interval DESC LIMIT 1) AS value\n"
	"  FROM (SELECT DISTINCT name FROM counters) n, intervals i;\n"
	"CREATE VIEW slab_objects AS SELECT n.cache AS cache, i.idx AS interval, i.t_ns AS t_ns,\n"
	"  (SELECT s.active_objs FROM slabinfo s WHERE s.cache = n.cache AND s.interval <= i.idx\n"
	"   ORDER BY s.interval DESC LIMIT 1) AS active_objs,\n"
	"  (SELECT s.active_objs * s.objsize FROM slabinfo s WHERE s.cache = n.cache\n"
	"   AND s.interval <= i.idx ORDER BY s.interval DESC LIMIT 1) AS active_bytes\n"
	"  FROM (SELECT DISTINCT cache FROM slabinfo) n, intervals i;\n";

int ps_trace_sqlite_err(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
	case SQLITE_SCHEMA:
	case SQLITE_MISMATCH:
	case SQLITE_ERROR:
		return -PS_ERR__CORRUPT;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_PERM:
	case SQLITE_READONLY:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	default:
		return -EIO;
	}
}

static int pragma_int(sqlite3 *db, const char *sql, long long *out)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

/* Reads the file header ourselves: SQLite would call a text file "not a database" only later. */
static int check_header(const char *path, char *err, size_t errlen)
{
	unsigned char hdr[100];
	ssize_t n;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return e;
	}
	n = read(fd, hdr, sizeof(hdr));
	e = errno;
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "%s: read: %s", path, strerror(e));
		return -e;
	}
	if (n < 16 || memcmp(hdr, "SQLite format 3", 16)) {
		snprintf(err, errlen, "%s: not a poolscope trace (offset 0: expected the SQLite header "
			 "\"SQLite format 3\")", path);
		return -PS_ERR__FOREIGN;
	}
	if (n < 100) {
		snprintf(err, errlen, "%s: truncated at offset %zd: the SQLite header is 100 bytes",
			 path, n);
		return -PS_ERR__CORRUPT;
	}
	return 0;
}

int ps_trace_db_open(sqlite3 **out, const char *path, int rw, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	long long app = 0, ver = 0;
	int rc, e;

	e = check_header(path, err, errlen);
	if (e)
		return e;
	/* one connection, one thread: no mutex around every sqlite3_column_*() call */
	rc = sqlite3_open_v2(path, &db, (rw ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) |
			     SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		e = ps_trace_sqlite_err(rc);
		goto out_close;
	}
	sqlite3_busy_timeout(db, 5000);
	rc = pragma_int(db, "PRAGMA application_id", &app);
	if (rc == SQLITE_OK && app != PS_TRACE_APP_ID) {
		snprintf(err, errlen, "%s: not a poolscope trace (application_id 0x%llx, expected 0x%x)",
			 path, (unsigned long long)app, PS_TRACE_APP_ID);
		e = -PS_ERR__FOREIGN;
		goto out_close;
	}
	if (rc == SQLITE_OK)
		rc = pragma_int(db, "PRAGMA user_version", &ver);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
		e = ps_trace_sqlite_err(rc);
		goto out_close;
	}
	if (ver != PS_TRACE_SCHEMA_VERSION) {
		snprintf(err, errlen, "%s: trace format version %lld, this poolscope reads version %d",
			 path, ver, PS_TRACE_SCHEMA_VERSION);
		e = -PS_ERR__VERSION;
		goto out_close;
	}
	/* A damaged file fails here rather than halfway through a report. */
	rc = sqlite3_exec(db, "SELECT count(*) FROM meta; SELECT count(*) FROM tags;", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: corrupt trace: %s", path, sqlite3_errmsg(db));
		e = ps_trace_sqlite_err(rc);
		goto out_close;
	}
	*out = db;
	return 0;

out_close:
	sqlite3_close(db);
	return e;
}

bool ps_trace_db_unborn(const char *path)
{
	long long app = -1, ntab = -1;
	sqlite3 *db = NULL;
	bool r = false;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) ==
	    SQLITE_OK) {
		sqlite3_busy_timeout(db, 1000);
		r = pragma_int(db, "PRAGMA application_id", &app) == SQLITE_OK && app == 0 &&
		    pragma_int(db, "SELECT count(*) FROM sqlite_master", &ntab) == SQLITE_OK &&
		    ntab == 0;
	}
	sqlite3_close(db);
	return r;
}
