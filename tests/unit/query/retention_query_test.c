/* Retention through the query layer: 48 hours of rows, the TTL cut from
 * 30d to 24h with ALTER DATABASE at run time; every plan (GET, SCAN,
 * INDEX, FULL) then returns no row older than now - 24h, before and after
 * the sweep; SHOW DATABASES reports rows and bytes that fall with it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "model/record.h"
#include "query/query.h"
#include "store/store.h"
#include "tests/support/store_testutil.h"

#define MINUTE (60LL * 1000000000LL)
#define HOUR (60 * MINUTE)
#define DAY (24 * HOUR)
#define T0 (1700000000LL * 1000000000LL / HOUR * HOUR)
#define SPAN_H 48

struct fx {
    char *dir;
    struct store *s;
    int64_t now;
};

static int64_t fake_clock(void *arg)
{
    return __atomic_load_n(&((struct fx *)arg)->now, __ATOMIC_SEQ_CST);
}

static int setup(void **state)
{
    struct fx *f = xcalloc(1, sizeof *f);
    f->dir = tu_mkdtemp("retq");
    f->now = T0 + SPAN_H * HOUR;
    struct store_opts so;
    store_opts_default(&so);
    so.dir = f->dir;
    so.wal_sync = STORE_SYNC_NONE;
    so.clock = fake_clock;
    so.clock_arg = f;
    assert_int_equal(store_open(&so, &f->s), ERR_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    store_close(f->s);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static int run(struct fx *f, const char *sql, struct buf *out, struct buf *err)
{
    struct query_opts o;
    query_opts_default(&o);
    o.now_ns = __atomic_load_n(&f->now, __ATOMIC_SEQ_CST);
    struct query_cursor *c;
    buf_reset(out);
    buf_reset(err);
    int rc = query_sql_open(f->s, sql, strlen(sql), &o, &c, err);
    if (rc)
        return rc;
    char tmp[4096];
    ssize_t n;
    while ((n = query_cursor_read(c, tmp, sizeof tmp)) > 0)
        buf_append(out, tmp, (size_t)n);
    if (n < 0)
        buf_puts(err, query_cursor_error(c));
    query_cursor_free(c);
    return n < 0 ? (int)n : 0;
}

static void ok(struct fx *f, const char *sql, struct buf *out)
{
    struct buf err = BUF_INIT;
    int rc = run(f, sql, out, &err);
    if (rc)
        fail_msg("%s: %s", sql, buf_cstr(&err));
    buf_destroy(&err);
}

static void fill(struct fx *f)
{
    struct store_db *db;
    assert_int_equal(store_db_get(f->s, "logs", &db), ERR_OK);
    struct batch *b = batch_new();
    struct buf v = BUF_INIT;
    static const char *const hosts[] = {"web-1", "web-2"};
    static const char *const events[] = {"info", "debug"};
    for (int64_t m = 0; m < SPAN_H * 60; m++) {
        for (int i = 0; i < 4; i++) {
            struct rec_field fl = {.key = slice_cstr("n"), .type = REC_INT, .v.i = m};
            buf_reset(&v);
            rec_encode(&v, NULL, 0, &fl, 1);
            batch_put(b, T0 + m * MINUTE, slice_cstr(hosts[i / 2]), slice_cstr(events[i % 2]),
                      slice_make(v.data, v.len));
        }
        if (batch_count(b) >= 400) {
            assert_int_equal(store_write(db, b), ERR_OK);
            batch_clear(b);
        }
        if (m % 360 == 359)
            assert_int_equal(store_db_flush(db), ERR_OK);
    }
    assert_int_equal(store_write(db, b), ERR_OK);
    assert_int_equal(store_db_flush(db), ERR_OK);
    batch_free(b);
    buf_destroy(&v);
    store_db_unref(db);
}

/* Every "ts": in out is >= cutoff; returns how many rows. */
static size_t check_rows(const char *out, int64_t cutoff)
{
    size_t n = 0;
    for (const char *p = out; (p = strstr(p, "\"ts\":")) != NULL; p += 5) {
        long long ts = strtoll(p + 5, NULL, 10);
        if (ts < cutoff)
            fail_msg("row with ts %lld older than the cutoff %lld", ts, (long long)cutoff);
        n++;
    }
    return n;
}

static void expect_plan(struct fx *f, const char *select, const char *plan)
{
    struct buf sql = BUF_INIT, out = BUF_INIT, want = BUF_INIT;
    buf_printf(&sql, "EXPLAIN %s", select);
    ok(f, buf_cstr(&sql), &out);
    buf_printf(&want, "\"plan\":\"%s\"", plan);
    if (!strstr(buf_cstr(&out), buf_cstr(&want)))
        fail_msg("%s: %s", select, buf_cstr(&out));
    buf_destroy(&sql);
    buf_destroy(&out);
    buf_destroy(&want);
}

/* Runs one query of each plan; returns the rows each one saw in n[4]. */
static void every_plan(struct fx *f, int64_t cutoff, size_t n[4])
{
    struct buf sql = BUF_INIT, out = BUF_INIT;
    /* GET: one timestamp per hour, all 48 hours */
    buf_puts(&sql, "SELECT * FROM logs WHERE host = 'web-1' AND event = 'info' AND ts IN (");
    for (int h = 0; h < SPAN_H; h++)
        buf_printf(&sql, "%s%lld", h ? "," : "", (long long)(T0 + h * HOUR + 30 * MINUTE));
    buf_puts(&sql, ")");
    expect_plan(f, buf_cstr(&sql), "GET");
    ok(f, buf_cstr(&sql), &out);
    n[0] = check_rows(buf_cstr(&out), cutoff);
    /* SCAN over the whole span */
    buf_reset(&sql);
    buf_printf(&sql, "SELECT * FROM logs WHERE ts >= %lld AND ts < %lld", (long long)T0,
               (long long)(T0 + SPAN_H * HOUR));
    expect_plan(f, buf_cstr(&sql), "SCAN");
    ok(f, buf_cstr(&sql), &out);
    n[1] = check_rows(buf_cstr(&out), cutoff);
    /* INDEX: host fixed */
    expect_plan(f, "SELECT * FROM logs WHERE host = 'web-2'", "INDEX");
    ok(f, "SELECT * FROM logs WHERE host = 'web-2'", &out);
    n[2] = check_rows(buf_cstr(&out), cutoff);
    /* FULL, asked for */
    expect_plan(f, "SELECT /*+ full_scan */ * FROM logs", "FULL");
    ok(f, "SELECT /*+ full_scan */ * FROM logs", &out);
    n[3] = check_rows(buf_cstr(&out), cutoff);
    buf_destroy(&sql);
    buf_destroy(&out);
}

static unsigned long long show_field(struct fx *f, const char *field)
{
    struct buf out = BUF_INIT;
    char key[32];
    ok(f, "SHOW DATABASES", &out);
    snprintf(key, sizeof key, "\"%s\":", field);
    const char *p = strstr(buf_cstr(&out), key);
    assert_non_null(p);
    unsigned long long v = strtoull(p + strlen(key), NULL, 10);
    buf_destroy(&out);
    return v;
}

static void test_every_plan(void **state)
{
    struct fx *f = *state;
    struct buf out = BUF_INIT;
    ok(f, "CREATE DATABASE logs WITH (buckets=4, ttl='30d')", &out);
    fill(f);
    size_t n[4];
    every_plan(f, INT64_MIN, n);
    assert_int_equal(n[0], SPAN_H);
    assert_int_equal(n[1], SPAN_H * 60 * 4);
    assert_int_equal(n[2], SPAN_H * 60 * 2);
    assert_int_equal(n[3], SPAN_H * 60 * 4);
    unsigned long long rows0 = show_field(f, "rows"), bytes0 = show_field(f, "bytes");
    assert_int_equal(rows0, SPAN_H * 60 * 4);

    int64_t now = T0 + SPAN_H * HOUR + 7 * MINUTE;
    __atomic_store_n(&f->now, now, __ATOMIC_SEQ_CST);
    ok(f, "ALTER DATABASE logs SET ttl='24h'", &out);
    ok(f, "SHOW DATABASES", &out);
    assert_non_null(strstr(buf_cstr(&out), "\"ttl\":\"1d\""));
    int64_t cutoff = now - DAY;
    every_plan(f, cutoff, n);
    assert_int_equal(n[0], 24);
    assert_true(n[1] >= 24 * 60 * 4 - 7 * 4 - 4 && n[1] <= 24 * 60 * 4);
    assert_int_equal(n[3], n[1]);
    assert_int_equal(n[2] * 2, n[1]);

    struct store_db *db;
    assert_int_equal(store_db_get(f->s, "logs", &db), ERR_OK);
    assert_int_equal(store_db_compact(db), ERR_OK);
    store_db_unref(db);
    size_t m[4];
    every_plan(f, cutoff, m);
    assert_memory_equal(m, n, sizeof m);
    unsigned long long rows1 = show_field(f, "rows"), bytes1 = show_field(f, "bytes");
    assert_int_equal(rows1, n[1]);
    printf("# SHOW bytes before %llu after %llu\n", bytes0, bytes1);
    assert_true(bytes1 < bytes0 * 2 / 3);
    buf_destroy(&out);
}

/* Rows of event 'debug' in out: none older than cutoff; returns the rows. */
static size_t check_debug(const char *out, int64_t cutoff)
{
    size_t n = 0;
    for (const char *line = out; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *ts = strstr(line, "\"ts\":");
        const char *ev = strstr(line, "\"event\":\"debug\"");
        if (ts && ev && ev < line + len) {
            long long t = strtoll(ts + 5, NULL, 10);
            if (t < cutoff)
                fail_msg("debug row at %lld older than %lld", t, (long long)cutoff);
            n++;
        }
        line += len + (nl ? 1 : 0);
    }
    return n;
}

static void test_event_ttl(void **state)
{
    struct fx *f = *state;
    struct buf out = BUF_INIT, sql = BUF_INIT, err = BUF_INIT;
    ok(f, "CREATE DATABASE logs WITH (buckets=4, ttl='30d')", &out);
    fill(f);
    int64_t now = T0 + SPAN_H * HOUR;
    ok(f, "ALTER DATABASE logs SET ttl='1h' FOR EVENT 'debug'", &out);
    assert_string_equal(buf_cstr(&out), "{\"ok\":true}\n");
    ok(f, "SHOW DATABASES", &out);
    assert_non_null(strstr(buf_cstr(&out), ",\"event_ttl\":{\"debug\":\"1h\"}}"));
    int64_t cutoff = now - HOUR;
    /* GET */
    buf_printf(&sql,
               "SELECT * FROM logs WHERE host = 'web-1' AND event IN ('debug', 'info') "
               "AND ts IN (%lld, %lld)",
               (long long)(now - 2 * HOUR), (long long)(now - 30 * MINUTE));
    expect_plan(f, buf_cstr(&sql), "GET");
    ok(f, buf_cstr(&sql), &out);
    assert_int_equal(check_debug(buf_cstr(&out), cutoff), 1);
    assert_int_equal(check_rows(buf_cstr(&out), INT64_MIN), 3);
    /* SCAN */
    buf_reset(&sql);
    buf_printf(&sql, "SELECT * FROM logs WHERE ts >= %lld", (long long)T0);
    ok(f, buf_cstr(&sql), &out);
    assert_int_equal(check_debug(buf_cstr(&out), cutoff), 2 * 60);
    assert_int_equal(check_rows(buf_cstr(&out), INT64_MIN), SPAN_H * 60 * 2 + 2 * 60);
    /* INDEX, host and event fixed, and COUNT */
    ok(f, "SELECT * FROM logs WHERE host = 'web-2' AND event = 'debug'", &out);
    assert_int_equal(check_debug(buf_cstr(&out), cutoff), 60);
    ok(f, "SELECT COUNT(*) FROM logs WHERE host = 'web-2' AND event = 'debug'", &out);
    assert_string_equal(buf_cstr(&out), "{\"count\":60}\n");
    /* FULL */
    ok(f, "SELECT /*+ full_scan */ * FROM logs WHERE event = 'debug'", &out);
    assert_int_equal(check_debug(buf_cstr(&out), cutoff), 2 * 60);
    /* removing the override: the database TTL again (rows compaction has
     * not dropped yet come back; compaction may already have run) */
    struct store_db *db;
    assert_int_equal(store_db_get(f->s, "logs", &db), ERR_OK);
    struct batch *b = batch_new();
    struct buf v = BUF_INIT;
    struct rec_field fl = {.key = slice_cstr("n"), .type = REC_INT, .v.i = 1};
    rec_encode(&v, NULL, 0, &fl, 1);
    batch_put(b, now - 5 * HOUR, slice_cstr("web-3"), slice_cstr("debug"),
              slice_make(v.data, v.len));
    assert_int_equal(store_write(db, b), ERR_OK);
    batch_free(b);
    buf_destroy(&v);
    store_db_unref(db);
    ok(f, "SELECT COUNT(*) FROM logs WHERE host = 'web-3' AND event = 'debug'", &out);
    assert_string_equal(buf_cstr(&out), "{\"count\":0}\n");
    ok(f, "ALTER DATABASE logs SET ttl='0' FOR EVENT 'debug'", &out);
    ok(f, "SHOW DATABASES", &out);
    assert_null(strstr(buf_cstr(&out), "event_ttl"));
    ok(f, "SELECT COUNT(*) FROM logs WHERE host = 'web-3' AND event = 'debug'", &out);
    assert_string_equal(buf_cstr(&out), "{\"count\":1}\n");
    /* errors */
    assert_int_equal(run(f, "ALTER DATABASE logs SET ttl='1h' FOR 'debug'", &out, &err), ERR_INVAL);
    assert_int_equal(run(f, "ALTER DATABASE logs SET ttl='1h' FOR EVENT debug", &out, &err),
                     ERR_INVAL);
    assert_non_null(strstr(buf_cstr(&err), "event name"));
    buf_destroy(&out);
    buf_destroy(&sql);
    buf_destroy(&err);
}

/* DELETE by host and ts range is one range tombstone; the reply counts the
 * rows it covered; every plan hides them at once, also after compaction. */
static void test_delete_range(void **state)
{
    struct fx *f = *state;
    struct buf out = BUF_INIT, sql = BUF_INIT;
    ok(f, "CREATE DATABASE logs WITH (buckets=4)", &out);
    fill(f);
    int64_t lo = T0 + 10 * HOUR, hi = T0 + 12 * HOUR - 1;
    buf_printf(&sql, "DELETE FROM logs WHERE host = 'web-1' AND ts BETWEEN %lld AND %lld",
               (long long)lo, (long long)hi);
    ok(f, buf_cstr(&sql), &out);
    assert_string_equal(buf_cstr(&out), "{\"deleted\":240}\n"); /* 2 h x 60 x 2 events */
    buf_reset(&sql);
    buf_printf(&sql, "DELETE FROM logs WHERE host = 'web-2' AND event = 'debug' AND ts >= %lld",
               (long long)(T0 + 40 * HOUR));
    ok(f, buf_cstr(&sql), &out);
    assert_string_equal(buf_cstr(&out), "{\"deleted\":480}\n");
    struct store_db *db;
    for (int pass = 0; pass < 2; pass++) {
        ok(f, "SELECT COUNT(*) FROM logs WHERE host = 'web-1'", &out);
        assert_string_equal(buf_cstr(&out), "{\"count\":5520}\n");
        buf_reset(&sql);
        buf_printf(&sql, "SELECT COUNT(*) FROM logs WHERE ts BETWEEN %lld AND %lld", (long long)lo,
                   (long long)hi);
        ok(f, buf_cstr(&sql), &out);
        assert_string_equal(buf_cstr(&out), "{\"count\":240}\n"); /* web-2's rows */
        ok(f, "SELECT /*+ full_scan */ COUNT(*) FROM logs WHERE event = 'debug'", &out);
        assert_string_equal(buf_cstr(&out), "{\"count\":5160}\n");
        buf_reset(&sql);
        buf_printf(&sql, "SELECT * FROM logs WHERE host = 'web-1' AND event = 'info' AND ts = %lld",
                   (long long)(lo + HOUR));
        ok(f, buf_cstr(&sql), &out);
        assert_string_equal(buf_cstr(&out), "");
        assert_int_equal(store_db_get(f->s, "logs", &db), ERR_OK);
        assert_int_equal(store_db_flush(db), ERR_OK);
        assert_int_equal(store_db_compact(db), ERR_OK);
        assert_int_equal(store_db_compact(db), ERR_OK);
        if (pass == 1)
            assert_int_equal(store_db_range_tombstones(db), 0);
        store_db_unref(db);
    }
    buf_destroy(&out);
    buf_destroy(&sql);
}

static void test_max_disk_sql(void **state)
{
    struct fx *f = *state;
    struct buf out = BUF_INIT, err = BUF_INIT;
    ok(f, "CREATE DATABASE g WITH (buckets=2, max_disk_bytes='10GiB')", &out);
    ok(f, "SHOW DATABASES", &out);
    assert_non_null(strstr(buf_cstr(&out), "\"bytes\":0,\"max_disk_bytes\":\"10GiB\"}"));
    ok(f, "ALTER DATABASE g SET max_disk_bytes = 1048576", &out);
    ok(f, "SHOW DATABASES", &out);
    assert_non_null(strstr(buf_cstr(&out), "\"max_disk_bytes\":\"1MiB\""));
    ok(f, "ALTER DATABASE g SET max_disk_bytes='0'", &out);
    ok(f, "SHOW DATABASES", &out);
    assert_null(strstr(buf_cstr(&out), "max_disk_bytes"));
    assert_int_equal(run(f, "ALTER DATABASE g SET max_disk_bytes='lots'", &out, &err), ERR_INVAL);
    assert_non_null(strstr(buf_cstr(&err), "bad max_disk_bytes"));
    buf_destroy(&out);
    buf_destroy(&err);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_plan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_ttl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_disk_sql, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
