/* The store facade end to end: create/reopen, point reads and newest-wins,
 * both orders, the host index, TTL with an injected clock (rows invisible,
 * then whole files gone after compaction), ERR_BUSY back-pressure and
 * ERR_NOSPC through the fault env, metrics, bucket spread. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "model/key.h"
#include "store/store.h"
#include "store/store_int.h"
#include "store/table/codec.h"
#include "store/table/sst.h"
#include "store/table/zdict.h"
#include "tests/support/store_testutil.h"

#define HOUR (3600LL * 1000000000LL)
#define T0 (1700000000LL * 1000000000LL)

struct fixture {
    char *dir;
    struct store *s;
    struct fault_env fe;
    int64_t now;
    struct store_opts o;
};

static int64_t fake_clock(void *arg)
{
    return __atomic_load_n(&((struct fixture *)arg)->now, __ATOMIC_SEQ_CST);
}

static void fx_open(struct fixture *f)
{
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
}

static void fx_close(struct fixture *f)
{
    store_close(f->s);
    f->s = NULL;
}

static int setup(void **state)
{
    struct fixture *f = xcalloc(1, sizeof *f);
    f->dir = tu_mkdtemp("store");
    fault_env_init(&f->fe, env_posix());
    f->now = T0 + 100 * HOUR;
    store_opts_default(&f->o);
    f->o.dir = f->dir;
    f->o.wal_sync = STORE_SYNC_NONE;
    f->o.env = &f->fe.env;
    f->o.clock = fake_clock;
    f->o.clock_arg = f;
    f->o.memtable_bytes = 4u << 20;
    f->o.write_stall_ns = 500 * 1000000LL; /* short stalls keep test_busy quick */
    fx_open(f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    fx_close(f);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static struct store_db *mkdb(struct fixture *f, const char *name, uint32_t buckets, bool desc,
                             int64_t ttl)
{
    struct db_opts o = {.buckets = buckets, .ts_desc = desc, .ttl_ns = ttl};
    assert_int_equal(store_db_create(f->s, name, &o), ERR_OK);
    struct store_db *db;
    assert_int_equal(store_db_get(f->s, name, &db), ERR_OK);
    return db;
}

static void put1(struct store_db *db, int64_t ts, const char *h, const char *e, const char *v)
{
    struct batch *b = batch_new();
    batch_put(b, ts, slice_cstr(h), slice_cstr(e), slice_cstr(v));
    assert_int_equal(store_write(db, b), ERR_OK);
    batch_free(b);
}

static void expect_get(struct store_db *db, int64_t ts, const char *h, const char *e,
                       const char *want)
{
    struct buf v = BUF_INIT;
    int rc = store_get(db, ts, slice_cstr(h), slice_cstr(e), &v);
    if (!want) {
        assert_int_equal(rc, ERR_NOTFOUND);
    } else {
        assert_int_equal(rc, ERR_OK);
        assert_int_equal(v.len, strlen(want));
        assert_memory_equal(v.data, want, v.len);
    }
    buf_destroy(&v);
}

static size_t count_rows(struct store_db *db)
{
    struct store_snap *snap = store_snapshot(db);
    struct db_opts o;
    store_db_opts(db, &o);
    size_t n = 0;
    for (uint32_t b = 0; b < o.buckets; b++) {
        struct iter *it = store_iter_bucket(snap, b);
        for (it_seek_first(it); it_valid(it); it_next(it))
            n++;
        assert_int_equal(it_status(it), ERR_OK);
        it_destroy(it);
    }
    store_snap_release(snap);
    return n;
}

/* store_write_nosync (InfluxDB 3's no_sync) under wal_sync = always: no
 * fsync before it returns, the row readable at once; store_write syncs. */
static void test_write_nosync(void **state)
{
    struct fixture *f = *state;
    fx_close(f);
    f->o.wal_sync = STORE_SYNC_ALWAYS;
    fx_open(f);
    struct store_db *db = mkdb(f, "ns", 4, true, 0);
    long syncs = atomic_load(&f->fe.syncs);
    struct batch *b = batch_new();
    batch_put(b, T0 + 1, slice_cstr("h"), slice_cstr("e"), slice_cstr("v1"));
    assert_int_equal(store_write_nosync(db, b), ERR_OK);
    batch_free(b);
    assert_int_equal(atomic_load(&f->fe.syncs), syncs);
    expect_get(db, T0 + 1, "h", "e", "v1");
    put1(db, T0 + 2, "h", "e", "v2");
    assert_true(atomic_load(&f->fe.syncs) > syncs);
    expect_get(db, T0 + 2, "h", "e", "v2");
    store_db_unref(db);
}

static void test_basic(void **state)
{
    struct fixture *f = *state;
    struct store_db *db = mkdb(f, "logs", 4, true, 0);
    struct db_opts bad = {.buckets = 0};
    assert_int_equal(store_db_create(f->s, "x", &bad), ERR_INVAL);
    struct db_opts ok = {.buckets = 2, .ts_desc = true};
    assert_int_equal(store_db_create(f->s, "logs", &ok), ERR_EXISTS);
    assert_int_equal(store_db_create(f->s, ".hidden", &ok), ERR_INVAL);
    put1(db, T0 + 1, "web-1", "cpu", "a");
    put1(db, T0 + 1, "web-1", "cpu", "b");
    put1(db, T0 + 2, "web-1", "cpu", "c");
    expect_get(db, T0 + 1, "web-1", "cpu", "b");
    expect_get(db, T0 + 2, "web-1", "cpu", "c");
    expect_get(db, T0 + 3, "web-1", "cpu", NULL);
    struct batch *b = batch_new();
    batch_delete(b, T0 + 2, slice_cstr("web-1"), slice_cstr("cpu"));
    assert_int_equal(store_write(db, b), ERR_OK);
    batch_clear(b);
    char nul[3] = {'a', 0, 'b'};
    batch_put(b, T0, slice_make(nul, 3), slice_cstr("e"), slice_cstr("v"));
    assert_int_equal(store_write(db, b), ERR_INVAL);
    batch_free(b);
    expect_get(db, T0 + 2, "web-1", "cpu", NULL);
    assert_int_equal(store_db_flush(db), ERR_OK);
    expect_get(db, T0 + 1, "web-1", "cpu", "b");
    expect_get(db, T0 + 2, "web-1", "cpu", NULL);
    store_db_unref(db);
    fx_close(f);
    fx_open(f);
    assert_int_equal(store_db_get(f->s, "logs", &db), ERR_OK);
    struct db_opts o;
    store_db_opts(db, &o);
    assert_int_equal(o.buckets, 4);
    assert_true(o.ts_desc);
    expect_get(db, T0 + 1, "web-1", "cpu", "b");
    assert_int_equal(count_rows(db), 1);
    char **names;
    size_t n;
    assert_int_equal(store_db_list(f->s, &names, &n), ERR_OK);
    assert_int_equal(n, 1);
    assert_string_equal(names[0], "logs");
    free(names[0]);
    free(names);
    /* drop while a reference is held: the name is free at once, the old
     * rows stay readable through the reference */
    assert_int_equal(store_db_drop(f->s, "logs"), ERR_OK);
    struct store_db *db2;
    assert_int_equal(store_db_get(f->s, "logs", &db2), ERR_NOTFOUND);
    assert_int_equal(store_db_create(f->s, "logs", &ok), ERR_OK);
    assert_int_equal(store_db_get(f->s, "logs", &db2), ERR_OK);
    expect_get(db, T0 + 1, "web-1", "cpu", "b");
    expect_get(db2, T0 + 1, "web-1", "cpu", NULL);
    store_db_unref(db);
    put1(db2, T0 + 9, "h", "e", "new");
    store_db_unref(db2);
    fx_close(f);
    fx_open(f);
    assert_int_equal(store_db_get(f->s, "logs", &db2), ERR_OK);
    expect_get(db2, T0 + 9, "h", "e", "new");
    expect_get(db2, T0 + 1, "web-1", "cpu", NULL);
    store_db_unref(db2);
    assert_int_equal(store_db_drop(f->s, "logs"), ERR_OK);
    assert_int_equal(store_db_drop(f->s, "logs"), ERR_NOTFOUND);
}

/* A snapshot keeps seeing what it saw, across writes, flushes and
 * compactions. */
static void test_snapshot(void **state)
{
    struct fixture *f = *state;
    struct store_db *db = mkdb(f, "snap", 2, true, 0);
    put1(db, T0 + 1, "h", "e", "v1");
    put1(db, T0 + 2, "h", "e", "gone-later");
    struct store_snap *snap = store_snapshot(db);
    put1(db, T0 + 1, "h", "e", "v2");
    put1(db, T0 + 3, "h", "e", "new");
    struct batch *b = batch_new();
    batch_delete(b, T0 + 2, slice_cstr("h"), slice_cstr("e"));
    assert_int_equal(store_write(db, b), ERR_OK);
    batch_free(b);
    for (int round = 0; round < 3; round++) {
        if (round == 1)
            assert_int_equal(store_db_flush(db), ERR_OK);
        if (round == 2)
            assert_int_equal(store_db_compact(db), ERR_OK);
        struct buf v = BUF_INIT;
        assert_int_equal(store_snap_get(snap, T0 + 1, slice_cstr("h"), slice_cstr("e"), &v),
                         ERR_OK);
        assert_int_equal(v.len, 2);
        assert_memory_equal(v.data, "v1", 2);
        buf_reset(&v);
        assert_int_equal(store_snap_get(snap, T0 + 2, slice_cstr("h"), slice_cstr("e"), &v),
                         ERR_OK);
        buf_reset(&v);
        assert_int_equal(store_snap_get(snap, T0 + 3, slice_cstr("h"), slice_cstr("e"), &v),
                         ERR_NOTFOUND);
        buf_destroy(&v);
        expect_get(db, T0 + 1, "h", "e", "v2");
        expect_get(db, T0 + 2, "h", "e", NULL);
        expect_get(db, T0 + 3, "h", "e", "new");
    }
    store_snap_release(snap);
    store_db_unref(db);
}

/* Rows come out newest first (DESC) or oldest first (ASC); the index
 * lists host/event/ts in the same order. */
static void check_order(struct fixture *f, bool desc)
{
    struct store_db *db = mkdb(f, desc ? "d" : "a", 1, desc, 0);
    for (int i = 0; i < 100; i++)
        put1(db, T0 + i * 1000, i % 2 ? "h1" : "h2", "ev", "v");
    if (desc)
        assert_int_equal(store_db_flush(db), ERR_OK);
    struct store_snap *snap = store_snapshot(db);
    struct iter *it = store_iter_bucket(snap, 0);
    int64_t last = desc ? INT64_MAX : INT64_MIN;
    int n = 0;
    for (it_seek_first(it); it_valid(it); it_next(it), n++) {
        struct key_row r;
        assert_int_equal(key_decode_row(it_key(it), desc, &r), ERR_OK);
        assert_true(desc ? r.ts < last : r.ts > last);
        last = r.ts;
    }
    assert_int_equal(n, 100);
    it_destroy(it);
    it = store_iter_index(snap);
    struct buf pfx = BUF_INIT;
    key_encode_index_prefix(&pfx, slice_cstr("h1"));
    n = 0;
    last = desc ? INT64_MAX : INT64_MIN;
    for (it_seek(it, slice_make(pfx.data, pfx.len));
         it_valid(it) && slice_starts_with(it_key(it), slice_make(pfx.data, pfx.len));
         it_next(it), n++) {
        struct key_row r;
        assert_int_equal(key_decode_index(it_key(it), desc, &r), ERR_OK);
        assert_true(desc ? r.ts < last : r.ts > last);
        assert_int_equal(it_value(it).len, 0);
        last = r.ts;
    }
    assert_int_equal(n, 50);
    assert_int_equal(it_status(it), ERR_OK);
    it_destroy(it);
    buf_destroy(&pfx);
    store_snap_release(snap);
    store_db_unref(db);
}

static void test_order(void **state)
{
    check_order(*state, true);
    check_order(*state, false);
}

/* Rows in six hourly windows, one file each (plus memtable rows): full
 * scans, prefix seeks (bucket|tskey) and direction switches across window
 * boundaries, in both orders. */
static void check_windows(struct fixture *f, bool desc)
{
    struct store_db *db = mkdb(f, desc ? "wd" : "wa", 1, desc, 0);
    int64_t ts[60];
    int n = 0;
    for (int h = 0; h < 6; h++) {
        for (int i = 0; i < 10; i++)
            ts[n++] = T0 + h * HOUR + i * 60000000000LL;
        for (int i = n - 10; i < n; i++)
            put1(db, ts[i], "h", "e", "v");
        if (h != 5)
            assert_int_equal(store_db_flush(db), ERR_OK);
    }
    struct store_snap *snap = store_snapshot(db);
    struct iter *it = store_iter_bucket(snap, 0);
    /* expected key order index -> ts */
    int64_t order[60];
    for (int i = 0; i < 60; i++)
        order[i] = desc ? ts[59 - i] : ts[i];
    int k = 0;
    for (it_seek_first(it); it_valid(it); it_next(it), k++) {
        struct key_row r;
        assert_int_equal(key_decode_row(it_key(it), desc, &r), ERR_OK);
        assert_int_equal(r.ts, order[k]);
    }
    assert_int_equal(k, 60);
    for (it_seek_last(it); it_valid(it); it_prev(it))
        k--;
    assert_int_equal(k, 0);
    struct buf pfx = BUF_INIT;
    for (int i = 0; i < 60; i++) {
        buf_reset(&pfx);
        key_encode_row_prefix(&pfx, 0, order[i], desc);
        it_seek(it, slice_make(pfx.data, pfx.len));
        struct key_row r;
        assert_true(it_valid(it));
        assert_int_equal(key_decode_row(it_key(it), desc, &r), ERR_OK);
        assert_int_equal(r.ts, order[i]);
        if (i > 0) {
            it_prev(it);
            assert_int_equal(key_decode_row(it_key(it), desc, &r), ERR_OK);
            assert_int_equal(r.ts, order[i - 1]);
            it_next(it);
        }
        if (i < 59) {
            it_next(it);
            assert_int_equal(key_decode_row(it_key(it), desc, &r), ERR_OK);
            assert_int_equal(r.ts, order[i + 1]);
        }
    }
    /* a ts between rows seeks to the next one in key order */
    buf_reset(&pfx);
    key_encode_row_prefix(&pfx, 0, T0 + 2 * HOUR + 30000000000LL, desc);
    it_seek(it, slice_make(pfx.data, pfx.len));
    struct key_row r;
    assert_int_equal(key_decode_row(it_key(it), desc, &r), ERR_OK);
    assert_int_equal(r.ts, T0 + 2 * HOUR + (desc ? 0 : 60000000000LL));
    assert_int_equal(it_status(it), ERR_OK);
    buf_destroy(&pfx);
    it_destroy(it);
    store_snap_release(snap);
    store_db_unref(db);
}

/* store_snap_rows_estimate: 600 rows one second apart over 10 minutes,
 * the first 400 flushed (tables), the rest in the memtable: every row over
 * the whole span; about half over half of it (tables and memtables share
 * by their ts spans); none outside it. */
static void check_estimate(struct fixture *f, bool desc)
{
    struct store_db *db = mkdb(f, desc ? "estd" : "esta", 4, desc, 0);
    const int64_t sec = 1000000000LL;
    for (int i = 0; i < 600; i++) {
        put1(db, T0 + i * sec, i % 2 ? "a" : "b", "e", "v");
        if (i == 399)
            assert_int_equal(store_db_flush(db), ERR_OK);
    }
    struct store_snap *snap = store_snapshot(db);
    assert_int_equal(store_snap_rows_estimate(snap, T0, T0 + 599 * sec), 600);
    assert_int_equal(store_snap_rows_estimate(snap, INT64_MIN, INT64_MAX), 600);
    uint64_t half = store_snap_rows_estimate(snap, T0, T0 + 299 * sec);
    assert_true(half >= 240 && half <= 360);
    uint64_t late = store_snap_rows_estimate(snap, T0 + 450 * sec, T0 + 599 * sec);
    assert_true(late >= 120 && late <= 180); /* the memtable's rows */
    assert_int_equal(store_snap_rows_estimate(snap, T0 + 600 * sec, T0 + 700 * sec), 0);
    assert_int_equal(store_snap_rows_estimate(snap, T0 - 100 * sec, T0 - sec), 0);
    store_snap_release(snap);
    store_db_unref(db);
}

static void test_estimate(void **state)
{
    check_estimate(*state, true);
    check_estimate(*state, false);
}

static void test_windows(void **state)
{
    check_windows(*state, true);
    check_windows(*state, false);
}

/* The host index over hosts a, b, c and six hourly windows (one file
 * each, the last in the memtable): store_iter_index_host agrees with the
 * full index iterator on every host's keys, forward, backward, after seeks
 * inside and outside the host's range, and across direction switches. */
static void collect_host(struct iter *it, struct slice pre, struct buf *keys, size_t *n)
{
    *n = 0;
    buf_reset(keys);
    for (it_seek(it, pre); it_valid(it) && slice_starts_with(it_key(it), pre); it_next(it)) {
        buf_append(keys, it_key(it).ptr, it_key(it).len);
        buf_putc(keys, '\n');
        (*n)++;
    }
    assert_int_equal(it_status(it), ERR_OK);
}

static void check_index_host(struct fixture *f, bool desc)
{
    struct store_db *db = mkdb(f, desc ? "ixd" : "ixa", 2, desc, 0);
    const char *hosts[] = {"a", "b", "c"};
    for (int h = 0; h < 6; h++) {
        for (int i = 0; i < 12; i++)
            put1(db, T0 + h * HOUR + i * 60000000000LL, hosts[i % 3], i % 2 ? "x" : "y", "v");
        if (h != 5)
            assert_int_equal(store_db_flush(db), ERR_OK);
    }
    struct store_snap *snap = store_snapshot(db);
    struct iter *all = store_iter_index(snap);
    struct buf pre = BUF_INIT, want = BUF_INIT, got = BUF_INIT, at = BUF_INIT;
    for (int h = 0; h < 3; h++) {
        buf_reset(&pre);
        key_encode_index_prefix(&pre, slice_cstr(hosts[h]));
        struct slice ps = slice_make(pre.data, pre.len);
        struct iter *it = store_iter_index_host(snap, slice_cstr(hosts[h]));
        size_t nw, ng;
        collect_host(all, ps, &want, &nw);
        collect_host(it, ps, &got, &ng);
        assert_int_equal(nw, 24);
        assert_int_equal(ng, nw);
        assert_memory_equal(got.data, want.data, want.len);
        /* backward from just past the host's range, as a bounded range
         * does (memtable keys of other hosts lie around it) */
        size_t back = 0;
        buf_reset(&at);
        buf_append(&at, pre.data, pre.len);
        at.data[at.len - 1] = 1;
        it_seek(it, slice_make(at.data, at.len));
        if (it_valid(it))
            it_prev(it);
        else
            it_seek_last(it);
        for (; it_valid(it) && slice_starts_with(it_key(it), ps); it_prev(it))
            back++;
        assert_int_equal(back, 24);
        /* a seek to a partial tskey lands where the full index lands */
        buf_reset(&at);
        key_encode_index_at(&at, slice_cstr(hosts[h]), T0 + 3 * HOUR, desc);
        it_seek(it, slice_make(at.data, at.len - 5));
        it_seek(all, slice_make(at.data, at.len - 5));
        assert_true(it_valid(it) && it_valid(all));
        assert_true(slice_eq(it_key(it), it_key(all)));
        /* every hour: seek its start, step back and forth */
        for (int w = 0; w < 6; w++) {
            buf_reset(&at);
            key_encode_index_at(&at, slice_cstr(hosts[h]), T0 + w * HOUR, desc);
            it_seek(it, slice_make(at.data, at.len));
            it_seek(all, slice_make(at.data, at.len));
            bool in = it_valid(it) && slice_starts_with(it_key(it), ps);
            assert_int_equal(in, it_valid(all) && slice_starts_with(it_key(all), ps));
            if (!in)
                continue;
            assert_true(slice_eq(it_key(it), it_key(all)));
            it_prev(it);
            it_prev(all);
            if (it_valid(all) && slice_starts_with(it_key(all), ps)) {
                assert_true(it_valid(it));
                assert_true(slice_eq(it_key(it), it_key(all)));
                it_next(it);
                it_next(all);
                assert_true(slice_eq(it_key(it), it_key(all)));
            }
        }
        it_destroy(it);
    }
    it_destroy(all);
    buf_destroy(&pre);
    buf_destroy(&want);
    buf_destroy(&got);
    buf_destroy(&at);
    store_snap_release(snap);
    store_db_unref(db);
}

static void test_index_host(void **state)
{
    check_index_host(*state, true);
    check_index_host(*state, false);
}

/* Every live row of the buckets as "host ts event" lines, and the same
 * from the host index: they must be equal. */
static void rows_and_index(struct store_db *db, uint32_t buckets, struct buf *rows,
                           struct buf *index)
{
    struct store_snap *snap = store_snapshot(db);
    buf_reset(rows);
    buf_reset(index);
    /* rows in (host, ts, event) order: collect per bucket, then compare as
     * sorted sets via the index order, which is exactly that order */
    size_t nrows = 0;
    for (uint32_t b = 0; b < buckets; b++) {
        struct iter *it = store_iter_bucket(snap, b);
        for (it_seek_first(it); it_valid(it); it_next(it))
            nrows++;
        assert_int_equal(it_status(it), ERR_OK);
        it_destroy(it);
    }
    struct iter *ix = store_iter_index(snap);
    size_t nix = 0;
    for (it_seek_first(ix); it_valid(ix); it_next(ix), nix++) {
        struct key_row r;
        assert_int_equal(key_decode_index(it_key(ix), true, &r), ERR_OK);
        struct buf v = BUF_INIT;
        /* every entry names a live row */
        assert_int_equal(store_snap_get(snap, r.ts, r.host, r.event, &v), ERR_OK);
        buf_destroy(&v);
        buf_printf(index, "%.*s %lld %.*s\n", (int)r.host.len, r.host.ptr, (long long)r.ts,
                   (int)r.event.len, r.event.ptr);
    }
    assert_int_equal(it_status(ix), ERR_OK);
    it_destroy(ix);
    assert_int_equal(nix, nrows);
    buf_printf(rows, "%zu rows", nrows);
    store_snap_release(snap);
}

/* A database whose host index has the first development layout (idx/)
 * gets it rebuilt from its rows at open: flushed rows, rows still in the
 * WAL and a deleted row; a hidx/ left by an interrupted rebuild is thrown
 * away first. */
static void test_old_index_rebuilt(void **state)
{
    struct fixture *f = *state;
    struct store_db *db = mkdb(f, "old", 3, true, 0);
    const char *hosts[] = {"web-1", "web-2", "db-1"};
    for (int h = 0; h < 4; h++)
        for (int i = 0; i < 30; i++)
            put1(db, T0 + h * HOUR + i * 1000, hosts[i % 3], i % 2 ? "a" : "b", "v");
    assert_int_equal(store_db_flush(db), ERR_OK);
    for (int i = 0; i < 10; i++)
        put1(db, T0 + 5 * HOUR + i, hosts[i % 3], "c", "w"); /* in the WAL only */
    struct batch *b = batch_new();
    batch_delete(b, T0 + 1000, slice_cstr("web-2"), slice_cstr("a"));
    assert_int_equal(store_write(db, b), ERR_OK);
    batch_free(b);
    struct buf before = BUF_INIT, ibefore = BUF_INIT, after = BUF_INIT, iafter = BUF_INIT;
    rows_and_index(db, 3, &before, &ibefore);
    assert_string_equal(buf_cstr(&before), "129 rows");
    store_db_unref(db);
    fx_close(f);
    /* the old layout's folder, and a partial new index on top */
    struct buf dir = BUF_INIT, junk = BUF_INIT;
    buf_printf(&dir, "%s/old/idx", f->dir);
    assert_int_equal(mkdir(dir.data, 0755), 0);
    buf_printf(&junk, "%s/old/hidx/999999.sst", f->dir);
    FILE *fp = fopen(junk.data, "w");
    assert_non_null(fp);
    fputs("not a table", fp);
    fclose(fp);
    for (int round = 0; round < 2; round++) {
        fx_open(f);
        assert_int_equal(store_db_get(f->s, "old", &db), ERR_OK);
        assert_int_equal(access(dir.data, F_OK), -1);
        assert_int_equal(access(junk.data, F_OK), -1);
        rows_and_index(db, 3, &after, &iafter);
        assert_string_equal(buf_cstr(&after), buf_cstr(&before));
        assert_string_equal(buf_cstr(&iafter), buf_cstr(&ibefore));
        store_db_unref(db);
        fx_close(f);
    }
    fx_open(f);
    buf_destroy(&dir);
    buf_destroy(&junk);
    buf_destroy(&before);
    buf_destroy(&ibefore);
    buf_destroy(&after);
    buf_destroy(&iafter);
}

static void test_ttl(void **state)
{
    struct fixture *f = *state;
    struct store_db *db = mkdb(f, "ttl", 2, true, 0);
    /* ten hourly windows, 50 rows each */
    for (int h = 0; h < 10; h++) {
        struct batch *b = batch_new();
        for (int i = 0; i < 50; i++)
            batch_put(b, T0 + h * HOUR + i * 1000000, slice_cstr("h"), slice_cstr("e"),
                      slice_cstr("value"));
        assert_int_equal(store_write(db, b), ERR_OK);
        batch_free(b);
        assert_int_equal(store_db_flush(db), ERR_OK);
    }
    assert_int_equal(count_rows(db), 500);
    char **files;
    size_t before = 0;
    struct buf dir = BUF_INIT;
    for (int p = 0; p < 2; p++) {
        buf_reset(&dir);
        buf_printf(&dir, "%s/ttl/p%02d", f->dir, p);
        size_t n = tu_list_suffix(dir.data, ".sst", &files);
        before += n;
        for (size_t i = 0; i < n; i++)
            free(files[i]);
        free(files);
    }
    assert_true(before >= 10);
    /* now = T0 + 10h; ttl 4.5h: hours 0..5 expire (hour 5 partly) */
    __atomic_store_n(&f->now, T0 + 10 * HOUR, __ATOMIC_SEQ_CST);
    assert_int_equal(store_db_set_ttl(db, 4 * HOUR + HOUR / 2), ERR_OK);
    size_t visible = count_rows(db);
    assert_true(visible >= 200 && visible <= 250);
    expect_get(db, T0, "h", "e", NULL);
    expect_get(db, T0 + 9 * HOUR, "h", "e", "value");
    assert_int_equal(store_db_compact(db), ERR_OK);
    assert_int_equal(count_rows(db), visible);
    size_t after = 0;
    for (int p = 0; p < 2; p++) {
        buf_reset(&dir);
        buf_printf(&dir, "%s/ttl/p%02d", f->dir, p);
        size_t n = tu_list_suffix(dir.data, ".sst", &files);
        after += n;
        for (size_t i = 0; i < n; i++)
            free(files[i]);
        free(files);
    }
    assert_true(after <= 2 * 5);
    assert_true(after < before);
    buf_destroy(&dir);
    /* TTL survives a reopen */
    store_db_unref(db);
    fx_close(f);
    fx_open(f);
    assert_int_equal(store_db_get(f->s, "ttl", &db), ERR_OK);
    struct db_opts o;
    store_db_opts(db, &o);
    assert_int_equal(o.ttl_ns, 4 * HOUR + HOUR / 2);
    assert_int_equal(count_rows(db), visible);
    store_db_unref(db);
}

static size_t sst_files(struct fixture *f, const char *db, int parts)
{
    size_t total = 0;
    struct buf dir = BUF_INIT;
    for (int p = 0; p < parts; p++) {
        char **files;
        buf_reset(&dir);
        buf_printf(&dir, "%s/%s/p%02d", f->dir, db, p);
        size_t n = tu_list_suffix(dir.data, ".sst", &files);
        total += n;
        for (size_t i = 0; i < n; i++)
            free(files[i]);
        free(files);
    }
    buf_destroy(&dir);
    return total;
}

static uint64_t metric_of(struct fixture *f, const char *name_and_labels)
{
    struct buf m = BUF_INIT;
    store_metrics(f->s, &m);
    const char *at = strstr(buf_cstr(&m), name_and_labels);
    uint64_t v = at ? strtoull(at + strlen(name_and_labels), NULL, 10) : 0;
    buf_destroy(&m);
    return v;
}

static void copy_val(int round, int i, char *v, size_t n)
{
    snprintf(v, n, "round %d row %05d %s", round, i,
             "........................................................................");
}

/* Files of successive flushes hardly overlap: the background compaction of
 * their window copies most of their blocks as stored, yet the result is
 * the merge's: a newer version wins over one in a copied range, a delete
 * removes its row, and every other row is there once, after a reopen too. */
static void test_compaction_copies_blocks(void **state)
{
    struct fixture *f = *state;
    struct store_db *db = mkdb(f, "cp", 1, true, 0);
    const int rows = 3000;
    char v[128], host[16];
    struct batch *b = batch_new();
    for (int r = 0; r < 4; r++) {
        batch_clear(b);
        for (int i = 0; i < rows; i++) {
            snprintf(host, sizeof host, "h-%d", i % 7);
            copy_val(r, i, v, sizeof v);
            batch_put(b, T0 + r * 10000 + i, slice_cstr(host), slice_cstr("e"), slice_cstr(v));
        }
        if (r == 3) { /* reaches back into the ranges of rounds 0 and 1 */
            batch_put(b, T0 + 1500, slice_cstr("h-2"), slice_cstr("e"), slice_cstr("newer"));
            batch_delete(b, T0 + 10000 + 700, slice_cstr("h-0"), slice_cstr("e"));
        }
        assert_int_equal(store_write(db, b), ERR_OK);
        assert_int_equal(store_db_flush(db), ERR_OK);
    }
    batch_free(b);
    for (int i = 0; i < 1000 && sst_files(f, "cp", 1) != 1; i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(sst_files(f, "cp", 1), 1);
    assert_true(metric_of(f, "logbucket_compaction_blocks_copied_total{db=\"cp\"} ") >= 10);
    for (int pass = 0; pass < 2; pass++) {
        assert_int_equal(count_rows(db), (size_t)(4 * rows - 1));
        expect_get(db, T0 + 1500, "h-2", "e", "newer");
        expect_get(db, T0 + 10000 + 700, "h-0", "e", NULL);
        for (int r = 0; r < 4; r++)
            for (int i = 1; i < rows; i += 97) {
                snprintf(host, sizeof host, "h-%d", i % 7);
                copy_val(r, i, v, sizeof v);
                expect_get(db, T0 + r * 10000 + i, host, "e", v);
            }
        store_db_unref(db);
        fx_close(f);
        fx_open(f);
        assert_int_equal(store_db_get(f->s, "cp", &db), ERR_OK);
    }
    store_db_unref(db);
}

/* The .sst names of partition part of db, sorted, joined by spaces. */
static void sst_names(struct fixture *f, const char *db, int part, struct buf *out)
{
    struct buf dir = BUF_INIT;
    buf_printf(&dir, "%s/%s/p%02d", f->dir, db, part);
    char **files;
    size_t n = tu_list_suffix(dir.data, ".sst", &files);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (strcmp(files[j], files[i]) < 0) {
                char *t = files[i];
                files[i] = files[j];
                files[j] = t;
            }
    buf_reset(out);
    for (size_t i = 0; i < n; i++) {
        buf_printf(out, "%s ", files[i]);
        free(files[i]);
    }
    free(files);
    buf_destroy(&dir);
}

static void put_hour(struct store_db *db, int hour, int first, int rows, unsigned *seed)
{
    struct batch *b = batch_new();
    char v[160];
    for (int i = 0; i < rows; i++) {
        int n = 0;
        for (int k = 0; k < 12; k++) { /* not much for LZ4 to find */
            *seed = *seed * 1103515245u + 12345u;
            n += snprintf(v + n, sizeof v - (size_t)n, "%08x", *seed);
        }
        batch_put(b, T0 + hour * HOUR + first + i, slice_cstr("h"), slice_cstr("e"),
                  slice_make(v, (size_t)n));
    }
    assert_int_equal(store_write(db, b), ERR_OK);
    batch_free(b);
    assert_int_equal(store_db_flush(db), ERR_OK);
}

/* Waits until the files of p00 stay the same for 300 ms (at most 10 s). */
static void settle(struct fixture *f, const char *db, struct buf *names)
{
    struct buf now = BUF_INIT;
    sst_names(f, db, 0, names);
    for (int same = 0, i = 0; same < 15 && i < 500; i++) {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
        sst_names(f, db, 0, &now);
        same = strcmp(buf_cstr(&now), buf_cstr(names)) == 0 ? same + 1 : 0;
        buf_reset(names);
        buf_append(names, now.data, now.len);
    }
    buf_destroy(&now);
}

/* Every file named in before (sst_names) is still in after. */
static void expect_kept(struct buf *before, struct buf *after)
{
    const char *old = buf_cstr(before);
    for (const char *sp; (sp = strchr(old, ' ')); old = sp + 1) {
        char name[64];
        snprintf(name, sizeof name, "%.*s ", (int)(sp - old), old);
        assert_non_null(strstr(buf_cstr(after), name));
    }
}

/* Reopens the store with 64 KiB files and a retention check (so
 * want_compact everywhere) every 20 ms, and makes a database whose hour 0
 * took three flushes of ~300 KB and is cold (hours 2 and 3 written after
 * it); returns it once its files stay the same, named in before. */
static struct store_db *cold_hour_db(struct fixture *f, const char *name, unsigned *seed,
                                     struct buf *before)
{
    fx_close(f);
    f->o.max_file_bytes = 64u << 10;
    f->o.retention_check_interval_ns = 20 * 1000000LL;
    fx_open(f);
    struct store_db *db = mkdb(f, name, 1, false, 1000 * HOUR);
    for (int r = 0; r < 3; r++)
        put_hour(db, 0, r * 1500, 1500, seed);
    put_hour(db, 2, 0, 10, seed);
    put_hour(db, 3, 0, 10, seed); /* hour 0 is cold now: merged whole once */
    settle(f, name, before);
    return db;
}

/* The files of p00 of db that are at least min bytes, as sst_names. */
static void sst_names_min(struct fixture *f, const char *db, uint64_t min, struct buf *out)
{
    struct buf all = BUF_INIT, path = BUF_INIT;
    sst_names(f, db, 0, &all);
    buf_reset(out);
    const char *n = buf_cstr(&all);
    for (const char *sp; (sp = strchr(n, ' ')); n = sp + 1) {
        struct stat st;
        buf_reset(&path);
        buf_append(&path, n, (size_t)(sp - n));
        if (stat(buf_cstr(&path), &st) == 0 && (uint64_t)st.st_size >= min)
            buf_printf(out, "%s ", buf_cstr(&path));
    }
    buf_destroy(&all);
    buf_destroy(&path);
}

/* Files a compaction split at max_file_bytes are final: a cold window
 * merged once with LZ4HC is not merged again (its several files used to
 * be rewritten at every retention check), full files of a window being
 * written are not merged with each other (each new one used to rewrite
 * them all), and rows that come late to a cold window are merged without
 * the window's final files. */
static void test_full_files_stay(void **state)
{
    struct fixture *f = *state;
    unsigned seed = 1;
    struct buf before = BUF_INIT, after = BUF_INIT;
    struct store_db *db = cold_hour_db(f, "full", &seed, &before);
    assert_true(metric_of(f, "logbucket_compactions_total{db=\"full\"} ") >= 1);
    size_t files = 0;
    for (const char *c = buf_cstr(&before); *c; c++)
        files += *c == ' ';
    assert_true(files >= 4); /* hour 0 took several files */
    /* full files of the hour being written stay as they are */
    for (int r = 0; r < 5; r++)
        put_hour(db, 3, 10 + r * 1500, 1500, &seed);
    struct timespec ts = {0, 300000000};
    nanosleep(&ts, NULL); /* some fifteen retention checks */
    sst_names(f, "full", 0, &after);
    expect_kept(&before, &after);
    assert_int_equal(count_rows(db), 3 * 1500 + 20 + 5 * 1500);
    /* rows that come late to the cold hour are merged on their own */
    put_hour(db, 0, 3 * 1500, 20, &seed);
    settle(f, "full", &after);
    expect_kept(&before, &after);
    assert_int_equal(count_rows(db), 3 * 1500 + 20 + 5 * 1500 + 20);
    struct buf v = BUF_INIT;
    assert_int_equal(store_get(db, T0 + 3 * 1500 + 7, slice_cstr("h"), slice_cstr("e"), &v),
                     ERR_OK);
    assert_int_equal(v.len, 96);
    buf_destroy(&v);
    buf_destroy(&before);
    buf_destroy(&after);
    store_db_unref(db);
}

/* Rows that keep coming late to a cold window leave a small final file at
 * each merge; those merge among themselves by size, so the window holds a
 * few of them rather than one per late batch, its full files stay, and
 * every row is there once. */
static void test_late_rows_bounded(void **state)
{
    struct fixture *f = *state;
    unsigned seed = 7;
    struct buf before = BUF_INIT, after = BUF_INIT, full = BUF_INIT;
    struct store_db *db = cold_hour_db(f, "late", &seed, &before);
    size_t files = sst_files(f, "late", 1);
    sst_names_min(f, "late", 64u << 10, &full);
    assert_true(strlen(buf_cstr(&full)) > 0);
    enum { LATE = 16 };
    for (int r = 0; r < LATE; r++) {
        put_hour(db, 0, 3 * 1500 + r * 20, 20, &seed);
        settle(f, "late", &after);
    }
    /* one small file per late batch before; size tiers of 4 now */
    assert_true(sst_files(f, "late", 1) <= files + 4);
    expect_kept(&full, &after);
    assert_int_equal(count_rows(db), 3 * 1500 + 20 + LATE * 20);
    for (int r = 0; r < LATE; r++) {
        struct buf v = BUF_INIT;
        assert_int_equal(store_get(db, T0 + 3 * 1500 + r * 20 + 19, slice_cstr("h"),
                                   slice_cstr("e"), &v),
                         ERR_OK);
        assert_int_equal(v.len, 96);
        buf_destroy(&v);
    }
    /* settled: no merge goes on at every retention check */
    struct timespec ts = {0, 300000000};
    nanosleep(&ts, NULL);
    sst_names(f, "late", 0, &before);
    assert_string_equal(buf_cstr(&before), buf_cstr(&after));
    buf_destroy(&before);
    buf_destroy(&after);
    buf_destroy(&full);
    store_db_unref(db);
}

/* The background retention sweep drops expired files without being asked. */
static void test_retention_sweep(void **state)
{
    struct fixture *f = *state;
    fx_close(f);
    f->o.retention_check_interval_ns = 20 * 1000000LL;
    fx_open(f);
    struct store_db *db = mkdb(f, "sweep", 1, false, 2 * HOUR);
    __atomic_store_n(&f->now, T0 + HOUR, __ATOMIC_SEQ_CST);
    for (int h = 0; h < 4; h++) {
        put1(db, T0 + h * HOUR + 5, "h", "e", "v");
        assert_int_equal(store_db_flush(db), ERR_OK);
    }
    /* one file per window, once the cold windows' single flushed files have
     * been rewritten in the background: 4 files on ten polls in a row (a
     * rewrite shows 5 while its new file is written and the old not yet
     * gone; a sanitized build is slow enough to be seen in between) */
    size_t n = 0;
    for (int i = 0, stable = 0; i < 3000 && stable < 10; i++) {
        stable = (n = sst_files(f, "sweep", 1)) == 4 ? stable + 1 : 0;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(n, 4);
    __atomic_store_n(&f->now, T0 + 4 * HOUR + HOUR / 2, __ATOMIC_SEQ_CST);
    for (int i = 0; i < 500 && sst_files(f, "sweep", 1) > 1; i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(sst_files(f, "sweep", 1), 1); /* hours 0..2 are past now - ttl */
    expect_get(db, T0 + 3 * HOUR + 5, "h", "e", "v");
    expect_get(db, T0 + 1 * HOUR + 5, "h", "e", NULL);
    store_db_unref(db);
}

static void test_busy(void **state)
{
    struct fixture *f = *state;
    struct store_db *db = mkdb(f, "busy", 4, true, 0);
    atomic_store(&f->fe.hold_sst, true);
    struct batch *b = batch_new();
    char val[200];
    memset(val, 'x', sizeof val);
    int rc = ERR_OK;
    long written = 0;
    for (int i = 0; i < 200000 && rc == ERR_OK; i++) {
        batch_clear(b);
        for (int k = 0; k < 100; k++)
            batch_put(b, T0 + (int64_t)(i * 100 + k), slice_cstr("h"), slice_cstr("e"),
                      slice_make(val, sizeof val));
        rc = store_write(db, b);
        if (rc == ERR_OK)
            written += 100;
    }
    assert_int_equal(rc, ERR_BUSY);
    struct buf m = BUF_INIT;
    store_metrics(f->s, &m);
    assert_non_null(strstr(buf_cstr(&m), "logbucket_write_busy_total{db=\"busy\"} 1"));
    /* the refused write waited write_stall_ns first, and that is counted */
    const char *st = strstr(buf_cstr(&m), "logbucket_write_stall_seconds_total{db=\"busy\"} ");
    assert_non_null(st);
    double stalled = strtod(st + strlen("logbucket_write_stall_seconds_total{db=\"busy\"} "), NULL);
    assert_true(stalled >= (double)f->o.write_stall_ns / 1e9 * 0.99);
    buf_destroy(&m);
    atomic_store(&f->fe.hold_sst, false);
    for (int tries = 0; (rc = store_write(db, b)) == ERR_BUSY && tries < 5000; tries++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(rc, ERR_OK);
    written += 100;
    assert_int_equal(count_rows(db), (size_t)written);
    /* Once flushing runs again, a write over the budget waits for room
     * instead of failing. */
    for (int i = 0; i < 2000; i++) {
        batch_clear(b);
        for (int k = 0; k < 100; k++)
            batch_put(b, T0 + 100000000 + (int64_t)(i * 100 + k), slice_cstr("h"), slice_cstr("e"),
                      slice_make(val, sizeof val));
        assert_int_equal(store_write(db, b), ERR_OK);
    }
    batch_free(b);
    store_db_unref(db);
}

static void test_nospc(void **state)
{
    struct fixture *f = *state;
    struct store_db *db = mkdb(f, "full", 2, true, 0);
    put1(db, T0 + 1, "h", "e", "one");
    atomic_store(&f->fe.nospc, true);
    struct batch *b = batch_new();
    batch_put(b, T0 + 2, slice_cstr("h"), slice_cstr("e"), slice_cstr("two"));
    batch_put(b, T0 + 3, slice_cstr("h"), slice_cstr("e"), slice_cstr("three"));
    assert_int_equal(store_write(db, b), ERR_NOSPC);
    expect_get(db, T0 + 2, "h", "e", NULL);
    expect_get(db, T0 + 3, "h", "e", NULL);
    atomic_store(&f->fe.nospc, false);
    put1(db, T0 + 4, "h", "e", "four");
    expect_get(db, T0 + 4, "h", "e", "four");
    assert_int_equal(count_rows(db), 2);
    /* a failed append in the middle of the WAL must not poison replay */
    atomic_store(&f->fe.fail_append_at, 1);
    assert_int_equal(store_write(db, b), ERR_IO);
    put1(db, T0 + 5, "h", "e", "five");
    batch_free(b);
    store_db_unref(db);
    fx_close(f);
    fx_open(f);
    assert_int_equal(store_db_get(f->s, "full", &db), ERR_OK);
    assert_int_equal(count_rows(db), 3);
    expect_get(db, T0 + 5, "h", "e", "five");
    store_db_unref(db);
}

/* A full disk during a flush: the flush is retried, writes go on into the
 * WAL and memtables, and nothing is lost. */
static void test_flush_nospc(void **state)
{
    struct fixture *f = *state;
    struct store_db *db = mkdb(f, "fl", 2, true, 0);
    put1(db, T0 + 1, "h", "e", "one");
    atomic_store(&f->fe.nospc_sst, true);
    assert_int_equal(store_db_flush(db), ERR_NOSPC);
    put1(db, T0 + 2, "h", "e", "two");
    expect_get(db, T0 + 1, "h", "e", "one");
    atomic_store(&f->fe.nospc_sst, false);
    int rc;
    for (int i = 0; i < 100 && (rc = store_db_flush(db)) != ERR_OK; i++) {
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(rc, ERR_OK);
    store_db_unref(db);
    fx_close(f);
    fx_open(f);
    assert_int_equal(store_db_get(f->s, "fl", &db), ERR_OK);
    expect_get(db, T0 + 1, "h", "e", "one");
    expect_get(db, T0 + 2, "h", "e", "two");
    store_db_unref(db);
}

static unsigned long long metric_value(struct store *s, const char *name)
{
    struct buf m = BUF_INIT;
    store_metrics(s, &m);
    const char *p = strstr(buf_cstr(&m), name);
    unsigned long long v = p ? strtoull(p + strlen(name), NULL, 10) : 0;
    buf_destroy(&m);
    return v;
}

/* wal_sync=interval: writes return at once, a background fsync follows. */
static void test_sync_interval(void **state)
{
    struct fixture *f = *state;
    fx_close(f);
    f->o.wal_sync = STORE_SYNC_INTERVAL;
    f->o.wal_sync_interval_ns = 10 * 1000000LL;
    fx_open(f);
    struct store_db *db = mkdb(f, "iv", 2, true, 0);
    put1(db, T0, "h", "e", "v");
    expect_get(db, T0, "h", "e", "v");
    const char *name = "logbucket_wal_syncs_total{db=\"iv\"} ";
    for (int i = 0; i < 200 && metric_value(f->s, name) == 0; i++) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    assert_true(metric_value(f->s, name) > 0);
    store_db_unref(db);
}

static void test_metrics(void **state)
{
    struct fixture *f = *state;
    struct store_db *db = mkdb(f, "met", 3, true, 0);
    for (int i = 0; i < 30; i++)
        put1(db, T0 + i, "h", "e", "v");
    assert_int_equal(store_db_flush(db), ERR_OK);
    expect_get(db, T0 + 1, "h", "e", "v");
    struct buf m = BUF_INIT;
    store_metrics(f->s, &m);
    const char *t = buf_cstr(&m);
    assert_non_null(strstr(t, "# TYPE logbucket_bucket_rows_total counter"));
    assert_non_null(strstr(t, "logbucket_bucket_rows_total{db=\"met\",bucket=\"0\"} "));
    assert_non_null(strstr(t, "logbucket_bucket_rows_total{db=\"met\",bucket=\"2\"} "));
    assert_non_null(strstr(t, "logbucket_disk_bytes{db=\"met\"} "));
    assert_null(strstr(t, "logbucket_disk_bytes{db=\"met\"} 0\n"));
    assert_non_null(strstr(t, "logbucket_flushes_total{db=\"met\"} "));
    assert_non_null(strstr(t, "logbucket_block_cache_misses_total "));
    unsigned long long total = 0;
    for (int b = 0; b < 3; b++) {
        char pat[128];
        snprintf(pat, sizeof pat, "logbucket_bucket_rows_total{db=\"met\",bucket=\"%d\"} ", b);
        const char *p = strstr(t, pat);
        assert_non_null(p);
        total += strtoull(p + strlen(pat), NULL, 10);
    }
    assert_int_equal(total, 30);
    for (const char *line = t; *line;) {
        const char *nl = strchr(line, '\n');
        assert_non_null(nl);
        if (line[0] != '#')
            assert_true(strncmp(line, "logbucket_", 10) == 0);
        line = nl + 1;
    }
    buf_destroy(&m);
    store_db_unref(db);
}

/* 1,000,000 timestamps at s, ms, us and ns precision over 7, 10 and 16
 * buckets: every bucket within 5% of the mean. */
static void test_bucket_spread(void **state)
{
    (void)state;
    static const int64_t unit[] = {1000000000LL, 1000000LL, 1000LL, 1LL};
    static const uint32_t nb[] = {7, 10, 16};
    for (size_t u = 0; u < 4; u++)
        for (size_t k = 0; k < 3; k++) {
            uint64_t counts[16] = {0};
            for (int64_t i = 0; i < 1000000; i++)
                counts[key_bucket(T0 + i * unit[u], nb[k])]++;
            double mean = 1000000.0 / nb[k];
            for (uint32_t b = 0; b < nb[k]; b++)
                if (counts[b] < mean * 0.95 || counts[b] > mean * 1.05)
                    fail_msg("unit %lld buckets %u: bucket %u has %llu", (long long)unit[u], nb[k],
                             b, (unsigned long long)counts[b]);
        }
}

/* Adds to types[old][type] the data blocks of every SSTable under dir (one
 * level of partition folders) by their codec type (CODEC_RAW, CODEC_LZ4,
 * CODEC_ZSTD, CODEC_COLZSTD, CODEC_COLZSTD_DICT), old: the file's rows are
 * older than split. dir is a database's: its dictionaries read the blocks
 * that use one. */
static bool count_block_types_try(const char *dir, int64_t split, size_t types[2][5])
{
    bool ok = true;
    struct buf dict_dir = BUF_INIT;
    buf_printf(&dict_dir, "%s/dict", dir);
    atomic_ullong dict_corrupt = 0;
    struct zdict_set *dicts = zdict_set_open(env_posix(), buf_cstr(&dict_dir), 3, &dict_corrupt);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        struct buf sub = BUF_INIT;
        buf_printf(&sub, "%s/%s", dir, e->d_name);
        DIR *pd = opendir(buf_cstr(&sub));
        struct dirent *fe;
        while (pd && (fe = readdir(pd))) {
            size_t n = strlen(fe->d_name);
            if (n < 5 || strcmp(fe->d_name + n - 4, ".sst") != 0)
                continue;
            struct buf path = BUF_INIT;
            buf_printf(&path, "%s/%s", buf_cstr(&sub), fe->d_name);
            atomic_ullong corrupt = 0;
            struct sst_table *t;
            if (sst_open(env_posix(), buf_cstr(&path), NULL, &corrupt, &t) != ERR_OK) {
                ok = false; /* being written, or gone meanwhile */
                buf_destroy(&path);
                continue;
            }
            sst_set_dicts(t, dicts);
            int old = sst_get_props(t)->max_ts < split;
            struct sst_scan *sc = sst_scan_new(t);
            for (; sst_scan_valid(sc); sst_scan_next_block(sc)) {
                int type = codec_stored_type(sst_scan_block_stored(sc));
                assert_true(type >= 0 && type <= 4);
                types[old][type]++;
            }
            assert_int_equal(sst_scan_status(sc), ERR_OK);
            sst_scan_free(sc);
            sst_unref(t);
            buf_destroy(&path);
        }
        if (pd)
            closedir(pd);
        buf_destroy(&sub);
    }
    closedir(d);
    zdict_set_unref(dicts);
    buf_destroy(&dict_dir);
    return ok;
}

/* count_block_types_try of a store that is not writing files. */
static void count_block_types(const char *dir, int64_t split, size_t types[2][5])
{
    assert_true(count_block_types_try(dir, split, types));
}

#define T0_HOUR (T0 - T0 % HOUR) /* the start of T0's hour window */

/* Row i of the 200 compressible rows spread over window w: its ts, host
 * h<i%7>, event e<i%3> and a value naming its ts. */
struct wrow {
    int64_t ts;
    char h[16], e[16], v[128];
};

static void window_row(int64_t w, int i, struct wrow *r)
{
    r->ts = T0_HOUR + w * HOUR + (int64_t)i * (HOUR / 200);
    snprintf(r->h, sizeof r->h, "h%d", i % 7);
    snprintf(r->e, sizeof r->e, "e%d", i % 3);
    snprintf(r->v, sizeof r->v, "GET /api/v1/items/%d status=200 bytes=%d ts=%lld", i % 50, i * 7,
             (long long)r->ts);
}

/* Writes the first n (at most 200) rows of window w. */
static void put_window(struct store_db *db, int64_t w, int n)
{
    assert_true(n <= 200);
    struct batch *b = batch_new();
    for (int i = 0; i < n; i++) {
        struct wrow r;
        window_row(w, i, &r);
        batch_put(b, r.ts, slice_cstr(r.h), slice_cstr(r.e), slice_cstr(r.v));
    }
    assert_int_equal(store_write(db, b), ERR_OK);
    batch_free(b);
}

/* Every 17th row of the first n of window w reads back. */
static void expect_window(struct store_db *db, int64_t w, int n)
{
    for (int i = 0; i < n; i += 17) {
        struct wrow r;
        window_row(w, i, &r);
        expect_get(db, r.ts, r.h, r.e, r.v);
    }
}

/* zstd blocks of the files older (1) or newer (0) than the split, in their
 * columnar form or not */
#define ZSTD_BLOCKS(t, old)                                                                        \
    ((t)[old][CODEC_ZSTD] + (t)[old][CODEC_COLZSTD] + (t)[old][CODEC_COLZSTD_DICT])

/* count_block_types with the store closed (no background compaction
 * writing a file meanwhile), the store then opened again with level. */
static void count_closed(struct fixture *f, struct store_db **db, const char *dir, int level,
                         int64_t split, size_t types[2][5])
{
    if (*db)
        store_db_unref(*db);
    fx_close(f);
    memset(types, 0, 2 * 5 * sizeof types[0][0]);
    count_block_types(dir, split, types);
    f->o.cold_zstd_level = level;
    fx_open(f);
    assert_int_equal(store_db_get(f->s, "codec", db), ERR_OK);
}

/* The final form's codecs (store_opts.cold_zstd_level): with zstd, the two
 * newest windows of a forced (or settled) merge get LZ4HC and the older
 * ones zstd; a newest window that ages is rewritten with zstd by the
 * background compaction; LZ4HC files read by a store set to zstd and zstd
 * files by one set to LZ4HC; flushes stay LZ4 whatever it is. */
static void test_cold_codec_switch(void **state)
{
    struct fixture *f = *state;
    fx_close(f);
    f->o.cold_zstd_level = 0;
    fx_open(f);
    struct store_db *db = mkdb(f, "codec", 2, true, 0);
    struct buf dir = BUF_INIT;
    buf_printf(&dir, "%s/codec", f->dir);
    size_t t[2][5];
    const int64_t w2 = T0_HOUR + 2 * HOUR; /* windows 0 and 1 are behind the newest two */
    for (int64_t w = 0; w < 4; w++)
        put_window(db, w, 180);
    assert_int_equal(store_db_flush(db), ERR_OK);
    count_closed(f, &db, buf_cstr(&dir), 0, w2, t);
    assert_true(t[1][CODEC_LZ4] > 0 && t[0][CODEC_LZ4] > 0);
    assert_int_equal(ZSTD_BLOCKS(t, 0) + ZSTD_BLOCKS(t, 1), 0);
    assert_int_equal(store_db_compact(db), ERR_OK);
    assert_int_equal(count_rows(db), 4 * 180);

    /* zstd from now on: the LZ4HC files read as they are */
    count_closed(f, &db, buf_cstr(&dir), 3, w2, t);
    assert_true(t[1][CODEC_LZ4] > 0 && t[0][CODEC_LZ4] > 0);
    assert_int_equal(ZSTD_BLOCKS(t, 0) + ZSTD_BLOCKS(t, 1), 0);
    for (int64_t w = 0; w < 4; w++)
        expect_window(db, w, 180);
    /* late rows in every window: the forced compaction merges each whole,
     * the two older ones with zstd, the newest two with LZ4HC */
    for (int64_t w = 0; w < 4; w++)
        put_window(db, w, 200);
    assert_int_equal(store_db_flush(db), ERR_OK);
    assert_int_equal(store_db_compact(db), ERR_OK);
    assert_int_equal(count_rows(db), 4 * 200);
    count_closed(f, &db, buf_cstr(&dir), 3, w2, t);
    assert_true(ZSTD_BLOCKS(t, 1) > 0);
    /* the data blocks in their columnar form (too few for a dictionary) */
    assert_true(t[1][CODEC_COLZSTD] > 0);
    assert_int_equal(t[1][CODEC_LZ4], 0);
    assert_true(t[0][CODEC_LZ4] > 0);
    assert_int_equal(ZSTD_BLOCKS(t, 0), 0);

    /* a write two windows on ages windows 2 and 3: the background rewrites
     * them with zstd (their files are "hot"), without a forced compaction */
    put_window(db, 5, 30);
    assert_int_equal(store_db_flush(db), ERR_OK);
    const int64_t w4 = T0_HOUR + 4 * HOUR;
    for (int i = 0; i < 500; i++) { /* at most 5 s, the store open: files come and go */
        memset(t, 0, sizeof t);
        if (count_block_types_try(buf_cstr(&dir), w4, t) && t[1][CODEC_LZ4] == 0)
            break;
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(t[1][CODEC_LZ4], 0);
    assert_true(ZSTD_BLOCKS(t, 1) > 0);
    for (int64_t w = 0; w < 4; w++)
        expect_window(db, w, 200);
    expect_window(db, 5, 30);

    /* and back: the zstd files read by a store set to LZ4HC */
    size_t z = ZSTD_BLOCKS(t, 1);
    count_closed(f, &db, buf_cstr(&dir), 0, w4, t);
    for (int64_t w = 0; w < 4; w++)
        expect_window(db, w, 200);
    assert_int_equal(count_rows(db), 4 * 200 + 30);
    count_closed(f, &db, buf_cstr(&dir), 0, w4, t);
    assert_int_equal(ZSTD_BLOCKS(t, 1), z);
    store_db_unref(db);
    buf_destroy(&dir);
}

/* A database's cold blocks train its zstd dictionary (here from any number
 * of samples), the blocks written after it use it (type 4) and read back,
 * also after a reopen; a damaged dictionary makes them corrupt, counted,
 * and a new dictionary never takes its id. */
static void test_cold_dictionary(void **state)
{
    struct fixture *f = *state;
    zdict_test_set_min_samples(1);
    struct store_db *db = mkdb(f, "codec", 2, true, 0);
    struct buf dir = BUF_INIT, dict = BUF_INIT;
    buf_printf(&dir, "%s/codec", f->dir);
    buf_printf(&dict, "%s/codec/dict/000001.zd", f->dir);
    size_t t[2][5];
    const int64_t w22 = T0_HOUR + 22 * HOUR;
    for (int round = 0; round < 2; round++) {
        for (int64_t w = 0; w < 24; w++)
            put_window(db, w, round ? 200 : 150);
        assert_int_equal(store_db_flush(db), ERR_OK);
        assert_int_equal(store_db_compact(db), ERR_OK);
    }
    assert_true(env_exists(env_posix(), buf_cstr(&dict)));
    count_closed(f, &db, buf_cstr(&dir), 3, w22, t);
    assert_true(t[1][CODEC_COLZSTD_DICT] > 0);
    for (int64_t w = 0; w < 24; w++)
        expect_window(db, w, 200);
    assert_int_equal(count_rows(db), 24 * 200);

    /* damaged: its blocks are corrupt, the others read */
    store_db_unref(db);
    fx_close(f);
    char *data;
    size_t len;
    assert_int_equal(env_read_all(env_posix(), buf_cstr(&dict), 1 << 20, &data, &len), ERR_OK);
    data[len - 1] ^= 0x55;
    struct env_file *fw;
    assert_int_equal(env_open_append(env_posix(), buf_cstr(&dict), true, &fw), ERR_OK);
    assert_int_equal(env_append(fw, data, len), ERR_OK);
    env_close(fw);
    free(data);
    fx_open(f);
    assert_int_equal(store_db_get(f->s, "codec", &db), ERR_OK);
    assert_true(atomic_load(&db->m.corrupt) > 0);
    struct wrow r;
    window_row(0, 0, &r);
    struct buf out = BUF_INIT;
    assert_int_equal(store_get(db, r.ts, slice_cstr(r.h), slice_cstr(r.e), &out), ERR_CORRUPT);
    expect_window(db, 23, 200); /* the newest windows are LZ4HC */
    buf_destroy(&out);
    store_db_unref(db);
    zdict_test_set_min_samples(0);
    buf_destroy(&dir);
    buf_destroy(&dict);
}

int main(void)
{
    log_set_level(LOG_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_basic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_windows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_estimate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_host, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_index_rebuilt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ttl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retention_sweep, setup, teardown),
        cmocka_unit_test_setup_teardown(test_busy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nospc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flush_nospc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync_interval, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compaction_copies_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_files_stay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_rows_bounded, setup, teardown),
        cmocka_unit_test(test_bucket_spread),
        cmocka_unit_test_setup_teardown(test_write_nosync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cold_codec_switch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cold_dictionary, setup, teardown),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
