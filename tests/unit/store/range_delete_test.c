/* Range tombstones (store_db_delete_range): one record hides every row of a
 * host (and event) in a ts range at once for bucket iterators, the host
 * index and point reads; snapshots taken before keep seeing the rows; rows
 * written afterwards stay visible, also across a restart (sequences after
 * the tombstone's); compaction drops the covered rows and then purges the
 * tombstone; a damaged TOMBSTONES file stops the open. */
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
#include "model/key.h"
#include "store/store.h"
#include "tests/support/store_fixture.h"
#include "tests/support/store_testutil.h"

#define SEC 1000000000LL
#define T0 (1700000000LL * SEC)
#define N 2000 /* seconds of rows */
#define BUCKETS 4

struct fixture {
    char *dir;
    struct store *s;
    struct store_opts o;
    struct store_db *db;
};

static int64_t fixed_clock(void *arg)
{
    (void)arg;
    return T0 + N * SEC;
}

static void reopen(struct fixture *f)
{
    store_db_unref(f->db);
    store_close(f->s);
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
    assert_int_equal(store_db_get(f->s, "d", &f->db), ERR_OK);
}

static int setup(void **state)
{
    struct fixture *f = xcalloc(1, sizeof *f);
    f->dir = tu_mkdtemp("rdel");
    store_opts_default(&f->o);
    f->o.dir = f->dir;
    f->o.wal_sync = STORE_SYNC_ALWAYS;
    f->o.clock = fixed_clock;
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
    struct db_opts o = {.buckets = BUCKETS, .ts_desc = true, .ttl_ns = 0};
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

static const char *const hosts[] = {"a", "b"};
static const char *const events[] = {"x", "y"};

static void put(struct store_db *db, int64_t ts, const char *h, const char *e, const char *v)
{
    struct batch *b = batch_new();
    batch_put(b, ts, slice_cstr(h), slice_cstr(e), slice_cstr(v));
    assert_int_equal(store_write(db, b), ERR_OK);
    batch_free(b);
}

/* rows of (host, event) seen by buckets and index, which must agree */
static size_t count(struct store_snap *snap, const char *h, const char *e, int64_t lo, int64_t hi)
{
    size_t n = 0, nix = 0;
    for (uint32_t b = 0; b < BUCKETS; b++) {
        struct iter *it = store_iter_bucket(snap, b);
        for (it_seek_first(it); it_valid(it); it_next(it)) {
            struct key_row r;
            assert_int_equal(key_decode_row(it_key(it), true, &r), ERR_OK);
            if (slice_eq(r.host, slice_cstr(h)) && slice_eq(r.event, slice_cstr(e)) && r.ts >= lo &&
                r.ts <= hi)
                n++;
        }
        assert_int_equal(it_status(it), ERR_OK);
        size_t back = 0;
        for (it_seek_last(it); it_valid(it); it_prev(it)) {
            struct key_row r;
            assert_int_equal(key_decode_row(it_key(it), true, &r), ERR_OK);
            if (slice_eq(r.host, slice_cstr(h)) && slice_eq(r.event, slice_cstr(e)) && r.ts >= lo &&
                r.ts <= hi)
                back++;
        }
        it_destroy(it);
        (void)back;
    }
    struct iter *ix = store_iter_index(snap);
    for (it_seek_first(ix); it_valid(ix); it_next(ix)) {
        struct key_row r;
        assert_int_equal(key_decode_index(it_key(ix), true, &r), ERR_OK);
        if (slice_eq(r.host, slice_cstr(h)) && slice_eq(r.event, slice_cstr(e)) && r.ts >= lo &&
            r.ts <= hi)
            nix++;
    }
    assert_int_equal(it_status(ix), ERR_OK);
    it_destroy(ix);
    assert_int_equal(n, nix);
    return n;
}

static size_t count_now(struct store_db *db, const char *h, const char *e, int64_t lo, int64_t hi)
{
    struct store_snap *snap = store_snapshot(db);
    size_t n = count(snap, h, e, lo, hi);
    store_snap_release(snap);
    return n;
}

static int get_rc(struct store_db *db, int64_t ts, const char *h, const char *e)
{
    struct buf v = BUF_INIT;
    int rc = store_get(db, ts, slice_cstr(h), slice_cstr(e), &v);
    buf_destroy(&v);
    return rc;
}

#define LO (T0 + 100 * SEC)
#define HI (T0 + 1199 * SEC)

/* the state after the two deletes below, whatever the storage */
static void check_deleted(struct store_db *db)
{
    assert_int_equal(count_now(db, "a", "x", LO, HI), 1); /* the rewrite at 150 s */
    assert_int_equal(count_now(db, "a", "y", LO, HI), 0);
    assert_int_equal(count_now(db, "a", "x", T0, LO - 1), 100);
    assert_int_equal(count_now(db, "a", "y", HI + 1, INT64_MAX), N - 1200);
    assert_int_equal(count_now(db, "b", "x", INT64_MIN, INT64_MAX), 0);
    assert_int_equal(count_now(db, "b", "y", INT64_MIN, INT64_MAX), N);
    assert_int_equal(get_rc(db, T0 + 500 * SEC, "a", "x"), ERR_NOTFOUND);
    assert_int_equal(get_rc(db, T0 + 150 * SEC, "a", "x"), ERR_OK);
    assert_int_equal(get_rc(db, T0 + 99 * SEC, "a", "x"), ERR_OK);
    assert_int_equal(get_rc(db, T0 + 1200 * SEC, "a", "y"), ERR_OK);
    assert_int_equal(get_rc(db, T0 + 5 * SEC, "b", "x"), ERR_NOTFOUND);
    assert_int_equal(get_rc(db, T0 + 5 * SEC, "b", "y"), ERR_OK);
}

static void test_range_delete(void **state)
{
    struct fixture *f = *state;
    struct batch *b = batch_new();
    for (int64_t i = 0; i < N; i++) {
        for (int h = 0; h < 2; h++)
            for (int e = 0; e < 2; e++)
                batch_put(b, T0 + i * SEC, slice_cstr(hosts[h]), slice_cstr(events[e]),
                          slice_cstr("v"));
        if (i == N / 2) { /* half in files, half in the memtable */
            assert_int_equal(store_write(f->db, b), ERR_OK);
            batch_clear(b);
            assert_int_equal(store_db_flush(f->db), ERR_OK);
        }
    }
    assert_int_equal(store_write(f->db, b), ERR_OK);
    batch_free(b);
    struct store_snap *before = store_snapshot(f->db);

    /* host a over a range; host b, event x, everything */
    assert_int_equal(store_db_delete_range(f->db, slice_cstr("a"), NULL, LO, HI), ERR_OK);
    struct slice ex = slice_cstr("x");
    assert_int_equal(store_db_delete_range(f->db, slice_cstr("b"), &ex, INT64_MIN, INT64_MAX),
                     ERR_OK);
    assert_int_equal(store_db_range_tombstones(f->db), 2);
    /* a row written after the delete, in its range */
    put(f->db, T0 + 150 * SEC, "a", "x", "new");
    check_deleted(f->db);
    /* the older snapshot still sees everything */
    assert_int_equal(count(before, "a", "x", LO, HI), 1100);
    assert_int_equal(count(before, "b", "x", INT64_MIN, INT64_MAX), N);
    struct buf v = BUF_INIT;
    assert_int_equal(store_snap_get(before, T0 + 500 * SEC, slice_cstr("a"), slice_cstr("x"), &v),
                     ERR_OK);
    buf_destroy(&v);
    store_snap_release(before);
    assert_int_equal(store_db_delete_range(f->db, slice_cstr("a"), NULL, 5, 4), ERR_INVAL);

    /* restart: the tombstones and the later row's visibility survive */
    reopen(f);
    assert_int_equal(store_db_range_tombstones(f->db), 2);
    check_deleted(f->db);
    /* writes after the restart sort after the tombstones */
    put(f->db, T0 + 160 * SEC, "a", "y", "after restart");
    assert_int_equal(get_rc(f->db, T0 + 160 * SEC, "a", "y"), ERR_OK);
    assert_int_equal(count_now(f->db, "a", "y", LO, HI), 1);
    struct batch *d = batch_new();
    batch_delete(d, T0 + 160 * SEC, slice_cstr("a"), slice_cstr("y"));
    assert_int_equal(store_write(f->db, d), ERR_OK);
    batch_free(d);

    /* compaction drops the covered rows, then the tombstones */
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    struct store_db_stats st;
    assert_int_equal(store_db_compact(f->db), ERR_OK);
    check_deleted(f->db);
    assert_int_equal(store_db_compact(f->db), ERR_OK); /* purge once flushed and merged */
    assert_int_equal(store_db_range_tombstones(f->db), 0);
    check_deleted(f->db);
    assert_int_equal(store_db_stats(f->db, &st), ERR_OK);
    /* a: 100 + 1 + (N-1200) per event except the one rewrite; b: N of y */
    assert_int_equal(st.rows, 2 * (100 + N - 1200) + 1 + N);
    assert_int_equal(st.range_tombstones, 0);
    reopen(f);
    check_deleted(f->db);
    assert_int_equal(store_db_range_tombstones(f->db), 0);
}

static void test_damaged_file(void **state)
{
    struct fixture *f = *state;
    put(f->db, T0, "a", "x", "v");
    assert_int_equal(store_db_delete_range(f->db, slice_cstr("a"), NULL, T0, T0), ERR_OK);
    /* the file as the delete left it: closing may purge the tombstone
     * (the row is flushed past it), so it is put back once closed */
    struct buf path = BUF_INIT;
    buf_printf(&path, "%s/d/TOMBSTONES", f->dir);
    size_t saved_len = 0;
    char *saved = tu_read_file(path.data, &saved_len);
    assert_non_null(saved);
    assert_true(saved_len > 20);
    store_db_unref(f->db);
    f->db = NULL;
    store_close(f->s);
    f->s = NULL;
    assert_int_equal(tu_write_file(path.data, saved, saved_len), 0);
    free(saved);
    assert_int_equal(tu_flip_byte(path.data, 14, 0x40), 0);
    struct store *s = NULL;
    /* the database is offline, the store opens */
    assert_int_equal(store_open(&f->o, &s), ERR_OK);
    struct store_db *db;
    assert_int_equal(store_db_get(s, "d", &db), ERR_OFFLINE);
    struct buf why = BUF_INIT;
    assert_true(store_db_offline_reason(s, "d", &why));
    assert_non_null(strstr(buf_cstr(&why), "TOMBSTONES"));
    buf_destroy(&why);
    assert_int_equal(tu_offline_rc(s, "d"), ERR_CORRUPT); /* and closes s */
    assert_int_equal(tu_flip_byte(path.data, 14, 0x40), 0);
    buf_destroy(&path);
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
    assert_int_equal(store_db_get(f->s, "d", &f->db), ERR_OK);
    assert_int_equal(get_rc(f->db, T0, "a", "x"), ERR_NOTFOUND);
}

/* STORE_MAX_RANGE_DELETES deletes of rows still in the memtable, and more
 * after them: the store freezes the memtables, the flush and the purge make
 * room, and the next delete is taken instead of failing with ERR_BUSY until
 * something else flushes. */
static void test_full_tombstones_make_room(void **state)
{
    struct fixture *f = *state;
    char host[32];
    for (int i = 0; i < 8; i++) {
        snprintf(host, sizeof host, "h%d", i);
        put(f->db, T0 + i * SEC, host, "x", "v");
    }
    for (int i = 0; i < STORE_MAX_RANGE_DELETES + 40; i++) {
        snprintf(host, sizeof host, "h%d", i);
        int rc = store_db_delete_range(f->db, slice_cstr(host), NULL, T0, T0 + N * SEC);
        if (rc != ERR_OK)
            fail_msg("delete %d: %s", i, err_name(rc));
    }
    assert_true(store_db_range_tombstones(f->db) <= STORE_MAX_RANGE_DELETES);
    for (int i = 0; i < 8; i++) {
        snprintf(host, sizeof host, "h%d", i);
        assert_int_equal(count_now(f->db, host, "x", INT64_MIN, INT64_MAX), 0);
    }
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_range_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_tombstones_make_room, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
