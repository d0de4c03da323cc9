/* Write batches: what a batch holds reads back the same (names written
 * once and referred to after, timestamps as deltas), entries of the first
 * form still read, and damaged payloads give ERR_CORRUPT, never a crash or
 * a wrong entry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/coding.h"
#include "base/err.h"
#include "base/log.h"
#include "store/batch.h"
#include "store/ikey.h"
#include "store/store.h"

struct row {
    int kind;
    int64_t ts;
    char host[40], event[40], value[40];
};

static void make_row(struct row *r, int i, int nhosts)
{
    static const int64_t ts[] = {INT64_MIN, INT64_MAX, -1, 0, 1, 1700000000000000000LL};
    r->kind = i % 13 == 5 ? IKEY_DEL : IKEY_PUT;
    r->ts = i < 6 ? ts[i] : 1700000000000000000LL + (i % 7 == 0 ? -i : i);
    snprintf(r->host, sizeof r->host, "web-server-%03d.example.com", i % nhosts);
    /* an event named like a host shares its id */
    snprintf(r->event, sizeof r->event, i % 11 == 3 ? "web-server-%03d.example.com" : "ev%d",
             i % 11 == 3 ? i % nhosts : i % 5);
    if (i % 17 == 0)
        r->host[0] = r->event[0] = '\0'; /* empty names are names too */
    snprintf(r->value, sizeof r->value, "value %d", i);
}

static void fill(struct batch *b, int n, int nhosts)
{
    struct row r;
    for (int i = 0; i < n; i++) {
        make_row(&r, i, nhosts);
        if (r.kind == IKEY_DEL)
            batch_delete(b, r.ts, slice_cstr(r.host), slice_cstr(r.event));
        else
            batch_put(b, r.ts, slice_cstr(r.host), slice_cstr(r.event), slice_cstr(r.value));
    }
}

/* Reads payload and checks it holds rows 0..n of make_row. */
static void expect_rows(struct slice payload, int n, int nhosts)
{
    struct batch_reader rd;
    uint64_t seq;
    uint32_t count;
    assert_int_equal(batch_reader_init(&rd, payload, &seq, &count), ERR_OK);
    assert_int_equal(count, n);
    struct batch_entry e;
    struct row r;
    for (int i = 0; i < n; i++) {
        assert_int_equal(batch_reader_next(&rd, &e), 1);
        make_row(&r, i, nhosts);
        assert_int_equal(e.kind, r.kind);
        assert_true(e.ts == r.ts);
        assert_true(slice_eq(e.host, slice_cstr(r.host)));
        assert_true(slice_eq(e.event, slice_cstr(r.event)));
        assert_true(slice_eq(e.value, slice_cstr(r.kind == IKEY_PUT ? r.value : "")));
    }
    assert_int_equal(batch_reader_next(&rd, &e), 0);
    batch_reader_done(&rd);
}

static void test_roundtrip(void **state)
{
    (void)state;
    struct batch *b = batch_new();
    for (int nhosts = 1; nhosts <= 5000; nhosts *= 10) {
        batch_clear(b);
        fill(b, 5000, nhosts);
        batch_set_seq(b, 42);
        expect_rows(batch_payload(b), 5000, nhosts);
    }
    /* a cleared batch writes its names in full again */
    batch_clear(b);
    fill(b, 3, 1);
    expect_rows(batch_payload(b), 3, 1);
    batch_free(b);
}

/* A name costs its bytes once per batch, a timestamp close to the last
 * one a byte or two. */
static void test_compact(void **state)
{
    (void)state;
    struct batch *b = batch_new();
    const char *host = "ip-10-20-30-40.eu-west-1.compute.internal";
    for (int i = 0; i < 1000; i++)
        batch_put(b, 1700000000000000000LL + i * 1000, slice_cstr(host), slice_cstr("cpu"),
                  slice_cstr("v"));
    /* flags, ts delta (2), host id, event id, value length and byte */
    size_t per_row = 1 + 2 + 1 + 1 + 1 + 1;
    size_t first = BATCH_HEADER + 1 + 10 + 1 + strlen(host) + 1 + 3 + 2;
    assert_true(batch_payload(b).len <= first + 999 * per_row);
    struct batch_reader rd;
    uint64_t seq;
    uint32_t count;
    struct batch_entry e;
    assert_int_equal(batch_reader_init(&rd, batch_payload(b), &seq, &count), ERR_OK);
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(batch_reader_next(&rd, &e), 1);
        assert_true(e.ts == 1700000000000000000LL + i * 1000);
        assert_true(slice_eq(e.host, slice_cstr(host)));
        assert_true(slice_eq(e.event, slice_cstr("cpu")));
    }
    assert_int_equal(batch_reader_next(&rd, &e), 0);
    batch_reader_done(&rd);
    batch_free(b);
}

/* The encoding of the first releases: kind:u8 | ts:i64le | host | event
 * [| value]. WAL segments written by them replay. */
static void test_first_form(void **state)
{
    (void)state;
    struct buf p = BUF_INIT;
    char h[12] = {0};
    coding_put_u64le(h, 7);
    coding_put_u32le(h + 8, 2);
    buf_append(&p, h, 12);
    char e[9];
    e[0] = IKEY_PUT;
    coding_put_u64le(e + 1, (uint64_t)1700000000000000123LL);
    buf_append(&p, e, 9);
    buf_append(&p,
               "\x03web\x03"
               "cpu\x02v1",
               11);
    e[0] = IKEY_DEL;
    coding_put_u64le(e + 1, (uint64_t)-5);
    buf_append(&p, e, 9);
    buf_append(&p, "\x00\x01m", 3);
    struct batch_reader rd;
    uint64_t seq;
    uint32_t count;
    struct batch_entry en;
    assert_int_equal(batch_reader_init(&rd, slice_make(p.data, p.len), &seq, &count), ERR_OK);
    assert_int_equal(seq, 7);
    assert_int_equal(batch_reader_next(&rd, &en), 1);
    assert_int_equal(en.kind, IKEY_PUT);
    assert_true(en.ts == 1700000000000000123LL);
    assert_true(slice_eq(en.host, slice_cstr("web")));
    assert_true(slice_eq(en.event, slice_cstr("cpu")));
    assert_true(slice_eq(en.value, slice_cstr("v1")));
    assert_int_equal(batch_reader_next(&rd, &en), 1);
    assert_int_equal(en.kind, IKEY_DEL);
    assert_true(en.ts == -5);
    assert_int_equal(en.host.len, 0);
    assert_true(slice_eq(en.event, slice_cstr("m")));
    assert_int_equal(batch_reader_next(&rd, &en), 0);
    batch_reader_done(&rd);
    buf_destroy(&p);
}

/* Reads a damaged payload to its end or first error: never a crash. */
static int read_all(struct slice payload, int *rows)
{
    struct batch_reader rd;
    uint64_t seq;
    uint32_t count;
    struct batch_entry e;
    int rc = batch_reader_init(&rd, payload, &seq, &count);
    *rows = 0;
    while (rc == ERR_OK && (rc = batch_reader_next(&rd, &e)) == 1) {
        (*rows)++;
        rc = ERR_OK;
    }
    batch_reader_done(&rd);
    return rc;
}

static void test_damage(void **state)
{
    (void)state;
    struct batch *b = batch_new();
    fill(b, 60, 7);
    struct slice good = batch_payload(b);
    struct buf copy = BUF_INIT;
    int rows;
    /* cut anywhere: the count says more entries than there are */
    for (size_t len = 0; len < good.len; len++)
        assert_int_equal(read_all(slice_make(good.ptr, len), &rows), ERR_CORRUPT);
    assert_int_equal(read_all(good, &rows), 0);
    assert_int_equal(rows, 60);
    /* any byte changed: an error or entries that parse, never a crash */
    for (size_t off = BATCH_HEADER; off < good.len; off++)
        for (int bit = 0; bit < 8; bit++) {
            buf_reset(&copy);
            buf_append(&copy, good.ptr, good.len);
            copy.data[off] ^= (char)(1 << bit);
            int rc = read_all(slice_make(copy.data, copy.len), &rows);
            assert_true(rc == 0 || rc == ERR_CORRUPT);
        }
    /* a reference to a name the batch has not written, unknown flags */
    static const char *bad[] = {"\x82\x00\x05\x01"
                                "e",
                                "\x84\x00\x01h\x09", "\xc1\x00\x00\x00\x00"};
    static const size_t badlen[] = {5, 5, 5};
    for (size_t i = 0; i < 3; i++) {
        buf_reset(&copy);
        char h[12] = {0};
        coding_put_u32le(h + 8, 1);
        buf_append(&copy, h, 12);
        buf_append(&copy, bad[i], badlen[i]);
        assert_int_equal(read_all(slice_make(copy.data, copy.len), &rows), ERR_CORRUPT);
    }
    buf_destroy(&copy);
    batch_free(b);
}

int main(void)
{
    log_set_level(LOG_ERROR + 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_compact),
        cmocka_unit_test(test_first_form),
        cmocka_unit_test(test_damage),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
