/* The JSON tape parser (jtape.h): recursive descent over a private copy,
 * strings unescaped in place (an escape is never shorter than what it
 * stands for). */
#include "ingest/jtape.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/utf8.h"
#include "ingest/jscan.h"

struct jp {
    struct jtape *t;
    char *p, *end, *start;
    const char *why;
    char *at; /* where why was found */
};

void jt_init(struct jtape *t)
{
    memset(t, 0, sizeof *t);
}

void jt_destroy(struct jtape *t)
{
    free(t->n);
    free(t->text);
    jt_init(t);
}

static pthread_key_t tape_key;
static pthread_once_t tape_once = PTHREAD_ONCE_INIT;

static void tape_free(void *p)
{
    jt_destroy(p);
    free(p);
}

static void tape_key_make(void)
{
    if (pthread_key_create(&tape_key, tape_free) != 0)
        abort();
}

struct jtape *jt_thread_tape(void)
{
    pthread_once(&tape_once, tape_key_make);
    struct jtape *t = pthread_getspecific(tape_key);
    if (!t) {
        t = xcalloc(1, sizeof *t);
        if (pthread_setspecific(tape_key, t) != 0)
            abort();
    }
    return t;
}

void jt_release(struct jtape *t)
{
    t->len = 0;
    if (t->cap * sizeof *t->n + t->text_cap > JT_KEEP_BYTES)
        jt_destroy(t);
}

static bool bad(struct jp *p, const char *why)
{
    if (!p->why) {
        p->why = why;
        p->at = p->p;
    }
    return false;
}

static uint32_t push(struct jp *p, enum jt_type ty)
{
    struct jtape *t = p->t;
    if (t->len == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 256;
        t->n = xrealloc(t->n, t->cap * sizeof *t->n);
    }
    struct jt_node *n = &t->n[t->len];
    memset(n, 0, sizeof *n);
    n->type = (uint8_t)ty;
    return (uint32_t)t->len++;
}

static void skip_ws(struct jp *p)
{
    while (p->p < p->end && (*p->p == ' ' || *p->p == '\n' || *p->p == '\r' || *p->p == '\t'))
        p->p++;
}

/* \uXXXX (and a low surrogate after a high one) at p->p (after the 'u'). */
static bool unicode_escape(struct jp *p, char **o)
{
    if (p->end - p->p < 4)
        return bad(p, "truncated \\u escape");
    int cp = utf8_hex4(p->p);
    if (cp < 0)
        return bad(p, "bad \\u escape");
    p->p += 4;
    if (cp >= 0xdc00 && cp < 0xe000)
        return bad(p, "lone low surrogate in \\u escape");
    if (cp >= 0xd800 && cp < 0xdc00) {
        int lo = p->end - p->p >= 6 && p->p[0] == '\\' && p->p[1] == 'u' ? utf8_hex4(p->p + 2) : -1;
        if (lo < 0xdc00 || lo >= 0xe000)
            return bad(p, "lone high surrogate in \\u escape");
        p->p += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    if (cp == 0)
        return bad(p, "\\u0000 is not allowed (a NUL cannot be stored)");
    *o += utf8_encode((uint32_t)cp, *o);
    return true;
}

static bool escape(struct jp *p, char **o)
{
    if (p->p >= p->end)
        return bad(p, "unterminated string");
    char c = *p->p++;
    switch (c) {
    case '"':
    case '\\':
    case '/': *(*o)++ = c; return true;
    case 'b': *(*o)++ = '\b'; return true;
    case 'f': *(*o)++ = '\f'; return true;
    case 'n': *(*o)++ = '\n'; return true;
    case 'r': *(*o)++ = '\r'; return true;
    case 't': *(*o)++ = '\t'; return true;
    case 'u': return unicode_escape(p, o);
    default: p->p--; return bad(p, "bad escape in a string");
    }
}

static bool string(struct jp *p)
{
    uint32_t i = push(p, JT_STR);
    char *s = ++p->p; /* after the quote */
    char *o = s;
    bool is_ascii = true;
    for (;;) {
        char *q = p->p;
        const char *end = p->end;
        for (;;) {
            q = (char *)jscan_skip_plain(q, end);
            if (q < end && (unsigned char)*q >= 0x80) {
                is_ascii = false;
                q++;
                continue;
            }
            break;
        }
        if (o != p->p)
            memmove(o, p->p, (size_t)(q - p->p));
        o += q - p->p;
        p->p = q;
        if (q >= p->end)
            return bad(p, "unterminated string");
        if (*q == '"')
            break;
        if (*q != '\\')
            return bad(p, "control character in a string");
        p->p++;
        is_ascii = false; /* an escape may have written a multi-byte sequence */
        if (!escape(p, &o))
            return false;
    }
    p->p++;
    if (!is_ascii && !utf8_valid(s, (size_t)(o - s))) {
        p->p = s;
        return bad(p, "invalid UTF-8 in a string");
    }
    struct jt_node *n = &p->t->n[i];
    n->off = (uint32_t)(s - p->t->text);
    n->len = (uint32_t)(o - s);
    n->end = i + 1;
    return true;
}

static bool digits(struct jp *p)
{
    char *s = p->p;
    while (p->p < p->end && *p->p >= '0' && *p->p <= '9')
        p->p++;
    return p->p > s;
}

static bool number(struct jp *p)
{
    char *s = p->p;
    bool is_int = true;
    if (*p->p == '-')
        p->p++;
    if (p->p < p->end && *p->p == '0')
        p->p++;
    else if (!digits(p))
        return bad(p, "bad number");
    if (p->p < p->end && *p->p == '.') {
        p->p++;
        is_int = false;
        if (!digits(p))
            return bad(p, "bad number");
    }
    if (p->p < p->end && (*p->p == 'e' || *p->p == 'E')) {
        p->p++;
        is_int = false;
        if (p->p < p->end && (*p->p == '+' || *p->p == '-'))
            p->p++;
        if (!digits(p))
            return bad(p, "bad number");
    }
    uint32_t i = push(p, JT_NUM);
    struct jt_node *n = &p->t->n[i];
    n->off = (uint32_t)(s - p->t->text);
    n->len = (uint32_t)(p->p - s);
    n->is_int = is_int;
    n->end = i + 1;
    return true;
}

static bool word(struct jp *p, const char *w, enum jt_type ty)
{
    size_t n = strlen(w);
    if ((size_t)(p->end - p->p) < n || memcmp(p->p, w, n) != 0)
        return bad(p, "invalid literal");
    p->p += n;
    uint32_t i = push(p, ty);
    p->t->n[i].end = i + 1;
    return true;
}

static bool value(struct jp *p, int depth);

static bool container(struct jp *p, int depth, bool is_obj)
{
    if (depth >= JT_MAX_DEPTH)
        return bad(p, "nested too deep");
    uint32_t i = push(p, is_obj ? JT_OBJ : JT_ARR);
    char close = is_obj ? '}' : ']';
    p->p++;
    skip_ws(p);
    if (p->p < p->end && *p->p == close) {
        p->p++;
        p->t->n[i].end = (uint32_t)p->t->len;
        return true;
    }
    for (;;) {
        skip_ws(p);
        if (is_obj) {
            if (p->p >= p->end || *p->p != '"')
                return bad(p, "object key must be a string");
            if (!string(p))
                return false;
            skip_ws(p);
            if (p->p >= p->end || *p->p != ':')
                return bad(p, "':' expected after an object key");
            p->p++;
        }
        if (!value(p, depth + 1))
            return false;
        skip_ws(p);
        if (p->p < p->end && *p->p == ',') {
            p->p++;
            continue;
        }
        if (p->p < p->end && *p->p == close) {
            p->p++;
            break;
        }
        return bad(p, is_obj ? "',' or '}' expected" : "',' or ']' expected");
    }
    p->t->n[i].end = (uint32_t)p->t->len;
    return true;
}

static bool value(struct jp *p, int depth)
{
    skip_ws(p);
    if (p->p >= p->end)
        return bad(p, "unexpected end of the body");
    switch (*p->p) {
    case '{': return container(p, depth, true);
    case '[': return container(p, depth, false);
    case '"': return string(p);
    case 't': return word(p, "true", JT_TRUE);
    case 'f': return word(p, "false", JT_FALSE);
    case 'n': return word(p, "null", JT_NULL);
    default:
        if (*p->p == '-' || (*p->p >= '0' && *p->p <= '9'))
            return number(p);
        return bad(p, "invalid value");
    }
}

static void where(const struct jp *p, struct buf *err)
{
    unsigned line = 1, col = 1;
    for (const char *c = p->start; c < p->at; c++) {
        if (*c == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    buf_printf(err, "bad JSON at line %u column %u: %s", line, col, p->why);
}

int jt_parse(struct jtape *t, const char *body, size_t len, struct buf *err)
{
    if (len >= UINT32_MAX / 2) {
        buf_puts(err, "bad JSON: body too large");
        return ERR_INVAL;
    }
    if (t->text_cap < len + 1) {
        free(t->text);
        t->text = xmalloc(len + 1);
        t->text_cap = len + 1;
    }
    memcpy(t->text, body, len);
    t->text[len] = '\0';
    t->len = 0;
    /* room for a node every 8 bytes at once (OTLP/JSON has one every 11,
     * Loki's one every 25): growing a large tape by doubling copied it
     * several times, each time into fresh pages */
    size_t want = len / 8 + 256;
    if (t->cap < want) {
        free(t->n);
        t->n = xmalloc(want * sizeof *t->n);
        t->cap = want;
    }
    struct jp p = {t, t->text, t->text + len, t->text, NULL, NULL};
    push(&p, JT_NONE); /* node 0: absent */
    t->n[0].end = 1;
    bool ok = value(&p, 0);
    if (ok) {
        skip_ws(&p);
        if (p.p != p.end)
            ok = bad(&p, "text after the JSON value");
    }
    if (!ok) {
        where(&p, err);
        return ERR_INVAL;
    }
    return ERR_OK;
}

uint32_t jt_get(const struct jtape *t, uint32_t o, const char *key)
{
    if (!o || t->n[o].type != JT_OBJ)
        return 0;
    size_t kl = strlen(key);
    JT_MEMBERS(t, o, k)
    {
        if (t->n[k].len == kl && memcmp(jt_ptr(t, k), key, kl) == 0)
            return k + 1;
    }
    return 0;
}

size_t jt_count(const struct jtape *t, uint32_t a)
{
    size_t n = 0;
    if (a && t->n[a].type == JT_ARR)
        JT_EACH(t, a, c)
    n++;
    return n;
}

bool jt_int(const struct jtape *t, uint32_t i, int64_t *out)
{
    const struct jt_node *n = &t->n[i];
    if (n->type != JT_NUM || !n->is_int)
        return false;
    const char *s = jt_ptr(t, i), *e = s + n->len;
    bool neg = *s == '-';
    s += neg;
    uint64_t v = 0;
    for (; s < e; s++)
        if (__builtin_mul_overflow(v, 10, &v) ||
            __builtin_add_overflow(v, (uint64_t)(*s - '0'), &v))
            return false;
    if (v > (uint64_t)INT64_MAX + neg)
        return false;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* A plain decimal ([-]digits[.digits], at most 15 significant digits) as
 * m / 10^k: both exact doubles, so the one division rounds correctly, to
 * what strtod gives (Clinger's fast path). false for anything else. */
static bool plain_decimal(const char *s, size_t len, double *out)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char *e = s + len;
    bool neg = s < e && *s == '-';
    s += neg;
    uint64_t m = 0;
    int sig = 0, frac = -1; /* frac: digits after the point, -1 before it */
    for (; s < e; s++) {
        if (*s == '.' && frac < 0) {
            frac = 0;
            continue;
        }
        if (*s < '0' || *s > '9')
            return false;
        if (m || *s != '0')
            sig++;
        if (sig > 15)
            return false;
        m = m * 10 + (uint64_t)(*s - '0');
        frac += frac >= 0;
    }
    if (frac > 22)
        return false;
    double v = (double)m / pow10[frac > 0 ? frac : 0];
    *out = neg ? -v : v;
    return true;
}

bool jt_double(const struct jtape *t, uint32_t i, double *out)
{
    const struct jt_node *n = &t->n[i];
    if (n->type != JT_NUM)
        return false;
    if (plain_decimal(jt_ptr(t, i), n->len, out))
        return true;
    char tmp[64];
    if (n->len >= sizeof tmp) {
        char *big = xstrndup(jt_ptr(t, i), n->len);
        *out = strtod(big, NULL);
        free(big);
        return true;
    }
    memcpy(tmp, jt_ptr(t, i), n->len);
    tmp[n->len] = '\0';
    *out = strtod(tmp, NULL);
    return true;
}
