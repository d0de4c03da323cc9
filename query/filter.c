/* Field and tag predicates over a record value. One pass over the record:
 * each tag or field is checked against the predicates naming it. A
 * predicate whose column is absent, or holds another kind of value (string
 * vs number vs bool), does not match. Numbers compare by value across
 * float, int and uint. */
#include <math.h>
#include <string.h>

#include "base/err.h"
#include "model/record.h"
#include "query/query_int.h"

#define PRED_MAX 64 /* predicates of one query (a bit each) */

static bool op_holds(enum sql_op op, int c)
{
    switch (op) {
    case SQL_EQ: return c == 0;
    case SQL_NE: return c != 0;
    case SQL_LT: return c < 0;
    case SQL_LE: return c <= 0;
    case SQL_GT: return c > 0;
    case SQL_GE: return c >= 0;
    }
    return false;
}

static int cmp3_d(double a, double b)
{
    return (a > b) - (a < b);
}

static int cmp3_i(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

/* -1/0/1 comparing a numeric field with a numeric literal; 2 if unordered. */
static int num_cmp(const struct rec_field *f, const struct sql_value *v)
{
    if (v->type == SQL_V_INT) {
        if (f->type == REC_INT)
            return cmp3_i(f->v.i, v->i);
        if (f->type == REC_UINT) {
            if (v->i < 0)
                return 1;
            return (f->v.u > (uint64_t)v->i) - (f->v.u < (uint64_t)v->i);
        }
    }
    double a = f->type == REC_FLOAT ? f->v.f : f->type == REC_INT ? (double)f->v.i : (double)f->v.u;
    double b = v->type == SQL_V_INT ? (double)v->i : v->f;
    if (isnan(a) || isnan(b))
        return 2;
    return cmp3_d(a, b);
}

static bool field_matches(const struct rec_field *f, const struct sql_pred *p)
{
    const struct sql_value *v = &p->v;
    bool fnum = f->type == REC_FLOAT || f->type == REC_INT || f->type == REC_UINT;
    bool vnum = v->type == SQL_V_INT || v->type == SQL_V_FLOAT;
    if (fnum && vnum) {
        int c = num_cmp(f, v);
        return c != 2 && op_holds(p->op, c);
    }
    if (f->type == REC_STRING && v->type == SQL_V_STRING)
        return op_holds(p->op, slice_cmp(f->v.s, slice_make(v->s, v->slen)));
    if (f->type == REC_BOOL && v->type == SQL_V_BOOL)
        return op_holds(p->op, (int)f->v.b - (int)v->b);
    return false;
}

static bool name_is(const char *name, struct slice key)
{
    return strlen(name) == key.len && memcmp(name, key.ptr, key.len) == 0;
}

bool query_preds_match(const struct sql_where *w, struct slice id, struct slice value, int *rc)
{
    *rc = ERR_OK;
    if (w->npreds == 0)
        return true;
    size_t n = w->npreds < PRED_MAX ? w->npreds : PRED_MAX;
    uint64_t ok = 0, want = n == 64 ? ~0ULL : (1ULL << n) - 1;
    struct rec_row_reader r;
    struct rec_tag t;
    struct rec_field f;
    int got;
    if ((*rc = rec_row_init(&r, id, value)) != ERR_OK)
        return false;
    while ((got = rec_row_next_tag(&r, &t)) == 1)
        for (size_t i = 0; i < n; i++)
            if (w->preds[i].is_tag && name_is(w->preds[i].name, t.key) &&
                op_holds(w->preds[i].op,
                         slice_cmp(t.value, slice_make(w->preds[i].v.s, w->preds[i].v.slen))))
                ok |= 1ULL << i;
    while (got >= 0 && (got = rec_row_next_field(&r, &f)) == 1)
        for (size_t i = 0; i < n; i++)
            if (!w->preds[i].is_tag && name_is(w->preds[i].name, f.key) &&
                field_matches(&f, &w->preds[i]))
                ok |= 1ULL << i;
    if (got < 0) {
        *rc = ERR_CORRUPT;
        return false;
    }
    return ok == want;
}
