/* The InfluxQL reader: a tokenizer and a recursive-descent parser into the
 * statement tree of iql_int.h. Identifiers are bare ([A-Za-z_][A-Za-z0-9_]*)
 * or double-quoted; strings single-quoted; regular expressions /.../ where
 * one may stand (after =~, !~, FROM, WITH ... =~); keywords any case. Errors
 * read as InfluxDB's: "error parsing query: found X, expected Y at line 1,
 * char N". */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/err.h"
#include "query/iql_int.h"
#include "query/iql_tz.h"

enum tok_type { T_EOF, T_SEMI, T_IDENT, T_QIDENT, T_STR, T_NUM, T_DUR, T_REGEX, T_OP, T_BAD };

struct tok {
    enum tok_type type;
    const char *p; /* the token's text */
    size_t n;
    char *v; /* T_QIDENT, T_STR, T_REGEX: the unescaped value (owned) */
    size_t vlen;
    double f;
    int64_t i;
    bool is_int;
};

struct ps {
    const char *s, *end, *cur;
    struct tok t;
    int64_t now;
    struct buf *err;
    int rc;
};

static void tok_clear(struct tok *t)
{
    free(t->v);
    memset(t, 0, sizeof *t);
}

/* A duration unit at p: its ns and length, or 0. */
static size_t dur_unit(const char *p, const char *end, int64_t *ns)
{
    size_t left = (size_t)(end - p);
    if (left >= 2 && p[0] == 'n' && p[1] == 's')
        return *ns = 1, 2;
    if (left >= 2 && p[0] == 'm' && p[1] == 's')
        return *ns = 1000000, 2;
    if (left >= 3 && (unsigned char)p[0] == 0xc2 && (unsigned char)p[1] == 0xb5)
        return *ns = 1000, p[2] == 's' ? 3 : 2;
    if (left >= 1 && p[0] == 'u')
        return *ns = 1000, left >= 2 && p[1] == 's' ? 2 : 1;
    static const struct {
        char c;
        int64_t ns;
    } u[] = {{'s', 1000000000LL},
             {'m', 60000000000LL},
             {'h', 3600000000000LL},
             {'d', 86400000000000LL},
             {'w', 7 * 86400000000000LL}};
    for (size_t k = 0; k < sizeof u / sizeof u[0]; k++)
        if (left >= 1 && p[0] == u[k].c)
            return *ns = u[k].ns, 1;
    return 0;
}

static bool word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* A number, or a duration (digits and a unit, repeated). */
static void lex_number(struct ps *x, struct tok *t)
{
    const char *p = x->cur;
    const char *q = p;
    while (q < x->end && isdigit((unsigned char)*q))
        q++;
    int64_t unit;
    size_t ul = q > p ? dur_unit(q, x->end, &unit) : 0;
    if (ul && (q + ul >= x->end || !word_char(q[ul]) || isdigit((unsigned char)q[ul]))) {
        int64_t total = 0;
        bool bad = false;
        const char *r = p;
        while (r < x->end && isdigit((unsigned char)*r)) {
            int64_t v = 0;
            for (; r < x->end && isdigit((unsigned char)*r); r++)
                bad |= __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *r - '0', &v);
            size_t l = dur_unit(r, x->end, &unit);
            if (!l) {
                bad = true;
                break;
            }
            r += l;
            bad |= __builtin_mul_overflow(v, unit, &v) || __builtin_add_overflow(total, v, &total);
        }
        t->type = bad || (r < x->end && word_char(*r)) ? T_BAD : T_DUR;
        t->i = total;
        t->p = p;
        t->n = (size_t)(r - p);
        x->cur = r;
        return;
    }
    /* the number's bytes, copied: the text need not end in NUL */
    const char *e = p;
    while (e < x->end && (isdigit((unsigned char)*e) || *e == '.'))
        e++;
    if (e < x->end && (*e == 'e' || *e == 'E')) {
        const char *f = e + 1;
        if (f < x->end && (*f == '+' || *f == '-'))
            f++;
        if (f < x->end && isdigit((unsigned char)*f)) {
            while (f < x->end && isdigit((unsigned char)*f))
                f++;
            e = f;
        }
    }
    char tmp[64];
    size_t len = (size_t)(e - p) < sizeof tmp - 1 ? (size_t)(e - p) : sizeof tmp - 1;
    memcpy(tmp, p, len);
    tmp[len] = '\0';
    t->f = strtod(tmp, NULL);
    t->is_int = true;
    for (const char *r = p; r < e; r++)
        if (!isdigit((unsigned char)*r))
            t->is_int = false;
    if (t->is_int) {
        t->i = 0;
        for (const char *r = p; r < e; r++)
            if (__builtin_mul_overflow(t->i, 10, &t->i) ||
                __builtin_add_overflow(t->i, *r - '0', &t->i))
                t->is_int = false;
    }
    t->type = T_NUM;
    t->p = p;
    t->n = (size_t)(e - p);
    x->cur = e;
}

/* A quoted run ending at q (one of '"', '\'', '/'): \q and \\ unescape (a
 * regex keeps other backslashes). */
static void lex_quoted(struct ps *x, struct tok *t, char q, enum tok_type type)
{
    const char *p = x->cur + 1;
    struct buf v = BUF_INIT;
    for (; p < x->end && *p != q; p++) {
        if (*p == '\\' && p + 1 < x->end) {
            if (p[1] == q || (q != '/' && p[1] == '\\')) {
                p++;
            } else if (q != '/' && p[1] == 'n') {
                buf_putc(&v, '\n');
                p++;
                continue;
            }
        }
        buf_putc(&v, *p);
    }
    t->p = x->cur;
    if (p >= x->end) {
        buf_destroy(&v);
        t->type = T_BAD;
        t->n = (size_t)(x->end - x->cur);
        x->cur = x->end;
        return;
    }
    buf_cstr(&v);
    t->vlen = v.len;
    t->v = v.data ? v.data : xstrdup("");
    t->type = type;
    t->n = (size_t)(p + 1 - x->cur);
    x->cur = p + 1;
}

static void lex(struct ps *x)
{
    tok_clear(&x->t);
    struct tok *t = &x->t;
    for (;;) {
        while (x->cur < x->end && isspace((unsigned char)*x->cur))
            x->cur++;
        if (x->end - x->cur >= 2 && x->cur[0] == '-' && x->cur[1] == '-') {
            while (x->cur < x->end && *x->cur != '\n')
                x->cur++;
            continue;
        }
        break;
    }
    const char *p = x->cur;
    t->p = p;
    if (p == x->end) {
        t->type = T_EOF;
        return;
    }
    char c = *p;
    if (c == ';') {
        t->type = T_SEMI;
        t->n = 1;
        x->cur++;
    } else if (isdigit((unsigned char)c) ||
               (c == '.' && p + 1 < x->end && isdigit((unsigned char)p[1]))) {
        lex_number(x, t);
    } else if (isalpha((unsigned char)c) || c == '_') {
        while (x->cur < x->end && word_char(*x->cur))
            x->cur++;
        t->type = T_IDENT;
        t->n = (size_t)(x->cur - p);
    } else if (c == '"') {
        lex_quoted(x, t, '"', T_QIDENT);
    } else if (c == '\'') {
        lex_quoted(x, t, '\'', T_STR);
    } else {
        static const char *const ops[] = {"=~", "!~", "!=", "<>", "<=", ">=", "::", "=", "<",
                                          ">",  "+",  "-",  "*",  "/",  "(",  ")",  ",", "."};
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            size_t l = strlen(ops[k]);
            if ((size_t)(x->end - p) >= l && memcmp(p, ops[k], l) == 0) {
                t->type = T_OP;
                t->n = l;
                x->cur += l;
                return;
            }
        }
        t->type = T_BAD;
        t->n = 1;
        x->cur++;
    }
}

/* Re-reads the current '/' token as a /regex/. */
static bool lex_regex(struct ps *x)
{
    if (x->t.type != T_OP || x->t.n != 1 || x->t.p[0] != '/')
        return false;
    x->cur = x->t.p;
    tok_clear(&x->t);
    lex_quoted(x, &x->t, '/', T_REGEX);
    return x->t.type == T_REGEX;
}

static int fail(struct ps *x, const char *expected)
{
    if (x->rc)
        return x->rc;
    buf_puts(x->err, "error parsing query: found ");
    if (x->t.type == T_EOF)
        buf_puts(x->err, "EOF");
    else
        buf_printf(x->err, "%.*s", (int)(x->t.n > 40 ? 40 : x->t.n), x->t.p);
    buf_printf(x->err, ", expected %s at line 1, char %zu", expected, (size_t)(x->t.p - x->s) + 1);
    x->rc = ERR_INVAL;
    return x->rc;
}

static int fail_msg(struct ps *x, const char *msg)
{
    if (!x->rc) {
        buf_printf(x->err, "error parsing query: %s", msg);
        x->rc = ERR_INVAL;
    }
    return x->rc;
}

static bool is_kw(const struct ps *x, const char *kw)
{
    return x->t.type == T_IDENT && x->t.n == strlen(kw) && strncasecmp(x->t.p, kw, x->t.n) == 0;
}

static bool accept_kw(struct ps *x, const char *kw)
{
    if (!is_kw(x, kw))
        return false;
    lex(x);
    return true;
}

static int expect_kw(struct ps *x, const char *kw)
{
    return accept_kw(x, kw) ? ERR_OK : fail(x, kw);
}

static bool is_op(const struct ps *x, const char *op)
{
    return x->t.type == T_OP && x->t.n == strlen(op) && memcmp(x->t.p, op, x->t.n) == 0;
}

static bool accept_op(struct ps *x, const char *op)
{
    if (!is_op(x, op))
        return false;
    lex(x);
    return true;
}

static int expect_op(struct ps *x, const char *op)
{
    return accept_op(x, op) ? ERR_OK : fail(x, op);
}

/* InfluxQL's keywords that are no bare identifier. */
static bool reserved(const struct ps *x)
{
    static const char *const kw[] = {"ALL",    "AND",     "AS",    "ASC",   "BY",     "DELETE",
                                     "DESC",   "DROP",    "FROM",  "GROUP", "INTO",   "LIMIT",
                                     "OFFSET", "ON",      "OR",    "ORDER", "SELECT", "SHOW",
                                     "SLIMIT", "SOFFSET", "WHERE", "WITH"};
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
        if (x->t.n == strlen(kw[i]) && strncasecmp(x->t.p, kw[i], x->t.n) == 0)
            return true;
    return false;
}

/* An identifier (bare or quoted), or NULL after fail(). */
static char *ident(struct ps *x)
{
    char *s = NULL;
    if (x->t.type == T_IDENT && !reserved(x))
        s = xstrndup(x->t.p, x->t.n);
    else if (x->t.type == T_QIDENT && x->t.vlen > 0)
        s = xstrdup(x->t.v);
    if (!s || strlen(s) > IQL_MAX_NAME) {
        free(s);
        fail(x, "identifier");
        return NULL;
    }
    lex(x);
    return s;
}

static int int_arg(struct ps *x, int64_t *out)
{
    if (x->t.type != T_NUM || !x->t.is_int)
        return fail(x, "integer");
    *out = x->t.i;
    lex(x);
    return ERR_OK;
}

/* --- expressions --- */

static struct iql_ex *ex_new(enum iql_ex_kind kind)
{
    struct iql_ex *e = xcalloc(1, sizeof *e);
    e->kind = kind;
    return e;
}

void iql_ex_free(struct iql_ex *e)
{
    if (!e)
        return;
    free(e->s);
    iql_ex_free(e->l);
    iql_ex_free(e->r);
    for (size_t i = 0; i < e->nargs; i++)
        iql_ex_free(e->args[i]);
    free(e->args);
    free(e);
}

static struct iql_ex *bin(enum iql_op op, struct iql_ex *l, struct iql_ex *r)
{
    struct iql_ex *e = ex_new(IQL_X_BIN);
    e->op = op;
    e->l = l;
    e->r = r;
    return e;
}

static struct iql_ex *expr(struct ps *x);

static struct iql_ex *call(struct ps *x, char *name)
{
    struct iql_ex *e = ex_new(IQL_X_CALL);
    e->s = name;
    if (accept_op(x, ")"))
        return e;
    do {
        struct iql_ex *a = expr(x);
        if (!a) {
            iql_ex_free(e);
            return NULL;
        }
        e->args = xrealloc(e->args, (e->nargs + 1) * sizeof *e->args);
        e->args[e->nargs++] = a;
    } while (!x->rc && e->nargs < 8 && accept_op(x, ","));
    if (expect_op(x, ")")) {
        iql_ex_free(e);
        return NULL;
    }
    return e;
}

static struct iql_ex *var_or_call(struct ps *x)
{
    bool bare = x->t.type == T_IDENT;
    char *name = ident(x);
    if (!name)
        return NULL;
    if (bare && is_op(x, "(")) {
        lex(x);
        if (strcasecmp(name, "now") == 0) {
            free(name);
            return expect_op(x, ")") ? NULL : ex_new(IQL_X_NOW);
        }
        for (char *c = name; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        return call(x, name);
    }
    struct iql_ex *e = ex_new(IQL_X_VAR);
    e->s = name;
    if (accept_op(x, "::")) { /* a type cast: ::field, ::tag, ::float ... */
        char *ty = ident(x);
        if (!ty) {
            iql_ex_free(e);
            return NULL;
        }
        e->cast = strcasecmp(ty, "tag") == 0 ? IQL_CAST_TAG : IQL_CAST_FIELD;
        free(ty);
    }
    return e;
}

static struct iql_ex *primary(struct ps *x)
{
    struct iql_ex *e;
    if (x->rc)
        return NULL;
    switch (x->t.type) {
    case T_NUM:
        e = ex_new(IQL_X_NUM);
        e->f = x->t.f;
        e->i = x->t.i;
        e->is_int = x->t.is_int;
        lex(x);
        return e;
    case T_DUR:
        e = ex_new(IQL_X_DUR);
        e->i = x->t.i;
        lex(x);
        return e;
    case T_STR:
        e = ex_new(IQL_X_STR);
        e->s = xstrdup(x->t.v);
        lex(x);
        return e;
    case T_IDENT:
        if (is_kw(x, "true") || is_kw(x, "false")) {
            e = ex_new(IQL_X_BOOL);
            e->b = is_kw(x, "true");
            lex(x);
            return e;
        }
        return var_or_call(x);
    case T_QIDENT: return var_or_call(x);
    default: break;
    }
    if (accept_op(x, "*"))
        return ex_new(IQL_X_STAR);
    if (accept_op(x, "(")) {
        e = expr(x);
        if (e && expect_op(x, ")")) {
            iql_ex_free(e);
            return NULL;
        }
        return e;
    }
    if (lex_regex(x)) {
        e = ex_new(IQL_X_REGEX);
        e->s = xstrdup(x->t.v);
        lex(x);
        return e;
    }
    fail(x, "identifier, string, number, bool");
    return NULL;
}

static struct iql_ex *unary(struct ps *x)
{
    if (accept_op(x, "-")) {
        struct iql_ex *e = unary(x);
        if (!e)
            return NULL;
        if (e->kind == IQL_X_NUM || e->kind == IQL_X_DUR) {
            e->f = -e->f;
            e->i = -e->i;
            return e;
        }
        struct iql_ex *z = ex_new(IQL_X_NUM);
        z->is_int = true;
        return bin(IQL_O_SUB, z, e);
    }
    return primary(x);
}

struct opdef {
    const char *text;
    enum iql_op op;
};

static const struct opdef mul_ops[] = {{"*", IQL_O_MUL}, {"/", IQL_O_DIV}, {NULL, 0}};
static const struct opdef add_ops[] = {{"+", IQL_O_ADD}, {"-", IQL_O_SUB}, {NULL, 0}};
static const struct opdef cmp_ops[] = {{"=~", IQL_O_RE}, {"!~", IQL_O_NRE}, {"!=", IQL_O_NE},
                                       {"<>", IQL_O_NE}, {"<=", IQL_O_LE},  {">=", IQL_O_GE},
                                       {"=", IQL_O_EQ},  {"<", IQL_O_LT},   {">", IQL_O_GT},
                                       {NULL, 0}};

static const struct opdef *match_op(struct ps *x, const struct opdef *ops)
{
    for (; ops->text; ops++)
        if (is_op(x, ops->text))
            return ops;
    return NULL;
}

static struct iql_ex *level(struct ps *x, int lv);

/* Binary levels: 0 OR, 1 AND, 2 comparisons, 3 + -, 4 * /. */
static struct iql_ex *level(struct ps *x, int lv)
{
    if (lv == 5)
        return unary(x);
    struct iql_ex *l = level(x, lv + 1);
    while (l && !x->rc) {
        enum iql_op op;
        if (lv == 0 && is_kw(x, "OR")) {
            op = IQL_O_OR;
        } else if (lv == 1 && is_kw(x, "AND")) {
            op = IQL_O_AND;
        } else {
            const struct opdef *d = lv < 2 ? NULL
                                           : match_op(x, lv == 2   ? cmp_ops
                                                         : lv == 3 ? add_ops
                                                                   : mul_ops);
            if (!d)
                break;
            op = d->op;
        }
        lex(x);
        struct iql_ex *r = level(x, lv + 1);
        if (!r) {
            iql_ex_free(l);
            return NULL;
        }
        l = bin(op, l, r);
        if (lv == 2) /* comparisons do not chain */
            break;
    }
    if (x->rc) {
        iql_ex_free(l);
        return NULL;
    }
    return l;
}

static struct iql_ex *expr(struct ps *x)
{
    return level(x, 0);
}

/* --- clauses --- */

static void stmt_free(struct iql_stmt *st)
{
    free(st->db);
    for (size_t i = 0; i < st->nfields; i++) {
        iql_ex_free(st->fields[i].ex);
        free(st->fields[i].alias);
    }
    free(st->fields);
    for (size_t i = 0; i < st->nfrom; i++) {
        free(st->from[i].db);
        free(st->from[i].name);
    }
    free(st->from);
    iql_ex_free(st->where);
    for (size_t i = 0; i < st->ngroup_tags; i++)
        free(st->group_tags[i]);
    free(st->group_tags);
    for (size_t i = 0; i < st->nkeys; i++)
        free(st->keys[i]);
    free(st->keys);
    free(st->key_re);
    free(st->tz);
}

static int select_fields(struct ps *x, struct iql_stmt *st)
{
    do {
        struct iql_ex *e = level(x, 3);
        if (!e)
            return fail(x, "field");
        st->fields = xrealloc(st->fields, (st->nfields + 1) * sizeof *st->fields);
        st->fields[st->nfields++] = (struct iql_field){e, NULL};
        if (accept_kw(x, "AS")) {
            char *a = ident(x);
            if (!a)
                return x->rc;
            st->fields[st->nfields - 1].alias = a;
        }
    } while (st->nfields < 256 && accept_op(x, ","));
    return x->rc;
}

/* One FROM source: name, "db"."rp"."m", db..m, or /regex/. */
static int source(struct ps *x, struct iql_stmt *st)
{
    struct iql_source src = {0};
    if (lex_regex(x)) {
        src.name = xstrdup(x->t.v);
        src.is_regex = true;
        lex(x);
    } else {
        char *parts[3] = {NULL, NULL, NULL};
        size_t n = 0;
        for (;;) {
            if (n > 0 && is_op(x, ".")) { /* db..m: the default policy */
                parts[n++] = xstrdup("");
            } else {
                if (n > 0 && lex_regex(x)) {
                    parts[n++] = NULL;
                    src.is_regex = true;
                    src.name = xstrdup(x->t.v);
                    lex(x);
                    break;
                }
                parts[n] = ident(x);
                if (!parts[n])
                    break;
                n++;
            }
            if (n == 3 || !accept_op(x, "."))
                break;
        }
        if (x->rc) {
            for (size_t i = 0; i < 3; i++)
                free(parts[i]);
            return x->rc;
        }
        if (!src.is_regex)
            src.name = parts[--n];
        if ((!src.is_regex && n >= 2) || (src.is_regex && n == 3)) {
            src.db = parts[0];
            parts[0] = NULL;
        }
        for (size_t i = 0; i < 3; i++)
            if (parts[i] != src.name)
                free(parts[i]);
    }
    st->from = xrealloc(st->from, (st->nfrom + 1) * sizeof *st->from);
    st->from[st->nfrom++] = src;
    return ERR_OK;
}

static int from_clause(struct ps *x, struct iql_stmt *st)
{
    do {
        if (source(x, st))
            return x->rc;
    } while (st->nfrom < 64 && accept_op(x, ","));
    return ERR_OK;
}

static int where_clause(struct ps *x, struct iql_stmt *st)
{
    if (!accept_kw(x, "WHERE"))
        return ERR_OK;
    st->where = expr(x);
    return st->where ? ERR_OK : fail(x, "expression");
}

static int duration_arg(struct ps *x, int64_t *out)
{
    if (x->t.type != T_DUR)
        return fail(x, "duration");
    *out = x->t.i;
    lex(x);
    return ERR_OK;
}

static int group_time(struct ps *x, struct iql_stmt *st)
{
    if (st->has_time_group)
        return fail_msg(x, "time() is a function and expects at most 2 arguments");
    st->has_time_group = true;
    if (duration_arg(x, &st->interval))
        return x->rc;
    if (st->interval <= 0)
        return fail_msg(x, "time dimension must have a positive duration");
    if (accept_op(x, ",")) {
        bool neg = accept_op(x, "-");
        if (duration_arg(x, &st->offset))
            return x->rc;
        if (neg)
            st->offset = -st->offset;
    }
    return expect_op(x, ")");
}

static int group_by(struct ps *x, struct iql_stmt *st)
{
    if (!accept_kw(x, "GROUP"))
        return ERR_OK;
    if (expect_kw(x, "BY"))
        return x->rc;
    do {
        if (accept_op(x, "*")) {
            st->group_all = true;
        } else if (is_kw(x, "time")) {
            lex(x);
            if (expect_op(x, "(") || group_time(x, st))
                return x->rc;
        } else if (lex_regex(x)) {
            return fail_msg(x, "GROUP BY /regex/ is not supported: name the tags");
        } else {
            char *t = ident(x);
            if (!t)
                return x->rc;
            if (accept_op(x, "::")) { /* "host"::tag */
                char *ty = ident(x);
                free(ty);
                if (!ty) {
                    free(t);
                    return x->rc;
                }
            }
            st->group_tags = xrealloc(st->group_tags, (st->ngroup_tags + 1) * sizeof(char *));
            st->group_tags[st->ngroup_tags++] = t;
        }
    } while (st->ngroup_tags < 32 && accept_op(x, ","));
    return ERR_OK;
}

static int fill_clause(struct ps *x, struct iql_stmt *st)
{
    if (!is_kw(x, "fill"))
        return ERR_OK;
    lex(x);
    if (expect_op(x, "("))
        return x->rc;
    bool neg = accept_op(x, "-");
    if (x->t.type == T_NUM) {
        st->fill = IQL_FILL_VALUE;
        st->fill_value = neg ? -x->t.f : x->t.f;
        lex(x);
    } else if (!neg && accept_kw(x, "null")) {
        st->fill = IQL_FILL_NULL;
    } else if (!neg && accept_kw(x, "none")) {
        st->fill = IQL_FILL_NONE;
    } else if (!neg && accept_kw(x, "previous")) {
        st->fill = IQL_FILL_PREVIOUS;
    } else if (!neg && accept_kw(x, "linear")) {
        st->fill = IQL_FILL_LINEAR;
    } else {
        return fail(x, "null, none, previous, linear or a number");
    }
    return expect_op(x, ")");
}

static int order_by(struct ps *x, struct iql_stmt *st)
{
    if (!accept_kw(x, "ORDER"))
        return ERR_OK;
    if (expect_kw(x, "BY"))
        return x->rc;
    if (!accept_kw(x, "time"))
        return fail_msg(x, "only ORDER BY time supported at this time");
    if (accept_kw(x, "DESC"))
        st->desc = true;
    else
        accept_kw(x, "ASC");
    return ERR_OK;
}

static int limits(struct ps *x, struct iql_stmt *st)
{
    for (;;) {
        int64_t *slot = accept_kw(x, "LIMIT")     ? &st->limit
                        : accept_kw(x, "OFFSET")  ? &st->offset_rows
                        : accept_kw(x, "SLIMIT")  ? &st->slimit
                        : accept_kw(x, "SOFFSET") ? &st->soffset
                                                  : NULL;
        if (!slot)
            return ERR_OK;
        if (int_arg(x, slot))
            return x->rc;
    }
}

static int tz_clause(struct ps *x, struct iql_stmt *st)
{
    if (!is_kw(x, "tz"))
        return ERR_OK;
    lex(x);
    if (expect_op(x, "("))
        return x->rc;
    if (x->t.type != T_STR)
        return fail(x, "string");
    st->has_tz = true;
    st->tz = xstrdup(x->t.v);
    if (strcmp(st->tz, "UTC") != 0) { /* InfluxDB refuses an unknown zone as it parses */
        struct iql_tz *z;
        struct buf msg = BUF_INIT;
        if (iql_tz_load(st->tz, &z, &msg)) {
            fail_msg(x, buf_cstr(&msg));
            buf_destroy(&msg);
            return x->rc;
        }
        buf_destroy(&msg);
        iql_tz_free(z);
    }
    lex(x);
    return expect_op(x, ")");
}

static int parse_select(struct ps *x, struct iql_stmt *st)
{
    st->kind = IQL_SELECT;
    if (select_fields(x, st))
        return x->rc;
    if (is_kw(x, "INTO"))
        return fail_msg(x, "SELECT INTO is not supported by logbucket");
    if (expect_kw(x, "FROM") || from_clause(x, st) || where_clause(x, st) || group_by(x, st) ||
        fill_clause(x, st) || order_by(x, st) || limits(x, st) || tz_clause(x, st))
        return x->rc;
    return ERR_OK;
}

static int on_db(struct ps *x, struct iql_stmt *st)
{
    if (!accept_kw(x, "ON"))
        return ERR_OK;
    st->db = ident(x);
    return x->rc;
}

static int name_list(struct ps *x, struct iql_stmt *st)
{
    do {
        char *k = ident(x);
        if (!k)
            return x->rc;
        st->keys = xrealloc(st->keys, (st->nkeys + 1) * sizeof(char *));
        st->keys[st->nkeys++] = k;
    } while (st->nkeys < 1024 && accept_op(x, ","));
    return ERR_OK;
}

/* WITH KEY | MEASUREMENT (= name | != name | =~ /re/ | !~ /re/ | IN (...)) */
static int with_name(struct ps *x, struct iql_stmt *st, bool in_ok)
{
    if (in_ok && accept_kw(x, "IN")) {
        if (expect_op(x, "(") || name_list(x, st))
            return x->rc;
        return expect_op(x, ")");
    }
    bool re = is_op(x, "=~") || is_op(x, "!~");
    st->key_neg = is_op(x, "!=") || is_op(x, "<>") || is_op(x, "!~");
    if (!re && !is_op(x, "=") && !st->key_neg)
        return fail(x, "=, !=, =~, !~ or IN");
    lex(x);
    if (re) {
        if (!lex_regex(x))
            return fail(x, "regex");
        st->key_re = xstrdup(x->t.v);
        lex(x);
        return ERR_OK;
    }
    char *k = ident(x);
    if (!k)
        return x->rc;
    st->keys = xmalloc(sizeof(char *));
    st->keys[0] = k;
    st->nkeys = 1;
    return ERR_OK;
}

static int show_tail(struct ps *x, struct iql_stmt *st, bool from)
{
    if (on_db(x, st))
        return x->rc;
    if (from && accept_kw(x, "FROM") && from_clause(x, st))
        return x->rc;
    if (st->kind == IQL_SHOW_TAG_VALUES) {
        if (expect_kw(x, "WITH") || expect_kw(x, "KEY") || with_name(x, st, true))
            return x->rc;
    }
    if (st->kind == IQL_SHOW_MEASUREMENTS && accept_kw(x, "WITH")) {
        if (expect_kw(x, "MEASUREMENT") || with_name(x, st, false))
            return x->rc;
    }
    if (where_clause(x, st) || limits(x, st))
        return x->rc;
    return ERR_OK;
}

static int parse_show(struct ps *x, struct iql_stmt *st)
{
    if (accept_kw(x, "DATABASES")) {
        st->kind = IQL_SHOW_DBS;
        return ERR_OK;
    }
    if (accept_kw(x, "MEASUREMENTS")) {
        st->kind = IQL_SHOW_MEASUREMENTS;
        return show_tail(x, st, false);
    }
    if (accept_kw(x, "MEASUREMENT")) {
        st->exact = accept_kw(x, "EXACT");
        if (expect_kw(x, "CARDINALITY"))
            return x->rc;
        st->kind = IQL_SHOW_MEAS_CARD;
        return show_tail(x, st, false);
    }
    if (accept_kw(x, "TAG")) {
        if (accept_kw(x, "KEYS"))
            st->kind = IQL_SHOW_TAG_KEYS;
        else if (accept_kw(x, "VALUES"))
            st->kind = IQL_SHOW_TAG_VALUES;
        else
            return fail(x, "KEYS, VALUES");
        return show_tail(x, st, true);
    }
    if (accept_kw(x, "FIELD")) {
        if (expect_kw(x, "KEYS"))
            return x->rc;
        st->kind = IQL_SHOW_FIELD_KEYS;
        return show_tail(x, st, true);
    }
    if (accept_kw(x, "SERIES")) {
        st->kind = IQL_SHOW_SERIES;
        return show_tail(x, st, true);
    }
    if (accept_kw(x, "RETENTION")) {
        if (expect_kw(x, "POLICIES"))
            return x->rc;
        st->kind = IQL_SHOW_RPS;
        return on_db(x, st);
    }
    return fail(x, "DATABASES, FIELD, MEASUREMENT, MEASUREMENTS, RETENTION, SERIES, TAG");
}

/* WITH [DURATION d] [REPLICATION n] [SHARD DURATION d] [NAME ident]: the
 * duration becomes the database's TTL. */
static int create_with(struct ps *x, struct iql_stmt *st)
{
    bool any = false;
    for (;;) {
        int64_t v;
        if (accept_kw(x, "DURATION")) {
            st->has_ttl = true;
            if (accept_kw(x, "INF"))
                st->ttl_ns = 0;
            else if (duration_arg(x, &st->ttl_ns))
                return x->rc;
        } else if (accept_kw(x, "REPLICATION")) {
            if (int_arg(x, &v))
                return x->rc;
        } else if (accept_kw(x, "SHARD")) {
            if (expect_kw(x, "DURATION") || duration_arg(x, &v))
                return x->rc;
        } else if (accept_kw(x, "NAME")) {
            char *n = ident(x);
            if (!n)
                return x->rc;
            free(n);
        } else {
            return any ? ERR_OK : fail(x, "DURATION, NAME, REPLICATION, SHARD");
        }
        any = true;
    }
}

static int parse_statement(struct ps *x, struct iql_stmt *st)
{
    if (accept_kw(x, "SELECT"))
        return parse_select(x, st);
    if (accept_kw(x, "SHOW"))
        return parse_show(x, st);
    if (accept_kw(x, "CREATE")) {
        if (!accept_kw(x, "DATABASE"))
            return fail(x, "DATABASE (logbucket creates nothing else)");
        st->kind = IQL_CREATE_DB;
        if (!(st->db = ident(x)))
            return x->rc;
        return accept_kw(x, "WITH") ? create_with(x, st) : ERR_OK;
    }
    if (accept_kw(x, "DROP")) {
        if (accept_kw(x, "DATABASE")) {
            st->kind = IQL_DROP_DB;
            st->db = ident(x);
            return x->rc;
        }
        if (!accept_kw(x, "MEASUREMENT"))
            return fail(x, "DATABASE, MEASUREMENT");
        st->kind = IQL_DROP_MEASUREMENT;
        return source(x, st);
    }
    if (accept_kw(x, "DELETE")) {
        st->kind = IQL_DELETE;
        if (accept_kw(x, "FROM") && from_clause(x, st))
            return x->rc;
        if (where_clause(x, st))
            return x->rc;
        if (!st->nfrom && !st->where)
            return fail(x, "FROM or WHERE");
        return ERR_OK;
    }
    /* statements of InfluxDB's that logbucket does not run: said so, not
     * "expected" among the others (README, "InfluxQL") */
    static const char *const unsupported[] = {"EXPLAIN", "GRANT", "REVOKE", "ALTER", "SET", "KILL"};
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++)
        if (is_kw(x, unsupported[i])) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "%s statements are not supported by logbucket (its InfluxQL runs SELECT, "
                     "DELETE, SHOW, CREATE DATABASE and DROP)",
                     unsupported[i]);
            return fail_msg(x, msg);
        }
    return fail(x, "SELECT, DELETE, SHOW, CREATE, DROP");
}

void iql_script_free(struct iql_script *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        stmt_free(&s->stmts[i]);
    free(s->stmts);
    free(s);
}

int iql_parse(const char *q, size_t len, int64_t now_ns, struct iql_script **out, struct buf *err)
{
    struct ps x = {q, q + len, q, {0}, now_ns, err, 0};
    struct iql_script *s = xcalloc(1, sizeof *s);
    lex(&x);
    while (!x.rc && x.t.type != T_EOF) {
        if (accept_op(&x, ";") || x.t.type == T_SEMI) {
            if (x.t.type == T_SEMI)
                lex(&x);
            continue;
        }
        if (s->n == IQL_MAX_STMTS) {
            fail_msg(&x, "too many statements in one query (at most 64)");
            break;
        }
        s->stmts = xrealloc(s->stmts, (s->n + 1) * sizeof *s->stmts);
        memset(&s->stmts[s->n], 0, sizeof s->stmts[0]);
        s->n++;
        if (parse_statement(&x, &s->stmts[s->n - 1]))
            break;
        if (x.t.type != T_SEMI && x.t.type != T_EOF)
            fail(&x, ";");
    }
    if (!x.rc && s->n == 0) {
        buf_puts(err, "missing required parameter \"q\"");
        x.rc = ERR_INVAL;
    }
    tok_clear(&x.t);
    if (x.rc) {
        iql_script_free(s);
        return x.rc;
    }
    *out = s;
    return ERR_OK;
}

size_t iql_count(const struct iql_script *s)
{
    return s->n;
}

enum iql_right iql_right_of(const struct iql_script *s, size_t i, const char **db)
{
    const struct iql_stmt *st = &s->stmts[i];
    *db = st->db;
    if (st->nfrom && st->from[0].db)
        *db = st->from[0].db;
    switch (st->kind) {
    case IQL_CREATE_DB:
    case IQL_DROP_DB: return IQL_ADMIN;
    case IQL_DROP_MEASUREMENT:
    case IQL_DELETE: return IQL_WRITE;
    case IQL_SHOW_DBS: *db = NULL; return IQL_READ;
    default: return IQL_READ;
    }
}
