/* The row executor: opens one bounded iterator per bucket (SCAN, FULL) or per
 * host index range (INDEX), merges them (store/iter.h) in stored order,
 * reads forward or backward, and applies the filter stages while streaming.
 * Reading against the stored order yields host/event descending within one
 * ts; rows of one ts are therefore buffered (bounded) and emitted reversed.
 * A ts group larger than EXEC_GROUP_CAP is re-read forward from its bucket
 * instead (all rows of one ts live in one bucket). An INDEX entry's rows are
 * read from its bucket by a cursor kept per bucket (struct icur). */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "model/record.h"
#include "query/cond.h"
#include "query/query_int.h"

#define EXEC_GROUP_CAP (4u << 20)  /* bytes of one buffered ts group */
#define EXEC_MAX_INDEX_RANGES 1024 /* host children of one INDEX */

static size_t group_cap = EXEC_GROUP_CAP;

void query_test_set_group_cap(size_t bytes)
{
    group_cap = bytes ? bytes : EXEC_GROUP_CAP;
}

struct grp_ent {
    size_t koff, klen, voff, vlen;
};

/* The rows of one bucket for an INDEX plan. Entries of one bucket come in
 * its key order (forward scan), so the next entry's rows are usually at or
 * after the cursor: it moves on with a seek that stays in its decoded
 * block (store/table), or with no seek at all when it already stands on
 * or past them. */
struct icur {
    struct iter *it;   /* NULL until the bucket's first entry */
    struct buf lo, hi; /* the rows of the current entry: [base 0x00, base 0x02) */
    bool fresh;        /* it stands on the first key >= lo (after a seek or a read) */
};

/* INDEX with plan.series: the rows of one (host, bucket) that the store
 * gives from its host sections, and the ts ranges they cover (index
 * entries in them are passed over). */
struct hsec {
    struct store_series *cur; /* NULL once drained */
    struct store_ts_range *served;
    size_t nserved;
};

struct exec {
    struct store_snap *snap;
    const struct plan *p;
    struct iter *it; /* merged children (SCAN, FULL, INDEX) */
    bool started;
    size_t get_i;
    /* reverse-order ts group */
    struct buf gdata;
    struct grp_ent *gent;
    size_t gn, gcap, gpos;
    struct iter *sub; /* forward re-read of an oversized group */
    bool sub_started;
    struct store_rows *rows; /* the rows of one GET key */
    /* INDEX: one cursor per bucket, opened at its first entry, read
     * forward from one entry's rows to the next one's */
    struct icur *icur;
    uint32_t nicur;
    struct icur *irows; /* the cursor reading an entry's rows, or NULL */
    struct exec_row row;
    struct cond_row crow; /* the row as the condition saw it */
    bool check_cond;      /* the condition says more than the key checks */
    bool count_only;      /* every entry of the ranges is a row to count */
    uint64_t scanned;
    struct word_hashes *words;
    size_t nwords, wcap;
    /* the bytes a row must hold (cond_required_text), folded, one after
     * another (need_at: where each ends): a row whose strings lack one is
     * passed over without being decoded */
    struct buf need;
    size_t *need_at;
    size_t nneed;
    struct slice *need_sl; /* the same texts as slices, for the store's iterators */
    uint64_t passed_over;  /* rows row_may_match turned away */
    /* unordered SCAN/FULL: the buckets one after another, not merged */
    struct iter **kids;
    size_t nkids, kid;
    bool no_ranges; /* a SCAN or FULL left no range to read (query.c, take_counts) */
    bool kid_started;
    struct store_read_stats rst;
    /* INDEX with plan.series: per host, per bucket (host * buckets + b) */
    struct hsec *hsec;
    size_t nhsec, hsec_at;
    bool any_served;      /* INDEX: a section gave some window (served() looks) */
    struct slice *events; /* the event set, for the sections (NULL: every event) */
    size_t nevents;
    uint64_t section_rows; /* rows read from host sections */
};

/* --- words a row must hold --- */

static void need_text(void *arg, struct slice w)
{
    struct exec *e = arg;
    for (size_t i = 0; i < w.len; i++) {
        unsigned char c = (unsigned char)w.ptr[i];
        buf_putc(&e->need, (char)(c >= 'A' && c <= 'Z' ? c + 32 : c));
    }
    e->need_at = xrealloc(e->need_at, (e->nneed + 1) * sizeof(*e->need_at));
    e->need_at[e->nneed++] = e->need.len;
}

/* False if the row cannot match: bytes the condition requires are nowhere
 * in its key (host, event and the id's tags and fields, whose strings the
 * record keeps as they are) nor in its value (the fields of a point;
 * cond_required_text). A few byte compares 16 at a time, before the key
 * is even decoded, instead of decoding the row's record and searching its
 * strings one by one. */
static bool row_may_match(struct exec *e, struct slice key, struct slice v)
{
    for (size_t i = 0, from = 0; i < e->nneed; from = e->need_at[i++]) {
        struct slice w = slice_make(e->need.data + from, e->need_at[i] - from);
        if (!words_contains_folded(key, w) && !words_contains_folded(v, w)) {
            e->passed_over++;
            return false;
        }
    }
    return true;
}

/* --- ranges --- */

/* The event set the sections are read for (sorted bytewise, as
 * cond_sorted_has reads them), if the condition implies one. */
static void section_events(struct exec *e)
{
    const struct sql_strset *ev = &e->p->where->event;
    if (!ev->is_set || e->events)
        return;
    e->events = xcalloc(ev->n + 1, sizeof *e->events);
    for (size_t i = 0; i < ev->n; i++)
        e->events[i] = slice_make(ev->v[i], ev->len[i]);
    e->nevents = ev->n;
}

/* The rows of a bucket's range: blocks the words rule out are skipped,
 * and rows that row_may_match or key_ok would turn away for their bytes
 * or their event are passed over in the store (counted in
 * rst.rows_passed). */
static struct iter *bucket_child(struct exec *e, uint32_t bucket, int64_t lo, int64_t hi)
{
    section_events(e);
    struct store_read_opts o = {e->words, e->nwords, &e->rst,   e->need_sl,
                                e->nneed, e->events, e->nevents};
    return store_iter_bucket_range(e->snap, bucket, lo, hi, &o);
}

/* The index range of host over the plan's time range (every event of host;
 * the event filter applies while streaming). */
static struct iter *index_child(struct exec *e, struct slice host)
{
    return store_iter_host_range(e->snap, host, e->p->lo, e->p->hi);
}

struct kids {
    struct iter **v;
    size_t n, cap;
};

static void kids_push(struct kids *k, struct iter *it)
{
    if (k->n == k->cap)
        k->v = xrealloc(k->v, (k->cap = k->cap ? 2 * k->cap : 16) * sizeof(*k->v));
    k->v[k->n++] = it;
}

static void kids_free(struct kids *k)
{
    for (size_t i = 0; i < k->n; i++)
        it_destroy(k->v[i]);
    free(k->v);
}

static int cmp_range(const void *x, const void *y)
{
    const struct store_ts_range *a = x, *b = y;
    return (a->lo > b->lo) - (a->lo < b->lo);
}

/* SCAN or FULL with plan.series, unordered: the sections of every host in
 * the buckets of ranges part, part + nparts, ..., and the buckets' children
 * over what they leave. */
static int open_scan_sections(struct exec *e, struct kids *k, size_t part, size_t nparts)
{
    const struct plan *p = e->p;
    for (size_t i = part; i < p->nranges; i += nparts)
        e->nhsec++;
    e->hsec = xcalloc(e->nhsec + 1, sizeof *e->hsec);
    section_events(e);
    struct hsec *hs = e->hsec;
    for (size_t i = part; i < p->nranges; i += nparts, hs++) {
        const struct plan_range *r = &p->ranges[i];
        int rc = store_series_open(e->snap, r->bucket, NULL, r->lo, r->hi, e->events, e->nevents,
                                   p->series_fields, p->nseries_fields, &hs->cur, &hs->served,
                                   &hs->nserved);
        if (rc)
            return rc;
        int64_t from = r->lo; /* served windows ascend, each ending before INT64_MAX */
        for (size_t w = 0; w < hs->nserved; w++) {
            if (hs->served[w].lo > from)
                kids_push(k, bucket_child(e, r->bucket, from, hs->served[w].lo - 1));
            from = hs->served[w].hi + 1;
        }
        if (from <= r->hi)
            kids_push(k, bucket_child(e, r->bucket, from, r->hi));
    }
    return ERR_OK;
}

/* The host sections of host h in every bucket (plan.series), and the index
 * children of h over what they leave: a window every bucket serves has
 * no index entry to read. */
static int open_sections(struct exec *e, struct kids *k, size_t h, struct slice host)
{
    const struct plan *p = e->p;
    struct hsec *hs = &e->hsec[h * p->buckets];
    struct store_ts_range *all = NULL;
    size_t nall = 0;
    for (uint32_t b = 0; b < p->buckets; b++) {
        int rc = store_series_open(e->snap, b, &host, p->lo, p->hi, e->events, e->nevents,
                                   p->series_fields, p->nseries_fields, &hs[b].cur, &hs[b].served,
                                   &hs[b].nserved);
        if (rc) {
            free(all);
            return rc;
        }
        if (!hs[b].nserved)
            continue;
        e->any_served = true;
        all = xrealloc(all, (nall + hs[b].nserved) * sizeof *all);
        memcpy(all + nall, hs[b].served, hs[b].nserved * sizeof *all);
        nall += hs[b].nserved;
    }
    /* ranges served in every bucket: windows clip [lo, hi] alike */
    if (nall)
        qsort(all, nall, sizeof *all, cmp_range);
    int64_t from = p->lo;
    for (size_t i = 0, j; i < nall; i = j) {
        for (j = i; j < nall && all[j].lo == all[i].lo && all[j].hi == all[i].hi; j++)
            ;
        if (j - i < p->buckets)
            continue;
        if (all[i].lo > from)
            kids_push(k, store_iter_host_range(e->snap, host, from, all[i].lo - 1));
        from = all[i].hi == INT64_MAX ? INT64_MAX : all[i].hi + 1;
        if (all[i].hi == INT64_MAX) {
            free(all);
            return ERR_OK;
        }
    }
    if (from <= p->hi)
        kids_push(k, store_iter_host_range(e->snap, host, from, p->hi));
    free(all);
    return ERR_OK;
}

static int open_index(struct exec *e, struct kids *k, struct buf *err)
{
    const struct sql_where *w = e->p->where;
    if (w->host.n > EXEC_MAX_INDEX_RANGES) {
        buf_printf(err, "too many index ranges: %zu hosts exceed %d; use fewer host values",
                   w->host.n, EXEC_MAX_INDEX_RANGES);
        return ERR_TOOBIG;
    }
    bool sections = e->p->series && e->p->unordered;
    if (sections) {
        e->hsec = xcalloc(e->nhsec = w->host.n * e->p->buckets, sizeof *e->hsec);
        section_events(e);
    }
    for (size_t h = 0; h < w->host.n; h++) {
        struct slice host = slice_make(w->host.v[h], w->host.len[h]);
        if (!sections) {
            kids_push(k, index_child(e, host));
            continue;
        }
        int rc = open_sections(e, k, h, host);
        if (rc)
            return rc;
    }
    return ERR_OK;
}

/* query_exec_open over ranges part, part + nparts, ... of the plan (all of
 * them: part 0 of 1). */
static int exec_open(struct store_snap *snap, const struct plan *p, size_t part, size_t nparts,
                     struct exec **out, struct buf *err)
{
    struct exec *e = xcalloc(1, sizeof(*e));
    struct kids k = {NULL, 0, 0};
    int rc = ERR_OK;
    e->snap = snap;
    e->p = p;
    cond_required_words(p->where->cond, &e->words, &e->nwords, &e->wcap);
    cond_required_text(p->where->cond, need_text, e);
    if (e->nneed) { /* need's texts as slices, for the store's iterators */
        e->need_sl = xmalloc(e->nneed * sizeof *e->need_sl);
        for (size_t i = 0, from = 0; i < e->nneed; from = e->need_at[i++])
            e->need_sl[i] = slice_make(e->need.data + from, e->need_at[i] - from);
    }
    /* the ts, host and event checks on the keys are then the whole test */
    e->check_cond = !cond_is_implied(p->where->cond);
    e->no_ranges = p->kind != PLAN_INDEX && p->nranges == 0;
    if (p->is_empty || p->kind == PLAN_GET || e->no_ranges) {
        *out = e;
        return ERR_OK;
    }
    if (p->kind == PLAN_INDEX) {
        rc = open_index(e, &k, err);
    } else if (p->series && p->unordered) {
        rc = open_scan_sections(e, &k, part, nparts);
    } else {
        for (size_t i = part; i < p->nranges; i += nparts)
            kids_push(&k, bucket_child(e, p->ranges[i].bucket, p->ranges[i].lo, p->ranges[i].hi));
    }
    if (rc) {
        kids_free(&k);
        query_exec_free(e);
        return rc;
    }
    if (p->unordered && p->kind != PLAN_INDEX) {
        e->kids = k.v;
        e->nkids = k.n;
        *out = e;
        return ERR_OK;
    }
    e->it = it_merge_new(k.v, k.n, p->kind == PLAN_INDEX ? key_cmp_index : key_cmp_row);
    free(k.v);
    *out = e;
    return ERR_OK;
}

int query_exec_open(struct store_snap *snap, const struct plan *p, struct exec **out,
                    struct buf *err)
{
    return exec_open(snap, p, 0, 1, out, err);
}

int query_exec_open_part(struct store_snap *snap, const struct plan *p, size_t part, size_t nparts,
                         struct exec **out, struct buf *err)
{
    if (nparts == 0 || part >= nparts || !p->unordered || p->kind == PLAN_INDEX ||
        p->kind == PLAN_GET)
        return ERR_INVAL;
    return exec_open(snap, p, part, nparts, out, err);
}

void query_exec_count_only(struct exec *e)
{
    const struct plan *p = e->p;
    const struct sql_where *w = p->where;
    /* the bucket ranges are [p->lo, p->hi] (plan.c): with no sets and no
     * more to the condition, key_ok and the condition pass every entry */
    e->count_only = !e->check_cond && !w->host.is_set && !w->event.is_set && !w->has_ts_set &&
                    (p->kind == PLAN_SCAN || p->kind == PLAN_FULL);
}

void query_exec_free(struct exec *e)
{
    if (!e)
        return;
    it_destroy(e->it);
    it_destroy(e->sub);
    buf_destroy(&e->gdata);
    free(e->gent);
    store_rows_close(e->rows);
    for (uint32_t b = 0; b < e->nicur; b++) {
        it_destroy(e->icur[b].it);
        buf_destroy(&e->icur[b].lo);
        buf_destroy(&e->icur[b].hi);
    }
    free(e->icur);
    cond_row_destroy(&e->crow);
    free(e->words);
    buf_destroy(&e->need);
    free(e->need_at);
    free(e->need_sl);
    for (size_t i = 0; i < e->nkids; i++)
        it_destroy(e->kids[i]);
    free(e->kids);
    for (size_t i = 0; i < e->nhsec; i++) {
        store_series_close(e->hsec[i].cur);
        free(e->hsec[i].served);
    }
    free(e->hsec);
    free(e->events);
    free(e);
}

struct exec_stats query_exec_stats(const struct exec *e)
{
    return (struct exec_stats){e->rst.blocks_read, e->rst.blocks_skipped,
                               e->passed_over + e->rst.rows_passed, e->section_rows};
}

struct cond_row *query_exec_cond_row(struct exec *e)
{
    return &e->crow;
}

const struct exec_row *query_exec_row(const struct exec *e)
{
    return &e->row;
}

uint64_t query_exec_scanned(const struct exec *e)
{
    return e->scanned + e->rst.rows_passed;
}

/* --- the entry stream, in output order --- */

/* The ts of an entry: a row key, or an index key for INDEX. */
static int64_t entry_ts(const struct exec *e, struct slice k)
{
    return e->p->kind == PLAN_INDEX ? key_index_ts(k, e->p->db_desc) : key_row_ts(k, e->p->db_desc);
}

static int forward_entry(struct iter *it, bool *started, struct slice *k, struct slice *v)
{
    if (!*started) {
        it_seek_first(it);
        *started = true;
    } else {
        it_next(it);
    }
    if (!it_valid(it))
        return it_status(it);
    *k = it_key(it);
    *v = it_value(it);
    return 1;
}

static void group_push(struct exec *e, struct slice k, struct slice v)
{
    if (e->gn == e->gcap)
        e->gent = xrealloc(e->gent, (e->gcap = e->gcap ? 2 * e->gcap : 64) * sizeof(*e->gent));
    struct grp_ent *g = &e->gent[e->gn++];
    g->koff = e->gdata.len;
    g->klen = k.len;
    buf_append(&e->gdata, k.ptr, k.len);
    g->voff = e->gdata.len;
    g->vlen = v.len;
    buf_append(&e->gdata, v.ptr, v.len);
}

/* Starts the forward re-read of the oversized group of ts, and moves the
 * main iterator past that group. */
static void group_overflow(struct exec *e, int64_t ts)
{
    e->sub = bucket_child(e, key_bucket(ts, e->p->buckets), ts, ts);
    e->sub_started = false;
    while (it_valid(e->it) && entry_ts(e, it_key(e->it)) == ts)
        it_prev(e->it);
    e->gn = e->gpos = 0;
    buf_reset(&e->gdata);
}

/* Fills the group with the entries of the next ts, reading backward. */
static int group_fill(struct exec *e)
{
    if (!e->started) {
        it_seek_last(e->it);
        e->started = true;
    }
    e->gn = e->gpos = 0;
    buf_reset(&e->gdata);
    if (!it_valid(e->it))
        return it_status(e->it);
    int64_t ts = entry_ts(e, it_key(e->it));
    while (it_valid(e->it) && entry_ts(e, it_key(e->it)) == ts) {
        if (e->p->kind != PLAN_INDEX && e->gdata.len > group_cap) {
            group_overflow(e, ts);
            return 1;
        }
        group_push(e, it_key(e->it), it_value(e->it));
        it_prev(e->it);
    }
    e->gpos = e->gn;
    return it_status(e->it) ? it_status(e->it) : 1;
}

static int reverse_entry(struct exec *e, struct slice *k, struct slice *v)
{
    for (;;) {
        if (e->sub) {
            int rc = forward_entry(e->sub, &e->sub_started, k, v);
            if (rc == 1)
                return 1;
            it_destroy(e->sub);
            e->sub = NULL;
            if (rc)
                return rc;
        }
        if (e->gpos > 0) {
            const struct grp_ent *g = &e->gent[--e->gpos];
            *k = slice_make(e->gdata.data + g->koff, g->klen);
            *v = slice_make(e->gdata.data + g->voff, g->vlen);
            return 1;
        }
        int rc = group_fill(e);
        if (rc <= 0)
            return rc;
    }
}

static int next_entry(struct exec *e, struct slice *k, struct slice *v)
{
    if (e->no_ranges)
        return 0;
    if (e->p->unordered && e->p->kind != PLAN_INDEX) { /* each bucket's entries in turn */
        while (e->kid < e->nkids) {
            int rc = forward_entry(e->kids[e->kid], &e->kid_started, k, v);
            if (rc)
                return rc;
            e->kid++;
            e->kid_started = false;
        }
        return 0;
    }
    if (!e->p->reverse)
        return forward_entry(e->it, &e->started, k, v);
    return reverse_entry(e, k, v);
}

/* --- filters --- */

static bool set_has(const struct sql_strset *s, struct slice v)
{
    return !s->is_set || cond_sorted_has(s->v, s->len, s->n, v);
}

static bool ts_ok(const struct plan *p, int64_t ts)
{
    const struct sql_where *w = p->where;
    if (ts < p->lo || ts > p->hi)
        return false;
    if (!w->has_ts_set)
        return true;
    size_t lo = 0, hi = w->nts;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (w->ts[mid] == ts)
            return true;
        if (w->ts[mid] < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

static bool key_ok(const struct exec *e, const struct key_row *r)
{
    const struct sql_where *w = e->p->where;
    return ts_ok(e->p, r->ts) && set_has(&w->host, r->host) && set_has(&w->event, r->event);
}

/* --- rows --- */

/* The next row of the open rows cursor that passes the predicates: 1, or
 * 0 once the cursor is done (it is then closed), or an error. */
static int next_of_rows(struct exec *e)
{
    struct slice k, v;
    int rc;
    while ((rc = store_rows_next(e->rows, &k, &v)) == 1) {
        struct key_row r;
        e->scanned++;
        if (!row_may_match(e, k, v))
            continue;
        if ((rc = key_decode_row(k, e->p->db_desc, &r)) != ERR_OK)
            return rc;
        cond_row_set(&e->crow, r.ts, r.host, r.event, r.id, v);
        if (e->check_cond && !cond_match(e->p->where->cond, &e->crow, &rc)) {
            if (rc)
                return rc;
            continue;
        }
        e->row = (struct exec_row){r.ts, r.host, r.event, r.id, v};
        return 1;
    }
    store_rows_close(e->rows);
    e->rows = NULL;
    return rc;
}

/* Opens the rows of (ts, host, event): every id. */
static int open_rows(struct exec *e, int64_t ts, struct slice host, struct slice event)
{
    store_rows_close(e->rows);
    e->rows = NULL;
    return store_rows_open(e->snap, ts, host, event, &e->rows);
}

static int next_get(struct exec *e)
{
    const struct sql_where *w = e->p->where;
    for (;;) {
        if (e->rows) {
            int rc = next_of_rows(e);
            if (rc)
                return rc;
        }
        if (e->get_i >= e->p->nkeys)
            return 0;
        const struct plan_key *k = &e->p->keys[e->get_i++];
        struct slice host = slice_make(w->host.v[k->host], w->host.len[k->host]);
        struct slice event = slice_make(w->event.v[k->event], w->event.len[k->event]);
        int rc = open_rows(e, k->ts, host, event);
        if (rc)
            return rc;
    }
}

static int next_scan(struct exec *e)
{
    struct slice k, v;
    int rc;
    while ((rc = next_entry(e, &k, &v)) == 1) {
        struct key_row r;
        e->scanned++;
        if (e->count_only)
            return 1;
        if (!row_may_match(e, k, v))
            continue;
        if ((rc = key_decode_row(k, e->p->db_desc, &r)) != ERR_OK)
            return rc;
        if (!key_ok(e, &r))
            continue;
        cond_row_set(&e->crow, r.ts, r.host, r.event, r.id, v);
        if (e->check_cond && !cond_match(e->p->where->cond, &e->crow, &rc)) {
            if (rc)
                return rc;
            continue;
        }
        e->row = (struct exec_row){r.ts, r.host, r.event, r.id, v};
        return 1;
    }
    return rc;
}

/* The next row of the entry that e->irows reads, as next_of_rows: 1, or 0
 * once its rows are done (irows is then NULL), or an error. The cursor
 * then stands on the first key at or past the entry's hi. */
static int next_of_cursor(struct exec *e)
{
    struct icur *c = e->irows;
    struct slice hi = slice_make(c->hi.data, c->hi.len);
    int rc;
    for (;;) {
        if (!it_valid(c->it))
            break;
        struct slice k = it_key(c->it);
        if (slice_cmp(k, hi) >= 0)
            break;
        struct slice v = it_value(c->it);
        struct key_row r;
        e->scanned++;
        if (!row_may_match(e, k, v)) {
            it_next(c->it);
            continue;
        }
        if ((rc = key_decode_row(k, e->p->db_desc, &r)) != ERR_OK)
            return rc;
        cond_row_set(&e->crow, r.ts, r.host, r.event, r.id, v);
        bool ok = !e->check_cond || cond_match(e->p->where->cond, &e->crow, &rc);
        if (rc)
            return rc;
        if (ok) {
            /* the row is borrowed from the cursor: it moves on at the next call */
            e->row = (struct exec_row){r.ts, r.host, r.event, r.id, v};
            c->fresh = false;
            return 1;
        }
        it_next(c->it);
    }
    e->irows = NULL;
    return it_status(c->it);
}

/* Whether the rows of an index entry came from a host section: its ts is
 * in a range the section of its (host, bucket) served. */
static bool served(const struct exec *e, const struct key_row *r)
{
    if (!e->any_served)
        return false;
    /* the host's place in the set, sorted bytewise (cond_sorted_has) */
    const struct sql_strset *set = &e->p->where->host;
    size_t lo = 0, hi = set->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = slice_cmp(slice_make(set->v[mid], set->len[mid]), r->host);
        if (c == 0) {
            lo = mid;
            break;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= set->n || !slice_eq(slice_make(set->v[lo], set->len[lo]), r->host))
        return false;
    const struct hsec *hs = &e->hsec[lo * e->p->buckets + key_bucket(r->ts, e->p->buckets)];
    for (size_t i = 0; i < hs->nserved; i++)
        if (r->ts >= hs->served[i].lo && r->ts <= hs->served[i].hi)
            return true;
    return false;
}

/* Positions the cursor of the entry's bucket on its first row (or past
 * its rows if there are none) and makes it e->irows. */
static void open_cursor(struct exec *e, const struct key_row *r)
{
    uint32_t bucket = key_bucket(r->ts, e->p->buckets);
    if (!e->icur)
        e->icur = xcalloc(e->nicur = e->p->buckets, sizeof(*e->icur));
    struct icur *c = &e->icur[bucket];
    if (!c->it)
        c->it = bucket_child(e, bucket, e->p->lo, e->p->hi);
    /* the previous entry's hi: at or before the new lo when entries come in
     * key order, and then the cursor, on the first key >= that hi, is on
     * the first key >= lo once its key reaches lo */
    bool forward = c->fresh && c->hi.len;
    buf_reset(&c->lo);
    key_encode_row_base(&c->lo, bucket, r->ts, e->p->db_desc, r->host, r->event);
    struct slice base = slice_make(c->lo.data, c->lo.len);
    if (forward && slice_cmp(base, slice_make(c->hi.data, c->hi.len)) < 0)
        forward = false;
    buf_reset(&c->hi);
    buf_append(&c->hi, base.ptr, base.len);
    buf_putc(&c->lo, '\0');
    buf_putc(&c->hi, '\2');
    struct slice lo = slice_make(c->lo.data, c->lo.len);
    if (!forward || (it_valid(c->it) && slice_cmp(it_key(c->it), lo) < 0))
        it_seek(c->it, lo);
    c->fresh = true;
    e->irows = c;
}

/* An index entry stands for every row of its (host, ts, event), or for
 * none if they were deleted one by one: each is read from its bucket's
 * cursor. */
static int next_index(struct exec *e)
{
    struct slice k, v;
    int rc;
    for (;;) {
        if (e->irows) {
            if (!e->irows->fresh) { /* the row returned last: move past it */
                it_next(e->irows->it);
                e->irows->fresh = true;
            }
            rc = next_of_cursor(e);
            if (rc)
                return rc;
        }
        if ((rc = next_entry(e, &k, &v)) != 1)
            return rc;
        struct key_row r;
        e->scanned++;
        if ((rc = key_decode_index(k, e->p->db_desc, &r)) != ERR_OK)
            return rc;
        if (key_ok(e, &r) && !served(e, &r))
            open_cursor(e, &r);
    }
}

/* key_ok for a section's row: a cursor yields only the rows of its host
 * (an INDEX's, one host each) and of the event set it was opened with
 * (store_series_open), so the ts and, for every host's sections, the
 * host set are what is left to check. */
static bool section_row_ok(const struct exec *e, const struct store_series_row *sr)
{
    return ts_ok(e->p, sr->ts) &&
           (e->p->kind == PLAN_INDEX || set_has(&e->p->where->host, sr->host));
}

/* The next row of the host sections (plan.series) in the plan's ts range
 * and host set: 1 and *sr set, 0 once they are drained, or an error. */
static int next_section_row(struct exec *e, struct store_series_row *sr)
{
    for (; e->hsec_at < e->nhsec; e->hsec_at++) {
        struct hsec *hs = &e->hsec[e->hsec_at];
        int rc = 0;
        while (hs->cur && (rc = store_series_next(hs->cur, sr)) == 1) {
            e->scanned++;
            e->section_rows++;
            if (section_row_ok(e, sr))
                return 1;
        }
        if (hs->cur && rc)
            return rc;
        store_series_close(hs->cur); /* drained */
        hs->cur = NULL;
    }
    return 0;
}

/* The next row of the host sections that passes the predicates: 1, or 0
 * once they are drained, or an error. */
static int next_section(struct exec *e)
{
    static const char empty[1] = "";
    struct store_series_row sr;
    int rc;
    while ((rc = next_section_row(e, &sr)) == 1) {
        struct slice id = slice_make(empty, 0);
        cond_row_set(&e->crow, sr.ts, sr.host, sr.event, id, sr.value);
        if (e->check_cond && !cond_match(e->p->where->cond, &e->crow, &rc)) {
            if (rc)
                return rc;
            continue;
        }
        e->row = (struct exec_row){sr.ts, sr.host, sr.event, id, sr.value};
        return 1;
    }
    return rc;
}

/* A caller's fn over the rows of query_exec_each_section. */
struct section_each {
    struct exec *e;
    query_section_fn fn;
    void *arg;
    uint64_t rows; /* rows read */
    /* a run's rows the plan takes, when it does not take them all */
    int64_t *ts;
    struct slice *value;
    size_t cap;
};

/* A run's rows that pass section_row_ok (one host: its check is the
 * run's) to the caller's fn: the run as it is when all do (a run lies in
 * one window, mostly inside the plan's range), else those that do. */
static int each_run(void *arg, const struct store_series_rows *rows)
{
    struct section_each *x = arg;
    const struct exec *e = x->e;
    x->rows += rows->n;
    if (e->p->kind != PLAN_INDEX && !set_has(&e->p->where->host, rows->host))
        return ERR_OK;
    size_t ok = 0;
    while (ok < rows->n && ts_ok(e->p, rows->ts[ok]))
        ok++;
    if (ok == rows->n)
        return x->fn(x->arg, rows);
    if (rows->n > x->cap) {
        x->cap = rows->n;
        x->ts = xrealloc(x->ts, x->cap * sizeof *x->ts);
        x->value = xrealloc(x->value, x->cap * sizeof *x->value);
    }
    /* rows [0, ok) pass, row ok does not, the rest are checked */
    struct store_series_rows some = {rows->host, rows->event, ok, x->ts, x->value};
    memcpy(x->ts, rows->ts, ok * sizeof *x->ts);
    memcpy(x->value, rows->value, ok * sizeof *x->value);
    for (size_t i = ok + 1; i < rows->n; i++)
        if (ts_ok(e->p, rows->ts[i])) {
            x->ts[some.n] = rows->ts[i];
            x->value[some.n++] = rows->value[i];
        }
    return some.n ? x->fn(x->arg, &some) : ERR_OK;
}

int query_exec_each_section_shared(struct exec *e, size_t *next, query_section_fn fn, void *arg)
{
    if (e->p->is_empty || e->check_cond)
        return ERR_OK;
    struct section_each x = {e, fn, arg, 0, NULL, NULL, 0};
    int rc = ERR_OK;
    for (;;) {
        size_t i = e->hsec_at + __atomic_fetch_add(next, 1, __ATOMIC_RELAXED);
        if (i >= e->nhsec)
            break;
        struct hsec *hs = &e->hsec[i];
        if (!hs->cur)
            continue;
        if ((rc = store_series_each(hs->cur, each_run, &x)) != ERR_OK)
            break;
        store_series_close(hs->cur); /* drained */
        hs->cur = NULL;
    }
    /* the threads' counts, added as each ends (query_exec_next, which
     * counts unlocked, follows the last) */
    __atomic_add_fetch(&e->scanned, x.rows, __ATOMIC_RELAXED);
    __atomic_add_fetch(&e->section_rows, x.rows, __ATOMIC_RELAXED);
    free(x.ts);
    free(x.value);
    return rc;
}

int query_exec_each_section(struct exec *e, query_section_fn fn, void *arg)
{
    if (e->p->is_empty || e->check_cond)
        return ERR_OK; /* the rows are read one by one (next_section), then */
    size_t next = 0;
    int rc = query_exec_each_section_shared(e, &next, fn, arg);
    if (!rc)
        e->hsec_at = e->nhsec;
    return rc;
}

int query_exec_next(struct exec *e)
{
    if (e->p->is_empty)
        return 0;
    switch (e->p->kind) {
    case PLAN_GET: return next_get(e);
    case PLAN_INDEX: {
        int rc = e->hsec_at < e->nhsec ? next_section(e) : 0;
        return rc ? rc : next_index(e);
    }
    default: {
        int rc = e->hsec_at < e->nhsec ? next_section(e) : 0;
        return rc ? rc : next_scan(e);
    }
    }
}

bool query_exec_sections_kept(const struct exec *e)
{
    for (size_t i = e->hsec_at; i < e->nhsec; i++)
        if (e->hsec[i].cur)
            return store_series_kept(e->hsec[i].cur);
    return false;
}

size_t query_exec_sections_left(const struct exec *e)
{
    if (e->p->is_empty || e->check_cond)
        return 0;
    size_t n = 0;
    for (size_t i = e->hsec_at; i < e->nhsec; i++)
        n += e->hsec[i].cur != NULL;
    return n;
}
