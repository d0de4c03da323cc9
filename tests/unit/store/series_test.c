/* Host sections (store/series.h; FORMAT.md, "Host section") and
 * store_series_open: a section holds each row of its table once, by the
 * newest version of its key with merges folded as a reader folds them and
 * none for a delete, keyed by host, event and time, with a record of the
 * row's numeric fields; string fields are named in its names block. A
 * table with one is of version 5 and reads back; a damaged trailer is
 * corruption. Through the store: the rows a snapshot gives from the
 * sections of compacted windows are the rows a read of the host gives,
 * and windows with memtable rows, late files with rows of the host or
 * deletes, range tombstones or a string in a wanted field are left to the
 * reads. */
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
#include "store/ikey.h"
#include "store/series.h"
#include "store/store.h"
#include "store/table/sst.h"
#include "store/table/sst_int.h"
#include "tests/support/store_fixture.h"
#include "tests/support/store_testutil.h"

#define SEC 1000000000LL
#define HOUR (3600 * SEC)
#define T0 (1700000000LL * SEC / HOUR * HOUR) /* a window start */
#define NHOST 4
#define NEV 3

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const char *const events[NEV] = {"cpu", "disk", "log"};

/* A random value record: v (float), c (int), sometimes s (string), ok. */
static void random_value(struct buf *out)
{
    struct rec_field f[4];
    size_t n = 0;
    if (rnd() % 4)
        f[n++] = (struct rec_field){.key = slice_cstr("v"),
                                    .type = REC_FLOAT,
                                    .v.f = (double)(rnd() % 1000) / 8};
    if (rnd() % 2)
        f[n++] = (struct rec_field){.key = slice_cstr("c"),
                                    .type = REC_INT,
                                    .v.i = (int64_t)(rnd() % 100) - 50};
    if (rnd() % 5 == 0)
        f[n++] = (struct rec_field){.key = slice_cstr("s"),
                                    .type = REC_STRING,
                                    .v.s = slice_cstr("text")};
    if (rnd() % 6 == 0)
        f[n++] = (struct rec_field){.key = slice_cstr("ok"), .type = REC_BOOL, .v.b = true};
    rec_encode(out, NULL, 0, f, n);
}

/* The record of value's numeric fields, in order (what a section keeps). */
static void numeric_of(struct slice id, struct slice value, struct buf *out)
{
    struct rec_row_reader rr;
    assert_int_equal(rec_row_init(&rr, id, value), ERR_OK);
    struct rec_field f[16], x;
    size_t n = 0;
    int rc;
    while ((rc = rec_row_next_field(&rr, &x)) == 1)
        if (x.type != REC_STRING && n < 16)
            f[n++] = x;
    assert_int_equal(rc, 0);
    rec_encode(out, NULL, 0, f, n);
}

/* --- the builder --- */

struct ver {
    char ukey[64];
    size_t len;
    uint64_t seq;
    int kind;
    int64_t ts;
    char val[64];
    size_t vlen;
};

static int cmp_ver(const void *x, const void *y)
{
    const struct ver *a = x, *b = y;
    int c = slice_cmp(slice_make(a->ukey, a->len), slice_make(b->ukey, b->len));
    return c ? c : a->seq < b->seq ? 1 : a->seq > b->seq ? -1 : 0;
}

/* The section's entries, as given to put. */
struct got {
    struct buf keys, vals;
    size_t *koff, *voff, n, cap;
};

static int got_put(void *arg, struct slice ik, struct slice v)
{
    struct got *g = arg;
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 64;
        g->koff = xrealloc(g->koff, (g->cap + 1) * sizeof *g->koff);
        g->voff = xrealloc(g->voff, (g->cap + 1) * sizeof *g->voff);
    }
    g->koff[g->n] = g->keys.len;
    g->voff[g->n] = g->vals.len;
    buf_append(&g->keys, ik.ptr, ik.len);
    buf_append(&g->vals, v.ptr, v.len);
    g->n++;
    g->koff[g->n] = g->keys.len;
    g->voff[g->n] = g->vals.len;
    return 0;
}

static struct slice got_key(const struct got *g, size_t i)
{
    return slice_make(g->keys.data + g->koff[i], g->koff[i + 1] - g->koff[i]);
}

static struct slice got_val(const struct got *g, size_t i)
{
    return slice_make(g->vals.data + g->voff[i], g->voff[i + 1] - g->voff[i]);
}

static void got_free(struct got *g)
{
    buf_destroy(&g->keys);
    buf_destroy(&g->vals);
    free(g->koff);
    free(g->voff);
}

/* Feeds the sorted versions to a section; its entries into g, its names
 * into names; the finish's code. */
static int run_section(const struct ver *v, size_t n, struct got *g, struct buf *names)
{
    struct ser_builder *b = ser_builder_new(false);
    struct sst_section *s = ser_builder_section(b);
    struct buf ik = BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        buf_reset(&ik);
        ikey_append(&ik, slice_make(v[i].ukey, v[i].len), v[i].seq, v[i].kind);
        s->entry(s, slice_make(ik.data, ik.len), slice_make(v[i].val, v[i].vlen), v[i].ts);
    }
    int rc = s->finish(s, got_put, g, names);
    buf_destroy(&ik);
    ser_builder_free(b);
    return rc;
}

/* Random keys of points with 1-4 versions of random kinds: one entry per
 * key whose newest version is no delete, holding the numeric fields of
 * its versions folded down to the first put or delete; entries ascend. */
static void test_versions(void **state)
{
    (void)state;
    for (int round = 0; round < 30; round++) {
        size_t cap = 2000, n = 0;
        struct ver *v = xcalloc(cap, sizeof *v);
        uint64_t seq = 1;
        struct buf uk = BUF_INIT, val = BUF_INIT;
        while (n < cap - 4) {
            int64_t ts = T0 + (int64_t)(rnd() % 1000);
            char host[8];
            snprintf(host, sizeof host, "h%d", (int)(rnd() % NHOST));
            buf_reset(&uk);
            key_encode_row(&uk, 0, ts, false, slice_cstr(host), slice_cstr(events[rnd() % NEV]));
            for (int k = 1 + (int)(rnd() % 4); k > 0; k--) {
                struct ver *x = &v[n++];
                memcpy(x->ukey, uk.data, uk.len);
                x->len = uk.len;
                x->seq = seq += 1 + rnd() % 3;
                x->kind = (int)(rnd() % 3);
                x->ts = ts;
                buf_reset(&val);
                if (x->kind != IKEY_DEL)
                    random_value(&val);
                if (val.len)
                    memcpy(x->val, val.data, val.len);
                x->vlen = val.len;
            }
        }
        qsort(v, n, sizeof *v, cmp_ver);
        /* the folds, by the reader's rule */
        struct got want = {0};
        struct buf acc = BUF_INIT, tmp = BUF_INIT, num = BUF_INIT, ik = BUF_INIT;
        bool strings = false;
        for (size_t i = 0, j; i < n; i = j) {
            for (j = i + 1; j < n && cmp_ver(&v[i], &v[j]) < 0 && v[j].len == v[i].len &&
                            memcmp(v[j].ukey, v[i].ukey, v[i].len) == 0;
                 j++)
                ;
            for (size_t k = i; k < j; k++)
                strings |= v[k].kind != IKEY_DEL && memmem(v[k].val, v[k].vlen, "\x01s\x05", 3);
            if (v[i].kind == IKEY_DEL)
                continue;
            buf_reset(&acc);
            buf_append(&acc, v[i].val, v[i].vlen);
            for (size_t k = i + 1; k < j && v[k - 1].kind == IKEY_MERGE && v[k].kind != IKEY_DEL;
                 k++) {
                buf_reset(&tmp);
                assert_int_equal(rec_merge(&tmp, slice_make(acc.data, acc.len),
                                           slice_make(v[k].val, v[k].vlen)),
                                 ERR_OK);
                buf_reset(&acc);
                buf_append(&acc, tmp.data, tmp.len);
            }
            buf_reset(&num);
            numeric_of(slice_make("", 0), slice_make(acc.data, acc.len), &num);
            struct key_row kr;
            assert_int_equal(key_decode_row(slice_make(v[i].ukey, v[i].len), false, &kr), ERR_OK);
            buf_reset(&uk);
            ser_key(&uk, kr.host, &kr.event, kr.ts, false, false);
            buf_reset(&ik);
            ikey_append(&ik, slice_make(uk.data, uk.len), 0, IKEY_PUT);
            got_put(&want, slice_make(ik.data, ik.len), slice_make(num.data, num.len));
        }
        struct got g = {0};
        struct buf names = BUF_INIT;
        assert_int_equal(run_section(v, n, &g, &names), want.n ? ERR_OK : ERR_NOTFOUND);
        assert_int_equal(g.n, want.n);
        /* the section's order is the index keys' order; the fold's is the
         * rows': compare as sorted lists of (key, record) */
        for (size_t i = 0; i < g.n; i++) {
            if (i)
                assert_true(slice_cmp(got_key(&g, i - 1), got_key(&g, i)) < 0);
            size_t found = want.n;
            for (size_t w = 0; w < want.n && found == want.n; w++)
                if (slice_eq(got_key(&want, w), got_key(&g, i)))
                    found = w;
            assert_true(found < want.n);
            assert_true(slice_eq(got_val(&want, found), got_val(&g, i)));
        }
        if (g.n) {
            uint64_t max_seq;
            struct slice nm = slice_make(names.data, names.len);
            assert_true(ser_names_max_seq(nm, &max_seq));
            assert_int_equal(max_seq, seq);
            assert_int_equal(ser_names_has(nm, slice_cstr("s")), strings);
            assert_false(ser_names_has(nm, slice_cstr("v")));
            assert_false(ser_names_has(nm, slice_cstr("c")));
        }
        got_free(&g);
        got_free(&want);
        buf_destroy(&names);
        buf_destroy(&acc);
        buf_destroy(&tmp);
        buf_destroy(&num);
        buf_destroy(&ik);
        buf_destroy(&uk);
        buf_destroy(&val);
        free(v);
    }
}

/* Log rows of one (host, ts, event) with different ids: one entry each,
 * told apart by their sequences; the fields of the id are the row's. A
 * bad key turns the section off. */
static void test_log_rows(void **state)
{
    (void)state;
    struct ver v[3];
    memset(v, 0, sizeof v);
    struct buf uk = BUF_INIT, id = BUF_INIT;
    for (int i = 0; i < 3; i++) {
        struct rec_tag t = {slice_cstr("level"), slice_cstr("info")};
        struct rec_field f[2] = {{.key = slice_cstr("msg"),
                                  .type = REC_STRING,
                                  .v.s = slice_cstr(i ? "b" : "a")},
                                 {.key = slice_cstr("n"), .type = REC_INT, .v.i = i}};
        buf_reset(&id);
        rec_encode(&id, &t, 1, f, 2);
        buf_reset(&uk);
        key_encode_row_id(&uk, 0, T0 + 5, false, slice_cstr("web"), slice_cstr("nginx"),
                          slice_make(id.data, id.len));
        memcpy(v[i].ukey, uk.data, uk.len);
        v[i].len = uk.len;
        v[i].seq = 10 + (uint64_t)i;
        v[i].kind = IKEY_PUT;
        v[i].ts = T0 + 5;
    }
    qsort(v, 3, sizeof *v, cmp_ver);
    struct got g = {0};
    struct buf names = BUF_INIT;
    assert_int_equal(run_section(v, 3, &g, &names), ERR_OK);
    assert_int_equal(g.n, 3);
    struct buf base = BUF_INIT;
    struct slice nginx = slice_cstr("nginx");
    ser_key(&base, slice_cstr("web"), &nginx, T0 + 5, false, false);
    int64_t seen = 0;
    for (size_t i = 0; i < 3; i++) {
        struct slice k = got_key(&g, i);
        assert_true(ikey_ok(k));
        assert_true(slice_eq(ikey_user(k), slice_make(base.data, base.len)));
        assert_int_equal(ikey_seq(k), 2 - i);
        struct rec_reader r;
        struct rec_field f;
        assert_int_equal(rec_reader_init(&r, got_val(&g, i)), ERR_OK);
        assert_int_equal(rec_next_field(&r, &f), 1);
        assert_true(slice_eq(f.key, slice_cstr("n")) && f.type == REC_INT);
        seen |= 1 << f.v.i;
        assert_int_equal(rec_next_field(&r, &f), 0);
    }
    assert_int_equal(seen, 7);
    assert_true(ser_names_has(slice_make(names.data, names.len), slice_cstr("msg")));
    assert_false(ser_names_has(slice_make(names.data, names.len), slice_cstr("n")));
    got_free(&g);
    /* a key that is not a row's: no section */
    struct ser_builder *b = ser_builder_new(false);
    struct sst_section *s = ser_builder_section(b);
    s->entry(s, slice_make("xxxxxxxxxxxx", 12), slice_make("", 0), T0);
    memset(&g, 0, sizeof g);
    buf_reset(&names);
    assert_int_equal(s->finish(s, got_put, &g, &names), ERR_NOTFOUND);
    assert_int_equal(g.n, 0);
    ser_builder_free(b);
    buf_destroy(&names);
    buf_destroy(&base);
    buf_destroy(&uk);
    buf_destroy(&id);
}

/* --- a table with a section --- */

static char *build_table(const char *dir, const char *name, bool with_section, size_t *rows)
{
    struct buf path = BUF_INIT, uk = BUF_INIT, ik = BUF_INIT, val = BUF_INIT;
    buf_printf(&path, "%s/%s", dir, name);
    struct ser_builder *ser = ser_builder_new(false);
    struct sst_build_opts opts = {.codec = {.mode = CODEC_MODE_ZSTD, .level = 3},
                                  .layout = COL_ROWS,
                                  .section = with_section ? ser_builder_section(ser) : NULL};
    struct sst_builder *b;
    assert_int_equal(sst_builder_new(env_posix(), path.data, &opts, &b), ERR_OK);
    *rows = 5000;
    for (size_t i = 0; i < *rows; i++) {
        char host[16];
        snprintf(host, sizeof host, "host-%zu", i % 37);
        buf_reset(&uk);
        key_encode_row(&uk, 0, T0 + (int64_t)i * SEC, false, slice_cstr(host),
                       slice_cstr(events[i % NEV]));
        buf_reset(&ik);
        ikey_append(&ik, slice_make(uk.data, uk.len), 0, IKEY_PUT);
        buf_reset(&val);
        struct rec_field f = {.key = slice_cstr("v"), .type = REC_FLOAT, .v.f = (double)i / 4};
        rec_encode(&val, NULL, 0, &f, 1);
        assert_int_equal(sst_add(b, slice_make(ik.data, ik.len), slice_make(val.data, val.len),
                                 T0 + (int64_t)i * SEC),
                         ERR_OK);
    }
    struct sst_props props;
    assert_int_equal(sst_builder_finish(b, &props), ERR_OK);
    ser_builder_free(ser);
    buf_destroy(&uk);
    buf_destroy(&ik);
    buf_destroy(&val);
    return buf_steal(&path, NULL);
}

static size_t count_iter(struct iter *it)
{
    size_t n = 0;
    for (it_seek_first(it); it_valid(it); it_next(it))
        n++;
    assert_int_equal(it_status(it), ERR_OK);
    it_destroy(it);
    return n;
}

/* Version 5 with a section whose entries are the rows by host (seekable
 * as the host index is), version 4 without; a damaged trailer fails the
 * open as corruption. */
static void test_table(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("ser");
    size_t rows;
    atomic_ullong corrupt = 0;
    struct sst_table *t;
    char *path = build_table(dir, "000001.sst", true, &rows);
    assert_int_equal(sst_open(env_posix(), path, NULL, &corrupt, &t), ERR_OK);
    assert_int_equal(sst_version(t), 5);
    assert_true(sst_has_section(t));
    assert_int_equal(count_iter(sst_iter(t)), rows);
    assert_int_equal(count_iter(sst_section_iter(t)), rows);
    /* host-7's rows, side by side */
    struct iter *it = sst_section_iter(t);
    struct buf k = BUF_INIT;
    key_encode_index_prefix(&k, slice_cstr("host-7"));
    size_t n = 0;
    for (it_seek(it, slice_make(k.data, k.len));
         it_valid(it) && slice_starts_with(ikey_user(it_key(it)), slice_make(k.data, k.len));
         it_next(it))
        n++;
    assert_int_equal(n, (rows - 7 + 36) / 37);
    it_destroy(it);
    sst_unref(t);
    /* the trailer damaged */
    int64_t size = tu_file_size(path);
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, (long)(size - SST_FOOTER - 10), SEEK_SET), 0);
    assert_int_equal(fputc(0x5a, fp), 0x5a);
    fclose(fp);
    assert_int_equal(sst_open(env_posix(), path, NULL, &corrupt, &t), ERR_CORRUPT);
    assert_true(corrupt > 0);
    /* without a section: version 4, an empty section iterator */
    char *plain = build_table(dir, "000002.sst", false, &rows);
    assert_int_equal(sst_open(env_posix(), plain, NULL, &corrupt, &t), ERR_OK);
    assert_int_equal(sst_version(t), SST_VERSION_PLAIN);
    assert_false(sst_has_section(t));
    assert_int_equal(count_iter(sst_section_iter(t)), 0);
    sst_unref(t);
    /* an older version written on purpose: no section either */
    sst_test_set_version(3);
    char *old = build_table(dir, "000003.sst", true, &rows);
    sst_test_set_version(0);
    assert_int_equal(sst_open(env_posix(), old, NULL, &corrupt, &t), ERR_OK);
    assert_int_equal(sst_version(t), 3);
    assert_false(sst_has_section(t));
    sst_unref(t);
    buf_destroy(&k);
    free(path);
    free(plain);
    free(old);
    tu_rmtree(dir);
    free(dir);
}

/* --- through the store --- */

struct fixture {
    char *dir;
    struct store *s;
    struct store_db *db;
    struct store_opts o;
    bool desc; /* the database's ts order */
};

static int64_t fixed_clock(void *arg)
{
    (void)arg;
    return T0 + 10 * HOUR;
}

static int setup_order(void **state, bool desc)
{
    struct fixture *f = xcalloc(1, sizeof *f);
    store_opts_default(&f->o);
    f->o.wal_sync = STORE_SYNC_NONE;
    f->o.clock = fixed_clock;
    struct db_opts dbo = {.buckets = 3, .ts_desc = desc};
    assert_int_equal(tu_store_with_db("ser", &f->o, &dbo, &f->dir, &f->s, &f->db), ERR_OK);
    f->desc = desc;
    *state = f;
    return 0;
}

static int setup(void **state)
{
    return setup_order(state, true);
}

/* A database of ts order asc: its rows, and runs, in ascending stamps. */
static int setup_asc(void **state)
{
    return setup_order(state, false);
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    tu_store_close(f->dir, f->s, f->db);
    free(f);
    return 0;
}

/* n random rows over three windows: points (merged or put, sometimes a
 * string v) and log rows, some deleted. */
static void write_random(struct fixture *f, size_t n, bool string_v)
{
    struct batch *b = batch_new();
    struct buf id = BUF_INIT, val = BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        int64_t ts = T0 + (int64_t)(rnd() % (3 * 3600)) * SEC + (int64_t)(rnd() % 3);
        char host[8];
        snprintf(host, sizeof host, "h%d", (int)(rnd() % NHOST));
        struct slice ev = slice_cstr(events[rnd() % NEV]);
        buf_reset(&id);
        buf_reset(&val);
        if (rnd() % 3 == 0) { /* a log row: its content is its id */
            struct rec_field fl[2] =
                {{.key = slice_cstr("msg"), .type = REC_STRING, .v.s = slice_cstr("line")},
                 {.key = slice_cstr("v"), .type = REC_FLOAT, .v.f = (double)(rnd() % 50)}};
            rec_encode(&id, NULL, 0, fl, 2);
            if (rnd() % 8 == 0)
                batch_delete_id(b, ts, slice_cstr(host), ev, slice_make(id.data, id.len));
            else
                batch_put_id(b, ts, slice_cstr(host), ev, slice_make(id.data, id.len),
                             slice_make("", 0), false);
            continue;
        }
        struct rec_field fl = {.key = slice_cstr("v"),
                               .type = REC_FLOAT,
                               .v.f = (double)(rnd() % 100)};
        if (string_v && rnd() % 50 == 0)
            fl = (struct rec_field){.key = slice_cstr("v"),
                                    .type = REC_STRING,
                                    .v.s = slice_cstr("oops")};
        rec_encode(&val, NULL, 0, &fl, 1);
        if (rnd() % 10 == 0)
            batch_delete_id(b, ts, slice_cstr(host), ev, slice_make("", 0));
        else
            batch_put_id(b, ts, slice_cstr(host), ev, slice_make("", 0),
                         slice_make(val.data, val.len), rnd() % 2);
    }
    assert_int_equal(store_write(f->db, b), ERR_OK);
    batch_free(b);
    buf_destroy(&id);
    buf_destroy(&val);
}

/* One point of host at ts (event cpu), or its delete. */
static void write_one(struct fixture *f, const char *host, int64_t ts, bool del)
{
    struct batch *b = batch_new();
    struct buf val = BUF_INIT;
    struct rec_field fl = {.key = slice_cstr("v"), .type = REC_FLOAT, .v.f = 12.5};
    rec_encode(&val, NULL, 0, &fl, 1);
    if (del)
        batch_delete_id(b, ts, slice_cstr(host), slice_cstr("cpu"), slice_make("", 0));
    else
        batch_put_id(b, ts, slice_cstr(host), slice_cstr("cpu"), slice_make("", 0),
                     slice_make(val.data, val.len), false);
    assert_int_equal(store_write(f->db, b), ERR_OK);
    batch_free(b);
    buf_destroy(&val);
}

static void write_ev(struct fixture *f, const char *host, const char *event, int64_t ts)
{
    struct batch *b = batch_new();
    struct buf val = BUF_INIT;
    struct rec_field fl = {.key = slice_cstr("v"), .type = REC_FLOAT, .v.f = (double)ts};
    rec_encode(&val, NULL, 0, &fl, 1);
    batch_put_id(b, ts, slice_cstr(host), slice_cstr(event), slice_make("", 0),
                 slice_make(val.data, val.len), false);
    assert_int_equal(store_write(f->db, b), ERR_OK);
    batch_free(b);
    buf_destroy(&val);
}

/* A row as (ts, event, numeric record), for sorting and comparing. */
struct srow {
    int64_t ts;
    char host[16];
    char event[16];
    char rec[64];
    size_t rlen;
};

static int cmp_srow(const void *x, const void *y)
{
    const struct srow *a = x, *b = y;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    int c = strcmp(a->host, b->host);
    if (c)
        return c;
    c = strcmp(a->event, b->event);
    if (c)
        return c;
    return slice_cmp(slice_make(a->rec, a->rlen), slice_make(b->rec, b->rlen));
}

static void srow_push(struct srow **v, size_t *n, int64_t ts, struct slice host, struct slice ev,
                      struct slice rec)
{
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    struct srow *r = &(*v)[(*n)++];
    memset(r, 0, sizeof *r);
    r->ts = ts;
    assert_true(host.len < sizeof r->host && ev.len < sizeof r->event && rec.len <= sizeof r->rec);
    memcpy(r->host, host.ptr, host.len);
    memcpy(r->event, ev.ptr, ev.len);
    memcpy(r->rec, rec.ptr, rec.len);
    r->rlen = rec.len;
}

static bool in_set(const struct slice *set, size_t n, struct slice ev)
{
    for (size_t i = 0; i < n; i++)
        if (slice_eq(set[i], ev))
            return true;
    return false;
}

/* The rows store_series_each gives, collected; stop_at > 0: the call that
 * makes that many rows or more returns ERR_TOOBIG. */
struct each_rows {
    struct srow *v;
    size_t n, stop_at, calls;
};

static int each_push(void *arg, const struct store_series_rows *r)
{
    struct each_rows *e = arg;
    assert_true(r->n >= 1);
    e->calls++;
    for (size_t i = 0; i < r->n; i++)
        srow_push(&e->v, &e->n, r->ts[i], r->host, r->event, r->value[i]);
    return e->stop_at && e->n >= e->stop_at ? ERR_TOOBIG : ERR_OK;
}

/* The rows of store_series_each on a cursor opened as check_host's: the
 * same as store_series_next's (got, sorted), and an error of the caller's
 * stops it at once. */
static void check_each(struct store_snap *snap, uint32_t bucket, const struct slice *host,
                       int64_t lo, int64_t hi, const struct slice *evs, size_t nevs,
                       struct slice *fs, const struct srow *got, size_t ngot)
{
    for (int pass = 0; pass < 2; pass++) {
        struct store_series *cur;
        struct store_ts_range *win;
        size_t nwin;
        assert_int_equal(store_series_open(snap, bucket, host, lo, hi, evs, nevs, fs, 1, &cur, &win,
                                           &nwin),
                         ERR_OK);
        struct each_rows e = {NULL, 0, pass ? ngot / 2 + 1 : 0, 0};
        int rc = store_series_each(cur, each_push, &e);
        if (pass) { /* stopped by the run that reached stop_at, none after */
            assert_int_equal(rc, ngot / 2 + 1 <= ngot ? ERR_TOOBIG : ERR_OK);
            assert_true(e.n >= (ngot / 2 + 1 <= ngot ? ngot / 2 + 1 : ngot) && e.n <= ngot);
            struct each_rows again = {NULL, 0, 0, 0};
            assert_int_equal(store_series_each(cur, each_push, &again), ERR_OK);
            assert_int_equal(e.n + again.n, ngot);
            free(again.v);
        } else {
            assert_int_equal(rc, ERR_OK);
            if (e.n)
                qsort(e.v, e.n, sizeof *e.v, cmp_srow);
            assert_int_equal(e.n, ngot);
            for (size_t i = 0; i < ngot; i++)
                assert_int_equal(cmp_srow(&e.v[i], &got[i]), 0);
        }
        free(e.v);
        free(win);
        store_series_close(cur);
    }
}

/* Checks the sections of host (NULL: every host) over [lo, hi] in every
 * bucket against a read of the served ranges, for the event set evs
 * (sorted; NULL: every event); returns the windows served. */
static size_t check_host(struct fixture *f, const char *host, int64_t lo, int64_t hi,
                         const char *field, const struct slice *evs, size_t nevs)
{
    struct slice hs = host ? slice_cstr(host) : slice_make("", 0);
    struct store_snap *snap = store_snapshot(f->db);
    struct slice fs = slice_cstr(field);
    size_t served = 0;
    struct buf num = BUF_INIT;
    for (uint32_t bucket = 0; bucket < 3; bucket++) {
        struct store_series *cur;
        struct store_ts_range *win;
        size_t nwin;
        assert_int_equal(store_series_open(snap, bucket, host ? &hs : NULL, lo, hi, evs, nevs, &fs,
                                           1, &cur, &win, &nwin),
                         ERR_OK);
        struct srow *got = NULL, *want = NULL;
        size_t ngot = 0, nwant = 0;
        struct store_series_row r;
        int rc;
        while ((rc = store_series_next(cur, &r)) == 1) {
            assert_true(!host || slice_eq(r.host, hs));
            assert_true(!evs || in_set(evs, nevs, r.event));
            srow_push(&got, &ngot, r.ts, r.host, r.event, r.value);
        }
        assert_int_equal(rc, 0);
        store_series_close(cur);
        for (size_t w = 0; w < nwin; w++) {
            assert_true(win[w].lo >= lo && win[w].hi <= hi && win[w].lo <= win[w].hi);
            struct iter *it = store_iter_bucket_range(snap, bucket, win[w].lo, win[w].hi, NULL);
            for (it_seek_first(it); it_valid(it); it_next(it)) {
                struct key_row kr;
                assert_int_equal(key_decode_row(it_key(it), f->desc, &kr), ERR_OK);
                if ((host && !slice_eq(kr.host, hs)) || (evs && !in_set(evs, nevs, kr.event)))
                    continue;
                buf_reset(&num);
                numeric_of(kr.id, it_value(it), &num);
                srow_push(&want, &nwant, kr.ts, kr.host, kr.event, slice_make(num.data, num.len));
            }
            assert_int_equal(it_status(it), ERR_OK);
            it_destroy(it);
        }
        if (ngot)
            qsort(got, ngot, sizeof *got, cmp_srow);
        if (nwant)
            qsort(want, nwant, sizeof *want, cmp_srow);
        assert_int_equal(ngot, nwant);
        for (size_t i = 0; i < ngot; i++)
            assert_int_equal(cmp_srow(&got[i], &want[i]), 0);
        check_each(snap, bucket, host ? &hs : NULL, lo, hi, evs, nevs, &fs, got, ngot);
        served += nwin;
        free(got);
        free(want);
        free(win);
    }
    buf_destroy(&num);
    store_snap_release(snap);
    return served;
}

static size_t check_random(struct fixture *f, const char *field)
{
    size_t served = 0;
    for (int i = 0; i < 12; i++) {
        char host[8];
        snprintf(host, sizeof host, "h%d", (int)(rnd() % NHOST));
        int64_t a = T0 - HOUR + (int64_t)(rnd() % (5 * 3600)) * SEC;
        int64_t b = a + (int64_t)(rnd() % (4 * 3600)) * SEC;
        /* an event set of one to three of the data's events, bytewise sorted,
         * or of one the data lacks ("c" and "dis" sort before and inside
         * theirs): every host's sections skip the others by seeks */
        static const struct slice sets[][3] = {{{"cpu", 3}},
                                               {{"disk", 4}},
                                               {{"log", 3}},
                                               {{"cpu", 3}, {"log", 3}},
                                               {{"disk", 4}, {"log", 3}},
                                               {{"c", 1}, {"dis", 3}},
                                               {{"cpu", 3}, {"disk", 4}, {"log", 3}}};
        static const size_t nsets[] = {1, 1, 1, 2, 2, 2, 3};
        size_t k = rnd() % 8;
        served += check_host(f, i % 4 == 3 ? NULL : host, a, b, field, k < 7 ? sets[k] : NULL,
                             k < 7 ? nsets[k] : 0);
    }
    return served;
}

/* Compacted windows are served and agree with reads; memtable rows, a
 * late file and a range delete keep a window from being served until it
 * is compacted again. */
static void test_store(void **state)
{
    struct fixture *f = *state;
    for (int round = 0; round < 6; round++) {
        write_random(f, 3000, false);
        assert_int_equal(store_db_flush(f->db), ERR_OK);
        if (round % 2)
            assert_int_equal(store_db_compact(f->db), ERR_OK);
        check_random(f, "v");
    }
    assert_int_equal(store_db_compact(f->db), ERR_OK);
    /* every window of every bucket: one file with a section */
    assert_int_equal(check_host(f, "h1", T0, T0 + 3 * HOUR - 1, "v", NULL, 0), 3 * 3);
    /* a row in the memtable: its window is read, for every host */
    write_one(f, "h1", T0 + HOUR + 17, false);
    assert_int_equal(check_host(f, "h1", T0, T0 + 3 * HOUR - 1, "v", NULL, 0), 8);
    assert_int_equal(check_host(f, "h2", T0, T0 + 3 * HOUR - 1, "v", NULL, 0), 8);
    /* flushed beside the window's file: read still for its host, not for
     * the others (the late file holds none of their rows) */
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    assert_int_equal(check_host(f, "h1", T0, T0 + 3 * HOUR - 1, "v", NULL, 0), 8);
    assert_int_equal(check_host(f, "h2", T0, T0 + 3 * HOUR - 1, "v", NULL, 0), 9);
    /* every host's rows: not from a window with any late file */
    assert_int_equal(check_host(f, NULL, T0, T0 + 3 * HOUR - 1, "v", NULL, 0), 8);
    /* a late delete names no host: its window is read for every host */
    write_one(f, "h3", T0 + 2 * HOUR + 5, true);
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    assert_int_equal(check_host(f, "h2", T0, T0 + 3 * HOUR - 1, "v", NULL, 0), 8);
    assert_int_equal(store_db_compact(f->db), ERR_OK);
    assert_int_equal(check_host(f, "h1", T0, T0 + 3 * HOUR - 1, "v", NULL, 0), 9);
    assert_int_equal(check_host(f, "h2", T0, T0 + 3 * HOUR - 1, "v", NULL, 0), 9);
    assert_int_equal(check_host(f, NULL, T0, T0 + 3 * HOUR - 1, "v", NULL, 0), 9);
    /* part of a window, every host: whole windows only, unless an event
     * set lets its sections seek to each host's rows in range */
    struct slice cpu = slice_cstr("cpu");
    assert_int_equal(check_host(f, NULL, T0 + HOUR / 2, T0 + 3 * HOUR - 1, "v", NULL, 0), 6);
    assert_int_equal(check_host(f, NULL, T0 + HOUR / 2, T0 + 3 * HOUR - 1, "v", &cpu, 1), 9);
    assert_int_equal(check_host(f, NULL, T0 + HOUR / 2, T0 + 2 * HOUR + HOUR / 3, "v", &cpu, 1), 9);
    /* a part too small for a seek per host: the rows are read */
    assert_int_equal(check_host(f, NULL, T0 + HOUR - 2 * SEC, T0 + HOUR - 1, "v", &cpu, 1), 0);
    /* a range delete of one host: every window it meets is read */
    struct slice ev = slice_cstr("cpu");
    assert_int_equal(store_db_delete_range(f->db, slice_cstr("h2"), &ev, T0, T0 + 10 * SEC),
                     ERR_OK);
    assert_true(check_host(f, "h1", T0, T0 + 3 * HOUR - 1, "v", NULL, 0) < 9);
    assert_int_equal(store_db_compact(f->db), ERR_OK);
    check_random(f, "v");
    /* a string in v somewhere: such windows are read for v, not for c */
    write_random(f, 3000, true);
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    assert_int_equal(store_db_compact(f->db), ERR_OK);
    assert_true(check_host(f, "h1", T0, T0 + 3 * HOUR - 1, "v", NULL, 0) < 9);
    assert_int_equal(check_host(f, "h1", T0, T0 + 3 * HOUR - 1, "c", NULL, 0), 9);
    check_random(f, "v");
    check_random(f, "c");
}

/* A window where the host lacks the event set's first event: its cursor,
 * sought to that event, lands on the next one's rows, which the window
 * before ended with; they are the next event's turn, read once. */
static void test_event_gaps(void **state)
{
    struct fixture *f = *state;
    for (int i = 0; i < 30; i++) {
        write_ev(f, "hx", "cpu", T0 + i * 100 * SEC);
        write_ev(f, "hx", "log", T0 + i * 100 * SEC + SEC);
        write_ev(f, "hx", "log", T0 + HOUR + i * 100 * SEC);
        write_ev(f, "hx", "cpu", T0 + 2 * HOUR + i * 100 * SEC);
    }
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    assert_int_equal(store_db_compact(f->db), ERR_OK);
    const struct slice both[] = {{"cpu", 3}, {"log", 3}};
    assert_int_equal(check_host(f, "hx", T0, T0 + 3 * HOUR - 1, "v", both, 2), 9);
    assert_int_equal(check_host(f, NULL, T0, T0 + 3 * HOUR - 1, "v", both, 2), 9);
    assert_int_equal(check_host(f, "hx", T0 + HOUR / 2, T0 + 3 * HOUR - 1, "v", both, 2), 9);
}

/* A host and event's rows kept (store_series_each) give what the cursor
 * gives (check_host: store_series_next's rows, then store_series_each's,
 * twice: the second from the runs kept), over whole windows and parts of
 * them; runs of more rows than a run kept may have are read for each
 * window's range instead. */
static void test_kept_runs(void **state)
{
    struct fixture *f = *state;
    for (int i = 0; i < 200; i++) {
        write_ev(f, "hx", "cpu", T0 + i * 40 * SEC);
        write_ev(f, "hx", "log", T0 + i * 40 * SEC + SEC);
        write_ev(f, "hy", "cpu", T0 + i * 40 * SEC + 2 * SEC);
    }
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    assert_int_equal(store_db_compact(f->db), ERR_OK);
    const struct slice cpu[] = {{"cpu", 3}}, both[] = {{"cpu", 3}, {"log", 3}};
    for (size_t max = 4; max <= 8; max += 4) { /* runs of ~30 rows a table: too many; then kept */
        ser_test_kept_max_rows(max == 4 ? 4 : 0);
        for (int round = 0; round < 2; round++) {
            assert_int_equal(check_host(f, "hx", T0, T0 + 3 * HOUR - 1, "v", cpu, 1), 9);
            assert_int_equal(check_host(f, "hx", T0, T0 + 3 * HOUR - 1, "v", both, 2), 9);
            assert_int_equal(check_host(f, "hy", T0 + HOUR / 3, T0 + 2 * HOUR + HOUR / 5, "v", both,
                                        2),
                             9);
            assert_int_equal(check_host(f, "hx", T0 + HOUR + 7 * SEC, T0 + HOUR + 20 * 60 * SEC,
                                        "v", cpu, 1),
                             3);
        }
    }
    ser_test_kept_max_rows(0);
}

/* Whether the cursors of host over [T0, T0 + 3 h) that have windows find
 * their first runs of cpu kept (store_series_kept): 1 all, 0 none, -1 some. */
static int kept_state(struct fixture *f, const char *host)
{
    struct store_snap *snap = store_snapshot(f->db);
    struct slice hs = slice_cstr(host), fs = slice_cstr("v");
    const struct slice cpu[] = {{"cpu", 3}};
    int yes = 0, no = 0;
    for (uint32_t bucket = 0; bucket < 3; bucket++) {
        struct store_series *cur;
        struct store_ts_range *win;
        size_t nwin;
        assert_int_equal(store_series_open(snap, bucket, &hs, T0, T0 + 3 * HOUR - 1, cpu, 1, &fs, 1,
                                           &cur, &win, &nwin),
                         ERR_OK);
        if (nwin)
            store_series_kept(cur) ? yes++ : no++;
        free(win);
        store_series_close(cur);
    }
    store_snap_release(snap);
    assert_true(yes + no > 0);
    return no == 0 ? 1 : yes == 0 ? 0 : -1;
}

/* A compaction to a window's final form keeps its runs (ser_keep_runs):
 * a cursor then finds them kept; a run of more rows than a run kept may
 * have is not, until a read has its window's range alone; the rows read
 * are the cursor's either way. */
static void test_keep_runs(void **state)
{
    struct fixture *f = *state;
    for (int i = 0; i < 2000; i++) {
        write_ev(f, "hv", "cpu", T0 + i * 4 * SEC);
        if (i % 5 == 0)
            write_ev(f, "hu", "cpu", T0 + i * 4 * SEC + SEC);
    }
    ser_test_kept_max_rows(100); /* hu's ~45 rows a table kept, hv's ~220 not */
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    assert_int_equal(store_db_compact(f->db), ERR_OK);
    assert_int_equal(kept_state(f, "hu"), 1);
    assert_int_equal(kept_state(f, "hv"), 0);
    const struct slice cpu[] = {{"cpu", 3}};
    assert_int_equal(check_host(f, "hu", T0, T0 + 3 * HOUR - 1, "v", cpu, 1), 9);
    assert_int_equal(check_host(f, "hv", T0, T0 + 3 * HOUR - 1, "v", cpu, 1), 9);
    assert_int_equal(kept_state(f, "hv"), 0);
    ser_test_kept_max_rows(0);
    assert_int_equal(check_host(f, "hv", T0 + HOUR / 2, T0 + 3 * HOUR - 1, "v", cpu, 1), 9);
    assert_int_equal(kept_state(f, "hv"), 1);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_log_rows),
        cmocka_unit_test(test_table),
        cmocka_unit_test_setup_teardown(test_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_gaps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kept_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kept_runs, setup_asc, teardown),
        cmocka_unit_test_setup_teardown(test_keep_runs, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
