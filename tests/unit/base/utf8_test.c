/* base/utf8.h: the encoder every JSON and label unescaper shares gives the
 * shortest well-formed sequence at each length boundary, and \uXXXX digits
 * read as hex or not at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/utf8.h"

static void test_encode(void **state)
{
    (void)state;
    static const struct {
        uint32_t cp;
        const char *want;
    } tab[] = {
        {0x0, "\0"},
        {0x41, "A"},
        {0x7f, "\x7f"},
        {0x80, "\xc2\x80"},
        {0x7ff, "\xdf\xbf"},
        {0x800, "\xe0\xa0\x80"},
        {0xe9, "\xc3\xa9"},
        {0xffff, "\xef\xbf\xbf"},
        {0x10000, "\xf0\x90\x80\x80"},
        {0x1f600, "\xf0\x9f\x98\x80"},
        {0x10ffff, "\xf4\x8f\xbf\xbf"},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        char out[4];
        size_t n = utf8_encode(tab[i].cp, out);
        size_t want = tab[i].cp == 0 ? 1 : strlen(tab[i].want);
        assert_int_equal(n, want);
        assert_memory_equal(out, tab[i].want, n);
        assert_int_equal(utf8_seq_len((const unsigned char *)out, n), n);
    }
}

static void test_hex4(void **state)
{
    (void)state;
    assert_int_equal(utf8_hex4("0000"), 0);
    assert_int_equal(utf8_hex4("00e9"), 0xe9);
    assert_int_equal(utf8_hex4("FFFF"), 0xffff);
    assert_int_equal(utf8_hex4("d83D"), 0xd83d);
    assert_int_equal(utf8_hex4("12g4"), -1);
    assert_int_equal(utf8_hex4("12\"4"), -1);
    assert_int_equal(utf8_hex4("\0abc"), -1);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode),
        cmocka_unit_test(test_hex4),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
