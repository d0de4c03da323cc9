/* Word filters of data blocks (FORMAT.md, "Word filters"): a bloom filter,
 * bloom.h's layout, of the words (model/words.h: words_hash2, or words_hash
 * in filters written before 2026-11-28, which have no marker byte) of the host,
 * event, tag values and string field values of a block's rows, so that a
 * word search passes over a block that cannot hold a match without reading
 * or decoding it. Only a block whose every entry is a log row (a put with
 * an empty value whose id holds at least one field) gets one: every other
 * version of such a key has the same words, so leaving the block out can
 * only hide rows that do not match. A builder is used by one thread; a
 * filter is read-only bytes. */
#ifndef LB_WFILTER_H
#define LB_WFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"
#include "model/words.h"

#define WFILTER_BITS_PER_WORD 10
#define WFILTER_PROBES 7
/* The last byte of a filter of words_hash2 values, after the bloom
 * filter's own probe count (1..30, the last byte of older filters). */
#define WFILTER_HASH2 0x82

/* The distinct words of the entries added since the last reset, as the
 * word hash before its finaliser (hash_fmix64, a bijection that maps 0 to
 * 0): the finaliser is applied once per distinct word, when the filter is
 * written, not to every word of every row. */
struct wfilter_builder {
    uint64_t *set;   /* open addressing; 0 marks an empty slot */
    size_t cap, n;   /* slots (a power of two, or 0), distinct non-zero hashes */
    uint64_t *list;  /* the n hashes of the set, in the order they came */
    bool has_zero;   /* a word's hash was 0 */
    bool ok;         /* every entry so far is a log row */
    size_t entries;  /* added since the reset */
    struct buf last; /* host 0x00 event of the last entry (its words are in) */
    bool v1;         /* this block's filter holds words_hash values (tests) */
    struct buf text; /* scratch: a value folded, padded with zeros */
    struct buf bits; /* scratch: which of its bytes are word bytes */
};

void wfilter_builder_init(struct wfilter_builder *b);
void wfilter_builder_destroy(struct wfilter_builder *b);
/* Starts the next block. */
void wfilter_builder_reset(struct wfilter_builder *b);
/* Notes an entry of the block (an internal key and its value, borrowed):
 * its words, or that the block gets no filter. */
void wfilter_add(struct wfilter_builder *b, struct slice ikey, struct slice value);
/* True, with the filter of the block's words appended to out, if the
 * block has entries and every one of them is a log row; false (out
 * unchanged) if the block gets no filter. */
bool wfilter_finish(struct wfilter_builder *b, struct buf *out);

/* Whether filter is well formed: at least 8 bytes of bits and a probe
 * count of 1..30, then WFILTER_HASH2 or nothing. A filter read from disk
 * that is not is damaged. */
bool wfilter_ok(struct slice filter);
/* False only if a row having every one of the n words is certainly not in
 * the filter's block (each word's hash of the filter's kind is looked up).
 * REQUIRES: wfilter_ok(filter). */
bool wfilter_may_match(struct slice filter, const struct word_hashes *words, size_t n);

/* Test hook: builders write filters of words_hash (as before 2026-11-28)
 * while set; not thread-safe with running builders. */
void wfilter_test_write_v1(bool v1);

#endif
