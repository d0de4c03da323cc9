/* event.c: the UTF-8 validator (table of valid and invalid sequences), the
 * duplicate-key checks (pairwise and sorted), name checks, and the line
 * splitter's edges (exact limit, '\r' at a piece boundary, skipping). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/utf8.h"
#include "ingest/event.h"

/* clang-format off */ /* (it would spread the braces over four lines) */
#define U(s, ok) {s, sizeof(s) - 1, ok}
/* clang-format on */

static void test_utf8(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        size_t n;
        bool ok;
    } tab[] = {
        U("", true),
        U("plain ascii, longer than eight bytes", true),
        U("\xc2\x80", true),          /* U+0080 */
        U("\xdf\xbf", true),          /* U+07FF */
        U("\xe0\xa0\x80", true),      /* U+0800 */
        U("\xed\x9f\xbf", true),      /* U+D7FF */
        U("\xee\x80\x80", true),      /* U+E000 */
        U("\xef\xbf\xbf", true),      /* U+FFFF */
        U("\xf0\x90\x80\x80", true),  /* U+10000 */
        U("\xf4\x8f\xbf\xbf", true),  /* U+10FFFF */
        U("abcdefg\xc3\xa9", true),   /* after the 8-byte fast path */
        U("\x80", false),             /* lone continuation */
        U("\xc0\x80", false),         /* overlong NUL */
        U("\xc1\xbf", false),         /* overlong */
        U("\xe0\x9f\xbf", false),     /* overlong 3-byte */
        U("\xf0\x8f\xbf\xbf", false), /* overlong 4-byte */
        U("\xed\xa0\x80", false),     /* surrogate U+D800 */
        U("\xed\xbf\xbf", false),     /* surrogate U+DFFF */
        U("\xf4\x90\x80\x80", false), /* U+110000 */
        U("\xf5\x80\x80\x80", false),
        U("\xff", false),
        U("\xc3", false),     /* cut */
        U("\xe2\x82", false), /* cut */
        U("\xc3\x28", false), /* bad continuation */
        U("abcdefgh\xe2\x28\xa1", false),
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        if (utf8_valid(tab[i].s, tab[i].n) != tab[i].ok) {
            print_error("case %zu\n", i);
            fail();
        }
    }
}

/* clang-format off */ /* (it would spread the braces over four lines) */
#define R(in, want) {in, sizeof(in) - 1, want}
/* clang-format on */

/* Repair keeps every valid sequence and replaces each byte that starts no
 * sequence by U+FFFD; the result is always valid. */
static void test_utf8_repair(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        size_t n;
        const char *want;
    } tab[] = {
        R("", ""),
        R("plain ascii, longer than eight bytes", "plain ascii, longer than eight bytes"),
        R("caf\xe9 au lait", "caf\xef\xbf\xbd au lait"), /* Latin-1 */
        R("ok \xc3\xa9 \xf0\x90\x80\x80", "ok \xc3\xa9 \xf0\x90\x80\x80"),
        R("\xc3\x28", "\xef\xbf\xbd("),
        R("\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"), /* surrogate */
        R("\xc0\xaf/", "\xef\xbf\xbd\xef\xbf\xbd/"),               /* overlong */
        R("cut at the end \xe2\x82", "cut at the end \xef\xbf\xbd\xef\xbf\xbd"),
        R("\xff\xfe"
          "12345678\xff",
          "\xef\xbf\xbd\xef\xbf\xbd"
          "12345678\xef\xbf\xbd"),
    };
    struct buf out = BUF_INIT;
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        buf_reset(&out);
        utf8_repair(tab[i].s, tab[i].n, &out);
        const char *got = buf_cstr(&out); /* never NULL, even when empty */
        if (out.len != strlen(tab[i].want) || memcmp(got, tab[i].want, out.len) != 0 ||
            !utf8_valid(got, out.len)) {
            print_error("case %zu\n", i);
            fail();
        }
    }
    buf_destroy(&out);
}

static void test_dup_keys(void **state)
{
    (void)state;
    struct buf scratch = BUF_INIT;
    struct rec_field f[40];
    char names[40][16];
    for (int n = 0; n <= 40; n += 5) {
        for (int i = 0; i < n; i++) {
            snprintf(names[i], sizeof names[i], "k%d", i);
            f[i].key = slice_cstr(names[i]);
        }
        assert_int_equal(event_dup_field(f, (size_t)n, &scratch), -1);
        if (n >= 2) {
            f[n - 1].key = f[n / 2 - 1].key;
            long d = event_dup_field(f, (size_t)n, &scratch);
            assert_true(d >= 0);
            assert_true(slice_eq(f[d].key, f[n - 1].key));
        }
    }
    /* keys that share a prefix are different */
    struct rec_tag t[2] = {{slice_cstr("a"), slice_cstr("1")}, {slice_cstr("ab"), slice_cstr("1")}};
    assert_int_equal(event_dup_tag(t, 2, &scratch), -1);
    buf_destroy(&scratch);
}

/* event_plain_ascii against a byte loop: every length to 20, every byte
 * value at every position of a plain text (the word checks overlap). */
static void test_plain_ascii(void **state)
{
    (void)state;
    char text[24];
    for (size_t n = 0; n <= 20; n++) {
        memset(text, 'a', sizeof text);
        assert_true(event_plain_ascii(slice_make(text, n)));
        for (size_t at = 0; at < n; at++) {
            for (int c = 0; c < 256; c++) {
                text[at] = (char)c;
                bool want = c >= 0x20 && c <= 0x7e;
                assert_int_equal(event_plain_ascii(slice_make(text, n)), want);
            }
            text[at] = 'a';
        }
        /* a bad byte just past the text is not looked at */
        text[n] = '\n';
        assert_true(event_plain_ascii(slice_make(text, n)));
    }
}

static void test_names(void **state)
{
    (void)state;
    struct event_limits lim;
    event_limits_default(&lim);
    assert_null(event_check_names(&lim, slice_cstr(""), slice_cstr("e")));
    assert_string_equal(event_check_names(&lim, slice_cstr(""), slice_cstr("")),
                        "empty event name");
    assert_string_equal(event_check_names(&lim, slice_make("a\0b", 3), slice_cstr("e")),
                        "NUL byte in host");
    assert_string_equal(event_check_names(&lim, slice_cstr("h"), slice_make("a\0b", 3)),
                        "NUL byte in event name");
    assert_string_equal(event_check_names(&lim, slice_cstr("a\tb"), slice_cstr("e")),
                        "control character in host");
    assert_string_equal(event_check_names(&lim, slice_cstr("h"), slice_cstr("e\x7f")),
                        "control character in event name");
    lim.max_key_bytes = 3;
    assert_null(event_check_names(&lim, slice_cstr("hhh"), slice_cstr("eee")));
    assert_string_equal(event_check_names(&lim, slice_cstr("hhhh"), slice_cstr("e")),
                        "host too long");
    assert_string_equal(event_check_names(&lim, slice_cstr("h"), slice_cstr("eeee")),
                        "event name too long");
    lim.max_key_bytes = 100000; /* still capped at KEY_MAX_NAME */
    char big[1026];
    memset(big, 'x', sizeof big);
    assert_string_equal(event_check_names(&lim, slice_make(big, 1025), slice_cstr("e")),
                        "host too long");
    assert_null(event_check_names(&lim, slice_make(big, 1024), slice_cstr("e")));
}

/* Feeds pieces and collects "OK:<line>" / "LONG" / "#<line_no>" items. */
static void split(size_t max, const char *const *pieces, size_t n, struct buf *out)
{
    struct event_lines s;
    event_lines_init(&s, max);
    for (size_t i = 0; i < n; i++) {
        const char *d = pieces[i];
        size_t len = strlen(d);
        while (len) {
            enum event_line_kind k;
            struct slice line;
            size_t used = event_lines_next(&s, d, len, &k, &line);
            assert_true(used > 0 && used <= len);
            if (k == EVENT_LINE_OK)
                buf_printf(out, "%llu:%.*s;", (unsigned long long)s.line_no, (int)line.len,
                           line.ptr);
            else if (k == EVENT_LINE_TOOLONG)
                buf_printf(out, "%llu:LONG;", (unsigned long long)s.line_no);
            d += used;
            len -= used;
        }
    }
    struct slice line;
    if (event_lines_finish(&s, &line) == EVENT_LINE_OK)
        buf_printf(out, "%llu:%.*s;", (unsigned long long)s.line_no, (int)line.len, line.ptr);
    event_lines_destroy(&s);
}

static void test_splitter_edges(void **state)
{
    (void)state;
    static const struct {
        size_t max;
        const char *pieces[4];
        const char *want;
    } tab[] = {
        {4, {"abcd\n", NULL}, "1:abcd;"},
        {4, {"abcde\n", NULL}, "1:LONG;"},
        {4, {"ab", "cd\n", NULL}, "1:abcd;"},
        {4, {"ab", "cde", "\nx", NULL}, "1:LONG;2:x;"},
        {4, {"abc\r", "\nz\r", NULL}, "1:abc;2:z;"},
        {4, {"abcd\r\n", NULL}, "1:LONG;"},
        {4, {"\n\n", "\r\n", NULL}, "1:;2:;3:;"},
        {4, {"abcdefgh", "ijkl", "mn\nok", NULL}, "1:LONG;2:ok;"},
        {4, {"abcdefgh", NULL}, "1:LONG;"},
        {4, {"ab", NULL}, "1:ab;"},
        {8, {"a\nb", "c\nd", "e", "f\n"}, "1:a;2:bc;3:def;"},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        size_t n = 0;
        while (n < 4 && tab[i].pieces[n])
            n++;
        struct buf got = BUF_INIT;
        split(tab[i].max, tab[i].pieces, n, &got);
        if (strcmp(buf_cstr(&got), tab[i].want)) {
            print_error("case %zu: got %s want %s\n", i, buf_cstr(&got), tab[i].want);
            fail();
        }
        buf_destroy(&got);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_utf8),        cmocka_unit_test(test_utf8_repair),
        cmocka_unit_test(test_dup_keys),    cmocka_unit_test(test_names),
        cmocka_unit_test(test_plain_ascii), cmocka_unit_test(test_splitter_edges),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
