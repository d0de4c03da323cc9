/* InfluxQL's meta statements. Without WHERE the SHOW statements are
 * answered from the store's catalogs (store_catalog); with WHERE the rows
 * the condition selects are read (a full scan is allowed here, as InfluxDB
 * reads its index) and their distinct names collected, at most max_groups
 * of them. DROP MEASUREMENT and DELETE write a tombstone per row. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "config/config.h"
#include "query/cond.h"
#include "query/encode.h"
#include "query/iql_func.h"
#include "query/plan.h"
#include "query/query_int.h"
#include "store/store.h"

#define META_DELETE_BATCH 1000

/* A set of distinct strings. */
struct names {
    struct iql_keymap km;
    size_t n, max;
    bool full;
};

static void names_init(struct names *ns, size_t max)
{
    memset(ns, 0, sizeof *ns);
    iql_keymap_init(&ns->km);
    ns->max = max;
}

static void names_add(struct names *ns, const char *s, size_t len)
{
    size_t idx;
    if (ns->n >= ns->max) {
        ns->full = true;
        return;
    }
    if (iql_keymap_get(&ns->km, s, len, ns->n, &idx))
        ns->n++;
}

static int cat_cb(void *arg, struct slice name, int type)
{
    (void)type;
    names_add(arg, name.ptr, name.len);
    return 0;
}

/* The part of a WHERE the catalog answers: a time range and one host. */
struct cat_range {
    int64_t lo, hi;
    bool has_host;
    struct buf host;
};

static int catalog(struct store_snap *snap, enum store_cat_kind kind, const char *m,
                   const char *tag_key, const struct cat_range *cr, struct names *ns)
{
    struct slice ev = slice_make(m ? m : "", m ? strlen(m) : 0);
    struct slice host = slice_make(cr->host.data ? cr->host.data : "", cr->host.len);
    struct store_cat_query q = {kind,
                                cr->lo,
                                cr->hi,
                                cr->has_host ? &host : NULL,
                                m ? &ev : NULL,
                                slice_make(tag_key ? tag_key : "", tag_key ? strlen(tag_key) : 0),
                                0};
    return store_catalog(snap, &q, cat_cb, ns);
}

static const struct cat_range all_time = {INT64_MIN, INT64_MAX, false, BUF_INIT};

/* True (cr set) if where says no more than a time range and host = 'x'
 * for m: the catalog answers, no row is read. */
static bool catalog_range(const struct iql_ctx *c, struct store_snap *snap, const char *m,
                          const struct iql_ex *where, struct cat_range *cr)
{
    *cr = all_time;
    if (!where)
        return true;
    char **tk = NULL;
    size_t ntk = 0;
    if (iql_tag_keys(c, snap, m, INT64_MIN, INT64_MAX, &tk, &ntk))
        return false;
    struct sql_where w;
    struct buf err = BUF_INIT;
    bool ok = iql_where(c, where, m, tk, ntk, &w, &err) == ERR_OK;
    iql_names_free(tk, ntk);
    buf_destroy(&err);
    if (!ok)
        return false;
    ok = cond_is_implied(w.cond) && !w.has_ts_set && (!w.host.is_set || w.host.n == 1) &&
         (!w.event.is_set || (m && w.event.n == 1));
    if (ok) {
        cr->lo = w.has_lo ? w.ts_lo : INT64_MIN;
        cr->hi = w.has_hi ? w.ts_hi : INT64_MAX;
        cr->has_host = w.host.is_set;
        if (cr->has_host)
            buf_append(&cr->host, w.host.v[0], w.host.len[0]);
    }
    sql_where_destroy(&w);
    return ok;
}

/* --- reading rows --- */

typedef int (*row_fn)(void *arg, const struct exec_row *row, struct cond_row *cr);

/* Calls fn for every row of measurement m (NULL: all) that where selects. */
static int scan_rows(const struct iql_ctx *c, struct store_db *db, struct store_snap *snap,
                     const char *m, const struct iql_ex *where, row_fn fn, void *arg,
                     struct buf *err)
{
    char **tk = NULL;
    size_t ntk = 0;
    int rc = iql_tag_keys(c, snap, m, INT64_MIN, INT64_MAX, &tk, &ntk);
    if (rc)
        return rc;
    struct sql_select sel;
    memset(&sel, 0, sizeof sel);
    rc = iql_where(c, where, m, tk, ntk, &sel.where, err);
    iql_names_free(tk, ntk);
    if (rc)
        return rc;
    struct db_opts dbo;
    store_db_opts(db, &dbo);
    struct plan_opts po = {c->o->q->max_get_rows, true, true, c->now};
    struct plan p;
    rc = plan_build(&sel, &dbo, &po, &p, err);
    struct exec *ex = NULL;
    if (rc == ERR_OK) {
        p.unordered = true;
        rc = query_exec_open(snap, &p, &ex, err);
        while (rc == ERR_OK && (rc = query_exec_next(ex)) == 1)
            rc = fn(arg, query_exec_row(ex), query_exec_cond_row(ex));
        if (rc < 0 && err->len == 0)
            buf_printf(err, "reading failed: %s", err_name(rc));
        query_exec_free(ex);
        plan_destroy(&p);
    }
    sql_where_destroy(&sel.where);
    return rc < 0 ? rc : ERR_OK;
}

/* --- output --- */

static struct iql_series *series(struct iql_result *r, const char *name, const char *cols)
{
    struct iql_series *s = iql_series_add(r, name, name ? strlen(name) : 0);
    buf_puts(&s->cols, cols);
    return s;
}

static void row_strs(struct iql_result *r, struct iql_series *s, const char *a, size_t alen,
                     const char *b, size_t blen)
{
    size_t start = s->rows.len;
    buf_putc(&s->rows, '[');
    enc_json_str(&s->rows, a, alen);
    if (b) {
        buf_putc(&s->rows, ',');
        enc_json_str(&s->rows, b, blen);
    }
    buf_putc(&s->rows, ']');
    iql_series_row_end(r, s, start);
}

/* The names of ns, sorted, through LIMIT and OFFSET, as rows of s (with a
 * first column first, when not NULL). Frees ns. */
/* LIMIT and OFFSET over the rows of a series (of several calls). */
struct lim {
    size_t skip, left;
};

static struct lim lim_of(const struct iql_stmt *st)
{
    return (struct lim){(size_t)st->offset_rows, st->limit > 0 ? (size_t)st->limit : SIZE_MAX};
}

static bool lim_take(struct lim *l)
{
    if (l->skip) {
        l->skip--;
        return false;
    }
    if (l->left == 0)
        return false;
    l->left--;
    return true;
}

/* The rows of a series name with columns cols, made by its first row. */
struct out {
    struct iql_result *r;
    struct iql_series *s;
    const char *name, *cols;
    struct lim lim;
};

static void out_row(struct out *o, const char *a, size_t alen, const char *b, size_t blen)
{
    if (!lim_take(&o->lim))
        return;
    if (!o->s)
        o->s = series(o->r, o->name, o->cols);
    row_strs(o->r, o->s, a, alen, b, blen);
}

/* The names of ns, sorted, as rows of o (after a first column first, when
 * not NULL). Frees ns. */
static void names_rows(struct names *ns, struct out *o, const char *first)
{
    size_t *ord = iql_keymap_sorted(&ns->km, ns->n);
    for (size_t i = 0; i < ns->n && o->lim.left; i++) {
        const char *k = iql_keymap_key(&ns->km, ord[i]);
        size_t kl = iql_keymap_len(&ns->km, ord[i]);
        if (first)
            out_row(o, first, strlen(first), k, kl);
        else
            out_row(o, k, kl, NULL, 0);
    }
    free(ord);
    iql_keymap_destroy(&ns->km);
}

static int too_many(struct names *ns, struct iql_result *r)
{
    if (!ns->full)
        return ERR_OK;
    buf_printf(&r->err, "more than max_groups = %zu names: narrow the statement with WHERE",
               ns->max);
    iql_keymap_destroy(&ns->km);
    return ERR_TOOBIG;
}

/* --- the statements --- */

static int show_dbs(const struct iql_ctx *c, struct iql_result *r)
{
    char **names;
    size_t n;
    if (store_db_list(c->s, &names, &n) != ERR_OK) {
        buf_puts(&r->err, "cannot list databases");
        return ERR_IO;
    }
    struct iql_series *s = series(r, "databases", "[\"name\"]");
    for (size_t i = 0; i < n; i++) {
        if (query_db_visible(c->o->q, names[i]))
            row_strs(r, s, names[i], strlen(names[i]), NULL, 0);
        free(names[i]);
    }
    free(names);
    return ERR_OK;
}

static bool name_matches(const struct iql_stmt *st, const char *name, size_t len)
{
    if (st->key_re) {
        struct sql_expr *e = cond_leaf_new(SQL_L_REGEX, SQL_COL_EVENT, NULL, 0);
        e->v.type = SQL_V_STRING;
        e->v.s = xstrdup(st->key_re);
        e->v.slen = strlen(st->key_re);
        size_t bad;
        struct buf msg = BUF_INIT;
        bool ok = false;
        if (cond_prepare(e, &bad, &msg) == ERR_OK) {
            struct cond_row row;
            cond_row_init(&row);
            cond_row_set(&row, 0, slice_make("", 0), slice_make(name, len), slice_make("", 0),
                         slice_make("", 0));
            int rc = 0;
            ok = cond_match(e, &row, &rc);
            cond_row_destroy(&row);
        }
        buf_destroy(&msg);
        cond_free(e);
        return ok != st->key_neg;
    }
    if (st->nkeys == 0)
        return true;
    for (size_t i = 0; i < st->nkeys; i++)
        if (strlen(st->keys[i]) == len && memcmp(st->keys[i], name, len) == 0)
            return !st->key_neg;
    return st->key_neg;
}

static int event_row(void *arg, const struct exec_row *row, struct cond_row *cr)
{
    (void)cr;
    names_add(arg, row->event.ptr, row->event.len);
    return ERR_OK;
}

/* The measurements of the database (WHERE: of the rows it selects). */
static int measurements(const struct iql_ctx *c, struct store_db *db, struct store_snap *snap,
                        const struct iql_stmt *st, struct names *ns, struct iql_result *r)
{
    names_init(ns, (size_t)c->o->q->max_groups);
    struct cat_range cr;
    int rc = catalog_range(c, snap, NULL, st->where, &cr)
                 ? catalog(snap, STORE_CAT_EVENTS, NULL, NULL, &cr, ns)
                 : scan_rows(c, db, snap, NULL, st->where, event_row, ns, &r->err);
    buf_destroy(&cr.host);
    if (rc) {
        iql_keymap_destroy(&ns->km);
        if (!r->err.len)
            buf_printf(&r->err, "cannot list measurements: %s", err_name(rc));
        return rc;
    }
    return too_many(ns, r);
}

static int show_measurements(const struct iql_ctx *c, struct store_db *db, struct store_snap *snap,
                             const struct iql_stmt *st, struct iql_result *r)
{
    struct names all;
    if (measurements(c, db, snap, st, &all, r))
        return ERR_INVAL;
    struct names ns;
    names_init(&ns, all.n);
    for (size_t i = 0; i < all.n; i++) {
        const char *k = iql_keymap_key(&all.km, i);
        size_t kl = iql_keymap_len(&all.km, i);
        if (name_matches(st, k, kl))
            names_add(&ns, k, kl);
    }
    iql_keymap_destroy(&all.km);
    if (ns.n == 0) {
        iql_keymap_destroy(&ns.km);
        return ERR_OK;
    }
    struct out o = {r, NULL, "measurements", "[\"name\"]", lim_of(st)};
    names_rows(&ns, &o, NULL);
    return ERR_OK;
}

/* The measurements a SHOW ... [FROM] statement is about, sorted. */
static int from_list(const struct iql_ctx *c, struct store_db *db, struct store_snap *snap,
                     const struct iql_stmt *st, char ***out, size_t *n, struct iql_result *r)
{
    if (st->nfrom)
        return iql_measurements(snap, st, out, n, &r->err);
    struct iql_stmt plain = *st;
    plain.where = NULL;
    plain.key_re = NULL;
    plain.nkeys = 0;
    struct names ns;
    if (measurements(c, db, snap, &plain, &ns, r))
        return ERR_INVAL;
    size_t *ord = iql_keymap_sorted(&ns.km, ns.n);
    *out = xcalloc(ns.n + 1, sizeof(char *));
    for (size_t i = 0; i < ns.n; i++)
        (*out)[i] = xstrdup(iql_keymap_key(&ns.km, ord[i]));
    *n = ns.n;
    free(ord);
    iql_keymap_destroy(&ns.km);
    return ERR_OK;
}

struct tagrow {
    const struct iql_ctx *c;
    struct names *ns;
    const char *key; /* values of key; NULL: keys */
};

static int tag_row(void *arg, const struct exec_row *row, struct cond_row *cr)
{
    struct tagrow *t = arg;
    const char *ht = t->c->o->host_tag;
    if (cond_row_decode(cr))
        return ERR_CORRUPT;
    if (!t->key) {
        if (row->host.len)
            names_add(t->ns, ht, strlen(ht));
        for (size_t i = 0; i < cr->ntags; i++)
            names_add(t->ns, cr->tags[i].key.ptr, cr->tags[i].key.len);
    } else if (strcmp(t->key, ht) == 0) {
        if (row->host.len)
            names_add(t->ns, row->host.ptr, row->host.len);
    } else {
        const struct rec_tag *tg = cond_row_tag(cr, slice_make(t->key, strlen(t->key)));
        if (tg)
            names_add(t->ns, tg->value.ptr, tg->value.len);
    }
    return ERR_OK;
}

/* From the catalog: tag keys (key NULL) or the values of key, of m. */
static int catalog_tags(const struct iql_ctx *c, struct store_snap *snap, const char *m,
                        const char *key, const struct cat_range *cr, struct names *ns)
{
    const char *ht = c->o->host_tag;
    if (key && strcmp(key, ht) == 0) {
        struct names hosts;
        names_init(&hosts, ns->max);
        int rc = catalog(snap, STORE_CAT_HOSTS, m, NULL, cr, &hosts);
        for (size_t i = 0; i < hosts.n; i++)
            if (iql_keymap_len(&hosts.km, i))
                names_add(ns, iql_keymap_key(&hosts.km, i), iql_keymap_len(&hosts.km, i));
        iql_keymap_destroy(&hosts.km);
        return rc;
    }
    if (key)
        return catalog(snap, STORE_CAT_TAG_VALUES, m, key, cr, ns);
    struct names hosts;
    names_init(&hosts, 3);
    int rc = catalog(snap, STORE_CAT_HOSTS, m, NULL, cr, &hosts);
    bool has_host = hosts.n > 1 || (hosts.n == 1 && iql_keymap_len(&hosts.km, 0) > 0);
    iql_keymap_destroy(&hosts.km);
    if (has_host)
        names_add(ns, ht, strlen(ht));
    return rc ? rc : catalog(snap, STORE_CAT_TAG_KEYS, m, NULL, cr, ns);
}

/* Tag keys (key NULL) or the values of key, of measurement m: from the
 * catalog when WHERE is a time range and a host, else from the rows. */
static int tag_names(const struct iql_ctx *c, struct store_db *db, struct store_snap *snap,
                     const char *m, const struct iql_ex *where, const char *key, struct names *ns,
                     struct buf *err)
{
    names_init(ns, (size_t)c->o->q->max_groups);
    struct cat_range cr;
    if (!catalog_range(c, snap, m, where, &cr)) {
        struct tagrow t = {c, ns, key};
        return scan_rows(c, db, snap, m, where, tag_row, &t, err);
    }
    int rc = catalog_tags(c, snap, m, key, &cr, ns);
    buf_destroy(&cr.host);
    return rc;
}

static int show_tag_keys(const struct iql_ctx *c, struct store_db *db, struct store_snap *snap,
                         const struct iql_stmt *st, char **ms, size_t nm, struct iql_result *r)
{
    for (size_t i = 0; i < nm; i++) {
        struct names ns;
        int rc = tag_names(c, db, snap, ms[i], st->where, NULL, &ns, &r->err);
        if (rc || too_many(&ns, r)) {
            iql_keymap_destroy(&ns.km);
            return rc ? rc : ERR_TOOBIG;
        }
        if (ns.n == 0) {
            iql_keymap_destroy(&ns.km);
            continue;
        }
        struct out o = {r, NULL, ms[i], "[\"tagKey\"]", lim_of(st)};
        names_rows(&ns, &o, NULL);
    }
    return ERR_OK;
}

static int show_tag_values(const struct iql_ctx *c, struct store_db *db, struct store_snap *snap,
                           const struct iql_stmt *st, char **ms, size_t nm, struct iql_result *r)
{
    for (size_t i = 0; i < nm; i++) {
        struct names keys;
        int rc = tag_names(c, db, snap, ms[i], NULL, NULL, &keys, &r->err);
        size_t *ord = iql_keymap_sorted(&keys.km, keys.n);
        struct out o = {r, NULL, ms[i], "[\"key\",\"value\"]", lim_of(st)};
        for (size_t k = 0; k < keys.n && rc == ERR_OK && o.lim.left; k++) {
            const char *key = iql_keymap_key(&keys.km, ord[k]);
            if (!name_matches(st, key, strlen(key)))
                continue;
            struct names vs;
            rc = tag_names(c, db, snap, ms[i], st->where, key, &vs, &r->err);
            if (rc == ERR_OK)
                names_rows(&vs, &o, key);
            else
                iql_keymap_destroy(&vs.km);
        }
        free(ord);
        iql_keymap_destroy(&keys.km);
        if (rc)
            return rc;
    }
    return ERR_OK;
}

static const char *type_name(int type)
{
    switch (type) {
    case REC_FLOAT: return "float";
    case REC_INT: return "integer";
    case REC_UINT: return "unsigned";
    case REC_BOOL: return "boolean";
    default: return "string";
    }
}

static int show_field_keys(struct store_snap *snap, const struct iql_stmt *st, char **ms, size_t nm,
                           struct iql_result *r)
{
    for (size_t i = 0; i < nm; i++) {
        char **names;
        int *types;
        size_t n;
        if (iql_field_keys(snap, ms[i], INT64_MIN, INT64_MAX, &names, &types, &n)) {
            buf_puts(&r->err, "cannot read the catalog");
            return ERR_IO;
        }
        struct out o = {r, NULL, ms[i], "[\"fieldKey\",\"fieldType\"]", lim_of(st)};
        for (size_t k = 0; k < n; k++) {
            const char *t = type_name(types[k]);
            out_row(&o, names[k], strlen(names[k]), t, strlen(t));
        }
        iql_names_free(names, n);
        free(types);
    }
    return ERR_OK;
}

/* Line protocol's escapes of a series key: \ before , = and space. */
static void key_part(struct buf *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ',' || s[i] == '=' || s[i] == ' ')
            buf_putc(out, '\\');
        buf_putc(out, s[i]);
    }
}

struct serrow {
    const struct iql_ctx *c;
    struct names *ns;
    struct buf key;
};

static int cmp_tag(const void *a, const void *b)
{
    const struct rec_tag *x = a, *y = b;
    size_t n = x->key.len < y->key.len ? x->key.len : y->key.len;
    int c = memcmp(x->key.ptr, y->key.ptr, n);
    return c ? c : (x->key.len > y->key.len) - (x->key.len < y->key.len);
}

static int series_row(void *arg, const struct exec_row *row, struct cond_row *cr)
{
    struct serrow *sr = arg;
    if (cond_row_decode(cr))
        return ERR_CORRUPT;
    size_t n = cr->ntags;
    struct rec_tag *tags = xcalloc(n + 1, sizeof *tags);
    if (n) /* cr->tags is NULL without tags */
        memcpy(tags, cr->tags, n * sizeof *tags);
    const char *ht = sr->c->o->host_tag;
    if (row->host.len)
        tags[n++] = (struct rec_tag){slice_make(ht, strlen(ht)), row->host};
    qsort(tags, n, sizeof *tags, cmp_tag);
    buf_reset(&sr->key);
    key_part(&sr->key, row->event.ptr, row->event.len);
    for (size_t i = 0; i < n; i++) {
        buf_putc(&sr->key, ',');
        key_part(&sr->key, tags[i].key.ptr, tags[i].key.len);
        buf_putc(&sr->key, '=');
        key_part(&sr->key, tags[i].value.ptr, tags[i].value.len);
    }
    free(tags);
    names_add(sr->ns, sr->key.data, sr->key.len);
    return ERR_OK;
}

static int show_series(const struct iql_ctx *c, struct store_db *db, struct store_snap *snap,
                       const struct iql_stmt *st, char **ms, size_t nm, struct iql_result *r)
{
    struct names ns;
    names_init(&ns, (size_t)c->o->q->max_groups);
    struct serrow sr = {c, &ns, BUF_INIT};
    int rc = ERR_OK;
    for (size_t i = 0; i < nm && rc == ERR_OK; i++)
        rc = scan_rows(c, db, snap, ms[i], st->where, series_row, &sr, &r->err);
    buf_destroy(&sr.key);
    if (rc || too_many(&ns, r)) {
        iql_keymap_destroy(&ns.km);
        return rc ? rc : ERR_TOOBIG;
    }
    if (ns.n == 0) {
        iql_keymap_destroy(&ns.km);
        return ERR_OK;
    }
    struct out o = {r, NULL, NULL, "[\"key\"]", lim_of(st)};
    names_rows(&ns, &o, NULL);
    return ERR_OK;
}

/* Go's time.Duration text ("720h0m0s", "0s"). */
static void go_duration(struct buf *out, int64_t ns)
{
    if (ns == 0) {
        buf_puts(out, "\"0s\"");
        return;
    }
    int64_t s = ns / 1000000000LL;
    buf_printf(out, "\"%lldh%lldm%llds\"", (long long)(s / 3600), (long long)(s / 60 % 60),
               (long long)(s % 60));
}

/* InfluxDB's shard group duration for a database of ttl_ns: 7 days
 * without a TTL or over 180 days, a day from 2 days, else an hour. */
static int64_t shard_group_ns(int64_t ttl_ns)
{
    int64_t day = 86400000000000LL;
    return ttl_ns == 0 || ttl_ns > 180 * day ? 7 * day : ttl_ns >= 2 * day ? day : 3600000000000LL;
}

void iql_shard_range(struct store_db *db, int64_t *lo, int64_t *hi)
{
    struct db_opts o;
    store_db_opts(db, &o);
    int64_t sg = shard_group_ns(o.ttl_ns);
    if (*lo != INT64_MIN)
        *lo = *lo >= 0 ? *lo - *lo % sg : (*lo - sg + 1) / sg * sg;
    if (*hi != INT64_MAX && *hi <= INT64_MAX - sg)
        *hi = (*hi >= 0 ? *hi - *hi % sg : (*hi - sg + 1) / sg * sg) + sg - 1;
}

static int show_rps(const struct iql_ctx *c, const struct iql_stmt *st, struct iql_result *r)
{
    struct store_db *db;
    if (iql_open_db(c, st->db, &db, r))
        return ERR_NOTFOUND;
    struct db_opts o;
    store_db_opts(db, &o);
    store_db_unref(db);
    struct iql_series *s =
        series(r, NULL, "[\"name\",\"duration\",\"shardGroupDuration\",\"replicaN\",\"default\"]");
    size_t start = s->rows.len;
    buf_puts(&s->rows, "[\"autogen\",");
    go_duration(&s->rows, o.ttl_ns);
    buf_putc(&s->rows, ',');
    go_duration(&s->rows, shard_group_ns(o.ttl_ns));
    buf_puts(&s->rows, ",1,true]");
    iql_series_row_end(r, s, start);
    return ERR_OK;
}

static int card_row(void *arg, const struct exec_row *row, struct cond_row *cr)
{
    return event_row(arg, row, cr);
}

static int show_card(const struct iql_ctx *c, struct store_db *db, struct store_snap *snap,
                     const struct iql_stmt *st, struct iql_result *r)
{
    (void)card_row;
    struct names ns;
    if (measurements(c, db, snap, st, &ns, r))
        return ERR_INVAL;
    if (ns.n == 0) {
        iql_keymap_destroy(&ns.km);
        return ERR_OK;
    }
    struct iql_series *s =
        series(r, NULL, st->exact ? "[\"count\"]" : "[\"cardinality estimation\"]");
    size_t start = s->rows.len;
    buf_printf(&s->rows, "[%zu]", ns.n);
    iql_series_row_end(r, s, start);
    iql_keymap_destroy(&ns.km);
    return ERR_OK;
}

/* --- writes --- */

struct deleter {
    struct store_db *db;
    struct batch *b;
    int rc;
};

static int delete_flush(struct deleter *d)
{
    if (batch_count(d->b) == 0)
        return ERR_OK;
    int rc = store_write(d->db, d->b);
    batch_clear(d->b);
    return rc;
}

static int delete_row(void *arg, const struct exec_row *row, struct cond_row *cr)
{
    (void)cr;
    struct deleter *d = arg;
    batch_delete_id(d->b, row->ts, row->host, row->event, row->id);
    return batch_count(d->b) >= META_DELETE_BATCH ? delete_flush(d) : ERR_OK;
}

static int delete_rows(const struct iql_ctx *c, struct store_db *db, struct store_snap *snap,
                       const struct iql_stmt *st, struct iql_result *r)
{
    char **ms = NULL;
    size_t nm = 0;
    int rc = from_list(c, db, snap, st, &ms, &nm, r);
    struct deleter d = {db, batch_new(), 0};
    for (size_t i = 0; i < nm && rc == ERR_OK; i++)
        rc = scan_rows(c, db, snap, ms[i], st->where, delete_row, &d, &r->err);
    if (rc == ERR_OK)
        rc = delete_flush(&d);
    if (rc && !r->err.len)
        buf_printf(&r->err, "delete failed: %s", err_name(rc));
    batch_free(d.b);
    iql_names_free(ms, nm);
    return rc;
}

static int create_db(const struct iql_ctx *c, const struct iql_stmt *st, struct iql_result *r)
{
    struct db_opts d = c->o->q->db_defaults;
    if (st->has_ttl)
        d.ttl_ns = st->ttl_ns;
    int rc = store_db_create(c->s, st->db, &d);
    if (rc == ERR_OK || rc == ERR_EXISTS)
        return ERR_OK;
    if (rc == ERR_INVAL)
        buf_puts(&r->err, "bad database name (" STORE_DB_NAME_RULE ")");
    else
        buf_printf(&r->err, "cannot create database: %s", err_name(rc));
    return rc;
}

static int drop_db(const struct iql_ctx *c, const struct iql_stmt *st, struct iql_result *r)
{
    int rc = store_db_drop(c->s, st->db);
    if (rc == ERR_OK || rc == ERR_NOTFOUND) /* InfluxDB: dropping a missing one is no error */
        return ERR_OK;
    buf_printf(&r->err, "cannot drop database: %s", err_name(rc));
    return rc;
}

static int on_db(const struct iql_ctx *c, const struct iql_stmt *st, struct store_db *db,
                 struct store_snap *snap, struct iql_result *r)
{
    char **ms = NULL;
    size_t nm = 0;
    int rc;
    switch (st->kind) {
    case IQL_SHOW_MEASUREMENTS: return show_measurements(c, db, snap, st, r);
    case IQL_SHOW_MEAS_CARD: return show_card(c, db, snap, st, r);
    case IQL_DROP_MEASUREMENT:
    case IQL_DELETE: return delete_rows(c, db, snap, st, r);
    default: break;
    }
    if (st->kind != IQL_SHOW_SERIES || st->nfrom) {
        if ((rc = from_list(c, db, snap, st, &ms, &nm, r)) != ERR_OK)
            return rc;
    } else {
        ms = xcalloc(1, sizeof(char *));
        ms[0] = NULL;
        nm = 1;
    }
    switch (st->kind) {
    case IQL_SHOW_TAG_KEYS: rc = show_tag_keys(c, db, snap, st, ms, nm, r); break;
    case IQL_SHOW_TAG_VALUES: rc = show_tag_values(c, db, snap, st, ms, nm, r); break;
    case IQL_SHOW_FIELD_KEYS: rc = show_field_keys(snap, st, ms, nm, r); break;
    default: rc = show_series(c, db, snap, st, ms, nm, r); break;
    }
    iql_names_free(ms, nm);
    return rc;
}

int iql_exec_meta(const struct iql_ctx *c, const struct iql_stmt *st, struct iql_result *r)
{
    switch (st->kind) {
    case IQL_SHOW_DBS: return show_dbs(c, r);
    case IQL_CREATE_DB: return create_db(c, st, r);
    case IQL_DROP_DB: return drop_db(c, st, r);
    case IQL_SHOW_RPS: return show_rps(c, st, r);
    default: break;
    }
    const char *name = st->db;
    if (!name && st->nfrom && st->from[0].db)
        name = st->from[0].db;
    struct store_db *db = NULL;
    if (st->kind == IQL_SHOW_MEASUREMENTS && name) {
        int grc = store_db_get(c->s, name, &db);
        if (grc == ERR_NOTFOUND)
            return ERR_OK; /* InfluxDB: no measurements, no error */
        if (grc)
            db = NULL;
    }
    if (!db && iql_open_db(c, name, &db, r))
        return ERR_NOTFOUND;
    struct store_snap *snap = store_snapshot(db);
    int rc = on_db(c, st, db, snap, r);
    store_snap_release(snap);
    store_db_unref(db);
    return rc;
}
