/* Randomized model test: puts, overwrites and deletes in batches, with
 * flushes, compactions and reopens in between; point gets, bucket scans in
 * both directions with seeks and direction switches, and index scans are
 * compared with an in-memory reference. DESC and ASC databases.
 * 1,000,000 operations (100,000 when LB_SAN=1, 30,000 under ThreadSanitizer). */
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
#include "model/key.h"
#include "store/store.h"
#include "tests/support/store_testutil.h"

#define NTS 1500
#define NHOST 8
#define NEVENT 4
#define NKEYS (NTS * NHOST * NEVENT)
#define BUCKETS 7

static const char *hosts[NHOST] = {"web-1", "web-10", "web-2", "db", "", "a", "web-100", "cache"};
static const char *events[NEVENT] = {"cpu", "cpu.user", "mem", "x"};

struct model {
    bool desc;
    int32_t ref[NKEYS];           /* version number, or -1 */
    uint32_t *order[BUCKETS + 1]; /* ids sorted by user key per bucket; last = index */
    size_t norder[BUCKETS + 1];
    uint32_t pos[NKEYS];     /* position of the id in its bucket order */
    uint32_t ipos[NKEYS];    /* position in the index order */
    struct buf keys[NKEYS];  /* encoded user keys */
    struct buf ikeys[NKEYS]; /* encoded index keys */
    uint64_t rng;
};

static int64_t key_ts(uint32_t id)
{
    return 1700000000000000000LL + (int64_t)(id / (NHOST * NEVENT)) * 11000000000LL;
}
static const char *key_host(uint32_t id)
{
    return hosts[(id / NEVENT) % NHOST];
}
static const char *key_event(uint32_t id)
{
    return events[id % NEVENT];
}

static uint64_t rnd(struct model *m)
{
    m->rng ^= m->rng << 13;
    m->rng ^= m->rng >> 7;
    m->rng ^= m->rng << 17;
    return m->rng;
}

static void make_value(int32_t ver, struct buf *out)
{
    buf_reset(out);
    buf_printf(out, "v%d:", ver);
    size_t n = 10 + (size_t)(ver % 40);
    for (size_t i = 0; i < n; i++)
        buf_putc(out, (char)('a' + (ver + (int)i) % 26));
}

static struct model *sort_ctx;
static int by_key(const void *a, const void *b)
{
    const struct buf *x = &sort_ctx->keys[*(const uint32_t *)a];
    const struct buf *y = &sort_ctx->keys[*(const uint32_t *)b];
    return slice_cmp(slice_make(x->data, x->len), slice_make(y->data, y->len));
}
static int by_ikey(const void *a, const void *b)
{
    const struct buf *x = &sort_ctx->ikeys[*(const uint32_t *)a];
    const struct buf *y = &sort_ctx->ikeys[*(const uint32_t *)b];
    return slice_cmp(slice_make(x->data, x->len), slice_make(y->data, y->len));
}

static void model_init(struct model *m, bool desc)
{
    memset(m, 0, sizeof *m);
    m->desc = desc;
    m->rng = desc ? 0x1234567 : 0x7654321;
    for (uint32_t b = 0; b <= BUCKETS; b++)
        m->order[b] = xcalloc(NKEYS, sizeof(uint32_t));
    for (uint32_t id = 0; id < NKEYS; id++) {
        m->ref[id] = -1;
        int64_t ts = key_ts(id);
        uint32_t b = key_bucket(ts, BUCKETS);
        key_encode_row(&m->keys[id], b, ts, desc, slice_cstr(key_host(id)),
                       slice_cstr(key_event(id)));
        key_encode_index(&m->ikeys[id], slice_cstr(key_host(id)), slice_cstr(key_event(id)), ts,
                         desc);
        m->order[b][m->norder[b]++] = id;
        m->order[BUCKETS][m->norder[BUCKETS]++] = id;
    }
    sort_ctx = m;
    for (uint32_t b = 0; b < BUCKETS; b++) {
        qsort(m->order[b], m->norder[b], sizeof(uint32_t), by_key);
        for (size_t i = 0; i < m->norder[b]; i++)
            m->pos[m->order[b][i]] = (uint32_t)i;
    }
    qsort(m->order[BUCKETS], NKEYS, sizeof(uint32_t), by_ikey);
    for (size_t i = 0; i < NKEYS; i++)
        m->ipos[m->order[BUCKETS][i]] = (uint32_t)i;
}

static void model_free(struct model *m)
{
    for (uint32_t b = 0; b <= BUCKETS; b++)
        free(m->order[b]);
    for (uint32_t id = 0; id < NKEYS; id++) {
        buf_destroy(&m->keys[id]);
        buf_destroy(&m->ikeys[id]);
    }
}

/* Next present position >= pos (step +1) or <= pos (step -1); -1 if none. */
static long present(struct model *m, uint32_t b, long pos, int step)
{
    for (; pos >= 0 && pos < (long)m->norder[b]; pos += step)
        if (m->ref[m->order[b][pos]] >= 0)
            return pos;
    return -1;
}

static void expect_at(struct model *m, struct iter *it, uint32_t b, long pos, struct buf *v)
{
    if (pos < 0) {
        if (it_valid(it))
            fail_msg("bucket %u: iterator valid, expected end", b);
        assert_int_equal(it_status(it), ERR_OK);
        return;
    }
    assert_true(it_valid(it));
    uint32_t id = m->order[b][pos];
    const struct buf *k = b == BUCKETS ? &m->ikeys[id] : &m->keys[id];
    struct slice got = it_key(it);
    if (!slice_eq(got, slice_make(k->data, k->len)))
        fail_msg("bucket %u pos %ld: wrong key (got %zu bytes)", b, pos, got.len);
    if (b == BUCKETS) {
        assert_int_equal(it_value(it).len, 0);
        return;
    }
    make_value(m->ref[id], v);
    assert_true(slice_eq(it_value(it), slice_make(v->data, v->len)));
}

static void check_scan(struct model *m, struct store_db *db, uint32_t b)
{
    struct store_snap *snap = store_snapshot(db);
    struct iter *it = b == BUCKETS ? store_iter_index(snap) : store_iter_bucket(snap, b);
    struct buf v = BUF_INIT;
    long pos = present(m, b, 0, 1);
    for (it_seek_first(it); pos >= 0; it_next(it), pos = present(m, b, pos + 1, 1))
        expect_at(m, it, b, pos, &v);
    expect_at(m, it, b, -1, &v);
    pos = present(m, b, (long)m->norder[b] - 1, -1);
    for (it_seek_last(it); pos >= 0; it_prev(it), pos = present(m, b, pos - 1, -1))
        expect_at(m, it, b, pos, &v);
    expect_at(m, it, b, -1, &v);
    for (int s = 0; s < 20; s++) {
        uint32_t id = m->order[b][rnd(m) % m->norder[b]];
        const struct buf *k = b == BUCKETS ? &m->ikeys[id] : &m->keys[id];
        it_seek(it, slice_make(k->data, k->len));
        pos = present(m, b, b == BUCKETS ? m->ipos[id] : m->pos[id], 1);
        expect_at(m, it, b, pos, &v);
        for (int step = 0; step < 30 && pos >= 0; step++) {
            bool fwd = rnd(m) % 3 != 0;
            pos = present(m, b, fwd ? pos + 1 : pos - 1, fwd ? 1 : -1);
            if (fwd)
                it_next(it);
            else
                it_prev(it);
            expect_at(m, it, b, pos, &v);
        }
    }
    assert_int_equal(it_status(it), ERR_OK);
    it_destroy(it);
    store_snap_release(snap);
    buf_destroy(&v);
}

static void check_get(struct model *m, struct store_db *db, uint32_t id, struct buf *v,
                      struct buf *want)
{
    buf_reset(v);
    int rc = store_get(db, key_ts(id), slice_cstr(key_host(id)), slice_cstr(key_event(id)), v);
    if (m->ref[id] < 0) {
        if (rc != ERR_NOTFOUND)
            fail_msg("get %u: expected NOTFOUND, got %s", id, err_name(rc));
        return;
    }
    if (rc != ERR_OK)
        fail_msg("get %u: %s", id, err_name(rc));
    make_value(m->ref[id], want);
    assert_true(slice_eq(slice_make(v->data, v->len), slice_make(want->data, want->len)));
}

static void open_store(const char *dir, struct store **s, struct store_db **db, bool desc)
{
    struct store_opts o;
    store_opts_default(&o);
    o.dir = dir;
    o.wal_sync = STORE_SYNC_NONE;
    o.memtable_bytes = 8u << 20;
    o.block_cache_bytes = 4u << 20;
    assert_int_equal(store_open(&o, s), ERR_OK);
    int rc = store_db_get(*s, "m", db);
    if (rc == ERR_NOTFOUND) {
        struct db_opts d = {.buckets = BUCKETS, .ts_desc = desc, .ttl_ns = 0};
        assert_int_equal(store_db_create(*s, "m", &d), ERR_OK);
        rc = store_db_get(*s, "m", db);
    }
    assert_int_equal(rc, ERR_OK);
}

static void write_batch(struct store_db *db, struct batch *b)
{
    int rc;
    while ((rc = store_write(db, b)) == ERR_BUSY) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(rc, ERR_OK);
    batch_clear(b);
}

static void run_model(bool desc)
{
    const char *san = getenv("LB_SAN");
    long total = tu_tsan() ? 30000 : san && strcmp(san, "1") == 0 ? 100000 : 1000000;
    struct model *m = xcalloc(1, sizeof *m);
    model_init(m, desc);
    char *dir = tu_mkdtemp("model");
    struct store *s;
    struct store_db *db;
    open_store(dir, &s, &db, desc);
    struct batch *b = batch_new();
    struct buf v = BUF_INIT, want = BUF_INIT;
    int32_t ver = 0;
    long in_batch_target = 1;
    for (long op = 1; op <= total; op++) {
        uint32_t id = (uint32_t)(rnd(m) % NKEYS);
        unsigned r = (unsigned)(rnd(m) % 100);
        if (r < 60) {
            ver++;
            make_value(ver, &v);
            batch_put(b, key_ts(id), slice_cstr(key_host(id)), slice_cstr(key_event(id)),
                      slice_make(v.data, v.len));
            m->ref[id] = ver;
        } else if (r < 80) {
            batch_delete(b, key_ts(id), slice_cstr(key_host(id)), slice_cstr(key_event(id)));
            m->ref[id] = -1;
        } else {
            if (batch_count(b))
                write_batch(db, b);
            check_get(m, db, id, &v, &want);
        }
        if ((long)batch_count(b) >= in_batch_target) {
            write_batch(db, b);
            in_batch_target = 1 + (long)(rnd(m) % 200);
        }
        if (op % (total / 10) == 0) {
            if (batch_count(b))
                write_batch(db, b);
            uint32_t bk = (uint32_t)(rnd(m) % (BUCKETS + 1));
            check_scan(m, db, bk);
            long phase = op / (total / 10);
            if (phase % 3 == 0)
                assert_int_equal(store_db_flush(db), ERR_OK);
            if (phase % 4 == 0)
                assert_int_equal(store_db_compact(db), ERR_OK);
            if (phase % 5 == 0 || phase == 7) {
                store_db_unref(db);
                store_close(s);
                open_store(dir, &s, &db, desc);
            }
            check_scan(m, db, (bk + 3) % (BUCKETS + 1));
        }
    }
    if (batch_count(b))
        write_batch(db, b);
    for (uint32_t bk = 0; bk <= BUCKETS; bk++)
        check_scan(m, db, bk);
    for (uint32_t id = 0; id < NKEYS; id += 7)
        check_get(m, db, id, &v, &want);
    store_db_unref(db);
    store_close(s);
    open_store(dir, &s, &db, desc);
    for (uint32_t bk = 0; bk <= BUCKETS; bk++)
        check_scan(m, db, bk);
    store_db_unref(db);
    store_close(s);
    batch_free(b);
    buf_destroy(&v);
    buf_destroy(&want);
    tu_rmtree(dir);
    free(dir);
    model_free(m);
    free(m);
}

static void test_model_desc(void **state)
{
    (void)state;
    run_model(true);
}

static void test_model_asc(void **state)
{
    (void)state;
    run_model(false);
}

int main(void)
{
    log_set_level(LOG_WARN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_desc),
        cmocka_unit_test(test_model_asc),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
