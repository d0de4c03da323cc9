/* The protobuf wire reader: every wire type, varint edges (10 bytes, over
 * 64 bits, truncated), field number 0, groups, lengths past the end, and
 * the writer's output read back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/err.h"
#include "ingest/pb.h"

/* Reads one field of the bytes; returns pb_next's result. */
static int one(const char *bytes, size_t n, struct pb_field *f, const char **why)
{
    struct pb_reader r;
    pb_init(&r, bytes, n);
    int rc = pb_next(&r, f);
    *why = r.error;
    return rc;
}

static void test_wire_types(void **state)
{
    (void)state;
    struct pb_field f;
    const char *why;
    assert_int_equal(one("\x08\x96\x01", 3, &f, &why), 1);
    assert_int_equal(f.num, 1);
    assert_int_equal(f.wire, PB_VARINT);
    assert_int_equal(f.v, 150);
    assert_int_equal(one("\x11\x01\x02\x03\x04\x05\x06\x07\x08", 9, &f, &why), 1);
    assert_int_equal(f.wire, PB_I64);
    assert_true(f.v == 0x0807060504030201ull);
    assert_int_equal(one("\x1d\x01\x00\x00\x80", 5, &f, &why), 1);
    assert_int_equal(f.num, 3);
    assert_int_equal(f.wire, PB_I32);
    assert_true(f.v == 0x80000001ull);
    assert_int_equal(one("\x22\x03"
                         "abc",
                         5, &f, &why),
                     1);
    assert_int_equal(f.num, 4);
    assert_int_equal(f.wire, PB_LEN);
    assert_int_equal(f.s.len, 3);
    assert_memory_equal(f.s.ptr, "abc", 3);
    /* a field number over one byte: 2047 << 3 | 0 */
    assert_int_equal(one("\xf8\x7f\x01", 3, &f, &why), 1);
    assert_int_equal(f.num, 2047);
}

static void test_varint_edges(void **state)
{
    (void)state;
    struct pb_field f;
    const char *why;
    /* UINT64_MAX: nine 0xff and a final 0x01 */
    assert_int_equal(one("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11, &f, &why), 1);
    assert_true(f.v == UINT64_MAX);
    assert_int_equal(one("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11, &f, &why),
                     ERR_CORRUPT);
    assert_string_equal(why, "varint over 64 bits");
    assert_int_equal(one("\x08\x80\x80", 3, &f, &why), ERR_CORRUPT);
    assert_string_equal(why, "truncated varint");
    assert_int_equal(one("\x08\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 12, &f, &why),
                     ERR_CORRUPT);
    assert_string_equal(why, "varint over 64 bits");
}

static void test_malformed(void **state)
{
    (void)state;
    struct pb_field f;
    const char *why;
    assert_int_equal(one("\x00\x01", 2, &f, &why), ERR_CORRUPT);
    assert_string_equal(why, "bad field number");
    assert_int_equal(one("\x0b", 1, &f, &why), ERR_CORRUPT);
    assert_string_equal(why, "groups are not supported");
    assert_int_equal(one("\x0c", 1, &f, &why), ERR_CORRUPT);
    assert_int_equal(one("\x0e", 1, &f, &why), ERR_CORRUPT);
    assert_string_equal(why, "bad wire type");
    assert_int_equal(one("\x0f", 1, &f, &why), ERR_CORRUPT);
    assert_int_equal(one("\x12\x05"
                         "abc",
                         5, &f, &why),
                     ERR_CORRUPT);
    assert_string_equal(why, "length-delimited field runs past the end");
    /* a length near 2^64 must not wrap the end check */
    assert_int_equal(one("\x12\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"
                         "a",
                         12, &f, &why),
                     ERR_CORRUPT);
    assert_int_equal(one("\x11\x01\x02", 3, &f, &why), ERR_CORRUPT);
    assert_string_equal(why, "truncated 64-bit value");
    assert_int_equal(one("\x15\x01", 2, &f, &why), ERR_CORRUPT);
    assert_string_equal(why, "truncated 32-bit value");
    assert_int_equal(one("", 0, &f, &why), 0);
}

static void test_writer_round_trip(void **state)
{
    (void)state;
    struct buf b = BUF_INIT;
    pb_put_varint(&b, 1, 0);
    pb_put_varint(&b, 2, UINT64_MAX);
    pb_put_bytes(&b, 536870911, "xyz", 3); /* the largest field number */
    pb_put_bytes(&b, 3, "", 0);
    struct pb_reader r;
    struct pb_field f;
    pb_init(&r, b.data, b.len);
    assert_int_equal(pb_next(&r, &f), 1);
    assert_true(f.num == 1 && f.v == 0);
    assert_int_equal(pb_next(&r, &f), 1);
    assert_true(f.num == 2 && f.v == UINT64_MAX);
    assert_int_equal(pb_next(&r, &f), 1);
    assert_true(f.num == 536870911 && f.s.len == 3 && memcmp(f.s.ptr, "xyz", 3) == 0);
    assert_int_equal(pb_next(&r, &f), 1);
    assert_true(f.num == 3 && f.s.len == 0);
    assert_int_equal(pb_next(&r, &f), 0);
    buf_destroy(&b);
}

/* Every prefix of a valid message either reads as fields or fails cleanly. */
static void test_every_prefix(void **state)
{
    (void)state;
    struct buf b = BUF_INIT;
    pb_put_varint(&b, 1, 300);
    pb_put_bytes(&b, 2, "hello", 5);
    buf_append(&b,
               "\x19"
               "12345678",
               9);
    for (size_t n = 0; n <= b.len; n++) {
        struct pb_reader r;
        struct pb_field f;
        int rc, fields = 0;
        pb_init(&r, b.data, n);
        while ((rc = pb_next(&r, &f)) == 1)
            fields++;
        size_t ends[] = {0, 3, 10, 19};
        bool is_boundary = false;
        for (size_t i = 0; i < 4; i++)
            is_boundary |= n == ends[i];
        assert_int_equal(rc, is_boundary ? 0 : ERR_CORRUPT);
    }
    buf_destroy(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_types),   cmocka_unit_test(test_varint_edges),
        cmocka_unit_test(test_malformed),    cmocka_unit_test(test_writer_round_trip),
        cmocka_unit_test(test_every_prefix),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
