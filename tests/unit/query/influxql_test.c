/* InfluxQL: the statements parse (and bad ones fail with InfluxDB's
 * message), the parser stays inside its input, statements need their
 * rights, and statements run against a real store give InfluxDB 1.x's
 * replies byte for byte: SELECT (raw, aggregates, GROUP BY time and tags,
 * fill, transformations, arithmetic, limits, epoch, chunks) and the meta
 * statements. */
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
#include "query/influxql.h"
#include "query/iql_int.h"
#include "store/store.h"

#define S 1000000000LL
#define T0 (1700000000LL * S) /* 2023-11-14T22:13:20Z */
#define NOW (T0 + 3600 * S)

static void parse_ok(const char *q)
{
    struct iql_script *s = NULL;
    struct buf err = BUF_INIT;
    int rc = iql_parse(q, strlen(q), NOW, &s, &err);
    if (rc != ERR_OK)
        print_error("%s: %s\n", q, buf_cstr(&err));
    assert_int_equal(rc, ERR_OK);
    iql_script_free(s);
    buf_destroy(&err);
}

static void test_parse(void **state)
{
    (void)state;
    static const char *const ok[] = {
        "CREATE DATABASE \"telegraf\"",
        "create database logs WITH DURATION 30d REPLICATION 1 SHARD DURATION 1h NAME \"autogen\"",
        "SHOW DATABASES; SHOW MEASUREMENTS;;",
        "SHOW MEASUREMENTS WITH MEASUREMENT =~ /cp.*/ LIMIT 100",
        "SHOW MEASUREMENTS ON d WHERE \"host\" = 'a'",
        "SHOW TAG KEYS FROM \"cpu\"",
        "SHOW TAG VALUES FROM \"cpu\" WITH KEY = \"host\" WHERE region =~ /eu/",
        "SHOW TAG VALUES WITH KEY IN (\"host\", \"region\")",
        "SHOW FIELD KEYS FROM cpu",
        "SHOW SERIES FROM cpu WHERE host = 'a' LIMIT 10 OFFSET 1",
        "SHOW RETENTION POLICIES ON \"d\"",
        "SHOW MEASUREMENT CARDINALITY",
        "DROP DATABASE x",
        "DROP MEASUREMENT \"cpu\"",
        "DELETE FROM cpu WHERE time < '2024-01-01T00:00:00Z'",
        "SELECT mean(\"value\") FROM \"cpu\" WHERE \"host\" = 'h' AND time >= 1700000000000ms and "
        "time <= 1700000360000ms GROUP BY time(1m) fill(null)",
        "SELECT * FROM \"d\".\"autogen\".\"cpu\" WHERE time > now() - 1h",
        "SELECT a + b * 2, -c AS neg FROM d..cpu, /m.*/ WHERE x::field > 1.5e3",
        "SELECT non_negative_derivative(max(v), 1s) FROM cpu WHERE time > now() - 5m GROUP BY "
        "time(10s, -5s), * fill(linear) ORDER BY time DESC LIMIT 5 OFFSET 1 SLIMIT 2 SOFFSET 1 "
        "tz('UTC')",
        "SELECT percentile(v, 99.5) FROM cpu WHERE time > 0 fill(-1.5)",
        "SELECT mean(\"v\") FROM \"autogen\".\"cpu\" WHERE time > now() - 1h GROUP BY time(1m), "
        "\"host\"::tag fill(null)",
        "-- a comment\nSELECT v FROM cpu WHERE (a = 'x' OR b != 'y') AND c !~ /z/",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        parse_ok(ok[i]);
}

/* The time range of a WHERE for its catalog lookups: the top-level AND's
 * bounds either way round, none from under an OR. */
static void test_where_time(void **state)
{
    (void)state;
    static const struct {
        const char *where;
        int64_t lo, hi;
    } cases[] = {
        {"time >= 1000ns AND time <= 2000ns", 1000, 2000},
        {"\"host\" = 'a' AND time > 1000ns AND 3000ns > time", 1000, 3000},
        {"1000ns <= time AND (time < 5000ns AND v > 1)", 1000, 5000},
        {"time >= 1000ns OR time <= 2000ns", INT64_MIN, INT64_MAX},
        {"time = 1500ns", 1500, 1500},
        {"time > now() - 1h", NOW - 3600 * S, INT64_MAX},
        {"v > 1", INT64_MIN, INT64_MAX},
    };
    struct iql_opts o = {0};
    struct iql_ctx c = {NULL, &o, NOW, NULL};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char q[256];
        snprintf(q, sizeof q, "SELECT v FROM m WHERE %s", cases[i].where);
        struct iql_script *s = NULL;
        struct buf err = BUF_INIT;
        assert_int_equal(iql_parse(q, strlen(q), NOW, &s, &err), ERR_OK);
        int64_t lo = INT64_MIN, hi = INT64_MAX;
        iql_where_time(&c, s->stmts[0].where, &lo, &hi);
        if (lo != cases[i].lo || hi != cases[i].hi) {
            print_error("%s: [%lld, %lld]\n", q, (long long)lo, (long long)hi);
            fail();
        }
        iql_script_free(s);
        buf_destroy(&err);
    }
}

static void test_parse_errors(void **state)
{
    (void)state;
    static const struct {
        const char *q;
        const char *msg; /* a part of the message */
    } bad[] = {
        {"", "missing required parameter \"q\""},
        {" ; ;", "missing required parameter \"q\""},
        {"SELEC x", "error parsing query: found SELEC, expected SELECT, DELETE, SHOW"},
        {"EXPLAIN SELECT * FROM cpu", "error parsing query: EXPLAIN statements are not supported"},
        {"kill query 12", "error parsing query: KILL statements are not supported"},
        {"SELECT FROM cpu", "found FROM, expected identifier"},
        {"SELECT v cpu", "found cpu, expected FROM at line 1, char 10"},
        {"SELECT v FROM", "found EOF, expected identifier"},
        {"SELECT v FROM cpu WHERE", "found EOF, expected identifier, string, number, bool"},
        {"SELECT v FROM cpu GROUP BY time(x)", "expected duration"},
        {"SELECT v FROM cpu fill(sometimes)", "expected null, none, previous, linear or a number"},
        {"SELECT v FROM cpu ORDER BY v", "only ORDER BY time supported"},
        {"SELECT v FROM cpu LIMIT x", "expected integer"},
        {"SELECT v INTO x FROM cpu", "SELECT INTO is not supported"},
        {"SELECT v FROM cpu WHERE a = 'open", "found 'open, expected identifier"},
        {"SHOW TAG VALUES FROM cpu", "expected WITH"},
        {"SHOW USERS", "expected DATABASES, FIELD"},
        {"CREATE USER u", "expected DATABASE"},
        {"CREATE DATABASE x WITH", "expected DURATION, NAME"},
        {"SHOW DATABASES extra", "found extra, expected ;"},
        {"DELETE", "expected FROM or WHERE"},
        {"SELECT v FROM cpu tz('Nope/Zone')",
         "error parsing query: unable to find time zone Nope/Zone"},
        {"SELECT v FROM cpu tz('../../etc/passwd')", "unable to find time zone"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct iql_script *s = NULL;
        struct buf err = BUF_INIT;
        int rc = iql_parse(bad[i].q, strlen(bad[i].q), NOW, &s, &err);
        if (rc != ERR_INVAL || !strstr(buf_cstr(&err), bad[i].msg)) {
            print_error("%s: rc %d, \"%s\"\n", bad[i].q, rc, buf_cstr(&err));
            fail();
        }
        assert_null(s);
        buf_destroy(&err);
    }
}

/* The query bytes need not end in NUL: every read stays inside len. */
static void test_bounded(void **state)
{
    (void)state;
    const char *q = "SELECT mean(\"v\") * 2.5e1 FROM /c/ WHERE t =~ /x/ AND time > '2024-01-01' "
                    "AND time < 1700000000000ms GROUP BY time(1m) fill(1); SHOW DATABASES";
    for (size_t len = 0; len <= strlen(q); len++) {
        char *copy = test_malloc(len ? len : 1);
        memcpy(copy, q, len);
        struct iql_script *s = NULL;
        struct buf err = BUF_INIT;
        if (iql_parse(copy, len, NOW, &s, &err) == ERR_OK)
            iql_script_free(s);
        buf_destroy(&err);
        test_free(copy);
    }
}

static void test_rights(void **state)
{
    (void)state;
    const char *q = "SELECT v FROM x.autogen.cpu; SHOW DATABASES; DELETE FROM cpu WHERE time < 5; "
                    "DROP MEASUREMENT cpu; CREATE DATABASE y; DROP DATABASE z; SHOW TAG KEYS ON w";
    struct iql_script *s;
    struct buf err = BUF_INIT;
    assert_int_equal(iql_parse(q, strlen(q), NOW, &s, &err), ERR_OK);
    assert_int_equal(iql_count(s), 7);
    static const struct {
        enum iql_right r;
        const char *db;
    } want[] = {{IQL_READ, "x"},  {IQL_READ, NULL}, {IQL_WRITE, NULL}, {IQL_WRITE, NULL},
                {IQL_ADMIN, "y"}, {IQL_ADMIN, "z"}, {IQL_READ, "w"}};
    for (size_t i = 0; i < 7; i++) {
        const char *db;
        assert_int_equal(iql_right_of(s, i, &db), want[i].r);
        if (want[i].db)
            assert_string_equal(db, want[i].db);
        else
            assert_null(db);
    }
    iql_script_free(s);
    buf_destroy(&err);
}

/* --- against a store --- */

struct fx {
    struct store *s;
    char dir[64];
};

static int64_t clock_fixed(void *arg)
{
    (void)arg;
    return NOW;
}

static void put(struct batch *b, int64_t ts, const char *host, const char *ev, const char *region,
                double usage, int64_t n)
{
    struct rec_tag t = {slice_make("region", 6), slice_make(region, strlen(region))};
    struct rec_field f[2] = {{.key = slice_make("usage", 5), .type = REC_FLOAT},
                             {.key = slice_make("n", 1), .type = REC_INT}};
    f[0].v.f = usage;
    f[1].v.i = n;
    struct buf v = BUF_INIT;
    rec_encode(&v, region[0] ? &t : NULL, region[0] ? 1 : 0, f, 2);
    batch_put(b, ts, slice_make(host, strlen(host)), slice_make(ev, strlen(ev)),
              slice_make(v.data, v.len));
    buf_destroy(&v);
}

static int setup(void **state)
{
    struct fx *f = xcalloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/lbq-iql-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    struct store_opts so;
    store_opts_default(&so);
    so.dir = f->dir;
    so.wal_sync = STORE_SYNC_NONE;
    so.clock = clock_fixed;
    assert_int_equal(store_open(&so, &f->s), 0);
    struct db_opts d = {4, true, 0};
    assert_int_equal(store_db_create(f->s, "d", &d), 0);
    struct store_db *db;
    assert_int_equal(store_db_get(f->s, "d", &db), 0);
    struct batch *b = batch_new();
    put(b, T0, "a", "cpu", "eu", 1.5, 3);
    put(b, T0 + 30 * S, "a", "cpu", "eu", 2.5, 5);
    put(b, T0 + 60 * S, "b", "cpu", "us", 10, 7);
    put(b, T0 + 150 * S, "a", "cpu", "eu", 4.5, 9);
    put(b, T0, "a", "mem", "", 100, 1);
    assert_int_equal(store_write(db, b), 0);
    batch_free(b);
    store_db_unref(db);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    store_close(f->s);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "# could not remove %s\n", f->dir);
    free(f);
    return 0;
}

/* Runs q on database d with the options; the reply in out. */
static void run_opts(struct fx *f, const char *q, int64_t epoch, size_t chunk, struct buf *out)
{
    struct query_opts qo;
    query_opts_default(&qo);
    qo.now_ns = NOW;
    qo.max_groups = 1000;
    struct iql_opts o = {&qo, "d", "host", epoch, chunk, false};
    struct iql_script *s;
    struct buf err = BUF_INIT;
    buf_reset(out);
    int rc = iql_parse(q, strlen(q), NOW, &s, &err);
    if (rc)
        print_error("%s: %s\n", q, buf_cstr(&err));
    assert_int_equal(rc, ERR_OK);
    iql_exec(f->s, s, &o, out);
    iql_script_free(s);
    buf_destroy(&err);
}

static void expect(struct fx *f, const char *q, int64_t epoch, size_t chunk, const char *want)
{
    struct buf out = BUF_INIT;
    run_opts(f, q, epoch, chunk, &out);
    if (strcmp(buf_cstr(&out), want) != 0) {
        print_error("%s\n got: %s\nwant: %s\n", q, buf_cstr(&out), want);
        fail();
    }
    buf_destroy(&out);
}

#define R0(x) "{\"results\":[{\"statement_id\":0," x "}]}\n"

static void test_select_raw(void **state)
{
    struct fx *f = *state;
    expect(f, "SELECT * FROM cpu WHERE time < now() AND region = 'eu'", 0, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"host\",\"n\",\"region\","
              "\"usage\"],\"values\":[[\"2023-11-14T22:13:20Z\",\"a\",3,\"eu\",1.5],"
              "[\"2023-11-14T22:13:50Z\",\"a\",5,\"eu\",2.5],"
              "[\"2023-11-14T22:15:50Z\",\"a\",9,\"eu\",4.5]]}]"));
    /* arithmetic, aliases, a tag; ORDER BY DESC, LIMIT, OFFSET; epoch */
    expect(f,
           "SELECT usage * 2 + 1, n / 2 AS half, host FROM cpu WHERE time > 0 AND n >= 5 "
           "ORDER BY time DESC LIMIT 2 OFFSET 1",
           1000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"usage\",\"half\",\"host\"],"
              "\"values\":[[1700000060000,21,3.5,\"b\"],[1700000030000,6,2.5,\"a\"]]}]"));
    /* GROUP BY a tag splits series; SLIMIT */
    expect(f, "SELECT usage FROM cpu WHERE time > 0 GROUP BY host SLIMIT 1", 1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"tags\":{\"host\":\"a\"},\"columns\":[\"time\","
              "\"usage\"],\"values\":[[1700000000,1.5],[1700000030,2.5],[1700000150,4.5]]}]"));
    /* ORDER BY time DESC lists the series in reverse, but SLIMIT and
     * SOFFSET choose them in ascending order (InfluxDB 1.6.7) */
    expect(f, "SELECT usage FROM cpu WHERE time > 0 GROUP BY host ORDER BY time DESC SLIMIT 1",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"tags\":{\"host\":\"a\"},\"columns\":[\"time\","
              "\"usage\"],\"values\":[[1700000150,4.5],[1700000030,2.5],[1700000000,1.5]]}]"));
    expect(f,
           "SELECT max(usage) FROM cpu WHERE time > 0 GROUP BY host ORDER BY time DESC SLIMIT 1 "
           "SOFFSET 1",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"tags\":{\"host\":\"b\"},\"columns\":[\"time\","
              "\"max\"],\"values\":[[1700000060,10]]}]"));
    /* SELECT /re/: the fields and tags it matches; fn(/re/) the fields */
    expect(f, "SELECT /^(n|region)$/ FROM cpu WHERE time > 0 AND host = 'b'", 1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"n\",\"region\"],"
              "\"values\":[[1700000060,7,\"us\"]]}]"));
    expect(f, "SELECT max(/s/) FROM cpu WHERE time > 0 AND host = 'b'", 1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"max_usage\"],"
              "\"values\":[[1700000060,10]]}]"));
    /* SELECT * over several measurements: the union of their columns */
    expect(f, "SELECT * FROM cpu, mem WHERE time > 0 AND host = 'a' LIMIT 1", 1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"host\",\"n\",\"region\","
              "\"usage\"],\"values\":[[1700000000,\"a\",3,\"eu\",1.5]]},{\"name\":\"mem\","
              "\"columns\":[\"time\",\"host\",\"n\",\"region\",\"usage\"],\"values\":[["
              "1700000000,\"a\",1,null,100]]}]"));
    /* a regex over measurements; host =~ */
    expect(f, "SELECT n FROM /^(cpu|mem)$/ WHERE time > 0 AND host =~ /a/ LIMIT 1", 1, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"n\"],\"values\":[["
              "1700000000000000000,3]]},{\"name\":\"mem\",\"columns\":[\"time\",\"n\"],"
              "\"values\":[[1700000000000000000,1]]}]"));
    /* math functions of rows */
    expect(f,
           "SELECT abs(usage * -1), floor(usage), ceil(n), round(usage), sqrt(n), pow(n, 2), "
           "log(usage, 2) FROM cpu WHERE time > 0 AND host = 'b'",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"abs\",\"floor\",\"ceil\","
              "\"round\",\"sqrt\",\"pow\",\"log\"],\"values\":[[1700000060,10,10,7,10,"
              "2.6457513110645907,49,3.3219280948873626]]}]"));
    /* "rp"."m": the policy is ignored, the database is the request's */
    expect(f, "SELECT n FROM \"autogen\".\"cpu\" WHERE time > 0 AND host = 'b'", 1, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"n\"],\"values\":[["
              "1700000060000000000,7]]}]"));
    expect(f, "SELECT n FROM cpu WHERE time > 0 AND region != 'eu'", 1, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"n\"],\"values\":[["
              "1700000060000000000,7]]}]"));
    /* a name that is no tag compared with '' is a missing tag */
    expect(f, "SELECT n FROM mem WHERE time > 0 AND region = ''", 1, 0,
           R0("\"series\":[{\"name\":\"mem\",\"columns\":[\"time\",\"n\"],\"values\":[["
              "1700000000000000000,1]]}]"));
    /* a tag against a number, WHERE false: no row (InfluxDB compares tags as strings) */
    expect(f, "SELECT n FROM cpu WHERE time > 0 AND host = 5", 1, 0,
           "{\"results\":[{\"statement_id\":0}]}\n");
    expect(f, "SELECT n FROM cpu WHERE time > 0 AND false", 1, 0,
           "{\"results\":[{\"statement_id\":0}]}\n");
    expect(f, "SELECT n FROM cpu WHERE time > 0 AND (false OR n = 9)", 1, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"n\"],\"values\":[["
              "1700000150000000000,9]]}]"));
    expect(f, "SELECT n FROM nothere WHERE time > 0", 0, 0,
           "{\"results\":[{\"statement_id\":0}]}\n");
}

static void test_select_agg(void **state)
{
    struct fx *f = *state;
    /* the dashboard query */
    expect(f,
           "SELECT mean(\"usage\") FROM \"cpu\" WHERE \"host\" = 'a' AND time >= 1700000000000ms "
           "and time <= 1700000179000ms GROUP BY time(1m) fill(null)",
           1000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"mean\"],\"values\":[["
              "1699999980000,2],[1700000040000,null],[1700000100000,4.5],[1700000160000,null]]}]"));
    expect(
        f,
        "SELECT count(n), max(n) FROM cpu WHERE time >= 1700000000000ms and time < "
        "1700000180000ms GROUP BY time(1m), host fill(0)",
        1000000000, 0,
        R0("\"series\":[{\"name\":\"cpu\",\"tags\":{\"host\":\"a\"},\"columns\":[\"time\","
           "\"count\",\"max\"],\"values\":[[1699999980,2,5],[1700000040,0,0],[1700000100,1,9],"
           "[1700000160,0,0]]},"
           "{\"name\":\"cpu\",\"tags\":{\"host\":\"b\"},\"columns\":[\"time\",\"count\",\"max\"],"
           "\"values\":[[1699999980,0,0],[1700000040,1,7],[1700000100,0,0],[1700000160,0,0]]}]"));
    /* count() is 0 in an empty bucket of fill(null), the others null */
    expect(f,
           "SELECT count(n), max(n) FROM cpu WHERE host = 'b' AND time >= 1700000000000ms and "
           "time < 1700000160000ms GROUP BY time(1m)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"count\",\"max\"],"
              "\"values\":[[1699999980,0,null],[1700000040,1,7],[1700000100,0,null]]}]"));
    expect(f,
           "SELECT sum(n) FROM cpu WHERE host = 'a' AND time >= 1700000000000ms and time < "
           "1700000160000ms GROUP BY time(1m) fill(linear)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"sum\"],\"values\":[["
              "1699999980,8],[1700000040,8],[1700000100,9]]}]"));
    expect(f,
           "SELECT last(n) FROM cpu WHERE host = 'a' AND time >= 1700000000000ms and time < "
           "1700000160000ms GROUP BY time(1m) fill(previous)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"last\"],\"values\":[["
              "1699999980,5],[1700000040,5],[1700000100,9]]}]"));
    expect(f,
           "SELECT mean(usage) FROM cpu WHERE time >= 1700000000000ms and time < 1700000160000ms "
           "GROUP BY time(1m) fill(none)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"mean\"],\"values\":[["
              "1699999980,2],[1700000040,10],[1700000100,4.5]]}]"));
    /* math functions of aggregates */
    expect(f,
           "SELECT abs(mean(usage)) * 2, round(max(usage)) FROM cpu WHERE time >= 1700000000000ms "
           "and time < 1700000120000ms GROUP BY time(1m)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"abs\",\"round\"],"
              "\"values\":[[1699999980,4,3],[1700000040,20,10],[1700000100,null,null]]}]"));
    /* the other aggregates, over all rows of cpu */
    expect(f,
           "SELECT count(n), sum(n), median(n), mode(n), spread(n), min(usage), first(n), "
           "last(usage), percentile(n, 50), stddev(n) FROM cpu WHERE time >= 1700000000000ms",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"count\",\"sum\",\"median\","
              "\"mode\",\"spread\",\"min\",\"first\",\"last\",\"percentile\",\"stddev\"],"
              "\"values\":[[1700000000,4,24,6,3,6,1.5,3,4.5,5,2.581988897471611]]}]"));
    /* a selector alone shows its point's time */
    expect(f, "SELECT max(usage) FROM cpu WHERE time > 0", 1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"max\"],\"values\":[["
              "1700000060,10]]}]"));
    /* a lone selector gives the other columns of its point */
    expect(f,
           "SELECT max(usage), host, n FROM cpu WHERE time >= 1700000000000ms and time < "
           "1700000160000ms GROUP BY time(1m)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"max\",\"host\",\"n\"],"
              "\"values\":[[1699999980,2.5,\"a\",5],[1700000040,10,\"b\",7],[1700000100,4.5,"
              "\"a\",9]]}]"));
    expect(f, "SELECT first(n), usage * 2 FROM cpu WHERE time > 0 GROUP BY host", 1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"tags\":{\"host\":\"a\"},\"columns\":[\"time\","
              "\"first\",\"usage\"],\"values\":[[1700000000,3,3]]},{\"name\":\"cpu\",\"tags\":{"
              "\"host\":\"b\"},\"columns\":[\"time\",\"first\",\"usage\"],\"values\":[["
              "1700000060,7,20]]}]"));
    /* top() and bottom(): the points' own times, in time order, not filled */
    expect(f,
           "SELECT top(usage, 2) FROM cpu WHERE time >= 1700000000000ms and time < "
           "1700000180000ms GROUP BY time(1m)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"top\"],\"values\":[["
              "1700000000,1.5],[1700000030,2.5],[1700000060,10],[1700000150,4.5]]}]"));
    expect(f, "SELECT bottom(n, 3) FROM cpu WHERE time > 0", 1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"bottom\"],\"values\":[["
              "1700000000,3],[1700000030,5],[1700000060,7]]}]"));
    expect(f, "SELECT top(usage, 2), mean(usage) FROM cpu WHERE time > 0", 0, 0,
           R0("\"error\":\"selector function top() cannot be combined with other functions\""));
    expect(f, "SELECT count(distinct(region)), count(distinct(n)) FROM cpu WHERE time > 0", 1, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"count\",\"count_1\"],"
              "\"values\":[[1,null,4]]}]"));
    /* distinct() per bucket: values in the order first seen, never filled */
    expect(f,
           "SELECT distinct(n) FROM cpu WHERE time >= 1700000000000ms AND time < 1700000180000ms "
           "GROUP BY time(1m)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"distinct\"],\"values\":"
              "[[1699999980,3],[1699999980,5],[1700000040,7],[1700000100,9]]}]"));
    expect(f, "SELECT distinct(n) FROM cpu WHERE time > 0 AND host = 'a'", 1, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"distinct\"],\"values\":["
              "[1,3],[1,5],[1,9]]}]"));
    /* integral() over windows: each closed on the line to the next point */
    expect(f,
           "SELECT integral(usage) FROM cpu WHERE time >= 1700000000000ms and time < "
           "1700000180000ms GROUP BY time(1m)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"integral\"],\"values\":[["
              "1699999980,97.5],[1700000040,501.11111111111114],[1700000100,301.38888888888886],"
              "[1700000160,null]]}]"));
    /* derivative of an aggregate: per GROUP BY interval by default */
    expect(f,
           "SELECT derivative(mean(usage)) FROM cpu WHERE time >= 1700000000000ms and time < "
           "1700000120000ms GROUP BY time(30s)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"derivative\"],\"values\":"
              "[[1700000010,1],[1700000040,7.5]]}]"));
    /* fill(linear) between the points, not from a filled bucket */
    expect(f,
           "SELECT mean(usage) FROM cpu WHERE time >= 1700000000000ms and time < 1700000160000ms "
           "GROUP BY time(30s) fill(linear)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"mean\"],\"values\":[["
              "1699999980,1.5],[1700000010,2.5],[1700000040,10],[1700000070,8.166666666666666],"
              "[1700000100,6.333333333333334],[1700000130,4.5]]}]"));
    expect(f, "SELECT integral(usage, 1m) FROM cpu WHERE time > 0 AND host = 'a'", 1, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"integral\"],\"values\":["
              "[1,8]]}]"));
    expect(f, "SELECT mean(*) FROM cpu WHERE time > 0 GROUP BY *", 1, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"tags\":{\"host\":\"a\",\"region\":\"eu\"},"
              "\"columns\":[\"time\",\"mean_n\",\"mean_usage\"],\"values\":[[1,5.666666666666667,"
              "2.8333333333333335]]},{\"name\":\"cpu\",\"tags\":{\"host\":\"b\",\"region\":"
              "\"us\"},\"columns\":[\"time\",\"mean_n\",\"mean_usage\"],\"values\":[[1,7,10]]}]"));
}

static void test_transformations(void **state)
{
    struct fx *f = *state;
    expect(f,
           "SELECT derivative(usage, 1s), difference(n), non_negative_difference(usage) FROM cpu "
           "WHERE host = 'a' AND time > 0",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"derivative\",\"difference\","
              "\"non_negative_difference\"],\"values\":[[1700000030,0.03333333333333333,2,1],"
              "[1700000150,0.016666666666666666,4,2]]}]"));
    expect(f,
           "SELECT cumulative_sum(n), moving_average(n, 2), elapsed(n, 1s) FROM cpu WHERE host = "
           "'a' AND time > 0",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"cumulative_sum\","
              "\"moving_average\",\"elapsed\"],\"values\":[[1700000000,3,null,null],"
              "[1700000030,8,4,30],[1700000150,17,7,120]]}]"));
    expect(f,
           "SELECT non_negative_derivative(max(n), 1m) FROM cpu WHERE time >= 1700000000000ms "
           "and time < 1700000180000ms GROUP BY time(1m)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"non_negative_derivative\"],"
              "\"values\":[[1700000040,2],[1700000100,2]]}]"));
    /* over GROUP BY time InfluxDB reads one interval before the filter's
     * start: on a boundary a whole bucket (max 5 of T0 and T0 + 30 s) */
    expect(f,
           "SELECT difference(max(n)) FROM cpu WHERE time >= 1700000040000ms and time < "
           "1700000180000ms GROUP BY time(1m)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"difference\"],"
              "\"values\":[[1700000040,2],[1700000100,2]]}]"));
    /* off a boundary the part of it from start - 1m (T0 + 30 s alone: 2.5),
     * and the filter's first bucket whole (T0 + 60 s, before the start: 10);
     * moving_average(x, 2) and (x, 3) alike read one interval */
    expect(f,
           "SELECT derivative(mean(usage), 1s), moving_average(mean(usage), 2) FROM cpu WHERE "
           "time >= 1700000070000ms and time < 1700000180000ms GROUP BY time(1m)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"derivative\","
              "\"moving_average\"],\"values\":[[1700000040,0.125,6.25],"
              "[1700000100,-0.09166666666666666,7.25]]}]"));
    /* cumulative_sum() reads the filter's range */
    expect(f,
           "SELECT cumulative_sum(max(n)) FROM cpu WHERE time >= 1700000070000ms and time < "
           "1700000180000ms GROUP BY time(1m)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"cumulative_sum\"],"
              "\"values\":[[1700000100,9]]}]"));
    /* ORDER BY time DESC: one interval after the end (T0 + 150 s), and the
     * transformation runs from the newest bucket down */
    expect(f,
           "SELECT difference(mean(usage)) FROM cpu WHERE time >= 1700000000000ms and time < "
           "1700000100000ms GROUP BY time(1m) ORDER BY time DESC",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"difference\"],"
              "\"values\":[[1700000040,5.5],[1699999980,-8]]}]"));
}

static void test_statement_errors(void **state)
{
    struct fx *f = *state;
    /* a failed statement stops the list: the rest are "not executed" */
    expect(f, "SHOW DATABASES; SELECT nope(v) FROM cpu WHERE time > 0; SHOW DATABASES", 0, 0,
           "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"databases\",\"columns\":"
           "[\"name\"],\"values\":[[\"d\"]]}]},{\"statement_id\":1,\"error\":\"undefined "
           "function nope()\"},{\"statement_id\":2,\"error\":\"not executed\"}]}\n");
    expect(f, "SELECT v FROM cpu", 0, 0,
           R0("\"error\":\"a query without a time range or a host reads the whole database, which "
              "this server refuses: add WHERE time > now() - 1h (or host = '...')\""));
    expect(f, "SHOW MEASUREMENTS ON nodb; SHOW TAG KEYS ON nodb", 0, 0,
           "{\"results\":[{\"statement_id\":0},{\"statement_id\":1,\"error\":\"database not "
           "found: nodb\"}]}\n");
    expect(f, "SELECT v FROM nodb..cpu WHERE time > 0", 0, 0,
           R0("\"error\":\"database not found: nodb\""));
    expect(f, "SELECT n FROM d..cpu, e..mem WHERE time > 0", 0, 0,
           R0("\"error\":\"sources from several databases in one statement are not supported: "
              "send one statement per database\""));
    expect(f, "SELECT mean(n), n FROM cpu WHERE time > 0", 0, 0,
           R0("\"error\":\"mixing aggregate and non-aggregate queries is not supported\""));
    expect(f, "SELECT max(n), min(n), host FROM cpu WHERE time > 0", 0, 0,
           R0("\"error\":\"mixing multiple selector functions with tags or fields is not "
              "supported\""));
    expect(f, "SELECT n FROM cpu WHERE time > 0 GROUP BY time(1m)", 0, 0,
           R0("\"error\":\"GROUP BY requires at least one aggregate function\""));
    expect(f, "SELECT mean(n) FROM cpu WHERE time > now() - 1000d GROUP BY time(1s)", 0, 0,
           R0("\"error\":\"too many buckets: 86400001 buckets of GROUP BY time over the range, "
              "more than max_groups = 1000; use a larger interval or fill(none)\""));
    /* tz(): times with the zone's offset, buckets on its local midnight */
    expect(f, "SELECT n FROM cpu WHERE host = 'b' AND time > 0 tz('Europe/Paris')", 0, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"n\"],\"values\":[["
              "\"2023-11-14T23:14:20+01:00\",7]]}]"));
    expect(f,
           "SELECT count(n) FROM cpu WHERE time >= '2023-11-14T00:00:00Z' AND time < "
           "'2023-11-15T12:00:00Z' GROUP BY time(1d) tz('America/Chicago')",
           0, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"count\"],\"values\":[["
              "\"2023-11-13T00:00:00-06:00\",0],[\"2023-11-14T00:00:00-06:00\",4],"
              "[\"2023-11-15T00:00:00-06:00\",0]]}]"));
    expect(f, "SELECT n FROM cpu WHERE time > 0 AND host =~ /(/", 0, 0,
           R0("\"error\":\"error parsing regex /(/: bad regular expression: missing closing "
              "parenthesis\""));
}

/* Limits at their ends: no overflow, no huge allocation. */
static void test_extremes(void **state)
{
    struct fx *f = *state;
    expect(f, "SELECT moving_average(n, 1000000000000) FROM cpu WHERE time > 0", 1, 0,
           "{\"results\":[{\"statement_id\":0}]}\n");
    expect(f,
           "SELECT n FROM cpu WHERE time > 0 AND host = 'b' LIMIT 9223372036854775807 SLIMIT "
           "9223372036854775807 SOFFSET 0",
           1, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"n\"],\"values\":[["
              "1700000060000000000,7]]}]"));
    expect(f,
           "SELECT n FROM cpu WHERE time > 0 OFFSET 9223372036854775807 SOFFSET "
           "9223372036854775807",
           1, 0, "{\"results\":[{\"statement_id\":0}]}\n");
    expect(f, "SELECT n FROM cpu WHERE time > 1e40", 1, 0,
           R0("\"error\":\"invalid time condition: compare time with now() - 1h, an RFC 3339 "
              "string or an epoch with a unit (1700000000000ms)\""));
    expect(f,
           "SELECT n FROM cpu WHERE time > -9223372036854775807 AND time < 0 GROUP BY time(1h) "
           "tz('Europe/Paris')",
           1, 0, R0("\"error\":\"GROUP BY requires at least one aggregate function\""));
    expect(f,
           "SELECT count(n) FROM cpu WHERE time >= 1700000000000ms AND time < 1700000060000ms "
           "GROUP BY time(100000d) tz('Europe/Paris')",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"count\"],\"values\":[["
              "-3600,2]]}]"));
}

static void test_chunks(void **state)
{
    struct fx *f = *state;
    expect(f, "SELECT n FROM cpu WHERE host = 'a' AND time > 0; SHOW DATABASES", 1, 2,
           "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\","
           "\"n\"],\"values\":[[1700000000000000000,3],[1700000030000000000,5]],\"partial\":"
           "true}],\"partial\":true}]}\n"
           "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\","
           "\"n\"],\"values\":[[1700000150000000000,9]]}]}]}\n"
           "{\"results\":[{\"statement_id\":1,\"series\":[{\"name\":\"databases\",\"columns\":["
           "\"name\"],\"values\":[[\"d\"]]}]}]}\n");
}

static void test_meta(void **state)
{
    struct fx *f = *state;
    expect(f, "SHOW MEASUREMENTS", 0, 0,
           R0("\"series\":[{\"name\":\"measurements\",\"columns\":[\"name\"],\"values\":[[\"cpu\"],"
              "[\"mem\"]]}]"));
    expect(f, "SHOW MEASUREMENTS WITH MEASUREMENT =~ /^c/ WHERE host = 'b'", 0, 0,
           R0("\"series\":[{\"name\":\"measurements\",\"columns\":[\"name\"],\"values\":[["
              "\"cpu\"]]}]"));
    expect(f, "SHOW TAG KEYS", 0, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"tagKey\"],\"values\":[[\"host\"],"
              "[\"region\"]]},{\"name\":\"mem\",\"columns\":[\"tagKey\"],\"values\":[[\"host\"]]}"
              "]"));
    expect(f, "SHOW TAG VALUES FROM cpu WITH KEY = \"host\"", 0, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"key\",\"value\"],\"values\":[["
              "\"host\",\"a\"],[\"host\",\"b\"]]}]"));
    expect(f, "SHOW TAG VALUES FROM cpu WITH KEY IN (host, region) WHERE region = 'us'", 0, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"key\",\"value\"],\"values\":[["
              "\"host\",\"b\"],[\"region\",\"us\"]]}]"));
    /* a time range and a host: answered from the catalog */
    expect(f,
           "SHOW TAG VALUES FROM cpu WITH KEY = \"region\" WHERE time >= 1700000050000ms AND "
           "host = 'b'",
           0, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"key\",\"value\"],\"values\":[["
              "\"region\",\"us\"]]}]"));
    expect(f, "SHOW TAG KEYS WHERE time < 1600000000000ms; SHOW MEASUREMENTS WHERE time > now()", 0,
           0, "{\"results\":[{\"statement_id\":0},{\"statement_id\":1}]}\n");
    /* LIMIT and OFFSET over the (key, value) rows of a measurement */
    expect(f, "SHOW TAG VALUES FROM cpu WITH KEY IN (host, region) LIMIT 2 OFFSET 1", 0, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"key\",\"value\"],\"values\":[["
              "\"host\",\"b\"],[\"region\",\"eu\"]]}]"));
    expect(f, "SHOW FIELD KEYS FROM cpu LIMIT 1 OFFSET 1; SHOW TAG KEYS OFFSET 5", 0, 0,
           "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"cpu\",\"columns\":["
           "\"fieldKey\",\"fieldType\"],\"values\":[[\"usage\",\"float\"]]}]},{\"statement_id\":"
           "1}]}\n");
    expect(f, "SHOW FIELD KEYS FROM cpu", 0, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"fieldKey\",\"fieldType\"],\"values\":"
              "[[\"n\",\"integer\"],[\"usage\",\"float\"]]}]"));
    expect(f, "SHOW SERIES", 0, 0,
           R0("\"series\":[{\"columns\":[\"key\"],\"values\":[[\"cpu,host=a,region=eu\"],"
              "[\"cpu,host=b,region=us\"],[\"mem,host=a\"]]}]"));
    expect(f, "SHOW RETENTION POLICIES", 0, 0,
           R0("\"series\":[{\"columns\":[\"name\",\"duration\",\"shardGroupDuration\","
              "\"replicaN\",\"default\"],\"values\":[[\"autogen\",\"0s\",\"168h0m0s\",1,true]]}]"));
    expect(f, "SHOW MEASUREMENT CARDINALITY", 0, 0,
           R0("\"series\":[{\"columns\":[\"cardinality estimation\"],\"values\":[[2]]}]"));
    expect(f, "SHOW MEASUREMENT EXACT CARDINALITY", 0, 0,
           R0("\"series\":[{\"columns\":[\"count\"],\"values\":[[2]]}]"));
}

static void test_writes(void **state)
{
    struct fx *f = *state;
    expect(f, "DELETE FROM cpu WHERE host = 'b'; SHOW SERIES FROM cpu", 0, 0,
           "{\"results\":[{\"statement_id\":0},{\"statement_id\":1,\"series\":[{\"columns\":["
           "\"key\"],\"values\":[[\"cpu,host=a,region=eu\"]]}]}]}\n");
    expect(f, "DROP MEASUREMENT mem; SELECT * FROM mem WHERE time > 0", 0, 0,
           "{\"results\":[{\"statement_id\":0},{\"statement_id\":1}]}\n");
    expect(f, "CREATE DATABASE e WITH DURATION 2d; SHOW RETENTION POLICIES ON e; DROP DATABASE e",
           0, 0,
           "{\"results\":[{\"statement_id\":0},{\"statement_id\":1,\"series\":[{\"columns\":["
           "\"name\",\"duration\",\"shardGroupDuration\",\"replicaN\",\"default\"],\"values\":[["
           "\"autogen\",\"48h0m0s\",\"24h0m0s\",1,true]]}]},{\"statement_id\":2}]}\n");
}

/* A name both a tag and a field of one measurement: SELECT * lists the
 * field, then the tag as name_1 (InfluxDB's columns); ::tag and ::field
 * choose in the select list and in WHERE. */
static void test_tag_and_field_of_one_name(void **state)
{
    struct fx *f = *state;
    struct store_db *db;
    assert_int_equal(store_db_get(f->s, "d", &db), 0);
    struct rec_tag t = {slice_make("x", 1), slice_make("tagv", 4)};
    struct rec_field fl[2] = {{.key = slice_make("x", 1), .type = REC_FLOAT},
                              {.key = slice_make("y", 1), .type = REC_INT}};
    fl[0].v.f = 1.5;
    fl[1].v.i = 2;
    struct buf v = BUF_INIT;
    rec_encode(&v, &t, 1, fl, 2);
    struct batch *b = batch_new();
    batch_put(b, T0, slice_make("a", 1), slice_make("both", 4), slice_make(v.data, v.len));
    assert_int_equal(store_write(db, b), 0);
    batch_free(b);
    buf_destroy(&v);
    store_db_unref(db);
    expect(f, "SELECT * FROM both WHERE time > 0", 1000000000, 0,
           R0("\"series\":[{\"name\":\"both\",\"columns\":[\"time\",\"host\",\"x\",\"x_1\","
              "\"y\"],\"values\":[[1700000000,\"a\",1.5,\"tagv\",2]]}]"));
    expect(f, "SELECT x::tag, x::field, x FROM both WHERE time > 0", 1000000000, 0,
           R0("\"series\":[{\"name\":\"both\",\"columns\":[\"time\",\"x\",\"x_1\",\"x_2\"],"
              "\"values\":[[1700000000,\"tagv\",1.5,1.5]]}]"));
    expect(f, "SELECT y FROM both WHERE time > 0 AND x::tag = 'tagv'", 1000000000, 0,
           R0("\"series\":[{\"name\":\"both\",\"columns\":[\"time\",\"y\"],"
              "\"values\":[[1700000000,2]]}]"));
    expect(f, "SELECT y FROM both WHERE time > 0 AND x::field = 1.5", 1000000000, 0,
           R0("\"series\":[{\"name\":\"both\",\"columns\":[\"time\",\"y\"],"
              "\"values\":[[1700000000,2]]}]"));
    expect(f, "SELECT y FROM both WHERE time > 0 AND x::field = 2", 1000000000, 0,
           "{\"results\":[{\"statement_id\":0}]}\n");
}

/* What InfluxDB 1.6.7 answers (checked against Debian's influxd): min and
 * max of booleans, a lone percentile at its point's time, mode's ties,
 * and two statements it refuses. */
static void test_as_influxdb_answers(void **state)
{
    struct fx *f = *state;
    struct store_db *db;
    assert_int_equal(store_db_get(f->s, "d", &db), 0);
    struct batch *b = batch_new();
    static const bool oks[] = {false, true, false};
    static const int64_t ns[] = {7, 3, 3, 7, 1};
    static const char *const lvls[] = {"info", "warn", "info", "err", "warn"};
    for (int i = 0; i < 5; i++) {
        struct rec_field fl[3] = {{.key = slice_make("ok", 2), .type = REC_BOOL},
                                  {.key = slice_make("n", 1), .type = REC_INT},
                                  {.key = slice_make("lvl", 3), .type = REC_STRING}};
        fl[0].v.b = oks[i % 3];
        fl[1].v.i = ns[i];
        fl[2].v.s = slice_cstr(lvls[i]);
        struct buf v = BUF_INIT;
        rec_encode(&v, NULL, 0, fl, 3);
        batch_put(b, T0 + i * 10 * S, slice_make("a", 1), slice_make("flags", 5),
                  slice_make(v.data, v.len));
        buf_destroy(&v);
    }
    assert_int_equal(store_write(db, b), 0);
    batch_free(b);
    store_db_unref(db);
    expect(f, "SELECT max(ok) FROM flags WHERE time > 0", 1000000000, 0,
           R0("\"series\":[{\"name\":\"flags\",\"columns\":[\"time\",\"max\"],\"values\":[["
              "1700000010,true]]}]"));
    expect(f, "SELECT max(*), min(*) FROM flags WHERE time >= 1700000000s", 1000000000, 0,
           R0("\"series\":[{\"name\":\"flags\",\"columns\":[\"time\",\"max_n\",\"max_ok\","
              "\"min_n\",\"min_ok\"],\"values\":[[1700000000,7,true,1,false]]}]"));
    /* mode() of strings by the same rule as numbers; of booleans true
     * unless false is more frequent */
    expect(f, "SELECT mode(lvl), mode(ok) FROM flags WHERE time >= 1700000000s", 1000000000, 0,
           R0("\"series\":[{\"name\":\"flags\",\"columns\":[\"time\",\"mode\",\"mode_1\"],"
              "\"values\":[[1700000000,\"warn\",false]]}]"));
    /* 3 and 7 twice each: the larger value's run, counted later, wins */
    expect(f, "SELECT mode(n) FROM flags WHERE time >= 1700000000s", 1000000000, 0,
           R0("\"series\":[{\"name\":\"flags\",\"columns\":[\"time\",\"mode\"],\"values\":[["
              "1700000000,7]]}]"));
    /* fill(value) of a boolean's selector: false, whatever the value */
    expect(f,
           "SELECT last(ok), max(n) FROM flags WHERE time >= 1700000000s AND time < 1700000080s "
           "GROUP BY time(20s) fill(7)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"flags\",\"columns\":[\"time\",\"last\",\"max\"],"
              "\"values\":[[1700000000,true,7],[1700000020,false,7],[1700000040,true,1],"
              "[1700000060,false,7]]}]"));
    /* host a's usage 1.5, 2.5, 4.5: the median's rank, at 2.5's time */
    expect(f, "SELECT percentile(usage, 50) FROM cpu WHERE time > 0 AND host = 'a'", 1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"percentile\"],"
              "\"values\":[[1700000030,2.5]]}]"));
    /* ORDER BY time DESC: the buckets newest first, a bucket's points not */
    expect(f,
           "SELECT top(usage, 2) FROM cpu WHERE time >= 1700000000s AND time < 1700000180s ORDER "
           "BY "
           "time DESC",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"top\"],\"values\":[["
              "1700000060,10],[1700000150,4.5]]}]"));
    expect(f,
           "SELECT bottom(usage, 2) FROM cpu WHERE time >= 1700000000s AND time < 1700000180s "
           "GROUP "
           "BY time(1m) ORDER BY time DESC",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"bottom\"],\"values\":[["
              "1700000150,4.5],[1700000060,10],[1700000000,1.5],[1700000030,2.5]]}]"));
    expect(f, "SELECT difference(max(usage)) FROM cpu WHERE time > 0", 0, 0,
           R0("\"error\":\"difference aggregate requires a GROUP BY interval\""));
    expect(f, "SELECT top(usage, 3) FROM cpu WHERE time > 0 LIMIT 2", 0, 0,
           R0("\"error\":\"limit (3) in top function can not be larger than the LIMIT (2) in the "
              "select statement\""));
}

/* fill() fills holes, buckets where no point fed an aggregate, not an
 * aggregate's null of points (stddev of one); fill(value) fills the
 * aggregates before the expression; count()'s holes are 0 under
 * fill(null) in a series that has the field. InfluxDB 1.6.7's answers on
 * the same rows (host a's usage 1.5, 2.5 in the first minute, 4.5 in the
 * third). */
static void test_fill_holes(void **state)
{
    struct fx *f = *state;
#define FQ(fill)                                                                                   \
    "SELECT max(usage) * 2 + 1, stddev(usage), count(n) FROM cpu WHERE time >= 1700000000s AND "   \
    "time < 1700000180s AND host = 'a' GROUP BY time(1m) fill(" fill ")"
#define FR(rows)                                                                                   \
    R0("\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"max\",\"stddev\",\"count\"],"        \
       "\"values\":[[1699999980,6,0.7071067811865476,2]," rows "]}]")
    expect(f, FQ("0"), 1000000000, 0,
           FR("[1700000040,1,0,0],[1700000100,10,null,1],[1700000160,1,0,0]"));
    expect(f, FQ("previous"), 1000000000, 0,
           FR("[1700000040,6,0.7071067811865476,2],[1700000100,10,null,1],[1700000160,10,null,1]"));
    expect(f, FQ("null"), 1000000000, 0,
           FR("[1700000040,null,null,0],[1700000100,10,null,1],[1700000160,null,null,0]"));
    expect(f, FQ("linear"), 1000000000, 0,
           FR("[1700000040,8,null,1],[1700000100,10,null,1],[1700000160,null,null,null]"));
#undef FQ
#undef FR
    /* a bucket with a point keeps its row, its aggregate null or not;
     * fill(none) drops holes only, as a transformation's input does */
    expect(f,
           "SELECT stddev(usage) FROM cpu WHERE time >= 1700000000s AND time < 1700000180s GROUP "
           "BY time(1m), host fill(none)",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"tags\":{\"host\":\"a\"},\"columns\":[\"time\","
              "\"stddev\"],\"values\":[[1699999980,0.7071067811865476],[1700000100,null]]},{"
              "\"name\":"
              "\"cpu\",\"tags\":{\"host\":\"b\"},\"columns\":[\"time\",\"stddev\"],\"values\":[["
              "1700000040,null]]}]"));
    expect(f,
           "SELECT difference(stddev(usage)) FROM cpu WHERE time >= 1700000000s AND time < "
           "1700000180s GROUP BY time(1m), host",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"tags\":{\"host\":\"a\"},\"columns\":[\"time\","
              "\"difference\"],\"values\":[[1700000100,null]]}]"));
    expect(f,
           "SELECT count(usage) FROM cpu, mem WHERE time >= 1700000000s AND time < 1700000180s "
           "GROUP BY time(1m), host",
           1000000000, 0,
           R0("\"series\":[{\"name\":\"cpu\",\"tags\":{\"host\":\"a\"},\"columns\":[\"time\","
              "\"count\"],\"values\":[[1699999980,2],[1700000040,0],[1700000100,1],[1700000160,0]]}"
              ","
              "{\"name\":\"cpu\",\"tags\":{\"host\":\"b\"},\"columns\":[\"time\",\"count\"],"
              "\"values\":[[1699999980,0],[1700000040,1],[1700000100,0],[1700000160,0]]},{\"name\":"
              "\"mem\",\"tags\":{\"host\":\"a\"},\"columns\":[\"time\",\"count\"],\"values\":[["
              "1699999980,1],[1700000040,0],[1700000100,0],[1700000160,0]]}]"));
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_where_time),
        cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_rights),
        cmocka_unit_test_setup_teardown(test_select_raw, setup, teardown),
        cmocka_unit_test_setup_teardown(test_select_agg, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transformations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_statement_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chunks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extremes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_meta, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tag_and_field_of_one_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_as_influxdb_answers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fill_holes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
