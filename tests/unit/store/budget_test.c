/* The memtable budget counts rows, not partitions: empty memtables charge
 * nothing, so many databases of many buckets do not fill it before the
 * first row (each used to charge a 16 KiB block, 1,025 per database of
 * 1,024 buckets). */
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

/* The options of a store in dir without WAL syncs, of a memtable budget
 * of mib MiB. */
static struct store_opts budget_opts(const char *dir, unsigned mib)
{
    struct store_opts o;
    store_opts_default(&o);
    o.dir = dir;
    o.wal_sync = STORE_SYNC_NONE;
    o.memtable_bytes = (size_t)mib << 20;
    return o;
}

static void test_empty_memtables_are_free(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("budget");
    struct store_opts o = budget_opts(dir, 8);
    o.write_stall_ns = 0; /* over budget: ERR_BUSY at once */
    struct store *s;
    assert_int_equal(store_open(&o, &s), ERR_OK);
    struct db_opts d = {.buckets = 1024, .ts_desc = true};
    char name[16];
    for (int i = 0; i < 4; i++) { /* 4,100 empty memtables: 64 MiB at 16 KiB each */
        snprintf(name, sizeof name, "d%d", i);
        assert_int_equal(store_db_create(s, name, &d), ERR_OK);
    }
    for (int i = 0; i < 4; i++) {
        struct store_db *db;
        snprintf(name, sizeof name, "d%d", i);
        assert_int_equal(store_db_get(s, name, &db), ERR_OK);
        struct batch *b = batch_new();
        struct rec_field f = {.key = slice_cstr("v"), .type = REC_INT, .v.i = i};
        struct buf rec = BUF_INIT;
        rec_encode(&rec, NULL, 0, &f, 1);
        batch_put(b, 1700000000000000000LL + i, slice_cstr("h"), slice_cstr("e"),
                  slice_make(rec.data, rec.len));
        buf_destroy(&rec);
        assert_int_equal(store_write(db, b), ERR_OK);
        batch_free(b);
        store_db_unref(db);
    }
    store_close(s);
    tu_rmtree(dir);
    free(dir);
}

/* Writes rows of about 100 bytes to db until n bytes are written: each a
 * record of one string field (what the flush's catalog reads). */
static void fill(struct store_db *db, int64_t t0, size_t n)
{
    struct batch *b = batch_new();
    char v[90];
    memset(v, 'x', sizeof v - 1);
    v[sizeof v - 1] = '\0';
    struct rec_field f = {.key = slice_cstr("msg"), .type = REC_STRING, .v.s = slice_cstr(v)};
    struct buf rec = BUF_INIT;
    rec_encode(&rec, NULL, 0, &f, 1);
    for (size_t i = 0; i * 120 < n; i++)
        batch_put_id(b, t0 + (int64_t)i, slice_cstr("h"), slice_cstr("e"), slice_make("", 0),
                     slice_make(rec.data, rec.len), false);
    assert_int_equal(store_write(db, b), ERR_OK);
    batch_free(b);
    buf_destroy(&rec);
}

/* Many databases, each under the share that makes it flush on its own,
 * together over the budget: the store frees memory by flushing the
 * largest, instead of refusing every write (503) while nothing flushes. */
static void test_many_small_databases_flush(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("budget");
    struct store_opts o = budget_opts(dir, 4);
    o.write_stall_ns = 3000000000LL; /* the flush comes well within */
    struct store *s;
    assert_int_equal(store_open(&o, &s), ERR_OK);
    struct db_opts d = {.buckets = 1, .ts_desc = true};
    char name[16];
    struct store_db *dbs[40];
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "d%d", i);
        assert_int_equal(store_db_create(s, name, &d), ERR_OK);
        assert_int_equal(store_db_get(s, name, &dbs[i]), ERR_OK);
    }
    /* each at most 160 KiB: far under an eighth of the budget (512 KiB) */
    for (int round = 0; round < 4; round++)
        for (int i = 0; i < 40; i++)
            fill(dbs[i], 1700000000000000000LL + round * 100000000LL, 40u << 10);
    for (int i = 0; i < 40; i++)
        store_db_unref(dbs[i]);
    store_close(s);
    tu_rmtree(dir);
    free(dir);
}

/* A database that writes have left for a second gives its memtables back
 * once another fills half the budget: its rows are flushed, where they
 * would otherwise hold their share until settle_after while the other's
 * memtables were frozen early and small. */
static void test_idle_database_gives_way(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("budget");
    struct store_opts o = budget_opts(dir, 8);
    o.settle_after_ns = 3600LL * 1000000000LL; /* no settle within the test */
    struct store *s;
    assert_int_equal(store_open(&o, &s), ERR_OK);
    struct db_opts d = {.buckets = 1, .ts_desc = true};
    struct store_db *idle, *busy;
    assert_int_equal(store_db_create(s, "idle", &d), ERR_OK);
    assert_int_equal(store_db_create(s, "busy", &d), ERR_OK);
    assert_int_equal(store_db_get(s, "idle", &idle), ERR_OK);
    assert_int_equal(store_db_get(s, "busy", &busy), ERR_OK);
    /* 1 MiB: over a sixteenth of the budget, under its own flush point */
    fill(idle, 1700000000000000000LL, 1u << 20);
    struct store_db_stats st;
    store_db_stats(idle, &st);
    assert_int_equal(st.sst_bytes, 0);
    struct timespec pause = {1, 200000000L};
    nanosleep(&pause, NULL);
    /* 3.2 MiB more in the other: half the budget, not three quarters */
    for (int i = 0; i < 32; i++)
        fill(busy, 1700000000000000000LL + i * 1000000LL, 100u << 10);
    bool flushed = false;
    for (int i = 0; i < 100 && !flushed; i++) {
        store_db_stats(idle, &st);
        flushed = st.sst_bytes > 0;
        struct timespec step = {0, 50000000L};
        if (!flushed)
            nanosleep(&step, NULL);
    }
    assert_true(flushed);
    store_db_unref(idle);
    store_db_unref(busy);
    store_close(s);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    log_set_level(LOG_WARN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_memtables_are_free),
        cmocka_unit_test(test_many_small_databases_flush),
        cmocka_unit_test(test_idle_database_gives_way),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
