/* InfluxQL SELECT on the SQL engine: per measurement, WHERE becomes a
 * condition (iql_where.c) that plan.c plans (a fixed host is INDEX, a time
 * range SCAN) and exec.c reads; rows are grouped by series (measurement and
 * GROUP BY tag values) and time bucket into the aggregate states of
 * iql_func.c, or kept as raw points; then each series is filled, its
 * transformations applied, limited and written in InfluxDB's shape. Memory
 * is bounded: groups and buckets by max_groups, kept points and values by
 * IQL_MAX_POINTS, the reply by IQL_MAX_RESULT. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/assist.h"
#include "base/err.h"
#include "query/agg.h"
#include "query/cond.h"
#include "query/encode.h"
#include "query/iql_func.h"
#include "query/iql_tz.h"
#include "query/plan.h"
#include "query/query_int.h"
#include "store/store.h"

/* One output column. */
struct col {
    const struct iql_ex *ex; /* the value (inside a transformation: its argument) */
    char *name;
    int tr;        /* enum iql_tr, or -1 */
    double tr_arg; /* unit in ns, or N of moving_average */
    bool is_tag;   /* raw: a tag, which alone does not make a row */
    bool is_aux;   /* aggregate query: a field or tag at the lone selector's point */
};

/* What a statement reads from one measurement. */
struct sel {
    const struct iql_ctx *c;
    const struct iql_stmt *st;
    struct iql_result *r;
    const char *m;
    char **tagkeys, **fieldkeys;
    size_t ntagkeys, nfieldkeys;
    int *fieldtypes;
    char **star_tags, **star_fields; /* SELECT *: the union over FROM's measurements */
    size_t nstar_tags, nstar_fields;
    char **dims; /* GROUP BY tags, sorted */
    size_t ndims;
    size_t host_dim; /* which of dims is the host tag; ndims: none */
    struct col *cols;
    size_t ncols;
    struct iql_ex **owned; /* expressions made for wildcards */
    size_t nowned;
    struct iql_slot *slots;
    size_t nslots;
    bool agg, has_tr;
    struct sql_where w;
    int64_t lo, hi;               /* the query's time range (INT64_MIN / MAX: open) */
    bool mixed;                   /* extend_range: columns over the extra interval and not */
    bool keep_filled;             /* and a plain aggregate's filled rows stay */
    int64_t plain_lo, plain_hi;   /* then the plain ones' time range */
    int64_t plain_blo, plain_bhi; /* and its first and last buckets */
    struct buf *err;
    size_t points; /* values kept so far, times included (IQL_MAX_POINTS) */
};

static const char *const tr_names[] = {"derivative",     "non_negative_derivative",
                                       "difference",     "non_negative_difference",
                                       "moving_average", "cumulative_sum",
                                       "elapsed"};

static int tr_of(const char *name)
{
    for (size_t i = 0; i < sizeof tr_names / sizeof tr_names[0]; i++)
        if (strcmp(name, tr_names[i]) == 0)
            return (int)i;
    return -1;
}

static void sel_destroy(struct sel *s)
{
    iql_names_free(s->tagkeys, s->ntagkeys);
    iql_names_free(s->fieldkeys, s->nfieldkeys);
    free(s->fieldtypes);
    for (size_t i = 0; i < s->ncols; i++)
        free(s->cols[i].name);
    free(s->cols);
    for (size_t i = 0; i < s->nowned; i++)
        iql_ex_free(s->owned[i]);
    free(s->owned);
    free(s->slots);
    free(s->dims);
    sql_where_destroy(&s->w);
}

/* --- columns --- */

static struct iql_ex *own(struct sel *s, struct iql_ex *e)
{
    s->owned = xrealloc(s->owned, (s->nowned + 1) * sizeof *s->owned);
    s->owned[s->nowned++] = e;
    return e;
}

static void derive_name(const struct iql_ex *e, struct buf *out)
{
    if (e->kind == IQL_X_VAR || e->kind == IQL_X_CALL) {
        buf_puts(out, e->s);
    } else if (e->kind == IQL_X_BIN) {
        size_t at = out->len;
        derive_name(e->l, out);
        size_t mid = out->len;
        if (mid > at)
            buf_putc(out, '_');
        derive_name(e->r, out);
        if (out->len == mid + 1)
            out->len = mid;
    }
}

static void add_col(struct sel *s, const struct iql_ex *ex, const char *alias, int tr,
                    double tr_arg)
{
    struct buf n = BUF_INIT;
    if (alias)
        buf_puts(&n, alias);
    else
        derive_name(tr >= 0 ? ex : ex, &n);
    if (n.len == 0)
        buf_puts(&n, "expr");
    /* InfluxDB makes names unique with _1, _2 ... */
    for (size_t k = 0, again = 1; again; k++) {
        again = 0;
        for (size_t i = 0; i < s->ncols; i++)
            if (strcmp(s->cols[i].name, buf_cstr(&n)) == 0)
                again = 1;
        if (again) {
            char *base = xstrdup(buf_cstr(&n));
            char *us = strrchr(base, '_');
            if (k > 0 && us)
                *us = '\0';
            buf_reset(&n);
            buf_printf(&n, "%s_%zu", base, k + 1);
            free(base);
        }
    }
    s->cols = xrealloc(s->cols, (s->ncols + 1) * sizeof *s->cols);
    s->cols[s->ncols++] = (struct col){ex, buf_steal(&n, NULL), tr, tr_arg, false, false};
}

static bool is_dim(const struct sel *s, const char *name)
{
    for (size_t i = 0; i < s->ndims; i++)
        if (strcmp(s->dims[i], name) == 0)
            return true;
    return false;
}

static int field_type(const struct sel *s, const char *name)
{
    for (size_t i = 0; i < s->nfieldkeys; i++)
        if (strcmp(s->fieldkeys[i], name) == 0)
            return s->fieldtypes[i];
    return 0;
}

static struct iql_ex *var_ex(const char *name, enum iql_cast cast)
{
    struct iql_ex *v = xcalloc(1, sizeof *v);
    v->kind = IQL_X_VAR;
    v->cast = cast;
    v->s = xstrdup(name);
    return v;
}

/* A select list's /regex/: the names it matches, anywhere in them. */
struct name_re {
    pcre2_code *code;
    pcre2_match_data *md;
};

static int name_re_open(struct sel *s, const char *pattern, struct name_re *r)
{
    int code;
    PCRE2_SIZE off;
    r->code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                            PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &code, &off, NULL);
    if (!r->code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof msg);
        buf_printf(s->err, "bad regular expression: %s", (const char *)msg);
        return ERR_INVAL;
    }
    r->md = pcre2_match_data_create_from_pattern(r->code, NULL);
    return ERR_OK;
}

static bool name_re_match(const struct name_re *r, const char *name)
{
    return !r || pcre2_match(r->code, (PCRE2_SPTR)name, strlen(name), 0, 0, r->md, NULL) >= 0;
}

static void name_re_close(struct name_re *r)
{
    pcre2_match_data_free(r->md);
    pcre2_code_free(r->code);
}

/* SELECT * (re NULL) or SELECT /re/: the fields and tags (not GROUP BY
 * ones), sorted together. A name both a field and a tag is listed twice,
 * as InfluxDB lists it: the field, then the tag (its column named name_1
 * by add_col). */
static void star_cols(struct sel *s, const struct name_re *re)
{
    char **tk = s->star_tags, **fk = s->star_fields;
    size_t ntk = s->nstar_tags, nfk = s->nstar_fields, i = 0, j = 0;
    while (i < nfk || j < ntk) {
        bool tag = i == nfk || (j < ntk && strcmp(tk[j], fk[i]) < 0);
        const char *name = tag ? tk[j++] : fk[i++];
        if ((tag && is_dim(s, name)) || !name_re_match(re, name))
            continue;
        if (!tag && i >= 2 && strcmp(fk[i - 2], name) == 0)
            continue; /* a field with two types */
        add_col(s, own(s, var_ex(name, tag ? IQL_CAST_TAG : IQL_CAST_FIELD)), NULL, -1, 0);
        s->cols[s->ncols - 1].is_tag = tag;
    }
}

static void names_merge(char ***v, size_t *n, char **add, size_t nadd)
{
    *v = xrealloc(*v, (*n + nadd + 1) * sizeof **v);
    for (size_t i = 0; i < nadd; i++)
        (*v)[(*n)++] = xstrdup(add[i]);
}

static bool has_star(const struct iql_stmt *st)
{
    for (size_t i = 0; i < st->nfields; i++)
        if (st->fields[i].ex->kind == IQL_X_STAR || st->fields[i].ex->kind == IQL_X_REGEX)
            return true;
    return false;
}

/* The tags and fields of every measurement of ms: what SELECT * lists. */
struct star {
    char **tags, **fields;
    size_t ntags, nfields;
};

static int star_union(const struct iql_ctx *c, struct store_db *db, struct store_snap *snap,
                      const struct iql_stmt *st, char **ms, size_t nm, struct star *u)
{
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    iql_where_time(c, st->where, &lo, &hi);
    iql_shard_range(db, &lo, &hi);
    for (size_t i = 0; i < nm; i++) {
        char **tk, **fk;
        int *ft;
        size_t ntk, nfk;
        if (iql_tag_keys(c, snap, ms[i], lo, hi, &tk, &ntk))
            return ERR_IO;
        if (iql_field_keys(snap, ms[i], lo, hi, &fk, &ft, &nfk)) {
            iql_names_free(tk, ntk);
            return ERR_IO;
        }
        names_merge(&u->tags, &u->ntags, tk, ntk);
        names_merge(&u->fields, &u->nfields, fk, nfk);
        iql_names_free(tk, ntk);
        iql_names_free(fk, nfk);
        free(ft);
    }
    iql_names_unique(u->tags, &u->ntags);
    iql_names_unique(u->fields, &u->nfields);
    return ERR_OK;
}

static int collect_slots(struct sel *s, const struct iql_ex *e);

/* fn(*) or fn(/re/): one column fn_field per field it can take (and re
 * matches). */
static int star_call(struct sel *s, const struct iql_ex *call, int tr, double tr_arg)
{
    struct name_re re;
    bool by_re = call->args[0]->kind == IQL_X_REGEX;
    if (by_re && name_re_open(s, call->args[0]->s, &re))
        return ERR_INVAL;
    int rc = ERR_OK;
    for (size_t i = 0; i < s->nfieldkeys && rc == ERR_OK; i++) {
        if (i > 0 && strcmp(s->fieldkeys[i - 1], s->fieldkeys[i]) == 0)
            continue;
        if (!iql_fn_takes_type(call->s, s->fieldtypes[i]) ||
            !name_re_match(by_re ? &re : NULL, s->fieldkeys[i]))
            continue;
        struct iql_ex *c = own(s, xcalloc(1, sizeof *c));
        c->kind = IQL_X_CALL;
        c->s = xstrdup(call->s);
        c->nargs = call->nargs;
        c->args = xcalloc(call->nargs, sizeof *c->args);
        c->args[0] = var_ex(s->fieldkeys[i], IQL_CAST_FIELD);
        for (size_t k = 1; k < call->nargs; k++) {
            c->args[k] = xcalloc(1, sizeof **c->args);
            *c->args[k] = *call->args[k];
            c->args[k]->s = NULL;
            c->args[k]->args = NULL;
            c->args[k]->nargs = 0;
            c->args[k]->l = c->args[k]->r = NULL;
        }
        char name[IQL_MAX_NAME * 2 + 2];
        snprintf(name, sizeof name, "%s_%s", call->s, s->fieldkeys[i]);
        if (collect_slots(s, c))
            rc = ERR_INVAL;
        else
            add_col(s, c, name, tr, tr_arg);
    }
    if (by_re)
        name_re_close(&re);
    return rc;
}

/* Registers the aggregate calls under e as slots; ERR_INVAL for a call
 * that is not an aggregate (or a misplaced transformation). */
static int collect_slots(struct sel *s, const struct iql_ex *e)
{
    if (e->kind == IQL_X_BIN)
        return collect_slots(s, e->l) || collect_slots(s, e->r) ? ERR_INVAL : ERR_OK;
    if (e->kind != IQL_X_CALL)
        return ERR_OK;
    if (iql_fn_is_math(e->s)) {
        for (size_t i = 0; i < e->nargs; i++)
            if (collect_slots(s, e->args[i]))
                return ERR_INVAL;
        return ERR_OK;
    }
    struct iql_slot sl;
    if (iql_slot_of(e, &sl, s->err))
        return ERR_INVAL;
    s->slots = xrealloc(s->slots, (s->nslots + 1) * sizeof *s->slots);
    s->slots[s->nslots++] = sl;
    return ERR_OK;
}

/* True if e holds an aggregate or selector call (math functions apply to
 * what they are given). */
static bool has_call(const struct iql_ex *e)
{
    if (!e)
        return false;
    if (e->kind == IQL_X_CALL && iql_fn_is_math(e->s)) {
        for (size_t i = 0; i < e->nargs; i++)
            if (has_call(e->args[i]))
                return true;
        return false;
    }
    return e->kind == IQL_X_CALL || has_call(e->l) || has_call(e->r);
}

/* The transformation of a column (name(arg[, unit or N])): its argument
 * and parameter. */
static int tr_param(struct sel *s, const struct iql_ex *e, int tr, double *arg)
{
    if (e->nargs < 1 || e->nargs > 2) {
        buf_printf(s->err, "invalid number of arguments for %s", e->s);
        return ERR_INVAL;
    }
    bool unit = tr == IQL_TR_DERIVATIVE || tr == IQL_TR_NN_DERIVATIVE || tr == IQL_TR_ELAPSED;
    *arg = tr == IQL_TR_ELAPSED ? 1 : 1e9;
    if (tr == IQL_TR_MOVING_AVERAGE) {
        if (e->nargs != 2 || e->args[1]->kind != IQL_X_NUM || !e->args[1]->is_int ||
            e->args[1]->i < 1) {
            buf_puts(s->err, "moving_average window must be an integer greater than 0");
            return ERR_INVAL;
        }
        *arg = (double)e->args[1]->i;
    } else if (e->nargs == 2) {
        if (!unit || e->args[1]->kind != IQL_X_DUR || e->args[1]->i <= 0) {
            buf_printf(s->err, "second argument to %s must be a duration", e->s);
            return ERR_INVAL;
        }
        *arg = (double)e->args[1]->i;
    } else if (unit && tr != IQL_TR_ELAPSED && s->st->has_time_group) {
        *arg = (double)s->st->interval; /* InfluxDB: the GROUP BY interval */
    }
    if (s->agg != has_call(e->args[0])) {
        buf_printf(s->err,
                   s->agg ? "mixing aggregate and non-aggregate queries is not supported"
                          : "%s aggregate requires a GROUP BY interval",
                   e->s);
        return ERR_INVAL;
    }
    if (s->agg && !s->st->has_time_group) { /* of an aggregate: one per interval */
        buf_printf(s->err, "%s aggregate requires a GROUP BY interval", e->s);
        return ERR_INVAL;
    }
    if (!s->agg && e->args[0]->kind != IQL_X_VAR) {
        buf_printf(s->err, "expected field argument in %s()", e->s);
        return ERR_INVAL;
    }
    return ERR_OK;
}

/* Math functions take one argument (atan2, pow, log: two). */
static int check_math(struct sel *s, const struct iql_ex *e)
{
    if (!e)
        return ERR_OK;
    if (e->kind == IQL_X_CALL && iql_fn_is_math(e->s)) {
        bool two = !strcmp(e->s, "atan2") || !strcmp(e->s, "pow");
        bool ok = two ? e->nargs == 2 : !strcmp(e->s, "log") ? e->nargs == 2 : e->nargs == 1;
        if (!ok) {
            buf_printf(s->err, "invalid number of arguments for %s, expected %d, got %zu", e->s,
                       two || !strcmp(e->s, "log") ? 2 : 1, e->nargs);
            return ERR_INVAL;
        }
    }
    for (size_t i = 0; i < e->nargs; i++)
        if (check_math(s, e->args[i]))
            return ERR_INVAL;
    return check_math(s, e->l) || check_math(s, e->r) ? ERR_INVAL : ERR_OK;
}

static int build_col(struct sel *s, const struct iql_field *f)
{
    if (check_math(s, f->ex))
        return ERR_INVAL;
    const struct iql_ex *e = f->ex;
    int tr = e->kind == IQL_X_CALL ? tr_of(e->s) : -1;
    double arg = 0;
    if (tr >= 0) {
        if (tr_param(s, e, tr, &arg))
            return ERR_INVAL;
        s->has_tr = true;
        const struct iql_ex *in = e->args[0];
        if (in->kind == IQL_X_CALL && in->nargs >= 1 &&
            (in->args[0]->kind == IQL_X_STAR || in->args[0]->kind == IQL_X_REGEX)) {
            return star_call(s, in, tr, arg);
        }
        if (collect_slots(s, in))
            return ERR_INVAL;
        add_col(s, in, f->alias ? f->alias : e->s, tr, arg);
        return ERR_OK;
    }
    if (e->kind == IQL_X_STAR || e->kind == IQL_X_REGEX) {
        if (s->agg) {
            buf_puts(s->err, "mixing aggregate and non-aggregate queries is not supported");
            return ERR_INVAL;
        }
        struct name_re re;
        if (e->kind == IQL_X_REGEX && name_re_open(s, e->s, &re))
            return ERR_INVAL;
        star_cols(s, e->kind == IQL_X_REGEX ? &re : NULL);
        if (e->kind == IQL_X_REGEX)
            name_re_close(&re);
        return ERR_OK;
    }
    if (e->kind == IQL_X_CALL && e->nargs >= 1 &&
        (e->args[0]->kind == IQL_X_STAR || e->args[0]->kind == IQL_X_REGEX)) {
        return star_call(s, e, -1, 0);
    }
    if (!s->agg && has_call(e)) {
        buf_puts(s->err, "mixing aggregate and non-aggregate queries is not supported");
        return ERR_INVAL;
    }
    if (collect_slots(s, e))
        return ERR_INVAL;
    add_col(s, e, f->alias, -1, 0);
    struct col *c = &s->cols[s->ncols - 1];
    c->is_aux = s->agg && !has_call(e); /* checked by check_aux */
    c->is_tag = e->kind == IQL_X_VAR && e->cast != IQL_CAST_FIELD &&
                iql_str_in(s->tagkeys, s->ntagkeys, e->s) &&
                (e->cast == IQL_CAST_TAG || field_type(s, e->s) == 0);
    return ERR_OK;
}

/* Fields or tags beside aggregates: only with one selector, whose point
 * gives their values (InfluxDB's rule and messages); top() and bottom()
 * stand alone. */
static int check_aux(struct sel *s)
{
    for (size_t k = 0; k < s->nslots; k++) {
        const struct iql_slot *sl = &s->slots[k];
        if ((sl->fn == IQL_F_TOP || sl->fn == IQL_F_BOTTOM) && s->ncols > 1) {
            buf_printf(s->err, "selector function %s() cannot be combined with other functions",
                       sl->call->s);
            return ERR_INVAL;
        }
        if ((sl->fn == IQL_F_TOP || sl->fn == IQL_F_BOTTOM) && s->st->limit > 0 &&
            sl->arg > (double)s->st->limit) {
            buf_printf(s->err,
                       "limit (%.0f) in %s function can not be larger than the LIMIT (%lld) in "
                       "the select statement",
                       sl->arg, sl->call->s, (long long)s->st->limit);
            return ERR_INVAL;
        }
    }
    size_t naux = 0;
    for (size_t j = 0; j < s->ncols; j++)
        naux += s->cols[j].is_aux;
    if (naux == 0)
        return ERR_OK;
    bool selectors = true;
    for (size_t k = 0; k < s->nslots; k++)
        selectors &= iql_fn_is_selector(s->slots[k].fn);
    if (selectors && s->nslots > 1) {
        buf_puts(s->err, "mixing multiple selector functions with tags or fields is not supported");
        return ERR_INVAL;
    }
    if (!selectors || s->nslots == 0 || s->has_tr) {
        buf_puts(s->err, "mixing aggregate and non-aggregate queries is not supported");
        return ERR_INVAL;
    }
    return ERR_OK;
}

static bool any_agg(const struct iql_stmt *st)
{
    for (size_t i = 0; i < st->nfields; i++) {
        const struct iql_ex *e = st->fields[i].ex;
        if (e->kind == IQL_X_CALL && tr_of(e->s) >= 0 && e->nargs > 0)
            e = e->args[0];
        if (has_call(e))
            return true;
    }
    return false;
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void build_dims(struct sel *s)
{
    const struct iql_stmt *st = s->st;
    if (st->group_all) {
        s->dims = xcalloc(s->ntagkeys + 1, sizeof(char *));
        for (size_t i = 0; i < s->ntagkeys; i++)
            s->dims[s->ndims++] = s->tagkeys[i];
        return;
    }
    s->dims = xcalloc(st->ngroup_tags + 1, sizeof(char *));
    for (size_t i = 0; i < st->ngroup_tags; i++)
        if (!is_dim(s, st->group_tags[i]))
            s->dims[s->ndims++] = st->group_tags[i];
    qsort(s->dims, s->ndims, sizeof(char *), cmp_cstr);
}

/* The host tag's place among the dims (ndims: not one of them). */
static size_t host_dim_of(const struct sel *s)
{
    size_t i = 0;
    while (i < s->ndims && strcmp(s->dims[i], s->c->o->host_tag) != 0)
        i++;
    return i;
}

/* --- rows --- */

/* The series key of a row: each GROUP BY tag's value and a NUL. */
static void series_key(const struct sel *s, struct cond_row *row, struct buf *key)
{
    buf_reset(key);
    for (size_t i = 0; i < s->ndims; i++) {
        if (i == s->host_dim) {
            buf_append(key, row->host.ptr, row->host.len);
        } else {
            const struct rec_tag *t = cond_row_tag(row, slice_make(s->dims[i], strlen(s->dims[i])));
            if (t)
                buf_append(key, t->value.ptr, t->value.len);
        }
        buf_putc(key, '\0');
    }
}

/* {"k":"v",...} of a series key; empty when there are no dims. */
static void tags_json(const struct sel *s, const char *key, struct buf *out)
{
    if (s->ndims == 0)
        return;
    buf_putc(out, '{');
    for (size_t i = 0; i < s->ndims; i++) {
        size_t n = strlen(key);
        if (i)
            buf_putc(out, ',');
        enc_json_str(out, s->dims[i], strlen(s->dims[i]));
        buf_putc(out, ':');
        enc_json_str(out, key, n);
        key += n + 1;
    }
    buf_putc(out, '}');
}

static void cols_json(const struct sel *s, struct buf *out)
{
    buf_puts(out, "[\"time\"");
    for (size_t i = 0; i < s->ncols; i++) {
        buf_putc(out, ',');
        enc_json_str(out, s->cols[i].name, strlen(s->cols[i].name));
    }
    buf_putc(out, ']');
}

/* Applies transformations, drops rows, orders, limits and writes one
 * series. Takes p. */
static int emit_series(struct sel *s, const char *key, struct iql_points *p)
{
    bool *mask = xcalloc(s->ncols + 1, sizeof *mask);
    bool drop = s->has_tr || (s->agg && (s->st->fill == IQL_FILL_NONE || !s->st->has_time_group));
    /* groups come ascending, raw rows in the plan's order; InfluxDB
     * transforms in the statement's order (ORDER BY time DESC: from the
     * newest bucket down) */
    bool reverse = s->st->desc && s->agg;
    if (reverse && s->has_tr) {
        iql_points_reverse(p);
        reverse = false;
    }
    for (size_t j = 0; j < s->ncols; j++) /* over the extra interval */
        mask[j] = s->cols[j].tr >= 0 && s->cols[j].tr != IQL_TR_CUMULATIVE_SUM;
    if (s->mixed) /* the others have no row there, filled or not */
        iql_points_keep_mixed(p, mask, s->plain_blo, s->plain_bhi, s->keep_filled);
    for (size_t j = 0; j < s->ncols; j++) {
        if (s->cols[j].tr >= 0)
            iql_transform(p, j, s->cols[j].tr, s->cols[j].tr_arg);
        if (!s->mixed)
            mask[j] = !s->has_tr || s->cols[j].tr >= 0;
    }
    if (s->mixed) {
        iql_points_keep_mixed(p, mask, s->plain_blo, s->plain_bhi, s->keep_filled);
    } else if (drop) {
        iql_points_drop_empty(p, mask);
    }
    free(mask);
    if (reverse)
        iql_points_reverse(p);
    size_t from = (size_t)s->st->offset_rows, to = p->n;
    if (s->st->limit > 0 && from + (size_t)s->st->limit < to)
        to = from + (size_t)s->st->limit;
    if (from >= to || (p->n == 0)) {
        iql_points_free(p);
        return ERR_OK;
    }
    struct iql_series *ser = iql_series_add(s->r, s->m, strlen(s->m));
    tags_json(s, key, &ser->tags);
    cols_json(s, &ser->cols);
    for (size_t i = from; i < to; i++) {
        size_t start = ser->rows.len;
        buf_putc(&ser->rows, '[');
        iql_put_time(s->c, &ser->rows, p->ts[i]);
        for (size_t j = 0; j < s->ncols; j++) {
            buf_putc(&ser->rows, ',');
            iql_val_json(&p->v[i * p->ncol + j], &ser->rows);
        }
        buf_putc(&ser->rows, ']');
        iql_series_row_end(s->r, ser, start);
    }
    iql_points_free(p);
    if (s->r->bytes > IQL_MAX_RESULT) {
        buf_puts(s->err, "the result is larger than 64 MiB: add a LIMIT or narrow the time range");
        return ERR_TOOBIG;
    }
    return ERR_OK;
}

/* --- reading --- */

struct reader {
    struct store_db *db;
    struct store_snap *snap;
    struct plan plan;
    bool has_plan;
    struct exec *ex;
};

static void reader_close(struct reader *rd)
{
    if (rd->ex)
        query_metrics_sections(query_exec_stats(rd->ex).section_rows);
    query_exec_free(rd->ex);
    if (rd->has_plan)
        plan_destroy(&rd->plan);
}

/* What an aggregate reads of each row (plan.series): the fields of its
 * calls and of the condition, the host as a dimension; no other tag. */
static void series_cols(const struct sel *s, struct plan *p)
{
    plan_series_begin(p);
    for (size_t i = 0; i < s->ndims; i++)
        if (strcmp(s->dims[i], s->c->o->host_tag) != 0)
            p->series = false;
    for (size_t j = 0; j < s->ncols; j++)
        if (s->cols[j].is_aux)
            p->series = false;
    for (size_t k = 0; k < s->nslots; k++) {
        if (!s->slots[k].field)
            p->series = false;
        else
            plan_series_field(p, s->slots[k].field, strlen(s->slots[k].field));
    }
    plan_series_cond(p, s->w.cond);
}

static int reader_open(struct sel *s, struct reader *rd, bool unordered)
{
    struct sql_select sel;
    memset(&sel, 0, sizeof sel);
    sel.where = s->w;
    /* aggregates take rows in any order (groups are sorted at the end, and
     * selectors break ts ties by value): the stored order reads forward,
     * the other one steps back through every block */
    sel.order = unordered ? 0 : s->st->desc ? -1 : 1;
    struct db_opts dbo;
    store_db_opts(rd->db, &dbo);
    const struct query_opts *q = s->c->o->q;
    struct plan_opts po = {q->max_get_rows, q->allow_full_scan, q->full_scan, s->c->now};
    struct buf perr = BUF_INIT;
    int rc = plan_build(&sel, &dbo, &po, &rd->plan, &perr);
    if (rc == ERR_INVAL) {
        buf_puts(s->err,
                 "a query without a time range or a host reads the whole database, "
                 "which this server refuses: add WHERE time > now() - 1h (or host = '...')");
    } else if (rc) {
        buf_puts(s->err, buf_cstr(&perr));
    }
    buf_destroy(&perr);
    if (rc)
        return rc;
    rd->has_plan = true;
    rd->plan.where = &s->w;
    rd->plan.unordered = unordered;
    if (s->agg)
        series_cols(s, &rd->plan);
    return query_exec_open(rd->snap, &rd->plan, &rd->ex, s->err);
}

static int read_error(struct sel *s, int rc)
{
    if (s->err->len == 0)
        buf_printf(s->err,
                   rc == ERR_TOOBIG ? "a regular expression ran past its match limit"
                                    : "query failed while reading: %s",
                   err_name(rc));
    return rc;
}

/* Raw points: one iql_points per series, found by key. */
static int select_raw(struct sel *s, struct reader *rd)
{
    struct iql_keymap km;
    iql_keymap_init(&km);
    struct iql_points *ser = NULL;
    size_t nser = 0;
    struct buf key = BUF_INIT;
    int rc;
    size_t want = s->st->limit > 0 && s->ndims == 0 && !s->has_tr
                      ? (size_t)s->st->limit + (size_t)s->st->offset_rows
                      : SIZE_MAX;
    struct iql_val *vals = xcalloc(s->ncols + 1, sizeof *vals);
    while ((rc = query_exec_next(rd->ex)) == 1) {
        struct cond_row *row = query_exec_cond_row(rd->ex);
        bool any = false;
        for (size_t j = 0; j < s->ncols; j++) {
            iql_eval_raw(s->cols[j].ex, row, s->c->o->host_tag, &vals[j]);
            any |= vals[j].kind != IQL_V_NULL && !s->cols[j].is_tag;
        }
        if (!any)
            continue;
        series_key(s, row, &key);
        size_t idx;
        if (iql_keymap_get(&km, key.data, key.len, nser, &idx)) {
            if (nser >= (size_t)s->c->o->q->max_groups) {
                buf_printf(s->err, "too many series: more than max_groups = %lld",
                           (long long)s->c->o->q->max_groups);
                rc = ERR_TOOBIG;
                break;
            }
            ser = xrealloc(ser, (nser + 1) * sizeof *ser);
            iql_points_init(&ser[nser], s->ncols);
            nser++;
        }
        if (ser[idx].n >= want)
            continue;
        s->points += s->ncols + 1;
        if (s->points > IQL_MAX_POINTS) {
            buf_puts(s->err, "too many points: add a LIMIT or narrow the time range");
            rc = ERR_TOOBIG;
            break;
        }
        iql_points_add(&ser[idx], row->ts, vals);
        if (s->ndims == 0 && ser[idx].n >= want)
            break;
    }
    free(vals);
    buf_destroy(&key);
    if (rc < 0)
        read_error(s, rc);
    size_t *order = iql_keymap_sorted(&km, nser);
    for (size_t k = 0; k < nser; k++) {
        /* InfluxDB lists the series in reverse too, after SLIMIT and
         * SOFFSET have chosen them in ascending order */
        size_t r = s->st->desc ? nser - 1 - k : k, i = order[r];
        bool skip = rc < 0 || r < (size_t)s->st->soffset ||
                    (s->st->slimit > 0 && r >= (size_t)s->st->soffset + (size_t)s->st->slimit);
        if (skip) {
            iql_points_free(&ser[i]);
            continue;
        }
        int erc = emit_series(s, iql_keymap_key(&km, i), &ser[i]);
        if (erc && rc >= 0)
            rc = erc;
        if (erc)
            for (size_t k2 = k + 1; k2 < nser; k2++)
                iql_points_free(&ser[order[s->st->desc ? nser - 1 - k2 : k2]]);
        if (erc)
            break;
    }
    free(order);
    free(ser);
    iql_keymap_destroy(&km);
    return rc < 0 ? rc : ERR_OK;
}

/* The fill range of a GROUP BY time query: bucket starts lo..hi; ERR_TOOBIG
 * past max_groups buckets. */
static int fill_range(struct sel *s, const struct iql_groups *g, int64_t *lo, int64_t *hi)
{
    const struct iql_stmt *st = s->st;
    *lo = s->lo != INT64_MIN ? iql_groups_bucket_of(g, s->lo) : g->min_bucket;
    *hi = iql_groups_bucket_of(g, s->hi);
    double n = ((double)*hi - (double)*lo) / (double)st->interval + 1;
    if (st->fill != IQL_FILL_NONE && n > (double)s->c->o->q->max_groups) {
        buf_printf(s->err,
                   "too many buckets: %.0f buckets of GROUP BY time over the range, more than "
                   "max_groups = %lld; use a larger interval or fill(none)",
                   n, (long long)s->c->o->q->max_groups);
        return ERR_TOOBIG;
    }
    return ERR_OK;
}

/* top() / bottom(): alone, rows at their points' times, never filled. */
static bool is_topn(const struct sel *s)
{
    return s->nslots == 1 && s->ncols == 1 &&
           (s->slots[0].fn == IQL_F_TOP || s->slots[0].fn == IQL_F_BOTTOM);
}

/* Several rows per group (top, bottom, distinct): never filled. */
static bool multi_row(const struct sel *s)
{
    return is_topn(s) || (s->nslots == 1 && s->ncols == 1 && s->slots[0].fn == IQL_F_DISTINCT);
}

/* The time a group's row shows: its bucket, the query's start, or (one
 * selector alone, without GROUP BY time) its point's time. */
static bool lone_selector(const struct sel *s)
{
    size_t plain = 0; /* columns that are the selector itself */
    for (size_t j = 0; j < s->ncols; j++)
        plain += !s->cols[j].is_aux;
    return !s->st->has_time_group && s->nslots == 1 &&
           (iql_fn_is_selector(s->slots[0].fn) || s->slots[0].fn == IQL_F_PERCENTILE) && plain == 1;
}

/* The rows of groups order[from..to) (one series) into p. */
static void series_points(struct sel *s, struct iql_groups *g, const size_t *order, size_t from,
                          size_t to, struct iql_points *p)
{
    struct iql_val *res = xcalloc(s->nslots + 1, sizeof *res);
    struct iql_val *vals = xcalloc(s->ncols + 1, sizeof *vals);
    bool distinct = s->nslots == 1 && s->slots[0].fn == IQL_F_DISTINCT && s->ncols == 1;
    bool topn = is_topn(s);
    /* integral() with GROUP BY time spans the windows of the series */
    struct iql_val *integ = NULL;
    if (s->st->has_time_group) {
        integ = xcalloc(s->nslots * (to - from) + 1, sizeof *integ);
        for (size_t q = 0; q < s->nslots; q++)
            if (s->slots[q].fn == IQL_F_INTEGRAL)
                iql_groups_integral(g, q, order, from, to, integ + q * (to - from));
    }
    for (size_t k = from; k < to; k++) {
        size_t gi = order[k];
        int64_t t =
            s->st->has_time_group ? iql_groups_bucket(g, gi) : (s->lo == INT64_MIN ? 0 : s->lo);
        int64_t pt = t;
        for (size_t q = 0; q < s->nslots; q++) {
            iql_groups_result(g, gi, q, &res[q], &pt);
            if (integ && s->slots[q].fn == IQL_F_INTEGRAL)
                res[q] = integ[q * (to - from) + (k - from)];
            else if (res[q].kind == IQL_V_NULL) /* a hole: fill() fills it */
                res[q].b = res[q].b || !iql_groups_has_input(g, gi, q);
        }
        if (lone_selector(s))
            t = pt;
        if (topn) {
            struct iql_val *tv;
            int64_t *tt;
            size_t nt = iql_groups_topn(g, gi, 0, &tv, &tt);
            /* ORDER BY time DESC reverses the groups (emit_series), but
             * InfluxDB keeps a group's points in ascending time: added
             * reversed here, they come out so */
            for (size_t d = 0; d < nt; d++) {
                size_t at = s->st->desc ? nt - 1 - d : d;
                iql_points_add(p, tt[at], &tv[at]);
            }
            free(tv);
            free(tt);
            continue;
        }
        if (distinct) {
            struct iql_val *dv;
            size_t nd = iql_groups_distinct(g, gi, 0, &dv);
            for (size_t d = 0; d < nd; d++)
                iql_points_add(p, t, &dv[d]);
            free(dv);
            continue;
        }
        const struct iql_val *aux = iql_groups_aux(g, gi);
        for (size_t j = 0, a = 0; j < s->ncols; j++) {
            if (s->cols[j].is_aux)
                vals[j] = aux[a++];
            else
                iql_eval_agg(s->cols[j].ex, s->slots, res, s->nslots, &vals[j]);
        }
        iql_points_add(p, t, vals);
    }
    free(integ);
    free(res);
    free(vals);
}

/* fill(value): each column's value in a hole, its expression of the
 * aggregates all value (InfluxDB fills the aggregates, then computes:
 * max(x) * 2 + 1 is 1 under fill(0)). */
static struct iql_val *value_fill_row(const struct sel *s)
{
    struct iql_val *res = xcalloc(s->nslots + 1, sizeof *res);
    struct iql_val *row = xcalloc(s->ncols + 1, sizeof *row);
    for (size_t q = 0; q < s->nslots; q++)
        res[q] = iql_fill_value(s->st->fill_value);
    for (size_t j = 0; j < s->ncols; j++) {
        iql_eval_agg(s->cols[j].ex, s->slots, res, s->nslots, &row[j]);
        /* a selector or mode() of a string or boolean field: "" or false,
         * whatever the value (InfluxDB 1.6.7) */
        for (size_t q = 0; q < s->nslots; q++) {
            if (s->slots[q].call != s->cols[j].ex || s->slots[q].fn == IQL_F_COUNT)
                continue;
            int type = field_type(s, s->slots[q].field);
            if (type == REC_STRING)
                row[j] = (struct iql_val){.kind = IQL_V_STR, .s = slice_make("", 0)};
            else if (type == REC_BOOL)
                row[j] = (struct iql_val){.kind = IQL_V_BOOL, .b = false};
        }
    }
    free(res);
    return row;
}

static bool same_series(const struct iql_groups *g, size_t a, size_t b)
{
    size_t la = iql_keymap_len(&g->km, a), lb = iql_keymap_len(&g->km, b);
    return la == lb && memcmp(iql_keymap_key(&g->km, a), iql_keymap_key(&g->km, b), la - 8) == 0;
}

static int emit_groups(struct sel *s, struct iql_groups *g)
{
    const struct iql_stmt *st = s->st;
    int64_t lo = 0, hi = 0;
    if (st->has_time_group && g->n && !multi_row(s) && fill_range(s, g, &lo, &hi))
        return ERR_TOOBIG;
    if (s->mixed) {
        s->plain_blo = s->plain_lo == INT64_MIN ? INT64_MIN : iql_groups_bucket_of(g, s->plain_lo);
        s->plain_bhi = s->plain_hi == INT64_MAX ? INT64_MAX : iql_groups_bucket_of(g, s->plain_hi);
    }
    size_t *order = iql_groups_sorted(g);
    struct iql_fill_spec fill = {st->fill, st->fill_value, st->desc, NULL};
    struct iql_val *fill_row = st->fill == IQL_FILL_VALUE ? value_fill_row(s) : NULL;
    fill.row = fill_row;
    bool *is_count = xcalloc(s->ncols + 1, sizeof *is_count);
    bool *live = xcalloc(s->ncols + 1, sizeof *live);
    for (size_t j = 0; j < s->ncols; j++)
        for (size_t q = 0; q < s->nslots; q++)
            is_count[j] |=
                s->cols[j].ex == s->slots[q].call &&
                (s->slots[q].fn == IQL_F_COUNT || s->slots[q].fn == IQL_F_COUNT_DISTINCT);
    /* the series' runs of groups in order; ORDER BY time DESC lists the
     * series in reverse, as InfluxDB does, after SLIMIT and SOFFSET have
     * chosen them in ascending order */
    size_t *starts = xcalloc(g->n + 2, sizeof *starts), nruns = 0;
    for (size_t k = 0; k < g->n;) {
        size_t end = k + 1;
        while (end < g->n && same_series(g, order[k], order[end]))
            end++;
        starts[nruns++] = k;
        k = end;
    }
    starts[nruns] = g->n;
    int rc = ERR_OK;
    for (size_t run = 0; run < nruns && rc == ERR_OK; run++) {
        size_t r = st->desc ? nruns - 1 - run : run;
        size_t k = starts[r], end = starts[r + 1];
        bool skip = r < (size_t)st->soffset ||
                    (st->slimit > 0 && r >= (size_t)st->soffset + (size_t)st->slimit);
        if (!skip) {
            struct iql_points p;
            iql_points_init(&p, s->ncols);
            series_points(s, g, order, k, end, &p);
            if (st->has_time_group && !multi_row(s)) {
                iql_points_count_holes(&p, is_count, st->fill, live);
                iql_points_fill(&p, lo, hi, st->interval, &fill, live);
            }
            rc = emit_series(s, iql_keymap_key(&g->km, order[k]), &p);
        }
    }
    free(starts);
    free(is_count);
    free(live);
    free(fill_row);
    free(order);
    return rc;
}

/* A host section's run of rows added to the groups (query_exec_each_section):
 * its series key is its host's, once for each dimension (series_cols
 * takes sections only when the host is the one GROUP BY tag, if any). */
struct section_add {
    struct sel *s;
    struct iql_groups *g;
    struct buf key;
    struct buf *err;
};

static int add_section_run(void *arg, const struct store_series_rows *rows)
{
    struct section_add *a = arg;
    buf_reset(&a->key);
    for (size_t i = 0; i < a->s->ndims; i++) {
        buf_append(&a->key, rows->host.ptr, rows->host.len);
        buf_putc(&a->key, '\0');
    }
    return iql_groups_add_recs(a->g, a->key.data ? a->key.data : "", a->key.len, rows->ts,
                               rows->value, rows->n, a->err);
}

/* Whether the statement reads one host's rows (WHERE "host" = '...'). */
static bool one_host(const struct sel *s)
{
    return s->w.host.is_set && s->w.host.n == 1;
}

/* Whether the aggregate may read its sections on two threads
 * (read_sections): every slot merges, no aux column, no tag dimension but
 * the host (sections hold no other tag). */
static bool may_split(const struct sel *s)
{
    if (!s->agg || !iql_slots_mergeable(s->slots, s->nslots) ||
        (s->ndims && (s->ndims > 1 || s->host_dim != 0)))
        return false;
    for (size_t j = 0; j < s->ncols; j++)
        if (s->cols[j].is_aux)
            return false;
    return true;
}

/* A helper thread's share of the sections, read into groups of its own. */
struct section_part {
    struct exec *ex;
    size_t *next; /* the next cursor to take, shared */
    struct iql_groups g;
    struct section_add sa;
    struct buf err;
    int rc;
};

static void read_part(void *arg)
{
    struct section_part *p = arg;
    p->rc = query_exec_each_section_shared(p->ex, p->next, add_section_run, &p->sa);
}

/* The host sections' rows added to g, with a helper thread when g's slots
 * merge, two cursors or more are left and a helper is free (a one-host
 * panel reads 16 buckets' sections, 2,500 rows): each thread takes the
 * next cursor not taken, the helper's groups merged into g at the end;
 * else all of them here. */
static int read_sections(struct sel *s, struct reader *rd, struct iql_groups *g,
                         const struct iql_group_opts *go)
{
    struct section_add sa = {s, g, BUF_INIT, s->err};
    size_t next = 0;
    struct section_part p = {.ex = rd->ex, .next = &next};
    struct assist helper;
    /* one host's sections, once read, are kept (store_series_each): a
     * lookup a window and event, where a helper would cost a second CPU
     * for nothing (a one-host panel 230-280 us of CPU a request alone,
     * 450-500 split, the same time); its first read seeks, and splits */
    bool split = may_split(s) && iql_groups_mergeable(g) && query_exec_sections_left(rd->ex) >= 2 &&
                 !(one_host(s) && query_exec_sections_kept(rd->ex));
    if (split) {
        iql_groups_init(&p.g, go);
        p.err = (struct buf)BUF_INIT;
        p.sa = (struct section_add){s, &p.g, BUF_INIT, &p.err};
        split = assist_offer(&helper, read_part, &p);
    }
    int rc;
    if (!split) {
        rc = query_exec_each_section(rd->ex, add_section_run, &sa);
    } else {
        rc = query_exec_each_section_shared(rd->ex, &next, add_section_run, &sa);
        if (assist_wait(&helper)) {
            if (!rc && p.rc) {
                rc = p.rc;
                buf_append(s->err, p.err.data, p.err.len);
            }
            if (!rc)
                rc = iql_groups_merge(g, &p.g, s->err);
        }
    }
    if (p.sa.g) {
        iql_groups_destroy(&p.g);
        buf_destroy(&p.err);
        buf_destroy(&p.sa.key);
    }
    buf_destroy(&sa.key);
    return rc;
}

/* The time buckets of the statement's range, when it has GROUP BY time
 * and both bounds (0: unknown). */
static size_t buckets_hint(const struct sel *s)
{
    const struct iql_stmt *st = s->st;
    if (!st->has_time_group || st->interval <= 0 || s->lo == INT64_MIN || s->hi == INT64_MAX ||
        s->hi < s->lo)
        return 0;
    uint64_t n = ((uint64_t)s->hi - (uint64_t)s->lo) / (uint64_t)st->interval + 2;
    return n > 4096 ? 4096 : (size_t)n;
}

static int select_agg(struct sel *s, struct reader *rd)
{
    struct iql_groups g;
    const struct iql_stmt *st = s->st;
    const struct iql_ex **aux = xcalloc(s->ncols + 1, sizeof *aux);
    size_t naux = 0;
    for (size_t j = 0; j < s->ncols; j++)
        if (s->cols[j].is_aux)
            aux[naux++] = s->cols[j].ex;
    struct iql_group_opts go = {s->slots,
                                s->nslots,
                                st->has_time_group,
                                st->interval,
                                st->offset,
                                (size_t)s->c->o->q->max_groups,
                                s->c->tz,
                                aux,
                                naux,
                                s->c->o->host_tag,
                                buckets_hint(s)};
    iql_groups_init(&g, &go);
    int rc = naux ? ERR_OK : read_sections(s, rd, &g, &go);
    struct buf key = BUF_INIT;
    while (rc == ERR_OK && (rc = query_exec_next(rd->ex)) == 1) {
        struct cond_row *row = query_exec_cond_row(rd->ex);
        series_key(s, row, &key);
        if ((rc = iql_groups_add(&g, key.data ? key.data : "", key.len, row, s->err)) != ERR_OK)
            break;
    }
    buf_destroy(&key);
    if (rc < 0)
        read_error(s, rc);
    else
        rc = emit_groups(s, &g);
    iql_groups_destroy(&g);
    free(aux);
    return rc;
}

/* Moves the time bounds of cond's top-level AND by `by`: the lower ones
 * (>, >=) down, or with upper the upper ones (<, <=) up; saturating. */
static void shift_ts_bounds(struct sql_expr *e, bool upper, int64_t by)
{
    if (!e)
        return;
    if (e->kind == SQL_E_AND) {
        for (size_t i = 0; i < e->nkids; i++)
            shift_ts_bounds(e->kids[i], upper, by);
        return;
    }
    if (e->kind != SQL_E_LEAF || e->leaf != SQL_L_CMP || e->col.kind != SQL_COL_TS ||
        e->v.type != SQL_V_INT)
        return;
    if (!upper && (e->op == SQL_GE || e->op == SQL_GT))
        e->v.i = e->v.i < INT64_MIN + by ? INT64_MIN : e->v.i - by;
    else if (upper && (e->op == SQL_LE || e->op == SQL_LT))
        e->v.i = e->v.i > INT64_MAX - by ? INT64_MAX : e->v.i + by;
}

/* derivative(), non_negative_derivative(), difference(),
 * non_negative_difference(), moving_average() and elapsed() over GROUP BY
 * time read one interval more than the WHERE says, as InfluxDB 1.x does:
 * before the start (after the end with ORDER BY time DESC), so the first
 * row has a predecessor. The extra bucket holds that interval's points
 * from the moved bound (partial), the filter's first bucket all of its own;
 * moving_average(x, N) too reads one interval, not N - 1 (InfluxDB 1.6.7's
 * answers; tests/e2e/63-grafana-replay.t). cumulative_sum() reads the
 * WHERE's range. */
/* Bounds the slots of the calls in e to lo..hi. */
static void bound_slots(struct sel *s, const struct iql_ex *e, int64_t lo, int64_t hi)
{
    if (!e)
        return;
    if (e->kind == IQL_X_BIN) {
        bound_slots(s, e->l, lo, hi);
        bound_slots(s, e->r, lo, hi);
    } else if (e->kind == IQL_X_CALL) {
        for (size_t k = 0; k < s->nslots; k++)
            if (s->slots[k].call == e)
                s->slots[k].lo = lo, s->slots[k].hi = hi;
        for (size_t i = 0; i < e->nargs; i++)
            bound_slots(s, e->args[i], lo, hi);
    }
}

static void extend_range(struct sel *s)
{
    if (!s->agg || !s->st->has_time_group || !s->has_tr || s->st->interval <= 0)
        return;
    bool ext = false;
    for (size_t j = 0; j < s->ncols; j++)
        ext |= s->cols[j].tr >= 0 && s->cols[j].tr != IQL_TR_CUMULATIVE_SUM;
    if (!ext)
        return;
    /* the other columns (a plain aggregate beside, cumulative_sum) keep
     * the filter's range, as in InfluxDB, where each call reads its own */
    int64_t lo = s->w.has_lo ? s->w.ts_lo : INT64_MIN, hi = s->w.has_hi ? s->w.ts_hi : INT64_MAX;
    for (size_t j = 0; j < s->ncols; j++)
        if (s->cols[j].tr < 0 || s->cols[j].tr == IQL_TR_CUMULATIVE_SUM) {
            bound_slots(s, s->cols[j].ex, lo, hi);
            s->mixed = true;
            s->keep_filled |= s->cols[j].tr < 0 && s->st->fill != IQL_FILL_NONE;
        }
    s->plain_lo = lo, s->plain_hi = hi;
    shift_ts_bounds(s->w.cond, s->st->desc, s->st->interval);
    cond_derive(&s->w);
}

/* Whether e names a tag or field the statement must tell apart or expand
 * by the measurement's keys (field_type, star_call): a bare
 * identifier in the select list (outside a call), a wildcard or a regular
 * expression, top() or bottom() (tags among their arguments), or in the
 * condition an identifier but time and the host tag. */
static bool ex_needs_keys(const struct iql_ex *e, bool in_call, bool in_where, const char *host)
{
    if (!e)
        return false;
    switch (e->kind) {
    case IQL_X_VAR:
        return in_where ? strcmp(e->s, "time") != 0 && strcmp(e->s, host) != 0 : !in_call;
    case IQL_X_STAR:
    case IQL_X_REGEX: return true;
    case IQL_X_CALL:
        if (!strcasecmp(e->s, "top") || !strcasecmp(e->s, "bottom"))
            return true;
        for (size_t i = 0; i < e->nargs; i++)
            if (ex_needs_keys(e->args[i], true, in_where, host))
                return true;
        return false;
    case IQL_X_BIN:
        return ex_needs_keys(e->l, in_call, in_where, host) ||
               ex_needs_keys(e->r, in_call, in_where, host);
    default: return false;
    }
}

/* The measurement's tag and field keys, read from the catalog when the
 * statement names a tag or a field that the keys tell apart or expand
 * (ex_needs_keys); else the host tag alone and no field (a dashboard
 * panel's aggregates of named fields by host and time, which read nothing
 * else of them): the catalog's two passes over the range's files spared. */
/* Whether e calls a function that gives a string or boolean field's
 * value: under fill(value) its holes take the field's type
 * (value_fill_row). */
static bool has_typed_call(const struct iql_ex *e)
{
    if (!e)
        return false;
    if (e->kind == IQL_X_CALL) {
        if (iql_fn_name_keeps_type(e->s))
            return true;
        for (size_t i = 0; i < e->nargs; i++)
            if (has_typed_call(e->args[i]))
                return true;
    }
    return has_typed_call(e->l) || has_typed_call(e->r);
}

static int schema(struct sel *s, struct store_snap *snap, int64_t lo, int64_t hi)
{
    const struct iql_stmt *st = s->st;
    const char *host = s->c->o->host_tag;
    bool needed = st->group_all || ex_needs_keys(st->where, false, true, host);
    for (size_t i = 0; i < st->nfields && !needed && st->fill == IQL_FILL_VALUE; i++)
        needed = has_typed_call(st->fields[i].ex);
    for (size_t i = 0; i < st->nfields && !needed; i++)
        needed = ex_needs_keys(st->fields[i].ex, false, false, host);
    if (needed) {
        int rc = iql_tag_keys(s->c, snap, s->m, lo, hi, &s->tagkeys, &s->ntagkeys);
        return rc ? rc
                  : iql_field_keys(snap, s->m, lo, hi, &s->fieldkeys, &s->fieldtypes,
                                   &s->nfieldkeys);
    }
    s->tagkeys = xcalloc(1, sizeof *s->tagkeys);
    s->tagkeys[0] = xstrdup(host);
    s->ntagkeys = 1;
    return ERR_OK;
}

/* Whether e holds * or /re/ (SELECT *, fn(*), fn(/re/)). */
static bool has_wildcard(const struct iql_ex *e)
{
    if (!e)
        return false;
    if (e->kind == IQL_X_STAR || e->kind == IQL_X_REGEX)
        return true;
    for (size_t i = 0; i < e->nargs; i++)
        if (has_wildcard(e->args[i]))
            return true;
    return has_wildcard(e->l) || has_wildcard(e->r);
}

static int select_measurement(struct sel *s, struct reader *rd)
{
    struct store_snap *snap = rd->snap;
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    iql_where_time(s->c, s->st->where, &lo, &hi);
    bool wild = false;
    for (size_t i = 0; i < s->st->nfields && !wild; i++)
        wild = has_wildcard(s->st->fields[i].ex);
    if (wild) /* a wildcard expands to the names of the shards met, as InfluxDB's */
        iql_shard_range(rd->db, &lo, &hi);
    if (schema(s, snap, lo, hi)) {
        buf_puts(s->err, "cannot read the catalog");
        return ERR_IO;
    }
    build_dims(s);
    s->host_dim = host_dim_of(s);
    for (size_t i = 0; i < s->st->nfields; i++)
        if (build_col(s, &s->st->fields[i]))
            return ERR_INVAL;
    if (s->agg && check_aux(s))
        return ERR_INVAL;
    if (s->ncols == 0)
        return ERR_OK; /* a wildcard over a measurement without fields */
    if (iql_where(s->c, s->st->where, s->m, s->tagkeys, s->ntagkeys, &s->w, s->err))
        return ERR_INVAL;
    if (may_split(s) && !one_host(s))
        assist_warm(); /* awake by the time the sections are opened */
    if (s->agg && s->st->has_time_group && !s->w.has_hi) {
        /* InfluxDB's upper bound of GROUP BY time queries is now() */
        sql_where_ts_hi(&s->w, s->c->now);
    }
    extend_range(s);
    s->lo = s->w.has_lo ? s->w.ts_lo : INT64_MIN;
    s->hi = s->w.has_hi ? s->w.ts_hi : INT64_MAX;
    int rc = reader_open(s, rd, s->agg);
    if (rc == ERR_OK)
        rc = s->agg ? select_agg(s, rd) : select_raw(s, rd);
    return rc;
}

static int check_select(const struct iql_stmt *st, struct buf *err)
{
    for (size_t i = 1; i < st->nfrom; i++) {
        const char *a = st->from[0].db ? st->from[0].db : "",
                   *b = st->from[i].db ? st->from[i].db : "";
        if (strcmp(a, b) != 0) {
            buf_puts(err, "sources from several databases in one statement are not supported: "
                          "send one statement per database");
            return ERR_INVAL;
        }
    }
    if (st->has_time_group && !any_agg(st)) {
        buf_puts(err, "GROUP BY requires at least one aggregate function");
        return ERR_INVAL;
    }
    return ERR_OK;
}

static int select_db(const struct iql_ctx *c, const struct iql_stmt *st, struct iql_result *r);

int iql_exec_select(const struct iql_ctx *c, const struct iql_stmt *st, struct iql_result *r)
{
    if (check_select(st, &r->err))
        return ERR_INVAL;
    struct iql_ctx zc = *c;
    struct iql_tz *tz = NULL;
    if (st->has_tz && strcmp(st->tz, "UTC") != 0) {
        if (iql_tz_load(st->tz, &tz, &r->err))
            return ERR_INVAL;
        zc.tz = tz;
    }
    int rc = select_db(&zc, st, r);
    iql_tz_free(tz);
    return rc;
}

static int select_db(const struct iql_ctx *c, const struct iql_stmt *st, struct iql_result *r)
{
    struct reader rd = {0};
    const char *db = st->nfrom && st->from[0].db ? st->from[0].db : NULL;
    if (iql_open_db(c, db, &rd.db, r))
        return ERR_NOTFOUND;
    rd.snap = store_snapshot(rd.db);
    char **ms = NULL;
    size_t nm = 0;
    struct star u = {0};
    int rc = iql_measurements(rd.snap, st, &ms, &nm, &r->err);
    if (rc == ERR_OK && has_star(st) &&
        (rc = star_union(c, rd.db, rd.snap, st, ms, nm, &u)) != ERR_OK)
        buf_puts(&r->err, "cannot read the catalog");
    for (size_t i = 0; i < nm && rc == ERR_OK; i++) {
        struct sel s = {0};
        s.c = c;
        s.st = st;
        s.r = r;
        s.m = ms[i];
        s.err = &r->err;
        s.agg = any_agg(st);
        s.star_tags = u.tags;
        s.star_fields = u.fields;
        s.nstar_tags = u.ntags;
        s.nstar_fields = u.nfields;
        sql_where_init(&s.w);
        struct reader one = {rd.db, rd.snap, {0}, false, NULL};
        rc = select_measurement(&s, &one);
        reader_close(&one);
        sel_destroy(&s);
    }
    iql_names_free(ms, nm);
    iql_names_free(u.tags, u.ntags);
    iql_names_free(u.fields, u.nfields);
    store_snap_release(rd.snap);
    store_db_unref(rd.db);
    return rc;
}
