/* Growable byte buffer and aborting allocators. */
#include "base/buf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread_keep.h"

static void oom(size_t n)
{
    fprintf(stderr, "logbucket: out of memory allocating %zu bytes\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *xcalloc_written(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        oom(SIZE_MAX);
    size_t bytes = (n ? n : 1) * (size ? size : 1);
    void *p = xmalloc(bytes);
    memset(p, 0, bytes);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void buf_init(struct buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void buf_destroy(struct buf *b)
{
    free(b->data);
    buf_init(b);
}

void buf_reset(struct buf *b)
{
    b->len = 0;
}

void buf_grow(struct buf *b, size_t need)
{
    if (need <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    b->data = xrealloc(b->data, cap);
    b->cap = cap;
}

void buf_reserve_exact(struct buf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return;
    b->data = xrealloc(b->data, need);
    b->cap = need;
}

void buf_puts(struct buf *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    buf_reserve(b, 64);
    int n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    if (n >= 0 && (size_t)n >= b->cap - b->len) {
        buf_reserve(b, (size_t)n);
        n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, copy);
    }
    va_end(copy);
    if (n > 0)
        b->len += (size_t)n;
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *buf_cstr(struct buf *b)
{
    buf_reserve(b, 0);
    b->data[b->len] = '\0';
    return b->data;
}

char *buf_steal(struct buf *b, size_t *len)
{
    buf_cstr(b);
    char *p = b->data;
    if (len)
        *len = b->len;
    buf_init(b);
    return p;
}

/* --- a thread's spare buffer --- */

static void spare_destroy(void *p)
{
    buf_destroy(p);
}

static struct thread_keep spare_keep = THREAD_KEEP(sizeof(struct buf), spare_destroy);

static struct buf *spare_of_thread(void)
{
    return thread_keep_get(&spare_keep); /* zeroed: an empty buffer */
}

void buf_thread_take(struct buf *b)
{
    struct buf *s = spare_of_thread();
    *b = *s;
    buf_reset(b);
    buf_init(s);
}

void buf_thread_give(struct buf *b)
{
    struct buf *s = spare_of_thread();
    if (b->cap > BUF_SPARE_MAX || b->cap <= s->cap) {
        buf_destroy(b);
        return;
    }
    buf_destroy(s);
    *s = *b;
    buf_init(b);
}
