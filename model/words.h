/* Words, as log search sees them. A word is a maximal run of word bytes:
 * ASCII letters and digits, '_', and every byte >= 0x80 (so a UTF-8
 * letter is never split). Words compare case-insensitively in ASCII: "Error",
 * "ERROR" and "error" are one word; "timeout" is not a word of "timeouts".
 *
 * The store keeps a filter of the words of each block's string values
 * (words_hash of each); query/ checks the words a search needs against it,
 * then matches rows with words_find. Both must split text the same way,
 * which is why this lives here. */
#ifndef LB_WORDS_H
#define LB_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "base/slice.h"

static inline bool words_is_word_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c >= 0x80;
}

/* The words of text in order: fn(arg, word) for each (the word's bytes as
 * they are in text, not folded); stops early when fn returns false. */
void words_each(struct slice text, bool (*fn)(void *arg, struct slice word), void *arg);

/* A 64-bit hash of a word, ASCII case folded: words_hash("Error") ==
 * words_hash("error"). Stable across releases (it is stored in files):
 * FNV-1a over the folded bytes, then a finaliser; the word filters of
 * files written before 2026-11-28. */
uint64_t words_hash(struct slice word);

/* The hash of the word filters written since (store/FORMAT.md): the folded
 * word in 8-byte little-endian chunks, the last one zero-padded, each
 * mixed in with one multiply, so that a writer hashes a word a chunk at a
 * time rather than a byte at a time. Stable across releases:
 *   h = len * K;  for each chunk c: h = (h ^ c) * K, h ^= h >> 29;
 *   then hash_fmix64 (base/hash.h), as words_hash ends (K = 0x9e3779b97f4a7c15). */
uint64_t words_hash2(struct slice word);

#define WORDS_HASH2_K 0x9e3779b97f4a7c15ULL

/* A word as both kinds of word filter see it. */
struct word_hashes {
    uint64_t v1, v2; /* words_hash, words_hash2 */
};

struct word_hashes words_hashes(struct slice word);

/* True if the words of phrase (one or more) occur in text as consecutive
 * words, case-insensitively: "connection reset" is found in
 * "ERROR: Connection  reset by peer" but not in "connection was reset" nor
 * in "connections reset". A phrase without words is found in every text. */
bool words_find(struct slice text, struct slice phrase);

/* Whether text holds word's bytes anywhere (inside a longer word too),
 * ASCII case-insensitively; word is given folded (no 'A'..'Z'). A row
 * whose bytes do not hold a word cannot have it in any of its strings:
 * the query executor tests this before decoding a row. */
bool words_contains_folded(struct slice text, struct slice word);

/* The first position >= from where text holds word's bytes as
 * words_contains_folded finds them; SIZE_MAX if none. */
size_t words_find_folded(struct slice text, size_t from, struct slice word);

#endif
