/* Tokenizer and recursive-descent parser of the SQL subset (grammar in
 * sql.h). The parser keeps one lookahead token; the first error is sticky and
 * names its 1-based position. WHERE clauses are normalised while parsing:
 * ts conditions intersect into bounds and point sets, host/event into sets. */
#include "query/sql.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "config/config.h"

#define SQL_MAX_LIST 100000 /* items of one IN list */
#define SQL_MAX_PREDS 64    /* field/tag conditions (query/filter.c uses a bit each) */

enum tok_type {
    T_EOF,
    T_IDENT,
    T_QIDENT,
    T_STRING,
    T_INT,
    T_FLOAT,
    T_DURATION,
    T_HINT,
    T_LP,
    T_RP,
    T_COMMA,
    T_SEMI,
    T_STAR,
    T_DOT,
    T_EQ,
    T_NE,
    T_LT,
    T_LE,
    T_GT,
    T_GE,
    T_MINUS,
    T_PLUS,
    T_BAD,
};

struct tok {
    enum tok_type type;
    size_t off; /* byte offset in the text */
    const char *p;
    size_t n;
};

struct parser {
    const char *s;
    size_t len;
    size_t off; /* next byte to lex */
    struct tok t;
    int64_t now;
    struct buf *err;
    int rc;
    int depth; /* parentheses open in the condition */
};

/* Parentheses a condition may nest: the parser recurses on each, so a
 * hostile statement must not run the stack out. */
#define SQL_MAX_DEPTH 64

/* --- errors --- */

static void describe_tok(const struct tok *t, struct buf *out)
{
    if (t->type == T_EOF) {
        buf_puts(out, "end of input");
        return;
    }
    size_t n = t->n > 40 ? 40 : t->n;
    buf_putc(out, '\'');
    buf_append(out, t->p, n);
    buf_puts(out, n < t->n ? "...'" : "'");
}

/* "syntax error at position N: expected WHAT, found 'TOKEN'" */
static int expected(struct parser *ps, const char *what)
{
    if (ps->rc)
        return ps->rc;
    buf_printf(ps->err, "syntax error at position %zu: expected %s, found ", ps->t.off + 1, what);
    describe_tok(&ps->t, ps->err);
    ps->rc = ERR_INVAL;
    return ps->rc;
}

__attribute__((format(printf, 3, 4))) static int fail_at(struct parser *ps, size_t off,
                                                         const char *fmt, ...)
{
    if (ps->rc)
        return ps->rc;
    buf_printf(ps->err, "error at position %zu: ", off + 1);
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(ps->err, fmt, ap);
    va_end(ap);
    ps->rc = ERR_INVAL;
    return ps->rc;
}

/* --- tokenizer --- */

static bool is_ident_start(char c)
{
    return isalpha((unsigned char)c) || c == '_';
}

static bool is_ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static bool at_comment(const struct parser *ps, size_t i)
{
    return i + 1 < ps->len && ps->s[i] == '/' && ps->s[i + 1] == '*';
}

static bool at_hint(const struct parser *ps, size_t i)
{
    return at_comment(ps, i) && i + 2 < ps->len && ps->s[i + 2] == '+';
}

/* The offset just past the comment or hint at i, or 0 if it is never
 * closed: then the error is sticky and names where the comment opens, since
 * a statement cut short by it would otherwise run without its tail. */
static size_t comment_end(struct parser *ps, size_t i)
{
    const char *end = memmem(ps->s + i + 2, ps->len - i - 2, "*/", 2);
    if (end)
        return (size_t)(end - ps->s) + 2;
    if (!ps->rc) {
        buf_printf(ps->err, "syntax error at position %zu: unterminated comment", i + 1);
        ps->rc = ERR_INVAL;
    }
    return 0;
}

static void skip_space_and_comments(struct parser *ps)
{
    const char *s = ps->s;
    for (;;) {
        while (ps->off < ps->len && isspace((unsigned char)s[ps->off]))
            ps->off++;
        if (ps->off + 1 < ps->len && s[ps->off] == '-' && s[ps->off + 1] == '-') {
            while (ps->off < ps->len && s[ps->off] != '\n')
                ps->off++;
            continue;
        }
        if (at_comment(ps, ps->off) && !at_hint(ps, ps->off)) {
            size_t end = comment_end(ps, ps->off);
            ps->off = end ? end : ps->len;
            continue;
        }
        return;
    }
}

static size_t lex_quoted(const char *s, size_t len, size_t i, char q)
{
    for (i++; i < len; i++) {
        if (s[i] == q) {
            if (i + 1 < len && s[i + 1] == q) {
                i++;
                continue;
            }
            return i + 1;
        }
    }
    return 0; /* unterminated */
}

static enum tok_type lex_number(const char *s, size_t len, size_t *i)
{
    enum tok_type type = T_INT;
    while (*i < len && isdigit((unsigned char)s[*i]))
        (*i)++;
    if (*i < len && isalpha((unsigned char)s[*i]) && s[*i] != 'e' && s[*i] != 'E') {
        while (*i < len && isalnum((unsigned char)s[*i]))
            (*i)++;
        return T_DURATION;
    }
    if (*i + 1 < len && s[*i] == '.' && isdigit((unsigned char)s[*i + 1])) {
        type = T_FLOAT;
        for ((*i)++; *i < len && isdigit((unsigned char)s[*i]);)
            (*i)++;
    }
    if (*i < len && (s[*i] == 'e' || s[*i] == 'E')) {
        size_t j = *i + 1;
        if (j < len && (s[j] == '+' || s[j] == '-'))
            j++;
        if (j < len && isdigit((unsigned char)s[j])) {
            while (j < len && isdigit((unsigned char)s[j]))
                j++;
            *i = j;
            type = T_FLOAT;
        }
    }
    return type;
}

static enum tok_type lex_punct(const char *s, size_t len, size_t *i)
{
    char c = s[*i], d = *i + 1 < len ? s[*i + 1] : 0;
    (*i)++;
    switch (c) {
    case '(': return T_LP;
    case ')': return T_RP;
    case ',': return T_COMMA;
    case ';': return T_SEMI;
    case '*': return T_STAR;
    case '.': return T_DOT;
    case '=': return T_EQ;
    case '-': return T_MINUS;
    case '+': return T_PLUS;
    case '!':
        if (d == '=') {
            (*i)++;
            return T_NE;
        }
        return T_BAD;
    case '<':
        if (d == '=' || d == '>') {
            (*i)++;
            return d == '=' ? T_LE : T_NE;
        }
        return T_LT;
    case '>':
        if (d == '=') {
            (*i)++;
            return T_GE;
        }
        return T_GT;
    default: return T_BAD;
    }
}

static void lex(struct parser *ps)
{
    skip_space_and_comments(ps);
    const char *s = ps->s;
    size_t i = ps->off;
    struct tok t = {T_EOF, i, s + i, 0};
    if (i >= ps->len) {
        ps->t = t;
        return;
    }
    char c = s[i];
    if (is_ident_start(c)) {
        while (i < ps->len && is_ident_char(s[i]))
            i++;
        t.type = T_IDENT;
    } else if (isdigit((unsigned char)c)) {
        t.type = lex_number(s, ps->len, &i);
    } else if (c == '\'' || c == '"') {
        size_t end = lex_quoted(s, ps->len, i, c);
        t.type = end ? (c == '\'' ? T_STRING : T_QIDENT) : T_BAD;
        i = end ? end : ps->len;
    } else if (at_hint(ps, i)) {
        size_t end = comment_end(ps, i);
        t.type = end ? T_HINT : T_EOF;
        i = end ? end : ps->len;
    } else {
        t.type = lex_punct(s, ps->len, &i);
    }
    t.n = i - t.off;
    ps->off = i;
    ps->t = t;
}

/* --- token helpers --- */

static bool tok_is_kw(const struct tok *t, const char *kw)
{
    return t->type == T_IDENT && strlen(kw) == t->n && strncasecmp(t->p, kw, t->n) == 0;
}

static bool accept_kw(struct parser *ps, const char *kw)
{
    if (ps->rc || !tok_is_kw(&ps->t, kw))
        return false;
    lex(ps);
    return true;
}

static int expect_kw(struct parser *ps, const char *kw)
{
    if (accept_kw(ps, kw))
        return ERR_OK;
    return expected(ps, kw);
}

static bool accept(struct parser *ps, enum tok_type type)
{
    if (ps->rc || ps->t.type != type)
        return false;
    lex(ps);
    return true;
}

static int expect(struct parser *ps, enum tok_type type, const char *what)
{
    if (accept(ps, type))
        return ERR_OK;
    return expected(ps, what);
}

/* Unquotes a '...' or "..." token (doubled quote = one quote). */
static char *unquote(const struct tok *t, size_t *n_out)
{
    char q = t->p[0];
    char *out = xmalloc(t->n);
    size_t n = 0;
    for (size_t i = 1; i + 1 < t->n; i++) {
        out[n++] = t->p[i];
        if (t->p[i] == q)
            i++;
    }
    out[n] = '\0';
    *n_out = n;
    return out;
}

/* A name: a bare identifier (not a keyword check) or a "quoted" one. */
static int parse_name(struct parser *ps, const char *what, char **out, size_t *n_out)
{
    size_t n;
    if (ps->rc)
        return ps->rc;
    if (ps->t.type == T_IDENT) {
        *out = xstrndup(ps->t.p, ps->t.n);
        n = ps->t.n;
    } else if (ps->t.type == T_QIDENT) {
        *out = unquote(&ps->t, &n);
    } else {
        return expected(ps, what);
    }
    if (n_out)
        *n_out = n;
    lex(ps);
    return ERR_OK;
}

/* --- WHERE normalisation --- */

void sql_where_init(struct sql_where *w)
{
    memset(w, 0, sizeof(*w));
}

static void strset_destroy(struct sql_strset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    free(s->len);
    memset(s, 0, sizeof(*s));
}

static void value_destroy(struct sql_value *v)
{
    free(v->s);
    v->s = NULL;
}

void sql_where_destroy(struct sql_where *w)
{
    free(w->ts);
    strset_destroy(&w->host);
    strset_destroy(&w->event);
    for (size_t i = 0; i < w->npreds; i++) {
        free(w->preds[i].name);
        value_destroy(&w->preds[i].v);
    }
    free(w->preds);
    sql_where_init(w);
}

void sql_where_ts_lo(struct sql_where *w, int64_t lo)
{
    if (!w->has_lo || lo > w->ts_lo)
        w->ts_lo = lo;
    w->has_lo = true;
}

void sql_where_ts_hi(struct sql_where *w, int64_t hi)
{
    if (!w->has_hi || hi < w->ts_hi)
        w->ts_hi = hi;
    w->has_hi = true;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Intersects the point set with the (sorted, unique after this) list. */
static void where_ts_points(struct sql_where *w, int64_t *pts, size_t n)
{
    qsort(pts, n, sizeof(*pts), cmp_i64);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || pts[u - 1] != pts[i])
            pts[u++] = pts[i];
    if (!w->has_ts_set) {
        w->has_ts_set = true;
        w->ts = pts;
        w->nts = u;
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < w->nts; i++)
        if (bsearch(&w->ts[i], pts, u, sizeof(*pts), cmp_i64))
            w->ts[k++] = w->ts[i];
    w->nts = k;
    free(pts);
}

struct name_item {
    char *s;
    size_t n;
};

static int cmp_name(const void *a, const void *b)
{
    const struct name_item *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int c = memcmp(x->s, y->s, n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

static bool strset_has(const struct sql_strset *s, const char *v, size_t n)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->len[i] == n && memcmp(s->v[i], v, n) == 0)
            return true;
    return false;
}

/* Intersects set with items (takes ownership of items and their strings). */
static void strset_intersect(struct sql_strset *set, struct name_item *items, size_t n)
{
    qsort(items, n, sizeof(*items), cmp_name);
    struct sql_strset out = {true, xcalloc(n, sizeof(char *)), xcalloc(n, sizeof(size_t)), 0};
    bool *kept = xcalloc(n, sizeof(bool));
    /* Every item stays allocated until the loop ends: the duplicate test
     * reads the previous one, kept or not. */
    for (size_t i = 0; i < n; i++) {
        bool dup = i > 0 && cmp_name(&items[i - 1], &items[i]) == 0;
        if (dup || (set->is_set && !strset_has(set, items[i].s, items[i].n)))
            continue;
        kept[i] = true;
        out.v[out.n] = items[i].s;
        out.len[out.n++] = items[i].n;
    }
    for (size_t i = 0; i < n; i++)
        if (!kept[i])
            free(items[i].s);
    free(kept);
    free(items);
    strset_destroy(set);
    *set = out;
}

void sql_where_host_eq(struct sql_where *w, const char *s, size_t n)
{
    struct name_item *it = xmalloc(sizeof(*it));
    it->s = xstrndup(s, n);
    it->n = n;
    strset_intersect(&w->host, it, 1);
}

void sql_where_event_eq(struct sql_where *w, const char *s, size_t n)
{
    struct name_item *it = xmalloc(sizeof(*it));
    it->s = xstrndup(s, n);
    it->n = n;
    strset_intersect(&w->event, it, 1);
}

/* --- literals --- */

static int parse_duration_tok(struct parser *ps, int64_t *out)
{
    if (ps->t.type != T_DURATION && !(ps->t.type == T_INT && ps->t.n == 1 && ps->t.p[0] == '0'))
        return expected(ps, "a duration such as 1h");
    if (sql_parse_duration(ps->t.p, ps->t.n, out) != ERR_OK)
        return fail_at(ps, ps->t.off, "bad duration '%.*s' (units ns us ms s m h d w)",
                       (int)ps->t.n, ps->t.p);
    lex(ps);
    return ERR_OK;
}

static int parse_int_tok(struct parser *ps, bool neg, int64_t *out)
{
    char tmp[32];
    if (ps->t.type != T_INT)
        return expected(ps, "an integer");
    if (ps->t.n > 20)
        return fail_at(ps, ps->t.off, "integer out of range");
    snprintf(tmp, sizeof(tmp), "%s%.*s", neg ? "-" : "", (int)ps->t.n, ps->t.p);
    errno = 0;
    long long v = strtoll(tmp, NULL, 10);
    if (errno)
        return fail_at(ps, ps->t.off, "integer out of range");
    *out = v;
    lex(ps);
    return ERR_OK;
}

/* now() [ (+|-) duration ] */
static int parse_now(struct parser *ps, int64_t *out)
{
    if (expect(ps, T_LP, "'('") || expect(ps, T_RP, "')'"))
        return ps->rc;
    int64_t t = ps->now, d;
    bool minus = ps->t.type == T_MINUS;
    if (accept(ps, T_MINUS) || accept(ps, T_PLUS)) {
        size_t off = ps->t.off;
        if (parse_duration_tok(ps, &d))
            return ps->rc;
        if (minus ? __builtin_sub_overflow(t, d, &t) : __builtin_add_overflow(t, d, &t))
            return fail_at(ps, off, "time out of range");
    }
    *out = t;
    return ERR_OK;
}

/* A time: integer ns, an RFC 3339 string, or now() - 1h. */
static int parse_time(struct parser *ps, int64_t *out)
{
    if (ps->rc)
        return ps->rc;
    if (accept_kw(ps, "now"))
        return parse_now(ps, out);
    bool neg = accept(ps, T_MINUS);
    if (ps->t.type == T_INT)
        return parse_int_tok(ps, neg, out);
    if (!neg && ps->t.type == T_STRING) {
        size_t n;
        char *s = unquote(&ps->t, &n);
        int rc = sql_parse_time(s, n, ps->now, out);
        free(s);
        if (rc)
            return fail_at(ps, ps->t.off, "bad time %.*s (use integer ns, RFC 3339 or now() - 1h)",
                           (int)ps->t.n, ps->t.p);
        lex(ps);
        return ERR_OK;
    }
    return expected(ps, "a time (integer ns, '2024-01-01T00:00:00Z' or now())");
}

static int parse_number(struct parser *ps, bool neg, struct sql_value *v)
{
    if (ps->t.type != T_INT && ps->t.type != T_FLOAT)
        return expected(ps, "a value");
    char *tmp = xmalloc(ps->t.n + 2);
    tmp[0] = neg ? '-' : '+';
    memcpy(tmp + 1, ps->t.p, ps->t.n);
    tmp[ps->t.n + 1] = '\0';
    errno = 0;
    v->type = SQL_V_INT;
    if (ps->t.type == T_INT)
        v->i = strtoll(tmp, NULL, 10);
    if (ps->t.type == T_FLOAT || errno) {
        v->type = SQL_V_FLOAT; /* too big for int64: keep as a float */
        v->f = strtod(tmp, NULL);
    }
    free(tmp);
    lex(ps);
    return ERR_OK;
}

/* A literal: number, 'string', true/false. */
static int parse_value(struct parser *ps, struct sql_value *v)
{
    memset(v, 0, sizeof(*v));
    if (ps->rc)
        return ps->rc;
    if (ps->t.type == T_STRING) {
        v->type = SQL_V_STRING;
        v->s = unquote(&ps->t, &v->slen);
        lex(ps);
        return ERR_OK;
    }
    if (tok_is_kw(&ps->t, "true") || tok_is_kw(&ps->t, "false")) {
        v->type = SQL_V_BOOL;
        v->b = tok_is_kw(&ps->t, "true");
        lex(ps);
        return ERR_OK;
    }
    bool neg = ps->t.type == T_MINUS;
    if (neg || ps->t.type == T_PLUS)
        lex(ps);
    return parse_number(ps, neg, v);
}

static int parse_string_lit(struct parser *ps, const char *what, char **out, size_t *n)
{
    if (ps->t.type != T_STRING)
        return expected(ps, what);
    *out = unquote(&ps->t, n);
    lex(ps);
    return ERR_OK;
}

/* --- conditions --- */

enum lhs_kind { LHS_TS, LHS_HOST, LHS_EVENT, LHS_FIELD, LHS_TAG };

struct lhs {
    enum lhs_kind kind;
    char *name;
    size_t off;
};

/* ts | host | event | tags.k | fields.x | x */
static int parse_column_ref(struct parser *ps, struct lhs *out)
{
    memset(out, 0, sizeof(*out));
    out->off = ps->t.off;
    bool bare = ps->t.type == T_IDENT;
    char *a = NULL;
    if (parse_name(ps, "a column name", &a, NULL))
        return ps->rc;
    if (accept(ps, T_DOT)) {
        bool tag = strcasecmp(a, "tags") == 0;
        if (!bare || (!tag && strcasecmp(a, "fields") != 0)) {
            free(a);
            return fail_at(ps, out->off, "a dotted name must start with tags. or fields.");
        }
        free(a);
        out->kind = tag ? LHS_TAG : LHS_FIELD;
        return parse_name(ps, "a name after the dot", &out->name, NULL);
    }
    if (bare && strcasecmp(a, "ts") == 0)
        out->kind = LHS_TS;
    else if (bare && strcasecmp(a, "host") == 0)
        out->kind = LHS_HOST;
    else if (bare && strcasecmp(a, "event") == 0)
        out->kind = LHS_EVENT;
    else {
        out->kind = LHS_FIELD;
        out->name = a;
        return ERR_OK;
    }
    free(a);
    return ERR_OK;
}

static bool parse_op(struct parser *ps, enum sql_op *op)
{
    static const struct {
        enum tok_type t;
        enum sql_op op;
    } map[] = {{T_EQ, SQL_EQ}, {T_NE, SQL_NE}, {T_LT, SQL_LT},
               {T_LE, SQL_LE}, {T_GT, SQL_GT}, {T_GE, SQL_GE}};
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        if (ps->t.type == map[i].t) {
            *op = map[i].op;
            lex(ps);
            return true;
        }
    }
    return false;
}

static int ts_compare(struct parser *ps, struct sql_where *w, enum sql_op op, size_t off)
{
    int64_t t;
    if (op == SQL_NE)
        return fail_at(ps, off, "ts supports =, <, <=, >, >=, BETWEEN and IN, not !=");
    if (parse_time(ps, &t))
        return ps->rc;
    switch (op) {
    case SQL_EQ: {
        int64_t *p = xmalloc(sizeof(*p));
        *p = t;
        where_ts_points(w, p, 1);
        break;
    }
    case SQL_LT:
        if (t == INT64_MIN)
            return fail_at(ps, off, "ts < minimum time matches nothing");
        sql_where_ts_hi(w, t - 1);
        break;
    case SQL_LE: sql_where_ts_hi(w, t); break;
    case SQL_GT:
        if (t == INT64_MAX)
            return fail_at(ps, off, "ts > maximum time matches nothing");
        sql_where_ts_lo(w, t + 1);
        break;
    case SQL_GE: sql_where_ts_lo(w, t); break;
    default: break;
    }
    return ERR_OK;
}

static int ts_in_list(struct parser *ps, struct sql_where *w)
{
    size_t n = 0, cap = 8;
    int64_t *pts = xmalloc(cap * sizeof(*pts));
    do {
        if (n == SQL_MAX_LIST) {
            fail_at(ps, ps->t.off, "IN list longer than %d items", SQL_MAX_LIST);
            break;
        }
        if (n == cap)
            pts = xrealloc(pts, (cap *= 2) * sizeof(*pts));
        if (parse_time(ps, &pts[n++]))
            break;
    } while (accept(ps, T_COMMA));
    if (ps->rc || expect(ps, T_RP, "',' or ')'")) {
        free(pts);
        return ps->rc;
    }
    where_ts_points(w, pts, n);
    return ERR_OK;
}

static int name_in_list(struct parser *ps, struct sql_strset *set)
{
    size_t n = 0, cap = 8;
    struct name_item *items = xmalloc(cap * sizeof(*items));
    do {
        if (n == SQL_MAX_LIST) {
            fail_at(ps, ps->t.off, "IN list longer than %d items", SQL_MAX_LIST);
            break;
        }
        if (n == cap)
            items = xrealloc(items, (cap *= 2) * sizeof(*items));
        if (parse_string_lit(ps, "a 'string'", &items[n].s, &items[n].n))
            break;
        n++;
    } while (accept(ps, T_COMMA));
    if (ps->rc || expect(ps, T_RP, "',' or ')'")) {
        for (size_t i = 0; i < n; i++)
            free(items[i].s);
        free(items);
        return ps->rc;
    }
    strset_intersect(set, items, n);
    return ERR_OK;
}

static int key_cond(struct parser *ps, struct sql_where *w, const struct lhs *l)
{
    struct sql_strset *set = l->kind == LHS_HOST ? &w->host : &w->event;
    const char *col = l->kind == LHS_HOST ? "host" : "event";
    if (accept_kw(ps, "IN")) {
        if (expect(ps, T_LP, "'('"))
            return ps->rc;
        return name_in_list(ps, set);
    }
    enum sql_op op;
    size_t off = ps->t.off;
    if (!parse_op(ps, &op))
        return expected(ps, "=, IN or a comparison");
    if (op != SQL_EQ)
        return fail_at(ps, off, "%s supports only = and IN", col);
    struct name_item *it = xmalloc(sizeof(*it));
    if (parse_string_lit(ps, "a 'string'", &it->s, &it->n)) {
        free(it);
        return ps->rc;
    }
    strset_intersect(set, it, 1);
    return ERR_OK;
}

static int ts_cond(struct parser *ps, struct sql_where *w)
{
    if (accept_kw(ps, "BETWEEN")) {
        int64_t a, b;
        if (parse_time(ps, &a) || expect_kw(ps, "AND") || parse_time(ps, &b))
            return ps->rc;
        sql_where_ts_lo(w, a);
        sql_where_ts_hi(w, b);
        return ERR_OK;
    }
    if (accept_kw(ps, "IN")) {
        if (expect(ps, T_LP, "'('"))
            return ps->rc;
        return ts_in_list(ps, w);
    }
    enum sql_op op;
    size_t off = ps->t.off;
    if (!parse_op(ps, &op))
        return expected(ps, "a comparison, BETWEEN or IN");
    return ts_compare(ps, w, op, off);
}

static int pred_cond(struct parser *ps, struct sql_where *w, struct lhs *l)
{
    enum sql_op op;
    if (w->npreds >= SQL_MAX_PREDS)
        return fail_at(ps, l->off, "more than %d field and tag conditions", SQL_MAX_PREDS);
    if (!parse_op(ps, &op))
        return expected(ps, "a comparison (=, !=, <, <=, >, >=)");
    struct sql_pred p = {l->kind == LHS_TAG, l->name, op, {0}};
    size_t off = ps->t.off;
    if (parse_value(ps, &p.v))
        return ps->rc;
    l->name = NULL;
    if (p.is_tag && p.v.type != SQL_V_STRING) {
        free(p.name);
        value_destroy(&p.v);
        return fail_at(ps, off, "a tag compares with a 'string'");
    }
    if (p.v.type == SQL_V_BOOL && op != SQL_EQ && op != SQL_NE) {
        free(p.name);
        return fail_at(ps, off, "a boolean compares only with = or !=");
    }
    w->preds = xrealloc(w->preds, (w->npreds + 1) * sizeof(*w->preds));
    w->preds[w->npreds++] = p;
    return ERR_OK;
}

static int parse_conds(struct parser *ps, struct sql_where *w);

static int parse_cond(struct parser *ps, struct sql_where *w)
{
    if (ps->t.type == T_LP && ps->depth >= SQL_MAX_DEPTH)
        return fail_at(ps, ps->t.off, "parentheses nested deeper than %d", SQL_MAX_DEPTH);
    if (accept(ps, T_LP)) {
        ps->depth++;
        if (parse_conds(ps, w))
            return ps->rc;
        ps->depth--;
        return expect(ps, T_RP, "')'");
    }
    struct lhs l;
    if (parse_column_ref(ps, &l))
        return ps->rc;
    int rc;
    if (l.kind == LHS_TS)
        rc = ts_cond(ps, w);
    else if (l.kind == LHS_HOST || l.kind == LHS_EVENT)
        rc = key_cond(ps, w, &l);
    else
        rc = pred_cond(ps, w, &l);
    free(l.name);
    return rc;
}

static int parse_conds(struct parser *ps, struct sql_where *w)
{
    do {
        if (parse_cond(ps, w))
            return ps->rc;
        if (tok_is_kw(&ps->t, "OR"))
            return fail_at(ps, ps->t.off, "OR is not supported; conditions join with AND");
    } while (accept_kw(ps, "AND"));
    return ERR_OK;
}

/* --- SELECT --- */

static void select_destroy(struct sql_select *s)
{
    for (size_t i = 0; i < s->ncols; i++)
        free(s->cols[i].name);
    free(s->cols);
    sql_where_destroy(&s->where);
}

static int parse_hint(struct parser *ps, struct sql_select *sel)
{
    const struct tok t = ps->t;
    lex(ps);
    const char *p = t.p + 3;
    size_t n = t.n - 5;
    while (n && isspace((unsigned char)*p))
        p++, n--;
    while (n && isspace((unsigned char)p[n - 1]))
        n--;
    if (n == 9 && strncasecmp(p, "full_scan", 9) == 0) {
        sel->full_scan_hint = true;
        return ERR_OK;
    }
    return fail_at(ps, t.off, "unknown hint '%.*s' (known: full_scan)", (int)n, p);
}

static int parse_col(struct parser *ps, struct sql_select *sel)
{
    struct lhs l;
    if (parse_column_ref(ps, &l))
        return ps->rc;
    static const enum sql_col_kind kinds[] = {SQL_COL_TS, SQL_COL_HOST, SQL_COL_EVENT,
                                              SQL_COL_FIELD, SQL_COL_TAG};
    sel->cols = xrealloc(sel->cols, (sel->ncols + 1) * sizeof(*sel->cols));
    sel->cols[sel->ncols].kind = kinds[l.kind];
    sel->cols[sel->ncols++].name = l.name;
    return ERR_OK;
}

static int parse_columns(struct parser *ps, struct sql_select *sel)
{
    if (accept(ps, T_STAR)) {
        sel->star = true;
        return ERR_OK;
    }
    if (tok_is_kw(&ps->t, "COUNT")) {
        lex(ps);
        sel->count = true;
        if (expect(ps, T_LP, "'('") || expect(ps, T_STAR, "'*'") || expect(ps, T_RP, "')'"))
            return ps->rc;
        return ERR_OK;
    }
    do {
        if (parse_col(ps, sel))
            return ps->rc;
    } while (accept(ps, T_COMMA));
    return ERR_OK;
}

static int parse_order_limit(struct parser *ps, struct sql_select *sel)
{
    if (accept_kw(ps, "ORDER")) {
        if (expect_kw(ps, "BY"))
            return ps->rc;
        if (!tok_is_kw(&ps->t, "ts"))
            return expected(ps, "ts (rows are ordered by ts only)");
        lex(ps);
        sel->order = accept_kw(ps, "DESC") ? -1 : 1;
        if (sel->order == 1)
            accept_kw(ps, "ASC");
    }
    if (accept_kw(ps, "LIMIT")) {
        sel->has_limit = true;
        if (parse_int_tok(ps, false, &sel->limit))
            return ps->rc;
    }
    return ERR_OK;
}

static int parse_from_where(struct parser *ps, struct sql_stmt *st)
{
    if (expect_kw(ps, "FROM") || parse_name(ps, "a database name", &st->db, NULL))
        return ps->rc;
    if (accept_kw(ps, "WHERE"))
        return parse_conds(ps, &st->sel.where);
    return ERR_OK;
}

static int parse_select(struct parser *ps, struct sql_stmt *st)
{
    st->kind = SQL_SELECT;
    if (ps->t.type == T_HINT && parse_hint(ps, &st->sel))
        return ps->rc;
    if (parse_columns(ps, &st->sel) || parse_from_where(ps, st))
        return ps->rc;
    return parse_order_limit(ps, &st->sel);
}

/* --- admin statements --- */

static int parse_ttl_value(struct parser *ps, int64_t *out)
{
    size_t off = ps->t.off;
    if (ps->t.type == T_STRING) {
        size_t n;
        char *s = unquote(&ps->t, &n);
        int rc = sql_parse_duration(s, n, out);
        free(s);
        if (rc)
            return fail_at(ps, off, "bad ttl %.*s (a duration such as '30d', or '0')", (int)ps->t.n,
                           ps->t.p);
        lex(ps);
        return ERR_OK;
    }
    return parse_duration_tok(ps, out);
}

static int parse_db_option(struct parser *ps, struct sql_stmt *st)
{
    size_t off = ps->t.off;
    char *name = NULL;
    if (parse_name(ps, "an option (buckets, ts_order, ttl, max_disk_bytes)", &name, NULL) ||
        expect(ps, T_EQ, "'='")) {
        free(name);
        return ps->rc;
    }
    int rc = ERR_OK;
    if (strcasecmp(name, "ttl") == 0) {
        st->has_ttl = true;
        rc = parse_ttl_value(ps, &st->ttl_ns);
    } else if (strcasecmp(name, "max_disk_bytes") == 0) {
        st->has_max_disk = true;
        off = ps->t.off;
        if (ps->t.type == T_STRING) {
            size_t n;
            char *v = unquote(&ps->t, &n);
            rc = cfg_parse_size(v, &st->max_disk_bytes) ? ERR_INVAL : ERR_OK;
            free(v);
            if (rc)
                rc = fail_at(ps, off, "bad max_disk_bytes %.*s (a size such as '10GiB', or '0')",
                             (int)ps->t.n, ps->t.p);
            else
                lex(ps);
        } else {
            int64_t v = 0;
            rc = parse_int_tok(ps, false, &v);
            if (!rc && v < 0)
                rc = fail_at(ps, off, "max_disk_bytes must be >= 0");
            st->max_disk_bytes = (uint64_t)v;
        }
    } else if (strcasecmp(name, "buckets") == 0 && st->kind == SQL_CREATE_DB) {
        st->has_buckets = true;
        off = ps->t.off;
        rc = parse_int_tok(ps, false, &st->buckets);
        if (!rc && (st->buckets < 1 || st->buckets > 1024))
            rc = fail_at(ps, off, "buckets must be 1..1024");
    } else if (strcasecmp(name, "ts_order") == 0 && st->kind == SQL_CREATE_DB) {
        st->has_ts_order = true;
        off = ps->t.off;
        bool ok = ps->t.type == T_STRING || ps->t.type == T_IDENT;
        const char *p = ps->t.type == T_STRING ? ps->t.p + 1 : ps->t.p;
        size_t n = ps->t.type == T_STRING ? ps->t.n - 2 : ps->t.n;
        if (ok && (n == 4 && strncasecmp(p, "desc", 4) == 0))
            st->ts_desc = true;
        else if (ok && n == 3 && strncasecmp(p, "asc", 3) == 0)
            st->ts_desc = false;
        else
            rc = expected(ps, "'asc' or 'desc'");
        if (!rc)
            lex(ps);
    } else {
        rc = fail_at(ps, off, "unknown option '%s' (%s)", name,
                     st->kind == SQL_CREATE_DB ? "buckets, ts_order, ttl, max_disk_bytes"
                                               : "ttl, max_disk_bytes");
    }
    free(name);
    return rc;
}

static int parse_create(struct parser *ps, struct sql_stmt *st)
{
    st->kind = SQL_CREATE_DB;
    st->ts_desc = true;
    if (expect_kw(ps, "DATABASE"))
        return ps->rc;
    if (accept_kw(ps, "IF")) {
        if (expect_kw(ps, "NOT") || expect_kw(ps, "EXISTS"))
            return ps->rc;
        st->if_not_exists = true;
    }
    if (parse_name(ps, "a database name", &st->db, NULL))
        return ps->rc;
    if (!accept_kw(ps, "WITH"))
        return ERR_OK;
    if (expect(ps, T_LP, "'('"))
        return ps->rc;
    do {
        if (parse_db_option(ps, st))
            return ps->rc;
    } while (accept(ps, T_COMMA));
    return expect(ps, T_RP, "',' or ')'");
}

static int parse_alter(struct parser *ps, struct sql_stmt *st)
{
    st->kind = SQL_ALTER_DB;
    if (expect_kw(ps, "DATABASE") || parse_name(ps, "a database name", &st->db, NULL) ||
        expect_kw(ps, "SET"))
        return ps->rc;
    if (tok_is_kw(&ps->t, "buckets") || tok_is_kw(&ps->t, "ts_order"))
        return fail_at(ps, ps->t.off,
                       "%.*s is fixed when the database is created; only ttl can change",
                       (int)ps->t.n, ps->t.p);
    if (parse_db_option(ps, st))
        return ps->rc;
    if (st->has_max_disk)
        return ERR_OK;
    /* SET ttl='1h' FOR EVENT 'debug': a per-event override ('0' removes it) */
    if (!accept_kw(ps, "FOR"))
        return ERR_OK;
    if (expect_kw(ps, "EVENT"))
        return ps->rc;
    size_t off = ps->t.off;
    if (parse_string_lit(ps, "an event name as a 'string'", &st->event, &st->event_len))
        return ps->rc;
    if (memchr(st->event, 0, st->event_len) || st->event_len > 1024)
        return fail_at(ps, off, "bad event name");
    return ERR_OK;
}

static int parse_drop(struct parser *ps, struct sql_stmt *st)
{
    st->kind = SQL_DROP_DB;
    if (expect_kw(ps, "DATABASE"))
        return ps->rc;
    if (accept_kw(ps, "IF")) {
        if (expect_kw(ps, "EXISTS"))
            return ps->rc;
        st->if_exists = true;
    }
    return parse_name(ps, "a database name", &st->db, NULL);
}

static int parse_statement(struct parser *ps, struct sql_stmt *st)
{
    st->pos = ps->t.off + 1;
    if (accept_kw(ps, "SELECT"))
        return parse_select(ps, st);
    if (accept_kw(ps, "EXPLAIN")) {
        st->sel.explain = true;
        if (expect_kw(ps, "SELECT"))
            return ps->rc;
        return parse_select(ps, st);
    }
    if (accept_kw(ps, "DELETE")) {
        st->kind = SQL_DELETE;
        if (ps->t.type == T_HINT && parse_hint(ps, &st->sel))
            return ps->rc;
        return parse_from_where(ps, st);
    }
    if (accept_kw(ps, "CREATE"))
        return parse_create(ps, st);
    if (accept_kw(ps, "ALTER"))
        return parse_alter(ps, st);
    if (accept_kw(ps, "DROP"))
        return parse_drop(ps, st);
    if (accept_kw(ps, "SHOW")) {
        st->kind = SQL_SHOW_DBS;
        return expect_kw(ps, "DATABASES");
    }
    return expected(ps, "SELECT, EXPLAIN, DELETE, CREATE, ALTER, DROP or SHOW");
}

static void stmt_destroy(struct sql_stmt *st)
{
    free(st->db);
    free(st->event);
    select_destroy(&st->sel);
}

void sql_script_destroy(struct sql_script *s)
{
    for (size_t i = 0; i < s->n; i++)
        stmt_destroy(&s->stmts[i]);
    free(s->stmts);
    s->stmts = NULL;
    s->n = 0;
}

static void parser_init(struct parser *ps, const char *s, size_t len, int64_t now, struct buf *err)
{
    memset(ps, 0, sizeof(*ps));
    ps->s = s;
    ps->len = len;
    ps->now = now;
    ps->err = err;
    lex(ps);
}

int sql_parse(const char *sql, size_t len, int64_t now_ns, struct sql_script *out, struct buf *err)
{
    struct parser ps;
    struct sql_script sc = {NULL, 0};
    parser_init(&ps, sql, len, now_ns, err);
    while (ps.t.type != T_EOF && !ps.rc) {
        if (accept(&ps, T_SEMI))
            continue;
        sc.stmts = xrealloc(sc.stmts, (sc.n + 1) * sizeof(*sc.stmts));
        struct sql_stmt *st = &sc.stmts[sc.n++];
        memset(st, 0, sizeof(*st));
        if (parse_statement(&ps, st))
            break;
        if (ps.t.type != T_EOF && ps.t.type != T_SEMI)
            expected(&ps, sc.stmts[sc.n - 1].kind == SQL_SELECT ? "';' or end of statement"
                                                                : "';' or end of input");
    }
    if (!ps.rc && sc.n == 0)
        expected(&ps, "a statement");
    if (ps.rc) {
        sql_script_destroy(&sc);
        return ps.rc;
    }
    *out = sc;
    return ERR_OK;
}

int sql_parse_where(const char *s, size_t len, int64_t now_ns, struct sql_where *out,
                    struct buf *err)
{
    struct parser ps;
    struct sql_where w;
    sql_where_init(&w);
    parser_init(&ps, s, len, now_ns, err);
    if (ps.t.type != T_EOF && !parse_conds(&ps, &w) && ps.t.type != T_EOF)
        expected(&ps, "AND or end of condition");
    if (ps.rc) {
        sql_where_destroy(&w);
        return ps.rc;
    }
    *out = w;
    return ERR_OK;
}

const char *sql_op_name(enum sql_op op)
{
    static const char *names[] = {"=", "!=", "<", "<=", ">", ">="};
    return names[op];
}
