/* The Elasticsearch document reader (jsonl_parse_es over jscan): a table
 * of documents with the fields or the error each must give (strings and
 * their escapes, numbers, nesting, arrays, strictness), and the fast
 * decimal path checked against strtod. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ingest/jscan.h"
#include "ingest/jsonl.h"
#include "render.h"

static const struct jsonl_es_map map = {"@timestamp", "host,HOST", "", false, "message,MESSAGE"};

static const struct {
    const char *in, *want;
} cases[] = {
    {"{\"a\":\"x\\\"y\\\\z\\/\\b\\f\\n\\r\\t\"}", "idx|||a:S\"x\"y\\z/\b\f\n\r\t\"|-"},
    {"{\"a\":\"\\u00e9\\ud83d\\ude00\\u20AC\"}",
     "idx|||a:S\"\xc3\xa9\xf0\x9f\x98\x80\xe2\x82\xac\"|-"},
    {"{\"a\":\"caf\xc3\xa9 plain and long enough to take the wide scan\"}",
     "idx|||a:S\"caf\xc3\xa9 plain and long enough to take the wide scan\"|-"},
    {"{\"a\":1,\"b\":-0,\"c\":1.5,\"d\":1e3,\"e\":-2.5E-3,\"f\":9223372036854775807,"
     "\"g\":-9223372036854775808}",
     "idx|||a:I1;b:I0;c:F1.5;d:F1000;e:F-0.0025000000000000001;f:I9223372036854775807;"
     "g:I-9223372036854775808|-"},
    {"{\"x\":0.1,\"y\":123456789012345678.5,\"z\":0.000123}",
     "idx|||x:F0.10000000000000001;y:F1.2345678901234568e+17;z:F0.00012300000000000001|-"},
    {"{\"x\":123456789012345678901.5,\"y\":1234567890123456789,\"z\":-1000000000000000000}",
     "idx|||x:F1.2345678901234568e+20;y:I1234567890123456789;z:I-1000000000000000000|-"},
    {"{\"a\":[1, {\"b\": \"c d\"}, null, \"q\\\"\"],\"e\":[]}",
     "idx|||a:S\"[1,{\"b\":\"c d\"},null,\"q\\\"\"]\";e:S\"[]\"|-"},
    {" { \"a\" : { \"b\" : { \"c\" : true } } , \"d\" : null , \"f\" : false } ",
     "idx|||a.b.c:Bt;f:Bf|-"},
    {"{\"@timestamp\":\"2024-05-01T10:00:00.5+02:00\",\"host\":\"h\",\"message\":\"m\"}",
     "idx|h||msg:S\"m\"|1714550400500000000"},
    {"{\"@timestamp\":1714557600000.5,\"message\":7}", "idx|||message:I7|1714557600000500000"},
    /* syslog-ng's elasticsearch-http() default template (format-json --scope
     * rfc5424): upper-case HOST and MESSAGE; the first key of a list wins */
    {"{\"PROGRAM\":\"app\",\"MESSAGE\":\"m\",\"HOST\":\"h\",\"@timestamp\":\"2024-05-01T15:30:00+"
     "05:30\"}",
     "idx|h||PROGRAM:S\"app\";msg:S\"m\"|1714557600000000000"},
    {"{\"MESSAGE\":\"upper\",\"message\":\"lower\",\"HOST\":\"u\",\"host\":\"l\"}",
     "idx|l||MESSAGE:S\"upper\";msg:S\"lower\";HOST:S\"u\"|-"},
    {"{\"message\":7,\"MESSAGE\":\"m\"}", "idx|||message:I7;msg:S\"m\"|-"},
    {"{\"@timestamp\":\"1714557600001\",\"v\":1}", "idx|||v:I1|1714557600001000000"},
    /* errors */
    {"{\"a\":\"\\ud800\"}", "BAD invalid JSON: invalid \\u escape"},
    {"{\"a\":\"\\udc00\\ud800\"}", "BAD invalid JSON: invalid \\u escape"},
    {"{\"a\":\"\\u0000\"}", "BAD invalid JSON: \\u0000 is not allowed in a string"},
    {"{\"a\":\"\\x\"}", "BAD invalid JSON: invalid escape in a string"},
    {"{\"a\":\"tab\there\"}", "BAD invalid JSON: control character in a string"},
    {"{\"a\":\"\xff\"}", "BAD invalid JSON: invalid UTF-8 in a string"},
    {"{\"a\":\"\xed\xa0\x80\"}", "BAD invalid JSON: invalid UTF-8 in a string"},
    {"{\"a\":\"open}", "BAD invalid JSON: unterminated string"},
    {"{\"a\":9223372036854775808}", "BAD invalid JSON: integer out of range (int64)"},
    /* 19 digits are read without overflow checks, the 20th on with them */
    {"{\"a\":9999999999999999999}", "BAD invalid JSON: integer out of range (int64)"},
    {"{\"a\":12345678901234567890}", "BAD invalid JSON: integer out of range (int64)"},
    {"{\"a\":-18446744073709551616}", "BAD invalid JSON: integer out of range (int64)"},
    {"{\"a\":999999999999999999999999}", "BAD invalid JSON: integer out of range (int64)"},
    {"{\"a\":1e999}", "BAD invalid JSON: number out of range"},
    {"{\"a\":01}", "BAD invalid JSON: ',' or '}' expected"},
    {"{\"a\":1.}", "BAD invalid JSON: invalid number"},
    {"{\"a\":.5}", "BAD invalid JSON: invalid value"},
    {"{\"a\":-}", "BAD invalid JSON: invalid number"},
    {"{\"a\":tru}", "BAD invalid JSON: invalid literal"},
    {"{\"a\":1} x", "BAD invalid JSON: text after the document"},
    {"{\"a\":1,}", "BAD invalid JSON: string expected"},
    {"{\"a\" 1}", "BAD invalid JSON: ':' expected"},
    {"{\"a\":1", "BAD invalid JSON: ',' or '}' expected"},
    {"{\"a\":[1,2}", "BAD invalid JSON: ',' or ']' expected"},
    {"[]", "BAD line is not a JSON object"},
    {"", "BAD empty document"},
    {"{}", "BAD no fields (a document needs one besides its timestamp, host and event)"},
    /* top-level keys are used as read (an escaped one from the scratch),
     * nested ones built under their parent: both kinds in one document */
    {"{\"k\\u00e9\\\"\":1,\"o\":{\"p\":2,\"q\":{\"r\":\"s\"}},\"arr\":[1, 2],\"z\":\"t\"}",
     "idx|||k\xc3\xa9\":I1;o.p:I2;o.q.r:S\"s\";arr:S\"[1,2]\";z:S\"t\"|-"},
    {"{\"o\":{\"p\":1},\"o.p\":2}", "BAD duplicate field key after flattening: o.p"},
    {"{\"a\":1,\"a\":2}", "BAD duplicate field key after flattening: a"},
    {"{\"a.b\":1,\"a\":{\"b\":2}}", "BAD duplicate field key after flattening: a.b"},
    {"{\"@timestamp\":[1],\"v\":1}",
     "BAD bad timestamp (want RFC 3339 or epoch milliseconds) in @timestamp"},
    {"{\"\":1}", "BAD empty field key"},
};

static void render(struct jsonl_parser *p, const char *in, struct buf *got)
{
    struct event ev;
    const char *why = NULL;
    buf_reset(got);
    enum event_kind k = jsonl_parse_es(p, in, strlen(in), "idx", &ev, &why);
    if (k == EVENT_OK)
        render_event(got, &ev);
    else
        buf_printf(got, "BAD %s", why);
}

static void test_documents(void **state)
{
    (void)state;
    struct event_limits lim;
    event_limits_default(&lim);
    struct jsonl_parser *p = jsonl_new(&lim, NULL, NULL, NULL);
    jsonl_set_es_map(p, &map);
    struct buf got = BUF_INIT;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        render(p, cases[i].in, &got);
        if (strcmp(buf_cstr(&got), cases[i].want)) {
            print_error("case %zu: got [%s] want [%s]\n", i, buf_cstr(&got), cases[i].want);
            fail();
        }
    }
    buf_destroy(&got);
    jsonl_free(p);
}

/* Nesting is bounded (no stack overflow on a hostile document). */
static void test_depth(void **state)
{
    (void)state;
    struct event_limits lim;
    event_limits_default(&lim);
    struct jsonl_parser *p = jsonl_new(&lim, NULL, NULL, NULL);
    jsonl_set_es_map(p, &map);
    struct buf doc = BUF_INIT, got = BUF_INIT;
    for (int i = 0; i < 100; i++)
        buf_puts(&doc, "{\"a\":");
    buf_puts(&doc, "1");
    for (int i = 0; i < 100; i++)
        buf_putc(&doc, '}');
    render(p, buf_cstr(&doc), &got);
    assert_string_equal(buf_cstr(&got), "BAD invalid JSON: nested too deep");
    buf_reset(&doc);
    buf_puts(&doc, "{\"a\":");
    for (int i = 0; i < 100; i++)
        buf_putc(&doc, '[');
    for (int i = 0; i < 100; i++)
        buf_putc(&doc, ']');
    buf_putc(&doc, '}');
    render(p, buf_cstr(&doc), &got);
    assert_string_equal(buf_cstr(&got), "BAD invalid JSON: nested too deep");
    buf_destroy(&doc);
    buf_destroy(&got);
    jsonl_free(p);
}

/* The decimal num as a document's field reads as strtod reads it. */
static void check_decimal(struct jsonl_parser *p, const char *num)
{
    char doc[64];
    snprintf(doc, sizeof doc, "{\"v\":%s}", num);
    struct event ev;
    const char *why = NULL;
    assert_int_equal(jsonl_parse_es(p, doc, strlen(doc), "i", &ev, &why), EVENT_OK);
    assert_int_equal(ev.fields[0].type, REC_FLOAT);
    double want = strtod(num, NULL);
    if (memcmp(&ev.fields[0].v.f, &want, sizeof want)) {
        print_error("%s: got %.17g want %.17g\n", num, ev.fields[0].v.f, want);
        fail();
    }
}

/* Short decimals skip strtod: the result must be the same double. */
static void test_decimals_match_strtod(void **state)
{
    (void)state;
    struct event_limits lim;
    event_limits_default(&lim);
    struct jsonl_parser *p = jsonl_new(&lim, NULL, NULL, NULL);
    jsonl_set_es_map(p, &map);
    uint64_t seed = 7;
    char num[40];
    for (int i = 0; i < 20000; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        int frac = (int)(seed >> 60);
        unsigned long long m = (seed >> 14) % 1000000000000000ULL;
        m >>= (seed >> 8) % 40;
        snprintf(num, sizeof num, "%s%llu", (seed >> 7) & 1 ? "-" : "", m);
        size_t n = strlen(num), digits = n - (num[0] == '-');
        if (frac > 0 && (size_t)frac < digits) {
            memmove(num + n - frac + 1, num + n - frac, (size_t)frac + 1);
            num[n - frac] = '.';
        } else {
            strcat(num, ".0");
        }
        check_decimal(p, num);
    }
    /* around the exact path's bounds: 13 to 20 significant digits, leading
     * zeros after the point, exponents (strtod's path) */
    for (int i = 0; i < 20000; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        unsigned long long a = (seed >> 10) % 100000000000ULL, b = (seed >> 20) % 1000000000ULL;
        int e = (int)((seed >> 5) % 40) - 20, k = (int)(seed % 5);
        const char *sign = (seed >> 7) & 1 ? "-" : "";
        switch (k) {
        case 0: snprintf(num, sizeof num, "%s%llu.%llu", sign, a, b); break;
        case 1: snprintf(num, sizeof num, "%s0.000%llu", sign, a); break;
        case 2: snprintf(num, sizeof num, "%s%llu.%llue%d", sign, a, b, e); break;
        case 3: snprintf(num, sizeof num, "%s0.%llu%llu", sign, a, b); break;
        default: snprintf(num, sizeof num, "%s%llu%llu.5", sign, a, b); break;
        }
        check_decimal(p, num);
    }
    jsonl_free(p);
}

/* How jscan_number reads num: the result, type, value (a float's bits)
 * and the bytes read; tail after it. Alone (no tail: fewer than 18 bytes
 * after a short number) it takes the full reading; with 18 bytes or more
 * after it the short one (jscan.c, number_short) where the form is one. */
static void read_number(const char *num, const char *tail, struct buf *out)
{
    char text[128];
    snprintf(text, sizeof text, "%s%s", num, tail);
    struct buf scratch = BUF_INIT;
    struct jscan s;
    jscan_init(&s, text, strlen(text), &scratch);
    enum jscan_type t = JS_NULL;
    int64_t i = 0;
    double d = 0;
    bool ok = jscan_number(&s, &t, &i, &d);
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    buf_reset(out);
    if (!ok)
        buf_printf(out, "error %s", s.err ? s.err : "");
    else if (t == JS_INT)
        buf_printf(out, "int %lld, %td bytes", (long long)i, s.p - text);
    else
        buf_printf(out, "float %016llx, %td bytes", (unsigned long long)bits, s.p - text);
    buf_destroy(&scratch);
}

/* The short reading of common numbers (jscan.c, number_short) gives what
 * the full reading gives, value for value and error for error. */
static void test_short_numbers(void **state)
{
    (void)state;
    static const char *const fixed[] =
        {"0", "-0", "0.0", "-0.0", "0.5", "-0.5", "7", "-7", "12.345", "01", "-01", "1.", "-",
         "1.e5", "1e5", "1E5", "1.5e3", "-1.5E-3", "123456789012345", "-123456789012345",
         "1234567890123456", "12345678901234.5", "1234567890123.45", "0.00000000000001",
         "0.000000000000001", "99999999999999.9", "9007199254740993", "1.2.3", "--1", "-.5", ".5",
         "00", "0.1234567890123456", "100000000000000", "999999999999999.0",
         /* 16 digits: their mantissa over 2^53 is rounded before the division */
         "900719925474099.7", "-900719925474099.7", "9.007199254740997"};
    struct buf a = BUF_INIT, b = BUF_INIT;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        read_number(fixed[i], "", &a);
        read_number(fixed[i], ",\"pad\":\"abcdefghijklmnopqrstuvwxyz\"}", &b);
        if (strcmp(buf_cstr(&a), buf_cstr(&b)) != 0) {
            print_error("%s: at the end %s, before a tail %s\n", fixed[i], buf_cstr(&a),
                        buf_cstr(&b));
            fail();
        }
    }
    uint64_t seed = 11;
    char num[48];
    for (int i = 0; i < 50000; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        int nint = (int)((seed >> 8) % 18), nfrac = (int)((seed >> 16) % 18) - 1;
        size_t n = 0;
        if ((seed >> 7) & 1)
            num[n++] = '-';
        uint64_t r = seed;
        for (int k = 0; k < nint; k++, r = r * 6364136223846793005ULL + 1)
            num[n++] = (char)('0' + (r >> 59) % 10);
        if (nfrac >= 0) {
            num[n++] = '.';
            for (int k = 0; k < nfrac; k++, r = r * 6364136223846793005ULL + 1)
                num[n++] = (char)('0' + (r >> 59) % 10);
        }
        num[n] = '\0';
        read_number(num, "", &a);
        read_number(num, ",\"pad\":\"abcdefghijklmnopqrstuvwxyz\"}", &b);
        if (strcmp(buf_cstr(&a), buf_cstr(&b)) != 0) {
            print_error("%s: at the end %s, before a tail %s\n", num, buf_cstr(&a), buf_cstr(&b));
            fail();
        }
    }
    buf_destroy(&a);
    buf_destroy(&b);
}

/* The map's key lists are split when it is set: a parser given another
 * map takes its keys, and lists longer than the split holds (16 names)
 * still find names past the sixteenth, first in the list's order. */
static void test_map_lists(void **state)
{
    (void)state;
    struct event_limits lim;
    event_limits_default(&lim);
    struct jsonl_parser *p = jsonl_new(&lim, NULL, NULL, NULL);
    jsonl_set_es_map(p, &map);
    struct buf keys = BUF_INIT;
    for (int i = 0; i < 20; i++)
        buf_printf(&keys, "%sk%02d", i ? "," : "", i);
    static const char doc[] = "{\"k19\":\"h19\",\"k17\":\"h17\",\"k03\":5,\"m\":\"text\"}";
    struct jsonl_es_map m = {"", buf_cstr(&keys), "", false, "nothing,m"};
    struct event ev;
    const char *why = NULL;
    jsonl_set_es_map(p, &m);
    assert_int_equal(jsonl_parse_es(p, doc, strlen(doc), "i", &ev, &why), EVENT_OK);
    assert_true(slice_eq(ev.host, slice_cstr("h17"))); /* k03 is no string */
    assert_int_equal(ev.nfields, 3);
    assert_true(slice_eq(ev.fields[2].key, slice_cstr("msg")));
    /* another map on the same parser */
    struct jsonl_es_map m2 = {"", "k03,k19", "k17", true, ""};
    jsonl_set_es_map(p, &m2);
    assert_int_equal(jsonl_parse_es(p, doc, strlen(doc), "i", &ev, &why), EVENT_OK);
    assert_true(slice_eq(ev.host, slice_cstr("h19")));
    assert_true(slice_eq(ev.name, slice_cstr("h17")));
    assert_true(slice_eq(ev.fields[1].key, slice_cstr("m")));
    buf_destroy(&keys);
    jsonl_free(p);
}

int main(void)
{
    (void)render_result; /* render.h's other helper */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_documents),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_decimals_match_strtod),
        cmocka_unit_test(test_short_numbers),
        cmocka_unit_test(test_map_lists),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
