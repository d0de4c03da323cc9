/* Word filters of SSTable data blocks (store/FORMAT.md, "Word filters"): an
 * iterator given words yields, in both directions and after any seek, every
 * row having all of them that a plain iteration yields, while skipping the
 * blocks that cannot hold one; blocks holding a delete, a merge or a value
 * are never skipped, so that no deleted row or old version comes back;
 * copied blocks keep their filters; version 2 files read as before (every
 * block); a damaged filter gives ERR_CORRUPT, never a crash. */
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
#include "model/key.h"
#include "model/record.h"
#include "model/words.h"
#include "store/ikey.h"
#include "store/store.h"
#include "store/table/block.h"
#include "store/table/bloom.h"
#include "store/table/cache.h"
#include "store/table/codec.h"
#include "store/table/sst.h"
#include "store/table/sst_int.h"
#include "store/table/wfilter.h"
#include "tests/support/store_fixture.h"
#include "tests/support/store_testutil.h"

#define SEC 1000000000LL
#define T0 (1700000000LL * SEC)

/* --- rows --- */

static uint64_t rng_state;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* The message of log row i: nginx-like, with "needle" in a few rows and
 * "haystack" in others. */
static void message(struct buf *out, int i)
{
    static const char *paths[] = {"/api/v1/items", "/api/v1/users", "/static/app.js", "/login",
                                  "/health"};
    static const int codes[] = {200, 200, 200, 301, 404, 500};
    buf_printf(out, "%u.%u.%u.%u GET %s/%u HTTP/1.1 %d %ums ua=curl-7.%u", (unsigned)(rng() % 256),
               (unsigned)(rng() % 256), (unsigned)(rng() % 256), (unsigned)(rng() % 256),
               paths[rng() % 5], (unsigned)(rng() % 100000), codes[rng() % 6],
               (unsigned)(rng() % 2000), (unsigned)(rng() % 90));
    if (i % 1499 == 17)
        buf_printf(out, " needle found");
    if (i % 331 == 3)
        buf_printf(out, " Haystack");
}

/* The id of a log row: its fields (msg, and a level string) and one tag. */
static void log_id(struct buf *id, int i, const char *msg_override)
{
    struct buf msg = BUF_INIT;
    buf_reset(id);
    if (msg_override)
        buf_printf(&msg, "%s", msg_override);
    else
        message(&msg, i);
    struct rec_tag t = {slice_cstr("dc"), slice_cstr(i % 2 ? "eu-west" : "us-east")};
    struct rec_field f[2] = {
        {.key = slice_cstr("level"), .type = REC_STRING, .v.s = slice_cstr("info")},
        {.key = slice_cstr("msg"), .type = REC_STRING, .v.s = slice_make(msg.data, msg.len)},
    };
    rec_encode(id, &t, 1, f, 2);
    buf_destroy(&msg);
}

/* Whether the row (user key, value) has every word: in its host, event, a
 * tag value or a string field, as words_find sees them. */
static bool row_has(struct slice ukey, struct slice value, const char **words, size_t n)
{
    struct key_row r;
    assert_int_equal(key_decode_row(ukey, false, &r), ERR_OK);
    for (size_t w = 0; w < n; w++) {
        struct slice word = slice_cstr(words[w]);
        bool found = words_find(r.host, word) || words_find(r.event, word);
        struct rec_row_reader rr;
        assert_int_equal(rec_row_init(&rr, r.id, value), ERR_OK);
        struct rec_tag t;
        struct rec_field f;
        while (!found && rec_row_next_tag(&rr, &t) == 1)
            found = words_find(t.value, word);
        while (!found && rec_row_next_field(&rr, &f) == 1)
            found = f.type == REC_STRING && words_find(f.v.s, word);
        if (!found)
            return false;
    }
    return true;
}

/* The hash the filters being checked hold: words_hash (as written before
 * 2026-11-28, wfilter_test_write_v1) or words_hash2 (as written now). */
static bool hash_v1;

static uint64_t hash_of(struct slice word)
{
    return hash_v1 ? words_hash(word) : words_hash2(word);
}

/* The bloom filter inside a word filter: without its WFILTER_HASH2 byte. */
static struct slice bloom_part(struct slice filter)
{
    if (hash_v1)
        return filter;
    assert_true(filter.len > 0 && (unsigned char)filter.ptr[filter.len - 1] == WFILTER_HASH2);
    return slice_make(filter.ptr, filter.len - 1);
}

struct word_check {
    struct slice filter;
    size_t words;
};

static bool check_word(void *arg, struct slice word)
{
    struct word_check *c = arg;
    assert_true(bloom_may_match(bloom_part(c->filter), hash_of(word)));
    struct word_hashes h = words_hashes(word);
    assert_true(wfilter_may_match(c->filter, &h, 1));
    c->words++;
    return true;
}

/* Adds to wb the log row (ts, host, event) whose record, its id, is
 * {msg: text}; id and uk are scratch, ik gets the row's internal key. */
static void add_msg_row(struct wfilter_builder *wb, int64_t ts, const char *host, const char *event,
                        const struct buf *text, struct buf *id, struct buf *uk, struct buf *ik)
{
    struct rec_field fl = {.key = slice_cstr("msg"),
                           .type = REC_STRING,
                           .v.s = slice_make(text->data, text->len)};
    buf_reset(id);
    rec_encode(id, NULL, 0, &fl, 1);
    buf_reset(uk);
    key_encode_row_id(uk, 0, ts, false, slice_cstr(host), slice_cstr(event),
                      slice_make(id->data, id->len));
    buf_reset(ik);
    ikey_append(ik, slice_make(uk->data, uk->len), 1, IKEY_PUT);
    wfilter_add(wb, slice_make(ik->data, ik->len), slice_make("", 0));
}

/* The builder hashes words in one pass of its own: every word of a row, as
 * words_each and words_hash2 (or words_hash, for the filters of before)
 * see them, is in the filter (a hash that differed would miss most of
 * them). Random bytes: letters of both cases, digits, '_', punctuation,
 * UTF-8 and other high bytes. */
static void words_hash_same(void)
{
    static const char alphabet[] = "aZ09_-. /:\"\x01\x7f\xc3\xa9\xff\x80QqXx";
    struct wfilter_builder wb;
    wfilter_builder_init(&wb);
    struct buf text = BUF_INIT, id = BUF_INIT, uk = BUF_INIT, ik = BUF_INIT, f = BUF_INIT;
    rng_state = 0x0123456789abcdefULL;
    size_t checked = 0;
    for (int block = 0; block < 20; block++) {
        wfilter_builder_reset(&wb);
        struct buf all = BUF_INIT; /* every text of the block, ' '-separated */
        for (int row = 0; row < 50; row++) {
            buf_reset(&text);
            size_t len = rng() % 200;
            for (size_t i = 0; i < len; i++)
                buf_putc(&text, alphabet[rng() % (sizeof alphabet - 1)]);
            add_msg_row(&wb, T0 + row, "Host_A-1", "Ev\xc3\xa9nt.x", &text, &id, &uk, &ik);
            buf_append(&all, text.data, text.len);
            buf_putc(&all, ' ');
        }
        buf_printf(&all, "Host_A-1 Ev\xc3\xa9nt.x");
        buf_reset(&f);
        assert_true(wfilter_finish(&wb, &f));
        assert_true(wfilter_ok(slice_make(f.data, f.len)));
        struct word_check c = {slice_make(f.data, f.len), 0};
        words_each(slice_make(all.data, all.len), check_word, &c);
        checked += c.words;
        buf_destroy(&all);
    }
    assert_true(checked > 5000);
    /* a block with an entry that is not a log row gets no filter */
    wfilter_builder_reset(&wb);
    wfilter_add(&wb, slice_make(ik.data, ik.len), slice_make("", 0));
    wfilter_add(&wb, slice_make(ik.data, ik.len), slice_make("v", 1));
    buf_reset(&f);
    assert_false(wfilter_finish(&wb, &f));
    assert_int_equal(f.len, 0);
    wfilter_builder_reset(&wb);
    assert_false(wfilter_finish(&wb, &f)); /* nor an empty one */
    wfilter_builder_destroy(&wb);
    buf_destroy(&text);
    buf_destroy(&id);
    buf_destroy(&uk);
    buf_destroy(&ik);
    buf_destroy(&f);
}

/* Runs check with the filters of today, then with those of words_hash. */
static void with_both_hashes(void (*check)(void))
{
    for (int v1 = 0; v1 <= 1; v1++) {
        hash_v1 = v1;
        wfilter_test_write_v1(v1);
        check();
    }
    wfilter_test_write_v1(false);
    hash_v1 = false;
}

static void test_words_hash_same(void **state)
{
    (void)state;
    with_both_hashes(words_hash_same);
}

/* Collects the distinct hashes (hash_of) of the words words_each gives. */
struct hash_set {
    uint64_t h[4096];
    size_t n;
};

static bool collect_hash(void *arg, struct slice word)
{
    struct hash_set *s = arg;
    uint64_t h = hash_of(word);
    for (size_t i = 0; i < s->n; i++)
        if (s->h[i] == h)
            return true;
    assert_true(s->n < sizeof s->h / sizeof s->h[0]);
    s->h[s->n++] = h;
    return true;
}

/* The filter is bit for bit the bloom filter of the distinct words_hash2
 * (words_hash before) of the words words_each finds, then WFILTER_HASH2,
 * for text over all 256 byte values and words that repeat, in either
 * case, at the end of a text or not, longer than 64 bytes or not (the
 * builder splits and folds 16 bytes at a time, by masks of its own). */
static void filter_bytes_same(void)
{
    struct wfilter_builder wb;
    wfilter_builder_init(&wb);
    struct buf text = BUF_INIT, id = BUF_INIT, uk = BUF_INIT, ik = BUF_INIT, f = BUF_INIT,
               want = BUF_INIT;
    static struct hash_set set;
    rng_state = 0x5bd1e9955bd1e995ULL;
    /* block 40 is short values (hashed by a path of their own): every word
     * length up to 24 bytes, alone, and after and before another word */
    static const char long_word[] = "aBcDeFgHiJkLmNoPqRsTuVwXyZ";
    for (int block = 0; block < 41; block++) {
        wfilter_builder_reset(&wb);
        set.n = 0;
        for (int row = 0; row < (block < 40 ? 20 : 3 * 24); row++) {
            buf_reset(&text);
            if (block == 40) {
                int wlen = row / 3 + 1;
                if (row % 3 == 1)
                    buf_puts(&text, "-z ");
                buf_append(&text, long_word + row % 3, (size_t)wlen);
                if (row % 3 == 2)
                    buf_puts(&text, "/9");
                add_msg_row(&wb, T0 + row, "Web-01", "app", &text, &id, &uk, &ik);
                words_each(slice_make(text.data, text.len), collect_hash, &set);
                continue;
            }
            size_t len = rng() % 300;
            bool is_long = rng() % 4 == 0; /* words of 60 to 200 bytes */
            for (size_t i = 0; i < len; i++) {
                /* every byte value, word bytes more often so words are long */
                unsigned r = (unsigned)rng();
                unsigned char c = (unsigned char)(r >> 8);
                if ((r & 1) || (is_long && r % 64 != 0))
                    c = (unsigned char)"aZq_9\xe9"[(r >> 1) % 6];
                buf_putc(&text, (char)c);
                if (r % 16 == 2) { /* a word seen before, in either case, 1 to 20 bytes */
                    static const char *vocab[] = {"a",
                                                  "Of",
                                                  "get",
                                                  "GET",
                                                  "Error",
                                                  "error",
                                                  "abcdefg",
                                                  "ABCDEFGH",
                                                  "timeout_ms",
                                                  "connection15",
                                                  "0123456789abcdef",
                                                  "0123456789abcdefg",
                                                  "x\xc3\xa9y"};
                    buf_puts(&text, vocab[(r >> 8) % (sizeof vocab / sizeof vocab[0])]);
                }
            }
            add_msg_row(&wb, T0 + row, "Web-01", "app", &text, &id, &uk, &ik);
            words_each(slice_make(text.data, text.len), collect_hash, &set);
        }
        words_each(slice_cstr("Web-01 app"), collect_hash, &set);
        buf_reset(&f);
        assert_true(wfilter_finish(&wb, &f));
        buf_reset(&want);
        bloom_build_k(set.h, set.n, WFILTER_BITS_PER_WORD, WFILTER_PROBES, &want);
        if (!hash_v1)
            buf_putc(&want, (char)WFILTER_HASH2);
        assert_int_equal(f.len, want.len);
        assert_memory_equal(f.data, want.data, f.len);
    }
    wfilter_builder_destroy(&wb);
    buf_destroy(&text);
    buf_destroy(&id);
    buf_destroy(&uk);
    buf_destroy(&ik);
    buf_destroy(&f);
    buf_destroy(&want);
}

static void test_filter_bytes_same(void **state)
{
    (void)state;
    with_both_hashes(filter_bytes_same);
}

/* --- a table of log rows --- */

#define NROWS 30000

/* Builds dir/name of NROWS log rows (ts T0 + i, ascending keys) with opts. */
static char *build_log_sst(const char *dir, const char *name, const struct sst_build_opts *opts)
{
    struct buf path = BUF_INIT, uk = BUF_INIT, ik = BUF_INIT, id = BUF_INIT;
    buf_printf(&path, "%s/%s", dir, name);
    struct sst_builder *b;
    assert_int_equal(sst_builder_new(env_posix(), path.data, opts, &b), ERR_OK);
    rng_state = 0x9e3779b97f4a7c15ULL;
    char host[16];
    for (int i = 0; i < NROWS; i++) {
        buf_reset(&id);
        log_id(&id, i, NULL);
        snprintf(host, sizeof host, "web-%d", i % 7);
        buf_reset(&uk);
        key_encode_row_id(&uk, 0, T0 + i, false, slice_cstr(host), slice_cstr("nginx"),
                          slice_make(id.data, id.len));
        buf_reset(&ik);
        ikey_append(&ik, slice_make(uk.data, uk.len), 1, IKEY_PUT);
        assert_int_equal(sst_add(b, slice_make(ik.data, ik.len), slice_make("", 0), T0 + i),
                         ERR_OK);
    }
    struct sst_props props;
    assert_int_equal(sst_builder_finish(b, &props), ERR_OK);
    buf_destroy(&uk);
    buf_destroy(&ik);
    buf_destroy(&id);
    return buf_steal(&path, NULL);
}

struct keys {
    struct buf data;
    size_t *off, *len, n, cap;
};

static void keys_push(struct keys *k, struct slice key)
{
    if (k->n == k->cap) {
        k->cap = k->cap ? 2 * k->cap : 256;
        k->off = xrealloc(k->off, k->cap * sizeof *k->off);
        k->len = xrealloc(k->len, k->cap * sizeof *k->len);
    }
    k->off[k->n] = k->data.len;
    k->len[k->n++] = key.len;
    buf_append(&k->data, key.ptr, key.len);
}

static struct slice keys_at(const struct keys *k, size_t i)
{
    return slice_make(k->data.data + k->off[i], k->len[i]);
}

static void keys_free(struct keys *k)
{
    buf_destroy(&k->data);
    free(k->off);
    free(k->len);
    memset(k, 0, sizeof *k);
}

static bool ikey_has(struct slice ik, const char **words, size_t n)
{
    return row_has(ikey_user(ik), slice_make("", 0), words, n);
}

static void hashes_of(const char **words, size_t n, struct word_hashes *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = words_hashes(slice_cstr(words[i]));
}

/* The reference: every key of the table in order, and which have the words. */
static void all_keys(struct sst_table *t, struct keys *all)
{
    struct iter *it = sst_iter(t);
    for (it_seek_first(it); it_valid(it); it_next(it))
        keys_push(all, it_key(it));
    assert_int_equal(it_status(it), ERR_OK);
    it_destroy(it);
}

/* The data blocks of t, and in *with_filter those that have a word filter. */
static size_t blocks_with_filter(struct sst_table *t, size_t *with_filter)
{
    size_t n = 0;
    *with_filter = 0;
    struct sst_scan *sc = sst_scan_new(t);
    for (; sst_scan_valid(sc); sst_scan_next_block(sc), n++)
        *with_filter += sst_scan_block_filter(sc).len > 0;
    assert_int_equal(sst_scan_status(sc), ERR_OK);
    sst_scan_free(sc);
    return n;
}

/* Whether key holds every word's bytes, ASCII case folded (words given
 * folded). */
static bool holds_all(struct slice key, const struct slice *need, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!words_contains_folded(key, need[i]))
            return false;
    return true;
}

/* The matching keys an iterator with the words yields forward, backward,
 * and after seeks to keys of the table, against the reference; with
 * by_bytes, the words are also needed texts (sst_read_opts.need), and the
 * rows lacking one are passed over inside the blocks (every block here is
 * of log rows): none is yielded, each is counted. Returns the blocks
 * skipped by the forward pass. */
static uint64_t check_words_as(struct sst_table *t, const struct keys *all, const char **words,
                               size_t n, bool by_bytes)
{
    struct word_hashes h[8];
    hashes_of(words, n, h);
    char folded[8][32];
    struct slice need[8];
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(words[i]);
        assert_true(len < sizeof folded[i]);
        for (size_t j = 0; j <= len; j++)
            folded[i][j] = (char)tolower((unsigned char)words[i][j]);
        need[i] = slice_make(folded[i], len);
    }
    uint64_t read = 0, skipped = 0, passed = 0;
    struct sst_read_opts o = {.words = h,
                              .nwords = n,
                              .need = by_bytes ? need : NULL,
                              .nneed = by_bytes ? n : 0,
                              .blocks_read = &read,
                              .blocks_skipped = &skipped,
                              .rows_passed = &passed};
    size_t with_filter, blocks = blocks_with_filter(t, &with_filter);
    bool log_blocks = with_filter == blocks;
    struct iter *it = sst_iter_opts(t, &o);
    size_t *match = xcalloc(all->n + 1, sizeof *match), nm = 0;
    for (size_t i = 0; i < all->n; i++)
        if (ikey_has(keys_at(all, i), words, n))
            match[nm++] = i;
    /* forward: every match in order; every key yielded is a key of the table */
    size_t got = 0, yielded = 0;
    for (it_seek_first(it); it_valid(it); it_next(it)) {
        yielded++;
        assert_true(!by_bytes || !log_blocks || holds_all(ikey_user(it_key(it)), need, n));
        if (!ikey_has(it_key(it), words, n))
            continue;
        assert_true(got < nm);
        assert_true(slice_eq(it_key(it), keys_at(all, match[got])));
        got++;
    }
    assert_int_equal(it_status(it), ERR_OK);
    assert_int_equal(got, nm);
    assert_true(yielded <= all->n);
    if (by_bytes && log_blocks) { /* log blocks: rows read yielded or passed over */
        size_t holding = 0;
        for (size_t i = 0; i < all->n; i++)
            holding += holds_all(ikey_user(keys_at(all, i)), need, n);
        assert_true(yielded + passed <= all->n);
        assert_true(yielded <= holding);
        if (skipped == 0)
            assert_int_equal(yielded + passed, all->n);
    } else if (with_filter == 0) { /* no log blocks: every row yielded */
        assert_int_equal(passed, 0);
        assert_int_equal(yielded, all->n);
    }
    uint64_t fwd_skipped = skipped;
    /* backward */
    got = 0;
    for (it_seek_last(it); it_valid(it); it_prev(it)) {
        if (!ikey_has(it_key(it), words, n))
            continue;
        assert_true(got < nm);
        assert_true(slice_eq(it_key(it), keys_at(all, match[nm - 1 - got])));
        got++;
    }
    assert_int_equal(it_status(it), ERR_OK);
    assert_int_equal(got, nm);
    /* seeks: the first match at or after the target going forward, the last
     * one before it going backward */
    size_t m = 0;
    for (size_t i = 0; i < all->n; i += 97) {
        while (m < nm && match[m] < i)
            m++;
        it_seek(it, keys_at(all, i));
        while (it_valid(it) && !ikey_has(it_key(it), words, n))
            it_next(it);
        if (m < nm)
            assert_true(it_valid(it) && slice_eq(it_key(it), keys_at(all, match[m])));
        else
            assert_false(it_valid(it));
        it_seek(it, keys_at(all, i));
        if (it_valid(it))
            it_prev(it);
        else
            it_seek_last(it);
        while (it_valid(it) && !ikey_has(it_key(it), words, n))
            it_prev(it);
        if (m > 0)
            assert_true(it_valid(it) && slice_eq(it_key(it), keys_at(all, match[m - 1])));
        else
            assert_false(it_valid(it));
        assert_int_equal(it_status(it), ERR_OK);
    }
    /* direction switches at every match: next then prev comes back */
    for (size_t j = 0; j < nm; j++) {
        it_seek(it, keys_at(all, match[j]));
        assert_true(slice_eq(it_key(it), keys_at(all, match[j])));
        it_next(it);
        while (it_valid(it) && !ikey_has(it_key(it), words, n))
            it_next(it);
        if (j + 1 < nm) {
            assert_true(slice_eq(it_key(it), keys_at(all, match[j + 1])));
            it_prev(it);
            while (it_valid(it) && !ikey_has(it_key(it), words, n))
                it_prev(it);
            assert_true(slice_eq(it_key(it), keys_at(all, match[j])));
        }
    }
    assert_int_equal(it_status(it), ERR_OK);
    it_destroy(it);
    free(match);
    return fwd_skipped;
}

/* check_words_as both ways: the same matches, the same blocks skipped. */
static uint64_t check_words(struct sst_table *t, const struct keys *all, const char **words,
                            size_t n)
{
    uint64_t skipped = check_words_as(t, all, words, n, false);
    assert_int_equal(check_words_as(t, all, words, n, true), skipped);
    return skipped;
}

static uint64_t count_blocks(struct sst_table *t)
{
    uint64_t read = 0;
    struct sst_read_opts o = {.blocks_read = &read};
    struct iter *it = sst_iter_opts(t, &o);
    for (it_seek_first(it); it_valid(it); it_next(it))
        ;
    it_destroy(it);
    return read;
}

/* A rare word lies in a few blocks: both directions and every seek give
 * exactly the rows a plain iteration filtered by words_find gives, and most
 * blocks are skipped; counters add up. */
static void test_skip_rare_word(void **state)
{
    (void)state;
    if (tu_tsan()) { /* cmocka's skip() is "not ok # SKIP", a failure to prove */
        print_message("# not run under ThreadSanitizer: tables read in this thread only\n");
        return;
    }
    char *dir = tu_mkdtemp("wf");
    struct sst_build_opts opts = {.bloom_key = key_row_base_len};
    char *path = build_log_sst(dir, "000001.sst", &opts);
    struct cache *c = cache_new(8u << 20);
    atomic_ullong corrupt = 0;
    struct sst_table *t;
    assert_int_equal(sst_open(env_posix(), path, c, &corrupt, &t), ERR_OK);
    assert_int_equal(sst_version(t), SST_VERSION_PLAIN);
    struct keys all = {0};
    all_keys(t, &all);
    assert_int_equal(all.n, NROWS);
    uint64_t blocks = count_blocks(t);
    assert_true(blocks > 50);

    const char *needle[] = {"NEEDLE"}; /* case-insensitive */
    struct word_hashes h = words_hashes(slice_cstr("needle"));
    uint64_t read = 0, skipped = 0;
    struct sst_read_opts o = {.words = &h,
                              .nwords = 1,
                              .blocks_read = &read,
                              .blocks_skipped = &skipped};
    struct iter *it = sst_iter_opts(t, &o);
    size_t n = 0;
    for (it_seek_first(it); it_valid(it); it_next(it))
        n += ikey_has(it_key(it), needle, 1);
    it_destroy(it);
    assert_int_equal(n, (NROWS - 17 + 1498) / 1499);
    assert_int_equal(read + skipped, blocks);
    assert_true(read <= n + blocks / 20); /* the matches' blocks and a few false positives */
    assert_true(skipped >= blocks * 3 / 4);
    print_message("# needle: %zu rows, %llu of %llu blocks read\n", n, (unsigned long long)read,
                  (unsigned long long)blocks);

    assert_true(check_words(t, &all, needle, 1) >= blocks * 3 / 4);
    const char *hay[] = {"haystack"};
    check_words(t, &all, hay, 1);
    const char *both[] = {"needle", "haystack"}; /* all of them: maybe no row */
    check_words(t, &all, both, 2);
    const char *host[] = {"web"}; /* in every block: nothing skipped */
    assert_int_equal(check_words(t, &all, host, 1), 0);
    const char *tag[] = {"eu"}; /* a tag value */
    assert_int_equal(check_words(t, &all, tag, 1), 0);
    const char *none[] = {"absent"};
    assert_true(check_words(t, &all, none, 1) >= blocks * 9 / 10);
    const char *key[] = {"msg"}; /* field names are not words of a row */
    assert_true(check_words(t, &all, key, 1) >= blocks * 9 / 10);
    /* no words, no skipping */
    read = skipped = 0;
    struct sst_read_opts plain = {.blocks_read = &read, .blocks_skipped = &skipped};
    it = sst_iter_opts(t, &plain);
    for (it_seek_last(it); it_valid(it); it_prev(it))
        ;
    it_destroy(it);
    assert_int_equal(read, blocks);
    assert_int_equal(skipped, 0);
    assert_int_equal(corrupt, 0);

    keys_free(&all);
    sst_unref(t);
    cache_free(c);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* sst_read_opts.events: in a table of points (no word filters) and in
 * one of log rows, with versions and deletes of keys, an iterator stops
 * only at the entries of the events asked for, forward, backward and
 * after seeks, and counts the others. */
static void test_event_set(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("wf");
    static const char *evs[] = {"cpu", "disk", "mem", "net"};
    for (int logs = 0; logs < 2; logs++) {
        struct buf path = BUF_INIT, uk = BUF_INIT, ik = BUF_INIT, id = BUF_INIT;
        buf_printf(&path, "%s/ev%d.sst", dir, logs);
        struct sst_build_opts opts = {.bloom_key = key_row_base_len};
        struct sst_builder *b;
        assert_int_equal(sst_builder_new(env_posix(), path.data, &opts, &b), ERR_OK);
        size_t n = 0, wanted = 0;
        for (int i = 0; i < 8000; i++) { /* keys in order: a ts's events ascending */
            const char *ev = evs[i % 4];
            if ((i / 4 * 7 + i % 4) % 3 == 0)
                continue;
            buf_reset(&id);
            if (logs)
                log_id(&id, i, NULL);
            buf_reset(&uk);
            key_encode_row_id(&uk, 0, T0 + i / 4, false, slice_cstr("web-1"), slice_cstr(ev),
                              slice_make(id.data, id.len));
            /* two versions of some keys: a newer put or delete, then the older put */
            int versions = !logs && i % 5 == 0 ? 2 : 1;
            for (int v = 0; v < versions; v++) {
                buf_reset(&ik);
                int kind = versions == 2 && v == 0 && i % 10 == 0 ? IKEY_DEL : IKEY_PUT;
                ikey_append(&ik, slice_make(uk.data, uk.len), (uint64_t)(9 - v), kind);
                struct slice val = logs ? slice_make("", 0) : slice_cstr("\x01");
                assert_int_equal(sst_add(b, slice_make(ik.data, ik.len), val, T0 + i / 4), ERR_OK);
                n++;
                wanted += strcmp(ev, "disk") == 0 || strcmp(ev, "net") == 0;
            }
        }
        struct sst_props props;
        assert_int_equal(sst_builder_finish(b, &props), ERR_OK);
        struct sst_table *t;
        atomic_ullong corrupt = 0;
        assert_int_equal(sst_open(env_posix(), path.data, NULL, &corrupt, &t), ERR_OK);
        struct keys all = {0};
        all_keys(t, &all);
        assert_int_equal(all.n, n);
        struct slice set[2] = {slice_cstr("disk"), slice_cstr("net")};
        uint64_t passed = 0;
        struct sst_read_opts o = {.events = set, .nevents = 2, .rows_passed = &passed};
        struct iter *it = sst_iter_opts(t, &o);
        size_t got = 0, k = 0;
        for (it_seek_first(it); it_valid(it); it_next(it), got++, k++) {
            struct slice ev;
            while (k < all.n && (ev = key_row_event(ikey_user(keys_at(&all, k))),
                                 !slice_eq(ev, set[0]) && !slice_eq(ev, set[1])))
                k++;
            assert_true(k < all.n && slice_eq(it_key(it), keys_at(&all, k)));
        }
        assert_int_equal(it_status(it), ERR_OK);
        assert_int_equal(got, wanted);
        assert_int_equal(passed, n - wanted);
        got = 0;
        for (it_seek_last(it); it_valid(it); it_prev(it))
            got++;
        assert_int_equal(got, wanted);
        for (size_t i = 0; i < all.n; i += 37) {
            it_seek(it, keys_at(&all, i));
            size_t j = i;
            struct slice ev;
            while (j < all.n && (ev = key_row_event(ikey_user(keys_at(&all, j))),
                                 !slice_eq(ev, set[0]) && !slice_eq(ev, set[1])))
                j++;
            if (j == all.n)
                assert_false(it_valid(it));
            else
                assert_true(it_valid(it) && slice_eq(it_key(it), keys_at(&all, j)));
        }
        it_destroy(it);
        keys_free(&all);
        sst_unref(t);
        buf_destroy(&path);
        buf_destroy(&uk);
        buf_destroy(&ik);
        buf_destroy(&id);
    }
    tu_rmtree(dir);
    free(dir);
}

/* Filters written before 2026-11-28 hold words_hash values and no
 * WFILTER_HASH2 byte: a table of them reads as before (the same rows, most
 * blocks skipped) through the word's words_hash. */
static void test_v1_filters_read(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("wf");
    struct sst_build_opts opts = {.bloom_key = key_row_base_len};
    wfilter_test_write_v1(true);
    char *path = build_log_sst(dir, "000001.sst", &opts);
    wfilter_test_write_v1(false);
    char *path2 = build_log_sst(dir, "000002.sst", &opts);
    struct cache *c = cache_new(8u << 20);
    atomic_ullong corrupt = 0;
    struct sst_table *t, *t2;
    assert_int_equal(sst_open(env_posix(), path, c, &corrupt, &t), ERR_OK);
    assert_int_equal(sst_open(env_posix(), path2, c, &corrupt, &t2), ERR_OK);
    struct keys all = {0};
    all_keys(t, &all);
    uint64_t blocks = count_blocks(t);
    const char *needle[] = {"Needle"};
    uint64_t skipped = check_words(t, &all, needle, 1);
    assert_true(skipped >= blocks * 3 / 4);
    /* the same rows (check_words); the false positives differ by hash */
    assert_true(check_words(t2, &all, needle, 1) >= blocks * 3 / 4);
    const char *none[] = {"absent"};
    assert_true(check_words(t, &all, none, 1) >= blocks * 9 / 10);
    assert_int_equal(corrupt, 0);
    keys_free(&all);
    sst_unref(t);
    sst_unref(t2);
    cache_free(c);
    free(path);
    free(path2);
    tu_rmtree(dir);
    free(dir);
}

static int64_t ts_of_row(const void *ctx, struct slice ukey)
{
    (void)ctx;
    return key_row_ts(ukey, false);
}

/* A table made by copying every block of another (sst_add_block, as a
 * compaction does) keeps the filters: the same blocks are skipped. The
 * host index's tables (no_bloom) and version 2 tables have none. */
static void test_copy_and_versions(void **state)
{
    (void)state;
    if (tu_tsan()) { /* cmocka's skip() is "not ok # SKIP", a failure to prove */
        print_message("# not run under ThreadSanitizer: tables read in this thread only\n");
        return;
    }
    char *dir = tu_mkdtemp("wf");
    struct sst_build_opts opts = {.bloom_key = key_row_base_len};
    char *path = build_log_sst(dir, "000001.sst", &opts);
    atomic_ullong corrupt = 0;
    struct sst_table *t, *t2;
    assert_int_equal(sst_open(env_posix(), path, NULL, &corrupt, &t), ERR_OK);
    struct keys all = {0};
    all_keys(t, &all);
    const char *needle[] = {"needle"};
    uint64_t skipped = check_words(t, &all, needle, 1);

    struct buf p2 = BUF_INIT;
    buf_printf(&p2, "%s/000002.sst", dir);
    struct sst_builder *b;
    assert_int_equal(sst_builder_new(env_posix(), p2.data, &opts, &b), ERR_OK);
    struct sst_scan *sc = sst_scan_new(t);
    size_t with_filter = 0;
    for (; sst_scan_valid(sc); sst_scan_next_block(sc)) {
        with_filter += sst_scan_block_filter(sc).len > 0;
        assert_int_equal(sst_add_block(b, sst_scan_block_stored(sc), sst_scan_block_raw(sc),
                                       sst_scan_block_last(sc), sst_scan_block_filter(sc),
                                       ts_of_row, NULL),
                         ERR_OK);
    }
    assert_int_equal(sst_scan_status(sc), ERR_OK);
    assert_true(with_filter > 50);
    sst_scan_free(sc);
    struct sst_props props;
    assert_int_equal(sst_builder_finish(b, &props), ERR_OK);
    assert_int_equal(sst_open(env_posix(), p2.data, NULL, &corrupt, &t2), ERR_OK);
    assert_int_equal(check_words(t2, &all, needle, 1), skipped);
    sst_unref(t2);
    buf_destroy(&p2);

    /* the host index's tables: no filters, every block read */
    struct sst_build_opts ix = {.no_bloom = true};
    char *p3 = build_log_sst(dir, "000003.sst", &ix);
    assert_int_equal(sst_open(env_posix(), p3, NULL, &corrupt, &t2), ERR_OK);
    assert_int_equal(check_words(t2, &all, needle, 1), 0);
    sst_unref(t2);
    free(p3);

    /* version 2, as the releases before wrote it: read whole, rows the same */
    sst_test_set_version(2);
    char *p4 = build_log_sst(dir, "000004.sst", &opts);
    sst_test_set_version(0);
    assert_int_equal(sst_open(env_posix(), p4, NULL, &corrupt, &t2), ERR_OK);
    assert_int_equal(sst_version(t2), 2);
    struct keys all2 = {0};
    all_keys(t2, &all2);
    assert_int_equal(all2.n, all.n);
    assert_memory_equal(all2.data.data, all.data.data, all.data.len);
    assert_int_equal(check_words(t2, &all, needle, 1), 0);
    /* its blocks copied into a version 3 table: still no filter */
    sc = sst_scan_new(t2);
    for (; sst_scan_valid(sc); sst_scan_next_block(sc))
        assert_int_equal(sst_scan_block_filter(sc).len, 0);
    assert_int_equal(sst_scan_status(sc), ERR_OK);
    sst_scan_free(sc);
    int kind;
    uint64_t seq;
    struct buf v = BUF_INIT;
    struct slice uk = ikey_user(keys_at(&all, 77));
    assert_true(sst_may_contain(t2, slice_make(uk.ptr, key_row_base_len(uk))));
    assert_int_equal(sst_find_seq(t2, uk, 10, &kind, &v, &seq), ERR_OK);
    assert_int_equal(kind, IKEY_PUT);
    buf_destroy(&v);
    keys_free(&all2);
    sst_unref(t2);
    free(p4);

    keys_free(&all);
    sst_unref(t);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* --- damage --- */

struct handle {
    uint64_t off, size;
};

/* The word filters' handles of the table at path, read from its index. */
static size_t filter_handles(const char *path, struct handle *out, size_t max)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    int64_t size = tu_file_size(path);
    char foot[SST_FOOTER];
    assert_int_equal(fseek(f, (long)(size - SST_FOOTER), SEEK_SET), 0);
    assert_int_equal(fread(foot, 1, SST_FOOTER, f), SST_FOOTER);
    uint64_t ioff = coding_get_u64le(foot), isize = coding_get_u64le(foot + 8);
    struct buf stored = BUF_INIT, raw = BUF_INIT;
    buf_reserve(&stored, isize + CODEC_TRAILER);
    assert_int_equal(fseek(f, (long)ioff, SEEK_SET), 0);
    assert_int_equal(fread(stored.data, 1, isize + CODEC_TRAILER, f), isize + CODEC_TRAILER);
    fclose(f);
    assert_int_equal(codec_decode(slice_make(stored.data, isize + CODEC_TRAILER), path, ioff, &raw),
                     ERR_OK);
    struct blk blk;
    assert_int_equal(blk_parse(slice_make(raw.data, raw.len), &blk), ERR_OK);
    struct iter *it = blk_iter(&blk);
    size_t n = 0;
    for (it_seek_first(it); it_valid(it) && n < max; it_next(it)) {
        struct slice v = it_value(it);
        uint64_t x[4];
        const char *p = v.ptr, *end = v.ptr + v.len;
        int k = 0;
        for (; k < 4 && p && p < end; k++)
            p = coding_varint_dec(p, end, &x[k]);
        if (k == 4)
            out[n++] = (struct handle){x[2], x[3]};
    }
    it_destroy(it);
    buf_destroy(&stored);
    buf_destroy(&raw);
    return n;
}

/* Writes len bytes at off of the file. */
static void write_at(const char *path, uint64_t off, const void *p, size_t len)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
    assert_int_equal(fwrite(p, 1, len, f), len);
    fclose(f);
}

/* Reads the table whole with the words forward and backward, and as a
 * compaction's scan: ERR_CORRUPT expected from each if want_corrupt, else
 * the right rows. Without words every row still reads (no filter is read). */
static void read_damaged(const char *path, bool want_corrupt, size_t nmatch)
{
    atomic_ullong corrupt = 0;
    struct cache *c = cache_new(8u << 20);
    struct sst_table *t;
    assert_int_equal(sst_open(env_posix(), path, c, &corrupt, &t), ERR_OK);
    const char *needle[] = {"needle"};
    struct word_hashes h = words_hashes(slice_cstr("needle"));
    struct sst_read_opts o = {.words = &h, .nwords = 1};
    for (int dir = 0; dir < 2; dir++) {
        struct iter *it = sst_iter_opts(t, &o);
        size_t n = 0;
        if (dir == 0)
            for (it_seek_first(it); it_valid(it); it_next(it))
                n += ikey_has(it_key(it), needle, 1);
        else
            for (it_seek_last(it); it_valid(it); it_prev(it))
                n += ikey_has(it_key(it), needle, 1);
        if (want_corrupt)
            assert_int_equal(it_status(it), ERR_CORRUPT);
        else
            assert_true(it_status(it) == ERR_OK && n == nmatch);
        it_destroy(it);
    }
    struct iter *it = sst_iter(t);
    size_t n = 0;
    for (it_seek_first(it); it_valid(it); it_next(it))
        n++;
    assert_int_equal(it_status(it), ERR_OK);
    assert_int_equal(n, NROWS);
    it_destroy(it);
    struct sst_scan *sc = sst_scan_new(t);
    for (n = 0; sst_scan_valid(sc); sst_scan_next(sc))
        n++;
    if (want_corrupt)
        assert_int_equal(sst_scan_status(sc), ERR_CORRUPT);
    else
        assert_int_equal(n, NROWS);
    sst_scan_free(sc);
    assert_true(!want_corrupt || corrupt > 0);
    sst_unref(t);
    cache_free(c);
}

/* A damaged filter (a flipped byte, a malformed filter with a good
 * checksum) gives ERR_CORRUPT to a reader with words and to a compaction's
 * scan, never a crash; a builder refuses to copy a malformed one. */
static void test_damaged_filter(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("wf");
    struct sst_build_opts opts = {.bloom_key = key_row_base_len};
    char *path = build_log_sst(dir, "000001.sst", &opts);
    size_t nmatch = (NROWS - 17 + 1498) / 1499;
    read_damaged(path, false, nmatch);
    struct handle hs[4096];
    size_t nh = filter_handles(path, hs, 4096);
    assert_true(nh > 50);
    /* every byte of one filter, payload and trailer, flipped in turn */
    struct handle fh = hs[nh / 2];
    for (uint64_t off = fh.off; off < fh.off + fh.size + CODEC_TRAILER; off += 1 + fh.size / 40) {
        assert_int_equal(tu_flip_byte(path, (int64_t)off, 0x20), 0);
        read_damaged(path, true, nmatch);
        assert_int_equal(tu_flip_byte(path, (int64_t)off, 0x20), 0);
    }
    /* a malformed filter with a good checksum: no probes */
    char *keep = xmalloc(fh.size + CODEC_TRAILER);
    FILE *f = fopen(path, "rb");
    assert_int_equal(fseek(f, (long)fh.off, SEEK_SET), 0);
    assert_int_equal(fread(keep, 1, fh.size + CODEC_TRAILER, f), fh.size + CODEC_TRAILER);
    fclose(f);
    char *bad = xmalloc(fh.size + CODEC_TRAILER);
    memcpy(bad, keep, fh.size + 1);
    bad[fh.size - 1] = 0; /* the probe count */
    coding_put_u32le(bad + fh.size + 1, crc32c_mask(crc32c(bad, fh.size + 1)));
    write_at(path, fh.off, bad, fh.size + CODEC_TRAILER);
    read_damaged(path, true, nmatch);
    write_at(path, fh.off, keep, fh.size + CODEC_TRAILER);
    read_damaged(path, false, nmatch);

    /* a builder refuses a malformed or damaged filter and stays as it was */
    atomic_ullong corrupt = 0;
    struct sst_table *t;
    assert_int_equal(sst_open(env_posix(), path, NULL, &corrupt, &t), ERR_OK);
    struct buf p2 = BUF_INIT;
    buf_printf(&p2, "%s/000002.sst", dir);
    struct sst_builder *b;
    assert_int_equal(sst_builder_new(env_posix(), p2.data, &opts, &b), ERR_OK);
    struct sst_scan *sc = sst_scan_new(t);
    struct slice f1 = sst_scan_block_filter(sc);
    assert_true(f1.len > CODEC_TRAILER);
    assert_int_equal(sst_add_block(b, sst_scan_block_stored(sc), sst_scan_block_raw(sc),
                                   sst_scan_block_last(sc),
                                   slice_make(bad, fh.size + CODEC_TRAILER), ts_of_row, NULL),
                     ERR_CORRUPT);
    memcpy(bad, f1.ptr, f1.len);
    bad[3] ^= 1;
    assert_int_equal(sst_add_block(b, sst_scan_block_stored(sc), sst_scan_block_raw(sc),
                                   sst_scan_block_last(sc), slice_make(bad, f1.len), ts_of_row,
                                   NULL),
                     ERR_CORRUPT);
    assert_int_equal(sst_add_block(b, sst_scan_block_stored(sc), sst_scan_block_raw(sc),
                                   sst_scan_block_last(sc), f1, ts_of_row, NULL),
                     ERR_OK);
    sst_scan_free(sc);
    struct sst_props props;
    assert_int_equal(sst_builder_finish(b, &props), ERR_OK);
    assert_true(props.entries > 0);
    sst_unref(t);
    buf_destroy(&p2);
    free(keep);
    free(bad);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* --- through the store --- */

struct fixture {
    char *dir;
    struct store *s;
    struct store_opts o;
    struct store_db *db;
};

static int64_t fixed_clock(void *arg)
{
    (void)arg;
    return T0 + 3600 * SEC;
}

static int setup(void **state)
{
    struct fixture *f = xcalloc(1, sizeof *f);
    store_opts_default(&f->o);
    f->o.clock = fixed_clock;
    f->o.wal_sync = STORE_SYNC_NONE;
    struct db_opts o = {.buckets = 1, .ts_desc = true, .ttl_ns = 0};
    assert_int_equal(tu_store_with_db("wfstore", &f->o, &o, &f->dir, &f->s, &f->db), ERR_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    sst_test_set_version(0);
    tu_store_close(f->dir, f->s, f->db);
    free(f);
    return 0;
}

static void reopen(struct fixture *f)
{
    store_db_unref(f->db);
    store_close(f->s);
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
    assert_int_equal(store_db_get(f->s, "d", &f->db), ERR_OK);
}

static void write_batch(struct fixture *f, struct batch *b)
{
    assert_int_equal(store_write(f->db, b), ERR_OK);
    batch_clear(b);
}

/* n log rows of host web-<i%5> at ts0 + i s (+ ns), msg from message(). */
static void add_logs(struct batch *b, int64_t ts0, int n, int seed)
{
    struct buf id = BUF_INIT;
    char host[16];
    rng_state = 0x243f6a8885a308d3ULL + (uint64_t)seed;
    for (int i = 0; i < n; i++) {
        buf_reset(&id);
        struct buf msg = BUF_INIT;
        message(&msg, i + 100); /* no "needle" ((i + 100) % 1499 == 17) for n < 1400 */
        buf_reset(&id);
        log_id(&id, i, msg.data);
        buf_destroy(&msg);
        snprintf(host, sizeof host, "web-%d", i % 5);
        batch_put_id(b, ts0 + i * SEC, slice_cstr(host), slice_cstr("nginx"),
                     slice_make(id.data, id.len), slice_make("", 0), false);
    }
    buf_destroy(&id);
}

static void point(struct buf *id, struct buf *v, const char *dc, const char *msg, bool tag_only)
{
    struct rec_tag t = {slice_cstr("dc"), slice_cstr(dc)};
    struct rec_field fl = {.key = slice_cstr("msg"), .type = REC_STRING, .v.s = slice_cstr(msg)};
    buf_reset(id);
    buf_reset(v);
    rec_encode(id, &t, 1, NULL, 0);
    if (!tag_only)
        rec_encode(v, NULL, 0, &fl, 1);
}

/* Every row of the bucket in both directions, keys and values, of those
 * having the words; with opts (counting into stats) or without. */
static void collect(struct fixture *f, const char **words, size_t n, bool with_opts,
                    struct store_read_stats *stats, int dir, struct keys *out)
{
    struct word_hashes h[8];
    hashes_of(words, n, h);
    struct store_read_opts o = {.words = h, .nwords = n, .stats = stats};
    struct store_snap *snap = store_snapshot(f->db);
    struct iter *it = store_iter_bucket_range(snap, 0, INT64_MIN, INT64_MAX, with_opts ? &o : NULL);
    memset(h, 0, sizeof h); /* the words were copied */
    if (dir > 0)
        it_seek_first(it);
    else
        it_seek_last(it);
    for (; it_valid(it); dir > 0 ? it_next(it) : it_prev(it)) {
        if (!row_has(it_key(it), it_value(it), words, n))
            continue;
        keys_push(out, it_key(it));
        keys_push(out, it_value(it));
    }
    assert_int_equal(it_status(it), ERR_OK);
    it_destroy(it);
    store_snap_release(snap);
}

/* The same rows with and without the words, in both directions; returns
 * the matches and adds the blocks skipped to *skipped. */
static size_t same_rows(struct fixture *f, const char **words, size_t n, uint64_t *skipped)
{
    size_t matches = 0;
    for (int dir = 1; dir >= -1; dir -= 2) {
        struct keys a = {0}, b = {0};
        struct store_read_stats st = {0};
        collect(f, words, n, false, NULL, dir, &a);
        collect(f, words, n, true, &st, dir, &b);
        assert_int_equal(a.n, b.n);
        assert_int_equal(a.data.len, b.data.len);
        assert_memory_equal(a.data.data, b.data.data, a.data.len);
        matches = a.n / 2;
        *skipped += st.blocks_skipped;
        keys_free(&a);
        keys_free(&b);
    }
    return matches;
}

/* Blocks whose skipping would bring back a deleted row or an old version
 * (a delete; a merge; a put with a value; a put whose id has no field, the
 * series of a point) are never skipped: the rows read are the same with
 * and without the words, in memtables, files, after a reopen and after a
 * compaction; blocks of log rows alone are skipped. */
static void test_store_never_resurrects(void **state)
{
    struct fixture *f = *state;
    struct batch *b = batch_new();
    struct buf id = BUF_INIT, v = BUF_INIT;
    const char *needle[] = {"needle"};
    /* older file: a needle row R, points P1 P2 Q with a needle, fillers */
    int64_t t0 = T0, tr = T0 + 300 * SEC + 1, tp = T0 + 200 * SEC + 1, tq = T0 + 400 * SEC + 1;
    add_logs(b, t0, 600, 1);
    log_id(&id, 0, "found a needle here");
    batch_put_id(b, tr, slice_cstr("web-1"), slice_cstr("nginx"), slice_make(id.data, id.len),
                 slice_make("", 0), false);
    point(&id, &v, "p1", "needle old", false);
    batch_put_id(b, tp, slice_cstr("web-2"), slice_cstr("cpu"), slice_make(id.data, id.len),
                 slice_make(v.data, v.len), true);
    point(&id, &v, "p2", "needle old", false);
    batch_put_id(b, tp, slice_cstr("web-2"), slice_cstr("cpu"), slice_make(id.data, id.len),
                 slice_make(v.data, v.len), true);
    point(&id, &v, "q", "needle old", false);
    batch_put_id(b, tq, slice_cstr("web-3"), slice_cstr("cpu"), slice_make(id.data, id.len),
                 slice_make(v.data, v.len), true);
    write_batch(f, b);
    uint64_t skipped = 0;
    assert_int_equal(same_rows(f, needle, 1, &skipped), 4); /* memtable: R P1 P2 Q */
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    skipped = 0;
    assert_int_equal(same_rows(f, needle, 1, &skipped), 4);
    assert_true(skipped > 0); /* the fillers' blocks */

    /* newer file: each amid fillers without a needle, in blocks that would
     * otherwise be skipped */
    add_logs(b, t0 + 2, 600, 2);
    log_id(&id, 0, "found a needle here");
    batch_delete_id(b, tr, slice_cstr("web-1"), slice_cstr("nginx"), slice_make(id.data, id.len));
    point(&id, &v, "p1", "calm new", false); /* a merge: msg replaced */
    batch_put_id(b, tp, slice_cstr("web-2"), slice_cstr("cpu"), slice_make(id.data, id.len),
                 slice_make(v.data, v.len), true);
    point(&id, &v, "p2", "calm new", false); /* a put with a value */
    batch_put_id(b, tp, slice_cstr("web-2"), slice_cstr("cpu"), slice_make(id.data, id.len),
                 slice_make(v.data, v.len), false);
    point(&id, &v, "q", "", true); /* a put of the series alone, no value */
    batch_put_id(b, tq, slice_cstr("web-3"), slice_cstr("cpu"), slice_make(id.data, id.len),
                 slice_make("", 0), false);
    write_batch(f, b);
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    skipped = 0;
    assert_int_equal(same_rows(f, needle, 1, &skipped), 0);
    assert_true(skipped > 0);
    reopen(f);
    skipped = 0;
    assert_int_equal(same_rows(f, needle, 1, &skipped), 0);
    const char *calm[] = {"calm"};
    assert_int_equal(same_rows(f, calm, 1, &skipped), 2);
    const char *web[] = {"web"};
    assert_int_equal(same_rows(f, web, 1, &skipped), 1200 + 3);
    assert_int_equal(store_db_compact(f->db), ERR_OK);
    skipped = 0;
    assert_int_equal(same_rows(f, needle, 1, &skipped), 0);
    assert_int_equal(same_rows(f, calm, 1, &skipped), 2);
    assert_true(skipped > 0);
    buf_destroy(&id);
    buf_destroy(&v);
    batch_free(b);
}

/* Files of version 2 in a database beside files of version 3: the rows
 * with a word are found in both (the version 2 file read whole), and a
 * compaction rewrites them with filters. */
static void test_store_version2(void **state)
{
    struct fixture *f = *state;
    struct batch *b = batch_new();
    struct buf id = BUF_INIT;
    const char *needle[] = {"needle"};
    sst_test_set_version(2);
    add_logs(b, T0, 800, 3);
    log_id(&id, 0, "an old needle");
    batch_put_id(b, T0 + 100 * SEC + 1, slice_cstr("web-1"), slice_cstr("nginx"),
                 slice_make(id.data, id.len), slice_make("", 0), false);
    write_batch(f, b);
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    sst_test_set_version(0);
    uint64_t v2_skipped = 0;
    assert_int_equal(same_rows(f, needle, 1, &v2_skipped), 1);
    assert_int_equal(v2_skipped, 0);
    add_logs(b, T0 + 1000 * SEC, 800, 4);
    log_id(&id, 0, "a new needle");
    batch_put_id(b, T0 + 1100 * SEC + 1, slice_cstr("web-1"), slice_cstr("nginx"),
                 slice_make(id.data, id.len), slice_make("", 0), false);
    write_batch(f, b);
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    uint64_t skipped = 0;
    assert_int_equal(same_rows(f, needle, 1, &skipped), 2);
    assert_true(skipped > 0);
    reopen(f);
    assert_int_equal(same_rows(f, needle, 1, &skipped), 2);
    assert_int_equal(store_db_compact(f->db), ERR_OK);
    uint64_t after = 0;
    assert_int_equal(same_rows(f, needle, 1, &after), 2);
    assert_true(after > skipped / 2);
    buf_destroy(&id);
    batch_free(b);
}

int main(void)
{
    log_set_level(LOG_ERROR + 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words_hash_same),
        cmocka_unit_test(test_v1_filters_read),
        cmocka_unit_test(test_filter_bytes_same),
        cmocka_unit_test(test_skip_rare_word),
        cmocka_unit_test(test_event_set),
        cmocka_unit_test(test_copy_and_versions),
        cmocka_unit_test(test_damaged_filter),
        cmocka_unit_test_setup_teardown(test_store_never_resurrects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_version2, setup, teardown),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
