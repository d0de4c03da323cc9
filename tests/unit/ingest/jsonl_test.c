/* JSON lines: a table of lines with the event or error each must give, RFC
 * 3339 timestamps, and the table as one body split at every offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "ingest/jsonl.h"
#include "render.h"

struct jcase {
    const char *in;
    const char *want; /* NULL: skipped; ending in '*': prefix */
};

static const struct jcase cases[] = {
    {"{\"ts\":1,\"host\":\"h\",\"event\":\"e\",\"i\":1,\"f\":1.5,\"b\":true,\"c\":false,"
     "\"s\":\"x\",\"n\":null}",
     "e|h||i:I1;f:F1.5;b:Bt;c:Bf;s:S\"x\"|1"},
    {"{\"event\":\"e\",\"v\":1.0,\"w\":-9223372036854775808}",
     "e|||v:F1;w:I-9223372036854775808|-"},
    {"{\"event\":\"e\",\"a\":{\"b\":{\"c\":1},\"d\":\"x\",\"e\":{}}}", "e|||a.b.c:I1;a.d:S\"x\"|-"},
    {"{\"event\":\"e\",\"arr\":[1,\"two\",{\"x\":null}],\"z\":[]}",
     "e|||arr:S\"[1,\"two\",{\"x\":null}]\";z:S\"[]\"|-"},
    {"{\"ts\":\"2024-05-01T10:00:00Z\",\"event\":\"e\",\"v\":1}", "e|||v:I1|1714557600000000000"},
    {"{\"ts\":\"2024-05-01T10:00:00.123456789+02:00\",\"event\":\"e\",\"v\":1}",
     "e|||v:I1|1714550400123456789"},
    {"{\"ts\":\"1970-01-01t00:00:00.5z\",\"event\":\"e\",\"v\":1}", "e|||v:I1|500000000"},
    {"{\"ts\":\"1969-12-31 23:59:59-00:30\",\"event\":\"e\",\"v\":1}", "e|||v:I1|1799000000000"},
    {"{\"ts\":null,\"host\":null,\"event\":\"e\",\"k\\\"q\":\"\\u00e9\"}",
     "e|||k\"q:S\"\xc3\xa9\"|-"},
    {"", NULL},
    {"   \t", NULL},
    {"{\"ts\":\"2024-02-30T00:00:00Z\",\"event\":\"e\",\"v\":1}",
     "BAD bad \"ts\" (want RFC 3339, e.g. 2024-05-01T10:00:00Z): 2024-02-30T00:00:00Z"},
    {"{\"ts\":1.5,\"event\":\"e\",\"v\":1}",
     "BAD \"ts\" must be an integer (ns) or an RFC 3339 string"},
    {"{\"host\":1,\"event\":\"e\",\"v\":1}", "BAD \"host\" must be a string"},
    {"{\"event\":\"\",\"v\":1}", "BAD empty event name"},
    {"{\"v\":1}", "BAD missing \"event\" (the event name is required, or event= in the URL)"},
    {"{\"event\":5,\"v\":1}", "BAD \"event\" must be a string"},
    {"{\"event\":\"e\"}", "BAD no fields (a row needs at least one besides ts, host and event)"},
    {"{\"event\":\"e\",\"n\":null,\"o\":{}}",
     "BAD no fields (a row needs at least one besides ts, host and event)"},
    {"{\"event\":\"e\",\"a.b\":1,\"a\":{\"b\":2}}",
     "BAD duplicate field key after flattening: a.b"},
    {"{\"event\":\"e\",\"\":1}", "BAD empty field key"},
    {"{\"event\":\"e\",\"v\":1,\"v\":2}", "BAD duplicate field key after flattening: v"},
    {"{\"event\":\"e\",\"ts\":1,\"ts\":2,\"v\":1}", "BAD duplicate field key after flattening: ts"},
    {"{\"host\":{\"name\":\"h\"},\"event\":\"e\",\"v\":1}", "BAD \"host\" must be a string"},
    {"{\"event\":[\"e\"],\"v\":1}", "BAD \"event\" must be a string"},
    {"{\"ts\":{},\"event\":\"e\",\"v\":1}",
     "BAD \"ts\" must be an integer (ns) or an RFC 3339 string"},
    {"{\"ts\":true,\"event\":\"e\",\"v\":1}",
     "BAD \"ts\" must be an integer (ns) or an RFC 3339 string"},
    {"{\"event\":\"e\",\"a\":{\"ts\":1,\"host\":[1]}}", "e|||a.ts:I1;a.host:S\"[1]\"|-"},
    {" {\"event\":\"e\",\"v\":1} ", "e|||v:I1|-"},
    {"{\"event\":\"e\",\"v\":1} x", "BAD invalid JSON: *"},
    {"[1,2]", "BAD line is not a JSON object"},
    {"{\"event\":\"e\",\"v\":1", "BAD invalid JSON: *"},
    {"{\"event\":\"e\",\"v\":\"\\u0000\"}", "BAD invalid JSON: *"},
    {"{\"event\":\"e\",\"v\":99999999999999999999}", "BAD invalid JSON: *"},
    {"{\"event\":\"e\",\"v\":\"\xff\"}", "BAD invalid JSON: *"},
    {"not json at all", "BAD invalid JSON: *"},
    {"{\"event\":\"ok\",\"v\":\"end\"}", "ok|||v:S\"end\"|-"},
};

#define NCASES (sizeof cases / sizeof cases[0])

static void check(const char *got, const char *want, size_t i)
{
    size_t n = strlen(want);
    bool ok = n && want[n - 1] == '*' ? strncmp(got, want, n - 1) == 0 : strcmp(got, want) == 0;
    if (!ok) {
        print_error("case %zu: got [%s] want [%s]\n", i, got, want);
        fail();
    }
}

static void test_each_line(void **state)
{
    (void)state;
    struct event_limits lim;
    event_limits_default(&lim);
    struct jsonl_parser *p = jsonl_new(&lim, NULL, NULL, NULL);
    for (size_t i = 0; i < NCASES; i++) {
        struct event ev;
        const char *why = NULL;
        struct buf got = BUF_INIT;
        enum event_kind k = jsonl_parse_line(p, cases[i].in, strlen(cases[i].in), &ev, &why);
        if (k == EVENT_OK)
            render_event(&got, &ev);
        else if (k == EVENT_BAD)
            buf_printf(&got, "BAD %s", why);
        check(buf_cstr(&got), cases[i].want ? cases[i].want : "", i);
        buf_destroy(&got);
    }
    jsonl_free(p);
}

static void run(const char *body, size_t len, size_t first, size_t piece, struct buf *out)
{
    struct event_limits lim;
    event_limits_default(&lim);
    struct jsonl_parser *p = jsonl_new(&lim, NULL, NULL, NULL);
    struct event_result r;
    size_t off = 0;
    while (off < len) {
        size_t n = off == 0 && first ? first : piece;
        if (n > len - off)
            n = len - off;
        size_t done = 0;
        while (done < n) {
            size_t used = jsonl_feed(p, body + off + done, n - done, &r);
            assert_true(used > 0);
            render_result(out, &r);
            done += used;
        }
        off += n;
    }
    if (jsonl_finish(p, &r))
        render_result(out, &r);
    jsonl_free(p);
}

static void test_body_splits(void **state)
{
    (void)state;
    struct buf body = BUF_INIT, whole = BUF_INIT, got = BUF_INIT;
    for (size_t i = 0; i < NCASES; i++) {
        buf_puts(&body, cases[i].in);
        buf_puts(&body, i % 2 ? "\r\n" : "\n");
    }
    body.len--; /* the last line without its newline */
    run(body.data, body.len, 0, body.len, &whole);
    /* line numbers and results line up with the table */
    const char *q = buf_cstr(&whole);
    for (size_t i = 0; i < NCASES; i++) {
        if (!cases[i].want)
            continue;
        char pre[32];
        snprintf(pre, sizeof pre, "L%zu ", i + 1);
        assert_true(strncmp(q, pre, strlen(pre)) == 0);
        const char *nl = strchr(q, '\n');
        struct buf one = BUF_INIT;
        buf_append(&one, q + strlen(pre), (size_t)(nl - q) - strlen(pre));
        check(buf_cstr(&one), cases[i].want, i);
        buf_destroy(&one);
        q = nl + 1;
    }
    for (size_t cut = 1; cut < body.len; cut++) {
        buf_reset(&got);
        run(body.data, body.len, cut, body.len, &got);
        assert_string_equal(buf_cstr(&got), buf_cstr(&whole));
    }
    buf_reset(&got);
    run(body.data, body.len, 0, 1, &got);
    assert_string_equal(buf_cstr(&got), buf_cstr(&whole));
    buf_destroy(&body);
    buf_destroy(&whole);
    buf_destroy(&got);
}

/* The request's host= and event= are the defaults of lines without them;
 * a line's own keys win. */
static void test_url_defaults(void **state)
{
    (void)state;
    struct event_limits lim;
    event_limits_default(&lim);
    lim.default_host = "cfg-host";
    struct jsonl_parser *p = jsonl_new(&lim, NULL, "url-host", "url-event");
    static const struct {
        const char *in, *want;
    } tab[] = {
        {"{\"v\":1}", "url-host url-event"},
        {"{\"v\":1,\"event\":null,\"host\":null}", "url-host url-event"},
        {"{\"v\":1,\"event\":\"own\"}", "url-host own"},
        {"{\"v\":1,\"host\":\"h\",\"event\":\"e\"}", "h e"},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        struct event ev;
        const char *why = NULL;
        assert_int_equal(jsonl_parse_line(p, tab[i].in, strlen(tab[i].in), &ev, &why), EVENT_OK);
        char got[64];
        snprintf(got, sizeof got, "%.*s %.*s", (int)ev.host.len, ev.host.ptr, (int)ev.name.len,
                 ev.name.ptr);
        assert_string_equal(got, tab[i].want);
    }
    jsonl_free(p);
    p = jsonl_new(&lim, NULL, NULL, "only-event");
    struct event ev;
    const char *why = NULL;
    const char *l = "{\"v\":1}";
    assert_int_equal(jsonl_parse_line(p, l, strlen(l), &ev, &why), EVENT_OK);
    assert_true(slice_eq(ev.host, slice_cstr("cfg-host")));
    jsonl_free(p);
}

static void test_limits(void **state)
{
    (void)state;
    struct event_limits lim;
    event_limits_default(&lim);
    lim.max_key_bytes = 5;
    lim.max_fields_per_line = 2;
    struct jsonl_parser *p = jsonl_new(&lim, NULL, NULL, NULL);
    struct event ev;
    const char *why = NULL;
    const char *l1 = "{\"event\":\"e\",\"abcdef\":1}";
    assert_int_equal(jsonl_parse_line(p, l1, strlen(l1), &ev, &why), EVENT_BAD);
    assert_string_equal(why, "field key too long (max 5)");
    const char *l2 = "{\"event\":\"e\",\"a\":{\"b\":{\"cd\":1}}}";
    assert_int_equal(jsonl_parse_line(p, l2, strlen(l2), &ev, &why), EVENT_BAD);
    assert_string_equal(why, "field key too long (max 5)");
    const char *l3 = "{\"event\":\"e\",\"a\":1,\"b\":2,\"c\":3}";
    assert_int_equal(jsonl_parse_line(p, l3, strlen(l3), &ev, &why), EVENT_BAD);
    assert_string_equal(why, "too many fields (max 2)");
    const char *l4 = "{\"event\":\"eeeeee\",\"a\":1}";
    assert_int_equal(jsonl_parse_line(p, l4, strlen(l4), &ev, &why), EVENT_BAD);
    assert_string_equal(why, "event name too long");
    const char *l5 = "{\"event\":\"e\",\"a\":{\"b\":1}}";
    assert_int_equal(jsonl_parse_line(p, l5, strlen(l5), &ev, &why), EVENT_OK);
    jsonl_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_line),
        cmocka_unit_test(test_body_splits),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_url_defaults),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
