/* Retention with an injected clock: 48 hours of events, the TTL cut from
 * 30d to 24h at run time; from then on no iterator (buckets, host index)
 * and no point read returns a row older than 24 h; the sweep deletes the
 * old windows' files and the bytes on disk fall to about half (printed as
 * a TAP comment). Also store_db_stats (rows, bytes, ts range, tombstones)
 * and TTLs surviving a restart. */
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
#include "model/key.h"
#include "store/store.h"
#include "tests/support/store_testutil.h"

#define MINUTE (60LL * 1000000000LL)
#define HOUR (60 * MINUTE)
#define DAY (24 * HOUR)
#define T0 (1700000000LL * 1000000000LL / HOUR * HOUR) /* on a window edge */
#define SPAN_H 48
#define BUCKETS 4

struct fixture {
    char *dir;
    struct store *s;
    int64_t now;
    struct store_opts o;
};

static int64_t fake_clock(void *arg)
{
    return __atomic_load_n(&((struct fixture *)arg)->now, __ATOMIC_SEQ_CST);
}

static void set_now(struct fixture *f, int64_t now)
{
    __atomic_store_n(&f->now, now, __ATOMIC_SEQ_CST);
}

static int setup(void **state)
{
    struct fixture *f = xcalloc(1, sizeof *f);
    f->dir = tu_mkdtemp("retention");
    f->now = T0 + SPAN_H * HOUR;
    store_opts_default(&f->o);
    f->o.dir = f->dir;
    f->o.wal_sync = STORE_SYNC_NONE;
    f->o.clock = fake_clock;
    f->o.clock_arg = f;
    f->o.memtable_bytes = 8u << 20;
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    store_close(f->s);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static const char *const hosts[] = {"web-1", "web-2"};
static const char *const events[] = {"info", "debug"};

/* One row per minute per host and event over SPAN_H hours from T0, with a
 * value that does not compress to nothing; flushed every 4 hours. */
static size_t fill(struct store_db *db)
{
    struct batch *b = batch_new();
    char val[96];
    size_t n = 0;
    for (int64_t m = 0; m < SPAN_H * 60; m++) {
        for (int h = 0; h < 2; h++)
            for (int e = 0; e < 2; e++) {
                snprintf(val, sizeof val, "GET /api/%lld/%d/%d status=%lld took=%lldus",
                         (long long)(m * 7919 % 100003), h, e, (long long)(200 + m % 7),
                         (long long)(m * 31 % 9973));
                batch_put(b, T0 + m * MINUTE, slice_cstr(hosts[h]), slice_cstr(events[e]),
                          slice_cstr(val));
                n++;
            }
        if (batch_count(b) >= 400) {
            assert_int_equal(store_write(db, b), ERR_OK);
            batch_clear(b);
        }
        if (m % 240 == 239)
            assert_int_equal(store_db_flush(db), ERR_OK);
    }
    assert_int_equal(store_write(db, b), ERR_OK);
    assert_int_equal(store_db_flush(db), ERR_OK);
    batch_free(b);
    return n;
}

static size_t sst_count(struct fixture *f, const char *db)
{
    size_t total = 0;
    struct buf dir = BUF_INIT;
    for (int p = 0; p <= BUCKETS; p++) {
        char **files;
        buf_reset(&dir);
        if (p == BUCKETS)
            buf_printf(&dir, "%s/%s/hidx", f->dir, db);
        else
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

/* Every row of every bucket and every index entry is at or after cutoff;
 * returns the number of bucket rows. */
static size_t check_iters(struct store_db *db, int64_t cutoff)
{
    struct store_snap *snap = store_snapshot(db);
    size_t n = 0, nix = 0;
    for (uint32_t b = 0; b < BUCKETS; b++) {
        struct iter *it = store_iter_bucket(snap, b);
        for (it_seek_first(it); it_valid(it); it_next(it)) {
            struct key_row r;
            assert_int_equal(key_decode_row(it_key(it), true, &r), ERR_OK);
            assert_true(r.ts >= cutoff);
            n++;
        }
        assert_int_equal(it_status(it), ERR_OK);
        /* backwards too */
        for (it_seek_last(it); it_valid(it); it_prev(it)) {
            struct key_row r;
            assert_int_equal(key_decode_row(it_key(it), true, &r), ERR_OK);
            assert_true(r.ts >= cutoff);
        }
        it_destroy(it);
    }
    struct iter *ix = store_iter_index(snap);
    for (it_seek_first(ix); it_valid(ix); it_next(ix)) {
        struct key_row k;
        assert_int_equal(key_decode_index(it_key(ix), true, &k), ERR_OK);
        assert_true(k.ts >= cutoff);
        nix++;
    }
    assert_int_equal(it_status(ix), ERR_OK);
    it_destroy(ix);
    assert_int_equal(n, nix);
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

static void check_gets(struct store_db *db, int64_t cutoff)
{
    for (int64_t m = 0; m < SPAN_H * 60; m += 13) {
        int64_t ts = T0 + m * MINUTE;
        int want = ts >= cutoff ? ERR_OK : ERR_NOTFOUND;
        assert_int_equal(get_rc(db, ts, "web-1", "info"), want);
        assert_int_equal(get_rc(db, ts, "web-2", "debug"), want);
    }
}

static void test_ttl_cut_at_run_time(void **state)
{
    struct fixture *f = *state;
    struct db_opts o = {.buckets = BUCKETS, .ts_desc = true, .ttl_ns = 30 * DAY};
    assert_int_equal(store_db_create(f->s, "logs", &o), ERR_OK);
    struct store_db *db;
    assert_int_equal(store_db_get(f->s, "logs", &db), ERR_OK);
    size_t n = fill(db);
    assert_int_equal(check_iters(db, INT64_MIN), n);
    check_gets(db, INT64_MIN);
    /* settled (every window in its final form), so that the ratio below
     * does not depend on how far the background threads got */
    assert_int_equal(store_db_compact(db), ERR_OK);

    struct store_db_stats before, after;
    assert_int_equal(store_db_stats(db, &before), ERR_OK);
    assert_int_equal(before.rows, n);
    assert_int_equal(before.oldest_ts, T0);
    assert_int_equal(before.newest_ts, T0 + (SPAN_H * 60 - 1) * MINUTE);
    size_t files_before = sst_count(f, "logs");

    /* the TTL is cut at run time: at once, nothing older than 24 h */
    int64_t now = T0 + SPAN_H * HOUR + 10 * MINUTE;
    set_now(f, now);
    assert_int_equal(store_db_set_ttl(db, DAY), ERR_OK);
    int64_t cutoff = now - DAY;
    size_t visible = check_iters(db, cutoff);
    assert_true(visible < n / 2 + 2 * 2 * 60);
    assert_true(visible > n / 2 - 2 * 2 * 60);
    check_gets(db, cutoff);

    /* the sweep deletes the old windows' files */
    assert_int_equal(store_db_compact(db), ERR_OK);
    assert_int_equal(check_iters(db, cutoff), visible);
    check_gets(db, cutoff);
    assert_int_equal(store_db_stats(db, &after), ERR_OK);
    assert_true(after.oldest_ts >= cutoff);
    assert_int_equal(after.rows, visible);
    assert_true(after.bytes_reclaimed > 0);
    size_t files_after = sst_count(f, "logs");
    double ratio = (double)after.bytes / (double)before.bytes;
    printf("# bytes before %llu after %llu ratio %.3f (files %zu -> %zu, rows %zu -> %zu, "
           "reclaimed %llu)\n",
           (unsigned long long)before.bytes, (unsigned long long)after.bytes, ratio, files_before,
           files_after, n, visible, (unsigned long long)after.bytes_reclaimed);
    assert_true(files_after < files_before);
    /* about half the rows go, and their bytes with them */
    assert_true(ratio > 0.4 && ratio < 0.6);

    /* the cut TTL survives a restart, and so does the visibility */
    store_db_unref(db);
    store_close(f->s);
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
    assert_int_equal(store_db_get(f->s, "logs", &db), ERR_OK);
    store_db_opts(db, &o);
    assert_int_equal(o.ttl_ns, DAY);
    assert_int_equal(o.buckets, BUCKETS);
    assert_true(o.ts_desc);
    assert_int_equal(check_iters(db, cutoff), visible);
    store_db_unref(db);
}

/* The background sweep (retention thread) does the same without a call. */
static void test_sweep_thread(void **state)
{
    struct fixture *f = *state;
    store_close(f->s);
    f->o.retention_check_interval_ns = 20 * 1000000LL;
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
    struct db_opts o = {.buckets = BUCKETS, .ts_desc = true, .ttl_ns = 30 * DAY};
    assert_int_equal(store_db_create(f->s, "bg", &o), ERR_OK);
    struct store_db *db;
    assert_int_equal(store_db_get(f->s, "bg", &db), ERR_OK);
    fill(db);
    /* Settled first (every window compacted), so that the bytes before
     * do not depend on how far the background threads got. */
    assert_int_equal(store_db_compact(db), ERR_OK);
    struct store_db_stats st;
    assert_int_equal(store_db_stats(db, &st), ERR_OK);
    uint64_t before = st.sst_bytes;
    int64_t now = T0 + SPAN_H * HOUR;
    set_now(f, now);
    assert_int_equal(store_db_set_ttl(db, DAY), ERR_OK);
    for (int i = 0; i < 3000; i++) { /* 30 s at most: slow under sanitizers */
        assert_int_equal(store_db_stats(db, &st), ERR_OK);
        if (st.oldest_ts >= now - DAY - HOUR && st.bytes_reclaimed > 0 &&
            st.sst_bytes < before * 2 / 3)
            break;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    printf("# sweep: bytes before %llu after %llu, oldest +%lld h, reclaimed %llu\n",
           (unsigned long long)before, (unsigned long long)st.sst_bytes,
           (long long)((st.oldest_ts - T0) / HOUR), (unsigned long long)st.bytes_reclaimed);
    assert_true(st.oldest_ts >= now - DAY - HOUR); /* whole windows gone */
    assert_true(st.sst_bytes < before * 2 / 3);
    check_iters(db, now - DAY);
    store_db_unref(db);
}

static void test_stats_deletes(void **state)
{
    struct fixture *f = *state;
    struct db_opts o = {.buckets = 2, .ts_desc = false, .ttl_ns = 0};
    assert_int_equal(store_db_create(f->s, "st", &o), ERR_OK);
    struct store_db *db;
    assert_int_equal(store_db_get(f->s, "st", &db), ERR_OK);
    struct store_db_stats st;
    assert_int_equal(store_db_stats(db, &st), ERR_OK);
    assert_int_equal(st.rows, 0);
    assert_true(st.is_empty);
    struct batch *b = batch_new();
    for (int i = 0; i < 100; i++)
        batch_put(b, T0 + i, slice_cstr("h"), slice_cstr("e"), slice_cstr("v"));
    assert_int_equal(store_write(db, b), ERR_OK);
    batch_clear(b);
    assert_int_equal(store_db_stats(db, &st), ERR_OK);
    assert_int_equal(st.rows, 100);
    assert_int_equal(st.oldest_ts, T0);
    assert_int_equal(st.newest_ts, T0 + 99);
    assert_true(st.bytes > 0); /* the WAL */
    for (int i = 0; i < 10; i++)
        batch_delete(b, T0 + i, slice_cstr("h"), slice_cstr("e"));
    assert_int_equal(store_write(db, b), ERR_OK);
    batch_free(b);
    assert_int_equal(store_db_stats(db, &st), ERR_OK);
    assert_int_equal(st.rows_deleted, 10);
    assert_int_equal(st.tombstones, 10);
    assert_int_equal(store_db_flush(db), ERR_OK);
    assert_int_equal(store_db_stats(db, &st), ERR_OK);
    assert_int_equal(st.tombstones, 10);
    assert_true(st.sst_bytes > 0);
    assert_int_equal(store_db_compact(db), ERR_OK);
    assert_int_equal(store_db_stats(db, &st), ERR_OK);
    assert_int_equal(st.tombstones, 0);
    assert_int_equal(st.rows, 90);
    /* metrics carry the same figures */
    struct buf m = BUF_INIT;
    store_metrics(f->s, &m);
    buf_append(&m, "", 1);
    assert_non_null(strstr(m.data, "logbucket_db_rows{db=\"st\"} 90\n"));
    assert_non_null(strstr(m.data, "logbucket_rows_deleted_total{db=\"st\"} 10\n"));
    assert_non_null(strstr(m.data, "logbucket_tombstones{db=\"st\"} 0\n"));
    assert_non_null(strstr(m.data, "logbucket_disk_bytes{db=\"st\"} "));
    assert_non_null(strstr(m.data, "logbucket_db_oldest_ts_seconds{db=\"st\"} "));
    assert_non_null(strstr(m.data, "logbucket_retention_bytes_reclaimed_total{db=\"st\"} 0\n"));
    buf_destroy(&m);
    store_db_unref(db);
}

/* Rows of event e (all hosts) visible through the bucket iterators. */
static size_t count_event(struct store_db *db, const char *e, int64_t *oldest)
{
    struct store_snap *snap = store_snapshot(db);
    size_t n = 0;
    *oldest = INT64_MAX;
    for (uint32_t b = 0; b < BUCKETS; b++) {
        struct iter *it = store_iter_bucket(snap, b);
        for (it_seek_first(it); it_valid(it); it_next(it)) {
            struct key_row r;
            assert_int_equal(key_decode_row(it_key(it), true, &r), ERR_OK);
            if (slice_eq(r.event, slice_cstr(e))) {
                n++;
                if (r.ts < *oldest)
                    *oldest = r.ts;
            }
        }
        assert_int_equal(it_status(it), ERR_OK);
        it_destroy(it);
    }
    store_snap_release(snap);
    return n;
}

static void test_event_ttl(void **state)
{
    struct fixture *f = *state;
    struct db_opts o = {.buckets = BUCKETS, .ts_desc = true, .ttl_ns = 30 * DAY};
    assert_int_equal(store_db_create(f->s, "ev", &o), ERR_OK);
    struct store_db *db;
    assert_int_equal(store_db_get(f->s, "ev", &db), ERR_OK);
    size_t n = fill(db); /* 48 h, events info and debug */
    int64_t now = T0 + SPAN_H * HOUR;
    set_now(f, now);
    int64_t oldest;
    assert_int_equal(count_event(db, "debug", &oldest), n / 2);
    assert_int_equal(store_db_set_event_ttl(db, slice_cstr("debug"), HOUR), ERR_OK);
    /* at once: debug keeps its last hour, info everything */
    assert_int_equal(count_event(db, "debug", &oldest), 2 * 60);
    assert_true(oldest >= now - HOUR);
    assert_int_equal(count_event(db, "info", &oldest), n / 2);
    assert_int_equal(get_rc(db, now - 2 * HOUR, "web-1", "debug"), ERR_NOTFOUND);
    assert_int_equal(get_rc(db, now - 2 * HOUR, "web-1", "info"), ERR_OK);
    assert_int_equal(get_rc(db, now - 30 * MINUTE, "web-1", "debug"), ERR_OK);
    /* the index hides them too */
    struct store_snap *snap = store_snapshot(db);
    struct iter *ix = store_iter_index(snap);
    size_t nix = 0;
    for (it_seek_first(ix); it_valid(ix); it_next(ix))
        nix++;
    assert_int_equal(nix, n / 2 + 2 * 60);
    it_destroy(ix);
    store_snap_release(snap);
    /* an hour later the debug rows of the next hour expire too */
    now += HOUR;
    set_now(f, now);
    assert_int_equal(count_event(db, "debug", &oldest), 0);
    /* removing the override brings back what compaction has not dropped
     * (background compaction may have dropped older ones already) */
    struct batch *b0 = batch_new();
    batch_put(b0, now - 5 * HOUR, slice_cstr("web-9"), slice_cstr("debug"), slice_cstr("x"));
    assert_int_equal(store_write(db, b0), ERR_OK);
    batch_free(b0);
    assert_int_equal(get_rc(db, now - 5 * HOUR, "web-9", "debug"), ERR_NOTFOUND);
    assert_int_equal(store_db_set_event_ttl(db, slice_cstr("debug"), 0), ERR_OK);
    assert_int_equal(get_rc(db, now - 5 * HOUR, "web-9", "debug"), ERR_OK);
    assert_true(count_event(db, "debug", &oldest) >= 1);
    assert_int_equal(store_db_set_event_ttl(db, slice_cstr("debug"), HOUR), ERR_OK);
    assert_int_equal(store_db_set_event_ttl(db, slice_cstr("trace"), 2 * HOUR), ERR_OK);
    assert_int_equal(store_db_set_event_ttl(db, slice_cstr("nothing"), 0), ERR_OK);
    assert_int_equal(store_db_set_event_ttl(db, slice_cstr("bad"), -1), ERR_INVAL);
    /* compaction drops the debug rows: stats count only info */
    assert_int_equal(store_db_compact(db), ERR_OK);
    struct store_db_stats st;
    assert_int_equal(store_db_stats(db, &st), ERR_OK);
    assert_int_equal(st.rows, n / 2 + 1); /* + web-9's row, in the memtable */
    assert_true(st.rows_expired >= n / 2);
    assert_int_equal(store_db_set_event_ttl(db, slice_cstr("debug"), 0), ERR_OK);
    assert_int_equal(count_event(db, "debug", &oldest), 1); /* web-9 */
    assert_int_equal(store_db_set_event_ttl(db, slice_cstr("debug"), HOUR), ERR_OK);

    /* restart: every option and override is back */
    assert_int_equal(store_db_set_ttl(db, 40 * DAY), ERR_OK);
    store_db_unref(db);
    store_close(f->s);
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
    assert_int_equal(store_db_get(f->s, "ev", &db), ERR_OK);
    store_db_opts(db, &o);
    assert_int_equal(o.ttl_ns, 40 * DAY);
    assert_int_equal(o.buckets, BUCKETS);
    struct store_event_ttl *v;
    size_t k = store_db_event_ttls(db, &v);
    assert_int_equal(k, 2);
    assert_string_equal(v[0].event, "trace");
    assert_int_equal(v[0].ttl_ns, 2 * HOUR);
    assert_string_equal(v[1].event, "debug");
    assert_int_equal(v[1].ttl_ns, HOUR);
    store_event_ttls_free(v, k);
    /* new debug rows expire after an hour; info rows written with them stay */
    struct batch *b = batch_new();
    batch_put(b, now - 10 * MINUTE, slice_cstr("web-1"), slice_cstr("debug"), slice_cstr("x"));
    batch_put(b, now - 10 * MINUTE, slice_cstr("web-1"), slice_cstr("info"), slice_cstr("x"));
    assert_int_equal(store_write(db, b), ERR_OK);
    batch_free(b);
    assert_int_equal(get_rc(db, now - 10 * MINUTE, "web-1", "debug"), ERR_OK);
    set_now(f, now + HOUR);
    assert_int_equal(get_rc(db, now - 10 * MINUTE, "web-1", "debug"), ERR_NOTFOUND);
    assert_int_equal(get_rc(db, now - 10 * MINUTE, "web-1", "info"), ERR_OK);
    /* all overrides removed: back to version 1 metadata, still readable */
    assert_int_equal(store_db_set_event_ttl(db, slice_cstr("debug"), 0), ERR_OK);
    assert_int_equal(store_db_set_event_ttl(db, slice_cstr("trace"), 0), ERR_OK);
    store_db_unref(db);
    store_close(f->s);
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
    assert_int_equal(store_db_get(f->s, "ev", &db), ERR_OK);
    k = store_db_event_ttls(db, &v);
    assert_int_equal(k, 0);
    store_event_ttls_free(v, k);
    struct buf meta = BUF_INIT;
    buf_printf(&meta, "%s/ev/META", f->dir);
    assert_int_equal(tu_file_size(meta.data), 28);
    buf_destroy(&meta);
    store_db_unref(db);
}

/* The background sweep drops rows past an event TTL from windows it would
 * otherwise leave alone (each already one file). */
static void test_event_ttl_sweep(void **state)
{
    struct fixture *f = *state;
    store_close(f->s);
    f->o.retention_check_interval_ns = 20 * 1000000LL;
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
    struct db_opts o = {.buckets = BUCKETS, .ts_desc = true, .ttl_ns = 0};
    assert_int_equal(store_db_create(f->s, "evs", &o), ERR_OK);
    struct store_db *db;
    assert_int_equal(store_db_get(f->s, "evs", &db), ERR_OK);
    size_t n = fill(db);
    assert_int_equal(store_db_compact(db), ERR_OK); /* one file per window */
    set_now(f, T0 + SPAN_H * HOUR);
    assert_int_equal(store_db_set_event_ttl(db, slice_cstr("debug"), HOUR), ERR_OK);
    struct store_db_stats st;
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(store_db_stats(db, &st), ERR_OK);
        if (st.rows <= n / 2 + 2 * 2 * 60)
            break;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    assert_true(st.rows <= n / 2 + 2 * 2 * 60);
    assert_true(st.rows >= n / 2);
    int64_t oldest;
    assert_int_equal(count_event(db, "info", &oldest), n / 2);
    store_db_unref(db);
}

/* max_disk_bytes: over budget, the oldest windows go first, whole. */
static void test_disk_guard(void **state)
{
    struct fixture *f = *state;
    struct db_opts o = {.buckets = BUCKETS, .ts_desc = true, .ttl_ns = 0};
    assert_int_equal(store_db_create(f->s, "full", &o), ERR_OK);
    struct store_db *db;
    assert_int_equal(store_db_get(f->s, "full", &db), ERR_OK);
    size_t n = fill(db);
    assert_int_equal(store_db_compact(db), ERR_OK); /* no budget yet: nothing dropped */
    struct store_db_stats before, after;
    assert_int_equal(store_db_stats(db, &before), ERR_OK);
    assert_int_equal(before.rows, n);
    assert_int_equal(before.oldest_ts, T0);
    /* reopen with a budget of 40 % of what is there */
    store_db_unref(db);
    store_close(f->s);
    f->o.max_disk_bytes = before.bytes * 2 / 5;
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
    assert_int_equal(store_db_get(f->s, "full", &db), ERR_OK);
    assert_int_equal(store_db_compact(db), ERR_OK);
    assert_int_equal(store_db_stats(db, &after), ERR_OK);
    printf("# disk guard: budget %llu, bytes before %llu after %llu, oldest ts +%lld h\n",
           (unsigned long long)f->o.max_disk_bytes, (unsigned long long)before.bytes,
           (unsigned long long)after.bytes, (long long)((after.oldest_ts - T0) / HOUR));
    assert_true(after.bytes <= f->o.max_disk_bytes);
    assert_true(after.bytes > f->o.max_disk_bytes / 2); /* window by window, not all */
    assert_int_equal(after.newest_ts, before.newest_ts);
    assert_true(after.oldest_ts > T0 + 24 * HOUR);
    assert_int_equal(after.oldest_ts % HOUR, 0); /* whole windows */
    /* what is left is exactly the windows from the new oldest on */
    size_t left = check_iters(db, after.oldest_ts);
    assert_int_equal(left, (size_t)((T0 + SPAN_H * HOUR - after.oldest_ts) / MINUTE) * 4);
    assert_int_equal(get_rc(db, T0, "web-1", "info"), ERR_NOTFOUND);
    assert_int_equal(get_rc(db, T0 + (SPAN_H - 1) * HOUR, "web-1", "info"), ERR_OK);
    struct buf m = BUF_INIT;
    store_metrics(f->s, &m);
    buf_append(&m, "", 1);
    assert_non_null(strstr(m.data, "logbucket_disk_guard_windows_dropped_total{db=\"full\"} "));
    assert_null(strstr(m.data, "logbucket_disk_guard_windows_dropped_total{db=\"full\"} 0\n"));
    buf_destroy(&m);
    store_db_unref(db);

    /* a database's own budget, persisted, wins over the store's */
    o.ttl_ns = 0;
    assert_int_equal(store_db_create(f->s, "own", &o), ERR_OK);
    assert_int_equal(store_db_get(f->s, "own", &db), ERR_OK);
    fill(db);
    assert_int_equal(store_db_set_max_disk_bytes(db, before.bytes / 4), ERR_OK);
    store_db_unref(db);
    store_close(f->s);
    f->o.max_disk_bytes = 0;
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
    assert_int_equal(store_db_get(f->s, "own", &db), ERR_OK);
    assert_int_equal(store_db_max_disk_bytes(db), before.bytes / 4);
    assert_int_equal(store_db_compact(db), ERR_OK);
    assert_int_equal(store_db_stats(db, &after), ERR_OK);
    assert_true(after.bytes <= before.bytes / 4);
    assert_int_equal(after.newest_ts, before.newest_ts);
    store_db_unref(db);
    /* "full" keeps what it has: no budget of its own, none in the store */
    assert_int_equal(store_db_get(f->s, "full", &db), ERR_OK);
    assert_int_equal(store_db_max_disk_bytes(db), 0);
    store_db_unref(db);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ttl_cut_at_run_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_thread, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stats_deletes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_ttl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_ttl_sweep, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_guard, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
