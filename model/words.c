/* Word splitting, hashing and phrase search (words.h). */
#include "model/words.h"

#include <string.h>

static inline unsigned char fold(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/* The word starting at or after *pos in t; false when none is left. */
static bool next_word(struct slice t, size_t *pos, struct slice *w)
{
    const unsigned char *p = (const unsigned char *)t.ptr;
    size_t i = *pos;
    while (i < t.len && !words_is_word_byte(p[i]))
        i++;
    if (i == t.len) {
        *pos = i;
        return false;
    }
    size_t start = i;
    while (i < t.len && words_is_word_byte(p[i]))
        i++;
    *w = slice_make(t.ptr + start, i - start);
    *pos = i;
    return true;
}

void words_each(struct slice text, bool (*fn)(void *arg, struct slice word), void *arg)
{
    size_t pos = 0;
    struct slice w;
    while (next_word(text, &pos, &w))
        if (!fn(arg, w))
            return;
}

uint64_t words_hash(struct slice word)
{
    /* FNV-1a over the folded bytes, then a 64-bit finaliser so that the
     * bloom filter's double hashing gets well spread halves. */
    const unsigned char *p = (const unsigned char *)word.ptr;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < word.len; i++) {
        h ^= fold(p[i]);
        h *= 0x100000001b3ULL;
    }
    return hash_fmix64(h);
}

uint64_t words_hash2(struct slice word)
{
    const unsigned char *p = (const unsigned char *)word.ptr;
    uint64_t h = (uint64_t)word.len * WORDS_HASH2_K;
    for (size_t i = 0; i < word.len; i += 8) {
        uint64_t c = 0;
        for (size_t j = 0; j < 8 && i + j < word.len; j++)
            c |= (uint64_t)fold(p[i + j]) << (8 * j);
        h = (h ^ c) * WORDS_HASH2_K;
        h ^= h >> 29;
    }
    return hash_fmix64(h);
}

struct word_hashes words_hashes(struct slice word)
{
    return (struct word_hashes){words_hash(word), words_hash2(word)};
}

static bool word_eq(struct slice a, struct slice b)
{
    if (a.len != b.len)
        return false;
    const unsigned char *x = (const unsigned char *)a.ptr, *y = (const unsigned char *)b.ptr;
    for (size_t i = 0; i < a.len; i++)
        if (fold(x[i]) != fold(y[i]))
            return false;
    return true;
}

/* Whether the words of phrase follow one another in text from *pos on. */
static bool phrase_at(struct slice text, size_t pos, struct slice phrase)
{
    size_t tp = pos, pp = 0;
    struct slice tw, pw;
    while (next_word(phrase, &pp, &pw)) {
        if (!next_word(text, &tp, &tw) || !word_eq(tw, pw))
            return false;
    }
    return true;
}

/* The next position >= from of byte a or b in t (t.len if none): the
 * candidates for the first byte of a word, in either case. */
static size_t next_either(struct slice t, size_t from, unsigned char a, unsigned char b)
{
    const char *p = memchr(t.ptr + from, a, t.len - from);
    size_t end = p ? (size_t)(p - t.ptr) : t.len;
    if (b != a) {
        const char *q = memchr(t.ptr + from, b, end - from);
        if (q)
            end = (size_t)(q - t.ptr);
    }
    return end;
}

bool words_find(struct slice text, struct slice phrase)
{
    size_t pp = 0;
    struct slice first;
    if (!next_word(phrase, &pp, &first))
        return true;
    const unsigned char *s = (const unsigned char *)text.ptr;
    unsigned char lo = fold((unsigned char)first.ptr[0]);
    unsigned char up = lo >= 'a' && lo <= 'z' ? (unsigned char)(lo - 32) : lo;
    /* memchr finds the candidates; each is checked as a whole word */
    for (size_t i = 0; i + first.len <= text.len; i++) {
        i = next_either(text, i, lo, up);
        if (i + first.len > text.len)
            return false;
        if (i > 0 && words_is_word_byte(s[i - 1]))
            continue;
        size_t end = i + first.len;
        if (end < text.len && words_is_word_byte(s[end]))
            continue;
        if (word_eq(slice_make(text.ptr + i, first.len), first) && phrase_at(text, i, phrase))
            return true;
    }
    return false;
}
