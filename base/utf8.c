/* UTF-8: the one decoder of the daemon (ingest checks names and repairs
 * lines with it, JSON encoding escapes what it rejects). */
#include "base/utf8.h"

#include <stdint.h>
#include <string.h>

/* Length of the well-formed UTF-8 sequence at s[0..n) (n > 0), or 0 if s[0]
 * does not start one. */
size_t utf8_seq_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned min;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
        min = 0x10000;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t k = 1; k < len; k++) {
        unsigned cc = s[k];
        if ((cc & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (cc & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

#define HIGH_BITS 0x8080808080808080ULL

/* Bytes from i on that are ASCII, skipped 16 at a time, then 8; the last
 * 1-7 bytes of a text of 8 or more by the 8 that end it. */
static size_t skip_ascii(const unsigned char *s, size_t i, size_t n)
{
    uint64_t w, v;
    while (i + 16 <= n) {
        memcpy(&w, s + i, 8);
        memcpy(&v, s + i + 8, 8);
        if ((w | v) & HIGH_BITS)
            break;
        i += 16;
    }
    while (i + 8 <= n) {
        memcpy(&w, s + i, 8);
        if (w & HIGH_BITS)
            break;
        i += 8;
    }
    if (i < n && i + 8 > n && n >= 8) { /* s[i..n) is within the last 8 */
        memcpy(&w, s + n - 8, 8);
        if (!(w & HIGH_BITS))
            return n;
    }
    while (i < n && s[i] < 0x80)
        i++;
    return i;
}

bool utf8_valid(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    for (size_t i = skip_ascii(s, 0, n); i < n; i = skip_ascii(s, i, n)) {
        size_t len = utf8_seq_len(s + i, n - i);
        if (!len)
            return false;
        i += len;
    }
    return true;
}

void utf8_repair(const char *str, size_t n, struct buf *out)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        size_t j = skip_ascii(s, i, n), len;
        while (j < n && (len = utf8_seq_len(s + j, n - j)) != 0)
            j = skip_ascii(s, j + len, n);
        buf_append(out, str + i, j - i);
        if (j < n) {
            buf_append(out, "\xef\xbf\xbd", 3);
            j++;
        }
        i = j;
    }
}

size_t utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

int utf8_hex4(const char *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}
