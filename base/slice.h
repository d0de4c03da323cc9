/* A borrowed byte view {ptr, len} and its comparisons. Never owns memory. */
#ifndef LB_SLICE_H
#define LB_SLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct slice {
    const char *ptr;
    size_t len;
};

static inline struct slice slice_make(const void *p, size_t n)
{
    struct slice s = {(const char *)p, n};
    return s;
}

static inline struct slice slice_cstr(const char *s)
{
    return slice_make(s, s ? strlen(s) : 0);
}

/* memcmp order; a proper prefix sorts first. Keys that differ in their
 * first 8 bytes (a bucket and a time stamp's high bytes: most keys a scan
 * compares) are ordered by one big-endian word each, without a memcmp
 * call. */
static inline int slice_cmp(struct slice a, struct slice b)
{
    if (a.len >= 8 && b.len >= 8) {
        uint64_t x, y;
        memcpy(&x, a.ptr, 8);
        memcpy(&y, b.ptr, 8);
        if (x != y) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            x = __builtin_bswap64(x);
            y = __builtin_bswap64(y);
#endif
            return x < y ? -1 : 1;
        }
    }
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;
    if (c)
        return c;
    return (a.len > b.len) - (a.len < b.len);
}

static inline bool slice_eq(struct slice a, struct slice b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* Whether the n bytes at a and b are equal, for the few bytes of a name or
 * a key's prefix compared at every row: word by word, without a call. */
static inline bool mem_eq_short(const char *a, const char *b, size_t n)
{
    uint64_t x, y;
    if (n >= 8) { /* whole words, the last one overlapping the one before */
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            if (x != y)
                return false;
        }
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    if (n >= 4) { /* two halves, overlapping */
        uint32_t u, v, w, z;
        memcpy(&u, a, 4);
        memcpy(&v, b, 4);
        memcpy(&w, a + n - 4, 4);
        memcpy(&z, b + n - 4, 4);
        return u == v && w == z;
    }
    for (; n; n--)
        if (*a++ != *b++)
            return false;
    return true;
}

static inline bool slice_starts_with(struct slice s, struct slice prefix)
{
    return s.len >= prefix.len && (prefix.len == 0 || memcmp(s.ptr, prefix.ptr, prefix.len) == 0);
}

/* Whether s is one of the n slices of v, sorted by slice_cmp (a bisection). */
static inline bool slices_has(const struct slice *v, size_t n, struct slice s)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = slice_cmp(v[mid], s);
        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

#endif
