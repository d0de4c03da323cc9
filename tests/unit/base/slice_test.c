/* The comparisons of base/slice.h: mem_eq_short against memcmp at every
 * length a name or a key's prefix has, a difference at every position, and
 * slice_cmp's order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/slice.h"

static void test_mem_eq_short(void **state)
{
    (void)state;
    char a[64], b[64];
    for (size_t i = 0; i < sizeof a; i++)
        a[i] = b[i] = (char)('a' + i % 26);
    for (size_t n = 0; n <= 40; n++) {
        assert_true(mem_eq_short(a, b, n));
        for (size_t at = 0; at < n; at++) {
            b[at] ^= 0x20;
            assert_false(mem_eq_short(a, b, n));
            assert_true(mem_eq_short(a, b, at)); /* the bytes before it agree */
            b[at] ^= 0x20;
        }
        /* a difference just past the n bytes is not looked at */
        b[n] ^= 0x20;
        assert_true(mem_eq_short(a, b, n));
        b[n] ^= 0x20;
    }
}

static void test_slice_cmp(void **state)
{
    (void)state;
    static const char *const sorted[] = {"", "a", "ab", "abcdefgh", "abcdefghi", "abcdefgi", "b"};
    const size_t n = sizeof sorted / sizeof sorted[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int c = slice_cmp(slice_cstr(sorted[i]), slice_cstr(sorted[j]));
            assert_true(i < j ? c < 0 : i > j ? c > 0 : c == 0);
            assert_int_equal(slice_eq(slice_cstr(sorted[i]), slice_cstr(sorted[j])), i == j);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mem_eq_short),
        cmocka_unit_test(test_slice_cmp),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
