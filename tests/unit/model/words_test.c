/* model/words.h: splitting, folding, hashing and phrases, the rules search
 * and the block word filters share. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "model/words.h"

static bool collect(void *arg, struct slice w)
{
    char *out = arg;
    size_t n = strlen(out);
    snprintf(out + n, 256 - n, "%s%.*s", n ? "|" : "", (int)w.len, w.ptr);
    return true;
}

static bool stop_after_one(void *arg, struct slice w)
{
    (void)w;
    (*(int *)arg)++;
    return false;
}

static void test_split(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } tab[] = {
        {"", ""},
        {"   ", ""},
        {"GET /api/v1 200", "GET|api|v1|200"},
        {"user_id=42,err=timeout.", "user_id|42|err|timeout"},
        {"caf\xc3\xa9 na\xc3\xafve", "caf\xc3\xa9|na\xc3\xafve"},
        {"a-b:c", "a|b|c"},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        char out[256] = "";
        words_each(slice_make(tab[i].text, strlen(tab[i].text)), collect, out);
        assert_string_equal(out, tab[i].want);
    }
    int calls = 0;
    words_each(slice_make("a b c", 5), stop_after_one, &calls);
    assert_int_equal(calls, 1);
}

static void test_hash_folds_case(void **state)
{
    (void)state;
    assert_true(words_hash(slice_make("Error", 5)) == words_hash(slice_make("error", 5)));
    assert_true(words_hash(slice_make("ERROR", 5)) == words_hash(slice_make("error", 5)));
    assert_true(words_hash(slice_make("error", 5)) != words_hash(slice_make("errors", 6)));
    assert_true(words_hash(slice_make("", 0)) != words_hash(slice_make("a", 1)));
}

/* words_hash2 is stored in files: the values of its definition (words.h),
 * computed apart from this code, must not change. */
static void test_hash2_stable(void **state)
{
    (void)state;
    static const struct {
        const char *word;
        uint64_t want;
    } tab[] = {
        {"error", 0x39439a936b1c50c7ULL},
        {"Timeout", 0x6687a6ed3079a833ULL},
        {"0123456789abcdef", 0x0ce1a6be41575aadULL},
        {"0123456789abcdefg", 0xdb6d2f34cf960adeULL},
        {"x\xc3\xa9y", 0x8249631004b7b4cbULL},
        {"a", 0xbd86f2db20a6dd4dULL},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (words_hash2(slice_cstr(tab[i].word)) != tab[i].want)
            fail_msg("words_hash2(\"%s\")", tab[i].word);
    assert_true(words_hash2(slice_cstr("ERROR")) == words_hash2(slice_cstr("error")));
    assert_true(words_hash2(slice_cstr("error")) != words_hash2(slice_cstr("errors")));
    struct word_hashes h = words_hashes(slice_cstr("Error"));
    assert_true(h.v1 == words_hash(slice_cstr("error")) &&
                h.v2 == words_hash2(slice_cstr("error")));
}

static bool find(const char *text, const char *phrase)
{
    return words_find(slice_make(text, strlen(text)), slice_make(phrase, strlen(phrase)));
}

static void test_find(void **state)
{
    (void)state;
    assert_true(find("ERROR: Connection  reset by peer", "connection reset"));
    assert_false(find("connection was reset", "connection reset"));
    assert_false(find("connections reset", "connection reset"));
    assert_true(find("request timeout", "timeout"));
    assert_false(find("request timeouts", "timeout"));
    assert_false(find("", "timeout"));
    assert_true(find("anything", ""));
    assert_true(find("anything", " -- "));
    assert_true(find("x x x y", "x y"));
    assert_true(find("a a b", "a b"));
    assert_false(find("a b", "a b c"));
}

/* The words of a text, folded, as a list (the reference for words_find). */
struct wl {
    char w[64][16];
    size_t n;
};

static bool wl_add(void *arg, struct slice w)
{
    struct wl *l = arg;
    if (l->n < 64 && w.len < 16) {
        for (size_t i = 0; i < w.len; i++) {
            char c = w.ptr[i];
            l->w[l->n][i] = c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
        }
        l->w[l->n][w.len] = 0;
        l->n++;
    }
    return true;
}

static bool naive_find(const char *text, const char *phrase)
{
    struct wl t = {0}, p = {0};
    words_each(slice_make(text, strlen(text)), wl_add, &t);
    words_each(slice_make(phrase, strlen(phrase)), wl_add, &p);
    if (p.n == 0)
        return true;
    for (size_t i = 0; i + p.n <= t.n; i++) {
        size_t k = 0;
        while (k < p.n && strcmp(t.w[i + k], p.w[k]) == 0)
            k++;
        if (k == p.n)
            return true;
    }
    return false;
}

/* words_find finds candidates 16 positions at a time by the first and
 * last bytes of the first word: it must agree with splitting the text into
 * words, on random texts of a small alphabet (letters at the ends of the
 * ranges and the bytes that differ from them only in bit 5), short and
 * long. */
static void test_find_random(void **state)
{
    (void)state;
    static const char alpha[] = "aAbBzZ _-.@[`{0\xc3\xe9";
    uint64_t x = 88172645463325252ULL;
    for (int round = 0; round < 40000; round++) {
        char text[128], phrase[8];
        size_t tn = 0, pn = 0;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t tl = x % (round % 2 ? 30 : 120), pl = 1 + (x >> 8) % 6;
        for (size_t i = 0; i < tl; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            text[tn++] = alpha[x % (sizeof alpha - 1)];
        }
        text[tn] = 0;
        for (size_t i = 0; i < pl; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            phrase[pn++] = alpha[x % (sizeof alpha - 1)];
        }
        phrase[pn] = 0;
        if (find(text, phrase) != naive_find(text, phrase)) {
            print_error("text '%s' phrase '%s': got %d\n", text, phrase, find(text, phrase));
            fail();
        }
    }
}

/* words_contains_folded against a byte loop: every start, both cases. */
static bool naive_contains(const char *text, const char *word)
{
    size_t tn = strlen(text), wn = strlen(word);
    for (size_t i = 0; i + wn <= tn; i++) {
        size_t j = 0;
        while (j < wn && tolower((unsigned char)text[i + j]) == (unsigned char)word[j])
            j++;
        if (j == wn)
            return true;
    }
    return false;
}

static void test_contains_folded(void **state)
{
    (void)state;
    static const char alpha[] = "abzAZ_@[`{0 \xc3";
    static const char lower[] = "abz_0@`\xc3";
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (int round = 0; round < 40000; round++) {
        char text[128], word[8];
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t tl = x % 120, wl = (x >> 8) % 5;
        for (size_t i = 0; i < tl; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            text[i] = alpha[x % (sizeof alpha - 1)];
        }
        text[tl] = 0;
        for (size_t i = 0; i < wl; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            word[i] = lower[x % (sizeof lower - 1)];
        }
        word[wl] = 0;
        bool got = words_contains_folded(slice_make(text, tl), slice_make(word, wl));
        if (got != naive_contains(text, word)) {
            print_error("text '%s' word '%s': got %d\n", text, word, got);
            fail();
        }
    }
    assert_true(words_contains_folded(slice_cstr("xx TimeOut yy"), slice_cstr("timeout")));
    assert_false(words_contains_folded(slice_cstr("xx Time_Out yy"), slice_cstr("timeout")));
}

/* A word planted at every start of texts up to 200 bytes (the search
 * looks at 32 or 16 starts at a time, the last ones overlapping): found in
 * any case, and not found when its last byte is changed. */
static void test_contains_planted(void **state)
{
    (void)state;
    static const char word[] = "timeout_0123456789abcdefghijklmnopqrstuvwxyz_x";
    char text[256], low[64];
    for (size_t wl = 1; wl <= 40; wl += 3) {
        memcpy(low, word, wl);
        for (size_t tl = wl; tl <= 200; tl += 7) {
            for (size_t at = 0; at + wl <= tl; at++) {
                memset(text, 'q', tl);
                for (size_t j = 0; j < wl; j++)
                    text[at + j] = (char)((j + at) % 2 ? toupper((unsigned char)word[j]) : word[j]);
                assert_true(words_contains_folded(slice_make(text, tl), slice_make(low, wl)));
                text[at + wl - 1] = '#';
                assert_false(words_contains_folded(slice_make(text, tl), slice_make(low, wl)));
            }
        }
    }
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_hash_folds_case),
        cmocka_unit_test(test_hash2_stable),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_find_random),
        cmocka_unit_test(test_contains_folded),
        cmocka_unit_test(test_contains_planted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
