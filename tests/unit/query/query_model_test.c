/* Randomized model test of the whole query layer against a real store:
 * random events (with overwrites and deletes) go into DESC and ASC
 * databases of 1, 7 and 16 buckets, with flushes and compactions between
 * batches; then hundreds of random queries of every shape (GET with IN
 * lists, ts ranges, host with or without event, field and tag filters, both
 * orders, limits, COUNT, DELETE) are compared byte for byte with a
 * brute-force answer over an in-memory reference. LB_SAN=1 runs less. */
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
#include "query/encode.h"
#include "query/query.h"
#include "query/query_int.h"
#include "model/record.h"
#include "store/store.h"

#define NOW 1700000000000000000LL
#define TS_STEP 7000000LL /* distinct ts values are NOW - k * TS_STEP */
#define TS_POOL 300

static const char *hosts[] = {"", "h0", "h1", "h2", "h3", "web-17"};
static const char *events[] = {"e0", "e1", "cpu.load", "e3"};
static const char *regions[] = {"eu", "us", "ap"};
#define NH (sizeof(hosts) / sizeof(hosts[0]))
#define NE (sizeof(events) / sizeof(events[0]))

struct ref_row {
    int64_t ts;
    const char *host, *event;
    double v;
    int64_t c;
    const char *region;
    struct buf val;
};

struct model {
    struct store *s;
    char dir[64];
    struct ref_row *rows;
    size_t n, cap;
    uint64_t rng;
    int64_t ttl;
    bool desc;
    uint32_t buckets;
    const char *db;
    size_t queries, nonempty;
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

/* --- reference --- */

static struct ref_row *ref_find(struct model *m, int64_t ts, const char *h, const char *e)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->rows[i].ts == ts && m->rows[i].host == h && m->rows[i].event == e)
            return &m->rows[i];
    return NULL;
}

static void ref_remove(struct model *m, struct ref_row *r)
{
    buf_destroy(&r->val);
    *r = m->rows[--m->n];
}

static void encode_value(struct ref_row *r)
{
    struct rec_tag tag = {slice_cstr("region"), slice_cstr(r->region)};
    struct rec_field f[3];
    memset(f, 0, sizeof(f));
    f[0].key = slice_cstr("v");
    f[0].type = REC_FLOAT;
    f[0].v.f = r->v;
    f[1].key = slice_cstr("c");
    f[1].type = REC_INT;
    f[1].v.i = r->c;
    f[2].key = slice_cstr("s");
    f[2].type = REC_STRING;
    f[2].v.s = slice_cstr("msg \"quoted\"\n");
    buf_reset(&r->val);
    rec_encode(&r->val, &tag, 1, f, 3);
}

static int64_t rand_ts(struct model *m)
{
    return NOW - (int64_t)rn(m, TS_POOL) * TS_STEP;
}

static void write_batch(struct model *m, struct store_db *db, size_t n)
{
    struct batch *b = batch_new();
    for (size_t i = 0; i < n; i++) {
        int64_t ts = rand_ts(m);
        const char *h = hosts[rn(m, NH)], *e = events[rn(m, NE)];
        struct ref_row *r = ref_find(m, ts, h, e);
        if (rn(m, 10) == 0) {
            batch_delete(b, ts, slice_cstr(h), slice_cstr(e));
            if (r)
                ref_remove(m, r);
            continue;
        }
        if (!r) {
            if (m->n == m->cap)
                m->rows = xrealloc(m->rows, (m->cap = m->cap ? 2 * m->cap : 256) * sizeof(*r));
            r = &m->rows[m->n++];
            memset(r, 0, sizeof(*r));
            r->ts = ts;
            r->host = h;
            r->event = e;
        }
        r->v = (double)rn(m, 1000) / 10.0;
        r->c = (int64_t)rn(m, 600) - 100;
        r->region = regions[rn(m, 3)];
        encode_value(r);
        batch_put(b, ts, slice_cstr(h), slice_cstr(e), slice_make(r->val.data, r->val.len));
    }
    int rc;
    while ((rc = store_write(db, b)) == ERR_BUSY) /* back-pressure: flushing catches up */
        usleep(1000);
    assert_int_equal(rc, 0);
    batch_free(b);
}

/* --- random queries --- */

struct qspec {
    int ts_kind; /* 0 none, 1 range, 2 points */
    int64_t lo, hi;
    int64_t pts[4];
    size_t npts;
    bool hosts[NH], has_host;
    bool events[NE], has_event;
    int pred; /* 0 none, 1 v > x, 2 c <= y, 3 region = r, 4 v>x AND region */
    double px;
    int64_t py;
    const char *pr;
    int order; /* 0 stored, 1 asc, -1 desc */
    int64_t limit; /* -1 none */
    bool count, cols;
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
        case 0: buf_printf(sql, " AND ts BETWEEN %lld AND %lld", (long long)q->lo, (long long)q->hi); break;
        case 1:
            buf_printf(sql, " AND ts > %lld AND ts < %lld", (long long)q->lo - 1, (long long)q->hi + 1);
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
    q->pred = (int)rn(m, 5);
    q->px = (double)rn(m, 100);
    q->py = (int64_t)rn(m, 600) - 100;
    q->pr = regions[rn(m, 3)];
    if (q->pred == 1 || q->pred == 4)
        buf_printf(sql, " AND v > %g", q->px);
    if (q->pred == 2)
        buf_printf(sql, " AND fields.c <= %lld", (long long)q->py);
    if (q->pred == 3 || q->pred == 4)
        buf_printf(sql, " AND tags.region = '%s'", q->pr);
}

static void gen_query(struct model *m, struct qspec *q, struct buf *sql)
{
    memset(q, 0, sizeof(*q));
    q->limit = -1;
    int shape = (int)rn(m, 6); /* 0 GET, 1 scan, 2 index, 3 index+event, 4 full, 5 points */
    q->ts_kind = shape == 0 || shape == 5 ? 2 : shape == 1 ? 1 : shape == 4 ? 0 : (int)rn(m, 3);
    if (shape == 0 || shape == 2 || shape == 3)
        gen_set(m, q->hosts, NH, &q->has_host);
    if (shape == 0 || shape == 3 || (shape != 2 && rn(m, 3) == 0))
        gen_set(m, q->events, NE, &q->has_event);
    q->count = rn(m, 5) == 0;
    q->cols = !q->count && rn(m, 6) == 0;
    buf_printf(sql, "SELECT %s%s FROM %s", shape == 4 ? "/*+ full_scan */ " : "",
               q->count ? "COUNT(*)" : q->cols ? "ts, host, c, tags.region" : "*", m->db);
    struct buf conds = BUF_INIT;
    gen_ts(m, q, &conds);
    if (q->has_host)
        sql_set(&conds, "host", q->hosts, hosts, NH);
    if (q->has_event)
        sql_set(&conds, "event", q->events, events, NE);
    gen_pred(m, q, &conds);
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

static bool ref_match(const struct model *m, const struct qspec *q, const struct ref_row *r)
{
    if (m->ttl > 0 && r->ts < NOW - m->ttl)
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
    if ((q->pred == 1 || q->pred == 4) && !(r->v > q->px))
        return false;
    if (q->pred == 2 && !(r->c <= q->py))
        return false;
    if ((q->pred == 3 || q->pred == 4) && strcmp(r->region, q->pr) != 0)
        return false;
    return true;
}

static bool sort_desc;

static int cmp_ref(const void *a, const void *b)
{
    const struct ref_row *x = *(const struct ref_row *const *)a;
    const struct ref_row *y = *(const struct ref_row *const *)b;
    if (x->ts != y->ts)
        return ((x->ts > y->ts) - (x->ts < y->ts)) * (sort_desc ? -1 : 1);
    int c = strcmp(x->host, y->host);
    return c ? c : strcmp(x->event, y->event);
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
    struct sql_col cols[] = {{SQL_COL_TS, NULL}, {SQL_COL_HOST, NULL}, {SQL_COL_FIELD, (char *)"c"},
                             {SQL_COL_TAG, (char *)"region"}};
    struct enc_proj proj = {!q->cols, cols, 4};
    for (size_t i = 0; i < n; i++) {
        const struct ref_row *r = sel[i];
        assert_int_equal(enc_row(out, r->ts, slice_cstr(r->host), slice_cstr(r->event),
                                 slice_make("", 0), slice_make(r->val.data, r->val.len), &proj),
                         0);
        buf_putc(out, '\n');
    }
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
    while ((n = query_cursor_read(c, tmp, 1 + rn(m, sizeof(tmp)))) > 0)
        buf_append(out, tmp, (size_t)n);
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
                 m->desc ? "desc" : "asc", m->buckets, m->queries, buf_cstr(&sql),
                 buf_cstr(&got), buf_cstr(&want));
    m->queries++;
    m->nonempty += want.len > 0 && !q.count;
    buf_destroy(&sql);
    buf_destroy(&got);
    buf_destroy(&want);
    buf_destroy(&err);
}

/* DELETE FROM db WHERE ts BETWEEN a AND b AND host = 'h' via SQL. */
static void check_delete(struct model *m)
{
    int64_t a = rand_ts(m), b = a + 20 * TS_STEP;
    const char *h = hosts[rn(m, NH)];
    char sql[256];
    snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE ts BETWEEN %lld AND %lld AND host = '%s'",
             m->db, (long long)a, (long long)b, h);
    size_t want = 0;
    for (size_t i = 0; i < m->n;) {
        struct ref_row *r = &m->rows[i];
        if (r->ts >= a && r->ts <= b && r->host == h) {
            want += !(m->ttl > 0 && r->ts < NOW - m->ttl);
            ref_remove(m, r);
            continue;
        }
        i++;
    }
    struct buf got = BUF_INIT, err = BUF_INIT;
    assert_int_equal(run_sql(m, sql, QUERY_NDJSON, &got, &err), 0);
    char exp[64];
    snprintf(exp, sizeof(exp), "{\"deleted\":%zu}\n", want);
    assert_string_equal(buf_cstr(&got), exp);
    buf_destroy(&got);
    buf_destroy(&err);
}

static void model_db(struct model *m, const char *name, bool desc, uint32_t buckets, int64_t ttl,
                     size_t nq)
{
    struct store_db *db;
    char sql[200];
    struct buf out = BUF_INIT, err = BUF_INIT;
    snprintf(sql, sizeof(sql), "CREATE DATABASE %s WITH (buckets=%u, ts_order='%s')", name,
             buckets, desc ? "desc" : "asc");
    m->db = name;
    assert_int_equal(run_sql(m, sql, QUERY_NDJSON, &out, &err), 0);
    assert_int_equal(store_db_get(m->s, name, &db), 0);
    m->desc = desc;
    m->buckets = buckets;
    m->ttl = 0;
    size_t rounds = san() ? 4 : 16;
    for (size_t r = 0; r < rounds; r++) {
        write_batch(m, db, 1 + rn(m, san() ? 150 : 700));
        if (rn(m, 3) == 0)
            assert_int_equal(store_db_flush(db), 0);
        if (rn(m, 4) == 0)
            assert_int_equal(store_db_compact(db), 0);
    }
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
        if (i == nq / 2)
            query_test_set_group_cap(64); /* force the oversized-group re-read */
    }
    query_test_set_group_cap(0);
    store_db_unref(db);
    for (size_t i = 0; i < m->n; i++)
        buf_destroy(&m->rows[i].val);
    m->n = 0;
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
    assert_int_equal(store_open(&so, &m->s), 0);
    m->rng = 0x9e3779b97f4a7c15ULL;
    const char *seed = getenv("LB_SEED");
    if (seed)
        m->rng = strtoull(seed, NULL, 0) | 1;
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
    char name[32];
    for (size_t i = 0; i < 3; i++) {
        for (int d = 0; d < 2; d++) {
            snprintf(name, sizeof(name), "m%zu%s", i, d ? "desc" : "asc");
            int64_t ttl = i == 1 ? 150 * TS_STEP + TS_STEP / 2 : 0;
            model_db(m, name, d, bucket_counts[i], ttl, nq);
        }
    }
    print_message("# %zu queries, %zu with rows\n", m->queries, m->nonempty);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_model, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
