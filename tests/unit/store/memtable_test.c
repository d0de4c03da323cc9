/* Memtable skiplist (versions, iteration both ways, concurrent readers) and
 * the merging iterator (heap order, seeks, direction switches, n = 0, 1). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "store/ikey.h"
#include "store/iter.h"
#include "store/memtable.h"

static void key_of(int i, char *k, size_t n)
{
    snprintf(k, n, "k%05d", i);
}

static void test_memtable(void **state)
{
    (void)state;
    atomic_size_t total = 0, active = 0;
    struct memtable *mt = mt_new(1, &total, &active, NULL, false);
    char k[16], v[16];
    for (int i = 0; i < 5000; i++) {
        int x = (i * 7919) % 5000;
        key_of(x, k, sizeof k);
        snprintf(v, sizeof v, "a%d", x);
        mt_add(mt, slice_cstr(k), (uint64_t)(10 + i), IKEY_PUT, slice_cstr(v));
    }
    key_of(42, k, sizeof k);
    mt_add(mt, slice_cstr(k), 100000, IKEY_DEL, slice_make("", 0));
    assert_int_equal(mt_count(mt), 5001);
    assert_true(total > 0 && total == active);
    int kind;
    struct slice val;
    assert_true(mt_get(mt, slice_cstr(k), UINT64_MAX >> 1, &kind, &val));
    assert_int_equal(kind, IKEY_DEL);
    assert_true(mt_get(mt, slice_cstr(k), 99999, &kind, &val));
    assert_int_equal(kind, IKEY_PUT);
    assert_true(slice_eq(val, slice_cstr("a42")));
    assert_false(mt_get(mt, slice_cstr(k), 5, &kind, &val));
    assert_false(mt_get(mt, slice_cstr("zzz"), 100000, &kind, &val));
    struct iter *it = mt_iter(mt);
    int n = 0;
    struct buf prev = BUF_INIT;
    for (it_seek_first(it); it_valid(it); it_next(it), n++) {
        if (n)
            assert_true(slice_cmp(slice_make(prev.data, prev.len), it_key(it)) < 0);
        buf_reset(&prev);
        buf_append(&prev, it_key(it).ptr, it_key(it).len);
    }
    assert_int_equal(n, 5001);
    for (it_seek_last(it); it_valid(it); it_prev(it))
        n--;
    assert_int_equal(n, 0);
    it_seek(it, slice_cstr("k00100"));
    assert_true(slice_starts_with(it_key(it), slice_cstr("k00100")));
    it_prev(it);
    assert_true(slice_starts_with(it_key(it), slice_cstr("k00099")));
    buf_destroy(&prev);
    mt_detach_active(mt);
    assert_int_equal(active, 0);
    it_destroy(it);
    mt_unref(mt);
    assert_int_equal(total, 0);
}

static int cmp_str(const void *a, const void *b)
{
    const struct buf *x = a, *y = b;
    int c = memcmp(x->data, y->data, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The order-th insert order of n keys: 0 ascending, 1 descending, 2 two
 * interleaved descending streams in runs of 37 (batches applied out of
 * order), 3 ascending runs that restart lower, 4 scattered. */
static int order_at(int order, int i, int n)
{
    switch (order) {
    case 0: return i;
    case 1: return n - 1 - i;
    case 2: {
        int run = i / 37, pos = i % 37, stream = run % 2;
        int base = (run / 2) * 74 + stream * 37;
        int x = n - 1 - (base + pos);
        return x < 0 ? -1 : x;
    }
    case 3: return ((i / 100) * 7 % (n / 100)) * 100 + i % 100;
    default: return (int)(((long)i * 7919) % n);
    }
}

/* Every insert order gives the same sorted list, found by point reads and
 * walked both ways; keys share long prefixes (shorter than the 24 cached
 * bytes, differing at its edge, and differing only past it, in the entry
 * list and in a group's list after the group key), so comparisons past the
 * cached prefix are exercised. */
static void test_insert_orders(void **state)
{
    (void)state;
    const int n = 3000;
    for (int grouped = 0; grouped < 2; grouped++)
        for (int order = 0; order < 5; order++) {
            struct memtable *mt = mt_new(1, NULL, NULL, NULL, grouped);
            struct buf *keys = calloc((size_t)n, sizeof *keys);
            int added = 0;
            for (int i = 0; i < n; i++) {
                int x = order_at(order, i, n);
                if (x < 0 || x >= n)
                    continue;
                char k[64];
                int len;
                if (x % 5 == 0) /* shorter than the prefix */
                    len = snprintf(k, sizeof k, "h%02d%cab%03d", x % 7, 0, x % 1000);
                else if (x % 5 == 1) /* exactly 16 bytes */
                    len = snprintf(k, sizeof k, "h%02d%c0123456789%02d", x % 7, 0, x % 100);
                else if (x % 5 == 2) /* differing at bytes 23-24 */
                    len =
                        snprintf(k, sizeof k, "h%02d%c0123456789abcdefghi%02d", x % 7, 0, x % 100);
                else if (x % 5 == 3) /* differing past byte 28 */
                    len = snprintf(k, sizeof k, "h%02d%c0123456789abcdefghijklmn%06d", x % 7, 0, x);
                else
                    len = snprintf(k, sizeof k, "h%02d%c0123456789abc%06d", x % 7, 0, x);
                buf_init(&keys[added]);
                buf_append(&keys[added], k, (size_t)len);
                char ik[80];
                memcpy(ik, k, (size_t)len);
                mt_add(mt, slice_make(k, (size_t)len), (uint64_t)i + 1, IKEY_PUT,
                       slice_make(ik, (size_t)len));
                added++;
            }
            qsort(keys, (size_t)added, sizeof *keys, cmp_str);
            struct iter *it = mt_iter(mt);
            int j = 0;
            for (it_seek_first(it); it_valid(it); it_next(it)) {
                /* a user key added twice is listed twice, newest first */
                assert_true(j < added);
                assert_true(slice_eq(ikey_user(it_key(it)), slice_make(keys[j].data, keys[j].len)));
                j++;
            }
            assert_int_equal(j, added);
            int back = 0;
            for (it_seek_last(it); it_valid(it); it_prev(it))
                back++;
            assert_int_equal((size_t)back, mt_count(mt));
            assert_int_equal(mt_count(mt), (size_t)added);
            for (int i = 0; i < added; i++) {
                int kind;
                struct slice v;
                struct slice k = slice_make(keys[i].data, keys[i].len);
                assert_true(mt_get(mt, k, UINT64_MAX >> 1, &kind, &v));
                assert_true(slice_eq(v, k));
                buf_destroy(&keys[i]);
            }
            free(keys);
            it_destroy(it);
            mt_unref(mt);
        }
}

struct reader_arg {
    struct memtable *mt;
    atomic_bool *stop;
};

static void *reader(void *p)
{
    struct reader_arg *a = p;
    struct iter *it = mt_iter(a->mt);
    while (!atomic_load(a->stop)) {
        struct buf prev = BUF_INIT;
        for (it_seek_first(it); it_valid(it); it_next(it)) {
            if (prev.len && slice_cmp(slice_make(prev.data, prev.len), it_key(it)) >= 0)
                return (void *)1;
            buf_reset(&prev);
            buf_append(&prev, it_key(it).ptr, it_key(it).len);
        }
        buf_destroy(&prev);
    }
    it_destroy(it);
    return NULL;
}

static void concurrent_readers(bool grouped)
{
    struct memtable *mt = mt_new(1, NULL, NULL, NULL, grouped);
    atomic_bool stop = false;
    struct reader_arg a = {mt, &stop};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, reader, &a);
    char k[32];
    for (int i = 0; i < 20000; i++) {
        int x = (i * 7919) % 20000;
        if (grouped) /* index layout: host\0event\0 then a suffix */
            snprintf(k, sizeof k, "h%02d%cev%d%c%05d", x % 37, 0, x % 3, 0, x);
        else
            key_of(x, k, sizeof k);
        size_t len = grouped ? 4 + 4 + 5 : strlen(k);
        mt_add(mt, slice_make(k, len), (uint64_t)i + 1, IKEY_PUT, slice_cstr("v"));
    }
    atomic_store(&stop, true);
    for (int i = 0; i < 2; i++) {
        void *r;
        pthread_join(t[i], &r);
        assert_null(r);
    }
    mt_unref(mt);
}

static void test_concurrent_readers(void **state)
{
    (void)state;
    concurrent_readers(false);
    concurrent_readers(true);
}

/* x and y give the same keys from where they stand to their end; returns
 * how many. */
static size_t expect_same_rest(struct iter *x, struct iter *y)
{
    size_t n = 0;
    for (; it_valid(x); it_next(x), it_next(y), n++) {
        assert_true(it_valid(y));
        assert_true(slice_eq(it_key(x), it_key(y)));
    }
    assert_false(it_valid(y));
    return n;
}

/* A grouped memtable (host index layout) behaves exactly like a plain one. */
static void test_grouped(void **state)
{
    (void)state;
    struct memtable *a = mt_new(1, NULL, NULL, NULL, false);
    struct memtable *g = mt_new(1, NULL, NULL, NULL, true);
    static const char *hosts[] = {"", "a", "ab", "web-1", "web-10", "web-2"};
    static const char *evs[] = {"cpu", "cpu.x", "m"};
    struct buf k = BUF_INIT;
    unsigned r = 1;
    for (int i = 0; i < 3000; i++) {
        r = r * 1103515245u + 12345u;
        buf_reset(&k);
        buf_puts(&k, hosts[(r >> 8) % 6]);
        buf_putc(&k, 0);
        buf_puts(&k, evs[(r >> 12) % 3]);
        buf_putc(&k, 0);
        char ts[8];
        for (int j = 0; j < 8; j++)
            ts[j] = (char)(r >> (j * 3));
        buf_append(&k, ts, 8);
        mt_add(a, slice_make(k.data, k.len), (uint64_t)i + 1, IKEY_PUT, slice_make("", 0));
        mt_add(g, slice_make(k.data, k.len), (uint64_t)i + 1, IKEY_PUT, slice_make("", 0));
    }
    struct iter *x = mt_iter(a), *y = mt_iter(g);
    it_seek_first(x);
    it_seek_first(y);
    assert_int_equal(expect_same_rest(x, y), 3000);
    for (it_seek_last(x), it_seek_last(y); it_valid(x); it_prev(x), it_prev(y)) {
        assert_true(it_valid(y));
        assert_true(slice_eq(it_key(x), it_key(y)));
    }
    assert_false(it_valid(y));
    static const char *targets[] = {"",
                                    "a",
                                    "a\0",
                                    "a\0cpu\0",
                                    "a\0cpu\0\x80",
                                    "ab\0m",
                                    "web-1\0",
                                    "web-10\0cpu.x\0\x01",
                                    "web-2\0z",
                                    "zzz"};
    static const size_t tlen[] = {0, 1, 2, 6, 7, 4, 6, 15, 8, 3};
    for (size_t t = 0; t < sizeof tlen / sizeof tlen[0]; t++) {
        struct slice tk = slice_make(targets[t], tlen[t]);
        it_seek(x, tk);
        it_seek(y, tk);
        for (int step = 0; step < 200; step++) {
            assert_int_equal(it_valid(x), it_valid(y));
            if (!it_valid(x))
                break;
            assert_true(slice_eq(it_key(x), it_key(y)));
            r = r * 1103515245u + 12345u;
            if ((r >> 10) % 3) {
                it_next(x);
                it_next(y);
            } else {
                it_prev(x);
                it_prev(y);
            }
        }
    }
    int kind;
    struct slice v;
    buf_reset(&k);
    buf_puts(&k, "web-1");
    buf_putc(&k, 0);
    buf_puts(&k, "cpu");
    buf_putc(&k, 0);
    it_seek(y, slice_make(k.data, k.len));
    assert_true(it_valid(y));
    struct slice ik = it_key(y);
    assert_true(mt_get(g, ikey_user(ik), 100000, &kind, &v));
    assert_false(mt_get(g, slice_cstr("nohost"), 100000, &kind, &v));
    it_destroy(x);
    it_destroy(y);
    buf_destroy(&k);
    mt_unref(a);
    mt_unref(g);
}

/* Index entries as concurrent batches bring them: each batch newer than
 * the last in most steps (its entries go in at each host's head), older in
 * others (they land after the newer batches' entries, through the group's
 * splice, which head inserts keep exact). The grouped list holds what a
 * plain one does, in the same order. */
static void test_grouped_batches(void **state)
{
    (void)state;
    struct memtable *a = mt_new(1, NULL, NULL, NULL, false);
    struct memtable *g = mt_new(1, NULL, NULL, NULL, true);
    static const int order[] = {1, 0, 2, 4, 3, 5, 8, 6, 7, 9, 12, 10, 11, 13, 14};
    struct buf k = BUF_INIT;
    uint64_t seq = 0;
    size_t total = 0;
    for (size_t b = 0; b < sizeof order / sizeof order[0]; b++)
        for (int i = 0; i < 200; i++) {
            uint64_t ts = (uint64_t)order[b] * 1000 + (uint64_t)i, tskey = ~ts; /* newest first */
            buf_reset(&k);
            buf_printf(&k, "host-%d", i % 7);
            buf_putc(&k, 0);
            for (int j = 7; j >= 0; j--)
                buf_putc(&k, (char)(tskey >> (8 * j)));
            buf_puts(&k, "ev");
            buf_putc(&k, 0);
            seq++;
            mt_add(a, slice_make(k.data, k.len), seq, IKEY_PUT, slice_make("", 0));
            mt_add(g, slice_make(k.data, k.len), seq, IKEY_PUT, slice_make("", 0));
            total++;
        }
    struct iter *x = mt_iter(a), *y = mt_iter(g);
    it_seek_first(x);
    it_seek_first(y);
    assert_int_equal(expect_same_rest(x, y), total);
    for (it_seek_last(x), it_seek_last(y); it_valid(x); it_prev(x), it_prev(y)) {
        assert_true(it_valid(y));
        assert_true(slice_eq(it_key(x), it_key(y)));
    }
    assert_false(it_valid(y));
    it_destroy(x);
    it_destroy(y);
    buf_destroy(&k);
    mt_unref(a);
    mt_unref(g);
}

/* A pass over a grouped memtable gives the rows of a plain iterator, in
 * order, whatever the number of groups against the lanes and their sizes
 * (one row, many more than a lane fetches ahead); a move other than next
 * leaves the pass where it stands. */
static void test_grouped_pass(void **state)
{
    (void)state;
    static const int nhosts[] = {1, 3, 8, 9, 17, 40};
    struct buf k = BUF_INIT;
    for (size_t t = 0; t < sizeof nhosts / sizeof nhosts[0]; t++) {
        struct memtable *g = mt_new(1, NULL, NULL, NULL, true);
        int want[40], left = 0;
        for (int h = 0; h < nhosts[t]; h++) {
            want[h] = h == 1 ? 700 : 1 + (h * h * 7) % 300;
            left += want[h];
        }
        unsigned r = 7;
        uint64_t seq = 1;
        while (left > 0) {
            r = r * 1103515245u + 12345u;
            int h = (int)((r >> 8) % (unsigned)nhosts[t]);
            if (!want[h])
                continue;
            want[h]--;
            left--;
            buf_reset(&k);
            buf_printf(&k, "host-%02d", h);
            buf_putc(&k, 0);
            char ts[8];
            for (int j = 0; j < 8; j++)
                ts[j] = (char)(r >> (j * 3));
            buf_append(&k, ts, 8);
            buf_puts(&k, "ev");
            buf_putc(&k, 0);
            mt_add(g, slice_make(k.data, k.len), seq++, IKEY_PUT, slice_make("", 0));
        }
        struct iter *x = mt_iter(g), *y = mt_iter_pass(g);
        it_seek_first(x);
        it_seek_first(y);
        size_t n = expect_same_rest(x, y);
        assert_int_equal(n, mt_count(g));
        /* a step back leaves the pass; both go on alike */
        it_seek_first(x);
        it_seek_first(y);
        for (size_t i = 0; i + 1 < n / 2; i++) {
            it_next(x);
            it_next(y);
        }
        it_prev(x);
        it_prev(y);
        expect_same_rest(x, y);
        it_destroy(x);
        it_destroy(y);
        mt_unref(g);
    }
    /* a plain memtable's pass is a plain iterator */
    struct memtable *a = mt_new(1, NULL, NULL, NULL, false);
    mt_add(a, slice_cstr("k1"), 1, IKEY_PUT, slice_cstr("v"));
    mt_add(a, slice_cstr("k0"), 2, IKEY_PUT, slice_cstr("v"));
    struct iter *y = mt_iter_pass(a);
    it_seek_first(y);
    assert_true(slice_starts_with(it_key(y), slice_cstr("k0")));
    it_next(y);
    assert_true(slice_starts_with(it_key(y), slice_cstr("k1")));
    it_next(y);
    assert_false(it_valid(y));
    it_destroy(y);
    mt_unref(a);
    buf_destroy(&k);
}

/* --- merge iterator over memtables holding interleaved keys --- */

static struct iter *kid(int mod, int rem, int n, struct memtable **out)
{
    struct memtable *mt = mt_new(1, NULL, NULL, NULL, false);
    char k[16];
    for (int i = 0; i < n; i++)
        if (i % mod == rem) {
            key_of(i, k, sizeof k);
            mt_add(mt, slice_cstr(k), 1, IKEY_PUT, slice_cstr(k));
        }
    *out = mt;
    return mt_iter(mt);
}

static int key_num(struct iter *it)
{
    return atoi(it_key(it).ptr + 1);
}

static void test_merge(void **state)
{
    (void)state;
    struct memtable *mts[3];
    struct iter *kids[3];
    kids[0] = kid(3, 0, 300, &mts[0]);
    kids[1] = kid(3, 1, 300, &mts[1]);
    kids[2] = kid(5, 2, 300, &mts[2]); /* overlaps: duplicates kept */
    struct iter *m = it_merge_new(kids, 3, NULL);
    int n = 0, last = -1;
    for (it_seek_first(m); it_valid(m); it_next(m), n++) {
        assert_true(key_num(m) >= last);
        last = key_num(m);
    }
    int expect = 100 + 100 + 60;
    assert_int_equal(n, expect);
    for (it_seek_last(m); it_valid(m); it_prev(m))
        n--;
    assert_int_equal(n, 0);
    /* direction switches at every position of a walk */
    it_seek(m, slice_cstr("k00150"));
    assert_int_equal(key_num(m), 150);
    it_next(m);
    assert_int_equal(key_num(m), 151);
    it_prev(m);
    assert_int_equal(key_num(m), 150);
    it_prev(m);
    assert_int_equal(key_num(m), 148);
    it_next(m);
    assert_int_equal(key_num(m), 150);
    /* a duplicate key (k00157 is in kids 1 and 2): both, in both directions */
    it_seek(m, slice_cstr("k00157"));
    assert_int_equal(key_num(m), 157);
    it_next(m);
    assert_int_equal(key_num(m), 157);
    it_next(m);
    assert_int_equal(key_num(m), 159);
    it_prev(m);
    assert_int_equal(key_num(m), 157);
    it_prev(m);
    assert_int_equal(key_num(m), 157);
    it_prev(m);
    assert_int_equal(key_num(m), 156);
    it_next(m);
    it_next(m);
    it_next(m);
    assert_int_equal(key_num(m), 159);
    /* random walk against a reference list */
    int ref[300], nref = 0;
    for (it_seek_first(m); it_valid(m); it_next(m))
        ref[nref++] = key_num(m);
    int pos = 0;
    unsigned r = 7;
    it_seek_first(m);
    for (int step = 0; step < 5000; step++) {
        r = r * 1103515245u + 12345u;
        bool fwd = (r >> 16) & 1;
        if (fwd && pos + 1 < nref) {
            it_next(m);
            pos++;
        } else if (!fwd && pos > 0) {
            it_prev(m);
            pos--;
        }
        assert_true(it_valid(m));
        assert_int_equal(key_num(m), ref[pos]);
    }
    it_seek(m, slice_cstr("zzz"));
    assert_false(it_valid(m));
    assert_int_equal(it_status(m), ERR_OK);
    it_destroy(m);
    for (int i = 0; i < 3; i++)
        mt_unref(mts[i]);

    struct iter *e = it_merge_new(NULL, 0, NULL);
    it_seek_first(e);
    assert_false(it_valid(e));
    it_destroy(e);
    struct memtable *one;
    struct iter *only = kid(1, 0, 10, &one);
    assert_ptr_equal(it_merge_new(&only, 1, NULL), only);
    it_destroy(only);
    mt_unref(one);
    struct iter *errs[2] = {it_new_error(ERR_CORRUPT), it_new_empty()};
    e = it_merge_new(errs, 2, NULL);
    it_seek_first(e);
    assert_false(it_valid(e));
    assert_int_equal(it_status(e), ERR_CORRUPT);
    it_destroy(e);
}

static int calls;
static void cb(void *a, void *b)
{
    (void)b;
    assert_int_equal(*(int *)a, calls);
    calls++;
}

static void test_cleanup_order(void **state)
{
    (void)state;
    struct iter *it = it_new_empty();
    int one = 1, zero = 0;
    it_on_destroy(it, cb, &one, NULL);
    it_on_destroy(it, cb, &zero, NULL);
    calls = 0;
    it_destroy(it);
    assert_int_equal(calls, 2);
    it_destroy(NULL);
}

int main(void)
{
    log_set_level(LOG_ERROR + 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memtable),
        cmocka_unit_test(test_insert_orders),
        cmocka_unit_test(test_concurrent_readers),
        cmocka_unit_test(test_grouped),
        cmocka_unit_test(test_grouped_batches),
        cmocka_unit_test(test_grouped_pass),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_cleanup_order),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
