/* Raw text lines: a table of bodies with the events or errors they give
 * (stamps from an injected clock), every split of each body, bad names,
 * and the strictly increasing stamp under threads. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "ingest/rawline.h"
#include "render.h"

static int64_t clock_at(void *arg)
{
    return *(int64_t *)arg;
}

struct raw_case {
    const char *body;
    size_t len;
    size_t max_line;
    const char *want;
};

#define B(s) s, sizeof(s) - 1

static const struct raw_case cases[] = {
    {B("GET / 200\nPOST /a 500\n"), 0,
     "L1 app|web||msg:S\"GET / 200\"|100\nL2 app|web||msg:S\"POST /a 500\"|101\n"},
    {B("crlf\r\n\r\n\nlast"), 0, "L1 app|web||msg:S\"crlf\"|100\nL4 app|web||msg:S\"last\"|101\n"},
    {B("a\tb \"q\" \\ =,\n"), 0, "L1 app|web||msg:S\"a\tb \"q\" \\ =,\"|100\n"},
    {B("nul\0here\nok\n"), 0, "L1 BAD NUL byte in line\nL2 app|web||msg:S\"ok\"|100\n"},
    {B("bad \xc3\x28 utf8\ngood \xc3\xa9\nlatin-1 caf\xe9\n"), 0,
     "L1 app|web||msg:S\"bad \xef\xbf\xbd( utf8\"|100\nL2 app|web||msg:S\"good \xc3\xa9\"|101\n"
     "L3 app|web||msg:S\"latin-1 caf\xef\xbf\xbd\"|102\n"},
    {B("12345678\n123456789\nabc\n1234567890123\n"), 8,
     "L1 app|web||msg:S\"12345678\"|100\nL2 BAD line too long (max 8)\n"
     "L3 app|web||msg:S\"abc\"|101\nL4 BAD line too long (max 8)\n"},
};

static void run(const struct raw_case *c, size_t first, size_t piece, struct buf *out)
{
    struct event_limits lim;
    event_limits_default(&lim);
    if (c->max_line)
        lim.max_line_bytes = c->max_line;
    int64_t now = 100;
    struct event_stamp st;
    event_stamp_init(&st, clock_at, &now);
    struct raw_parser *p = NULL;
    const char *why = NULL;
    assert_int_equal(raw_new(&lim, "web", "app", &st, &p, &why), ERR_OK);
    struct event_result r;
    size_t off = 0;
    while (off < c->len) {
        size_t n = off == 0 && first ? first : piece;
        if (n > c->len - off)
            n = c->len - off;
        size_t done = 0;
        while (done < n) {
            size_t used = raw_feed(p, c->body + off + done, n - done, &r);
            assert_true(used > 0);
            render_result(out, &r);
            done += used;
        }
        off += n;
    }
    if (raw_finish(p, &r))
        render_result(out, &r);
    raw_free(p);
}

static void test_table_and_splits(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct buf whole = BUF_INIT, got = BUF_INIT;
        run(&cases[i], 0, cases[i].len, &whole);
        assert_string_equal(buf_cstr(&whole), cases[i].want);
        for (size_t cut = 1; cut < cases[i].len; cut++) {
            buf_reset(&got);
            run(&cases[i], cut, cases[i].len, &got);
            assert_string_equal(buf_cstr(&got), buf_cstr(&whole));
        }
        buf_reset(&got);
        run(&cases[i], 0, 1, &got);
        assert_string_equal(buf_cstr(&got), buf_cstr(&whole));
        buf_destroy(&whole);
        buf_destroy(&got);
    }
}

static void test_bad_names(void **state)
{
    (void)state;
    struct event_limits lim;
    event_limits_default(&lim);
    struct raw_parser *p = NULL;
    const char *why = NULL;
    assert_int_equal(raw_new(&lim, "h", "", NULL, &p, &why), ERR_INVAL);
    assert_string_equal(why, "empty event name");
    assert_int_equal(raw_new(&lim, "h", NULL, NULL, &p, &why), ERR_INVAL);
    assert_int_equal(raw_new(&lim, "h\xff", "e", NULL, &p, &why), ERR_INVAL);
    assert_string_equal(why, "invalid UTF-8 in host");
    assert_null(p);
    /* NULL host: the default host; no stamp: no ts */
    lim.default_host = "dflt";
    assert_int_equal(raw_new(&lim, NULL, "e", NULL, &p, &why), ERR_OK);
    struct event_result r;
    assert_int_equal(raw_feed(p, "x\n", 2, &r), 2);
    assert_int_equal(r.kind, EVENT_OK);
    assert_false(r.ev.has_ts);
    assert_memory_equal(r.ev.host.ptr, "dflt", 4);
    raw_free(p);
}

#define THREADS 4
#define PER_THREAD 100000

static void *stamp_worker(void *arg)
{
    struct event_stamp *st = arg;
    int64_t prev = INT64_MIN;
    for (int i = 0; i < PER_THREAD; i++) {
        int64_t t = event_stamp_next(st);
        if (t <= prev)
            return (void *)1;
        prev = t;
    }
    return NULL;
}

static void test_stamp_strictly_increasing(void **state)
{
    (void)state;
    struct event_stamp st;
    event_stamp_init(&st, NULL, NULL);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, stamp_worker, &st);
    for (int i = 0; i < THREADS; i++) {
        void *rv;
        pthread_join(th[i], &rv);
        assert_null(rv);
    }
    /* with a clock that stands still, values still step by one */
    int64_t now = 7;
    event_stamp_init(&st, clock_at, &now);
    assert_int_equal(event_stamp_next(&st), 7);
    assert_int_equal(event_stamp_next(&st), 8);
    now = 100;
    assert_int_equal(event_stamp_next(&st), 100);
    now = 50; /* the clock going back never makes ts go back */
    assert_int_equal(event_stamp_next(&st), 101);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_and_splits),
        cmocka_unit_test(test_bad_names),
        cmocka_unit_test(test_stamp_strictly_increasing),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
