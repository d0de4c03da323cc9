/* The query entry points the HTTP layer calls. A query is opened (parse,
 * plan, open iterators; every refusal happens here, before any output) and
 * then read as a PULL cursor, which fits libmicrohttpd's content reader:
 *
 *   struct query_cursor *c;
 *   int rc = query_sql_open(store, body, len, &opts, &c, &err);
 *   if (rc) reply_error(rc, err);           // nothing was sent yet
 *   ... MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 KiB, reader, c, free_cb)
 *   reader(cls, pos, buf, max): n = query_cursor_read(c, buf, max);
 *       n > 0 -> return n;  n == 0 -> MHD_CONTENT_READER_END_OF_STREAM;
 *       n < 0 -> MHD_CONTENT_READER_END_WITH_ERROR (the error text was already
 *                written into the stream, see below)
 *
 * Output. format NDJSON: one JSON object per line (rows, {"count":N},
 * the EXPLAIN object, {"ok":true} for CREATE/ALTER/DROP, SHOW rows,
 * {"deleted":N}). format JSON: one document {"results":[...]} per statement,
 * each followed by a newline. Several statements: their outputs are
 * concatenated in order. A statement runs when the cursor reaches it: open
 * runs the statements before the first SELECT (CREATE, ALTER, DROP, SHOW,
 * DELETE and EXPLAIN run whole) and plans and opens that SELECT, whose rows
 * (or count) are then produced by the reads; later statements run when the
 * reads reach them.
 *
 * A list of statements is checked whole before its first statement runs:
 * a missing database (DROP without IF EXISTS, ALTER, DELETE, SELECT), an
 * existing one (CREATE without IF NOT EXISTS) or a refused plan fails the
 * open with nothing applied; databases created or dropped by earlier
 * statements of the list count. Statements are not transactional: what
 * only running tells (a bad name, a store error, a database dropped
 * meanwhile by another request) fails the list where it happens, and the
 * statements before stay applied. In a list every error names its
 * statement ("statement 2 of 3: ...") and says how many were applied:
 * query_cursor_applied after a failed open, ,"applied":N in the error
 * object of a mid-stream error.
 *
 * A mid-stream error (after open returned ERR_OK) is written into the
 * stream as a last line {"error":"..."} (NDJSON) or closes the document as
 * ...],"error":"..."} (JSON), in a list with ,"applied":N before the
 * closing brace; the next read returns the negative ERR_* and
 * query_cursor_error() gives the text.
 *
 * Memory is bounded whatever the result size: the cursor buffers at most
 * one read's worth of output plus one row, and at most one ts group
 * (capped) when reading against the stored order.
 *
 * Threading: a cursor is used by one thread at a time; different cursors
 * may run in parallel. The store must outlive every cursor. */
#ifndef LB_QUERY_H
#define LB_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/buf.h"
#include "store/store.h"

enum query_format { QUERY_NDJSON, QUERY_JSON };

struct query_opts {
    int64_t max_get_rows; /* GET key limit (config max_get_rows; <= 0: 2000) */
    int64_t max_groups;   /* groups of one aggregate query (config max_groups; <= 0: 100000) */
    bool allow_full_scan; /* config: FULL plans allowed without a hint */
    bool full_scan;       /* the request said full_scan=true */
    int64_t now_ns;       /* 0: the wall clock */
    /* a COUNT(*), or a GROUP BY of counts, sums, averages, minima and
     * maxima, over a SCAN or FULL plan is read on two threads when the
     * snapshot holds about this many entries in its ts range (<= 0: 4096) */
    int64_t split_min_rows;
    enum query_format format;
    struct db_opts db_defaults; /* of CREATE DATABASE without buckets=,
                                 * ts_order=, ttl= (and InfluxQL's) */
    /* SHOW DATABASES (SQL and InfluxQL) lists a database only if
     * db_visible(db_visible_arg, name) is true; NULL lists them all. The
     * caller decides who may see what (http/ passes the request's token). */
    bool (*db_visible)(const void *arg, const char *name);
    const void *db_visible_arg;
};

/* True if o lets SHOW DATABASES list the database name. */
bool query_db_visible(const struct query_opts *o, const char *name);

/* Defaults: max_get_rows 2000, no full scans, NDJSON, 16 buckets, DESC, ttl 0. */
void query_opts_default(struct query_opts *o);

struct query_cursor;

/* Parses sql (one or more statements separated by ';'), plans and opens
 * it. On failure nothing was output; err holds the message and the return
 * maps to a status:
 *   ERR_INVAL    bad SQL, a refused full scan, bad option        -> 400
 *   ERR_TOOBIG   more GET keys than max_get_rows, or hosts with
 *                too many events for one INDEX merge              -> 400 (the
 *                query is too broad, not the body: narrow it as err says)
 *   ERR_NOTFOUND unknown database                                 -> 404
 *   ERR_EXISTS   CREATE DATABASE of an existing one               -> 409
 *   ERR_BUSY     the store applies back-pressure (DELETE)         -> 503
 *   others       store errors (ERR_IO, ERR_CORRUPT, ...)          -> 500
 * *out is written only on success; free it with query_cursor_free. */
int query_sql_open(struct store *s, const char *sql, size_t len, const struct query_opts *o,
                   struct query_cursor **out, struct buf *err);

/* query_sql_open in two steps, so that the statements are parsed once and
 * can be checked (rights) before any runs: query_sql_prepare parses (ERR_INVAL
 * with err set; nothing runs), query_cursor_stmt gives statement i (NULL past
 * the last), and query_cursor_start runs up to the first streaming statement
 * with query_sql_open's errors. The cursor stays the caller's either way: on
 * failure query_cursor_applied tells how many statements of the list were
 * applied before the failing one; then free it. */
struct sql_stmt;
int query_sql_prepare(struct store *s, const char *sql, size_t len, const struct query_opts *o,
                      struct query_cursor **out, struct buf *err);
const struct sql_stmt *query_cursor_stmt(const struct query_cursor *c, size_t i);
int query_cursor_start(struct query_cursor *c, struct buf *err);
/* The statements of the list completed so far: after a failure (at open
 * or mid-stream), those before the failing one, which stay applied. */
size_t query_cursor_applied(const struct query_cursor *c);

/* The parameter form GET /api/v1/query?db=&host=&event=&start=&end=
 * &order=desc|asc&limit=&where=&full_scan=. get(arg, name) returns a
 * parameter's value or NULL; an empty value counts as absent (the empty
 * host is queried with SQL: host = ''). start is inclusive, end exclusive; times are
 * integer ns, RFC 3339, "now", or relative to now ("-1h"). where= is a SQL
 * condition list ("fields.code >= 500 AND tags.region = 'eu'"). Same
 * errors and ownership as query_sql_open. */
int query_params_open(struct store *s, const char *(*get)(void *arg, const char *name), void *arg,
                      const struct query_opts *o, struct query_cursor **out, struct buf *err);

/* The sequence of the snapshot the open SELECT reads (store_snap_seq), 0
 * if none was taken: the live tail's seam between its first rows and the
 * rows committed after them. */
uint64_t query_cursor_snap_seq(const struct query_cursor *c);
/* Fills buf with up to max bytes of output. Returns the byte count, 0 at
 * the end, or a negative ERR_* after a mid-stream error (whose text was
 * already written to the stream). */
ssize_t query_cursor_read(struct query_cursor *c, char *buf, size_t max);
/* The message of a mid-stream error ("" if none). Valid until free. */
const char *query_cursor_error(struct query_cursor *c);
/* Releases snapshots, iterators and databases. NULL is a no-op. */
void query_cursor_free(struct query_cursor *c);

/* Appends Prometheus text: logbucket_query_total{plan,outcome},
 * logbucket_query_rows_scanned_total, logbucket_query_rows_returned_total,
 * logbucket_query_duration_seconds (histogram). Thread-safe. */
void query_metrics(struct buf *out);

#endif
