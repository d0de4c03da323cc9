/* A database that writes have left settles (store_opts.settle_after_ns):
 * its memtables are flushed and every window, the two newest included, is
 * merged into one final file (LZ4HC), smaller than the flushed ones (LZ4);
 * every row is still there; a write ends it; /metrics shows the bytes per
 * event by window age. With settle_after_ns 0 nothing of this happens. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "model/record.h"
#include "store/store.h"
#include "tests/support/store_testutil.h"

#define HOUR (3600LL * 1000000000LL)
#define T0 (1700000000LL * 1000000000LL / HOUR * HOUR)
#define PER_ROUND 1500

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Log rows (the id is their whole record) in windows 0 and 1, one round:
 * PER_ROUND rows spread over the two hours. */
static void write_round(struct store_db *db, int round)
{
    struct batch *b = batch_new();
    struct buf id = BUF_INIT;
    char host[16], msg[160];
    for (int i = 0; i < PER_ROUND; i++) {
        int64_t ts = T0 + (int64_t)(i % 2) * HOUR + (int64_t)(round * PER_ROUND + i) * 1000003;
        snprintf(host, sizeof host, "web-%d", i % 17);
        snprintf(msg, sizeof msg, "GET /api/v1/items/%d HTTP/1.1 200 %d bytes in %d ms round %d",
                 i * 7919 % 10007, i % 5000, i % 97, round);
        struct rec_field f = {.key = slice_cstr("msg"), .type = REC_STRING};
        f.v.s = slice_cstr(msg);
        buf_reset(&id);
        rec_encode(&id, NULL, 0, &f, 1);
        batch_put_id(b, ts, slice_cstr(host), slice_cstr("nginx"), slice_make(id.data, id.len),
                     slice_make("", 0), false);
    }
    assert_int_equal(store_write(db, b), ERR_OK);
    batch_free(b);
    buf_destroy(&id);
}

/* The value of a metric line that starts with prefix, or -1. */
static double metric(struct store *s, const char *prefix)
{
    struct buf m = BUF_INIT;
    store_metrics(s, &m);
    const char *p = strstr(buf_cstr(&m), prefix);
    double v = p ? strtod(p + strlen(prefix), NULL) : -1;
    buf_destroy(&m);
    return v;
}

static size_t count_ssts(const char *dir)
{
    char **names;
    size_t n = tu_list_suffix(dir, ".sst", &names);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return n;
}

/* A store in dir with database "logs" (one bucket) and three rounds of
 * rows, each flushed. settle_ns < 0: the store's default, which must be 0. */
static void open_flushed(const char *dir, int64_t settle_ns, struct store **s, struct store_db **db)
{
    struct store_opts o;
    store_opts_default(&o);
    o.dir = dir;
    o.wal_sync = STORE_SYNC_NONE;
    /* the rows' own final form is measured here: a host section
     * (store/series.h) adds bytes of its own */
    o.host_section = false;
    if (settle_ns >= 0)
        o.settle_after_ns = settle_ns;
    else
        assert_int_equal(o.settle_after_ns, 0);
    assert_int_equal(store_open(&o, s), ERR_OK);
    struct db_opts dbo = {.buckets = 1, .ts_desc = true};
    assert_int_equal(store_db_create(*s, "logs", &dbo), ERR_OK);
    assert_int_equal(store_db_get(*s, "logs", db), ERR_OK);
    for (int round = 0; round < 3; round++) {
        write_round(*db, round);
        assert_int_equal(store_db_flush(*db), ERR_OK);
    }
}

static void test_settle(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("settle");
    struct store *s;
    struct store_db *db;
    open_flushed(dir, 1500LL * 1000000, &s, &db); /* 1.5 s without writes */
    struct buf p0 = BUF_INIT;
    buf_printf(&p0, "%s/logs/p00", dir);
    /* three flushes of two windows, both still being written: they keep
     * their flushed files for now */
    size_t before = count_ssts(p0.data);
    assert_int_equal(before, 6);
    const char *hot = "logbucket_stored_bytes_per_event{db=\"logs\",age=\"0-2h\"} ";
    double per_event_before = metric(s, hot);
    assert_true(per_event_before > 0);
    assert_int_equal(metric(s, "logbucket_stored_events{db=\"logs\",age=\"0-2h\"} "),
                     3 * PER_ROUND);
    /* a little later, without writes, every window is one final file */
    size_t after = before;
    for (int i = 0; i < 300 && after != 2; i++) {
        sleep_ms(100);
        after = count_ssts(p0.data);
    }
    assert_int_equal(after, 2);
    /* a compaction that began before the database settled may leave one
     * window in one fast file for a moment; the next one rewrites it */
    for (int i = 0; i < 100 && metric(s, hot) >= per_event_before * 0.8; i++)
        sleep_ms(100);
    double per_event_after = metric(s, hot);
    printf("# bytes per event of the two newest windows: %.1f flushed, %.1f settled\n",
           per_event_before, per_event_after);
    assert_true(per_event_after < per_event_before * 0.8);
    struct store_db_stats st;
    assert_int_equal(store_db_stats(db, &st), ERR_OK);
    assert_int_equal(st.rows, 3 * PER_ROUND);
    /* a write ends it: the newest windows get flushed files again */
    write_round(db, 3);
    assert_int_equal(store_db_flush(db), ERR_OK);
    assert_true(count_ssts(p0.data) > 2);
    assert_int_equal(store_db_stats(db, &st), ERR_OK);
    assert_int_equal(st.rows, 4 * PER_ROUND);
    store_db_unref(db);
    store_close(s);
    buf_destroy(&p0);
    tu_rmtree(dir);
    free(dir);
}

/* settle_after_ns 0: the two newest windows keep their flushed files. */
static void test_no_settle(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("nosettle");
    struct store *s;
    struct store_db *db;
    open_flushed(dir, -1, &s, &db);
    struct buf p0 = BUF_INIT;
    buf_printf(&p0, "%s/logs/p00", dir);
    sleep_ms(2500);
    assert_int_equal(count_ssts(p0.data), 6);
    store_db_unref(db);
    store_close(s);
    buf_destroy(&p0);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    log_set_level(LOG_ERROR + 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_settle),
        cmocka_unit_test(test_no_settle),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
