/* InfluxQL's functions (iql_func.h): values, aggregate states per group,
 * arithmetic, fill and transformations. Numbers follow InfluxDB 1.x: an
 * integer field keeps integer sums, spreads, selectors and differences;
 * mean, median, stddev, derivative and integral are floats; percentile is
 * the nearest rank floor(n * p / 100 + 0.5). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/coding.h"
#include "base/err.h"
#include "query/agg.h"
#include "query/encode.h"
#include "query/iql_func.h"
#include "query/iql_tz.h"
#include "store/store.h"

/* --- values --- */

void iql_val_of_field(const struct rec_field *f, struct iql_val *out)
{
    memset(out, 0, sizeof *out);
    switch (f->type) {
    case REC_FLOAT:
        out->kind = IQL_V_FLOAT;
        out->f = f->v.f;
        break;
    case REC_INT:
        out->kind = IQL_V_INT;
        out->i = f->v.i;
        out->f = (double)f->v.i;
        break;
    case REC_UINT:
        if (f->v.u <= INT64_MAX) {
            out->kind = IQL_V_INT;
            out->i = (int64_t)f->v.u;
        } else {
            out->kind = IQL_V_FLOAT;
        }
        out->f = (double)f->v.u;
        break;
    case REC_BOOL:
        out->kind = IQL_V_BOOL;
        out->b = f->v.b;
        break;
    case REC_STRING:
        out->kind = IQL_V_STR;
        out->s = f->v.s;
        break;
    }
}

void iql_val_json(const struct iql_val *v, struct buf *out)
{
    switch (v->kind) {
    case IQL_V_FLOAT: {
        if (!isfinite(v->f)) {
            buf_puts(out, "null");
            break;
        }
        size_t at = out->len;
        enc_double(out, v->f);
        /* Go prints a whole float without ".0" */
        if (out->len >= at + 2 && memcmp(out->data + out->len - 2, ".0", 2) == 0)
            out->len -= 2;
        break;
    }
    case IQL_V_INT: enc_i64(out, v->i); break;
    case IQL_V_STR: enc_json_str(out, v->s.ptr, v->s.len); break;
    case IQL_V_BOOL: buf_puts(out, v->b ? "true" : "false"); break;
    default: buf_puts(out, "null");
    }
}

static bool is_num(const struct iql_val *v)
{
    return v->kind == IQL_V_FLOAT || v->kind == IQL_V_INT;
}

static double num(const struct iql_val *v)
{
    return v->kind == IQL_V_INT ? (double)v->i : v->f;
}

static struct iql_val fval(double f)
{
    return (struct iql_val){.kind = IQL_V_FLOAT, .f = f};
}

static struct iql_val ival(int64_t i)
{
    return (struct iql_val){.kind = IQL_V_INT, .i = i, .f = (double)i};
}

/* --- functions --- */

static const struct {
    const char *name;
    enum iql_fn fn;
    bool strings; /* takes string fields */
    bool bools;   /* takes boolean fields (false < true for min and max) */
} fns[] = {
    {"count", IQL_F_COUNT, true, true},
    {"sum", IQL_F_SUM, false, false},
    {"mean", IQL_F_MEAN, false, false},
    {"median", IQL_F_MEDIAN, false, false},
    {"mode", IQL_F_MODE, true, true},
    {"min", IQL_F_MIN, false, true},
    {"max", IQL_F_MAX, false, true},
    {"first", IQL_F_FIRST, true, true},
    {"last", IQL_F_LAST, true, true},
    {"percentile", IQL_F_PERCENTILE, false, false},
    {"spread", IQL_F_SPREAD, false, false},
    {"stddev", IQL_F_STDDEV, false, false},
    {"distinct", IQL_F_DISTINCT, false, false},
    {"integral", IQL_F_INTEGRAL, false, false},
    {"top", IQL_F_TOP, false, false},
    {"bottom", IQL_F_BOTTOM, false, false},
};

bool iql_fn_takes_type(const char *name, int type)
{
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (strcmp(name, fns[i].name) == 0)
            return type == REC_STRING ? fns[i].strings : type == REC_BOOL ? fns[i].bools : true;
    return false;
}

bool iql_fn_is_selector(enum iql_fn fn)
{
    return fn == IQL_F_MIN || fn == IQL_F_MAX || fn == IQL_F_FIRST || fn == IQL_F_LAST;
}

bool iql_fn_name_keeps_type(const char *name)
{
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (strcmp(name, fns[i].name) == 0)
            return (fns[i].strings || fns[i].bools) && fns[i].fn != IQL_F_COUNT;
    return false;
}

int iql_slot_of(const struct iql_ex *call, struct iql_slot *out, struct buf *err)
{
    size_t i = 0;
    while (i < sizeof fns / sizeof fns[0] && strcmp(call->s, fns[i].name) != 0)
        i++;
    if (i == sizeof fns / sizeof fns[0]) {
        buf_printf(err, "undefined function %s()", call->s);
        return ERR_INVAL;
    }
    memset(out, 0, sizeof *out);
    out->fn = fns[i].fn;
    out->call = call;
    out->lo = INT64_MIN;
    out->hi = INT64_MAX;
    bool topn = out->fn == IQL_F_TOP || out->fn == IQL_F_BOTTOM;
    size_t want = out->fn == IQL_F_PERCENTILE || topn ? 2 : 1;
    bool opt2 = out->fn == IQL_F_INTEGRAL;
    if (call->nargs != want && !(opt2 && call->nargs == 2)) {
        buf_printf(err, "invalid number of arguments for %s, expected %zu, got %zu", call->s, want,
                   call->nargs);
        return ERR_INVAL;
    }
    const struct iql_ex *arg = call->args[0];
    if (out->fn == IQL_F_COUNT && arg->kind == IQL_X_CALL && strcmp(arg->s, "distinct") == 0 &&
        arg->nargs == 1) { /* count(distinct(f)) */
        out->fn = IQL_F_COUNT_DISTINCT;
        arg = arg->args[0];
    }
    if (arg->kind != IQL_X_VAR) {
        buf_printf(err, "expected field argument in %s()", call->s);
        return ERR_INVAL;
    }
    out->field = arg->s;
    out->arg = 1e9;
    if (topn) {
        const struct iql_ex *n = call->args[1];
        if (n->kind != IQL_X_NUM || !n->is_int || n->i < 1) {
            buf_printf(err, "expected integer as last argument in %s(), found %s", call->s,
                       n->kind == IQL_X_VAR ? "a tag (the tag form is not supported)" : "another");
            return ERR_INVAL;
        }
        out->arg = (double)n->i;
    } else if (out->fn == IQL_F_PERCENTILE) {
        const struct iql_ex *p = call->args[1];
        if (p->kind != IQL_X_NUM || p->f < 0 || p->f > 100) {
            buf_puts(err, "percentile: the second argument must be a number from 0 to 100");
            return ERR_INVAL;
        }
        out->arg = p->f;
    } else if (call->nargs == 2) {
        if (call->args[1]->kind != IQL_X_DUR || call->args[1]->i <= 0) {
            buf_puts(err, "second argument to integral must be a duration");
            return ERR_INVAL;
        }
        out->arg = (double)call->args[1]->i;
    }
    return ERR_OK;
}

/* --- aggregate states --- */

struct aslot {
    int64_t n;
    double sum;
    int64_t isum;
    bool all_int, ovf;
    struct iql_val mn, mx, first, last; /* first/last strings owned */
    int64_t mn_ts, mx_ts, first_ts, last_ts;
    double wm, m2;        /* Welford */
    unsigned picked;      /* the selectors whose point the last feed replaced (PICK_*) */
    int64_t isum_spread;  /* spread() of integers, when it fits */
    struct iql_val *strs; /* distinct(): the string values kept (owned), ts in i */
    size_t nstr, strcap;
    double *vals;
    int64_t *vts;
    size_t nv, cap;
};

enum { PICK_FIRST = 1, PICK_LAST = 2, PICK_MIN = 4, PICK_MAX = 8 };

/* a > b for values of one kind (other kinds: false). */
static bool val_greater(const struct iql_val *a, const struct iql_val *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case IQL_V_FLOAT: return a->f > b->f;
    case IQL_V_INT: return a->i > b->i;
    case IQL_V_BOOL: return a->b && !b->b;
    case IQL_V_STR: {
        size_t n = a->s.len < b->s.len ? a->s.len : b->s.len;
        int c = memcmp(a->s.ptr, b->s.ptr, n);
        return c > 0 || (c == 0 && a->s.len > b->s.len);
    }
    default: return false;
    }
}

struct iql_astate {
    struct aslot s[1];
};

static void keep(struct aslot *a, double x, int64_t ts)
{
    if (a->nv == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 8;
        a->vals = xrealloc(a->vals, a->cap * sizeof *a->vals);
        a->vts = xrealloc(a->vts, a->cap * sizeof *a->vts);
    }
    a->vals[a->nv] = x;
    a->vts[a->nv++] = ts;
}

static void set_owned(struct iql_val *dst, const struct iql_val *v)
{
    if (dst->kind == IQL_V_STR)
        free((void *)dst->s.ptr);
    *dst = *v;
    if (v->kind == IQL_V_STR)
        dst->s = slice_make(xstrndup(v->s.ptr, v->s.len), v->s.len);
}

static bool needs_values(enum iql_fn fn)
{
    return fn == IQL_F_MEDIAN || fn == IQL_F_MODE || fn == IQL_F_PERCENTILE ||
           fn == IQL_F_DISTINCT || fn == IQL_F_INTEGRAL || fn == IQL_F_TOP || fn == IQL_F_BOTTOM ||
           fn == IQL_F_COUNT_DISTINCT;
}

static void feed_num(struct aslot *a, const struct iql_val *v, int64_t ts)
{
    double x = num(v);
    bool isint = v->kind == IQL_V_INT;
    if (a->n == 1) {
        a->all_int = isint;
        a->mn = a->mx = *v;
        a->mn_ts = a->mx_ts = ts;
        a->picked |= PICK_MIN | PICK_MAX;
    } else {
        a->all_int &= isint;
        if (x < num(&a->mn) || (x == num(&a->mn) && ts < a->mn_ts)) {
            a->mn = *v;
            a->mn_ts = ts;
            a->picked |= PICK_MIN;
        }
        if (x > num(&a->mx) || (x == num(&a->mx) && ts < a->mx_ts)) {
            a->mx = *v;
            a->mx_ts = ts;
            a->picked |= PICK_MAX;
        }
    }
    a->sum += x;
    if (isint && __builtin_add_overflow(a->isum, v->i, &a->isum))
        a->ovf = true;
    double d = x - a->wm;
    a->wm += d / (double)a->n;
    a->m2 += d * (x - a->wm);
}

/* feed of what a dashboard's panels ask (a count, or the mean, max or min
 * of a number), kept alone (result() reads no more): true when it is one
 * of those and was added. Inline, for the loops of many rows. */
static inline bool feed_simple(struct aslot *a, enum iql_fn fn, const struct iql_val *v, int64_t ts)
{
    switch (fn) {
    case IQL_F_COUNT: a->n++; return true;
    case IQL_F_MEAN:
        if (!is_num(v))
            return false;
        a->n++;
        a->sum += num(v);
        return true;
    case IQL_F_MAX:
        if (!is_num(v))
            return false;
        if (++a->n == 1 || num(v) > num(&a->mx) || (num(v) == num(&a->mx) && ts < a->mx_ts)) {
            a->mx = *v;
            a->mx_ts = ts;
            a->picked |= PICK_MAX;
        }
        return true;
    case IQL_F_MIN:
        if (!is_num(v))
            return false;
        if (++a->n == 1 || num(v) < num(&a->mn) || (num(v) == num(&a->mn) && ts < a->mn_ts)) {
            a->mn = *v;
            a->mn_ts = ts;
            a->picked |= PICK_MIN;
        }
        return true;
    default: return false;
    }
}

/* min() or max() of booleans: false < true, the earliest of equal ones. */
static void feed_bool(struct aslot *a, enum iql_fn fn, const struct iql_val *v, int64_t ts)
{
    bool is_max = fn == IQL_F_MAX;
    struct iql_val *at = is_max ? &a->mx : &a->mn;
    int64_t *at_ts = is_max ? &a->mx_ts : &a->mn_ts;
    if (++a->n == 1 || at->kind != IQL_V_BOOL || (is_max ? v->b && !at->b : !v->b && at->b) ||
        (v->b == at->b && ts < *at_ts)) {
        *at = *v;
        *at_ts = ts;
        a->picked |= is_max ? PICK_MAX : PICK_MIN;
    }
}

/* Adds v (non-null) at ts to slot a of function fn; returns the values
 * it kept (0 or 1). */
static size_t feed(struct aslot *a, enum iql_fn fn, const struct iql_val *v, int64_t ts)
{
    if (feed_simple(a, fn, v, ts))
        return 0;
    if (v->kind == IQL_V_BOOL && (fn == IQL_F_MIN || fn == IQL_F_MAX)) {
        feed_bool(a, fn, v, ts);
        return 0;
    }
    bool numeric = is_num(v);
    bool distinct = fn == IQL_F_DISTINCT || fn == IQL_F_COUNT_DISTINCT;
    /* strings are distinct values too; mode() keeps strings and booleans */
    if ((distinct && v->kind == IQL_V_STR) ||
        (fn == IQL_F_MODE && (v->kind == IQL_V_STR || v->kind == IQL_V_BOOL))) {
        if (a->nstr == a->strcap) {
            a->strcap = a->strcap ? a->strcap * 2 : 8;
            a->strs = xrealloc(a->strs, a->strcap * sizeof *a->strs);
        }
        struct iql_val *s = &a->strs[a->nstr++];
        *s = *v;
        s->s = v->kind == IQL_V_STR ? slice_make(xstrndup(v->s.ptr, v->s.len), v->s.len)
                                    : slice_make(NULL, 0);
        s->i = ts;
        return 1;
    }
    if (!numeric && fn != IQL_F_COUNT && fn != IQL_F_FIRST && fn != IQL_F_LAST)
        return 0;
    a->n++;
    /* ties in time (points of several series at one ts): the larger value
     * wins, for first as for last, as InfluxDB's selectors choose */
    if (a->n == 1 || ts < a->first_ts || (ts == a->first_ts && val_greater(v, &a->first))) {
        set_owned(&a->first, v);
        a->first_ts = ts;
        a->picked |= PICK_FIRST;
    }
    if (a->n == 1 || ts > a->last_ts || (ts == a->last_ts && val_greater(v, &a->last))) {
        set_owned(&a->last, v);
        a->last_ts = ts;
        a->picked |= PICK_LAST;
    }
    if (!numeric)
        return 0;
    feed_num(a, v, ts);
    if (!needs_values(fn))
        return 0;
    keep(a, v->kind == IQL_V_INT ? (double)v->i : v->f, ts);
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* x as an integer, clamped to int64's range (a double of an int64 may
 * round past it). */
static int64_t to_i64(double x)
{
    if (!(x > -9.2233720368547758e18))
        return INT64_MIN;
    if (!(x < 9.2233720368547758e18))
        return INT64_MAX;
    return (int64_t)x;
}

static struct iql_val typed(const struct aslot *a, double x)
{
    return a->all_int ? ival(to_i64(x)) : fval(x);
}

struct pt {
    int64_t ts;
    double v;
};

static int cmp_top(const void *a, const void *b)
{
    const struct pt *x = a, *y = b;
    if (x->v != y->v)
        return x->v > y->v ? -1 : 1;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

static int cmp_bottom(const void *a, const void *b)
{
    const struct pt *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

static int cmp_time(const void *a, const void *b)
{
    const struct pt *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* Slot a's kept (ts, value) pairs, sorted by cmp (n + 1 allocated). */
static struct pt *sorted_points(const struct aslot *a, int (*cmp)(const void *, const void *))
{
    struct pt *p = xmalloc((a->nv + 1) * sizeof *p);
    for (size_t j = 0; j < a->nv; j++)
        p[j] = (struct pt){a->vts[j], a->vals[j]};
    qsort(p, a->nv, sizeof *p, cmp);
    return p;
}

/* The most frequent of n points (n >= 1) sorted by value, equal ones by
 * time (cmp_bottom), ties decided as InfluxDB 1.x decides them: a run
 * counted from its second value on, and a run that reaches the best count
 * replaces it unless it began after the point where the best was last
 * counted (so a later, larger value mostly wins a tie). Its index. */
static size_t mode_index(const struct pt *p, size_t n)
{
    size_t cur = 0, best = 0, curn = 0, bestn = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i].v != p[cur].v) {
            cur = i;
            curn = 1;
            continue;
        }
        curn++;
        if (bestn > curn || (bestn == curn && p[cur].ts > p[best].ts))
            continue;
        bestn = curn;
        best = i;
    }
    return best;
}

static struct iql_val mode_of(struct aslot *a)
{
    struct pt *p = sorted_points(a, cmp_bottom);
    struct iql_val out = typed(a, p[mode_index(p, a->nv)].v);
    free(p);
    return out;
}

/* The value at rank ceil-ish(n * p / 100) of the sorted values, as
 * InfluxDB picks it (none under rank 1); *ts its point's time (equal
 * values by time). */
static struct iql_val percentile_of(struct aslot *a, double pct, int64_t *ts)
{
    long i = (long)floor((double)a->nv * pct / 100.0 + 0.5) - 1;
    if (i < 0 || (size_t)i >= a->nv) /* no point: a hole, as InfluxDB fills it */
        return (struct iql_val){.kind = IQL_V_NULL, .b = true};
    struct pt *p = sorted_points(a, cmp_bottom);
    struct iql_val out = typed(a, p[i].v);
    *ts = p[i].ts;
    free(p);
    return out;
}

static struct iql_val integral_of(struct aslot *a, double unit)
{
    /* sort (ts, value) pairs by ts: insertion into index order */
    size_t n = a->nv;
    size_t *ix = xmalloc((n ? n : 1) * sizeof *ix);
    for (size_t i = 0; i < n; i++)
        ix[i] = i;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && a->vts[ix[j - 1]] > a->vts[ix[j]]; j--) {
            size_t t = ix[j];
            ix[j] = ix[j - 1];
            ix[j - 1] = t;
        }
    double total = 0;
    for (size_t i = 1; i < n; i++) {
        double dt = (double)(a->vts[ix[i]] - a->vts[ix[i - 1]]);
        total += (a->vals[ix[i]] + a->vals[ix[i - 1]]) / 2 * dt / unit;
    }
    free(ix);
    return fval(total);
}

/* distinct(): each value once, with the time it was first seen, in the
 * order InfluxDB gives them (that time, then the value). */
struct dv {
    struct iql_val v; /* strings borrowed from the slot */
    int64_t ts;
};

static int cmp_dv_value(const void *x, const void *y)
{
    const struct dv *a = x, *b = y;
    if (a->v.kind != b->v.kind)
        return a->v.kind == IQL_V_STR ? 1 : -1;
    if (a->v.kind == IQL_V_STR) {
        size_t n = a->v.s.len < b->v.s.len ? a->v.s.len : b->v.s.len;
        int c = memcmp(a->v.s.ptr, b->v.s.ptr, n);
        if (c || a->v.s.len != b->v.s.len)
            return c ? c : (a->v.s.len > b->v.s.len) - (a->v.s.len < b->v.s.len);
    } else if (a->v.f != b->v.f) {
        return a->v.f < b->v.f ? -1 : 1;
    }
    return (a->ts > b->ts) - (a->ts < b->ts);
}

static int cmp_dv_time(const void *x, const void *y)
{
    const struct dv *a = x, *b = y;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    struct dv a0 = *a, b0 = *b;
    a0.ts = b0.ts = 0;
    return cmp_dv_value(&a0, &b0);
}

static size_t distinct_of(struct aslot *a, struct dv **out)
{
    struct dv *d = xmalloc((a->nv + a->nstr + 1) * sizeof *d);
    size_t n = 0;
    for (size_t j = 0; j < a->nv; j++)
        d[n++] = (struct dv){{.kind = IQL_V_FLOAT, .f = a->vals[j]}, a->vts[j]};
    for (size_t j = 0; j < a->nstr; j++)
        d[n++] = (struct dv){a->strs[j], a->strs[j].i};
    qsort(d, n, sizeof *d, cmp_dv_value); /* equal values together, earliest first */
    size_t k = 0;
    for (size_t j = 0; j < n; j++) {
        struct dv cur = d[j];
        cur.ts = 0;
        struct dv prev = k ? d[k - 1] : cur;
        prev.ts = 0;
        if (k == 0 || cmp_dv_value(&prev, &cur) != 0)
            d[k++] = d[j];
    }
    qsort(d, k, sizeof *d, cmp_dv_time);
    *out = d;
    return k;
}

/* Order of kept strings and booleans of one kind: by value, then time. */
static int cmp_kept(const void *x, const void *y)
{
    const struct iql_val *a = x, *b = y;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    int c = a->kind == IQL_V_BOOL ? (int)a->b - (int)b->b : slice_cmp(a->s, b->s);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* mode() of the strings kept (strs, ts in i), by mode_index's rule (the
 * result points into strs); of booleans, true unless false is more
 * frequent (InfluxDB's rule for them). */
static struct iql_val mode_of_kept(struct aslot *a)
{
    if (a->strs[0].kind == IQL_V_BOOL) {
        size_t trues = 0;
        for (size_t i = 0; i < a->nstr; i++)
            trues += a->strs[i].kind == IQL_V_BOOL && a->strs[i].b;
        return (struct iql_val){.kind = IQL_V_BOOL, .b = 2 * trues >= a->nstr};
    }
    qsort(a->strs, a->nstr, sizeof *a->strs, cmp_kept);
    /* each string as its rank among them: mode_index's points */
    struct pt *p = xmalloc(a->nstr * sizeof *p);
    double rank = 0;
    for (size_t i = 0; i < a->nstr; i++) {
        struct iql_val x = a->strs[i], prev = a->strs[i ? i - 1 : 0];
        x.i = prev.i = 0; /* the values alone */
        if (cmp_kept(&x, &prev) != 0)
            rank++;
        p[i] = (struct pt){a->strs[i].i, rank};
    }
    size_t best = mode_index(p, a->nstr);
    free(p);
    return a->strs[best];
}

static void result(struct aslot *a, const struct iql_slot *sl, struct iql_val *out, int64_t *ts)
{
    *out = (struct iql_val){.kind = IQL_V_NULL};
    if (a->n == 0 && a->nstr == 0)
        return;
    switch (sl->fn) {
    case IQL_F_COUNT: *out = ival(a->n); break;
    case IQL_F_SUM: *out = a->all_int && !a->ovf ? ival(a->isum) : fval(a->sum); break;
    case IQL_F_MEAN: *out = fval(a->sum / (double)a->n); break;
    case IQL_F_MIN:
        *out = a->mn;
        *ts = a->mn_ts;
        break;
    case IQL_F_MAX:
        *out = a->mx;
        *ts = a->mx_ts;
        break;
    case IQL_F_FIRST:
        *out = a->first;
        *ts = a->first_ts;
        break;
    case IQL_F_LAST:
        *out = a->last;
        *ts = a->last_ts;
        break;
    case IQL_F_SPREAD:
        if (a->all_int && !__builtin_sub_overflow(a->mx.i, a->mn.i, &a->isum_spread))
            *out = ival(a->isum_spread);
        else
            *out = fval(num(&a->mx) - num(&a->mn));
        break;
    case IQL_F_STDDEV:
        if (a->n > 1)
            *out = fval(sqrt(a->m2 / (double)(a->n - 1)));
        break;
    case IQL_F_MEDIAN:
        qsort(a->vals, a->nv, sizeof(double), cmp_double);
        *out = a->nv % 2 ? typed(a, a->vals[a->nv / 2])
                         : fval((a->vals[a->nv / 2 - 1] + a->vals[a->nv / 2]) / 2);
        if (a->nv % 2 && a->all_int)
            *out = fval(a->vals[a->nv / 2]);
        break;
    case IQL_F_PERCENTILE: *out = percentile_of(a, sl->arg, ts); break;
    case IQL_F_MODE: *out = a->nv ? mode_of(a) : mode_of_kept(a); break;
    case IQL_F_INTEGRAL: *out = integral_of(a, sl->arg); break;
    case IQL_F_COUNT_DISTINCT: {
        struct dv *d;
        size_t n = distinct_of(a, &d);
        free(d);
        *out = ival((int64_t)n);
        break;
    }
    case IQL_F_DISTINCT:
    case IQL_F_TOP:
    case IQL_F_BOTTOM: break;
    }
}

/* What a slot owns: nothing for most aggregates (a panel frees hundreds
 * of groups, each free of NULL a call). */
static void aslot_free(struct aslot *a)
{
    if (a->first.kind == IQL_V_STR)
        free((void *)a->first.s.ptr);
    if (a->last.kind == IQL_V_STR)
        free((void *)a->last.s.ptr);
    if (a->vals) {
        free(a->vals);
        free(a->vts);
    }
    if (a->strs) {
        for (size_t j = 0; j < a->nstr; j++)
            free((void *)a->strs[j].s.ptr);
        free(a->strs);
    }
}

/* --- key map --- */

void iql_keymap_init(struct iql_keymap *m)
{
    memset(m, 0, sizeof *m);
}

void iql_keymap_destroy(struct iql_keymap *m)
{
    free(m->slots);
    free(m->off);
    free(m->len);
    buf_destroy(&m->keys);
}

static void keymap_grow(struct iql_keymap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    size_t *slots = xcalloc_written(cap, sizeof *slots);
    for (size_t i = 0; i < m->n; i++) {
        size_t h = hash_mem(0, m->keys.data + m->off[i], m->len[i]) & (cap - 1);
        while (slots[h])
            h = (h + 1) & (cap - 1);
        slots[h] = i + 1;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
}

bool iql_keymap_get(struct iql_keymap *m, const char *key, size_t len, size_t n, size_t *idx)
{
    (void)n;
    if ((m->n + 1) * 2 > m->cap)
        keymap_grow(m);
    size_t h = hash_mem(0, key, len) & (m->cap - 1);
    for (; m->slots[h]; h = (h + 1) & (m->cap - 1)) {
        size_t i = m->slots[h] - 1;
        if (m->len[i] == len && (len == 0 || memcmp(m->keys.data + m->off[i], key, len) == 0)) {
            *idx = i;
            return false;
        }
    }
    m->slots[h] = m->n + 1;
    *idx = iql_keymap_push(m, key, len);
    return true;
}

size_t iql_keymap_push(struct iql_keymap *m, const char *key, size_t len)
{
    if (m->n == m->lcap) { /* doubled: a panel's groups come by the hundred */
        m->lcap = m->lcap ? 2 * m->lcap : 64;
        m->off = xrealloc(m->off, m->lcap * sizeof *m->off);
        m->len = xrealloc(m->len, m->lcap * sizeof *m->len);
    }
    m->off[m->n] = m->keys.len;
    m->len[m->n] = len;
    buf_append(&m->keys, key, len);
    buf_putc(&m->keys, '\0');
    return m->n++;
}

const char *iql_keymap_key(const struct iql_keymap *m, size_t idx)
{
    return m->keys.data + m->off[idx];
}

size_t iql_keymap_len(const struct iql_keymap *m, size_t idx)
{
    return m->len[idx];
}

/* qsort takes no argument: the map being sorted, per thread */
static _Thread_local const struct iql_keymap *tl_map;

static int cmp_idx(const void *a, const void *b)
{
    const struct iql_keymap *m = tl_map;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    size_t lx = m->len[x], ly = m->len[y];
    int c = memcmp(m->keys.data + m->off[x], m->keys.data + m->off[y], lx < ly ? lx : ly);
    return c ? c : (lx > ly) - (lx < ly);
}

size_t *iql_keymap_sorted(const struct iql_keymap *m, size_t n)
{
    size_t *v = xmalloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = i;
    tl_map = m;
    qsort(v, n, sizeof *v, cmp_idx);
    return v;
}

/* --- groups --- */

struct gord {
    size_t rank; /* of the group's series key, bytewise */
    int64_t bucket;
    size_t idx;
};

static int cmp_gord(const void *a, const void *b)
{
    const struct gord *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->bucket > y->bucket) - (x->bucket < y->bucket);
}

/* The buckets' count from the first to the last when they are regular
 * (GROUP BY time without tz(), or no time: one bucket), few enough that a
 * table of every series' buckets holds about as many slots as there are
 * groups; 0 otherwise. */
static uint64_t dense_buckets(const struct iql_groups *g, size_t nser)
{
    if (!g->o.has_time)
        return 1;
    if (g->o.tz || g->o.interval <= 0 || !g->n)
        return 0;
    int64_t hi = g->min_bucket, span;
    for (size_t i = 0; i < g->n; i++)
        hi = g->gbucket[i] > hi ? g->gbucket[i] : hi;
    if (__builtin_sub_overflow(hi, g->min_bucket, &span))
        return 0;
    uint64_t nb = (uint64_t)span / (uint64_t)g->o.interval + 1;
    return nb <= (2 * g->n + 64) / nser ? nb : 0;
}

size_t *iql_groups_sorted(const struct iql_groups *g)
{
    size_t nser = g->skm.n, *sorder = iql_keymap_sorted(&g->skm, nser);
    size_t *rank = xmalloc((nser ? nser : 1) * sizeof *rank);
    for (size_t i = 0; i < nser; i++)
        rank[sorder[i]] = i;
    size_t *v = xmalloc((g->n ? g->n : 1) * sizeof *v);
    uint64_t nb = nser ? dense_buckets(g, nser) : 0;
    if (nb) { /* each group's place in a table by series rank, then bucket */
        size_t *at = xmalloc(nser * nb * sizeof *at);
        for (size_t i = 0; i < nser * nb; i++)
            at[i] = SIZE_MAX;
        for (size_t i = 0; i < g->n; i++) {
            uint64_t k = g->o.has_time
                             ? (uint64_t)(g->gbucket[i] - g->min_bucket) / (uint64_t)g->o.interval
                             : 0;
            at[rank[g->gsid[i]] * nb + k] = i;
        }
        size_t n = 0;
        for (size_t i = 0; i < nser * nb; i++)
            if (at[i] != SIZE_MAX)
                v[n++] = at[i];
        free(at);
        free(rank);
        free(sorder);
        return v;
    }
    struct gord *o = xmalloc((g->n ? g->n : 1) * sizeof *o);
    for (size_t i = 0; i < g->n; i++)
        o[i] = (struct gord){rank[g->gsid[i]], g->gbucket[i], i};
    qsort(o, g->n, sizeof *o, cmp_gord);
    for (size_t i = 0; i < g->n; i++)
        v[i] = o[i].idx;
    free(o);
    free(rank);
    free(sorder);
    return v;
}

void iql_groups_init(struct iql_groups *g, const struct iql_group_opts *o)
{
    memset(g, 0, sizeof *g);
    g->o = *o;
    if (g->o.has_time) {
        g->o.offset %= g->o.interval;
        if (g->o.offset < 0)
            g->o.offset += g->o.interval;
    }
    iql_keymap_init(&g->km);
    iql_keymap_init(&g->skm);
    g->min_bucket = INT64_MAX;
    g->flen = xcalloc(g->o.nslots + 1, sizeof *g->flen);
    for (size_t k = 0; k < g->o.nslots; k++)
        g->flen[k] = strlen(g->o.slots[k].field);
}

static void aux_free(struct iql_val *v, size_t n)
{
    for (size_t k = 0; v && k < n; k++)
        if (v[k].kind == IQL_V_STR)
            free((void *)v[k].s.ptr);
    free(v);
}

void iql_groups_destroy(struct iql_groups *g)
{
    for (size_t i = 0; i < g->n; i++) {
        for (size_t k = 0; k < g->o.nslots; k++)
            aslot_free(&g->st[i]->s[k]);
        if (g->aux)
            aux_free(g->aux[i], g->o.naux);
    }
    for (size_t i = 0; i < g->nslabs; i++)
        free(g->slabs[i]);
    free(g->slabs);
    free(g->st);
    free(g->gsid);
    free(g->gbucket);
    free(g->flen);
    free(g->aux);
    iql_keymap_destroy(&g->km);
    iql_keymap_destroy(&g->skm);
    buf_destroy(&g->kb);
    buf_destroy(&g->sk);
    for (size_t i = 0; i < g->nsmaps; i++)
        free(g->smaps[i].s);
    free(g->smaps);
}

static unsigned pick_of(enum iql_fn fn)
{
    return fn == IQL_F_FIRST  ? PICK_FIRST
           : fn == IQL_F_LAST ? PICK_LAST
           : fn == IQL_F_MIN  ? PICK_MIN
           : fn == IQL_F_MAX  ? PICK_MAX
                              : 0;
}

/* The selector of slot 0 picked this row: keep its other columns. */
static void aux_capture(struct iql_groups *g, size_t idx, struct cond_row *row)
{
    for (size_t k = 0; k < g->o.naux; k++) {
        struct iql_val v;
        iql_eval_raw(g->o.aux[k], row, g->o.host_tag, &v);
        set_owned(&g->aux[idx][k], &v);
    }
}

const struct iql_val *iql_groups_aux(const struct iql_groups *g, size_t i)
{
    return g->aux ? g->aux[i] : NULL;
}

int64_t iql_groups_bucket_of(const struct iql_groups *g, int64_t ts)
{
    if (!g->o.tz)
        return agg_time_bucket(ts, g->o.interval, g->o.offset);
    return iql_tz_bucket(g->o.tz, ts, g->o.interval, g->o.offset);
}

static size_t bmap_home(const struct iql_bmap *m, int64_t b)
{
    return (size_t)(((uint64_t)b * 0x9e3779b97f4a7c15ULL) >> 32) & (m->cap - 1);
}

/* The slot of bucket b in m: b's, or the empty one where it goes. */
static struct iql_bmap_slot *bmap_slot(struct iql_bmap *m, int64_t b)
{
    size_t h = bmap_home(m, b);
    while (m->s[h].idx1 && m->s[h].bucket != b)
        h = (h + 1) & (m->cap - 1);
    return &m->s[h];
}

/* Notes group idx as bucket b's in m, growing it at three quarters full
 * (a new map to room for `expect` buckets at once). */
static void bmap_put(struct iql_bmap *m, int64_t b, size_t idx, size_t expect)
{
    if ((m->n + 1) * 4 > m->cap * 3) {
        struct iql_bmap old = *m;
        m->cap = m->cap ? 2 * m->cap : 64;
        while (!old.cap && m->cap * 3 < expect * 4 && m->cap < 8192)
            m->cap *= 2;
        m->s = xcalloc(m->cap, sizeof *m->s);
        for (size_t i = 0; i < old.cap; i++)
            if (old.s[i].idx1)
                *bmap_slot(m, old.s[i].bucket) = old.s[i];
        free(old.s);
    }
    struct iql_bmap_slot *sl = bmap_slot(m, b);
    if (!sl->idx1)
        m->n++;
    *sl = (struct iql_bmap_slot){b, idx + 1};
}

/* The bucket map of series number sid, made if new. */
static struct iql_bmap *series_map(struct iql_groups *g, size_t sid)
{
    if (sid >= g->nsmaps) {
        size_t n = g->nsmaps ? 2 * g->nsmaps : 16;
        while (n <= sid)
            n *= 2;
        g->smaps = xrealloc(g->smaps, n * sizeof *g->smaps);
        memset(g->smaps + g->nsmaps, 0, (n - g->nsmaps) * sizeof *g->smaps);
        g->nsmaps = n;
    }
    return &g->smaps[sid];
}

/* Bytes of a slab of group slots: under the allocator's large sizes, so
 * that a slab comes from memory the process already uses (a large one
 * was fresh pages, each faulted in at its first write: 26 faults a
 * one-host panel request, more time than the allocations they saved). */
#define SLAB_BYTES (12u << 10)

/* A new group's zeroed slots, from a slab of them (one allocation for
 * many groups: a panel makes hundreds). */
static struct iql_astate *new_state(struct iql_groups *g)
{
    size_t sz = sizeof(struct aslot) * (g->o.nslots ? g->o.nslots : 1);
    if (!g->slab_left) {
        size_t n = SLAB_BYTES / sz ? SLAB_BYTES / sz : 1;
        if (g->nslabs % 16 == 0)
            g->slabs = xrealloc(g->slabs, (g->nslabs + 16) * sizeof *g->slabs);
        g->slabs[g->nslabs++] = g->slab_next = xcalloc(n, sz);
        g->slab_left = n;
    }
    struct iql_astate *st = (struct iql_astate *)(void *)g->slab_next;
    g->slab_next += sz;
    g->slab_left--;
    return st;
}

/* A new group of the current series (g->sid), key skey, and bucket b:
 * its index (its key's in km). */
static size_t new_group(struct iql_groups *g, const char *skey, size_t sklen, int64_t b)
{
    unsigned char kb[8];
    agg_key_i64(b, kb);
    buf_reset(&g->kb);
    buf_append(&g->kb, skey, sklen);
    buf_append(&g->kb, kb, 8);
    size_t idx = iql_keymap_push(&g->km, g->kb.data, g->kb.len);
    if (g->n == g->cap) { /* doubled: a dashboard's panel makes hundreds */
        g->cap = g->cap ? 2 * g->cap : 64;
        g->st = xrealloc(g->st, g->cap * sizeof *g->st);
        g->gsid = xrealloc(g->gsid, g->cap * sizeof *g->gsid);
        g->gbucket = xrealloc(g->gbucket, g->cap * sizeof *g->gbucket);
        if (g->o.naux)
            g->aux = xrealloc(g->aux, g->cap * sizeof *g->aux);
    }
    g->st[g->n] = new_state(g);
    g->gsid[g->n] = g->sid;
    g->gbucket[g->n] = b;
    if (g->o.naux)
        g->aux[g->n] = xcalloc(g->o.naux, sizeof **g->aux);
    g->n++;
    if (b < g->min_bucket)
        g->min_bucket = b;
    return idx;
}

/* Makes skey the series of the rows that follow: its number in g->sid,
 * looked up when it is not the series of the rows before. */
static void set_series(struct iql_groups *g, const char *skey, size_t sklen)
{
    if (g->has_sk && g->sk.len == sklen && (sklen == 0 || memcmp(g->sk.data, skey, sklen) == 0))
        return;
    buf_reset(&g->sk);
    buf_append(&g->sk, skey, sklen);
    g->has_sk = true;
    g->has_last = false;
    iql_keymap_get(&g->skm, skey, sklen, 0, &g->sid);
}

/* The index of the group of the current series (set_series) and bucket b
 * in *idx, made if new: the group of the row before when it is the same,
 * else from the series' bucket map, which holds every group of the
 * series: a bucket it lacks is a new group. */
static int series_group(struct iql_groups *g, int64_t b, size_t *idx, struct buf *err)
{
    if (g->has_last && g->last_bucket == b) {
        *idx = g->last;
        return ERR_OK;
    }
    struct iql_bmap *bm = series_map(g, g->sid);
    if (bm->cap) {
        struct iql_bmap_slot *sl = bmap_slot(bm, b);
        if (sl->idx1) {
            *idx = g->last = sl->idx1 - 1;
            g->last_bucket = b;
            g->has_last = true;
            return ERR_OK;
        }
    }
    if (g->n >= g->o.max_groups) {
        g->has_last = false;
        buf_printf(err,
                   "too many groups: more than max_groups = %zu (series times buckets); "
                   "use a larger GROUP BY time interval or a shorter time range",
                   g->o.max_groups);
        return ERR_TOOBIG;
    }
    *idx = new_group(g, g->sk.data ? g->sk.data : "", g->sk.len, b);
    bmap_put(series_map(g, g->sid), b, *idx, g->o.buckets_hint);
    g->has_last = true;
    g->last = *idx;
    g->last_bucket = b;
    return ERR_OK;
}

/* The index of the group of series key skey and bucket b in *idx, made
 * if new (rows of one bucket and series mostly come one after another). */
static int group_of(struct iql_groups *g, const char *skey, size_t sklen, int64_t b, size_t *idx,
                    struct buf *err)
{
    set_series(g, skey, sklen);
    return series_group(g, b, idx, err);
}

/* Slot k of group idx fed field f's value at ts. */
static void feed_slot(struct iql_groups *g, size_t idx, size_t k, const struct rec_field *f,
                      int64_t ts)
{
    struct iql_val v;
    iql_val_of_field(f, &v);
    struct aslot *a = &g->st[idx]->s[k];
    a->picked = 0;
    g->kept += feed(a, g->o.slots[k].fn, &v, ts);
}

static int kept_ok(const struct iql_groups *g, struct buf *err)
{
    if (g->kept <= IQL_MAX_POINTS)
        return ERR_OK;
    buf_printf(err, "too many values kept for median, mode, percentile, distinct or "
                    "integral (more than 4000000): narrow the time range");
    return ERR_TOOBIG;
}

static bool in_slot(const struct iql_slot *sl, int64_t ts)
{
    return ts >= sl->lo && ts <= sl->hi;
}

int iql_groups_add(struct iql_groups *g, const char *skey, size_t sklen, struct cond_row *row,
                   struct buf *err)
{
    int64_t b = g->o.has_time ? iql_groups_bucket_of(g, row->ts) : 0;
    size_t idx;
    int rc = group_of(g, skey, sklen, b, &idx, err);
    if (rc)
        return rc;
    for (size_t k = 0; k < g->o.nslots; k++) {
        const struct iql_slot *sl = &g->o.slots[k];
        struct rec_field f;
        if (!in_slot(sl, row->ts) ||
            !cond_row_field_get(row, slice_make(sl->field, g->flen[k]), &f))
            continue;
        feed_slot(g, idx, k, &f, row->ts);
        if (k == 0 && g->o.naux && (g->st[idx]->s[0].picked & pick_of(sl->fn)))
            aux_capture(g, idx, row);
    }
    return kept_ok(g, err);
}

/* The value of field name in rec when it is the first field of a record
 * without tags (a host section's record holds a row's numeric fields in
 * their order, and a dashboard's field mostly comes first) and a FLOAT or
 * an INT: true with *v as read_value and iql_val_of_field make it; false
 * when this look does not apply (the record reader's walk then decides). */
static bool first_field_value(struct slice rec, struct slice name, struct iql_val *v)
{
    const unsigned char *p = (const unsigned char *)rec.ptr;
    const unsigned char *end = p + rec.len;
    /* ntags 0, nfields 1..127, the key's one-byte length, key, type */
    if (name.len > 127 || rec.len < name.len + 4 || p[0] != 0 || p[1] == 0 || p[1] > 127 ||
        p[2] != name.len || !mem_eq_short((const char *)p + 3, name.ptr, name.len))
        return false;
    p += 3 + name.len;
    switch (*p++) {
    case REC_FLOAT: {
        if (end - p < 8)
            return false;
        uint64_t u = coding_get_u64le((const char *)p);
        *v = (struct iql_val){.kind = IQL_V_FLOAT};
        memcpy(&v->f, &u, 8);
        return true;
    }
    case REC_INT: {
        uint64_t x;
        if (!rec_walk_varint((const char *)p, (const char *)end, &x))
            return false;
        int64_t i = coding_unzigzag(x);
        *v = (struct iql_val){.kind = IQL_V_INT, .i = i, .f = (double)i};
        return true;
    }
    default: return false;
    }
}

/* Field name's value in a section row's record: 1 and *v, 0 when the
 * record has no such field, or ERR_CORRUPT when it is damaged (no value,
 * as the row's reader). */
static int rec_value(struct slice rec, struct slice name, struct iql_val *v)
{
    if (first_field_value(rec, name, v))
        return 1;
    struct rec_field f;
    int got = cond_record_field(rec, name, &f);
    if (got == 1)
        iql_val_of_field(&f, v);
    return got;
}

/* The bucket of ts: the one of the group before when ts lies in it (rows
 * come in time order), without a division. */
static int64_t bucket_of_row(const struct iql_groups *g, int64_t ts)
{
    if (!g->o.has_time)
        return 0;
    if (g->has_last && !g->o.tz && ts >= g->last_bucket &&
        (uint64_t)ts - (uint64_t)g->last_bucket < (uint64_t)g->o.interval)
        return g->last_bucket;
    return iql_groups_bucket_of(g, ts);
}

/* iql_groups_add_recs with one slot (a dashboard panel's one aggregate of
 * one field), without the loop over the slots and their fields. */
static int add_recs_one(struct iql_groups *g, const int64_t *ts, const struct slice *value,
                        size_t n, struct buf *err)
{
    const struct iql_slot *sl = &g->o.slots[0];
    struct slice want = slice_make(sl->field, g->flen[0]);
    for (size_t i = 0; i < n; i++) {
        size_t idx;
        int rc = series_group(g, bucket_of_row(g, ts[i]), &idx, err);
        if (rc)
            return rc;
        struct iql_val v;
        if (!in_slot(sl, ts[i]) || rec_value(value[i], want, &v) != 1)
            continue;
        struct aslot *a = &g->st[idx]->s[0];
        if (!feed_simple(a, sl->fn, &v, ts[i])) /* no aux: picked is not read */
            g->kept += feed(a, sl->fn, &v, ts[i]);
    }
    return kept_ok(g, err);
}

int iql_groups_add_recs(struct iql_groups *g, const char *skey, size_t sklen, const int64_t *ts,
                        const struct slice *value, size_t n, struct buf *err)
{
    set_series(g, skey, sklen);
    if (g->o.nslots == 1)
        return add_recs_one(g, ts, value, n, err);
    for (size_t i = 0; i < n; i++) {
        size_t idx;
        int rc = series_group(g, bucket_of_row(g, ts[i]), &idx, err);
        if (rc)
            return rc;
        struct iql_val v;
        struct slice name = {NULL, 0};
        int got = 0;
        for (size_t k = 0; k < g->o.nslots; k++) {
            const struct iql_slot *sl = &g->o.slots[k];
            if (!in_slot(sl, ts[i]))
                continue;
            struct slice want = slice_make(sl->field, g->flen[k]);
            if (!name.ptr || !slice_eq(name, want)) { /* slots mostly read one field */
                name = want;
                got = rec_value(value[i], want, &v);
            }
            if (got == 1) {
                struct aslot *a = &g->st[idx]->s[k];
                a->picked = 0;
                g->kept += feed(a, sl->fn, &v, ts[i]);
            }
        }
    }
    return kept_ok(g, err);
}

bool iql_groups_mergeable(const struct iql_groups *g)
{
    return !g->o.naux && iql_slots_mergeable(g->o.slots, g->o.nslots);
}

bool iql_slots_mergeable(const struct iql_slot *slots, size_t n)
{
    for (size_t k = 0; k < n; k++)
        switch (slots[k].fn) {
        case IQL_F_COUNT:
        case IQL_F_SUM:
        case IQL_F_MEAN:
        case IQL_F_MIN:
        case IQL_F_MAX:
        case IQL_F_FIRST:
        case IQL_F_LAST: break;
        default: return false;
        }
    return true;
}

/* Slot a's rows added into slot d of function fn, as feed would have
 * added them after d's (what result() reads of fn). */
/* A value's place in min() and max(): a number's value, a boolean's 0 or
 * 1 (false < true). */
static double rank(const struct iql_val *v)
{
    return v->kind == IQL_V_BOOL ? (double)v->b : num(v);
}

static void aslot_merge(struct aslot *d, const struct aslot *a, enum iql_fn fn)
{
    if (a->n == 0)
        return;
    bool first = d->n == 0;
    switch (fn) {
    case IQL_F_SUM:
        d->all_int = first ? a->all_int : d->all_int && a->all_int;
        d->sum += a->sum;
        d->ovf |= a->ovf || __builtin_add_overflow(d->isum, a->isum, &d->isum);
        break;
    case IQL_F_MEAN: d->sum += a->sum; break;
    case IQL_F_MIN:
        if (first || rank(&a->mn) < rank(&d->mn) ||
            (rank(&a->mn) == rank(&d->mn) && a->mn_ts < d->mn_ts)) {
            d->mn = a->mn;
            d->mn_ts = a->mn_ts;
        }
        break;
    case IQL_F_MAX:
        if (first || rank(&a->mx) > rank(&d->mx) ||
            (rank(&a->mx) == rank(&d->mx) && a->mx_ts < d->mx_ts)) {
            d->mx = a->mx;
            d->mx_ts = a->mx_ts;
        }
        break;
    case IQL_F_FIRST:
        if (first || a->first_ts < d->first_ts ||
            (a->first_ts == d->first_ts && val_greater(&a->first, &d->first))) {
            set_owned(&d->first, &a->first);
            d->first_ts = a->first_ts;
        }
        break;
    case IQL_F_LAST:
        if (first || a->last_ts > d->last_ts ||
            (a->last_ts == d->last_ts && val_greater(&a->last, &d->last))) {
            set_owned(&d->last, &a->last);
            d->last_ts = a->last_ts;
        }
        break;
    default: break;
    }
    d->n += a->n;
}

int iql_groups_merge(struct iql_groups *g, const struct iql_groups *from, struct buf *err)
{
    for (size_t i = 0; i < from->n; i++) {
        size_t sid = from->gsid[i], idx;
        set_series(g, iql_keymap_key(&from->skm, sid), iql_keymap_len(&from->skm, sid));
        int rc = series_group(g, from->gbucket[i], &idx, err);
        if (rc)
            return rc;
        for (size_t k = 0; k < g->o.nslots; k++)
            aslot_merge(&g->st[idx]->s[k], &from->st[i]->s[k], g->o.slots[k].fn);
    }
    return ERR_OK;
}

int64_t iql_groups_bucket(const struct iql_groups *g, size_t i)
{
    const char *k = iql_keymap_key(&g->km, i) + iql_keymap_len(&g->km, i) - 8;
    return agg_key_i64_get((const unsigned char *)k, false);
}

bool iql_groups_has_input(const struct iql_groups *g, size_t i, size_t k)
{
    const struct aslot *a = &g->st[i]->s[k];
    return a->n > 0 || a->nstr > 0;
}

void iql_groups_result(struct iql_groups *g, size_t i, size_t k, struct iql_val *out, int64_t *ts)
{
    result(&g->st[i]->s[k], &g->o.slots[k], out, ts);
}

size_t iql_groups_distinct(struct iql_groups *g, size_t i, size_t k, struct iql_val **out)
{
    struct aslot *a = &g->st[i]->s[k];
    struct dv *d;
    size_t n = distinct_of(a, &d);
    struct iql_val *v = xcalloc(n + 1, sizeof *v);
    for (size_t j = 0; j < n; j++)
        v[j] = d[j].v.kind == IQL_V_STR ? d[j].v : typed(a, d[j].v.f);
    free(d);
    *out = v;
    return n;
}

/* Sorts slot a's kept (ts, value) pairs by ts, keeping the order of
 * equal times (insertion sort: a group's pairs mostly come in order). */
static void sort_pairs(struct aslot *a)
{
    for (size_t i = 1; i < a->nv; i++) {
        double v = a->vals[i];
        int64_t t = a->vts[i];
        size_t j = i;
        for (; j > 0 && a->vts[j - 1] > t; j--) {
            a->vals[j] = a->vals[j - 1];
            a->vts[j] = a->vts[j - 1];
        }
        a->vals[j] = v;
        a->vts[j] = t;
    }
}

struct integ {
    struct iql_groups *g;
    const size_t *order;
    size_t from, to, at; /* at: the group of the window being summed */
    struct iql_val *out;
    double unit, sum;
    int64_t start, end;
};

static void integ_emit(struct integ *st)
{
    while (st->at < st->to && iql_groups_bucket(st->g, st->order[st->at]) < st->start)
        st->at++;
    if (st->at < st->to && iql_groups_bucket(st->g, st->order[st->at]) == st->start)
        st->out[st->at - st->from] = fval(st->sum);
}

void iql_groups_integral(struct iql_groups *g, size_t k, const size_t *order, size_t from,
                         size_t to, struct iql_val *out)
{
    struct integ st = {g, order, from, to, from, out, g->o.slots[k].arg, 0, 0, 0};
    bool have = false;
    int64_t pt = 0;
    double pv = 0;
    for (size_t i = from; i < to; i++) {
        out[i - from] = (struct iql_val){.kind = IQL_V_NULL};
        struct aslot *a = &g->st[order[i]]->s[k];
        sort_pairs(a);
        for (size_t n = 0; n < a->nv; n++) {
            int64_t t = a->vts[n];
            double v = a->vals[n];
            if (!have) {
                have = true;
                st.start = iql_groups_bucket_of(g, t);
                st.end = st.start + g->o.interval;
                pt = t;
                pv = v;
                continue;
            }
            if (t == pt) { /* the later of one time counts */
                pv = v;
                continue;
            }
            if (t >= st.end) { /* close the window at its end, on the line to t */
                if (pt != st.end) {
                    double m = (v - pv) / (double)(t - pt);
                    double at_end = m * (double)(st.end - pt) + pv;
                    st.sum += 0.5 * (at_end + pv) * ((double)(st.end - pt) / st.unit);
                    pv = at_end;
                    pt = st.end;
                }
                integ_emit(&st);
                st.start = iql_groups_bucket_of(g, t);
                st.end = st.start + g->o.interval;
                st.sum = 0;
            }
            st.sum += 0.5 * (v + pv) * ((double)(t - pt) / st.unit);
            pt = t;
            pv = v;
        }
    }
    if (have)
        integ_emit(&st);
}

size_t iql_groups_topn(struct iql_groups *g, size_t i, size_t k, struct iql_val **vals,
                       int64_t **ts)
{
    struct aslot *a = &g->st[i]->s[k];
    const struct iql_slot *sl = &g->o.slots[k];
    struct pt *p = sorted_points(a, sl->fn == IQL_F_TOP ? cmp_top : cmp_bottom);
    size_t n = a->nv < (size_t)sl->arg ? a->nv : (size_t)sl->arg;
    qsort(p, n, sizeof *p, cmp_time);
    *vals = xcalloc(n + 1, sizeof **vals);
    *ts = xcalloc(n + 1, sizeof **ts);
    for (size_t j = 0; j < n; j++) {
        (*vals)[j] = typed(a, p[j].v);
        (*ts)[j] = p[j].ts;
    }
    free(p);
    return n;
}

/* --- expressions --- */

static void arith(enum iql_op op, const struct iql_val *a, const struct iql_val *b,
                  struct iql_val *out)
{
    *out = (struct iql_val){.kind = IQL_V_NULL};
    if (!is_num(a) || !is_num(b))
        return;
    if (a->kind == IQL_V_INT && b->kind == IQL_V_INT && op != IQL_O_DIV) {
        int64_t r;
        bool ovf = op == IQL_O_ADD   ? __builtin_add_overflow(a->i, b->i, &r)
                   : op == IQL_O_SUB ? __builtin_sub_overflow(a->i, b->i, &r)
                                     : __builtin_mul_overflow(a->i, b->i, &r);
        if (!ovf) {
            *out = ival(r);
            return;
        }
    }
    double x = num(a), y = num(b);
    switch (op) {
    case IQL_O_ADD: *out = fval(x + y); break;
    case IQL_O_SUB: *out = fval(x - y); break;
    case IQL_O_MUL: *out = fval(x * y); break;
    case IQL_O_DIV: *out = fval(y == 0 ? 0 : x / y); break;
    default: break;
    }
}

static void literal(const struct iql_ex *e, struct iql_val *out)
{
    *out = (struct iql_val){.kind = IQL_V_NULL};
    if (e->kind == IQL_X_NUM)
        *out = e->is_int ? ival(e->i) : fval(e->f);
    else if (e->kind == IQL_X_STR)
        *out = (struct iql_val){.kind = IQL_V_STR, .s = slice_make(e->s, strlen(e->s))};
    else if (e->kind == IQL_X_BOOL)
        *out = (struct iql_val){.kind = IQL_V_BOOL, .b = e->b};
    else if (e->kind == IQL_X_DUR)
        *out = ival(e->i);
}

static const char *const math_fns[] = {"abs",  "acos", "asin",  "atan", "atan2", "ceil",
                                       "cos",  "exp",  "floor", "ln",   "log",   "log10",
                                       "log2", "pow",  "round", "sin",  "sqrt",  "tan"};

bool iql_fn_is_math(const char *name)
{
    for (size_t i = 0; i < sizeof math_fns / sizeof math_fns[0]; i++)
        if (strcmp(name, math_fns[i]) == 0)
            return true;
    return false;
}

/* name(a[, b]) over numbers, as InfluxDB's math functions: abs, floor,
 * ceil and round keep an integer an integer; the others give floats. */
static void math(const char *name, const struct iql_val *a, const struct iql_val *b,
                 struct iql_val *out)
{
    *out = (struct iql_val){.kind = IQL_V_NULL};
    if (!is_num(a) || (b && !is_num(b)))
        return;
    double x = num(a), y = b ? num(b) : 0;
    if (a->kind == IQL_V_INT && !b &&
        (!strcmp(name, "floor") || !strcmp(name, "ceil") || !strcmp(name, "round"))) {
        *out = *a;
        return;
    }
    if (!strcmp(name, "abs")) {
        *out = a->kind == IQL_V_INT && a->i != INT64_MIN ? ival(a->i < 0 ? -a->i : a->i)
                                                         : fval(fabs(x));
        return;
    }
    static const struct {
        const char *name;
        double (*f1)(double);
        double (*f2)(double, double);
    } t[] = {{"acos", acos, NULL},   {"asin", asin, NULL},   {"atan", atan, NULL},
             {"atan2", NULL, atan2}, {"ceil", ceil, NULL},   {"cos", cos, NULL},
             {"exp", exp, NULL},     {"floor", floor, NULL}, {"ln", log, NULL},
             {"log10", log10, NULL}, {"log2", log2, NULL},   {"pow", NULL, pow},
             {"round", round, NULL}, {"sin", sin, NULL},     {"sqrt", sqrt, NULL},
             {"tan", tan, NULL}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(name, t[i].name) && (t[i].f1 ? !b : b != NULL)) {
            *out = fval(t[i].f1 ? t[i].f1(x) : t[i].f2(x, y));
            return;
        }
    if (!strcmp(name, "log") && b) /* log(x, base) */
        *out = fval(log(x) / log(y));
}

void iql_eval_raw(const struct iql_ex *e, struct cond_row *row, const char *host_tag,
                  struct iql_val *out)
{
    if (e->kind == IQL_X_CALL && iql_fn_is_math(e->s) && e->nargs >= 1 && e->nargs <= 2) {
        struct iql_val a, b;
        iql_eval_raw(e->args[0], row, host_tag, &a);
        if (e->nargs == 2)
            iql_eval_raw(e->args[1], row, host_tag, &b);
        math(e->s, &a, e->nargs == 2 ? &b : NULL, out);
        return;
    }
    if (e->kind == IQL_X_BIN) {
        struct iql_val a, b;
        iql_eval_raw(e->l, row, host_tag, &a);
        iql_eval_raw(e->r, row, host_tag, &b);
        arith(e->op, &a, &b, out);
        return;
    }
    if (e->kind != IQL_X_VAR) {
        literal(e, out);
        return;
    }
    *out = (struct iql_val){.kind = IQL_V_NULL};
    struct slice n = slice_make(e->s, strlen(e->s));
    const struct rec_field *f = e->cast == IQL_CAST_TAG ? NULL : cond_row_field(row, n);
    if (f) {
        iql_val_of_field(f, out);
    } else if (e->cast == IQL_CAST_FIELD) {
        return;
    } else if (strcmp(e->s, host_tag) == 0) {
        if (row->host.len)
            *out = (struct iql_val){.kind = IQL_V_STR, .s = row->host};
    } else {
        const struct rec_tag *t = cond_row_tag(row, n);
        if (t)
            *out = (struct iql_val){.kind = IQL_V_STR, .s = t->value};
    }
}

static bool is_hole(const struct iql_val *v)
{
    return v->kind == IQL_V_NULL && v->b;
}

void iql_eval_agg(const struct iql_ex *e, const struct iql_slot *slots, const struct iql_val *res,
                  size_t nslots, struct iql_val *out)
{
    if (e->kind == IQL_X_BIN) {
        struct iql_val a, b;
        iql_eval_agg(e->l, slots, res, nslots, &a);
        iql_eval_agg(e->r, slots, res, nslots, &b);
        arith(e->op, &a, &b, out);
        out->b = out->kind == IQL_V_NULL && (is_hole(&a) || is_hole(&b));
        return;
    }
    if (e->kind == IQL_X_CALL) {
        /* an aggregate's slot (never a math function's: those are not
         * aggregates), looked for first: math names are compared as text */
        for (size_t k = nslots; k-- > 0;)
            if (slots[k].call == e) {
                *out = res[k];
                return;
            }
        if (iql_fn_is_math(e->s) && e->nargs >= 1 && e->nargs <= 2) {
            struct iql_val a, b;
            iql_eval_agg(e->args[0], slots, res, nslots, &a);
            if (e->nargs == 2)
                iql_eval_agg(e->args[1], slots, res, nslots, &b);
            math(e->s, &a, e->nargs == 2 ? &b : NULL, out);
            out->b = out->kind == IQL_V_NULL && (is_hole(&a) || (e->nargs == 2 && is_hole(&b)));
            return;
        }
        *out = (struct iql_val){.kind = IQL_V_NULL};
        return;
    }
    literal(e, out);
}

/* --- points --- */

void iql_points_init(struct iql_points *p, size_t ncol)
{
    memset(p, 0, sizeof *p);
    p->ncol = ncol;
}

static void val_own(struct iql_val *v)
{
    if (v->kind == IQL_V_STR)
        v->s = slice_make(xstrndup(v->s.ptr, v->s.len), v->s.len);
}

static void val_drop(struct iql_val *v)
{
    if (v->kind == IQL_V_STR)
        free((void *)v->s.ptr);
    v->kind = IQL_V_NULL;
}

void iql_points_add(struct iql_points *p, int64_t ts, const struct iql_val *vals)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 16;
        p->ts = xrealloc(p->ts, p->cap * sizeof *p->ts);
        p->v = xrealloc(p->v, p->cap * (p->ncol ? p->ncol : 1) * sizeof *p->v);
    }
    p->ts[p->n] = ts;
    for (size_t j = 0; j < p->ncol; j++) {
        p->v[p->n * p->ncol + j] = vals[j];
        val_own(&p->v[p->n * p->ncol + j]);
    }
    p->n++;
}

void iql_points_free(struct iql_points *p)
{
    for (size_t i = 0; i < p->n * p->ncol; i++)
        val_drop(&p->v[i]);
    free(p->ts);
    free(p->v);
    memset(p, 0, sizeof *p);
}

void iql_points_reverse(struct iql_points *p)
{
    for (size_t a = 0, b = p->n ? p->n - 1 : 0; a < b; a++, b--) {
        int64_t t = p->ts[a];
        p->ts[a] = p->ts[b];
        p->ts[b] = t;
        for (size_t j = 0; j < p->ncol; j++) {
            struct iql_val v = p->v[a * p->ncol + j];
            p->v[a * p->ncol + j] = p->v[b * p->ncol + j];
            p->v[b * p->ncol + j] = v;
        }
    }
}

/* Moves row i to row *k and counts it (keep), or frees its values. */
static void row_keep(struct iql_points *p, size_t i, size_t *k, bool keep)
{
    if (!keep) {
        for (size_t j = 0; j < p->ncol; j++)
            val_drop(&p->v[i * p->ncol + j]);
        return;
    }
    p->ts[*k] = p->ts[i];
    memmove(&p->v[*k * p->ncol], &p->v[i * p->ncol], p->ncol * sizeof *p->v);
    (*k)++;
}

void iql_points_drop_empty(struct iql_points *p, const bool *mask)
{
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++) {
        bool any = false; /* a cell a point fed, even to a null (stddev of one) */
        for (size_t j = 0; j < p->ncol; j++)
            any |= mask[j] && !is_hole(&p->v[i * p->ncol + j]);
        row_keep(p, i, &k, any);
    }
    p->n = k;
}

void iql_points_keep_mixed(struct iql_points *p, const bool *tr, int64_t lo, int64_t hi,
                           bool keep_filled)
{
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++) {
        bool in = p->ts[i] >= lo && p->ts[i] <= hi, any = false;
        for (size_t j = 0; j < p->ncol; j++) {
            struct iql_val *v = &p->v[i * p->ncol + j];
            if (!in && !tr[j]) {
                val_drop(v);
                v->kind = IQL_V_NULL;
            }
            any |= v->kind != IQL_V_NULL;
        }
        row_keep(p, i, &k, any || (in && keep_filled));
    }
    p->n = k;
}

void iql_transform(struct iql_points *p, size_t col, int tr, double arg)
{
    bool have = false, all_int = true;
    struct iql_val prev = {0};
    int64_t prev_ts = 0;
    double csum = 0, msum = 0;
    int64_t isum = 0;
    size_t win = tr == IQL_TR_MOVING_AVERAGE ? (size_t)arg : 0;
    /* a window longer than the series never fills: hold at most p->n */
    double *ring = win ? xcalloc((win < p->n ? win : p->n) + 1, sizeof *ring) : NULL;
    size_t seen = 0;
    for (size_t i = 0; i < p->n; i++) {
        struct iql_val *v = &p->v[i * p->ncol + col];
        if (!is_num(v)) { /* a point's null gives a null after a point, else nothing */
            val_drop(v);
            *v = (struct iql_val){.kind = IQL_V_NULL, .b = is_hole(v) || !have};
            continue;
        }
        struct iql_val cur = *v, out = {.kind = IQL_V_NULL, .b = true}; /* none: a hole */
        int64_t d;
        double dt = __builtin_sub_overflow(p->ts[i], prev_ts, &d)
                        ? (double)p->ts[i] - (double)prev_ts
                        : (double)d;
        switch (tr) {
        case IQL_TR_DERIVATIVE:
        case IQL_TR_NN_DERIVATIVE:
            if (have && dt != 0)
                out = fval((num(&cur) - num(&prev)) / (fabs(dt) / arg)); /* DESC too */
            break;
        case IQL_TR_DIFFERENCE:
        case IQL_TR_NN_DIFFERENCE:
            if (have)
                arith(IQL_O_SUB, &cur, &prev, &out);
            break;
        case IQL_TR_ELAPSED:
            if (have)
                out = ival(to_i64(dt / arg));
            break;
        case IQL_TR_CUMULATIVE_SUM:
            all_int &= cur.kind == IQL_V_INT;
            csum += num(&cur);
            if (cur.kind == IQL_V_INT && __builtin_add_overflow(isum, cur.i, &isum))
                all_int = false;
            out = all_int ? ival(isum) : fval(csum);
            break;
        case IQL_TR_MOVING_AVERAGE: {
            /* InfluxDB's running sum (the oldest value out, the new one
             * in), so the rounding is the same: 0 can come out as -6e-16 */
            if (seen >= win)
                msum -= ring[seen % win];
            ring[seen++ % win] = num(&cur);
            msum += num(&cur);
            if (seen >= win)
                out = fval(msum / (double)win);
            break;
        }
        }
        if ((tr == IQL_TR_NN_DERIVATIVE || tr == IQL_TR_NN_DIFFERENCE) && is_num(&out) &&
            num(&out) < 0)
            out = (struct iql_val){.kind = IQL_V_NULL, .b = true};
        prev = cur;
        prev_ts = p->ts[i];
        have = true;
        *v = out;
    }
    free(ring);
}

struct iql_val iql_fill_value(double value)
{
    return value == floor(value) && fabs(value) < 9e15 ? ival((int64_t)value) : fval(value);
}

static void fill_cell(struct iql_points *p, size_t i, size_t j, const struct iql_fill_spec *f)
{
    struct iql_val *v = &p->v[i * p->ncol + j];
    if (!is_hole(v))
        return;
    if (f->mode == IQL_FILL_VALUE) {
        *v = f->row ? f->row[j] : iql_fill_value(f->value);
        val_own(v);
    } else if (f->mode == IQL_FILL_PREVIOUS && !f->desc && i > 0) {
        *v = p->v[(i - 1) * p->ncol + j];
        val_own(v);
    } else if (f->mode == IQL_FILL_PREVIOUS && f->desc && i + 1 < p->n) {
        *v = p->v[(i + 1) * p->ncol + j];
        val_own(v);
    }
}

/* fill(linear) of column j: a hole between two points with values is on
 * their line, InfluxDB's m * x + b (a filled cell is no point; a point
 * whose aggregate is null has no line through it). */
static void fill_linear(struct iql_points *p, size_t j)
{
    size_t last = SIZE_MAX;
    for (size_t i = 0; i < p->n; i++) {
        struct iql_val *v = &p->v[i * p->ncol + j];
        if (!is_hole(v)) { /* a point's, maybe null (then no line through it) */
            last = i;
            continue;
        }
        size_t k = i + 1;
        while (k < p->n && is_hole(&p->v[k * p->ncol + j]))
            k++;
        if (last == SIZE_MAX || k == p->n)
            continue;
        const struct iql_val *a = &p->v[last * p->ncol + j], *b = &p->v[k * p->ncol + j];
        if (!is_num(a) || !is_num(b))
            continue;
        double m = (num(b) - num(a)) / (double)(p->ts[k] - p->ts[last]);
        double x = m * (double)(p->ts[i] - p->ts[last]) + num(a);
        *v = a->kind == IQL_V_INT && b->kind == IQL_V_INT ? ival(to_i64(x)) : fval(x);
    }
}

void iql_points_count_holes(struct iql_points *p, const bool *is_count, enum iql_fill mode,
                            bool *live)
{
    for (size_t j = 0; j < p->ncol; j++) {
        live[j] = false;
        for (size_t i = 0; is_count[j] && i < p->n && !live[j]; i++)
            live[j] = p->v[i * p->ncol + j].kind != IQL_V_NULL;
        for (size_t i = 0; live[j] && mode == IQL_FILL_NULL && i < p->n; i++)
            if (is_hole(&p->v[i * p->ncol + j]))
                p->v[i * p->ncol + j] = ival(0);
    }
}

void iql_points_fill(struct iql_points *p, int64_t lo, int64_t hi, int64_t interval,
                     const struct iql_fill_spec *f, const bool *is_count)
{
    if (f->mode == IQL_FILL_NONE)
        return;
    struct iql_points q;
    iql_points_init(&q, p->ncol);
    struct iql_val *nulls = xcalloc(p->ncol + 1, sizeof *nulls);
    for (size_t j = 0; j < p->ncol; j++)
        nulls[j] = f->mode == IQL_FILL_NULL && is_count[j]
                       ? ival(0)
                       : (struct iql_val){.kind = IQL_V_NULL, .b = true};
    size_t i = 0;
    for (int64_t t = lo; t <= hi; t += interval) {
        while (i < p->n && p->ts[i] < t)
            i++;
        if (i < p->n && p->ts[i] == t) {
            for (; i < p->n && p->ts[i] == t; i++) /* distinct(): several rows */
                iql_points_add(&q, t, &p->v[i * p->ncol]);
        } else {
            iql_points_add(&q, t, nulls);
        }
        if (hi - t < interval)
            break;
    }
    free(nulls);
    iql_points_free(p);
    *p = q;
    if (f->mode == IQL_FILL_NULL)
        return;
    if (f->mode == IQL_FILL_LINEAR) {
        for (size_t j = 0; j < p->ncol; j++)
            fill_linear(p, j);
        return;
    }
    struct iql_val *row = NULL;
    if (f->mode == IQL_FILL_VALUE && f->row) {
        /* a string or boolean selector's "" or false only where its series
         * has such a value (InfluxDB knows the type from the points it
         * read; without any, the number) */
        row = xcalloc(p->ncol + 1, sizeof *row);
        for (size_t j = 0; j < p->ncol; j++) {
            row[j] = f->row[j];
            bool seen = row[j].kind != IQL_V_STR && row[j].kind != IQL_V_BOOL;
            for (size_t k = 0; k < p->n && !seen; k++)
                seen = p->v[k * p->ncol + j].kind == row[j].kind;
            if (!seen)
                row[j] = iql_fill_value(f->value);
        }
    }
    struct iql_fill_spec g = *f;
    g.row = row ? row : f->row;
    for (size_t k = 0; k < p->n; k++) {
        size_t r = f->desc ? p->n - 1 - k : k; /* DESC: from the newest bucket down */
        for (size_t j = 0; j < p->ncol; j++)
            fill_cell(p, r, j, &g);
    }
    free(row);
}

/* --- catalog --- */

struct fk {
    char **names;
    int *types;
    size_t n, cap;
};

static int fk_cb(void *arg, struct slice name, int type)
{
    struct fk *f = arg;
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 16;
        f->names = xrealloc(f->names, f->cap * sizeof *f->names);
        f->types = xrealloc(f->types, f->cap * sizeof *f->types);
    }
    f->names[f->n] = xstrndup(name.ptr, name.len);
    f->types[f->n++] = type;
    return 0;
}

int iql_field_keys(struct store_snap *snap, const char *m, int64_t lo, int64_t hi, char ***names,
                   int **types, size_t *n)
{
    struct fk f = {0};
    struct slice ev = slice_make(m, strlen(m));
    struct store_cat_query q = {STORE_CAT_FIELDS, lo, hi, NULL, &ev, slice_make("", 0), 0};
    int rc = store_catalog(snap, &q, fk_cb, &f);
    if (rc) {
        for (size_t i = 0; i < f.n; i++)
            free(f.names[i]);
        free(f.names);
        free(f.types);
        return rc;
    }
    *names = f.names;
    *types = f.types;
    *n = f.n;
    return ERR_OK;
}
