/* The Loki and OTLP decoders: label strings with escapes, the mapping of
 * labels, metadata, resource and record attributes to host, event, tags
 * and fields, and malformed bodies (a reason, nothing emitted in check
 * mode, the same reason in both modes). Rows are rendered as render.h does:
 *   "<no> <event>|<host>|<tags>|<fields>|<ts>", "<no> BAD <reason>",
 *   "ERR <reason>" for a malformed body. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "ingest/logs.h"
#include "ingest/otlp_int.h"
#include "ingest/pb.h"
#include "render.h"
#include "tests/support/store_testutil.h"

static void on_row(void *arg, uint64_t no, const struct event *ev)
{
    struct buf *b = arg;
    buf_printf(b, "%llu ", (unsigned long long)no);
    render_event(b, ev);
    buf_putc(b, '\n');
}

static void on_reject(void *arg, uint64_t no, const char *reason)
{
    buf_printf(arg, "%llu BAD %s\n", (unsigned long long)no, reason);
}

typedef int (*decoder)(const char *, size_t, const struct logs_opts *, const struct logs_out *,
                       struct buf *);

static void opts_for(struct logs_opts *o, bool is_loki, struct event_stamp *stamp)
{
    memset(o, 0, sizeof *o);
    if (is_loki)
        o->map = (struct logs_map){"host,hostname,instance", "job,app,service_name", "loki"};
    else
        o->map = (struct logs_map){"host.name", "service.name", "otlp"};
    event_limits_default(&o->lim);
    o->stamp = stamp;
    o->arrival_ns = 42;
}

static int64_t fixed_now(void *arg)
{
    (void)arg;
    return 1000;
}

/* Decodes body in check mode, then for real; both must agree. OTLP/JSON
 * bodies are decoded for real twice more: the one-pass decoder
 * (otlp_jscan.c) must give the rows of the tape decoder. */
static char *decode(decoder fn, bool is_loki, const char *body, size_t len)
{
    struct event_stamp stamp;
    event_stamp_init(&stamp, fixed_now, NULL);
    struct logs_opts o;
    opts_for(&o, is_loki, &stamp);
    struct buf out = BUF_INIT, err1 = BUF_INIT, err2 = BUF_INIT;
    struct logs_out sink = {on_row, on_reject, &out};
    int rc1 = fn(body, len, &o, NULL, &err1);
    int rc2 = fn(body, len, &o, &sink, &err2);
    assert_int_equal(rc1, rc2);
    assert_string_equal(buf_cstr(&err1), buf_cstr(&err2));
    if (fn == otlp_decode_json) {
        struct event_stamp stamp2;
        event_stamp_init(&stamp2, fixed_now, NULL);
        o.stamp = &stamp2;
        struct buf tape = BUF_INIT, err3 = BUF_INIT;
        struct logs_out tape_sink = {on_row, on_reject, &tape};
        otlp_json_test_tape_only(true);
        int rc3 = fn(body, len, &o, &tape_sink, &err3);
        otlp_json_test_tape_only(false);
        assert_int_equal(rc3, rc2);
        assert_string_equal(buf_cstr(&err3), buf_cstr(&err2));
        if (strcmp(buf_cstr(&out), buf_cstr(&tape)) != 0) {
            fprintf(stderr, "# body %.*s\n# one pass: %s\n#     tape: %s\n", (int)len, body,
                    buf_cstr(&out), buf_cstr(&tape));
            fail();
        }
        buf_destroy(&tape);
        buf_destroy(&err3);
    }
    if (rc2) {
        assert_int_equal(rc2, ERR_INVAL);
        buf_reset(&out);
        buf_printf(&out, "ERR %s\n", buf_cstr(&err2));
    }
    buf_destroy(&err1);
    buf_destroy(&err2);
    char *s = xstrdup(buf_cstr(&out));
    buf_destroy(&out);
    return s;
}

static void check(decoder fn, bool is_loki, const char *body, const char *want)
{
    char *got = decode(fn, is_loki, body, strlen(body));
    if (strcmp(got, want) != 0) {
        /* cmocka cuts long messages: the whole texts go to stderr */
        fprintf(stderr, "# body %s\n#  got: %s\n# want: %s\n", body, got, want);
        fail();
    }
    free(got);
}

/* --- labels --------------------------------------------------------------- */

static char *labels(const char *s)
{
    struct buf out = BUF_INIT, r = BUF_INIT;
    const char *why = loki_parse_labels(s, strlen(s), &out);
    if (why) {
        buf_printf(&r, "ERR %s", why);
    } else {
        for (size_t p = 0; p < out.len;) {
            uint32_t n;
            for (int part = 0; part < 2; part++) {
                memcpy(&n, out.data + p, 4);
                buf_append(&r, out.data + p + 4, n);
                buf_putc(&r, part ? ';' : '=');
                p += 4 + n;
            }
        }
    }
    char *res = xstrdup(buf_cstr(&r));
    buf_destroy(&out);
    buf_destroy(&r);
    return res;
}

static void test_labels(void **state)
{
    (void)state;
    static const char *cases[][2] = {
        {"{}", ""},
        {" { } ", ""},
        {"{a=\"b\"}", "a=b;"},
        {"{job=\"api\", host=\"web-1\",_x9 = \"\"}", "job=api;host=web-1;_x9=;"},
        {"{a=\"q\\\"uote\\\\ back\\nline\\ttab\"}", "a=q\"uote\\ back\nline\ttab;"},
        {"{a=\"\\x41\\101\\u00e9\\U0001F600\"}", "a=AA\xc3\xa9\xf0\x9f\x98\x80;"},
        {"{a=`raw \\n`}", "a=raw \\n;"},
        {"{a=\"b\",}", "a=b;"},
        {"", "ERR labels must start with {"},
        {"{a=\"b\"", "ERR labels must end with }"},
        {"{a=\"b\"} x", "ERR text after the closing } of the labels"},
        {"{9a=\"b\"}", "ERR bad label name"},
        {"{a-b=\"c\"}", "ERR label name must be followed by ="},
        {"{a=b}", "ERR label value must be a quoted string"},
        {"{a=\"b}", "ERR unterminated label value"},
        {"{a=\"\\q\"}", "ERR unknown escape in a label value"},
        {"{a=\"\\x4\"}", "ERR bad \\x escape in a label value"},
        {"{a=\"\\ud800\"}", "ERR bad unicode escape in a label value"},
        {"{a=\"\\777\"}", "ERR bad octal escape in a label value"},
        {"{a=\"x\" b=\"y\"}", "ERR labels must be separated by ,"},
        {"{a=\"\\", "ERR label value ends in a backslash"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = labels(cases[i][0]);
        if (strcmp(got, cases[i][1]) != 0)
            fail_msg("labels %s\n got: %s\nwant: %s", cases[i][0], got, cases[i][1]);
        free(got);
    }
}

/* --- Loki JSON ------------------------------------------------------------- */

static void test_loki_json(void **state)
{
    (void)state;
    /* labels: host by the first present of host,hostname,instance; event by
     * job,app,service_name; the rest tags, then metadata; msg first */
    check(loki_decode_json, true,
          "{\"streams\":[{\"stream\":{\"instance\":\"i-1\",\"hostname\":\"h\",\"app\":\"a\","
          "\"job\":\"j\",\"env\":\"prod\"},\"values\":[[\"1700000000000000001\",\"line one\","
          "{\"trace\":\"t1\",\"env\":\"meta-loses\"}],[\"-5\",\"neg\"]]}]}",
          "1 j|h|env=prod;trace=t1|msg:S\"line one\"|1700000000000000001\n"
          "2 j|h|env=prod|msg:S\"neg\"|-5\n");
    check(loki_decode_json, true,
          "{\"streams\":[{\"stream\":{},\"values\":[[1,\"\"]]},"
          "{\"labels\":\"{service_name=\\\"svc\\\", "
          "host=\\\"x\\\"}\",\"entries\":[[\"2\",\"l\"]]}]}",
          "1 loki|||msg:S\"\"|1\n2 svc|x||msg:S\"l\"|2\n");
    check(loki_decode_json, true, "{\"streams\":[]}", "");
    /* entries that cannot be rows are refused one by one */
    check(loki_decode_json, true,
          "{\"streams\":[{\"stream\":{\"job\":\"\"},\"values\":[[\"1\",\"a\"]]},"
          "{\"stream\":{\"job\":\"ok\",\"bad\\u0001key\":\"v\"},\"values\":[[\"2\",\"b\"]]},"
          "{\"stream\":{\"job\":\"ok\"},\"values\":[[\"3\",\"c\",{\"k\":\"nul\\u0000\"}]]}]}",
          "ERR bad JSON at line 1 column 177: \\u0000 is not allowed (a NUL cannot be stored)\n");
    check(loki_decode_json, true,
          "{\"streams\":[{\"stream\":{\"job\":\"\"},\"values\":[[\"1\",\"a\"]]},"
          "{\"stream\":{\"job\":\"ok\",\"bad\\u0001key\":\"v\"},\"values\":[[\"2\",\"b\"]]}]}",
          "1 BAD empty event name\n2 BAD control character in a key\n");
    static const char *bad[][2] = {
        {"", "ERR bad JSON at line 1 column 1: unexpected end of the body\n"},
        {"[]", "ERR body must be an object with a \"streams\" array\n"},
        {"{\"streams\":[1]}", "ERR each stream must be an object\n"},
        {"{\"streams\":[{\"stream\":[]}]}", "ERR stream must be an object of label strings\n"},
        {"{\"streams\":[{\"stream\":{\"a\":1}}]}", "ERR stream label a must be a string\n"},
        {"{\"streams\":[{\"labels\":\"{a}\",\"values\":[]}]}",
         "ERR bad stream labels: label name must be followed by =\n"},
        {"{\"streams\":[{\"stream\":{}}]}", "ERR stream values must be an array of entries\n"},
        {"{\"streams\":[{\"stream\":{},\"values\":[[\"1\"]]}]}",
         "ERR an entry must be [\"<ns>\", \"<line>\"] or with metadata as third\n"},
        {"{\"streams\":[{\"stream\":{},\"values\":[[\"1.5\",\"l\"]]}]}",
         "ERR entry timestamp must be a string of nanoseconds since the epoch\n"},
        {"{\"streams\":[{\"stream\":{},\"values\":[[\"9223372036854775808\",\"l\"]]}]}",
         "ERR entry timestamp must be a string of nanoseconds since the epoch\n"},
        {"{\"streams\":[{\"stream\":{},\"values\":[[\"1\",\"l\",{\"a\":2}]]}]}",
         "ERR structured metadata a must be a string\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        check(loki_decode_json, true, bad[i][0], bad[i][1]);
}

/* --- Loki protobuf --------------------------------------------------------- */

static void pair(struct buf *b, uint32_t num, const char *k, const char *v)
{
    struct buf p = BUF_INIT;
    pb_put_bytes(&p, 1, k, strlen(k));
    pb_put_bytes(&p, 2, v, strlen(v));
    pb_put_bytes(b, num, p.data, p.len);
    buf_destroy(&p);
}

static void entry(struct buf *stream, int64_t sec, int32_t nanos, const char *line, bool meta)
{
    struct buf e = BUF_INIT, ts = BUF_INIT;
    pb_put_varint(&ts, 1, (uint64_t)sec);
    pb_put_varint(&ts, 2, (uint64_t)(int64_t)nanos);
    pb_put_bytes(&e, 1, ts.data, ts.len);
    pb_put_bytes(&e, 2, line, strlen(line));
    if (meta)
        pair(&e, 3, "trace_id", "abc");
    pb_put_bytes(stream, 2, e.data, e.len);
    buf_destroy(&e);
    buf_destroy(&ts);
}

static void check_bin(decoder fn, bool is_loki, const struct buf *body, const char *want)
{
    char *got = decode(fn, is_loki, body->data ? body->data : "", body->len);
    if (strcmp(got, want) != 0)
        fail_msg(" got: %s\nwant: %s", got, want);
    free(got);
}

static void test_loki_proto(void **state)
{
    (void)state;
    struct buf req = BUF_INIT, s = BUF_INIT;
    entry(&s, 1700000000, 5, "first", true);
    entry(&s, -1, 999999999, "before epoch", false);
    /* labels after the entries: read first all the same */
    const char *l = "{job=\"api\", host=\"web-1\", path=\"/a\\\"b\"}";
    pb_put_bytes(&s, 1, l, strlen(l));
    pb_put_varint(&s, 3, 12345); /* hash: unknown here, skipped */
    pb_put_bytes(&req, 1, s.data, s.len);
    check_bin(loki_decode_proto, true, &req,
              "1 api|web-1|path=/a\"b;trace_id=abc|msg:S\"first\"|1700000000000000005\n"
              "2 api|web-1|path=/a\"b|msg:S\"before epoch\"|-1\n");

    buf_reset(&req);
    buf_reset(&s);
    entry(&s, 1, 1000000000, "x", false);
    pb_put_bytes(&req, 1, s.data, s.len);
    check_bin(loki_decode_proto, true, &req, "ERR entry timestamp out of range\n");

    buf_reset(&req);
    buf_reset(&s);
    entry(&s, INT64_MAX / 1000000000 + 1, 0, "x", false);
    pb_put_bytes(&req, 1, s.data, s.len);
    check_bin(loki_decode_proto, true, &req, "ERR entry timestamp out of range\n");

    buf_reset(&req);
    buf_reset(&s);
    pb_put_varint(&s, 1, 7); /* labels as a varint */
    pb_put_bytes(&req, 1, s.data, s.len);
    check_bin(loki_decode_proto, true, &req,
              "ERR bad protobuf: wrong wire type for StreamAdapter\n");

    buf_reset(&req);
    buf_reset(&s);
    pb_put_bytes(&s, 2,
                 "\x12\x05"
                 "ab",
                 4); /* an entry whose line runs past its end */
    pb_put_bytes(&req, 1, s.data, s.len);
    check_bin(loki_decode_proto, true, &req,
              "ERR bad protobuf in EntryAdapter: length-delimited field runs past the end\n");

    buf_reset(&req);
    check_bin(loki_decode_proto, true, &req, "");
    buf_destroy(&req);
    buf_destroy(&s);
}

static void test_unsnappy(void **state)
{
    (void)state;
    struct buf out = BUF_INIT, err = BUF_INIT;
    /* length 5, one literal of 5 bytes */
    assert_int_equal(logs_unsnappy("\x05\x10hello", 7, 0, &out, &err), ERR_OK);
    assert_int_equal(out.len, 5);
    assert_memory_equal(out.data, "hello", 5);
    buf_reset(&out);
    assert_int_equal(logs_unsnappy("\x05\x10hello", 7, 4, &out, &err), ERR_TOOBIG);
    buf_reset(&err);
    assert_int_equal(logs_unsnappy("\x05\x10hel", 5, 0, &out, &err), ERR_INVAL);
    assert_string_equal(buf_cstr(&err), "bad snappy body: corrupt compressed data");
    buf_reset(&err);
    assert_int_equal(logs_unsnappy("\xff\xff\xff\xff\xff\xff", 6, 0, &out, &err), ERR_INVAL);
    buf_destroy(&out);
    buf_destroy(&err);
}

/* --- map lists ------------------------------------------------------------- */

/* A list split once ranks every key as logs_map_rank reads the list. */
static void test_map_names(void **state)
{
    (void)state;
    static const char *lists[] = {"", "a", "host.name", "a,,bb,c", ",a", "a,b,a", "a,b,", NULL};
    static const char *keys[] = {"", "a", "b", "bb", "c", "host.name", "host", "a,b", ","};
    char many[200] = "";
    for (int i = 0; i < LOGS_NAMES_MAX + 4; i++) /* past the split table */
        snprintf(many + strlen(many), sizeof many - strlen(many), "%sn%d", i ? "," : "", i);
    for (size_t l = 0; l <= sizeof lists / sizeof lists[0]; l++) {
        const char *list = l < sizeof lists / sizeof lists[0] ? lists[l] : many;
        struct logs_names ln;
        logs_names_init(&ln, list);
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            assert_int_equal(logs_names_rank(&ln, slice_cstr(keys[k])),
                             list ? logs_map_rank(list, slice_cstr(keys[k])) : -1);
        if (list == many) {
            assert_int_equal(logs_names_rank(&ln, slice_cstr("n0")), 0);
            assert_int_equal(logs_names_rank(&ln, slice_cstr("n19")), 19);
        }
    }
}

/* --- OTLP ------------------------------------------------------------------ */

static void test_otlp_json(void **state)
{
    (void)state;
    check(otlp_decode_json, false,
          "{\"resourceLogs\":[{\"resource\":{\"attributes\":["
          "{\"key\":\"service.name\",\"value\":{\"stringValue\":\"svc\"}},"
          "{\"key\":\"host.name\",\"value\":{\"stringValue\":\"h1\"}},"
          "{\"key\":\"pid\",\"value\":{\"intValue\":7}},"
          "{\"key\":\"user\",\"value\":{\"stringValue\":\"resource-loses\"}}]},"
          "\"scopeLogs\":[{\"scope\":{\"name\":\"s\"},\"logRecords\":["
          "{\"timeUnixNano\":\"1700000000000000001\",\"severityNumber\":17,"
          "\"body\":{\"stringValue\":\"boom\"},\"traceId\":\"5B8EFFF798038103D269B633813FC60C\","
          "\"spanId\":\"eee19b7ec3c1b174\",\"attributes\":["
          "{\"key\":\"user\",\"value\":{\"stringValue\":\"bob\"}},"
          "{\"key\":\"n\",\"value\":{\"intValue\":\"-9223372036854775808\"}},"
          "{\"key\":\"d\",\"value\":{\"doubleValue\":0.25}},"
          "{\"key\":\"b\",\"value\":{\"boolValue\":false}},"
          "{\"key\":\"raw\",\"value\":{\"bytesValue\":\"AAEC\"}},"
          "{\"key\":\"arr\",\"value\":{\"arrayValue\":{\"values\":[{\"intValue\":\"1\"},"
          "{\"stringValue\":\"x\"},{}]}}},"
          "{\"key\":\"none\",\"value\":{}}]},"
          "{\"observedTimeUnixNano\":5,\"severityText\":\"Warning\",\"severityNumber\":13,"
          "\"body\":{\"kvlistValue\":{\"values\":[{\"key\":\"k\",\"value\":{\"doubleValue\":"
          "\"NaN\"}},{\"key\":\"e\"}]}}},"
          "{\"severity_number\":\"SEVERITY_NUMBER_INFO2\",\"body\":{\"intValue\":\"3\"}}]}]}]}",
          "1 svc|h1|level=ERROR;user=bob;raw=AAEC;arr=[1,\"x\",null]|msg:S\"boom\";trace_id:"
          "S\"5b8efff798038103d269b633813fc60c\";span_id:S\"eee19b7ec3c1b174\";n:I-"
          "9223372036854775808;d:F0.25;b:Bf;pid:I7|1700000000000000001\n"
          "2 svc|h1|level=Warning;user=resource-loses|msg:S\"{\"k\":null,\"e\":null}\";pid:I7|5\n"
          "3 svc|h1|level=INFO2;user=resource-loses|msg:S\"3\";pid:I7|1000\n");
    /* a resource's attributes of every kind reach each of its records (the
     * first record's row takes them as decoded, later ones a kept copy),
     * and none reaches the next resource's */
    check(otlp_decode_json, false,
          "{\"resourceLogs\":[{\"resource\":{\"attributes\":["
          "{\"key\":\"host.name\",\"value\":{\"stringValue\":\"h1\"}},"
          "{\"key\":\"kv\",\"value\":{\"kvlistValue\":{\"values\":[{\"key\":\"a\","
          "\"value\":{\"intValue\":\"1\"}}]}}},"
          "{\"key\":\"arr\",\"value\":{\"arrayValue\":{\"values\":[{\"boolValue\":false}]}}},"
          "{\"key\":\"raw\",\"value\":{\"bytesValue\":\"AAEC\"}},"
          "{\"key\":\"d\",\"value\":{\"doubleValue\":0.5}},"
          "{\"key\":\"ok\",\"value\":{\"boolValue\":true}}]},"
          "\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"1\"},"
          "{\"timeUnixNano\":\"2\",\"attributes\":[{\"key\":\"d\",\"value\":"
          "{\"intValue\":\"9\"}}]}]},{\"logRecords\":[{\"timeUnixNano\":\"3\"}]}]},"
          "{\"resource\":{\"attributes\":[{\"key\":\"host.name\",\"value\":"
          "{\"stringValue\":\"h2\"}}]},\"scopeLogs\":[{\"logRecords\":["
          "{\"timeUnixNano\":\"4\"},{\"timeUnixNano\":\"5\"}]}]},"
          "{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"6\"}]}]}]}",
          "1 otlp|h1|kv={\"a\":1};arr=[false];raw=AAEC|msg:S\"\";d:F0.5;ok:Bt|1\n"
          "2 otlp|h1|kv={\"a\":1};arr=[false];raw=AAEC|msg:S\"\";d:I9;ok:Bt|2\n"
          "3 otlp|h1|kv={\"a\":1};arr=[false];raw=AAEC|msg:S\"\";d:F0.5;ok:Bt|3\n"
          "4 otlp|h2||msg:S\"\"|4\n5 otlp|h2||msg:S\"\"|5\n6 otlp|||msg:S\"\"|6\n");
    /* no resource: the default event, the default host, the arrival stamp */
    check(otlp_decode_json, false, "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{}]}]}]}",
          "1 otlp|||msg:S\"\"|1000\n");
    check(otlp_decode_json, false, "{}", "");
    check(otlp_decode_json, false,
          "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"traceId\":\"xyz\"},"
          "{\"attributes\":[{\"key\":\"f\",\"value\":{\"doubleValue\":\"Infinity\"}}]},"
          "{\"timeUnixNano\":\"18446744073709551615\"}]}]}]}",
          "1 BAD trace or span id is not hex\n2 BAD attribute is a NaN or infinite double\n"
          "3 BAD timeUnixNano out of range\n");
    static const char *bad[][2] = {
        {"[1]", "ERR body must be a JSON object\n"},
        {"{\"resourceLogs\":[1]}", "ERR each resourceLogs must be an object\n"},
        {"{\"resourceLogs\":[{\"resource\":1}]}", "ERR resource must be an object\n"},
        {"{\"resourceLogs\":[{\"scopeLogs\":{}}]}", "ERR scopeLogs must be an array\n"},
        {"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[[]]}]}]}",
         "ERR each logRecord must be an object\n"},
        {"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":-1}]}]}]}",
         "ERR timeUnixNano must not be negative\n"},
        {"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"severityText\":1}]}]}]}",
         "ERR severityText must be a string\n"},
        {"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"traceId\":1}]}]}]}",
         "ERR traceId must be a hex string\n"},
        {"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"attributes\":[{\"value\":{}}]}"
         "]}]}]}",
         "ERR an attribute needs a string key\n"},
        {"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"body\":{\"boolValue\":1}}]}]}]}",
         "ERR boolValue has the wrong JSON type\n"},
        {"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"body\":{\"intValue\":"
         "\"9223372036854775808\"}}]}]}]}",
         "ERR intValue must be an integer or a string of digits\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        check(otlp_decode_json, false, bad[i][0], bad[i][1]);
}

static void kv_str(struct buf *b, uint32_t num, const char *k, const char *v)
{
    struct buf kv = BUF_INIT, any = BUF_INIT;
    pb_put_bytes(&any, 1, v, strlen(v));
    pb_put_bytes(&kv, 1, k, strlen(k));
    pb_put_bytes(&kv, 2, any.data, any.len);
    pb_put_bytes(b, num, kv.data, kv.len);
    buf_destroy(&kv);
    buf_destroy(&any);
}

static void kv_any(struct buf *b, uint32_t num, const char *k, const struct buf *any)
{
    struct buf kv = BUF_INIT;
    pb_put_bytes(&kv, 1, k, strlen(k));
    pb_put_bytes(&kv, 2, any->data, any->len);
    pb_put_bytes(b, num, kv.data, kv.len);
    buf_destroy(&kv);
}

static void fixed64(struct buf *b, uint32_t num, uint64_t v)
{
    buf_putc(b, (char)(num << 3 | 1)); /* field numbers below 16: a one-byte key */
    for (int i = 0; i < 8; i++)
        buf_putc(b, (char)(v >> (8 * i)));
}

static void wrap(struct buf *out, uint32_t num, struct buf *in)
{
    struct buf t = BUF_INIT;
    pb_put_bytes(&t, num, in->data, in->len);
    buf_reset(in);
    buf_append(out, t.data, t.len);
    buf_destroy(&t);
}

static void test_otlp_proto(void **state)
{
    (void)state;
    struct buf rec = BUF_INIT, any = BUF_INIT, inner = BUF_INIT, res = BUF_INIT;
    struct buf scope = BUF_INIT, rl = BUF_INIT, req = BUF_INIT;
    fixed64(&rec, 1, 1700000000000000009ull);
    pb_put_varint(&rec, 2, 9);
    /* body: kvlist {a: [true, 1.5, bytes 0xff]} */
    struct buf arr = BUF_INIT, v = BUF_INIT;
    pb_put_varint(&v, 2, 1);
    wrap(&arr, 1, &v);
    fixed64(&v, 4, 0x3ff8000000000000ull);
    wrap(&arr, 1, &v);
    pb_put_bytes(&v, 7, "\xff", 1);
    wrap(&arr, 1, &v);
    wrap(&inner, 5, &arr);
    kv_any(&any, 1, "a", &inner);
    buf_reset(&inner);
    wrap(&inner, 6, &any);
    wrap(&rec, 5, &inner);
    kv_str(&rec, 6, "user", "amy");
    pb_put_varint(&any, 3, (uint64_t)-3);
    kv_any(&rec, 6, "n", &any);
    buf_reset(&any);
    pb_put_bytes(&rec, 9, "\x01\xab", 2);
    pb_put_bytes(&rec, 10, "", 0);
    wrap(&scope, 2, &rec);
    kv_str(&res, 1, "host.name", "node-1");
    kv_str(&res, 1, "service.name", "api");
    kv_str(&res, 1, "zone", "z1");
    /* scope logs before the resource: read all the same */
    wrap(&rl, 2, &scope);
    wrap(&rl, 1, &res);
    wrap(&req, 1, &rl);
    check_bin(otlp_decode_proto, false, &req,
              "1 api|node-1|level=INFO;user=amy;zone=z1|msg:S\"{\"a\":[true,1.5,\"/w==\"]}\";"
              "trace_id:S\"01ab\";n:I-3|1700000000000000009\n");

    /* three records of one resource, whose attributes are kept at the
     * second (an ArrayValue rendered as text among them), then another
     * resource */
    buf_reset(&req);
    pb_put_bytes(&v, 1, "x", 1);
    wrap(&arr, 1, &v);
    wrap(&inner, 5, &arr);
    kv_str(&res, 1, "host.name", "node-2");
    kv_any(&res, 1, "list", &inner);
    buf_reset(&inner);
    for (uint64_t t = 1; t <= 3; t++) {
        fixed64(&rec, 1, t);
        if (t == 2)
            kv_str(&rec, 6, "list", "own");
        wrap(&scope, 2, &rec);
    }
    wrap(&rl, 1, &res);
    wrap(&rl, 2, &scope);
    wrap(&req, 1, &rl);
    kv_str(&res, 1, "host.name", "node-3");
    wrap(&rl, 1, &res);
    fixed64(&rec, 1, 4);
    wrap(&scope, 2, &rec);
    wrap(&rl, 2, &scope);
    wrap(&req, 1, &rl);
    check_bin(otlp_decode_proto, false, &req,
              "1 otlp|node-2|list=[\"x\"]|msg:S\"\"|1\n2 otlp|node-2|list=own|msg:S\"\"|2\n"
              "3 otlp|node-2|list=[\"x\"]|msg:S\"\"|3\n4 otlp|node-3||msg:S\"\"|4\n");

    /* wrong wire type of time_unix_nano */
    buf_reset(&req);
    pb_put_varint(&rec, 1, 5);
    wrap(&scope, 2, &rec);
    wrap(&rl, 2, &scope);
    wrap(&req, 1, &rl);
    check_bin(otlp_decode_proto, false, &req,
              "ERR bad protobuf: wrong wire type for LogRecord field 1\n");

    /* an AnyValue nested past the limit */
    buf_reset(&req);
    pb_put_bytes(&any, 1, "leaf", 4);
    for (int i = 0; i < PB_MAX_DEPTH + 2; i++) {
        wrap(&arr, 1, &any);
        wrap(&any, 5, &arr);
    }
    wrap(&rec, 5, &any);
    wrap(&scope, 2, &rec);
    wrap(&rl, 2, &scope);
    wrap(&req, 1, &rl);
    check_bin(otlp_decode_proto, false, &req, "ERR bad protobuf: AnyValue nested too deep\n");

    buf_reset(&req);
    buf_append(&req, "\x0a\x05\x12\x03\x12\x01", 6);
    check_bin(otlp_decode_proto, false, &req,
              "ERR bad protobuf in ExportLogsServiceRequest: length-delimited field runs past "
              "the end\n");
    struct buf *all[] = {&rec, &any, &inner, &res, &scope, &rl, &req, &arr, &v};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        buf_destroy(all[i]);
}

static void test_severity_names(void **state)
{
    (void)state;
    assert_null(otlp_severity_name(0));
    assert_string_equal(otlp_severity_name(1), "TRACE");
    assert_string_equal(otlp_severity_name(12), "INFO4");
    assert_string_equal(otlp_severity_name(13), "WARN");
    assert_string_equal(otlp_severity_name(24), "FATAL4");
    assert_null(otlp_severity_name(25));
}

/* The shape of the OTLP specification's logs example (examples/logs.json:
 * pretty-printed, a scope with attributes, every attribute kind): the
 * one-pass decoder takes it, and gives the tape decoder's row. */
static void test_otlp_json_spec_shape(void **state)
{
    (void)state;
    static const char body[] =
        "{\n  \"resourceLogs\": [\n    {\n      \"resource\": {\n        \"attributes\": [\n"
        "          {\"key\": \"service.name\", \"value\": {\"stringValue\": \"my.service\"}}\n"
        "        ]\n      },\n      \"scopeLogs\": [\n        {\n          \"scope\": {\n"
        "            \"name\": \"my.library\", \"version\": \"1.0.0\",\n"
        "            \"attributes\": [{\"key\": \"my.scope.attribute\", \"value\": "
        "{\"stringValue\": \"some scope attribute\"}}]\n          },\n"
        "          \"logRecords\": [\n            {\n"
        "              \"timeUnixNano\": \"1544712660300000000\",\n"
        "              \"observedTimeUnixNano\": \"1544712660300000000\",\n"
        "              \"severityNumber\": 10,\n              \"severityText\": \"Information\",\n"
        "              \"traceId\": \"5B8EFFF798038103D269B633813FC60C\",\n"
        "              \"spanId\": \"EEE19B7EC3C1B174\",\n"
        "              \"body\": {\"stringValue\": \"Example log record\"},\n"
        "              \"attributes\": [\n"
        "                {\"key\": \"string.attribute\", \"value\": {\"stringValue\": \"some "
        "string\"}},\n"
        "                {\"key\": \"boolean.attribute\", \"value\": {\"boolValue\": true}},\n"
        "                {\"key\": \"int.attribute\", \"value\": {\"intValue\": \"10\"}},\n"
        "                {\"key\": \"double.attribute\", \"value\": {\"doubleValue\": 637.704}},\n"
        "                {\"key\": \"array.attribute\", \"value\": {\"arrayValue\": {\"values\": "
        "[{\"stringValue\": \"many\"}, {\"stringValue\": \"values\"}]}}},\n"
        "                {\"key\": \"map.attribute\", \"value\": {\"kvlistValue\": {\"values\": "
        "[{\"key\": \"some.map.key\", \"value\": {\"stringValue\": \"some value\"}}]}}}\n"
        "              ]\n            }\n          ]\n        }\n      ]\n    }\n  ]\n}\n";
    uint64_t before = otlp_json_test_one_passes();
    check(otlp_decode_json, false, body,
          "1 my.service||level=Information;string.attribute=some string;"
          "array.attribute=[\"many\",\"values\"];map.attribute={\"some.map.key\":\"some value\"}|"
          "msg:S\"Example log record\";trace_id:S\"5b8efff798038103d269b633813fc60c\";"
          "span_id:S\"eee19b7ec3c1b174\";boolean.attribute:Bt;int.attribute:I10;"
          "double.attribute:F637.70399999999995|1544712660300000000\n");
    assert_true(otlp_json_test_one_passes() > before);
}

/* --- OTLP/JSON: the one-pass decoder against the tape decoder ------------ */

static uint64_t rnd_state = 0x853c49e6748fea9bULL;

static unsigned rnd(unsigned n)
{
    rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(rnd_state >> 33) % n;
}

/* Half the bodies are "clean": only what the one-pass decoder takes
 * (still in any order, with blanks, nulls and second members). */
static bool clean;

static const char *pick(const char *const *v, size_t n)
{
    return v[rnd((unsigned)n)];
}
#define PICK(v) pick(v, sizeof v / sizeof v[0])

/* A value of an AnyValue, of every kind and spelling the decoders read,
 * and some they refuse. */
static void any_value(struct buf *b, int depth)
{
    if (depth < 3 && rnd(6) == 0) { /* an array or kvlist, rendered as JSON */
        bool is_kv = rnd(2);
        buf_puts(b, is_kv ? "{\"kvlistValue\":{\"values\":[" : "{\"arrayValue\":{\"values\":[");
        unsigned n = rnd(4);
        for (unsigned i = 0; i < n; i++) {
            buf_puts(b, i ? "," : "");
            if (!is_kv) {
                any_value(b, depth + 1);
            } else if (!clean && rnd(8) == 0) {
                buf_puts(b, "{\"value\":{\"intValue\":1},\"key\":\"late\"}");
            } else {
                buf_printf(b, "{\"key\":\"k%u\"", i);
                if (rnd(4)) {
                    buf_puts(b, ",\"value\":");
                    any_value(b, depth + 1);
                } else if (rnd(2)) {
                    buf_puts(b, ",\"value\":null");
                }
                buf_putc(b, '}');
            }
        }
        if (rnd(10)) /* else a second "values", which the decoders pass over */
            buf_puts(b, "]}}");
        else
            buf_puts(b, is_kv ? "],\"values\":[{\"key\":\"dup\"}]}}"
                              : "],\"values\":[{\"intValue\":9}]}}");
        return;
    }
    /* mostly what exporters send, which the one-pass decoder takes */
    static const char *const common[] = {
        "{\"stringValue\":\"plain\"}", "{\"stringValue\":\"two words\"}",
        "{\"intValue\":\"42\"}",       "{\"intValue\":-7}",
        "{\"doubleValue\":2.5}",       "{\"boolValue\":true}",
        "{\"doubleValue\":0.1}",       "{\"stringValue\":\"esc\\\"aped\"}",
        "{\"bytesValue\":\"AAEC\"}",   "{}",
    };
    if (clean || rnd(3)) {
        buf_puts(b, PICK(common));
        return;
    }
    static const char *const scalars[] = {
        "{\"stringValue\":\"plain\"}",
        "{\"stringValue\":\"caf\\u00e9 \\\"q\\\" \\n tab\\t\"}",
        "{\"stringValue\":\"utf8 \xc3\xa9\xe2\x82\xac\"}",
        "{\"string_value\":\"snake\"}",
        "{\"stringValue\":\"\"}",
        "{\"stringValue\":null,\"intValue\":\"5\"}",
        "{\"intValue\":\"-9223372036854775808\"}",
        "{\"intValue\":9223372036854775807}",
        "{\"intValue\":\"9223372036854775808\"}",
        "{\"intValue\":-0}",
        "{\"intValue\":1.5}",
        "{\"intValue\":\"12x\"}",
        "{\"doubleValue\":0.25}",
        "{\"doubleValue\":-0}",
        "{\"doubleValue\":-0.0}",
        "{\"doubleValue\":1e308}",
        "{\"doubleValue\":1e400}",
        "{\"doubleValue\":123456789012345678}",
        "{\"doubleValue\":\"NaN\"}",
        "{\"doubleValue\":\"-Infinity\"}",
        "{\"doubleValue\":\"1.5\"}",
        "{\"boolValue\":true}",
        "{\"bool_value\":false}",
        "{\"boolValue\":1}",
        "{\"bytesValue\":\"AAEC\"}",
        "{}",
        "{\"unknown\":[1,{\"a\":null}],\"intValue\":3}",
        "{\"intValue\":3,\"stringValue\":\"second\"}",
        "[]",
        "\"bare\"",
        "null",
    };
    buf_puts(b, PICK(scalars));
}

static void attr_list(struct buf *b, bool is_resource)
{
    static const char *const res_keys[] = {"host.name", "service.name", "pid", "user",
                                           "h\\u006fst.name"};
    static const char *const keys[] = {"user", "n", "d", "b", "raw", "user", "k\\\"q", "msg"};
    unsigned n = rnd(4);
    buf_putc(b, '[');
    for (unsigned i = 0; i < n; i++) {
        buf_puts(b, i ? "," : "");
        switch (clean ? 5 + rnd(7) : rnd(12)) {
        case 0: buf_puts(b, "{\"value\":{\"stringValue\":\"v\"}}"); break; /* no key */
        case 1: buf_printf(b, "{\"key\":\"%s\"}", is_resource ? "host.name" : "nv"); break;
        case 2: buf_printf(b, "{\"key\":\"%s\",\"value\":null}", PICK(keys)); break;
        case 3: buf_puts(b, "{\"key\":7,\"value\":{}}"); break;
        case 4: buf_puts(b, "\"kv\""); break;
        default:
            buf_printf(b, "{%s\"key\":\"%s\",\"value\":", rnd(6) ? "" : "\"x\":1,",
                       is_resource ? PICK(res_keys) : PICK(keys));
            any_value(b, 0);
            buf_puts(b, rnd(8) ? "}" : ",\"key\":\"again\"}");
        }
    }
    buf_putc(b, ']');
}

static void record_json(struct buf *b)
{
    static const char *const times[] = {"\"1700000000000000001\"",
                                        "1700000000000000002",
                                        "\"18446744073709551615\"",
                                        "18446744073709551615",
                                        "\"-1\"",
                                        "-5",
                                        "1.5",
                                        "\"\"",
                                        "null",
                                        "\"00000000000000000000042\""};
    static const char *const sevnums[] = {"17",  "\"SEVERITY_NUMBER_WARN\"", "99", "0", "9.5",
                                          "null"};
    static const char *const ids[] = {"\"5B8EFFF798038103D269B633813FC60C\"",
                                      "\"eee19b7ec3c1b174\"", "\"xyz\"", "\"\"", "12"};
    static const char *const clean_times[] = {"\"1700000000000000001\"", "1700000000000000002",
                                              "\"18446744073709551615\"", "null"};
    static const char *const clean_sevnums[] =
        {"17", "99", "0", "null", "\"SEVERITY_NUMBER_WARN\"", "\"SEVERITY_NUMBER_NOPE\""};
    const char *parts[10];
    char tmp[10][128];
    unsigned n = 0;
    if (rnd(4))
        parts[n++] = rnd(2) ? "\"timeUnixNano\":" : "\"time_unix_nano\":";
    if (rnd(4) == 0)
        parts[n++] = "\"observedTimeUnixNano\":";
    if (rnd(5))
        parts[n++] = "\"body\":";
    if (rnd(3) == 0)
        parts[n++] = rnd(2) ? "\"severityText\":" : "\"severity_text\":";
    if (rnd(3) == 0)
        parts[n++] = "\"severityNumber\":";
    if (rnd(4) == 0)
        parts[n++] = "\"traceId\":";
    if (rnd(4) == 0)
        parts[n++] = "\"span_id\":";
    if (rnd(3))
        parts[n++] = "\"attributes\":";
    if (rnd(6) == 0)
        parts[n++] = "\"flags\":";
    if (rnd(8) == 0)
        parts[n++] = "\"body\":";      /* a second one */
    for (unsigned i = n; i > 1; i--) { /* any order */
        unsigned j = rnd(i);
        const char *t = parts[i - 1];
        parts[i - 1] = parts[j];
        parts[j] = t;
    }
    (void)tmp;
    buf_putc(b, '{');
    for (unsigned i = 0; i < n; i++) {
        buf_puts(b, i ? (rnd(10) ? "," : " ,\n ") : "");
        buf_puts(b, parts[i]);
        const char *p = parts[i];
        if (strstr(p, "ime"))
            buf_puts(b, clean ? PICK(clean_times) : PICK(times));
        else if (strstr(p, "body"))
            any_value(b, 0);
        else if (strstr(p, "everity_text") || strstr(p, "everityText"))
            buf_puts(b, rnd(4) ? "\"Warning\"" : rnd(2) || clean ? "\"\"" : "3");
        else if (strstr(p, "everityNumber"))
            buf_puts(b, clean ? PICK(clean_sevnums) : PICK(sevnums));
        else if (strstr(p, "race") || strstr(p, "pan"))
            buf_puts(b, ids[rnd(clean ? 4 : 5)]);
        else if (strstr(p, "attributes"))
            rnd(10) || clean ? attr_list(b, false) : buf_puts(b, rnd(2) ? "null" : "{}");
        else
            buf_puts(b, "[1,{\"deep\":[[[]]]}]");
    }
    buf_putc(b, '}');
}

static void otlp_body(struct buf *b)
{
    buf_puts(b, rnd(12) ? "{\"resourceLogs\":[" : "{\"x\":{\"y\":[]},\"resource_logs\":[");
    unsigned nrl = rnd(3) + 1;
    for (unsigned r = 0; r < nrl; r++) {
        buf_puts(b, r ? "," : "");
        bool res_last = !clean && rnd(8) == 0;
        buf_putc(b, '{');
        if (!res_last && rnd(6)) {
            buf_puts(b, "\"resource\":{\"attributes\":");
            attr_list(b, true);
            buf_puts(b, rnd(6) ? "}," : ",\"droppedAttributesCount\":0},");
        }
        buf_puts(b, rnd(8) ? "\"scopeLogs\":[" : "\"scope_logs\":[");
        unsigned ns = rnd(3);
        for (unsigned sc = 0; sc < ns; sc++) {
            buf_puts(b, sc ? "," : "");
            buf_puts(b, rnd(3) ? "{\"scope\":{\"name\":\"s\",\"version\":\"1\"},\"logRecords\":["
                               : "{\"log_records\":[");
            unsigned nr = rnd(4);
            for (unsigned i = 0; i < nr; i++) {
                buf_puts(b, i ? "," : "");
                record_json(b);
            }
            buf_puts(b, "]}");
        }
        buf_putc(b, ']');
        if (res_last)
            buf_puts(b, ",\"resource\":{\"attributes\":[{\"key\":\"host.name\",\"value\":{"
                        "\"stringValue\":\"late\"}}]}");
        if (rnd(10) == 0)
            buf_puts(b, ",\"schemaUrl\":\"u\"");
        buf_putc(b, '}');
    }
    buf_puts(b, rnd(20) ? "]}" : "]} ");
}

/* Random bodies of every part the decoders read, then the same with bytes
 * flipped, cut or doubled: decode() checks the one-pass decoder's rows,
 * result and error text against the tape decoder's. */
static void test_otlp_json_one_pass(void **state)
{
    (void)state;
    struct buf b = BUF_INIT;
    uint64_t taken0 = otlp_json_test_one_passes(), whole = 0;
    /* no thread here: ThreadSanitizer's pass decodes a tenth of them */
    int bodies = tu_tsan() ? 300 : 3000;
    for (int i = 0; i < bodies; i++) {
        buf_reset(&b);
        clean = i % 2 == 0;
        otlp_body(&b);
        free(decode(otlp_decode_json, false, b.data, b.len));
        whole++;
        for (int m = 0; m < 4; m++) {
            struct buf c = BUF_INIT;
            buf_append(&c, b.data, b.len);
            size_t at = rnd((unsigned)c.len);
            switch (rnd(4)) {
            case 0: c.data[at] = (char)rnd(256); break;
            case 1: c.len = at; break;
            case 2: c.data[at] = "{}[],:\"\\n0-"[rnd(11)]; break;
            default: buf_append(&c, b.data + at, c.len - at); break;
            }
            free(decode(otlp_decode_json, false, c.data ? c.data : "", c.len));
            buf_destroy(&c);
        }
    }
    /* an unknown member nested about as deep as the tape decoder allows
     * (64 containers), at each level of the body's structure */
    static const char *const at[][2] = {
        {"{\"x\":", ",\"resourceLogs\":[]}"},
        {"{\"resourceLogs\":[{\"x\":", "}]}"},
        {"{\"resourceLogs\":[{\"resource\":{\"x\":", "}}]}"},
        {"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"x\":", "}]}]}]}"},
        {"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"attributes\":[{\"key\":"
         "\"k\",\"value\":{\"x\":",
         "}}]}]}]}]}"},
    };
    for (size_t w = 0; w < sizeof at / sizeof at[0]; w++)
        for (int n = 50; n <= 66; n++) {
            buf_reset(&b);
            buf_puts(&b, at[w][0]);
            for (int k = 0; k < n; k++)
                buf_puts(&b, k % 2 ? "{\"a\":" : "[");
            buf_puts(&b, "1");
            for (int k = n - 1; k >= 0; k--)
                buf_puts(&b, k % 2 ? "}" : "]");
            buf_puts(&b, at[w][1]);
            free(decode(otlp_decode_json, false, b.data, b.len));
        }
    buf_destroy(&b);
    /* the one pass took a good share of them (each decode() runs it once) */
    uint64_t taken = otlp_json_test_one_passes() - taken0;
    print_message("# the one-pass decoder took %llu of %llu whole bodies and their mutations\n",
                  (unsigned long long)taken, (unsigned long long)whole * 5);
    assert_true(taken > whole / 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_loki_json),
        cmocka_unit_test(test_loki_proto),
        cmocka_unit_test(test_unsnappy),
        cmocka_unit_test(test_map_names),
        cmocka_unit_test(test_otlp_json),
        cmocka_unit_test(test_otlp_proto),
        cmocka_unit_test(test_severity_names),
        cmocka_unit_test(test_otlp_json_one_pass),
        cmocka_unit_test(test_otlp_json_spec_shape),
    };
    (void)render_result;
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
