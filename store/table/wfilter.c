/* Word filters: the distinct words of a block's log rows, gathered in an
 * open-addressing set as the entries go by (a 32 KiB block of log lines
 * repeats its host, event and most words many times), then written as a
 * bloom filter when the block is finished. */
#include "store/table/wfilter.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/coding.h"
#include "base/err.h"
#include "model/key.h"
#include "model/record.h"
#include "model/words.h"
#include "store/ikey.h"
#include "store/table/bloom.h"

#define WFILTER_MIN_SLOTS 1024u

static atomic_bool write_v1; /* wfilter_test_write_v1 */

void wfilter_test_write_v1(bool v1)
{
    atomic_store(&write_v1, v1);
}

void wfilter_builder_init(struct wfilter_builder *b)
{
    memset(b, 0, sizeof *b);
    b->ok = true;
    buf_init(&b->last);
    buf_init(&b->text);
    buf_init(&b->bits);
}

void wfilter_builder_destroy(struct wfilter_builder *b)
{
    free(b->set);
    free(b->list);
    buf_destroy(&b->last);
    buf_destroy(&b->text);
    buf_destroy(&b->bits);
}

void wfilter_builder_reset(struct wfilter_builder *b)
{
    if (b->n)
        memset(b->set, 0, b->cap * sizeof *b->set);
    b->n = 0;
    b->has_zero = false;
    b->ok = true;
    b->entries = 0;
    buf_reset(&b->last);
}

/* Keeps the set at most half full, so that probes stay short; the list
 * holds as many hashes as the set has slots. */
static void set_grow(struct wfilter_builder *b)
{
    size_t cap = b->cap ? 2 * b->cap : WFILTER_MIN_SLOTS;
    uint64_t *set = xcalloc_written(cap, sizeof *set);
    for (size_t k = 0; k < b->n; k++) {
        uint64_t h = b->list[k];
        size_t i = (size_t)h & (cap - 1);
        while (set[i])
            i = (i + 1) & (cap - 1);
        set[i] = h;
    }
    free(b->set);
    b->set = set;
    b->cap = cap;
    b->list = xrealloc(b->list, cap * sizeof *b->list);
}

/* Room in the set for n more words: set_grow until it stays at most half
 * full with them. */
static inline void reserve_words(struct wfilter_builder *b, size_t n)
{
    while (__builtin_expect(2 * (b->n + n) > b->cap, 0))
        set_grow(b);
}

/* Notes h, a word's hash before its finaliser, in a set with room for it
 * (reserve_words). Its low bits pick the slot: words_hash2 folds the
 * multiply's high bits into them (h ^= h >> 29); FNV-1a's (the filters
 * only tests write now) mix less but still depend on every byte. A zero
 * hash (the empty slot's value) is noted apart, found when its probe
 * reaches an empty slot. */
static inline void add_hash(struct wfilter_builder *b, uint64_t h)
{
    size_t mask = b->cap - 1, i = (size_t)h & mask;
    uint64_t *set = b->set;
    for (uint64_t at; (at = set[i]) != 0; i = (i + 1) & mask)
        if (at == h)
            return;
    if (__builtin_expect(!h, 0)) {
        b->has_zero = true;
        return;
    }
    set[i] = h;
    b->list[b->n++] = h;
}

/* For each byte: its ASCII-folded value if it is a word byte
 * (words_is_word_byte), else 0 (no word byte folds to 0). One load per
 * byte instead of the five range checks and the fold; wfilter_test
 * compares whole filters of text over all 256 byte values with the ones
 * words_each and words_hash give. */
static const unsigned char word_fold[256] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f,
    0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x00, 0x00, 0x00, 0x00, 0x5f,
    0x00, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f,
    0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f,
    0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0x9b, 0x9c, 0x9d, 0x9e, 0x9f,
    0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf,
    0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf,
    0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf,
    0xd0, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xdb, 0xdc, 0xdd, 0xde, 0xdf,
    0xe0, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xeb, 0xec, 0xed, 0xee, 0xef,
    0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff,
};

/* words_hash of each word of text, in one pass over its bytes (words_each
 * with words_hash walks every word twice and calls out for each): the same
 * FNV-1a over ASCII-folded bytes and finaliser as model/words.c, which
 * wfilter_test checks word for word and filter for filter. Filters of
 * this hash are written only by tests now (wfilter_test_write_v1). */
static void add_text_v1(struct wfilter_builder *b, struct slice text)
{
    const unsigned char *p = (const unsigned char *)text.ptr, *end = p + text.len;
    for (;;) {
        while (p < end && !word_fold[*p])
            p++;
        if (p == end)
            return;
        uint64_t h = 0xcbf29ce484222325ULL;
        unsigned char c;
        for (; p < end && (c = word_fold[*p]) != 0; p++) {
            h ^= c;
            h *= 0x100000001b3ULL;
        }
        reserve_words(b, 1);
        add_hash(b, h);
    }
}

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* words_hash2 of the word of len (>= 1) bytes at w, folded already,
 * before its finaliser; the bytes up to the end of its last 8-byte chunk
 * are read, and the last chunk's bytes past the word shifted out. */
static inline uint64_t hash2_at(const unsigned char *w, size_t len)
{
    uint64_t h = (uint64_t)len * WORDS_HASH2_K;
    size_t i = 0;
    for (; i + 8 < len; i += 8) {
        h = (h ^ load64(w + i)) * WORDS_HASH2_K;
        h ^= h >> 29;
    }
    unsigned sh = (unsigned)(8 * (i + 8 - len)); /* 0..56 */
    h = (h ^ (load64(w + i) << sh >> sh)) * WORDS_HASH2_K;
    return h ^ (h >> 29);
}

#ifdef __SSE2__
/* Which of the 16 bytes of x are word bytes (bit i for byte i), and x
 * folded (ASCII upper case to lower) in *folded. A byte is in lo..hi when
 * (int8)(c - lo - 128) < (int8)(hi - lo + 1 - 128): one add and one
 * signed compare a range. */
static inline unsigned classify16(__m128i x, __m128i *folded)
{
    const __m128i bit5 = _mm_set1_epi8(0x20);
    const __m128i alpha_bias = _mm_set1_epi8((char)(0x80 - 'a'));
    const __m128i alpha_end = _mm_set1_epi8((char)(-128 + 26));
    const __m128i digit_bias = _mm_set1_epi8((char)(0x80 - '0'));
    const __m128i digit_end = _mm_set1_epi8((char)(-128 + 10));
    const __m128i us = _mm_set1_epi8('_');
    /* x | 0x20 is a lower-case letter exactly when x is a letter */
    __m128i alpha = _mm_cmplt_epi8(_mm_add_epi8(_mm_or_si128(x, bit5), alpha_bias), alpha_end);
    __m128i digit = _mm_cmplt_epi8(_mm_add_epi8(x, digit_bias), digit_end);
    __m128i hi = _mm_cmplt_epi8(x, _mm_setzero_si128()); /* 0x80 and up */
    __m128i w = _mm_or_si128(_mm_or_si128(alpha, digit), _mm_or_si128(hi, _mm_cmpeq_epi8(x, us)));
    *folded = _mm_or_si128(x, _mm_and_si128(alpha, bit5));
    return (unsigned)_mm_movemask_epi8(w);
}
#endif

/* Copies text into b->text folded (ASCII upper case to lower) and padded
 * with 16 zero bytes, and sets one bit per byte in b->bits (64 a word,
 * low bit first): whether it is a word byte. Returns the bit words. */
static size_t classify(struct wfilter_builder *b, struct slice text)
{
    size_t chunks = (text.len + 15) / 16, nwords = (chunks + 3) / 4;
    buf_reset(&b->text);
    buf_reserve(&b->text, chunks * 16 + 16);
    unsigned char *t = (unsigned char *)b->text.data;
    memcpy(t, text.ptr, text.len);
    memset(t + text.len, 0, chunks * 16 + 16 - text.len);
    buf_reset(&b->bits);
    buf_reserve(&b->bits, (nwords + 1) * sizeof(uint64_t));
    uint64_t *m = (uint64_t *)(void *)b->bits.data;
    memset(m, 0, (nwords + 1) * sizeof *m);
#ifdef __SSE2__
    for (size_t i = 0; i < chunks; i++) {
        __m128i f;
        unsigned w = classify16(_mm_loadu_si128((const __m128i *)(const void *)(t + 16 * i)), &f);
        _mm_storeu_si128((__m128i *)(void *)(t + 16 * i), f);
        m[i / 4] |= (uint64_t)w << (16 * (i % 4));
    }
#else
    for (size_t i = 0; i < text.len; i++) {
        unsigned char c = word_fold[t[i]];
        if (c) {
            t[i] = c;
            m[i / 64] |= 1ULL << (i % 64);
        }
    }
#endif
    return nwords;
}

/* words_hash2 of each word of text: the word bytes found 16 at a time,
 * each word's start and length read off the bit words, and its hash taken
 * a chunk of 8 bytes at a time. Bits past the text are zero (the padding
 * holds no word byte). wfilter_test checks it word for word and filter for
 * filter against words_each and words_hash2. */
static void add_text_v2(struct wfilter_builder *b, struct slice text)
{
    size_t nwords = classify(b, text);
    const uint64_t *m = (const uint64_t *)(const void *)b->bits.data;
    const unsigned char *t = (const unsigned char *)b->text.data;
    /* the set in locals: stores through b->set may alias b's fields, which
     * the compiler would otherwise load again after each */
    uint64_t *set = b->set, *list = b->list;
    size_t mask = b->cap - 1, n = b->n;
    uint64_t carry = 0; /* the last bit of the word before */
    for (size_t k = 0; k < nwords; k++) {
        uint64_t bits = m[k], starts = bits & ~((bits << 1) | carry);
        carry = bits >> 63;
        if (__builtin_expect(2 * (n + 32) > mask + 1, 0)) {
            b->n = n; /* at most one word starts at every other bit */
            reserve_words(b, 32);
            set = b->set, list = b->list, mask = b->cap - 1;
        }
        const unsigned char *base = t + 64 * k;
        while (starts) {
            size_t at = (unsigned)__builtin_ctzll(starts);
            starts &= starts - 1;
            uint64_t rest = ~bits >> at;
            size_t len;
            if (rest) {
                len = (unsigned)__builtin_ctzll(rest);
            } else { /* the word goes on in the next bit words */
                len = 64 - at;
                size_t j = k + 1;
                for (; j < nwords && m[j] == ~0ULL; j++)
                    len += 64;
                if (j < nwords)
                    len += (size_t)__builtin_ctzll(~m[j]);
            }
            uint64_t h, v;
            if (len <= 8) { /* most words: one chunk */
                unsigned sh = (unsigned)(64 - 8 * len);
                h = ((uint64_t)len * WORDS_HASH2_K ^ (load64(base + at) << sh >> sh)) *
                    WORDS_HASH2_K;
                h ^= h >> 29;
            } else {
                h = hash2_at(base + at, len);
            }
            size_t i = (size_t)h & mask;
            while ((v = set[i]) != 0 && v != h)
                i = (i + 1) & mask;
            if (v)
                continue;
            if (__builtin_expect(!h, 0)) {
                b->has_zero = true;
                continue;
            }
            set[i] = h;
            list[n++] = h;
        }
    }
    b->n = n;
}

/* add_text_v2 for a short text (a host, an event, most tag values): a byte
 * loop that gathers each word's folded bytes into 8-byte chunks in a
 * register (a word stored a byte at a time and read back 8 bytes at a time
 * would stall the load), without the copy and masks the long path sets up. */
#define WFILTER_SHORT 24

/* hash2_at of a word of len bytes held as its whole chunks c (len / 8 of
 * them) and the rest, last (zero-padded). */
static inline uint64_t chunks_hash2(const uint64_t *c, uint64_t last, size_t len)
{
    uint64_t h = (uint64_t)len * WORDS_HASH2_K;
    size_t whole = len / 8;
    for (size_t i = 0; i < whole; i++) {
        h = (h ^ c[i]) * WORDS_HASH2_K;
        h ^= h >> 29;
    }
    if (len & 7) {
        h = (h ^ last) * WORDS_HASH2_K;
        h ^= h >> 29;
    }
    return h;
}

static void add_short_v2(struct wfilter_builder *b, struct slice text)
{
    const unsigned char *p = (const unsigned char *)text.ptr;
    uint64_t c[WFILTER_SHORT / 8], chunk = 0;
    size_t len = 0;
    reserve_words(b, (WFILTER_SHORT + 1) / 2);
    for (size_t i = 0; i < text.len; i++) {
        uint64_t f = word_fold[p[i]];
        if (f) {
            chunk |= f << (8 * (len & 7));
            if ((++len & 7) == 0) {
                c[len / 8 - 1] = chunk;
                chunk = 0;
            }
        } else if (len) {
            add_hash(b, chunks_hash2(c, chunk, len));
            chunk = 0;
            len = 0;
        }
    }
    if (len)
        add_hash(b, chunks_hash2(c, chunk, len));
}

static void add_text(struct wfilter_builder *b, struct slice text)
{
    if (b->v1)
        add_text_v1(b, text);
    else if (text.len <= WFILTER_SHORT)
        add_short_v2(b, text);
    else
        add_text_v2(b, text);
}

/* The words of host and event, unless the last entry had the same (most
 * entries of a block do). */
static void add_names(struct wfilter_builder *b, struct slice host, struct slice event)
{
    size_t n = host.len + 1 + event.len;
    if (b->last.len == n && memcmp(b->last.data, host.ptr, host.len) == 0 &&
        b->last.data[host.len] == 0 &&
        memcmp(b->last.data + host.len + 1, event.ptr, event.len) == 0)
        return;
    buf_reset(&b->last);
    buf_append(&b->last, host.ptr, host.len);
    buf_putc(&b->last, '\0');
    buf_append(&b->last, event.ptr, event.len);
    add_text(b, host);
    add_text(b, event);
}

/* The words of a log row's id record, read straight off its bytes (the
 * record reader's checks and calls were a fifth of the filter's cost):
 * its tags' values and its string fields' values. false if the record is
 * malformed (reading the block reports it) or holds no field (an id
 * without fields is a point's series too: such a key may have versions
 * with values). */
static bool add_id_words(struct wfilter_builder *b, struct slice id)
{
    const char *p = id.ptr, *end = p + id.len;
    uint64_t ntags, nfields;
    struct slice key, v;
    int type;
    if (!(p = rec_walk_varint(p, end, &ntags)))
        return false;
    for (; ntags; ntags--) {
        if (!(p = rec_walk_bytes(p, end, &key)) || !(p = rec_walk_bytes(p, end, &v)))
            return false;
        add_text(b, v);
    }
    if (!(p = rec_walk_varint(p, end, &nfields)) || nfields == 0)
        return false;
    for (; nfields; nfields--) {
        if (!(p = rec_walk_field(p, end, &key, &type, &v)))
            return false;
        if (type == REC_STRING)
            add_text(b, v);
    }
    return p == end;
}

/* The words of a log row; false if the entry is not a log row. */
static bool add_row(struct wfilter_builder *b, struct slice ikey, struct slice value)
{
    if (!ikey_ok(ikey) || ikey_kind(ikey) != IKEY_PUT || value.len)
        return false;
    struct key_row r;
    if (key_decode_row(ikey_user(ikey), false, &r) != ERR_OK || r.id.len == 0 ||
        !add_id_words(b, r.id))
        return false;
    add_names(b, r.host, r.event);
    return true;
}

void wfilter_add(struct wfilter_builder *b, struct slice ikey, struct slice value)
{
    if (b->entries == 0)
        b->v1 = atomic_load(&write_v1);
    b->entries++;
    if (b->ok && !add_row(b, ikey, value))
        b->ok = false;
}

bool wfilter_finish(struct wfilter_builder *b, struct buf *out)
{
    if (!b->ok || b->entries == 0)
        return false;
    /* the finaliser applied to the distinct hashes, in the list (which
     * has a free place for the zero hash: the set is at most half full) */
    if (!b->cap)
        set_grow(b);
    size_t n = b->n;
    for (size_t i = 0; i < n; i++)
        b->list[i] = hash_fmix64(b->list[i]);
    if (b->has_zero)
        b->list[n++] = 0;
    bloom_build_k(b->list, n, WFILTER_BITS_PER_WORD, WFILTER_PROBES, out);
    if (!b->v1)
        buf_putc(out, (char)WFILTER_HASH2);
    return true;
}

/* The bloom filter of filter, and whether it holds words_hash2 values. */
static struct slice bloom_of(struct slice filter, bool *v2)
{
    *v2 = filter.len && (unsigned char)filter.ptr[filter.len - 1] == WFILTER_HASH2;
    return *v2 ? slice_make(filter.ptr, filter.len - 1) : filter;
}

bool wfilter_ok(struct slice filter)
{
    bool v2;
    struct slice bloom = bloom_of(filter, &v2);
    if (bloom.len < 9)
        return false;
    unsigned char probes = (unsigned char)bloom.ptr[bloom.len - 1];
    return probes >= 1 && probes <= 30;
}

bool wfilter_may_match(struct slice filter, const struct word_hashes *words, size_t n)
{
    bool v2;
    struct slice bloom = bloom_of(filter, &v2);
    for (size_t i = 0; i < n; i++)
        if (!bloom_may_match(bloom, v2 ? words[i].v2 : words[i].v1))
            return false;
    return true;
}
