/* The JSON tape parser (jtape.h): recursive descent over a private copy,
 * strings unescaped in place (an escape is never shorter than what it
 * stands for). */
#include "ingest/jtape.h"

#include <stdlib.h>
#include <string.h>

#include "base/decimal.h"
#include "base/err.h"
#include "base/thread_keep.h"
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

static void tape_destroy(void *p)
{
    jt_destroy(p);
}

static struct thread_keep tape_keep = THREAD_KEEP(sizeof(struct jtape), tape_destroy);

struct jtape *jt_thread_tape(void)
{
    return thread_keep_get(&tape_keep); /* zeroed: jt_init's empty tape */
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

static void grow(struct jtape *t)
{
    t->cap = t->cap ? t->cap * 2 : 256;
    t->n = xrealloc(t->n, t->cap * sizeof *t->n);
}

static inline uint32_t push(struct jp *p, enum jt_type ty)
{
    struct jtape *t = p->t;
    if (__builtin_expect(t->len == t->cap, 0))
        grow(t);
    t->n[t->len] = (struct jt_node){.type = (uint8_t)ty};
    return (uint32_t)t->len++;
}

/* Blanks skipped from c. The text ends in a NUL (below every blank), so
 * the common case, a byte that is no blank, is one comparison. */
static inline char *ws(char *c, const char *end)
{
    if (__builtin_expect((unsigned char)*c > ' ', 1))
        return c;
    while (c < end && (*c == ' ' || *c == '\n' || *c == '\r' || *c == '\t'))
        c++;
    return c;
}

static inline void skip_ws(struct jp *p)
{
    p->p = ws(p->p, p->end);
}

/* The first byte at or after q that is '"', '\\', below 0x20 or 0x80 and
 * above. The text ends in a NUL and has JT_PAD bytes after it, so that
 * the scan needs no bound: it stops at the NUL at the latest, and reads
 * at most 15 bytes past it. */
#define JT_PAD 16
static inline char *plain_run(char *q)
{
#ifdef __SSE2__
    for (;;) {
        unsigned m = jscan_stops16(q);
        if (m)
            return q + __builtin_ctz(m);
        q += 16;
    }
#else
    for (;; q++) {
        unsigned char c = (unsigned char)*q;
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
            return q;
    }
#endif
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

/* A node that is a whole string or number: off, len in the text. */
static inline void push_text(struct jp *p, enum jt_type ty, const char *s, size_t len, bool is_int)
{
    struct jtape *t = p->t;
    if (__builtin_expect(t->len == t->cap, 0))
        grow(t);
    struct jt_node *n = &t->n[t->len];
    n->off = (uint32_t)(s - t->text);
    n->len = (uint32_t)len;
    n->end = (uint32_t)t->len + 1;
    n->type = (uint8_t)ty;
    n->is_int = is_int;
    t->len++;
}

/* A string with escapes or bytes of 0x80 and above, from s (after the
 * quote); q is the first byte of it that is not plain. */
static bool string_slow(struct jp *p, char *s, char *q)
{
    char *o = s;
    bool is_ascii = true;
    p->p = s;
    for (;;) {
        while ((unsigned char)*q >= 0x80) {
            is_ascii = false;
            q = plain_run(q + 1);
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
        q = plain_run(p->p);
    }
    p->p++;
    if (!is_ascii && !utf8_valid(s, (size_t)(o - s))) {
        p->p = s;
        return bad(p, "invalid UTF-8 in a string");
    }
    push_text(p, JT_STR, s, (size_t)(o - s), false);
    return true;
}

/* A string whose quote is at c (most are plain ASCII without escapes, a
 * slice of the text as it is): the byte after it, or NULL. */
static inline char *str_at(struct jp *p, char *c)
{
    char *s = c + 1;
    char *q = plain_run(s);
    if (__builtin_expect(*q != '"', 0))
        return string_slow(p, s, q) ? p->p : NULL;
    push_text(p, JT_STR, s, (size_t)(q - s), false);
    return q + 1;
}

/* The same at the reader's position. */
static inline bool string(struct jp *p)
{
    char *c = str_at(p, p->p);
    if (c)
        p->p = c;
    return c != NULL;
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
    push_text(p, JT_NUM, s, (size_t)(p->p - s), is_int);
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

static bool scalar(struct jp *p)
{
    if (p->p >= p->end)
        return bad(p, "unexpected end of the body");
    switch (*p->p) {
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

/* An object's key and its colon. The text ends in a NUL, so a byte
 * compared at the end matches no token. */
static bool key(struct jp *p)
{
    if (*p->p != '"')
        return bad(p, "object key must be a string");
    if (!string(p))
        return false;
    skip_ws(p);
    if (*p->p != ':')
        return bad(p, "':' expected after an object key");
    p->p++;
    return true;
}

static bool fail_at(struct jp *p, char *c, const char *why)
{
    p->p = c;
    return bad(p, why);
}

/* The document: a loop over values with a stack of the open containers
 * (a recursive descent paid a call and its checks on every value). The
 * position is a local (c), not the reader's, so that it stays in a
 * register; the reader's is set on the way out. */
static bool document(struct jp *p, int base_depth)
{
    uint32_t open[JT_MAX_DEPTH];
    int depth = 0, max_depth = JT_MAX_DEPTH - base_depth;
    bool want_key = false;
    struct jtape *t = p->t;
    const char *end = p->end;
    char *c = p->p;
    for (;;) {
        c = ws(c, end);
        if (want_key) {
            if (*c != '"' || c >= end)
                return fail_at(p, c, "object key must be a string");
            if (!(c = str_at(p, c)))
                return false;
            c = ws(c, end);
            if (*c != ':' || c >= end)
                return fail_at(p, c, "':' expected after an object key");
            c = ws(c + 1, end);
        }
        char ch = *c;
        if ((ch == '{' || ch == '[') && c < end) {
            if (depth >= max_depth)
                return fail_at(p, c, "nested too deep");
            uint32_t i = push(p, ch == '{' ? JT_OBJ : JT_ARR);
            c = ws(c + 1, end);
            if (*c != (ch == '{' ? '}' : ']') || c >= end) {
                open[depth++] = i;
                want_key = ch == '{';
                continue;
            }
            c++;
            t->n[i].end = (uint32_t)t->len;
        } else if (ch == '"' && c < end) {
            if (!(c = str_at(p, c)))
                return false;
        } else {
            p->p = c;
            if (!scalar(p))
                return false;
            c = p->p;
        }
        /* after a value: the containers it closes, then a comma or the end */
        for (;;) {
            if (depth == 0) {
                p->p = c;
                return true;
            }
            c = ws(c, end);
            struct jt_node *n = &t->n[open[depth - 1]];
            bool is_obj = n->type == JT_OBJ;
            if (*c == ',' && c < end) {
                c++;
                want_key = is_obj;
                break;
            }
            if (*c != (is_obj ? '}' : ']') || c >= end)
                return fail_at(p, c, is_obj ? "',' or '}' expected" : "',' or ']' expected");
            c++;
            n->end = (uint32_t)t->len;
            depth--;
        }
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

/* The text: a copy of the body, NUL-terminated and padded (plain_run). */
static int copy_text(struct jtape *t, const char *body, size_t len, struct buf *err)
{
    if (len >= UINT32_MAX / 2) {
        buf_puts(err, "bad JSON: body too large");
        return ERR_INVAL;
    }
    if (t->text_cap < len + 1 + JT_PAD) {
        free(t->text);
        t->text = xmalloc(len + 1 + JT_PAD);
        t->text_cap = len + 1 + JT_PAD;
    }
    memcpy(t->text, body, len);
    memset(t->text + len, 0, 1 + JT_PAD);
    t->text_len = len;
    t->pos = 0;
    return ERR_OK;
}

/* An empty tape: node 0 only ("absent"). */
static void reset_nodes(struct jtape *t)
{
    t->len = 0;
    if (t->cap == 0)
        grow(t);
    t->n[0] = (struct jt_node){.end = 1, .type = JT_NONE};
    t->len = 1;
}

static struct jp reader(struct jtape *t)
{
    return (struct jp){t, t->text + t->pos, t->text + t->text_len, t->text, NULL, NULL};
}

static int failed(struct jtape *t, struct jp *p, struct buf *err)
{
    t->pos = (size_t)(p->p - t->text);
    where(p, err);
    return ERR_INVAL;
}

/* The document at the reader as one value, and nothing but blanks after. */
static int parse_whole(struct jtape *t, struct jp *p, struct buf *err)
{
    bool ok = document(p, 0);
    if (ok) {
        skip_ws(p);
        if (p->p != p->end)
            ok = bad(p, "text after the JSON value");
    }
    if (!ok)
        return failed(t, p, err);
    t->pos = t->text_len;
    return ERR_OK;
}

int jt_parse(struct jtape *t, const char *body, size_t len, struct buf *err)
{
    int rc = copy_text(t, body, len, err);
    if (rc)
        return rc;
    /* room for a node every 8 bytes at once (OTLP/JSON has one every 11,
     * Loki's one every 25): growing a large tape by doubling copied it
     * several times, each time into fresh pages */
    size_t want = len / 8 + 256;
    if (t->cap < want) {
        free(t->n);
        t->n = xmalloc(want * sizeof *t->n);
        t->cap = want;
    }
    reset_nodes(t);
    struct jp p = reader(t);
    return parse_whole(t, &p, err);
}

/* --- a document read piece by piece ------------------------------------ */

/* The text is body's bytes, taken without a copy: body gets the tape's
 * former text buffer, empty. */
static int adopt_text(struct jtape *t, struct buf *body, struct buf *err)
{
    size_t len = body->len;
    if (len >= UINT32_MAX / 2) {
        buf_puts(err, "bad JSON: body too large");
        return ERR_INVAL;
    }
    buf_reserve_exact(body, 1 + JT_PAD);
    memset(body->data + len, 0, 1 + JT_PAD);
    char *old = t->text;
    size_t old_cap = t->text_cap;
    t->text = body->data;
    t->text_cap = body->cap;
    t->text_len = len;
    t->pos = 0;
    body->data = old;
    body->cap = old ? old_cap : 0;
    body->len = 0;
    return ERR_OK;
}

static int doc_open(struct jtape *t, bool *is_object, struct buf *err);

int jt_doc_open(struct jtape *t, const char *body, size_t len, bool *is_object, struct buf *err)
{
    int rc = copy_text(t, body, len, err);
    return rc ? rc : doc_open(t, is_object, err);
}

int jt_doc_open_buf(struct jtape *t, struct buf *body, bool *is_object, struct buf *err)
{
    int rc = adopt_text(t, body, err);
    return rc ? rc : doc_open(t, is_object, err);
}

static int doc_open(struct jtape *t, bool *is_object, struct buf *err)
{
    reset_nodes(t);
    struct jp p = reader(t);
    skip_ws(&p);
    *is_object = p.p < p.end && *p.p == '{';
    t->doc_state = JT_DOC_FIRST;
    if (*is_object) {
        p.p++;
        t->pos = (size_t)(p.p - t->text);
        return ERR_OK;
    }
    /* not an object: the whole document as one value, checked */
    int rc = parse_whole(t, &p, err);
    if (rc == ERR_OK)
        t->doc_state = JT_DOC_END;
    return rc;
}

/* After the root object's '}': nothing but blanks. */
static int doc_end(struct jtape *t, struct jp *p, struct buf *err)
{
    p->p++;
    skip_ws(p);
    if (p->p != p->end) {
        bad(p, "text after the JSON value");
        return failed(t, p, err);
    }
    t->pos = t->text_len;
    t->doc_state = JT_DOC_END;
    return 0;
}

int jt_doc_member(struct jtape *t, struct slice *name, struct buf *err)
{
    if (t->doc_state == JT_DOC_END)
        return 0;
    struct jp p = reader(t);
    skip_ws(&p);
    if (t->doc_state == JT_DOC_FIRST) {
        if (*p.p == '}' && p.p < p.end)
            return doc_end(t, &p, err);
    } else if (*p.p == ',') {
        p.p++;
        skip_ws(&p);
    } else if (*p.p == '}' && p.p < p.end) {
        return doc_end(t, &p, err);
    } else {
        bad(&p, "',' or '}' expected");
        return failed(t, &p, err);
    }
    reset_nodes(t);
    if (!key(&p))
        return failed(t, &p, err);
    *name = jt_str(t, 1);
    skip_ws(&p);
    t->pos = (size_t)(p.p - t->text);
    t->doc_state = JT_DOC_VALUE;
    return 1;
}

enum jt_type jt_doc_peek(const struct jtape *t)
{
    const char *c = t->text + t->pos;
    switch (c < t->text + t->text_len ? *c : 0) {
    case '[': return JT_ARR;
    case '{': return JT_OBJ;
    case 'n': return JT_NULL;
    default: return JT_NONE;
    }
}

/* One value at the reader into the tape as node 1, at the given depth. */
static int doc_parse(struct jtape *t, int depth, struct buf *err)
{
    reset_nodes(t);
    struct jp p = reader(t);
    if (!document(&p, depth))
        return failed(t, &p, err);
    t->pos = (size_t)(p.p - t->text);
    return ERR_OK;
}

int jt_doc_value(struct jtape *t, struct buf *err)
{
    int rc = doc_parse(t, 2, err);
    if (rc == ERR_OK)
        t->doc_state = JT_DOC_NEXT;
    return rc;
}

int jt_doc_element(struct jtape *t, struct buf *err)
{
    struct jp p = reader(t);
    skip_ws(&p);
    if (t->doc_state == JT_DOC_VALUE) { /* the array's '[' (jt_doc_peek) */
        p.p++;
        skip_ws(&p);
        if (*p.p == ']' && p.p < p.end) {
            t->pos = (size_t)(p.p + 1 - t->text);
            t->doc_state = JT_DOC_NEXT;
            return 0;
        }
        t->doc_state = JT_DOC_ELEMENT;
    } else if (*p.p == ',') {
        p.p++;
    } else if (*p.p == ']' && p.p < p.end) {
        t->pos = (size_t)(p.p + 1 - t->text);
        t->doc_state = JT_DOC_NEXT;
        return 0;
    } else {
        bad(&p, "',' or ']' expected");
        return failed(t, &p, err);
    }
    t->pos = (size_t)(p.p - t->text);
    int rc = doc_parse(t, 2, err);
    return rc ? rc : 1;
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
    return n->type == JT_NUM && n->is_int && dec_i64(jt_ptr(t, i), n->len, out) == DEC_OK;
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

int jt_doc_array(struct jtape *t, const char *name, const char *alt,
                 int (*each)(void *arg, const struct jtape *t), void *arg, int *mapped,
                 enum jt_found *found, struct buf *err)
{
    *found = JT_FOUND_NONE;
    struct slice key;
    int r;
    while ((r = jt_doc_member(t, &key, err)) == 1) {
        bool is_it = *found == JT_FOUND_NONE &&
                     (slice_eq(key, slice_cstr(name)) || (alt && slice_eq(key, slice_cstr(alt))));
        if (is_it && jt_doc_peek(t) == JT_ARR) {
            *found = JT_FOUND_ARRAY;
            while ((r = jt_doc_element(t, err)) == 1)
                if (!*mapped)
                    *mapped = each(arg, t);
            if (r < 0)
                return r;
            continue;
        }
        if ((r = jt_doc_value(t, err)))
            return r;
        if (is_it)
            *found = jt_is(t, 1, JT_NULL) ? JT_FOUND_NULL : JT_FOUND_OTHER;
    }
    return r;
}

int jt_doc_read_array(const char *body, size_t len, struct buf *owned, const char *name,
                      const char *alt, int (*each)(void *arg, const struct jtape *t), void *arg,
                      bool *is_object, enum jt_found *found, int *mapped, struct buf *err)
{
    struct jtape *t = jt_thread_tape();
    struct buf syntax = BUF_INIT; /* jt_doc_*'s error */
    size_t base = err->len;
    *is_object = false;
    *found = JT_FOUND_NONE;
    *mapped = ERR_OK;
    int rc = owned ? jt_doc_open_buf(t, owned, is_object, &syntax)
                   : jt_doc_open(t, body, len, is_object, &syntax);
    if (!rc && *is_object)
        rc = jt_doc_array(t, name, alt, each, arg, mapped, found, &syntax);
    if (rc) { /* the syntax error, not the mapping's */
        err->len = base;
        buf_append(err, syntax.data ? syntax.data : "", syntax.len);
    }
    buf_destroy(&syntax);
    jt_release(t);
    return rc;
}
