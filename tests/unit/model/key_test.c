/* Row and index keys: exact bytes, round trips, and memcmp order equal to
 * the table order, both ts directions, with empty and long names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "model/key.h"

static void test_bytes(void **state)
{
    (void)state;
    struct buf k = BUF_INIT;
    buf_puts(&k, "xy"); /* appends after what is there */
    key_encode_row(&k, 0x0102, 5, false, slice_cstr("h"), slice_cstr("ev"));
    static const char row[] = "xy\x01\x02\x80\0\0\0\0\0\0\x05h\0ev";
    assert_int_equal(k.len, sizeof row);
    assert_memory_equal(k.data, row, sizeof row);
    buf_reset(&k);
    key_encode_index(&k, slice_cstr("h"), slice_cstr("ev"), 5, true);
    static const char idx[] = "h\0\x7f\xff\xff\xff\xff\xff\xff\xfa"
                              "ev";
    assert_int_equal(k.len, sizeof idx);
    assert_memory_equal(k.data, idx, sizeof idx);
    buf_destroy(&k);
}

struct row {
    uint32_t bucket;
    int64_t ts;
    const char *host, *event;
};

static int row_cmp(const struct row *a, const struct row *b, bool desc)
{
    if (a->bucket != b->bucket)
        return a->bucket < b->bucket ? -1 : 1;
    if (a->ts != b->ts)
        return (a->ts < b->ts) == !desc ? -1 : 1;
    int c = strcmp(a->host, b->host);
    return c ? c : strcmp(a->event, b->event);
}

static int sign(int x)
{
    return (x > 0) - (x < 0);
}

static int bytes_cmp(const struct buf *a, const struct buf *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->data, b->data, n);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

static void test_order_and_round_trip(void **state)
{
    (void)state;
    char longname[KEY_MAX_NAME + 1];
    memset(longname, 'z', KEY_MAX_NAME);
    longname[KEY_MAX_NAME] = '\0';
    static const int64_t ts[] = {INT64_MIN, -1, 0, 1, 255, 256, 1700000000000000000LL, INT64_MAX};
    const char *names[] = {"", "a", "a.b", "ab", "web-1", longname};
    struct row rows[2 * 8 * 6 * 6];
    size_t n = 0;
    for (uint32_t b = 0; b < 2; b++)
        for (size_t t = 0; t < 8; t++)
            for (size_t h = 0; h < 6; h++)
                for (size_t e = 0; e < 6; e++)
                    rows[n++] = (struct row){b * 7, ts[t], names[h], names[e]};
    struct buf x = BUF_INIT, y = BUF_INIT;
    for (int desc = 0; desc < 2; desc++)
        for (size_t i = 0; i < n; i++) {
            buf_reset(&x);
            key_encode_row(&x, rows[i].bucket, rows[i].ts, desc, slice_cstr(rows[i].host),
                           slice_cstr(rows[i].event));
            struct key_row r;
            assert_int_equal(key_decode_row(slice_make(x.data, x.len), desc, &r), ERR_OK);
            assert_int_equal(r.bucket, rows[i].bucket);
            assert_true(r.ts == rows[i].ts);
            assert_true(slice_eq(r.host, slice_cstr(rows[i].host)));
            assert_true(slice_eq(r.event, slice_cstr(rows[i].event)));
            buf_reset(&x);
            key_encode_index(&x, slice_cstr(rows[i].host), slice_cstr(rows[i].event), rows[i].ts,
                             desc);
            assert_int_equal(key_decode_index(slice_make(x.data, x.len), desc, &r), ERR_OK);
            assert_true(r.ts == rows[i].ts);
            assert_true(slice_eq(r.host, slice_cstr(rows[i].host)));
            assert_true(slice_eq(r.event, slice_cstr(rows[i].event)));
            for (size_t j = i % 37; j < n; j += 37) {
                buf_reset(&x);
                buf_reset(&y);
                key_encode_row(&x, rows[i].bucket, rows[i].ts, desc, slice_cstr(rows[i].host),
                               slice_cstr(rows[i].event));
                key_encode_row(&y, rows[j].bucket, rows[j].ts, desc, slice_cstr(rows[j].host),
                               slice_cstr(rows[j].event));
                assert_int_equal(sign(bytes_cmp(&x, &y)), sign(row_cmp(&rows[i], &rows[j], desc)));
            }
        }
    buf_destroy(&x);
    buf_destroy(&y);
}

static void test_bad_keys(void **state)
{
    (void)state;
    struct key_row r;
    assert_int_equal(key_decode_row(slice_make("\0\0\0\0\0\0\0\0\0\0h\0e", 13), false, &r),
                     ERR_CORRUPT); /* event without its NUL */
    assert_int_equal(key_decode_row(slice_make("\0\0", 2), false, &r), ERR_CORRUPT);
    assert_int_equal(key_decode_index(slice_make("h\0\1\2\3", 5), false, &r), ERR_CORRUPT);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_order_and_round_trip),
        cmocka_unit_test(test_bad_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
