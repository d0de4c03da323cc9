/* Unit tests of the web console's files: every path under /ui/ is the
 * console's route, and the files built into the daemon are found by name
 * with a type and a strong ETag. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http/console.h"
#include "http/handlers.h"

static void test_routes(void **state)
{
    (void)state;
    const char *allow = NULL;
    assert_int_equal(route_find("GET", "/ui", &allow)->id, ROUTE_UI);
    assert_int_equal(route_find("GET", "/ui/", &allow)->id, ROUTE_UI);
    assert_int_equal(route_find("HEAD", "/ui/app.js", &allow)->id, ROUTE_UI);
    assert_int_equal(route_find("GET", "/ui/a/b/c", &allow)->id, ROUTE_UI);
    assert_int_equal(route_find("GET", "/uix", &allow)->id, ROUTE_NOT_FOUND);
    assert_int_equal(route_find("GET", "/u", &allow)->id, ROUTE_NOT_FOUND);
    assert_int_equal(route_find("POST", "/ui/app.js", &allow)->id, ROUTE_BAD_METHOD);
    assert_string_equal(allow, "GET,HEAD");
}

static void test_files(void **state)
{
    (void)state;
    const struct console_file *index = console_find("");
    assert_non_null(index);
    assert_string_equal(index->name, "index.html");
    assert_ptr_equal(console_find("index.html"), index);
    assert_string_equal(index->type, "text/html; charset=utf-8");
    assert_non_null(strstr((const char *)index->data, "app.js"));
    const struct console_file *js = console_find("app.js");
    assert_non_null(js);
    assert_string_equal(js->type, "text/javascript; charset=utf-8");
    assert_int_equal(strlen((const char *)js->data), js->len);
    assert_non_null(console_find("app.css"));
    assert_null(console_find("nope.js"));
    assert_null(console_find("/app.js"));
    assert_null(console_find("../app.js"));
    for (size_t i = 0; i < console_nfiles; i++) {
        const char *e = console_files[i].etag;
        assert_int_equal(strlen(e), 18); /* "16 hex digits" */
        assert_int_equal(e[0], '"');
        assert_int_equal(e[17], '"');
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(console_files[j].etag, e);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routes),
        cmocka_unit_test(test_files),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("console", tests, NULL, NULL);
}
