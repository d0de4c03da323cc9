/* Syslog rows in a real store: parsed messages go through syslog_batch
 * into a database and are read back whole with store_rows; an exact
 * duplicate is one row, a message that differs in anything another, and
 * a batch is cleared only once written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "ingest/syslog.h"
#include "model/key.h"
#include "model/record.h"
#include "store/store.h"
#include "tests/support/store_fixture.h"

#define TS 1767323045000006000LL /* 2026-01-02T03:04:05.000006Z */

/* "tags|msg" of each row of (ts, host, event), joined by " + ". */
static void read_rows(struct store_db *db, int64_t ts, const char *host, const char *event,
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
        struct rec_field f;
        while (rec_row_next_field(&r, &f) == 1) {
            assert_int_equal(f.type, REC_STRING);
            buf_printf(out, "|%.*s=%.*s", (int)f.key.len, f.key.ptr, (int)f.v.s.len, f.v.s.ptr);
        }
    }
    assert_int_equal(rc, 0);
    store_rows_close(rows);
    store_snap_release(snap);
}

static void add(struct syslog_parser *p, struct syslog_batch *b, const char *msg)
{
    struct event ev;
    const char *why;
    assert_int_not_equal(syslog_parse(p, msg, strlen(msg), TS, "10.0.0.9", &ev, &why), SYSLOG_BAD);
    syslog_batch_add(b, &ev);
}

static void test_rows(void **state)
{
    (void)state;
    struct store_opts so;
    store_opts_default(&so);
    struct db_opts dbo = {4, true, 0};
    char *dir;
    struct store *s;
    struct store_db *db;
    assert_int_equal(tu_store_with_db("syslog", &so, &dbo, &dir, &s, &db), ERR_OK);
    struct event_limits lim;
    event_limits_default(&lim);
    struct syslog_map map = {NULL, NULL, false};
    struct syslog_parser *p = syslog_new(&lim, &map);
    struct syslog_batch *b = syslog_batch_new();

    assert_int_equal(syslog_batch_write(b, db), ERR_OK); /* nothing to write */
    const char *m = "<11>1 2026-01-02T03:04:05.000006Z h1 app 7 - [x@1 k=\"v\"] same";
    add(p, b, m);
    add(p, b, m);
    add(p, b, "<11>1 2026-01-02T03:04:05.000006Z h1 app 7 - [x@1 k=\"v\"] other");
    add(p, b, "junk from a sender"); /* stored whole, at the parse's now */
    assert_int_equal(syslog_batch_rows(b), 4);
    assert_true(syslog_batch_bytes(b) > 0);
    assert_int_equal(syslog_batch_write(b, db), ERR_OK);
    assert_int_equal(syslog_batch_rows(b), 0);
    assert_int_equal(syslog_batch_bytes(b), 0);

    struct buf out = BUF_INIT;
    read_rows(db, TS, "h1", "app", &out);
    /* key order: the ids differ first in msg's length (4 before 5) */
    assert_string_equal(buf_cstr(&out), "facility=user;level=err;procid=7;x@1.k=v;|msg=same + "
                                        "facility=user;level=err;procid=7;x@1.k=v;|msg=other");
    buf_reset(&out);
    read_rows(db, TS, "10.0.0.9", "syslog", &out);
    assert_string_equal(buf_cstr(&out), "|msg=junk from a sender");
    buf_destroy(&out);

    syslog_batch_free(b);
    syslog_free(p);
    tu_store_close(dir, s, db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
