/* Blocks, bloom filters, the codec, SSTables and the block cache: round
 * trips, seeks in both directions, and damaged bytes giving ERR_CORRUPT
 * (never a crash, never a wrong row). */
#include <ctype.h>
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
#include "base/crc32c.h"
#include "base/err.h"
#include "base/log.h"
#include "store/ikey.h"
#include "store/table/block.h"
#include "store/table/bloom.h"
#include "store/table/cache.h"
#include "store/table/codec.h"
#include "store/table/sst.h"
#include "tests/support/store_testutil.h"

static void key_of(int i, char *k, size_t n)
{
    snprintf(k, n, "key-%06d", i);
}

static void test_block(void **state)
{
    (void)state;
    struct blk_builder b;
    blk_builder_init(&b);
    char k[32], v[32];
    for (int i = 0; i < 1000; i += 2) {
        key_of(i, k, sizeof k);
        snprintf(v, sizeof v, "v%d", i);
        blk_add(&b, slice_cstr(k), slice_cstr(v));
    }
    struct slice raw = blk_finish(&b);
    struct blk blk;
    assert_int_equal(blk_parse(raw, &blk), ERR_OK);
    struct iter *it = blk_iter(&blk);
    int n = 0;
    for (it_seek_first(it); it_valid(it); it_next(it), n++) {
        key_of(n * 2, k, sizeof k);
        assert_true(slice_eq(it_key(it), slice_cstr(k)));
    }
    assert_int_equal(n, 500);
    n = 499;
    for (it_seek_last(it); it_valid(it); it_prev(it), n--) {
        key_of(n * 2, k, sizeof k);
        assert_true(slice_eq(it_key(it), slice_cstr(k)));
        snprintf(v, sizeof v, "v%d", n * 2);
        assert_true(slice_eq(it_value(it), slice_cstr(v)));
    }
    assert_int_equal(n, -1);
    for (int i = 0; i < 1001; i++) {
        key_of(i, k, sizeof k);
        it_seek(it, slice_cstr(k));
        if (i >= 999) {
            assert_false(it_valid(it));
            continue;
        }
        char want[32];
        key_of((i + 1) / 2 * 2, want, sizeof want);
        assert_true(slice_eq(it_key(it), slice_cstr(want)));
        if (i > 1) {
            it_prev(it);
            key_of((i + 1) / 2 * 2 - 2, want, sizeof want);
            assert_true(slice_eq(it_key(it), slice_cstr(want)));
        }
    }
    /* seeks from where the iterator stands: forward by 0 to 60 keys (within
     * one restart interval, to the next, across several), back, past the end */
    it_seek_first(it);
    for (int i = 0, step = 0; i < 1001; i += step % 61, step += 7) {
        for (int back = 0; back < 2; back++) {
            int t = back ? i / 3 : i;
            key_of(t, k, sizeof k);
            it_seek(it, slice_cstr(k));
            if (t >= 999) {
                assert_false(it_valid(it));
                it_seek_first(it);
                continue;
            }
            char want[32];
            key_of((t + 1) / 2 * 2, want, sizeof want);
            assert_true(slice_eq(it_key(it), slice_cstr(want)));
            snprintf(v, sizeof v, "v%d", (t + 1) / 2 * 2);
            assert_true(slice_eq(it_value(it), slice_cstr(v)));
        }
    }
    assert_int_equal(it_status(it), ERR_OK);
    it_destroy(it);
    /* damage: every byte flipped in turn never crashes; errors are sticky */
    struct buf copy = BUF_INIT;
    for (size_t off = 0; off < raw.len; off += 7) {
        buf_reset(&copy);
        buf_append(&copy, raw.ptr, raw.len);
        copy.data[off] ^= 0x5a;
        if (blk_parse(slice_make(copy.data, copy.len), &blk) != ERR_OK)
            continue;
        it = blk_iter(&blk);
        int rows = 0;
        for (it_seek_first(it); it_valid(it) && rows < 10000; it_next(it))
            rows++;
        for (it_seek_last(it); it_valid(it) && rows < 20000; it_prev(it))
            rows++;
        it_seek(it, slice_cstr("key-000500"));
        if (it_valid(it)) /* a forward seek from there */
            it_seek(it, slice_cstr("key-000900"));
        it_destroy(it);
    }
    buf_destroy(&copy);
    blk_builder_destroy(&b);
}

static uint64_t blk_rng = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
    blk_rng ^= blk_rng << 13;
    blk_rng ^= blk_rng >> 7;
    blk_rng ^= blk_rng << 17;
    return blk_rng;
}

static int cmp_keys(const void *a, const void *b)
{
    const struct buf *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->data, y->data, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* A key of the common prefix "pre\0fix" then 0..12 bytes over a small
 * alphabet with 0x00 and 0xff in it (keys that are prefixes of others,
 * keys shorter than the prefix plus a word). */
static void random_key(struct buf *k, bool with_prefix)
{
    static const char alpha[] = {'\0', '\x01', 'a', 'b', 'z', '\x7f', '\x80', '\xff'};
    buf_reset(k);
    if (with_prefix)
        buf_append(k, "pre\0fix", 7);
    else
        buf_puts(k, rnd() % 2 ? "pra" : "prf");
    size_t n = rnd() % 13;
    for (size_t i = 0; i < n; i++)
        buf_putc(k, alpha[rnd() % sizeof alpha]);
}

/* blk_index_restarts: every seek (cold and forward from where the iterator
 * stands) ends where it ends in the same block unindexed and at the first
 * key >= the target found by brute force, for targets with and without
 * the block's common prefix (keys with 0x00 and 0xff bytes, keys that are
 * prefixes of others). */
/* --- blk_keep: entries passed over inside a block --- */

static uint64_t keep_rng = 0x2545f4914f6cdd1dULL;

static unsigned keep_rand(unsigned n)
{
    keep_rng ^= keep_rng << 13;
    keep_rng ^= keep_rng >> 7;
    keep_rng ^= keep_rng << 17;
    return (unsigned)(keep_rng % n);
}

static bool holds_folded(struct slice s, const char *x)
{
    size_t n = strlen(x);
    for (size_t i = 0; i + n <= s.len; i++) {
        size_t j = 0;
        while (j < n && tolower((unsigned char)s.ptr[i + j]) == x[j])
            j++;
        if (j == n)
            return true;
    }
    return false;
}

static bool keep_holding(const void *arg, struct slice key, struct slice value)
{
    return holds_folded(key, arg) || holds_folded(value, arg);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Keys of a few letters, often sharing long prefixes, with the text
 * "NeEd" (upper and lower case) cut across the bytes keys share, inside
 * them, in their own bytes and in values: the entries an iterator with
 * keep (and with need, searched in the whole block) stops at are exactly
 * those holding the text, forward, backward and after seeks, and the
 * others are counted. */
/* it_run's consumer in test_block_run: notes each key, refuses the one
 * named refuse. */
struct run_seen {
    char keys[64][32];
    size_t n;
    const char *refuse;
};

static bool run_take(void *arg, struct slice key, struct slice value)
{
    struct run_seen *r = arg;
    assert_true(r->n < 64 && key.len < 32);
    memcpy(r->keys[r->n], key.ptr, key.len);
    r->keys[r->n][key.len] = '\0';
    r->n++;
    char v[40];
    snprintf(v, sizeof v, "v-%s", r->keys[r->n - 1]);
    assert_true(slice_eq(value, slice_cstr(v)));
    return !r->refuse || strcmp(r->refuse, r->keys[r->n - 1]) != 0;
}

/* it_run over a block: the entries after the current one that keep its
 * first keep bytes and its length, to the first that does not, the block's
 * end or the one refused; the iterator goes on from where it stops, both
 * ways. */
static void test_block_run(void **state)
{
    (void)state;
    static const char *const keys[] = {"aa/01", "aa/02", "aa/03", "aa/04", "aa/050",
                                       "aa/06", "ab/01", "ab/02", "ab/03"};
    const size_t n = sizeof keys / sizeof keys[0];
    struct blk_builder b;
    blk_builder_init(&b);
    char v[40];
    for (size_t i = 0; i < n; i++) {
        snprintf(v, sizeof v, "v-%s", keys[i]);
        blk_add(&b, slice_cstr(keys[i]), slice_cstr(v));
    }
    struct blk blk;
    assert_int_equal(blk_parse(blk_finish(&b), &blk), ERR_OK);
    struct iter *it = blk_iter(&blk);
    struct run_seen r = {.n = 0};
    /* to the key of another length */
    it_seek(it, slice_cstr("aa/01"));
    assert_false(it_run(it, 3, run_take, &r));
    assert_int_equal(r.n, 3);
    assert_string_equal(r.keys[2], "aa/04");
    assert_true(slice_eq(it_key(it), slice_cstr("aa/04")));
    it_next(it);
    assert_true(slice_eq(it_key(it), slice_cstr("aa/050")));
    /* to another prefix, and back from there */
    r.n = 0;
    it_seek(it, slice_cstr("aa/06"));
    assert_false(it_run(it, 3, run_take, &r));
    assert_int_equal(r.n, 0);
    it_next(it);
    assert_false(it_run(it, 3, run_take, &r));
    assert_int_equal(r.n, 2);
    assert_true(slice_eq(it_key(it), slice_cstr("ab/03")));
    it_prev(it);
    assert_true(slice_eq(it_key(it), slice_cstr("ab/02")));
    it_prev(it);
    it_prev(it);
    assert_true(slice_eq(it_key(it), slice_cstr("aa/06")));
    /* at the block's end */
    it_seek(it, slice_cstr("ab/03"));
    assert_false(it_run(it, 3, run_take, &r));
    it_next(it);
    assert_false(it_valid(it));
    assert_int_equal(it_status(it), ERR_OK);
    /* refused: the iterator stands at the entry refused */
    r.n = 0;
    r.refuse = "aa/03";
    it_seek(it, slice_cstr("aa/01"));
    assert_true(it_run(it, 3, run_take, &r));
    assert_int_equal(r.n, 2);
    assert_true(slice_eq(it_key(it), slice_cstr("aa/03")));
    it_next(it);
    assert_true(slice_eq(it_key(it), slice_cstr("aa/04")));
    /* a keep longer than the key: nothing */
    r.n = 0;
    assert_false(it_run(it, 6, run_take, &r));
    assert_int_equal(r.n, 0);
    it_destroy(it);
    blk_builder_destroy(&b);
}

static void test_block_keep(void **state)
{
    (void)state;
    static const char *parts[] = {"n", "ne", "nee", "need", "NEED", "eed", "d",
                                  "x", "Ne", "eD",  "ab",   "zz",   "ned"};
    for (int round = 0; round < 40; round++) {
        size_t nk = 1 + keep_rand(300), nparts = sizeof parts / sizeof *parts;
        char **keys = calloc(nk, sizeof *keys);
        for (size_t i = 0; i < nk; i++) {
            char k[64] = "";
            size_t np = 1 + keep_rand(6);
            for (size_t j = 0; j < np; j++)
                strcat(k, parts[keep_rand((unsigned)nparts)]);
            char num[24];
            snprintf(num, sizeof num, "%04zu", i); /* distinct keys */
            strcat(k, num);
            keys[i] = strdup(k);
        }
        qsort(keys, nk, sizeof *keys, cmp_str);
        struct blk_builder b;
        blk_builder_init(&b);
        char **vals = calloc(nk, sizeof *vals);
        bool *want = calloc(nk, sizeof *want);
        size_t nwant = 0;
        for (size_t i = 0; i < nk; i++) {
            vals[i] = strdup(keep_rand(5) == 0 ? "a NEEDle" : keep_rand(2) ? "nee" : "");
            blk_add(&b, slice_cstr(keys[i]), slice_cstr(vals[i]));
            want[i] = holds_folded(slice_cstr(keys[i]), "need") ||
                      holds_folded(slice_cstr(vals[i]), "need");
            nwant += want[i];
        }
        struct blk blk;
        assert_int_equal(blk_parse(blk_finish(&b), &blk), ERR_OK);
        for (int with_need = 0; with_need < 2; with_need++) {
            uint64_t passed = 0;
            struct blk_keep kp = {keep_holding, "need", &passed,
                                  with_need ? slice_cstr("need") : slice_make("", 0)};
            struct iter *it = blk_iter(&blk);
            blk_iter_keep(it, &kp);
            size_t got = 0, i = 0;
            for (it_seek_first(it); it_valid(it); it_next(it), got++, i++) {
                while (i < nk && !want[i])
                    i++;
                assert_true(i < nk);
                assert_true(slice_eq(it_key(it), slice_cstr(keys[i])));
                assert_true(slice_eq(it_value(it), slice_cstr(vals[i])));
            }
            assert_int_equal(it_status(it), ERR_OK);
            assert_int_equal(got, nwant);
            assert_int_equal(passed, nk - nwant);
            got = 0;
            for (it_seek_last(it); it_valid(it); it_prev(it))
                got++;
            assert_int_equal(got, nwant);
            for (size_t t = 0; t < nk; t += 1 + keep_rand(5)) { /* seek, then on and back */
                it_seek(it, slice_cstr(keys[t]));
                size_t j = t;
                while (j < nk && !want[j])
                    j++;
                if (j == nk) {
                    assert_false(it_valid(it));
                    continue;
                }
                assert_true(it_valid(it) && slice_eq(it_key(it), slice_cstr(keys[j])));
                it_next(it);
                size_t j2 = j + 1;
                while (j2 < nk && !want[j2])
                    j2++;
                if (j2 == nk) {
                    assert_false(it_valid(it));
                    continue;
                }
                assert_true(it_valid(it) && slice_eq(it_key(it), slice_cstr(keys[j2])));
                it_prev(it);
                assert_true(it_valid(it) && slice_eq(it_key(it), slice_cstr(keys[j])));
            }
            assert_int_equal(it_status(it), ERR_OK);
            it_destroy(it);
        }
        blk_builder_destroy(&b);
        for (size_t i = 0; i < nk; i++) {
            free(keys[i]);
            free(vals[i]);
        }
        free(keys);
        free(vals);
        free(want);
    }
}

/* random_key, with one of two 12-byte middles after the prefix when mid:
 * most restart points then share their first word (blk.rpfx2). */
static void test_key(struct buf *k, bool with_prefix, bool mid)
{
    random_key(k, with_prefix);
    if (!mid || !with_prefix)
        return;
    char tail[16];
    size_t n = k->len - 7;
    memcpy(tail, k->data + 7, n);
    k->len = 7;
    buf_append(k, rnd() % 2 ? "mid-aaaaaaaa" : "mid-bbbbbbbb", 12);
    buf_append(k, tail, n);
}

static void test_block_indexed(void **state)
{
    (void)state;
    for (int round = 0; round < 20; round++) {
        enum { N = 600 };
        static struct buf keys[N];
        bool mid = round % 2;
        for (int i = 0; i < N; i++) {
            buf_init(&keys[i]);
            test_key(&keys[i], true, mid);
        }
        qsort(keys, N, sizeof keys[0], cmp_keys);
        struct blk_builder b;
        blk_builder_init(&b);
        static struct slice kept[N];
        static char vals[N][8]; /* each key's own value: a seek's value is its entry's */
        int n = 0;
        for (int i = 0; i < N; i++) {
            if (i && cmp_keys(&keys[i], &keys[i - 1]) == 0)
                continue;
            kept[n] = slice_make(keys[i].data, keys[i].len);
            snprintf(vals[n], sizeof vals[n], "v%d", n);
            blk_add(&b, kept[n], slice_cstr(vals[n]));
            n++;
        }
        struct slice raw = blk_finish(&b);
        struct blk plain, indexed;
        assert_int_equal(blk_parse(raw, &plain), ERR_OK);
        assert_int_equal(blk_parse(raw, &indexed), ERR_OK);
        struct buf space = BUF_INIT;
        blk_index_restarts(&indexed, &space);
        assert_non_null(indexed.rpfx);
        assert_int_equal(indexed.pfx_len, mid ? 11 : 7); /* "mid-" is common too */
        if (mid)
            assert_non_null(indexed.rpfx2);
        struct iter *a = blk_iter(&plain), *c = blk_iter(&indexed);
        struct buf t = BUF_INIT;
        for (int q = 0; q < 3000; q++) {
            if (q % 3 == 0) {
                struct slice k = kept[rnd() % (uint64_t)n];
                buf_reset(&t);
                buf_append(&t, k.ptr, k.len);
            } else {
                test_key(&t, q % 7 != 1, mid);
            }
            if (q % 5 == 0) { /* a cold seek; else forward from where they stand */
                it_seek_first(a);
                it_seek_first(c);
            }
            it_seek(a, slice_make(t.data, t.len));
            it_seek(c, slice_make(t.data, t.len));
            assert_int_equal(it_valid(a), it_valid(c));
            if (it_valid(a))
                assert_true(slice_eq(it_key(a), it_key(c)));
            int want = 0; /* the first key >= t, by brute force */
            while (want < n && slice_cmp(kept[want], slice_make(t.data, t.len)) < 0)
                want++;
            assert_int_equal(it_valid(c), want < n);
            if (want < n) {
                assert_true(slice_eq(it_key(c), kept[want]));
                assert_true(slice_eq(it_value(c), slice_cstr(vals[want])));
                assert_true(slice_eq(it_value(a), slice_cstr(vals[want])));
            }
            if (q % 4 == 1 && want < n) { /* the key a seek built, the base of next and prev */
                it_next(c);
                assert_int_equal(it_valid(c), want + 1 < n);
                if (want + 1 < n)
                    assert_true(slice_eq(it_key(c), kept[want + 1]));
                it_seek(a, slice_make(t.data, t.len));
                it_prev(a);
                assert_int_equal(it_valid(a), want > 0);
                if (want > 0)
                    assert_true(slice_eq(it_key(a), kept[want - 1]));
            }
        }
        assert_int_equal(it_status(c), ERR_OK);
        it_destroy(a);
        it_destroy(c);
        buf_destroy(&t);
        buf_destroy(&space);
        blk_builder_destroy(&b);
        for (int i = 0; i < N; i++)
            buf_destroy(&keys[i]);
    }
}

static void test_bloom(void **state)
{
    (void)state;
    uint64_t h[10000];
    char k[32];
    for (int i = 0; i < 10000; i++) {
        key_of(i, k, sizeof k);
        h[i] = bloom_hash(slice_cstr(k));
    }
    struct buf f = BUF_INIT;
    bloom_build(h, 10000, &f);
    struct slice fs = slice_make(f.data, f.len);
    for (int i = 0; i < 10000; i++)
        assert_true(bloom_may_match(fs, h[i]));
    int fp = 0;
    for (int i = 10000; i < 20000; i++) {
        key_of(i, k, sizeof k);
        fp += bloom_may_match(fs, bloom_hash(slice_cstr(k)));
    }
    assert_true(fp < 300); /* ~1% expected */
    assert_true(bloom_may_match(slice_make("", 0), 42));
    buf_destroy(&f);
}

/* The filter of the first release: bit h % bits for each probe, with
 * bits_per_key bits a key and probes probes (10 and 7: bloom_build). */
static void bloom_build_reference(const uint64_t *hashes, size_t n, size_t bits_per_key, int probes,
                                  struct buf *out)
{
    size_t bits = n * bits_per_key < 64 ? 64 : n * bits_per_key;
    size_t bytes = (bits + 7) / 8;
    bits = bytes * 8;
    buf_reserve(out, bytes + 1);
    memset(out->data, 0, bytes);
    for (size_t i = 0; i < n; i++) {
        uint32_t h = (uint32_t)hashes[i], delta = (uint32_t)(hashes[i] >> 32) | 1;
        for (int k = 0; k < probes; k++, h += delta)
            out->data[(h % bits) / 8] |= (char)(1 << ((h % bits) % 8));
    }
    out->data[bytes] = (char)probes;
    out->len = bytes + 1;
}

/* Filters on disk hold the bits the first release picked: the builder sets
 * exactly those, for the key filters (bloom_build) and for every probe
 * count and filter size of bloom_build_k (the word filters': 7 probes, 10
 * bits a word, set by an unrolled loop of their own), and a filter built
 * that way answers yes for its keys. */
static void test_bloom_bits_stable(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 6, 7, 63, 64, 65, 1000, 4093, 65536, 100003};
    uint64_t *h = malloc(100003 * sizeof *h);
    uint64_t x = 0x243f6a8885a308d3ULL;
    for (size_t i = 0; i < 100003; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        h[i] = i % 5 == 0 ? (x | 0xffffffffULL) : x; /* h = 2^32 - 1 too */
    }
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        struct buf got = BUF_INIT, want = BUF_INIT;
        bloom_build(h, sizes[s], &got);
        bloom_build_reference(h, sizes[s], 10, 7, &want);
        assert_int_equal(got.len, want.len);
        assert_memory_equal(got.data, want.data, got.len);
        for (size_t i = 0; i < sizes[s]; i++)
            assert_true(bloom_may_match(slice_make(want.data, want.len), h[i]));
        buf_destroy(&got);
        buf_destroy(&want);
    }
    static const int probes[] = {1, 2, 6, 7, 8, 13, 30};
    static const size_t per_key[] = {1, 3, 10, 16};
    for (size_t p = 0; p < sizeof probes / sizeof probes[0]; p++)
        for (size_t b = 0; b < sizeof per_key / sizeof per_key[0]; b++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0] && sizes[s] <= 4093; s++) {
                struct buf got = BUF_INIT, want = BUF_INIT;
                buf_puts(&got, "x"); /* appended after what out holds */
                bloom_build_k(h, sizes[s], per_key[b], probes[p], &got);
                bloom_build_reference(h, sizes[s], per_key[b], probes[p], &want);
                assert_int_equal(got.len, want.len + 1);
                assert_memory_equal(got.data + 1, want.data, want.len);
                for (size_t i = 0; i < sizes[s]; i++)
                    assert_true(bloom_may_match(slice_make(got.data + 1, want.len), h[i]));
                buf_destroy(&got);
                buf_destroy(&want);
            }
    free(h);
}

/* The hash decides which filter bits are set in files already on disk: it
 * must never change. Values of the first release, on little-endian hosts. */
static void test_bloom_hash_stable(void **state)
{
    (void)state;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    static const struct {
        const char *key;
        uint64_t hash;
    } pinned[] = {
        {"", 0xefc770ccc88692bdULL},
        {"a", 0x032d02f4b96ca41aULL},
        {"abcdefg", 0x4b38417a6b3a7db8ULL},
        {"abcdefgh", 0x6fabf6a3221bfbd7ULL},
        {"abcdefghi", 0x371bd1ee5f60d9cbULL},
        {"host-0421", 0x9e826ff5339b2cbeULL},
        {"0123456789abcdef0123456789abcdefXY", 0x1f95a720b3e23b8fULL},
    };
    for (size_t i = 0; i < sizeof pinned / sizeof pinned[0]; i++)
        assert_true(bloom_hash(slice_cstr(pinned[i].key)) == pinned[i].hash);
#endif
    /* every length and alignment: the same bytes hash the same */
    char a[64], b[80];
    for (size_t len = 0; len <= 40; len++)
        for (size_t off = 0; off < 8; off++) {
            for (size_t i = 0; i < len; i++)
                a[i] = (char)(i * 37 + len);
            memcpy(b + off, a, len);
            assert_true(bloom_hash(slice_make(a, len)) == bloom_hash(slice_make(b + off, len)));
            if (len) { /* and a different last byte hashes differently */
                b[off + len - 1] ^= 1;
                assert_true(bloom_hash(slice_make(a, len)) != bloom_hash(slice_make(b + off, len)));
            }
        }
}

/* Stores payload with type and a good crc, as a writer would. */
static void seal(struct buf *out, const char *payload, size_t n, int type)
{
    buf_reset(out);
    buf_append(out, payload, n);
    buf_putc(out, (char)type);
    uint32_t crc = crc32c_mask(crc32c(out->data, out->len));
    char c[4];
    coding_put_u32le(c, crc);
    buf_append(out, c, 4);
}

/* Every mode round-trips compressible text with its type; a flipped byte
 * anywhere is corruption. */
static void test_codec(void **state)
{
    (void)state;
    struct buf raw = BUF_INIT, enc = BUF_INIT, dec = BUF_INIT;
    for (int i = 0; i < 2000; i++)
        buf_printf(&raw, "line %d of compressible text;", i % 50);
    const struct codec_opts modes[] = {{CODEC_MODE_FAST, 0, NULL}, {CODEC_MODE_HC, 0, NULL},
                                       {CODEC_MODE_ZSTD, 1, NULL}, {CODEC_MODE_ZSTD, 3, NULL},
                                       {CODEC_MODE_ZSTD, 0, NULL}, {CODEC_MODE_ZSTD, 19, NULL}};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        buf_reset(&enc);
        codec_encode(slice_make(raw.data, raw.len), &modes[m], &enc);
        assert_true(enc.len < raw.len / 2);
        assert_int_equal(codec_stored_type(slice_make(enc.data, enc.len)),
                         modes[m].mode == CODEC_MODE_ZSTD ? CODEC_ZSTD : CODEC_LZ4);
        assert_int_equal(codec_decode(slice_make(enc.data, enc.len), "t", 0, &dec), ERR_OK);
        assert_int_equal(dec.len, raw.len);
        assert_memory_equal(dec.data, raw.data, raw.len);
        for (size_t off = 0; off < enc.len; off += 13) {
            enc.data[off] ^= 1;
            assert_int_equal(codec_decode(slice_make(enc.data, enc.len), "t", 0, &dec),
                             ERR_CORRUPT);
            enc.data[off] ^= 1;
        }
    }
    buf_reset(&enc);
    codec_encode(slice_make("\x01\x02\x03", 3), NULL, &enc); /* incompressible: stored raw */
    assert_int_equal(enc.len, 3 + CODEC_TRAILER);
    assert_int_equal(codec_stored_type(slice_make(enc.data, enc.len)), CODEC_RAW);
    buf_reset(&enc);
    const struct codec_opts z = {CODEC_MODE_ZSTD, 3, NULL};
    codec_encode(slice_make("", 0), &z, &enc); /* empty: raw as well */
    assert_int_equal(codec_decode(slice_make(enc.data, enc.len), "t", 0, &dec), ERR_OK);
    assert_int_equal(dec.len, 0);
    buf_destroy(&raw);
    buf_destroy(&enc);
    buf_destroy(&dec);
}

/* zstd payloads that pass the crc but lie: a length that is not the
 * frame's, a cut frame, garbage, an unknown type, a length over the cap. */
static void test_codec_zstd_lies(void **state)
{
    (void)state;
    struct buf raw = BUF_INIT, enc = BUF_INIT, bad = BUF_INIT, dec = BUF_INIT;
    for (int i = 0; i < 3000; i++)
        buf_printf(&raw, "host-%04d GET /api/%d 200;", i % 97, i);
    const struct codec_opts z = {CODEC_MODE_ZSTD, 3, NULL};
    codec_encode(slice_make(raw.data, raw.len), &z, &enc);
    size_t plen = enc.len - CODEC_TRAILER;
    uint64_t raw_len = 0;
    const char *frame = coding_varint_dec(enc.data, enc.data + plen, &raw_len);
    assert_non_null(frame);
    assert_int_equal(raw_len, raw.len);
    size_t hdr = (size_t)(frame - enc.data), flen = plen - hdr;
    char v[10];
    /* the announced length one short and one long */
    for (int d = -1; d <= 1; d += 2) {
        size_t n = coding_varint_enc(v, raw_len + (uint64_t)d);
        struct buf p = BUF_INIT;
        buf_append(&p, v, n);
        buf_append(&p, frame, flen);
        seal(&bad, p.data, p.len, CODEC_ZSTD);
        assert_int_equal(codec_decode(slice_make(bad.data, bad.len), "t", 0, &dec), ERR_CORRUPT);
        buf_destroy(&p);
    }
    /* the frame cut short, at several places */
    for (size_t cut = 1; cut < flen; cut += flen / 7 + 1) {
        seal(&bad, enc.data, hdr + flen - cut, CODEC_ZSTD);
        assert_int_equal(codec_decode(slice_make(bad.data, bad.len), "t", 0, &dec), ERR_CORRUPT);
    }
    /* garbage after a good length; the good payload as LZ4; an unknown type */
    struct buf p = BUF_INIT;
    buf_append(&p, enc.data, hdr);
    for (int i = 0; i < 64; i++)
        buf_putc(&p, (char)(i * 37));
    seal(&bad, p.data, p.len, CODEC_ZSTD);
    assert_int_equal(codec_decode(slice_make(bad.data, bad.len), "t", 0, &dec), ERR_CORRUPT);
    seal(&bad, enc.data, plen, CODEC_LZ4);
    assert_int_equal(codec_decode(slice_make(bad.data, bad.len), "t", 0, &dec), ERR_CORRUPT);
    seal(&bad, enc.data, plen, 3);
    assert_int_equal(codec_decode(slice_make(bad.data, bad.len), "t", 0, &dec), ERR_CORRUPT);
    /* a length over CODEC_MAX_RAW is refused before any allocation */
    buf_reset(&p);
    buf_append(&p, v, coding_varint_enc(v, (uint64_t)CODEC_MAX_RAW + 1));
    buf_append(&p, frame, flen);
    seal(&bad, p.data, p.len, CODEC_ZSTD);
    assert_int_equal(codec_decode(slice_make(bad.data, bad.len), "t", 0, &dec), ERR_CORRUPT);
    /* and the sealed original still decodes */
    seal(&bad, enc.data, plen, CODEC_ZSTD);
    assert_int_equal(codec_decode(slice_make(bad.data, bad.len), "t", 0, &dec), ERR_OK);
    assert_memory_equal(dec.data, raw.data, raw.len);
    buf_destroy(&p);
    buf_destroy(&raw);
    buf_destroy(&enc);
    buf_destroy(&bad);
    buf_destroy(&dec);
}

/* An SST of n rows "key-NNNNNN" with versions: seq 2 put, seq 1 older put;
 * every 10th row has a seq 3 tombstone. */
static char *build_sst(const char *dir, int n, struct sst_props *props)
{
    struct buf path = BUF_INIT, ik = BUF_INIT;
    buf_printf(&path, "%s/000001.sst", dir);
    struct sst_builder *b;
    assert_int_equal(sst_builder_new(env_posix(), path.data, NULL, &b), ERR_OK);
    char k[32], v[64];
    for (int i = 0; i < n; i++) {
        key_of(i, k, sizeof k);
        if (i % 10 == 0) {
            buf_reset(&ik);
            ikey_append(&ik, slice_cstr(k), 3, IKEY_DEL);
            assert_int_equal(sst_add(b, slice_make(ik.data, ik.len), slice_make("", 0), i), 0);
        }
        for (int seq = 2; seq >= 1; seq--) {
            buf_reset(&ik);
            ikey_append(&ik, slice_cstr(k), (uint64_t)seq, IKEY_PUT);
            snprintf(v, sizeof v, "value-%d-seq%d", i, seq);
            assert_int_equal(sst_add(b, slice_make(ik.data, ik.len), slice_cstr(v), i), 0);
        }
    }
    assert_int_equal(sst_builder_finish(b, props), ERR_OK);
    buf_destroy(&ik);
    return buf_steal(&path, NULL);
}

/* A finished table is at least as big as sst_builder_bytes said at any
 * point, however well its last block compresses: a compaction splits its
 * output there and tells a full file by its size. */
static void test_sst_bytes_bound(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("sstbytes");
    struct buf path = BUF_INIT, ik = BUF_INIT;
    buf_printf(&path, "%s/000001.sst", dir);
    struct sst_builder *b;
    assert_int_equal(sst_builder_new(env_posix(), path.data, NULL, &b), ERR_OK);
    char k[32], v[200];
    memset(v, 'a', sizeof v); /* compresses very well */
    uint64_t most = 0;
    for (int i = 0; i < 3000; i++) {
        key_of(i, k, sizeof k);
        buf_reset(&ik);
        ikey_append(&ik, slice_cstr(k), 1, IKEY_PUT);
        assert_int_equal(sst_add(b, slice_make(ik.data, ik.len), slice_make(v, sizeof v), i), 0);
        uint64_t now = sst_builder_bytes(b);
        assert_true(now >= most);
        most = now;
    }
    assert_true(most > 0);
    struct sst_props props;
    assert_int_equal(sst_builder_finish(b, &props), ERR_OK);
    assert_true(props.size >= most);
    buf_destroy(&ik);
    buf_destroy(&path);
    tu_rmtree(dir);
    free(dir);
}

static int64_t ts_of_test_key(const void *ctx, struct slice ukey)
{
    (void)ctx;
    return ukey.len > 4 ? strtoll(ukey.ptr + 4, NULL, 10) : -1; /* "key-NNNNNN" */
}

/* A scan block by block sees every row of the table in order; a table
 * made of its blocks, half copied as stored and half added row by row,
 * holds the same rows, properties and bloom filter. */
static void test_sst_scan_copy(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("sst");
    struct sst_props props, props2;
    char *path = build_sst(dir, 20000, &props);
    atomic_ullong corrupt = 0;
    struct sst_table *t, *t2;
    struct cache *c = cache_new(64u << 20);
    assert_int_equal(sst_open(env_posix(), path, c, &corrupt, &t), ERR_OK);
    /* a pass of its own leaves the cache to queries */
    struct sst_scan *sc = sst_scan_new(t);
    size_t n = 0;
    for (; sst_scan_valid(sc); sst_scan_next(sc))
        n++;
    assert_int_equal(sst_scan_status(sc), ERR_OK);
    assert_int_equal(n, 42000);
    sst_scan_free(sc);
    struct cache_stats cs;
    cache_stats(c, &cs);
    assert_int_equal(cs.bytes, 0);
    struct buf path2 = BUF_INIT;
    buf_printf(&path2, "%s/000002.sst", dir);
    struct sst_builder *b;
    assert_int_equal(sst_builder_new(env_posix(), path2.data, NULL, &b), ERR_OK);
    sc = sst_scan_new(t);
    struct iter *it = sst_iter(t);
    it_seek_first(it);
    size_t rows = 0, blocks = 0, copied = 0;
    while (sst_scan_valid(sc)) {
        assert_true(sst_scan_block_start(sc));
        if (blocks++ % 2 == 0) {
            /* a wrong last key is refused, then the block goes whole */
            assert_int_equal(sst_add_block(b, sst_scan_block_stored(sc), sst_scan_block_raw(sc),
                                           sst_scan_key(sc), sst_scan_block_filter(sc),
                                           ts_of_test_key, NULL),
                             ERR_CORRUPT);
            assert_int_equal(sst_add_block(b, slice_make("ab", 2), sst_scan_block_raw(sc),
                                           sst_scan_block_last(sc), sst_scan_block_filter(sc),
                                           ts_of_test_key, NULL),
                             ERR_CORRUPT);
            assert_int_equal(sst_add_block(b, sst_scan_block_stored(sc), sst_scan_block_raw(sc),
                                           sst_scan_block_last(sc), sst_scan_block_filter(sc),
                                           ts_of_test_key, NULL),
                             ERR_OK);
            for (; it_valid(it) && slice_cmp(it_key(it), sst_scan_block_last(sc)) <= 0; it_next(it))
                rows++;
            copied++;
            sst_scan_next_block(sc);
            continue;
        }
        do {
            assert_true(it_valid(it));
            assert_true(slice_eq(sst_scan_key(sc), it_key(it)));
            assert_true(slice_eq(sst_scan_value(sc), it_value(it)));
            struct slice uk = ikey_user(sst_scan_key(sc));
            assert_int_equal(sst_add(b, sst_scan_key(sc), sst_scan_value(sc),
                                     ts_of_test_key(NULL, uk)),
                             ERR_OK);
            rows++;
            it_next(it);
            sst_scan_next(sc);
        } while (sst_scan_valid(sc) && !sst_scan_block_start(sc));
    }
    assert_int_equal(sst_scan_status(sc), ERR_OK);
    assert_false(it_valid(it));
    assert_int_equal(rows, 42000);
    assert_true(copied >= 2 && blocks > copied);
    sst_scan_free(sc);
    assert_int_equal(sst_builder_finish(b, &props2), ERR_OK);
    assert_int_equal(props2.entries, props.entries);
    assert_int_equal(props2.deletes, props.deletes);
    assert_int_equal(props2.min_ts, props.min_ts);
    assert_int_equal(props2.max_ts, props.max_ts);
    assert_int_equal(sst_open(env_posix(), path2.data, NULL, &corrupt, &t2), ERR_OK);
    struct iter *it2 = sst_iter(t2);
    n = 0;
    for (it_seek_first(it), it_seek_first(it2); it_valid(it); it_next(it), it_next(it2), n++) {
        assert_true(it_valid(it2));
        assert_true(slice_eq(it_key(it), it_key(it2)));
        assert_true(slice_eq(it_value(it), it_value(it2)));
    }
    assert_false(it_valid(it2));
    assert_int_equal(n, 42000);
    it_destroy(it2);
    struct buf v = BUF_INIT;
    char k[32], want[64];
    int kind;
    for (int i = 1; i < 20000; i += 37) {
        key_of(i, k, sizeof k);
        buf_reset(&v);
        assert_int_equal(sst_get(t2, slice_cstr(k), 2, &kind, &v), ERR_OK);
        snprintf(want, sizeof want, "value-%d-seq2", i);
        assert_true(slice_eq(slice_make(v.data, v.len), slice_cstr(want)));
    }
    buf_destroy(&v);
    sst_unref(t2);
    it_destroy(it);
    sst_unref(t);
    cache_free(c);

    /* a damaged block stops the scan with ERR_CORRUPT, never a wrong row */
    int64_t size = tu_file_size(path);
    for (int64_t off = 100; off < size - SST_FOOTER; off += size / 13) {
        assert_int_equal(tu_flip_byte(path, off, 0x10), 0);
        if (sst_open(env_posix(), path, NULL, &corrupt, &t) == ERR_OK) {
            sc = sst_scan_new(t);
            for (n = 0; sst_scan_valid(sc); sst_scan_next(sc))
                n++;
            assert_true(sst_scan_status(sc) == ERR_CORRUPT || n == 42000);
            sst_scan_free(sc);
            sst_unref(t);
        }
        assert_int_equal(tu_flip_byte(path, off, 0x10), 0);
    }
    buf_destroy(&path2);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

static void test_sst(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("sst");
    struct sst_props props;
    char *path = build_sst(dir, 20000, &props);
    assert_int_equal(props.entries, 42000);
    assert_int_equal(props.deletes, 2000);
    assert_int_equal(props.min_ts, 0);
    assert_int_equal(props.max_ts, 19999);
    struct cache *c = cache_new(1u << 20);
    atomic_ullong corrupt = 0;
    struct sst_table *t;
    assert_int_equal(sst_open(env_posix(), path, c, &corrupt, &t), ERR_OK);
    assert_int_equal(sst_get_props(t)->entries, 42000);
    struct buf v = BUF_INIT;
    char k[32], want[64];
    int kind;
    for (int i = 0; i < 20000; i += 37) {
        key_of(i, k, sizeof k);
        buf_reset(&v);
        assert_int_equal(sst_get(t, slice_cstr(k), 100, &kind, &v), ERR_OK);
        if (i % 10 == 0) {
            assert_int_equal(kind, IKEY_DEL);
        } else {
            assert_int_equal(kind, IKEY_PUT);
            snprintf(want, sizeof want, "value-%d-seq2", i);
            assert_true(slice_eq(slice_make(v.data, v.len), slice_cstr(want)));
        }
        buf_reset(&v);
        assert_int_equal(sst_get(t, slice_cstr(k), 1, &kind, &v), ERR_OK);
        snprintf(want, sizeof want, "value-%d-seq1", i);
        assert_true(slice_eq(slice_make(v.data, v.len), slice_cstr(want)));
    }
    buf_reset(&v);
    assert_int_equal(sst_get(t, slice_cstr("nope"), 100, &kind, &v), ERR_NOTFOUND);
    struct iter *it = sst_iter(t);
    size_t n = 0;
    for (it_seek_first(it); it_valid(it); it_next(it))
        n++;
    assert_int_equal(n, 42000);
    for (it_seek_last(it); it_valid(it); it_prev(it))
        n--;
    assert_int_equal(n, 0);
    it_seek(it, slice_cstr("key-010000"));
    assert_true(slice_starts_with(it_key(it), slice_cstr("key-010000")));
    it_prev(it);
    assert_true(slice_starts_with(it_key(it), slice_cstr("key-009999")));
    assert_int_equal(it_status(it), ERR_OK);
    it_destroy(it);
    struct cache_stats cs;
    cache_stats(c, &cs);
    assert_true(cs.hits > 0 && cs.misses > 0);
    sst_unref(t);

    /* flip bytes across the data region: reads fail or are right */
    int64_t size = tu_file_size(path);
    for (int64_t off = 100; off < size - SST_FOOTER; off += size / 17) {
        assert_int_equal(tu_flip_byte(path, off, 0x04), 0);
        struct cache *c2 = cache_new(1u << 20);
        int rc = sst_open(env_posix(), path, c2, &corrupt, &t);
        if (rc == ERR_OK) {
            it = sst_iter(t);
            n = 0;
            for (it_seek_first(it); it_valid(it); it_next(it))
                n++;
            assert_true(it_status(it) == ERR_CORRUPT || n == 42000);
            it_destroy(it);
            for (int i = 0; i < 20000; i += 101) {
                key_of(i, k, sizeof k);
                buf_reset(&v);
                rc = sst_get(t, slice_cstr(k), 100, &kind, &v);
                assert_true(rc == ERR_OK || rc == ERR_CORRUPT);
                if (rc == ERR_OK && kind == IKEY_PUT) {
                    snprintf(want, sizeof want, "value-%d-seq2", i);
                    assert_true(slice_eq(slice_make(v.data, v.len), slice_cstr(want)));
                }
            }
            sst_unref(t);
        } else {
            assert_int_equal(rc, ERR_CORRUPT);
        }
        cache_free(c2);
        assert_int_equal(tu_flip_byte(path, off, 0x04), 0);
    }
    assert_true(corrupt > 0);
    /* footer damage and truncation fail the open */
    assert_int_equal(tu_flip_byte(path, size - 5, 0x80), 0);
    assert_int_equal(sst_open(env_posix(), path, c, &corrupt, &t), ERR_CORRUPT);
    assert_int_equal(tu_truncate(path, 50), 0);
    assert_int_equal(sst_open(env_posix(), path, c, &corrupt, &t), ERR_CORRUPT);
    buf_destroy(&v);
    cache_free(c);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* sst_warm_data: every data block decoded into a cache with room (a scan
 * then misses nothing), and into a small one up to three quarters of its
 * budget, evicting nothing. */
static void test_warm_data(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("warm");
    struct sst_props props;
    char *path = build_sst(dir, 20000, &props);
    atomic_ullong corrupt = 0;
    struct cache *c = cache_new(64u << 20);
    struct sst_table *t;
    assert_int_equal(sst_open(env_posix(), path, c, &corrupt, &t), ERR_OK);
    struct cache_stats before, after, scanned;
    cache_stats(c, &before);
    sst_warm_data(t);
    cache_stats(c, &after);
    assert_true(after.entries > before.entries + 10);
    struct iter *it = sst_iter(t);
    size_t n = 0;
    for (it_seek_first(it); it_valid(it); it_next(it))
        n++;
    assert_int_equal(n, 42000);
    it_destroy(it);
    cache_stats(c, &scanned);
    assert_int_equal(scanned.misses, after.misses); /* every block was there */
    sst_unref(t);
    cache_free(c);

    c = cache_new(256u << 10);
    assert_int_equal(sst_open(env_posix(), path, c, &corrupt, &t), ERR_OK);
    sst_warm_data(t);
    cache_stats(c, &after);
    assert_true(after.entries > 0);
    assert_true(after.bytes <= after.capacity);
    assert_true(after.bytes < after.capacity / 4 * 3 + (16u << 10)); /* a block over at most */
    sst_unref(t);
    cache_free(c);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

static int freed;
static void count_free(void *p)
{
    freed++;
    free(p);
}

static void test_cache(void **state)
{
    (void)state;
    struct cache *c = cache_new(1000);
    freed = 0;
    for (uint64_t i = 0; i < 20; i++) {
        struct cache_handle *h = cache_insert(c, 1, i, xmalloc(8), 100, count_free);
        cache_release(c, h);
    }
    assert_int_equal(freed, 10); /* 10 x 100 bytes fit */
    struct cache_handle *h = cache_lookup(c, 1, 19);
    assert_non_null(h);
    assert_null(cache_lookup(c, 1, 0));
    struct cache_handle *pinned = cache_lookup(c, 1, 10);
    for (uint64_t i = 100; i < 130; i++)
        cache_release(c, cache_insert(c, 2, i, xmalloc(8), 100, count_free));
    assert_non_null(cache_value(pinned)); /* pinned entries survive eviction */
    cache_release(c, pinned);
    cache_release(c, h);
    cache_erase_id(c, 2);
    struct cache_stats st;
    cache_stats(c, &st);
    assert_true(st.bytes <= 1000);
    assert_int_equal(st.hits, 2);
    cache_free(c);
}

int main(void)
{
    if (tu_tsan_skip_file())
        return 0;
    log_set_level(LOG_ERROR + 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block),
        cmocka_unit_test(test_block_run),
        cmocka_unit_test(test_block_keep),
        cmocka_unit_test(test_block_indexed),
        cmocka_unit_test(test_bloom),
        cmocka_unit_test(test_bloom_hash_stable),
        cmocka_unit_test(test_bloom_bits_stable),
        cmocka_unit_test(test_codec),
        cmocka_unit_test(test_codec_zstd_lies),
        cmocka_unit_test(test_sst),
        cmocka_unit_test(test_warm_data),
        cmocka_unit_test(test_sst_scan_copy),
        cmocka_unit_test(test_sst_bytes_bound),
        cmocka_unit_test(test_cache),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
