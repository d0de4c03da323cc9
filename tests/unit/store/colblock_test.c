/* The columnar form of data blocks (store/table/colblock.h): every block
 * of row or index keys comes back byte for byte, whatever its values
 * (integer extremes, NaN and infinities, negative zero, decimals and
 * floats that are not, empty and long strings, many distinct names, ids
 * and values that are not records); keys of another layout are declined;
 * damaged forms are ERR_CORRUPT, never a crash or a read outside them; the
 * codec stores cold data blocks in it (type 3) and reads them back. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/coding.h"
#include "base/err.h"
#include "base/log.h"
#include "model/key.h"
#include "model/record.h"
#include "store/ikey.h"
#include "store/series.h"
#include "store/table/block.h"
#include "store/table/codec.h"
#include "store/table/colblock.h"
#include "store/table/zdict.h"
#include "tests/support/store_testutil.h"

static uint64_t rng = 88172645463325252ULL;
static int64_t ts_unit = 1; /* the stamps' precision in make_entries */

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

struct entry {
    struct buf key, value;
};

static int cmp_entry(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    return slice_cmp(slice_make(x->key.data, x->key.len), slice_make(y->key.data, y->key.len));
}

/* Sorts v by key and drops repeated keys; the entries left. */
static size_t sort_unique(struct entry *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_entry);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && cmp_entry(&v[m - 1], &v[i]) == 0) {
            buf_destroy(&v[i].key);
            buf_destroy(&v[i].value);
            continue;
        }
        v[m++] = v[i];
    }
    return m;
}

static const double odd_floats[] = {0.0,     1.5,    -2.25,         802.35, 1e300,
                                    -1e-300, 5e-324, 123456789.125, 0.1,    3.141592653589793};

static double a_float(void)
{
    switch (rnd() % 8) {
    case 0: return NAN;
    case 1: return rnd() % 2 ? INFINITY : -INFINITY;
    case 2: return -0.0;
    case 3: return odd_floats[rnd() % (sizeof odd_floats / sizeof odd_floats[0])];
    case 4: return (double)(int64_t)rnd() / 1e7;
    default: return (double)(rnd() % 100000) / 100.0; /* a decimal as text has it */
    }
}

/* A record of random tags and fields; nnames distinct names to pick from. */
static void a_record(struct buf *out, int nnames, bool decimals_only)
{
    static char names[64][32], svals[64][300];
    struct rec_tag tags[6];
    struct rec_field fields[8];
    size_t nt = rnd() % 4, nf = rnd() % 7;
    for (size_t i = 0; i < nt; i++) {
        snprintf(names[i], sizeof names[i], "tag%d", (int)(rnd() % (uint64_t)nnames));
        snprintf(svals[i], sizeof svals[i], "v%llu", (unsigned long long)(rnd() % 50));
        tags[i].key = slice_cstr(names[i]);
        tags[i].value = slice_cstr(rnd() % 9 ? svals[i] : "");
    }
    for (size_t i = 0; i < nf; i++) {
        struct rec_field *f = &fields[i];
        int kind = (int)(rnd() % 5) + 1;
        snprintf(names[10 + i], sizeof names[10 + i], "f%d", (int)(rnd() % (uint64_t)nnames));
        f->key = slice_cstr(names[10 + i]);
        f->type = (enum rec_type)kind;
        switch (kind) {
        case REC_FLOAT:
            f->v.f = decimals_only ? (double)(rnd() % 100000) / 100.0 : a_float();
            break;
        case REC_INT:
            f->v.i =
                rnd() % 3 ? (int64_t)(rnd() % 1000) - 500 : (rnd() % 2 ? INT64_MIN : INT64_MAX);
            break;
        case REC_UINT: f->v.u = rnd() % 3 ? rnd() % 1000 : UINT64_MAX; break;
        case REC_BOOL: f->v.b = rnd() % 2; break;
        default: {
            size_t len = rnd() % 5 == 0 ? 0 : rnd() % 250;
            for (size_t j = 0; j < len; j++)
                svals[20 + i][j] = (char)('a' + rnd() % 26);
            svals[20 + i][len] = 0;
            f->v.s = slice_make(svals[20 + i], len);
        }
        }
    }
    rec_encode(out, tags, nt, fields, nf);
}

static const char *const hosts[] = {"", "web-1", "web-2", "db", "a-much-longer-host-name.example"};
static const char *const events[] = {"cpu", "nginx_access", "x", "syslog"};

/* n sorted entries of row keys (layout rows) or index keys. */
static size_t make_entries(struct entry *v, size_t n, enum col_layout layout, int nnames,
                           bool decimals_only)
{
    int64_t ts = (int64_t)(rnd() % 1000000000000LL);
    for (size_t i = 0; i < n; i++) {
        buf_init(&v[i].key);
        buf_init(&v[i].value);
        struct buf ukey = BUF_INIT, id = BUF_INIT;
        ts += (int64_t)(rnd() % 5000000000ULL) / ts_unit * ts_unit;
        int64_t t = rnd() % 10 == 0 ? -ts : ts;
        struct slice host = slice_cstr(hosts[rnd() % 5]), event = slice_cstr(events[rnd() % 4]);
        if (layout == COL_INDEX) {
            key_encode_index(&ukey, host, event, t, rnd() % 2);
        } else if (layout == COL_SECTION) {
            ser_key(&ukey, host, &event, t, rnd() % 2, false);
        } else {
            int idk = (int)(rnd() % 6);
            if (idk == 1)
                buf_append(&id, "\x07not a record", 13);
            else if (idk > 1)
                a_record(&id, nnames, decimals_only);
            key_encode_row_id(&ukey, (uint32_t)(rnd() % 3), t, rnd() % 2, host, event,
                              slice_make(id.data, id.len));
        }
        int kind = (int)(rnd() % 3);
        uint64_t seq = rnd() % 4 == 0 ? 0 : rnd() % IKEY_MAX_SEQ;
        ikey_append(&v[i].key, slice_make(ukey.data, ukey.len), seq, kind);
        int vk = (int)(rnd() % 4);
        if ((layout == COL_ROWS || layout == COL_SECTION) && vk == 1)
            a_record(&v[i].value, nnames, decimals_only);
        else if (vk == 2)
            buf_append(&v[i].value, "raw value \x01\x02", 12);
        buf_destroy(&ukey);
        buf_destroy(&id);
    }
    return sort_unique(v, n);
}

static void free_entries(struct entry *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        buf_destroy(&v[i].key);
        buf_destroy(&v[i].value);
    }
}

static struct slice build(struct blk_builder *b, const struct entry *v, size_t n)
{
    blk_builder_reset(b);
    for (size_t i = 0; i < n; i++)
        blk_add(b, slice_make(v[i].key.data, v[i].key.len),
                slice_make(v[i].value.data, v[i].value.len));
    return blk_finish(b);
}

/* raw in the columnar form (into col) and back, byte for byte; a bound
 * below the block's size is corruption, not a longer read. */
static void expect_round_trip(struct slice raw, enum col_layout layout, struct buf *col)
{
    struct buf back = BUF_INIT;
    assert_true(col_encode(raw, layout, col));
    assert_int_equal(col_decode(slice_make(col->data, col->len), raw.len, &back), ERR_OK);
    assert_int_equal(back.len, raw.len);
    assert_memory_equal(back.data, raw.ptr, raw.len);
    assert_int_equal(col_decode(slice_make(col->data, col->len), raw.len - 1, &back), ERR_CORRUPT);
    buf_destroy(&back);
}

static void check_round_trip(enum col_layout layout, size_t n, int nnames, bool decimals_only)
{
    struct entry *v = calloc(n, sizeof *v);
    size_t m = make_entries(v, n, layout, nnames, decimals_only);
    struct blk_builder b;
    blk_builder_init(&b);
    struct slice raw = build(&b, v, m);
    struct buf col = BUF_INIT;
    expect_round_trip(raw, layout, &col);
    buf_destroy(&col);
    blk_builder_destroy(&b);
    free_entries(v, m);
    free(v);
}

static void test_round_trip(void **state)
{
    (void)state;
    for (int round = 0; round < 200; round++) {
        size_t n = 1 + rnd() % 400;
        ts_unit = round % 4 == 1 ? 1000000 : 1;
        check_round_trip(COL_ROWS, n, 1 + (int)(rnd() % 40), round % 3 == 0);
        check_round_trip(COL_INDEX, n, 1, false);
        check_round_trip(COL_SECTION, n, 1 + (int)(rnd() % 8), round % 2 == 0);
    }
    ts_unit = 1;
}

/* Stamps in whole milliseconds or seconds: the deltas are stored divided
 * by their common divisor (the layout byte says so), and come back. */
static void test_stamps_divided(void **state)
{
    (void)state;
    const int64_t units[] = {1000, 1000000, 1000000000};
    for (size_t u = 0; u < 3; u++) {
        for (int desc = 0; desc < 2; desc++) {
            struct blk_builder b;
            blk_builder_init(&b);
            struct entry v[200];
            int64_t ts = 1700000000LL * 1000000000LL;
            for (int i = 0; i < 200; i++) {
                struct buf ukey = BUF_INIT;
                buf_init(&v[i].key);
                buf_init(&v[i].value);
                ts += (int64_t)(rnd() % 3000) * units[u];
                key_encode_row(&ukey, 2, ts, desc, slice_cstr(hosts[rnd() % 5]),
                               slice_cstr(events[rnd() % 4]));
                ikey_append(&v[i].key, slice_make(ukey.data, ukey.len), 0, IKEY_PUT);
                buf_destroy(&ukey);
            }
            size_t m = sort_unique(v, 200);
            struct slice raw = build(&b, v, m);
            struct buf col = BUF_INIT;
            expect_round_trip(raw, COL_ROWS, &col);
            assert_true((unsigned char)col.data[0] & 0x80); /* LAYOUT_GCD */
            buf_destroy(&col);
            blk_builder_destroy(&b);
            free_entries(v, m);
        }
    }
}

/* More names than a block's column table takes: the records past it are
 * stored whole, and the block still comes back. */
static void test_many_names(void **state)
{
    (void)state;
    check_round_trip(COL_ROWS, 3000, 100000, false);
}

static void test_long_strings(void **state)
{
    (void)state;
    struct buf big = BUF_INIT, id = BUF_INIT, ukey = BUF_INIT, ik = BUF_INIT;
    for (int i = 0; i < 200000; i++)
        buf_putc(&big, (char)('a' + i % 23));
    struct rec_field f = {.key = slice_cstr("msg"), .type = REC_STRING};
    f.v.s = slice_make(big.data, big.len);
    rec_encode(&id, NULL, 0, &f, 1);
    key_encode_row_id(&ukey, 1, 42, false, slice_cstr("h"), slice_cstr("e"),
                      slice_make(id.data, id.len));
    ikey_append(&ik, slice_make(ukey.data, ukey.len), 7, IKEY_PUT);
    struct blk_builder b;
    blk_builder_init(&b);
    blk_add(&b, slice_make(ik.data, ik.len), slice_make("", 0));
    struct slice raw = blk_finish(&b);
    struct buf col = BUF_INIT;
    expect_round_trip(raw, COL_ROWS, &col);
    buf_destroy(&col);
    buf_destroy(&big);
    buf_destroy(&id);
    buf_destroy(&ukey);
    buf_destroy(&ik);
    blk_builder_destroy(&b);
}

/* Keys of another layout, and blocks that are not blocks, are declined. */
static void test_declined(void **state)
{
    (void)state;
    struct blk_builder b;
    blk_builder_init(&b);
    struct buf ik = BUF_INIT, col = BUF_INIT;
    ikey_append(&ik, slice_cstr("plain-key"), 1, IKEY_PUT);
    blk_add(&b, slice_make(ik.data, ik.len), slice_cstr("v"));
    struct slice raw = blk_finish(&b);
    assert_false(col_encode(raw, COL_ROWS, &col));
    assert_false(col_encode(raw, COL_INDEX, &col));
    assert_false(col_encode(raw, COL_NONE, &col));
    assert_false(col_encode(slice_make("\x01\x02", 2), COL_ROWS, &col));
    assert_int_equal(col.len, 0);
    /* an empty block has no columnar form */
    blk_builder_reset(&b);
    raw = blk_finish(&b);
    assert_false(col_encode(raw, COL_ROWS, &col));
    buf_destroy(&ik);
    buf_destroy(&col);
    blk_builder_destroy(&b);
}

/* Every truncation of a form and many single-byte changes: ERR_CORRUPT or a
 * block within the bound, never a crash (ASan and UBSan watch the reads). */
static void test_damage(void **state)
{
    (void)state;
    struct entry v[120];
    size_t m = make_entries(v, 120, COL_ROWS, 8, false);
    struct blk_builder b;
    blk_builder_init(&b);
    struct slice raw = build(&b, v, m);
    struct buf col = BUF_INIT, bad = BUF_INIT, back = BUF_INIT;
    assert_true(col_encode(raw, COL_ROWS, &col));
    for (size_t n = 0; n < col.len; n++) {
        buf_reset(&bad);
        buf_append(&bad, col.data, n);
        assert_int_equal(col_decode(slice_make(bad.data, bad.len), raw.len, &back), ERR_CORRUPT);
    }
    for (int i = 0; i < 20000; i++) {
        buf_reset(&bad);
        buf_append(&bad, col.data, col.len);
        bad.data[rnd() % bad.len] ^= (char)(1 + rnd() % 255);
        int rc = col_decode(slice_make(bad.data, bad.len), raw.len, &back);
        assert_true(rc == ERR_OK || rc == ERR_CORRUPT);
        if (rc == ERR_OK)
            assert_true(back.len <= raw.len);
    }
    buf_destroy(&col);
    buf_destroy(&bad);
    buf_destroy(&back);
    blk_builder_destroy(&b);
    free_entries(v, m);
}

/* The codec stores a data block of a zstd table in its columnar form and
 * gives back the raw block; fast tables and other blocks stay as they were. */
static void test_codec_type3(void **state)
{
    (void)state;
    struct entry v[300];
    size_t m = make_entries(v, 300, COL_ROWS, 4, true);
    struct blk_builder b;
    blk_builder_init(&b);
    struct slice raw = build(&b, v, m);
    struct buf enc = BUF_INIT, dec = BUF_INIT;
    const struct codec_opts z = {CODEC_MODE_ZSTD, 3, NULL}, fast = {CODEC_MODE_FAST, 0, NULL};
    codec_encode_data(raw, &z, COL_ROWS, &enc);
    assert_int_equal(codec_stored_type(slice_make(enc.data, enc.len)), CODEC_COLZSTD);
    assert_int_equal(codec_decode(slice_make(enc.data, enc.len), "t", 0, &dec), ERR_OK);
    assert_int_equal(dec.len, raw.len);
    assert_memory_equal(dec.data, raw.ptr, raw.len);
    buf_reset(&enc);
    codec_encode_data(raw, &fast, COL_ROWS, &enc);
    assert_int_equal(codec_stored_type(slice_make(enc.data, enc.len)), CODEC_LZ4);
    buf_reset(&enc);
    codec_encode_data(raw, &z, COL_NONE, &enc);
    assert_int_equal(codec_stored_type(slice_make(enc.data, enc.len)), CODEC_ZSTD);
    buf_destroy(&enc);
    buf_destroy(&dec);
    blk_builder_destroy(&b);
    free_entries(v, m);
}

/* A dictionary set trains from the forms of blocks it was offered, writes
 * its file, and blocks compressed with it (type 4) read back with the set,
 * with the set opened again from its folder, and as corrupt without it. */
static void test_codec_dictionary(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("zdict");
    struct buf sub = BUF_INIT;
    buf_printf(&sub, "%s/dict", dir);
    atomic_ullong corrupt = 0;
    zdict_test_set_min_samples(1);
    struct zdict_set *set = zdict_set_open(env_posix(), sub.data, 3, &corrupt);
    const void *cdict = NULL;
    assert_int_equal(zdict_set_current(set, &cdict), 0);
    const struct codec_opts z = {CODEC_MODE_ZSTD, 3, set};
    struct blk_builder b;
    blk_builder_init(&b);
    struct buf enc = BUF_INIT, dec = BUF_INIT;
    for (int i = 0; i < 20; i++) { /* type 3 while there is no dictionary; each a sample */
        struct entry v[200];
        size_t m = make_entries(v, 200, COL_ROWS, 4, true);
        buf_reset(&enc);
        codec_encode_data(build(&b, v, m), &z, COL_ROWS, &enc);
        assert_int_equal(codec_stored_type(slice_make(enc.data, enc.len)), CODEC_COLZSTD);
        free_entries(v, m);
    }
    assert_int_equal(zdict_set_train(set), ERR_OK);
    assert_int_equal(zdict_set_current(set, &cdict), 1);
    assert_non_null(zdict_set_ddict(set, 1));
    assert_null(zdict_set_ddict(set, 2));

    struct entry v[300];
    size_t m = make_entries(v, 300, COL_ROWS, 4, true);
    struct slice raw = build(&b, v, m);
    buf_reset(&enc);
    codec_encode_data(raw, &z, COL_ROWS, &enc);
    struct slice stored = slice_make(enc.data, enc.len);
    assert_int_equal(codec_stored_type(stored), CODEC_COLZSTD_DICT);
    assert_int_equal(codec_decode_dict(stored, "t", 0, set, &dec), ERR_OK);
    assert_int_equal(dec.len, raw.len);
    assert_memory_equal(dec.data, raw.ptr, raw.len);
    assert_int_equal(codec_decode(stored, "t", 0, &dec), ERR_CORRUPT);
    zdict_set_unref(set);

    set = zdict_set_open(env_posix(), sub.data, 3, &corrupt);
    assert_int_equal(zdict_set_current(set, &cdict), 1);
    assert_int_equal(codec_decode_dict(stored, "t", 0, set, &dec), ERR_OK);
    assert_memory_equal(dec.data, raw.ptr, raw.len);
    zdict_set_unref(set);
    assert_int_equal(corrupt, 0);

    /* a damaged file is left out and counted; the next dictionary is 2 */
    buf_printf(&sub, "/000001.zd");
    assert_int_equal(tu_flip_byte(sub.data, 20, 0x10), 0);
    sub.len -= strlen("/000001.zd");
    set = zdict_set_open(env_posix(), buf_cstr(&sub), 3, &corrupt);
    assert_int_equal(corrupt, 1);
    assert_int_equal(zdict_set_current(set, &cdict), 0);
    assert_int_equal(codec_decode_dict(stored, "t", 0, set, &dec), ERR_CORRUPT);
    const struct codec_opts z2 = {CODEC_MODE_ZSTD, 3, set};
    for (int i = 0; i < 10; i++) {
        buf_reset(&enc);
        codec_encode_data(raw, &z2, COL_ROWS, &enc);
    }
    assert_int_equal(zdict_set_train(set), ERR_OK);
    assert_int_equal(zdict_set_current(set, &cdict), 2);
    zdict_set_unref(set);

    zdict_test_set_min_samples(0);
    free_entries(v, m);
    buf_destroy(&enc);
    buf_destroy(&dec);
    buf_destroy(&sub);
    blk_builder_destroy(&b);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    if (tu_tsan_skip_file())
        return 0;
    log_set_level((enum log_level)(LOG_ERROR + 1)); /* damage is expected: no log */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),       cmocka_unit_test(test_many_names),
        cmocka_unit_test(test_long_strings),     cmocka_unit_test(test_declined),
        cmocka_unit_test(test_damage),           cmocka_unit_test(test_codec_type3),
        cmocka_unit_test(test_codec_dictionary), cmocka_unit_test(test_stamps_divided),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
