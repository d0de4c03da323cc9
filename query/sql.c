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
#include "query/cond.h"

#define SQL_MAX_LIST 100000                       /* items of one IN list */
#define SQL_MAX_LEAVES 1024                       /* predicates of one condition */
#define SQL_MAX_ITEMS 256                         /* SELECT items, ORDER BY keys */
#define SQL_BUCKET_MIN 1000000LL                  /* 1ms */
#define SQL_BUCKET_MAX (366LL * 86400000000000LL) /* 366d */

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
    T_TILDE,    /* ~  */
    T_TILDE_I,  /* ~* */
    T_NTILDE,   /* !~ */
    T_NTILDE_I, /* !~* */
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
    size_t leaves;
    struct sql_select *having; /* parsing its HAVING: columns are outputs */
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
        if (d == '~') {
            (*i)++;
            if (*i < len && s[*i] == '*') {
                (*i)++;
                return T_NTILDE_I;
            }
            return T_NTILDE;
        }
        return T_BAD;
    case '~':
        if (d == '*') {
            (*i)++;
            return T_TILDE_I;
        }
        return T_TILDE;
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

/* --- WHERE --- */

void sql_where_init(struct sql_where *w)
{
    memset(w, 0, sizeof(*w));
}

static void value_destroy(struct sql_value *v)
{
    free(v->s);
    v->s = NULL;
}

void sql_where_destroy(struct sql_where *w)
{
    cond_free(w->cond);
    w->cond = NULL;
    cond_derive(w); /* frees the implied sets */
    sql_where_init(w);
}

/* w->cond := w->cond AND leaf, and what it implies. */
static void where_and(struct sql_where *w, struct sql_expr *leaf)
{
    w->cond = cond_and(w->cond, leaf);
    cond_derive(w);
}

static struct sql_expr *ts_leaf(enum sql_op op, int64_t t)
{
    struct sql_expr *e = cond_leaf_new(SQL_L_CMP, SQL_COL_TS, NULL, 0);
    e->op = op;
    e->v.type = SQL_V_INT;
    e->v.i = t;
    return e;
}

void sql_where_ts_lo(struct sql_where *w, int64_t lo)
{
    where_and(w, ts_leaf(SQL_GE, lo));
}

void sql_where_ts_hi(struct sql_where *w, int64_t hi)
{
    where_and(w, ts_leaf(SQL_LE, hi));
}

static struct sql_expr *name_leaf(enum sql_col_kind col, const char *s, size_t n)
{
    struct sql_expr *e = cond_leaf_new(SQL_L_CMP, col, NULL, 0);
    e->op = SQL_EQ;
    e->v.type = SQL_V_STRING;
    e->v.s = xstrndup(s, n);
    e->v.slen = n;
    return e;
}

void sql_where_host_eq(struct sql_where *w, const char *s, size_t n)
{
    where_and(w, name_leaf(SQL_COL_HOST, s, n));
}

void sql_where_event_eq(struct sql_where *w, const char *s, size_t n)
{
    where_and(w, name_leaf(SQL_COL_EVENT, s, n));
}

int sql_where_match(struct sql_where *w, const char *q, size_t n, struct buf *err)
{
    struct sql_expr *e = cond_leaf_new(SQL_L_MATCH, SQL_COL_ANY, NULL, 0);
    e->v.type = SQL_V_STRING;
    e->v.s = xstrndup(q, n);
    e->v.slen = n;
    size_t bad;
    struct buf msg = BUF_INIT;
    int rc = cond_prepare(e, &bad, &msg);
    if (rc) {
        buf_printf(err, "error at position %zu: %s", bad + 1, buf_cstr(&msg));
        cond_free(e);
    } else {
        where_and(w, e);
    }
    buf_destroy(&msg);
    return rc;
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

/* Looks one token ahead: the type of the token after the current one. */
static enum tok_type peek(struct parser *ps)
{
    struct parser save = *ps;
    lex(ps);
    enum tok_type t = ps->t.type;
    *ps = save;
    return t;
}

static bool next_is_lp(struct parser *ps)
{
    return peek(ps) == T_LP;
}

static bool next_is_dot(struct parser *ps)
{
    return peek(ps) == T_DOT;
}

/* ts | host | event | tags.k | fields.x | x */
static int parse_column_ref(struct parser *ps, struct sql_col *out, size_t *off)
{
    memset(out, 0, sizeof(*out));
    *off = ps->t.off;
    bool bare = ps->t.type == T_IDENT;
    char *a = NULL;
    if (parse_name(ps, "a column name", &a, NULL))
        return ps->rc;
    if (accept(ps, T_DOT)) {
        bool tag = strcasecmp(a, "tags") == 0;
        if (!bare || (!tag && strcasecmp(a, "fields") != 0)) {
            free(a);
            return fail_at(ps, *off, "a dotted name must start with tags. or fields.");
        }
        free(a);
        out->kind = tag ? SQL_COL_TAG : SQL_COL_FIELD;
        return parse_name(ps, "a name after the dot", &out->name, NULL);
    }
    if (bare && strcasecmp(a, "ts") == 0)
        out->kind = SQL_COL_TS;
    else if (bare && strcasecmp(a, "host") == 0)
        out->kind = SQL_COL_HOST;
    else if (bare && strcasecmp(a, "event") == 0)
        out->kind = SQL_COL_EVENT;
    else {
        out->kind = SQL_COL_FIELD;
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

/* A leaf on col (which the leaf takes over). */
static struct sql_expr *leaf_of(enum sql_leaf_kind k, struct sql_col *col, size_t off)
{
    struct sql_expr *e = cond_leaf_new(k, col->kind, NULL, off + 1);
    e->col.name = col->name;
    col->name = NULL;
    return e;
}

static struct sql_col col_copy(const struct sql_col *c)
{
    return (struct sql_col){c->kind, c->name ? xstrdup(c->name) : NULL};
}

/* A value compared with col: a time for ts, a literal otherwise. */
static int parse_operand(struct parser *ps, const struct sql_col *col, struct sql_value *v)
{
    memset(v, 0, sizeof(*v));
    if (col->kind == SQL_COL_TS) {
        v->type = SQL_V_INT;
        return parse_time(ps, &v->i);
    }
    size_t off = ps->t.off;
    if (parse_value(ps, v))
        return ps->rc;
    bool str_col =
        col->kind == SQL_COL_HOST || col->kind == SQL_COL_EVENT || col->kind == SQL_COL_TAG;
    if (str_col && v->type != SQL_V_STRING) {
        value_destroy(v);
        return fail_at(ps, off, "%s compares with a 'string'",
                       col->kind == SQL_COL_TAG    ? "a tag"
                       : col->kind == SQL_COL_HOST ? "host"
                                                   : "event");
    }
    return ERR_OK;
}

static int cmp_leaf(struct parser *ps, struct sql_col *col, size_t off, enum sql_op op,
                    struct sql_expr **out)
{
    struct sql_value v;
    size_t voff = ps->t.off;
    if (parse_operand(ps, col, &v))
        return ps->rc;
    if (v.type == SQL_V_BOOL && op != SQL_EQ && op != SQL_NE)
        return fail_at(ps, voff, "a boolean compares only with = or !=");
    *out = leaf_of(SQL_L_CMP, col, off);
    (*out)->op = op;
    (*out)->v = v;
    return ERR_OK;
}

static int in_leaf(struct parser *ps, struct sql_col *col, size_t off, struct sql_expr **out)
{
    if (expect(ps, T_LP, "'('"))
        return ps->rc;
    struct sql_expr *e = leaf_of(SQL_L_IN, col, off);
    size_t n = 0;
    do {
        if (n++ == SQL_MAX_LIST) {
            fail_at(ps, ps->t.off, "IN list longer than %d items", SQL_MAX_LIST);
            break;
        }
        struct sql_value v;
        size_t voff = ps->t.off;
        if (parse_operand(ps, &e->col, &v))
            break;
        if (v.type == SQL_V_BOOL) {
            fail_at(ps, voff, "IN lists hold strings or numbers");
            break;
        }
        if (e->col.kind == SQL_COL_TS) {
            v.type = SQL_V_INT; /* a time */
        }
        cond_in_add(e, &v);
        value_destroy(&v);
    } while (accept(ps, T_COMMA));
    if (ps->rc || expect(ps, T_RP, "',' or ')'")) {
        cond_free(e);
        return ps->rc;
    }
    cond_in_finish(e);
    *out = e;
    return ERR_OK;
}

/* LIKE, ILIKE, ~, REGEXP, MATCH: a pattern string, checked now so that a
 * bad one is a 400 naming its position. */
static int pattern_leaf(struct parser *ps, struct sql_col *col, size_t off, enum sql_leaf_kind k,
                        bool icase, struct sql_expr **out)
{
    if (col->kind == SQL_COL_TS)
        return fail_at(ps, off, "ts is a number: compare it, do not match it");
    size_t poff = ps->t.off;
    struct sql_expr *e = leaf_of(k, col, off);
    e->icase = icase;
    e->v.type = SQL_V_STRING;
    if (parse_string_lit(ps, "a 'pattern'", &e->v.s, &e->v.slen)) {
        cond_free(e);
        return ps->rc;
    }
    size_t bad;
    struct buf msg = BUF_INIT;
    if (cond_prepare(e, &bad, &msg)) {
        /* position of the bad byte: the quote, then the pattern's bytes
         * (a doubled quote is one byte of the pattern, two of the text) */
        size_t at = poff + 1;
        for (size_t i = 0; i < bad && at < ps->len; i++)
            at += ps->s[at] == '\'' ? 2 : 1;
        fail_at(ps, at, "%s", buf_cstr(&msg));
        buf_destroy(&msg);
        cond_free(e);
        return ps->rc;
    }
    buf_destroy(&msg);
    *out = e;
    return ERR_OK;
}

static int between_leaf(struct parser *ps, struct sql_col *col, size_t off, struct sql_expr **out)
{
    struct sql_col c2 = col_copy(col);
    struct sql_expr *lo = NULL, *hi = NULL;
    if (cmp_leaf(ps, col, off, SQL_GE, &lo) || expect_kw(ps, "AND") ||
        cmp_leaf(ps, &c2, off, SQL_LE, &hi)) {
        free(c2.name);
        cond_free(lo);
        return ps->rc;
    }
    *out = cond_and(lo, hi);
    return ERR_OK;
}

static struct sql_expr *negate_if(bool neg, struct sql_expr *e)
{
    return neg ? cond_not(e) : e;
}

/* The predicate after a column: op value, [NOT] BETWEEN / IN / LIKE /
 * ILIKE / REGEXP, ~ ~* !~ !~*, MATCH, IS [NOT] NULL. */
static int parse_pred(struct parser *ps, struct sql_col *col, size_t off, struct sql_expr **out)
{
    enum sql_op op;
    if (parse_op(ps, &op))
        return cmp_leaf(ps, col, off, op, out);
    enum tok_type tt = ps->t.type;
    if (tt == T_TILDE || tt == T_TILDE_I || tt == T_NTILDE || tt == T_NTILDE_I) {
        lex(ps);
        bool icase = tt == T_TILDE_I || tt == T_NTILDE_I;
        if (pattern_leaf(ps, col, off, SQL_L_REGEX, icase, out))
            return ps->rc;
        *out = negate_if(tt == T_NTILDE || tt == T_NTILDE_I, *out);
        return ERR_OK;
    }
    if (accept_kw(ps, "IS")) {
        bool neg = accept_kw(ps, "NOT");
        if (expect_kw(ps, "NULL"))
            return ps->rc;
        *out = negate_if(neg, leaf_of(SQL_L_NULL, col, off));
        return ERR_OK;
    }
    if (accept_kw(ps, "MATCH"))
        return pattern_leaf(ps, col, off, SQL_L_MATCH, true, out);
    bool neg = accept_kw(ps, "NOT");
    int rc;
    if (accept_kw(ps, "BETWEEN"))
        rc = between_leaf(ps, col, off, out);
    else if (accept_kw(ps, "IN"))
        rc = in_leaf(ps, col, off, out);
    else if (accept_kw(ps, "LIKE"))
        rc = pattern_leaf(ps, col, off, SQL_L_LIKE, false, out);
    else if (accept_kw(ps, "ILIKE"))
        rc = pattern_leaf(ps, col, off, SQL_L_LIKE, true, out);
    else if (accept_kw(ps, "REGEXP"))
        rc = pattern_leaf(ps, col, off, SQL_L_REGEX, false, out);
    else
        return expected(ps, neg ? "BETWEEN, IN, LIKE, ILIKE or REGEXP after NOT"
                                : "a comparison, BETWEEN, IN, LIKE, ILIKE, ~, REGEXP, MATCH or "
                                  "IS NULL");
    if (rc)
        return rc;
    *out = negate_if(neg, *out);
    return ERR_OK;
}

static int parse_or(struct parser *ps, struct sql_expr **out);
static int parse_output_ref(struct parser *ps, struct sql_select *sel, size_t *idx);

/* MATCH('words') over every string of a row. */
static int match_any(struct parser *ps, size_t off, struct sql_expr **out)
{
    struct sql_col any = {SQL_COL_ANY, NULL};
    if (expect(ps, T_LP, "'('") || pattern_leaf(ps, &any, off, SQL_L_MATCH, true, out))
        return ps->rc;
    if (expect(ps, T_RP, "')'")) {
        cond_free(*out);
        *out = NULL;
    }
    return ps->rc;
}

static int parse_primary(struct parser *ps, struct sql_expr **out)
{
    *out = NULL;
    if ((ps->t.type == T_LP || tok_is_kw(&ps->t, "NOT")) && ps->depth >= SQL_MAX_DEPTH)
        return fail_at(ps, ps->t.off, "%s nested deeper than %d",
                       ps->t.type == T_LP ? "parentheses" : "NOTs", SQL_MAX_DEPTH);
    if (accept(ps, T_LP)) {
        ps->depth++;
        if (parse_or(ps, out))
            return ps->rc;
        ps->depth--;
        if (expect(ps, T_RP, "')'")) {
            cond_free(*out);
            *out = NULL;
        }
        return ps->rc;
    }
    if (tok_is_kw(&ps->t, "NOT")) {
        lex(ps);
        ps->depth++;
        int rc = parse_primary(ps, out);
        ps->depth--;
        if (rc == ERR_OK)
            *out = cond_not(*out);
        return rc;
    }
    size_t off = ps->t.off;
    if (tok_is_kw(&ps->t, "MATCH") && next_is_lp(ps)) {
        lex(ps);
        return match_any(ps, off, out);
    }
    struct sql_col col;
    if (ps->having) {
        size_t i;
        if (parse_output_ref(ps, ps->having, &i))
            return ps->rc;
        col.kind = SQL_COL_FIELD;
        col.name = xmalloc(24);
        snprintf(col.name, 24, SQL_HAVING_NAME "%zu", i);
    } else if (parse_column_ref(ps, &col, &off)) {
        return ps->rc;
    }
    int rc = parse_pred(ps, &col, off, out);
    free(col.name);
    return rc;
}

static int parse_and(struct parser *ps, struct sql_expr **out)
{
    *out = NULL;
    do {
        struct sql_expr *e;
        if (parse_primary(ps, &e)) {
            /* a sticky error (an unclosed comment met by the lexer) can
             * come after e was built */
            cond_free(e);
            cond_free(*out);
            *out = NULL;
            return ps->rc;
        }
        *out = cond_and(*out, e);
        if (++ps->leaves > SQL_MAX_LEAVES) {
            cond_free(*out);
            *out = NULL;
            return fail_at(ps, ps->t.off, "more than %d conditions", SQL_MAX_LEAVES);
        }
    } while (accept_kw(ps, "AND"));
    return ERR_OK;
}

static int parse_or(struct parser *ps, struct sql_expr **out)
{
    *out = NULL;
    do {
        struct sql_expr *e;
        if (parse_and(ps, &e)) {
            cond_free(*out);
            *out = NULL;
            return ps->rc;
        }
        *out = cond_or(*out, e);
    } while (accept_kw(ps, "OR"));
    return ERR_OK;
}

/* WHERE: the whole condition, and what it implies for the planner. */
static int parse_conds(struct parser *ps, struct sql_where *w)
{
    struct sql_expr *e;
    if (parse_or(ps, &e))
        return ps->rc;
    w->cond = cond_and(w->cond, e);
    cond_derive(w);
    return ERR_OK;
}

/* --- SELECT --- */

static void items_destroy(struct sql_item *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].col.name);
        free(v[i].name);
    }
    free(v);
}

static void select_destroy(struct sql_select *s)
{
    for (size_t i = 0; i < s->ncols; i++)
        free(s->cols[i].name);
    free(s->cols);
    sql_where_destroy(&s->where);
    items_destroy(s->items, s->nitems);
    for (size_t i = 0; i < s->ngroups; i++)
        free(s->groups[i].col.name);
    free(s->groups);
    cond_free(s->having);
    free(s->orders);
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

/* The text of a column as output names show it. */
static void col_text(const struct sql_col *c, struct buf *out)
{
    switch (c->kind) {
    case SQL_COL_TS: buf_puts(out, "ts"); break;
    case SQL_COL_HOST: buf_puts(out, "host"); break;
    case SQL_COL_EVENT: buf_puts(out, "event"); break;
    case SQL_COL_TAG: buf_printf(out, "tags.%s", c->name); break;
    default: buf_puts(out, c->name ? c->name : "*"); break;
    }
}

static const struct {
    const char *name;
    enum sql_agg agg;
} agg_names[] = {
    {"count", SQL_A_COUNT},       {"sum", SQL_A_SUM},
    {"avg", SQL_A_AVG},           {"min", SQL_A_MIN},
    {"max", SQL_A_MAX},           {"first", SQL_A_FIRST},
    {"last", SQL_A_LAST},         {"percentile", SQL_A_PERCENTILE},
    {"median", SQL_A_PERCENTILE},
};

static bool is_agg_name(const struct tok *t, enum sql_agg *agg, const char **name)
{
    for (size_t i = 0; i < sizeof(agg_names) / sizeof(agg_names[0]); i++)
        if (tok_is_kw(t, agg_names[i].name)) {
            *agg = agg_names[i].agg;
            *name = agg_names[i].name;
            return true;
        }
    return false;
}

/* A duration argument: 5m or '5m'. */
static int parse_duration_arg(struct parser *ps, int64_t *out)
{
    if (ps->t.type != T_STRING)
        return parse_duration_tok(ps, out);
    size_t n, off = ps->t.off;
    char *s = unquote(&ps->t, &n);
    int rc = sql_parse_duration(s, n, out);
    free(s);
    if (rc)
        return fail_at(ps, off, "bad duration %.*s (units ns us ms s m h d w)", (int)ps->t.n,
                       ps->t.p);
    lex(ps);
    return ERR_OK;
}

/* time_bucket(width [, offset]) after its name. */
static int parse_bucket(struct parser *ps, int64_t *width, int64_t *offset)
{
    size_t off = ps->t.off;
    *offset = 0;
    if (expect(ps, T_LP, "'('") || parse_duration_arg(ps, width))
        return ps->rc;
    if (*width < SQL_BUCKET_MIN || *width > SQL_BUCKET_MAX)
        return fail_at(ps, off + 1, "bad bucket width: between 1ms and 366d");
    if (accept(ps, T_COMMA)) {
        bool neg = accept(ps, T_MINUS);
        size_t ooff = ps->t.off;
        if (parse_duration_arg(ps, offset))
            return ps->rc;
        if (*offset >= *width)
            return fail_at(ps, ooff, "bucket offset must be smaller than its width");
        if (neg && *offset)
            *offset = *width - *offset;
    }
    return expect(ps, T_RP, "')'");
}

/* An aggregate call after its name: COUNT(*), f(col), PERCENTILE(col, p). */
static int parse_agg(struct parser *ps, enum sql_agg agg, const char *fname, struct sql_item *it)
{
    struct buf name = BUF_INIT;
    size_t off;
    if (expect(ps, T_LP, "'('"))
        return ps->rc;
    it->kind = SQL_I_AGG;
    it->agg = agg;
    if (agg == SQL_A_COUNT && accept(ps, T_STAR)) {
        it->agg = SQL_A_COUNT_STAR;
        buf_puts(&name, "count");
    } else {
        if (parse_column_ref(ps, &it->col, &off))
            return ps->rc;
        buf_printf(&name, "%s(", fname);
        col_text(&it->col, &name);
        if (strcmp(fname, "median") == 0) {
            it->p = 50;
        } else if (agg == SQL_A_PERCENTILE) {
            struct sql_value v;
            if (expect(ps, T_COMMA, "',' and a percentile (0 to 100)")) {
                buf_destroy(&name);
                return ps->rc;
            }
            size_t poff = ps->t.off;
            if (parse_value(ps, &v)) {
                buf_destroy(&name);
                return ps->rc;
            }
            it->p = v.type == SQL_V_INT ? (double)v.i : v.f;
            value_destroy(&v);
            if ((v.type != SQL_V_INT && v.type != SQL_V_FLOAT) || !(it->p >= 0 && it->p <= 100)) {
                buf_destroy(&name);
                return fail_at(ps, poff, "a percentile is a number from 0 to 100");
            }
            buf_putc(&name, ',');
            buf_printf(&name, "%g", it->p);
        }
        buf_putc(&name, ')');
    }
    it->name = buf_steal(&name, NULL);
    if (!it->name)
        it->name = xstrdup("");
    return expect(ps, T_RP, "')'");
}

/* One SELECT item: a column, an aggregate or a time bucket, maybe AS name. */
static int parse_item(struct parser *ps, struct sql_item *it)
{
    memset(it, 0, sizeof(*it));
    it->pos = ps->t.off + 1;
    enum sql_agg agg;
    const char *fname;
    size_t off;
    if (ps->t.type == T_IDENT && next_is_lp(ps) && is_agg_name(&ps->t, &agg, &fname)) {
        lex(ps);
        if (parse_agg(ps, agg, fname, it))
            return ps->rc;
    } else if (tok_is_kw(&ps->t, "time_bucket") && next_is_lp(ps)) {
        lex(ps);
        it->kind = SQL_I_BUCKET;
        it->col.kind = SQL_COL_TS;
        if (parse_bucket(ps, &it->width, &it->offset))
            return ps->rc;
        it->name = xstrdup("ts");
    } else if (ps->t.type == T_IDENT && next_is_lp(ps)) {
        return fail_at(ps, ps->t.off,
                       "unknown function '%.*s' (known: count, sum, avg, min, max, first, last, "
                       "percentile, median, time_bucket)",
                       (int)ps->t.n, ps->t.p);
    } else {
        it->kind = SQL_I_COL;
        if (parse_column_ref(ps, &it->col, &off))
            return ps->rc;
        struct buf name = BUF_INIT;
        col_text(&it->col, &name);
        it->name = buf_steal(&name, NULL);
    }
    if (accept_kw(ps, "AS")) {
        free(it->name);
        it->name = NULL;
        if (parse_name(ps, "a name after AS", &it->name, NULL))
            return ps->rc;
    }
    return ERR_OK;
}

static int parse_columns(struct parser *ps, struct sql_select *sel)
{
    if (accept(ps, T_STAR)) {
        sel->star = true;
        return ERR_OK;
    }
    do {
        if (sel->nitems == SQL_MAX_ITEMS)
            return fail_at(ps, ps->t.off, "more than %d columns", SQL_MAX_ITEMS);
        sel->items = xrealloc(sel->items, (sel->nitems + 1) * sizeof(*sel->items));
        if (parse_item(ps, &sel->items[sel->nitems])) {
            /* parse_item leaves a half-built item: count it so it is freed */
            sel->nitems++;
            return ps->rc;
        }
        sel->agg = sel->agg || sel->items[sel->nitems].kind != SQL_I_COL;
        sel->nitems++;
    } while (accept(ps, T_COMMA));
    return ERR_OK;
}

static bool col_eq(const struct sql_col *a, const struct sql_col *b)
{
    if (a->kind != b->kind)
        return false;
    return !a->name || !b->name || strcmp(a->name, b->name) == 0;
}

/* The item named name (its alias or canonical text), or -1. */
static ssize_t item_by_name(const struct sql_select *sel, const char *name, size_t n)
{
    for (size_t i = 0; i < sel->nitems; i++)
        if (strlen(sel->items[i].name) == n && strncasecmp(sel->items[i].name, name, n) == 0)
            return (ssize_t)i;
    return -1;
}

static size_t add_hidden(struct sql_select *sel, struct sql_item *it)
{
    for (size_t i = 0; i < sel->nitems; i++) {
        const struct sql_item *o = &sel->items[i];
        if (o->kind == it->kind && o->agg == it->agg && o->p == it->p &&
            (o->kind == SQL_I_BUCKET || o->agg == SQL_A_COUNT_STAR || col_eq(&o->col, &it->col)) &&
            o->width == it->width && o->offset == it->offset) {
            free(it->col.name);
            free(it->name);
            return i;
        }
    }
    it->hidden = true;
    sel->items = xrealloc(sel->items, (sel->nitems + 1) * sizeof(*sel->items));
    sel->items[sel->nitems] = *it;
    return sel->nitems++;
}

/* A reference to an output column in GROUP BY, HAVING or ORDER BY: an
 * aggregate call or time_bucket (found among the items, or added hidden),
 * a 1-based position, or a name (alias, canonical text, or a column). */
static int parse_output_ref(struct parser *ps, struct sql_select *sel, size_t *idx)
{
    size_t off = ps->t.off;
    if (ps->t.type == T_IDENT && next_is_lp(ps)) {
        struct sql_item it;
        if (parse_item(ps, &it)) {
            free(it.col.name);
            free(it.name);
            return ps->rc;
        }
        if (it.kind == SQL_I_COL) { /* not reachable: a call is never a column */
            free(it.col.name);
            free(it.name);
            return fail_at(ps, off, "expected an aggregate");
        }
        *idx = add_hidden(sel, &it);
        return ERR_OK;
    }
    if (ps->t.type == T_INT) {
        int64_t k;
        if (parse_int_tok(ps, false, &k))
            return ps->rc;
        size_t nvis = 0; /* positions are the select list's, hidden items come after */
        for (size_t i = 0; i < sel->nitems; i++)
            nvis += !sel->items[i].hidden;
        if (k < 1 || (uint64_t)k > nvis)
            return fail_at(ps, off, "column position %lld is not in the select list", (long long)k);
        *idx = (size_t)(k - 1);
        return ERR_OK;
    }
    if (ps->t.type == T_IDENT || ps->t.type == T_QIDENT) {
        size_t n;
        char *name = ps->t.type == T_QIDENT ? unquote(&ps->t, &n) : xstrndup(ps->t.p, ps->t.n);
        n = strlen(name);
        ssize_t i = item_by_name(sel, name, n);
        free(name);
        if (i >= 0 && !next_is_dot(ps)) {
            lex(ps);
            *idx = (size_t)i;
            return ERR_OK;
        }
    }
    struct sql_item it = {.kind = SQL_I_COL, .pos = off + 1};
    if (parse_column_ref(ps, &it.col, &off))
        return ps->rc;
    for (size_t i = 0; i < sel->nitems; i++)
        if (sel->items[i].kind == SQL_I_COL && col_eq(&sel->items[i].col, &it.col)) {
            free(it.col.name);
            *idx = i;
            return ERR_OK;
        }
    struct buf name = BUF_INIT;
    col_text(&it.col, &name);
    it.name = buf_steal(&name, NULL);
    *idx = add_hidden(sel, &it);
    return ERR_OK;
}

static int parse_group_by(struct parser *ps, struct sql_select *sel)
{
    do {
        size_t off = ps->t.off, i;
        if (sel->ngroups == SQL_MAX_GROUP_KEYS)
            return fail_at(ps, off, "more than %d GROUP BY keys", SQL_MAX_GROUP_KEYS);
        if (parse_output_ref(ps, sel, &i))
            return ps->rc;
        const struct sql_item *it = &sel->items[i];
        if (it->kind == SQL_I_AGG)
            return fail_at(ps, off, "cannot GROUP BY an aggregate");
        if (it->kind == SQL_I_COL && it->col.kind == SQL_COL_TS)
            return fail_at(ps, off, "GROUP BY ts needs a bucket: time_bucket('1m')");
        sel->groups = xrealloc(sel->groups, (sel->ngroups + 1) * sizeof(*sel->groups));
        struct sql_group *g = &sel->groups[sel->ngroups++];
        g->kind = it->kind;
        g->col = col_copy(&it->col);
        g->width = it->width;
        g->offset = it->offset;
    } while (accept(ps, T_COMMA));
    return ERR_OK;
}

static int parse_fill(struct parser *ps, struct sql_select *sel)
{
    size_t off = ps->t.off;
    if (expect(ps, T_LP, "'('"))
        return ps->rc;
    if (accept_kw(ps, "NULL"))
        sel->fill = SQL_FILL_NULL;
    else if (accept_kw(ps, "PREVIOUS"))
        sel->fill = SQL_FILL_PREVIOUS;
    else if (ps->t.type == T_INT && ps->t.n == 1 && ps->t.p[0] == '0') {
        lex(ps);
        sel->fill = SQL_FILL_ZERO;
    } else
        return expected(ps, "NULL, 0 or PREVIOUS");
    bool bucket = false;
    for (size_t i = 0; i < sel->ngroups; i++)
        bucket = bucket || sel->groups[i].kind == SQL_I_BUCKET;
    if (!bucket)
        return fail_at(ps, off, "FILL needs GROUP BY time_bucket(...)");
    return expect(ps, T_RP, "')'");
}

/* HAVING: a condition whose columns are output names (parse_primary
 * resolves them while ps->having is set). */

static int parse_having(struct parser *ps, struct sql_select *sel)
{
    ps->having = sel;
    int rc = parse_or(ps, &sel->having);
    ps->having = NULL;
    return rc;
}

static int parse_order(struct parser *ps, struct sql_select *sel)
{
    if (!sel->agg) {
        if (!tok_is_kw(&ps->t, "ts"))
            return expected(ps, "ts (rows are ordered by ts only)");
        lex(ps);
        sel->order = accept_kw(ps, "DESC") ? -1 : 1;
        if (sel->order == 1)
            accept_kw(ps, "ASC");
        return ERR_OK;
    }
    do {
        size_t i;
        if (sel->norders == SQL_MAX_ITEMS)
            return fail_at(ps, ps->t.off, "more than %d ORDER BY keys", SQL_MAX_ITEMS);
        if (parse_output_ref(ps, sel, &i))
            return ps->rc;
        bool desc = accept_kw(ps, "DESC");
        if (!desc)
            accept_kw(ps, "ASC");
        sel->orders = xrealloc(sel->orders, (sel->norders + 1) * sizeof(*sel->orders));
        sel->orders[sel->norders++] = (struct sql_order){i, desc};
    } while (accept(ps, T_COMMA));
    return ERR_OK;
}

/* An aggregate query's items must be aggregates, buckets or GROUP BY keys. */
static int check_agg(struct parser *ps, struct sql_select *sel)
{
    for (size_t i = 0; i < sel->nitems; i++) {
        const struct sql_item *it = &sel->items[i];
        if (it->kind == SQL_I_AGG) {
            if (it->agg != SQL_A_COUNT_STAR && it->col.kind == SQL_COL_ANY)
                return fail_at(ps, it->pos - 1, "an aggregate needs a column");
            continue;
        }
        bool grouped = false;
        for (size_t g = 0; g < sel->ngroups && !grouped; g++) {
            const struct sql_group *gr = &sel->groups[g];
            grouped = gr->kind == it->kind &&
                      (it->kind == SQL_I_BUCKET ? gr->width == it->width && gr->offset == it->offset
                                                : col_eq(&gr->col, &it->col));
        }
        if (!grouped)
            return fail_at(ps, it->pos - 1,
                           "'%s' must be in GROUP BY, or inside an aggregate such as last(...)",
                           it->name);
    }
    return ERR_OK;
}

static int parse_limit(struct parser *ps, struct sql_select *sel)
{
    if (accept_kw(ps, "LIMIT")) {
        sel->has_limit = true;
        if (parse_int_tok(ps, false, &sel->limit))
            return ps->rc;
    }
    return ERR_OK;
}

/* Plain row queries keep their column list in cols (the encoder's shape). */
static void items_to_cols(struct sql_select *sel)
{
    sel->cols = xcalloc(sel->nitems ? sel->nitems : 1, sizeof(*sel->cols));
    for (size_t i = 0; i < sel->nitems; i++) {
        sel->cols[i] = sel->items[i].col;
        sel->items[i].col.name = NULL;
    }
    sel->ncols = sel->nitems;
    items_destroy(sel->items, sel->nitems);
    sel->items = NULL;
    sel->nitems = 0;
}

static int parse_from_where(struct parser *ps, struct sql_stmt *st)
{
    if (expect_kw(ps, "FROM") || parse_name(ps, "a database name", &st->db, NULL))
        return ps->rc;
    if (accept_kw(ps, "WHERE"))
        return parse_conds(ps, &st->sel.where);
    return ERR_OK;
}

/* SELECT COUNT(*) FROM d [WHERE]: the row count of the plan. */
static bool is_plain_count(const struct sql_select *sel)
{
    return sel->nitems == 1 && sel->items[0].kind == SQL_I_AGG &&
           sel->items[0].agg == SQL_A_COUNT_STAR && strcmp(sel->items[0].name, "count") == 0 &&
           sel->ngroups == 0 && !sel->having && sel->norders == 0;
}

static int parse_select(struct parser *ps, struct sql_stmt *st)
{
    struct sql_select *sel = &st->sel;
    st->kind = SQL_SELECT;
    if (ps->t.type == T_HINT && parse_hint(ps, sel))
        return ps->rc;
    if (parse_columns(ps, sel) || parse_from_where(ps, st))
        return ps->rc;
    if (accept_kw(ps, "GROUP")) {
        if (sel->star)
            return fail_at(ps, ps->t.off, "SELECT * cannot be grouped: name the columns");
        if (expect_kw(ps, "BY") || parse_group_by(ps, sel))
            return ps->rc;
        sel->agg = true;
        if (accept_kw(ps, "FILL") && parse_fill(ps, sel))
            return ps->rc;
    }
    if (accept_kw(ps, "HAVING")) {
        if (!sel->agg)
            return fail_at(ps, ps->t.off, "HAVING needs aggregates or GROUP BY");
        if (parse_having(ps, sel))
            return ps->rc;
    }
    if (sel->agg && is_plain_count(sel)) { /* the rows' count: ORDER BY ts allowed */
        sel->count = true;
        sel->agg = false;
        items_destroy(sel->items, sel->nitems);
        sel->items = NULL;
        sel->nitems = 0;
    }
    if (accept_kw(ps, "ORDER") && (expect_kw(ps, "BY") || parse_order(ps, sel)))
        return ps->rc;
    if (sel->agg && sel->norders == 1 && sel->items[sel->orders[0].item].kind == SQL_I_BUCKET)
        sel->order = sel->orders[0].desc ? -1 : 1; /* rows come in the bucket's order */
    if (parse_limit(ps, sel))
        return ps->rc;
    if (sel->agg && check_agg(ps, sel))
        return ps->rc;
    if (!sel->agg && !sel->count && !sel->star)
        items_to_cols(sel);
    return ERR_OK;
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

/* 'k', "k" or k */
static int parse_name_or_string(struct parser *ps, const char *what, char **out, size_t *n)
{
    if (ps->t.type == T_STRING)
        return parse_string_lit(ps, what, out, n);
    return parse_name(ps, what, out, n);
}

/* SHOW HOSTS | EVENTS | TAG KEYS | TAG VALUES WITH KEY = 'k' | FIELDS
 * FROM d [WHERE ts range AND host = AND event =] [LIMIT n] */
static int parse_show_names(struct parser *ps, struct sql_stmt *st)
{
    if (!accept_kw(ps, "FROM") && !accept_kw(ps, "ON"))
        return expected(ps, "FROM and a database");
    if (parse_name(ps, "a database name", &st->db, NULL))
        return ps->rc;
    if (st->kind == SQL_SHOW_TAG_VALUES) {
        if (expect_kw(ps, "WITH") || expect_kw(ps, "KEY") || expect(ps, T_EQ, "'='") ||
            parse_name_or_string(ps, "a tag key", &st->tag_key, &st->tag_key_len))
            return ps->rc;
    }
    if (accept_kw(ps, "WHERE")) {
        size_t off = ps->t.off;
        if (parse_conds(ps, &st->sel.where))
            return ps->rc;
        if (!cond_only_key_range(st->sel.where.cond))
            return fail_at(ps, off,
                           "SHOW ... WHERE takes a ts range, host = '...' and event = '...' "
                           "joined by AND");
    }
    return parse_limit(ps, &st->sel);
}

static int parse_show(struct parser *ps, struct sql_stmt *st)
{
    if (accept_kw(ps, "DATABASES")) {
        st->kind = SQL_SHOW_DBS;
        return ERR_OK;
    }
    if (accept_kw(ps, "HOSTS"))
        st->kind = SQL_SHOW_HOSTS;
    else if (accept_kw(ps, "EVENTS"))
        st->kind = SQL_SHOW_EVENTS;
    else if (accept_kw(ps, "FIELDS"))
        st->kind = SQL_SHOW_FIELDS;
    else if (accept_kw(ps, "TAG")) {
        if (accept_kw(ps, "KEYS"))
            st->kind = SQL_SHOW_TAG_KEYS;
        else if (expect_kw(ps, "VALUES"))
            return ps->rc;
        else
            st->kind = SQL_SHOW_TAG_VALUES;
    } else
        return expected(ps, "DATABASES, HOSTS, EVENTS, TAG KEYS, TAG VALUES or FIELDS");
    return parse_show_names(ps, st);
}

static int parse_statement(struct parser *ps, struct sql_stmt *st)
{
    st->pos = ps->t.off + 1;
    if (accept_kw(ps, "SELECT"))
        return parse_select(ps, st);
    if (accept_kw(ps, "EXPLAIN")) {
        st->sel.explain = true;
        st->sel.analyze = accept_kw(ps, "ANALYZE");
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
    if (accept_kw(ps, "SHOW"))
        return parse_show(ps, st);
    return expected(ps, "SELECT, EXPLAIN, DELETE, CREATE, ALTER, DROP or SHOW");
}

static void stmt_destroy(struct sql_stmt *st)
{
    free(st->db);
    free(st->event);
    free(st->tag_key);
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
        expected(&ps, "AND, OR or end of condition");
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
