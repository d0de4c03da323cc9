/* InfluxDB line protocol: one pass over each line with a byte-class table.
 * Tokens without escapes are returned in place; escaped ones are unescaped
 * into a per-line scratch reserved to the line's length up front, so slices
 * never move while a line is parsed. Tag and field arrays are reused across
 * lines: after warm-up no line allocates. */
#include "ingest/lineproto.h"

#include <math.h>
#include <stdio.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "base/decimal.h"
#include "base/err.h"
#include "base/utf8.h"
#include "model/key.h"

/* Byte classes: which bytes end (or need a look at) a token. */
enum {
    C_MEAS = 1,      /* stops a measurement: ',' ' ' '\\' */
    C_KEY = 2,       /* stops a tag key, tag value or field key: ',' '=' ' ' '\\' */
    C_STR = 4,       /* stops a string value: '"' '\\' */
    C_HIGH = 8,      /* byte >= 0x80: UTF-8 must be checked */
    E_MEAS = 16,     /* escapable in a measurement: ',' ' ' */
    E_KEY = 32,      /* escapable in keys and tag values: ',' '=' ' ' */
    E_STR = 64,      /* escapable in a string value: '"' '\\' */
    C_STOPNUM = 128, /* ends a field value token: ',' ' ' */
    C_CTRL = 256,    /* 0x00-0x1f and 0x7f: not allowed in names */
};

#define K_SEP (C_MEAS | C_KEY | E_MEAS | E_KEY | C_STOPNUM)
static const uint16_t cls[256] = {
    [0x00 ... 0x1f] = C_CTRL,
    [','] = K_SEP,
    [' '] = K_SEP,
    ['='] = C_KEY | E_KEY,
    ['"'] = C_STR | E_STR,
    /* a backslash escapes another only in string values: elsewhere it is
     * literal before anything but the separators of its position */
    ['\\'] = C_MEAS | C_KEY | C_STR | E_STR,
    [0x7f] = C_CTRL,
    [0x80 ... 0xff] = C_HIGH,
};

struct lp_parser {
    struct event_limits lim;
    int64_t ns_per_unit;
    struct slice host_tag;
    struct slice default_host;
    size_t max_name; /* min(max_key_bytes, KEY_MAX_NAME) */

    struct rec_tag *tags;
    size_t tags_cap;
    struct rec_field *fields;
    size_t fields_cap;

    struct buf scratch; /* unescaped tokens of the current line */
    char *sp;           /* next free byte of scratch */
    struct buf numbuf;  /* NUL-terminated copy of a float for strtod */
    struct buf dupbuf;  /* duplicate-key check */
    struct event_feed feed;
    struct buf pending;    /* lines of a string value still open (joined by '\n') */
    uint64_t pending_line; /* number of pending's first line */
    bool is_open_str;      /* the line just parsed ended inside a string value */
    char reason[192];
};

int lp_precision_parse(const char *name, int64_t *ns_per_unit)
{
    static const struct {
        const char *name;
        int64_t mult;
    } tab[] = {
        {"", 1},
        {"ns", 1},
        {"n", 1},
        {"us", 1000},
        {"u", 1000},
        {"\xc2\xb5s", 1000},
        {"ms", 1000000},
        {"s", 1000000000},
        {"m", 60LL * 1000000000},
        {"h", 3600LL * 1000000000},
        /* InfluxDB 3's names */
        {"nanosecond", 1},
        {"microsecond", 1000},
        {"millisecond", 1000000},
        {"second", 1000000000},
        {"auto", LP_PRECISION_AUTO},
    };
    if (!name)
        name = "";
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        if (!strcmp(name, tab[i].name)) {
            *ns_per_unit = tab[i].mult;
            return ERR_OK;
        }
    }
    return ERR_INVAL;
}

static enum event_kind lp_line(void *p, const char *line, size_t len, struct event *ev,
                               const char **reason);
static enum event_kind lp_flush(void *p, const char *line, size_t len, struct event *ev,
                                const char **reason);

struct lp_parser *lp_new(const struct event_limits *lim, int64_t ns_per_unit)
{
    struct lp_parser *p = xcalloc(1, sizeof *p);
    p->lim = *lim;
    p->ns_per_unit = ns_per_unit > 0 || ns_per_unit == LP_PRECISION_AUTO ? ns_per_unit : 1;
    p->host_tag = slice_cstr(lim->host_tag ? lim->host_tag : "host");
    p->default_host = slice_cstr(lim->default_host ? lim->default_host : "");
    p->max_name = lim->max_key_bytes < KEY_MAX_NAME ? lim->max_key_bytes : KEY_MAX_NAME;
    p->tags_cap = 16;
    p->tags = xmalloc(p->tags_cap * sizeof *p->tags);
    p->fields_cap = 16;
    p->fields = xmalloc(p->fields_cap * sizeof *p->fields);
    buf_init(&p->scratch);
    buf_init(&p->numbuf);
    buf_init(&p->dupbuf);
    event_feed_init(&p->feed, lim->max_line_bytes, lp_line, p);
    p->feed.flush = lp_flush;
    buf_init(&p->pending);
    return p;
}

void lp_free(struct lp_parser *p)
{
    if (!p)
        return;
    free(p->tags);
    free(p->fields);
    buf_destroy(&p->scratch);
    buf_destroy(&p->numbuf);
    buf_destroy(&p->dupbuf);
    buf_destroy(&p->pending);
    event_feed_destroy(&p->feed);
    free(p);
}

/* --- reasons ------------------------------------------------------------ */

/* Formats a reason that names a key: printable ASCII kept, others '?',
 * at most 64 bytes. */
static const char *why_key(struct lp_parser *p, const char *what, struct slice key)
{
    char k[72];
    const unsigned char *u = (const unsigned char *)key.ptr;
    size_t n = 0, i = 0;
    while (i < key.len) { /* printable ASCII and whole UTF-8 characters; else '?' */
        size_t len = u[i] < 0x80 ? 1 : utf8_seq_len(u + i, key.len - i);
        size_t w = len > 1 ? len : 1;
        if (n + w > 64)
            break;
        if (len > 1)
            memcpy(k + n, u + i, len);
        else
            k[n] = u[i] >= 0x20 && u[i] < 0x7f ? (char)u[i] : '?';
        n += w;
        i += w;
    }
    if (i < key.len) {
        memcpy(k + n, "...", 3);
        n += 3;
    }
    k[n] = '\0';
    snprintf(p->reason, sizeof p->reason, "%s \"%s\"", what, k);
    return p->reason;
}

static const char *why_num(struct lp_parser *p, const char *what, size_t n)
{
    snprintf(p->reason, sizeof p->reason, "%s (max %zu)", what, n);
    return p->reason;
}

/* --- tokens ------------------------------------------------------------- */

/* The reason of every line holding a NUL byte, whatever else is wrong. */
static const char NUL_LINE[] = "NUL byte in line";

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Skips bytes of a string value 16 at a time (SSE2, every x86-64 has it) or
 * 8 at a time (SWAR): stops at the first '"', '\\', NUL or byte >= 0x80
 * (the lowest flagged byte is exact). */
static const char *skip_str(const char *q, const char *end)
{
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    const __m128i zero = _mm_setzero_si128();
    while (end - q >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)q);
        __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash));
        hit = _mm_or_si128(hit, _mm_cmpeq_epi8(x, zero));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(hit, x)); /* x: the high bit */
        if (m)
            return q + __builtin_ctz(m);
        q += 16;
    }
#endif
    while (end - q >= 8) {
        uint64_t x, a, b;
        memcpy(&x, q, 8);
        a = x ^ (ONES * '"');
        b = x ^ (ONES * '\\');
        uint64_t t = (((a - ONES) & ~a) | ((b - ONES) & ~b) | ((x - ONES) & ~x) | x) & HIGHS;
        if (t)
            return q + (__builtin_ctzll(t) >> 3);
        q += 8;
    }
    while (q < end && *q && !(cls[(unsigned char)*q] & (C_STR | C_HIGH)))
        q++;
    return q;
}

/* Skips the bytes of a token 16 at a time, up to the first byte that ends
 * it or needs a look: for a name (stop C_MEAS or C_KEY: measurement, tag
 * key or value, field key) a byte of class stop, a control byte or a byte
 * >= 0x80; for a number (stop C_STOPNUM) only ',' or ' '. The last 15 bytes
 * are scanned one at a time. Tokens are short: one load usually finds the
 * end. */
static inline __attribute__((always_inline)) const char *skip_tok(const char *q, const char *end,
                                                                  unsigned stop)
{
#ifdef __SSE2__
    const __m128i comma = _mm_set1_epi8(','), space = _mm_set1_epi8(' ');
    while (end - q >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)q);
        __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(x, comma), _mm_cmpeq_epi8(x, space));
        if (stop != C_STOPNUM) {
            /* signed: 0x00-0x1f and 0x80-0xff are below 0x20 */
            hit = _mm_or_si128(hit, _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)));
            hit = _mm_or_si128(hit, _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f)));
            hit = _mm_or_si128(hit, _mm_cmpeq_epi8(x, _mm_set1_epi8('\\')));
            if (stop & C_KEY)
                hit = _mm_or_si128(hit, _mm_cmpeq_epi8(x, _mm_set1_epi8('=')));
        }
        unsigned m = (unsigned)_mm_movemask_epi8(hit);
        if (m)
            return q + __builtin_ctz(m);
        q += 16;
    }
#endif
    unsigned flags = stop == C_STOPNUM ? C_STOPNUM : stop | C_HIGH | C_CTRL;
    while (q < end && !(cls[(unsigned char)*q] & flags))
        q++;
    return q;
}

/* Scans from *pp to the first unescaped byte of class stop (or end) and
 * returns the token, unescaped into scratch if it held escapes. *high is set
 * if a byte >= 0x80 was seen. Returns NULL, or the reason when a backslash
 * ends the line. Always inlined: stop and escapable are constants at each
 * call, which folds the class tests (20% fewer instructions per line). */
static inline __attribute__((always_inline)) const char *scan(struct lp_parser *p, const char **pp,
                                                              const char *end, unsigned stop,
                                                              unsigned escapable, struct slice *out,
                                                              bool *high)
{
    const char *s = *pp, *q = s;
    bool has_esc = false;
    *high = false;
    for (;;) {
        q = stop == C_STR ? skip_str(q, end) : skip_tok(q, end, stop);
        if (q == end)
            break;
        unsigned char c = (unsigned char)*q;
        if (c >= 0x80) {
            *high = true;
            q++;
            continue;
        }
        if (c == 0)
            return NUL_LINE;
        if (stop != C_STR && (cls[c] & C_CTRL)) {
            /* names only: string values may hold any byte but NUL */
            snprintf(p->reason, sizeof p->reason,
                     "control character 0x%02x in a measurement, tag or field key or tag value", c);
            return p->reason;
        }
        if (c != '\\')
            break;
        if (q + 1 == end)
            return "bad escape: backslash at end of line";
        if (cls[(unsigned char)q[1]] & escapable) {
            has_esc = true;
            q += 2;
        } else {
            q++;
        }
    }
    *pp = q;
    if (!has_esc) {
        *out = slice_make(s, (size_t)(q - s));
        return NULL;
    }
    char *d = p->sp;
    for (const char *r = s; r < q; r++) {
        if (*r == '\\' && (cls[(unsigned char)r[1]] & escapable))
            r++;
        *d++ = *r;
    }
    *out = slice_make(p->sp, (size_t)(d - p->sp));
    p->sp = d;
    return NULL;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* -?[0-9]+ into int64 and [0-9]+ into uint64: 1 ok, 0 syntax error, -1
 * out of range (base/decimal.h: eight digits at a time). */
static int parse_i64(const char *s, const char *end, int64_t *out)
{
    return dec_i64(s, (size_t)(end - s), out);
}

static int parse_u64(const char *s, const char *end, uint64_t *out)
{
    return dec_u64(s, (size_t)(end - s), out);
}

static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* -?(d+[.d*]|.d+)([eE][+-]?d+)? into a finite double. 1 ok, 0 syntax error,
 * -1 out of range. Short decimals take the exact fast path (mantissa below
 * 10^15, power of ten at most 22: one correctly rounded operation);
 * everything else goes to strtod on a NUL-terminated copy. */
static int parse_f64(struct lp_parser *p, const char *s, const char *end, double *out)
{
    const char *t = s;
    bool neg = t < end && *t == '-';
    if (neg)
        t++;
    uint64_t m = 0;
    int nd = 0, e10 = 0;
    bool any = false, exact = true;
    for (; t < end && is_digit(*t); t++) {
        any = true;
        if (m == 0 && *t == '0')
            continue;
        if (nd < 19) {
            m = m * 10 + (uint64_t)(*t - '0');
            nd++;
        } else {
            e10++;
            exact = false;
        }
    }
    if (t < end && *t == '.') {
        for (t++; t < end && is_digit(*t); t++) {
            any = true;
            if (m == 0 && *t == '0') {
                e10--;
                continue;
            }
            if (nd < 19) {
                m = m * 10 + (uint64_t)(*t - '0');
                nd++;
                e10--;
            } else {
                exact = false;
            }
        }
    }
    if (!any)
        return 0;
    if (t < end && (*t == 'e' || *t == 'E')) {
        t++;
        bool eneg = false;
        if (t < end && (*t == '+' || *t == '-'))
            eneg = *t++ == '-';
        if (t == end || !is_digit(*t))
            return 0;
        int ex = 0;
        for (; t < end && is_digit(*t); t++)
            if (ex < 100000)
                ex = ex * 10 + (*t - '0');
        e10 += eneg ? -ex : ex;
    }
    if (t != end)
        return 0;
    double v;
    if (m == 0) {
        v = 0.0;
    } else if (exact && nd <= 15 && e10 >= -22 && e10 <= 22) {
        v = e10 < 0 ? (double)m / pow10_exact[-e10] : (double)m * pow10_exact[e10];
    } else {
        size_t n = (size_t)(end - s);
        buf_reset(&p->numbuf);
        buf_append(&p->numbuf, s, n);
        v = strtod(buf_cstr(&p->numbuf), NULL);
        if (isinf(v))
            return -1;
        *out = v;
        return 1;
    }
    *out = neg ? -v : v;
    return 1;
}

static bool parse_bool(const char *s, size_t n, bool *out)
{
    static const char *const yes[] = {"t", "T", "true", "True", "TRUE"};
    static const char *const no[] = {"f", "F", "false", "False", "FALSE"};
    for (size_t i = 0; i < 5; i++) {
        if (strlen(yes[i]) == n && !memcmp(yes[i], s, n)) {
            *out = true;
            return true;
        }
        if (strlen(no[i]) == n && !memcmp(no[i], s, n)) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* --- a line ------------------------------------------------------------- */

static struct rec_tag *push_tag(struct lp_parser *p, size_t n)
{
    if (n == p->tags_cap) {
        p->tags_cap *= 2;
        p->tags = xrealloc(p->tags, p->tags_cap * sizeof *p->tags);
    }
    return &p->tags[n];
}

static struct rec_field *push_field(struct lp_parser *p, size_t n)
{
    if (n == p->fields_cap) {
        p->fields_cap *= 2;
        p->fields = xrealloc(p->fields, p->fields_cap * sizeof *p->fields);
    }
    return &p->fields[n];
}

/* Parses a field value starting at *pp into f. Returns NULL or the reason. */
static const char *parse_value(struct lp_parser *p, const char **pp, const char *end,
                               struct rec_field *f)
{
    const char *s = *pp, *q;
    const char *why;
    bool high;
    if (*s == '"') {
        q = s + 1;
        why = scan(p, &q, end, C_STR, E_STR, &f->v.s, &high);
        if (why == NUL_LINE)
            return why;
        if (why || q == end) {
            /* the string may go on on the next line */
            p->is_open_str = true;
            return why_key(p, "unbalanced quotes in the value of field", f->key);
        }
        if (high && !utf8_valid(f->v.s.ptr, f->v.s.len))
            return why_key(p, "invalid UTF-8 in the value of field", f->key);
        f->type = REC_STRING;
        q++;
        if (q < end && *q != ',' && *q != ' ')
            return why_key(p, "unexpected character after the string value of field", f->key);
        *pp = q;
        return NULL;
    }
    q = skip_tok(s, end, C_STOPNUM);
    *pp = q;
    size_t n = (size_t)(q - s);
    int rc;
    switch (*s) {
    case 't':
    case 'T':
    case 'f':
    case 'F':
        if (!parse_bool(s, n, &f->v.b))
            return why_key(p, "invalid boolean value for field", f->key);
        f->type = REC_BOOL;
        return NULL;
    case '-':
    case '.':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9': break;
    default:
        return why_key(p, "invalid value (not a number, boolean or quoted string) for field",
                       f->key);
    }
    if (q[-1] == 'i') {
        rc = parse_i64(s, q - 1, &f->v.i);
        if (rc == 0)
            return why_key(p, "invalid integer value for field", f->key);
        if (rc < 0)
            return why_key(p, "integer out of range (int64) for field", f->key);
        f->type = REC_INT;
    } else if (q[-1] == 'u') {
        rc = parse_u64(s, q - 1, &f->v.u);
        if (rc == 0)
            return why_key(p, "invalid unsigned value for field", f->key);
        if (rc < 0)
            return why_key(p, "unsigned out of range (uint64) for field", f->key);
        f->type = REC_UINT;
    } else {
        rc = parse_f64(p, s, q, &f->v.f);
        if (rc == 0)
            return why_key(p, "invalid number for field", f->key);
        if (rc < 0)
            return why_key(p, "float out of range for field", f->key);
        f->type = REC_FLOAT;
    }
    return NULL;
}

static const char *skip_spaces(const char *q, const char *end)
{
    while (q < end && *q == ' ')
        q++;
    return q;
}

/* The messages of a key's checks, per kind of key. */
struct key_msgs {
    const char *empty, *bad_utf8, *too_long, *no_equals;
};
static const struct key_msgs tag_key_msgs = {"empty tag key", "invalid UTF-8 in a tag key",
                                             "tag key too long", "missing '=' after tag key"};
static const struct key_msgs field_key_msgs = {"empty field key", "invalid UTF-8 in a field key",
                                               "field key too long", "missing '=' after field key"};

/* Scans a tag or field key and the '=' after it. Inlined: four calls a
 * line on typical data, each as short as the call itself. */
static inline __attribute__((always_inline)) const char *scan_key(struct lp_parser *p,
                                                                  const char **pq, const char *end,
                                                                  const struct key_msgs *m,
                                                                  struct slice *key)
{
    bool high;
    const char *why = scan(p, pq, end, C_KEY, E_KEY, key, &high);
    if (why)
        return why;
    if (key->len == 0)
        return m->empty;
    if (high && !utf8_valid(key->ptr, key->len))
        return m->bad_utf8;
    if (key->len > p->lim.max_key_bytes)
        return why_num(p, m->too_long, p->lim.max_key_bytes);
    if (*pq == end || **pq != '=')
        return why_key(p, m->no_equals, *key);
    ++*pq;
    return NULL;
}

/* The tag set after the measurement's comma. */
static const char *parse_tags(struct lp_parser *p, const char **pp, const char *end,
                              struct event *ev, size_t *ntags)
{
    const char *q = *pp, *why;
    bool has_host = false, high;
    struct slice key, val;
    while (q < end && *q == ',') {
        q++;
        if ((why = scan_key(p, &q, end, &tag_key_msgs, &key)))
            return why;
        if ((why = scan(p, &q, end, C_KEY, E_KEY, &val, &high)))
            return why;
        if (val.len == 0)
            return why_key(p,
                           q < end && *q == '=' ? "unescaped '=' in the value of tag"
                                                : "empty value for tag",
                           key);
        if (high && !utf8_valid(val.ptr, val.len))
            return why_key(p, "invalid UTF-8 in the value of tag", key);
        if (q < end && *q == '=')
            return why_key(p, "unescaped '=' in the value of tag", key);
        if (slice_eq(key, p->host_tag)) {
            if (has_host)
                return why_key(p, "duplicate tag key", key);
            if (val.len > p->max_name)
                return why_num(p, "host too long", p->max_name);
            has_host = true;
            ev->host = val;
            continue;
        }
        if (*ntags >= p->lim.max_tags_per_line)
            return why_num(p, "too many tags", p->lim.max_tags_per_line);
        struct rec_tag *t = push_tag(p, *ntags);
        t->key = key;
        t->value = val;
        ++*ntags;
    }
    *pp = q;
    return NULL;
}

static const char *parse_fields(struct lp_parser *p, const char **pp, const char *end,
                                size_t *nfields)
{
    const char *q = *pp, *why;
    struct slice key;
    for (;;) {
        if ((why = scan_key(p, &q, end, &field_key_msgs, &key)))
            return why;
        if (q == end || *q == ' ' || *q == ',')
            return why_key(p, "missing value for field", key);
        if (*nfields >= p->lim.max_fields_per_line)
            return why_num(p, "too many fields", p->lim.max_fields_per_line);
        struct rec_field *f = push_field(p, *nfields);
        f->key = key;
        if ((why = parse_value(p, &q, end, f)))
            return why;
        ++*nfields;
        if (q == end || *q == ' ')
            break;
        q++; /* ',' */
    }
    *pp = q;
    return NULL;
}

/* The multiplier of v: the parser's, or by magnitude with
 * LP_PRECISION_AUTO (InfluxDB 3: below 5e9 seconds, 5e12 milliseconds,
 * 5e15 microseconds, else nanoseconds). */
static int64_t unit_of(const struct lp_parser *p, int64_t v)
{
    if (p->ns_per_unit != LP_PRECISION_AUTO)
        return p->ns_per_unit;
    uint64_t a = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    return a < 5000000000ULL         ? 1000000000
           : a < 5000000000000ULL    ? 1000000
           : a < 5000000000000000ULL ? 1000
                                     : 1;
}

static const char *parse_ts(struct lp_parser *p, const char *q, const char *end, struct event *ev)
{
    int64_t v = 0;
    /* the timestamp usually ends the line: parse it whole first */
    if (parse_i64(q, end, &v) == 1 && !__builtin_mul_overflow(v, unit_of(p, v), &ev->ts)) {
        ev->has_ts = true;
        return NULL;
    }
    const char *s = q;
    while (q < end && *q != ' ')
        q++;
    int rc = parse_i64(s, q, &v);
    if (rc == 0)
        return "invalid timestamp";
    if (rc < 0 || __builtin_mul_overflow(v, unit_of(p, v), &ev->ts))
        return "timestamp out of range";
    if (skip_spaces(q, end) != end)
        return "unexpected text after the timestamp";
    ev->has_ts = true;
    return NULL;
}

static const char *parse_line(struct lp_parser *p, const char *q, const char *end, struct event *ev)
{
    const char *why;
    bool high;
    size_t ntags = 0, nfields = 0;

    buf_reset(&p->scratch);
    buf_reserve(&p->scratch, (size_t)(end - q));
    p->sp = p->scratch.data;

    if ((why = scan(p, &q, end, C_MEAS, E_MEAS, &ev->name, &high)))
        return why;
    if (ev->name.len == 0)
        return "empty measurement";
    if (high && !utf8_valid(ev->name.ptr, ev->name.len))
        return "invalid UTF-8 in the measurement";
    if (ev->name.len > p->max_name)
        return why_num(p, "measurement too long", p->max_name);
    ev->host = p->default_host;
    if ((why = parse_tags(p, &q, end, ev, &ntags)))
        return why;
    q = skip_spaces(q, end);
    if (q == end)
        return "missing fields";
    if ((why = parse_fields(p, &q, end, &nfields)))
        return why;
    long d = event_dup_field(p->fields, nfields, &p->dupbuf);
    if (d >= 0)
        return why_key(p, "duplicate field key", p->fields[d].key);
    d = event_dup_tag(p->tags, ntags, &p->dupbuf);
    if (d >= 0)
        return why_key(p, "duplicate tag key", p->tags[d].key);
    ev->has_ts = false;
    ev->ts = 0;
    q = skip_spaces(q, end);
    if (q < end && (why = parse_ts(p, q, end, ev)))
        return why;
    ev->tags = p->tags;
    ev->ntags = ntags;
    ev->fields = p->fields;
    ev->nfields = nfields;
    return NULL;
}

/* A line whose "\r\n" is already gone. */
static enum event_kind parse_stripped(struct lp_parser *p, const char *line, const char *end,
                                      struct event *ev, const char **reason)
{
    const char *q = line;
    while (q < end && (*q == ' ' || *q == '\t'))
        q++;
    if (q == end || *q == '#')
        return EVENT_NONE;
    /* Spaces before the measurement are skipped, as InfluxDB does: the
     * influx CLI's INSERT sends its point after one. A tab or other
     * whitespace there is refused (a measurement cannot start with one). */
    const char *m = line;
    while (m < end && *m == ' ')
        m++;
    const char *why = m == q ? parse_line(p, q, end, ev) : "measurement starts with whitespace";
    if (why) {
        /* A NUL stops every scan that could pass it (names, strings,
         * numbers, the timestamp): a line holding one always fails, and
         * its reason is the NUL whatever check failed first. */
        if (why != NUL_LINE && memchr(q, '\0', (size_t)(end - q)))
            why = NUL_LINE;
        *reason = why;
        return EVENT_BAD;
    }
    return EVENT_OK;
}

/* The result of the lines kept in pending, as one record. */
static enum event_kind parse_pending(struct lp_parser *p, struct event *ev, const char **reason)
{
    p->feed.first_line = p->pending_line;
    p->feed.joined = slice_make(p->pending.data, p->pending.len);
    buf_reset(&p->pending); /* the bytes stay until the next line */
    return parse_stripped(p, p->feed.joined.ptr, p->feed.joined.ptr + p->feed.joined.len, ev,
                          reason);
}

/* The line function of the feed (the splitter has stripped the "\r"). A
 * line that ends inside a string value is kept, and the next line is
 * parsed as its continuation, up to max_line_bytes in all. */
static enum event_kind lp_line(void *arg, const char *line, size_t len, struct event *ev,
                               const char **reason)
{
    struct lp_parser *p = arg;
    if (!p->pending.len) {
        p->is_open_str = false;
        enum event_kind k = parse_stripped(p, line, line + len, ev, reason);
        if (k != EVENT_BAD || !p->is_open_str || *reason == NUL_LINE)
            return k;
        buf_append(&p->pending, line, len);
        p->pending_line = p->feed.lines.line_no;
        return EVENT_NONE;
    }
    if (p->pending.len + 1 + len > p->lim.max_line_bytes) {
        p->feed.first_line = p->pending_line;
        buf_reset(&p->pending);
        *reason =
            why_num(p, "line too long (a string value spanning lines)", p->lim.max_line_bytes);
        return EVENT_BAD;
    }
    buf_putc(&p->pending, '\n');
    buf_append(&p->pending, line, len);
    p->is_open_str = false;
    size_t keep = p->pending.len;
    enum event_kind k = parse_pending(p, ev, reason);
    if (k == EVENT_BAD && p->is_open_str && *reason != NUL_LINE) {
        p->pending.len = keep; /* still open: wait for the next line */
        p->feed.first_line = 0;
        p->feed.joined = slice_make("", 0);
        return EVENT_NONE;
    }
    return k;
}

/* At the end of the body: a string value still open is unbalanced. */
static enum event_kind lp_flush(void *arg, const char *line, size_t len, struct event *ev,
                                const char **reason)
{
    (void)line;
    (void)len;
    struct lp_parser *p = arg;
    if (!p->pending.len)
        return EVENT_NONE;
    return parse_pending(p, ev, reason);
}

enum event_kind lp_parse_line(struct lp_parser *p, const char *line, size_t len, struct event *ev,
                              const char **reason)
{
    if (len && line[len - 1] == '\r')
        len--;
    return parse_stripped(p, line, line + len, ev, reason);
}

size_t lp_feed(struct lp_parser *p, const char *data, size_t len, struct event_result *out)
{
    return event_feed_next(&p->feed, data, len, out);
}

bool lp_finish(struct lp_parser *p, struct event_result *out)
{
    return event_feed_finish(&p->feed, out);
}

struct event_feed *lp_event_feed(struct lp_parser *p)
{
    return &p->feed;
}
