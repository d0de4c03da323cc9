/* Parser tests: table-driven good and bad statements (with the error
 * position), WHERE normalisation, times and durations, and the planner's
 * choices and refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "query/plan.h"
#include "query/sql.h"

#define NOW 1700000000000000000LL

static const char *good[] = {
    "SELECT * FROM d",
    "select * from d where ts > 5",
    "SELECT COUNT(*) FROM d WHERE host = 'a' AND event IN ('x','y')",
    "SELECT ts, host, fields.value, tags.region, code FROM d WHERE ts BETWEEN 1 AND 2",
    "SELECT * FROM d WHERE ts IN (1, 2, 3) AND host IN ('a') AND event = 'e' ORDER BY ts DESC "
    "LIMIT 10",
    "SELECT /*+ full_scan */ * FROM d",
    "SELECT * FROM d WHERE ts >= '2024-01-01T00:00:00Z' AND ts < now() - 1h",
    "SELECT * FROM d WHERE value > -3.5e2 AND msg = 'it''s' AND ok = true",
    "SELECT * FROM \"my-db\" WHERE (ts > 1 AND ts < 9) ORDER BY ts ASC",
    "EXPLAIN SELECT * FROM d WHERE host = 'h'",
    "CREATE DATABASE d",
    "CREATE DATABASE IF NOT EXISTS d WITH (buckets=16, ts_order='asc', ttl='30d')",
    "ALTER DATABASE d SET ttl='7d'",
    "ALTER DATABASE d SET ttl = 0",
    "DROP DATABASE d",
    "DROP DATABASE IF EXISTS d",
    "SHOW DATABASES",
    "DELETE FROM d WHERE ts < 100",
    "SHOW DATABASES; SELECT * FROM d WHERE ts > 1;",
    "-- comment\nSELECT * /* c */ FROM d WHERE ts > 1",
    "SELECT * FROM d WHERE fields.x != 2 AND tags.k <> 'v' AND y <= 18446744073709551615",
    "SELECT * FROM d WHERE ts > 1 -- a comment that ends the input",
    "SELECT /*+ full_scan */ * FROM d /**/",
};

static void test_good(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        struct sql_script sc;
        struct buf err = BUF_INIT;
        int rc = sql_parse(good[i], strlen(good[i]), NOW, &sc, &err);
        if (rc)
            fail_msg("'%s' -> %s", good[i], buf_cstr(&err));
        sql_script_destroy(&sc);
        buf_destroy(&err);
    }
}

struct bad_case {
    const char *sql;
    const char *msg; /* expected error text */
};

static const struct bad_case bad[] = {
    {"SELECT * FORM d", "syntax error at position 10: expected FROM, found 'FORM'"},
    {"", "syntax error at position 1: expected a statement, found end of input"},
    {"SELEC * FROM d", "syntax error at position 1: expected SELECT, EXPLAIN, DELETE, CREATE, "
                       "ALTER, DROP or SHOW, found 'SELEC'"},
    {"SELECT * FROM", "syntax error at position 14: expected a database name, found end of input"},
    {"SELECT * FROM d WHERE msg ~ 'a(b'", "error at position 33: bad regular expression: "
                                          "missing closing parenthesis"},
    {"SELECT * FROM d WHERE msg ~ 'ab)cd'", "error at position 32: bad regular expression: "
                                            "unmatched closing parenthesis"},
    {"SELECT * FROM d WHERE msg MATCH '-- .'",
     "error at position 34: MATCH needs at least one word"},
    {"SELECT * FROM d WHERE msg MATCH 'a \"b'", "error at position 36: unterminated \" in MATCH"},
    {"SELECT nosuch(value) FROM d", "error at position 8: unknown function 'nosuch' (known: count, "
                                    "sum, avg, min, max, first, last, percentile, median, "
                                    "time_bucket)"},
    {"SELECT time_bucket('0s'), COUNT(*) FROM d GROUP BY 1",
     "error at position 20: bad bucket width: between 1ms and 366d"},
    {"SELECT time_bucket('1y'), COUNT(*) FROM d GROUP BY 1",
     "error at position 20: bad duration '1y' (units ns us ms s m h d w)"},
    {"SELECT host, COUNT(*) FROM d", "error at position 8: 'host' must be in GROUP BY, or inside "
                                     "an aggregate such as last(...)"},
    {"SELECT percentile(value, 101) FROM d", "error at position 26: a percentile is a number from "
                                             "0 to 100"},
    {"SELECT COUNT(*) FROM d GROUP BY COUNT(*)",
     "error at position 33: cannot GROUP BY an aggregate"},
    {"SELECT host FROM d GROUP BY host FILL(0)", "error at position 38: FILL needs GROUP BY "
                                                 "time_bucket(...)"},
    {"SELECT * FROM d WHERE msg LIKE 5",
     "syntax error at position 32: expected a 'pattern', found '5'"},
    {"SELECT * FROM d WHERE ts > 'yesterday'",
     "error at position 28: bad time 'yesterday' (use integer ns, RFC 3339 or now() - 1h)"},
    {"SELECT * FROM d WHERE x = 'unterminated", "syntax error at position 27: expected a value, "
                                                "found ''unterminated'"},
    {"SELECT * FROM d LIMIT x", "syntax error at position 23: expected an integer, found 'x'"},
    {"SELECT * FROM d ORDER BY host", "syntax error at position 26: expected ts (rows are "
                                      "ordered by ts only), found 'host'"},
    {"CREATE DATABASE d WITH (buckets=0)", "error at position 33: buckets must be 1..1024"},
    {"CREATE DATABASE d WITH (ttl='3x')",
     "error at position 29: bad ttl '3x' (a duration such as '30d', or '0')"},
    {"ALTER DATABASE d SET buckets=3",
     "error at position 22: buckets is fixed when the database is created; only ttl can change"},
    {"SELECT /*+ fast */ * FROM d", "error at position 8: unknown hint 'fast' (known: full_scan)"},
    {"SELECT * FROM d WHERE tags.k = 3", "error at position 32: a tag compares with a 'string'"},
    {"SELECT * FROM d WHERE foo.k = 3",
     "error at position 23: a dotted name must start with tags. or fields."},
    {"SELECT * FROM d x",
     "syntax error at position 17: expected ';' or end of statement, found 'x'"},
    {"SELECT * FROM d WHERE ts > 99999999999999999999",
     "error at position 28: integer out of range"},
    {"SELECT * FROM d WHERE ts > 0 /* never closed",
     "syntax error at position 30: unterminated comment"},
    {"SELECT * FROM d /*", "syntax error at position 17: unterminated comment"},
    {"SELECT * FROM d /*/", "syntax error at position 17: unterminated comment"},
    {"SELECT /*+ full_scan * FROM d", "syntax error at position 8: unterminated comment"},
};

static void test_bad(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct sql_script sc;
        struct buf err = BUF_INIT;
        int rc = sql_parse(bad[i].sql, strlen(bad[i].sql), NOW, &sc, &err);
        if (rc != ERR_INVAL)
            fail_msg("'%s' parsed (rc %d)", bad[i].sql, rc);
        if (strcmp(buf_cstr(&err), bad[i].msg) != 0)
            fail_msg("'%s':\n got  %s\n want %s", bad[i].sql, buf_cstr(&err), bad[i].msg);
        buf_destroy(&err);
    }
}

static void parse1(const char *sql, struct sql_script *sc)
{
    struct buf err = BUF_INIT;
    if (sql_parse(sql, strlen(sql), NOW, sc, &err))
        fail_msg("%s: %s", sql, buf_cstr(&err));
    buf_destroy(&err);
}

static void test_where(void **state)
{
    (void)state;
    struct sql_script sc;
    parse1("SELECT * FROM d WHERE ts >= 10 AND ts < 20 AND ts BETWEEN 5 AND 15 AND "
           "host IN ('b','a','b') AND host IN ('a','c') AND event = 'e' AND ts IN (3, 12, 11, 12)",
           &sc);
    const struct sql_where *w = &sc.stmts[0].sel.where;
    assert_true(w->has_lo && w->has_hi);
    assert_int_equal(w->ts_lo, 10);
    assert_int_equal(w->ts_hi, 15);
    assert_int_equal(w->nts, 3);
    assert_int_equal(w->ts[0], 3);
    assert_int_equal(w->ts[2], 12);
    assert_true(w->host.is_set);
    assert_int_equal(w->host.n, 1);
    assert_string_equal(w->host.v[0], "a");
    assert_int_equal(w->event.n, 1);
    sql_script_destroy(&sc);

    parse1("SELECT COUNT(*) FROM d WHERE ts > now() - 1h AND fields.v >= 2.5 AND tags.r = 'eu' "
           "ORDER BY ts ASC LIMIT 7",
           &sc);
    const struct sql_stmt *st = &sc.stmts[0];
    assert_true(st->sel.count);
    assert_int_equal(st->sel.where.ts_lo, NOW - 3600000000000LL + 1);
    const struct sql_expr *c = st->sel.where.cond;
    assert_int_equal(c->kind, SQL_E_AND);
    assert_int_equal(c->nkids, 3);
    assert_int_equal(c->kids[1]->col.kind, SQL_COL_FIELD);
    assert_int_equal(c->kids[1]->v.type, SQL_V_FLOAT);
    assert_int_equal(c->kids[2]->col.kind, SQL_COL_TAG);
    assert_int_equal(st->sel.order, 1);
    assert_int_equal(st->sel.limit, 7);
    sql_script_destroy(&sc);

    parse1("CREATE DATABASE x WITH (buckets=7, ts_order='asc', ttl='30d'); ALTER DATABASE x SET "
           "ttl='12h'",
           &sc);
    assert_int_equal(sc.n, 2);
    assert_int_equal(sc.stmts[0].buckets, 7);
    assert_false(sc.stmts[0].ts_desc);
    assert_int_equal(sc.stmts[0].ttl_ns, 30LL * 86400 * 1000000000LL);
    assert_int_equal(sc.stmts[1].ttl_ns, 12LL * 3600 * 1000000000LL);
    assert_int_equal(sc.stmts[1].pos, 64);
    sql_script_destroy(&sc);

    /* A dropped name followed by its duplicate (found by the SQL fuzzer: the
     * duplicate test read the freed name). */
    parse1("SELECT * FROM d WHERE host IN ('a') AND host IN ('z', 'a', 'z', 'z')", &sc);
    assert_int_equal(sc.stmts[0].sel.where.host.n, 1);
    assert_string_equal(sc.stmts[0].sel.where.host.v[0], "a");
    sql_script_destroy(&sc);
    parse1("SELECT * FROM d WHERE event IN ('x', 'y') AND event IN ('q', 'q', 'y', 'y')", &sc);
    assert_int_equal(sc.stmts[0].sel.where.event.n, 1);
    assert_string_equal(sc.stmts[0].sel.where.event.v[0], "y");
    sql_script_destroy(&sc);
}

static void test_times(void **state)
{
    (void)state;
    int64_t t;
    assert_int_equal(sql_parse_time("2024-01-01T00:00:00Z", 20, 0, &t), 0);
    assert_int_equal(t, 1704067200000000000LL);
    assert_int_equal(sql_parse_time("2024-01-01T01:00:00.5+01:00", 27, 0, &t), 0);
    assert_int_equal(t, 1704067200500000000LL);
    assert_int_equal(sql_parse_time("1970-01-01", 10, 0, &t), 0);
    assert_int_equal(t, 0);
    assert_int_equal(sql_parse_time("-1h", 3, NOW, &t), 0);
    assert_int_equal(t, NOW - 3600000000000LL);
    assert_int_equal(sql_parse_time("now", 3, NOW, &t), 0);
    assert_int_equal(t, NOW);
    assert_int_equal(sql_parse_time("-5", 2, NOW, &t), 0);
    assert_int_equal(t, -5);
    assert_int_equal(sql_parse_time("2024-02-30T00:00:00Z", 20, 0, &t), ERR_INVAL);
    assert_int_equal(sql_parse_time("3000-01-01T00:00:00Z", 20, 0, &t), ERR_INVAL);
    assert_int_equal(sql_parse_time("abc", 3, 0, &t), ERR_INVAL);

    int64_t d;
    assert_int_equal(sql_parse_duration("30d", 3, &d), 0);
    assert_int_equal(d, 30LL * 86400000000000LL);
    assert_int_equal(sql_parse_duration("1h30m", 5, &d), 0);
    assert_int_equal(d, 5400000000000LL);
    assert_int_equal(sql_parse_duration("0", 1, &d), 0);
    assert_int_equal(d, 0);
    assert_int_equal(sql_parse_duration("5", 1, &d), ERR_INVAL);
    assert_int_equal(sql_parse_duration("5y", 2, &d), ERR_INVAL);
    assert_int_equal(sql_parse_duration("999999999999w", 13, &d), ERR_INVAL);

    static const struct {
        int64_t ns;
        const char *s;
    } fmt[] = {{0, "0"},
               {30LL * 86400000000000LL, "30d"},
               {5400000000000LL, "90m"},
               {1500, "1500ns"}};
    for (size_t i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
        struct buf b = BUF_INIT;
        sql_format_duration(fmt[i].ns, &b);
        assert_string_equal(buf_cstr(&b), fmt[i].s);
        buf_destroy(&b);
    }
}

struct plan_case {
    const char *sql;
    int rc;
    enum plan_kind kind;
    const char *err_part;
};

static const struct plan_case plans[] = {
    {"SELECT * FROM d WHERE ts = 5 AND host = 'a' AND event = 'e'", 0, PLAN_GET, NULL},
    {"SELECT * FROM d WHERE ts IN (1,2) AND host IN ('a','b') AND event IN ('x','y')", 0, PLAN_GET,
     NULL},
    {"SELECT * FROM d WHERE ts = 5 AND host = 'a'", 0, PLAN_INDEX, NULL},
    {"SELECT * FROM d WHERE host = 'a'", 0, PLAN_INDEX, NULL},
    {"SELECT * FROM d WHERE ts > 5 AND event = 'x'", 0, PLAN_SCAN, NULL},
    {"SELECT * FROM d WHERE ts IN (5, 6)", 0, PLAN_SCAN, NULL},
    {"SELECT * FROM d WHERE event = 'x'", ERR_INVAL, PLAN_FULL, "add a ts range"},
    {"SELECT * FROM d", ERR_INVAL, PLAN_FULL, "host = '...'"},
    {"SELECT /*+ full_scan */ * FROM d WHERE value > 3", 0, PLAN_FULL, NULL},
    {"SELECT * FROM d WHERE ts IN (1,2,3,4,5,6,7,8,9,10,11) AND host IN ('a','b') AND "
     "event IN ('x','y')",
     ERR_TOOBIG, PLAN_GET, "max_get_rows = 40"},
};

static void test_plans(void **state)
{
    (void)state;
    struct db_opts dbo = {16, true, 0};
    struct plan_opts po = {40, false, false, NOW};
    for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); i++) {
        struct sql_script sc;
        parse1(plans[i].sql, &sc);
        struct plan p;
        struct buf err = BUF_INIT;
        int rc = plan_build(&sc.stmts[0].sel, &dbo, &po, &p, &err);
        if (rc != plans[i].rc)
            fail_msg("%s: rc %d want %d (%s)", plans[i].sql, rc, plans[i].rc, buf_cstr(&err));
        if (rc == 0) {
            assert_int_equal(p.kind, plans[i].kind);
            plan_destroy(&p);
        } else if (!strstr(buf_cstr(&err), plans[i].err_part)) {
            fail_msg("%s: error '%s' lacks '%s'", plans[i].sql, buf_cstr(&err), plans[i].err_part);
        }
        buf_destroy(&err);
        sql_script_destroy(&sc);
    }
}

static void test_plan_get_order_and_ttl(void **state)
{
    (void)state;
    struct sql_script sc;
    parse1("SELECT * FROM d WHERE ts IN (1, 3, 2) AND host IN ('b','a') AND event = 'e'", &sc);
    struct db_opts dbo = {7, true, 0};
    struct plan_opts po = {0, false, false, NOW};
    struct plan p;
    struct buf err = BUF_INIT;
    assert_int_equal(plan_build(&sc.stmts[0].sel, &dbo, &po, &p, &err), 0);
    assert_int_equal(p.nkeys, 6);
    static const int64_t want_ts[] = {3, 3, 2, 2, 1, 1};
    static const size_t want_host[] = {0, 1, 0, 1, 0, 1};
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(p.keys[i].ts, want_ts[i]);
        assert_int_equal(p.keys[i].host, want_host[i]);
    }
    plan_destroy(&p);
    /* a TTL cuts every point: the plan is empty */
    dbo.ttl_ns = 1000;
    assert_int_equal(plan_build(&sc.stmts[0].sel, &dbo, &po, &p, &err), 0);
    assert_true(p.is_empty);
    assert_int_equal(p.nkeys, 0);
    struct buf ex = BUF_INIT;
    plan_explain(&p, &sc.stmts[0].sel, &ex);
    assert_non_null(strstr(buf_cstr(&ex), "\"plan\":\"GET\""));
    buf_destroy(&ex);
    plan_destroy(&p);
    sql_script_destroy(&sc);
    buf_destroy(&err);
}

static void test_where_only(void **state)
{
    (void)state;
    struct sql_where w;
    struct buf err = BUF_INIT;
    assert_int_equal(sql_parse_where("ts > 3 AND host = 'x'", 21, NOW, &w, &err), 0);
    assert_int_equal(w.ts_lo, 4);
    sql_where_destroy(&w);
    assert_int_equal(sql_parse_where("ts > 3 host", 11, NOW, &w, &err), ERR_INVAL);
    assert_string_equal(buf_cstr(&err), "syntax error at position 8: expected AND, OR or end "
                                        "of condition, found 'host'");
    buf_destroy(&err);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),       cmocka_unit_test(test_bad),
        cmocka_unit_test(test_where),      cmocka_unit_test(test_times),
        cmocka_unit_test(test_plans),      cmocka_unit_test(test_plan_get_order_and_ttl),
        cmocka_unit_test(test_where_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
