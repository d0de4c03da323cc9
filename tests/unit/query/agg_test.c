/* query/agg.h: the GROUP BY aggregation table. Randomized groups and values against a
 * brute-force answer for every aggregate (integer results bit for bit, float sums and AVG within
 * 1e-9, exact percentiles bit for bit, sketched ones within the stated 1%), the percentile sketch
 * on several distributions, max_groups, the streaming drop, time buckets and key bytes.
 * LB_SEED=N picks another seed; LB_SAN=1 runs less. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "query/agg.h"

/* the sketch's stated bound, with room for the rounding of log/exp */
#define PCT_TOL (AGG_PCT_ALPHA * (1 + 1e-9))

static uint64_t base_seed = 20261124; /* LB_SEED */
static uint64_t rng_state;

/* Each randomized test starts from its own state derived from base_seed, so LB_SEED=N with one
 * test reproduces it alone. */
static void reseed(uint64_t test)
{
    rng_state = base_seed ^ (test * 0xd1b54a32d192ed03ULL);
}

static uint64_t rnd(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rnd_below(uint64_t n)
{
    return n ? rnd() % n : 0;
}

static double rnd_unit(void) /* [0, 1) */
{
    return (double)(rnd() >> 11) * 0x1.0p-53;
}

static bool is_san(void)
{
    const char *s = getenv("LB_SAN");
    return s && *s == '1';
}

static struct agg_value vnull(void)
{
    struct agg_value v = {.kind = AGG_V_NULL};
    return v;
}

static struct agg_value vi(int64_t i)
{
    struct agg_value v = {.kind = AGG_V_INT, .i = i};
    return v;
}

static struct agg_value vu(uint64_t u)
{
    struct agg_value v = {.kind = AGG_V_UINT, .u = u};
    return v;
}

static struct agg_value vf(double f)
{
    struct agg_value v = {.kind = AGG_V_FLOAT, .f = f};
    return v;
}

static struct agg_value vb(bool b)
{
    struct agg_value v = {.kind = AGG_V_BOOL, .b = b};
    return v;
}

static struct agg_value vs(const char *s)
{
    struct agg_value v = {.kind = AGG_V_STRING, .s = slice_cstr(s)};
    return v;
}

static struct agg_table *mk(const struct agg_spec *specs, size_t n, size_t max_groups)
{
    struct agg_table_opts o = {.aggs = specs, .naggs = n, .max_groups = max_groups};
    struct agg_table *t = NULL;
    assert_int_equal(agg_table_new(&o, &t), ERR_OK);
    return t;
}

static struct agg_group *grp(struct agg_table *t, const char *key)
{
    struct agg_group *g = NULL;
    assert_int_equal(agg_group(t, slice_cstr(key), &g), ERR_OK);
    return g;
}

static struct agg_value res(struct agg_table *t, struct agg_group *g, size_t i)
{
    struct agg_value v;
    agg_result(t, g, i, &v);
    return v;
}

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Equal kind and value (floats bit for bit, strings byte for byte). */
static bool value_eq(const struct agg_value *a, const struct agg_value *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case AGG_V_NULL: return true;
    case AGG_V_INT: return a->i == b->i;
    case AGG_V_UINT: return a->u == b->u;
    case AGG_V_FLOAT: return same_bits(a->f, b->f);
    case AGG_V_BOOL: return a->b == b->b;
    case AGG_V_STRING: return slice_eq(a->s, b->s);
    }
    return false;
}

static void value_str(const struct agg_value *v, char *out, size_t n)
{
    switch (v->kind) {
    case AGG_V_NULL: snprintf(out, n, "NULL"); break;
    case AGG_V_INT: snprintf(out, n, "int %lld", (long long)v->i); break;
    case AGG_V_UINT: snprintf(out, n, "uint %llu", (unsigned long long)v->u); break;
    case AGG_V_FLOAT: snprintf(out, n, "float %.17g", v->f); break;
    case AGG_V_BOOL: snprintf(out, n, "bool %d", v->b); break;
    case AGG_V_STRING: snprintf(out, n, "string '%.*s'", (int)v->s.len, v->s.ptr); break;
    }
}

static void check_value(const struct agg_value *got, const struct agg_value *want, const char *what)
{
    if (value_eq(got, want))
        return;
    char a[128], b[128];
    value_str(got, a, sizeof a);
    value_str(want, b, sizeof b);
    print_error("%s: got %s, want %s\n", what, a, b);
    fail();
}

/* ---- the rules, by hand ---- */

static void test_rules(void **state)
{
    (void)state;
    const struct agg_spec specs[] = {
        {AGG_COUNT_STAR, 0}, {AGG_COUNT, 0}, {AGG_SUM, 0},  {AGG_AVG, 0},         {AGG_MIN, 0},
        {AGG_MAX, 0},        {AGG_FIRST, 0}, {AGG_LAST, 0}, {AGG_PERCENTILE, 50},
    };
    const size_t n = sizeof specs / sizeof specs[0];
    struct agg_table *t = mk(specs, n, 10);

    /* a group of NULLs: COUNT(*) counts them, COUNT is 0, the rest NULL */
    struct agg_group *g = grp(t, "nulls");
    for (int r = 0; r < 3; r++)
        for (size_t i = 0; i < n; i++) {
            struct agg_value v = vnull();
            assert_int_equal(agg_add(t, g, i, r == 0 ? NULL : &v, r), ERR_OK);
        }
    struct agg_value v = res(t, g, 0);
    check_value(&v, &(struct agg_value){.kind = AGG_V_INT, .i = 3}, "COUNT(*) of nulls");
    v = res(t, g, 1);
    check_value(&v, &(struct agg_value){.kind = AGG_V_INT, .i = 0}, "COUNT of nulls");
    for (size_t i = 2; i < n; i++) {
        v = res(t, g, i);
        check_value(&v, &(struct agg_value){.kind = AGG_V_NULL}, "aggregate of nulls");
    }
    assert_int_equal(agg_add(t, g, n, NULL, 0), ERR_INVAL);

    /* strings only: COUNT counts them, SUM/AVG/PERCENTILE ignore them, MIN/MAX bytewise */
    g = grp(t, "strings");
    const char *strs[] = {"b", "", "ab", "a", "abc", "b\x01"};
    char scratch[16];
    for (size_t r = 0; r < 6; r++) {
        strcpy(scratch, strs[r]);
        struct agg_value sv = vs(scratch);
        for (size_t i = 0; i < n; i++)
            agg_add(t, g, i, &sv, (int64_t)(r % 3)); /* ts 0 1 2 0 1 2 */
        memset(scratch, 'X', sizeof scratch);        /* the table copied the bytes */
    }
    v = res(t, g, 1);
    check_value(&v, &(struct agg_value){.kind = AGG_V_INT, .i = 6}, "COUNT of strings");
    v = res(t, g, 2);
    check_value(&v, &(struct agg_value){.kind = AGG_V_NULL}, "SUM of strings");
    v = res(t, g, 3);
    check_value(&v, &(struct agg_value){.kind = AGG_V_NULL}, "AVG of strings");
    v = res(t, g, 4);
    check_value(&v, &(struct agg_value){.kind = AGG_V_STRING, .s = slice_cstr("")}, "MIN str");
    v = res(t, g, 5);
    check_value(&v, &(struct agg_value){.kind = AGG_V_STRING, .s = slice_cstr("b\x01")}, "MAX str");
    /* FIRST: ts 0 first added ("b"); LAST: ts 2, last added ("b\x01") */
    v = res(t, g, 6);
    check_value(&v, &(struct agg_value){.kind = AGG_V_STRING, .s = slice_cstr("b")}, "FIRST");
    v = res(t, g, 7);
    check_value(&v, &(struct agg_value){.kind = AGG_V_STRING, .s = slice_cstr("b\x01")}, "LAST");
    v = res(t, g, 8);
    check_value(&v, &(struct agg_value){.kind = AGG_V_NULL}, "PERCENTILE of strings");

    /* mixed kinds: numbers win over strings, strings over bools; NaN ignored by MIN/MAX/SUM */
    g = grp(t, "mixed");
    struct agg_value mixed[] = {vb(true), vs("zz"), vf(NAN), vi(-3),
                                vs("a"),  vu(7),    vf(2.5), vb(false)};
    for (size_t r = 0; r < sizeof mixed / sizeof mixed[0]; r++)
        for (size_t i = 0; i < n; i++)
            agg_add(t, g, i, &mixed[r], 100 - (int64_t)r);
    v = res(t, g, 1);
    check_value(&v, &(struct agg_value){.kind = AGG_V_INT, .i = 8}, "COUNT counts NaN");
    v = res(t, g, 2);
    check_value(&v, &(struct agg_value){.kind = AGG_V_FLOAT, .f = 6.5}, "SUM mixed");
    v = res(t, g, 3);
    check_value(&v, &(struct agg_value){.kind = AGG_V_FLOAT, .f = 6.5 / 3}, "AVG mixed");
    v = res(t, g, 4);
    check_value(&v, &(struct agg_value){.kind = AGG_V_INT, .i = -3}, "MIN mixed");
    v = res(t, g, 5);
    check_value(&v, &(struct agg_value){.kind = AGG_V_UINT, .u = 7}, "MAX mixed");
    v = res(t, g, 6); /* smallest ts: the last row */
    check_value(&v, &(struct agg_value){.kind = AGG_V_BOOL, .b = false}, "FIRST mixed");
    v = res(t, g, 7); /* largest ts: the first row */
    check_value(&v, &(struct agg_value){.kind = AGG_V_BOOL, .b = true}, "LAST mixed");
    v = res(t, g, 8); /* -3, 2.5, 7: rank ceil(1.5) = 2 */
    check_value(&v, &(struct agg_value){.kind = AGG_V_FLOAT, .f = 2.5}, "PERCENTILE mixed");

    /* strings and bools: strings win; bools alone: false < true */
    g = grp(t, "sb");
    struct agg_value sb[] = {vb(false), vs("m"), vb(true), vs("k")};
    for (size_t r = 0; r < 4; r++) {
        agg_add(t, g, 4, &sb[r], 0);
        agg_add(t, g, 5, &sb[r], 0);
    }
    v = res(t, g, 4);
    check_value(&v, &(struct agg_value){.kind = AGG_V_STRING, .s = slice_cstr("k")}, "MIN s/b");
    v = res(t, g, 5);
    check_value(&v, &(struct agg_value){.kind = AGG_V_STRING, .s = slice_cstr("m")}, "MAX s/b");
    g = grp(t, "bools");
    struct agg_value bools[] = {vb(true), vb(false), vb(true)};
    for (size_t r = 0; r < 3; r++) {
        agg_add(t, g, 4, &bools[r], 0);
        agg_add(t, g, 5, &bools[r], 0);
    }
    v = res(t, g, 4);
    check_value(&v, &(struct agg_value){.kind = AGG_V_BOOL, .b = false}, "MIN bool");
    v = res(t, g, 5);
    check_value(&v, &(struct agg_value){.kind = AGG_V_BOOL, .b = true}, "MAX bool");

    /* FIRST/LAST keep NaN; infinities are values for MIN/MAX, IEEE for SUM */
    g = grp(t, "nonfinite");
    struct agg_value nf[] = {vf(NAN), vf(INFINITY), vf(1), vf(-INFINITY)};
    for (size_t r = 0; r < 4; r++)
        for (size_t i = 0; i < n; i++)
            agg_add(t, g, i, &nf[r], r == 0 ? -5 : 0);
    v = res(t, g, 6);
    assert_true(v.kind == AGG_V_FLOAT && isnan(v.f));
    v = res(t, g, 7);
    check_value(&v, &(struct agg_value){.kind = AGG_V_FLOAT, .f = -INFINITY}, "LAST -inf");
    v = res(t, g, 4);
    check_value(&v, &(struct agg_value){.kind = AGG_V_FLOAT, .f = -INFINITY}, "MIN -inf");
    v = res(t, g, 5);
    check_value(&v, &(struct agg_value){.kind = AGG_V_FLOAT, .f = INFINITY}, "MAX inf");
    v = res(t, g, 2);
    assert_true(v.kind == AGG_V_FLOAT && isnan(v.f)); /* inf + -inf */
    v = res(t, g, 8);                                 /* -inf, 1, inf: rank 2 */
    check_value(&v, &(struct agg_value){.kind = AGG_V_FLOAT, .f = 1}, "PERCENTILE inf");
    agg_table_free(t);
}

static void test_new_invalid(void **state)
{
    (void)state;
    struct agg_table *t = NULL;
    struct agg_spec bad_p[] = {{AGG_PERCENTILE, 100.5}};
    struct agg_table_opts o = {.aggs = bad_p, .naggs = 1, .max_groups = 1};
    assert_int_equal(agg_table_new(&o, &t), ERR_INVAL);
    bad_p[0].p = NAN;
    assert_int_equal(agg_table_new(&o, &t), ERR_INVAL);
    bad_p[0].p = -0.5;
    assert_int_equal(agg_table_new(&o, &t), ERR_INVAL);
    bad_p[0].fn = (enum agg_fn)99;
    bad_p[0].p = 50;
    assert_int_equal(agg_table_new(&o, &t), ERR_INVAL);
    bad_p[0].fn = AGG_PERCENTILE;
    o.max_groups = 0;
    assert_int_equal(agg_table_new(&o, &t), ERR_INVAL);
    assert_null(t);
    /* no aggregates: groups only */
    o.naggs = 0;
    o.aggs = NULL;
    o.max_groups = 3;
    assert_int_equal(agg_table_new(&o, &t), ERR_OK);
    grp(t, "a");
    grp(t, "");
    assert_int_equal(agg_count(t), 2);
    agg_table_free(t);
    agg_table_free(NULL);
}

/* ---- SUM and AVG ---- */

struct sum_case {
    const char *name;
    struct agg_value in[4];
    size_t n;
    struct agg_value want;
};

static void test_sum_overflow(void **state)
{
    (void)state;
    const struct sum_case cases[] = {
        {"fits", {vi(INT64_MAX), vi(1), vi(-1)}, 3, {.kind = AGG_V_INT, .i = INT64_MAX}},
        {"order free", {vi(1), vi(INT64_MAX), vi(-1)}, 3, {.kind = AGG_V_INT, .i = INT64_MAX}},
        {"min", {vi(INT64_MIN), vi(-1), vi(1)}, 3, {.kind = AGG_V_INT, .i = INT64_MIN}},
        {"past int64", {vi(INT64_MAX), vi(1)}, 2, {.kind = AGG_V_UINT, .u = 1ULL << 63}},
        {"uint", {vu(UINT64_MAX), vi(-1)}, 2, {.kind = AGG_V_UINT, .u = UINT64_MAX - 1}},
        {"uint back",
         {vu(UINT64_MAX), vi(INT64_MIN), vi(INT64_MIN)},
         3,
         {.kind = AGG_V_INT, .i = -1}},
        {"past uint64",
         {vu(UINT64_MAX), vu(1)},
         2,
         {.kind = AGG_V_FLOAT, .f = 18446744073709551616.0}},
        {"below int64",
         {vi(INT64_MIN), vi(-2048)},
         2,
         {.kind = AGG_V_FLOAT, .f = -9223372036854777856.0}},
        {"three max",
         {vi(INT64_MAX), vi(INT64_MAX), vi(INT64_MAX)},
         3,
         {.kind = AGG_V_FLOAT, .f = 27670116110564327424.0}},
        {"float", {vi(1), vf(0.5)}, 2, {.kind = AGG_V_FLOAT, .f = 1.5}},
        {"float exact ints",
         {vi(INT64_MAX), vf(0.0), vi(-INT64_MAX)},
         3,
         {.kind = AGG_V_FLOAT, .f = 0}},
        {"float 2^53+1",
         {vi((1LL << 53) + 1), vf(0.0), vi(-(1LL << 53))},
         3,
         {.kind = AGG_V_FLOAT, .f = 1}},
        {"nan ignored", {vi(2), vf(NAN)}, 2, {.kind = AGG_V_INT, .i = 2}},
        {"bool ignored", {vi(2), vb(true), vs("5")}, 3, {.kind = AGG_V_INT, .i = 2}},
        {"inf", {vi(2), vf(INFINITY)}, 2, {.kind = AGG_V_FLOAT, .f = INFINITY}},
        {"-inf", {vf(-INFINITY), vf(1e308)}, 2, {.kind = AGG_V_FLOAT, .f = -INFINITY}},
        {"overflow", {vf(1e308), vf(1e308)}, 2, {.kind = AGG_V_FLOAT, .f = INFINITY}},
        {"compensated", {vf(1e16), vf(1.0), vf(-1e16)}, 3, {.kind = AGG_V_FLOAT, .f = 1.0}},
    };
    const struct agg_spec specs[] = {{AGG_SUM, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct agg_table *t = mk(specs, 1, 1);
        struct agg_group *g = grp(t, "");
        for (size_t r = 0; r < cases[c].n; r++)
            agg_add(t, g, 0, &cases[c].in[r], 0);
        struct agg_value v = res(t, g, 0);
        check_value(&v, &cases[c].want, cases[c].name);
        agg_table_free(t);
    }
}

/* 1e6 values of about 1e9 (integers and floats): AVG within 1e-12 of the exact mean. */
static void test_avg_accuracy(void **state)
{
    (void)state;
    reseed(2);
    const struct agg_spec specs[] = {{AGG_AVG, 0}, {AGG_SUM, 0}};
    struct agg_table *t = mk(specs, 2, 2);
    struct agg_group *gi = grp(t, "int"), *gf = grp(t, "float");
    const int n = 1000000;
    __int128 isum = 0;
    long double fsum = 0;
    for (int r = 0; r < n; r++) {
        int64_t x = 1000000000 + (int64_t)rnd_below(1000) - 500;
        struct agg_value v = vi(x);
        agg_add(t, gi, 0, &v, 0);
        isum += x;
        double f = 1e9 + rnd_unit() * 1000 + 0.1;
        v = vf(f);
        agg_add(t, gf, 0, &v, 0);
        agg_add(t, gf, 1, &v, 0);
        fsum += f;
    }
    struct agg_value v = res(t, gi, 0);
    long double want = (long double)isum / n;
    assert_int_equal(v.kind, AGG_V_FLOAT);
    assert_true(fabsl(v.f - want) <= 1e-15L * want);
    v = res(t, gf, 0);
    want = fsum / n;
    assert_true(fabsl(v.f - want) <= 1e-12L * want);
    v = res(t, gf, 1);
    assert_true(fabsl(v.f - fsum) <= 1e-12L * fsum);
    agg_table_free(t);
}

/* ---- MIN/MAX across kinds, exactly ---- */

static void test_minmax_exact(void **state)
{
    (void)state;
    const struct agg_spec specs[] = {{AGG_MIN, 0}, {AGG_MAX, 0}};
    const struct {
        const char *name;
        struct agg_value a, b;
        int want_min; /* 0: a, 1: b */
        int want_max;
    } cases[] = {
        /* 2^63 - 1 as a double is 2^63, which is above INT64_MAX */
        {"int64 max vs 2^63", vi(INT64_MAX), vf(9223372036854775808.0), 0, 1},
        {"2^53+1 vs 2^53", vi((1LL << 53) + 1), vf(9007199254740992.0), 1, 0},
        {"-2^53-1 vs -2^53", vi(-(1LL << 53) - 1), vf(-9007199254740992.0), 0, 1},
        {"uint max vs 2^64", vu(UINT64_MAX), vf(18446744073709551616.0), 0, 1},
        {"uint vs int", vu(1ULL << 63), vi(INT64_MAX), 1, 0},
        {"uint vs -1", vu(0), vi(-1), 1, 0},
        {"fraction", vi(-3), vf(-3.5), 1, 0},
        {"fraction 2", vi(3), vf(3.25), 0, 1},
        {"neg float vs uint", vf(-0.5), vu(0), 0, 1},
        {"-inf vs int min", vf(-INFINITY), vi(INT64_MIN), 0, 1},
        {"equal: int wins", vf(5.0), vi(5), 1, 1},
        {"equal: int over uint", vu(5), vi(5), 1, 1},
        {"equal: uint over float", vf(5.0), vu(5), 1, 1},
        {"zeros", vf(0.0), vf(-0.0), 1, 0},
        {"zeros reversed", vf(-0.0), vf(0.0), 0, 1},
        {"int zero over -0.0", vf(-0.0), vi(0), 1, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int order = 0; order < 2; order++) {
            struct agg_table *t = mk(specs, 2, 1);
            struct agg_group *g = grp(t, "");
            const struct agg_value *first = order ? &cases[c].b : &cases[c].a;
            const struct agg_value *second = order ? &cases[c].a : &cases[c].b;
            for (size_t i = 0; i < 2; i++) {
                agg_add(t, g, i, first, 0);
                agg_add(t, g, i, second, 0);
            }
            struct agg_value v = res(t, g, 0);
            check_value(&v, cases[c].want_min ? &cases[c].b : &cases[c].a, cases[c].name);
            v = res(t, g, 1);
            check_value(&v, cases[c].want_max ? &cases[c].b : &cases[c].a, cases[c].name);
            agg_table_free(t);
        }
    }
}

/* ---- randomized against brute force ---- */

#define MAX_AGGS 12
#define MAX_STR 8

struct row {
    size_t group;
    int64_t ts;
    struct agg_value v[MAX_AGGS];
    char str[MAX_AGGS][MAX_STR]; /* the bytes of string values */
};

struct gen {
    unsigned w[6]; /* weights of NULL, INT, UINT, FLOAT, STRING, BOOL */
    bool big_ints, special_floats, int_floats;
};

static struct agg_value gen_value(const struct gen *gn, char *strbuf)
{
    unsigned total = 0;
    for (int k = 0; k < 6; k++)
        total += gn->w[k];
    unsigned x = (unsigned)rnd_below(total), k = 0;
    while (x >= gn->w[k])
        x -= gn->w[k++];
    switch (k) {
    case 0: return vnull();
    case 1:
        if (gn->big_ints && rnd_below(3) == 0)
            return vi((int64_t)rnd());
        return vi((int64_t)rnd_below(2001) - 1000);
    case 2:
        if (gn->big_ints && rnd_below(3) == 0)
            return vu(rnd());
        return vu(rnd_below(1000));
    case 3: {
        if (gn->special_floats) {
            static const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e300, -1e300};
            if (rnd_below(20) == 0)
                return vf(sp[rnd_below(7)]);
        }
        if (gn->int_floats)
            return vf((double)((int64_t)rnd_below(2001) - 1000));
        return vf((rnd_unit() - 0.5) * 2000);
    }
    case 4: {
        size_t len = rnd_below(MAX_STR - 1);
        for (size_t j = 0; j < len; j++)
            strbuf[j] = (char)("ab\0\xff"[rnd_below(4)]);
        struct agg_value v = {.kind = AGG_V_STRING, .s = slice_make(strbuf, len)};
        return v;
    }
    default: return vb(rnd_below(2));
    }
}

static bool is_num(enum agg_vkind k)
{
    return k == AGG_V_INT || k == AGG_V_UINT || k == AGG_V_FLOAT;
}

static long double as_ld(const struct agg_value *v)
{
    switch (v->kind) {
    case AGG_V_INT: return (long double)v->i;
    case AGG_V_UINT: return (long double)v->u;
    default: return (long double)v->f;
    }
}

static int class_of(enum agg_vkind k)
{
    return is_num(k) ? 2 : k == AGG_V_STRING ? 1 : k == AGG_V_BOOL ? 0 : -1;
}

/* Brute-force MIN/MAX "v better than best": long double holds int64, uint64 and double values
 * exactly (x86-64's 64-bit mantissa), so comparing through it is exact. */
static bool bf_better(const struct agg_value *v, const struct agg_value *best, bool is_max)
{
    if (best->kind == AGG_V_NULL || class_of(v->kind) > class_of(best->kind))
        return true;
    if (class_of(v->kind) < class_of(best->kind))
        return false;
    int c;
    if (is_num(v->kind)) {
        long double a = as_ld(v), b = as_ld(best);
        c = (a > b) - (a < b);
        if (c == 0) {
            if (v->kind != best->kind)
                return v->kind < best->kind;
            if (v->kind == AGG_V_FLOAT && signbit(v->f) != signbit(best->f))
                return is_max ? !signbit(v->f) : !!signbit(v->f);
        }
    } else if (v->kind == AGG_V_STRING) {
        c = slice_cmp(v->s, best->s);
    } else {
        c = (int)v->b - (int)best->b;
    }
    return is_max ? c > 0 : c < 0;
}

/* qsort order of doubles: by value, -0.0 before +0.0 (as agg.c's exact percentiles) */
static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    if (x != y)
        return (x > y) - (x < y);
    return !signbit(x) - !signbit(y);
}

/* nearest rank, computed independently in long double */
static size_t bf_rank(double p, size_t n)
{
    long double x = (long double)p * (long double)n / 100.0L;
    long double r = ceill(x - 1e-9L);
    if (r < 1)
        r = 1;
    if (r > n)
        r = n;
    return (size_t)r;
}

struct ctx {
    uint64_t seed;
    int round;
    size_t group, agg;
};

static void check_float_near(const struct ctx *c, const char *what, double got, long double want,
                             long double tol)
{
    if (isnan(got) && isnan((double)want))
        return;
    if (isinf((double)want) || isinf(got)) {
        if (got == (double)want)
            return;
    } else if (fabsl((long double)got - want) <= tol) {
        return;
    }
    print_error("seed %llu round %d group %zu agg %zu %s: got %.17g want %.17Lg (tol %Lg)\n",
                (unsigned long long)c->seed, c->round, c->group, c->agg, what, got, want, tol);
    fail();
}

static void check_exact(const struct ctx *c, const char *what, const struct agg_value *got,
                        const struct agg_value *want)
{
    if (value_eq(got, want))
        return;
    char a[128], b[128];
    value_str(got, a, sizeof a);
    value_str(want, b, sizeof b);
    print_error("seed %llu round %d group %zu agg %zu %s: got %s want %s\n",
                (unsigned long long)c->seed, c->round, c->group, c->agg, what, a, b);
    fail();
}

static void bf_sum(const struct ctx *c, const struct row *rows, size_t nrows, size_t gi, size_t ai,
                   bool is_avg, const struct agg_value *got)
{
    __int128 isum = 0;
    long double fsum = 0, abs_sum = 0;
    size_t n = 0;
    bool has_float = false, pinf = false, ninf = false;
    for (size_t r = 0; r < nrows; r++) {
        const struct agg_value *v = &rows[r].v[ai];
        if (rows[r].group != gi || !is_num(v->kind))
            continue;
        if (v->kind == AGG_V_FLOAT) {
            if (isnan(v->f))
                continue;
            has_float = true;
            if (isinf(v->f))
                *(v->f > 0 ? &pinf : &ninf) = true;
            else
                fsum += v->f;
            abs_sum += fabs(v->f);
        } else {
            isum += v->kind == AGG_V_INT ? (__int128)v->i : (__int128)v->u;
            abs_sum += fabsl(as_ld(v));
        }
        n++;
    }
    if (n == 0) {
        struct agg_value want = vnull();
        check_exact(c, is_avg ? "AVG" : "SUM", got, &want);
        return;
    }
    if (!is_avg && !has_float) {
        struct agg_value want;
        if (isum >= INT64_MIN && isum <= INT64_MAX)
            want = vi((int64_t)isum);
        else if (isum > 0 && isum <= (__int128)UINT64_MAX)
            want = vu((uint64_t)isum);
        else
            want = vf((double)isum);
        check_exact(c, "SUM", got, &want);
        return;
    }
    long double total = fsum + (long double)isum;
    if (pinf && ninf)
        total = NAN;
    else if (pinf)
        total = INFINITY;
    else if (ninf)
        total = -INFINITY;
    if (got->kind != AGG_V_FLOAT) {
        print_error("seed %llu round %d: %s kind %d\n", (unsigned long long)c->seed, c->round,
                    is_avg ? "AVG" : "SUM", got->kind);
        fail();
    }
    if (is_avg)
        check_float_near(c, "AVG", got->f, total / n,
                         1e-9L * fabsl(total / n) + 1e-12L * abs_sum / n);
    else
        check_float_near(c, "SUM", got->f, total, 1e-12L * abs_sum);
}

static void bf_pct(const struct ctx *c, const struct row *rows, size_t nrows, size_t gi, size_t ai,
                   double p, const struct agg_value *got)
{
    double *xs = malloc((nrows + 1) * sizeof *xs);
    size_t n = 0;
    for (size_t r = 0; r < nrows; r++) {
        const struct agg_value *v = &rows[r].v[ai];
        if (rows[r].group != gi || !is_num(v->kind))
            continue;
        if (v->kind == AGG_V_FLOAT && isnan(v->f))
            continue;
        xs[n++] = (double)as_ld(v);
    }
    if (n == 0) {
        struct agg_value want = vnull();
        check_exact(c, "PERCENTILE", got, &want);
        free(xs);
        return;
    }
    qsort(xs, n, sizeof *xs, dcmp);
    double want = xs[bf_rank(p, n) - 1];
    /* the largest magnitude of want's sign: a value more than AGG_PCT_MAX_BINS bins below it
     * may have collapsed into a larger magnitude */
    double maxmag = 0;
    for (size_t k = 0; k < n; k++)
        if (isfinite(xs[k]) && (xs[k] > 0) == (want > 0) && fabs(xs[k]) > maxmag)
            maxmag = fabs(xs[k]);
    double gamma = (1 + AGG_PCT_ALPHA) / (1 - AGG_PCT_ALPHA);
    bool is_kept = fabs(want) >= maxmag / pow(gamma, AGG_PCT_MAX_BINS - 2);
    free(xs);
    if (got->kind != AGG_V_FLOAT)
        fail_msg("PERCENTILE kind %d", got->kind);
    if (n <= AGG_PCT_EXACT) {
        if (!same_bits(got->f, want)) {
            print_error("seed %llu round %d group %zu agg %zu p %g n %zu: got %.17g want %.17g\n",
                        (unsigned long long)c->seed, c->round, gi, ai, p, n, got->f, want);
            fail();
        }
    } else if (is_kept || want == 0 || isinf(want)) {
        check_float_near(c, "PERCENTILE (sketch)", got->f, want, PCT_TOL * fabs(want));
    } else if (!(fabs(got->f) >= fabs(want) * (1 - PCT_TOL)) || (got->f > 0) != (want > 0)) {
        print_error("seed %llu round %d group %zu agg %zu p %g: collapsed got %.17g want %.17g\n",
                    (unsigned long long)c->seed, c->round, gi, ai, p, got->f, want);
        fail();
    }
}

static void bf_check(const struct ctx *c0, const struct row *rows, size_t nrows, size_t gi,
                     size_t ai, const struct agg_spec *spec, const struct agg_value *got)
{
    struct ctx c = *c0;
    c.group = gi;
    c.agg = ai;
    struct agg_value want = vnull();
    switch (spec->fn) {
    case AGG_COUNT_STAR:
    case AGG_COUNT: {
        int64_t n = 0;
        for (size_t r = 0; r < nrows; r++)
            if (rows[r].group == gi &&
                (spec->fn == AGG_COUNT_STAR || rows[r].v[ai].kind != AGG_V_NULL))
                n++;
        want = vi(n);
        check_exact(&c, "COUNT", got, &want);
        return;
    }
    case AGG_SUM:
    case AGG_AVG: bf_sum(&c, rows, nrows, gi, ai, spec->fn == AGG_AVG, got); return;
    case AGG_PERCENTILE: bf_pct(&c, rows, nrows, gi, ai, spec->p, got); return;
    case AGG_MIN:
    case AGG_MAX:
        for (size_t r = 0; r < nrows; r++) {
            const struct agg_value *v = &rows[r].v[ai];
            if (rows[r].group != gi || v->kind == AGG_V_NULL ||
                (v->kind == AGG_V_FLOAT && isnan(v->f)))
                continue;
            if (bf_better(v, &want, spec->fn == AGG_MAX))
                want = *v;
        }
        check_exact(&c, spec->fn == AGG_MIN ? "MIN" : "MAX", got, &want);
        return;
    case AGG_FIRST:
    case AGG_LAST: {
        int64_t best_ts = 0;
        for (size_t r = 0; r < nrows; r++) {
            const struct agg_value *v = &rows[r].v[ai];
            if (rows[r].group != gi || v->kind == AGG_V_NULL)
                continue;
            bool take = want.kind == AGG_V_NULL ||
                        (spec->fn == AGG_FIRST ? rows[r].ts < best_ts : rows[r].ts >= best_ts);
            if (take) {
                want = *v;
                best_ts = rows[r].ts;
            }
        }
        check_exact(&c, spec->fn == AGG_FIRST ? "FIRST" : "LAST", got, &want);
        return;
    }
    }
}

/* The rows dealt at random to two tables, as the two threads of a split
 * query read them, the second merged into the first (agg_merge): the same
 * answers as one table of every row. */
static void check_merged(const struct ctx *c, const struct agg_spec *specs, size_t naggs,
                         const struct row *rows, size_t nrows, char (*keys)[24],
                         struct agg_group *const *groups)
{
    struct agg_table *half[2] = {mk(specs, naggs, 64), mk(specs, naggs, 64)};
    char scratch[MAX_STR];
    for (size_t r = 0; r < nrows; r++) {
        struct agg_table *t = half[rnd_below(2)];
        struct agg_group *g = NULL;
        assert_int_equal(agg_group(t, slice_cstr(keys[rows[r].group]), &g), ERR_OK);
        for (size_t i = 0; i < naggs; i++) {
            struct agg_value in = rows[r].v[i];
            if (in.kind == AGG_V_STRING) {
                memcpy(scratch, in.s.ptr, in.s.len);
                in.s.ptr = scratch;
            }
            assert_int_equal(agg_add(t, g, i, &in, rows[r].ts), ERR_OK);
            memset(scratch, 'Z', sizeof scratch);
        }
    }
    assert_int_equal(agg_merge(half[0], half[1]), ERR_OK);
    agg_table_free(half[1]);
    for (size_t gi = 0; gi < 64; gi++) {
        if (!groups[gi])
            continue;
        struct agg_group *g = NULL;
        assert_int_equal(agg_group(half[0], slice_cstr(keys[gi]), &g), ERR_OK);
        for (size_t i = 0; i < naggs; i++) {
            struct agg_value got = res(half[0], g, i);
            bf_check(c, rows, nrows, gi, i, &specs[i], &got);
        }
    }
    agg_table_free(half[0]);
}

static void test_random(void **state)
{
    (void)state;
    reseed(1);
    uint64_t seed = base_seed;
    int rounds = is_san() ? 60 : 300;
    static const double ps[] = {0, 1, 10, 25, 33.3, 50, 66.7, 70, 90, 99, 99.9, 100};
    struct row *rows = malloc(6000 * sizeof *rows);
    for (int round = 0; round < rounds; round++) {
        struct ctx c = {.seed = seed, .round = round};
        size_t naggs = 1 + rnd_below(MAX_AGGS);
        struct agg_spec specs[MAX_AGGS];
        for (size_t i = 0; i < naggs; i++) {
            specs[i].fn = (enum agg_fn)rnd_below(AGG_PERCENTILE + 1);
            specs[i].p = rnd_below(2) ? ps[rnd_below(12)] : rnd_unit() * 100;
        }
        struct gen gn;
        for (int k = 0; k < 6; k++)
            gn.w[k] = (unsigned)rnd_below(4);
        gn.w[1 + rnd_below(5)] += 1; /* never all zero */
        gn.big_ints = rnd_below(3) == 0;
        gn.special_floats = rnd_below(3) == 0;
        gn.int_floats = rnd_below(3) == 0;
        size_t ngroups = 1 + rnd_below(round % 5 == 0 ? 3 : 60);
        size_t nrows = rnd_below(round % 7 == 0 ? 6000 : 1500);
        int64_t ts_range = 1 + (int64_t)rnd_below(round % 2 ? 10 : 100000);
        /* keys: the empty key, then "0", "1", ... ("1" a proper prefix of "10") */
        char keys[64][24] = {""};
        for (size_t gi = 1; gi < ngroups; gi++)
            snprintf(keys[gi], sizeof keys[gi], "%zu", gi - 1);

        struct agg_table *t = mk(specs, naggs, ngroups);
        struct agg_group *groups[64] = {0};
        char scratch[MAX_STR];
        for (size_t r = 0; r < nrows; r++) {
            struct row *row = &rows[r];
            row->group = rnd_below(ngroups);
            row->ts = (int64_t)rnd_below((uint64_t)ts_range) - ts_range / 2;
            struct agg_group *g = NULL;
            assert_int_equal(agg_group(t, slice_cstr(keys[row->group]), &g), ERR_OK);
            if (groups[row->group])
                assert_ptr_equal(g, groups[row->group]);
            groups[row->group] = g;
            for (size_t i = 0; i < naggs; i++) {
                row->v[i] = gen_value(&gn, row->str[i]);
                struct agg_value in = row->v[i];
                if (in.kind == AGG_V_STRING) { /* passed from a buffer reused at once */
                    memcpy(scratch, in.s.ptr, in.s.len);
                    in.s.ptr = scratch;
                }
                assert_int_equal(agg_add(t, g, i, &in, row->ts), ERR_OK);
                memset(scratch, 'Z', sizeof scratch);
            }
        }
        /* the groups seen, in key order */
        struct agg_group *const *sorted = NULL;
        size_t n = agg_sorted(t, &sorted);
        size_t seen = 0;
        for (size_t gi = 0; gi < ngroups; gi++)
            seen += groups[gi] != NULL;
        assert_int_equal(n, seen);
        for (size_t k = 1; k < n; k++)
            assert_true(slice_cmp(agg_group_key(sorted[k - 1]), agg_group_key(sorted[k])) < 0);
        for (size_t gi = 0; gi < ngroups; gi++) {
            if (!groups[gi])
                continue;
            assert_true(slice_eq(agg_group_key(groups[gi]), slice_cstr(keys[gi])));
            for (size_t i = 0; i < naggs; i++) {
                struct agg_value got = res(t, groups[gi], i);
                bf_check(&c, rows, nrows, gi, i, &specs[i], &got);
            }
        }
        if (agg_mergeable(t))
            check_merged(&c, specs, naggs, rows, nrows, keys, groups);
        agg_table_free(t);
    }
    free(rows);
}

/* ---- percentiles: exact and the sketch ---- */

static void test_percentile_exact(void **state)
{
    (void)state;
    static const struct {
        double p;
        double want;
    } cases[] = {{0, 1}, {25, 1}, {25.1, 2}, {50, 2}, {50.5, 3}, {75, 3}, {99, 4}, {100, 4}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct agg_spec spec = {AGG_PERCENTILE, cases[c].p};
        struct agg_table *t = mk(&spec, 1, 1);
        struct agg_group *g = grp(t, "");
        struct agg_value in[] = {vi(4), vu(2), vf(3), vi(1)};
        for (size_t r = 0; r < 4; r++)
            agg_add(t, g, 0, &in[r], 0);
        struct agg_value v = res(t, g, 0);
        check_value(&v, &(struct agg_value){.kind = AGG_V_FLOAT, .f = cases[c].want}, "p");
        agg_table_free(t);
    }
    /* p = 70 of 10 values is rank 7 (0.7 * 10 is 7.000000000000001 in doubles) */
    struct agg_spec spec = {AGG_PERCENTILE, 70};
    struct agg_table *t = mk(&spec, 1, 1);
    struct agg_group *g = grp(t, "");
    for (int r = 1; r <= 10; r++) {
        struct agg_value v = vi(r);
        agg_add(t, g, 0, &v, 0);
    }
    struct agg_value v = res(t, g, 0);
    check_value(&v, &(struct agg_value){.kind = AGG_V_FLOAT, .f = 7}, "p70 of 10");
    /* exact up to AGG_PCT_EXACT values, adding after reading keeps working */
    for (int r = 11; r <= AGG_PCT_EXACT; r++) {
        struct agg_value x = vi(r);
        agg_add(t, g, 0, &x, 0);
    }
    v = res(t, g, 0);
    check_value(&v, &(struct agg_value){.kind = AGG_V_FLOAT, .f = ceil(0.7 * AGG_PCT_EXACT)},
                "p70 exact at the limit");
    agg_table_free(t);
}

enum dist { D_UNIFORM, D_EXP, D_LOGNORMAL, D_NORMAL, D_EQUAL, D_MIXED, D_INTS, D_TINY, D_COUNT };
static const char *const dist_names[] = {"uniform",   "exponential", "lognormal", "normal",
                                         "all-equal", "mixed",       "integers",  "tiny"};

static double gauss(void)
{
    double u = rnd_unit(), v = rnd_unit();
    return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

static struct agg_value draw(enum dist d)
{
    switch (d) {
    case D_UNIFORM: return vf(rnd_unit() * 1000);
    case D_EXP: return vf(-log(1 - rnd_unit()) * 0.005);
    case D_LOGNORMAL: return vf(exp(3 + 2 * gauss()));
    case D_NORMAL: return vf(gauss() * 100 + 20);
    case D_EQUAL: return vf(42.4242);
    case D_MIXED: { /* negatives, zeros, infinities, integers of both signs */
        uint64_t k = rnd_below(100);
        if (k == 0)
            return vf(INFINITY);
        if (k == 1)
            return vf(-INFINITY);
        if (k < 10)
            return vf(0.0);
        if (k < 40)
            return vi((int64_t)rnd_below(2000001) - 1000000);
        return vf(exp(gauss() * 5) * (rnd_below(2) ? 1 : -1));
    }
    case D_INTS: return vu(rnd_below(100000));
    default: return vf(exp(gauss()) * 1e-200);
    }
}

static void test_percentile_sketch(void **state)
{
    (void)state;
    reseed(3);
    static const double ps[] = {0, 0.1, 1, 5, 10, 25, 33.3, 50, 66.7, 75, 90, 95, 99, 99.9, 100};
    const size_t np = sizeof ps / sizeof ps[0];
    struct agg_spec specs[sizeof ps / sizeof ps[0]];
    for (size_t i = 0; i < np; i++)
        specs[i] = (struct agg_spec){AGG_PERCENTILE, ps[i]};
    size_t n = is_san() ? 20000 : 200000;
    double *xs = malloc(n * sizeof *xs);
    for (int d = 0; d < D_COUNT; d++) {
        struct agg_table *t = mk(specs, np, 1);
        struct agg_group *g = grp(t, "");
        for (size_t r = 0; r < n; r++) {
            struct agg_value v = draw((enum dist)d);
            xs[r] = v.kind == AGG_V_INT ? (double)v.i : v.kind == AGG_V_UINT ? (double)v.u : v.f;
            for (size_t i = 0; i < np; i++)
                agg_add(t, g, i, &v, 0);
        }
        qsort(xs, n, sizeof *xs, dcmp);
        double worst = 0;
        for (size_t i = 0; i < np; i++) {
            double want = xs[bf_rank(ps[i], n) - 1];
            struct agg_value v = res(t, g, i);
            assert_int_equal(v.kind, AGG_V_FLOAT);
            double err = want == 0 || isinf(want) ? (v.f == want ? 0 : INFINITY)
                                                  : fabs(v.f - want) / fabs(want);
            if (err > worst)
                worst = err;
            if (err > PCT_TOL) {
                print_error("%s p%g: got %.17g want %.17g (relative error %g)\n", dist_names[d],
                            ps[i], v.f, want, err);
                fail();
            }
        }
        /* p0 and p100 are exact (clamped to the min and max seen) */
        struct agg_value v = res(t, g, 0);
        assert_true(v.f == xs[0]);
        v = res(t, g, np - 1);
        assert_true(v.f == xs[n - 1]);
        uint64_t mem = agg_memory(t);
        print_message("# %-11s n %zu: worst relative error %.5f%%, %llu bytes for %zu sketches\n",
                      dist_names[d], n, worst * 100, (unsigned long long)mem, np);
        assert_true(mem <= 4096 + np * (2 * AGG_PCT_MAX_BINS * 8 + 256));
        agg_table_free(t);
    }
    free(xs);
}

/* Magnitudes from 1e-300 to 1e300 (a ratio far beyond 2048 bins): memory stays bounded, the
 * largest magnitudes keep the stated error, the collapsed smallest only err toward larger
 * magnitudes. */
static void test_percentile_collapse(void **state)
{
    (void)state;
    reseed(4);
    static const double ps[] = {0, 1, 10, 50, 90, 95, 99, 99.9, 100};
    const size_t np = sizeof ps / sizeof ps[0];
    struct agg_spec specs[sizeof ps / sizeof ps[0]];
    for (size_t i = 0; i < np; i++)
        specs[i] = (struct agg_spec){AGG_PERCENTILE, ps[i]};
    for (int sign = 1; sign >= -1; sign -= 2) {
        struct agg_table *t = mk(specs, np, 1);
        struct agg_group *g = grp(t, "");
        size_t n = 50000;
        double *xs = malloc(n * sizeof *xs);
        double maxmag = 0;
        for (size_t r = 0; r < n; r++) {
            double x = sign * pow(10, (rnd_unit() - 0.5) * 600);
            xs[r] = x;
            if (fabs(x) > maxmag)
                maxmag = fabs(x);
            struct agg_value v = vf(x);
            for (size_t i = 0; i < np; i++)
                agg_add(t, g, i, &v, 0);
        }
        qsort(xs, n, sizeof *xs, dcmp);
        double gamma = (1 + AGG_PCT_ALPHA) / (1 - AGG_PCT_ALPHA);
        double kept = maxmag / pow(gamma, AGG_PCT_MAX_BINS - 2); /* surely within the window */
        for (size_t i = 0; i < np; i++) {
            double want = xs[bf_rank(ps[i], n) - 1];
            struct agg_value v = res(t, g, i);
            double err = fabs(v.f - want) / fabs(want);
            if (fabs(want) >= kept) {
                if (err > PCT_TOL) {
                    print_error("sign %d p%g: got %g want %g\n", sign, ps[i], v.f, want);
                    fail();
                }
            } else if (!(fabs(v.f) >= fabs(want) * (1 - PCT_TOL))) {
                print_error("sign %d p%g: collapsed got %g want %g\n", sign, ps[i], v.f, want);
                fail();
            }
        }
        assert_true(agg_memory(t) <= 4096 + np * (2 * AGG_PCT_MAX_BINS * 8 + 256));
        free(xs);
        agg_table_free(t);
    }
}

/* ---- max_groups ---- */

static void test_max_groups(void **state)
{
    (void)state;
    const struct agg_spec specs[] = {{AGG_COUNT_STAR, 0}, {AGG_LAST, 0}};
    for (size_t limit = 1; limit <= 40; limit += 13) {
        struct agg_table *t = mk(specs, 2, limit);
        char key[32];
        for (size_t k = 0; k < limit; k++) {
            snprintf(key, sizeof key, "a%03zu", k);
            struct agg_group *g = grp(t, key);
            struct agg_value v = vs(key);
            agg_add(t, g, 0, NULL, 0);
            agg_add(t, g, 1, &v, 0);
        }
        assert_int_equal(agg_count(t), limit);
        uint64_t mem = agg_memory(t);
        struct agg_group *g = (struct agg_group *)&g;
        assert_int_equal(agg_group(t, slice_cstr("b"), &g), ERR_TOOBIG);
        assert_ptr_equal(g, (struct agg_group *)&g); /* not written */
        assert_int_equal(agg_group(t, slice_cstr(""), &g), ERR_TOOBIG);
        assert_int_equal(agg_memory(t), mem);
        assert_int_equal(agg_count(t), limit);
        /* still usable: the existing groups take rows */
        for (size_t k = 0; k < limit; k++) {
            snprintf(key, sizeof key, "a%03zu", k);
            agg_add(t, grp(t, key), 0, NULL, 0);
        }
        struct agg_group *const *gs;
        assert_int_equal(agg_sorted(t, &gs), limit);
        for (size_t k = 0; k < limit; k++) {
            struct agg_value v = res(t, gs[k], 0);
            assert_int_equal(v.i, 2);
            snprintf(key, sizeof key, "a%03zu", k);
            v = res(t, gs[k], 1);
            assert_true(slice_eq(v.s, slice_cstr(key)));
        }
        /* dropping makes room again */
        assert_int_equal(agg_drop_before(t, slice_cstr("a001")), 1);
        assert_int_equal(agg_count(t), limit - 1);
        grp(t, "b");
        assert_int_equal(agg_group(t, slice_cstr("c"), &g), ERR_TOOBIG);
        agg_table_free(t);
    }
}

/* agg_drop_before on random keys: the right groups go, the sorted array stays valid and in
 * order, groups that remain keep their state, memory comes back. */
static void test_drop(void **state)
{
    (void)state;
    reseed(8);
    const struct agg_spec specs[] = {{AGG_COUNT_STAR, 0}, {AGG_MAX, 0}, {AGG_PERCENTILE, 50}};
    struct agg_table *t = mk(specs, 3, 100000);
    uint64_t empty = agg_memory(t);
    for (int round = 0; round < 20; round++) {
        /* keys "a" + 0..4 random bytes; each group gets its key as MAX and 300 values */
        size_t n = 1 + rnd_below(3000);
        for (size_t k = 0; k < n; k++) {
            char key[6] = "a";
            size_t len = 1 + rnd_below(5);
            for (size_t j = 1; j < len; j++)
                key[j] = (char)rnd_below(256);
            struct agg_group *g = NULL;
            assert_int_equal(agg_group(t, slice_make(key, len), &g), ERR_OK);
            struct agg_value v = {.kind = AGG_V_STRING, .s = slice_make(key, len)};
            agg_add(t, g, 0, NULL, 0);
            agg_add(t, g, 1, &v, 0);
            for (int r = 0; r < (k % 50 == 0 ? 300 : 3); r++) {
                struct agg_value x = vi(r);
                agg_add(t, g, 2, &x, 0);
            }
        }
        struct agg_group *const *gs;
        size_t total = agg_sorted(t, &gs);
        char bound[3] = {'a', (char)rnd_below(256), (char)rnd_below(256)};
        struct slice b = slice_make(bound, 1 + rnd_below(3));
        size_t below = 0;
        while (below < total && slice_cmp(agg_group_key(gs[below]), b) < 0)
            below++;
        uint64_t before = agg_memory(t);
        assert_int_equal(agg_drop_before(t, b), below);
        assert_int_equal(agg_count(t), total - below);
        if (below)
            assert_true(agg_memory(t) < before);
        /* still sorted without new groups, every group findable with its state */
        size_t left = agg_sorted(t, &gs);
        assert_int_equal(left, total - below);
        for (size_t k = 0; k < left; k++) {
            struct slice key = agg_group_key(gs[k]);
            assert_true(slice_cmp(key, b) >= 0);
            if (k)
                assert_true(slice_cmp(agg_group_key(gs[k - 1]), key) < 0);
            struct agg_group *g = NULL;
            assert_int_equal(agg_group(t, key, &g), ERR_OK);
            assert_ptr_equal(g, gs[k]);
            struct agg_value v = res(t, g, 1);
            assert_true(v.kind == AGG_V_STRING && slice_eq(v.s, key));
        }
        assert_int_equal(agg_count(t), left);
    }
    /* everything ("a..." < "b") goes: the memory of the groups comes back (the sorted array's
     * capacity stays) */
    struct agg_group *const *gs;
    agg_sorted(t, &gs);
    agg_drop_before(t, slice_cstr("b"));
    assert_int_equal(agg_count(t), 0);
    assert_true(agg_memory(t) <= empty + 100000 * sizeof(void *));
    assert_int_equal(agg_drop_before(t, slice_cstr("c")), 0);
    agg_table_free(t);
}

/* ---- streaming GROUP BY time bucket ---- */

struct emitted {
    size_t n;
    struct agg_value *v;      /* n * naggs */
    char (*keys)[16];         /* n keys of 9 bytes (bucket + host) */
    char (*strs)[4][MAX_STR]; /* copies of string results */
};

static void emit(struct agg_table *t, struct agg_group *g, size_t naggs, struct emitted *e)
{
    struct slice k = agg_group_key(g);
    assert_int_equal(k.len, 9);
    memcpy(e->keys[e->n], k.ptr, k.len);
    for (size_t i = 0; i < naggs; i++) {
        struct agg_value v = res(t, g, i);
        if (v.kind == AGG_V_STRING) {
            memcpy(e->strs[e->n][i], v.s.ptr, v.s.len);
            v.s.ptr = e->strs[e->n][i];
        }
        e->v[e->n * naggs + i] = v;
    }
    e->n++;
}

static int cmp_ts(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Feeds rows (ts sorted in the feed's direction) keyed [bucket][host]; with is_stream the table
 * holds at most hosts groups and emits and drops each bucket as the next one opens. */
static void stream_feed(const int64_t *ts, const unsigned char *host, const int64_t *val,
                        size_t nrows, bool is_desc, bool is_stream, size_t hosts, struct emitted *e)
{
    const struct agg_spec specs[] = {{AGG_COUNT_STAR, 0},
                                     {AGG_SUM, 0},
                                     {AGG_LAST, 0},
                                     {AGG_PERCENTILE, 90}};
    const int64_t width = 60000000000LL, offset = 10000000000LL;
    struct agg_table *t = mk(specs, 4, is_stream ? hosts : nrows);
    bool has_bucket = false;
    int64_t cur = 0;
    uint64_t peak = 0;
    for (size_t r = 0; r < nrows; r++) {
        int64_t b = agg_time_bucket(ts[r], width, offset);
        unsigned char key[9];
        (is_desc ? agg_key_i64_desc : agg_key_i64)(b, key);
        if (is_stream && (!has_bucket || b != cur)) {
            struct slice prefix = slice_make(key, 8);
            struct agg_group *const *gs;
            size_t n = agg_sorted(t, &gs), k = 0;
            for (; k < n && slice_cmp(agg_group_key(gs[k]), prefix) < 0; k++)
                emit(t, gs[k], 4, e);
            assert_int_equal(k, n); /* everything held is complete */
            assert_int_equal(agg_drop_before(t, prefix), k);
            assert_int_equal(agg_count(t), 0);
            assert_int_equal(agg_sorted(t, &gs), 0);
            has_bucket = true;
            cur = b;
        }
        key[8] = host[r];
        struct agg_group *g = NULL;
        assert_int_equal(agg_group(t, slice_make(key, 9), &g), ERR_OK);
        struct agg_value v = vi(val[r]);
        char s[8];
        snprintf(s, sizeof s, "%d", (int)(val[r] % 1000));
        struct agg_value sv = vs(s);
        agg_add(t, g, 0, NULL, ts[r]);
        agg_add(t, g, 1, &v, ts[r]);
        agg_add(t, g, 2, &sv, ts[r]);
        agg_add(t, g, 3, &v, ts[r]);
        if (agg_memory(t) > peak)
            peak = agg_memory(t);
    }
    struct agg_group *const *gs;
    size_t n = agg_sorted(t, &gs);
    for (size_t k = 0; k < n; k++)
        emit(t, gs[k], 4, e);
    if (is_stream) /* groups of one bucket at most: 7 groups with a sketch or 256 values each */
        assert_true(peak < 7 * (2 * AGG_PCT_MAX_BINS * 8 + 1024) + 4096);
    agg_table_free(t);
}

static void test_streaming(void **state)
{
    (void)state;
    reseed(5);
    const size_t hosts = 7, buckets = 60, nrows = 20000;
    const int64_t width = 60000000000LL;
    int64_t *ts = malloc(nrows * sizeof *ts), *val = malloc(nrows * sizeof *val);
    unsigned char *host = malloc(nrows);
    struct emitted e[2];
    for (int i = 0; i < 2; i++) {
        e[i].v = malloc(hosts * (buckets + 2) * 4 * sizeof *e[i].v);
        e[i].keys = malloc(hosts * (buckets + 2) * sizeof *e[i].keys);
        e[i].strs = malloc(hosts * (buckets + 2) * sizeof *e[i].strs);
    }
    for (int is_desc = 0; is_desc < 2; is_desc++) {
        int64_t base = -1800000000000LL; /* buckets on both sides of the epoch */
        for (size_t r = 0; r < nrows; r++) {
            /* a few ts repeat, so LAST's tie rule is in play */
            ts[r] = base + (int64_t)rnd_below((uint64_t)(width * (int64_t)buckets) / 1000) * 1000;
            host[r] = (unsigned char)('A' + rnd_below(hosts));
            val[r] = (int64_t)rnd_below(1000000) - 500000;
        }
        qsort(ts, nrows, sizeof *ts, cmp_ts);
        if (is_desc)
            for (size_t r = 0; r < nrows / 2; r++) {
                int64_t x = ts[r];
                ts[r] = ts[nrows - 1 - r];
                ts[nrows - 1 - r] = x;
            }
        e[0].n = e[1].n = 0;
        stream_feed(ts, host, val, nrows, is_desc, false, hosts, &e[0]);
        stream_feed(ts, host, val, nrows, is_desc, true, hosts, &e[1]);
        assert_int_equal(e[0].n, e[1].n);
        assert_true(e[0].n >= buckets * hosts - 10);
        for (size_t k = 0; k < e[0].n; k++) {
            assert_memory_equal(e[0].keys[k], e[1].keys[k], 9);
            if (k)
                assert_true(memcmp(e[0].keys[k - 1], e[0].keys[k], 9) < 0);
            for (size_t i = 0; i < 4; i++)
                check_value(&e[1].v[k * 4 + i], &e[0].v[k * 4 + i], "streamed result");
        }
    }
    for (int i = 0; i < 2; i++) {
        free(e[i].v);
        free(e[i].keys);
        free(e[i].strs);
    }
    free(ts);
    free(val);
    free(host);
}

/* ---- time buckets and key bytes ---- */

static int64_t ref_bucket(int64_t ts, int64_t w, int64_t off)
{
    __int128 x = (__int128)ts - off;
    __int128 q = x / w;
    if (x % w < 0)
        q--;
    __int128 start = q * w + off;
    return start < INT64_MIN ? INT64_MIN : (int64_t)start;
}

static void test_time_bucket(void **state)
{
    (void)state;
    reseed(6);
    const int64_t s = 1000000000LL, m = 60 * s, h = 60 * m, d = 24 * h;
    static const struct {
        int64_t ts, w, off, want;
    } tab[] = {
        {0, 1000000000LL, 0, 0},
        {999999999, 1000000000LL, 0, 0},
        {1000000000, 1000000000LL, 0, 1000000000},
        {-1, 1000000000LL, 0, -1000000000},
        {-1000000000, 1000000000LL, 0, -1000000000},
        {-1000000001, 1000000000LL, 0, -2000000000},
        {5, 10, 3, 3},
        {2, 10, 3, -7},
        {-7, 10, 3, -7},
        {-8, 10, 3, -17},
        {INT64_MAX, 10, 0, 9223372036854775800LL},
        {INT64_MAX, 10, 9, 9223372036854775799LL},
        {INT64_MIN, 10, 0, INT64_MIN}, /* the bucket of -...810 */
        {INT64_MIN + 9, 10, 2, INT64_MIN},
        {INT64_MIN + 10, 10, 2, INT64_MIN + 10},
        {INT64_MIN, 1000000000LL, 0, INT64_MIN}, /* would start before INT64_MIN */
        {INT64_MIN + 854775808, 1000000000LL, 0, INT64_MIN + 854775808},
        {INT64_MIN + 854775807, 1000000000LL, 0, INT64_MIN},
        {INT64_MIN, 86400000000000LL, 86399999999999LL, INT64_MIN},
        {INT64_MAX, 86400000000000LL, 86399999999999LL, 9223286399999999999LL},
        {1700000000123456789LL, 86400000000000LL, 0, 1699920000000000000LL},
        {1700000000123456789LL, 3600000000000LL, 1800000000000LL, 1699997400000000000LL},
        {1700001000000000000LL, 3600000000000LL, 1800000000000LL, 1700001000000000000LL},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        int64_t got = agg_time_bucket(tab[i].ts, tab[i].w, tab[i].off);
        if (got != tab[i].want || got != ref_bucket(tab[i].ts, tab[i].w, tab[i].off)) {
            print_error("row %zu: ts %lld w %lld off %lld: got %lld want %lld\n", i,
                        (long long)tab[i].ts, (long long)tab[i].w, (long long)tab[i].off,
                        (long long)got, (long long)tab[i].want);
            fail();
        }
    }
    const int64_t widths[] = {s, 5 * s, 10 * s, m, 5 * m, 15 * m, h, 6 * h, d, 7, 1};
    for (int r = 0; r < 200000; r++) {
        int64_t w = widths[rnd_below(sizeof widths / sizeof widths[0])];
        int64_t off = rnd_below(2) ? 0 : (int64_t)rnd_below((uint64_t)w);
        int64_t ts;
        switch (rnd_below(4)) {
        case 0: ts = (int64_t)rnd(); break;
        case 1: ts = INT64_MIN + (int64_t)rnd_below(3 * (uint64_t)d); break;
        case 2: ts = INT64_MAX - (int64_t)rnd_below(3 * (uint64_t)d); break;
        default: ts = (int64_t)rnd_below(4 * (uint64_t)d) - 2 * d; break;
        }
        int64_t got = agg_time_bucket(ts, w, off), want = ref_bucket(ts, w, off);
        if (got != want) {
            print_error("ts %lld w %lld off %lld: got %lld want %lld\n", (long long)ts,
                        (long long)w, (long long)off, (long long)got, (long long)want);
            fail();
        }
        assert_true(got <= ts);
        assert_true(got == INT64_MIN || ts - got < w);
    }
}

static void test_key_i64(void **state)
{
    (void)state;
    reseed(7);
    const int64_t fixed[] = {INT64_MIN, INT64_MIN + 1, -256, -1, 0, 1, 255, 256, INT64_MAX};
    for (int r = 0; r < 100000; r++) {
        int64_t a = r < 81 ? fixed[r % 9] : (int64_t)rnd();
        int64_t b = r < 81 ? fixed[r / 9] : rnd_below(2) ? (int64_t)rnd() : a + 1;
        unsigned char ka[8], kb[8], da[8], db[8];
        agg_key_i64(a, ka);
        agg_key_i64(b, kb);
        agg_key_i64_desc(a, da);
        agg_key_i64_desc(b, db);
        int c = memcmp(ka, kb, 8), cd = memcmp(da, db, 8);
        int want = (a > b) - (a < b);
        assert_int_equal((c > 0) - (c < 0), want);
        assert_int_equal((cd > 0) - (cd < 0), -want);
        assert_true(agg_key_i64_get(ka, false) == a);
        assert_true(agg_key_i64_get(da, true) == a);
    }
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const char *seed = getenv("LB_SEED");
    if (seed)
        base_seed = strtoull(seed, NULL, 10);
    print_message("# LB_SEED=%llu\n", (unsigned long long)base_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_new_invalid),
        cmocka_unit_test(test_sum_overflow),
        cmocka_unit_test(test_avg_accuracy),
        cmocka_unit_test(test_minmax_exact),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_percentile_exact),
        cmocka_unit_test(test_percentile_sketch),
        cmocka_unit_test(test_percentile_collapse),
        cmocka_unit_test(test_max_groups),
        cmocka_unit_test(test_drop),
        cmocka_unit_test(test_streaming),
        cmocka_unit_test(test_time_bucket),
        cmocka_unit_test(test_key_i64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
