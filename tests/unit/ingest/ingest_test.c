/* ingest.c over a fake sink: rows and batch boundaries, errors text and its
 * cap, timestamps (arrival time, reject window), body cap, gzip (every split,
 * concatenated members, bad and truncated streams, a capped gzip bomb) and
 * store errors in the middle of a request. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "base/err.h"
#include "ingest/esbulk.h"
#include "ingest/ingest.h"
#include "ingest/lineproto.h"
#include "model/record.h"

/* --- the fake sink ------------------------------------------------------ */

struct fake {
    struct buf rows;    /* pending rows, rendered */
    struct buf written; /* rows of successful writes, rendered, "--" between batches */
    int nwrites;
    int fail_at; /* write number (1-based) that fails, 0 = never */
    int fail_rc;
};

static void render_value(struct buf *b, struct slice id, struct slice v)
{
    struct rec_row_reader r;
    assert_int_equal(rec_row_init(&r, id, v), ERR_OK);
    struct rec_tag t;
    int rc;
    while ((rc = rec_row_next_tag(&r, &t)) == 1)
        buf_printf(b, "%.*s=%.*s;", (int)t.key.len, t.key.ptr, (int)t.value.len, t.value.ptr);
    assert_int_equal(rc, 0);
    buf_putc(b, '|');
    struct rec_field f;
    while ((rc = rec_row_next_field(&r, &f)) == 1) {
        buf_printf(b, "%.*s:", (int)f.key.len, f.key.ptr);
        switch (f.type) {
        case REC_FLOAT: buf_printf(b, "F%g;", f.v.f); break;
        case REC_INT: buf_printf(b, "I%lld;", (long long)f.v.i); break;
        case REC_UINT: buf_printf(b, "U%llu;", (unsigned long long)f.v.u); break;
        case REC_BOOL: buf_printf(b, "B%d;", f.v.b); break;
        case REC_STRING: buf_printf(b, "S%.*s;", (int)f.v.s.len, f.v.s.ptr); break;
        }
    }
    assert_int_equal(rc, 0);
}

static void fake_put(void *arg, const struct ingest_row *r)
{
    struct fake *f = arg;
    buf_printf(&f->rows, "%lld|%.*s|%.*s|", (long long)r->ts, (int)r->host.len, r->host.ptr,
               (int)r->event.len, r->event.ptr);
    render_value(&f->rows, r->id, r->value);
    buf_putc(&f->rows, '\n');
}

static int fake_write(void *arg)
{
    struct fake *f = arg;
    f->nwrites++;
    int rc = ERR_OK;
    if (f->fail_at && f->nwrites == f->fail_at) {
        rc = f->fail_rc;
    } else {
        buf_append(&f->written, f->rows.data, f->rows.len);
        buf_puts(&f->written, "--\n");
    }
    buf_reset(&f->rows);
    return rc;
}

static void fake_init(struct fake *f)
{
    memset(f, 0, sizeof *f);
    buf_init(&f->rows);
    buf_init(&f->written);
}

static void fake_destroy(struct fake *f)
{
    buf_destroy(&f->rows);
    buf_destroy(&f->written);
}

static struct ingest *start(struct fake *f, const struct ingest_params *prm,
                            const struct event_limits *lim)
{
    struct ingest_sink sink = {fake_put, fake_write, NULL, f};
    struct ingest *in = NULL;
    assert_int_equal(ingest_new_sink(prm, lim, &sink, &in), ERR_OK);
    return in;
}

static void params(struct ingest_params *p)
{
    ingest_params_default(p);
    p->arrival_ns = 1000;
}

static struct event_limits limits(void)
{
    struct event_limits l;
    event_limits_default(&l);
    return l;
}

/* --- line protocol ------------------------------------------------------ */

static void test_rows_and_errors(void **state)
{
    (void)state;
    struct fake f;
    fake_init(&f);
    struct ingest_params p;
    params(&p);
    struct event_limits lim = limits();
    struct ingest *in = start(&f, &p, &lim);
    const char *body = "cpu,host=a,dc=eu v=1 5\n"
                       "cpu v\n"
                       "# comment\n"
                       "mem,host=b used=2i\n"
                       "disk free=\"x\"y\n"
                       "net,host=c up=true 7";
    assert_int_equal(ingest_feed(in, body, strlen(body)), ERR_OK);
    assert_int_equal(f.nwrites, 0);
    assert_int_equal(ingest_finish(in), ERR_OK);
    assert_string_equal(buf_cstr(&f.written), "5|a|cpu|dc=eu;|v:F1;\n"
                                              "1000|b|mem||used:I2;\n"
                                              "7|c|net||up:B1;\n"
                                              "--\n");
    assert_int_equal(ingest_written(in), 3);
    assert_int_equal(ingest_dropped(in), 2);
    assert_string_equal(ingest_error_text(in),
                        "line 2: missing '=' after field key \"v\"\n"
                        "line 5: unexpected character after the string value of field \"free\"");
    assert_int_equal(ingest_status(in), ERR_OK);
    ingest_free(in);
    fake_destroy(&f);
}

static void test_batches_flush_while_feeding(void **state)
{
    (void)state;
    struct fake f;
    fake_init(&f);
    struct ingest_params p;
    params(&p);
    p.whole_request = false;
    p.batch_rows = 3;
    struct event_limits lim = limits();
    struct ingest *in = start(&f, &p, &lim);
    for (int i = 0; i < 10; i++) {
        char line[64];
        int n = snprintf(line, sizeof line, "m v=%di %d\n", i, i + 1);
        assert_int_equal(ingest_feed(in, line, (size_t)n), ERR_OK);
    }
    assert_int_equal(f.nwrites, 3);
    assert_int_equal(ingest_written(in), 9);
    assert_int_equal(ingest_finish(in), ERR_OK);
    assert_int_equal(f.nwrites, 4);
    assert_int_equal(ingest_written(in), 10);
    ingest_free(in);
    fake_destroy(&f);

    /* a byte budget flushes too */
    fake_init(&f);
    params(&p);
    p.whole_request = false;
    p.batch_bytes = 1;
    in = start(&f, &p, &lim);
    const char *body = "a v=1\nb v=2\nc v=3\n";
    assert_int_equal(ingest_feed(in, body, strlen(body)), ERR_OK);
    assert_int_equal(f.nwrites, 3);
    assert_int_equal(ingest_finish(in), ERR_OK);
    assert_int_equal(f.nwrites, 3);
    ingest_free(in);
    fake_destroy(&f);
}

/* whole_request (the default): one write at the end, after the body ended
 * well; a body that fails before stores nothing. */
static void test_whole_request(void **state)
{
    (void)state;
    struct fake f;
    fake_init(&f);
    struct ingest_params p;
    params(&p);
    assert_true(p.whole_request);
    p.batch_rows = 3; /* does not apply */
    struct event_limits lim = limits();
    struct ingest *in = start(&f, &p, &lim);
    for (int i = 0; i < 10; i++) {
        char line[64];
        int n = snprintf(line, sizeof line, "m v=%di %d\n", i, i + 1);
        assert_int_equal(ingest_feed(in, line, (size_t)n), ERR_OK);
    }
    assert_int_equal(f.nwrites, 0);
    assert_int_equal(ingest_written(in), 0);
    assert_int_equal(ingest_finish(in), ERR_OK);
    assert_int_equal(f.nwrites, 1);
    assert_int_equal(ingest_written(in), 10);
    ingest_free(in);
    fake_destroy(&f);

    /* the store refusing the one batch: nothing written */
    fake_init(&f);
    f.fail_at = 1;
    f.fail_rc = ERR_BUSY;
    params(&p);
    in = start(&f, &p, &lim);
    assert_int_equal(ingest_feed(in, "a v=1\nb v=2\n", 12), ERR_OK);
    assert_int_equal(ingest_finish(in), ERR_BUSY);
    assert_int_equal(ingest_written(in), 0);
    ingest_free(in);
    fake_destroy(&f);

    /* a body over max_body_bytes after many lines: nothing written */
    fake_init(&f);
    params(&p);
    p.max_body_bytes = 1000;
    in = start(&f, &p, &lim);
    int rc = ERR_OK;
    for (int i = 0; i < 200 && rc == ERR_OK; i++)
        rc = ingest_feed(in, "a v=1\n", 6);
    assert_int_equal(rc, ERR_TOOBIG);
    assert_int_equal(ingest_finish(in), ERR_TOOBIG);
    assert_int_equal(f.nwrites, 0);
    ingest_free(in);
    fake_destroy(&f);
}

static void test_store_error_mid_request(void **state)
{
    (void)state;
    static const int codes[] = {ERR_BUSY, ERR_NOSPC, ERR_IO};
    for (size_t c = 0; c < 3; c++) {
        struct fake f;
        fake_init(&f);
        f.fail_at = 2;
        f.fail_rc = codes[c];
        struct ingest_params p;
        params(&p);
        p.whole_request = false;
        p.batch_rows = 2;
        struct event_limits lim = limits();
        struct ingest *in = start(&f, &p, &lim);
        const char *body = "a v=1\nb v=2\nc v=3\nd v=4\ne v=5\n";
        assert_int_equal(ingest_feed(in, body, strlen(body)), codes[c]);
        assert_int_equal(ingest_written(in), 2); /* the first batch stays written */
        assert_int_equal(f.nwrites, 2);          /* parsing stopped at the error */
        assert_int_equal(ingest_feed(in, "x v=1\n", 6), codes[c]);
        assert_int_equal(ingest_finish(in), codes[c]);
        assert_int_equal(ingest_status(in), codes[c]);
        assert_int_equal(f.nwrites, 2);
        ingest_free(in);
        fake_destroy(&f);
    }
    /* the last batch failing in ingest_finish */
    struct fake f;
    fake_init(&f);
    f.fail_at = 1;
    f.fail_rc = ERR_BUSY;
    struct ingest_params p;
    params(&p);
    struct event_limits lim = limits();
    struct ingest *in = start(&f, &p, &lim);
    assert_int_equal(ingest_feed(in, "a v=1\n", 6), ERR_OK);
    assert_int_equal(ingest_finish(in), ERR_BUSY);
    assert_int_equal(ingest_written(in), 0);
    ingest_free(in);
    fake_destroy(&f);
}

static void test_errors_capped(void **state)
{
    (void)state;
    struct fake f;
    fake_init(&f);
    struct ingest_params p;
    params(&p);
    struct event_limits lim = limits();
    struct ingest *in = start(&f, &p, &lim);
    for (int i = 0; i < 250; i++)
        assert_int_equal(ingest_feed(in, "bad\n", 4), ERR_OK);
    assert_int_equal(ingest_feed(in, "good v=1\n", 9), ERR_OK);
    assert_int_equal(ingest_finish(in), ERR_OK);
    assert_int_equal(ingest_dropped(in), 250);
    assert_int_equal(ingest_written(in), 1);
    const char *t = ingest_error_text(in);
    size_t lines = 1;
    for (const char *q = t; *q; q++)
        lines += *q == '\n';
    assert_int_equal(lines, INGEST_MAX_ERRORS);
    assert_non_null(strstr(t, "line 1: missing fields\n"));
    assert_non_null(strstr(t, "\nline 100: missing fields"));
    assert_null(strstr(t, "line 101:"));
    ingest_free(in);
    fake_destroy(&f);
}

static void test_reject_window(void **state)
{
    (void)state;
    struct fake f;
    fake_init(&f);
    struct ingest_params p;
    params(&p);
    p.arrival_ns = 1000000;
    p.reject_older_than_ns = 1000;
    p.reject_newer_than_ns = 500;
    struct event_limits lim = limits();
    struct ingest *in = start(&f, &p, &lim);
    const char *body = "a v=1 998999\n"
                       "b v=1 999000\n"
                       "c v=1 1000500\n"
                       "d v=1 1000501\n"
                       "e v=1\n"
                       "f v=1 -9223372036854775808\n";
    assert_int_equal(ingest_feed(in, body, strlen(body)), ERR_OK);
    assert_int_equal(ingest_finish(in), ERR_OK);
    assert_string_equal(buf_cstr(&f.written), "999000||b||v:F1;\n"
                                              "1000500||c||v:F1;\n"
                                              "1000000||e||v:F1;\n"
                                              "--\n");
    assert_string_equal(ingest_error_text(in),
                        "line 1: timestamp older than the reject_older_than window\n"
                        "line 4: timestamp newer than the reject_newer_than window\n"
                        "line 6: timestamp older than the reject_older_than window");
    ingest_free(in);
    fake_destroy(&f);
}

static void test_body_too_big(void **state)
{
    (void)state;
    struct fake f;
    fake_init(&f);
    struct ingest_params p;
    params(&p);
    p.max_body_bytes = 12;
    struct event_limits lim = limits();
    struct ingest *in = start(&f, &p, &lim);
    assert_int_equal(ingest_feed(in, "a v=1\nb v=2\n", 12), ERR_OK);
    assert_int_equal(ingest_feed(in, "c", 1), ERR_TOOBIG);
    assert_int_equal(ingest_finish(in), ERR_TOOBIG);
    ingest_free(in);
    fake_destroy(&f);
}

static void test_params_check(void **state)
{
    (void)state;
    struct ingest_params p;
    struct event_limits lim = limits();
    params(&p);
    assert_null(ingest_params_check(&p, &lim));
    p.format = INGEST_RAW;
    assert_string_equal(ingest_params_check(&p, &lim), "raw ingest needs event=NAME");
    p.event = "app";
    assert_null(ingest_params_check(&p, &lim));
    char big[1100];
    memset(big, 'h', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    p.host = big;
    assert_string_equal(ingest_params_check(&p, &lim), "host too long");
    struct fake f;
    fake_init(&f);
    struct ingest_sink sink = {fake_put, fake_write, NULL, &f};
    struct ingest *in = NULL;
    assert_int_equal(ingest_new_sink(&p, &lim, &sink, &in), ERR_INVAL);
    assert_null(in);
    fake_destroy(&f);
}

/* --- gzip --------------------------------------------------------------- */

static void gzip(const char *in, size_t n, struct buf *out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, n);
    buf_reserve(out, cap);
    z.next_in = (unsigned char *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    z.next_out = (unsigned char *)out->data + out->len;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    out->len += cap - z.avail_out;
    deflateEnd(&z);
}

static void run_body(const char *body, size_t len, size_t first, bool is_gzip, struct buf *got,
                     int *rc_out)
{
    struct fake f;
    fake_init(&f);
    struct ingest_params p;
    params(&p);
    p.is_gzip = is_gzip;
    struct event_limits lim = limits();
    struct ingest *in = start(&f, &p, &lim);
    int rc = ERR_OK;
    if (first)
        rc = ingest_feed(in, body, first);
    if (!rc)
        rc = ingest_feed(in, body + first, len - first);
    if (!rc)
        rc = ingest_finish(in);
    *rc_out = rc;
    buf_append(got, f.written.data, f.written.len);
    buf_printf(got, "dropped=%llu\n%s", (unsigned long long)ingest_dropped(in),
               ingest_error_text(in));
    ingest_free(in);
    fake_destroy(&f);
}

static const char gz_body[] = "cpu,host=a v=1 1\n"
                              "bad line\n"
                              "mem,host=b used=2i 2\r\n"
                              "s,host=c msg=\"hello, world\" 3\n"
                              "last v=4u 4";

static void test_gzip_every_split(void **state)
{
    (void)state;
    struct buf plain = BUF_INIT, gz = BUF_INIT, got = BUF_INIT;
    int rc;
    run_body(gz_body, sizeof gz_body - 1, 0, false, &plain, &rc);
    assert_int_equal(rc, ERR_OK);
    gzip(gz_body, sizeof gz_body - 1, &gz);
    for (size_t cut = 0; cut < gz.len; cut++) {
        buf_reset(&got);
        run_body(gz.data, gz.len, cut, true, &got, &rc);
        assert_int_equal(rc, ERR_OK);
        assert_string_equal(buf_cstr(&got), buf_cstr(&plain));
    }
    /* two gzip members back to back are one body */
    struct buf two = BUF_INIT, want = BUF_INIT;
    gzip("a v=1 1\nb v=", 12, &two);
    gzip("2 2\n", 4, &two);
    buf_reset(&got);
    run_body(two.data, two.len, 5, true, &got, &rc);
    assert_int_equal(rc, ERR_OK);
    run_body("a v=1 1\nb v=2 2\n", 16, 0, false, &want, &rc);
    assert_string_equal(buf_cstr(&got), buf_cstr(&want));
    buf_destroy(&two);
    buf_destroy(&want);
    buf_destroy(&plain);
    buf_destroy(&gz);
    buf_destroy(&got);
}

static void test_gzip_bad(void **state)
{
    (void)state;
    struct buf got = BUF_INIT, gz = BUF_INIT;
    int rc;
    run_body("this is not gzip", 16, 0, true, &got, &rc);
    assert_int_equal(rc, ERR_INVAL);
    assert_non_null(strstr(buf_cstr(&got), "bad gzip body: "));

    gzip(gz_body, sizeof gz_body - 1, &gz);
    buf_reset(&got);
    run_body(gz.data, gz.len - 5, 0, true, &got, &rc);
    assert_int_equal(rc, ERR_INVAL);
    assert_non_null(strstr(buf_cstr(&got), "bad gzip body: truncated gzip body"));

    /* garbage after a complete member */
    buf_append(&gz, "junkjunkjunk", 12);
    buf_reset(&got);
    run_body(gz.data, gz.len, 0, true, &got, &rc);
    assert_int_equal(rc, ERR_INVAL);

    /* a corrupted byte in the middle: an error, never a crash */
    buf_reset(&gz);
    gzip(gz_body, sizeof gz_body - 1, &gz);
    for (size_t i = 0; i < gz.len; i++) {
        gz.data[i] ^= 0x55;
        buf_reset(&got);
        run_body(gz.data, gz.len, i / 2, true, &got, &rc);
        assert_true(rc == ERR_OK || rc == ERR_INVAL);
        gz.data[i] ^= 0x55;
    }
    /* an empty gzip body is an empty body */
    buf_reset(&got);
    run_body("", 0, 0, true, &got, &rc);
    assert_int_equal(rc, ERR_OK);
    buf_destroy(&got);
    buf_destroy(&gz);
}

static void test_gzip_bomb_capped(void **state)
{
    (void)state;
    /* 64 MiB of newlines deflate to about 64 KiB */
    size_t n = 64u << 20;
    char *zeros = malloc(n);
    memset(zeros, '\n', n);
    struct buf gz = BUF_INIT;
    gzip(zeros, n, &gz);
    free(zeros);
    assert_true(gz.len < 200000);

    struct fake f;
    fake_init(&f);
    struct ingest_params p;
    params(&p);
    p.is_gzip = true;
    p.max_body_bytes = 1u << 20;
    struct event_limits lim = limits();
    struct ingest *in = start(&f, &p, &lim);
    int rc = ERR_OK;
    for (size_t off = 0; off < gz.len && !rc; off += 4096)
        rc = ingest_feed(in, gz.data + off, gz.len - off < 4096 ? gz.len - off : 4096);
    assert_int_equal(rc, ERR_TOOBIG);
    assert_int_equal(ingest_finish(in), ERR_TOOBIG);
    ingest_free(in);

    /* the compressed size is capped too */
    p.max_body_bytes = 1000;
    in = start(&f, &p, &lim);
    assert_int_equal(ingest_feed(in, gz.data, 1001), ERR_TOOBIG);
    ingest_free(in);
    fake_destroy(&f);
    buf_destroy(&gz);
}

/* --- raw and JSON lines through ingest ---------------------------------- */

static int64_t fixed_clock(void *arg)
{
    return *(int64_t *)arg;
}

static void test_raw_and_jsonl(void **state)
{
    (void)state;
    int64_t now = 5000;
    struct event_stamp st;
    event_stamp_init(&st, fixed_clock, &now);
    struct fake f;
    fake_init(&f);
    struct ingest_params p;
    params(&p);
    p.format = INGEST_RAW;
    p.host = "web-1";
    p.event = "nginx";
    p.stamp = &st;
    struct event_limits lim = limits();
    struct ingest *in = start(&f, &p, &lim);
    const char *body = "GET / 200\r\n\nPOST /x 500\nno newline";
    assert_int_equal(ingest_feed(in, body, 10), ERR_OK);
    assert_int_equal(ingest_feed(in, body + 10, strlen(body) - 10), ERR_OK);
    assert_int_equal(ingest_finish(in), ERR_OK);
    assert_string_equal(buf_cstr(&f.written), "5000|web-1|nginx||msg:SGET / 200;\n"
                                              "5001|web-1|nginx||msg:SPOST /x 500;\n"
                                              "5002|web-1|nginx||msg:Sno newline;\n"
                                              "--\n");
    ingest_free(in);
    fake_destroy(&f);

    fake_init(&f);
    params(&p);
    p.format = INGEST_JSONL;
    p.stamp = &st;
    in = start(&f, &p, &lim);
    body = "{\"ts\":7,\"host\":\"h\",\"event\":\"e\",\"n\":1}\n"
           "{\"host\":\"h\",\"n\":1}\n"
           "{\"event\":\"e\",\"a\":{\"b\":true}}\n";
    assert_int_equal(ingest_feed(in, body, strlen(body)), ERR_OK);
    assert_int_equal(ingest_finish(in), ERR_OK);
    assert_string_equal(buf_cstr(&f.written), "7|h|e||n:I1;\n"
                                              "5003||e||a.b:B1;\n"
                                              "--\n");
    assert_string_equal(ingest_error_text(in), "line 2: missing \"event\" (the event name is "
                                               "required, or event= in the URL)");
    ingest_free(in);
    fake_destroy(&f);
}

/* --- Elasticsearch bulk ------------------------------------------------- */

static const struct jsonl_es_map es_map = {"@timestamp", "host.name,host,hostname",
                                           "event.dataset,service.name", false, "message"};

static struct ingest *start_es(struct fake *f, const char *index)
{
    struct ingest_params p;
    params(&p);
    p.format = INGEST_ESBULK;
    p.es_map = &es_map;
    p.es_index = index;
    p.batch_rows = 1; /* ignored: a bulk request is one batch */
    struct event_limits lim = limits();
    return start(f, &p, &lim);
}

static const char es_body[] =
    "{\"index\":{\"_id\":\"a\"}}\n"
    "{\"@timestamp\":\"2024-05-01T10:00:00Z\",\"host\":{\"name\":\"w1\"},\"message\":\"hi\","
    "\"n\":{\"x\":1}}\n"
    "\n"
    "{\"create\":{\"_index\":\"other\",\"_id\":\"b\"}}\n"
    "{\"@timestamp\":1714557600001,\"hostname\":\"w2\",\"message\":\"m\",\"ok\":false}\n"
    "{\"delete\":{\"_id\":\"c\"}}\n"
    "{\"update\":{\"_id\":\"d\"}}\n"
    "{\"doc\":{\"message\":\"skipped\"}}\n"
    "{\"index\":{\"_id\":\"e\"}}\n"
    "{\"@timestamp\":\"soon\",\"message\":\"m\"}\n"
    "{\"index\":{\"_id\":\"f\"}}\n"
    "{\"message\":\"no time\",\"event\":{\"dataset\":\"ds\"}}\n";

static const char es_rows[] = "1714557600000000000|w1|idx||msg:Shi;n.x:I1;\n"
                              "1714557600001000000|w2|other||msg:Sm;ok:B0;\n"
                              "1000||idx||msg:Sno time;event.dataset:Sds;\n"
                              "--\n";

static const char es_reply[] =
    "{\"took\":3,\"errors\":true,\"items\":["
    "{\"index\":{\"_index\":\"idx\",\"_id\":\"a\",\"_version\":1,\"result\":\"created\","
    "\"_shards\":{\"total\":1,\"successful\":1,\"failed\":0},\"_seq_no\":0,\"_primary_term\":1,"
    "\"status\":201}},"
    "{\"create\":{\"_index\":\"other\",\"_id\":\"b\",\"_version\":1,\"result\":\"created\","
    "\"_shards\":{\"total\":1,\"successful\":1,\"failed\":0},\"_seq_no\":1,\"_primary_term\":1,"
    "\"status\":201}},"
    "{\"delete\":{\"_index\":\"idx\",\"_id\":\"c\",\"status\":400,\"error\":{\"type\":"
    "\"illegal_argument_exception\",\"reason\":\"delete is not supported: logbucket keeps every "
    "event (use DELETE FROM in SQL)\"}}},"
    "{\"update\":{\"_index\":\"idx\",\"_id\":\"d\",\"status\":400,\"error\":{\"type\":"
    "\"illegal_argument_exception\",\"reason\":\"update is not supported: logbucket keeps every "
    "event as it was sent\"}}},"
    "{\"index\":{\"_index\":\"idx\",\"_id\":\"e\",\"status\":400,\"error\":{\"type\":"
    "\"document_parsing_exception\",\"reason\":\"bad timestamp (want RFC 3339 or epoch "
    "milliseconds) in @timestamp\"}}},"
    "{\"index\":{\"_index\":\"idx\",\"_id\":\"f\",\"_version\":1,\"result\":\"created\","
    "\"_shards\":{\"total\":1,\"successful\":1,\"failed\":0},\"_seq_no\":5,\"_primary_term\":1,"
    "\"status\":201}}]}\n";

/* Every item's fate, the rows (one batch, written at the end) and the
 * reply do not depend on where the body is cut. */
static void test_esbulk_every_split(void **state)
{
    (void)state;
    size_t len = sizeof es_body - 1;
    for (size_t cut = 0; cut <= len; cut++) {
        struct fake f;
        fake_init(&f);
        struct ingest *in = start_es(&f, "idx");
        assert_int_equal(ingest_feed(in, es_body, cut), ERR_OK);
        assert_int_equal(ingest_feed(in, es_body + cut, len - cut), ERR_OK);
        assert_int_equal(f.nwrites, 0);
        assert_int_equal(ingest_finish(in), ERR_OK);
        assert_string_equal(buf_cstr(&f.written), es_rows);
        assert_int_equal(ingest_written(in), 3);
        assert_int_equal(ingest_dropped(in), 3);
        struct buf reply = BUF_INIT;
        esbulk_reply(ingest_esbulk(in), 3, &reply);
        assert_string_equal(buf_cstr(&reply), es_reply);
        buf_destroy(&reply);
        ingest_free(in);
        fake_destroy(&f);
    }
}

/* filter_path keeps only the parts asked for, as shippers ask. */
static void test_esbulk_filter_path(void **state)
{
    (void)state;
    static const struct {
        const char *filter, *reply;
    } cases[] = {
        {"errors,items.*.error,items.*.status",
         "{\"errors\":true,\"items\":[{\"index\":{\"status\":201}},{\"create\":{\"status\":201}},"
         "{\"delete\":{\"status\":400,\"error\":{\"type\":\"illegal_argument_exception\","
         "\"reason\":\"delete is not supported: logbucket keeps every event (use DELETE FROM in "
         "SQL)\"}}},{\"update\":{\"status\":400,\"error\":{\"type\":\"illegal_argument_exception\","
         "\"reason\":\"update is not supported: logbucket keeps every event as it was sent\"}}},"
         "{\"index\":{\"status\":400,\"error\":{\"type\":\"document_parsing_exception\","
         "\"reason\":\"bad timestamp (want RFC 3339 or epoch milliseconds) in @timestamp\"}}},"
         "{\"index\":{\"status\":201}}]}\n"},
        {"errors", "{\"errors\":true}\n"},
        {"took,items.*._id",
         "{\"took\":3,\"items\":[{\"index\":{\"_id\":\"a\"}},{\"create\":{\"_id\":\"b\"}},"
         "{\"delete\":{\"_id\":\"c\"}},{\"update\":{\"_id\":\"d\"}},{\"index\":{\"_id\":\"e\"}},"
         "{\"index\":{\"_id\":\"f\"}}]}\n"},
        {"nothing.known", "{}\n"},
        {"", es_reply},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fake f;
        fake_init(&f);
        struct ingest_params p;
        params(&p);
        p.format = INGEST_ESBULK;
        p.es_map = &es_map;
        p.es_index = "idx";
        p.es_filter = esbulk_filter_parse(cases[i].filter);
        struct event_limits lim = limits();
        struct ingest *in = start(&f, &p, &lim);
        assert_int_equal(ingest_feed(in, es_body, sizeof es_body - 1), ERR_OK);
        assert_int_equal(ingest_finish(in), ERR_OK);
        assert_string_equal(buf_cstr(&f.written), es_rows);
        struct buf reply = BUF_INIT;
        esbulk_reply(ingest_esbulk(in), 3, &reply);
        assert_string_equal(buf_cstr(&reply), cases[i].reply);
        buf_destroy(&reply);
        ingest_free(in);
        fake_destroy(&f);
    }
}

/* A body Elasticsearch refuses whole stores nothing and says why. */
static void test_esbulk_refused_whole(void **state)
{
    (void)state;
    static const struct {
        const char *body, *why;
    } cases[] = {
        {"{\"index\":{}}\n{\"message\":\"a\"}\n{\"index\":{}}\n",
         "the body ends after the action on line 3: its document is missing"},
        {"{\"index\":{}}\n{\"message\":\"a\"}",
         "The bulk request must be terminated by a newline [\\n]"},
        {"{\"index\":{}}\n{\"message\":\"a\"}\n{\"index\":{}\n{\"message\":\"b\"}\n",
         "Malformed action/metadata line [3]: invalid JSON: "},
        {"{\"index\":{}}\n{\"message\":\"a\"}\n{\"upsert\":{}}\n{\"message\":\"b\"}\n",
         "Malformed action/metadata line [3]: expected [create], [delete], [index] or [update] "
         "with an object, found upsert"},
        {"{\"index\":{},\"create\":{}}\n{\"message\":\"b\"}\n",
         "Malformed action/metadata line [1]: expected one object naming an action (index, "
         "create, delete or update)"},
        {"[1]\n", "Malformed action/metadata line [1]: expected one object naming an action"},
        {"{\"index\":3}\n{}\n", "Malformed action/metadata line [1]: expected [create], "
                                "[delete], [index] or [update] with an object, found index"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fake f;
        fake_init(&f);
        struct ingest *in = start_es(&f, "idx");
        int rc = ingest_feed(in, cases[i].body, strlen(cases[i].body));
        if (rc == ERR_OK)
            rc = ingest_finish(in);
        assert_int_equal(rc, ERR_INVAL);
        assert_int_equal(f.nwrites, 0);
        if (strncmp(ingest_error_text(in), cases[i].why, strlen(cases[i].why))) {
            print_error("case %zu: got [%s]\n", i, ingest_error_text(in));
            fail();
        }
        ingest_free(in);
        fake_destroy(&f);
    }
}

/* accept_partial=false: one batch, nothing written when a line is bad;
 * the bad lines in InfluxDB 3's JSON. */
static void test_atomic_lineproto(void **state)
{
    (void)state;
    struct fake f;
    fake_init(&f);
    struct ingest_params p;
    params(&p);
    p.is_atomic = true;
    p.batch_rows = 1;
    struct event_limits lim = limits();
    struct ingest *in = start(&f, &p, &lim);
    const char *body = "a v=1 1\nb v=\"x\\\"\" 2\nc v=\nd v=2 3\n";
    assert_int_equal(ingest_feed(in, body, strlen(body)), ERR_OK);
    assert_int_equal(ingest_finish(in), ERR_OK);
    assert_int_equal(f.nwrites, 0);
    assert_int_equal(ingest_written(in), 0);
    assert_int_equal(ingest_dropped(in), 1);
    assert_string_equal(ingest_error_json(in),
                        "{\"original_line\":\"c v=\",\"line_number\":3,"
                        "\"error_message\":\"missing value for field \\\"v\\\"\"}");
    ingest_free(in);
    fake_destroy(&f);
    fake_init(&f);
    in = start(&f, &p, &lim);
    body = "a v=1 1\nd v=2 3\n";
    assert_int_equal(ingest_feed(in, body, strlen(body)), ERR_OK);
    assert_int_equal(ingest_finish(in), ERR_OK);
    assert_int_equal(f.nwrites, 1);
    assert_int_equal(ingest_written(in), 2);
    ingest_free(in);
    fake_destroy(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_and_errors),
        cmocka_unit_test(test_batches_flush_while_feeding),
        cmocka_unit_test(test_whole_request),
        cmocka_unit_test(test_store_error_mid_request),
        cmocka_unit_test(test_errors_capped),
        cmocka_unit_test(test_reject_window),
        cmocka_unit_test(test_body_too_big),
        cmocka_unit_test(test_params_check),
        cmocka_unit_test(test_gzip_every_split),
        cmocka_unit_test(test_gzip_bad),
        cmocka_unit_test(test_gzip_bomb_capped),
        cmocka_unit_test(test_raw_and_jsonl),
        cmocka_unit_test(test_esbulk_every_split),
        cmocka_unit_test(test_esbulk_refused_whole),
        cmocka_unit_test(test_esbulk_filter_path),
        cmocka_unit_test(test_atomic_lineproto),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
