/* Word splitting, hashing and phrase search (words.h). */
#include "model/words.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#elif defined(__SSE2__)
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
static inline bool eq_folded(const unsigned char *p, const unsigned char *x, size_t n)
{
    for (size_t j = 0; j < n; j++)
        if (fold(p[j]) != x[j])
            return false;
    return true;
}

/* A search for n folded bytes x: its first and last bytes, and for each
 * the bit that makes an upper-case letter match its lower case (0x20 when
 * the byte is a lower-case letter, so that a byte or'ed with it compares
 * equal to the folded one; 0 for any other byte). */
struct needle {
    const unsigned char *x;
    size_t n;
    unsigned char a, b, am, bm;
};

/* The search's parts are inlined into one function per instruction set
 * (find_avx2, find_sse2), so that a short text costs one call. */
#define INLINE static inline __attribute__((always_inline))

/* The first start in base + the set bits of m (candidates, in order) where
 * the whole needle matches; SIZE_MAX if none. */
INLINE size_t first_verified(const unsigned char *s, size_t base, uint32_t m,
                             const struct needle *nd)
{
    while (m) {
        unsigned k = (unsigned)__builtin_ctz(m);
        m &= m - 1;
        if (eq_folded(s + base + k, nd->x, nd->n))
            return base + k;
    }
    return SIZE_MAX;
}

/* The first match among starts i..last, a byte at a time. */
INLINE size_t find_bytes(const unsigned char *s, size_t i, size_t last, const struct needle *nd)
{
    for (; i <= last; i++)
        if ((s[i] | nd->am) == nd->a && (s[i + nd->n - 1] | nd->bm) == nd->b &&
            eq_folded(s + i, nd->x, nd->n))
            return i;
    return SIZE_MAX;
}

/* Looks at the starts *i..last, w at a time (cand gives w candidates), the
 * last w overlapping the ones before so that no start is left for a
 * narrower pass. true when the search is over (*found set, SIZE_MAX if no
 * match); false when fewer than w starts exist in all of text (nothing
 * looked at). */
INLINE bool scan_wide(const unsigned char *s, size_t i, size_t last, const struct needle *nd,
                      unsigned w,
                      uint32_t (*cand)(const unsigned char *, size_t, const struct needle *),
                      size_t *found)
{
    if (last < w - 1)
        return false;
    for (; i <= last && last - i >= w - 1; i += w)
        if ((*found = first_verified(s, i, cand(s, i, nd), nd)) != SIZE_MAX)
            return true;
    *found = SIZE_MAX;
    if (i <= last) { /* the last w starts; those before i were looked at */
        size_t k = last - (w - 1);
        *found = first_verified(s, k, cand(s, k, nd) & (~0u << (i - k)), nd);
    }
    return true;
}

#ifdef __SSE2__
/* The candidates among starts j..j+15: first and last bytes match. */
INLINE uint32_t cand16(const unsigned char *s, size_t j, const struct needle *nd)
{
    __m128i xa = _mm_loadu_si128((const __m128i *)(const void *)(s + j));
    __m128i xb = _mm_loadu_si128((const __m128i *)(const void *)(s + j + nd->n - 1));
    __m128i hit = _mm_and_si128(_mm_cmpeq_epi8(_mm_or_si128(xa, _mm_set1_epi8((char)nd->am)),
                                               _mm_set1_epi8((char)nd->a)),
                                _mm_cmpeq_epi8(_mm_or_si128(xb, _mm_set1_epi8((char)nd->bm)),
                                               _mm_set1_epi8((char)nd->b)));
    return (uint32_t)_mm_movemask_epi8(hit);
}

static size_t find_sse2(const unsigned char *s, size_t i, size_t last, const struct needle *nd)
{
    size_t found;
    if (scan_wide(s, i, last, nd, 16, cand16, &found))
        return found;
    return find_bytes(s, i, last, nd);
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_AVX2 1

/* The same for starts j..j+31, where the CPU has AVX2. */
__attribute__((target("avx2"))) INLINE uint32_t cand32(const unsigned char *s, size_t j,
                                                       const struct needle *nd)
{
    __m256i xa = _mm256_loadu_si256((const __m256i *)(const void *)(s + j));
    __m256i xb = _mm256_loadu_si256((const __m256i *)(const void *)(s + j + nd->n - 1));
    __m256i hit =
        _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_or_si256(xa, _mm256_set1_epi8((char)nd->am)),
                                           _mm256_set1_epi8((char)nd->a)),
                         _mm256_cmpeq_epi8(_mm256_or_si256(xb, _mm256_set1_epi8((char)nd->bm)),
                                           _mm256_set1_epi8((char)nd->b)));
    return (uint32_t)_mm256_movemask_epi8(hit);
}

__attribute__((target("avx2"))) static size_t find_avx2(const unsigned char *s, size_t i,
                                                        size_t last, const struct needle *nd)
{
    size_t found;
    if (scan_wide(s, i, last, nd, 32, cand32, &found) ||
        scan_wide(s, i, last, nd, 16, cand16, &found))
        return found;
    return find_bytes(s, i, last, nd);
}
#endif

/* The first position >= from where text holds the n folded bytes x, ASCII
 * case-insensitively; SIZE_MAX if none. The candidates, positions whose
 * first and last bytes match, are found 32 (AVX2) or 16 (SSE2) at a time:
 * a byte compared with a lower-case letter has bit 5 set first, so that
 * its upper case matches too; any other byte is compared as it is. */
static size_t find_folded(struct slice text, size_t from, const unsigned char *x, size_t n)
{
    if (text.len < n || from > text.len - n)
        return SIZE_MAX;
    if (n == 0)
        return from;
    const unsigned char *s = (const unsigned char *)text.ptr;
    size_t last = text.len - n; /* the last possible start */
    struct needle nd = {x, n, x[0], x[n - 1], 0, 0};
    nd.am = nd.a >= 'a' && nd.a <= 'z' ? 0x20 : 0;
    nd.bm = nd.b >= 'a' && nd.b <= 'z' ? 0x20 : 0;
#ifdef HAVE_AVX2
    if (__builtin_cpu_supports("avx2"))
        return find_avx2(s, from, last, &nd);
#endif
#ifdef __SSE2__
    return find_sse2(s, from, last, &nd);
#else
    return find_bytes(s, from, last, &nd);
#endif
}

size_t words_find_folded(struct slice text, size_t from, struct slice word)
{
    return find_folded(text, from, (const unsigned char *)word.ptr, word.len);
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
