/* Row counts by event and minute (store/counts.h; FORMAT.md, "Catalog
 * block", counts) and store_snap_window_counts: a table's counts are its
 * visible rows (the newest version of each key, unless a delete) whatever
 * versions it holds; what a snapshot counts plus what it reads over the
 * rest of a range is what it reads over the whole range, with memtables,
 * deletes, range tombstones, per-event TTLs, flushes and compactions
 * between; windows with memtable rows or tombstones are read, not
 * counted, those with a few late rows in tables of their own counted and
 * corrected; counts of two windows or of a bad key are not written. */
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
#include "model/record.h"
#include "store/catalog.h"
#include "store/counts.h"
#include "store/ikey.h"
#include "store/store.h"
#include "store/table/sst.h"
#include "tests/support/store_fixture.h"
#include "tests/support/store_testutil.h"

#define SEC 1000000000LL
#define MINUTE (60 * SEC)
#define HOUR (3600 * SEC)
#define T0 (1700000000LL * SEC / HOUR * HOUR) /* a window start */
#define NWIN 3
#define NMIN (NWIN * 60)
#define NEV 4
#define NHOST 5
#define BUCKETS 3

static uint64_t rng = 88172645463325252ULL;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int64_t fixed_clock(void *arg)
{
    (void)arg;
    return T0 + 10 * HOUR;
}

static const char *const events[NEV] = {"e0", "e1", "e2", "cpu.load"};

static int event_index(struct slice e)
{
    for (int i = 0; i < NEV; i++)
        if (slice_eq(e, slice_cstr(events[i])))
            return i;
    fail_msg("unknown event %.*s", (int)e.len, e.ptr);
    return -1;
}

/* rows by event and minute of [T0, T0 + NWIN hours) */
struct tally {
    uint64_t n[NEV][NMIN];
};

static void tally_add(struct tally *t, struct slice event, int64_t ts, uint64_t rows)
{
    assert_true(ts >= T0 && ts < T0 + NWIN * HOUR);
    t->n[event_index(event)][(ts - T0) / MINUTE] += rows;
}

/* --- a table's counts, from the catalog builder --- */

static int tally_count(void *arg, struct slice event, int64_t minute, uint64_t rows)
{
    assert_int_equal(minute % MINUTE, 0);
    tally_add(arg, event, minute, rows);
    return 0;
}

struct entry {
    char ukey[96];
    size_t len;
    uint64_t seq;
    int kind;
    int64_t ts;
    int ev;
};

static int cmp_entry(const void *x, const void *y)
{
    const struct entry *a = x, *b = y;
    int c = slice_cmp(slice_make(a->ukey, a->len), slice_make(b->ukey, b->len));
    if (c)
        return c;
    return a->seq < b->seq ? 1 : a->seq > b->seq ? -1 : 0; /* newest first */
}

/* Feeds entries (sorted) to a catalog builder; the parsed counts, or
 * NULL if it wrote none. */
static struct cat_file *build(struct entry *e, size_t n, const struct sst_props *props,
                              bool with_bad_key)
{
    struct cat_builder *cb = cat_builder_new(true);
    struct sst_observer *o = cat_builder_observer(cb);
    struct buf k = BUF_INIT, raw = BUF_INIT, rec = BUF_INIT;
    struct rec_field fl = {.key = slice_cstr("x"), .type = REC_INT, .v.i = 1};
    rec_encode(&rec, NULL, 0, &fl, 1);
    for (size_t i = 0; i < n; i++) {
        buf_reset(&k);
        ikey_append(&k, slice_make(e[i].ukey, e[i].len), e[i].seq, e[i].kind);
        struct slice value =
            e[i].kind == IKEY_DEL ? slice_make("", 0) : slice_make(rec.data, rec.len);
        if (with_bad_key && i == n / 2)
            o->entry(o, slice_make("xx", 2), value, e[i].ts);
        o->entry(o, slice_make(k.data, k.len), value, e[i].ts);
    }
    o->finish(o, 1 << 20, &raw);
    struct cat_file *c = NULL;
    if (raw.len)
        assert_int_equal(cat_file_parse(slice_make(raw.data, raw.len), props, "t", &c), ERR_OK);
    buf_destroy(&k);
    buf_destroy(&raw);
    buf_destroy(&rec);
    cat_builder_free(cb);
    return c;
}

/* Random keys in one window, each with 1-4 versions of random kinds: the
 * counts are the keys whose newest version is no delete. */
static void test_versions(void **state)
{
    (void)state;
    for (int round = 0; round < 40; round++) {
        size_t n = 0, cap = 4000;
        struct entry *e = xcalloc(cap, sizeof *e);
        uint64_t seq = 1;
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        while (n < cap - 4) {
            int64_t ts = T0 + HOUR + (int64_t)(rnd() % (uint64_t)HOUR);
            int ev = (int)(rnd() % NEV);
            char host[8];
            snprintf(host, sizeof host, "h%d", (int)(rnd() % NHOST));
            struct buf uk = BUF_INIT;
            key_encode_row(&uk, 0, ts, true, slice_cstr(host), slice_cstr(events[ev]));
            int versions = 1 + (int)(rnd() % 4);
            for (int v = 0; v < versions; v++) {
                struct entry *x = &e[n++];
                memcpy(x->ukey, uk.data, uk.len);
                x->len = uk.len;
                x->seq = seq += 1 + rnd() % 3;
                x->kind = (int)(rnd() % 3); /* IKEY_DEL, IKEY_PUT or IKEY_MERGE */
                x->ts = ts;
                x->ev = ev;
            }
            lo = ts < lo ? ts : lo;
            hi = ts > hi ? ts : hi;
            buf_destroy(&uk);
        }
        qsort(e, n, sizeof *e, cmp_entry);
        /* a key's newest version decides (a key drawn twice is one key) */
        struct tally want = {0};
        for (size_t i = 0; i < n; i++)
            if ((i == 0 || e[i - 1].len != e[i].len ||
                 memcmp(e[i - 1].ukey, e[i].ukey, e[i].len)) &&
                e[i].kind != IKEY_DEL)
                want.n[e[i].ev][(e[i].ts - T0) / MINUTE]++;
        struct sst_props props = {.min_ts = lo, .max_ts = hi};
        struct cat_file *c = build(e, n, &props, false);
        assert_non_null(c);
        const struct cnt_file *cf = cat_file_counts(c);
        assert_non_null(cf);
        assert_int_equal(cnt_file_max_seq(cf), seq);
        struct tally got = {0};
        assert_int_equal(cnt_file_each(cf, tally_count, &got), 0);
        assert_memory_equal(&got, &want, sizeof got);
        cat_file_free(c);
        /* a key the builder cannot read: a catalog still, without counts
         * (it was not the catalog's row), or none */
        c = build(e, n, &props, true);
        assert_true(!c || !cat_file_counts(c));
        cat_file_free(c);
        free(e);
    }
}

/* Rows of two windows in one table (never written so): no counts. */
static void test_two_windows(void **state)
{
    (void)state;
    struct entry e[2] = {{.seq = 2, .kind = IKEY_PUT, .ts = T0 + HOUR + 5, .ev = 0},
                         {.seq = 1, .kind = IKEY_PUT, .ts = T0 + 5, .ev = 1}};
    for (int i = 0; i < 2; i++) {
        struct buf uk = BUF_INIT;
        key_encode_row(&uk, 0, e[i].ts, true, slice_cstr("h"), slice_cstr(events[e[i].ev]));
        memcpy(e[i].ukey, uk.data, uk.len);
        e[i].len = uk.len;
        buf_destroy(&uk);
    }
    struct cnt_builder *b = cnt_builder_new();
    struct buf out = BUF_INIT;
    assert_false(cnt_encode(b, T0, &out)); /* no entry */
    for (int i = 0; i < 2; i++) {
        assert_true(cnt_first(b, slice_make(e[i].ukey, e[i].len), e[i].seq));
        cnt_row(b, slice_cstr(events[e[i].ev]), e[i].ts);
    }
    assert_false(cnt_encode(b, T0 + HOUR, &out));
    assert_int_equal(out.len, 0);
    cnt_builder_free(b);
    buf_destroy(&out);
}

/* Counts that do not parse: every truncation, minutes out of order or
 * past the window, zero rows, names out of order. */
static void test_parse(void **state)
{
    (void)state;
    struct cnt_builder *b = cnt_builder_new();
    struct buf out = BUF_INIT, uk = BUF_INIT;
    for (int i = 0; i < 50; i++) {
        buf_reset(&uk);
        int64_t ts = T0 + (int64_t)(i % 7) * MINUTE + i;
        key_encode_row(&uk, 0, ts, true, slice_cstr("h"), slice_cstr(events[i % NEV]));
        assert_true(cnt_first(b, slice_make(uk.data, uk.len), (uint64_t)i + 1));
        cnt_row(b, slice_cstr(events[i % NEV]), ts);
    }
    assert_true(cnt_encode(b, T0, &out));
    const char *p = out.data;
    struct cnt_file *c = NULL;
    assert_true(cnt_file_parse(&p, out.data + out.len, T0, &c));
    assert_ptr_equal(p, out.data + out.len);
    struct tally got = {0};
    assert_int_equal(cnt_file_each(c, tally_count, &got), 0);
    uint64_t total = 0;
    for (int e = 0; e < NEV; e++)
        for (int m = 0; m < NMIN; m++)
            total += got.n[e][m];
    assert_int_equal(total, 50);
    assert_int_equal(cnt_file_max_seq(c), 50);
    cnt_file_free(c);
    for (size_t len = 0; len < out.len; len++) {
        p = out.data;
        c = NULL;
        assert_false(cnt_file_parse(&p, out.data + len, T0, &c));
        assert_null(c);
    }
    /* hand-made: max_seq, n, then events */
    static const struct {
        const char *bytes;
        size_t len;
        bool ok;
    } cases[] = {
        {"\x05\x01\x02"
         "e0"
         "\x01\x00\x03",
         8, true}, /* minute 0, 3 rows */
        {"\x05\x01\x02"
         "e0"
         "\x02\x00\x03\x00\x01",
         10, false}, /* a minute twice */
        {"\x05\x01\x02"
         "e0"
         "\x01\x3c\x01",
         8, false}, /* minute 60 */
        {"\x05\x01\x02"
         "e0"
         "\x01\x00\x00",
         8, false}, /* no rows */
        {"\x05\x01\x02"
         "e0"
         "\x00",
         6, false}, /* no minute */
        {"\x05\x02\x02"
         "e1"
         "\x01\x00\x01\x02"
         "e0"
         "\x01\x00\x01",
         14, false}, /* order */
        {"\x05\x02\x02"
         "e0"
         "\x01\x00\x01\x02"
         "e0"
         "\x01\x00\x01",
         14, false},                            /* twice */
        {"\x05\x01\x00\x01\x00\x01", 6, false}, /* an empty name */
        /* a minute difference that wraps round, 2^32 rows */
        {"\x05\x01\x02"
         "e0"
         "\x02\x05\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x01",
         19, false},
        {"\x05\x01\x02"
         "e0"
         "\x01\x00\x80\x80\x80\x80\x10",
         12, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        p = cases[i].bytes;
        c = NULL;
        bool ok = cnt_file_parse(&p, cases[i].bytes + cases[i].len, T0, &c);
        if (ok != cases[i].ok)
            fail_msg("case %zu: %d", i, ok);
        cnt_file_free(c);
    }
    cnt_builder_free(b);
    buf_destroy(&out);
    buf_destroy(&uk);
}

/* --- a store's counts against its reads --- */

struct fixture {
    char *dir;
    struct store *s;
    struct store_opts o;
    struct store_db *db;
    bool desc;
    uint64_t counted; /* rows store_snap_window_counts gave, over every check */
    size_t windows;
};

static int setup_db_files(void **state, bool desc, uint64_t max_file_bytes)
{
    struct fixture *f = xcalloc(1, sizeof *f);
    store_opts_default(&f->o);
    if (max_file_bytes)
        f->o.max_file_bytes = max_file_bytes;
    f->o.clock = fixed_clock;
    f->o.wal_sync = STORE_SYNC_NONE;
    f->desc = desc;
    struct db_opts o = {.buckets = BUCKETS, .ts_desc = desc, .ttl_ns = 0};
    assert_int_equal(tu_store_with_db("counts", &f->o, &o, &f->dir, &f->s, &f->db), ERR_OK);
    *state = f;
    return 0;
}

static int setup_desc(void **state)
{
    return setup_db_files(state, true, 0);
}

static int setup_asc(void **state)
{
    return setup_db_files(state, false, 0);
}

/* small files: compactions split a window's rows over several tables */
static int setup_small(void **state)
{
    return setup_db_files(state, true, 16u << 10);
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    tu_store_close(f->dir, f->s, f->db);
    free(f);
    return 0;
}

/* The rows of bucket in [lo, hi] as reads give them, into t. */
static void read_rows(struct fixture *f, struct store_snap *snap, uint32_t b, int64_t lo,
                      int64_t hi, struct tally *t)
{
    struct iter *it = store_iter_bucket_range(snap, b, lo, hi, NULL);
    for (it_seek_first(it); it_valid(it); it_next(it)) {
        struct key_row r;
        assert_int_equal(key_decode_row(it_key(it), f->desc, &r), ERR_OK);
        assert_true(r.ts >= lo && r.ts <= hi);
        tally_add(t, r.event, r.ts, 1);
    }
    assert_int_equal(it_status(it), ERR_OK);
    it_destroy(it);
}

/* Counts plus reads of the rest equal reads of the whole, in a random
 * range (its ends on whole minutes or not); returns the windows counted. */
static size_t check_range(struct fixture *f, struct store_snap *snap, int64_t lo, int64_t hi)
{
    struct tally want = {0}, got = {0};
    size_t nwin = 0;
    for (uint32_t b = 0; b < BUCKETS; b++) {
        read_rows(f, snap, b, lo, hi, &want);
        struct store_ts_range *w;
        size_t n;
        assert_int_equal(store_snap_window_counts(snap, b, lo, hi, tally_count, &got, &w, &n),
                         ERR_OK);
        int64_t from = lo;
        for (size_t i = 0; i < n; i++) {
            assert_true(w[i].lo >= from && w[i].lo <= w[i].hi && w[i].hi <= hi);
            assert_int_equal(w[i].lo % MINUTE, 0);
            assert_int_equal((w[i].hi + 1) % MINUTE, 0);
            if (w[i].lo > from)
                read_rows(f, snap, b, from, w[i].lo - 1, &got);
            from = w[i].hi + 1;
        }
        if (from <= hi)
            read_rows(f, snap, b, from, hi, &got);
        nwin += n;
        free(w);
    }
    for (int e = 0; e < NEV; e++)
        for (int m = 0; m < NMIN; m++) {
            if (got.n[e][m] != want.n[e][m])
                fail_msg("[%lld, %lld] event %s minute %d: %llu counted and read, %llu read",
                         (long long)lo, (long long)hi, events[e], m,
                         (unsigned long long)got.n[e][m], (unsigned long long)want.n[e][m]);
        }
    f->windows += nwin;
    return nwin;
}

static void check_ranges(struct fixture *f, int n)
{
    struct store_snap *snap = store_snapshot(f->db);
    check_range(f, snap, INT64_MIN, INT64_MAX);
    check_range(f, snap, T0, T0 + NWIN * HOUR - 1);
    for (int i = 0; i < n; i++) {
        int64_t a = T0 + (int64_t)(rnd() % (uint64_t)(NWIN * HOUR));
        int64_t b = T0 + (int64_t)(rnd() % (uint64_t)(NWIN * HOUR));
        int64_t lo = a < b ? a : b, hi = a < b ? b : a;
        if (rnd() % 2) {
            lo -= (lo - T0) % MINUTE;
            hi += MINUTE - 1 - (hi - T0) % MINUTE;
        }
        check_range(f, snap, lo, hi);
    }
    store_snap_release(snap);
}

/* Random rows of NWIN windows: keys drawn from a small pool so that they
 * are written again (replaced or merged), some deleted. */
static void write_random(struct fixture *f, size_t n)
{
    struct batch *b = batch_new();
    struct buf id = BUF_INIT, val = BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        int64_t ts = T0 + (int64_t)(rnd() % 5000) * (NWIN * HOUR / 5000);
        char host[8], tv[8];
        snprintf(host, sizeof host, "h%d", (int)(rnd() % NHOST));
        snprintf(tv, sizeof tv, "v%d", (int)(rnd() % 3));
        struct slice ev = slice_cstr(events[rnd() % NEV]);
        struct rec_tag t = {slice_cstr("t"), slice_cstr(tv)};
        struct rec_field fl = {.key = slice_cstr("x"), .type = REC_INT, .v.i = (int64_t)i};
        buf_reset(&id);
        buf_reset(&val);
        rec_encode(&id, &t, 1, NULL, 0);
        rec_encode(&val, NULL, 0, &fl, 1);
        if (rnd() % 8 == 0)
            batch_delete_id(b, ts, slice_cstr(host), ev, slice_make(id.data, id.len));
        else
            batch_put_id(b, ts, slice_cstr(host), ev, slice_make(id.data, id.len),
                         slice_make(val.data, val.len), rnd() % 2);
    }
    assert_int_equal(store_write(f->db, b), ERR_OK);
    batch_free(b);
    buf_destroy(&id);
    buf_destroy(&val);
}

static void test_random(void **state)
{
    struct fixture *f = *state;
    for (int round = 0; round < 12; round++) {
        write_random(f, 300 + rnd() % 700);
        switch (rnd() % 3) {
        case 0: assert_int_equal(store_db_flush(f->db), ERR_OK); break;
        case 1: assert_int_equal(store_db_compact(f->db), ERR_OK); break;
        default: break;
        }
        check_ranges(f, 20);
    }
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    assert_int_equal(store_db_compact(f->db), ERR_OK);
    size_t before = f->windows;
    check_ranges(f, 20);
    /* compacted: every window of every bucket is one file, counted */
    assert_true(f->windows - before >= 2 * BUCKETS * NWIN);
}

/* The windows a snapshot taken now counts over the three hours (its
 * answers checked against reads). */
static size_t windows_counted(struct fixture *f)
{
    struct store_snap *snap = store_snapshot(f->db);
    size_t n = check_range(f, snap, T0, T0 + NWIN * HOUR - 1);
    store_snap_release(snap);
    return n;
}

/* n random rows, flushed and compacted: every window is then counted. */
static void write_compacted(struct fixture *f, size_t n)
{
    write_random(f, n);
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    assert_int_equal(store_db_compact(f->db), ERR_OK);
    assert_int_equal(windows_counted(f), BUCKETS * NWIN);
}

/* A row written to a window after its compaction: that window of that
 * bucket is read until it is flushed and compacted again; a range
 * tombstone keeps the windows it meets read; a per-event TTL keeps the
 * minutes before its cut-off read. */
static void test_conditions(void **state)
{
    struct fixture *f = *state;
    struct store_snap *snap;
    const size_t all = BUCKETS * NWIN;
    write_compacted(f, 3000);

    struct batch *b = batch_new();
    batch_put(b, T0 + HOUR + 7, slice_cstr("h0"), slice_cstr("e1"), slice_cstr("\0\0"));
    assert_int_equal(store_write(f->db, b), ERR_OK);
    batch_free(b);
    assert_int_equal(windows_counted(f), all - 1);
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    assert_int_equal(store_db_compact(f->db), ERR_OK);
    assert_int_equal(windows_counted(f), all);

    struct slice e0 = slice_cstr("e0");
    assert_int_equal(store_db_delete_range(f->db, slice_cstr("h1"), &e0, T0 + 2 * HOUR + 10,
                                           T0 + 2 * HOUR + 20 * MINUTE),
                     ERR_OK);
    snap = store_snapshot(f->db);
    if (store_db_range_tombstones(f->db)) /* not purged yet: the last window is read */
        assert_int_equal(check_range(f, snap, T0, T0 + NWIN * HOUR - 1), all - BUCKETS);
    else
        check_range(f, snap, T0, T0 + NWIN * HOUR - 1);
    store_snap_release(snap);

    /* the clock is T0 + 10h: e2 keeps 8.5 h, cut in the middle of window 1 */
    assert_int_equal(store_db_set_event_ttl(f->db, slice_cstr("e2"), 8 * HOUR + HOUR / 2), ERR_OK);
    snap = store_snapshot(f->db);
    check_ranges(f, 30);
    store_snap_release(snap);
    snap = store_snapshot(f->db);
    struct tally got = {0};
    for (uint32_t k = 0; k < BUCKETS; k++) {
        struct store_ts_range *w;
        size_t n;
        assert_int_equal(store_snap_window_counts(snap, k, INT64_MIN, INT64_MAX, tally_count, &got,
                                                  &w, &n),
                         ERR_OK);
        for (size_t i = 0; i < n; i++)
            assert_true(w[i].lo >= T0 + HOUR + HOUR / 2);
        free(w);
    }
    store_snap_release(snap);
    assert_int_equal(store_snap_window_counts(snap = store_snapshot(f->db), BUCKETS, 0, 1,
                                              tally_count, &got, &(struct store_ts_range *){0},
                                              &(size_t){0}),
                     ERR_INVAL);
    store_snap_release(snap);
}

/* Late rows flushed beside their windows' compacted tables (new rows,
 * rows written again, merged or deleted): those windows are still counted,
 * their counts corrected by the late keys looked up in the big table; a
 * late batch as big as a window is read instead. */
static void test_late(void **state)
{
    struct fixture *f = *state;
    struct store_snap *snap;
    const size_t all = BUCKETS * NWIN;
    write_compacted(f, 60000);
    for (int round = 0; round < 6; round++) {
        write_random(f, 40); /* keys of the same small pool: many exist */
        assert_int_equal(store_db_flush(f->db), ERR_OK);
        assert_int_equal(windows_counted(f), all);
        check_ranges(f, 10);
    }
    write_random(f, 60000); /* late rows: as many as the windows' own */
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    snap = store_snapshot(f->db);
    assert_true(check_range(f, snap, T0, T0 + NWIN * HOUR - 1) < all);
    store_snap_release(snap);
    check_ranges(f, 10);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_two_windows),
        cmocka_unit_test(test_parse),
        cmocka_unit_test_setup_teardown(test_random, setup_desc, teardown),
        cmocka_unit_test_setup_teardown(test_random, setup_asc, teardown),
        cmocka_unit_test_setup_teardown(test_random, setup_small, teardown),
        cmocka_unit_test_setup_teardown(test_conditions, setup_desc, teardown),
        cmocka_unit_test_setup_teardown(test_late, setup_desc, teardown),
        cmocka_unit_test_setup_teardown(test_late, setup_asc, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
