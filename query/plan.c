/* Plan choice and the EXPLAIN view of a plan. Pure computation over the
 * parsed WHERE clause and the database options: no store access, so every
 * refusal happens before any work. */
#include "query/plan.h"

#include "query/cond.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "model/key.h"
#include "query/encode.h"

#define PLAN_DEFAULT_MAX_GET 2000
#define PLAN_MAX_POINT_RANGES 1024 /* ts IN points read as one range each */

const char *plan_kind_name(enum plan_kind k)
{
    static const char *names[] = {"GET", "SCAN", "INDEX", "FULL"};
    return names[k];
}

void plan_destroy(struct plan *p)
{
    free(p->ranges);
    free(p->keys);
    free((void *)p->series_fields);
    memset(p, 0, sizeof(*p));
}

/* --- host sections --- */

void plan_series_begin(struct plan *p)
{
    free((void *)p->series_fields);
    p->series_fields = NULL;
    p->nseries_fields = 0;
    p->series = p->kind == PLAN_INDEX || p->kind == PLAN_SCAN || p->kind == PLAN_FULL;
}

void plan_series_field(struct plan *p, const char *name, size_t len)
{
    if (!p->series)
        return;
    struct slice f = slice_make(name, len);
    for (size_t i = 0; i < p->nseries_fields; i++)
        if (slice_eq(p->series_fields[i], f))
            return;
    struct slice *v = xrealloc((void *)p->series_fields, (p->nseries_fields + 1) * sizeof *v);
    v[p->nseries_fields++] = f;
    p->series_fields = v;
}

void plan_series_col(struct plan *p, const struct sql_col *c)
{
    if (c->kind == SQL_COL_FIELD)
        plan_series_field(p, c->name, strlen(c->name));
    else if (c->kind == SQL_COL_TAG || c->kind == SQL_COL_ANY)
        p->series = false;
}

void plan_series_cond(struct plan *p, const struct sql_expr *e)
{
    if (!e)
        return;
    if (e->kind == SQL_E_LEAF) {
        plan_series_col(p, &e->col);
        return;
    }
    for (size_t i = 0; i < e->nkids; i++)
        plan_series_cond(p, e->kids[i]);
}

void plan_series_select(struct plan *p, const struct sql_select *sel)
{
    plan_series_begin(p);
    if (!sel->agg)
        p->series = false;
    for (size_t i = 0; i < sel->nitems; i++)
        if (sel->items[i].kind != SQL_I_BUCKET &&
            !(sel->items[i].kind == SQL_I_AGG && sel->items[i].agg == SQL_A_COUNT_STAR))
            plan_series_col(p, &sel->items[i].col);
    for (size_t i = 0; i < sel->ngroups; i++)
        if (sel->groups[i].kind == SQL_I_COL)
            plan_series_col(p, &sel->groups[i].col);
    plan_series_cond(p, sel->where.cond);
}

/* Effective ts bounds: the user's, cut at now - ttl. */
static void plan_bounds(struct plan *p, const struct sql_where *w, const struct db_opts *dbo,
                        int64_t now)
{
    p->lo = w->has_lo ? w->ts_lo : INT64_MIN;
    p->hi = w->has_hi ? w->ts_hi : INT64_MAX;
    if (dbo->ttl_ns > 0) {
        int64_t cut;
        if (__builtin_sub_overflow(now, dbo->ttl_ns, &cut))
            cut = INT64_MIN;
        if (cut > p->lo)
            p->lo = cut;
    }
}

static size_t points_in_bounds(const struct plan *p, const struct sql_where *w)
{
    size_t n = 0;
    for (size_t i = 0; i < w->nts; i++)
        n += w->ts[i] >= p->lo && w->ts[i] <= p->hi;
    return n;
}

static bool plan_contradicts(const struct plan *p, const struct sql_where *w)
{
    if (p->lo > p->hi)
        return true;
    if (w->has_ts_set && points_in_bounds(p, w) == 0)
        return true;
    return (w->host.is_set && w->host.n == 0) || (w->event.is_set && w->event.n == 0);
}

static int refuse_full(struct buf *err)
{
    buf_puts(err, "full scan refused: the query fixes neither a ts range nor a host; "
                  "add a ts range (ts >= now() - 1h), or host = '...', "
                  "or ask for a full scan with SELECT /*+ full_scan */ or full_scan=true");
    return ERR_INVAL;
}

static int plan_get(struct plan *p, const struct sql_where *w, const struct plan_opts *o,
                    struct buf *err)
{
    int64_t max = o->max_get_rows > 0 ? o->max_get_rows : PLAN_DEFAULT_MAX_GET;
    size_t n;
    if (__builtin_mul_overflow(w->nts, w->host.n, &n) ||
        __builtin_mul_overflow(n, w->event.n, &n) || n > (uint64_t)max) {
        buf_printf(err,
                   "too many point reads: %zu ts x %zu host x %zu event values exceed "
                   "max_get_rows = %lld; use fewer IN values, or a ts range instead of "
                   "ts IN (...)",
                   w->nts, w->host.n, w->event.n, (long long)max);
        return ERR_TOOBIG;
    }
    p->max_rows = max;
    p->keys = xcalloc(n ? n : 1, sizeof(*p->keys));
    for (size_t t = 0; t < w->nts; t++) {
        if (w->ts[t] < p->lo || w->ts[t] > p->hi)
            continue;
        for (size_t h = 0; h < w->host.n; h++)
            for (size_t e = 0; e < w->event.n; e++)
                p->keys[p->nkeys++] = (struct plan_key){w->ts[t], h, e};
    }
    /* The points are sorted ascending and host/event sets sorted: reverse
     * only the ts blocks for DESC output. */
    if (p->out_desc) {
        for (size_t i = 0; i < p->nkeys / 2; i++) {
            struct plan_key k = p->keys[i];
            p->keys[i] = p->keys[p->nkeys - 1 - i];
            p->keys[p->nkeys - 1 - i] = k;
        }
        /* restore host/event ascending within each ts */
        size_t i = 0;
        while (i < p->nkeys) {
            size_t j = i;
            while (j < p->nkeys && p->keys[j].ts == p->keys[i].ts)
                j++;
            for (size_t a = i, b = j - 1; a < b; a++, b--) {
                struct plan_key k = p->keys[a];
                p->keys[a] = p->keys[b];
                p->keys[b] = k;
            }
            i = j;
        }
    }
    return ERR_OK;
}

static void plan_ranges(struct plan *p, const struct sql_where *w)
{
    if (w->has_ts_set && w->nts > PLAN_MAX_POINT_RANGES) {
        /* too many points for one iterator each: scan their span, filter */
        if (w->ts[0] > p->lo)
            p->lo = w->ts[0];
        if (w->ts[w->nts - 1] < p->hi)
            p->hi = w->ts[w->nts - 1];
    } else if (w->has_ts_set) {
        p->ranges = xcalloc(w->nts ? w->nts : 1, sizeof(*p->ranges));
        for (size_t i = 0; i < w->nts; i++) {
            int64_t t = w->ts[i];
            if (t >= p->lo && t <= p->hi)
                p->ranges[p->nranges++] = (struct plan_range){key_bucket(t, p->buckets), t, t};
        }
        return;
    }
    p->ranges = xcalloc(p->buckets, sizeof(*p->ranges));
    for (uint32_t b = 0; b < p->buckets; b++)
        p->ranges[p->nranges++] = (struct plan_range){b, p->lo, p->hi};
}

int plan_build(const struct sql_select *sel, const struct db_opts *dbo, const struct plan_opts *o,
               struct plan *out, struct buf *err)
{
    const struct sql_where *w = &sel->where;
    struct plan p;
    memset(&p, 0, sizeof(p));
    p.where = w;
    p.buckets = dbo->buckets ? dbo->buckets : 1;
    p.db_desc = dbo->ts_desc;
    p.out_desc = sel->order == 0 ? dbo->ts_desc : sel->order < 0;
    p.reverse = p.out_desc != p.db_desc;
    plan_bounds(&p, w, dbo, o->now_ns);
    if (w->has_ts_set && w->host.is_set && w->event.is_set)
        p.kind = PLAN_GET;
    else if (w->host.is_set)
        p.kind = PLAN_INDEX;
    else if (w->has_lo || w->has_hi || w->has_ts_set)
        p.kind = PLAN_SCAN;
    else if (sel->full_scan_hint || o->full_scan || o->allow_full_scan)
        p.kind = PLAN_FULL;
    else
        return refuse_full(err);
    int rc = ERR_OK;
    if (p.kind == PLAN_GET)
        rc = plan_get(&p, w, o, err);
    p.is_empty = plan_contradicts(&p, w);
    if (rc == ERR_OK && !p.is_empty && (p.kind == PLAN_SCAN || p.kind == PLAN_FULL))
        plan_ranges(&p, w);
    if (rc) {
        plan_destroy(&p);
        return rc;
    }
    *out = p;
    return ERR_OK;
}

/* --- EXPLAIN --- */

static void put_time(struct buf *out, int64_t t, bool unbounded)
{
    if (unbounded)
        buf_puts(out, "null");
    else
        buf_printf(out, "%lld", (long long)t);
}

static void explain_buckets(const struct plan *p, struct buf *out)
{
    const struct sql_where *w = p->where;
    buf_puts(out, "\"buckets\":[");
    bool first = true;
    if (p->is_empty) {
        /* nothing */
    } else if (p->kind == PLAN_SCAN || p->kind == PLAN_FULL) {
        for (uint32_t b = 0; b < p->buckets; b++) {
            bool used = false;
            for (size_t i = 0; i < p->nranges && !used; i++)
                used = p->ranges[i].bucket == b;
            if (used) {
                buf_printf(out, "%s%u", first ? "" : ",", b);
                first = false;
            }
        }
    } else if (w->has_ts_set) {
        for (uint32_t b = 0; b < p->buckets; b++) {
            bool used = false;
            for (size_t i = 0; i < w->nts && !used; i++)
                used =
                    w->ts[i] >= p->lo && w->ts[i] <= p->hi && key_bucket(w->ts[i], p->buckets) == b;
            if (used) {
                buf_printf(out, "%s%u", first ? "" : ",", b);
                first = false;
            }
        }
    } else {
        for (uint32_t b = 0; b < p->buckets; b++)
            buf_printf(out, "%s%u", b ? "," : "", b);
    }
    buf_putc(out, ']');
}

static void explain_ranges(const struct plan *p, struct buf *out)
{
    const struct sql_where *w = p->where;
    buf_puts(out, "\"ranges\":[");
    if (p->is_empty) {
        buf_putc(out, ']');
        return;
    }
    if (p->kind == PLAN_GET) {
        for (size_t i = 0; i < p->nkeys; i++) {
            const struct plan_key *k = &p->keys[i];
            buf_printf(out, "%s{\"bucket\":%u,\"ts\":%lld,\"host\":", i ? "," : "",
                       key_bucket(k->ts, p->buckets), (long long)k->ts);
            enc_json_str(out, w->host.v[k->host], w->host.len[k->host]);
            buf_puts(out, ",\"event\":");
            enc_json_str(out, w->event.v[k->event], w->event.len[k->event]);
            buf_putc(out, '}');
        }
    } else if (p->kind == PLAN_INDEX) {
        for (size_t h = 0; h < w->host.n; h++) {
            buf_puts(out, h ? ",{\"host\":" : "{\"host\":");
            enc_json_str(out, w->host.v[h], w->host.len[h]);
            buf_puts(out, ",\"start\":");
            put_time(out, p->lo, p->lo == INT64_MIN);
            buf_puts(out, ",\"end\":");
            put_time(out, p->hi, p->hi == INT64_MAX);
            buf_putc(out, '}');
        }
    } else {
        for (size_t i = 0; i < p->nranges; i++) {
            const struct plan_range *r = &p->ranges[i];
            buf_printf(out, "%s{\"bucket\":%u,\"start\":", i ? "," : "", r->bucket);
            put_time(out, r->lo, r->lo == INT64_MIN);
            buf_puts(out, ",\"end\":");
            put_time(out, r->hi, r->hi == INT64_MAX);
            buf_putc(out, '}');
        }
    }
    buf_putc(out, ']');
}

static void explain_filters(const struct plan *p, struct buf *out)
{
    buf_puts(out, "\"condition\":");
    struct buf tmp = BUF_INIT;
    cond_explain(p->where->cond, &tmp);
    enc_json_str(out, tmp.data ? tmp.data : "", tmp.len);
    buf_destroy(&tmp);
}

void plan_explain(const struct plan *p, const struct sql_select *sel, struct buf *out)
{
    buf_printf(out, "{\"plan\":\"%s\",", plan_kind_name(p->kind));
    explain_buckets(p, out);
    buf_putc(out, ',');
    explain_ranges(p, out);
    buf_printf(out, ",\"index\":%s,\"order\":\"%s\",\"stored_order\":\"%s\",",
               p->kind == PLAN_INDEX ? "\"host\"" : "null", p->out_desc ? "desc" : "asc",
               p->db_desc ? "desc" : "asc");
    explain_filters(p, out);
    if (sel->has_limit)
        buf_printf(out, ",\"limit\":%lld", (long long)sel->limit);
    buf_printf(out, ",\"empty\":%s}", p->is_empty ? "true" : "false");
}
