/* Cursor tests against a real store: admin statements and their output,
 * SHOW DATABASES rows, EXPLAIN, NDJSON vs JSON framing, multi-statement
 * scripts, errors at open (status codes) and mid-stream, the parameter
 * form, and the metrics text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "model/record.h"
#include "query/cond.h"
#include "query/query.h"
#include "store/store.h"

#define NOW 1700000000000000000LL

struct fx {
    struct store *s;
    char dir[64];
};

static int64_t clock_fixed(void *arg)
{
    (void)arg;
    return NOW;
}

static int setup(void **state)
{
    struct fx *f = xcalloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/lbq-cursor-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    struct store_opts so;
    store_opts_default(&so);
    so.dir = f->dir;
    so.wal_sync = STORE_SYNC_NONE;
    so.clock = clock_fixed;
    assert_int_equal(store_open(&so, &f->s), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    store_close(f->s);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "# could not remove %s\n", f->dir);
    free(f);
    return 0;
}

static void test_opts(struct query_opts *o, enum query_format fmt)
{
    query_opts_default(o);
    o->now_ns = NOW;
    o->format = fmt;
    o->max_get_rows = 4;
}

/* Reads c to its end into out and frees it; returns 0 or the read error
 * (its text in err). */
static int drain(struct query_cursor *c, struct buf *out, struct buf *err)
{
    char tmp[7]; /* tiny reads: the cursor must cope */
    ssize_t n;
    while ((n = query_cursor_read(c, tmp, sizeof(tmp))) > 0)
        buf_append(out, tmp, (size_t)n);
    if (n < 0)
        buf_puts(err, query_cursor_error(c));
    query_cursor_free(c);
    return (int)n;
}

/* Runs sql; returns the open code, or the read error; output in out. */
static int run(struct fx *f, const char *sql, enum query_format fmt, struct buf *out,
               struct buf *err)
{
    struct query_opts o;
    test_opts(&o, fmt);
    struct query_cursor *c;
    buf_reset(out);
    buf_reset(err);
    int rc = query_sql_open(f->s, sql, strlen(sql), &o, &c, err);
    if (rc)
        return rc;
    return drain(c, out, err);
}

static void put_rows(struct fx *f, const char *db)
{
    struct store_db *d;
    assert_int_equal(store_db_get(f->s, db, &d), 0);
    struct batch *b = batch_new();
    struct buf v = BUF_INIT;
    for (int i = 0; i < 10; i++) {
        struct rec_field fl;
        memset(&fl, 0, sizeof(fl));
        fl.key = slice_cstr("n");
        fl.type = REC_INT;
        fl.v.i = i;
        buf_reset(&v);
        rec_encode(&v, NULL, 0, &fl, 1);
        char host[8];
        snprintf(host, sizeof(host), "h%d", i % 2);
        batch_put(b, NOW - i * 1000, slice_cstr(host), slice_cstr("e"), slice_make(v.data, v.len));
    }
    assert_int_equal(store_write(d, b), 0);
    batch_free(b);
    buf_destroy(&v);
    store_db_unref(d);
}

static void test_admin(void **state)
{
    struct fx *f = *state;
    struct buf out = BUF_INIT, err = BUF_INIT;
    assert_int_equal(run(f, "CREATE DATABASE a WITH (buckets=3, ts_order='asc', ttl='30d')",
                         QUERY_NDJSON, &out, &err),
                     0);
    assert_string_equal(buf_cstr(&out), "{\"ok\":true}\n");
    assert_int_equal(run(f, "CREATE DATABASE a", QUERY_NDJSON, &out, &err), ERR_EXISTS);
    assert_string_equal(buf_cstr(&err), "database 'a' already exists");
    assert_int_equal(run(f, "CREATE DATABASE IF NOT EXISTS a; CREATE DATABASE b", QUERY_NDJSON,
                         &out, &err),
                     0);
    assert_string_equal(buf_cstr(&out), "{\"ok\":true}\n{\"ok\":true}\n");
    assert_int_equal(run(f, "ALTER DATABASE b SET ttl='12h'", QUERY_NDJSON, &out, &err), 0);
    assert_int_equal(run(f, "SHOW DATABASES", QUERY_NDJSON, &out, &err), 0);
    assert_string_equal(buf_cstr(&out),
                        "{\"name\":\"a\",\"buckets\":3,\"ts_order\":\"asc\",\"ttl\":\"30d\","
                        "\"rows\":0,\"bytes\":0}\n"
                        "{\"name\":\"b\",\"buckets\":16,\"ts_order\":\"desc\",\"ttl\":\"12h\","
                        "\"rows\":0,\"bytes\":0}\n");
    assert_int_equal(run(f, "SHOW DATABASES", QUERY_JSON, &out, &err), 0);
    assert_non_null(strstr(buf_cstr(&out), "{\"results\":[{\"name\":\"a\""));
    assert_int_equal(run(f, "DROP DATABASE b", QUERY_NDJSON, &out, &err), 0);
    assert_int_equal(run(f, "DROP DATABASE b", QUERY_NDJSON, &out, &err), ERR_NOTFOUND);
    assert_int_equal(run(f, "DROP DATABASE IF EXISTS b", QUERY_NDJSON, &out, &err), 0);
    assert_int_equal(run(f, "ALTER DATABASE zz SET ttl='1d'", QUERY_NDJSON, &out, &err),
                     ERR_NOTFOUND);
    assert_string_equal(buf_cstr(&err), "database 'zz' not found");
    buf_destroy(&out);
    buf_destroy(&err);
}

static void test_select_framing(void **state)
{
    struct fx *f = *state;
    struct buf out = BUF_INIT, err = BUF_INIT;
    assert_int_equal(run(f, "CREATE DATABASE c", QUERY_NDJSON, &out, &err), 0);
    put_rows(f, "c");
    assert_int_equal(run(f, "SELECT ts, fields.n FROM c WHERE host = 'h1' LIMIT 2", QUERY_NDJSON,
                         &out, &err),
                     0);
    assert_string_equal(buf_cstr(&out), "{\"ts\":1699999999999999000,\"fields\":{\"n\":1}}\n"
                                        "{\"ts\":1699999999999997000,\"fields\":{\"n\":3}}\n");
    assert_int_equal(run(f, "SELECT ts FROM c WHERE host = 'h1' ORDER BY ts ASC LIMIT 2",
                         QUERY_JSON, &out, &err),
                     0);
    assert_string_equal(buf_cstr(&out), "{\"results\":[{\"ts\":1699999999999991000},"
                                        "{\"ts\":1699999999999993000}]}\n");
    assert_int_equal(run(f,
                         "SELECT COUNT(*) FROM c WHERE ts > 0; SELECT COUNT(*) FROM c WHERE "
                         "host = 'h0' AND n >= 4",
                         QUERY_NDJSON, &out, &err),
                     0);
    assert_string_equal(buf_cstr(&out), "{\"count\":10}\n{\"count\":3}\n");
    assert_int_equal(run(f, "SELECT * FROM c WHERE host = 'h0' LIMIT 0", QUERY_JSON, &out, &err),
                     0);
    assert_string_equal(buf_cstr(&out), "{\"results\":[]}\n");
    /* more ts points than one range each: one span, filtered */
    struct buf sql = BUF_INIT;
    buf_puts(&sql, "SELECT COUNT(*) FROM c WHERE ts IN (");
    for (int i = 0; i < 1100; i++)
        buf_printf(&sql, "%s%lld", i ? "," : "", (long long)(NOW - i * 500));
    buf_puts(&sql, ")");
    assert_int_equal(run(f, buf_cstr(&sql), QUERY_NDJSON, &out, &err), 0);
    assert_string_equal(buf_cstr(&out), "{\"count\":10}\n");
    buf_destroy(&sql);
    /* GET */
    assert_int_equal(run(f,
                         "SELECT ts, host FROM c WHERE ts IN (1700000000000000000, "
                         "1699999999999999000) AND host IN ('h0','h1') AND event = 'e'",
                         QUERY_NDJSON, &out, &err),
                     0);
    assert_string_equal(buf_cstr(&out), "{\"ts\":1700000000000000000,\"host\":\"h0\"}\n"
                                        "{\"ts\":1699999999999999000,\"host\":\"h1\"}\n");
    buf_destroy(&out);
    buf_destroy(&err);
}

static void test_errors(void **state)
{
    struct fx *f = *state;
    struct buf out = BUF_INIT, err = BUF_INIT;
    assert_int_equal(run(f, "CREATE DATABASE d", QUERY_NDJSON, &out, &err), 0);
    put_rows(f, "d");
    assert_int_equal(run(f, "SELECT * FROM nosuch WHERE ts > 0", QUERY_NDJSON, &out, &err),
                     ERR_NOTFOUND);
    assert_int_equal(run(f, "SELECT * FROM d", QUERY_NDJSON, &out, &err), ERR_INVAL);
    assert_non_null(strstr(buf_cstr(&err), "full scan refused"));
    assert_int_equal(run(f,
                         "SELECT * FROM d WHERE ts IN (1,2,3) AND host IN ('a','b') AND "
                         "event = 'e'",
                         QUERY_NDJSON, &out, &err),
                     ERR_TOOBIG);
    assert_int_equal(run(f, "SELECT * FORM d", QUERY_NDJSON, &out, &err), ERR_INVAL);
    assert_string_equal(buf_cstr(&err), "syntax error at position 10: expected FROM, found 'FORM'");
    /* a list is checked before it runs: nothing is output, the statement
     * is named (test_lists has the rest) */
    assert_int_equal(run(f,
                         "SELECT COUNT(*) FROM d WHERE ts > 0; SELECT * FROM nosuch WHERE ts "
                         "> 0",
                         QUERY_NDJSON, &out, &err),
                     ERR_NOTFOUND);
    assert_string_equal(buf_cstr(&out), "");
    assert_string_equal(buf_cstr(&err), "statement 2 of 2: database 'nosuch' not found");
    buf_destroy(&out);
    buf_destroy(&err);
}

static bool db_exists(struct fx *f, const char *name)
{
    struct store_db *db;
    if (store_db_get(f->s, name, &db) != ERR_OK)
        return false;
    store_db_unref(db);
    return true;
}

/* Opens sql, lets another request drop database gone, then reads. */
static int run_then_drop(struct fx *f, const char *sql, const char *gone, enum query_format fmt,
                         struct buf *out, struct buf *err)
{
    struct query_opts o;
    test_opts(&o, fmt);
    struct query_cursor *c;
    buf_reset(out);
    buf_reset(err);
    assert_int_equal(query_sql_open(f->s, sql, strlen(sql), &o, &c, err), 0);
    assert_int_equal(store_db_drop(f->s, gone), 0);
    return drain(c, out, err);
}

static void test_lists(void **state)
{
    struct fx *f = *state;
    struct buf out = BUF_INIT, err = BUF_INIT;
    assert_int_equal(run(f, "CREATE DATABASE d; CREATE DATABASE victim", QUERY_NDJSON, &out, &err),
                     0);
    put_rows(f, "d");
    /* refused before any statement runs: the victim stays */
    assert_int_equal(run(f, "DROP DATABASE victim; DROP DATABASE nope", QUERY_NDJSON, &out, &err),
                     ERR_NOTFOUND);
    assert_string_equal(buf_cstr(&err), "statement 2 of 2: database 'nope' not found");
    assert_int_equal(run(f, "DROP DATABASE victim; SELECT * FROM d", QUERY_NDJSON, &out, &err),
                     ERR_INVAL);
    assert_non_null(strstr(buf_cstr(&err), "statement 2 of 2: full scan refused"));
    assert_int_equal(run(f, "DROP DATABASE victim; DELETE FROM victim WHERE ts > 0; SHOW DATABASES",
                         QUERY_NDJSON, &out, &err),
                     ERR_NOTFOUND);
    assert_string_equal(buf_cstr(&err), "statement 2 of 3: database 'victim' not found");
    assert_int_equal(run(f, "DROP DATABASE IF EXISTS nope; CREATE DATABASE d", QUERY_NDJSON, &out,
                         &err),
                     ERR_EXISTS);
    assert_string_equal(buf_cstr(&err), "statement 2 of 2: database 'd' already exists");
    assert_true(db_exists(f, "victim"));
    /* what earlier statements create and drop counts */
    assert_int_equal(run(f,
                         "CREATE DATABASE fresh; SELECT COUNT(*) FROM fresh WHERE ts > 0; DROP "
                         "DATABASE fresh; CREATE DATABASE fresh; ALTER DATABASE fresh SET ttl='1d'",
                         QUERY_NDJSON, &out, &err),
                     0);
    assert_string_equal(buf_cstr(&out), "{\"ok\":true}\n{\"count\":0}\n{\"ok\":true}\n"
                                        "{\"ok\":true}\n{\"ok\":true}\n");
    /* what only running tells fails mid-list: the open says what was applied */
    struct query_opts o;
    test_opts(&o, QUERY_NDJSON);
    const char *sql = "CREATE DATABASE one; CREATE DATABASE \"bad/name\"; DROP DATABASE victim";
    struct query_cursor *c;
    buf_reset(&err);
    assert_int_equal(query_sql_prepare(f->s, sql, strlen(sql), &o, &c, &err), 0);
    assert_int_equal(query_cursor_start(c, &err), ERR_INVAL);
    assert_int_equal(query_cursor_applied(c), 1);
    assert_non_null(strstr(buf_cstr(&err), "statement 2 of 3: bad database name 'bad/name'"));
    query_cursor_free(c);
    assert_true(db_exists(f, "one"));
    assert_true(db_exists(f, "victim"));
    /* ... or the stream does, after a SELECT streamed */
    assert_int_equal(run(f, "CREATE DATABASE gone", QUERY_NDJSON, &out, &err), 0);
    assert_int_equal(run_then_drop(f,
                                   "SELECT COUNT(*) FROM d WHERE ts > 0; ALTER DATABASE gone SET "
                                   "ttl='1d'",
                                   "gone", QUERY_NDJSON, &out, &err),
                     ERR_NOTFOUND);
    assert_string_equal(buf_cstr(&out), "{\"count\":10}\n{\"error\":\"statement 2 of 2: "
                                        "database 'gone' not found\",\"applied\":1}\n");
    assert_int_equal(run(f, "CREATE DATABASE gone", QUERY_NDJSON, &out, &err), 0);
    assert_int_equal(run_then_drop(f,
                                   "SELECT COUNT(*) FROM d WHERE ts > 0; ALTER DATABASE gone SET "
                                   "ttl='1d'",
                                   "gone", QUERY_JSON, &out, &err),
                     ERR_NOTFOUND);
    assert_string_equal(buf_cstr(&out),
                        "{\"results\":[{\"count\":10}]}\n"
                        "{\"results\":[],\"error\":\"statement 2 of 2: database 'gone' not "
                        "found\",\"applied\":1}\n");
    buf_destroy(&out);
    buf_destroy(&err);
}

static bool show_only_a(const void *arg, const char *name)
{
    return strcmp(name, arg) == 0;
}

static void test_show_filter(void **state)
{
    struct fx *f = *state;
    struct buf out = BUF_INIT, err = BUF_INIT;
    assert_int_equal(run(f, "CREATE DATABASE a; CREATE DATABASE b", QUERY_NDJSON, &out, &err), 0);
    struct query_opts o;
    test_opts(&o, QUERY_NDJSON);
    o.db_visible = show_only_a;
    o.db_visible_arg = "a";
    struct query_cursor *c;
    assert_int_equal(query_sql_open(f->s, "SHOW DATABASES", 14, &o, &c, &err), 0);
    buf_reset(&out);
    assert_int_equal(drain(c, &out, &err), 0);
    assert_string_equal(buf_cstr(&out),
                        "{\"name\":\"a\",\"buckets\":16,\"ts_order\":\"desc\",\"ttl\":\"0\","
                        "\"rows\":0,\"bytes\":0}\n");
    buf_destroy(&out);
    buf_destroy(&err);
}

static void test_index_limit(void **state)
{
    struct fx *f = *state;
    struct buf out = BUF_INIT, err = BUF_INIT;
    assert_int_equal(run(f, "CREATE DATABASE ix WITH (buckets=1)", QUERY_NDJSON, &out, &err), 0);
    struct store_db *d;
    assert_int_equal(store_db_get(f->s, "ix", &d), 0);
    struct batch *b = batch_new();
    struct buf v = BUF_INIT;
    rec_encode(&v, NULL, 0, NULL, 0);
    char ev[16];
    for (int i = 0; i < 1025; i++) {
        snprintf(ev, sizeof(ev), "ev%04d", i);
        batch_put(b, NOW - i, slice_cstr("h"), slice_cstr(ev), slice_make(v.data, v.len));
    }
    assert_int_equal(store_write(d, b), 0);
    batch_free(b);
    buf_destroy(&v);
    store_db_unref(d);
    /* one host's entries are one index range, however many events it has */
    assert_int_equal(run(f, "SELECT COUNT(*) FROM ix WHERE host = 'h'", QUERY_NDJSON, &out, &err),
                     0);
    assert_string_equal(buf_cstr(&out), "{\"count\":1025}\n");
    assert_int_equal(run(f, "SELECT event FROM ix WHERE host = 'h' LIMIT 2", QUERY_NDJSON, &out,
                         &err),
                     0);
    assert_string_equal(buf_cstr(&out), "{\"event\":\"ev0000\"}\n{\"event\":\"ev0001\"}\n");
    assert_int_equal(run(f,
                         "SELECT COUNT(*) FROM ix WHERE host = 'h' AND event IN ('ev0001', "
                         "'ev1024', 'nope')",
                         QUERY_NDJSON, &out, &err),
                     0);
    assert_string_equal(buf_cstr(&out), "{\"count\":2}\n");
    assert_int_equal(run(f, "SELECT COUNT(*) FROM ix WHERE ts > 0", QUERY_NDJSON, &out, &err), 0);
    assert_string_equal(buf_cstr(&out), "{\"count\":1025}\n");
    buf_destroy(&out);
    buf_destroy(&err);
}

static void test_explain_delete(void **state)
{
    struct fx *f = *state;
    struct buf out = BUF_INIT, err = BUF_INIT;
    assert_int_equal(run(f, "CREATE DATABASE e WITH (buckets=2)", QUERY_NDJSON, &out, &err), 0);
    put_rows(f, "e");
    assert_int_equal(run(f, "EXPLAIN SELECT * FROM e WHERE host = 'h0' AND event = 'e'",
                         QUERY_NDJSON, &out, &err),
                     0);
    assert_string_equal(buf_cstr(&out),
                        "{\"plan\":\"INDEX\",\"buckets\":[0,1],\"ranges\":[{\"host\":\"h0\","
                        "\"start\":null,\"end\":null}],\"index\":\"host\","
                        "\"order\":\"desc\",\"stored_order\":\"desc\","
                        "\"condition\":\"(host = 'h0' AND event = 'e')\","
                        "\"empty\":false}\n");
    assert_int_equal(run(f, "EXPLAIN SELECT * FROM e WHERE ts >= 5 AND code > 3 LIMIT 4",
                         QUERY_NDJSON, &out, &err),
                     0);
    assert_string_equal(buf_cstr(&out),
                        "{\"plan\":\"SCAN\",\"buckets\":[0,1],\"ranges\":[{\"bucket\":0,"
                        "\"start\":5,\"end\":null},{\"bucket\":1,\"start\":5,\"end\":null}],"
                        "\"index\":null,\"order\":\"desc\",\"stored_order\":\"desc\","
                        "\"condition\":\"(ts >= 5 AND fields.code > "
                        "3)\",\"limit\":4,\"empty\":false}\n");
    assert_int_equal(run(f, "DELETE FROM e WHERE host = 'h1' AND n > 4", QUERY_NDJSON, &out, &err),
                     0);
    assert_string_equal(buf_cstr(&out), "{\"deleted\":3}\n");
    assert_int_equal(run(f, "SELECT COUNT(*) FROM e WHERE ts > 0", QUERY_NDJSON, &out, &err), 0);
    assert_string_equal(buf_cstr(&out), "{\"count\":7}\n");
    assert_int_equal(run(f, "DELETE FROM e", QUERY_NDJSON, &out, &err), ERR_INVAL);
    assert_int_equal(run(f, "DELETE /*+ full_scan */ FROM e", QUERY_NDJSON, &out, &err), 0);
    assert_string_equal(buf_cstr(&out), "{\"deleted\":7}\n");
    buf_destroy(&out);
    buf_destroy(&err);
}

struct params {
    const char *kv[16];
};

static const char *param_get(void *arg, const char *name)
{
    struct params *p = arg;
    for (size_t i = 0; p->kv[i]; i += 2)
        if (strcmp(p->kv[i], name) == 0)
            return p->kv[i + 1];
    return NULL;
}

static int run_params(struct fx *f, struct params *p, struct buf *out, struct buf *err)
{
    struct query_opts o;
    query_opts_default(&o);
    o.now_ns = NOW;
    struct query_cursor *c;
    buf_reset(out);
    buf_reset(err);
    int rc = query_params_open(f->s, param_get, p, &o, &c, err);
    if (rc)
        return rc;
    char tmp[64];
    ssize_t n;
    while ((n = query_cursor_read(c, tmp, sizeof(tmp))) > 0)
        buf_append(out, tmp, (size_t)n);
    query_cursor_free(c);
    return (int)n;
}

static void test_params(void **state)
{
    struct fx *f = *state;
    struct buf out = BUF_INIT, err = BUF_INIT;
    assert_int_equal(run(f, "CREATE DATABASE p", QUERY_NDJSON, &out, &err), 0);
    put_rows(f, "p");
    struct params p1 = {
        {"db", "p", "host", "h0", "limit", "2", "order", "asc", "where", "n >= 4", NULL}};
    assert_int_equal(run_params(f, &p1, &out, &err), 0);
    assert_string_equal(buf_cstr(&out),
                        "{\"ts\":1699999999999992000,\"host\":\"h0\",\"event\":\"e\",\"tags\":{},"
                        "\"fields\":{\"n\":8}}\n"
                        "{\"ts\":1699999999999994000,\"host\":\"h0\",\"event\":\"e\",\"tags\":{},"
                        "\"fields\":{\"n\":6}}\n");
    /* start inclusive, end exclusive, relative times */
    struct params p2 = {{"db", "p", "start", "-3us", "end", "now", NULL}};
    assert_int_equal(run_params(f, &p2, &out, &err), 0);
    size_t lines = 0;
    for (const char *s = buf_cstr(&out); (s = strchr(s, '\n')); s++)
        lines++;
    assert_int_equal(lines, 3);
    struct params p3 = {{"db", "p", NULL}};
    assert_int_equal(run_params(f, &p3, &out, &err), ERR_INVAL);
    assert_non_null(strstr(buf_cstr(&err), "full scan refused"));
    struct params p4 = {{"db", "p", "full_scan", "true", NULL}};
    assert_int_equal(run_params(f, &p4, &out, &err), 0);
    struct params p5 = {{"db", "p", "start", "yesterday", NULL}};
    assert_int_equal(run_params(f, &p5, &out, &err), ERR_INVAL);
    assert_non_null(strstr(buf_cstr(&err), "bad start 'yesterday'"));
    struct params p6 = {{"host", "x", NULL}};
    assert_int_equal(run_params(f, &p6, &out, &err), ERR_INVAL);

    buf_reset(&out);
    query_metrics(&out);
    assert_non_null(strstr(buf_cstr(&out), "logbucket_query_total{plan=\"index\",outcome=\"ok\"}"));
    assert_non_null(strstr(buf_cstr(&out), "logbucket_query_duration_seconds_bucket{le=\"+Inf\"}"));
    assert_non_null(strstr(buf_cstr(&out), "logbucket_query_rows_scanned_total"));
    buf_destroy(&out);
    buf_destroy(&err);
}

/* --- INDEX reads through per-bucket cursors (query/exec.c) --- */

#define IC_TS 1500 /* distinct ts */

static void ic_id(struct buf *out, const char *id)
{
    struct rec_tag tag = {slice_cstr("id"), slice_cstr(id)};
    rec_encode(out, &tag, 1, NULL, 0);
}

static void ic_put(struct batch *b, int64_t ts, const char *h, const char *e, const char *id, int n,
                   bool with_id)
{
    struct buf v = BUF_INIT;
    struct rec_field fl[2];
    memset(fl, 0, sizeof(fl));
    fl[0].key = slice_cstr("n");
    fl[0].type = REC_INT;
    fl[0].v.i = n;
    fl[1].key = slice_cstr("pad");
    fl[1].type = REC_STRING;
    fl[1].v.s = slice_cstr("padding so that the rows of a bucket fill several blocks ....");
    rec_encode(&v, NULL, 0, fl, 2);
    if (with_id) { /* a point: id the record of its tags, fields merged */
        struct buf idr = BUF_INIT;
        ic_id(&idr, id);
        batch_put_id(b, ts, slice_cstr(h), slice_cstr(e), slice_make(idr.data, idr.len),
                     slice_make(v.data, v.len), true);
        buf_destroy(&idr);
    } else
        batch_put(b, ts, slice_cstr(h), slice_cstr(e), slice_make(v.data, v.len));
    buf_destroy(&v);
}

/* Rows of host h0 and its neighbours in key order (g, h0x), several ids
 * per (ts, host, event), rows sharing a ts across events, over 4 buckets:
 * the older half flushed to files, then new versions, deletes (by id and
 * whole key) and the newer half in the memtable. Returns the rows of h0
 * that remain (event a, event b). */
static void ic_load(struct fx *f, const char *db, int *live_a, int *live_b)
{
    struct store_db *d;
    assert_int_equal(store_db_get(f->s, db, &d), 0);
    struct batch *b = batch_new();
    *live_a = *live_b = 0;
    for (int half = 0; half < 2; half++) {
        for (int k = half * IC_TS / 2; k < (half + 1) * IC_TS / 2; k++) {
            int64_t ts = NOW - 3600000000000LL + (int64_t)k * 1000;
            ic_put(b, ts, "g", "a", "x", k, true);
            ic_put(b, ts, "h0", "a", "x", k, true);
            ic_put(b, ts, "h0", "a", "y", k, true);
            *live_a += 2;
            if (k % 3 == 0) {
                ic_put(b, ts, "h0", "b", "", k, false);
                (*live_b)++;
            }
            ic_put(b, ts, "h0x", "a", "x", k, true);
            ic_put(b, ts, "h1", "a", "x", k, true);
        }
        assert_int_equal(store_write(d, b), 0);
        batch_clear(b);
        if (half == 0) {
            assert_int_equal(store_db_flush(d), 0);
            /* in the memtable over the files: new versions and deletes */
            for (int k = 0; k < IC_TS / 2; k += 5) {
                int64_t ts = NOW - 3600000000000LL + (int64_t)k * 1000;
                ic_put(b, ts, "h0", "a", "y", -k, true);
                if (k % 2 == 0) {
                    struct buf idr = BUF_INIT;
                    ic_id(&idr, "x");
                    batch_delete_id(b, ts, slice_cstr("h0"), slice_cstr("a"),
                                    slice_make(idr.data, idr.len));
                    buf_destroy(&idr);
                    (*live_a)--;
                }
                if (k % 3 == 0) {
                    batch_delete(b, ts, slice_cstr("h0"), slice_cstr("b"));
                    (*live_b)--;
                }
            }
            assert_int_equal(store_write(d, b), 0);
            batch_clear(b);
        }
    }
    batch_free(b);
    store_db_unref(d);
}

static void ic_expect_plan(struct fx *f, const char *sql, const char *plan)
{
    struct buf q = BUF_INIT, out = BUF_INIT, err = BUF_INIT;
    buf_printf(&q, "EXPLAIN %s", sql);
    assert_int_equal(run(f, buf_cstr(&q), QUERY_NDJSON, &out, &err), 0);
    if (!strstr(buf_cstr(&out), plan))
        fail_msg("%s: not %s: %s", sql, plan, buf_cstr(&out));
    buf_destroy(&q);
    buf_destroy(&out);
    buf_destroy(&err);
}

/* The INDEX plan's rows equal those of a SCAN (which reads the buckets
 * whole, without the host index) byte for byte: none lost, none twice,
 * same order, in both directions of both stored orders and with limits. */
static void test_index_cursor(void **state)
{
    struct fx *f = *state;
    struct buf out = BUF_INIT, err = BUF_INIT, q = BUF_INIT, want = BUF_INIT;
    const char *dbs[] = {"icdesc", "icasc"};
    for (int i = 0; i < 2; i++) {
        buf_reset(&q);
        buf_printf(&q, "CREATE DATABASE %s WITH (buckets=4, ts_order='%s')", dbs[i],
                   i ? "asc" : "desc");
        assert_int_equal(run(f, buf_cstr(&q), QUERY_NDJSON, &out, &err), 0);
        int live_a, live_b;
        ic_load(f, dbs[i], &live_a, &live_b);
        const char *where[][2] = {
            {"host = 'h0'", "host LIKE 'h0' AND ts > 0"},
            {"host = 'h0' AND event = 'a'", "host LIKE 'h0' AND event LIKE 'a' AND ts > 0"},
            {"host = 'h0' AND event = 'b'", "host LIKE 'h0' AND event LIKE 'b' AND ts > 0"},
            {"host IN ('h0', 'h1')", "(host LIKE 'h0' OR host LIKE 'h1') AND ts > 0"},
        };
        const char *tails[] = {"",
                               " ORDER BY ts ASC",
                               " ORDER BY ts DESC",
                               " LIMIT 7",
                               " ORDER BY ts ASC LIMIT 7",
                               " ORDER BY ts DESC LIMIT 1001"};
        for (size_t w = 0; w < sizeof(where) / sizeof(where[0]); w++) {
            for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
                buf_reset(&q);
                buf_printf(&q, "SELECT * FROM %s WHERE %s%s", dbs[i], where[w][1], tails[t]);
                ic_expect_plan(f, buf_cstr(&q), "\"SCAN\"");
                if (run(f, buf_cstr(&q), QUERY_NDJSON, &want, &err) != 0)
                    fail_msg("%s: %s", buf_cstr(&q), buf_cstr(&err));
                buf_reset(&q);
                buf_printf(&q, "SELECT * FROM %s WHERE %s%s", dbs[i], where[w][0], tails[t]);
                ic_expect_plan(f, buf_cstr(&q), "\"INDEX\"");
                assert_int_equal(run(f, buf_cstr(&q), QUERY_NDJSON, &out, &err), 0);
                if (strcmp(buf_cstr(&out), buf_cstr(&want)) != 0)
                    fail_msg("%s: INDEX and SCAN differ (%zu and %zu bytes)", buf_cstr(&q), out.len,
                             want.len);
                assert_true(want.len > 0);
            }
        }
        /* and the count of what was written, deleted and kept */
        buf_reset(&q);
        buf_printf(&q, "SELECT COUNT(*) FROM %s WHERE host = 'h0' AND event = 'a'", dbs[i]);
        assert_int_equal(run(f, buf_cstr(&q), QUERY_NDJSON, &out, &err), 0);
        buf_reset(&want);
        buf_printf(&want, "{\"count\":%d}\n", live_a);
        assert_string_equal(buf_cstr(&out), buf_cstr(&want));
        buf_reset(&q);
        buf_printf(&q, "SELECT COUNT(*) FROM %s WHERE host = 'h0'", dbs[i]);
        assert_int_equal(run(f, buf_cstr(&q), QUERY_NDJSON, &out, &err), 0);
        buf_reset(&want);
        buf_printf(&want, "{\"count\":%d}\n", live_a + live_b);
        assert_string_equal(buf_cstr(&out), buf_cstr(&want));
    }
    buf_destroy(&out);
    buf_destroy(&err);
    buf_destroy(&q);
    buf_destroy(&want);
}

/* cond_row_decode reads a row's two records in one pass: the same tags
 * and fields, in the same order, as record.h's readers give, for records
 * of every field type, and ERR_CORRUPT for every cut or damaged one. */
static uint64_t dec_rng = 0x853c49e6748fea9bULL;

static unsigned dec_rand(unsigned n)
{
    dec_rng ^= dec_rng << 13;
    dec_rng ^= dec_rng >> 7;
    dec_rng ^= dec_rng << 17;
    return (unsigned)(dec_rng % n);
}

static const char *const names[] = {"value", "n", "msg", "level", "host_x", ""};

static void random_record(struct buf *out)
{
    struct rec_tag t[4];
    struct rec_field f[5];
    size_t nt = dec_rand(4), nf = dec_rand(5);
    for (size_t i = 0; i < nt; i++)
        t[i] = (struct rec_tag){slice_cstr(names[dec_rand(6)]), slice_cstr(names[dec_rand(6)])};
    for (size_t i = 0; i < nf; i++) {
        f[i].key = slice_cstr(names[dec_rand(6)]);
        f[i].type = (enum rec_type)(REC_FLOAT + (int)dec_rand(5));
        switch (f[i].type) {
        case REC_FLOAT: f[i].v.f = dec_rand(2) ? -0.0 : (double)dec_rng / 3.0; break;
        case REC_INT: f[i].v.i = dec_rand(2) ? INT64_MIN : -(int64_t)dec_rand(1000); break;
        case REC_UINT: f[i].v.u = dec_rand(2) ? UINT64_MAX : dec_rand(300); break;
        case REC_BOOL: f[i].v.b = dec_rand(2); break;
        default:
            f[i].type = REC_STRING;
            f[i].v.s = slice_cstr(names[dec_rand(6)]);
            break;
        }
    }
    rec_encode(out, t, nt, f, nf);
}

static void field_text(const struct rec_field *f, struct buf *out)
{
    buf_printf(out, "f %.*s:%d=", (int)f->key.len, f->key.ptr, (int)f->type);
    switch (f->type) {
    case REC_FLOAT: buf_append(out, (const char *)&f->v.f, sizeof f->v.f); break;
    case REC_INT: buf_printf(out, "%lld", (long long)f->v.i); break;
    case REC_UINT: buf_printf(out, "%llu", (unsigned long long)f->v.u); break;
    case REC_BOOL: buf_putc(out, f->v.b ? 'T' : 'F'); break;
    case REC_STRING: buf_append(out, f->v.s.ptr, f->v.s.len); break;
    }
    buf_putc(out, ';');
}

/* The reference: record.h's row reader. */
static int reference(struct slice id, struct slice value, struct buf *out)
{
    struct rec_row_reader rr;
    if (rec_row_init(&rr, id, value))
        return ERR_CORRUPT;
    struct rec_tag t;
    struct rec_field f;
    int got;
    while ((got = rec_row_next_tag(&rr, &t)) == 1)
        buf_printf(out, "t %.*s=%.*s;", (int)t.key.len, t.key.ptr, (int)t.value.len, t.value.ptr);
    while (got >= 0 && (got = rec_row_next_field(&rr, &f)) == 1) {
        field_text(&f, out);
    }
    return got < 0 ? ERR_CORRUPT : ERR_OK;
}

static int decoded(struct cond_row *r, struct slice id, struct slice value, struct buf *out)
{
    cond_row_set(r, 1, slice_cstr("h"), slice_cstr("e"), id, value);
    if (cond_row_decode(r))
        return ERR_CORRUPT;
    for (size_t i = 0; i < r->ntags; i++)
        buf_printf(out, "t %.*s=%.*s;", (int)r->tags[i].key.len, r->tags[i].key.ptr,
                   (int)r->tags[i].value.len, r->tags[i].value.ptr);
    for (size_t i = 0; i < r->nfields; i++) {
        field_text(&r->fields[i], out);
    }
    return ERR_OK;
}

/* cond_row_field_get on a row not yet decoded finds what cond_row_field
 * finds on a decoded one (the first field of each name, none on damage). */
static void check_field_get(struct cond_row *r, struct slice id, struct slice value)
{
    struct buf want = BUF_INIT, got = BUF_INIT;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        struct slice name = slice_cstr(names[k]);
        cond_row_set(r, 1, slice_cstr("h"), slice_cstr("e"), id, value);
        struct rec_field f;
        bool has = cond_row_field_get(r, name, &f);
        cond_row_set(r, 1, slice_cstr("h"), slice_cstr("e"), id, value);
        const struct rec_field *w = cond_row_field(r, name);
        assert_int_equal(has, w != NULL);
        /* a record alone (a section row's): the same field when the row
         * decodes; damaged, any answer but an overread (the sanitizers) */
        struct rec_field g;
        int rc = id.len ? 0 : cond_record_field(value, name, &g);
        if (!id.len && cond_row_decode(r) == ERR_OK)
            assert_int_equal(rc, w != NULL);
        if (!w)
            continue;
        buf_reset(&want);
        buf_reset(&got);
        field_text(w, &want);
        field_text(&f, &got);
        assert_int_equal(got.len, want.len);
        assert_memory_equal(got.data, want.data, want.len);
        if (id.len)
            continue;
        buf_reset(&got);
        field_text(&g, &got);
        assert_int_equal(got.len, want.len);
        assert_memory_equal(got.data, want.data, want.len);
    }
    buf_destroy(&want);
    buf_destroy(&got);
}

static void test_row_decode(void **state)
{
    (void)state;
    log_set_level((enum log_level)(LOG_ERROR + 1)); /* the damaged records' reports */
    struct cond_row r;
    cond_row_init(&r);
    struct buf id = BUF_INIT, value = BUF_INIT, want = BUF_INIT, got = BUF_INIT;
    size_t damaged = 0;
    for (int i = 0; i < 20000; i++) {
        buf_reset(&id);
        buf_reset(&value);
        if (dec_rand(4))
            random_record(&id);
        if (dec_rand(4))
            random_record(&value);
        struct buf *cut = dec_rand(2) ? &id : &value;
        if (i % 3 == 0 && cut->len) /* cut short, or a byte changed */
            cut->len = dec_rand((unsigned)cut->len);
        else if (i % 3 == 1 && cut->len)
            cut->data[dec_rand((unsigned)cut->len)] ^= (char)(1 + dec_rand(255));
        struct slice a = slice_make(id.data, id.len), b = slice_make(value.data, value.len);
        buf_reset(&want);
        buf_reset(&got);
        int rw = reference(a, b, &want), rg = decoded(&r, a, b, &got);
        assert_int_equal(rg, rw);
        damaged += rw != ERR_OK;
        if (rw == ERR_OK) {
            assert_int_equal(got.len, want.len);
            assert_memory_equal(got.data, want.data, want.len);
        }
        check_field_get(&r, a, b);
    }
    assert_true(damaged > 1000);
    log_set_level(LOG_INFO);
    cond_row_destroy(&r);
    buf_destroy(&id);
    buf_destroy(&value);
    buf_destroy(&want);
    buf_destroy(&got);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_decode),
        cmocka_unit_test_setup_teardown(test_admin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_select_framing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_explain_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_cursor, setup, teardown),
        cmocka_unit_test_setup_teardown(test_params, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_show_filter, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
