/* InfluxQL's WHERE onto query/cond.h: `time` is ts, the host tag is host,
 * the measurement's tag keys are tags and every other name a field. A tag
 * a row lacks is the empty string, as InfluxDB has it: tag = '' and
 * tag != 'x' hold for such a row. Also the measurement lists of FROM (a
 * /regex/ is matched against the database's events). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/err.h"
#include "query/cond.h"
#include "query/iql_int.h"
#include "store/store.h"

bool iql_is_time(const struct iql_ex *e)
{
    return e && e->kind == IQL_X_VAR && strcasecmp(e->s, "time") == 0;
}

bool iql_str_in(char *const *v, size_t n, const char *s)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(v[mid], s);
        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

int iql_time_value(const struct iql_ctx *c, const struct iql_ex *e, int64_t *out)
{
    int64_t a, b;
    switch (e->kind) {
    case IQL_X_NOW: *out = c->now; return ERR_OK;
    case IQL_X_DUR: *out = e->i; return ERR_OK;
    case IQL_X_NUM:
        if (!e->is_int && !(e->f > -9.2e18 && e->f < 9.2e18))
            return ERR_INVAL;
        *out = e->is_int ? e->i : (int64_t)e->f;
        return ERR_OK;
    case IQL_X_STR: return sql_parse_time(e->s, strlen(e->s), c->now, out);
    case IQL_X_BIN:
        if (e->op != IQL_O_ADD && e->op != IQL_O_SUB)
            return ERR_INVAL;
        if (iql_time_value(c, e->l, &a) || iql_time_value(c, e->r, &b))
            return ERR_INVAL;
        if (e->op == IQL_O_ADD ? __builtin_add_overflow(a, b, out)
                               : __builtin_sub_overflow(a, b, out))
            return ERR_INVAL;
        return ERR_OK;
    default: return ERR_INVAL;
    }
}

void iql_names_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void iql_names_unique(char **v, size_t *n)
{
    if (*n == 0)
        return;
    qsort(v, *n, sizeof *v, cmp_str);
    size_t k = 1;
    for (size_t i = 1; i < *n; i++) {
        if (strcmp(v[i], v[k - 1]) == 0)
            free(v[i]);
        else
            v[k++] = v[i];
    }
    *n = k;
}

struct names {
    char **v;
    size_t n, cap;
    const struct sql_expr *re; /* NULL: every name */
    struct cond_row row;
    int rc;
};

static void names_push(struct names *ns, const char *s, size_t len)
{
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? ns->cap * 2 : 16;
        ns->v = xrealloc(ns->v, ns->cap * sizeof(char *));
    }
    ns->v[ns->n++] = xstrndup(s, len);
}

static int name_cb(void *arg, struct slice name, int type)
{
    (void)type;
    struct names *ns = arg;
    if (ns->re) {
        cond_row_set(&ns->row, 0, slice_make("", 0), name, slice_make("", 0), slice_make("", 0));
        int rc = 0;
        bool ok = cond_match(ns->re, &ns->row, &rc);
        if (rc)
            return rc;
        if (!ok)
            return 0;
    }
    names_push(ns, name.ptr, name.len);
    return 0;
}

/* A regex leaf on col (pattern re): ERR_INVAL with err set for a bad one. */
static int regex_leaf(enum sql_col_kind col, const char *name, const char *re,
                      struct sql_expr **out, struct buf *err)
{
    struct sql_expr *e = cond_leaf_new(SQL_L_REGEX, col, name, 0);
    e->v.type = SQL_V_STRING;
    e->v.s = xstrdup(re);
    e->v.slen = strlen(re);
    size_t bad;
    struct buf msg = BUF_INIT;
    if (cond_prepare(e, &bad, &msg)) {
        buf_printf(err, "error parsing regex /%s/: %s", re, buf_cstr(&msg));
        buf_destroy(&msg);
        cond_free(e);
        return ERR_INVAL;
    }
    buf_destroy(&msg);
    *out = e;
    return ERR_OK;
}

/* Lists kind's names of the snapshot (of event m if not NULL) matching
 * re (NULL: all) into *out. */
static int catalog_names(struct store_snap *snap, enum store_cat_kind kind, const char *m,
                         struct slice tag_key, const char *re, int64_t lo, int64_t hi,
                         struct names *ns, struct buf *err)
{
    struct sql_expr *rx = NULL;
    if (re && regex_leaf(SQL_COL_EVENT, NULL, re, &rx, err))
        return ERR_INVAL;
    struct slice ev = slice_make(m ? m : "", m ? strlen(m) : 0);
    struct store_cat_query q = {kind, lo, hi, NULL, m ? &ev : NULL, tag_key, 0};
    ns->re = rx;
    cond_row_init(&ns->row);
    int rc = store_catalog(snap, &q, name_cb, ns);
    cond_row_destroy(&ns->row);
    cond_free(rx);
    if (rc)
        buf_printf(err, "cannot read the catalog: %s", err_name(rc));
    return rc;
}

int iql_measurements(struct store_snap *snap, const struct iql_stmt *st, char ***out, size_t *n,
                     struct buf *err)
{
    struct names ns = {0};
    int rc = ERR_OK;
    for (size_t i = 0; i < st->nfrom && !rc; i++) {
        if (st->from[i].is_regex)
            rc = catalog_names(snap, STORE_CAT_EVENTS, NULL, slice_make("", 0), st->from[i].name,
                               INT64_MIN, INT64_MAX, &ns, err);
        else
            names_push(&ns, st->from[i].name, strlen(st->from[i].name));
    }
    if (rc) {
        iql_names_free(ns.v, ns.n);
        return rc;
    }
    iql_names_unique(ns.v, &ns.n);
    *out = ns.v;
    *n = ns.n;
    return ERR_OK;
}

int iql_tag_keys(const struct iql_ctx *c, struct store_snap *snap, const char *m, int64_t lo,
                 int64_t hi, char ***out, size_t *n)
{
    struct names ns = {0};
    struct buf err = BUF_INIT;
    int rc = catalog_names(snap, STORE_CAT_TAG_KEYS, m, slice_make("", 0), NULL, lo, hi, &ns, &err);
    buf_destroy(&err);
    if (rc) {
        iql_names_free(ns.v, ns.n);
        return rc;
    }
    names_push(&ns, c->o->host_tag, strlen(c->o->host_tag));
    iql_names_unique(ns.v, &ns.n);
    *out = ns.v;
    *n = ns.n;
    return ERR_OK;
}

/* --- translation --- */

struct tr {
    const struct iql_ctx *c;
    char **tagkeys;
    size_t ntagkeys;
    struct buf *err;
};

static enum sql_op sql_op_of(enum iql_op op, bool flip)
{
    switch (op) {
    case IQL_O_EQ: return SQL_EQ;
    case IQL_O_NE: return SQL_NE;
    case IQL_O_LT: return flip ? SQL_GT : SQL_LT;
    case IQL_O_LE: return flip ? SQL_GE : SQL_LE;
    case IQL_O_GT: return flip ? SQL_LT : SQL_GT;
    default: return flip ? SQL_LE : SQL_GE;
    }
}

static struct sql_expr *ts_leaf(enum sql_op op, int64_t t)
{
    struct sql_expr *e = cond_leaf_new(SQL_L_CMP, SQL_COL_TS, NULL, 0);
    e->op = op;
    e->v.type = SQL_V_INT;
    e->v.i = t;
    return e;
}

static int time_cond(struct tr *t, const struct iql_ex *val, enum sql_op op, struct sql_expr **out)
{
    int64_t v;
    if (iql_time_value(t->c, val, &v)) {
        buf_puts(t->err, "invalid time condition: compare time with now() - 1h, an RFC 3339 "
                         "string or an epoch with a unit (1700000000000ms)");
        return ERR_INVAL;
    }
    if (op == SQL_NE) {
        buf_puts(t->err, "time != is not supported: use time < x OR time > x");
        return ERR_INVAL;
    }
    *out = ts_leaf(op, v);
    return ERR_OK;
}

static void set_value(struct sql_expr *e, const struct iql_ex *v)
{
    if (v->kind == IQL_X_STR) {
        e->v.type = SQL_V_STRING;
        e->v.s = xstrdup(v->s);
        e->v.slen = strlen(v->s);
    } else if (v->kind == IQL_X_BOOL) {
        e->v.type = SQL_V_BOOL;
        e->v.b = v->b;
    } else if (v->is_int) {
        e->v.type = SQL_V_INT;
        e->v.i = v->i;
    } else {
        e->v.type = SQL_V_FLOAT;
        e->v.f = v->f;
    }
}

/* A tag (or the host): a missing tag is '', so = '' is IS NULL and != and
 * !~ also hold where the tag is missing. */
static int tag_cond(struct tr *t, enum sql_col_kind col, const char *name, enum iql_op op,
                    const struct iql_ex *v, struct sql_expr **out)
{
    struct sql_expr *e;
    bool re = op == IQL_O_RE || op == IQL_O_NRE;
    if (re) {
        if (v->kind != IQL_X_REGEX) {
            buf_printf(t->err, "=~ and !~ need a /regex/ on the right of %s", name);
            return ERR_INVAL;
        }
        if (regex_leaf(col, name, v->s, &e, t->err))
            return ERR_INVAL;
    } else {
        if (v->kind != IQL_X_STR || (op != IQL_O_EQ && op != IQL_O_NE)) {
            /* InfluxDB compares tags as strings: anything else matches nothing */
            e = cond_leaf_new(SQL_L_IN, SQL_COL_EVENT, NULL, 0);
            cond_in_finish(e);
            *out = e;
            return ERR_OK;
        }
        if (v->s[0] == '\0' && col == SQL_COL_TAG) {
            e = cond_leaf_new(SQL_L_NULL, col, name, 0);
            *out = op == IQL_O_EQ ? e : cond_not(e);
            return ERR_OK;
        }
        e = cond_leaf_new(SQL_L_CMP, col, name, 0);
        e->op = SQL_EQ;
        set_value(e, v);
    }
    bool neg = op == IQL_O_NE || op == IQL_O_NRE;
    if (neg)
        e = cond_not(e);
    if (neg && col == SQL_COL_TAG)
        e = cond_or(cond_leaf_new(SQL_L_NULL, col, name, 0), e);
    *out = e;
    return ERR_OK;
}

static int field_cond(struct tr *t, const char *name, enum iql_op op, bool flip,
                      const struct iql_ex *v, struct sql_expr **out)
{
    if (op == IQL_O_RE || op == IQL_O_NRE) {
        if (v->kind != IQL_X_REGEX) {
            buf_printf(t->err, "=~ and !~ need a /regex/ on the right of %s", name);
            return ERR_INVAL;
        }
        struct sql_expr *e;
        if (regex_leaf(SQL_COL_FIELD, name, v->s, &e, t->err))
            return ERR_INVAL;
        *out = op == IQL_O_NRE ? cond_not(e) : e;
        return ERR_OK;
    }
    if (v->kind != IQL_X_STR && v->kind != IQL_X_NUM && v->kind != IQL_X_BOOL) {
        buf_printf(t->err, "unsupported condition on %s: compare a field with a constant", name);
        return ERR_INVAL;
    }
    struct sql_expr *e = cond_leaf_new(SQL_L_CMP, SQL_COL_FIELD, name, 0);
    e->op = sql_op_of(op, flip);
    set_value(e, v);
    *out = e;
    return ERR_OK;
}

static int translate(struct tr *t, const struct iql_ex *x, struct sql_expr **out);

/* A comparison's name in *var and constant in *val, whichever side each
 * was written on; true when they were swapped (5 < x is x > 5). */
static bool operands(const struct iql_ex *x, const struct iql_ex **var, const struct iql_ex **val)
{
    bool flip = x->l->kind != IQL_X_VAR && x->r->kind == IQL_X_VAR;
    *var = flip ? x->r : x->l;
    *val = flip ? x->l : x->r;
    return flip;
}

static int compare(struct tr *t, const struct iql_ex *x, struct sql_expr **out)
{
    const struct iql_ex *var, *val;
    bool flip = operands(x, &var, &val);
    if (iql_is_time(var))
        return time_cond(t, val, sql_op_of(x->op, flip), out);
    if (var->kind != IQL_X_VAR || val->kind == IQL_X_VAR || val->kind == IQL_X_CALL ||
        val->kind == IQL_X_BIN) {
        buf_puts(t->err, "unsupported condition: compare a tag, a field or time with a constant");
        return ERR_INVAL;
    }
    if (var->cast == IQL_CAST_FIELD)
        return field_cond(t, var->s, x->op, flip, val, out);
    if (strcmp(var->s, t->c->o->host_tag) == 0)
        return tag_cond(t, SQL_COL_HOST, NULL, x->op, val, out);
    bool empty = val->kind == IQL_X_STR && val->s[0] == '\0';
    if (var->cast == IQL_CAST_TAG || iql_str_in(t->tagkeys, t->ntagkeys, var->s) ||
        empty) /* '' : a missing tag */
        return tag_cond(t, SQL_COL_TAG, var->s, x->op, val, out);
    return field_cond(t, var->s, x->op, flip, val, out);
}

static int translate(struct tr *t, const struct iql_ex *x, struct sql_expr **out)
{
    if (x->kind == IQL_X_BIN && (x->op == IQL_O_AND || x->op == IQL_O_OR)) {
        struct sql_expr *a = NULL, *b = NULL;
        if (translate(t, x->l, &a))
            return ERR_INVAL;
        if (translate(t, x->r, &b)) {
            cond_free(a);
            return ERR_INVAL;
        }
        *out = x->op == IQL_O_AND ? cond_and(a, b) : cond_or(a, b);
        return ERR_OK;
    }
    if (x->kind == IQL_X_BIN && x->op >= IQL_O_EQ && x->op <= IQL_O_NRE)
        return compare(t, x, out);
    if (x->kind == IQL_X_BOOL) { /* WHERE true: every row */
        *out = x->b ? NULL : cond_leaf_new(SQL_L_IN, SQL_COL_EVENT, NULL, 0);
        if (*out)
            cond_in_finish(*out);
        return ERR_OK;
    }
    buf_puts(t->err, "unsupported condition: expected comparisons joined by AND and OR");
    return ERR_INVAL;
}

void iql_where_time(const struct iql_ctx *c, const struct iql_ex *where, int64_t *lo, int64_t *hi)
{
    if (!where || where->kind != IQL_X_BIN)
        return;
    if (where->op == IQL_O_AND) {
        iql_where_time(c, where->l, lo, hi);
        iql_where_time(c, where->r, lo, hi);
        return;
    }
    if (where->op < IQL_O_EQ || where->op > IQL_O_GE || where->op == IQL_O_NE)
        return;
    const struct iql_ex *var, *val;
    bool flip = operands(where, &var, &val);
    int64_t v;
    if (!iql_is_time(var) || iql_time_value(c, val, &v))
        return;
    enum sql_op op = sql_op_of(where->op, flip);
    if (op == SQL_EQ || op == SQL_GT || op == SQL_GE)
        *lo = v > *lo ? v : *lo;
    if (op == SQL_EQ || op == SQL_LT || op == SQL_LE)
        *hi = v < *hi ? v : *hi;
}

int iql_where(const struct iql_ctx *c, const struct iql_ex *where, const char *m, char **tagkeys,
              size_t ntagkeys, struct sql_where *w, struct buf *err)
{
    struct tr t = {c, tagkeys, ntagkeys, err};
    struct sql_expr *cond = NULL;
    if (where && translate(&t, where, &cond))
        return ERR_INVAL;
    sql_where_init(w);
    if (m) {
        struct sql_expr *e = cond_leaf_new(SQL_L_CMP, SQL_COL_EVENT, NULL, 0);
        e->op = SQL_EQ;
        e->v.type = SQL_V_STRING;
        e->v.s = xstrdup(m);
        e->v.slen = strlen(m);
        cond = cond_and(e, cond);
    }
    w->cond = cond;
    cond_derive(w);
    return ERR_OK;
}
