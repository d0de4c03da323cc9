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

/* utf8_valid and utf8_repair by utf8_seq_len at every byte, the way
 * they read before they skipped ASCII by words. */
static bool valid_ref(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t len = utf8_seq_len(s + i, n - i);
        if (!len)
            return false;
        i += len;
    }
    return true;
}

static void repair_ref(const unsigned char *s, size_t n, struct buf *out)
{
    for (size_t i = 0; i < n;) {
        size_t len = utf8_seq_len(s + i, n - i);
        if (len) {
            buf_append(out, (const char *)s + i, len);
            i += len;
        } else {
            buf_append(out, "\xef\xbf\xbd", 3);
            i++;
        }
    }
}

/* ASCII is skipped 16 and 8 bytes at a time and a text's last bytes by the
 * 8 that end it: a sequence (well-formed, cut short, or a stray byte) at
 * every position of ASCII texts of every length to 70 is found as a byte
 * by byte reading finds it. */
static void test_valid_and_repair(void **state)
{
    (void)state;
    static const char *const seqs[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                       "\xc3",     "\xe2\x82",     "\x80",
                                       "\xff",     "\xed\xa0\x80"};
    unsigned char text[80];
    struct buf got = BUF_INIT, want = BUF_INIT;
    for (size_t n = 0; n <= 70; n++) {
        memset(text, 'a', sizeof text);
        assert_true(utf8_valid((const char *)text, n));
        for (size_t q = 0; q < sizeof seqs / sizeof seqs[0]; q++)
            for (size_t at = 0; at < n; at++) {
                memset(text, 'a', sizeof text);
                size_t len = strlen(seqs[q]);
                memcpy(text + at, seqs[q], at + len <= n ? len : n - at);
                assert_int_equal(utf8_valid((const char *)text, n), valid_ref(text, n));
                buf_reset(&got);
                buf_reset(&want);
                utf8_repair((const char *)text, n, &got);
                repair_ref(text, n, &want);
                assert_int_equal(got.len, want.len);
                assert_memory_equal(got.data, want.data, got.len);
            }
    }
    buf_destroy(&got);
    buf_destroy(&want);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode),
        cmocka_unit_test(test_hex4),
        cmocka_unit_test(test_valid_and_repair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
