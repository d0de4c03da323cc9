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
    /* search and aggregation (issue 19) */
    "SELECT * FROM d WHERE ts > 0 AND (host = 'a' OR NOT (event = 'b' AND x IS NULL))",
    "SELECT * FROM d WHERE ts > 0 AND msg LIKE '50\\%%' AND msg NOT ILIKE '%A_b%' AND m ~ '^x' "
    "AND m ~* 'y' AND m !~ 'z' AND m !~* 'w' AND m REGEXP 'v' AND m NOT REGEXP 'u'",
    "SELECT * FROM d WHERE ts > 0 AND msg MATCH 'timeout \"connection reset\"' AND "
    "MATCH('web-17') AND tags.k IS NOT NULL AND c NOT IN (1, 2.5) AND c NOT BETWEEN 1 AND 2",
    "select host, count(*), sum(v), avg(v), min(s), max(s), first(msg), last(msg), count(v), "
    "percentile(v, 99.9), median(v) from d where ts > 0 group by host",
    "SELECT time_bucket('5m'), time_bucket(1h, -10m) AS h, COUNT(*) FROM d WHERE ts > 0 GROUP BY "
    "1, h",
    "SELECT time_bucket('1ms'), COUNT(*) FROM d WHERE ts > 0 GROUP BY 1",
    "SELECT time_bucket('366d'), COUNT(*) FROM d WHERE ts > 0 GROUP BY 1",
    "SELECT time_bucket('1m'), COUNT(*) FROM d WHERE ts BETWEEN 0 AND 9 GROUP BY 1 FILL(NULL)",
    "SELECT time_bucket('1m'), COUNT(*) FROM d WHERE ts BETWEEN 0 AND 9 GROUP BY 1 FILL(0)",
    "SELECT host, COUNT(*) AS n FROM d WHERE ts > 0 GROUP BY host HAVING n > 2 AND max(v) < 9 "
    "ORDER BY n DESC, host LIMIT 3",
    "SELECT COUNT(*) FROM d WHERE ts > 0 HAVING count > 1",
    "SHOW TAG VALUES FROM d WITH KEY = 'region' WHERE ts > now() - 1h AND host = 'a' LIMIT 5",
    "SHOW HOSTS ON d",
    "SHOW FIELDS FROM d WHERE event = 'cpu'",
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
    /* search and aggregation (issue 19): what is wrong and where */
    {"SELECT * FROM d WHERE msg ~* '(a'", "error at position 33: bad regular expression: "
                                          "missing closing parenthesis"},
    {"SELECT * FROM d WHERE msg !~ 'it''s [a'", "error at position 39: bad regular expression: "
                                                "missing terminating ] for character class"},
    {"SELECT * FROM d WHERE msg REGEXP 'a{2,1}'",
     "error at position 40: bad regular expression: numbers out of order in {} quantifier"},
    {"SELECT * FROM d WHERE ts > 0 AND (host = 'a' OR msg ~ '*x')",
     "error at position 56: bad regular expression: quantifier does not follow a repeatable "
     "item"},
    {"SELECT * FROM d WHERE MATCH('')", "error at position 30: MATCH needs at least one word"},
    /* the lexer meets the unclosed comment after the leaf was built: freed */
    {"SELECT * FROM d WHERE MATCH('x') /* open",
     "syntax error at position 34: unterminated comment"},
    {"SELECT * FROM d WHERE (msg LIKE 'x') /*+ open",
     "syntax error at position 38: unterminated comment"},
    {"SELECT * FROM d WHERE MATCH('\"ab')", "error at position 30: unterminated \" in MATCH"},
    {"SELECT * FROM d WHERE ts LIKE '1%'",
     "error at position 23: ts is a number: compare it, do not match it"},
    {"SELECT * FROM d WHERE x IN (1, true)",
     "error at position 32: IN lists hold strings or numbers"},
    {"SELECT * FROM d WHERE ok > true",
     "error at position 28: a boolean compares only with = or !="},
    {"SELECT * FROM d WHERE host = 'a' OR", "syntax error at position 36: expected a column name, "
                                            "found end of input"},
    {"SELECT * FROM d WHERE (host = 'a'", "syntax error at position 34: expected ')', found end "
                                          "of input"},
    {"SELECT * FROM d WHERE msg NOT MATCH 'x'",
     "syntax error at position 31: expected BETWEEN, IN, LIKE, ILIKE or REGEXP after NOT, found "
     "'MATCH'"},
    {"SELECT lower(host) FROM d", "error at position 8: unknown function 'lower' (known: count, "
                                  "sum, avg, min, max, first, last, percentile, median, "
                                  "time_bucket)"},
    {"SELECT COUNT(*) FROM d GROUP BY host ORDER BY stddev(v)",
     "error at position 47: unknown function 'stddev' (known: count, sum, avg, min, max, first, "
     "last, percentile, median, time_bucket)"},
    {"SELECT COUNT(*) FROM d GROUP BY host HAVING nosuch(v) > 1",
     "error at position 45: unknown function 'nosuch' (known: count, sum, avg, min, max, first, "
     "last, percentile, median, time_bucket)"},
    {"SELECT time_bucket('500us'), COUNT(*) FROM d GROUP BY 1",
     "error at position 20: bad bucket width: between 1ms and 366d"},
    {"SELECT time_bucket(367d), COUNT(*) FROM d GROUP BY 1",
     "error at position 20: bad bucket width: between 1ms and 366d"},
    {"SELECT time_bucket('5m', '5m'), COUNT(*) FROM d GROUP BY 1",
     "error at position 26: bucket offset must be smaller than its width"},
    {"SELECT time_bucket('5m', 'soon'), COUNT(*) FROM d GROUP BY 1",
     "error at position 26: bad duration 'soon' (units ns us ms s m h d w)"},
    {"SELECT COUNT(*) FROM d GROUP BY time_bucket(0)",
     "error at position 45: bad bucket width: between 1ms and 366d"},
    {"SELECT percentile(v, -1) FROM d",
     "error at position 22: a percentile is a number from 0 to 100"},
    {"SELECT percentile(v, 'p50') FROM d",
     "error at position 22: a percentile is a number from 0 to 100"},
    {"SELECT percentile(v) FROM d",
     "syntax error at position 20: expected ',' and a percentile (0 to 100), found ')'"},
    {"SELECT median(v, 5) FROM d", "syntax error at position 16: expected ')', found ','"},
    {"SELECT sum(*) FROM d", "syntax error at position 12: expected a column name, found '*'"},
    {"SELECT host, COUNT(*) FROM d GROUP BY 2",
     "error at position 39: cannot GROUP BY an aggregate"},
    {"SELECT COUNT(*) AS n FROM d GROUP BY n",
     "error at position 38: cannot GROUP BY an aggregate"},
    {"SELECT COUNT(*) FROM d GROUP BY ts",
     "error at position 33: GROUP BY ts needs a bucket: time_bucket('1m')"},
    {"SELECT host, event, COUNT(*) FROM d GROUP BY host",
     "error at position 14: 'event' must be in GROUP BY, or inside an aggregate such as last(...)"},
    /* a GROUP BY, HAVING or ORDER BY column not selected is a key of its own,
     * never another column */
    {"SELECT tags.region, COUNT(*) FROM d GROUP BY tags.zone",
     "error at position 8: 'tags.region' must be in GROUP BY, or inside an aggregate such as "
     "last(...)"},
    {"SELECT time_bucket('1m'), COUNT(*) FROM d GROUP BY time_bucket('5m')",
     "error at position 8: 'ts' must be in GROUP BY, or inside an aggregate such as last(...)"},
    {"SELECT COUNT(*) FROM d GROUP BY host HAVING event = 'x'",
     "error at position 45: 'event' must be in GROUP BY, or inside an aggregate such as "
     "last(...)"},
    /* positions are those of the select list, not of the keys added for GROUP BY */
    {"SELECT COUNT(*) FROM d GROUP BY host ORDER BY 2",
     "error at position 47: column position 2 is not in the select list"},
    {"SELECT host FROM d GROUP BY host FILL(NULL)", "error at position 38: FILL needs GROUP BY "
                                                    "time_bucket(...)"},
    {"SELECT time_bucket('1m'), COUNT(*) FROM d GROUP BY 1 FILL(1)",
     "syntax error at position 59: expected NULL, 0 or PREVIOUS, found '1'"},
    {"SELECT * FROM d GROUP BY host",
     "error at position 23: SELECT * cannot be grouped: name the columns"},
    {"SELECT * FROM d WHERE ts > 0 HAVING x > 1",
     "error at position 37: HAVING needs aggregates or GROUP BY"},
    {"SELECT host, COUNT(*) FROM d GROUP BY host, event, tags.a, tags.b, tags.c, tags.d, tags.e, "
     "tags.f, tags.g, tags.h, tags.i, tags.j, tags.k, tags.l, tags.m, tags.n, tags.o",
     "error at position 164: more than 16 GROUP BY keys"},
};

static void test_bad(void **state)
{
    (void)state;
    size_t failed = 0;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct sql_script sc;
        struct buf err = BUF_INIT;
        int rc = sql_parse(bad[i].sql, strlen(bad[i].sql), NOW, &sc, &err);
        if (rc == ERR_OK) {
            sql_script_destroy(&sc);
            print_error("'%s' parsed\n", bad[i].sql);
            failed++;
        } else if (rc != ERR_INVAL || strcmp(buf_cstr(&err), bad[i].msg) != 0) {
            print_error("'%s': rc %d\n got  %s\n want %s\n", bad[i].sql, rc, buf_cstr(&err),
                        bad[i].msg);
            failed++;
        }
        buf_destroy(&err);
    }
    if (failed)
        fail_msg("%zu of %zu bad statements not refused as they should be", failed,
                 sizeof(bad) / sizeof(bad[0]));
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

/* --- what the new grammar parses into --- */

static const struct sql_expr *kid(const struct sql_expr *e, size_t i)
{
    assert_true(i < e->nkids);
    return e->kids[i];
}

static void assert_leaf(const struct sql_expr *e, enum sql_leaf_kind leaf, enum sql_col_kind col,
                        const char *name)
{
    assert_int_equal(e->kind, SQL_E_LEAF);
    assert_int_equal(e->leaf, leaf);
    assert_int_equal(e->col.kind, col);
    if (name)
        assert_string_equal(e->col.name, name);
}

static const struct sql_where *where_of(const struct sql_script *sc)
{
    return &sc->stmts[0].sel.where;
}

static void test_cond_tree(void **state)
{
    (void)state;
    struct sql_script sc;
    /* AND binds tighter than OR; NOT binds to one predicate; parentheses */
    parse1("SELECT * FROM d WHERE ts > 5 AND (host = 'a' OR host = 'b') AND NOT msg LIKE '%x%'",
           &sc);
    const struct sql_expr *c = where_of(&sc)->cond;
    assert_int_equal(c->kind, SQL_E_AND);
    assert_int_equal(c->nkids, 3);
    assert_leaf(kid(c, 0), SQL_L_CMP, SQL_COL_TS, NULL);
    assert_int_equal(kid(c, 0)->op, SQL_GT);
    assert_int_equal(kid(c, 1)->kind, SQL_E_OR);
    assert_int_equal(kid(c, 1)->nkids, 2);
    assert_leaf(kid(kid(c, 1), 1), SQL_L_CMP, SQL_COL_HOST, NULL);
    assert_string_equal(kid(kid(c, 1), 1)->v.s, "b");
    assert_int_equal(kid(c, 2)->kind, SQL_E_NOT);
    assert_leaf(kid(kid(c, 2), 0), SQL_L_LIKE, SQL_COL_FIELD, "msg");
    assert_false(kid(kid(c, 2), 0)->icase);
    /* what it implies: ts > 5, host in {a, b} */
    assert_true(where_of(&sc)->has_lo);
    assert_int_equal(where_of(&sc)->ts_lo, 6);
    assert_true(where_of(&sc)->host.is_set);
    assert_int_equal(where_of(&sc)->host.n, 2);
    sql_script_destroy(&sc);

    parse1("SELECT * FROM d WHERE a = 1 OR b = 2 AND c = 3 OR NOT d = 4 AND e = 5", &sc);
    c = where_of(&sc)->cond;
    assert_int_equal(c->kind, SQL_E_OR);
    assert_int_equal(c->nkids, 3);
    assert_leaf(kid(c, 0), SQL_L_CMP, SQL_COL_FIELD, "a");
    assert_int_equal(kid(c, 1)->kind, SQL_E_AND);
    assert_int_equal(kid(c, 2)->kind, SQL_E_AND);
    assert_int_equal(kid(kid(c, 2), 0)->kind, SQL_E_NOT);
    assert_leaf(kid(kid(kid(c, 2), 0), 0), SQL_L_CMP, SQL_COL_FIELD, "d");
    assert_leaf(kid(kid(c, 2), 1), SQL_L_CMP, SQL_COL_FIELD, "e");
    sql_script_destroy(&sc);

    /* negated forms are a NOT above the leaf */
    parse1("SELECT * FROM d WHERE ts > 0 AND msg NOT ILIKE 'a%' AND msg !~* 'b' AND msg !~ 'c' AND "
           "msg NOT REGEXP 'd' AND tags.k IS NOT NULL AND x NOT IN (3, 1, 3, 2.5) AND "
           "y NOT BETWEEN 1 AND 2 AND z IS NULL AND m ~* 'e' AND m REGEXP 'f'",
           &sc);
    c = where_of(&sc)->cond;
    assert_int_equal(c->nkids, 11);
    static const enum sql_leaf_kind negs[] = {SQL_L_LIKE, SQL_L_REGEX, SQL_L_REGEX, SQL_L_REGEX,
                                              SQL_L_NULL};
    static const bool icase[] = {true, true, false, false, false};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(kid(c, i + 1)->kind, SQL_E_NOT);
        assert_int_equal(kid(kid(c, i + 1), 0)->leaf, negs[i]);
        assert_int_equal(kid(kid(c, i + 1), 0)->icase, icase[i]);
    }
    assert_leaf(kid(kid(c, 5), 0), SQL_L_NULL, SQL_COL_TAG, "k");
    const struct sql_expr *in = kid(kid(c, 6), 0);
    assert_leaf(in, SQL_L_IN, SQL_COL_FIELD, "x");
    assert_int_equal(in->nints, 2); /* sorted, duplicates removed */
    assert_int_equal(in->ints[0], 1);
    assert_int_equal(in->ints[1], 3);
    assert_int_equal(in->nflts, 1);
    assert_true(in->flts[0] == 2.5);
    const struct sql_expr *nb = kid(kid(c, 7), 0); /* NOT BETWEEN: NOT (>= AND <=) */
    assert_int_equal(nb->kind, SQL_E_AND);
    assert_int_equal(kid(nb, 0)->op, SQL_GE);
    assert_int_equal(kid(nb, 1)->op, SQL_LE);
    assert_leaf(kid(c, 8), SQL_L_NULL, SQL_COL_FIELD, "z");
    assert_leaf(kid(c, 9), SQL_L_REGEX, SQL_COL_FIELD, "m");
    assert_true(kid(c, 9)->icase);
    assert_leaf(kid(c, 10), SQL_L_REGEX, SQL_COL_FIELD, "m");
    assert_false(kid(c, 10)->icase);
    sql_script_destroy(&sc);

    /* MATCH: its terms, words and "phrases"; MATCH('...') over every string */
    parse1("SELECT * FROM d WHERE ts > 0 AND msg MATCH 'Timeout  \"connection reset\" by' AND "
           "MATCH('web')",
           &sc);
    c = where_of(&sc)->cond;
    const struct sql_expr *mt = kid(c, 1);
    assert_leaf(mt, SQL_L_MATCH, SQL_COL_FIELD, "msg");
    assert_int_equal(mt->nterms, 3);
    assert_string_equal(mt->terms[0], "Timeout");
    assert_string_equal(mt->terms[1], "connection reset");
    assert_string_equal(mt->terms[2], "by");
    assert_leaf(kid(c, 2), SQL_L_MATCH, SQL_COL_ANY, NULL);
    assert_int_equal(kid(c, 2)->nterms, 1);
    sql_script_destroy(&sc);

    /* LIKE keeps its pattern as written (escapes are the matcher's) */
    parse1("SELECT * FROM d WHERE ts > 0 AND msg LIKE '50\\% of ''a_b''%'", &sc);
    assert_string_equal(kid(where_of(&sc)->cond, 1)->v.s, "50\\% of 'a_b'%");
    sql_script_destroy(&sc);
}

static void test_cond_derive(void **state)
{
    (void)state;
    struct sql_script sc;
    /* OR: the hull of ts bounds, the union of hosts when every branch has one */
    parse1("SELECT * FROM d WHERE (ts > 10 AND host = 'a') OR (ts BETWEEN 5 AND 7 AND host IN "
           "('c', 'b'))",
           &sc);
    const struct sql_where *w = where_of(&sc);
    assert_true(w->has_lo);
    assert_int_equal(w->ts_lo, 5);
    assert_false(w->has_hi); /* one branch is unbounded above */
    assert_true(w->host.is_set);
    assert_int_equal(w->host.n, 3);
    assert_string_equal(w->host.v[0], "a");
    assert_string_equal(w->host.v[2], "c");
    sql_script_destroy(&sc);

    parse1("SELECT * FROM d WHERE host = 'a' OR ts > 5", &sc);
    assert_false(where_of(&sc)->host.is_set);
    assert_false(where_of(&sc)->has_lo);
    sql_script_destroy(&sc);

    /* NOT implies nothing */
    parse1("SELECT * FROM d WHERE NOT (host = 'a' AND ts > 5)", &sc);
    assert_false(where_of(&sc)->host.is_set);
    assert_false(where_of(&sc)->has_lo || where_of(&sc)->has_hi);
    sql_script_destroy(&sc);

    /* AND of ORs intersects */
    parse1("SELECT * FROM d WHERE (host = 'a' OR host = 'b') AND (host = 'b' OR host = 'c') AND "
           "(ts BETWEEN 1 AND 9 OR ts BETWEEN 20 AND 30) AND ts < 25",
           &sc);
    w = where_of(&sc);
    assert_int_equal(w->host.n, 1);
    assert_string_equal(w->host.v[0], "b");
    assert_true(w->has_lo && w->has_hi);
    assert_int_equal(w->ts_lo, 1);
    assert_int_equal(w->ts_hi, 24);
    sql_script_destroy(&sc);

    /* the planner's choice follows: INDEX over an OR of hosts, SCAN over an
     * OR of ranges, FULL (refused) when a branch narrows nothing */
    static const struct plan_case or_plans[] = {
        {"SELECT * FROM d WHERE host = 'a' OR host = 'b'", 0, PLAN_INDEX, NULL},
        {"SELECT * FROM d WHERE (ts > 5 AND x = 1) OR (ts > 9 AND y = 2)", 0, PLAN_SCAN, NULL},
        {"SELECT * FROM d WHERE host = 'a' OR x = 1", ERR_INVAL, PLAN_FULL, "full scan refused"},
        {"SELECT * FROM d WHERE NOT host = 'a'", ERR_INVAL, PLAN_FULL, "full scan refused"},
        {"SELECT * FROM d WHERE msg LIKE '%timeout%' AND ts > 5", 0, PLAN_SCAN, NULL},
    };
    struct db_opts dbo = {16, true, 0};
    struct plan_opts po = {40, false, false, NOW};
    for (size_t i = 0; i < sizeof(or_plans) / sizeof(or_plans[0]); i++) {
        parse1(or_plans[i].sql, &sc);
        struct plan p;
        struct buf err = BUF_INIT;
        int rc = plan_build(&sc.stmts[0].sel, &dbo, &po, &p, &err);
        if (rc != or_plans[i].rc)
            fail_msg("%s: rc %d want %d (%s)", or_plans[i].sql, rc, or_plans[i].rc, buf_cstr(&err));
        if (rc == 0) {
            assert_int_equal(p.kind, or_plans[i].kind);
            plan_destroy(&p);
        } else if (!strstr(buf_cstr(&err), or_plans[i].err_part)) {
            fail_msg("%s: error '%s' lacks '%s'", or_plans[i].sql, buf_cstr(&err),
                     or_plans[i].err_part);
        }
        buf_destroy(&err);
        sql_script_destroy(&sc);
    }
}

static const struct sql_item *item(const struct sql_select *s, size_t i)
{
    assert_true(i < s->nitems);
    return &s->items[i];
}

static void test_aggregate_parse(void **state)
{
    (void)state;
    struct sql_script sc;
    parse1("SELECT host, COUNT(*), avg(v) AS a, PERCENTILE(fields.v, 99.5), MEDIAN(v), "
           "time_bucket('5m', -1m), count(tags.k) FROM d WHERE ts > 0 GROUP BY host, 6 "
           "FILL(PREVIOUS) "
           "HAVING a > 2 OR count < 3 ORDER BY 2 DESC, host LIMIT 10",
           &sc);
    const struct sql_select *s = &sc.stmts[0].sel;
    assert_true(s->agg);
    assert_false(s->count);
    assert_int_equal(s->nitems, 7); /* nothing hidden: HAVING and ORDER BY name items */
    assert_int_equal(item(s, 0)->kind, SQL_I_COL);
    assert_int_equal(item(s, 0)->col.kind, SQL_COL_HOST);
    assert_string_equal(item(s, 0)->name, "host");
    assert_int_equal(item(s, 1)->agg, SQL_A_COUNT_STAR);
    assert_string_equal(item(s, 1)->name, "count");
    assert_int_equal(item(s, 2)->agg, SQL_A_AVG);
    assert_string_equal(item(s, 2)->name, "a");
    assert_string_equal(item(s, 2)->col.name, "v");
    assert_int_equal(item(s, 3)->agg, SQL_A_PERCENTILE);
    assert_true(item(s, 3)->p == 99.5);
    assert_string_equal(item(s, 3)->name, "percentile(v,99.5)");
    assert_int_equal(item(s, 4)->agg, SQL_A_PERCENTILE);
    assert_true(item(s, 4)->p == 50);
    assert_string_equal(item(s, 4)->name, "median(v)");
    assert_int_equal(item(s, 5)->kind, SQL_I_BUCKET);
    assert_int_equal(item(s, 5)->width, 300000000000LL);
    assert_int_equal(item(s, 5)->offset, 240000000000LL); /* -1m of 5m */
    assert_string_equal(item(s, 5)->name, "ts");
    assert_int_equal(item(s, 6)->agg, SQL_A_COUNT);
    assert_int_equal(item(s, 6)->col.kind, SQL_COL_TAG);
    assert_string_equal(item(s, 6)->name, "count(tags.k)");
    for (size_t i = 0; i < s->nitems; i++)
        assert_false(item(s, i)->hidden);
    assert_int_equal(s->ngroups, 2);
    assert_int_equal(s->groups[0].kind, SQL_I_COL);
    assert_int_equal(s->groups[0].col.kind, SQL_COL_HOST);
    assert_int_equal(s->groups[1].kind, SQL_I_BUCKET);
    assert_int_equal(s->groups[1].width, 300000000000LL);
    assert_int_equal(s->groups[1].offset, 240000000000LL);
    assert_int_equal(s->fill, SQL_FILL_PREVIOUS);
    /* HAVING names items as fields "#i" */
    const struct sql_expr *h = s->having;
    assert_int_equal(h->kind, SQL_E_OR);
    assert_leaf(kid(h, 0), SQL_L_CMP, SQL_COL_FIELD, SQL_HAVING_NAME "2");
    assert_int_equal(kid(h, 0)->op, SQL_GT);
    assert_leaf(kid(h, 1), SQL_L_CMP, SQL_COL_FIELD, SQL_HAVING_NAME "1");
    assert_int_equal(s->norders, 2);
    assert_int_equal(s->orders[0].item, 1);
    assert_true(s->orders[0].desc);
    assert_int_equal(s->orders[1].item, 0);
    assert_false(s->orders[1].desc);
    assert_true(s->has_limit);
    assert_int_equal(s->limit, 10);
    sql_script_destroy(&sc);

    /* aggregates and keys not selected become hidden items, found again when
     * named twice; GROUP BY an alias */
    parse1("SELECT tags.region AS r, sum(c) FROM d WHERE ts > 0 GROUP BY r, event HAVING max(v) > "
           "1 "
           "AND sum(c) < 5 ORDER BY max(v) DESC, min(v), event",
           &sc);
    s = &sc.stmts[0].sel;
    assert_int_equal(s->nitems, 5);
    assert_int_equal(s->ngroups, 2);
    assert_int_equal(s->groups[0].col.kind, SQL_COL_TAG);
    assert_string_equal(s->groups[0].col.name, "region");
    assert_int_equal(s->groups[1].col.kind, SQL_COL_EVENT);
    assert_true(item(s, 2)->hidden); /* event */
    assert_int_equal(item(s, 2)->col.kind, SQL_COL_EVENT);
    assert_true(item(s, 3)->hidden); /* max(v) */
    assert_int_equal(item(s, 3)->agg, SQL_A_MAX);
    assert_true(item(s, 4)->hidden); /* min(v) */
    assert_int_equal(item(s, 4)->agg, SQL_A_MIN);
    assert_leaf(kid(s->having, 0), SQL_L_CMP, SQL_COL_FIELD, SQL_HAVING_NAME "3");
    assert_leaf(kid(s->having, 1), SQL_L_CMP, SQL_COL_FIELD, SQL_HAVING_NAME "1");
    assert_int_equal(s->norders, 3);
    assert_int_equal(s->orders[0].item, 3);
    assert_int_equal(s->orders[1].item, 4);
    assert_int_equal(s->orders[2].item, 2);
    sql_script_destroy(&sc);

    /* two GROUP BY columns not selected stay two keys */
    parse1("SELECT COUNT(*) FROM d WHERE ts > 0 GROUP BY host, event", &sc);
    s = &sc.stmts[0].sel;
    assert_int_equal(s->ngroups, 2);
    assert_int_equal(s->groups[0].col.kind, SQL_COL_HOST);
    assert_int_equal(s->groups[1].col.kind, SQL_COL_EVENT);
    sql_script_destroy(&sc);

    /* COUNT(*) alone keeps its row form; with an alias or a key it is an
     * aggregate query; aggregates without GROUP BY give one row */
    parse1("SELECT COUNT(*) FROM d WHERE ts > 0 ORDER BY ts DESC", &sc);
    assert_true(sc.stmts[0].sel.count);
    assert_false(sc.stmts[0].sel.agg);
    assert_int_equal(sc.stmts[0].sel.order, -1);
    sql_script_destroy(&sc);
    parse1("SELECT COUNT(*) AS n FROM d WHERE ts > 0", &sc);
    assert_false(sc.stmts[0].sel.count);
    assert_true(sc.stmts[0].sel.agg);
    assert_string_equal(sc.stmts[0].sel.items[0].name, "n");
    sql_script_destroy(&sc);
    parse1("SELECT min(ts), max(ts), first(msg), last(msg) FROM d WHERE ts > 0", &sc);
    assert_true(sc.stmts[0].sel.agg);
    assert_int_equal(sc.stmts[0].sel.ngroups, 0);
    assert_int_equal(sc.stmts[0].sel.nitems, 4);
    assert_int_equal(sc.stmts[0].sel.items[0].col.kind, SQL_COL_TS);
    sql_script_destroy(&sc);

    /* bucket widths and offsets: quoted or bare, the bounds 1ms and 366d */
    static const struct {
        const char *sql;
        int64_t width, offset;
    } buckets[] = {
        {"SELECT time_bucket('1ms') FROM d GROUP BY 1", 1000000LL, 0},
        {"SELECT time_bucket(366d) FROM d GROUP BY 1", 366LL * 86400000000000LL, 0},
        {"SELECT time_bucket('1h', '15m') FROM d GROUP BY 1", 3600000000000LL, 900000000000LL},
        {"SELECT time_bucket(1h, -15m) FROM d GROUP BY 1", 3600000000000LL, 2700000000000LL},
        {"SELECT time_bucket('1d', 0) FROM d GROUP BY 1", 86400000000000LL, 0},
    };
    for (size_t i = 0; i < sizeof(buckets) / sizeof(buckets[0]); i++) {
        parse1(buckets[i].sql, &sc);
        s = &sc.stmts[0].sel;
        assert_int_equal(s->ngroups, 1);
        assert_int_equal(s->groups[0].kind, SQL_I_BUCKET);
        assert_int_equal(s->groups[0].width, buckets[i].width);
        assert_int_equal(s->groups[0].offset, buckets[i].offset);
        sql_script_destroy(&sc);
    }

    /* FILL's three forms */
    static const struct {
        const char *fill;
        enum sql_fill want;
    } fills[] = {{"NULL", SQL_FILL_NULL}, {"0", SQL_FILL_ZERO}, {"previous", SQL_FILL_PREVIOUS}};
    for (size_t i = 0; i < 3; i++) {
        char sql[160];
        snprintf(sql, sizeof(sql),
                 "SELECT time_bucket('1m'), COUNT(*) FROM d WHERE ts BETWEEN 0 AND 9 GROUP BY 1 "
                 "FILL(%s)",
                 fills[i].fill);
        parse1(sql, &sc);
        assert_int_equal(sc.stmts[0].sel.fill, fills[i].want);
        sql_script_destroy(&sc);
    }
}

static void test_show_parse(void **state)
{
    (void)state;
    struct sql_script sc;
    parse1("SHOW TAG VALUES FROM d WITH KEY = 'region' WHERE ts >= 5 AND host = 'a' LIMIT 3; "
           "SHOW HOSTS ON d; SHOW EVENTS FROM d; SHOW TAG KEYS FROM d; SHOW FIELDS FROM d",
           &sc);
    assert_int_equal(sc.n, 5);
    assert_int_equal(sc.stmts[0].kind, SQL_SHOW_TAG_VALUES);
    assert_string_equal(sc.stmts[0].tag_key, "region");
    assert_int_equal(sc.stmts[0].sel.where.ts_lo, 5);
    assert_int_equal(sc.stmts[0].sel.limit, 3);
    assert_int_equal(sc.stmts[1].kind, SQL_SHOW_HOSTS);
    assert_int_equal(sc.stmts[2].kind, SQL_SHOW_EVENTS);
    assert_int_equal(sc.stmts[3].kind, SQL_SHOW_TAG_KEYS);
    assert_int_equal(sc.stmts[4].kind, SQL_SHOW_FIELDS);
    sql_script_destroy(&sc);
    struct buf err = BUF_INIT;
    static const char bad_show[] = "SHOW HOSTS FROM d WHERE msg LIKE '%x%'";
    assert_int_equal(sql_parse(bad_show, strlen(bad_show), NOW, &sc, &err), ERR_INVAL);
    assert_string_equal(buf_cstr(&err), "error at position 25: SHOW ... WHERE takes a ts range, "
                                        "host = '...' and event = '...' joined by AND");
    buf_destroy(&err);
}

/* Nesting and size limits: refused with a position, never a deep recursion. */
static void test_limits(void **state)
{
    (void)state;
    struct buf sql = BUF_INIT, err = BUF_INIT;
    struct sql_script sc;
    buf_puts(&sql, "SELECT * FROM d WHERE ");
    for (int i = 0; i < 65; i++)
        buf_putc(&sql, '(');
    buf_puts(&sql, "x = 1");
    for (int i = 0; i < 65; i++)
        buf_putc(&sql, ')');
    assert_int_equal(sql_parse(sql.data, sql.len, NOW, &sc, &err), ERR_INVAL);
    assert_non_null(strstr(buf_cstr(&err), "nested deeper than 64"));
    assert_int_equal(strncmp(buf_cstr(&err), "error at position 87: ", 22), 0);
    buf_reset(&sql);
    buf_reset(&err);
    buf_puts(&sql, "SELECT * FROM d WHERE ");
    for (int i = 0; i < 100000; i++)
        buf_puts(&sql, "NOT ");
    buf_puts(&sql, "x = 1");
    assert_int_equal(sql_parse(sql.data, sql.len, NOW, &sc, &err), ERR_INVAL);
    assert_non_null(strstr(buf_cstr(&err), "nested deeper than 64"));
    buf_reset(&sql);
    buf_reset(&err);
    buf_puts(&sql, "SELECT * FROM d WHERE ts > 0");
    for (int i = 0; i < 1024; i++)
        buf_printf(&sql, " OR x = %d", i);
    assert_int_equal(sql_parse(sql.data, sql.len, NOW, &sc, &err), ERR_INVAL);
    assert_non_null(strstr(buf_cstr(&err), "more than 1024 conditions"));
    buf_reset(&sql);
    buf_reset(&err);
    /* 64 levels are fine */
    buf_puts(&sql, "SELECT * FROM d WHERE ");
    for (int i = 0; i < 64; i++)
        buf_putc(&sql, '(');
    buf_puts(&sql, "x = 1");
    for (int i = 0; i < 64; i++)
        buf_putc(&sql, ')');
    parse1(buf_cstr(&sql), &sc);
    sql_script_destroy(&sc);
    buf_destroy(&sql);
    buf_destroy(&err);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_where),       cmocka_unit_test(test_times),
        cmocka_unit_test(test_plans),       cmocka_unit_test(test_plan_get_order_and_ttl),
        cmocka_unit_test(test_where_only),  cmocka_unit_test(test_cond_tree),
        cmocka_unit_test(test_cond_derive), cmocka_unit_test(test_aggregate_parse),
        cmocka_unit_test(test_show_parse),  cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
