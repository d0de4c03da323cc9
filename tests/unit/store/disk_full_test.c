/* A full disk at the store level (the fault env's ENOSPC modes): writes and
 * range deletes fail with ERR_NOSPC and leave nothing behind, reads keep
 * working, every acknowledged row survives a restart, and writes resume by
 * themselves once space is back, also when the flushes were the ones
 * failing (the memtable budget then answers ERR_BUSY, never a loss). */
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
#include "store/store.h"
#include "tests/support/store_testutil.h"

#define T0 (1700000000LL * 1000000000LL)

struct fixture {
    char *dir;
    struct store *s;
    struct fault_env fe;
    struct store_opts o;
    struct store_db *db;
};

static int setup(void **state)
{
    struct fixture *f = xcalloc(1, sizeof *f);
    f->dir = tu_mkdtemp("full");
    fault_env_init(&f->fe, env_posix());
    store_opts_default(&f->o);
    f->o.dir = f->dir;
    f->o.env = &f->fe.env;
    f->o.wal_sync = STORE_SYNC_ALWAYS;
    f->o.memtable_bytes = 2u << 20;
    f->o.write_stall_ns = 100 * 1000000LL;
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
    struct db_opts o = {.buckets = 2, .ts_desc = true, .ttl_ns = 0};
    assert_int_equal(store_db_create(f->s, "d", &o), ERR_OK);
    assert_int_equal(store_db_get(f->s, "d", &f->db), ERR_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    store_db_unref(f->db);
    store_close(f->s);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static void reopen(struct fixture *f)
{
    store_db_unref(f->db);
    store_close(f->s);
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
    assert_int_equal(store_db_get(f->s, "d", &f->db), ERR_OK);
}

/* one batch of rows [from, from + n) of about 200 bytes each */
static int write_rows(struct store_db *db, int64_t from, int n)
{
    struct batch *b = batch_new();
    char v[200];
    memset(v, 'v', sizeof v);
    for (int i = 0; i < n; i++) {
        snprintf(v, 16, "%lld", (long long)(from + i));
        batch_put(b, T0 + (from + i) * 1000, slice_cstr("h"), slice_cstr("e"),
                  slice_make(v, sizeof v));
    }
    int rc = store_write(db, b);
    batch_free(b);
    return rc;
}

static size_t count_rows(struct store_db *db)
{
    struct store_snap *snap = store_snapshot(db);
    size_t n = 0;
    for (uint32_t b = 0; b < 2; b++) {
        struct iter *it = store_iter_bucket(snap, b);
        for (it_seek_first(it); it_valid(it); it_next(it))
            n++;
        assert_int_equal(it_status(it), ERR_OK);
        it_destroy(it);
    }
    store_snap_release(snap);
    return n;
}

static int get_rc(struct store_db *db, int64_t i)
{
    struct buf v = BUF_INIT;
    int rc = store_get(db, T0 + i * 1000, slice_cstr("h"), slice_cstr("e"), &v);
    buf_destroy(&v);
    return rc;
}

static void test_wal_full(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(write_rows(f->db, 0, 100), ERR_OK);
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    assert_int_equal(write_rows(f->db, 100, 100), ERR_OK);
    atomic_store(&f->fe.nospc, true);
    /* writes and deletes are refused whole */
    for (int i = 0; i < 5; i++)
        assert_int_equal(write_rows(f->db, 1000 + i * 10, 10), ERR_NOSPC);
    assert_int_equal(store_db_delete_range(f->db, slice_cstr("h"), NULL, T0, T0 + 5000), ERR_NOSPC);
    /* reads keep working, on files and memtables */
    assert_int_equal(count_rows(f->db), 200);
    assert_int_equal(get_rc(f->db, 5), ERR_OK);
    assert_int_equal(get_rc(f->db, 150), ERR_OK);
    assert_int_equal(get_rc(f->db, 1000), ERR_NOTFOUND);
    struct buf m = BUF_INIT;
    store_metrics(f->s, &m);
    buf_append(&m, "", 1);
    assert_non_null(strstr(m.data, "logbucket_write_nospc_total{db=\"d\"} 6\n"));
    buf_destroy(&m);
    /* space is back: the next write just works */
    atomic_store(&f->fe.nospc, false);
    assert_int_equal(write_rows(f->db, 200, 100), ERR_OK);
    assert_int_equal(count_rows(f->db), 300);
    reopen(f);
    assert_int_equal(count_rows(f->db), 300);
    assert_int_equal(get_rc(f->db, 1000), ERR_NOTFOUND);
    assert_int_equal(get_rc(f->db, 250), ERR_OK);
}

static void test_flush_full(void **state)
{
    struct fixture *f = *state;
    atomic_store(&f->fe.nospc_sst, true);
    /* flushes fail; writes go on into the WAL and memtables until the
     * budget is used, then ERR_BUSY (back-pressure), never a lost row */
    int64_t acked = 0;
    int rc = ERR_OK;
    for (int i = 0; i < 400 && rc != ERR_BUSY; i++) {
        rc = write_rows(f->db, acked, 100);
        assert_true(rc == ERR_OK || rc == ERR_BUSY);
        if (rc == ERR_OK)
            acked += 100;
    }
    assert_int_equal(rc, ERR_BUSY);
    assert_true(acked > 0);
    assert_int_equal(count_rows(f->db), (size_t)acked);
    /* space is back: flushes are retried by themselves, writes resume */
    atomic_store(&f->fe.nospc_sst, false);
    for (int i = 0; i < 200 && (rc = write_rows(f->db, acked, 100)) == ERR_BUSY; i++) {
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(rc, ERR_OK);
    acked += 100;
    printf("# %lld rows acknowledged while flushes failed, all kept\n", (long long)acked - 100);
    assert_int_equal(count_rows(f->db), (size_t)acked);
    reopen(f);
    assert_int_equal(count_rows(f->db), (size_t)acked);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_wal_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flush_full, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
