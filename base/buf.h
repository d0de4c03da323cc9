/* A growable byte buffer. Bottom layer, libc only. Allocation failure aborts
 * (xmalloc style, as in Redis): sizes a client controls are capped by the
 * callers before they reach a buffer. */
#ifndef LB_BUF_H
#define LB_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct buf {
    char *data; /* owned; NUL-terminated when len < cap (buf_cstr makes sure) */
    size_t len;
    size_t cap;
};

/* clang-format off */ /* (it would spread the braces over four lines) */
#define BUF_INIT {NULL, 0, 0}
/* clang-format on */

void buf_init(struct buf *b);
void buf_destroy(struct buf *b); /* frees data; b may be reused after buf_init */
void buf_reset(struct buf *b);   /* len = 0, keeps the memory */
/* Grows b to hold need bytes (rounded up to a power of two). */
void buf_grow(struct buf *b, size_t need);

/* room for extra more bytes; inline, since it runs for every small append
 * of the ingest and scan paths */
static inline void buf_reserve(struct buf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (__builtin_expect(need > b->cap, 0))
        buf_grow(b, need);
}
/* The same without rounding up: for a buffer filled once to a known size
 * (a decoded block held by the cache), so no capacity is left unused. */
void buf_reserve_exact(struct buf *b, size_t extra);
static inline void buf_append(struct buf *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    buf_reserve(b, n);
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static inline void buf_putc(struct buf *b, char c)
{
    buf_reserve(b, 1);
    b->data[b->len++] = c;
}
void buf_puts(struct buf *b, const char *s);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
const char *buf_cstr(struct buf *b);         /* NUL-terminates and returns data ("" if empty) */
char *buf_steal(struct buf *b, size_t *len); /* hands data to the caller; b is left empty */

/* A thread's spare buffer: memory a request of megabytes (a push body) can
 * take over from the one before it on the same thread, instead of having
 * fresh pages faulted in and handed back each time. buf_thread_take makes
 * b (not initialised) the thread's spare, empty, or a new empty buffer if
 * the thread has none; buf_thread_give keeps b's memory as the spare (the
 * larger of the two when it has one) unless it is over BUF_SPARE_MAX, and
 * leaves b empty. The spare is freed when the thread ends. */
void buf_thread_take(struct buf *b);
void buf_thread_give(struct buf *b);
#define BUF_SPARE_MAX (32u << 20)

/* Allocation helpers that abort on failure. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
/* Zeroed like xcalloc, with every page written now: for hash tables that
 * are probed (read) before they are written. calloc may hand out fresh
 * pages untouched; a read then maps the shared zero page, and the first
 * write copies it and flushes the TLB of every CPU running one of the
 * process's threads (an interrupt each): two faults and a broadcast a page
 * instead of one fault. */
void *xcalloc_written(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

#endif
