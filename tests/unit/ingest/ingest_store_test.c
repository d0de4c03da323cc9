/* The ingest -> store glue (ingest_store.c) against a real store in a
 * temporary directory: line protocol, raw and JSON lines are written through
 * ingest_new, then every row is read back with store_get and its value
 * decoded; bad lines never reach the store; a body larger than one batch is
 * written in several batches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "ingest/ingest.h"
#include "model/key.h"
#include "model/record.h"
#include "store/store.h"
#include "tests/support/store_testutil.h"

struct fixture {
    char *dir;
    struct store *s;
    struct store_db *db;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    f->dir = tu_mkdtemp("ingest-store");
    struct store_opts so;
    store_opts_default(&so);
    so.dir = f->dir;
    so.wal_sync = STORE_SYNC_NONE;
    if (store_open(&so, &f->s))
        return -1;
    struct db_opts dbo = {4, true, 0};
    if (store_db_create(f->s, "d", &dbo) || store_db_get(f->s, "d", &f->db))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    store_db_unref(f->db);
    store_close(f->s);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* Reads the rows of (ts, host, event) back and renders "tags|fields" of
 * each, separated by " + ". */
static void get_row(struct store_db *db, int64_t ts, const char *host, const char *event,
                    struct buf *out)
{
    struct store_snap *snap = store_snapshot(db);
    struct store_rows *rows;
    assert_int_equal(store_rows_open(snap, ts, slice_cstr(host), slice_cstr(event), &rows), ERR_OK);
    struct slice k, v;
    int rc, n = 0;
    while ((rc = store_rows_next(rows, &k, &v)) == 1) {
        struct key_row kr;
        assert_int_equal(key_decode_row(k, true, &kr), ERR_OK);
        struct rec_row_reader r;
        assert_int_equal(rec_row_init(&r, kr.id, v), ERR_OK);
        if (n++)
            buf_puts(out, " + ");
        struct rec_tag t;
        while (rec_row_next_tag(&r, &t) == 1)
            buf_printf(out, "%.*s=%.*s;", (int)t.key.len, t.key.ptr, (int)t.value.len, t.value.ptr);
        buf_putc(out, '|');
        struct rec_field fl;
        int frc;
        while ((frc = rec_row_next_field(&r, &fl)) == 1) {
            buf_printf(out, "%.*s:", (int)fl.key.len, fl.key.ptr);
            switch (fl.type) {
            case REC_FLOAT: buf_printf(out, "F%g;", fl.v.f); break;
            case REC_INT: buf_printf(out, "I%lld;", (long long)fl.v.i); break;
            case REC_UINT: buf_printf(out, "U%llu;", (unsigned long long)fl.v.u); break;
            case REC_BOOL: buf_printf(out, "B%d;", fl.v.b); break;
            case REC_STRING: buf_printf(out, "S%.*s;", (int)fl.v.s.len, fl.v.s.ptr); break;
            }
        }
        assert_int_equal(frc, 0);
    }
    assert_int_equal(rc, 0);
    if (!n)
        buf_puts(out, "NOTFOUND");
    store_rows_close(rows);
    store_snap_release(snap);
}

static void expect_row(struct store_db *db, int64_t ts, const char *host, const char *event,
                       const char *want)
{
    struct buf got = BUF_INIT;
    get_row(db, ts, host, event, &got);
    assert_string_equal(buf_cstr(&got), want);
    buf_destroy(&got);
}

static void test_lineproto_to_store(void **state)
{
    struct fixture *f = *state;
    struct ingest_params p;
    ingest_params_default(&p);
    p.arrival_ns = 424242;
    struct event_limits lim;
    event_limits_default(&lim);
    struct ingest *in = NULL;
    assert_int_equal(ingest_new(&p, &lim, f->db, &in), ERR_OK);
    const char *body = "cpu,host=web-1,dc=eu usage=0.5,n=3i,ok=true,msg=\"hi there\" 1000\n"
                       "cpu,host=web-1 broken\n"
                       "mem,host=web-2 used=7u\n";
    assert_int_equal(ingest_feed(in, body, 30), ERR_OK);
    assert_int_equal(ingest_feed(in, body + 30, strlen(body) - 30), ERR_OK);
    assert_int_equal(ingest_finish(in), ERR_OK);
    assert_int_equal(ingest_written(in), 2);
    assert_int_equal(ingest_dropped(in), 1);
    assert_string_equal(ingest_error_text(in), "line 2: missing '=' after field key \"broken\"");
    ingest_free(in);
    expect_row(f->db, 1000, "web-1", "cpu", "dc=eu;|usage:F0.5;n:I3;ok:B1;msg:Shi there;");
    expect_row(f->db, 424242, "web-2", "mem", "|used:U7;");
    expect_row(f->db, 1000, "web-2", "cpu", "NOTFOUND");
}

static void test_many_batches(void **state)
{
    struct fixture *f = *state;
    struct ingest_params p;
    ingest_params_default(&p);
    p.batch_rows = 100;
    struct event_limits lim;
    event_limits_default(&lim);
    struct ingest *in = NULL;
    assert_int_equal(ingest_new(&p, &lim, f->db, &in), ERR_OK);
    struct buf body = BUF_INIT;
    for (int i = 0; i < 1050; i++)
        buf_printf(&body, "m,host=h%d v=%di %d\n", i % 7, i, 5000 + i);
    for (size_t off = 0; off < body.len; off += 777)
        assert_int_equal(ingest_feed(in, body.data + off,
                                     body.len - off < 777 ? body.len - off : 777),
                         ERR_OK);
    assert_int_equal(ingest_finish(in), ERR_OK);
    assert_int_equal(ingest_written(in), 1050);
    ingest_free(in);
    buf_destroy(&body);
    for (int i = 0; i < 1050; i += 149) {
        char host[16], want[32];
        snprintf(host, sizeof host, "h%d", i % 7);
        snprintf(want, sizeof want, "|v:I%d;", i);
        expect_row(f->db, 5000 + i, host, "m", want);
    }
}

static int64_t fixed_clock(void *arg)
{
    return *(int64_t *)arg;
}

static void test_raw_and_jsonl_to_store(void **state)
{
    struct fixture *f = *state;
    int64_t now = 77;
    struct event_stamp st;
    event_stamp_init(&st, fixed_clock, &now);
    struct ingest_params p;
    ingest_params_default(&p);
    p.format = INGEST_JSONL;
    p.stamp = &st;
    struct event_limits lim;
    event_limits_default(&lim);
    struct ingest *in = NULL;
    assert_int_equal(ingest_new(&p, &lim, f->db, &in), ERR_OK);
    const char *body = "{\"ts\":\"1970-01-01T00:00:01Z\",\"host\":\"j\",\"event\":\"e\","
                       "\"a\":{\"b\":2},\"s\":\"x\"}\n";
    assert_int_equal(ingest_feed(in, body, strlen(body)), ERR_OK);
    assert_int_equal(ingest_finish(in), ERR_OK);
    assert_int_equal(ingest_written(in), 1);
    ingest_free(in);
    expect_row(f->db, 1000000000, "j", "e", "|a.b:I2;s:Sx;");

    ingest_params_default(&p);
    p.format = INGEST_RAW;
    p.host = "r";
    p.event = "log";
    p.stamp = &st;
    assert_int_equal(ingest_new(&p, &lim, f->db, &in), ERR_OK);
    assert_int_equal(ingest_feed(in, "one\ntwo\n", 8), ERR_OK);
    assert_int_equal(ingest_finish(in), ERR_OK);
    assert_int_equal(ingest_written(in), 2);
    ingest_free(in);
    expect_row(f->db, 77, "r", "log", "|msg:Sone;");
    expect_row(f->db, 78, "r", "log", "|msg:Stwo;");

    /* bad parameters never start */
    p.event = NULL;
    in = NULL;
    assert_int_equal(ingest_new(&p, &lim, f->db, &in), ERR_INVAL);
    assert_null(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lineproto_to_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_raw_and_jsonl_to_store, setup, teardown),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
