/* store/record.c: encode/decode round trips of a table of records, the exact
 * bytes of a small one, and corrupt inputs (every truncation, bad types,
 * bad bools, over-long varints, lengths past the end, trailing bytes, random
 * byte flips) that must give ERR_CORRUPT and never read out of bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "base/log.h"
#include "model/record.h"

/* clang-format off */ /* (it would spread the braces over four lines) */
#define S(x) {x, sizeof(x) - 1}
/* clang-format on */

struct rec_case {
    const char *name;
    struct rec_tag tags[4];
    size_t ntags;
    struct rec_field fields[6];
    size_t nfields;
};

static char long_str[300];

static struct rec_case cases[] = {
    {"empty", {{S(""), S("")}}, 0, {{S(""), REC_BOOL, {.b = false}}}, 0},
    {"one float", {{S(""), S("")}}, 0, {{S("value"), REC_FLOAT, {.f = 0.5}}}, 1},
    {"tags and all types",
     {{S("region"), S("eu")}, {S("az"), S("b")}, {S(""), S("")}},
     3,
     {{S("f"), REC_FLOAT, {.f = -1e300}},
      {S("i"), REC_INT, {.i = INT64_MIN}},
      {S("j"), REC_INT, {.i = INT64_MAX}},
      {S("u"), REC_UINT, {.u = UINT64_MAX}},
      {S("b"), REC_BOOL, {.b = true}},
      {S("s"), REC_STRING, {.s = S("hello")}}},
     6},
    {"small ints",
     {{S("t"), S("v")}},
     1,
     {{S("a"), REC_INT, {.i = -1}},
      {S("b"), REC_INT, {.i = 0}},
      {S("c"), REC_INT, {.i = 63}},
      {S("d"), REC_INT, {.i = -64}},
      {S("e"), REC_UINT, {.u = 127}},
      {S("f"), REC_UINT, {.u = 128}}},
     6},
    {"neg zero and empty string",
     {{S("k"), S("")}},
     1,
     {{S("z"), REC_FLOAT, {.f = -0.0}},
      {S("e"), REC_STRING, {.s = S("")}},
      {S("no"), REC_BOOL, {.b = false}}},
     3},
    {"long string", {{S(""), S("")}}, 0, {{S("msg"), REC_STRING, {.s = {long_str, 300}}}}, 1},
};

#define NCASES (sizeof cases / sizeof cases[0])

static void setup_long(void)
{
    for (size_t i = 0; i < sizeof long_str; i++)
        long_str[i] = (char)('a' + i % 26);
}

static bool field_eq(const struct rec_field *a, const struct rec_field *b)
{
    if (!slice_eq(a->key, b->key) || a->type != b->type)
        return false;
    switch (a->type) {
    case REC_FLOAT: return memcmp(&a->v.f, &b->v.f, sizeof(double)) == 0;
    case REC_INT: return a->v.i == b->v.i;
    case REC_UINT: return a->v.u == b->v.u;
    case REC_BOOL: return a->v.b == b->v.b;
    case REC_STRING: return slice_eq(a->v.s, b->v.s);
    }
    return false;
}

/* Decodes everything; returns ERR_OK or the first error. */
static int decode_all(struct slice v, struct rec_tag *tags, size_t *ntags, struct rec_field *fields,
                      size_t *nfields, size_t cap)
{
    struct rec_reader r;
    int rc = rec_reader_init(&r, v);
    if (rc)
        return rc;
    *ntags = *nfields = 0;
    struct rec_tag t;
    while ((rc = rec_next_tag(&r, &t)) == 1)
        if (*ntags < cap)
            tags[(*ntags)++] = t;
    if (rc < 0)
        return rc;
    struct rec_field f;
    while ((rc = rec_next_field(&r, &f)) == 1)
        if (*nfields < cap)
            fields[(*nfields)++] = f;
    return rc;
}

static void test_round_trip(void **state)
{
    (void)state;
    setup_long();
    for (size_t c = 0; c < NCASES; c++) {
        struct buf b = BUF_INIT;
        buf_puts(&b, "prefix"); /* encoding appends */
        rec_encode(&b, cases[c].tags, cases[c].ntags, cases[c].fields, cases[c].nfields);
        struct slice v = slice_make(b.data + 6, b.len - 6);
        struct rec_tag tags[8];
        struct rec_field fields[8];
        size_t nt, nf;
        assert_int_equal(decode_all(v, tags, &nt, fields, &nf, 8), ERR_OK);
        assert_int_equal(nt, cases[c].ntags);
        assert_int_equal(nf, cases[c].nfields);
        for (size_t i = 0; i < nt; i++) {
            assert_true(slice_eq(tags[i].key, cases[c].tags[i].key));
            assert_true(slice_eq(tags[i].value, cases[c].tags[i].value));
        }
        for (size_t i = 0; i < nf; i++)
            assert_true(field_eq(&fields[i], &cases[c].fields[i]));

        /* fields without reading the tags first */
        struct rec_reader r;
        struct rec_field f;
        assert_int_equal(rec_reader_init(&r, v), ERR_OK);
        for (size_t i = 0; i < nf; i++) {
            assert_int_equal(rec_next_field(&r, &f), 1);
            assert_true(field_eq(&f, &cases[c].fields[i]));
        }
        assert_int_equal(rec_next_field(&r, &f), 0);
        assert_int_equal(rec_next_field(&r, &f), 0);
        struct rec_tag t;
        assert_int_equal(rec_next_tag(&r, &t), 0);
        buf_destroy(&b);
    }
}

static void test_exact_bytes(void **state)
{
    (void)state;
    struct rec_tag t = {S("k"), S("v")};
    struct rec_field f[2] = {{S("i"), REC_INT, {.i = -2}}, {S("x"), REC_FLOAT, {.f = 1.0}}};
    struct buf b = BUF_INIT;
    rec_encode(&b, &t, 1, f, 2);
    static const unsigned char want[] = {1,   1,         'k', 1, 'v', 2, 1, 'i', REC_INT, 3,   1,
                                         'x', REC_FLOAT, 0,   0, 0,   0, 0, 0,   0xf0,    0x3f};
    assert_int_equal(b.len, sizeof want);
    assert_memory_equal(b.data, want, sizeof want);
    buf_destroy(&b);
}

struct corrupt_case {
    const char *name;
    const char *bytes;
    size_t len;
};

/* clang-format off */ /* (it would spread the braces over four lines) */
#define C(name, s) {name, s, sizeof(s) - 1}
/* clang-format on */

static const struct corrupt_case corrupt[] = {
    C("empty value", ""),
    C("no field count", "\x00"),
    C("tag key past the end", "\x01\x05"
                              "ab"),
    C("tag value missing", "\x01\x01k"),
    C("unknown type 0", "\x00\x01\x01k\x00"),
    C("unknown type 6", "\x00\x01\x01k\x06"),
    C("bool 2", "\x00\x01\x01k\x04\x02"),
    C("bool missing", "\x00\x01\x01k\x04"),
    C("float short", "\x00\x01\x01k\x01\x00\x00\x00"),
    C("string past the end", "\x00\x01\x01k\x05\x09"
                             "abc"),
    C("varint 11 bytes", "\x00\x01\x01k\x02\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"),
    C("varint overflows", "\x00\x01\x01k\x03\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02"),
    C("varint cut", "\x00\x01\x01k\x03\xff"),
    C("huge tag count", "\xff\xff\xff\xff\x0f"),
    C("huge length", "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"),
    C("field count too high", "\x00\x02\x01k\x04\x01"),
    C("trailing bytes", "\x00\x01\x01k\x04\x01zz"),
};

static void test_corrupt_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof corrupt / sizeof corrupt[0]; i++) {
        /* a heap copy of the exact length so ASan sees any overread */
        char *p = malloc(corrupt[i].len + 1);
        memcpy(p, corrupt[i].bytes, corrupt[i].len);
        struct rec_tag tags[4];
        struct rec_field fields[4];
        size_t nt, nf;
        int rc = decode_all(slice_make(p, corrupt[i].len), tags, &nt, fields, &nf, 4);
        if (rc != ERR_CORRUPT) {
            print_error("%s: got %d\n", corrupt[i].name, rc);
            fail();
        }
        free(p);
    }
}

static void test_every_truncation(void **state)
{
    (void)state;
    setup_long();
    for (size_t c = 0; c < NCASES; c++) {
        struct buf b = BUF_INIT;
        rec_encode(&b, cases[c].tags, cases[c].ntags, cases[c].fields, cases[c].nfields);
        for (size_t n = 0; n < b.len; n++) {
            char *p = malloc(n ? n : 1);
            memcpy(p, b.data, n);
            struct rec_tag tags[8];
            struct rec_field fields[8];
            size_t nt, nf;
            assert_int_equal(decode_all(slice_make(p, n), tags, &nt, fields, &nf, 8), ERR_CORRUPT);
            free(p);
        }
        /* one byte too many */
        buf_putc(&b, 0);
        struct rec_tag tags[8];
        struct rec_field fields[8];
        size_t nt, nf;
        assert_int_equal(decode_all(slice_make(b.data, b.len), tags, &nt, fields, &nf, 8),
                         ERR_CORRUPT);
        buf_destroy(&b);
    }
}

static void test_random_flips(void **state)
{
    (void)state;
    setup_long();
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    struct buf b = BUF_INIT;
    rec_encode(&b, cases[2].tags, cases[2].ntags, cases[2].fields, cases[2].nfields);
    for (int iter = 0; iter < 20000; iter++) {
        char *p = malloc(b.len);
        memcpy(p, b.data, b.len);
        for (int k = 0; k < 3; k++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            p[(seed >> 33) % b.len] ^= (char)(1u << ((seed >> 20) & 7));
        }
        struct rec_tag tags[8];
        struct rec_field fields[8];
        size_t nt, nf;
        int rc = decode_all(slice_make(p, b.len), tags, &nt, fields, &nf, 8);
        assert_true(rc == ERR_OK || rc == ERR_CORRUPT);
        free(p);
    }
    buf_destroy(&b);
}

/* The whole record by rec_walk_*: ERR_OK with what it found, or
 * ERR_CORRUPT for anything it does not take. */
static int walk_all(struct slice v, struct rec_tag *tags, size_t *ntags, struct rec_field *fields,
                    size_t *nfields, size_t cap)
{
    const char *p = v.ptr, *end = p + v.len;
    uint64_t n;
    *ntags = *nfields = 0;
    if (!(p = rec_walk_varint(p, end, &n)))
        return ERR_CORRUPT;
    for (; n; n--) {
        struct rec_tag t;
        if (!(p = rec_walk_bytes(p, end, &t.key)) || !(p = rec_walk_bytes(p, end, &t.value)))
            return ERR_CORRUPT;
        if (*ntags < cap)
            tags[(*ntags)++] = t;
    }
    if (!(p = rec_walk_varint(p, end, &n)))
        return ERR_CORRUPT;
    for (; n; n--) {
        struct rec_field f = {0};
        int type;
        if (!(p = rec_walk_field(p, end, &f.key, &type, &f.v.s)))
            return ERR_CORRUPT;
        f.type = (enum rec_type)type;
        if (*nfields < cap)
            fields[(*nfields)++] = f;
    }
    return p == end ? ERR_OK : ERR_CORRUPT;
}

/* The walk takes no record the reader refuses, and where both take one
 * they find the same tags and fields (a STRING's bytes; the walk steps
 * over the other types' payloads). */
static void check_walk(struct slice v)
{
    struct rec_tag rt[8], wt[8];
    struct rec_field rf[8], wf[8];
    size_t rnt = 0, rnf = 0, wnt, wnf;
    int rrc = decode_all(v, rt, &rnt, rf, &rnf, 8);
    int wrc = walk_all(v, wt, &wnt, wf, &wnf, 8);
    if (rrc != ERR_OK) {
        assert_int_equal(wrc, ERR_CORRUPT);
        return;
    }
    if (wrc != ERR_OK)
        return; /* a form the walk leaves to the reader (a 10-byte varint) */
    assert_int_equal(wnt, rnt);
    assert_int_equal(wnf, rnf);
    for (size_t i = 0; i < rnt; i++) {
        assert_true(slice_eq(wt[i].key, rt[i].key));
        assert_true(slice_eq(wt[i].value, rt[i].value));
    }
    for (size_t i = 0; i < rnf; i++) {
        assert_true(slice_eq(wf[i].key, rf[i].key));
        assert_int_equal(wf[i].type, rf[i].type);
        if (rf[i].type == REC_STRING)
            assert_true(slice_eq(wf[i].v.s, rf[i].v.s));
    }
}

static void test_walk_agrees(void **state)
{
    (void)state;
    setup_long();
    for (size_t i = 0; i < sizeof corrupt / sizeof corrupt[0]; i++) {
        char *p = malloc(corrupt[i].len + 1);
        memcpy(p, corrupt[i].bytes, corrupt[i].len);
        check_walk(slice_make(p, corrupt[i].len));
        free(p);
    }
    uint64_t seed = 0x2545f4914f6cdd1dULL;
    for (size_t c = 0; c < NCASES; c++) {
        struct buf b = BUF_INIT;
        rec_encode(&b, cases[c].tags, cases[c].ntags, cases[c].fields, cases[c].nfields);
        for (size_t n = 0; n <= b.len; n++) { /* every truncation, and the whole */
            char *p = malloc(n ? n : 1);
            memcpy(p, b.data, n);
            check_walk(slice_make(p, n));
            free(p);
        }
        for (int iter = 0; iter < 3000 && b.len; iter++) {
            char *p = malloc(b.len);
            memcpy(p, b.data, b.len);
            for (int k = 0; k < 2; k++) {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                p[(seed >> 33) % b.len] ^= (char)(1u << ((seed >> 20) & 7));
            }
            check_walk(slice_make(p, b.len));
            free(p);
        }
        buf_destroy(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),    cmocka_unit_test(test_exact_bytes),
        cmocka_unit_test(test_corrupt_table), cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_random_flips),  cmocka_unit_test(test_walk_agrees),
    };
    /* corruption reports are expected here by the thousand */
    log_set_level((enum log_level)(LOG_ERROR + 1));
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
