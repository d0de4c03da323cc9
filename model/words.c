/* Word splitting, hashing and phrase search (words.h). */
#include "model/words.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/buf.h"

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

/* Whether the n bytes at p equal the folded bytes x, ASCII case folded. */
static bool eq_folded(const unsigned char *p, const unsigned char *x, size_t n)
{
    for (size_t j = 0; j < n; j++)
        if (fold(p[j]) != x[j])
            return false;
    return true;
}

/* The first position >= from where text holds the n folded bytes x, ASCII
 * case-insensitively; SIZE_MAX if none. The candidates, positions whose
 * first and last bytes match, are found 16 at a time with SSE2: a byte
 * compared with a lower-case letter has bit 5 set first, so that its upper
 * case matches too; any other byte is compared as it is. */
static size_t find_folded(struct slice text, size_t from, const unsigned char *x, size_t n)
{
    if (text.len < n || from > text.len - n)
        return SIZE_MAX;
    if (n == 0)
        return from;
    const unsigned char *s = (const unsigned char *)text.ptr;
    size_t last = text.len - n, i = from; /* last: the last possible start */
    unsigned char a = x[0], b = x[n - 1];
    unsigned char am = a >= 'a' && a <= 'z' ? 0x20 : 0, bm = b >= 'a' && b <= 'z' ? 0x20 : 0;
#ifdef __SSE2__
    const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b);
    const __m128i ma = _mm_set1_epi8((char)am), mb = _mm_set1_epi8((char)bm);
    for (; last - i >= 15 && i <= last; i += 16) { /* starts i..i+15, all <= last */
        __m128i xa = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i xb = _mm_loadu_si128((const __m128i *)(const void *)(s + i + n - 1));
        __m128i hit = _mm_and_si128(_mm_cmpeq_epi8(_mm_or_si128(xa, ma), va),
                                    _mm_cmpeq_epi8(_mm_or_si128(xb, mb), vb));
        unsigned m = (unsigned)_mm_movemask_epi8(hit);
        while (m) {
            unsigned k = (unsigned)__builtin_ctz(m);
            m &= m - 1;
            if (eq_folded(s + i + k, x, n))
                return i + k;
        }
    }
#endif
    for (; i <= last; i++)
        if ((s[i] | am) == a && (s[i + n - 1] | bm) == b && eq_folded(s + i, x, n))
            return i;
    return SIZE_MAX;
}

bool words_contains_folded(struct slice text, struct slice word)
{
    return find_folded(text, 0, (const unsigned char *)word.ptr, word.len) != SIZE_MAX;
}

bool words_find(struct slice text, struct slice phrase)
{
    size_t pp = 0;
    struct slice first;
    if (!next_word(phrase, &pp, &first))
        return true;
    const unsigned char *s = (const unsigned char *)text.ptr;
    unsigned char small[64], *x = first.len <= sizeof small ? small : xmalloc(first.len);
    for (size_t j = 0; j < first.len; j++)
        x[j] = fold((unsigned char)first.ptr[j]);
    /* each occurrence of the first word's bytes is checked as a whole word */
    bool found = false;
    for (size_t i = 0; !found; i++) {
        i = find_folded(text, i, x, first.len);
        if (i == SIZE_MAX)
            break;
        size_t end = i + first.len;
        found = (i == 0 || !words_is_word_byte(s[i - 1])) &&
                (end == text.len || !words_is_word_byte(s[end])) && phrase_at(text, i, phrase);
    }
    if (x != small)
        free(x);
    return found;
}
