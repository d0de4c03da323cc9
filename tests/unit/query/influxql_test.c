/* InfluxQL for write clients: the statements Telegraf and the 1.x client
 * libraries send, quoting and escapes, the WITH clause, and refusals with
 * their reasons. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "query/influxql.h"

#define DAY (86400LL * 1000000000LL)

static void parse_ok(const char *q, struct iql_script *s)
{
    struct buf err = BUF_INIT;
    int rc = iql_parse(q, strlen(q), s, &err);
    if (rc != ERR_OK)
        print_error("%s: %s\n", q, buf_cstr(&err));
    assert_int_equal(rc, ERR_OK);
    buf_destroy(&err);
}

static void test_create(void **state)
{
    (void)state;
    struct iql_script s;
    parse_ok("CREATE DATABASE \"telegraf\"", &s); /* what Telegraf sends */
    assert_int_equal(s.n, 1);
    assert_int_equal(s.stmts[0].kind, IQL_CREATE_DB);
    assert_string_equal(s.stmts[0].db, "telegraf");
    assert_false(s.stmts[0].has_ttl);

    parse_ok("  create database metrics_1 ;", &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.stmts[0].db, "metrics_1");

    parse_ok("CREATE DATABASE \"my \\\"odd\\\" db\\\\\"", &s);
    assert_string_equal(s.stmts[0].db, "my \"odd\" db\\");

    parse_ok("CREATE DATABASE logs WITH DURATION 30d REPLICATION 1 SHARD DURATION 1h "
             "NAME \"autogen\"",
             &s);
    assert_true(s.stmts[0].has_ttl);
    assert_int_equal(s.stmts[0].ttl_ns, 30 * DAY);

    parse_ok("CREATE DATABASE logs WITH DURATION INF", &s);
    assert_true(s.stmts[0].has_ttl);
    assert_int_equal(s.stmts[0].ttl_ns, 0);

    parse_ok("CREATE DATABASE a; SHOW DATABASES;;", &s);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.stmts[0].kind, IQL_CREATE_DB);
    assert_int_equal(s.stmts[1].kind, IQL_SHOW_DBS);
}

static void test_refused(void **state)
{
    (void)state;
    static const struct {
        const char *q;
        const char *why; /* a part of the reason */
    } bad[] = {
        {"", "missing query"},
        {" ; ;", "missing query"},
        {"SELECT * FROM cpu", "/api/v1/sql"},
        {"DROP DATABASE x", "only CREATE DATABASE and SHOW DATABASES"},
        {"CREATE USER u WITH PASSWORD 'p'", "only CREATE DATABASE"},
        {"CREATE DATABASE", "expected an identifier"},
        {"CREATE DATABASE 1abc", "expected an identifier"},
        {"CREATE DATABASE \"\"", "empty identifier"},
        {"CREATE DATABASE \"open", "unterminated"},
        {"CREATE DATABASE x y", "unexpected text"},
        {"CREATE DATABASE x WITH", "expected DURATION"},
        {"CREATE DATABASE x WITH DURATION forever", "bad duration"},
        {"CREATE DATABASE x WITH REPLICATION two", "replication"},
        {"CREATE DATABASE x WITH SHARD 1h", "DURATION after SHARD"},
        {"SHOW MEASUREMENTS", "only SHOW DATABASES"},
        {"SHOW DATABASES extra", "unexpected text"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct iql_script s;
        struct buf err = BUF_INIT;
        int rc = iql_parse(bad[i].q, strlen(bad[i].q), &s, &err);
        if (rc != ERR_INVAL || !strstr(buf_cstr(&err), bad[i].why)) {
            print_error("%s: rc %d, \"%s\"\n", bad[i].q, rc, buf_cstr(&err));
            fail();
        }
        buf_destroy(&err);
    }
}

/* The query bytes need not end in NUL: every read stays inside len. */
static void test_bounded(void **state)
{
    (void)state;
    const char *q = "SHOW DATABASES; CREATE DATABASE abc";
    for (size_t len = 0; len <= strlen(q); len++) {
        char *copy = test_malloc(len ? len : 1);
        memcpy(copy, q, len);
        struct iql_script s;
        struct buf err = BUF_INIT;
        (void)iql_parse(copy, len, &s, &err);
        buf_destroy(&err);
        test_free(copy);
    }
    struct iql_script s;
    struct buf err = BUF_INIT;
    assert_int_equal(iql_parse(q, strlen(q) - 1, &s, &err), ERR_OK);
    assert_string_equal(s.stmts[1].db, "ab");
    buf_destroy(&err);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
