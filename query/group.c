/* GROUP BY and aggregates over the executor's rows (query_int.h).
 *
 * A group's key is built so that memcmp order is the output order: the
 * time bucket first (its start as a u64be, inverted when the output is
 * newest first), then the other GROUP BY keys in their order, each as
 * null 0x00 | bool 0x01 b | number 0x02 f64 (order-preserving) | string
 * 0x03 bytes 0x00 0x00 (a 0x00 byte written 0x00 0xff). The output values
 * of the key columns are read back from the key.
 *
 * Streaming: when the time bucket is the first key and the rows come in
 * its order (no FILL, no ORDER BY but the bucket's own), every group of a
 * bucket is complete once a row of the next bucket arrives: those groups
 * are written out and dropped, so max_groups bounds the groups of one
 * bucket. Otherwise every group is held until the end (max_groups bounds
 * them all), then filled, filtered by HAVING, sorted and written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/coding.h"
#include "base/err.h"
#include "query/agg.h"
#include "query/cond.h"
#include "query/encode.h"
#include "query/query_int.h"

#define DEFAULT_MAX_GROUPS 100000

/* One output row: a value per item. */
struct outrow {
    struct agg_value *v;
    char *mem;  /* the strings of its key values */
    size_t seq; /* its place before sorting (stable order) */
};

struct grouper {
    const struct sql_select *sel;
    const struct plan *p;
    int64_t max_groups;
    struct agg_table *t;
    size_t *agg_of;  /* item -> its aggregate index (items of kind AGG) */
    size_t *gitem;   /* key element -> the group (index in sel->groups) */
    size_t nkeys;    /* key elements */
    bool has_bucket; /* the first key element is a time bucket */
    int64_t width, offset;
    bool streaming;
    bool have_cur; /* streaming: a bucket is in flight */
    int64_t cur_bucket;
    struct buf key; /* scratch */
    /* output */
    struct outrow *rows;
    size_t nrows, rcap, next;
    struct buf ready; /* streaming: encoded rows waiting */
    size_t *ready_off;
    size_t nready, ready_cap, ready_next;
    struct cond_row hrow; /* HAVING's view of one output row */
    char **hnames;
    bool *row_in_mem; /* row_values' scratch, an entry per item */
    size_t *row_soff;
    uint64_t groups_total;
    bool finished;
    struct agg_group *last; /* the group of the last row added */
    /* group_add_counted: its last event (the bytes it was given) and the
     * ts range whose rows of that event go to the same group */
    struct agg_group *cnt_group;
    struct slice cnt_event;
    int64_t cnt_lo, cnt_hi;
};

/* --- keys --- */

static void put_u64be(struct buf *b, uint64_t v)
{
    buf_reserve(b, 8);
    coding_put_u64be(b->data + b->len, v);
    b->len += 8;
}

static uint64_t get_u64be(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static uint64_t dbl_key(double d)
{
    if (d == 0)
        d = 0; /* -0 and 0 are one group */
    uint64_t u;
    memcpy(&u, &d, 8);
    return u & (1ULL << 63) ? ~u : u | (1ULL << 63);
}

static double dbl_of_key(uint64_t u)
{
    u = u & (1ULL << 63) ? u & ~(1ULL << 63) : ~u;
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static void put_str(struct buf *b, struct slice s)
{
    buf_putc(b, 0x03);
    const char *p = s.ptr, *end = s.ptr + s.len;
    while (p < end) { /* runs without 0x00 are copied whole */
        const char *z = memchr(p, 0, (size_t)(end - p));
        size_t n = z ? (size_t)(z - p) : (size_t)(end - p);
        buf_append(b, p, n);
        p += n;
        if (z) {
            buf_putc(b, 0);
            buf_putc(b, (char)0xff);
            p++;
        }
    }
    buf_putc(b, 0);
    buf_putc(b, 0);
}

static uint64_t bucket_key(const struct grouper *g, int64_t start)
{
    uint64_t k = (uint64_t)start ^ (1ULL << 63);
    return g->p->out_desc ? ~k : k;
}

/* The value of a column in a row, as an aggregate input. */
static int column_value(const struct sql_col *c, struct cond_row *r, struct agg_value *v)
{
    memset(v, 0, sizeof(*v));
    switch (c->kind) {
    case SQL_COL_TS: v->kind = AGG_V_INT, v->i = r->ts; return ERR_OK;
    case SQL_COL_HOST: v->kind = AGG_V_STRING, v->s = r->host; return ERR_OK;
    case SQL_COL_EVENT: v->kind = AGG_V_STRING, v->s = r->event; return ERR_OK;
    default: break;
    }
    if (cond_row_decode(r))
        return ERR_CORRUPT;
    struct slice name = slice_make(c->name, strlen(c->name));
    if (c->kind == SQL_COL_TAG) {
        const struct rec_tag *t = cond_row_tag(r, name);
        if (t)
            v->kind = AGG_V_STRING, v->s = t->value;
        return ERR_OK;
    }
    const struct rec_field *f = cond_row_field(r, name);
    if (!f)
        return ERR_OK;
    switch (f->type) {
    case REC_FLOAT: v->kind = AGG_V_FLOAT, v->f = f->v.f; break;
    case REC_INT: v->kind = AGG_V_INT, v->i = f->v.i; break;
    case REC_UINT: v->kind = AGG_V_UINT, v->u = f->v.u; break;
    case REC_BOOL: v->kind = AGG_V_BOOL, v->b = f->v.b; break;
    case REC_STRING: v->kind = AGG_V_STRING, v->s = f->v.s; break;
    }
    return ERR_OK;
}

static void put_value(struct buf *b, const struct agg_value *v)
{
    switch (v->kind) {
    case AGG_V_NULL: buf_putc(b, 0x00); break;
    case AGG_V_BOOL:
        buf_putc(b, 0x01);
        buf_putc(b, v->b ? 1 : 0);
        break;
    case AGG_V_INT:
        buf_putc(b, 0x02);
        put_u64be(b, dbl_key((double)v->i));
        break;
    case AGG_V_UINT:
        buf_putc(b, 0x02);
        put_u64be(b, dbl_key((double)v->u));
        break;
    case AGG_V_FLOAT:
        buf_putc(b, 0x02);
        put_u64be(b, dbl_key(isnan(v->f) ? NAN : v->f));
        break;
    case AGG_V_STRING: put_str(b, v->s); break;
    }
}

/* Reads one key element at *pos back into a value. A string is copied
 * into scratch; row_values points v->s into the row's memory. */
static void get_value(struct slice key, size_t *pos, struct agg_value *v, struct buf *scratch)
{
    const unsigned char *p = (const unsigned char *)key.ptr;
    memset(v, 0, sizeof(*v));
    unsigned char tag = p[(*pos)++];
    if (tag == 0x01) {
        v->kind = AGG_V_BOOL, v->b = p[(*pos)++] != 0;
    } else if (tag == 0x02) {
        double d = dbl_of_key(get_u64be(p + *pos));
        *pos += 8;
        if (d == floor(d) && fabs(d) < 9.007199254740992e15)
            v->kind = AGG_V_INT, v->i = (int64_t)d;
        else
            v->kind = AGG_V_FLOAT, v->f = d;
    } else if (tag == 0x03) {
        size_t start = scratch->len;
        while (!(p[*pos] == 0 && p[*pos + 1] == 0)) {
            buf_putc(scratch, (char)p[*pos]);
            *pos += p[*pos] == 0 ? 2 : 1;
        }
        *pos += 2;
        v->kind = AGG_V_STRING;
        v->s.ptr = NULL; /* resolved by row_values */
        v->s.len = scratch->len - start;
    }
}

/* --- setup --- */

static enum agg_fn fn_of(enum sql_agg a)
{
    switch (a) {
    case SQL_A_COUNT_STAR: return AGG_COUNT_STAR;
    case SQL_A_COUNT: return AGG_COUNT;
    case SQL_A_SUM: return AGG_SUM;
    case SQL_A_AVG: return AGG_AVG;
    case SQL_A_MIN: return AGG_MIN;
    case SQL_A_MAX: return AGG_MAX;
    case SQL_A_FIRST: return AGG_FIRST;
    case SQL_A_LAST: return AGG_LAST;
    default: return AGG_PERCENTILE;
    }
}

bool group_streams(const struct sql_select *sel, bool db_desc)
{
    const struct sql_group *b = NULL;
    for (size_t i = 0; i < sel->ngroups; i++)
        if (sel->groups[i].kind == SQL_I_BUCKET)
            b = &sel->groups[i];
    if (!b || sel->fill != SQL_FILL_NONE)
        return false;
    if (sel->norders == 0)
        return true;
    if (sel->norders != 1)
        return false;
    const struct sql_item *it = &sel->items[sel->orders[0].item];
    /* against the stored order, sorting the groups at the end beats
     * reading backward */
    return it->kind == SQL_I_BUCKET && it->width == b->width && it->offset == b->offset &&
           sel->orders[0].desc == db_desc;
}

int group_new(const struct sql_select *sel, const struct plan *p, int64_t max_groups, bool stream,
              struct grouper **out, struct buf *err)
{
    struct grouper *g = xcalloc(1, sizeof(*g));
    g->sel = sel;
    g->p = p;
    g->max_groups = max_groups > 0 ? max_groups : DEFAULT_MAX_GROUPS;
    g->agg_of = xcalloc(sel->nitems + 1, sizeof(*g->agg_of));
    struct agg_spec *specs = xcalloc(sel->nitems + 1, sizeof(*specs));
    size_t naggs = 0;
    for (size_t i = 0; i < sel->nitems; i++) {
        if (sel->items[i].kind != SQL_I_AGG)
            continue;
        specs[naggs] = (struct agg_spec){fn_of(sel->items[i].agg), sel->items[i].p};
        g->agg_of[i] = naggs++;
    }
    g->gitem = xcalloc(sel->ngroups + 1, sizeof(*g->gitem));
    for (size_t i = 0; i < sel->ngroups; i++) {
        if (sel->groups[i].kind != SQL_I_BUCKET)
            continue;
        if (g->has_bucket) {
            buf_puts(err, "GROUP BY takes one time_bucket(...)");
            free(specs);
            group_free(g);
            return ERR_INVAL;
        }
        g->has_bucket = true;
        g->width = sel->groups[i].width;
        g->offset = sel->groups[i].offset;
        g->gitem[g->nkeys++] = i;
    }
    for (size_t i = 0; i < sel->ngroups; i++)
        if (sel->groups[i].kind != SQL_I_BUCKET)
            g->gitem[g->nkeys++] = i;
    struct agg_table_opts o = {specs, naggs, (size_t)g->max_groups};
    int rc = agg_table_new(&o, &g->t);
    free(specs);
    if (rc) {
        group_free(g);
        return rc;
    }
    g->streaming = stream && group_streams(sel, p->db_desc);
    g->hnames = xcalloc(sel->nitems + 1, sizeof(*g->hnames));
    g->row_in_mem = xcalloc(sel->nitems + 1, sizeof(*g->row_in_mem));
    g->row_soff = xcalloc(sel->nitems + 1, sizeof(*g->row_soff));
    for (size_t i = 0; i < sel->nitems; i++) {
        g->hnames[i] = xmalloc(24);
        snprintf(g->hnames[i], 24, SQL_HAVING_NAME "%zu", i);
    }
    cond_row_init(&g->hrow);
    *out = g;
    return ERR_OK;
}

void group_free(struct grouper *g)
{
    if (!g)
        return;
    agg_table_free(g->t);
    for (size_t i = g->next; i < g->nrows; i++) {
        free(g->rows[i].v);
        free(g->rows[i].mem);
    }
    free(g->rows);
    for (size_t i = 0; g->hnames && i < g->sel->nitems; i++)
        free(g->hnames[i]);
    free(g->hnames);
    free(g->row_in_mem);
    free(g->row_soff);
    free(g->agg_of);
    free(g->gitem);
    buf_destroy(&g->key);
    buf_destroy(&g->ready);
    free(g->ready_off);
    g->hrow.tags = NULL;
    cond_row_destroy(&g->hrow);
    free(g);
}

bool group_last_full(struct grouper *g)
{
    if (!g->last)
        return false;
    for (size_t i = 0; i < g->sel->nitems; i++) {
        if (g->sel->items[i].kind != SQL_I_AGG)
            continue;
        struct agg_value v;
        agg_result(g->t, g->last, g->agg_of[i], &v);
        if (v.kind == AGG_V_NULL)
            return false;
    }
    return true;
}

bool group_streaming(const struct grouper *g)
{
    return g->streaming;
}

uint64_t group_count(const struct grouper *g)
{
    return g->groups_total;
}

/* --- output rows --- */

static int64_t bucket_of(const struct grouper *g, int64_t ts)
{
    return agg_time_bucket(ts, g->width, g->offset);
}

/* A key value with the offset of its string in the row's memory. */
struct keyval {
    struct agg_value v;
    size_t soff;
    bool in_mem;
};

/* The output values of group grp (key and aggregates) into vals. Strings
 * of the key are copied into memory the caller frees (returned; NULL if
 * none); the aggregates' strings live in the table. */
static char *row_values(struct grouper *g, struct slice key, struct agg_group *grp,
                        struct agg_value *vals)
{
    const struct sql_select *sel = g->sel;
    struct keyval keyv[SQL_MAX_GROUP_KEYS + 1];
    struct buf mem = BUF_INIT;
    size_t pos = 0;
    int64_t bucket = 0;
    for (size_t k = 0; k < g->nkeys; k++) {
        if (k == 0 && g->has_bucket) {
            uint64_t u = get_u64be((const unsigned char *)key.ptr);
            if (g->p->out_desc)
                u = ~u;
            bucket = (int64_t)(u ^ (1ULL << 63));
            pos = 8;
            continue;
        }
        keyv[k].soff = mem.len;
        get_value(key, &pos, &keyv[k].v, &mem);
        keyv[k].in_mem = keyv[k].v.kind == AGG_V_STRING;
    }
    bool *in_mem = g->row_in_mem;
    size_t *soff = g->row_soff;
    memset(in_mem, 0, sel->nitems * sizeof(*in_mem));
    for (size_t i = 0; i < sel->nitems; i++) {
        const struct sql_item *it = &sel->items[i];
        memset(&vals[i], 0, sizeof(vals[i]));
        if (it->kind == SQL_I_AGG) {
            if (grp)
                agg_result(g->t, grp, g->agg_of[i], &vals[i]);
            else if (it->agg == SQL_A_COUNT_STAR || it->agg == SQL_A_COUNT)
                vals[i].kind = AGG_V_INT; /* an empty group counts 0 */
            continue;
        }
        if (it->kind == SQL_I_BUCKET) {
            vals[i].kind = AGG_V_INT, vals[i].i = bucket;
            continue;
        }
        for (size_t k = 0; k < g->nkeys; k++) {
            const struct sql_group *gr = &sel->groups[g->gitem[k]];
            if (gr->kind == SQL_I_COL && gr->col.kind == it->col.kind &&
                (!gr->col.name || strcmp(gr->col.name, it->col.name) == 0)) {
                vals[i] = keyv[k].v;
                in_mem[i] = keyv[k].in_mem;
                soff[i] = keyv[k].soff;
            }
        }
    }
    buf_putc(&mem, 0); /* never empty: m is not NULL */
    char *m = buf_steal(&mem, NULL);
    for (size_t i = 0; i < sel->nitems; i++)
        if (in_mem[i])
            vals[i].s.ptr = m + soff[i];
    return m;
}

static bool having_ok(struct grouper *g, const struct agg_value *vals, int *rc)
{
    const struct sql_select *sel = g->sel;
    *rc = ERR_OK;
    if (!sel->having)
        return true;
    struct cond_row *r = &g->hrow;
    if (r->fcap < sel->nitems) {
        r->fields = xrealloc(r->fields, sel->nitems * sizeof(*r->fields));
        r->fcap = sel->nitems;
    }
    r->nfields = 0;
    for (size_t i = 0; i < sel->nitems; i++) {
        struct rec_field f = {slice_make(g->hnames[i], strlen(g->hnames[i])), REC_INT, {0}};
        switch (vals[i].kind) {
        case AGG_V_NULL: continue;
        case AGG_V_INT: f.type = REC_INT, f.v.i = vals[i].i; break;
        case AGG_V_UINT: f.type = REC_UINT, f.v.u = vals[i].u; break;
        case AGG_V_FLOAT: f.type = REC_FLOAT, f.v.f = vals[i].f; break;
        case AGG_V_BOOL: f.type = REC_BOOL, f.v.b = vals[i].b; break;
        case AGG_V_STRING: f.type = REC_STRING, f.v.s = vals[i].s; break;
        }
        r->fields[r->nfields++] = f;
    }
    r->ntags = 0;
    r->decoded = true;
    return cond_match(sel->having, r, rc);
}

static void encode_value(struct buf *out, const struct agg_value *v)
{
    switch (v->kind) {
    case AGG_V_NULL: buf_puts(out, "null"); break;
    case AGG_V_INT: enc_i64(out, v->i); break;
    case AGG_V_UINT: buf_printf(out, "%llu", (unsigned long long)v->u); break;
    case AGG_V_FLOAT: enc_double(out, v->f); break;
    case AGG_V_BOOL: buf_puts(out, v->b ? "true" : "false"); break;
    case AGG_V_STRING: enc_json_str(out, v->s.ptr, v->s.len); break;
    }
}

static void encode_row(const struct grouper *g, const struct agg_value *vals, struct buf *out)
{
    const struct sql_select *sel = g->sel;
    bool first = true;
    buf_putc(out, '{');
    for (size_t i = 0; i < sel->nitems; i++) {
        if (sel->items[i].hidden)
            continue;
        if (!first)
            buf_putc(out, ',');
        first = false;
        enc_json_str(out, sel->items[i].name, strlen(sel->items[i].name));
        buf_putc(out, ':');
        encode_value(out, &vals[i]);
    }
    buf_putc(out, '}');
}

/* --- streaming --- */

/* Writes out every group held (all of one bucket) and drops those before
 * the key upto (NULL: none; at the end the table goes whole). */
static int flush_groups(struct grouper *g, const struct slice *upto, struct buf *err)
{
    struct agg_group *const *v;
    size_t n = agg_sorted(g->t, &v);
    struct agg_value *vals = xcalloc(g->sel->nitems + 1, sizeof(*vals));
    int rc = ERR_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        char *mem = row_values(g, agg_group_key(v[i]), v[i], vals);
        if (!having_ok(g, vals, &rc)) {
            free(mem);
            continue;
        }
        if (g->nready == g->ready_cap)
            g->ready_off =
                xrealloc(g->ready_off, (g->ready_cap = g->ready_cap ? 2 * g->ready_cap : 64) *
                                           sizeof(*g->ready_off));
        g->ready_off[g->nready++] = g->ready.len;
        encode_row(g, vals, &g->ready);
        free(mem);
    }
    if (rc == ERR_TOOBIG)
        buf_puts(err, "a regular expression in HAVING ran past its match limit");
    free(vals);
    if (upto)
        agg_drop_before(g->t, *upto);
    return rc;
}

/* --- adding rows --- */

static void too_many(const struct grouper *g, struct buf *err)
{
    buf_printf(err,
               "too many groups: more than max_groups = %lld; narrow the condition, use a wider "
               "time bucket or fewer GROUP BY keys, or raise max_groups",
               (long long)g->max_groups);
}

/* The key of row r's group into g->key (a streaming grouper writes out
 * the groups of the buckets before r's first). */
static int group_key(struct grouper *g, struct cond_row *r, struct buf *err)
{
    const struct sql_select *sel = g->sel;
    struct buf *key = &g->key;
    key->len = 0;
    int rc;
    for (size_t k = 0; k < g->nkeys; k++) {
        const struct sql_group *gr = &sel->groups[g->gitem[k]];
        if (gr->kind == SQL_I_BUCKET) {
            int64_t b = bucket_of(g, r->ts);
            put_u64be(key, bucket_key(g, b));
            if (g->streaming && g->have_cur && b != g->cur_bucket) {
                struct slice upto = slice_make(key->data, 8);
                if ((rc = flush_groups(g, &upto, err)) != ERR_OK)
                    return rc;
            }
            g->have_cur = true;
            g->cur_bucket = b;
            continue;
        }
        struct agg_value v;
        if ((rc = column_value(&gr->col, r, &v)) != ERR_OK)
            return rc;
        put_value(key, &v);
    }
    return ERR_OK;
}

/* The group of g->key, made if new (ERR_TOOBIG past max_groups). */
static int key_group(struct grouper *g, struct agg_group **grp, struct buf *err)
{
    size_t before = agg_count(g->t);
    int rc = agg_group(g->t, slice_make(g->key.data ? g->key.data : "", g->key.len), grp);
    if (rc) {
        if (rc == ERR_TOOBIG)
            too_many(g, err);
        return rc;
    }
    g->groups_total += agg_count(g->t) > before;
    g->last = *grp;
    return ERR_OK;
}

int group_add(struct grouper *g, struct cond_row *r, struct buf *err)
{
    const struct sql_select *sel = g->sel;
    struct agg_group *grp;
    int rc = group_key(g, r, err);
    if (rc || (rc = key_group(g, &grp, err)))
        return rc;
    for (size_t i = 0; i < sel->nitems; i++) {
        const struct sql_item *it = &sel->items[i];
        if (it->kind != SQL_I_AGG)
            continue;
        struct agg_value v = {.kind = AGG_V_NULL};
        if (it->agg != SQL_A_COUNT_STAR && (rc = column_value(&it->col, r, &v)) != ERR_OK)
            return rc;
        if ((rc = agg_add(g->t, grp, g->agg_of[i], &v, r->ts)) != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

int group_add_counted(struct grouper *g, struct slice event, int64_t ts, uint64_t n,
                      struct buf *err)
{
    const struct sql_select *sel = g->sel;
    if (g->streaming)
        return ERR_INVAL;
    struct agg_group *grp = g->cnt_group;
    int rc;
    /* the counts of one event come minute after minute: most go to the
     * group of the minute before */
    if (!grp || event.ptr != g->cnt_event.ptr || event.len != g->cnt_event.len || ts < g->cnt_lo ||
        ts > g->cnt_hi) {
        struct cond_row r;
        memset(&r, 0, sizeof r);
        r.ts = ts;
        r.event = event;
        g->cnt_lo = INT64_MIN;
        g->cnt_hi = INT64_MAX;
        for (size_t k = 0; k < g->nkeys; k++) {
            const struct sql_group *gr = &sel->groups[g->gitem[k]];
            if (gr->kind != SQL_I_BUCKET && gr->col.kind != SQL_COL_EVENT)
                return ERR_INVAL;
            if (gr->kind != SQL_I_BUCKET)
                continue;
            int64_t b = bucket_of(g, ts); /* as group_key has it */
            int64_t end = b > INT64_MAX - (g->width - 1) ? INT64_MAX : b + (g->width - 1);
            g->cnt_lo = b > g->cnt_lo ? b : g->cnt_lo;
            g->cnt_hi = end < g->cnt_hi ? end : g->cnt_hi;
        }
        g->cnt_group = NULL;
        if ((rc = group_key(g, &r, err)) || (rc = key_group(g, &grp, err)))
            return rc;
        g->cnt_group = grp;
        g->cnt_event = event;
    }
    for (size_t i = 0; i < sel->nitems; i++)
        if (sel->items[i].kind == SQL_I_AGG &&
            (rc = agg_add_count(g->t, grp, g->agg_of[i], n)) != ERR_OK)
            return rc;
    return ERR_OK;
}

bool group_mergeable(const struct grouper *g)
{
    return !g->streaming && agg_mergeable(g->t);
}

int group_merge(struct grouper *into, const struct grouper *from, struct buf *err)
{
    size_t before = agg_count(into->t);
    int rc = agg_merge(into->t, from->t);
    into->groups_total += agg_count(into->t) - before;
    if (rc == ERR_TOOBIG)
        too_many(into, err);
    return rc;
}

/* --- the end: fill, HAVING, ORDER BY --- */

static void push_row(struct grouper *g, struct agg_value *vals, char *mem)
{
    if (g->nrows == g->rcap)
        g->rows = xrealloc(g->rows, (g->rcap = g->rcap ? 2 * g->rcap : 64) * sizeof(*g->rows));
    g->rows[g->nrows] = (struct outrow){vals, mem, g->nrows};
    g->nrows++;
}

static const struct sql_select *sort_sel;

static int val_cmp(const struct agg_value *a, const struct agg_value *b)
{
    bool an = a->kind == AGG_V_NULL, bn = b->kind == AGG_V_NULL;
    if (an || bn)
        return an - bn; /* null after every value (ascending) */
    bool as = a->kind == AGG_V_STRING, bs = b->kind == AGG_V_STRING;
    if (as || bs)
        return as && bs ? slice_cmp(a->s, b->s) : as - bs;
    bool ab = a->kind == AGG_V_BOOL, bb = b->kind == AGG_V_BOOL;
    if (ab || bb)
        return ab && bb ? (int)a->b - (int)b->b : (int)bb - (int)ab;
    if (a->kind == AGG_V_INT && b->kind == AGG_V_INT)
        return (a->i > b->i) - (a->i < b->i);
    double x = a->kind == AGG_V_INT    ? (double)a->i
               : a->kind == AGG_V_UINT ? (double)a->u
               : a->kind == AGG_V_BOOL ? a->b
                                       : a->f;
    double y = b->kind == AGG_V_INT    ? (double)b->i
               : b->kind == AGG_V_UINT ? (double)b->u
               : b->kind == AGG_V_BOOL ? b->b
                                       : b->f;
    return (x > y) - (x < y);
}

static int row_cmp(const void *pa, const void *pb)
{
    const struct outrow *a = pa, *b = pb;
    for (size_t i = 0; i < sort_sel->norders; i++) {
        const struct sql_order *o = &sort_sel->orders[i];
        int c = val_cmp(&a->v[o->item], &b->v[o->item]);
        if (c)
            return o->desc ? -c : c;
    }
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* The rows of every group, with the missing buckets filled. */
static int slice_cmp_v(const void *a, const void *b)
{
    return slice_cmp(*(const struct slice *)a, *(const struct slice *)b);
}

static int fill_rows(struct grouper *g, struct agg_group *const *v, size_t n, struct buf *err)
{
    const struct sql_select *sel = g->sel;
    const struct plan *p = g->p;
    int64_t lo = p->lo, hi = p->hi;
    if (lo == INT64_MIN || hi == INT64_MAX) {
        buf_puts(err, "FILL needs a bounded ts range: ts >= ... AND ts < ...");
        return ERR_INVAL;
    }
    if (lo > hi)
        return ERR_OK; /* an empty range: no bucket */
    int64_t blo = bucket_of(g, lo), bhi = bucket_of(g, hi);
    uint64_t nb = ((uint64_t)bhi - (uint64_t)blo) / (uint64_t)g->width + 1;
    /* the series: every distinct key after the bucket, sorted */
    struct slice *ser = xcalloc(n + 1, sizeof(*ser));
    size_t ns = 0;
    if (g->nkeys == 1)
        ser[ns++] = slice_make("", 0);
    for (size_t i = 0; i < n && g->nkeys > 1; i++) {
        struct slice k = agg_group_key(v[i]);
        ser[ns++] = slice_make(k.ptr + 8, k.len - 8);
    }
    qsort(ser, ns, sizeof(*ser), slice_cmp_v);
    size_t u = 0;
    for (size_t i = 0; i < ns; i++)
        if (!u || !slice_eq(ser[u - 1], ser[i]))
            ser[u++] = ser[i];
    ns = u;
    if (ns && nb > (uint64_t)g->max_groups / ns) {
        free(ser);
        buf_printf(err,
                   "FILL would give %llu buckets times %zu series, more than max_groups = %lld; "
                   "use a wider time bucket or a shorter range",
                   (unsigned long long)nb, ns, (long long)g->max_groups);
        return ERR_TOOBIG;
    }
    size_t ni = sel->nitems;
    struct agg_value *prev = xcalloc(ns * ni + 1, sizeof(*prev));
    struct buf key = BUF_INIT;
    /* buckets in time order (PREVIOUS is the earlier bucket), their rows
     * put in output order after */
    size_t first_row = g->nrows;
    size_t gi = p->out_desc ? n : 0;
    for (uint64_t b = 0; b < nb; b++) {
        int64_t start = blo + (int64_t)(b * (uint64_t)g->width);
        unsigned char bk[8];
        uint64_t bkey = bucket_key(g, start);
        for (int i = 7; i >= 0; i--, bkey >>= 8)
            bk[i] = (unsigned char)bkey;
        size_t j = gi, bend = gi;
        if (p->out_desc) {
            while (j > 0 && agg_group_key(v[j - 1]).len >= 8 &&
                   memcmp(agg_group_key(v[j - 1]).ptr, bk, 8) == 0)
                j--;
            gi = j;
        }
        for (size_t s = 0; s < ns; s++) {
            key.len = 0;
            buf_append(&key, bk, 8);
            buf_append(&key, ser[s].ptr, ser[s].len);
            struct agg_value *vals = xcalloc(ni + 1, sizeof(*vals));
            struct slice k = slice_make(key.data, key.len);
            struct agg_group *grp = NULL;
            if (j < n && (!p->out_desc || j < bend) && slice_eq(agg_group_key(v[j]), k))
                grp = v[j++];
            if (!p->out_desc)
                gi = j;
            char *mem = row_values(g, k, grp, vals);
            for (size_t i = 0; i < ni; i++) {
                const struct sql_item *it = &sel->items[i];
                if (it->kind != SQL_I_AGG || grp || it->agg == SQL_A_COUNT_STAR ||
                    it->agg == SQL_A_COUNT)
                    continue;
                if (sel->fill == SQL_FILL_ZERO)
                    vals[i] = (struct agg_value){.kind = AGG_V_INT};
                else if (sel->fill == SQL_FILL_PREVIOUS)
                    vals[i] = prev[s * ni + i];
            }
            for (size_t i = 0; i < ni; i++)
                if (vals[i].kind != AGG_V_NULL && sel->items[i].kind == SQL_I_AGG)
                    prev[s * ni + i] = vals[i];
            push_row(g, vals, mem);
        }
    }
    if (p->out_desc && ns) { /* newest bucket first: reverse the buckets */
        struct outrow *r = g->rows + first_row;
        for (uint64_t a = 0, z = nb - 1; a < z; a++, z--)
            for (size_t s = 0; s < ns; s++) {
                struct outrow t = r[a * ns + s];
                r[a * ns + s] = r[z * ns + s];
                r[z * ns + s] = t;
            }
        for (size_t i = first_row; i < g->nrows; i++)
            g->rows[i].seq = i;
    }
    buf_destroy(&key);
    free(prev);
    free(ser);
    return ERR_OK;
}

int group_finish(struct grouper *g, struct buf *err)
{
    const struct sql_select *sel = g->sel;
    int rc;
    g->finished = true;
    if (g->streaming)
        return flush_groups(g, NULL, err);
    if (g->nkeys == 0 && agg_count(g->t) == 0) { /* no GROUP BY: one row, even of nothing */
        struct agg_group *grp;
        if ((rc = agg_group(g->t, slice_make("", 0), &grp)) != ERR_OK)
            return rc;
    }
    struct agg_group *const *v;
    size_t n = agg_sorted(g->t, &v);
    if (sel->fill != SQL_FILL_NONE) {
        if ((rc = fill_rows(g, v, n, err)) != ERR_OK)
            return rc;
    } else {
        for (size_t i = 0; i < n; i++) {
            struct agg_value *vals = xcalloc(sel->nitems + 1, sizeof(*vals));
            char *mem = row_values(g, agg_group_key(v[i]), v[i], vals);
            push_row(g, vals, mem);
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < g->nrows; i++) {
        if (!having_ok(g, g->rows[i].v, &rc)) {
            free(g->rows[i].v);
            free(g->rows[i].mem);
            if (rc) {
                buf_puts(err, "a regular expression in HAVING ran past its match limit");
                for (size_t j = i + 1; j < g->nrows; j++) {
                    free(g->rows[j].v);
                    free(g->rows[j].mem);
                }
                g->nrows = k;
                return rc;
            }
            continue;
        }
        g->rows[k++] = g->rows[i];
    }
    g->nrows = k;
    if (sel->norders) {
        sort_sel = sel;
        if (g->nrows > 1)
            qsort(g->rows, g->nrows, sizeof(*g->rows), row_cmp);
    }
    return ERR_OK;
}

int group_next(struct grouper *g, struct buf *out)
{
    if (g->streaming) {
        if (g->ready_next == g->nready) {
            g->ready.len = 0;
            g->nready = g->ready_next = 0;
            return 0;
        }
        size_t a = g->ready_off[g->ready_next];
        size_t b = g->ready_next + 1 < g->nready ? g->ready_off[g->ready_next + 1] : g->ready.len;
        buf_append(out, g->ready.data + a, b - a);
        g->ready_next++;
        return 1;
    }
    if (!g->finished || g->next == g->nrows)
        return 0;
    struct outrow *r = &g->rows[g->next++];
    encode_row(g, r->v, out);
    free(r->v);
    free(r->mem);
    return 1;
}
