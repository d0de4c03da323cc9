/* A borrowed byte view {ptr, len} and its comparisons. Never owns memory. */
#ifndef LB_SLICE_H
#define LB_SLICE_H

#include <stdbool.h>
#include <stddef.h>
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

/* memcmp order; a proper prefix sorts first. */
static inline int slice_cmp(struct slice a, struct slice b)
{
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

static inline bool slice_starts_with(struct slice s, struct slice prefix)
{
    return s.len >= prefix.len && (prefix.len == 0 || memcmp(s.ptr, prefix.ptr, prefix.len) == 0);
}

#endif
