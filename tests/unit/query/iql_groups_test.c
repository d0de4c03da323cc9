/* InfluxQL's aggregate groups (query/iql_func.h): runs of host-section
 * records added with iql_groups_add_recs give the groups and results that
 * the same rows added one by one through iql_groups_add (the row reader's
 * way) give, for random records (fields in any order and of every type,
 * tags, names of every length), slots, time ranges and runs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/err.h"
#include "model/record.h"
#include "query/cond.h"
#include "query/iql_func.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static size_t pick(size_t n)
{
    return (size_t)(next_rand() % n);
}

static char long_name[140];

static const char *names[] = {"value", "v", "code", "valuex", long_name};
#define NNAMES (sizeof names / sizeof *names)

/* A record of up to 4 fields of random names (no name twice) and types,
 * with a tag one time in eight. */
static void random_record(struct buf *out)
{
    struct rec_field f[4];
    size_t want = pick(5), nf = 0;
    unsigned used = 0;
    for (size_t i = 0; i < want; i++) {
        size_t k = pick(NNAMES);
        if (used & (1u << k))
            continue;
        used |= 1u << k;
        struct rec_field *x = &f[nf++];
        x->key = slice_cstr(names[k]);
        switch (pick(6)) {
        case 0: x->type = REC_INT, x->v.i = (int64_t)(next_rand() % 2001) - 1000; break;
        case 1: x->type = REC_UINT, x->v.u = pick(2) ? next_rand() : pick(100); break;
        case 2: x->type = REC_BOOL, x->v.b = pick(2); break;
        case 3: x->type = REC_STRING, x->v.s = slice_cstr(pick(2) ? "up" : ""); break;
        case 4: x->type = REC_INT, x->v.i = pick(2) ? INT64_MIN : INT64_MAX; break;
        default: x->type = REC_FLOAT, x->v.f = (double)(int64_t)(next_rand() % 100000) / 100; break;
        }
    }
    struct rec_tag t = {slice_cstr("dc"), slice_cstr("east")};
    buf_reset(out);
    rec_encode(out, &t, pick(8) == 0, f, nf);
}

static const enum iql_fn fns[] = {IQL_F_COUNT,  IQL_F_SUM,    IQL_F_MEAN,    IQL_F_MIN,
                                  IQL_F_MAX,    IQL_F_FIRST,  IQL_F_LAST,    IQL_F_SPREAD,
                                  IQL_F_STDDEV, IQL_F_MEDIAN, IQL_F_DISTINCT};

static bool same_val(const struct iql_val *a, const struct iql_val *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case IQL_V_FLOAT: return a->f == b->f || (isnan(a->f) && isnan(b->f));
    case IQL_V_INT: return a->i == b->i;
    case IQL_V_BOOL: return a->b == b->b;
    case IQL_V_STR: return slice_eq(a->s, b->s);
    default: return true;
    }
}

/* Both groups hold the same groups (in key order) with the same results. */
static void check_same(struct iql_groups *a, struct iql_groups *b, size_t nslots)
{
    assert_int_equal(a->n, b->n);
    size_t *oa = iql_groups_sorted(a), *ob = iql_groups_sorted(b);
    for (size_t i = 0; i < a->n; i++) {
        assert_int_equal(iql_groups_bucket(a, oa[i]), iql_groups_bucket(b, ob[i]));
        for (size_t k = 0; k < nslots; k++) {
            struct iql_val va, vb;
            int64_t ta = 0, tb = 0;
            iql_groups_result(a, oa[i], k, &va, &ta);
            iql_groups_result(b, ob[i], k, &vb, &tb);
            assert_true(same_val(&va, &vb));
            assert_int_equal(ta, tb);
        }
    }
    free(oa);
    free(ob);
}

static void test_runs_as_rows(void **state)
{
    (void)state;
    memset(long_name, 'f', sizeof long_name - 1);
    for (int round = 0; round < 300; round++) {
        struct iql_slot slots[3];
        size_t nslots = 1 + pick(3);
        for (size_t k = 0; k < nslots; k++) {
            /* mostly one field, as a panel's slots */
            const char *field = k && pick(2) ? slots[0].field : names[pick(NNAMES)];
            int64_t lo = pick(4) ? INT64_MIN : (int64_t)pick(500);
            slots[k] =
                (struct iql_slot){fns[pick(sizeof fns / sizeof *fns)],          field, 50, NULL, lo,
                                  pick(4) ? INT64_MAX : lo + (int64_t)pick(800)};
        }
        struct iql_group_opts o = {.slots = slots,
                                   .nslots = nslots,
                                   .has_time = pick(4) != 0,
                                   .interval = 1 + (int64_t)pick(40),
                                   .offset = (int64_t)pick(50) - 25,
                                   .max_groups = 100000};
        struct iql_groups byrow, byrun;
        iql_groups_init(&byrow, &o);
        o.buckets_hint = pick(2) ? pick(800) : 0; /* a map sized at once: the same groups */
        iql_groups_init(&byrun, &o);
        struct buf err = BUF_INIT;
        struct cond_row row;
        cond_row_init(&row);
        size_t nrows = pick(400);
        struct buf *recs = calloc(nrows + 1, sizeof *recs);
        int64_t *ts = calloc(nrows + 1, sizeof *ts);
        struct slice *val = calloc(nrows + 1, sizeof *val);
        int64_t t = (int64_t)pick(100) - 200;
        for (size_t i = 0; i < nrows; i++) {
            t += (int64_t)pick(8); /* stored order: several rows a bucket, some at one ts */
            ts[i] = t;
            recs[i] = (struct buf)BUF_INIT;
            random_record(&recs[i]);
            val[i] = slice_make(recs[i].data, recs[i].len);
        }
        static const char *series[] = {"host-1", "host-2", ""};
        for (size_t i = 0; i < nrows;) {
            size_t n = 1 + pick(nrows - i < 30 ? nrows - i : 30);
            const char *sk = series[pick(3)];
            size_t sklen = strlen(sk) + (*sk != 0); /* with its 0 byte */
            for (size_t j = i; j < i + n; j++) {
                cond_row_set(&row, ts[j], slice_cstr("h"), slice_cstr("e"), slice_make("", 0),
                             val[j]);
                assert_int_equal(iql_groups_add(&byrow, sk, sklen, &row, &err), ERR_OK);
            }
            assert_int_equal(iql_groups_add_recs(&byrun, sk, sklen, ts + i, val + i, n, &err),
                             ERR_OK);
            i += n;
        }
        check_same(&byrow, &byrun, nslots);
        for (size_t i = 0; i < nrows; i++)
            buf_destroy(&recs[i]);
        free(recs);
        free(ts);
        free(val);
        cond_row_destroy(&row);
        buf_destroy(&err);
        iql_groups_destroy(&byrow);
        iql_groups_destroy(&byrun);
    }
}

/* A damaged record (cut anywhere): cut inside its first field, it gives
 * what the row reader gives (no value); cut after it, the first field's
 * value, which the row reader's whole-record check refuses (a section's
 * records lie under their block's checksum; the walk stops at the field
 * it reads). */
static void test_damaged(void **state)
{
    (void)state;
    struct rec_field f[2] = {{slice_cstr("value"), REC_FLOAT, {.f = 1.5}},
                             {slice_cstr("code"), REC_INT, {.i = 300}}};
    struct buf rec = BUF_INIT;
    rec_encode(&rec, NULL, 0, f, 1);
    size_t first_end = rec.len;
    buf_reset(&rec);
    rec_encode(&rec, NULL, 0, f, 2);
    struct iql_slot slot[2] = {{IQL_F_COUNT, "value", 0, NULL, INT64_MIN, INT64_MAX},
                               {IQL_F_SUM, "code", 0, NULL, INT64_MIN, INT64_MAX}};
    struct iql_group_opts o = {.slots = slot, .nslots = 2, .max_groups = 10};
    struct buf err = BUF_INIT;
    struct cond_row row;
    cond_row_init(&row);
    for (size_t cut = 0; cut <= rec.len; cut++) {
        struct iql_groups byrow, byrun;
        iql_groups_init(&byrow, &o);
        iql_groups_init(&byrun, &o);
        int64_t ts = 5;
        struct slice v = slice_make(rec.data, cut);
        cond_row_set(&row, ts, slice_cstr("h"), slice_cstr("e"), slice_make("", 0), v);
        assert_int_equal(iql_groups_add(&byrow, "", 0, &row, &err), ERR_OK);
        assert_int_equal(iql_groups_add_recs(&byrun, "", 0, &ts, &v, 1, &err), ERR_OK);
        if (cut < first_end || cut == rec.len) {
            check_same(&byrow, &byrun, 2);
        } else {
            struct iql_val out;
            int64_t t;
            iql_groups_result(&byrun, 0, 0, &out, &t);
            assert_int_equal(out.kind, IQL_V_INT);
            assert_int_equal(out.i, 1);
        }
        iql_groups_destroy(&byrow);
        iql_groups_destroy(&byrun);
    }
    cond_row_destroy(&row);
    buf_destroy(&err);
    buf_destroy(&rec);
}

/* The bucket of a row past the one before (no division) is the one the
 * division gives, at a bucket's edges and with an offset. */
static void test_bucket_edges(void **state)
{
    (void)state;
    struct iql_slot slot = {IQL_F_COUNT, "value", 0, NULL, INT64_MIN, INT64_MAX};
    struct iql_group_opts o = {.slots = &slot,
                               .nslots = 1,
                               .has_time = true,
                               .interval = 10,
                               .offset = 3,
                               .max_groups = 100};
    struct rec_field f = {slice_cstr("value"), REC_INT, {.i = 1}};
    struct buf rec = BUF_INIT;
    rec_encode(&rec, NULL, 0, &f, 1);
    struct iql_groups g;
    iql_groups_init(&g, &o);
    struct buf err = BUF_INIT;
    int64_t ts[] = {-8, -7, -1, 2, 3, 12, 13, 22, 23, 24};
    struct slice v[10];
    for (size_t i = 0; i < 10; i++)
        v[i] = slice_make(rec.data, rec.len);
    assert_int_equal(iql_groups_add_recs(&g, "", 0, ts, v, 10, &err), ERR_OK);
    /* buckets -17: -8; -7: -7 -1 2; 3: 3 12; 13: 13 22; 23: 23 24 */
    int64_t want_b[] = {-17, -7, 3, 13, 23}, want_n[] = {1, 3, 2, 2, 2};
    assert_int_equal(g.n, 5);
    size_t *order = iql_groups_sorted(&g);
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(iql_groups_bucket(&g, order[i]), want_b[i]);
        struct iql_val out;
        int64_t t;
        iql_groups_result(&g, order[i], 0, &out, &t);
        assert_int_equal(out.i, want_n[i]);
    }
    free(order);
    iql_groups_destroy(&g);
    buf_destroy(&err);
    buf_destroy(&rec);
}

/* Rows split in two by their stamp (one stamp's rows in one half, as the
 * buckets of a store split them), each half in groups of its own, the
 * second merged into the first: the groups and results of all the rows in
 * one, for the slots that merge (sums of whole numbers, so that the order
 * of the additions does not show); others do not merge. */
static void test_merge(void **state)
{
    (void)state;
    static const enum iql_fn mergeable[] = {IQL_F_COUNT, IQL_F_SUM,   IQL_F_MEAN, IQL_F_MIN,
                                            IQL_F_MAX,   IQL_F_FIRST, IQL_F_LAST};
    for (int round = 0; round < 200; round++) {
        struct iql_slot slots[3];
        size_t nslots = 1 + pick(3);
        for (size_t k = 0; k < nslots; k++)
            slots[k] = (struct iql_slot){mergeable[pick(7)],
                                         (const char *[]){"value", "value", "code", "ok"}[pick(4)],
                                         0,
                                         NULL,
                                         INT64_MIN,
                                         INT64_MAX};
        struct iql_group_opts o = {.slots = slots,
                                   .nslots = nslots,
                                   .has_time = pick(4) != 0,
                                   .interval = 1 + (int64_t)pick(40),
                                   .max_groups = 100000};
        struct iql_groups one, half[2];
        iql_groups_init(&one, &o);
        iql_groups_init(&half[0], &o);
        iql_groups_init(&half[1], &o);
        assert_true(iql_groups_mergeable(&one));
        struct buf err = BUF_INIT, rec = BUF_INIT;
        int64_t t = (int64_t)pick(1000);
        for (size_t i = 0, n = pick(300); i < n; i++) {
            t += (int64_t)pick(5);
            struct rec_field f[3] = {{slice_cstr("value"), REC_FLOAT, {.f = (double)pick(50)}},
                                     {slice_cstr("code"), REC_INT, {.i = (int64_t)pick(9) - 4}},
                                     {slice_cstr("ok"), REC_BOOL, {.b = pick(2)}}};
            if (pick(5) == 0)
                f[0].v.f = -f[0].v.f;
            buf_reset(&rec);
            /* some of value, code and ok (a boolean: min and max too) */
            size_t from = pick(3), nf = 1 + pick(3 - from);
            rec_encode(&rec, NULL, 0, f + from, nf);
            struct slice v = slice_make(rec.data, rec.len);
            const char *sk = pick(2) ? "a" : "b";
            assert_int_equal(iql_groups_add_recs(&one, sk, 2, &t, &v, 1, &err), ERR_OK);
            uint64_t h = (uint64_t)t * 0x9e3779b97f4a7c15ULL;
            assert_int_equal(iql_groups_add_recs(&half[h >> 63], sk, 2, &t, &v, 1, &err), ERR_OK);
        }
        assert_int_equal(iql_groups_merge(&half[0], &half[1], &err), ERR_OK);
        check_same(&one, &half[0], nslots);
        iql_groups_destroy(&one);
        iql_groups_destroy(&half[0]);
        iql_groups_destroy(&half[1]);
        buf_destroy(&err);
        buf_destroy(&rec);
    }
    struct iql_slot med = {IQL_F_MEDIAN, "value", 0, NULL, INT64_MIN, INT64_MAX};
    struct iql_group_opts o = {.slots = &med, .nslots = 1, .max_groups = 10};
    struct iql_groups g;
    iql_groups_init(&g, &o);
    assert_false(iql_groups_mergeable(&g));
    iql_groups_destroy(&g);
}

/* A merge that would make more groups than max_groups fails so. */
static void test_merge_too_many(void **state)
{
    (void)state;
    struct iql_slot slot = {IQL_F_COUNT, "value", 0, NULL, INT64_MIN, INT64_MAX};
    struct iql_group_opts o = {.slots = &slot,
                               .nslots = 1,
                               .has_time = true,
                               .interval = 10,
                               .max_groups = 3};
    struct iql_groups a, b;
    iql_groups_init(&a, &o);
    iql_groups_init(&b, &o);
    struct buf err = BUF_INIT;
    int64_t ta[] = {1, 11, 21}, tb[] = {5, 31};
    struct slice v[3] = {{"", 0}, {"", 0}, {"", 0}};
    assert_int_equal(iql_groups_add_recs(&a, "", 0, ta, v, 3, &err), ERR_OK);
    assert_int_equal(iql_groups_add_recs(&b, "", 0, tb, v, 2, &err), ERR_OK);
    assert_int_equal(iql_groups_merge(&a, &b, &err), ERR_TOOBIG);
    assert_non_null(strstr(err.data, "max_groups"));
    iql_groups_destroy(&a);
    iql_groups_destroy(&b);
    buf_destroy(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_as_rows),   cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_bucket_edges),   cmocka_unit_test(test_merge),
        cmocka_unit_test(test_merge_too_many),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
