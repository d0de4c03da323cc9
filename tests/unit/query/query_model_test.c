/* Randomized model test of the whole query layer against a real store.
 *
 * Rows are written as ingest writes them (ingest/ingest.h, struct
 * ingest_row), through batch_put_id:
 *   - points: id = the record of their tags sorted by key (empty without
 *     tags), value = their fields, merge = true. Written again with the same
 *     series and ts, the fields merge: the union, the newest value of each
 *     field winning, the newest version's fields first and then the older
 *     ones it does not have (rec_merge);
 *   - log entries: id = the record of their whole content (tags in the order
 *     given, then fields), empty value, merge = false: an exact duplicate is
 *     the same row, any difference (a tag, a field, their order) another.
 * Several rows share one (ts, host, event), differing by a tag or, for log
 * entries, by a field; rows are re-written (duplicates, merges of other field
 * subsets), deleted row by row (batch_delete_id) and re-written after their
 * delete, into DESC and ASC databases of 1, 7 and 16 buckets, with flushes
 * and compactions between batches. Hundreds of random queries of every shape
 * (GET with IN lists, ts ranges, host with or without event, field and tag
 * filters, both orders, limits, COUNT, projections, DELETE as range tombstone
 * and row by row, followed by more writes) are compared byte for byte with a
 * brute-force answer over an in-memory reference keyed by series (points) or
 * content (log entries).
 *
 * The reference's order: ts in the requested direction, then host, then
 * event bytewise, then the key's end bytes ascending whatever the direction:
 * 0x00 for the row without an id (a point without tags), else 0x01,
 * varint(idlen), id. That is the store's key order (store/key.h); note that
 * the LEB128 length prefix makes it neither plain id byte order nor length
 * order once ids reach 128 bytes (long log lines are written to cover it).
 * Reading against the stored direction, query/exec.c buffers one ts group
 * and emits it reversed, which gives the same order within a ts.
 *
 * LB_SAN=1 runs less; LB_SEED=N picks another seed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/err.h"
#include "model/record.h"
#include "query/encode.h"
#include "query/query.h"
#include "query/query_int.h"
#include "store/store.h"

#define NOW 1700000000000000000LL
#define TS_POOL 300 /* distinct ts values are NOW - k * ts_step, k < TS_POOL */

static const char *hosts[] = {"", "h0", "h1", "h2", "h3", "web-17"};
static const char *events[] = {"e0", "e1", "cpu.load", "e3"};
static const char *regions[] = {"eu", "us", "ap"};
#define NH (sizeof(hosts) / sizeof(hosts[0]))
#define NE (sizeof(events) / sizeof(events[0]))
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

struct tagkv {
    const char *k, *v;
};

struct fld {
    const char *k;
    enum rec_type type;
    double f;
    int64_t i;
    uint64_t u;
    bool b;
    const char *s;
};

#define MAXT 3
#define MAXF 5

/* Tag sets of points (given unsorted: the writer sorts them into the id). */
static const struct tagkv ps1[] = {{"region", "eu"}};
static const struct tagkv ps2[] = {{"region", "us"}};
static const struct tagkv ps3[] = {{"region", "ap"}};
static const struct tagkv ps4[] = {{"region", "eu"}, {"dc", "d1"}};
static const struct tagkv ps5[] = {{"zone", "z9"}, {"dc", "d2"}, {"region", "us"}};
static const struct tagkv ps6[] = {{"dc", "d1"}};
/* Tag sets of log entries (kept in the order given: ls2 and ls3 are the same
 * set in two orders, so two different rows). */
static const struct tagkv ls1[] = {{"level", "info"}};
static const struct tagkv ls2[] = {{"region", "eu"}, {"level", "warn"}};
static const struct tagkv ls3[] = {{"level", "warn"}, {"region", "eu"}};
static const struct tagkv ls4[] = {{"region", "us"}};

struct tagset {
    const struct tagkv *t;
    size_t n;
};

static const struct tagset point_sets[] = {
    {NULL, 0}, {ps1, 1}, {ps2, 1}, {ps3, 1}, {ps4, 2}, {ps5, 3}, {ps6, 1},
};
static const struct tagset log_sets[] = {
    {NULL, 0}, {ls1, 1}, {ls2, 2}, {ls3, 2}, {ls4, 1},
};

static const char *point_strs[] = {"ok", "msg \"quoted\"\n", "tab\there", "caf\xc3\xa9"};
/* The first three are used by the msg predicate (no quotes in them). */
#define NMSG_SHORT 5
#define NMSG_LONG 5
static const char *short_msgs[NMSG_SHORT] = {"started", "GET /api 200", "disk full",
                                             "quote \" and \\ backslash\n", "x"};
/* Long messages: their log ids cross 128 bytes (a 2-byte length varint). */
static const size_t long_lens[NMSG_LONG] = {100, 126, 140, 250, 400};
static char long_msgs[NMSG_LONG][512];
static const char *msgs[NMSG_SHORT + NMSG_LONG];

struct ref_row {
    int64_t ts;
    const char *host, *event;
    bool point;
    struct tagkv t[MAXT]; /* in output order: sorted for points */
    size_t nt;
    struct fld f[MAXF]; /* in output order */
    size_t nf;
    struct buf id;  /* the id record as written (empty: a point without tags) */
    struct buf end; /* the key's end: 0x00, or 0x01 varint(idlen) id */
};

#define GRAVE_CAP 256

struct model {
    struct store *s;
    char dir[64];
    struct ref_row *rows;
    size_t n, cap;
    struct ref_row grave[GRAVE_CAP]; /* rows deleted, to write again */
    size_t ngrave;
    uint64_t rng;
    uint64_t read_rng; /* read sizes only: the rows and queries of a seed do not
                        * depend on how the cursor splits its output */
    int64_t ttl, ts_step;
    bool desc;
    uint32_t buckets;
    const char *db;
    size_t queries, nonempty, deletes, deleted;
    size_t puts, merges, dups, rewrites, max_rows_per_base;
};

static uint64_t rnd(struct model *m)
{
    m->rng ^= m->rng << 13;
    m->rng ^= m->rng >> 7;
    m->rng ^= m->rng << 17;
    return m->rng;
}

static size_t rn(struct model *m, size_t n)
{
    return (size_t)(rnd(m) % n);
}

static int64_t clock_fixed(void *arg)
{
    (void)arg;
    return NOW;
}

static bool san(void)
{
    const char *s = getenv("LB_SAN");
    return s && strcmp(s, "1") == 0;
}

static void init_msgs(void)
{
    static const char words[] = "the quick brown fox jumps over the lazy dog \"42\" ";
    for (size_t i = 0; i < NMSG_LONG; i++) {
        size_t n = long_lens[i];
        for (size_t j = 0; j < n; j++)
            long_msgs[i][j] = words[(j + 7 * i) % (sizeof(words) - 1)];
        long_msgs[i][n] = '\0';
    }
    for (size_t i = 0; i < NMSG_SHORT; i++)
        msgs[i] = short_msgs[i];
    for (size_t i = 0; i < NMSG_LONG; i++)
        msgs[NMSG_SHORT + i] = long_msgs[i];
}

/* --- records --- */

static void encode_rec(struct buf *out, const struct tagkv *t, size_t nt, const struct fld *f,
                       size_t nf)
{
    struct rec_tag rt[MAXT];
    struct rec_field rf[MAXF];
    for (size_t i = 0; i < nt; i++)
        rt[i] = (struct rec_tag){slice_cstr(t[i].k), slice_cstr(t[i].v)};
    memset(rf, 0, sizeof(rf));
    for (size_t i = 0; i < nf; i++) {
        rf[i].key = slice_cstr(f[i].k);
        rf[i].type = f[i].type;
        switch (f[i].type) {
        case REC_FLOAT: rf[i].v.f = f[i].f; break;
        case REC_INT: rf[i].v.i = f[i].i; break;
        case REC_UINT: rf[i].v.u = f[i].u; break;
        case REC_BOOL: rf[i].v.b = f[i].b; break;
        case REC_STRING: rf[i].v.s = slice_cstr(f[i].s); break;
        }
    }
    rec_encode(out, rt, nt, rf, nf);
}

/* The key end of an id (store/key.h), with a varint written here. */
static void encode_end(struct buf *out, struct slice id)
{
    buf_reset(out);
    if (!id.len) {
        buf_putc(out, '\0');
        return;
    }
    buf_putc(out, '\1');
    uint64_t v = id.len;
    while (v >= 0x80) {
        buf_putc(out, (char)(v | 0x80));
        v >>= 7;
    }
    buf_putc(out, (char)v);
    buf_append(out, id.ptr, id.len);
}

static int cmp_bytes(const struct buf *a, const struct buf *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->data, b->data, n) : 0;
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* --- reference --- */

static struct ref_row *ref_find(struct model *m, int64_t ts, const char *h, const char *e,
                                struct slice id)
{
    for (size_t i = 0; i < m->n; i++) {
        struct ref_row *r = &m->rows[i];
        if (r->ts == ts && r->host == h && r->event == e && r->id.len == id.len &&
            (!id.len || memcmp(r->id.data, id.ptr, id.len) == 0))
            return r;
    }
    return NULL;
}

static void row_destroy(struct ref_row *r)
{
    buf_destroy(&r->id);
    buf_destroy(&r->end);
}

/* Removes r from the rows, keeping it in the graveyard to write it again. */
static void ref_remove(struct model *m, struct ref_row *r)
{
    if (m->ngrave < GRAVE_CAP) {
        m->grave[m->ngrave++] = *r;
    } else {
        struct ref_row *g = &m->grave[rn(m, GRAVE_CAP)];
        row_destroy(g);
        *g = *r;
    }
    *r = m->rows[--m->n];
}

static struct ref_row *ref_new(struct model *m)
{
    if (m->n == m->cap)
        m->rows = xrealloc(m->rows, (m->cap = m->cap ? 2 * m->cap : 256) * sizeof(*m->rows));
    struct ref_row *r = &m->rows[m->n++];
    memset(r, 0, sizeof(*r));
    buf_init(&r->id);
    buf_init(&r->end);
    return r;
}

static int64_t rand_ts(struct model *m)
{
    return NOW - (int64_t)rn(m, TS_POOL) * m->ts_step;
}

static void rand_point_field(struct model *m, int which, struct fld *f)
{
    memset(f, 0, sizeof(*f));
    switch (which) {
    case 0:
        f->k = "v";
        f->type = REC_FLOAT;
        f->f = (double)rn(m, 1000) / 10.0;
        break;
    case 1:
        f->k = "c";
        f->type = REC_INT;
        f->i = (int64_t)rn(m, 600) - 100;
        break;
    case 2:
        f->k = "s";
        f->type = REC_STRING;
        f->s = point_strs[rn(m, NELEM(point_strs))];
        break;
    case 3:
        f->k = "ok";
        f->type = REC_BOOL;
        f->b = rn(m, 2);
        break;
    default:
        f->k = "u";
        f->type = REC_UINT;
        f->u = rnd(m) >> rn(m, 64);
        break;
    }
}

/* A random non-empty subset of the point fields, in random order. */
static size_t rand_point_fields(struct model *m, struct fld *f)
{
    int idx[MAXF] = {0, 1, 2, 3, 4};
    for (size_t i = MAXF - 1; i > 0; i--) {
        size_t j = rn(m, i + 1);
        int t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
    size_t n = 1 + rn(m, MAXF);
    for (size_t i = 0; i < n; i++)
        rand_point_field(m, idx[i], &f[i]);
    return n;
}

/* A log entry's fields: msg, maybe c and v (an int here, a float in points),
 * in one of two orders. Small pools: equal contents recur. */
static size_t rand_log_fields(struct model *m, struct fld *f)
{
    size_t n = 0;
    bool msg_last = rn(m, 4) == 0;
    struct fld msg = {"msg", REC_STRING, 0, 0, 0, false, msgs[rn(m, NELEM(msgs))]};
    memset(f, 0, MAXF * sizeof(*f));
    if (!msg_last)
        f[n++] = msg;
    if (rn(m, 2)) {
        f[n].k = "c";
        f[n].type = REC_INT;
        f[n++].i = (int64_t)rn(m, 5);
    }
    if (rn(m, 3) == 0) {
        f[n].k = "v";
        f[n].type = REC_INT;
        f[n++].i = (int64_t)rn(m, 100);
    }
    if (msg_last)
        f[n++] = msg;
    return n;
}

/* The id and value a writer gives the row (ingest.c, encode_row). */
static void row_encoding(bool point, const struct tagkv *t, size_t nt, const struct fld *f,
                         size_t nf, struct tagkv *sorted, struct buf *id, struct buf *val)
{
    buf_reset(id);
    buf_reset(val);
    if (nt)
        memcpy(sorted, t, nt * sizeof(*t));
    if (point) {
        for (size_t i = 1; i < nt; i++)
            for (size_t j = i; j > 0 && strcmp(sorted[j - 1].k, sorted[j].k) > 0; j--) {
                struct tagkv x = sorted[j];
                sorted[j] = sorted[j - 1];
                sorted[j - 1] = x;
            }
        if (nt)
            encode_rec(id, sorted, nt, NULL, 0);
        encode_rec(val, NULL, 0, f, nf);
    } else {
        encode_rec(id, t, nt, f, nf);
    }
}

/* Writes one row into b and the reference. */
static void write_row(struct model *m, struct batch *b, int64_t ts, const char *h, const char *e,
                      bool point, const struct tagkv *t, size_t nt, const struct fld *f, size_t nf)
{
    struct tagkv sorted[MAXT];
    struct buf id = BUF_INIT, val = BUF_INIT;
    row_encoding(point, t, nt, f, nf, sorted, &id, &val);
    struct slice ids = slice_make(id.data, id.len);
    batch_put_id(b, ts, slice_cstr(h), slice_cstr(e), ids, slice_make(val.data, val.len), point);
    struct ref_row *r = ref_find(m, ts, h, e, ids);
    if (!r) {
        r = ref_new(m);
        r->ts = ts;
        r->host = h;
        r->event = e;
        r->point = point;
        if (nt)
            memcpy(r->t, point ? sorted : t, nt * sizeof(*t));
        r->nt = nt;
        memcpy(r->f, f, nf * sizeof(*f));
        r->nf = nf;
        buf_append(&r->id, id.data, id.len);
        encode_end(&r->end, ids);
        m->puts++;
    } else if (point) {
        /* the newest version's fields, then the older ones it lacks */
        assert_true(r->point);
        struct fld merged[MAXF];
        size_t n = nf;
        memcpy(merged, f, nf * sizeof(*f));
        for (size_t i = 0; i < r->nf; i++) {
            bool shadowed = false;
            for (size_t j = 0; j < nf; j++)
                shadowed |= strcmp(f[j].k, r->f[i].k) == 0;
            if (!shadowed) {
                assert_true(n < MAXF);
                merged[n++] = r->f[i];
            }
        }
        memcpy(r->f, merged, n * sizeof(*f));
        r->nf = n;
        m->merges++;
    } else {
        assert_false(r->point); /* same id: the same content */
        m->dups++;
    }
    buf_destroy(&id);
    buf_destroy(&val);
}

/* Writes a row again: a point with another subset of its fields (a merge),
 * a log entry as it is (an exact duplicate). */
static void rewrite_row(struct model *m, struct batch *b, const struct ref_row *old)
{
    struct ref_row r = *old; /* old may move: write_row can grow the rows */
    struct fld f[MAXF];
    size_t nf = r.point ? rand_point_fields(m, f) : r.nf;
    if (!r.point)
        memcpy(f, r.f, nf * sizeof(*f));
    write_row(m, b, r.ts, r.host, r.event, r.point, r.t, r.nt, f, nf);
    m->rewrites++;
}

static void write_batch(struct model *m, struct store_db *db, size_t n)
{
    struct batch *b = batch_new();
    for (size_t i = 0; i < n; i++) {
        size_t dice = rn(m, 100);
        if (dice < 8 && m->n) { /* delete one row (its index entry stays) */
            struct ref_row *r = &m->rows[rn(m, m->n)];
            batch_delete_id(b, r->ts, slice_cstr(r->host), slice_cstr(r->event),
                            slice_make(r->id.data, r->id.len));
            ref_remove(m, r);
            continue;
        }
        if (dice < 30 && m->n) { /* the same row again */
            rewrite_row(m, b, &m->rows[rn(m, m->n)]);
            continue;
        }
        if (dice < 38 && m->ngrave) { /* a deleted row again */
            rewrite_row(m, b, &m->grave[rn(m, m->ngrave)]);
            continue;
        }
        int64_t ts;
        const char *h, *e;
        if (m->n && rn(m, 2)) { /* beside the rows of an existing (ts, host, event) */
            const struct ref_row *r = &m->rows[rn(m, m->n)];
            ts = r->ts;
            h = r->host;
            e = r->event;
        } else {
            ts = rand_ts(m);
            h = hosts[rn(m, NH)];
            e = events[rn(m, NE)];
        }
        struct fld f[MAXF];
        if (rn(m, 2)) {
            const struct tagset *ts_ = &point_sets[rn(m, NELEM(point_sets))];
            size_t nf = rand_point_fields(m, f);
            write_row(m, b, ts, h, e, true, ts_->t, ts_->n, f, nf);
        } else {
            const struct tagset *ts_ = &log_sets[rn(m, NELEM(log_sets))];
            size_t nf = rand_log_fields(m, f);
            write_row(m, b, ts, h, e, false, ts_->t, ts_->n, f, nf);
        }
    }
    int rc;
    while ((rc = store_write(db, b)) == ERR_BUSY) /* back-pressure: flushing catches up */
        usleep(1000);
    assert_int_equal(rc, 0);
    batch_free(b);
}

/* --- random queries --- */

enum {
    P_NONE,
    P_V_GT,      /* v > x */
    P_C_LE,      /* fields.c <= y */
    P_REGION,    /* tags.region = r */
    P_V_REGION,  /* v > x AND tags.region = r */
    P_REGION_NE, /* tags.region != r */
    P_MSG,       /* fields.msg = 'm' */
    P_OK,        /* fields.ok = true */
    P_DC_LEVEL,  /* tags.dc = 'd1' or tags.level = 'warn' */
    P_KINDS
};

struct qspec {
    int ts_kind; /* 0 none, 1 range, 2 points */
    int64_t lo, hi;
    int64_t pts[4];
    size_t npts;
    bool hosts[NH], has_host;
    bool events[NE], has_event;
    int pred;
    double px;
    int64_t py;
    const char *pr, *pm;
    bool dc;       /* P_DC_LEVEL: dc, else level */
    int order;     /* 0 stored, 1 asc, -1 desc */
    int64_t limit; /* -1 none */
    bool count;
    int cols; /* 0 *, 1 and 2 two projections */
};

static void gen_set(struct model *m, bool *set, size_t n, bool *has)
{
    *has = true;
    size_t k = 1 + rn(m, 3);
    for (size_t i = 0; i < k; i++)
        set[rn(m, n)] = true;
}

static void sql_set(struct buf *q, const char *col, const bool *set, const char **names, size_t n)
{
    size_t k = 0, last = 0;
    for (size_t i = 0; i < n; i++)
        if (set[i]) {
            k++;
            last = i;
        }
    if (k == 1) { /* = as well as IN */
        buf_printf(q, " AND %s = '%s'", col, names[last]);
        return;
    }
    buf_printf(q, " AND %s IN (", col);
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        if (!set[i])
            continue;
        buf_printf(q, "%s'%s'", first ? "" : ",", names[i]);
        first = false;
    }
    buf_putc(q, ')');
}

static void gen_ts(struct model *m, struct qspec *q, struct buf *sql)
{
    if (q->ts_kind == 1) {
        int64_t a = rand_ts(m), b = rand_ts(m);
        q->lo = a < b ? a : b;
        q->hi = a < b ? b : a;
        switch (rn(m, 3)) {
        case 0:
            buf_printf(sql, " AND ts BETWEEN %lld AND %lld", (long long)q->lo, (long long)q->hi);
            break;
        case 1:
            buf_printf(sql, " AND ts > %lld AND ts < %lld", (long long)q->lo - 1,
                       (long long)q->hi + 1);
            break;
        default:
            q->hi = INT64_MAX;
            buf_printf(sql, " AND ts >= %lld", (long long)q->lo);
            break;
        }
    } else if (q->ts_kind == 2) {
        q->npts = 1 + rn(m, 4);
        buf_puts(sql, " AND ts IN (");
        for (size_t i = 0; i < q->npts; i++) {
            q->pts[i] = rand_ts(m);
            buf_printf(sql, "%s%lld", i ? "," : "", (long long)q->pts[i]);
        }
        buf_putc(sql, ')');
    }
}

static void gen_pred(struct model *m, struct qspec *q, struct buf *sql)
{
    q->pred = rn(m, 3) ? (int)rn(m, P_KINDS) : P_NONE;
    q->px = (double)rn(m, 100);
    q->py = (int64_t)rn(m, 600) - 100;
    if (rn(m, 4) == 0)
        q->py = (int64_t)rn(m, 5); /* the range of log entries' c */
    q->pr = regions[rn(m, 3)];
    q->pm = msgs[rn(m, 3)];
    q->dc = rn(m, 2);
    switch (q->pred) {
    case P_V_GT: buf_printf(sql, " AND v > %g", q->px); break;
    case P_C_LE: buf_printf(sql, " AND fields.c <= %lld", (long long)q->py); break;
    case P_REGION: buf_printf(sql, " AND tags.region = '%s'", q->pr); break;
    case P_V_REGION: buf_printf(sql, " AND v > %g AND tags.region = '%s'", q->px, q->pr); break;
    case P_REGION_NE: buf_printf(sql, " AND tags.region != '%s'", q->pr); break;
    case P_MSG: buf_printf(sql, " AND fields.msg = '%s'", q->pm); break;
    case P_OK: buf_puts(sql, " AND fields.ok = true"); break;
    case P_DC_LEVEL:
        buf_puts(sql, q->dc ? " AND tags.dc = 'd1'" : " AND tags.level = 'warn'");
        break;
    default: break;
    }
}

/* The WHERE of a query of shape 0 GET, 1 scan, 2 index, 3 index+event,
 * 4 full, 5 points, into conds (each condition starts with " AND "). */
static void gen_conds(struct model *m, struct qspec *q, int shape, struct buf *conds)
{
    q->ts_kind = shape == 0 || shape == 5 ? 2 : shape == 1 ? 1 : shape == 4 ? 0 : (int)rn(m, 3);
    if (shape == 0 || shape == 2 || shape == 3)
        gen_set(m, q->hosts, NH, &q->has_host);
    if (shape == 0 || shape == 3 || (shape != 2 && rn(m, 3) == 0))
        gen_set(m, q->events, NE, &q->has_event);
    gen_ts(m, q, conds);
    if (q->has_host)
        sql_set(conds, "host", q->hosts, hosts, NH);
    if (q->has_event)
        sql_set(conds, "event", q->events, events, NE);
    gen_pred(m, q, conds);
}

static const char *const proj_sql[] = {"*", "ts, host, c, tags.region",
                                       "event, v, msg, tags.dc, tags.level"};

static void gen_query(struct model *m, struct qspec *q, struct buf *sql)
{
    memset(q, 0, sizeof(*q));
    q->limit = -1;
    int shape = (int)rn(m, 6);
    q->count = rn(m, 5) == 0;
    q->cols = !q->count && rn(m, 4) == 0 ? 1 + (int)rn(m, 2) : 0;
    buf_printf(sql, "SELECT %s%s FROM %s", shape == 4 ? "/*+ full_scan */ " : "",
               q->count ? "COUNT(*)" : proj_sql[q->cols], m->db);
    struct buf conds = BUF_INIT;
    gen_conds(m, q, shape, &conds);
    if (conds.len)
        buf_printf(sql, " WHERE %s", buf_cstr(&conds) + 5);
    buf_destroy(&conds);
    q->order = (int)rn(m, 3) - 1;
    if (q->order)
        buf_printf(sql, " ORDER BY ts %s", q->order > 0 ? "ASC" : "DESC");
    if (rn(m, 2)) {
        q->limit = (int64_t)rn(m, 25);
        buf_printf(sql, " LIMIT %lld", (long long)q->limit);
    }
}

static size_t name_index(const char **names, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] == s)
            return i;
    return n;
}

static const char *ref_tag(const struct ref_row *r, const char *k)
{
    for (size_t i = 0; i < r->nt; i++)
        if (strcmp(r->t[i].k, k) == 0)
            return r->t[i].v;
    return NULL;
}

static const struct fld *ref_field(const struct ref_row *r, const char *k)
{
    for (size_t i = 0; i < r->nf; i++)
        if (strcmp(r->f[i].k, k) == 0)
            return &r->f[i];
    return NULL;
}

/* A numeric field as a double (the values here are exact in a double);
 * false if absent or not a number. */
static bool ref_num(const struct ref_row *r, const char *k, double *out)
{
    const struct fld *f = ref_field(r, k);
    if (!f)
        return false;
    switch (f->type) {
    case REC_FLOAT: *out = f->f; return true;
    case REC_INT: *out = (double)f->i; return true;
    case REC_UINT: *out = (double)f->u; return true;
    default: return false;
    }
}

static bool ref_pred(const struct qspec *q, const struct ref_row *r)
{
    double d;
    const char *t;
    const struct fld *f;
    switch (q->pred) {
    case P_V_GT: return ref_num(r, "v", &d) && d > q->px;
    case P_C_LE: return ref_num(r, "c", &d) && d <= (double)q->py;
    case P_REGION: return (t = ref_tag(r, "region")) && strcmp(t, q->pr) == 0;
    case P_V_REGION:
        return ref_num(r, "v", &d) && d > q->px && (t = ref_tag(r, "region")) &&
               strcmp(t, q->pr) == 0;
    case P_REGION_NE: return (t = ref_tag(r, "region")) && strcmp(t, q->pr) != 0;
    case P_MSG:
        return (f = ref_field(r, "msg")) && f->type == REC_STRING && strcmp(f->s, q->pm) == 0;
    case P_OK: return (f = ref_field(r, "ok")) && f->type == REC_BOOL && f->b;
    case P_DC_LEVEL:
        return q->dc ? (t = ref_tag(r, "dc")) && strcmp(t, "d1") == 0
                     : (t = ref_tag(r, "level")) && strcmp(t, "warn") == 0;
    default: return true;
    }
}

static bool ref_visible(const struct model *m, const struct ref_row *r)
{
    return !(m->ttl > 0 && r->ts < NOW - m->ttl);
}

static bool ref_match(const struct model *m, const struct qspec *q, const struct ref_row *r)
{
    if (!ref_visible(m, r))
        return false;
    if (q->ts_kind == 1 && (r->ts < q->lo || r->ts > q->hi))
        return false;
    if (q->ts_kind == 2) {
        bool hit = false;
        for (size_t i = 0; i < q->npts; i++)
            hit |= q->pts[i] == r->ts;
        if (!hit)
            return false;
    }
    if (q->has_host && !q->hosts[name_index(hosts, NH, r->host)])
        return false;
    if (q->has_event && !q->events[name_index(events, NE, r->event)])
        return false;
    return ref_pred(q, r);
}

static bool sort_desc;

/* ts in the direction asked, host, event, then the key's end bytes
 * ascending in either direction (see the top of the file). */
static int cmp_ref(const void *a, const void *b)
{
    const struct ref_row *x = *(const struct ref_row *const *)a;
    const struct ref_row *y = *(const struct ref_row *const *)b;
    if (x->ts != y->ts)
        return ((x->ts > y->ts) - (x->ts < y->ts)) * (sort_desc ? -1 : 1);
    int c = strcmp(x->host, y->host);
    if (!c)
        c = strcmp(x->event, y->event);
    return c ? c : cmp_bytes(&x->end, &y->end);
}

static void expected_output(struct model *m, const struct qspec *q, struct buf *out)
{
    struct ref_row **sel = xcalloc(m->n + 1, sizeof(*sel));
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++)
        if (ref_match(m, q, &m->rows[i]))
            sel[n++] = &m->rows[i];
    if (q->count) {
        buf_printf(out, "{\"count\":%zu}\n", n);
        free(sel);
        return;
    }
    sort_desc = q->order == 0 ? m->desc : q->order < 0;
    qsort(sel, n, sizeof(*sel), cmp_ref);
    if (q->limit >= 0 && (size_t)q->limit < n)
        n = (size_t)q->limit;
    static const struct sql_col cols1[] = {{SQL_COL_TS, NULL},
                                           {SQL_COL_HOST, NULL},
                                           {SQL_COL_FIELD, (char *)"c"},
                                           {SQL_COL_TAG, (char *)"region"}};
    static const struct sql_col cols2[] = {{SQL_COL_EVENT, NULL},
                                           {SQL_COL_FIELD, (char *)"v"},
                                           {SQL_COL_FIELD, (char *)"msg"},
                                           {SQL_COL_TAG, (char *)"dc"},
                                           {SQL_COL_TAG, (char *)"level"}};
    struct enc_proj proj = {true, NULL, 0};
    if (q->cols == 1)
        proj = (struct enc_proj){false, cols1, NELEM(cols1)};
    else if (q->cols == 2)
        proj = (struct enc_proj){false, cols2, NELEM(cols2)};
    struct buf rec = BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        const struct ref_row *r = sel[i];
        /* the whole row as one record: its tags, then its fields, in the
         * order the reference keeps them */
        buf_reset(&rec);
        encode_rec(&rec, r->t, r->nt, r->f, r->nf);
        assert_int_equal(enc_row(out, r->ts, slice_cstr(r->host), slice_cstr(r->event),
                                 slice_make("", 0), slice_make(rec.data, rec.len), &proj),
                         0);
        buf_putc(out, '\n');
    }
    buf_destroy(&rec);
    free(sel);
}

/* Runs sql through a cursor, reading in random-sized pieces. */
static int run_sql(struct model *m, const char *sql, enum query_format fmt, struct buf *out,
                   struct buf *err)
{
    struct query_opts o;
    query_opts_default(&o);
    o.now_ns = NOW;
    o.format = fmt;
    struct query_cursor *c;
    int rc = query_sql_open(m->s, sql, strlen(sql), &o, &c, err);
    if (rc)
        return rc;
    char tmp[4096];
    ssize_t n;
    for (;;) {
        m->read_rng = m->read_rng * 6364136223846793005ULL + 1442695040888963407ULL;
        n = query_cursor_read(c, tmp, 1 + (size_t)(m->read_rng >> 33) % sizeof(tmp));
        if (n <= 0)
            break;
        buf_append(out, tmp, (size_t)n);
    }
    query_cursor_free(c);
    return n < 0 ? (int)n : ERR_OK;
}

static void check_query(struct model *m)
{
    struct qspec q;
    struct buf sql = BUF_INIT, got = BUF_INIT, want = BUF_INIT, err = BUF_INIT;
    gen_query(m, &q, &sql);
    int rc = run_sql(m, buf_cstr(&sql), QUERY_NDJSON, &got, &err);
    if (rc)
        fail_msg("%s\n -> rc %d %s", buf_cstr(&sql), rc, buf_cstr(&err));
    expected_output(m, &q, &want);
    if (strcmp(buf_cstr(&got), buf_cstr(&want)) != 0)
        fail_msg("db %s (%s, %u buckets) query %zu:\n%s\n got:\n%s\n want:\n%s", m->db,
                 m->desc ? "desc" : "asc", m->buckets, m->queries, buf_cstr(&sql), buf_cstr(&got),
                 buf_cstr(&want));
    m->queries++;
    m->nonempty += want.len > 0 && !q.count;
    buf_destroy(&sql);
    buf_destroy(&got);
    buf_destroy(&want);
    buf_destroy(&err);
}

/* A random DELETE through SQL: half of them of the range tombstone shape
 * (host = 'h' [AND event = 'e'] [AND ts range]), the others any WHERE of the
 * query shapes (tombstones row by row, or a range tombstone when the WHERE
 * happens to have that shape). */
static void check_delete(struct model *m)
{
    struct qspec q;
    struct buf sql = BUF_INIT, conds = BUF_INIT;
    memset(&q, 0, sizeof(q));
    if (rn(m, 2)) {
        q.has_host = true;
        q.hosts[rn(m, NH)] = true;
        if (rn(m, 3) == 0) {
            q.has_event = true;
            q.events[rn(m, NE)] = true;
        }
        if (rn(m, 4)) { /* else every ts of the host */
            q.ts_kind = 1;
            q.lo = rand_ts(m);
            q.hi = q.lo + (int64_t)rn(m, 21) * m->ts_step;
            if (rn(m, 3))
                buf_printf(&conds, " AND ts BETWEEN %lld AND %lld", (long long)q.lo,
                           (long long)q.hi);
            else
                buf_printf(&conds, " AND ts >= %lld AND ts <= %lld", (long long)q.lo,
                           (long long)q.hi);
        }
        sql_set(&conds, "host", q.hosts, hosts, NH);
        if (q.has_event)
            sql_set(&conds, "event", q.events, events, NE);
        buf_printf(&sql, "DELETE FROM %s WHERE %s", m->db, buf_cstr(&conds) + 5);
    } else {
        int shape;
        do { /* narrow enough not to empty the database */
            memset(&q, 0, sizeof(q));
            buf_reset(&conds);
            shape = (int)rn(m, 6);
            gen_conds(m, &q, shape, &conds);
        } while (q.pred == P_NONE && q.ts_kind != 2 && !(q.ts_kind == 1 && q.has_host));
        buf_printf(&sql, "DELETE %sFROM %s WHERE %s", shape == 4 ? "/*+ full_scan */ " : "", m->db,
                   buf_cstr(&conds) + 5);
    }
    size_t want = 0;
    for (size_t i = 0; i < m->n;) {
        struct ref_row *r = &m->rows[i];
        if (ref_match(m, &q, r)) {
            want++;
            ref_remove(m, r);
            continue;
        }
        i++;
    }
    struct buf got = BUF_INIT, err = BUF_INIT;
    int rc = run_sql(m, buf_cstr(&sql), QUERY_NDJSON, &got, &err);
    if (rc)
        fail_msg("%s\n -> rc %d %s", buf_cstr(&sql), rc, buf_cstr(&err));
    char exp[64];
    snprintf(exp, sizeof(exp), "{\"deleted\":%zu}\n", want);
    if (strcmp(buf_cstr(&got), exp) != 0)
        fail_msg("db %s (%s, %u buckets): %s\n got %s want %s", m->db, m->desc ? "desc" : "asc",
                 m->buckets, buf_cstr(&sql), buf_cstr(&got), exp);
    m->deletes++;
    m->deleted += want;
    buf_destroy(&sql);
    buf_destroy(&conds);
    buf_destroy(&got);
    buf_destroy(&err);
}

static void write_rounds(struct model *m, struct store_db *db, size_t rounds, size_t max_rows)
{
    for (size_t r = 0; r < rounds; r++) {
        write_batch(m, db, 1 + rn(m, max_rows));
        if (rn(m, 3) == 0)
            assert_int_equal(store_db_flush(db), 0);
        if (rn(m, 4) == 0)
            assert_int_equal(store_db_compact(db), 0);
    }
}

static void note_rows_per_base(struct model *m)
{
    for (size_t i = 0; i < m->n; i++) {
        size_t k = 0;
        for (size_t j = 0; j < m->n; j++)
            k += m->rows[j].ts == m->rows[i].ts && m->rows[j].host == m->rows[i].host &&
                 m->rows[j].event == m->rows[i].event;
        if (k > m->max_rows_per_base)
            m->max_rows_per_base = k;
    }
}

static void model_db(struct model *m, const char *name, bool desc, uint32_t buckets,
                     int64_t ts_step, int64_t ttl, size_t nq)
{
    struct store_db *db;
    char sql[200];
    struct buf out = BUF_INIT, err = BUF_INIT;
    snprintf(sql, sizeof(sql), "CREATE DATABASE %s WITH (buckets=%u, ts_order='%s')", name, buckets,
             desc ? "desc" : "asc");
    m->db = name;
    assert_int_equal(run_sql(m, sql, QUERY_NDJSON, &out, &err), 0);
    assert_int_equal(store_db_get(m->s, name, &db), 0);
    m->desc = desc;
    m->buckets = buckets;
    m->ttl = 0;
    m->ts_step = ts_step;
    write_rounds(m, db, san() ? 4 : 16, san() ? 150 : 700);
    note_rows_per_base(m);
    if (ttl) {
        snprintf(sql, sizeof(sql), "ALTER DATABASE %s SET ttl = '%lldns'", name, (long long)ttl);
        buf_reset(&out);
        assert_int_equal(run_sql(m, sql, QUERY_NDJSON, &out, &err), 0);
        m->ttl = ttl;
    }
    for (size_t i = 0; i < nq; i++) {
        check_query(m);
        if (i % 50 == 49)
            check_delete(m);
        if (i % 100 == 74) /* writes after deletes: rows written again over tombstones */
            write_rounds(m, db, 1 + rn(m, 3), san() ? 60 : 200);
        if (i == nq / 2)
            query_test_set_group_cap(64); /* force the oversized-group re-read */
    }
    query_test_set_group_cap(0);
    store_db_unref(db);
    for (size_t i = 0; i < m->n; i++)
        row_destroy(&m->rows[i]);
    m->n = 0;
    for (size_t i = 0; i < m->ngrave; i++)
        row_destroy(&m->grave[i]);
    m->ngrave = 0;
    buf_destroy(&out);
    buf_destroy(&err);
}

static int setup(void **state)
{
    struct model *m = xcalloc(1, sizeof(*m));
    snprintf(m->dir, sizeof(m->dir), "/tmp/lbq-model-XXXXXX");
    assert_non_null(mkdtemp(m->dir));
    struct store_opts so;
    store_opts_default(&so);
    so.dir = m->dir;
    so.wal_sync = STORE_SYNC_NONE;
    so.clock = clock_fixed;
    /* small files: compactions split their output, and full files make
     * later ones partial (size-tiered), which folds merges only partly */
    so.max_file_bytes = 16u << 10;
    assert_int_equal(store_open(&so, &m->s), 0);
    m->rng = 0x9e3779b97f4a7c15ULL;
    const char *seed = getenv("LB_SEED");
    if (seed)
        m->rng = strtoull(seed, NULL, 0) | 1;
    m->read_rng = m->rng;
    print_message("# seed 0x%llx (LB_SEED)\n", (unsigned long long)m->rng);
    init_msgs();
    *state = m;
    return 0;
}

static int teardown(void **state)
{
    struct model *m = *state;
    store_close(m->s);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", m->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "# could not remove %s\n", m->dir);
    free(m->rows);
    free(m);
    return 0;
}

static void test_model(void **state)
{
    struct model *m = *state;
    size_t nq = san() ? 150 : 1500;
    static const uint32_t bucket_counts[] = {1, 7, 16};
    /* 7 ms: every row in one hour window; 37 s: 300 ts over four windows,
     * so that compaction also sees cold windows with late rows */
    static const int64_t ts_steps[] = {7000000LL, 37000000000LL, 7000000LL};
    char name[32];
    for (size_t i = 0; i < 3; i++) {
        for (int d = 0; d < 2; d++) {
            snprintf(name, sizeof(name), "m%zu%s", i, d ? "desc" : "asc");
            int64_t step = ts_steps[i];
            int64_t ttl = i == 1 ? 150 * step + step / 2 : 0;
            model_db(m, name, d, bucket_counts[i], step, ttl, nq);
        }
    }
    print_message("# %zu queries, %zu with rows; %zu deletes removing %zu rows\n", m->queries,
                  m->nonempty, m->deletes, m->deleted);
    print_message("# writes: %zu new rows, %zu merges, %zu duplicates (%zu rewrites); up to "
                  "%zu rows per (ts, host, event)\n",
                  m->puts, m->merges, m->dups, m->rewrites, m->max_rows_per_base);
    /* the identity paths were all exercised */
    assert_true(m->merges > 100 && m->dups > 100 && m->max_rows_per_base >= 4);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_model, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
