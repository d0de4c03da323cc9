/* The query cursor: runs a script of statements one after another, each
 * streaming its output into a small buffer that query_cursor_read drains.
 * Admin statements (CREATE, ALTER, DROP, SHOW, DELETE) and EXPLAIN run to
 * completion when reached; a SELECT is planned and opened when reached, then
 * advanced a few rows per read, so memory never grows with the result. */
#include "query/query.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "base/assist.h"
#include "base/clock.h"
#include "base/err.h"
#include "config/config.h"
#include "query/cond.h"
#include "query/encode.h"
#include "query/plan.h"
#include "query/query_int.h"
#include "query/sql.h"

#define DELETE_BATCH 1000 /* tombstones per store_write */

struct run {
    const struct sql_stmt *st;
    struct store_db *db;
    struct store_snap *snap;
    struct plan plan;
    bool has_plan;
    struct exec *ex;
    struct exec *ex2; /* a query split between two threads: the other half */
    bool counted;     /* COUNT(*) done at the start (scanned_rows is it) */
    struct enc_proj proj;
    int64_t emitted;       /* output rows (or rows deleted) */
    uint64_t scanned_rows; /* rows that passed the condition */
    struct grouper *grp;   /* aggregate queries */
    /* the plan's ranges before take_counts left it the windows the
     * store could not count (owned; NULL: the plan's are these) */
    struct plan_range *all_ranges;
    size_t nall_ranges;
    uint64_t counted_rows; /* rows counted by take_counts, not read */
    bool rows_done;
    bool latest;             /* the latest-per-host reader answers it */
    uint64_t latest_scanned; /* entries its readers read */
    int64_t t0;
};

struct query_cursor {
    struct store *s;
    struct query_opts o;
    struct sql_script sc;
    size_t next;  /* next statement to start */
    bool running; /* a SELECT is streaming in run */
    struct run run;
    struct buf out; /* pending output from out_pos */
    size_t out_pos;
    bool json_first; /* no row yet in the open {"results":[ */
    bool done;
    size_t applied; /* statements completed: their effects stay */
    int err;        /* sticky mid-stream error */
    bool err_reported;
    struct buf errmsg;
};

void query_opts_default(struct query_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->max_get_rows = 2000;
    o->format = QUERY_NDJSON;
    o->db_defaults = (struct db_opts){.buckets = 16, .ts_desc = true, .ttl_ns = 0};
}

bool query_db_visible(const struct query_opts *o, const char *name)
{
    return !o->db_visible || o->db_visible(o->db_visible_arg, name);
}

/* --- output framing --- */

static void stmt_begin(struct query_cursor *c)
{
    if (c->o.format == QUERY_JSON)
        buf_puts(&c->out, "{\"results\":[");
    c->json_first = true;
}

/* Call before each row object. */
static void row_begin(struct query_cursor *c)
{
    if (c->o.format == QUERY_JSON && !c->json_first)
        buf_putc(&c->out, ',');
    c->json_first = false;
}

static void row_end(struct query_cursor *c)
{
    if (c->o.format == QUERY_NDJSON)
        buf_putc(&c->out, '\n');
}

static void stmt_end(struct query_cursor *c)
{
    if (c->o.format == QUERY_JSON)
        buf_puts(&c->out, "]}\n");
}

/* One-object statement output: {"ok":true}, {"deleted":N}, EXPLAIN ... */
static void emit_single(struct query_cursor *c, const char *obj, size_t n)
{
    stmt_begin(c);
    row_begin(c);
    buf_append(&c->out, obj, n);
    row_end(c);
    stmt_end(c);
}

/* --- statement bookkeeping --- */

static void run_release(struct run *r)
{
    free(r->all_ranges);
    group_free(r->grp);
    query_exec_free(r->ex);
    query_exec_free(r->ex2);
    if (r->snap)
        store_snap_release(r->snap);
    if (r->db)
        store_db_unref(r->db);
    if (r->has_plan)
        plan_destroy(&r->plan);
    memset(r, 0, sizeof(*r));
}

static int metric_plan(const struct run *r)
{
    return r->has_plan ? (int)r->plan.kind : QM_NONE;
}

/* What the run's execs read and skipped, both halves of a split query. */
static uint64_t run_scanned(const struct run *r)
{
    return (r->ex ? query_exec_scanned(r->ex) : 0) + (r->ex2 ? query_exec_scanned(r->ex2) : 0);
}

static struct exec_stats run_stats(const struct run *r)
{
    struct exec_stats a = r->ex ? query_exec_stats(r->ex) : (struct exec_stats){0, 0, 0, 0};
    if (r->ex2) {
        struct exec_stats b = query_exec_stats(r->ex2);
        a.blocks_read += b.blocks_read;
        a.blocks_skipped += b.blocks_skipped;
        a.rows_skipped += b.rows_skipped;
        a.section_rows += b.section_rows;
    }
    return a;
}

static void run_finish(struct run *r, int outcome)
{
    uint64_t scanned = run_scanned(r);
    struct exec_stats st = run_stats(r);
    query_metrics_record(metric_plan(r), outcome, scanned, (uint64_t)r->emitted,
                         clock_mono_ns() - r->t0);
    query_metrics_blocks(st.blocks_read, st.blocks_skipped, st.rows_skipped);
    query_metrics_counted(r->counted_rows);
    query_metrics_sections(st.section_rows);
    run_release(r);
}

static int open_db(struct query_cursor *c, const char *name, struct store_db **db, struct buf *err)
{
    int rc = store_db_get(c->s, name, db);
    if (rc == ERR_NOTFOUND) {
        buf_printf(err, "database '%s' not found", name);
    } else if (rc == ERR_OFFLINE) {
        buf_printf(err, "database '%s' is offline since the start: ", name);
        store_db_offline_reason(c->s, name, err);
    } else if (rc)
        buf_printf(err, "cannot open database '%s': %s", name, err_name(rc));
    return rc;
}

static struct plan_opts plan_opts_of(const struct query_cursor *c)
{
    return (struct plan_opts){c->o.max_get_rows, c->o.allow_full_scan, c->o.full_scan, c->o.now_ns};
}

/* Plans st->sel against its database (run->db, run->plan). */
static int run_plan(struct query_cursor *c, struct run *r, struct buf *err)
{
    int rc = open_db(c, r->st->db, &r->db, err);
    if (rc)
        return rc;
    struct db_opts dbo;
    store_db_opts(r->db, &dbo);
    struct plan_opts po = plan_opts_of(c);
    rc = plan_build(&r->st->sel, &dbo, &po, &r->plan, err);
    r->has_plan = rc == ERR_OK;
    return rc;
}

/* Opens the rows of the plan; unordered: the caller needs them in no
 * order (a count, groups held until the end). */
static int run_exec_open(struct run *r, bool unordered, struct buf *err)
{
    r->plan.unordered = unordered;
    plan_series_select(&r->plan, &r->st->sel);
    if (!r->snap)
        r->snap = store_snapshot(r->db);
    return query_exec_open(r->snap, &r->plan, &r->ex, err);
}

/* --- admin statements --- */

static int do_create(struct query_cursor *c, const struct sql_stmt *st, struct buf *err)
{
    struct db_opts o = {
        st->has_buckets ? (uint32_t)st->buckets : c->o.db_defaults.buckets,
        st->has_ts_order ? st->ts_desc : c->o.db_defaults.ts_desc,
        st->has_ttl ? st->ttl_ns : c->o.db_defaults.ttl_ns,
    };
    int rc = store_db_create(c->s, st->db, &o);
    if (rc == ERR_OK && st->has_max_disk && st->max_disk_bytes) {
        struct store_db *db;
        rc = store_db_get(c->s, st->db, &db);
        if (rc == ERR_OK) {
            rc = store_db_set_max_disk_bytes(db, st->max_disk_bytes);
            store_db_unref(db);
        }
        if (rc) {
            buf_printf(err, "database '%s' created, but its max_disk_bytes not set: %s", st->db,
                       err_name(rc));
            return rc;
        }
    }
    if (rc == ERR_EXISTS && st->if_not_exists)
        rc = ERR_OK;
    if (rc == ERR_OFFLINE) {
        buf_printf(err, "database '%s' exists but is offline: ", st->db);
        store_db_offline_reason(c->s, st->db, err);
    } else if (rc == ERR_EXISTS)
        buf_printf(err, "database '%s' already exists", st->db);
    else if (rc == ERR_INVAL)
        buf_printf(err, "bad database name '%s' (" STORE_DB_NAME_RULE ")", st->db);
    else if (rc)
        buf_printf(err, "cannot create database '%s': %s", st->db, err_name(rc));
    return rc;
}

static int do_alter(struct query_cursor *c, const struct sql_stmt *st, struct buf *err)
{
    struct store_db *db;
    int rc = open_db(c, st->db, &db, err);
    if (rc)
        return rc;
    if (st->has_max_disk) {
        rc = store_db_set_max_disk_bytes(db, st->max_disk_bytes);
        if (rc)
            buf_printf(err, "cannot change max_disk_bytes of '%s': %s", st->db, err_name(rc));
    } else if (st->event) {
        rc = store_db_set_event_ttl(db, slice_make(st->event, st->event_len), st->ttl_ns);
        if (rc == ERR_TOOBIG)
            buf_printf(err,
                       "too many event TTLs on '%s' (at most 256): remove some with "
                       "SET ttl='0' FOR EVENT '...'",
                       st->db);
        else if (rc)
            buf_printf(err, "cannot change the ttl of event '%s' in '%s': %s", st->event, st->db,
                       err_name(rc));
    } else {
        rc = store_db_set_ttl(db, st->ttl_ns);
        if (rc)
            buf_printf(err, "cannot change the ttl of '%s': %s", st->db, err_name(rc));
    }
    store_db_unref(db);
    return rc;
}

static int do_drop(struct query_cursor *c, const struct sql_stmt *st, struct buf *err)
{
    int rc = store_db_drop(c->s, st->db);
    if (rc == ERR_NOTFOUND && st->if_exists)
        return ERR_OK;
    if (rc == ERR_NOTFOUND)
        buf_printf(err, "database '%s' not found", st->db);
    else if (rc)
        buf_printf(err, "cannot drop database '%s': %s", st->db, err_name(rc));
    return rc;
}

static void show_row(struct query_cursor *c, const char *name, const struct db_opts *o,
                     uint64_t max_disk, const struct store_db_stats *st,
                     const struct store_event_ttl *ev, size_t nev)
{
    row_begin(c);
    buf_puts(&c->out, "{\"name\":");
    enc_json_str(&c->out, name, strlen(name));
    buf_printf(&c->out, ",\"buckets\":%u,\"ts_order\":\"%s\",\"ttl\":\"", o->buckets,
               o->ts_desc ? "desc" : "asc");
    sql_format_duration(o->ttl_ns, &c->out);
    /* rows are estimated from entry counts (store_db_stats) */
    buf_printf(&c->out, "\",\"rows\":%llu,\"bytes\":%llu", (unsigned long long)st->rows,
               (unsigned long long)st->bytes);
    if (max_disk) {
        char size[32];
        cfg_format_size(max_disk, size, sizeof size);
        buf_printf(&c->out, ",\"max_disk_bytes\":\"%s\"", size);
    }
    if (nev) {
        buf_puts(&c->out, ",\"event_ttl\":{");
        for (size_t i = 0; i < nev; i++) {
            if (i)
                buf_puts(&c->out, ",");
            enc_json_str(&c->out, ev[i].event, strlen(ev[i].event));
            buf_puts(&c->out, ":\"");
            sql_format_duration(ev[i].ttl_ns, &c->out);
            buf_puts(&c->out, "\"");
        }
        buf_puts(&c->out, "}");
    }
    buf_puts(&c->out, "}");
    row_end(c);
}

/* Databases that could not open at start, after the others, with why. */
static void show_offline(struct query_cursor *c)
{
    struct store_offline *v;
    size_t n = store_offline_list(c->s, &v);
    for (size_t i = 0; i < n; i++) {
        if (!query_db_visible(&c->o, v[i].name))
            continue;
        row_begin(c);
        buf_puts(&c->out, "{\"name\":");
        enc_json_str(&c->out, v[i].name, strlen(v[i].name));
        buf_puts(&c->out, ",\"status\":\"offline\",\"error\":");
        enc_json_str(&c->out, v[i].why, strlen(v[i].why));
        buf_puts(&c->out, "}");
        row_end(c);
    }
    store_offline_free(v, n);
}

static int do_show(struct query_cursor *c, struct buf *err)
{
    char **names = NULL;
    size_t n = 0;
    int rc = store_db_list(c->s, &names, &n);
    if (rc) {
        buf_printf(err, "cannot list databases: %s", err_name(rc));
        return rc;
    }
    stmt_begin(c);
    for (size_t i = 0; i < n; i++) {
        struct store_db *db;
        if (query_db_visible(&c->o, names[i]) && store_db_get(c->s, names[i], &db) == ERR_OK) {
            struct db_opts o;
            struct store_db_stats st;
            store_db_opts(db, &o);
            store_db_stats(db, &st);
            struct store_event_ttl *ev;
            size_t nev = store_db_event_ttls(db, &ev);
            show_row(c, names[i], &o, store_db_max_disk_bytes(db), &st, ev, nev);
            store_event_ttls_free(ev, nev);
            store_db_unref(db);
        }
        free(names[i]);
    }
    free(names);
    show_offline(c);
    stmt_end(c);
    return ERR_OK;
}

static int delete_flush(struct run *r, struct batch *b, struct buf *err)
{
    if (batch_count(b) == 0)
        return ERR_OK;
    /* back-pressure is the store's: it stalls the write, then says BUSY (503) */
    int rc = store_write(r->db, b);
    if (rc)
        buf_printf(err, "delete failed after %lld rows: %s", (long long)r->emitted, err_name(rc));
    else
        r->emitted += (int64_t)batch_count(b);
    batch_clear(b);
    return rc;
}

/* The message of an error of the executor (query_exec_next). */
static void exec_error(const struct run *r, int rc, struct buf *err)
{
    if (rc == ERR_TOOBIG && r->plan.kind == PLAN_GET && r->emitted >= r->plan.max_rows)
        buf_printf(err,
                   "too many rows: the GET keys hold more than max_get_rows = %lld rows; "
                   "narrow the keys or the condition, or count them with COUNT(*)",
                   (long long)r->plan.max_rows);
    else if (rc == ERR_TOOBIG)
        buf_puts(err, "a regular expression ran past its match limit (1,000,000 steps): "
                      "simplify it");
    else
        buf_printf(err, "%s failed while reading: %s",
                   r->st->kind == SQL_DELETE ? "delete" : "query", err_name(rc));
}

/* WHERE host = 'x' [AND event = 'y'] [AND ts range]: one range tombstone. */
static bool delete_is_range(const struct sql_where *w)
{
    return w->host.is_set && w->host.n == 1 && (!w->event.is_set || w->event.n == 1) &&
           !w->has_ts_set && cond_only_key_range(w->cond);
}

/* Counts the rows the tombstone covers (in the statement's snapshot: rows
 * written meanwhile are deleted too but not counted), then stores it. */
static int delete_range(struct run *r, struct buf *err)
{
    const struct sql_where *w = &r->st->sel.where;
    int rc;
    while ((rc = query_exec_next(r->ex)) == 1)
        r->emitted++;
    if (rc < 0) {
        exec_error(r, rc, err);
        return rc;
    }
    struct slice ev =
        w->event.is_set ? slice_make(w->event.v[0], w->event.len[0]) : slice_make("", 0);
    rc = store_db_delete_range(r->db, slice_make(w->host.v[0], w->host.len[0]),
                               w->event.is_set ? &ev : NULL, w->has_lo ? w->ts_lo : INT64_MIN,
                               w->has_hi ? w->ts_hi : INT64_MAX);
    if (rc == ERR_BUSY)
        buf_printf(err,
                   "delete refused for now: %d range deletes of database %s still wait for "
                   "compaction to apply them; retry in a few seconds",
                   STORE_MAX_RANGE_DELETES, store_db_name(r->db));
    else if (rc)
        buf_printf(err, "delete failed: %s", err_name(rc));
    return rc;
}

static int do_delete(struct query_cursor *c, struct run *r, struct buf *err)
{
    int rc = run_plan(c, r, err);
    if (rc == ERR_OK)
        rc = run_exec_open(r, false, err);
    if (rc)
        return rc;
    if (delete_is_range(&r->st->sel.where)) {
        rc = delete_range(r, err);
        if (rc == ERR_OK) {
            char tmp[48];
            int n = snprintf(tmp, sizeof(tmp), "{\"deleted\":%lld}", (long long)r->emitted);
            emit_single(c, tmp, (size_t)n);
        }
        return rc;
    }
    struct batch *b = batch_new();
    while ((rc = query_exec_next(r->ex)) == 1) {
        const struct exec_row *row = query_exec_row(r->ex);
        batch_delete_id(b, row->ts, row->host, row->event, row->id);
        if (batch_count(b) >= DELETE_BATCH && (rc = delete_flush(r, b, err)) != ERR_OK)
            break;
    }
    if (rc < 0 && err->len == 0)
        exec_error(r, rc, err);
    if (rc == 0)
        rc = delete_flush(r, b, err);
    batch_free(b);
    if (rc == ERR_OK) {
        char tmp[48];
        int n = snprintf(tmp, sizeof(tmp), "{\"deleted\":%lld}", (long long)r->emitted);
        emit_single(c, tmp, (size_t)n);
    }
    return rc;
}

/* --- discovery: SHOW HOSTS, EVENTS, TAG KEYS, TAG VALUES, FIELDS --- */

struct show_ctx {
    struct query_cursor *c;
    const char *col;
    bool fields;
};

static const char *field_type_name(int type)
{
    switch (type) {
    case REC_FLOAT: return "float";
    case REC_INT: return "integer";
    case REC_UINT: return "unsigned";
    case REC_BOOL: return "boolean";
    default: return "string";
    }
}

static int show_name(void *arg, struct slice name, int type)
{
    struct show_ctx *x = arg;
    row_begin(x->c);
    buf_printf(&x->c->out, "{\"%s\":", x->col);
    enc_json_str(&x->c->out, name.ptr, name.len);
    if (x->fields)
        buf_printf(&x->c->out, ",\"type\":\"%s\"", field_type_name(type));
    buf_putc(&x->c->out, '}');
    row_end(x->c);
    return 0;
}

static int do_show_names(struct query_cursor *c, const struct sql_stmt *st, struct buf *err)
{
    static const struct {
        enum sql_kind kind;
        enum store_cat_kind cat;
        const char *col;
    } map[] = {
        {SQL_SHOW_HOSTS, STORE_CAT_HOSTS, "host"},
        {SQL_SHOW_EVENTS, STORE_CAT_EVENTS, "event"},
        {SQL_SHOW_TAG_KEYS, STORE_CAT_TAG_KEYS, "tag_key"},
        {SQL_SHOW_TAG_VALUES, STORE_CAT_TAG_VALUES, "tag_value"},
        {SQL_SHOW_FIELDS, STORE_CAT_FIELDS, "field"},
    };
    size_t m = 0;
    while (map[m].kind != st->kind)
        m++;
    const struct sql_where *w = &st->sel.where;
    struct slice host, event;
    struct store_cat_query q = {
        .kind = map[m].cat,
        .lo = w->has_lo ? w->ts_lo : INT64_MIN,
        .hi = w->has_hi ? w->ts_hi : INT64_MAX,
        .tag_key = slice_make(st->tag_key ? st->tag_key : "", st->tag_key_len),
        .limit = st->sel.has_limit ? (size_t)st->sel.limit : 0,
    };
    bool none = (st->sel.has_limit && st->sel.limit == 0) || (w->host.is_set && !w->host.n) ||
                (w->event.is_set && !w->event.n) || (w->has_ts_set && !w->nts);
    if (w->host.is_set && w->host.n) {
        host = slice_make(w->host.v[0], w->host.len[0]);
        q.host = &host;
    }
    if (w->event.is_set && w->event.n) {
        event = slice_make(w->event.v[0], w->event.len[0]);
        q.event = &event;
    }
    struct store_db *db;
    int rc = open_db(c, st->db, &db, err);
    if (rc)
        return rc;
    struct store_snap *snap = store_snapshot(db);
    struct show_ctx x = {c, map[m].col, st->kind == SQL_SHOW_FIELDS};
    size_t mark = c->out.len;
    stmt_begin(c);
    if (!none)
        rc = store_catalog(snap, &q, show_name, &x);
    if (rc) {
        c->out.len = mark;
        buf_printf(err, "cannot list the names of '%s': %s", st->db, err_name(rc));
    } else {
        stmt_end(c);
    }
    store_snap_release(snap);
    store_db_unref(db);
    return rc;
}

static int do_admin(struct query_cursor *c, const struct sql_stmt *st, struct buf *err)
{
    int rc;
    switch (st->kind) {
    case SQL_CREATE_DB: rc = do_create(c, st, err); break;
    case SQL_ALTER_DB: rc = do_alter(c, st, err); break;
    case SQL_DROP_DB: rc = do_drop(c, st, err); break;
    case SQL_SHOW_DBS: return do_show(c, err);
    default: return do_show_names(c, st, err);
    }
    if (rc == ERR_OK)
        emit_single(c, "{\"ok\":true}", 11);
    return rc;
}

/* --- SELECT --- */

/* Every row is in the groups: they become output (group_finish). */
static int groups_done(struct run *r, struct buf *err)
{
    r->rows_done = true;
    return group_finish(r->grp, err);
}

/* Reads the next row into the grouper: 1 (a row was added), 0 at the end
 * of the rows (the grouper is then finished), or a negative ERR_*. */
static int group_step(struct run *r, struct buf *err)
{
    int rc = query_exec_next(r->ex);
    if (rc < 0) {
        exec_error(r, rc, err);
        return rc;
    }
    if (rc == 0)
        return groups_done(r, err);
    r->scanned_rows++;
    rc = group_add(r->grp, query_exec_cond_row(r->ex), err);
    if (rc == ERR_CORRUPT && err->len == 0)
        exec_error(r, rc, err);
    return rc ? rc : 1;
}

/* Groups every row now, so that errors (too many groups) come before any
 * output, with their status. */
static int group_all(struct run *r, struct buf *err)
{
    int rc;
    while ((rc = group_step(r, err)) == 1)
        ;
    return rc;
}

/* --- latest value per host --- */

/* SELECT host, LAST(x)... GROUP BY host: each host's newest rows answer
 * it, read newest first from the host index, instead of every row of the
 * range. Hosts come from the condition or the store's catalog. */
static bool latest_eligible(const struct sql_select *sel, const struct plan *p)
{
    if (!sel->agg || sel->ngroups != 1 || sel->groups[0].kind != SQL_I_COL ||
        sel->groups[0].col.kind != SQL_COL_HOST || sel->fill != SQL_FILL_NONE || p->is_empty)
        return false;
    bool any = false;
    for (size_t i = 0; i < sel->nitems; i++) {
        const struct sql_item *it = &sel->items[i];
        if (it->kind == SQL_I_AGG && it->agg != SQL_A_LAST)
            return false;
        any = any || it->kind == SQL_I_AGG;
    }
    return any;
}

struct host_list {
    char **v;
    size_t *len, n, cap;
};

static int add_host(void *arg, struct slice name, int type)
{
    (void)type;
    struct host_list *h = arg;
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 64;
        h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
        h->len = xrealloc(h->len, h->cap * sizeof(*h->len));
    }
    h->v[h->n] = xstrndup(name.ptr, name.len);
    h->len[h->n++] = name.len;
    return 0;
}

/* Feeds host's newest rows to the grouper until every LAST has a value
 * (and the rest of that ts: rows of one ts may hold others). */
static int latest_of_host(struct run *r, char *host, size_t len, struct buf *err)
{
    struct sql_where hw = *r->plan.where;
    hw.host = (struct sql_strset){true, &host, &len, 1};
    struct plan hp = r->plan;
    hp.kind = PLAN_INDEX;
    hp.where = &hw;
    hp.out_desc = true;
    hp.reverse = !hp.db_desc;
    /* newest first: neither unordered nor from host sections, whose rows
     * come by event (the first ts read must be the host's newest) */
    hp.unordered = false;
    hp.series = false;
    struct exec *ex;
    int rc = query_exec_open(r->snap, &hp, &ex, err);
    if (rc)
        return rc;
    bool full = false;
    int64_t full_ts = 0;
    while ((rc = query_exec_next(ex)) == 1) {
        const struct exec_row *row = query_exec_row(ex);
        if (full && row->ts != full_ts)
            break;
        r->scanned_rows++;
        if ((rc = group_add(r->grp, query_exec_cond_row(ex), err)) != ERR_OK)
            break;
        if (!full && group_last_full(r->grp)) {
            full = true;
            full_ts = row->ts;
        }
    }
    r->latest_scanned += query_exec_scanned(ex);
    query_exec_free(ex);
    if (rc < 0 && err->len == 0)
        exec_error(r, rc, err);
    return rc < 0 ? rc : ERR_OK;
}

static int latest_all(struct run *r, struct buf *err)
{
    const struct sql_where *w = r->plan.where;
    struct host_list h = {0};
    int rc = ERR_OK;
    if (w->host.is_set) {
        for (size_t i = 0; i < w->host.n; i++)
            add_host(&h, slice_make(w->host.v[i], w->host.len[i]), 0);
    } else {
        struct slice ev;
        struct store_cat_query q = {.kind = STORE_CAT_HOSTS, .lo = r->plan.lo, .hi = r->plan.hi};
        if (w->event.is_set && w->event.n == 1) {
            ev = slice_make(w->event.v[0], w->event.len[0]);
            q.event = &ev;
        }
        rc = store_catalog(r->snap, &q, add_host, &h);
        if (rc)
            buf_printf(err, "cannot list the hosts: %s", err_name(rc));
    }
    for (size_t i = 0; i < h.n && rc == ERR_OK; i++)
        rc = latest_of_host(r, h.v[i], h.len[i], err);
    for (size_t i = 0; i < h.n; i++)
        free(h.v[i]);
    free(h.v);
    free(h.len);
    return rc ? rc : groups_done(r, err);
}

/* The next output of the running SELECT into c->out: 1 written, 0 the
 * end, negative ERR_*. Writes nothing for COUNT(*) until the end. */
static int select_row(struct query_cursor *c, struct run *r, struct buf *err)
{
    const struct sql_select *sel = &r->st->sel;
    if (r->grp) {
        for (;;) {
            size_t mark = c->out.len;
            bool first = c->json_first;
            row_begin(c);
            if (group_next(r->grp, &c->out) == 1) {
                row_end(c);
                return 1;
            }
            c->out.len = mark;
            c->json_first = first;
            if (r->rows_done)
                return 0;
            int rc = group_step(r, err);
            if (rc < 0)
                return rc;
        }
    }
    if (r->counted)
        return 0;
    int rc = query_exec_next(r->ex);
    if (rc < 0) {
        exec_error(r, rc, err);
        return rc;
    }
    if (rc == 0)
        return 0;
    r->scanned_rows++;
    if (sel->count)
        return 1;
    if (r->plan.kind == PLAN_GET && r->emitted >= r->plan.max_rows) {
        exec_error(r, ERR_TOOBIG, err);
        return ERR_TOOBIG;
    }
    const struct exec_row *row = query_exec_row(r->ex);
    size_t mark = c->out.len;
    bool first = c->json_first;
    row_begin(c);
    rc = enc_row(&c->out, row->ts, row->host, row->event, row->id, row->value, &r->proj);
    if (rc) {
        c->out.len = mark;
        c->json_first = first;
        buf_printf(err, "corrupt row value at ts %lld", (long long)row->ts);
        return rc;
    }
    row_end(c);
    return 1;
}

static bool limit_reached(const struct run *r)
{
    const struct sql_select *sel = &r->st->sel;
    return !sel->count && sel->has_limit && r->emitted >= sel->limit;
}

/* EXPLAIN ANALYZE: runs the SELECT, throwing its output away, then gives
 * the plan with what running it took. */
static int select_analyze(struct query_cursor *c, struct run *r, struct buf *err)
{
    const struct sql_select *sel = &r->st->sel;
    struct buf sink = BUF_INIT, keep = c->out;
    bool first = c->json_first;
    int rc = 0;
    c->out = sink;
    while (!limit_reached(r) && (rc = select_row(c, r, err)) == 1) {
        r->emitted++;
        c->out.len = 0;
    }
    buf_destroy(&c->out);
    c->out = keep;
    c->json_first = first;
    if (rc < 0)
        return rc;
    struct buf tmp = BUF_INIT;
    plan_explain(&r->plan, sel, &tmp);
    tmp.len--; /* the closing brace */
    struct exec_stats st = run_stats(r);
    buf_printf(&tmp,
               "%s,\"analyze\":{\"rows_scanned\":%llu,\"rows_counted\":%llu,"
               "\"rows_from_sections\":%llu,\"rows_matched\":%llu,"
               "\"rows_returned\":%llu,\"rows_skipped\":%llu,\"blocks_read\":%llu,"
               "\"blocks_skipped\":%llu,\"groups\":%llu,\"ms\":%.3f}}",
               r->latest ? ",\"strategy\":\"latest per host\"" : "",
               (unsigned long long)(run_scanned(r) + r->latest_scanned),
               (unsigned long long)r->counted_rows, (unsigned long long)st.section_rows,
               (unsigned long long)(r->scanned_rows + r->counted_rows),
               (unsigned long long)(sel->count ? 1 : r->emitted),
               (unsigned long long)st.rows_skipped, (unsigned long long)st.blocks_read,
               (unsigned long long)st.blocks_skipped,
               (unsigned long long)(r->grp ? group_count(r->grp) : 0),
               (double)(clock_mono_ns() - r->t0) / 1e6);
    emit_single(c, tmp.data, tmp.len);
    buf_destroy(&tmp);
    return ERR_OK;
}

/* --- COUNT(*) and counts by group on two threads --- */

/* One of a split query's two halves: an exec over half the plan's ranges,
 * its rows counted, and added to a grouper if there is one. */
struct half {
    struct exec *ex;
    struct grouper *g; /* NULL: a COUNT(*) */
    uint64_t rows;
    int rc; /* at the end: ERR_OK, or the error that stopped it */
    struct buf err;
};

/* Runs fn(theirs) on a helper thread (base/assist.h; here, after mine,
 * when none is free or none has begun it by then) and fn(mine) here, and
 * waits for both. */
static void run_halves(void (*fn)(void *), void *theirs, void *mine)
{
    struct assist a;
    bool helped = assist_offer(&a, fn, theirs);
    fn(mine);
    if (!helped || !assist_wait(&a))
        fn(theirs);
}

static void read_half(void *arg)
{
    struct half *h = arg;
    while ((h->rc = query_exec_next(h->ex)) == 1) {
        h->rows++;
        if (h->g && (h->rc = group_add(h->g, query_exec_cond_row(h->ex), &h->err)) != ERR_OK)
            break;
    }
}

static int online_cpus(void)
{
    static atomic_int n;
    int v = atomic_load(&n);
    if (v == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        v = c > 0 && c < 4096 ? (int)c : 1;
        atomic_store(&n, v);
    }
    return v;
}

/* Below about this many entries in the plan's ts range, a second thread
 * (its start, its exec over the snapshot, the merge) costs more than it
 * saves: 0.25 ms more for 50 rows, even at 1,000 (query/README.md). */
#define SPLIT_MIN_ROWS 4096

/* Whether the plan's ranges may be read by two threads: a SCAN or FULL
 * over two ranges or more (read unordered), a condition threads may
 * share, a second CPU, and enough rows in the range by the snapshot's
 * estimate (taken here if the run has none yet). */
static bool plan_splits(const struct query_cursor *c, struct run *r)
{
    const struct plan *p = &r->plan;
    if (p->is_empty || (p->kind != PLAN_SCAN && p->kind != PLAN_FULL) || p->nranges < 2 ||
        !cond_thread_safe(p->where->cond) || online_cpus() < 2)
        return false;
    if (!r->snap)
        r->snap = store_snapshot(r->db);
    int64_t min = c->o.split_min_rows > 0 ? c->o.split_min_rows : SPLIT_MIN_ROWS;
    return store_snap_rows_estimate(r->snap, p->lo, p->hi) >= (uint64_t)min;
}

static bool count_splits(const struct query_cursor *c, struct run *r)
{
    const struct sql_select *sel = &r->st->sel;
    return sel->count && !sel->agg && plan_splits(c, r);
}

/* Reads the plan's ranges in two halves, mine here and h in a thread of
 * its own (their groupers set by the caller); r->ex and r->ex2 are theirs.
 * Sets scanned_rows; the first error of either, with its message. */
static int read_split(struct run *r, struct half *mine, struct half *h, struct buf *err)
{
    r->plan.unordered = true;
    plan_series_select(&r->plan, &r->st->sel);
    if (!r->snap)
        r->snap = store_snapshot(r->db);
    int rc = query_exec_open_part(r->snap, &r->plan, 0, 2, &r->ex, err);
    if (rc == ERR_OK)
        rc = query_exec_open_part(r->snap, &r->plan, 1, 2, &r->ex2, err);
    if (rc)
        return rc;
    mine->ex = r->ex;
    h->ex = r->ex2;
    if (!mine->g) { /* a COUNT(*): no row is decoded if the ranges decide */
        query_exec_count_only(mine->ex);
        query_exec_count_only(h->ex);
    }
    run_halves(read_half, h, mine);
    r->scanned_rows = mine->rows + h->rows;
    const struct half *bad = mine->rc ? mine : h->rc ? h : NULL;
    if (bad && bad->err.len)
        buf_append(err, bad->err.data, bad->err.len);
    else if (bad)
        exec_error(r, bad->rc, err);
    return bad ? bad->rc : ERR_OK;
}

/* Counts the rows of the plan on two threads into scanned_rows; the query
 * then has nothing to read. */
static int count_split(struct run *r, struct buf *err)
{
    struct half mine = {NULL, NULL, 0, 0, BUF_INIT}, h = {NULL, NULL, 0, 0, BUF_INIT};
    int rc = read_split(r, &mine, &h, err);
    r->counted = rc == ERR_OK;
    return rc;
}

/* Groups the rows of the plan on two threads, the second half into a
 * grouper of its own merged into r->grp at the end (counts only:
 * group_mergeable). 1: the query does not split (nothing done); else as
 * group_all, r->grp finished. */
static int group_split(struct query_cursor *c, struct run *r, struct buf *err)
{
    const struct sql_select *sel = &r->st->sel;
    if (!plan_splits(c, r) || latest_eligible(sel, &r->plan))
        return 1;
    int rc = r->grp ? ERR_OK : group_new(sel, &r->plan, c->o.max_groups, false, &r->grp, err);
    if (rc)
        return rc;
    if (!group_mergeable(r->grp)) {
        group_free(r->grp);
        r->grp = NULL;
        return 1;
    }
    struct half mine = {NULL, r->grp, 0, 0, BUF_INIT}, h = {NULL, NULL, 0, 0, BUF_INIT};
    rc = group_new(sel, &r->plan, c->o.max_groups, false, &h.g, err);
    if (rc == ERR_OK)
        rc = read_split(r, &mine, &h, err);
    if (rc == ERR_OK)
        rc = group_merge(r->grp, h.g, err);
    group_free(h.g);
    buf_destroy(&mine.err);
    buf_destroy(&h.err);
    return rc ? rc : groups_done(r, err);
}

/* --- rows counted, not read --- */

/* Whether a bucket of width and offset holds whole minutes. */
static bool minute_bucket(int64_t width, int64_t offset)
{
    const int64_t minute = 60LL * 1000000000LL;
    return width > 0 && width % minute == 0 && offset % minute == 0;
}

/* Whether the store's counts by event and minute may answer part of an
 * aggregate query: COUNT(*) its only aggregate, the event and time
 * buckets of whole minutes its only keys, a SCAN or FULL whose ranges
 * decide the condition but for an event set. */
static bool counts_eligible(const struct run *r)
{
    const struct sql_select *sel = &r->st->sel;
    const struct plan *p = &r->plan;
    const struct sql_where *w = p->where;
    if (!(sel->agg || sel->count) || p->is_empty ||
        (p->kind != PLAN_SCAN && p->kind != PLAN_FULL) || !cond_is_implied(w->cond) ||
        w->host.is_set || w->has_ts_set)
        return false;
    for (size_t i = 0; i < sel->nitems; i++) {
        const struct sql_item *it = &sel->items[i];
        if ((it->kind == SQL_I_AGG && it->agg != SQL_A_COUNT_STAR) ||
            (it->kind == SQL_I_COL && it->col.kind != SQL_COL_EVENT) ||
            (it->kind == SQL_I_BUCKET && !minute_bucket(it->width, it->offset)))
            return false;
    }
    for (size_t i = 0; i < sel->ngroups; i++) {
        const struct sql_group *g = &sel->groups[i];
        if (g->kind == SQL_I_BUCKET ? !minute_bucket(g->width, g->offset)
                                    : g->col.kind != SQL_COL_EVENT)
            return false;
    }
    return true;
}

struct counting {
    struct run *r;
    struct buf *err;
};

static int take_count(void *arg, struct slice event, int64_t minute, uint64_t rows)
{
    struct counting *k = arg;
    const struct sql_strset *ev = &k->r->plan.where->event;
    if (ev->is_set && !cond_sorted_has(ev->v, ev->len, ev->n, event))
        return ERR_OK;
    k->r->counted_rows += rows;
    return k->r->grp ? group_add_counted(k->r->grp, event, minute, rows, k->err) : ERR_OK;
}

static void push_range(struct plan_range **v, size_t *n, size_t *cap, struct plan_range x)
{
    if (*n == *cap)
        *v = xrealloc(*v, (*cap = *cap ? 2 * *cap : 16) * sizeof **v);
    (*v)[(*n)++] = x;
}

/* When the query is counts_eligible: adds the rows of the windows the
 * store counts by event and minute (store_snap_window_counts) to
 * counted_rows and, for a GROUP BY, to r->grp (made here), and leaves the
 * plan the rest of its ranges to read. */
static int take_counts(struct query_cursor *c, struct run *r, struct buf *err)
{
    if (!counts_eligible(r))
        return ERR_OK;
    int rc = r->st->sel.agg ? group_new(&r->st->sel, &r->plan, c->o.max_groups, false, &r->grp, err)
                            : ERR_OK;
    if (rc)
        return rc;
    if (!r->snap)
        r->snap = store_snapshot(r->db);
    struct plan *p = &r->plan;
    struct plan_range *rest = NULL;
    size_t n = 0, cap = 0;
    struct counting k = {r, err};
    for (size_t i = 0; i < p->nranges && !rc; i++) {
        struct plan_range pr = p->ranges[i];
        struct store_ts_range *win;
        size_t nwin;
        rc =
            store_snap_window_counts(r->snap, pr.bucket, pr.lo, pr.hi, take_count, &k, &win, &nwin);
        for (size_t w = 0; w < nwin; w++) {
            if (win[w].lo > pr.lo)
                push_range(&rest, &n, &cap, (struct plan_range){pr.bucket, pr.lo, win[w].lo - 1});
            pr.lo = win[w].hi + 1; /* a window ends before hi: no overflow */
        }
        if (nwin == 0 || win[nwin - 1].hi < pr.hi)
            push_range(&rest, &n, &cap, pr);
        free(win);
    }
    r->all_ranges = p->ranges;
    r->nall_ranges = p->nranges;
    p->ranges = rest;
    p->nranges = n;
    return rc;
}

/* Gives the plan back the ranges take_counts took from it. */
static void uncount(struct run *r)
{
    if (!r->all_ranges)
        return;
    free(r->plan.ranges);
    r->plan.ranges = r->all_ranges;
    r->plan.nranges = r->nall_ranges;
    r->all_ranges = NULL;
    r->counted_rows = 0;
}

/* An aggregate query: every group held, from the windows the store
 * counts (take_counts) and the buckets read one after another (no
 * merge; counts by group on two threads), or, when that passes max_groups
 * and the query can stream by time bucket, again from the merged rows,
 * bucket by bucket. */
static int select_group(struct query_cursor *c, struct run *r, struct buf *err)
{
    const struct sql_select *sel = &r->st->sel;
    int rc = take_counts(c, r, err);
    if (rc == ERR_OK)
        rc = group_split(c, r, err);
    if (rc == 1) {
        rc = run_exec_open(r, true, err);
        if (rc == ERR_OK && !r->grp)
            rc = group_new(sel, &r->plan, c->o.max_groups, false, &r->grp, err);
        if (rc)
            return rc;
        r->latest = latest_eligible(sel, &r->plan);
        if (r->latest)
            return latest_all(r, err);
        rc = group_all(r, err);
    }
    if (rc != ERR_TOOBIG || !group_streams(sel, r->plan.db_desc))
        return rc;
    uncount(r);
    group_free(r->grp);
    query_exec_free(r->ex);
    query_exec_free(r->ex2);
    r->grp = NULL;
    r->ex = NULL;
    r->ex2 = NULL;
    r->rows_done = false;
    r->scanned_rows = 0;
    buf_reset(err);
    rc = run_exec_open(r, false, err);
    if (rc == ERR_OK)
        rc = group_new(sel, &r->plan, c->o.max_groups, true, &r->grp, err);
    return rc;
}

static int select_start(struct query_cursor *c, struct run *r, struct buf *err)
{
    const struct sql_select *sel = &r->st->sel;
    int rc = run_plan(c, r, err);
    if (rc)
        return rc;
    if (sel->explain && !sel->analyze) {
        struct buf tmp = BUF_INIT;
        plan_explain(&r->plan, sel, &tmp);
        if (latest_eligible(sel, &r->plan)) {
            tmp.len--; /* the closing brace */
            buf_puts(&tmp, ",\"strategy\":\"latest per host\"}");
        }
        emit_single(c, tmp.data, tmp.len);
        buf_destroy(&tmp);
        return ERR_OK;
    }
    if (!sel->agg && sel->count && (rc = take_counts(c, r, err)) != ERR_OK)
        return rc;
    if (count_splits(c, r)) {
        rc = count_split(r, err);
    } else {
        rc = sel->agg ? select_group(c, r, err) : run_exec_open(r, sel->count, err);
        if (!rc && !sel->agg && sel->count)
            query_exec_count_only(r->ex);
    }
    if (rc)
        return rc;
    if (sel->analyze)
        return select_analyze(c, r, err);
    r->proj = (struct enc_proj){sel->star, sel->cols, sel->ncols};
    stmt_begin(c);
    c->running = true;
    return ERR_OK;
}

static void select_end(struct query_cursor *c)
{
    struct run *r = &c->run;
    if (r->st->sel.count) {
        row_begin(c);
        buf_printf(&c->out, "{\"count\":%lld}", (long long)(r->scanned_rows + r->counted_rows));
        row_end(c);
    }
    stmt_end(c);
    c->running = false;
    c->applied++;
    run_finish(r, QM_OK);
}

/* Advances the running SELECT until the buffer holds want bytes. */
static int select_step(struct query_cursor *c, size_t want, struct buf *err)
{
    struct run *r = &c->run;
    while (c->out.len - c->out_pos < want) {
        if (limit_reached(r)) {
            select_end(c);
            return ERR_OK;
        }
        int rc = select_row(c, r, err);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            select_end(c);
            return ERR_OK;
        }
        if (!r->st->sel.count)
            r->emitted++;
    }
    return ERR_OK;
}

/* --- statements --- */

static int stmt_outcome(int rc)
{
    return rc == ERR_OK ? QM_OK : (rc == ERR_INVAL || rc == ERR_TOOBIG) ? QM_REFUSED : QM_ERROR;
}

/* Starts statement c->next. Admin statements finish here; a SELECT is
 * left running. */
static int stmt_start(struct query_cursor *c, struct buf *err)
{
    const struct sql_stmt *st = &c->sc.stmts[c->next++];
    struct run *r = &c->run;
    memset(r, 0, sizeof(*r));
    r->st = st;
    r->t0 = clock_mono_ns();
    int rc;
    if (st->kind == SQL_SELECT)
        rc = select_start(c, r, err);
    else if (st->kind == SQL_DELETE)
        rc = do_delete(c, r, err);
    else
        rc = do_admin(c, st, err);
    if (rc || !c->running) {
        bool admin = st->kind != SQL_SELECT && st->kind != SQL_DELETE;
        if (admin)
            query_metrics_record(QM_ADMIN, stmt_outcome(rc), 0, 0, clock_mono_ns() - r->t0);
        else
            run_finish(r, stmt_outcome(rc));
        c->applied += rc == ERR_OK;
    }
    return rc;
}

/* The message of statement i (0-based) failing with msg, into err: in a
 * list it says which statement failed. */
static void stmt_failed(const struct query_cursor *c, size_t i, int rc, const struct buf *msg,
                        struct buf *err)
{
    if (c->sc.n > 1) {
        buf_printf(err, "statement %zu of %zu: ", i + 1, c->sc.n);
        if (msg->len == 0)
            buf_puts(err, err_name(rc));
    }
    if (msg->len)
        buf_append(err, msg->data, msg->len);
}

static void fail_stream(struct query_cursor *c, int rc)
{
    if (c->running) {
        c->running = false;
        run_finish(&c->run, QM_ERROR);
    }
    if (c->o.format == QUERY_JSON)
        buf_puts(&c->out, "],\"error\":");
    else
        buf_puts(&c->out, "{\"error\":");
    enc_json_str(&c->out, c->errmsg.data ? c->errmsg.data : "", c->errmsg.len);
    if (c->sc.n > 1)
        buf_printf(&c->out, ",\"applied\":%zu", c->applied);
    buf_puts(&c->out, "}\n");
    c->err = rc;
    c->done = true;
}

static void cursor_produce(struct query_cursor *c, size_t want)
{
    while (!c->done && c->out.len - c->out_pos < want) {
        int rc = ERR_OK;
        struct buf msg = BUF_INIT;
        buf_reset(&c->errmsg);
        if (c->running)
            rc = select_step(c, want, &msg);
        else if (c->next < c->sc.n)
            rc = stmt_start(c, &msg);
        else
            c->done = true;
        if (rc) /* the failing statement is the one started last */
            stmt_failed(c, c->next - 1, rc, &msg, &c->errmsg);
        buf_destroy(&msg);
        if (rc) {
            bool in_stmt = c->running;
            if (!in_stmt && c->o.format == QUERY_JSON) {
                /* the failing statement had not opened its document */
                stmt_begin(c);
            }
            fail_stream(c, rc);
        }
    }
}

ssize_t query_cursor_read(struct query_cursor *c, char *buf, size_t max)
{
    if (max == 0)
        return 0;
    if (c->out_pos > 0) { /* keep only the unread tail: memory stays ~ max + one row */
        memmove(c->out.data, c->out.data + c->out_pos, c->out.len - c->out_pos);
        c->out.len -= c->out_pos;
        c->out_pos = 0;
    }
    cursor_produce(c, max);
    size_t n = c->out.len - c->out_pos;
    if (n == 0) {
        if (c->err && !c->err_reported) {
            c->err_reported = true;
            return c->err;
        }
        return c->err ? c->err : 0;
    }
    if (n > max)
        n = max;
    memcpy(buf, c->out.data + c->out_pos, n);
    c->out_pos += n;
    return (ssize_t)n;
}

const char *query_cursor_error(struct query_cursor *c)
{
    return c->err ? buf_cstr(&c->errmsg) : "";
}

void query_cursor_free(struct query_cursor *c)
{
    if (!c)
        return;
    if (c->running)
        run_finish(&c->run, QM_OK); /* the client went away, or stopped reading */
    sql_script_destroy(&c->sc);
    buf_destroy(&c->out);
    buf_destroy(&c->errmsg);
    free(c);
}

/* --- checking a list before it runs --- */

/* A database as the statements of a list before the current one leave it. */
struct db_seen {
    const char *name;
    bool exists;
};

static bool db_exists(struct query_cursor *c, const struct db_seen *seen, size_t nseen,
                      const char *name)
{
    for (size_t i = nseen; i-- > 0;)
        if (strcmp(seen[i].name, name) == 0)
            return seen[i].exists;
    struct store_db *db;
    if (store_db_get(c->s, name, &db) != ERR_OK)
        return false;
    store_db_unref(db);
    return true;
}

/* A plan's refusals (a full scan, too many GET keys) depend on the
 * statement and the request only, so the defaults stand in for the options
 * of a database the list may not have created yet. */
static int plan_check(struct query_cursor *c, const struct sql_stmt *st, struct buf *err)
{
    struct plan_opts po = plan_opts_of(c);
    struct plan p;
    int rc = plan_build(&st->sel, &c->o.db_defaults, &po, &p, err);
    if (rc == ERR_OK)
        plan_destroy(&p);
    return rc;
}

/* The refusals of statement st that can be known before running it, with
 * the same messages as running it gives. */
static int stmt_check(struct query_cursor *c, const struct sql_stmt *st, bool exists,
                      struct buf *err)
{
    switch (st->kind) {
    case SQL_SHOW_DBS: return ERR_OK;
    case SQL_CREATE_DB:
        if (!exists || st->if_not_exists)
            return ERR_OK;
        buf_printf(err, "database '%s' already exists", st->db);
        return ERR_EXISTS;
    case SQL_DROP_DB:
        if (exists || st->if_exists)
            return ERR_OK;
        buf_printf(err, "database '%s' not found", st->db);
        return ERR_NOTFOUND;
    default: /* ALTER, SELECT (EXPLAIN too), DELETE */
        if (!exists) {
            buf_printf(err, "database '%s' not found", st->db);
            return ERR_NOTFOUND;
        }
        bool planned = st->kind == SQL_SELECT || st->kind == SQL_DELETE;
        return planned ? plan_check(c, st, err) : ERR_OK;
    }
}

/* Checks every statement of a list before the first runs, so that a list
 * refused for a missing or existing database or a refused plan applies
 * nothing; a database an earlier statement creates or drops counts as
 * such. What only running tells (a bad name, a store error, a database
 * another request dropped meanwhile) still fails mid-list: then the error
 * says how many statements were applied (stmt_failed). */
static int cursor_check(struct query_cursor *c, struct buf *err)
{
    struct db_seen *seen = xcalloc(c->sc.n, sizeof(*seen));
    size_t nseen = 0;
    int rc = ERR_OK;
    for (size_t i = 0; i < c->sc.n && rc == ERR_OK; i++) {
        const struct sql_stmt *st = &c->sc.stmts[i];
        struct buf msg = BUF_INIT;
        bool exists = st->db && db_exists(c, seen, nseen, st->db);
        rc = stmt_check(c, st, exists, &msg);
        if (rc) {
            stmt_failed(c, i, rc, &msg, err);
            query_metrics_record(QM_NONE, stmt_outcome(rc), 0, 0, 0);
        } else if (st->kind == SQL_CREATE_DB || st->kind == SQL_DROP_DB) {
            seen[nseen++] = (struct db_seen){st->db, st->kind == SQL_CREATE_DB};
        }
        buf_destroy(&msg);
    }
    free(seen);
    return rc;
}

/* Runs statements until the first SELECT streams (or the script ends). A
 * list is checked whole first. */
static int cursor_open(struct query_cursor *c, struct buf *err)
{
    if (c->sc.n > 1) {
        int rc = cursor_check(c, err);
        if (rc)
            return rc;
    }
    while (!c->running && c->next < c->sc.n) {
        struct buf msg = BUF_INIT;
        int rc = stmt_start(c, &msg);
        if (rc)
            stmt_failed(c, c->next - 1, rc, &msg, err);
        buf_destroy(&msg);
        if (rc)
            return rc;
    }
    return ERR_OK;
}

static struct query_cursor *cursor_new(struct store *s, const struct query_opts *o)
{
    struct query_cursor *c = xcalloc(1, sizeof(*c));
    c->s = s;
    c->o = *o;
    if (c->o.now_ns == 0)
        c->o.now_ns = clock_real_ns();
    return c;
}

static int cursor_finish_open(struct query_cursor *c, struct query_cursor **out, struct buf *err)
{
    int rc = cursor_open(c, err);
    if (rc) {
        query_cursor_free(c);
        return rc;
    }
    *out = c;
    return ERR_OK;
}

int query_sql_prepare(struct store *s, const char *sql, size_t len, const struct query_opts *o,
                      struct query_cursor **out, struct buf *err)
{
    struct query_cursor *c = cursor_new(s, o);
    int rc = sql_parse(sql, len, c->o.now_ns, &c->sc, err);
    if (rc) {
        query_metrics_record(QM_NONE, QM_INVALID, 0, 0, 0);
        query_cursor_free(c);
        return rc;
    }
    *out = c;
    return ERR_OK;
}

const struct sql_stmt *query_cursor_stmt(const struct query_cursor *c, size_t i)
{
    return i < c->sc.n ? &c->sc.stmts[i] : NULL;
}

int query_cursor_start(struct query_cursor *c, struct buf *err)
{
    return cursor_open(c, err);
}

size_t query_cursor_applied(const struct query_cursor *c)
{
    return c->applied;
}

int query_sql_open(struct store *s, const char *sql, size_t len, const struct query_opts *o,
                   struct query_cursor **out, struct buf *err)
{
    struct query_cursor *c;
    int rc = query_sql_prepare(s, sql, len, o, &c, err);
    if (rc)
        return rc;
    return cursor_finish_open(c, out, err);
}

/* --- the parameter form --- */

static int param_time(const char *name, const char *v, int64_t now, int64_t *t, struct buf *err)
{
    if (sql_parse_time(v, strlen(v), now, t) == ERR_OK)
        return ERR_OK;
    buf_printf(err,
               "bad %s '%s': use integer ns, RFC 3339 (2024-01-01T00:00:00Z), now, or "
               "relative like -1h",
               name, v);
    return ERR_INVAL;
}

static int param_limit(const char *v, struct sql_select *sel, struct buf *err)
{
    char *end;
    long long n = strtoll(v, &end, 10);
    if (!*v || *end || n < 0) {
        buf_printf(err, "bad limit '%s': a non-negative integer", v);
        return ERR_INVAL;
    }
    sel->has_limit = true;
    sel->limit = n;
    return ERR_OK;
}

static int param_order(const char *v, struct sql_select *sel, struct buf *err)
{
    if (strcasecmp(v, "desc") == 0)
        sel->order = -1;
    else if (strcasecmp(v, "asc") == 0)
        sel->order = 1;
    else {
        buf_printf(err, "bad order '%s': asc or desc", v);
        return ERR_INVAL;
    }
    return ERR_OK;
}

static int param_range(const char *(*get)(void *, const char *), void *arg, int64_t now,
                       struct sql_where *w, struct buf *err)
{
    const char *v;
    int64_t t;
    if ((v = get(arg, "start")) && *v) {
        if (param_time("start", v, now, &t, err))
            return ERR_INVAL;
        sql_where_ts_lo(w, t);
    }
    if ((v = get(arg, "end")) && *v) {
        if (param_time("end", v, now, &t, err))
            return ERR_INVAL;
        if (t == INT64_MIN) {
            buf_puts(err, "bad end: matches nothing");
            return ERR_INVAL;
        }
        sql_where_ts_hi(w, t - 1); /* end is exclusive */
    }
    return ERR_OK;
}

int query_params_select(const char *(*get)(void *, const char *), void *arg, int64_t now,
                        struct sql_stmt *st, struct buf *err)
{
    struct sql_select *sel = &st->sel;
    const char *v;
    sel->star = true;
    if ((v = get(arg, "where")) && *v) {
        struct buf perr = BUF_INIT;
        if (sql_parse_where(v, strlen(v), now, &sel->where, &perr)) {
            buf_printf(err, "where: %s", buf_cstr(&perr));
            buf_destroy(&perr);
            return ERR_INVAL;
        }
        buf_destroy(&perr);
    }
    if ((v = get(arg, "host")) && *v) /* the empty host needs SQL: host = '' */
        sql_where_host_eq(&sel->where, v, strlen(v));
    if ((v = get(arg, "event")) && *v)
        sql_where_event_eq(&sel->where, v, strlen(v));
    if ((v = get(arg, "search")) && *v) {
        struct buf perr = BUF_INIT;
        if (sql_where_match(&sel->where, v, strlen(v), &perr)) {
            buf_printf(err, "search: %s", buf_cstr(&perr));
            buf_destroy(&perr);
            return ERR_INVAL;
        }
        buf_destroy(&perr);
    }
    if (param_range(get, arg, now, &sel->where, err))
        return ERR_INVAL;
    if ((v = get(arg, "order")) && *v && param_order(v, sel, err))
        return ERR_INVAL;
    if ((v = get(arg, "limit")) && *v && param_limit(v, sel, err))
        return ERR_INVAL;
    return ERR_OK;
}

uint64_t query_cursor_snap_seq(const struct query_cursor *c)
{
    return c->run.snap ? store_snap_seq(c->run.snap) : 0;
}

static bool param_true(const char *v)
{
    return v && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
}

int query_params_open(struct store *s, const char *(*get)(void *arg, const char *name), void *arg,
                      const struct query_opts *o, struct query_cursor **out, struct buf *err)
{
    const char *db = get(arg, "db");
    if (!db || !*db) {
        buf_puts(err, "missing db= parameter");
        return ERR_INVAL;
    }
    struct query_cursor *c = cursor_new(s, o);
    c->o.full_scan = c->o.full_scan || param_true(get(arg, "full_scan"));
    c->sc.stmts = xcalloc(1, sizeof(*c->sc.stmts));
    c->sc.n = 1;
    struct sql_stmt *st = &c->sc.stmts[0];
    st->kind = SQL_SELECT;
    st->pos = 1;
    st->db = xstrdup(db);
    int rc = query_params_select(get, arg, c->o.now_ns, st, err);
    if (rc) {
        query_metrics_record(QM_NONE, QM_INVALID, 0, 0, 0);
        query_cursor_free(c);
        return rc;
    }
    return cursor_finish_open(c, out, err);
}
