/* The JSON tape parser: documents re-rendered from the tape (strings
 * unescaped in place, numbers as written, nesting), and every refusal with
 * its reason and position. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "ingest/jtape.h"

/* Node i rendered compactly: strings as <text>, numbers as written (i for
 * an integer), containers with their members. Returns the next node. */
static void render(const struct jtape *t, uint32_t i, struct buf *out)
{
    const struct jt_node *n = &t->n[i];
    switch (n->type) {
    case JT_OBJ:
        buf_putc(out, '{');
        JT_MEMBERS(t, i, k)
        {
            render(t, k, out);
            buf_putc(out, ':');
            render(t, k + 1, out);
            buf_putc(out, ';');
        }
        buf_putc(out, '}');
        break;
    case JT_ARR:
        buf_putc(out, '[');
        JT_EACH(t, i, c)
        {
            render(t, c, out);
            buf_putc(out, ';');
        }
        buf_putc(out, ']');
        break;
    case JT_STR: buf_printf(out, "<%.*s>", (int)n->len, jt_ptr(t, i)); break;
    case JT_NUM: buf_printf(out, "%s%.*s", n->is_int ? "i" : "", (int)n->len, jt_ptr(t, i)); break;
    case JT_TRUE: buf_puts(out, "T"); break;
    case JT_FALSE: buf_puts(out, "F"); break;
    case JT_NULL: buf_puts(out, "N"); break;
    default: buf_puts(out, "?"); break;
    }
}

/* The whole document parsed and rendered, or "ERR <the error>". */
static void render_whole(const char *in, struct buf *out)
{
    struct jtape t;
    jt_init(&t);
    struct buf err = BUF_INIT;
    if (jt_parse(&t, in, strlen(in), &err) == ERR_OK)
        render(&t, 1, out);
    else
        buf_printf(out, "ERR %s", buf_cstr(&err));
    jt_destroy(&t);
    buf_destroy(&err);
}

static void check(const char *in, const char *want)
{
    struct buf out = BUF_INIT;
    render_whole(in, &out);
    if (strcmp(buf_cstr(&out), want) != 0) {
        fprintf(stderr, "# in %s\n#  got: %s\n# want: %s\n", in, buf_cstr(&out), want);
        fail();
    }
    buf_destroy(&out);
}

static void test_documents(void **state)
{
    (void)state;
    check("{}", "{}");
    check(" [ ] ", "[]");
    check("{\"a\":1,\"b\":[true,false,null,-0.5e3,\"x\"],\"c\":{}}",
          "{<a>:i1;<b>:[T;F;N;-0.5e3;<x>;];<c>:{};}");
    check("\"q\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "<q\"\\/\b\f\n\r\t>");
    check("\"\\u00e9\\u20ac\\ud83d\\ude00 \xc3\xa9\"",
          "<\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 \xc3\xa9>");
    check("[0,-0,12,1E+2,0.0]", "[i0;i-0;i12;1E+2;0.0;]");
    check("[[[]],[{}]]", "[[[];];[{};];]");
}

static void test_refusals(void **state)
{
    (void)state;
    check("", "ERR bad JSON at line 1 column 1: unexpected end of the body");
    check("{", "ERR bad JSON at line 1 column 2: object key must be a string");
    check("{\"a\" 1}", "ERR bad JSON at line 1 column 6: ':' expected after an object key");
    check("[1 2]", "ERR bad JSON at line 1 column 4: ',' or ']' expected");
    check("{\"a\":1,}", "ERR bad JSON at line 1 column 8: object key must be a string");
    check("[1,]", "ERR bad JSON at line 1 column 4: invalid value");
    check("\n [01]", "ERR bad JSON at line 2 column 4: ',' or ']' expected");
    check("[-]", "ERR bad JSON at line 1 column 3: bad number");
    check("[1.]", "ERR bad JSON at line 1 column 4: bad number");
    check("[1e]", "ERR bad JSON at line 1 column 4: bad number");
    check("[tru]", "ERR bad JSON at line 1 column 2: invalid literal");
    check("[NaN]", "ERR bad JSON at line 1 column 2: invalid value");
    check("\"abc", "ERR bad JSON at line 1 column 5: unterminated string");
    check("\"a\tb\"", "ERR bad JSON at line 1 column 3: control character in a string");
    check("\"\\x\"", "ERR bad JSON at line 1 column 3: bad escape in a string");
    check("\"\\u12\"", "ERR bad JSON at line 1 column 4: truncated \\u escape");
    check("\"\\u12zz\"", "ERR bad JSON at line 1 column 4: bad \\u escape");
    check("\"\\u0000\"", "ERR bad JSON at line 1 column 8: \\u0000 is not allowed (a NUL cannot be "
                         "stored)");
    check("\"\\ud800x\"", "ERR bad JSON at line 1 column 8: lone high surrogate in \\u escape");
    check("\"\\udc00\"", "ERR bad JSON at line 1 column 8: lone low surrogate in \\u escape");
    check("\"\xff\"", "ERR bad JSON at line 1 column 2: invalid UTF-8 in a string");
    check("{} x", "ERR bad JSON at line 1 column 4: text after the JSON value");
    char deep[200];
    memset(deep, '[', JT_MAX_DEPTH + 1);
    deep[JT_MAX_DEPTH + 1] = '\0';
    check(deep, "ERR bad JSON at line 1 column 65: nested too deep");
}

/* The document read piece by piece (jt_doc_*), rendered as check renders
 * the whole tape: the two must agree on every document, errors and their
 * positions too. by_buf: the body handed over without a copy. */
static void render_pieces(const char *in, bool by_buf, struct buf *out)
{
    struct jtape t;
    jt_init(&t);
    struct buf err = BUF_INIT, body = BUF_INIT;
    buf_puts(&body, in);
    bool is_obj;
    int rc = by_buf ? jt_doc_open_buf(&t, &body, &is_obj, &err)
                    : jt_doc_open(&t, in, strlen(in), &is_obj, &err);
    if (by_buf)
        assert_int_equal(body.len, 0); /* taken */
    if (!rc && !is_obj)
        render(&t, 1, out);
    if (!rc && is_obj) {
        buf_putc(out, '{');
        struct slice k;
        while ((rc = jt_doc_member(&t, &k, &err)) == 1) {
            buf_printf(out, "<%.*s>:", (int)k.len, k.ptr);
            if (jt_doc_peek(&t) == JT_ARR) {
                buf_putc(out, '[');
                while ((rc = jt_doc_element(&t, &err)) == 1) {
                    render(&t, 1, out);
                    buf_putc(out, ';');
                }
                buf_putc(out, ']');
            } else if ((rc = jt_doc_value(&t, &err)) == ERR_OK) {
                render(&t, 1, out);
            }
            if (rc < 0)
                break;
            buf_putc(out, ';');
        }
        buf_putc(out, '}');
    }
    if (rc < 0) {
        buf_reset(out);
        buf_printf(out, "ERR %s", buf_cstr(&err));
    }
    jt_destroy(&t);
    buf_destroy(&err);
    buf_destroy(&body);
}

static void check_pieces(const char *in)
{
    struct buf whole = BUF_INIT;
    render_whole(in, &whole);
    for (int by_buf = 0; by_buf < 2; by_buf++) {
        struct buf got = BUF_INIT;
        render_pieces(in, by_buf, &got);
        if (strcmp(buf_cstr(&got), buf_cstr(&whole)) != 0) {
            fprintf(stderr, "# in %s\n# pieces: %s\n#  whole: %s\n", in, buf_cstr(&got),
                    buf_cstr(&whole));
            fail();
        }
        buf_destroy(&got);
    }
    buf_destroy(&whole);
}

static void test_pieces(void **state)
{
    (void)state;
    static const char *docs[] = {"{}", " { } ", "{\"a\":[]}",
                                 "{\"a\":[1,{\"b\":[2,\"x\\n\"]},null],\"c\":{\"d\":1}}",
                                 "{\"a\":null,\"b\":[ {} , [] ],\"c\":\"s\"}\n", "[1,2]", "\"s\"",
                                 "7",
                                 /* refusals at every step */
                                 "", "{", "{\"a\"", "{\"a\" 1}", "{\"a\":", "{\"a\":1",
                                 "{\"a\":1,}", "{\"a\":[1 2]}", "{\"a\":[1,]}", "{\"a\":[",
                                 "{\"a\":[1", "{\"a\":{\"b\":}}", "{\"a\":1} x", "{\"a\":[1]} []",
                                 "{1:2}", "{\"a\":[\"\xff\"]}", "{\"\\u0000\":1}", "[1,]",
                                 "{\"a\":[tru]}", "{\"a\"\n:\n[\n01]}"};
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++)
        check_pieces(docs[i]);
    /* nesting counts from the document's root, in an element too */
    char deep[300];
    for (int extra = 61; extra <= 63; extra++) {
        int n = snprintf(deep, sizeof deep, "{\"a\":[");
        memset(deep + n, '[', (size_t)extra);
        memset(deep + n + extra, ']', (size_t)extra);
        snprintf(deep + n + 2 * extra, sizeof deep - (size_t)(n + 2 * extra), "]}");
        check_pieces(deep);
    }
}

static void test_numbers_and_lookup(void **state)
{
    (void)state;
    struct jtape t;
    jt_init(&t);
    struct buf err = BUF_INIT;
    const char *doc = "{\"a\":9223372036854775807,\"b\":-9223372036854775808,"
                      "\"c\":9223372036854775808,\"d\":1.5,\"a\":2}";
    assert_int_equal(jt_parse(&t, doc, strlen(doc), &err), ERR_OK);
    int64_t v;
    double f;
    assert_true(jt_int(&t, jt_get(&t, 1, "a"), &v) && v == INT64_MAX); /* the first "a" */
    assert_true(jt_int(&t, jt_get(&t, 1, "b"), &v) && v == INT64_MIN);
    assert_false(jt_int(&t, jt_get(&t, 1, "c"), &v));
    assert_false(jt_int(&t, jt_get(&t, 1, "d"), &v));
    assert_true(jt_double(&t, jt_get(&t, 1, "d"), &f) && f == 1.5);
    assert_int_equal(jt_get(&t, 1, "missing"), 0);
    assert_int_equal(jt_get(&t, jt_get(&t, 1, "d"), "x"), 0);
    assert_int_equal(jt_count(&t, 1), 0);
    jt_destroy(&t);
    buf_destroy(&err);
}

/* jt_double gives strtod's double for every number, the plain decimals it
 * reads itself (up to 15 significant digits) and the rest. */
static void test_doubles_as_strtod(void **state)
{
    (void)state;
    uint64_t x = 88172645463325252ULL;
    struct buf doc = BUF_INIT;
    struct jtape t;
    jt_init(&t);
    for (int round = 0; round < 200; round++) {
        buf_reset(&doc);
        buf_putc(&doc, '[');
        for (int k = 0; k < 100; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            if (k)
                buf_putc(&doc, ',');
            if (x % 7 == 0)
                buf_putc(&doc, '-');
            int ndig = 1 + (int)((x >> 8) % 19), point = (int)((x >> 16) % (uint64_t)(ndig + 1));
            uint64_t y = x;
            for (int d = 0; d < ndig; d++) {
                if (d == point && d > 0)
                    buf_putc(&doc, '.');
                buf_putc(&doc,
                         (char)('0' + (d == 0 && ndig > 1 && point != 1 ? 1 + y % 9 : y % 10)));
                y = y / 10 + (y << 60);
            }
            if (x % 11 == 0)
                buf_printf(&doc, "e%d", (int)((x >> 24) % 40) - 20);
        }
        buf_putc(&doc, ']');
        struct buf err = BUF_INIT;
        if (jt_parse(&t, doc.data, doc.len, &err) != ERR_OK)
            fail_msg("%s: %s", buf_cstr(&doc), buf_cstr(&err));
        buf_destroy(&err);
        JT_EACH(&t, 1, v)
        {
            char tmp[64];
            memcpy(tmp, jt_ptr(&t, v), t.n[v].len);
            tmp[t.n[v].len] = '\0';
            double got, want = strtod(tmp, NULL);
            assert_true(jt_double(&t, v, &got));
            if (memcmp(&got, &want, sizeof got) != 0)
                fail_msg("%s: %.17g, strtod %.17g", tmp, got, want);
        }
    }
    jt_destroy(&t);
    buf_destroy(&doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_documents),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_pieces),
        cmocka_unit_test(test_numbers_and_lookup),
        cmocka_unit_test(test_doubles_as_strtod),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
