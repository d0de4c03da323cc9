/* A small JSON reader over one whole line, for the hot path of the
 * Elasticsearch bulk API (jansson builds a tree per document: ten times the
 * cost). It reads in place: a string without escapes is a slice of the
 * line; one with escapes is unescaped into scratch, which jscan_init
 * reserves to the line's length so that slices never move. Strict RFC 8259:
 * no comments, no trailing commas, no control characters or invalid UTF-8
 * in strings, \u0000 refused (as jansson does), integers within int64.
 *
 * Threading: one scanner per call; no shared state. */
#ifndef LB_JSCAN_H
#define LB_JSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"

#define JSCAN_MAX_DEPTH 64

struct jscan {
    const char *p, *end;
    char *sp;           /* next free byte of the scratch */
    const char *err;    /* first error (static text), or NULL */
    const char *err_at; /* where it was found */
};

enum jscan_type { JS_STRING, JS_INT, JS_FLOAT, JS_TRUE, JS_FALSE, JS_NULL, JS_OBJECT, JS_ARRAY };

/* Starts scanning line[0..len); scratch is reset and reserved. */
void jscan_init(struct jscan *s, const char *line, size_t len, struct buf *scratch);
/* Skips blanks; returns the next byte or 0 at the end. Inline: called
 * before every token. */
static inline char jscan_peek(struct jscan *s)
{
    if (__builtin_expect(s->p < s->end && (unsigned char)*s->p > ' ', 1))
        return *s->p; /* most JSON has no blank before a token */
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n'))
        s->p++;
    return s->p < s->end ? *s->p : 0;
}
/* jscan_expect's failure: the error for c missing. */
bool jscan_expect_fail(struct jscan *s, char c);
/* Consumes c (after blanks) or fails. Inline: called before every key's
 * ':' and most values. */
static inline bool jscan_expect(struct jscan *s, char c)
{
    if (jscan_peek(s) != c) /* 0 at the end: c is never 0 */
        return jscan_expect_fail(s, c);
    s->p++;
    return true;
}
/* jscan_string's full reading (escapes, bytes >= 0x80, long strings,
 * errors). */
bool jscan_string_full(struct jscan *s, struct slice *out);
/* The first byte at or after q (before end) that is '"', '\\', below 0x20
 * or 0x80 and above, 16 bytes at a time (SSE2: every x86-64 has it); end if
 * none. The plain run of a JSON string (jscan_string). */
const char *jscan_skip_plain(const char *q, const char *end);

#ifdef __SSE2__
#include <emmintrin.h>
/* The bits of the 16 bytes at q that end a plain run (jscan_skip_plain's
 * test; ingest/jtape.c's unbounded scan too). */
static inline unsigned jscan_stops16(const char *q)
{
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)q);
    /* signed: 0x00-0x1f and 0x80-0xff are below 0x20 */
    __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash));
    hit = _mm_or_si128(hit, _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)));
    return (unsigned)_mm_movemask_epi8(hit);
}
#endif
/* A string (the opening quote next): its bytes in *out. Inline for a
 * plain string that ends within the 16 bytes after its quote (keys and
 * short values, most of a document's strings). */
static inline bool jscan_string(struct jscan *s, struct slice *out)
{
#ifdef __SSE2__
    if (jscan_peek(s) == '"' && s->end - s->p > 16) {
        const char *q = s->p + 1;
        unsigned m = jscan_stops16(q);
        if (m && q[__builtin_ctz(m)] == '"') {
            *out = slice_make(q, (size_t)__builtin_ctz(m));
            s->p = q + __builtin_ctz(m) + 1;
            return true;
        }
    }
#endif
    return jscan_string_full(s, out);
}
/* The type of the next value (after blanks), without consuming it; false
 * at the end or on a byte that begins no value. */
bool jscan_type(struct jscan *s, enum jscan_type *t);
/* A number: JS_INT (in *i) or JS_FLOAT (in *f). */
bool jscan_number(struct jscan *s, enum jscan_type *t, int64_t *i, double *f);
/* A literal true, false or null. */
bool jscan_literal(struct jscan *s, const char *word);
/* Skips any value, checking it; depth is the current nesting. */
bool jscan_skip(struct jscan *s, int depth);
/* Nothing but blanks is left. */
bool jscan_at_end(struct jscan *s);
/* Sets the error (if none yet) and returns false. */
bool jscan_fail(struct jscan *s, const char *why);

#endif
