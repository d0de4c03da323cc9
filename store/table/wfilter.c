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
    uint64_t *set = xcalloc(cap, sizeof *set);
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

/* words_hash of each word of text, in one pass over its bytes (words_each
 * with words_hash walks every word twice and calls out for each): the same
 * FNV-1a over ASCII-folded bytes and finaliser as model/words.c, which
 * wfilter_test checks word for word. */
static void add_text(struct wfilter_builder *b, struct slice text)
{
    const unsigned char *p = (const unsigned char *)text.ptr, *end = p + text.len;
    for (;;) {
        while (p < end && !words_is_word_byte(*p))
            p++;
        if (p == end)
            return;
        uint64_t h = 0xcbf29ce484222325ULL;
        for (; p < end && words_is_word_byte(*p); p++) {
            unsigned char c = *p;
            h ^= c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
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
