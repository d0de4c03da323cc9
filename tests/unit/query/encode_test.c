/* Encoder tests: float formatting (always a decimal point or exponent,
 * non-finite -> null), JSON string escaping and UTF-8 repair, and whole
 * rows with projections; plus the field/tag predicate evaluator. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "model/record.h"
#include "query/cond.h"
#include "query/encode.h"
#include "query/query_int.h"
#include "query/sql.h"
#include "tests/support/store_testutil.h"

static void check_double(double d, const char *want)
{
    struct buf b = BUF_INIT;
    enc_double(&b, d);
    assert_string_equal(buf_cstr(&b), want);
    buf_destroy(&b);
}

/* enc_double's contract spelled out with printf and strtod: the shortest
 * of %.15g, %.16g and %.17g that reads back, plus ".0" if it reads as an
 * integer. */
static void ref_double(double d, char *out, size_t n)
{
    if (!isfinite(d)) {
        snprintf(out, n, "null");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, n, "%.*g", prec, d);
        if (strtod(out, NULL) == d)
            break;
    }
    if (!strchr(out, '.') && !strchr(out, 'e') && !strchr(out, 'n') && !strchr(out, 'i'))
        strncat(out, ".0", n - strlen(out) - 1);
}

static void test_double(void **state)
{
    (void)state;
    check_double(0.5, "0.5");
    check_double(1.0, "1.0");
    check_double(-3.0, "-3.0");
    check_double(0.0, "0.0");
    check_double(-0.0, "-0.0");
    check_double(1e15, "1000000000000000.0");
    check_double(-1e15, "-1000000000000000.0");
    check_double(1e16, "1e+16");
    check_double(4503599627370497.0, "4503599627370497.0");
    check_double(1e300, "1e+300");
    check_double(0.1, "0.1");
    check_double(397.15, "397.15");
    check_double(0.30000000000000004, "0.30000000000000004");
    check_double(1.0 / 3, "0.3333333333333333");
    check_double(-2.5e-5, "-2.5e-05");
    check_double(5e-324, "4.94065645841247e-324"); /* reads back as 5e-324 */
    check_double(99.999999999999986, "99.99999999999999");
    check_double(123456789.0, "123456789.0");
    check_double(1e17, "1e+17");
    check_double(NAN, "null");
    check_double(INFINITY, "null");
    check_double(-INFINITY, "null");
}

static void test_ints(void **state)
{
    (void)state;
    static const struct {
        int64_t v;
        const char *s;
    } cases[] = {{0, "0"},
                 {-1, "-1"},
                 {42, "42"},
                 {INT64_MAX, "9223372036854775807"},
                 {INT64_MIN, "-9223372036854775808"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct buf b = BUF_INIT;
        enc_i64(&b, cases[i].v);
        assert_string_equal(buf_cstr(&b), cases[i].s);
        buf_destroy(&b);
    }
    /* every digit count, both signs, against printf */
    for (uint64_t p = 1, k = 0; k < 19; k++, p *= 10) {
        int64_t vals[] = {(int64_t)p - 1, (int64_t)p, (int64_t)p + 1, (int64_t)(p * 7 + 3)};
        for (size_t i = 0; i < 4; i++) {
            for (int sign = 0; sign < 2; sign++) {
                int64_t v = sign ? -vals[i] : vals[i];
                char want[32];
                snprintf(want, sizeof(want), "%lld", (long long)v);
                struct buf b = BUF_INIT;
                enc_i64(&b, v);
                assert_string_equal(buf_cstr(&b), want);
                buf_destroy(&b);
            }
        }
    }
}

/* enc_double_g must equal printf's %.15g, %.16g and %.17g for every double. */
static void test_g17_random(void **state)
{
    (void)state;
    uint64_t x = 88172645463325252ULL;
    size_t bad = 0;
    for (int i = 0; i < 400000 && bad < 5; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double d;
        switch (i % 5) {
        case 0: memcpy(&d, &x, sizeof(d)); break; /* any bits */
        case 1: d = (double)(int64_t)(x % 2000001) / 100.0 - 10000; break;
        case 2: d = (double)(x % 1000000007) / 1e9; break;
        case 3: d = ldexp((double)(x >> 11), (int)(x % 120) - 100); break;
        default: d = (double)(x % 100000) * 0.001 + 1e-4 * (double)(x % 7); break;
        }
        for (int prec = 15; prec <= 17; prec++) {
            char want[64];
            snprintf(want, sizeof(want), "%.*g", prec, d);
            struct buf b = BUF_INIT;
            enc_double_g(&b, d, prec);
            if (strcmp(buf_cstr(&b), want) != 0) {
                print_message("# %.*g: got %s\n", prec, d, buf_cstr(&b));
                bad++;
            }
            buf_destroy(&b);
        }
        /* and the shortest form is the one printf and strtod find */
        if (isfinite(d)) {
            char want[64];
            ref_double(d, want, sizeof(want));
            struct buf b = BUF_INIT;
            enc_double(&b, d);
            if (strcmp(buf_cstr(&b), want) != 0) {
                print_message("# %.17g: shortest %s, want %s\n", d, buf_cstr(&b), want);
                bad++;
            }
            buf_destroy(&b);
        }
    }
    static const double tricky[] = {1e-4,
                                    1.0000000000000001e-4,
                                    9.9999999999999991e-5,
                                    0.001,
                                    0.1,
                                    0.2,
                                    0.3,
                                    0.5,
                                    0.9999999999999999,
                                    1.5,
                                    9.9999999999999982,
                                    9.9999999999999995,
                                    99.999999999999986,
                                    123.456,
                                    1e15 + 0.5,
                                    4503599627370495.5,
                                    9007199254740991.0,
                                    2.5e-5,
                                    0.015625,
                                    1.0 / 3,
                                    2.0 / 3,
                                    5e-324,
                                    2.2250738585072014e-308};
    for (size_t i = 0; i < sizeof(tricky) / sizeof(tricky[0]); i++) {
        for (int sign = 0; sign < 2; sign++) {
            double d = sign ? -tricky[i] : tricky[i];
            for (int prec = 15; prec <= 17; prec++) {
                char want[64];
                snprintf(want, sizeof(want), "%.*g", prec, d);
                struct buf b = BUF_INIT;
                enc_double_g(&b, d, prec);
                if (strcmp(buf_cstr(&b), want) != 0)
                    fail_msg("%s: got %s", want, buf_cstr(&b));
                buf_destroy(&b);
            }
            char want[64];
            ref_double(d, want, sizeof(want));
            struct buf b = BUF_INIT;
            enc_double(&b, d);
            if (strcmp(buf_cstr(&b), want) != 0)
                fail_msg("shortest of %.17g: got %s, want %s", d, buf_cstr(&b), want);
            buf_destroy(&b);
        }
    }
    assert_int_equal(bad, 0);
}

static void check_str(const char *in, size_t n, const char *want)
{
    struct buf b = BUF_INIT;
    enc_json_str(&b, in, n);
    assert_string_equal(buf_cstr(&b), want);
    buf_destroy(&b);
}

static void test_escape(void **state)
{
    (void)state;
    check_str("GET /", 5, "\"GET /\"");
    check_str("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
    check_str("\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"");
    check_str("\x01\x1f", 2, "\"\\u0001\\u001f\"");
    check_str("nul\0x", 5, "\"nul\\u0000x\"");
    check_str("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80", 15,
              "\"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80\"");
    check_str("\xff", 1, "\"\\ufffd\"");
    check_str("a\xc3", 2, "\"a\\ufffd\"");                     /* truncated sequence */
    check_str("\xc0\xaf", 2, "\"\\ufffd\\ufffd\"");            /* overlong */
    check_str("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\""); /* surrogate */
    check_str("\xe2\x28\xa1", 3, "\"\\ufffd(\\ufffd\"");
    check_str("", 0, "\"\"");
}

/* A special byte at every offset of a long string: the 8-byte skip of
 * enc_json_str must never step over it. */
static void test_escape_offsets(void **state)
{
    (void)state;
    static const struct {
        char c;
        const char *esc;
    } sp[] = {{'"', "\\\""},       {'\\', "\\\\"},      {'\n', "\\n"},
              {'\x01', "\\u0001"}, {'\x1f', "\\u001f"}, {'\xff', "\\ufffd"}};
    /* every length (words, partial words) and every position */
    for (size_t len = 0; len <= 30; len++) {
        char in[30], want[64];
        memset(in, 'a', sizeof(in));
        snprintf(want, sizeof(want), "\"%.*s\"", (int)len, in);
        check_str(in, len, want);
        for (size_t k = 0; k < sizeof(sp) / sizeof(sp[0]); k++) {
            for (size_t pos = 0; pos < len; pos++) {
                memset(in, 'a', sizeof(in));
                in[pos] = sp[k].c;
                snprintf(want, sizeof(want), "\"%.*s%s%.*s\"", (int)pos, in, sp[k].esc,
                         (int)(len - pos - 1), in + pos + 1);
                check_str(in, len, want);
            }
        }
    }
}

static void make_value(struct buf *v)
{
    struct rec_tag tags[] = {{slice_cstr("region"), slice_cstr("eu")}};
    struct rec_field f[5];
    memset(f, 0, sizeof(f));
    f[0].key = slice_cstr("value");
    f[0].type = REC_FLOAT;
    f[0].v.f = 0.5;
    f[1].key = slice_cstr("code");
    f[1].type = REC_INT;
    f[1].v.i = 200;
    f[2].key = slice_cstr("msg");
    f[2].type = REC_STRING;
    f[2].v.s = slice_cstr("GET /");
    f[3].key = slice_cstr("big");
    f[3].type = REC_UINT;
    f[3].v.u = UINT64_MAX;
    f[4].key = slice_cstr("ok");
    f[4].type = REC_BOOL;
    f[4].v.b = true;
    rec_encode(v, tags, 1, f, 5);
}

static void test_row(void **state)
{
    (void)state;
    struct buf v = BUF_INIT, out = BUF_INIT;
    make_value(&v);
    struct enc_proj all = {true, NULL, 0};
    assert_int_equal(enc_row(&out, 1700000000000000000LL, slice_cstr("web-1"), slice_cstr("cpu"),
                             slice_make("", 0), slice_make(v.data, v.len), &all),
                     0);
    assert_string_equal(buf_cstr(&out),
                        "{\"ts\":1700000000000000000,\"host\":\"web-1\",\"event\":\"cpu\","
                        "\"tags\":{\"region\":\"eu\"},\"fields\":{\"value\":0.5,\"code\":200,"
                        "\"msg\":\"GET /\",\"big\":18446744073709551615,\"ok\":true}}");
    struct sql_col cols[] = {{SQL_COL_TS, NULL},
                             {SQL_COL_FIELD, (char *)"code"},
                             {SQL_COL_TAG, (char *)"nope"}};
    struct enc_proj some = {false, cols, 3};
    buf_reset(&out);
    assert_int_equal(enc_row(&out, 5, slice_cstr("h"), slice_cstr("e"), slice_make("", 0),
                             slice_make(v.data, v.len), &some),
                     0);
    assert_string_equal(buf_cstr(&out), "{\"ts\":5,\"fields\":{\"code\":200}}");
    /* a damaged value is reported, not encoded */
    buf_reset(&out);
    assert_int_equal(enc_row(&out, 5, slice_cstr("h"), slice_cstr("e"), slice_make("", 0),
                             slice_make("\x05", 1), &all),
                     ERR_CORRUPT);
    buf_destroy(&v);
    buf_destroy(&out);
}

struct pred_case {
    const char *where;
    bool match;
};

static const struct pred_case preds[] = {
    {"value > 0.4", true},
    {"value = 0.5", true},
    {"value < 0.5", false},
    {"code = 200", true},
    {"code >= 200.5", false},
    {"code != 200", false},
    {"fields.msg = 'GET /'", true},
    {"msg > 'GET'", true},
    {"msg = 200", false},
    {"big > 9223372036854775807", true},
    {"big > -1", true},
    {"ok = true", true},
    {"ok != true", false},
    {"missing = 1", false},
    {"tags.region = 'eu'", true},
    {"tags.region != 'eu'", false},
    {"tags.zone = 'x'", false},
    {"value > 0 AND code < 300 AND tags.region = 'eu'", true},
    {"value > 0 AND code > 300", false},
};

static void test_preds(void **state)
{
    (void)state;
    struct buf v = BUF_INIT;
    make_value(&v);
    for (size_t i = 0; i < sizeof(preds) / sizeof(preds[0]); i++) {
        struct sql_where w;
        struct buf err = BUF_INIT;
        if (sql_parse_where(preds[i].where, strlen(preds[i].where), 0, &w, &err))
            fail_msg("%s: %s", preds[i].where, buf_cstr(&err));
        int rc;
        struct cond_row row;
        cond_row_init(&row);
        cond_row_set(&row, 5, slice_cstr("h"), slice_cstr("e"), slice_make("", 0),
                     slice_make(v.data, v.len));
        bool m = cond_match(w.cond, &row, &rc);
        cond_row_destroy(&row);
        assert_int_equal(rc, 0);
        if (m != preds[i].match)
            fail_msg("%s: got %d", preds[i].where, m);
        sql_where_destroy(&w);
        buf_destroy(&err);
    }
    buf_destroy(&v);
}

int main(void)
{
    if (tu_tsan_skip_file())
        return 0;
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_double),         cmocka_unit_test(test_ints),
        cmocka_unit_test(test_g17_random),     cmocka_unit_test(test_escape),
        cmocka_unit_test(test_escape_offsets), cmocka_unit_test(test_row),
        cmocka_unit_test(test_preds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
