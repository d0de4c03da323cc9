/* Word filters: the distinct words of a block's log rows, gathered in an
 * open-addressing set as the entries go by (a 32 KiB block of log lines
 * repeats its host, event and most words many times), then written as a
 * bloom filter when the block is finished. */
#include "store/table/wfilter.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "model/key.h"
#include "model/record.h"
#include "model/words.h"
#include "store/ikey.h"
#include "store/table/bloom.h"

#define WFILTER_MIN_SLOTS 1024u

void wfilter_builder_init(struct wfilter_builder *b)
{
    memset(b, 0, sizeof *b);
    b->ok = true;
    buf_init(&b->last);
}

void wfilter_builder_destroy(struct wfilter_builder *b)
{
    free(b->set);
    buf_destroy(&b->last);
}

void wfilter_builder_reset(struct wfilter_builder *b)
{
    if (b->n || b->has_zero)
        memset(b->set, 0, b->cap * sizeof *b->set);
    b->n = 0;
    b->has_zero = false;
    b->ok = true;
    b->entries = 0;
    buf_reset(&b->last);
}

static void set_put(uint64_t *set, size_t cap, uint64_t h)
{
    size_t i = (size_t)h & (cap - 1);
    while (set[i] && set[i] != h)
        i = (i + 1) & (cap - 1);
    set[i] = h;
}

/* Keeps the set at most half full, so that probes stay short and
 * wfilter_finish has a free slot for the zero hash. */
static void set_grow(struct wfilter_builder *b)
{
    size_t cap = b->cap ? 2 * b->cap : WFILTER_MIN_SLOTS;
    uint64_t *set = xcalloc_written(cap, sizeof *set);
    for (size_t i = 0; i < b->cap; i++)
        if (b->set[i])
            set_put(set, cap, b->set[i]);
    free(b->set);
    b->set = set;
    b->cap = cap;
}

static void add_hash(struct wfilter_builder *b, uint64_t h)
{
    if (!h) {
        b->has_zero = true;
        return;
    }
    if (2 * (b->n + 1) > b->cap)
        set_grow(b);
    size_t i = (size_t)h & (b->cap - 1);
    while (b->set[i]) {
        if (b->set[i] == h)
            return;
        i = (i + 1) & (b->cap - 1);
    }
    b->set[i] = h;
    b->n++;
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
 * wfilter_test checks word for word and filter for filter. */
static void add_text(struct wfilter_builder *b, struct slice text)
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
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        h *= 0xc4ceb9fe1a85ec53ULL;
        h ^= h >> 33;
        add_hash(b, h);
    }
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

/* The words of a log row's id; false if the entry is not a log row. */
static bool add_row(struct wfilter_builder *b, struct slice ikey, struct slice value)
{
    if (!ikey_ok(ikey) || ikey_kind(ikey) != IKEY_PUT || value.len)
        return false;
    struct key_row r;
    if (key_decode_row(ikey_user(ikey), false, &r) != ERR_OK || r.id.len == 0)
        return false;
    struct rec_row_reader rr;
    if (rec_row_init(&rr, r.id, slice_make("", 0)) != ERR_OK)
        return false;
    struct rec_tag t;
    struct rec_field f;
    int rc;
    while ((rc = rec_row_next_tag(&rr, &t)) == 1)
        add_text(b, t.value);
    if (rc)
        return false;
    size_t nfields = 0;
    while ((rc = rec_row_next_field(&rr, &f)) == 1) {
        nfields++;
        if (f.type == REC_STRING)
            add_text(b, f.v.s);
    }
    /* an id without fields is a point's series too (a point's id holds
     * only its tags): such a key may have versions with values */
    if (rc || nfields == 0)
        return false;
    add_names(b, r.host, r.event);
    return true;
}

void wfilter_add(struct wfilter_builder *b, struct slice ikey, struct slice value)
{
    b->entries++;
    if (b->ok && !add_row(b, ikey, value))
        b->ok = false;
}

bool wfilter_finish(struct wfilter_builder *b, struct buf *out)
{
    if (!b->ok || b->entries == 0)
        return false;
    /* the distinct hashes to the front of the set, which the next reset
     * clears */
    size_t j = 0;
    for (size_t i = 0; i < b->cap; i++)
        if (b->set[i])
            b->set[j++] = b->set[i];
    if (b->has_zero) {
        if (j == b->cap)
            set_grow(b); /* only when there were no other words at all */
        b->set[j++] = 0;
    }
    for (size_t i = j; i < b->cap; i++)
        b->set[i] = 0;
    bloom_build_k(b->set, j, WFILTER_BITS_PER_WORD, WFILTER_PROBES, out);
    b->n = j; /* the next reset clears the set */
    return true;
}

bool wfilter_ok(struct slice filter)
{
    if (filter.len < 9)
        return false;
    unsigned char probes = (unsigned char)filter.ptr[filter.len - 1];
    return probes >= 1 && probes <= 30;
}

bool wfilter_may_match(struct slice filter, const uint64_t *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!bloom_may_match(filter, words[i]))
            return false;
    return true;
}
