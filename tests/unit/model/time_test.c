/* model/time.h: one RFC 3339 rule for JSON lines and SQL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "model/time.h"

static const struct {
    const char *s;
    int rc;
    int64_t ns;
} tab[] = {
    {"1970-01-01T00:00:00Z", ERR_OK, 0},
    {"2000-02-29T12:34:56.789Z", ERR_OK, 951827696789000000LL},
    {"2262-04-11T23:47:16.854775807Z", ERR_OK, INT64_MAX},
    {"2262-04-11T23:47:16.854775808Z", ERR_INVAL, 0},
    {"1677-09-21T00:12:43.145224192Z", ERR_OK, INT64_MIN},
    {"1677-09-21T00:12:43.145224191Z", ERR_INVAL, 0},
    {"2024-05-01T10:00:00.1234567891Z", ERR_OK, 1714557600123456789LL},
    {"2024-05-01T10:00:00+23:59", ERR_OK, 1714557600000000000LL - 86340000000000LL},
    {"2001-02-29T00:00:00Z", ERR_INVAL, 0},
    {"2024-13-01T00:00:00Z", ERR_INVAL, 0},
    {"2024-05-01T24:00:00Z", ERR_INVAL, 0},
    {"2024-05-01T10:00:00", ERR_INVAL, 0},
    {"2024-05-01T10:00:00.Z", ERR_INVAL, 0},
    {"2024-05-01T10:00:00+0200", ERR_INVAL, 0},
    {"2024-05-01T10:00:00Zjunk", ERR_INVAL, 0},
    {"2024-5-01T10:00:00Z", ERR_INVAL, 0},
    {"", ERR_INVAL, 0},
    /* the rules SQL's ts conditions had before this parser was theirs too */
    {"2024-01-01T01:00:00.5+01:00", ERR_OK, 1704067200500000000LL},
    {"1970-01-01", ERR_OK, 0},
    {"2024-02-30T00:00:00Z", ERR_INVAL, 0},
    {"3000-01-01T00:00:00Z", ERR_INVAL, 0},
    {"2024-01-01T00:00:00z", ERR_OK, 1704067200000000000LL},
    {"2024-01-01 00:00:00Z", ERR_OK, 1704067200000000000LL},
    {"2016-12-31T23:59:60Z", ERR_OK, 1483228800000000000LL},
    {"9999-12-31", ERR_INVAL, 0},
    {"1677-09-21", ERR_INVAL, 0},
    {"2262-04-11", ERR_OK, 106751LL * 86400 * 1000000000},
    /* the same date and time of day as a row before, other tails */
    {"2024-01-01T00:00:00.25Z", ERR_OK, 1704067200250000000LL},
    {"2024-01-01T00:00:00-00:30", ERR_OK, 1704067200000000000LL + 1800000000000LL},
    {"2024-01-01T00:00:00.", ERR_INVAL, 0},
    {"2024-01-01T00:00:00.1", ERR_INVAL, 0},
    {"2024-01-01T00:00:01Z", ERR_OK, 1704067201000000000LL},
    {"2024-01-01T00:00:0xZ", ERR_INVAL, 0},
    {"2024-01-01T00:00:01Z", ERR_OK, 1704067201000000000LL},
};

static void test_rfc3339(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        int64_t ns = 0;
        int rc = time_parse_rfc3339(tab[i].s, strlen(tab[i].s), &ns);
        if (rc != tab[i].rc || (rc == ERR_OK && ns != tab[i].ns)) {
            print_error("%s: rc %d ns %lld\n", tab[i].s, rc, (long long)ns);
            fail();
        }
    }
}

/* Through one memo, each stamp twice (the second from the memo when it
 * has a date and time): the results of time_parse_rfc3339. */
static void test_memo(void **state)
{
    (void)state;
    struct time_memo memo = {0};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        for (int k = 0; k < 2; k++) {
            int64_t ns = 0;
            int rc = time_parse_rfc3339_memo(&memo, tab[i].s, strlen(tab[i].s), &ns);
            if (rc != tab[i].rc || (rc == ERR_OK && ns != tab[i].ns)) {
                print_error("memo %s (%d): rc %d ns %lld\n", tab[i].s, k, rc, (long long)ns);
                fail();
            }
        }
    }
}

/* Fractions of 1 to 14 digits (eight or more are read as a word), random
 * digits, each with a zone after it and with a non-digit byte in place of
 * each digit: the value a digit loop gives, or ERR_INVAL. */
static void test_fractions(void **state)
{
    (void)state;
    uint64_t seed = 7;
    static const char junk[] = "/:aZ.+ \x7f";
    for (int len = 1; len <= 14; len++) {
        for (int round = 0; round < 200; round++) {
            char s[64] = "2024-05-01T10:00:00.";
            size_t n = strlen(s);
            int64_t frac = 0;
            for (int i = 0; i < len; i++) {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                char d = (char)('0' + (seed >> 33) % 10);
                s[n + (size_t)i] = d;
                if (i < 9)
                    frac = frac * 10 + (d - '0');
            }
            for (int i = len; i < 9; i++)
                frac *= 10;
            memcpy(s + n + (size_t)len, "Z", 2);
            int64_t ns = 0, want = 1714557600000000000LL + frac;
            assert_int_equal(time_parse_rfc3339(s, strlen(s), &ns), ERR_OK);
            assert_true(ns == want);
            /* a byte that is not a digit ends the fraction there: the rest
             * is no zone, so the stamp is refused */
            int at = (int)((seed >> 20) % (unsigned)len);
            char keep = s[n + (size_t)at];
            s[n + (size_t)at] = junk[(seed >> 40) % (sizeof junk - 1)];
            assert_int_equal(time_parse_rfc3339(s, strlen(s), &ns), ERR_INVAL);
            s[n + (size_t)at] = keep;
        }
    }
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc3339),
        cmocka_unit_test(test_memo),
        cmocka_unit_test(test_fractions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
