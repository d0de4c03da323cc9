/* Loki label strings ({a="b", ...}) and snappy bodies. */
#include <snappy-c.h>
#include <stdint.h>
#include <string.h>

#include "base/err.h"
#include "base/utf8.h"
#include "ingest/logs.h"

static void put_len(struct buf *out, size_t n)
{
    uint32_t v = (uint32_t)n;
    buf_append(out, &v, sizeof v);
}

static int digit_val(char c, int base)
{
    int v = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : 99;
    return v < base ? v : -1;
}

/* Reads n digits of base at s[*i..len) into *cp. */
static bool read_digits(const char *s, size_t len, size_t *i, int n, int base, uint32_t *cp)
{
    uint32_t v = 0;
    for (int k = 0; k < n; k++, (*i)++) {
        int d = *i < len ? digit_val(s[*i], base) : -1;
        if (d < 0)
            return false;
        v = v * (uint32_t)base + (uint32_t)d;
    }
    *cp = v;
    return true;
}

static const char *escape(const char *s, size_t len, size_t *i, struct buf *out)
{
    static const char simple_in[] = "abfnrtv\\\"'";
    static const char simple_out[] = "\a\b\f\n\r\t\v\\\"'";
    if (*i >= len)
        return "label value ends in a backslash";
    char c = s[(*i)++];
    const char *hit = strchr(simple_in, c);
    if (hit && c) {
        buf_putc(out, simple_out[hit - simple_in]);
        return NULL;
    }
    uint32_t cp;
    if (c == 'x') {
        if (!read_digits(s, len, i, 2, 16, &cp))
            return "bad \\x escape in a label value";
        buf_putc(out, (char)cp);
        return NULL;
    }
    if (c >= '0' && c <= '7') {
        (*i)--;
        if (!read_digits(s, len, i, 3, 8, &cp) || cp > 255)
            return "bad octal escape in a label value";
        buf_putc(out, (char)cp);
        return NULL;
    }
    if (c == 'u' || c == 'U') {
        if (!read_digits(s, len, i, c == 'u' ? 4 : 8, 16, &cp) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp < 0xe000))
            return "bad unicode escape in a label value";
        char u[4];
        buf_append(out, u, utf8_encode(cp, u));
        return NULL;
    }
    return "unknown escape in a label value";
}

static void skip_space(const char *s, size_t len, size_t *i)
{
    while (*i < len && (s[*i] == ' ' || s[*i] == '\t' || s[*i] == '\n' || s[*i] == '\r'))
        (*i)++;
}

static bool is_name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
}

/* A quoted value at s[*i] (the opening quote), unescaped into out with its
 * length in front. Backquoted raw strings are taken as they are. */
static const char *value(const char *s, size_t len, size_t *i, struct buf *out)
{
    char q = *i < len ? s[*i] : 0;
    if (q != '"' && q != '`')
        return "label value must be a quoted string";
    (*i)++;
    size_t at = out->len;
    put_len(out, 0);
    for (;;) {
        if (*i >= len)
            return "unterminated label value";
        char c = s[(*i)++];
        if (c == q)
            break;
        if (c == '\\' && q == '"') {
            const char *why = escape(s, len, i, out);
            if (why)
                return why;
        } else {
            buf_putc(out, c);
        }
    }
    uint32_t n = (uint32_t)(out->len - at - 4);
    memcpy(out->data + at, &n, 4);
    return NULL;
}

static const char *pair(const char *s, size_t len, size_t *i, struct buf *out)
{
    size_t start = *i;
    while (*i < len && is_name_char(s[*i], *i == start))
        (*i)++;
    if (*i == start)
        return "bad label name";
    put_len(out, *i - start);
    buf_append(out, s + start, *i - start);
    skip_space(s, len, i);
    if (*i >= len || s[*i] != '=')
        return "label name must be followed by =";
    (*i)++;
    skip_space(s, len, i);
    return value(s, len, i, out);
}

const char *loki_parse_labels(const char *s, size_t len, struct buf *out)
{
    size_t i = 0;
    skip_space(s, len, &i);
    if (i >= len || s[i] != '{')
        return "labels must start with {";
    i++;
    skip_space(s, len, &i);
    while (i < len && s[i] != '}') {
        const char *why = pair(s, len, &i, out);
        if (why)
            return why;
        skip_space(s, len, &i);
        if (i < len && s[i] == ',') {
            i++;
            skip_space(s, len, &i);
        } else if (i < len && s[i] != '}') {
            return "labels must be separated by ,";
        }
    }
    if (i >= len)
        return "labels must end with }";
    i++;
    skip_space(s, len, &i);
    return i == len ? NULL : "text after the closing } of the labels";
}

int logs_unsnappy(const char *data, size_t len, size_t max, struct buf *out, struct buf *err)
{
    size_t n;
    if (snappy_uncompressed_length(data, len, &n) != SNAPPY_OK) {
        buf_puts(err, "bad snappy body: cannot read its length");
        return ERR_INVAL;
    }
    if (max && n > max) {
        buf_printf(err, "snappy body inflates to %zu bytes, over max_body_bytes (%zu)", n, max);
        return ERR_TOOBIG;
    }
    buf_reserve(out, n);
    size_t got = n;
    if (snappy_uncompress(data, len, out->data + out->len, &got) != SNAPPY_OK || got != n) {
        buf_puts(err, "bad snappy body: corrupt compressed data");
        return ERR_INVAL;
    }
    out->len += n;
    return ERR_OK;
}
