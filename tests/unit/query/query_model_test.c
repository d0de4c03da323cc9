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
 * Search and aggregation (issue 19), against references written here from
 * query/README.md and query/agg.h, never with query/cond.c or query/agg.c:
 *   - conditions: random trees of AND, OR, NOT and parentheses (precedence
 *     tested by leaving out the parentheses AND does not need) over every
 *     predicate: comparisons on host, event, tags and fields of each kind
 *     (and against literals of another kind: unknown), [NOT] BETWEEN,
 *     [NOT] IN, [NOT] LIKE / ILIKE with %, _ and \ escapes, ~ ~* !~ !~*
 *     REGEXP (the reference runs PCRE2 itself with the README's flags),
 *     MATCH of words and "phrases" on a column and MATCH('...') over every
 *     string (model/words.h splits words), IS [NOT] NULL; three-valued
 *     logic on missing fields. Plans come from what they imply: an OR of
 *     hosts (INDEX), an OR of ts ranges (SCAN), an OR that narrows nothing
 *     (a refused full scan), and the rest ANDed to the shapes above. Some
 *     row queries go through the parameter form (where=, search=);
 *   - rows: log entries carry msg lines of a small vocabulary (and now and
 *     then a rare word), a field x of mixed kinds; the third pair of
 *     databases holds log entries only, so that its blocks get word
 *     filters: EXPLAIN ANALYZE must show searches passing over blocks;
 *   - aggregate queries: every aggregate (COUNT(*), COUNT, SUM, AVG, MIN,
 *     MAX, FIRST, LAST, PERCENTILE, MEDIAN) over columns of every kind,
 *     GROUP BY host, event, tags, string, number and bool fields and a
 *     time_bucket with offsets, several at once, named by name, alias,
 *     position or expression, selected or not; HAVING trees; ORDER BY any
 *     output (nulls last ascending), LIMIT; FILL(NULL | 0 | PREVIOUS) over
 *     a bounded range (PREVIOUS: the earlier bucket in time); max_groups
 *     (the error before output, or mid-stream when streaming by bucket).
 *     Outputs are parsed (jansson) and compared value by value: exactly,
 *     but float sums and averages within 1e-9 relative and percentiles of
 *     more than 256 values within their sketch's 1%.
 *
 * LB_SAN=1 runs less; LB_SEED=N picks another seed. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <pcre2.h>

#include "base/err.h"
#include "model/record.h"
#include "model/words.h"
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

static const char *point_strs[] = {"ok",
                                   "msg \"quoted\"\n",
                                   "tab\there",
                                   "caf\xc3\xa9",
                                   "Timeout by peer",
                                   "disk FULL web",
                                   "warn: cpu load"};
/* The first three are used by the msg predicate (no quotes in them). */
#define NMSG_SHORT 5
#define NMSG_LONG 5
static const char *short_msgs[NMSG_SHORT] = {"started", "GET /api 200", "disk full",
                                             "quote \" and \\ backslash\n", "x"};
/* Long messages: their log ids cross 128 bytes (a 2-byte length varint). */
static const size_t long_lens[NMSG_LONG] = {100, 126, 140, 250, 400};
static char long_msgs[NMSG_LONG][512];
/* Message-like lines for search: words of a small vocabulary joined by
 * separators, so that MATCH, LIKE and regular expressions hit and miss;
 * with the bytes that matter to patterns ('%', '_', '\\', a quote, UTF-8, a
 * tab) and words that also occur in hosts, events and tag values. */
#define NMSG_VOCAB 40
static const char *vocab[] = {"error",    "Error",       "ERROR",       "timeout",
                              "timeouts", "connection",  "reset",       "by",
                              "peer",     "GET",         "POST",        "/api/v1/users",
                              "200",      "500",         "disk",        "full",
                              "user_42",  "caf\xc3\xa9", "CAF\xc3\x89", "warn",
                              "web",      "load",        "cpu",         "the",
                              "fox",      "50%",         "a_b",         "x-y",
                              "it's",     "back\\slash", "100%_done",   "eu",
                              "h1"};
static const char *vocab_seps[] = {" ", " ", " ", "  ", ": ", ", ", "=", "\t", " - ", "/"};
static char vocab_msgs[NMSG_VOCAB][160];
static const char *msgs[NMSG_SHORT + NMSG_LONG + NMSG_VOCAB];
/* Lines with a rare word each (zq0 ... zq39), in about 1 row of 1,000: the
 * word filters of blocks of log rows (store/FORMAT.md) let a search pass
 * over most blocks. */
#define NRARE 40
static char rare_msgs[NRARE][48];
/* The values of field x of log entries: an int, one of these strings or a
 * bool (a column of mixed kinds, for MIN/MAX and grouping). */
static const char *x_strs[] = {"E1", "E2", "ok", "warn"};

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
    int counted_pct; /* aggregate queries of the counted shape (gen_counted), in 100 */
    int series_pct;  /* of the host section shape (gen_series), in 100 */
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
    size_t param_queries, refused, tree_nonempty;
    int point_pct; /* share of points among new rows (the rest: log entries) */
    uint64_t blocks_read, blocks_skipped; /* EXPLAIN ANALYZE of log-only databases */
    size_t agg_queries, agg_rows, agg_errors, agg_approx, agg_fill, agg_having;
    int64_t max_groups; /* query_opts.max_groups of the next query (0: default) */
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

static void init_msgs(uint64_t seed)
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
    for (size_t i = 0; i < NRARE; i++)
        snprintf(rare_msgs[i], sizeof(rare_msgs[i]), "%s zq%zu: disk %s", i % 2 ? "rare" : "Error",
                 i, i % 3 ? "full" : "error");
    uint64_t r = seed | 1;
    for (size_t i = 0; i < NMSG_VOCAB; i++) {
        struct buf b = BUF_INIT;
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        size_t n = 2 + (size_t)(r % 7);
        for (size_t j = 0; j < n; j++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            if (j)
                buf_puts(&b, vocab_seps[(r >> 8) % NELEM(vocab_seps)]);
            buf_puts(&b, vocab[(r >> 24) % NELEM(vocab)]);
        }
        snprintf(vocab_msgs[i], sizeof(vocab_msgs[i]), "%s", buf_cstr(&b));
        buf_destroy(&b);
        msgs[NMSG_SHORT + NMSG_LONG + i] = vocab_msgs[i];
    }
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
    /* now and then a rare word: a word search then passes over blocks */
    const char *text = rn(m, 25) ? msgs[rn(m, NELEM(msgs))] : rare_msgs[rn(m, NRARE)];
    struct fld msg = {"msg", REC_STRING, 0, 0, 0, false, text};
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
    if (rn(m, 3) == 0) {
        f[n].k = "x";
        switch (rn(m, 3)) {
        case 0:
            f[n].type = REC_INT;
            f[n].i = (int64_t)rn(m, 10);
            break;
        case 1:
            f[n].type = REC_STRING;
            f[n].s = x_strs[rn(m, NELEM(x_strs))];
            break;
        default:
            f[n].type = REC_BOOL;
            f[n].b = rn(m, 2);
            break;
        }
        n++;
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
        if ((int)rn(m, 100) < m->point_pct) {
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
    int shape;
    struct xnode *tree;   /* AND (tree): OR, NOT, every predicate (owned) */
    struct xnode *search; /* the parameter form's search=: MATCH('...') (owned) */
};

struct xnode;
static struct xnode *gen_tree(struct model *m, int depth, bool allow_ts);
static struct xnode *gen_or_shape(struct model *m, int shape);
static void sql_node(struct model *m, struct buf *b, const struct xnode *n);
static void xnode_free(struct xnode *n);

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
    q->shape = shape;
    if (shape >= 6) {
        q->tree = gen_or_shape(m, shape);
        buf_puts(conds, " AND (");
        sql_node(m, conds, q->tree);
        buf_putc(conds, ')');
        if (shape != 8)
            gen_pred(m, q, conds);
        return;
    }
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
    if (rn(m, 2)) {
        q->tree = gen_tree(m, 1 + (int)rn(m, 3), true);
        buf_puts(conds, " AND (");
        sql_node(m, conds, q->tree);
        buf_putc(conds, ')');
    }
}

static const char *const proj_sql[] = {"*", "ts, host, c, tags.region",
                                       "event, v, msg, tags.dc, tags.level"};

static void gen_query(struct model *m, struct qspec *q, struct buf *sql)
{
    memset(q, 0, sizeof(*q));
    q->limit = -1;
    int shape = (int)rn(m, 8);
    if (rn(m, 40) == 0)
        shape = 8;
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

/* --- conditions: random trees of AND, OR, NOT and every predicate, their
 * SQL, and their value in three-valued logic, written from query/README.md
 * ("Conditions"), not from query/cond.c. Words split as model/words.h
 * documents; LIKE and MATCH's terms are matched here; regular expressions
 * are PCRE2's own (the engine the README names), with its flags. --- */

enum tv3 { V_F, V_T, V_U };

enum { C_TS, C_HOST, C_EVENT, C_TAG, C_FIELD, C_OUT };

struct lit {
    enum { L_INT, L_FLT, L_STR, L_BOOL } kind;
    int64_t i;
    double f;
    const char *s; /* a pool string: lives as long as the test */
    bool b;
};

enum xleaf { XL_CMP, XL_BETWEEN, XL_IN, XL_LIKE, XL_REGEX, XL_MATCH, XL_MATCH_ANY, XL_NULL };

#define XMAXV 5
#define XMAXK 4

struct xnode {
    enum { XN_AND, XN_OR, XN_NOT, XN_LEAF } kind;
    struct xnode *kid[XMAXK];
    size_t nkids;
    enum xleaf leaf;
    int col;          /* C_* */
    const char *name; /* a tag or field name */
    size_t out;       /* C_OUT (HAVING): the output item */
    char *ref;        /* C_OUT: how the SQL names it (owned) */
    bool neg;         /* NOT BETWEEN, NOT IN, NOT LIKE, !~, IS NOT NULL */
    int op;           /* XL_CMP: index into cmp_ops */
    struct lit v[XMAXV];
    size_t nv;
    char *pat; /* LIKE, REGEX, MATCH: the pattern or query (owned) */
    bool icase;
    pcre2_code *re;
    pcre2_match_data *md;
};

static const char *const cmp_ops[] = {"=", "!=", "<>", "<", "<=", ">", ">="};
enum { OP_EQ, OP_NE, OP_NE2, OP_LT, OP_LE, OP_GT, OP_GE };

static void xnode_free(struct xnode *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->nkids; i++)
        xnode_free(n->kid[i]);
    free(n->pat);
    free(n->ref);
    pcre2_match_data_free(n->md);
    pcre2_code_free(n->re);
    free(n);
}

/* The value a leaf reads. */
struct opnd {
    enum { O_MISSING, O_STR, O_INT, O_UINT, O_FLT, O_BOOL } kind;
    const char *s;
    size_t slen;
    int64_t i;
    uint64_t u;
    double f;
    bool b;
};

static void opnd_str(struct opnd *o, const char *s)
{
    o->kind = O_STR;
    o->s = s;
    o->slen = strlen(s);
}

static void row_opnd(const struct ref_row *r, int col, const char *name, struct opnd *o)
{
    memset(o, 0, sizeof(*o));
    switch (col) {
    case C_TS:
        o->kind = O_INT;
        o->i = r->ts;
        return;
    case C_HOST: opnd_str(o, r->host); return;
    case C_EVENT: opnd_str(o, r->event); return;
    case C_TAG: {
        const char *t = ref_tag(r, name);
        if (t)
            opnd_str(o, t);
        return;
    }
    default: break;
    }
    const struct fld *f = ref_field(r, name);
    if (!f)
        return;
    switch (f->type) {
    case REC_FLOAT: o->kind = O_FLT, o->f = f->f; break;
    case REC_INT: o->kind = O_INT, o->i = f->i; break;
    case REC_UINT: o->kind = O_UINT, o->u = f->u; break;
    case REC_BOOL: o->kind = O_BOOL, o->b = f->b; break;
    case REC_STRING: opnd_str(o, f->s); break;
    }
}

/* Numbers compare by value, exactly: a long double holds every int64,
 * uint64 and double. */
static long double opnd_ld(const struct opnd *o)
{
    return o->kind == O_INT ? (long double)o->i : o->kind == O_UINT ? (long double)o->u : o->f;
}

static int bytes_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    return c ? c : (an > bn) - (an < bn);
}

static bool op_true(int op, int c)
{
    switch (op) {
    case OP_EQ: return c == 0;
    case OP_NE:
    case OP_NE2: return c != 0;
    case OP_LT: return c < 0;
    case OP_LE: return c <= 0;
    case OP_GT: return c > 0;
    default: return c >= 0;
    }
}

static enum tv3 tv_of3(bool b)
{
    return b ? V_T : V_F;
}

static enum tv3 tv_not(enum tv3 v)
{
    return v == V_U ? V_U : v == V_T ? V_F : V_T;
}

static enum tv3 tv_and(enum tv3 a, enum tv3 b)
{
    if (a == V_F || b == V_F)
        return V_F;
    return a == V_U || b == V_U ? V_U : V_T;
}

static enum tv3 tv_or(enum tv3 a, enum tv3 b)
{
    if (a == V_T || b == V_T)
        return V_T;
    return a == V_U || b == V_U ? V_U : V_F;
}

/* col op literal: a kind the literal cannot compare with is unknown. */
static enum tv3 cmp3(const struct opnd *o, int op, const struct lit *l)
{
    int c;
    if (o->kind == O_MISSING)
        return V_U;
    if (o->kind == O_STR) {
        if (l->kind != L_STR)
            return V_U;
        c = bytes_cmp(o->s, o->slen, l->s, strlen(l->s));
    } else if (o->kind == O_BOOL) {
        if (l->kind != L_BOOL)
            return V_U;
        c = (int)o->b - (int)l->b;
    } else {
        if (l->kind != L_INT && l->kind != L_FLT)
            return V_U;
        long double a = opnd_ld(o), b = l->kind == L_INT ? (long double)l->i : l->f;
        c = (a > b) - (a < b);
    }
    return tv_of3(op_true(op, c));
}

static unsigned char fold_ascii(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/* LIKE: % any run of bytes, _ one byte, \ makes the next byte literal;
 * icase folds ASCII letters. */
static bool like_at(const char *p, size_t pn, const char *s, size_t sn, bool icase)
{
    size_t i = 0, j = 0;
    while (i < pn) {
        unsigned char c = (unsigned char)p[i];
        if (c == '%') {
            while (i < pn && p[i] == '%')
                i++;
            if (i == pn)
                return true;
            for (size_t k = j; k <= sn; k++)
                if (like_at(p + i, pn - i, s + k, sn - k, icase))
                    return true;
            return false;
        }
        if (j == sn)
            return false;
        if (c == '_') {
            i++, j++;
            continue;
        }
        if (c == '\\' && i + 1 < pn)
            c = (unsigned char)p[++i];
        unsigned char d = (unsigned char)s[j];
        if (icase ? fold_ascii(c) != fold_ascii(d) : c != d)
            return false;
        i++, j++;
    }
    return j == sn;
}

/* Words (model/words.h's split), compared with ASCII case folded. */
#define WMAX 512
struct wlist {
    struct slice w[WMAX];
    size_t n;
};

static bool wl_push(void *arg, struct slice w)
{
    struct wlist *l = arg;
    if (l->n < WMAX)
        l->w[l->n++] = w;
    return true;
}

static bool word_eq(struct slice a, struct slice b)
{
    if (a.len != b.len)
        return false;
    for (size_t i = 0; i < a.len; i++)
        if (fold_ascii((unsigned char)a.ptr[i]) != fold_ascii((unsigned char)b.ptr[i]))
            return false;
    return true;
}

/* The words of phrase, consecutive in text. */
static bool phrase_found(const char *text, size_t tn, struct slice phrase)
{
    static struct wlist t, p; /* big: not on the stack */
    t.n = p.n = 0;
    words_each(slice_make(text, tn), wl_push, &t);
    words_each(phrase, wl_push, &p);
    for (size_t i = 0; i + p.n <= t.n; i++) {
        bool ok = true;
        for (size_t j = 0; j < p.n && ok; j++)
            ok = word_eq(t.w[i + j], p.w[j]);
        if (ok)
            return true;
    }
    return false;
}

/* The terms of a MATCH query: "quoted phrases" and bare words. */
#define TMAX 8
static size_t match_terms(const char *q, struct slice *out)
{
    size_t n = 0, i = 0, len = strlen(q);
    while (i < len && n < TMAX) {
        if (q[i] == ' ' || q[i] == '\t') {
            i++;
            continue;
        }
        size_t j = i + 1;
        if (q[i] == '"') {
            while (j < len && q[j] != '"')
                j++;
            out[n++] = slice_make(q + i + 1, j - i - 1);
            i = j + 1;
            continue;
        }
        while (j < len && q[j] != ' ' && q[j] != '\t' && q[j] != '"')
            j++;
        out[n++] = slice_make(q + i, j - i);
        i = j;
    }
    return n;
}

static bool match_all(const char *q, const char *s, size_t sn)
{
    struct slice t[TMAX];
    size_t n = match_terms(q, t);
    for (size_t i = 0; i < n; i++)
        if (!phrase_found(s, sn, t[i]))
            return false;
    return true;
}

/* MATCH('...'): each term in some string of the row: host, event, a tag
 * value, a string field. */
static bool match_any(const struct ref_row *r, const char *q)
{
    struct slice t[TMAX];
    size_t n = match_terms(q, t);
    for (size_t i = 0; i < n; i++) {
        bool found = phrase_found(r->host, strlen(r->host), t[i]) ||
                     phrase_found(r->event, strlen(r->event), t[i]);
        for (size_t k = 0; k < r->nt && !found; k++)
            found = phrase_found(r->t[k].v, strlen(r->t[k].v), t[i]);
        for (size_t k = 0; k < r->nf && !found; k++)
            found = r->f[k].type == REC_STRING && phrase_found(r->f[k].s, strlen(r->f[k].s), t[i]);
        if (!found)
            return false;
    }
    return true;
}

static bool re_find(const struct xnode *n, const char *s, size_t sn)
{
    int rc = pcre2_match(n->re, (PCRE2_SPTR)s, sn, 0, 0, n->md, NULL);
    if (rc < 0 && rc != PCRE2_ERROR_NOMATCH)
        fail_msg("pcre2_match('%s') = %d", n->pat, rc);
    return rc >= 0;
}

/* An output value of an aggregate query (HAVING reads them). */
struct xval {
    enum { XV_NULL, XV_INT, XV_UINT, XV_FLOAT, XV_STR, XV_BOOL } kind;
    int64_t i;
    uint64_t u;
    double f;
    const char *s;
    size_t slen;
    bool b;
    bool loose;    /* a float sum or average: within a relative 1e-9 */
    double rel;    /* > 0: a percentile past the exact size: within rel */
    double lo, hi; /* ... and within the group's [min, max] */
    bool anynum;   /* a group key number: an integer or a float in the text */
};

static void xval_opnd(const struct xval *v, struct opnd *o)
{
    memset(o, 0, sizeof(*o));
    switch (v->kind) {
    case XV_NULL: break;
    case XV_INT: o->kind = O_INT, o->i = v->i; break;
    case XV_UINT: o->kind = O_UINT, o->u = v->u; break;
    case XV_FLOAT: o->kind = O_FLT, o->f = v->f; break;
    case XV_STR: o->kind = O_STR, o->s = v->s, o->slen = v->slen; break;
    case XV_BOOL: o->kind = O_BOOL, o->b = v->b; break;
    }
}

/* What a condition reads: a row (WHERE) or the output values (HAVING). */
struct ectx {
    const struct ref_row *r;
    const struct xval *vals;
};

static enum tv3 leaf3(const struct ectx *x, const struct xnode *n)
{
    if (n->leaf == XL_MATCH_ANY)
        return tv_of3(match_any(x->r, n->pat));
    struct opnd o;
    if (n->col == C_OUT)
        xval_opnd(&x->vals[n->out], &o);
    else
        row_opnd(x->r, n->col, n->name, &o);
    switch (n->leaf) {
    case XL_NULL: return tv_of3(o.kind == O_MISSING);
    case XL_CMP: return cmp3(&o, n->op, &n->v[0]);
    case XL_BETWEEN: return tv_and(cmp3(&o, OP_GE, &n->v[0]), cmp3(&o, OP_LE, &n->v[1]));
    case XL_IN: {
        enum tv3 acc = V_F;
        for (size_t i = 0; i < n->nv; i++)
            acc = tv_or(acc, cmp3(&o, OP_EQ, &n->v[i]));
        return acc;
    }
    default: break;
    }
    if (o.kind != O_STR)
        return V_U;
    switch (n->leaf) {
    case XL_LIKE: return tv_of3(like_at(n->pat, strlen(n->pat), o.s, o.slen, n->icase));
    case XL_REGEX: return tv_of3(re_find(n, o.s, o.slen));
    default: return tv_of3(match_all(n->pat, o.s, o.slen));
    }
}

static enum tv3 eval3(const struct ectx *x, const struct xnode *n)
{
    enum tv3 v;
    switch (n->kind) {
    case XN_LEAF: v = leaf3(x, n); return n->neg ? tv_not(v) : v;
    case XN_NOT: return tv_not(eval3(x, n->kid[0]));
    case XN_AND:
        v = V_T;
        for (size_t i = 0; i < n->nkids; i++)
            v = tv_and(v, eval3(x, n->kid[i]));
        return v;
    default:
        v = V_F;
        for (size_t i = 0; i < n->nkids; i++)
            v = tv_or(v, eval3(x, n->kid[i]));
        return v;
    }
}

/* --- generating conditions --- */

static char *buf_dup(struct buf *b)
{
    char *s = xstrdup(buf_cstr(b));
    buf_destroy(b);
    return s;
}

/* Keywords in a random case: they are case-insensitive. */
static const char *kw(struct model *m, const char *upper)
{
    static char tmp[8][32];
    static size_t k;
    if (rn(m, 4))
        return upper;
    char *t = tmp[k++ % 8];
    size_t i = 0;
    for (; upper[i] && i < 31; i++)
        t[i] = (char)((rn(m, 2) && upper[i] >= 'A' && upper[i] <= 'Z') ? upper[i] + 32 : upper[i]);
    t[i] = '\0';
    return t;
}

static void sql_str(struct buf *b, const char *s)
{
    buf_putc(b, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            buf_putc(b, '\'');
        buf_putc(b, *s);
    }
    buf_putc(b, '\'');
}

static void sql_lit(struct model *m, struct buf *b, const struct lit *l)
{
    switch (l->kind) {
    case L_INT: buf_printf(b, "%lld", (long long)l->i); break;
    case L_FLT: buf_printf(b, "%.17g", l->f); break;
    case L_STR: sql_str(b, l->s); break;
    case L_BOOL: buf_puts(b, kw(m, l->b ? "TRUE" : "FALSE")); break;
    }
}

static void sql_xcol(struct model *m, struct buf *b, const struct xnode *n)
{
    switch (n->col) {
    case C_TS: buf_puts(b, "ts"); break;
    case C_HOST: buf_puts(b, "host"); break;
    case C_EVENT: buf_puts(b, "event"); break;
    case C_TAG: buf_printf(b, "tags.%s", n->name); break;
    case C_OUT: buf_puts(b, n->ref); break;
    default:
        switch (rn(m, 4)) {
        case 0: buf_printf(b, "fields.%s", n->name); break;
        case 1: buf_printf(b, "\"%s\"", n->name); break;
        default: buf_puts(b, n->name); break;
        }
    }
}

static void sql_leaf(struct model *m, struct buf *b, const struct xnode *n)
{
    if (n->leaf == XL_MATCH_ANY) {
        buf_printf(b, "%s(", kw(m, "MATCH"));
        sql_str(b, n->pat);
        buf_putc(b, ')');
        return;
    }
    sql_xcol(m, b, n);
    switch (n->leaf) {
    case XL_CMP:
        buf_printf(b, " %s ", cmp_ops[n->op]);
        sql_lit(m, b, &n->v[0]);
        break;
    case XL_BETWEEN:
        buf_printf(b, "%s%s ", n->neg ? " NOT" : "", " BETWEEN");
        sql_lit(m, b, &n->v[0]);
        buf_printf(b, " %s ", kw(m, "AND"));
        sql_lit(m, b, &n->v[1]);
        break;
    case XL_IN:
        buf_printf(b, " %s%s (", n->neg ? "NOT " : "", kw(m, "IN"));
        for (size_t i = 0; i < n->nv; i++) {
            if (i)
                buf_puts(b, rn(m, 2) ? ", " : ",");
            sql_lit(m, b, &n->v[i]);
        }
        buf_putc(b, ')');
        break;
    case XL_LIKE:
        buf_printf(b, " %s%s ", n->neg ? "NOT " : "", kw(m, n->icase ? "ILIKE" : "LIKE"));
        sql_str(b, n->pat);
        break;
    case XL_REGEX:
        if (!n->icase && rn(m, 3) == 0)
            buf_printf(b, " %s%s ", n->neg ? "NOT " : "", kw(m, "REGEXP"));
        else
            buf_printf(b, " %s%s ", n->neg ? "!~" : "~", n->icase ? "*" : "");
        sql_str(b, n->pat);
        break;
    case XL_MATCH:
        buf_printf(b, " %s ", kw(m, "MATCH"));
        sql_str(b, n->pat);
        break;
    default: buf_printf(b, " IS %sNULL", n->neg ? "NOT " : ""); break;
    }
}

static void sql_node(struct model *m, struct buf *b, const struct xnode *n)
{
    switch (n->kind) {
    case XN_LEAF:
        if (rn(m, 8) == 0) {
            buf_putc(b, '(');
            sql_leaf(m, b, n);
            buf_putc(b, ')');
        } else {
            sql_leaf(m, b, n);
        }
        return;
    case XN_NOT:
        buf_printf(b, "%s ", kw(m, "NOT"));
        if (n->kid[0]->kind == XN_LEAF || n->kid[0]->kind == XN_NOT) {
            sql_node(m, b, n->kid[0]);
        } else {
            buf_putc(b, '(');
            sql_node(m, b, n->kid[0]);
            buf_putc(b, ')');
        }
        return;
    default: break;
    }
    for (size_t i = 0; i < n->nkids; i++) {
        const struct xnode *k = n->kid[i];
        if (i)
            buf_printf(b, " %s ", kw(m, n->kind == XN_AND ? "AND" : "OR"));
        /* an OR inside an AND needs its parentheses; others may have them */
        bool paren = (n->kind == XN_AND && k->kind == XN_OR) ||
                     ((k->kind == XN_AND || k->kind == XN_OR) && rn(m, 2));
        if (paren)
            buf_putc(b, '(');
        sql_node(m, b, k);
        if (paren)
            buf_putc(b, ')');
    }
}

/* Words of every string the rows may hold, to search for, plus some that
 * no row has. */
#define NWORDS_MAX 400
static char word_pool[NWORDS_MAX][48];
static size_t nwords;

static bool pool_add_word(void *arg, struct slice w)
{
    (void)arg;
    if (nwords == NWORDS_MAX || w.len >= sizeof(word_pool[0]))
        return true;
    for (size_t i = 0; i < nwords; i++)
        if (strlen(word_pool[i]) == w.len && memcmp(word_pool[i], w.ptr, w.len) == 0)
            return true;
    memcpy(word_pool[nwords], w.ptr, w.len);
    word_pool[nwords++][w.len] = '\0';
    return true;
}

static const char *tag_values[] = {"eu", "us", "ap", "d1", "d2", "z9", "info", "warn"};

static void init_words(void)
{
    static const char *extra[] = {"timeouts", "nope", "Fox", "CPU", "GET200", "E1"};
    nwords = 0;
    const char *rare[NRARE];
    for (size_t i = 0; i < NRARE; i++)
        rare[i] = rare_msgs[i];
    const char **pools[] = {msgs, point_strs, hosts, events, tag_values, extra, x_strs, rare};
    const size_t sizes[] = {NELEM(msgs),  NELEM(point_strs), NH,   NE, NELEM(tag_values),
                            NELEM(extra), NELEM(x_strs),     NRARE};
    for (size_t p = 0; p < NELEM(pools); p++)
        for (size_t i = 0; i < sizes[p]; i++)
            words_each(slice_cstr(pools[p][i]), pool_add_word, NULL);
}

/* A string a column may hold (host, event, a tag, msg, s, x), or now and
 * then one of another column. */
static const char *col_string(struct model *m, int col, const char *name)
{
    static const char *levels[] = {"info", "warn"};
    static const char *dcs[] = {"d1", "d2"};
    if (rn(m, 8) == 0)
        col = C_FIELD, name = "msg";
    switch (col) {
    case C_HOST: return hosts[rn(m, NH)];
    case C_EVENT: return events[rn(m, NE)];
    case C_TAG:
        if (strcmp(name, "region") == 0)
            return regions[rn(m, NELEM(regions))];
        if (strcmp(name, "level") == 0)
            return levels[rn(m, NELEM(levels))];
        if (strcmp(name, "dc") == 0)
            return dcs[rn(m, NELEM(dcs))];
        return "z9";
    default: break;
    }
    if (strcmp(name, "s") == 0)
        return point_strs[rn(m, NELEM(point_strs))];
    if (strcmp(name, "x") == 0)
        return x_strs[rn(m, NELEM(x_strs))];
    return rn(m, 6) ? msgs[rn(m, NELEM(msgs))] : rare_msgs[rn(m, NRARE)];
}

/* A LIKE pattern for src: a random part of it, some bytes made '_', '%'
 * around (or the end anchored), '%', '_' and '\' escaped; for ILIKE some
 * letters in the other case. */
static char *like_pattern(struct model *m, const char *src, bool icase)
{
    static const char *fixed[] = {"%",     "",        "_",      "%_%", "h_",     "%e%",   "\\%",
                                  "%\\_%", "%50\\%%", "%\\\\%", "e_",  "%.load", "%a_b%", "__"};
    if (rn(m, 8) == 0)
        return xstrdup(fixed[rn(m, NELEM(fixed))]);
    struct buf b = BUF_INIT;
    size_t n = strlen(src), a = rn(m, n + 1), e = a + rn(m, n - a + 1);
    if (e - a > 24 && rn(m, 2))
        e = a + rn(m, 24);
    if (a > 0 || rn(m, 2))
        buf_putc(&b, '%');
    size_t mid = e > a + 2 && rn(m, 4) == 0 ? a + 1 + rn(m, e - a - 1) : 0;
    for (size_t i = a; i < e; i++) {
        if (i == mid)
            buf_putc(&b, '%');
        unsigned char c = (unsigned char)src[i];
        if (rn(m, 10) == 0) {
            buf_putc(&b, '_');
            continue;
        }
        if (c == '%' || c == '_' || c == '\\')
            buf_putc(&b, '\\');
        if (icase && rn(m, 2) && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
            c ^= 0x20;
        buf_putc(&b, (char)c);
    }
    if (e < n || rn(m, 2))
        buf_putc(&b, '%');
    return buf_dup(&b);
}

static const char *regex_pool[] = {
    "^GET",        "error|timeout", "[0-9]{3}",   "time.?out", "^h[12]$", "^$",
    "\\bdisk\\b",  "caf\xc3\xa9",   "caf.$",      "(?i)warn",  "e[0-9]",  "^web-\\d+$",
    "reset.*peer", "\\d+%",         "a_b",        "^[^ ]+$",   ".",       "cpu\\.load",
    "ERROR",       "^[a-z]+$",      "\\s{2}",     "\"",        "\\\\",    "\\n",
    "u$",          "^.{100,}$",     "(fox|dog) ", "^the",      "\\t",     "^E\\d$",
    "^(eu|us)$",   "it's",
};

static char *regex_pattern(struct model *m)
{
    if (rn(m, 4))
        return xstrdup(regex_pool[rn(m, NELEM(regex_pool))]);
    /* a word of the pool, whole or at the start */
    const char *w = word_pool[rn(m, nwords)];
    struct buf b = BUF_INIT;
    if (rn(m, 2))
        buf_printf(&b, "\\b%s\\b", w);
    else
        buf_printf(&b, "^%s", w);
    return buf_dup(&b);
}

static void compile_regex(struct xnode *n)
{
    int code;
    PCRE2_SIZE off;
    uint32_t flags = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | (n->icase ? PCRE2_CASELESS : 0);
    n->re = pcre2_compile((PCRE2_SPTR)n->pat, PCRE2_ZERO_TERMINATED, flags, &code, &off, NULL);
    if (!n->re)
        fail_msg("test regex '%s' does not compile (%d at %zu)", n->pat, code, (size_t)off);
    n->md = pcre2_match_data_create_from_pattern(n->re, NULL);
}

/* A MATCH query: 1-3 terms, each a word or a "phrase" of 1-3 consecutive
 * words of a string the column holds, in any case. */
static char *match_query(struct model *m, int col, const char *name)
{
    struct buf b = BUF_INIT;
    size_t nt = 1 + rn(m, 3);
    for (size_t t = 0; t < nt; t++) {
        if (t)
            buf_puts(&b, rn(m, 4) ? " " : "  ");
        if (rn(m, 10) < 6) {
            const char *w = word_pool[rn(m, nwords)];
            for (const char *p = w; *p; p++)
                buf_putc(&b, (char)(rn(m, 6) == 0 && *p >= 'a' && *p <= 'z' ? *p - 32 : *p));
            continue;
        }
        static struct wlist wl;
        const char *src = col_string(m, col, name);
        wl.n = 0;
        words_each(slice_cstr(src), wl_push, &wl);
        if (!wl.n) {
            buf_puts(&b, "fox");
            continue;
        }
        size_t a = rn(m, wl.n), k = 1 + rn(m, 3);
        if (a + k > wl.n)
            k = wl.n - a;
        buf_putc(&b, '"');
        for (size_t i = 0; i < k; i++) {
            if (i)
                buf_putc(&b, ' ');
            for (size_t j = 0; j < wl.w[a + i].len; j++) {
                char c = wl.w[a + i].ptr[j];
                buf_putc(&b, (char)(rn(m, 5) == 0 && c >= 'a' && c <= 'z' ? c - 32 : c));
            }
        }
        buf_putc(&b, '"');
    }
    return buf_dup(&b);
}

static const struct ref_row *any_row(struct model *m)
{
    return m->n ? &m->rows[rn(m, m->n)] : NULL;
}

/* A number for a numeric column: often the value of some row (equality
 * hits), else from the column's range; an int or a float. */
static struct lit num_lit(struct model *m, const char *name)
{
    struct lit l = {.kind = L_INT};
    const struct ref_row *r = any_row(m);
    const struct fld *f = r && name ? ref_field(r, name) : NULL;
    if (f && rn(m, 2)) {
        switch (f->type) {
        case REC_FLOAT: l.kind = L_FLT, l.f = f->f; return l;
        case REC_INT: l.i = f->i; return l;
        case REC_UINT:
            if (f->u <= INT64_MAX) {
                l.i = (int64_t)f->u;
                return l;
            }
            break;
        default: break;
        }
    }
    if (rn(m, 3) == 0) {
        l.kind = L_FLT;
        l.f = (double)((int64_t)rn(m, 2400) - 400) / 4.0;
        return l;
    }
    l.i = rn(m, 3) ? (int64_t)rn(m, 600) - 100 : (int64_t)rn(m, 10);
    return l;
}

/* A literal for column (col, name); sometimes of another kind (unknown). */
static struct lit col_lit(struct model *m, int col, const char *name)
{
    struct lit l = {.kind = L_STR};
    bool str_col = col == C_HOST || col == C_EVENT || col == C_TAG;
    bool num = !str_col && name &&
               (strcmp(name, "v") == 0 || strcmp(name, "c") == 0 || strcmp(name, "u") == 0);
    bool is_x = !str_col && name && strcmp(name, "x") == 0;
    if (!str_col && rn(m, 8) == 0)
        num = !num; /* a string against a number, or the reverse */
    if (num || (is_x && rn(m, 3) == 0))
        return num_lit(m, is_x ? "x" : name);
    l.s = col_string(m, col, name);
    return l;
}

static struct xnode *leaf_new(int col, const char *name, enum xleaf leaf)
{
    struct xnode *n = xcalloc(1, sizeof(*n));
    n->kind = XN_LEAF;
    n->col = col;
    n->name = name;
    n->leaf = leaf;
    return n;
}

/* A ts literal: a ts of the pool, or one step beside. */
static struct lit ts_lit(struct model *m)
{
    struct lit l = {.kind = L_INT};
    l.i = rand_ts(m) + (rn(m, 4) == 0 ? (int64_t)rn(m, 3) - 1 : 0);
    return l;
}

static struct xnode *gen_ts_leaf(struct model *m)
{
    struct xnode *n = leaf_new(C_TS, NULL, XL_CMP);
    size_t k = rn(m, 10);
    if (k < 6) {
        n->op = (int)rn(m, NELEM(cmp_ops));
        n->v[0] = ts_lit(m);
    } else if (k < 9) {
        n->leaf = XL_BETWEEN;
        n->neg = rn(m, 4) == 0;
        n->v[0] = ts_lit(m);
        n->v[1] = ts_lit(m);
        if (n->v[0].i > n->v[1].i && rn(m, 4)) {
            struct lit t = n->v[0];
            n->v[0] = n->v[1];
            n->v[1] = t;
        }
    } else {
        n->leaf = XL_IN;
        n->neg = rn(m, 3) == 0;
        n->nv = 1 + rn(m, 3);
        for (size_t i = 0; i < n->nv; i++)
            n->v[i] = ts_lit(m);
    }
    return n;
}

/* A random predicate over the rows' columns. */
static struct xnode *gen_leaf(struct model *m, bool allow_ts)
{
    static const struct {
        int col;
        const char *name;
    } cols[] = {
        {C_HOST, NULL},  {C_EVENT, NULL},  {C_TAG, "region"},    {C_TAG, "level"},
        {C_TAG, "dc"},   {C_FIELD, "msg"}, {C_FIELD, "msg"},     {C_FIELD, "msg"},
        {C_FIELD, "s"},  {C_FIELD, "v"},   {C_FIELD, "c"},       {C_FIELD, "u"},
        {C_FIELD, "ok"}, {C_FIELD, "x"},   {C_FIELD, "nothere"},
    };
    if (allow_ts && rn(m, 12) == 0)
        return gen_ts_leaf(m);
    if (rn(m, 10) == 0) {
        struct xnode *n = leaf_new(C_FIELD, NULL, XL_MATCH_ANY);
        n->pat = match_query(m, C_FIELD, "msg");
        return n;
    }
    size_t c = rn(m, NELEM(cols));
    int col = cols[c].col;
    const char *name = cols[c].name;
    bool key = col == C_HOST || col == C_EVENT || col == C_TAG;
    bool num = name && (strcmp(name, "v") == 0 || strcmp(name, "c") == 0 || strcmp(name, "u") == 0);
    bool is_bool = name && strcmp(name, "ok") == 0;
    struct xnode *n = leaf_new(col, name, XL_CMP);
    size_t k = rn(m, 100);
    if (is_bool) { /* = or != true/false, IS NULL, or a pattern (unknown) */
        if (k < 60) {
            n->op = (int)rn(m, 3);
            n->v[0] = (struct lit){.kind = L_BOOL, .b = rn(m, 2)};
            if (rn(m, 8) == 0)
                n->v[0] = num_lit(m, NULL);
            return n;
        }
        if (k < 80) {
            n->leaf = XL_NULL;
            n->neg = rn(m, 2);
            return n;
        }
        n->leaf = XL_LIKE;
        n->pat = xstrdup("%t%");
        return n;
    }
    /* kinds by share: CMP, BETWEEN, IN, LIKE, REGEX, MATCH, NULL */
    static const int str_share[] = {22, 5, 11, 22, 16, 15, 9};
    static const int num_share[] = {42, 15, 15, 5, 5, 5, 13};
    const int *share = num ? num_share : str_share;
    int kind = 0;
    for (int acc = share[0]; (int)k >= acc && kind < 6; acc += share[++kind])
        ;
    if (kind == 6 && (col == C_HOST || col == C_EVENT))
        kind = 0; /* host and event are never null */
    switch (kind) {
    case 0:
        n->op = (int)rn(m, NELEM(cmp_ops));
        n->v[0] = col_lit(m, col, name);
        break;
    case 1:
        n->leaf = XL_BETWEEN;
        n->neg = rn(m, 3) == 0;
        n->v[0] = col_lit(m, col, name);
        n->v[1] = n->v[0].kind == L_STR ? (struct lit){.kind = L_STR, .s = col_string(m, col, name)}
                                        : num_lit(m, name);
        if (!key && n->v[0].kind == L_STR && rn(m, 2) == 0)
            n->v[1] = num_lit(m, name); /* mixed bounds: one is unknown */
        break;
    case 2: {
        n->leaf = XL_IN;
        n->neg = rn(m, 3) == 0;
        n->nv = 1 + rn(m, XMAXV);
        bool strs = key || (num ? rn(m, 8) == 0 : rn(m, 8) != 0);
        for (size_t i = 0; i < n->nv; i++)
            n->v[i] = strs ? (struct lit){.kind = L_STR, .s = col_string(m, col, name)}
                           : num_lit(m, num ? name : "c");
        break;
    }
    case 3:
        n->leaf = XL_LIKE;
        n->neg = rn(m, 4) == 0;
        n->icase = rn(m, 3) == 0;
        n->pat = like_pattern(m, col_string(m, col, name), n->icase);
        break;
    case 4:
        n->leaf = XL_REGEX;
        n->neg = rn(m, 4) == 0;
        n->icase = rn(m, 3) == 0;
        n->pat = regex_pattern(m);
        compile_regex(n);
        break;
    case 5:
        n->leaf = XL_MATCH;
        n->pat = match_query(m, col, name ? name : "msg");
        break;
    default:
        n->leaf = XL_NULL;
        n->neg = rn(m, 2);
        break;
    }
    return n;
}

static struct xnode *gen_tree(struct model *m, int depth, bool allow_ts)
{
    if (depth <= 0 || rn(m, 5) < 2)
        return gen_leaf(m, allow_ts);
    struct xnode *n = xcalloc(1, sizeof(*n));
    size_t k = rn(m, 10);
    if (k < 2) {
        n->kind = XN_NOT;
        n->kid[0] = gen_tree(m, depth - 1, allow_ts);
        n->nkids = 1;
        return n;
    }
    n->kind = k < 6 ? XN_AND : XN_OR;
    n->nkids = 2 + rn(m, 2);
    for (size_t i = 0; i < n->nkids; i++)
        n->kid[i] = gen_tree(m, depth - 1, allow_ts);
    return n;
}

static struct xnode *node_of(int kind, struct xnode *a, struct xnode *b)
{
    struct xnode *n = xcalloc(1, sizeof(*n));
    n->kind = kind;
    n->kid[n->nkids++] = a;
    if (b)
        n->kid[n->nkids++] = b;
    return n;
}

/* Shape 6: an OR of branches that each fix hosts (an INDEX over their
 * union); shape 7: an OR of branches that each bound ts (a SCAN over their
 * hull); shape 8: an OR that narrows nothing (a refused full scan). */
static struct xnode *gen_or_shape(struct model *m, int shape)
{
    struct xnode * or = xcalloc(1, sizeof(* or));
    or->kind = XN_OR;
    or->nkids = 2 + rn(m, 2);
    for (size_t i = 0; i < or->nkids; i++) {
        struct xnode *fix;
        if (shape == 6 || (shape == 8 && i == 0)) {
            fix = leaf_new(C_HOST, NULL, XL_IN);
            fix->nv = 1 + rn(m, 2);
            for (size_t k = 0; k < fix->nv; k++)
                fix->v[k] = (struct lit){.kind = L_STR, .s = hosts[rn(m, NH)]};
            if (fix->nv == 1 && rn(m, 2))
                fix->leaf = XL_CMP, fix->op = OP_EQ;
        } else if (shape == 7) {
            fix = leaf_new(C_TS, NULL, XL_BETWEEN);
            fix->v[0] = ts_lit(m);
            fix->v[1] = ts_lit(m);
            if (rn(m, 3) == 0)
                fix->leaf = XL_CMP, fix->op = rn(m, 2) ? OP_GE : OP_GT;
        } else { /* shape 8: a branch that fixes neither ts nor host */
            fix = leaf_new(C_FIELD, "c", XL_CMP);
            fix->op = OP_GT;
            fix->v[0] = num_lit(m, "c");
        }
        struct xnode *rest = shape != 8 && rn(m, 3) ? gen_tree(m, 2, true) : NULL;
        if (shape == 6 && rn(m, 3) == 0)
            rest = rest ? node_of(XN_AND, gen_ts_leaf(m), rest) : gen_ts_leaf(m);
        or->kid[i] = rest ? node_of(XN_AND, fix, rest) : fix;
    }
    return or ;
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
    struct ectx x = {r, NULL};
    if (q->tree && eval3(&x, q->tree) != V_T)
        return false;
    if (q->search && eval3(&x, q->search) != V_T)
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

/* Reads a cursor whole in random-sized pieces; frees it. */
static int drain(struct model *m, struct query_cursor *c, struct buf *out)
{
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

/* Runs sql through a cursor, reading in random-sized pieces. */
static int run_sql(struct model *m, const char *sql, enum query_format fmt, struct buf *out,
                   struct buf *err)
{
    struct query_opts o;
    query_opts_default(&o);
    o.now_ns = NOW;
    o.format = fmt;
    o.max_groups = m->max_groups;
    /* these databases are small: most queries that may split into two
     * threads do, the others read on one */
    o.split_min_rows = rn(m, 4) ? 1 : 1000000;
    struct query_cursor *c;
    int rc = query_sql_open(m->s, sql, strlen(sql), &o, &c, err);
    if (rc)
        return rc;
    return drain(m, c, out);
}

/* The parameter form (GET /api/v1/query): name=value pairs. */
struct params {
    const char *k[8], *v[8];
    size_t n;
};

static const char *param_get(void *arg, const char *name)
{
    const struct params *p = arg;
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->k[i], name) == 0)
            return p->v[i];
    return NULL;
}

static void param_add(struct params *p, const char *k, const char *v)
{
    p->k[p->n] = k;
    p->v[p->n++] = v;
}

/* The same query through the parameter form: its WHERE as where=, a
 * search= more (the reference ANDs MATCH('...') of it), order=, limit=. */
static int run_params(struct model *m, struct qspec *q, const char *where, struct buf *desc,
                      struct buf *out, struct buf *err)
{
    struct params p = {.n = 0};
    char lim[32];
    param_add(&p, "db", m->db);
    param_add(&p, "where", where);
    if (q->shape == 4)
        param_add(&p, "full_scan", "true");
    if (q->order)
        param_add(&p, "order", q->order > 0 ? "asc" : "desc");
    if (q->limit == 0)
        q->limit = -1; /* limit=0 is no limit here */
    if (q->limit > 0) {
        snprintf(lim, sizeof(lim), "%lld", (long long)q->limit);
        param_add(&p, "limit", lim);
    }
    if (rn(m, 2)) {
        q->search = xcalloc(1, sizeof(*q->search));
        q->search->kind = XN_LEAF;
        q->search->leaf = XL_MATCH_ANY;
        q->search->pat = match_query(m, C_FIELD, "msg");
        param_add(&p, "search", q->search->pat);
    }
    for (size_t i = 0; i < p.n; i++)
        buf_printf(desc, "%s%s=%s", i ? "&" : "GET /api/v1/query?", p.k[i], p.v[i]);
    struct query_opts o;
    query_opts_default(&o);
    o.now_ns = NOW;
    struct query_cursor *c;
    int rc = query_params_open(m->s, param_get, &p, &o, &c, err);
    if (rc)
        return rc;
    return drain(m, c, out);
}

/* Adds the blocks EXPLAIN ANALYZE says sql read and skipped. */
static void note_blocks(struct model *m, const char *sql)
{
    struct buf ex = BUF_INIT, out = BUF_INIT, err = BUF_INIT;
    buf_printf(&ex, "EXPLAIN ANALYZE %s", sql);
    int rc = run_sql(m, buf_cstr(&ex), QUERY_NDJSON, &out, &err);
    if (rc)
        fail_msg("%s\n -> rc %d %s", buf_cstr(&ex), rc, buf_cstr(&err));
    json_error_t je;
    json_t *doc = json_loads(buf_cstr(&out), 0, &je);
    json_t *an = doc ? json_object_get(doc, "analyze") : NULL;
    json_t *rd = an ? json_object_get(an, "blocks_read") : NULL;
    json_t *sk = an ? json_object_get(an, "blocks_skipped") : NULL;
    if (!json_is_integer(rd) || !json_is_integer(sk))
        fail_msg("%s\n -> %s: no analyze.blocks_read and blocks_skipped", buf_cstr(&ex),
                 buf_cstr(&out));
    m->blocks_read += (uint64_t)json_integer_value(rd);
    m->blocks_skipped += (uint64_t)json_integer_value(sk);
    json_decref(doc);
    buf_destroy(&ex);
    buf_destroy(&out);
    buf_destroy(&err);
}

/* Searches for rare words, in a log-only database flushed and compacted:
 * their counts against the reference, and the blocks EXPLAIN ANALYZE says
 * they passed over. */
static void check_rare(struct model *m, struct store_db *db)
{
    assert_int_equal(store_db_flush(db), 0);
    assert_int_equal(store_db_compact(db), 0);
    for (size_t k = 0; k < 8; k++) {
        struct qspec q;
        memset(&q, 0, sizeof(q));
        q.count = true;
        q.limit = -1;
        q.tree = leaf_new(C_FIELD, NULL, XL_MATCH_ANY);
        struct buf pat = BUF_INIT, sql = BUF_INIT, got = BUF_INIT, want = BUF_INIT, err = BUF_INIT;
        buf_printf(&pat, "zq%zu", rn(m, NRARE));
        q.tree->pat = buf_dup(&pat);
        buf_printf(&sql, "SELECT COUNT(*) FROM %s WHERE ts >= %lld AND MATCH('%s')", m->db,
                   (long long)(NOW - TS_POOL * m->ts_step), q.tree->pat);
        int rc = run_sql(m, buf_cstr(&sql), QUERY_NDJSON, &got, &err);
        if (rc)
            fail_msg("%s\n -> rc %d %s", buf_cstr(&sql), rc, buf_cstr(&err));
        expected_output(m, &q, &want);
        if (strcmp(buf_cstr(&got), buf_cstr(&want)) != 0)
            fail_msg("%s\n got %s want %s", buf_cstr(&sql), buf_cstr(&got), buf_cstr(&want));
        note_blocks(m, buf_cstr(&sql));
        xnode_free(q.tree);
        buf_destroy(&sql);
        buf_destroy(&got);
        buf_destroy(&want);
        buf_destroy(&err);
    }
}

static void check_query(struct model *m)
{
    struct qspec q;
    struct buf sql = BUF_INIT, got = BUF_INIT, want = BUF_INIT, err = BUF_INIT;
    gen_query(m, &q, &sql);
    int rc;
    if (!q.count && !q.cols && q.shape != 8 && rn(m, 6) == 0) {
        const char *w = strstr(buf_cstr(&sql), " WHERE ");
        char *where = xstrdup(w ? w + 7 : "");
        char *cut = strstr(where, " ORDER BY ");
        if (!cut)
            cut = strstr(where, " LIMIT ");
        if (cut)
            *cut = '\0';
        buf_reset(&sql);
        rc = run_params(m, &q, where, &sql, &got, &err);
        free(where);
        m->param_queries++;
    } else {
        rc = run_sql(m, buf_cstr(&sql), QUERY_NDJSON, &got, &err);
    }
    if (q.shape == 8) { /* an OR that narrows nothing: a full scan, refused */
        if (rc != ERR_INVAL || !strstr(buf_cstr(&err), "full scan refused"))
            fail_msg("%s\n -> rc %d %s; want the full scan refused", buf_cstr(&sql), rc,
                     buf_cstr(&err));
        m->refused++;
        goto done;
    }
    if (rc)
        fail_msg("%s\n -> rc %d %s", buf_cstr(&sql), rc, buf_cstr(&err));
    expected_output(m, &q, &want);
    if (strcmp(buf_cstr(&got), buf_cstr(&want)) != 0)
        fail_msg("db %s (%s, %u buckets) query %zu:\n%s\n got:\n%s\n want:\n%s", m->db,
                 m->desc ? "desc" : "asc", m->buckets, m->queries, buf_cstr(&sql), buf_cstr(&got),
                 buf_cstr(&want));
    m->queries++;
    m->nonempty += want.len > 0 && !q.count;
    m->tree_nonempty += want.len > 0 && !q.count && q.tree;
    if (m->point_pct == 0 && q.tree && strncmp(buf_cstr(&sql), "SELECT", 6) == 0 && rn(m, 3) == 0)
        note_blocks(m, buf_cstr(&sql));
done:
    xnode_free(q.tree);
    xnode_free(q.search);
    buf_destroy(&sql);
    buf_destroy(&got);
    buf_destroy(&want);
    buf_destroy(&err);
}

/* --- aggregate queries: GROUP BY keys and time buckets, every aggregate,
 * HAVING, ORDER BY, LIMIT, FILL, max_groups; the reference follows
 * query/README.md ("Aggregates") and query/agg.h's rules, computed here
 * over the reference rows (not with query/agg.c). --- */

enum { A_COUNT_STAR, A_COUNT, A_SUM, A_AVG, A_MIN, A_MAX, A_FIRST, A_LAST, A_PCT };
static const char *const agg_sql[] = {"COUNT", "COUNT", "SUM",  "AVG",       "MIN",
                                      "MAX",   "FIRST", "LAST", "PERCENTILE"};
static const char *const agg_out[] = {"count", "count", "sum",  "avg",       "min",
                                      "max",   "first", "last", "percentile"};

enum { I_KEY, I_AGG, I_BUCKET };

struct aitem {
    int kind;
    int fn;
    int col;          /* key or argument column */
    const char *name; /* its tag or field name */
    double p;
    bool median;
    bool hidden;    /* added by GROUP BY, HAVING or ORDER BY */
    char alias[16]; /* "" if none */
    char out[96];   /* output name: alias, or the canonical text */
    char expr[128]; /* the SQL of the item */
};

#define AMAX_ITEMS 16
#define AMAX_KEYS 4

struct aspec {
    struct aitem it[AMAX_ITEMS];
    size_t nit, nvis;       /* items; the first nvis are selected */
    size_t keys[AMAX_KEYS]; /* GROUP BY: non-bucket key items, in GROUP BY order */
    size_t nkeys;
    bool grouped; /* a GROUP BY */
    bool has_bucket;
    size_t bucket; /* the bucket's item */
    int64_t width, offset;
    int fill; /* 0 none, 1 NULL, 2 0, 3 PREVIOUS */
    struct xnode *having;
    size_t ord[3];
    bool ord_desc[3];
    size_t nord;
    int64_t limit; /* -1: none */
    int64_t max_groups;
    bool plain_count; /* SELECT COUNT(*) alone: {"count":N} */
};

static const struct {
    int col;
    const char *name;
} key_cols[] = {{C_HOST, NULL},   {C_EVENT, NULL}, {C_TAG, "region"},
                {C_TAG, "level"}, {C_FIELD, "s"},  {C_FIELD, "msg"},
                {C_FIELD, "x"},   {C_FIELD, "c"},  {C_FIELD, "ok"}};

static const struct {
    int col;
    const char *name;
} arg_cols[] = {{C_FIELD, "v"}, {C_FIELD, "v"}, {C_FIELD, "c"},       {C_FIELD, "c"},
                {C_FIELD, "u"}, {C_FIELD, "s"}, {C_FIELD, "msg"},     {C_FIELD, "ok"},
                {C_FIELD, "x"}, {C_FIELD, "x"}, {C_FIELD, "nothere"}, {C_TAG, "region"},
                {C_HOST, NULL}, {C_TS, NULL}};

static void col_text(int col, const char *name, char *out, size_t n)
{
    switch (col) {
    case C_TS: snprintf(out, n, "ts"); break;
    case C_HOST: snprintf(out, n, "host"); break;
    case C_EVENT: snprintf(out, n, "event"); break;
    case C_TAG: snprintf(out, n, "tags.%s", name); break;
    default: snprintf(out, n, "%s", name); break;
    }
}

/* A column as SQL writes it (a field may be fields.x or x). */
static void col_sql(struct model *m, int col, const char *name, char *out, size_t n)
{
    if (col == C_FIELD && rn(m, 3) == 0)
        snprintf(out, n, "fields.%s", name);
    else
        col_text(col, name, out, n);
}

static void dur_text(int64_t ns, char *out, size_t n)
{
    if (ns % 3600000000000LL == 0)
        snprintf(out, n, "%lldh", (long long)(ns / 3600000000000LL));
    else if (ns % 60000000000LL == 0)
        snprintf(out, n, "%lldm", (long long)(ns / 60000000000LL));
    else if (ns % 1000000000LL == 0)
        snprintf(out, n, "%llds", (long long)(ns / 1000000000LL));
    else
        snprintf(out, n, "%lldms", (long long)(ns / 1000000LL));
}

static bool item_same(const struct aitem *a, const struct aitem *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == I_BUCKET)
        return true;
    if (a->kind == I_KEY)
        return a->col == b->col && (!a->name || strcmp(a->name, b->name) == 0);
    if (a->fn != b->fn || (a->fn == A_PCT && a->p != b->p))
        return false;
    return a->fn == A_COUNT_STAR ||
           (a->col == b->col && (!a->name || strcmp(a->name, b->name) == 0));
}

/* A random aggregate (not yet an item). */
static void gen_agg_item(struct model *m, struct aitem *it)
{
    static const double pcts[] = {0, 1, 25, 50, 70, 90, 95, 99, 99.9, 100};
    memset(it, 0, sizeof(*it));
    it->kind = I_AGG;
    it->fn = (int)rn(m, 9);
    size_t c = rn(m, NELEM(arg_cols));
    if ((it->fn == A_SUM || it->fn == A_AVG || it->fn == A_PCT) && rn(m, 4))
        c = rn(m, 5); /* mostly numbers */
    it->col = arg_cols[c].col;
    it->name = arg_cols[c].name;
    char col[48], csql[48];
    col_text(it->col, it->name, col, sizeof(col));
    col_sql(m, it->col, it->name, csql, sizeof(csql));
    const char *fn = kw(m, agg_sql[it->fn]);
    if (it->fn == A_COUNT_STAR) {
        snprintf(it->out, sizeof(it->out), "count");
        snprintf(it->expr, sizeof(it->expr), "%s(*)", fn);
    } else if (it->fn == A_PCT) {
        it->median = rn(m, 5) == 0;
        it->p = it->median ? 50 : pcts[rn(m, NELEM(pcts))];
        if (it->median) {
            snprintf(it->out, sizeof(it->out), "median(%s)", col);
            snprintf(it->expr, sizeof(it->expr), "%s(%s)", kw(m, "MEDIAN"), csql);
        } else {
            snprintf(it->out, sizeof(it->out), "percentile(%s,%g)", col, it->p);
            snprintf(it->expr, sizeof(it->expr), "%s(%s, %g)", fn, csql, it->p);
        }
    } else {
        snprintf(it->out, sizeof(it->out), "%s(%s)", agg_out[it->fn], col);
        snprintf(it->expr, sizeof(it->expr), "%s(%s)", fn, csql);
    }
}

static size_t add_item(struct aspec *a, const struct aitem *it)
{
    assert_true(a->nit < AMAX_ITEMS);
    a->it[a->nit] = *it;
    return a->nit++;
}

/* An item for HAVING or ORDER BY to name: one of the items, or an
 * aggregate not selected (an item added hidden, or found again). */
static size_t pick_ref_item(struct model *m, struct aspec *a)
{
    if (rn(m, 3) == 0 && a->nit < AMAX_ITEMS - 1) {
        struct aitem it;
        gen_agg_item(m, &it);
        for (size_t i = 0; i < a->nit; i++)
            if (item_same(&a->it[i], &it))
                return i;
        it.hidden = true;
        return add_item(a, &it);
    }
    return rn(m, a->nit);
}

/* The COUNT(*) item, added hidden if not selected. */
static size_t count_item(struct aspec *a)
{
    for (size_t i = 0; i < a->nit; i++)
        if (a->it[i].kind == I_AGG && a->it[i].fn == A_COUNT_STAR)
            return i;
    struct aitem it;
    memset(&it, 0, sizeof(it));
    it.kind = I_AGG;
    it.fn = A_COUNT_STAR;
    it.hidden = true;
    snprintf(it.out, sizeof(it.out), "count");
    snprintf(it.expr, sizeof(it.expr), "COUNT(*)");
    return add_item(a, &it);
}

/* How GROUP BY, HAVING or ORDER BY name item i: its alias or output name,
 * its expression, or (allow_pos) its position. */
static void item_ref(struct model *m, const struct aspec *a, size_t i, bool allow_pos, char *out,
                     size_t n)
{
    const struct aitem *it = &a->it[i];
    size_t k = rn(m, 3);
    if (allow_pos && !it->hidden && k == 0) {
        snprintf(out, n, "%zu", i + 1);
        return;
    }
    if (!it->hidden && k == 1) /* an aliased item by its alias */
        snprintf(out, n, "%s", it->alias[0] ? it->alias : it->out);
    else
        snprintf(out, n, "%s", it->expr);
}

/* Whether item i's value is exact enough to filter or sort on: not a sum or
 * average of floats (their last bits depend on the order of the additions). */
static bool item_exact(const struct aitem *it)
{
    return !(it->kind == I_AGG && (it->fn == A_SUM || it->fn == A_AVG) && it->name &&
             strcmp(it->name, "v") == 0);
}

/* A literal to compare item it's value with. */
static struct lit having_lit(struct model *m, const struct aitem *it)
{
    if (it->kind == I_BUCKET || it->col == C_TS)
        return ts_lit(m);
    if (it->kind == I_AGG) {
        switch (it->fn) {
        case A_COUNT:
        case A_COUNT_STAR: return (struct lit){.kind = L_INT, .i = (int64_t)rn(m, 12)};
        case A_SUM: return (struct lit){.kind = L_INT, .i = (int64_t)rn(m, 3000) - 200};
        case A_AVG: return (struct lit){.kind = L_FLT, .f = (double)rn(m, 1200) / 4.0 - 50};
        default: break;
        }
    }
    if (it->col == C_FIELD && strcmp(it->name, "ok") == 0 && rn(m, 4))
        return (struct lit){.kind = L_BOOL, .b = rn(m, 2)};
    return col_lit(m, it->col, it->name);
}

static struct xnode *gen_having_leaf(struct model *m, struct aspec *a)
{
    size_t i;
    int tries = 0;
    do
        i = pick_ref_item(m, a);
    while (!item_exact(&a->it[i]) && ++tries < 8);
    if (!item_exact(&a->it[i]))
        i = count_item(a);
    const struct aitem *it = &a->it[i];
    struct xnode *n = leaf_new(C_OUT, NULL, XL_CMP);
    n->out = i;
    char ref[96];
    item_ref(m, a, i, false, ref, sizeof(ref));
    n->ref = xstrdup(ref);
    size_t k = rn(m, 10);
    if (k < 6) {
        n->op = (int)rn(m, NELEM(cmp_ops));
        n->v[0] = having_lit(m, it);
        if (n->v[0].kind == L_BOOL && n->op > OP_NE2)
            n->op = OP_EQ;
    } else if (k < 7) {
        n->leaf = XL_BETWEEN;
        n->neg = rn(m, 3) == 0;
        n->v[0] = having_lit(m, it);
        n->v[1] = having_lit(m, it);
        if (n->v[0].kind == L_BOOL || n->v[1].kind == L_BOOL)
            n->leaf = XL_NULL;
    } else if (k < 8) {
        n->leaf = XL_IN;
        n->neg = rn(m, 3) == 0;
        n->nv = 1 + rn(m, 3);
        n->v[0] = having_lit(m, it);
        for (size_t j = 1; j < n->nv; j++) {
            n->v[j] = having_lit(m, it);
            if (n->v[j].kind == L_BOOL || (n->v[j].kind == L_STR) != (n->v[0].kind == L_STR))
                n->v[j] = n->v[0];
        }
        if (n->v[0].kind == L_BOOL)
            n->leaf = XL_NULL;
    } else if (k < 9) {
        n->leaf = XL_LIKE;
        n->neg = rn(m, 4) == 0;
        n->icase = rn(m, 3) == 0;
        n->pat = like_pattern(m, col_string(m, it->col, it->name ? it->name : "msg"), n->icase);
    } else {
        n->leaf = XL_NULL;
        n->neg = rn(m, 2);
    }
    return n;
}

static struct xnode *gen_having(struct model *m, struct aspec *a, int depth)
{
    if (depth <= 0 || rn(m, 2))
        return gen_having_leaf(m, a);
    struct xnode *n = xcalloc(1, sizeof(*n));
    size_t k = rn(m, 10);
    if (k < 2) {
        n->kind = XN_NOT;
        n->kid[n->nkids++] = gen_having(m, a, depth - 1);
        return n;
    }
    n->kind = k < 6 ? XN_AND : XN_OR;
    n->nkids = 2;
    for (size_t i = 0; i < 2; i++)
        n->kid[i] = gen_having(m, a, depth - 1);
    return n;
}

/* Bucket widths and offsets for the model's ts steps: about a step, a few
 * steps, many steps, and widths that do not divide the step. */
static void gen_bucket(struct model *m, struct aspec *a, struct aitem *it, bool for_fill)
{
    static const int64_t ms = 1000000LL, s = 1000000000LL;
    static const int64_t fine[] = {7 * 1000000LL,   10 * 1000000LL,   35 * 1000000LL,
                                   100 * 1000000LL, 1000 * 1000000LL, 3 * 1000000LL};
    static const int64_t coarse[] = {37 * 1000000000LL,  60 * 1000000000LL,   300 * 1000000000LL,
                                     600 * 1000000000LL, 3600 * 1000000000LL, 86400 * 1000000000LL,
                                     50 * 1000000000LL};
    bool small = m->ts_step < s;
    a->width = small ? fine[rn(m, NELEM(fine))] : coarse[rn(m, NELEM(coarse))];
    if (for_fill) /* at most about 60 buckets over the 300 ts */
        a->width = small ? fine[2 + rn(m, 3)] : coarse[2 + rn(m, 4)];
    a->offset = 0;
    char w[32], o[32];
    dur_text(a->width, w, sizeof(w));
    memset(it, 0, sizeof(*it));
    it->kind = I_BUCKET;
    snprintf(it->out, sizeof(it->out), "ts");
    const char *q = rn(m, 2) ? "'" : "";
    if (rn(m, 2)) {
        snprintf(it->expr, sizeof(it->expr), "%s(%s%s%s)", kw(m, "TIME_BUCKET"), q, w, q);
        return;
    }
    int64_t unit = small ? ms : s;
    int64_t off = unit * (int64_t)(1 + rn(m, (size_t)(a->width / unit) - 1));
    bool neg = rn(m, 2);
    a->offset = neg ? a->width - off : off;
    dur_text(off, o, sizeof(o));
    snprintf(it->expr, sizeof(it->expr), "%s(%s%s%s, %s%s%s%s)", kw(m, "TIME_BUCKET"), q, w, q,
             neg ? "-" : "", q, o, q);
}

static void shuffle_items(struct model *m, struct aspec *a)
{
    for (size_t i = a->nvis; i > 1; i--) {
        size_t j = rn(m, i);
        struct aitem t = a->it[i - 1];
        a->it[i - 1] = a->it[j];
        a->it[j] = t;
    }
}

/* A random aggregate query over q's WHERE (any shape), into sql. */
/* The shape the store's counts by event and minute answer in part
 * (query.c, group_counted): a ts range (its ends on whole minutes or not)
 * and maybe an event set, GROUP BY a time bucket of whole minutes (with
 * an offset of whole minutes) and maybe the event, COUNT(*) only. */
static void gen_counted(struct model *m, struct qspec *q, struct aspec *a, struct buf *conds,
                        struct aitem *keys, size_t *nkeys)
{
    static const int64_t minute = 60000000000LL;
    static const int64_t widths[] = {1, 2, 5, 10, 60, 1440};
    q->shape = 1;
    q->ts_kind = 1;
    int64_t t0 = rand_ts(m), t1 = rand_ts(m);
    q->lo = t0 < t1 ? t0 : t1;
    q->hi = t0 < t1 ? t1 : t0;
    if (rn(m, 2)) { /* whole minutes */
        q->lo -= ((q->lo % minute) + minute) % minute;
        q->hi += minute - 1 - ((q->hi % minute) + minute) % minute;
    }
    if (rn(m, 4) == 0)
        q->hi = INT64_MAX;
    buf_printf(conds, " AND ts >= %lld", (long long)q->lo);
    if (q->hi != INT64_MAX)
        buf_printf(conds, " AND ts <= %lld", (long long)q->hi);
    if (rn(m, 3) == 0) {
        gen_set(m, q->events, NE, &q->has_event);
        sql_set(conds, "event", q->events, events, NE);
    }
    struct aitem *it = &keys[(*nkeys)++];
    memset(it, 0, sizeof(*it));
    it->kind = I_BUCKET;
    snprintf(it->out, sizeof(it->out), "ts");
    int64_t width = widths[rn(m, NELEM(widths))] * minute;
    int64_t off = rn(m, 2) ? 0 : (int64_t)rn(m, (size_t)(width / minute)) * minute;
    a->width = width;
    a->offset = off;
    char w[32], o[32];
    dur_text(width, w, sizeof(w));
    if (off) {
        dur_text(off, o, sizeof(o));
        snprintf(it->expr, sizeof(it->expr), "%s('%s', '%s')", kw(m, "TIME_BUCKET"), w, o);
    } else {
        snprintf(it->expr, sizeof(it->expr), "%s('%s')", kw(m, "TIME_BUCKET"), w);
    }
    if (rn(m, 3)) {
        it = &keys[(*nkeys)++];
        memset(it, 0, sizeof(*it));
        it->kind = I_KEY;
        it->col = C_EVENT;
        col_text(it->col, NULL, it->out, sizeof(it->out));
        col_sql(m, it->col, NULL, it->expr, sizeof(it->expr));
    }
}

/* The shape the host sections answer (store/series.h): one to three
 * hosts, maybe events, maybe a ts range, no other condition; GROUP BY a
 * time bucket, host or event (gen_agg_query adds aggregates, mostly of
 * numeric fields: a string one makes the store read the rows). */
static void gen_series(struct model *m, struct qspec *q, struct aspec *a, struct buf *conds,
                       struct aitem *keys, size_t *nkeys)
{
    q->shape = 2;
    q->ts_kind = rn(m, 3) ? 1 : 0;
    gen_set(m, q->hosts, NH, &q->has_host);
    gen_ts(m, q, conds);
    sql_set(conds, "host", q->hosts, hosts, NH);
    if (rn(m, 2)) {
        gen_set(m, q->events, NE, &q->has_event);
        sql_set(conds, "event", q->events, events, NE);
    }
    struct aitem *it;
    if (rn(m, 3)) {
        it = &keys[(*nkeys)++];
        gen_bucket(m, a, it, false);
    }
    static const int cols[] = {C_HOST, C_EVENT};
    for (size_t i = 0, n = rn(m, 3); i < n; i++) {
        it = &keys[*nkeys];
        memset(it, 0, sizeof(*it));
        it->kind = I_KEY;
        it->col = cols[rn(m, 2)];
        col_text(it->col, NULL, it->out, sizeof(it->out));
        col_sql(m, it->col, NULL, it->expr, sizeof(it->expr));
        bool dup = false;
        for (size_t j = 0; j < *nkeys; j++)
            dup |= item_same(&keys[j], it);
        if (!dup)
            (*nkeys)++;
    }
}

static void gen_agg_query(struct model *m, struct qspec *q, struct aspec *a, struct buf *sql)
{
    static const char *aliases[] = {"n", "total", "lo", "hi", "pq", "t", "k1", "k2", "f1", "f2"};
    memset(q, 0, sizeof(*q));
    memset(a, 0, sizeof(*a));
    q->limit = -1;
    a->limit = -1;
    int shape = (int)rn(m, 8);
    bool counted = (int)rn(m, 100) < m->counted_pct;
    bool series = !counted && (int)rn(m, 100) < m->series_pct;
    bool want_fill = !counted && !series && rn(m, 4) == 0;
    struct buf conds = BUF_INIT;
    struct aitem it;
    struct aitem keys[AMAX_KEYS + 1];
    size_t nkeys = 0;
    if (counted) {
        gen_counted(m, q, a, &conds, keys, &nkeys);
    } else if (series) {
        gen_series(m, q, a, &conds, keys, &nkeys);
    } else if (want_fill) { /* a ts range (mostly bounded), no ts in the tree */
        q->shape = 1;
        q->ts_kind = 1;
        gen_ts(m, q, &conds);
        if (rn(m, 3) == 0) {
            gen_set(m, q->events, NE, &q->has_event);
            sql_set(&conds, "event", q->events, events, NE);
        }
        gen_pred(m, q, &conds);
        if (rn(m, 2)) {
            q->tree = gen_tree(m, 1 + (int)rn(m, 2), false);
            buf_puts(&conds, " AND (");
            sql_node(m, &conds, q->tree);
            buf_putc(&conds, ')');
        }
    } else {
        gen_conds(m, q, shape, &conds);
    }
    /* GROUP BY: a bucket, keys */
    size_t nk = counted || series ? 0 : want_fill ? rn(m, 2) : rn(m, 4);
    bool bucket = !counted && !series && (rn(m, 2) || want_fill);
    a->grouped = bucket || nk || nkeys;
    if (bucket) {
        gen_bucket(m, a, &it, want_fill);
        keys[nkeys++] = it;
    }
    for (size_t i = 0; i < nk; i++) {
        size_t c = rn(m, NELEM(key_cols));
        memset(&it, 0, sizeof(it));
        it.kind = I_KEY;
        it.col = key_cols[c].col;
        it.name = key_cols[c].name;
        col_text(it.col, it.name, it.out, sizeof(it.out));
        col_sql(m, it.col, it.name, it.expr, sizeof(it.expr));
        bool dup = false;
        for (size_t j = 0; j < nkeys; j++)
            dup |= item_same(&keys[j], &it);
        if (!dup)
            keys[nkeys++] = it;
    }
    /* the select list: most keys, 0-4 aggregates (at least one item) */
    bool sel_key[AMAX_KEYS + 1];
    for (size_t i = 0; i < nkeys; i++) {
        sel_key[i] = rn(m, 5) != 0;
        if (sel_key[i])
            add_item(a, &keys[i]);
    }
    size_t na = counted ? 1 + rn(m, 2) : rn(m, 5);
    if (na == 0 && a->nit == 0)
        na = 1;
    for (size_t i = 0; i < na; i++) {
        gen_agg_item(m, &it);
        /* no tag (the rows would be read); a string field now and then */
        for (int t = 0; series && t < 8 &&
                        (it.col == C_TAG ||
                         (it.col == C_FIELD && it.name[0] != 'v' && it.name[0] != 'c' && rn(m, 2)));
             t++)
            gen_agg_item(m, &it);
        if (counted && it.fn != A_COUNT_STAR) {
            memset(&it, 0, sizeof(it));
            it.kind = I_AGG;
            it.fn = A_COUNT_STAR;
            snprintf(it.out, sizeof(it.out), "count");
            snprintf(it.expr, sizeof(it.expr), "%s(*)", kw(m, "COUNT"));
        }
        add_item(a, &it);
    }
    a->nvis = a->nit;
    shuffle_items(m, a);
    size_t nal = 0;
    for (size_t i = 0; i < a->nvis; i++)
        if (rn(m, 5) == 0 && nal < NELEM(aliases)) {
            snprintf(a->it[i].alias, sizeof(a->it[i].alias), "%s", aliases[nal++]);
            snprintf(a->it[i].out, sizeof(a->it[i].out), "%s", a->it[i].alias);
        }
    buf_printf(sql, "SELECT %s", q->shape == 4 ? "/*+ full_scan */ " : "");
    for (size_t i = 0; i < a->nvis; i++) {
        buf_printf(sql, "%s%s", i ? ", " : "", a->it[i].expr);
        if (a->it[i].alias[0])
            buf_printf(sql, " %s %s", kw(m, "AS"), a->it[i].alias);
    }
    buf_printf(sql, " FROM %s", m->db);
    if (conds.len)
        buf_printf(sql, " WHERE %s", buf_cstr(&conds) + 5);
    buf_destroy(&conds);
    /* GROUP BY: the keys in random order, each named some way */
    char ref[96];
    if (a->grouped) {
        size_t order[AMAX_KEYS + 1];
        for (size_t i = 0; i < nkeys; i++)
            order[i] = i;
        for (size_t i = nkeys; i > 1; i--) {
            size_t j = rn(m, i), t = order[i - 1];
            order[i - 1] = order[j];
            order[j] = t;
        }
        buf_printf(sql, " %s", kw(m, "GROUP BY"));
        for (size_t g = 0; g < nkeys; g++) {
            const struct aitem *k = &keys[order[g]];
            size_t idx = a->nit;
            for (size_t i = 0; i < a->nit; i++)
                if (item_same(&a->it[i], k))
                    idx = i;
            if (idx == a->nit) { /* a key not selected: named by its expression */
                struct aitem h = *k;
                h.hidden = true;
                idx = add_item(a, &h);
            }
            if (k->kind == I_BUCKET) {
                a->has_bucket = true;
                a->bucket = idx;
                /* an aliased bucket is named by its alias, position or call */
                if (!a->it[idx].hidden && !a->it[idx].alias[0] && rn(m, 3) == 0)
                    snprintf(ref, sizeof(ref), "ts");
                else
                    item_ref(m, a, idx, true, ref, sizeof(ref));
            } else {
                a->keys[a->nkeys++] = idx;
                item_ref(m, a, idx, true, ref, sizeof(ref));
            }
            buf_printf(sql, "%s %s", g ? "," : "", ref);
        }
        if (want_fill && a->has_bucket) {
            static const char *fills[] = {"NULL", "0", "PREVIOUS"};
            a->fill = 1 + (int)rn(m, 3);
            buf_printf(sql, " %s(%s)", kw(m, "FILL"), kw(m, fills[a->fill - 1]));
        }
    }
    if (rn(m, 10) < 3) {
        a->having = gen_having(m, a, 2);
        buf_printf(sql, " %s ", kw(m, "HAVING"));
        sql_node(m, sql, a->having);
    }
    /* SELECT COUNT(*) alone keeps its row form, where ORDER BY names ts only
     * (query/README.md): no ORDER BY of its items */
    bool count_form = !a->grouped && !a->having && a->nvis == 1 && a->it[0].kind == I_AGG &&
                      a->it[0].fn == A_COUNT_STAR && !a->it[0].alias[0];
    if (!count_form && rn(m, 10) < 4) {
        size_t want = 1 + rn(m, 2);
        for (size_t o = 0; o < want; o++) {
            size_t i;
            int tries = 0;
            do
                i = pick_ref_item(m, a);
            while (!item_exact(&a->it[i]) && ++tries < 8);
            if (item_exact(&a->it[i])) {
                a->ord[a->nord] = i;
                a->ord_desc[a->nord++] = rn(m, 2);
            }
        }
        for (size_t o = 0; o < a->nord; o++) {
            buf_printf(sql, "%s", o ? ", " : kw(m, " ORDER BY "));
            if (a->it[a->ord[o]].kind == I_BUCKET && !a->it[a->ord[o]].hidden &&
                !a->it[a->ord[o]].alias[0] && rn(m, 3) == 0)
                snprintf(ref, sizeof(ref), "ts");
            else
                item_ref(m, a, a->ord[o], true, ref, sizeof(ref));
            buf_printf(sql, "%s%s", ref, a->ord_desc[o] ? " DESC" : rn(m, 2) ? " ASC" : "");
        }
    }
    if (rn(m, 10) < 4) {
        a->limit = (int64_t)rn(m, 12);
        buf_printf(sql, " %s %lld", kw(m, "LIMIT"), (long long)a->limit);
    }
    a->plain_count = count_form;
    if (rn(m, 8) == 0)
        a->max_groups = 1 + (int64_t)rn(m, 12);
}

/* --- the reference of an aggregate query --- */

/* A group key value. Keys order null < bool < number < string (the README
 * says ascending, null first; across kinds the key encoding of
 * query/group.c's header decides), numbers by value as doubles. */
struct gkey {
    int rank;
    bool b;
    double d;
    const char *s;
    size_t slen;
};

static void gkey_of(const struct ref_row *r, const struct aitem *it, struct gkey *k)
{
    struct opnd o;
    row_opnd(r, it->col, it->name, &o);
    memset(k, 0, sizeof(*k));
    switch (o.kind) {
    case O_MISSING: break;
    case O_BOOL: k->rank = 1, k->b = o.b; break;
    case O_STR: k->rank = 3, k->s = o.s, k->slen = o.slen; break;
    default:
        k->rank = 2;
        k->d = (double)opnd_ld(&o);
        if (k->d == 0)
            k->d = 0; /* -0 and 0 are one group */
        break;
    }
}

static int gkey_cmp(const struct gkey *a, const struct gkey *b)
{
    if (a->rank != b->rank)
        return a->rank - b->rank;
    switch (a->rank) {
    case 1: return (int)a->b - (int)b->b;
    case 2: return (a->d > b->d) - (a->d < b->d);
    case 3: return bytes_cmp(a->s, a->slen, b->s, b->slen);
    default: return 0;
    }
}

static struct xval gkey_val(const struct gkey *k)
{
    struct xval v = {.kind = XV_NULL};
    switch (k->rank) {
    case 1: v.kind = XV_BOOL, v.b = k->b; break;
    case 2: v.kind = XV_FLOAT, v.f = k->d, v.anynum = true; break;
    case 3: v.kind = XV_STR, v.s = k->s, v.slen = k->slen; break;
    default: break;
    }
    return v;
}

static struct xval opnd_val(const struct opnd *o)
{
    struct xval v = {.kind = XV_NULL};
    switch (o->kind) {
    case O_INT: v.kind = XV_INT, v.i = o->i; break;
    case O_UINT: v.kind = XV_UINT, v.u = o->u; break;
    case O_FLT: v.kind = XV_FLOAT, v.f = o->f; break;
    case O_STR: v.kind = XV_STR, v.s = o->s, v.slen = o->slen; break;
    case O_BOOL: v.kind = XV_BOOL, v.b = o->b; break;
    default: break;
    }
    return v;
}

/* One row as the grouper is fed it: rows come in the stored order. */
struct arow {
    const struct ref_row *r;
    int64_t bucket;
    struct gkey k[AMAX_KEYS];
    size_t seq;
};

static int64_t ref_bucket(int64_t ts, int64_t w, int64_t off)
{
    int64_t x = ts - off, q = x / w;
    if (x % w < 0)
        q--;
    return q * w + off;
}

static const struct aspec *asort_spec;
static bool asort_desc;

static int key_tuple_cmp(const struct aspec *a, const struct arow *x, const struct arow *y)
{
    for (size_t i = 0; i < a->nkeys; i++) {
        int c = gkey_cmp(&x->k[i], &y->k[i]);
        if (c)
            return c;
    }
    return 0;
}

/* The default order of groups: the bucket in the stored direction, then
 * the other keys ascending in GROUP BY order; rows of a group in feed order. */
static int arow_cmp(const void *pa, const void *pb)
{
    const struct arow *x = pa, *y = pb;
    if (asort_spec->has_bucket && x->bucket != y->bucket)
        return ((x->bucket > y->bucket) - (x->bucket < y->bucket)) * (asort_desc ? -1 : 1);
    int c = key_tuple_cmp(asort_spec, x, y);
    return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static int numcls(const struct opnd *o)
{
    switch (o->kind) {
    case O_INT:
    case O_UINT:
    case O_FLT: return 3;
    case O_STR: return 2;
    case O_BOOL: return 1;
    default: return 0;
    }
}

static int kind_pref(const struct opnd *o)
{
    return o->kind == O_INT ? 3 : o->kind == O_UINT ? 2 : 1;
}

/* MIN/MAX (agg.h): numbers win over strings, strings over bools; numbers by
 * exact value (an int, then a uint, then a float among equals), strings
 * bytewise, false < true. */
static bool minmax_better(const struct opnd *o, const struct opnd *best, bool is_min)
{
    int co = numcls(o), cb = numcls(best), c;
    if (co != cb)
        return co > cb;
    if (co == 3) {
        long double x = opnd_ld(o), y = opnd_ld(best);
        c = (x > y) - (x < y);
        if (!c)
            return kind_pref(o) > kind_pref(best);
    } else if (co == 2) {
        c = bytes_cmp(o->s, o->slen, best->s, best->slen);
    } else {
        c = (int)o->b - (int)best->b;
    }
    return is_min ? c < 0 : c > 0;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Aggregate it over a group's rows (in feed order), as agg.h states. */
static struct xval agg_value(const struct aitem *it, const struct arow *rows, size_t n)
{
    struct xval v = {.kind = XV_NULL};
    struct opnd o, best;
    size_t cnt = 0;
    bool have = false;
    int64_t bts = 0;
    if (it->fn == A_COUNT_STAR) {
        v.kind = XV_INT, v.i = (int64_t)n;
        return v;
    }
    if (it->fn == A_SUM || it->fn == A_AVG) {
        __int128 isum = 0;
        long double fsum = 0;
        bool anyf = false;
        for (size_t i = 0; i < n; i++) {
            row_opnd(rows[i].r, it->col, it->name, &o);
            if (o.kind == O_INT)
                isum += o.i, cnt++;
            else if (o.kind == O_UINT)
                isum += o.u, cnt++;
            else if (o.kind == O_FLT)
                fsum += o.f, anyf = true, cnt++;
        }
        if (!cnt)
            return v;
        v.kind = XV_FLOAT;
        v.loose = true;
        if (it->fn == A_AVG) {
            v.f = (double)(((long double)isum + fsum) / (long double)cnt);
        } else if (anyf) {
            v.f = (double)(fsum + (long double)isum);
        } else if (isum >= INT64_MIN && isum <= INT64_MAX) {
            v.kind = XV_INT, v.i = (int64_t)isum, v.loose = false;
        } else if (isum >= 0 && isum <= (__int128)UINT64_MAX) {
            v.kind = XV_UINT, v.u = (uint64_t)isum, v.loose = false;
        } else {
            v.f = (double)isum;
        }
        return v;
    }
    if (it->fn == A_PCT) {
        double *xs = xcalloc(n + 1, sizeof(*xs));
        for (size_t i = 0; i < n; i++) {
            row_opnd(rows[i].r, it->col, it->name, &o);
            if (numcls(&o) == 3)
                xs[cnt++] = (double)opnd_ld(&o);
        }
        if (cnt) {
            qsort(xs, cnt, sizeof(*xs), cmp_dbl);
            double x = it->p * (double)cnt / 100.0, r = ceil(x - x * 1e-12);
            size_t rank = r < 1 ? 1 : (size_t)r;
            if (rank > cnt)
                rank = cnt;
            v.kind = XV_FLOAT;
            v.f = xs[rank - 1];
            if (cnt > 256) { /* past the exact size: the sketch's 1% */
                v.rel = 0.01;
                v.lo = xs[0];
                v.hi = xs[cnt - 1];
                /* ... except where the sketch collapses (agg.h): a sign keeps
                 * 2048 bins of ratio gamma = 1.01 / 0.99, and magnitudes further
                 * below the largest of their sign join its lowest bin kept,
                 * whose estimate is larger in magnitude: then only [lo, hi] */
                double top = v.f > 0 ? xs[cnt - 1] : -xs[0];
                if (v.f != 0 && fabs(v.f) * pow(1.01 / 0.99, 2046) < top)
                    v.rel = INFINITY;
            }
        }
        free(xs);
        return v;
    }
    for (size_t i = 0; i < n; i++) {
        row_opnd(rows[i].r, it->col, it->name, &o);
        if (o.kind == O_MISSING)
            continue;
        cnt++;
        int64_t ts = rows[i].r->ts;
        bool take = !have;
        switch (it->fn) {
        case A_MIN: take = take || minmax_better(&o, &best, true); break;
        case A_MAX: take = take || minmax_better(&o, &best, false); break;
        case A_FIRST: take = take || ts < bts; break; /* among equal ts the first fed */
        case A_LAST: take = take || ts >= bts; break; /* ... the last fed */
        default: break;
        }
        if (take) {
            best = o;
            bts = ts;
            have = true;
        }
    }
    if (it->fn == A_COUNT) {
        v.kind = XV_INT, v.i = (int64_t)cnt;
        return v;
    }
    return have ? opnd_val(&best) : v;
}

/* An output row: a value per item (hidden ones too). */
struct erow {
    struct xval v[AMAX_ITEMS];
};

static void group_values(const struct aspec *a, const struct arow *rows, size_t n,
                         const struct arow *keyrow, struct erow *out)
{
    for (size_t i = 0; i < a->nit; i++) {
        const struct aitem *it = &a->it[i];
        memset(&out->v[i], 0, sizeof(out->v[i]));
        if (it->kind == I_AGG) {
            out->v[i] = agg_value(it, rows, n);
        } else if (it->kind == I_BUCKET) {
            out->v[i].kind = XV_INT;
            out->v[i].i = keyrow->bucket;
        } else {
            for (size_t k = 0; k < a->nkeys; k++)
                if (a->keys[k] == i)
                    out->v[i] = gkey_val(&keyrow->k[k]);
        }
    }
}

/* ORDER BY (README): nulls last ascending, first descending; then (across
 * kinds, as the keys order) bools, numbers by exact value, strings
 * bytewise. */
static int xval_cmp(const struct xval *x, const struct xval *y)
{
    bool xn = x->kind == XV_NULL, yn = y->kind == XV_NULL;
    if (xn || yn)
        return (int)xn - (int)yn;
    struct opnd a, b;
    xval_opnd(x, &a);
    xval_opnd(y, &b);
    int ca = numcls(&a), cb = numcls(&b);
    int ra = ca == 1 ? 1 : ca == 3 ? 2 : 3, rb = cb == 1 ? 1 : cb == 3 ? 2 : 3;
    if (ra != rb)
        return ra - rb;
    if (ra == 1)
        return (int)a.b - (int)b.b;
    if (ra == 3)
        return bytes_cmp(a.s, a.slen, b.s, b.slen);
    long double p = opnd_ld(&a), q = opnd_ld(&b);
    return (p > q) - (p < q);
}

struct oref {
    struct erow *row;
    size_t seq;
};

static const struct aspec *osort_spec;

static int oref_cmp(const void *pa, const void *pb)
{
    const struct oref *x = pa, *y = pb;
    for (size_t i = 0; i < osort_spec->nord; i++) {
        size_t it = osort_spec->ord[i];
        int c = xval_cmp(&x->row->v[it], &y->row->v[it]);
        if (c)
            return osort_spec->ord_desc[i] ? -c : c;
    }
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The expected answer of an aggregate query: ERR_OK and the output rows
 * (*out, *nout), or the error the query must fail with. *approx: a
 * percentile past its exact size decides HAVING or ORDER BY (then only
 * the status is checked). */
static int expected_agg(struct model *m, const struct qspec *q, const struct aspec *a,
                        struct erow **out, size_t *nout, bool *approx, const char **why)
{
    *out = NULL;
    *nout = 0;
    *approx = false;
    *why = NULL;
    /* the rows, in the stored order */
    struct ref_row **sel = xcalloc(m->n + 1, sizeof(*sel));
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++)
        if (ref_match(m, q, &m->rows[i]))
            sel[n++] = &m->rows[i];
    sort_desc = m->desc;
    qsort(sel, n, sizeof(*sel), cmp_ref);
    struct arow *ar = xcalloc(n + 1, sizeof(*ar));
    for (size_t i = 0; i < n; i++) {
        ar[i].r = sel[i];
        ar[i].seq = i;
        if (a->has_bucket)
            ar[i].bucket = ref_bucket(sel[i]->ts, a->width, a->offset);
        for (size_t k = 0; k < a->nkeys; k++)
            gkey_of(sel[i], &a->it[a->keys[k]], &ar[i].k[k]);
    }
    free(sel);
    asort_spec = a;
    /* buckets come in the stored order, or in that of an ORDER BY of the
     * bucket (README: "the database's stored order, or ORDER BY the
     * bucket's direction"): streaming writes them so */
    asort_desc = a->nord && a->ord[0] == a->bucket && a->has_bucket ? a->ord_desc[0] : m->desc;
    qsort(ar, n, sizeof(*ar), arow_cmp);
    /* groups: runs of one bucket and key tuple (one group of everything
     * without GROUP BY, also of no rows) */
    size_t *gstart = xcalloc(n + 2, sizeof(*gstart)), ng = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || (a->has_bucket && ar[i].bucket != ar[i - 1].bucket) ||
            key_tuple_cmp(a, &ar[i], &ar[i - 1]) != 0)
            gstart[ng++] = i;
    if (!a->grouped) {
        ng = 1;
        gstart[0] = 0;
    }
    gstart[ng] = n;
    int64_t maxg = a->max_groups > 0 ? a->max_groups : 100000;
    /* past max_groups only a grouping read in the stored order streams
     * (query/README.md: "no ORDER BY but the bucket's in the stored
     * direction"); against it the groups are held and sorted */
    bool streaming =
        a->has_bucket && !a->fill &&
        (a->nord == 0 || (a->nord == 1 && a->ord[0] == a->bucket && a->ord_desc[0] == m->desc));
    struct erow *rows = xcalloc(ng + 1, sizeof(*rows));
    for (size_t g = 0; g < ng; g++)
        group_values(a, ar + gstart[g], gstart[g + 1] - gstart[g],
                     ar + (gstart[g] < n ? gstart[g] : 0), &rows[g]);
    int rc = ERR_OK;
    size_t nrows = ng;
    if (streaming) {
        /* a bucket's groups are written when the next bucket starts: the
         * first bucket with too many groups fails the query, unless LIMIT
         * rows were written before it */
        size_t emitted = 0;
        for (size_t g = 0; g < ng && rc == ERR_OK;) {
            size_t e = g;
            while (e < ng && ar[gstart[e]].bucket == ar[gstart[g]].bucket)
                e++;
            if ((int64_t)(e - g) > maxg) {
                if (a->limit < 0 || (int64_t)emitted < a->limit) {
                    rc = ERR_TOOBIG;
                    *why = "too many groups: more than max_groups";
                }
                break;
            }
            for (size_t k = g; k < e; k++) {
                struct ectx x = {NULL, rows[k].v};
                emitted += !a->having || eval3(&x, a->having) == V_T;
            }
            g = e;
        }
    } else if (a->grouped && (int64_t)ng > maxg) {
        rc = ERR_TOOBIG;
        *why = "too many groups: more than max_groups";
    }
    if (rc == ERR_OK && a->fill) {
        int64_t lo = q->lo, hi = q->hi;
        if (m->ttl > 0 && NOW - m->ttl > lo)
            lo = NOW - m->ttl;
        if (hi == INT64_MAX) {
            rc = ERR_INVAL;
            *why = "FILL needs a bounded ts range";
        } else {
            /* the combinations of the other keys seen, ascending */
            struct arow *comb = xcalloc(ng + 1, sizeof(*comb));
            size_t nc = 0;
            for (size_t g = 0; g < ng; g++)
                comb[nc++] = ar[gstart[g]];
            struct aspec nob = *a;
            nob.has_bucket = false;
            asort_spec = &nob;
            for (size_t i = 0; i < nc; i++)
                comb[i].seq = 0;
            qsort(comb, nc, sizeof(*comb), arow_cmp);
            size_t u = 0;
            for (size_t i = 0; i < nc; i++)
                if (u == 0 || key_tuple_cmp(a, &comb[u - 1], &comb[i]) != 0)
                    comb[u++] = comb[i];
            nc = a->nkeys ? u : 1;
            int64_t blo = ref_bucket(lo, a->width, a->offset),
                    bhi = ref_bucket(hi, a->width, a->offset);
            uint64_t nb = lo > hi ? 0 : (uint64_t)(bhi - blo) / (uint64_t)a->width + 1;
            if (nc && (double)nb * (double)nc > (double)maxg) {
                rc = ERR_TOOBIG;
                *why = "FILL would give";
            } else {
                /* buckets in time order: PREVIOUS is the value of the earlier
                 * bucket whatever the output order; rows go to their place in
                 * the output order (the buckets in direction asort_desc) */
                struct erow *filled = xcalloc(nb * nc + 1, sizeof(*filled));
                struct erow *prev = xcalloc(nc + 1, sizeof(*prev));
                size_t *gt = xcalloc(ng + 1, sizeof(*gt)), gi = 0, nf = 0;
                for (size_t g = 0; g < ng; g++) /* the groups, oldest bucket first */
                    gt[g] = asort_desc ? ng - 1 - g : g;
                for (size_t g = 0; g < ng;) { /* keys ascending within a bucket */
                    size_t e = g;
                    while (e < ng && ar[gstart[gt[e]]].bucket == ar[gstart[gt[g]]].bucket)
                        e++;
                    for (size_t x = g, y = e - 1; asort_desc && x < y; x++, y--) {
                        size_t t = gt[x];
                        gt[x] = gt[y];
                        gt[y] = t;
                    }
                    g = e;
                }
                for (uint64_t b = 0; b < nb; b++) {
                    int64_t start = blo + (int64_t)(b * (uint64_t)a->width);
                    uint64_t place = asort_desc ? nb - 1 - b : b;
                    for (size_t c = 0; c < nc; c++) {
                        struct erow *r = &filled[place * nc + c];
                        nf++;
                        const struct arow *gk = gi < ng ? &ar[gstart[gt[gi]]] : NULL;
                        if (gk && gk->bucket == start && key_tuple_cmp(a, gk, &comb[c]) == 0) {
                            *r = rows[gt[gi++]];
                        } else {
                            struct arow kr = comb[c];
                            kr.bucket = start;
                            group_values(a, NULL, 0, &kr, r);
                            for (size_t i = 0; i < a->nit; i++) {
                                const struct aitem *it = &a->it[i];
                                if (it->kind != I_AGG || it->fn == A_COUNT ||
                                    it->fn == A_COUNT_STAR)
                                    continue;
                                if (a->fill == 2)
                                    r->v[i] = (struct xval){.kind = XV_INT};
                                else if (a->fill == 3)
                                    r->v[i] = prev[c].v[i];
                            }
                        }
                        for (size_t i = 0; i < a->nit; i++)
                            if (a->it[i].kind == I_AGG && r->v[i].kind != XV_NULL)
                                prev[c].v[i] = r->v[i];
                    }
                }
                free(gt);
                if (gi != ng)
                    fail_msg("reference: %zu of %zu groups outside the FILL range", ng - gi, ng);
                free(prev);
                free(rows);
                rows = filled;
                nrows = nf;
            }
            free(comb);
        }
    }
    /* HAVING, ORDER BY, LIMIT */
    struct oref *o = xcalloc(nrows + 1, sizeof(*o));
    size_t no = 0;
    for (size_t i = 0; i < nrows; i++) {
        struct ectx x = {NULL, rows[i].v};
        if (!a->having || eval3(&x, a->having) == V_T)
            o[no].row = &rows[i], o[no].seq = no, no++;
    }
    for (size_t i = 0; i < nrows; i++)
        for (size_t it = 0; it < a->nit; it++)
            if (rows[i].v[it].rel > 0)
                for (size_t k = 0; k < a->nord; k++)
                    *approx = *approx || a->ord[k] == it;
    if (a->having) /* a percentile in HAVING past its exact size: approximate */
        for (size_t i = 0; i < nrows; i++)
            for (size_t it = 0; it < a->nit; it++)
                *approx = *approx || (rows[i].v[it].rel > 0 && a->it[it].kind == I_AGG &&
                                      a->it[it].fn == A_PCT);
    osort_spec = a;
    if (a->nord)
        qsort(o, no, sizeof(*o), oref_cmp);
    if (!a->plain_count && a->limit >= 0 && (size_t)a->limit < no)
        no = (size_t)a->limit;
    struct erow *res = xcalloc(no + 1, sizeof(*res));
    for (size_t i = 0; i < no; i++)
        res[i] = *o[i].row;
    free(o);
    free(rows);
    free(gstart);
    free(ar);
    if (rc) {
        free(res);
        return rc;
    }
    *out = res;
    *nout = no;
    return ERR_OK;
}

/* --- comparing the output --- */

static size_t json_str_end(const char *s, size_t len, size_t i)
{
    for (i++; i < len; i++) {
        if (s[i] == '\\') {
            i++;
            continue;
        }
        if (s[i] == '"')
            return i + 1;
    }
    return 0;
}

struct jtok {
    const char *p;
    size_t n;
};

/* Splits one output line, a flat JSON object, into its keys and raw values. */
static bool split_obj(const char *line, size_t len, struct jtok *keys, struct jtok *vals,
                      size_t max, size_t *nout)
{
    size_t i = 1, k = 0, j;
    if (len < 2 || line[0] != '{' || line[len - 1] != '}')
        return false;
    if (line[1] == '}') {
        *nout = 0;
        return len == 2;
    }
    for (;;) {
        if (k == max || line[i] != '"' || !(j = json_str_end(line, len, i)))
            return false;
        keys[k] = (struct jtok){line + i, j - i};
        i = j;
        if (i >= len || line[i] != ':')
            return false;
        size_t st = ++i;
        if (i < len && line[i] == '"') {
            if (!(j = json_str_end(line, len, i)))
                return false;
            i = j;
        } else {
            while (i < len && line[i] != ',' && line[i] != '}')
                i++;
        }
        vals[k++] = (struct jtok){line + st, i - st};
        if (i >= len)
            return false;
        if (line[i] == '}') {
            *nout = k;
            return i + 1 == len;
        }
        i++;
    }
}

/* A JSON string token as bytes, decoded by jansson. */
static bool json_str_is(struct jtok t, const char *s, size_t n)
{
    json_error_t je;
    json_t *j = json_loadb(t.p, t.n, JSON_DECODE_ANY, &je);
    bool ok = j && json_is_string(j) && json_string_length(j) == n &&
              memcmp(json_string_value(j), s, n) == 0;
    json_decref(j);
    return ok;
}

static bool tok_is(struct jtok t, const char *s)
{
    return t.n == strlen(s) && memcmp(t.p, s, t.n) == 0;
}

static bool val_ok(struct jtok t, const struct xval *v)
{
    char tmp[128];
    if (v->kind == XV_STR)
        return json_str_is(t, v->s, v->slen);
    if (t.n >= sizeof(tmp))
        return false;
    memcpy(tmp, t.p, t.n);
    tmp[t.n] = '\0';
    char want[64];
    switch (v->kind) {
    case XV_NULL: return tok_is(t, "null");
    case XV_BOOL: return tok_is(t, v->b ? "true" : "false");
    case XV_INT: snprintf(want, sizeof(want), "%lld", (long long)v->i); return tok_is(t, want);
    case XV_UINT:
        snprintf(want, sizeof(want), "%llu", (unsigned long long)v->u);
        return tok_is(t, want);
    default: break;
    }
    if (!isfinite(v->f))
        return tok_is(t, "null");
    char *end;
    double d = strtod(tmp, &end);
    if (end == tmp || *end)
        return false;
    if (!v->anynum && !strpbrk(tmp, ".eE")) /* a float reads back as one */
        return false;
    if (v->rel > 0)
        return fabs(d - v->f) <= v->rel * fabs(v->f) + 1e-9 && d >= v->lo && d <= v->hi;
    if (v->loose)
        return fabs(d - v->f) <= 1e-9 * fmax(1.0, fabs(v->f));
    return d == v->f;
}

static void xval_text(struct buf *b, const struct xval *v)
{
    switch (v->kind) {
    case XV_NULL: buf_puts(b, "null"); break;
    case XV_BOOL: buf_puts(b, v->b ? "true" : "false"); break;
    case XV_INT: buf_printf(b, "%lld", (long long)v->i); break;
    case XV_UINT: buf_printf(b, "%llu", (unsigned long long)v->u); break;
    case XV_FLOAT: buf_printf(b, "%.17g%s", v->f, v->loose ? "~" : v->rel > 0 ? "~1%" : ""); break;
    case XV_STR:
        buf_putc(b, '"');
        buf_append(b, v->s, v->slen);
        buf_putc(b, '"');
        break;
    }
}

static void erows_text(const struct aspec *a, const struct erow *rows, size_t n, struct buf *b)
{
    for (size_t r = 0; r < n; r++) {
        buf_putc(b, '{');
        for (size_t i = 0, k = 0; i < a->nit; i++) { /* hidden items too, as (expr) */
            if (a->it[i].hidden)
                buf_printf(b, "%s(%s):", k++ ? "," : "", a->it[i].expr);
            else
                buf_printf(b, "%s\"%s\":", k++ ? "," : "", a->it[i].out);
            xval_text(b, &rows[r].v[i]);
        }
        buf_puts(b, "}\n");
    }
}

/* fail_msg for long texts (cmocka cuts its messages short): the whole text
 * to stderr, then the failure. */
__attribute__((format(printf, 1, 2))) static void fail_long(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "# ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fail_msg("the query above differs from the reference");
}

/* Compares the NDJSON output with the expected rows: each line must be a
 * JSON object (jansson parses it) of the selected items, in order, with
 * their values; *why says what differs. */
static bool agg_output_ok(const struct aspec *a, const struct erow *rows, size_t n, const char *got,
                          struct buf *why)
{
    size_t line = 0;
    const char *p = got;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        json_error_t je;
        json_t *doc = json_loadb(p, len, JSON_DECODE_INT_AS_REAL, &je);
        bool obj = doc && json_is_object(doc);
        json_decref(doc);
        if (!obj) {
            buf_printf(why, "line %zu is not a JSON object (%s)", line + 1, je.text);
            return false;
        }
        if (line >= n) {
            buf_printf(why, "more than %zu rows", n);
            return false;
        }
        struct jtok keys[AMAX_ITEMS], vals[AMAX_ITEMS];
        size_t nk;
        if (!split_obj(p, len, keys, vals, AMAX_ITEMS, &nk)) {
            buf_printf(why, "line %zu: not a flat object", line + 1);
            return false;
        }
        size_t k = 0;
        for (size_t i = 0; i < a->nit; i++) {
            if (a->it[i].hidden)
                continue;
            if (k >= nk || !json_str_is(keys[k], a->it[i].out, strlen(a->it[i].out))) {
                buf_printf(why, "line %zu: item %zu is not named %s", line + 1, k + 1,
                           a->it[i].out);
                return false;
            }
            if (!val_ok(vals[k], &rows[line].v[i])) {
                buf_printf(why, "line %zu: %s = %.*s, want ", line + 1, a->it[i].out,
                           (int)vals[k].n, vals[k].p);
                xval_text(why, &rows[line].v[i]);
                return false;
            }
            k++;
        }
        if (k != nk) {
            buf_printf(why, "line %zu: %zu items, want %zu", line + 1, nk, k);
            return false;
        }
        line++;
        p = e ? e + 1 : p + len;
    }
    if (line != n) {
        buf_printf(why, "%zu rows, want %zu", line, n);
        return false;
    }
    return true;
}

static void check_agg(struct model *m)
{
    struct qspec q;
    struct aspec a;
    struct buf sql = BUF_INIT, got = BUF_INIT, err = BUF_INIT, why = BUF_INIT, want = BUF_INIT;
    gen_agg_query(m, &q, &a, &sql);
    m->max_groups = a.max_groups;
    int rc = run_sql(m, buf_cstr(&sql), QUERY_NDJSON, &got, &err);
    m->max_groups = 0;
    struct erow *rows;
    size_t n;
    bool approx;
    const char *msg;
    int want_rc = expected_agg(m, &q, &a, &rows, &n, &approx, &msg);
    if (want_rc == ERR_OK)
        erows_text(&a, rows, n, &want);
    if (rc != want_rc)
        fail_long("db %s (%s, %u buckets) aggregate query %zu, max_groups %lld:\n%s\n -> rc %d "
                  "%s%s\n want rc %d %s\n%s",
                  m->db, m->desc ? "desc" : "asc", m->buckets, m->agg_queries,
                  (long long)a.max_groups, buf_cstr(&sql), rc, buf_cstr(&err), buf_cstr(&got),
                  want_rc, msg ? msg : "", buf_cstr(&want));
    if (rc == ERR_OK && !approx && !agg_output_ok(&a, rows, n, buf_cstr(&got), &why))
        fail_long("db %s (%s, %u buckets) aggregate query %zu: %s\n%s\n got:\n%s\n want:\n%s",
                  m->db, m->desc ? "desc" : "asc", m->buckets, m->agg_queries, buf_cstr(&why),
                  buf_cstr(&sql), buf_cstr(&got), buf_cstr(&want));
    if (rc != ERR_OK) {
        const char *text = err.len ? buf_cstr(&err) : buf_cstr(&got);
        if (msg && !strstr(text, msg))
            fail_msg("%s\n -> %s\n want an error with '%s'", buf_cstr(&sql), text, msg);
        m->agg_errors++;
    }
    m->agg_queries++;
    m->agg_rows += n;
    m->agg_approx += approx;
    m->agg_fill += a.fill != 0 && rc == ERR_OK;
    m->agg_having += a.having != NULL && rc == ERR_OK;
    free(rows);
    xnode_free(q.tree);
    xnode_free(a.having);
    buf_destroy(&sql);
    buf_destroy(&got);
    buf_destroy(&err);
    buf_destroy(&why);
    buf_destroy(&want);
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
            xnode_free(q.tree);
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
    xnode_free(q.tree);
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
                     int64_t ts_step, int64_t ttl, int point_pct, size_t nq)
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
    m->point_pct = point_pct;
    write_rounds(m, db, san() ? 4 : 16, san() ? 150 : 700);
    note_rows_per_base(m);
    if (point_pct == 0)
        check_rare(m, db);
    if (ttl) {
        snprintf(sql, sizeof(sql), "ALTER DATABASE %s SET ttl = '%lldns'", name, (long long)ttl);
        buf_reset(&out);
        assert_int_equal(run_sql(m, sql, QUERY_NDJSON, &out, &err), 0);
        m->ttl = ttl;
    }
    for (size_t i = 0; i < nq; i++) {
        check_query(m);
        if (i % 3 != 2)
            check_agg(m);
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

static int setup_files(void **state, uint64_t max_file_bytes)
{
    struct model *m = xcalloc(1, sizeof(*m));
    snprintf(m->dir, sizeof(m->dir), "/tmp/lbq-model-XXXXXX");
    assert_non_null(mkdtemp(m->dir));
    struct store_opts so;
    store_opts_default(&so);
    so.dir = m->dir;
    so.wal_sync = STORE_SYNC_NONE;
    so.clock = clock_fixed;
    so.max_file_bytes = max_file_bytes;
    assert_int_equal(store_open(&so, &m->s), 0);
    m->rng = 0x9e3779b97f4a7c15ULL;
    const char *seed = getenv("LB_SEED");
    if (seed)
        m->rng = strtoull(seed, NULL, 0) | 1;
    m->read_rng = m->rng;
    print_message("# seed 0x%llx (LB_SEED)\n", (unsigned long long)m->rng);
    init_msgs(m->rng);
    init_words();
    *state = m;
    return 0;
}

/* small files: compactions split their output, and full files make later
 * ones partial (size-tiered), which folds merges only partly */
static int setup(void **state)
{
    return setup_files(state, 16u << 10);
}

/* files of the default size: a compacted window is one file, which the
 * store's counts by event and minute answer for */
static int setup_big(void **state)
{
    return setup_files(state, 64u << 20);
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
            /* the third pair holds log entries only: their blocks get word
             * filters, which searches read */
            model_db(m, name, d, bucket_counts[i], step, ttl, i == 2 ? 0 : 50, nq);
        }
    }
    print_message("# %zu queries, %zu with rows (%zu with a condition tree), %zu through the "
                  "parameter form, %zu refused full scans; %zu deletes removing %zu rows\n",
                  m->queries, m->nonempty, m->tree_nonempty, m->param_queries, m->refused,
                  m->deletes, m->deleted);
    print_message("# %zu aggregate queries giving %zu rows (%zu with FILL, %zu with HAVING), %zu "
                  "errors as expected, %zu with approximate percentiles (status checked only)\n",
                  m->agg_queries, m->agg_rows, m->agg_fill, m->agg_having, m->agg_errors,
                  m->agg_approx);
    print_message("# writes: %zu new rows, %zu merges, %zu duplicates (%zu rewrites); up to "
                  "%zu rows per (ts, host, event)\n",
                  m->puts, m->merges, m->dups, m->rewrites, m->max_rows_per_base);
    print_message("# log-only databases: EXPLAIN ANALYZE of searches read %llu blocks, skipped "
                  "%llu\n",
                  (unsigned long long)m->blocks_read, (unsigned long long)m->blocks_skipped);
    print_message("# aggregate queries took %llu rows from the tables' counts by event and "
                  "minute, %llu from host sections (windows split over several files)\n",
                  (unsigned long long)query_metrics_rows_counted(),
                  (unsigned long long)query_metrics_rows_from_sections());
    /* the identity paths were all exercised */
    assert_true(m->merges > 100 && m->dups > 100 && m->max_rows_per_base >= 4);
    /* and word filters let searches pass over blocks */
    assert_true(m->blocks_skipped > 0);
}

/* Aggregate queries of the shape the tables' counts by event and minute
 * answer in part (COUNT(*) by time bucket and event over a ts range; one
 * in two of them), against the same brute force, over databases whose
 * compacted windows are one file each, with writes, deletes, flushes and
 * compactions between. */
static void test_counted(void **state)
{
    struct model *m = *state;
    size_t nq = san() ? 100 : 600;
    uint64_t before = query_metrics_rows_counted();
    uint64_t sec_before = query_metrics_rows_from_sections();
    m->counted_pct = 50;
    model_db(m, "c0desc", true, 7, 37000000000LL, 0, 50, nq);
    model_db(m, "c0asc", false, 16, 37000000000LL, 0, 0, nq);
    model_db(m, "c1desc", true, 1, 7000000LL, 0, 50, nq);
    model_db(m, "c2asc", false, 7, 37000000000LL, 150 * 37000000000LL + 1, 50, nq);
    uint64_t counted = query_metrics_rows_counted() - before;
    uint64_t sections = query_metrics_rows_from_sections() - sec_before;
    print_message("# %zu aggregate queries; %llu rows taken from the tables' counts, %llu read "
                  "from host sections\n",
                  m->agg_queries, (unsigned long long)counted, (unsigned long long)sections);
    assert_true(counted > 1000);
}

/* Aggregate queries of one to three hosts over numeric fields (one in
 * two), which the host sections of compacted windows answer (one file a
 * window), against the same brute force, with writes, deletes, flushes
 * and compactions between. */
static void test_sections(void **state)
{
    struct model *m = *state;
    size_t nq = san() ? 100 : 600;
    uint64_t before = query_metrics_rows_from_sections();
    m->series_pct = 50;
    model_db(m, "h0desc", true, 7, 37000000000LL, 0, 50, nq);
    model_db(m, "h0asc", false, 16, 37000000000LL, 0, 0, nq);
    model_db(m, "h1desc", true, 1, 7000000LL, 0, 50, nq);
    model_db(m, "h2asc", false, 7, 37000000000LL, 150 * 37000000000LL + 1, 50, nq);
    uint64_t sections = query_metrics_rows_from_sections() - before;
    print_message("# %zu aggregate queries; %llu rows read from host sections\n", m->agg_queries,
                  (unsigned long long)sections);
    /* how many depends on how far background compactions got (slower
     * under the sanitizers): some, whatever the timing */
    assert_true(sections > (san() ? 100u : 1000u));
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counted, setup_big, teardown),
        cmocka_unit_test_setup_teardown(test_sections, setup_big, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
