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

#include <cmocka.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "store/store.h"
#include "tests/support/store_testutil.h"

static void test_empty_memtables_are_free(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("budget");
    struct store_opts o;
    store_opts_default(&o);
    o.dir = dir;
    o.wal_sync = STORE_SYNC_NONE;
    o.memtable_bytes = 8u << 20;
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
        batch_put(b, 1700000000000000000LL + i, slice_cstr("h"), slice_cstr("e"), slice_cstr("v"));
        assert_int_equal(store_write(db, b), ERR_OK);
        batch_free(b);
        store_db_unref(db);
    }
    store_close(s);
    tu_rmtree(dir);
    free(dir);
}

/* Writes rows of about 100 bytes to db until n bytes are written. */
static void fill(struct store_db *db, int64_t t0, size_t n)
{
    struct batch *b = batch_new();
    char v[100];
    memset(v, 'x', sizeof v - 1);
    v[sizeof v - 1] = '\0';
    for (size_t i = 0; i * 120 < n; i++)
        batch_put_id(b, t0 + (int64_t)i, slice_cstr("h"), slice_cstr("e"), slice_make("", 0),
                     slice_cstr(v), false);
    assert_int_equal(store_write(db, b), ERR_OK);
    batch_free(b);
}

/* Many databases, each under the share that makes it flush on its own,
 * together over the budget: the store frees memory by flushing the
 * largest, instead of refusing every write (503) while nothing flushes. */
static void test_many_small_databases_flush(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("budget");
    struct store_opts o;
    store_opts_default(&o);
    o.dir = dir;
    o.wal_sync = STORE_SYNC_NONE;
    o.memtable_bytes = 4u << 20;
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

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    log_set_level(LOG_WARN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_memtables_are_free),
        cmocka_unit_test(test_many_small_databases_flush),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
