/* JSON scanning in place (jscan.h). Strings are scanned for the bytes that
 * need a look (quote, backslash, control, >= 0x80) and copied to scratch
 * only when they hold escapes. */
#include "ingest/jscan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

void jscan_init(struct jscan *s, const char *line, size_t len, struct buf *scratch)
{
    s->p = line;
    s->end = line + len;
    buf_reset(scratch);
    buf_reserve(scratch, len + 1);
    s->sp = scratch->data;
    s->err = NULL;
    s->err_at = line;
}

bool jscan_fail(struct jscan *s, const char *why)
{
    if (!s->err) {
        s->err = why;
        s->err_at = s->p;
    }
    return false;
}

bool jscan_expect_fail(struct jscan *s, char c)
{
    return jscan_fail(s, c == ':'   ? "':' expected"
                         : c == '"' ? "string expected"
                                    : "unexpected character");
}

bool jscan_at_end(struct jscan *s)
{
    return jscan_peek(s) == 0 && s->p == s->end;
}

/* \uXXXX (and its low surrogate) at q (after the 'u'); the code point in
 * *cp; returns the bytes consumed after the 'u', or 0. */
static size_t unicode_escape(const char *q, const char *end, uint32_t *cp)
{
    if (end - q < 4)
        return 0;
    int hi = utf8_hex4(q);
    if (hi < 0)
        return 0;
    if (hi < 0xd800 || hi > 0xdfff) {
        *cp = (uint32_t)hi;
        return 4;
    }
    if (hi > 0xdbff || end - q < 10 || q[4] != '\\' || q[5] != 'u')
        return 0;
    int lo = utf8_hex4(q + 6);
    if (lo < 0xdc00 || lo > 0xdfff)
        return 0;
    *cp = 0x10000 + (((uint32_t)hi - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
    return 10;
}

/* Unescapes the string body s->p..(closing quote) into scratch. */
static bool unescape(struct jscan *s, struct slice *out)
{
    char *d = s->sp;
    const char *q = s->p;
    while (q < s->end && *q != '"') {
        unsigned char c = (unsigned char)*q;
        if (c < 0x20)
            return jscan_fail(s, "control character in a string");
        if (c != '\\') {
            *d++ = *q++;
            continue;
        }
        if (++q == s->end)
            break;
        char e = *q++;
        switch (e) {
        case '"':
        case '\\':
        case '/': *d++ = e; break;
        case 'b': *d++ = '\b'; break;
        case 'f': *d++ = '\f'; break;
        case 'n': *d++ = '\n'; break;
        case 'r': *d++ = '\r'; break;
        case 't': *d++ = '\t'; break;
        case 'u': {
            uint32_t cp;
            size_t n = unicode_escape(q, s->end, &cp);
            if (!n)
                return jscan_fail(s, "invalid \\u escape");
            if (cp == 0)
                return jscan_fail(s, "\\u0000 is not allowed in a string");
            d += utf8_encode(cp, d);
            q += n;
            break;
        }
        default: return jscan_fail(s, "invalid escape in a string");
        }
    }
    if (q == s->end)
        return jscan_fail(s, "unterminated string");
    *out = slice_make(s->sp, (size_t)(d - s->sp));
    s->sp = d;
    s->p = q + 1;
    return true;
}

const char *jscan_skip_plain(const char *q, const char *end)
{
#ifdef __SSE2__
    while (end - q >= 16) {
        unsigned m = jscan_stops16(q);
        if (m)
            return q + __builtin_ctz(m);
        q += 16;
    }
#endif
    while (q < end) {
        unsigned char c = (unsigned char)*q;
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
            break;
        q++;
    }
    return q;
}

bool jscan_string_full(struct jscan *s, struct slice *out)
{
    if (!jscan_expect(s, '"'))
        return false;
    const char *q = s->p;
    bool high = false;
    for (;;) {
        q = jscan_skip_plain(q, s->end);
        if (q == s->end || (unsigned char)*q < 0x80)
            break;
        high = true;
        q++;
    }
    if (q < s->end && *q == '"') {
        *out = slice_make(s->p, (size_t)(q - s->p));
        s->p = q + 1;
    } else if (q == s->end || *q != '\\') {
        s->p = q;
        return jscan_fail(s, q == s->end ? "unterminated string" : "control character in a string");
    } else if (!unescape(s, out)) {
        return false;
    } else {
        high = true; /* \u escapes wrote UTF-8: the whole is checked below */
    }
    if (high && !utf8_valid(out->ptr, out->len))
        return jscan_fail(s, "invalid UTF-8 in a string");
    return true;
}

bool jscan_type(struct jscan *s, enum jscan_type *t)
{
    switch (jscan_peek(s)) {
    case '"': *t = JS_STRING; return true;
    case '{': *t = JS_OBJECT; return true;
    case '[': *t = JS_ARRAY; return true;
    case 't': *t = JS_TRUE; return true;
    case 'f': *t = JS_FALSE; return true;
    case 'n': *t = JS_NULL; return true;
    case '-':
    case '0' ... '9': *t = JS_INT; return true; /* or JS_FLOAT: jscan_number says */
    default: return jscan_fail(s, s->p == s->end ? "value expected" : "invalid value");
    }
}

static bool digit(char c)
{
    return c >= '0' && c <= '9';
}

static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The bytes number_short reads at most: a sign, 15 digits, a point and
 * the byte after. */
#define SHORT_NUMBER_SPAN 18

/* jscan_number for the forms most numbers take, -?(0|[1-9][0-9]*)(\.[0-9]+)?
 * with 15 digits or fewer in all and no exponent, read without the checks
 * of the end the full reading makes at each byte (the caller leaves
 * SHORT_NUMBER_SPAN bytes or more after the position). The same results:
 * an integer as it is, a decimal as its digits over 10^(fraction digits),
 * exact under 16 digits. false: another form, nothing read. */
static bool number_short(struct jscan *s, enum jscan_type *t, int64_t *i, double *f)
{
    const char *q = s->p;
    bool neg = *q == '-';
    q += neg;
    const char *d0 = q, *lim = q + 15;
    uint64_t m = 0;
    if (*q == '0')
        q++;
    else
        for (; q < lim && digit(*q); q++)
            m = m * 10 + (unsigned)(*q - '0');
    if (q == d0 || digit(*q))
        return false; /* no digit, 0 then a digit, or over 15 digits */
    if (*q != '.') {
        if (*q == 'e' || *q == 'E')
            return false;
        *i = neg ? -(int64_t)m : (int64_t)m;
        *t = JS_INT;
        s->p = q;
        return true;
    }
    const char *f0 = ++q;
    for (; q < lim + 1 && digit(*q); q++)
        m = m * 10 + (unsigned)(*q - '0');
    int frac = (int)(q - f0);
    if (frac == 0 || digit(*q) || *q == 'e' || *q == 'E')
        return false;
    double x = (double)m / pow10_exact[frac];
    *f = neg ? -x : x;
    *t = JS_FLOAT;
    s->p = q;
    return true;
}

bool jscan_number(struct jscan *s, enum jscan_type *t, int64_t *i, double *f)
{
    if (s->end - s->p >= SHORT_NUMBER_SPAN && number_short(s, t, i, f))
        return true;
    const char *q = s->p, *start = q;
    bool neg = q < s->end && *q == '-';
    if (neg)
        q++;
    if (q == s->end || !digit(*q))
        return jscan_fail(s, "invalid number");
    uint64_t v = 0;
    bool over = false;
    if (*q == '0') {
        q++;
    } else {
        /* 19 digits cannot overflow 64 bits (10^19 - 1 < 2^64): check
         * only the digits after them */
        const char *safe = s->end - q > 19 ? q + 19 : s->end;
        for (; q < safe && digit(*q); q++)
            v = v * 10 + (unsigned)(*q - '0');
        for (; q < s->end && digit(*q); q++) {
            unsigned d = (unsigned)(*q - '0');
            if (v > (UINT64_MAX - d) / 10)
                over = true;
            else
                v = v * 10 + d;
        }
    }
    /* a decimal of at most 15 significant digits is exact as mantissa /
     * 10^frac: one correctly rounded division, as strtod gives. The
     * mantissa is gathered as the digits go by: the integer part's are in
     * v already (no leading zeros: its significant digits are its digits) */
    uint64_t m = v;
    int nd = v ? (int)(q - start - neg) : 0, frac = 0;
    bool exact = !over && nd <= 15, is_float = false, has_exp = false;
    if (q < s->end && *q == '.') {
        is_float = true;
        if (++q == s->end || !digit(*q))
            return jscan_fail(s, "invalid number");
        for (; q < s->end && digit(*q); q++) {
            if (!exact)
                continue;
            if (nd >= 15) {
                exact = false;
                continue;
            }
            m = m * 10 + (uint64_t)(*q - '0');
            nd += m != 0;
            frac++;
        }
    }
    if (q < s->end && (*q == 'e' || *q == 'E')) {
        is_float = has_exp = true;
        q++;
        if (q < s->end && (*q == '+' || *q == '-'))
            q++;
        if (q == s->end || !digit(*q))
            return jscan_fail(s, "invalid number");
        while (q < s->end && digit(*q))
            q++;
    }
    if (!is_float) {
        if (over || v > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
            return jscan_fail(s, "integer out of range (int64)");
        *i = neg ? (int64_t)(0 - v) : (int64_t)v;
        *t = JS_INT;
        s->p = q;
        return true;
    }
    if (exact && !has_exp && frac <= 22) {
        double x = frac ? (double)m / pow10_exact[frac] : (double)m;
        *f = neg ? -x : x;
        *t = JS_FLOAT;
        s->p = q;
        return true;
    }
    char tmp[64];
    size_t n = (size_t)(q - start);
    if (n >= sizeof tmp)
        return jscan_fail(s, "number too long");
    memcpy(tmp, start, n);
    tmp[n] = '\0';
    *f = strtod(tmp, NULL);
    if (isinf(*f))
        return jscan_fail(s, "number out of range");
    *t = JS_FLOAT;
    s->p = q;
    return true;
}

bool jscan_literal(struct jscan *s, const char *word)
{
    size_t n = strlen(word);
    jscan_peek(s);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
        return jscan_fail(s, "invalid literal");
    s->p += n;
    return true;
}

static bool skip_members(struct jscan *s, int depth, bool is_object)
{
    char close = is_object ? '}' : ']';
    s->p++; /* '{' or '[' */
    if (jscan_peek(s) == close) {
        s->p++;
        return true;
    }
    for (;;) {
        struct slice k;
        if (is_object && (!jscan_string(s, &k) || !jscan_expect(s, ':')))
            return false;
        if (!jscan_skip(s, depth + 1))
            return false;
        char c = jscan_peek(s);
        if (c == close) {
            s->p++;
            return true;
        }
        if (c != ',' || s->p == s->end)
            return jscan_fail(s, is_object ? "',' or '}' expected" : "',' or ']' expected");
        s->p++;
    }
}

bool jscan_skip(struct jscan *s, int depth)
{
    enum jscan_type t;
    struct slice str;
    int64_t i;
    double f;
    if (depth > JSCAN_MAX_DEPTH)
        return jscan_fail(s, "nested too deep");
    if (!jscan_type(s, &t))
        return false;
    switch (t) {
    case JS_STRING: return jscan_string(s, &str);
    case JS_INT:
    case JS_FLOAT: return jscan_number(s, &t, &i, &f);
    case JS_TRUE: return jscan_literal(s, "true");
    case JS_FALSE: return jscan_literal(s, "false");
    case JS_NULL: return jscan_literal(s, "null");
    case JS_OBJECT: return skip_members(s, depth, true);
    case JS_ARRAY: return skip_members(s, depth, false);
    }
    return false;
}
