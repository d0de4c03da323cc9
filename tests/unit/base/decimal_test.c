/* base/decimal.h: dec_u64 and dec_i64 agree with a digit-by-digit
 * reference on every length up to 25 and on texts with a byte just
 * outside the digits ('/' and ':') or a high byte at each position; the
 * limits of both types are in range and one past them is not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/decimal.h"

/* The plain loop the SWAR code must agree with. */
static int ref_u64(const char *s, size_t len, uint64_t *out)
{
    if (len == 0)
        return DEC_SYNTAX;
    unsigned __int128 v = 0;
    bool over = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return DEC_SYNTAX;
        v = v * 10 + (unsigned)(s[i] - '0');
        if (v > UINT64_MAX) {
            over = true;
            v = UINT64_MAX; /* stays over */
        }
    }
    if (over)
        return DEC_RANGE;
    *out = (uint64_t)v;
    return DEC_OK;
}

static int ref_i64(const char *s, size_t len, int64_t *out)
{
    bool neg = len && s[0] == '-';
    uint64_t v;
    int rc = ref_u64(s + neg, len - neg, &v);
    if (rc != DEC_OK)
        return rc;
    if (v > (uint64_t)INT64_MAX + neg)
        return DEC_RANGE;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return DEC_OK;
}

static void check(const char *s, size_t len)
{
    uint64_t u = 7, ru = 7;
    int64_t i = 7, ri = 7;
    int rc = dec_u64(s, len, &u), want = ref_u64(s, len, &ru);
    assert_int_equal(rc, want);
    if (rc == DEC_OK)
        assert_true(u == ru);
    rc = dec_i64(s, len, &i);
    want = ref_i64(s, len, &ri);
    assert_int_equal(rc, want);
    if (rc == DEC_OK)
        assert_true(i == ri);
}

static void test_limits(void **state)
{
    (void)state;
    uint64_t u;
    int64_t i;
    assert_int_equal(dec_u64("18446744073709551615", 20, &u), DEC_OK);
    assert_true(u == UINT64_MAX);
    assert_int_equal(dec_u64("18446744073709551616", 20, &u), DEC_RANGE);
    assert_int_equal(dec_u64("99999999999999999999", 20, &u), DEC_RANGE);
    assert_int_equal(dec_u64("9999999999999999999", 19, &u), DEC_OK);
    assert_true(u == 9999999999999999999ULL);
    assert_int_equal(dec_u64("0000000000000000000000042", 25, &u), DEC_OK);
    assert_true(u == 42);
    assert_int_equal(dec_u64("1700000000123456789", 19, &u), DEC_OK);
    assert_true(u == 1700000000123456789ULL);
    assert_int_equal(dec_i64("9223372036854775807", 19, &i), DEC_OK);
    assert_true(i == INT64_MAX);
    assert_int_equal(dec_i64("9223372036854775808", 19, &i), DEC_RANGE);
    assert_int_equal(dec_i64("-9223372036854775808", 20, &i), DEC_OK);
    assert_true(i == INT64_MIN);
    assert_int_equal(dec_i64("-9223372036854775809", 20, &i), DEC_RANGE);
    assert_int_equal(dec_i64("-0", 2, &i), DEC_OK);
    assert_true(i == 0);
    assert_int_equal(dec_i64("-", 1, &i), DEC_SYNTAX);
    assert_int_equal(dec_i64("", 0, &i), DEC_SYNTAX);
    assert_int_equal(dec_u64("-1", 2, &u), DEC_SYNTAX);
    assert_int_equal(dec_u64("+1", 2, &u), DEC_SYNTAX);
    assert_int_equal(dec_u64(" 1", 2, &u), DEC_SYNTAX);
    /* a 99-digit value too large, then a non-digit: a syntax error */
    char big[100];
    memset(big, '9', sizeof big);
    assert_int_equal(dec_u64(big, 99, &u), DEC_RANGE);
    big[98] = 'x';
    assert_int_equal(dec_u64(big, 99, &u), DEC_SYNTAX);
}

static void test_against_reference(void **state)
{
    (void)state;
    static const char odd[] = {'/', ':', '\0', ' ', '-', (char)0x80, (char)0xb9, (char)0xff, 'a'};
    char s[32];
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    for (size_t len = 0; len <= 25; len++) {
        for (int round = 0; round < 400; round++) {
            for (size_t k = 0; k < len; k++) {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                s[k] = (char)('0' + (seed >> 33) % 10);
            }
            if (round % 4 == 1 && len) /* a leading '-' */
                s[0] = '-';
            check(s, len);
            for (size_t at = 0; at < len; at++) { /* one bad byte anywhere */
                char keep = s[at];
                s[at] = odd[(round + at) % sizeof odd];
                check(s, len);
                s[at] = keep;
            }
        }
    }
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_against_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
