/* Columnar data blocks (store/table/colblock.h) and their codec types:
 * every value type round-trips exactly (int64/uint64 extremes, NaN with
 * payloads, infinities, -0.0, empty and very long strings, many distinct
 * tags, ids that are not records), host index keys too, keys of no known
 * shape stay row blocks, and damaged or cut blocks give ERR_CORRUPT, never a crash. */
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
#include "store/table/block.h"
#include "store/table/codec.h"
#include "store/table/colblock.h"
#include "store/table/sst.h"
#include "store/table/sst_int.h"
#include "tests/support/store_testutil.h"

static uint64_t rng(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ULL;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double bits_double(uint64_t b)
{
    double d;
    memcpy(&d, &b, 8);
    return d;
}

/* Makes the user key in k an internal key. */
static void add_trailer(struct buf *k, uint64_t seq, int kind)
{
    buf_reserve(k, IKEY_TRAILER);
    ikey_put_trailer(k->data + k->len, seq, kind);
    k->len += IKEY_TRAILER;
}

/* A field of every type in turn, with the awkward values often. */
static void make_field(uint64_t *s, int i, struct rec_field *f, char *name, size_t cap,
                       struct buf *text)
{
    static const int64_t ints[] = {INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN + 1};
    static const uint64_t uints[] = {0, UINT64_MAX, 1, UINT64_MAX - 1, 1ULL << 63};
    const double floats[] = {NAN,
                             -NAN,
                             INFINITY,
                             -INFINITY,
                             -0.0,
                             0.0,
                             bits_double(0x7ff0000000000001ULL), /* a signalling NaN */
                             bits_double(0x7ff8dead0000beefULL), /* a NaN with a payload */
                             bits_double(1),                     /* the smallest denormal */
                             1.5e308};
    uint64_t r = rng(s);
    int type = 1 + (int)(r % 5);
    snprintf(name, cap, "f%d_%d", type, (int)(r >> 8) % 3);
    f->key = slice_cstr(name);
    f->type = (enum rec_type)type;
    switch (type) {
    case REC_FLOAT:
        f->v.f = r % 3 ? floats[(r >> 16) % 10] : (double)(int64_t)(r >> 20) / 7.0;
        break;
    case REC_INT: f->v.i = r % 3 ? ints[(r >> 16) % 6] : (int64_t)(r >> 4); break;
    case REC_UINT: f->v.u = r % 3 ? uints[(r >> 16) % 5] : r; break;
    case REC_BOOL: f->v.b = (r >> 16) & 1; break;
    default:
        buf_reset(text);
        size_t len = (r >> 16) % 4 == 0   ? 0
                     : (r >> 16) % 8 == 1 ? 70000 + (size_t)i
                                          : (r >> 20) % 200;
        for (size_t k = 0; k < len; k++)
            buf_putc(text, (char)(k % 7 == 0 ? (char)(rng(s) & 0xff) : 'a' + (char)(k % 26)));
        f->v.s = slice_make(text->data, text->len);
    }
}

/* A record of up to 3 tags (of many distinct keys) and up to 4 fields. */
static void make_record(uint64_t *s, int i, bool tags, bool fields, struct buf *out)
{
    struct rec_tag t[3];
    struct rec_field f[4];
    char tk[3][32], tv[3][32], fk[4][32];
    struct buf text[4] = {BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT};
    size_t nt = tags ? (size_t)(rng(s) % 4) : 0, nf = fields ? (size_t)(rng(s) % 5) : 0;
    for (size_t k = 0; k < nt; k++) {
        snprintf(tk[k], sizeof tk[k], "tag%u", (unsigned)(rng(s) % 2000));
        snprintf(tv[k], sizeof tv[k], "%s%u", rng(s) % 5 ? "v" : "", (unsigned)(rng(s) % 50));
        t[k].key = slice_cstr(tk[k]);
        t[k].value = rng(s) % 9 ? slice_cstr(tv[k]) : slice_make("", 0);
    }
    for (size_t k = 0; k < nf; k++)
        make_field(s, i, &f[k], fk[k], sizeof fk[k], &text[k]);
    rec_encode(out, t, nt, f, nf);
    for (int k = 0; k < 4; k++)
        buf_destroy(&text[k]);
}

/* A row block of n entries with every kind of key end and value. */
static void make_block(uint64_t seed, int n, struct blk_builder *b)
{
    uint64_t s = seed;
    struct buf key = BUF_INIT, id = BUF_INIT, val = BUF_INIT;
    char host[32], event[32];
    for (int i = 0; i < n; i++) {
        int64_t ts = i == 0 ? INT64_MIN : i == n - 1 ? INT64_MAX : -5000000 + i * 997;
        uint32_t bucket = (uint32_t)(i * 4 / n) * 21845; /* 0 .. 65535 */
        snprintf(host, sizeof host, "host-%u", (unsigned)(rng(&s) % 300));
        snprintf(event, sizeof event, "ev%u", (unsigned)(rng(&s) % 20));
        buf_reset(&id);
        uint64_t shape = rng(&s) % 6;
        if (shape == 1 || shape == 2)
            make_record(&s, i, true, shape == 2, &id);
        else if (shape == 3) /* an id that is no record */
            buf_printf(&id, "\xff%s", host);
        buf_reset(&key);
        key_encode_row_id(&key, bucket, ts, false, slice_cstr(host), slice_cstr(event),
                          slice_make(id.data, id.len));
        size_t ulen = key.len;
        uint64_t seq = i % 5 == 0 ? 0 : i % 7 == 0 ? IKEY_MAX_SEQ - 5 : (uint64_t)i * 31;
        int versions = 1 + (int)(rng(&s) % 3);
        for (int v = 0; v < versions; v++) {
            key.len = ulen;
            int kind = (int)(rng(&s) % 3);
            add_trailer(&key, seq + (uint64_t)(versions - v), kind);
            buf_reset(&val);
            uint64_t vs = rng(&s) % 4;
            if (kind != IKEY_DEL && vs == 1)
                make_record(&s, i, false, true, &val);
            else if (kind != IKEY_DEL && vs == 2)
                make_record(&s, i, true, true, &val);
            else if (kind != IKEY_DEL && vs == 3) /* no record */
                buf_printf(&val, "%c%c", 3, 1);
            blk_add(b, slice_make(key.data, key.len), slice_make(val.data, val.len));
        }
    }
    buf_destroy(&key);
    buf_destroy(&id);
    buf_destroy(&val);
}

static void test_roundtrip(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        struct blk_builder b;
        blk_builder_init(&b);
        make_block(seed, seed == 1 ? 1 : (int)(seed * 40), &b);
        struct slice raw = blk_finish(&b);
        struct buf col = BUF_INIT, dec = BUF_INIT;
        assert_true(colblock_encode(raw, &col));
        assert_int_equal(colblock_decode(slice_make(col.data, col.len), CODEC_MAX_RAW, &dec),
                         ERR_OK);
        assert_int_equal(dec.len, raw.len);
        assert_memory_equal(dec.data, raw.ptr, raw.len);
        /* through the codec, both ways of compressing */
        for (int fast = 0; fast < 2; fast++) {
            struct buf enc = BUF_INIT;
            codec_encode_rows(raw, fast, &enc);
            assert_int_equal(codec_decode(slice_make(enc.data, enc.len), "t", 0, &dec), ERR_OK);
            assert_int_equal(dec.len, raw.len);
            assert_memory_equal(dec.data, raw.ptr, raw.len);
            buf_destroy(&enc);
        }
        buf_destroy(&col);
        buf_destroy(&dec);
        blk_builder_destroy(&b);
    }
}

/* Blocks of log-like rows are stored column-wise (types 2 and 3) and
 * shrink well below LZ4 of the row block. */
static void test_types_and_size(void **state)
{
    (void)state;
    struct blk_builder b;
    blk_builder_init(&b);
    struct buf key = BUF_INIT, val = BUF_INIT;
    uint64_t s = 7;
    for (int i = 0; i < 300; i++) {
        char host[16], msg[128];
        snprintf(host, sizeof host, "h%03u", (unsigned)(rng(&s) % 100));
        snprintf(msg, sizeof msg, "GET /api/v1/items/%u HTTP/1.1 200 %u",
                 (unsigned)(rng(&s) % 9999), (unsigned)(rng(&s) % 5000));
        struct rec_field f[3] = {{.key = slice_cstr("value"), .type = REC_FLOAT},
                                 {.key = slice_cstr("code"), .type = REC_INT},
                                 {.key = slice_cstr("msg"), .type = REC_STRING}};
        f[0].v.f = (double)(rng(&s) % 100000) / 100.0;
        f[1].v.i = 200;
        f[2].v.s = slice_cstr(msg);
        buf_reset(&val);
        rec_encode(&val, NULL, 0, f, 3);
        buf_reset(&key);
        key_encode_row(&key, 3, 1700000000000000000LL + i * 1000003LL, false, slice_cstr(host),
                       slice_cstr("nginx_access"));
        add_trailer(&key, 0, IKEY_MERGE);
        blk_add(&b, slice_make(key.data, key.len), slice_make(val.data, val.len));
    }
    struct slice raw = blk_finish(&b);
    struct buf rows = BUF_INIT, fast = BUF_INIT, cold = BUF_INIT;
    codec_encode(raw, true, &rows);
    codec_encode_rows(raw, true, &fast);
    codec_encode_rows(raw, false, &cold);
    assert_int_equal((unsigned char)fast.data[fast.len - 5], CODEC_COL_LZ4);
    assert_int_equal((unsigned char)cold.data[cold.len - 5], CODEC_COL_ZSTD);
    assert_true(fast.len < rows.len * 3 / 4);
    assert_true(cold.len < fast.len);
    codec_test_set_cold(CODEC_COL_LZ4);
    buf_reset(&cold);
    codec_encode_rows(raw, false, &cold);
    assert_int_equal((unsigned char)cold.data[cold.len - 5], CODEC_COL_LZ4);
    codec_test_set_cold(CODEC_COL_ZSTD);
    buf_destroy(&rows);
    buf_destroy(&fast);
    buf_destroy(&cold);
    buf_destroy(&key);
    buf_destroy(&val);
    blk_builder_destroy(&b);
}

/* Host index keys round-trip too; keys of no known shape stay row blocks. */
static void test_index_and_other_keys(void **state)
{
    (void)state;
    struct blk_builder b, o;
    blk_builder_init(&b);
    blk_builder_init(&o);
    struct buf key = BUF_INIT, col = BUF_INIT, enc = BUF_INIT, dec = BUF_INIT;
    for (int i = 0; i < 400; i++) {
        buf_reset(&key);
        buf_printf(&key, "host%03d", i / 40);
        buf_putc(&key, 0);
        char ts[8];
        coding_put_u64be(ts, (uint64_t)(i % 40) * 1000000007ULL); /* holds zero bytes */
        buf_append(&key, ts, 8);
        buf_printf(&key, "ev%d", i % 3);
        buf_putc(&key, 0);
        add_trailer(&key, i % 4 ? 9 + (uint64_t)i : 0, i % 5 ? IKEY_PUT : IKEY_DEL);
        blk_add(&b, slice_make(key.data, key.len), slice_make("", 0));
        buf_reset(&key);
        buf_printf(&key, "key-%06d", i);
        add_trailer(&key, 9, IKEY_PUT);
        blk_add(&o, slice_make(key.data, key.len), slice_make("v", 1));
    }
    struct slice raw = blk_finish(&b);
    assert_true(colblock_encode(raw, &col));
    assert_int_equal(colblock_decode(slice_make(col.data, col.len), CODEC_MAX_RAW, &dec), ERR_OK);
    assert_int_equal(dec.len, raw.len);
    assert_memory_equal(dec.data, raw.ptr, raw.len);
    codec_encode_rows(raw, true, &enc);
    assert_int_equal((unsigned char)enc.data[enc.len - 5], CODEC_COL_LZ4);
    assert_true(enc.len < raw.len / 4);
    buf_reset(&col);
    raw = blk_finish(&o);
    assert_false(colblock_encode(raw, &col));
    assert_int_equal(col.len, 0);
    buf_reset(&enc);
    codec_encode_rows(raw, true, &enc);
    assert_true((unsigned char)enc.data[enc.len - 5] <= CODEC_LZ4);
    assert_int_equal(codec_decode(slice_make(enc.data, enc.len), "t", 0, &dec), ERR_OK);
    assert_memory_equal(dec.data, raw.ptr, raw.len);
    assert_false(colblock_encode(slice_make("xyz", 3), &col));
    buf_destroy(&key);
    buf_destroy(&col);
    buf_destroy(&enc);
    buf_destroy(&dec);
    blk_builder_destroy(&b);
    blk_builder_destroy(&o);
}

/* Every cut is corruption; every flipped byte is corruption or a block
 * that decodes (to other rows), never a crash or an overread (ASan). A
 * flipped stored block always fails its checksum. */
static void test_corrupt(void **state)
{
    (void)state;
    struct blk_builder b;
    blk_builder_init(&b);
    make_block(99, 60, &b);
    struct slice raw = blk_finish(&b);
    struct buf col = BUF_INIT, dec = BUF_INIT, enc = BUF_INIT;
    assert_true(colblock_encode(raw, &col));
    for (size_t n = 0; n < col.len; n++) {
        char *cut = xmalloc(n ? n : 1); /* exactly n bytes: ASan sees overreads */
        memcpy(cut, col.data, n);
        assert_int_equal(colblock_decode(slice_make(cut, n), CODEC_MAX_RAW, &dec), ERR_CORRUPT);
        free(cut);
    }
    int decoded = 0;
    for (size_t off = 0; off < col.len; off++) {
        for (int bit = 0; bit < 8; bit += 3) {
            col.data[off] ^= (char)(1 << bit);
            int rc = colblock_decode(slice_make(col.data, col.len), CODEC_MAX_RAW, &dec);
            assert_true(rc == ERR_OK || rc == ERR_CORRUPT);
            decoded += rc == ERR_OK;
            col.data[off] ^= (char)(1 << bit);
        }
    }
    assert_true(decoded < (int)col.len * 3); /* most damage is seen */
    assert_int_equal(colblock_decode(slice_make(col.data, col.len), 100, &dec), ERR_CORRUPT);
    codec_encode_rows(raw, false, &enc);
    for (size_t off = 0; off < enc.len; off += 7) {
        enc.data[off] ^= 0x10;
        assert_int_equal(codec_decode(slice_make(enc.data, enc.len), "t", 0, &dec), ERR_CORRUPT);
        enc.data[off] ^= 0x10;
    }
    buf_destroy(&col);
    buf_destroy(&dec);
    buf_destroy(&enc);
    blk_builder_destroy(&b);
}

/* A table of version 4 reads the same rows as one of version 3, in both
 * directions and by point reads, and is smaller. */
static void test_sst_v4(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("col");
    struct sst_props props[2];
    char path[2][512];
    uint32_t versions[2] = {3, 4};
    for (int v = 0; v < 2; v++) {
        sst_test_set_version(versions[v]);
        snprintf(path[v], sizeof path[v], "%s/%06d.sst", dir, v + 1);
        struct sst_build_opts opts = {.bloom_key = key_row_base_len};
        struct sst_builder *sb;
        assert_int_equal(sst_builder_new(env_posix(), path[v], &opts, &sb), ERR_OK);
        struct blk_builder b;
        blk_builder_init(&b);
        make_block(5, 3000, &b);
        struct slice raw = blk_finish(&b);
        struct blk blk;
        assert_int_equal(blk_parse(raw, &blk), ERR_OK);
        struct iter *it = blk_iter(&blk);
        for (it_seek_first(it); it_valid(it); it_next(it))
            assert_int_equal(sst_add(sb, it_key(it), it_value(it), 0), ERR_OK);
        it_destroy(it);
        assert_int_equal(sst_builder_finish(sb, &props[v]), ERR_OK);
        blk_builder_destroy(&b);
    }
    sst_test_set_version(0);
    assert_int_equal(props[0].entries, props[1].entries);
    assert_true(props[1].size < props[0].size);
    struct sst_table *t[2];
    atomic_ullong corrupt = 0;
    for (int v = 0; v < 2; v++) {
        assert_int_equal(sst_open(env_posix(), path[v], NULL, &corrupt, &t[v]), ERR_OK);
        assert_int_equal(sst_version(t[v]), versions[v]);
    }
    struct iter *a = sst_iter(t[0]), *c = sst_iter(t[1]);
    size_t n = 0;
    for (it_seek_last(a), it_seek_last(c); it_valid(a); it_prev(a), it_prev(c), n++) {
        assert_true(it_valid(c));
        assert_true(slice_eq(it_key(a), it_key(c)));
        assert_true(slice_eq(it_value(a), it_value(c)));
        if (n % 17 == 0) { /* a point read of this version's user key */
            struct buf v4 = BUF_INIT;
            int kind;
            uint64_t seq;
            struct slice k = it_key(a);
            assert_int_equal(sst_find_seq(t[1], ikey_user(k), ikey_seq(k), &kind, &v4, &seq),
                             ERR_OK);
            assert_int_equal(seq, ikey_seq(k));
            assert_int_equal(kind, ikey_kind(k));
            assert_true(slice_eq(slice_make(v4.data, v4.len), it_value(a)));
            buf_destroy(&v4);
        }
    }
    assert_false(it_valid(c));
    assert_int_equal(n, props[0].entries);
    assert_int_equal(it_status(c), ERR_OK);
    it_destroy(a);
    it_destroy(c);
    sst_unref(t[0]);
    sst_unref(t[1]);
    assert_int_equal(corrupt, 0);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    log_set_level(LOG_ERROR + 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_types_and_size),
        cmocka_unit_test(test_index_and_other_keys),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_sst_v4),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
