/* JSON strings: every byte that must be escaped is, and every byte that
 * does not begin a well-formed UTF-8 sequence becomes U+FFFD, so the output
 * is valid JSON whatever bytes came in. Plain strings (the common case) are
 * recognised 8 bytes at a time and copied whole. */
#include "base/json.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/utf8.h"

static void put_escape(struct buf *out, unsigned char c)
{
    switch (c) {
    case '"': buf_append(out, "\\\"", 2); break;
    case '\\': buf_append(out, "\\\\", 2); break;
    case '\n': buf_append(out, "\\n", 2); break;
    case '\r': buf_append(out, "\\r", 2); break;
    case '\t': buf_append(out, "\\t", 2); break;
    case '\b': buf_append(out, "\\b", 2); break;
    case '\f': buf_append(out, "\\f", 2); break;
    default: buf_printf(out, "\\u%04x", c); break;
    }
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Whether any of the 8 bytes needs care: < 0x20, >= 0x80, '"' or '\\'. */
static inline bool word_special(uint64_t w)
{
    uint64_t q = w ^ (ONES * '"'), b = w ^ (ONES * '\\');
    uint64_t lt20 = (w - ONES * 0x20) & ~w;
    uint64_t zq = (q - ONES) & ~q, zb = (b - ONES) & ~b;
    return ((lt20 | zq | zb | w) & HIGHS) != 0;
}

/* Whether every byte of s can be copied as is. Strings of 8 bytes or more
 * are read in words, the last one overlapping its predecessor. */
static bool is_plain(const unsigned char *p, size_t n)
{
    uint64_t w;
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&w, p + i, 8);
            if (word_special(w))
                return false;
        }
        memcpy(&w, p + n - 8, 8);
        return !word_special(w);
    }
    w = ONES * ' '; /* padding that needs no escape */
    for (size_t j = n; j-- > 0;)
        w = w << 8 | p[j];
    return !word_special(w);
}

/* json_escape of a string with something to escape or repair. */
static void escape_slow(struct buf *out, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t run = 0; /* start of the pending run of plain bytes */
    size_t i = 0;
    while (i < n) {
        uint64_t w;
        if (i + 8 <= n && (memcpy(&w, p + i, 8), !word_special(w))) {
            i += 8;
            continue;
        }
        unsigned char c = p[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        size_t len = c >= 0x80 ? utf8_seq_len(p + i, n - i) : 1;
        if (len > 1) {
            i += len;
            continue;
        }
        buf_append(out, s + run, i - run);
        if (len == 0)
            buf_append(out, "\\ufffd", 6);
        else
            put_escape(out, c);
        run = ++i;
    }
    buf_append(out, s + run, n - run);
}

void json_escape(struct buf *out, const char *s, size_t n)
{
    if (is_plain((const unsigned char *)s, n))
        buf_append(out, s, n);
    else
        escape_slow(out, s, n);
}

void json_str(struct buf *out, const char *s, size_t n)
{
    if (!is_plain((const unsigned char *)s, n)) {
        buf_putc(out, '"');
        escape_slow(out, s, n);
        buf_putc(out, '"');
        return;
    }
    buf_reserve(out, n + 2);
    char *d = out->data + out->len;
    d[0] = '"';
    memcpy(d + 1, s, n);
    d[n + 1] = '"';
    out->len += n + 2;
}
