/* Concurrency and injected faults: writer threads sharing fsyncs (group
 * commit) while readers scan and flushes run; failing the Nth append or
 * sync during flushes and compactions gives a clean error, and a reopen
 * finds every acknowledged row. */
#include <pthread.h>
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

#define T0 (1700000000LL * 1000000000LL)
#define WRITERS 4
#define BATCHES 150
#define ROWS 10

struct shared {
    struct store_db *db;
    atomic_bool stop;
    atomic_int errors;
};

struct warg {
    struct shared *sh;
    int id;
};

static int64_t ts_of(int w, int b, int r)
{
    return T0 + ((int64_t)w * BATCHES * ROWS + b * ROWS + r) * 1000;
}

static void *writer(void *p)
{
    struct warg *a = p;
    struct batch *b = batch_new();
    for (int n = 0; n < BATCHES; n++) {
        batch_clear(b);
        for (int r = 0; r < ROWS; r++)
            batch_put(b, ts_of(a->id, n, r), slice_cstr("host"), slice_cstr("ev"),
                      slice_cstr("value"));
        int rc;
        while ((rc = store_write(a->sh->db, b)) == ERR_BUSY)
            ;
        if (rc)
            atomic_fetch_add(&a->sh->errors, 1);
    }
    batch_free(b);
    return NULL;
}

static void *reader(void *p)
{
    struct shared *sh = p;
    while (!atomic_load(&sh->stop)) {
        struct store_snap *snap = store_snapshot(sh->db);
        for (uint32_t k = 0; k < 4; k++) {
            struct iter *it = store_iter_bucket(snap, k);
            int64_t last = INT64_MAX;
            for (it_seek_first(it); it_valid(it); it_next(it)) {
                int64_t ts = (int64_t)(it_key(it).ptr[2] & 0x7f); /* touch the key */
                (void)ts;
                if (it_key(it).len < 12)
                    atomic_fetch_add(&sh->errors, 1);
            }
            if (it_status(it))
                atomic_fetch_add(&sh->errors, 1);
            (void)last;
            it_destroy(it);
        }
        store_snap_release(snap);
    }
    return NULL;
}

static void *flusher(void *p)
{
    struct shared *sh = p;
    while (!atomic_load(&sh->stop)) {
        if (store_db_flush(sh->db) || store_db_compact(sh->db))
            atomic_fetch_add(&sh->errors, 1);
    }
    return NULL;
}

static size_t count_all(struct store_db *db)
{
    struct store_snap *snap = store_snapshot(db);
    size_t n = 0;
    for (uint32_t k = 0; k < 4; k++) {
        struct iter *it = store_iter_bucket(snap, k);
        for (it_seek_first(it); it_valid(it); it_next(it))
            n++;
        assert_int_equal(it_status(it), ERR_OK);
        it_destroy(it);
    }
    store_snap_release(snap);
    return n;
}

static void test_threads(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("conc");
    struct store_opts o;
    store_opts_default(&o);
    o.dir = dir;
    o.wal_sync = STORE_SYNC_ALWAYS;
    o.memtable_bytes = 1u << 20;
    struct store *s;
    assert_int_equal(store_open(&o, &s), ERR_OK);
    struct db_opts d = {.buckets = 4, .ts_desc = true};
    assert_int_equal(store_db_create(s, "c", &d), ERR_OK);
    struct shared sh = {.stop = false, .errors = 0};
    assert_int_equal(store_db_get(s, "c", &sh.db), ERR_OK);
    pthread_t w[WRITERS], rd, fl;
    struct warg args[WRITERS];
    pthread_create(&rd, NULL, reader, &sh);
    pthread_create(&fl, NULL, flusher, &sh);
    for (int i = 0; i < WRITERS; i++) {
        args[i] = (struct warg){&sh, i};
        pthread_create(&w[i], NULL, writer, &args[i]);
    }
    for (int i = 0; i < WRITERS; i++)
        pthread_join(w[i], NULL);
    atomic_store(&sh.stop, true);
    pthread_join(rd, NULL);
    pthread_join(fl, NULL);
    assert_int_equal(atomic_load(&sh.errors), 0);
    assert_int_equal(count_all(sh.db), WRITERS * BATCHES * ROWS);
    struct buf m = BUF_INIT;
    store_metrics(s, &m);
    const char *p = strstr(buf_cstr(&m), "logbucket_wal_syncs_total{db=\"c\"} ");
    assert_non_null(p);
    unsigned long long syncs =
        strtoull(p + strlen("logbucket_wal_syncs_total{db=\"c\"} "), NULL, 10);
    assert_true(syncs > 0 && syncs <= WRITERS * BATCHES);
    buf_destroy(&m);
    store_db_unref(sh.db);
    store_close(s);
    assert_int_equal(store_open(&o, &s), ERR_OK);
    assert_int_equal(store_db_get(s, "c", &sh.db), ERR_OK);
    assert_int_equal(count_all(sh.db), WRITERS * BATCHES * ROWS);
    store_db_unref(sh.db);
    store_close(s);
    tu_rmtree(dir);
    free(dir);
}

/* For N = 1, 2, ...: fail the Nth append (or sync) after the rows are
 * written, while flushing and compacting; then reopen without faults. */
static void fault_loop(bool syncs)
{
    for (long n = 1; n <= 12; n++) {
        char *dir = tu_mkdtemp("fault");
        struct fault_env fe;
        fault_env_init(&fe, env_posix());
        struct store_opts o;
        store_opts_default(&o);
        o.dir = dir;
        o.wal_sync = STORE_SYNC_ALWAYS;
        o.env = &fe.env;
        struct store *s;
        struct store_db *db;
        assert_int_equal(store_open(&o, &s), ERR_OK);
        struct db_opts d = {.buckets = 2, .ts_desc = true};
        assert_int_equal(store_db_create(s, "f", &d), ERR_OK);
        assert_int_equal(store_db_get(s, "f", &db), ERR_OK);
        struct batch *b = batch_new();
        int acked = 0;
        for (int round = 0; round < 3; round++) {
            batch_clear(b);
            for (int r = 0; r < 50; r++)
                batch_put(b, T0 + (round * 50 + r) * 1000000000LL / 10, slice_cstr("h"),
                          slice_cstr("e"), slice_cstr("v"));
            if (round == 2) {
                if (syncs)
                    atomic_store(&fe.fail_sync_at, n);
                else
                    atomic_store(&fe.fail_append_at, n);
            }
            int rc = store_write(db, b);
            if (rc == ERR_OK)
                acked = (round + 1) * 50;
            else
                assert_true(rc == ERR_IO);
            rc = store_db_flush(db);
            assert_true(rc == ERR_OK || rc == ERR_IO);
            rc = store_db_compact(db);
            assert_true(rc == ERR_OK || rc == ERR_IO);
        }
        batch_free(b);
        store_db_unref(db);
        store_close(s);
        atomic_store(&fe.fail_sync_at, 0);
        atomic_store(&fe.fail_append_at, 0);
        o.env = NULL;
        assert_int_equal(store_open(&o, &s), ERR_OK);
        assert_int_equal(store_db_get(s, "f", &db), ERR_OK);
        struct buf v = BUF_INIT;
        for (int i = 0; i < acked; i++) {
            buf_reset(&v);
            assert_int_equal(store_get(db, T0 + i * 1000000000LL / 10, slice_cstr("h"),
                                       slice_cstr("e"), &v),
                             ERR_OK);
        }
        buf_destroy(&v);
        store_db_unref(db);
        store_close(s);
        tu_rmtree(dir);
        free(dir);
    }
}

/* One round of the power-loss loop: a workload of writes (each
 * acknowledged once durable), flushes, a range delete and compactions,
 * with the power lost at the Nth sync; the files are then cut to what the
 * disk holds, and every acknowledged row must read back. Returns whether
 * the loss happened (the workload has fewer syncs than n otherwise). */
static bool power_loss_round(long n, bool fail_rename)
{
    char *dir = tu_mkdtemp("power");
    struct fault_env fe;
    fault_env_init(&fe, env_posix());
    fault_env_track(&fe);
    struct store_opts o;
    store_opts_default(&o);
    o.dir = dir;
    o.wal_sync = STORE_SYNC_ALWAYS;
    o.env = &fe.env;
    struct store *s;
    struct store_db *db;
    assert_int_equal(store_open(&o, &s), ERR_OK);
    struct db_opts d = {.buckets = 2, .ts_desc = true};
    assert_int_equal(store_db_create(s, "f", &d), ERR_OK);
    assert_int_equal(store_db_get(s, "f", &db), ERR_OK);
    if (fail_rename)
        atomic_store(&fe.fail_rename_at, n);
    else
        atomic_store(&fe.crash_at_sync, n);
    bool acked[120] = {false};
    struct batch *b = batch_new();
    for (int round = 0; round < 6; round++) {
        batch_clear(b);
        for (int r = 0; r < 20; r++) {
            int i = round * 20 + r;
            batch_put(b, T0 + i * 1000000000LL, slice_cstr(i % 2 ? "a" : "b"), slice_cstr("e"),
                      slice_cstr("v"));
        }
        if (store_write(db, b) == ERR_OK)
            for (int r = 0; r < 20; r++)
                acked[round * 20 + r] = true;
        if (round % 2 == 1)
            (void)store_db_flush(db);
        if (round == 3) {
            struct slice ev = slice_cstr("nothing-here");
            (void)store_db_delete_range(db, slice_cstr("zz"), &ev, 0, 1);
        }
        if (round == 4)
            (void)store_db_compact(db);
    }
    batch_free(b);
    store_db_unref(db);
    store_close(s);
    bool fired = atomic_load(&fe.crashed) || (fail_rename && atomic_load(&fe.fail_rename_at) == 0);
    if (!fail_rename)
        fault_env_power_loss(&fe);
    fault_env_destroy(&fe);
    o.env = NULL;
    assert_int_equal(store_open(&o, &s), ERR_OK);
    assert_int_equal(store_db_get(s, "f", &db), ERR_OK);
    struct buf v = BUF_INIT;
    for (int i = 0; i < 120; i++) {
        if (!acked[i])
            continue;
        buf_reset(&v);
        int rc = store_get(db, T0 + i * 1000000000LL, slice_cstr(i % 2 ? "a" : "b"),
                           slice_cstr("e"), &v);
        if (rc != ERR_OK)
            fail_msg("power lost at sync %ld (rename fault: %d): acknowledged row %d: %s", n,
                     fail_rename, i, err_name(rc));
    }
    buf_destroy(&v);
    store_db_unref(db);
    store_close(s);
    tu_rmtree(dir);
    free(dir);
    return fired;
}

/* Power lost at every sync of the workload in turn (then every rename
 * failing in turn), until a round runs without the fault firing: every
 * acknowledged row survives, and the fault fired in every earlier round. */
static void test_power_loss_every_sync(void **state)
{
    (void)state;
    /* under ThreadSanitizer every third sync: the store's threads are the
     * same in each round, the release and ASan passes try every one */
    long step = tu_tsan() ? 3 : 1;
    for (int kind = 0; kind < 2; kind++) {
        long n = 1, rounds = 1;
        for (; power_loss_round(n, kind == 1); rounds++)
            n += step;
        assert_true(n > 5); /* the workload syncs and renames many times */
        print_message("# %s: %ld rounds, the fault fired in each but the last\n",
                      kind ? "a failing rename" : "power lost at a sync", rounds);
    }
}

static void test_fail_append(void **state)
{
    (void)state;
    fault_loop(false);
}

static void test_fail_sync(void **state)
{
    (void)state;
    fault_loop(true);
}

int main(void)
{
    log_set_level(LOG_ERROR + 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_fail_append),
        cmocka_unit_test(test_fail_sync),
        cmocka_unit_test(test_power_loss_every_sync),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
