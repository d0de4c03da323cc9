/* Unit tests of the HTTP layer's pure parts: error-to-status mapping, JSON
 * escaping of error messages, and the route table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "http/handlers.h"
#include "http/reply.h"

static void test_status_mapping(void **state)
{
    (void)state;
    static const struct {
        int err;
        unsigned status;
    } cases[] = {
        {ERR_OK, 200},      {ERR_INVAL, 400}, {ERR_PERM, 403},   {ERR_NOTFOUND, 404},
        {ERR_TOOBIG, 413},  {ERR_BUSY, 503},  {ERR_NOSPC, 507},  {ERR_IO, 500},
        {ERR_CORRUPT, 500}, {ERR_NOMEM, 500}, {ERR_EXISTS, 409},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(reply_status_for(cases[i].err), cases[i].status);
}

static void check_escape(const char *in, size_t len, const char *want)
{
    struct buf b = BUF_INIT;
    reply_json_escape(&b, in, len);
    assert_string_equal(buf_cstr(&b), want);
    buf_destroy(&b);
}

static void test_json_escape(void **state)
{
    (void)state;
    check_escape("plain", 5, "plain");
    check_escape("a\"b\\c", 5, "a\\\"b\\\\c");
    check_escape("l1\nl2\tx\r", 8, "l1\\nl2\\tx\\r");
    check_escape("\x01\x1f", 2, "\\u0001\\u001f");
    check_escape("caf\xc3\xa9", 5, "caf\xc3\xa9");            /* valid UTF-8 kept */
    check_escape("\xff", 1, "\\ufffd");                       /* invalid byte */
    check_escape("\xc3", 1, "\\ufffd");                       /* truncated sequence */
    check_escape("\xed\xa0\x80", 3, "\\ufffd\\ufffd\\ufffd"); /* surrogate */
    check_escape("\xc0\xaf", 2, "\\ufffd\\ufffd");            /* overlong */
    check_escape("a\0b", 3, "a\\u0000b");
}

static void test_routes(void **state)
{
    (void)state;
    const char *allow = NULL;
    assert_int_equal(route_find("GET", "/ping", &allow)->id, ROUTE_PING);
    assert_int_equal(route_find("HEAD", "/ping", &allow)->id, ROUTE_PING);
    assert_int_equal(route_find("GET", "/ping/", &allow)->id, ROUTE_PING);
    assert_int_equal(route_find("GET", "/health", &allow)->id, ROUTE_HEALTH);
    assert_int_equal(route_find("GET", "/metrics", &allow)->id, ROUTE_METRICS);
    assert_int_equal(route_find("GET", "/pingx", &allow)->id, ROUTE_NOT_FOUND);
    assert_int_equal(route_find("GET", "/", &allow)->id, ROUTE_ES_ROOT);
    assert_int_equal(route_find("GET", "", &allow)->id, ROUTE_NOT_FOUND);
    allow = NULL;
    assert_int_equal(route_find("POST", "/ping", &allow)->id, ROUTE_BAD_METHOD);
    assert_non_null(allow);
    assert_non_null(strstr(allow, "GET"));
    assert_int_equal(route_find("PUT", "/metrics", &allow)->id, ROUTE_BAD_METHOD);
    assert_int_equal(route_find("POST", "/write", &allow)->id, ROUTE_WRITE_V1);
    assert_int_equal(route_find("GET", "/write", &allow)->id, ROUTE_BAD_METHOD);
    assert_int_equal(route_find("POST", "/api/v2/write", &allow)->id, ROUTE_WRITE_V2);
    assert_int_equal(route_find("POST", "/api/v1/ingest", &allow)->id, ROUTE_INGEST);
    assert_int_equal(route_find("GET", "/api/v1/query", &allow)->id, ROUTE_QUERY);
    assert_int_equal(route_find("POST", "/api/v1/query", &allow)->id, ROUTE_BAD_METHOD);
    assert_int_equal(route_find("POST", "/api/v1/sql", &allow)->id, ROUTE_SQL);
    assert_int_equal(route_find("GET", "/api/v1/sql", &allow)->id, ROUTE_SQL);
    assert_int_equal(route_find("POST", "/api/v3/write_lp", &allow)->id, ROUTE_WRITE_V3);
    /* Elasticsearch: a '*' in a route is one non-empty path segment */
    assert_int_equal(route_find("POST", "/_bulk", &allow)->id, ROUTE_ES_BULK);
    assert_int_equal(route_find("PUT", "/_bulk/", &allow)->id, ROUTE_ES_BULK);
    assert_int_equal(route_find("POST", "/logs-2024.05/_bulk", &allow)->id, ROUTE_ES_BULK);
    assert_int_equal(route_find("GET", "/logs/_bulk", &allow)->id, ROUTE_BAD_METHOD);
    assert_int_equal(route_find("POST", "//_bulk", &allow)->id, ROUTE_NOT_FOUND);
    assert_int_equal(route_find("POST", "/a/b/_bulk", &allow)->id, ROUTE_NOT_FOUND);
    assert_int_equal(route_find("POST", "/logs/_bulkx", &allow)->id, ROUTE_NOT_FOUND);
    assert_int_equal(route_find("HEAD", "/", &allow)->id, ROUTE_ES_ROOT);
    assert_int_equal(route_find("HEAD", "/_cat/health", &allow)->id, ROUTE_ES_PROBE);
    assert_int_equal(route_find("GET", "/_nodes", &allow)->id, ROUTE_ES_PROBE);
    assert_int_equal(route_find("GET", "/_nodes/http", &allow)->id, ROUTE_ES_PROBE);
    assert_int_equal(route_find("PUT", "/_index_template/filebeat", &allow)->id, ROUTE_ES_PROBE);
    assert_int_equal(route_find("PUT", "/_index_template/", &allow)->id, ROUTE_NOT_FOUND);
    assert_int_equal(route_find("GET", "/_ilm/policy/p", &allow)->id, ROUTE_ES_PROBE);
    assert_int_equal(route_find("DELETE", "/_ilm/policy/p", &allow)->id, ROUTE_BAD_METHOD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_mapping),
        cmocka_unit_test(test_json_escape),
        cmocka_unit_test(test_routes),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("reply", tests, NULL, NULL);
}
