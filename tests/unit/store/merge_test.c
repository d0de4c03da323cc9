/* The merging iterator against a model: 2 to 20 sorted children with keys
 * shared between them, random walks of seeks, next and prev (direction
 * switches anywhere), checked entry by entry against one sorted list of
 * (key, child), which is the merge's order forward and its exact reverse
 * backward. */
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
#include "store/iter.h"
#include "tests/support/store_testutil.h"

#define MAX_KIDS 20
#define KEY_SPACE 60

/* A child: sorted distinct keys k00..k59 (all 3 bytes); value = child index. */
struct vec_it {
    struct iter base;
    int keys[KEY_SPACE];
    int n, pos; /* pos in [0, n): valid */
    char key[16], value[16];
};

/* Every move ends here: the entry at pos as the position, or none. */
static void vec_load(struct vec_it *v)
{
    if (v->pos < 0 || v->pos >= v->n) {
        it_set_end(&v->base);
        return;
    }
    snprintf(v->key, sizeof v->key, "k%02d", v->keys[v->pos]);
    it_set_pos(&v->base, slice_make(v->key, 3), slice_make(v->value, strlen(v->value)));
}

static void vec_seek_first(struct iter *it)
{
    struct vec_it *v = (struct vec_it *)it;
    v->pos = 0;
    vec_load(v);
}

static void vec_seek_last(struct iter *it)
{
    struct vec_it *v = (struct vec_it *)it;
    v->pos = v->n - 1;
    vec_load(v);
}

static void vec_seek(struct iter *it, struct slice t)
{
    struct vec_it *v = (struct vec_it *)it;
    char k[16];
    for (v->pos = 0; v->pos < v->n; v->pos++) {
        snprintf(k, sizeof k, "k%02d", v->keys[v->pos]);
        if (slice_cmp(slice_make(k, 3), t) >= 0)
            break;
    }
    vec_load(v);
}

static void vec_next(struct iter *it)
{
    struct vec_it *v = (struct vec_it *)it;
    v->pos++;
    vec_load(v);
}

static void vec_prev(struct iter *it)
{
    struct vec_it *v = (struct vec_it *)it;
    v->pos--;
    vec_load(v);
}

static int vec_status(const struct iter *it)
{
    (void)it;
    return ERR_OK;
}

static void vec_destroy(struct iter *it)
{
    free(it);
}

static const struct it_ops vec_ops = {
    .seek_first = vec_seek_first,
    .seek_last = vec_seek_last,
    .seek = vec_seek,
    .next = vec_next,
    .prev = vec_prev,
    .status = vec_status,
    .destroy = vec_destroy,
};

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* The model: every (key, kid) pair in merge order. */
struct entry {
    int key, kid;
};

static void check_at(struct iter *m, const struct entry *all, int n, int pos)
{
    if (pos < 0 || pos >= n) {
        assert_false(it_valid(m));
        return;
    }
    assert_true(it_valid(m));
    char k[16], v[16];
    snprintf(k, sizeof k, "k%02d", all[pos].key);
    snprintf(v, sizeof v, "%d", all[pos].kid);
    assert_true(slice_eq(it_key(m), slice_make(k, 3)));
    assert_true(slice_eq(it_value(m), slice_cstr(v)));
}

static void one_round(uint64_t *x)
{
    int nkids = 2 + (int)(rnd(x) % (MAX_KIDS - 1));
    struct iter *kids[MAX_KIDS];
    struct entry all[MAX_KIDS * KEY_SPACE];
    int n = 0;
    for (int kid = 0; kid < nkids; kid++) {
        struct vec_it *v = calloc(1, sizeof *v);
        it_init(&v->base, &vec_ops);
        snprintf(v->value, sizeof v->value, "%d", kid);
        int density = 1 + (int)(rnd(x) % 6); /* some kids empty or sparse */
        for (int k = 0; k < KEY_SPACE; k++)
            if (rnd(x) % 8 < (uint64_t)density - 1)
                v->keys[v->n++] = k;
        v->pos = -1;
        kids[kid] = &v->base;
    }
    /* kid-major then key order; merge order is key, then kid */
    for (int k = 0; k < KEY_SPACE; k++)
        for (int kid = 0; kid < nkids; kid++) {
            const struct vec_it *v = (const struct vec_it *)kids[kid];
            for (int i = 0; i < v->n; i++)
                if (v->keys[i] == k)
                    all[n++] = (struct entry){k, kid};
        }
    struct iter *m = it_merge_new(kids, (size_t)nkids, NULL);
    int pos = -1;
    for (int step = 0; step < 300; step++) {
        int op = (int)(rnd(x) % 10);
        if (pos < 0 || pos >= n || op == 0) {
            int what = (int)(rnd(x) % 3);
            if (what == 0) {
                it_seek_first(m);
                pos = 0;
            } else if (what == 1) {
                it_seek_last(m);
                pos = n - 1;
            } else {
                int t = (int)(rnd(x) % (KEY_SPACE + 1));
                char k[16];
                snprintf(k, sizeof k, "k%02d", t);
                it_seek(m, slice_make(k, 3));
                for (pos = 0; pos < n && all[pos].key < t; pos++)
                    ;
            }
        } else if (op < 6) {
            it_next(m);
            pos++;
        } else {
            it_prev(m);
            pos--;
        }
        check_at(m, all, n, pos);
    }
    assert_int_equal(it_status(m), ERR_OK);
    it_destroy(m);
}

static void test_merge_model(void **state)
{
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (int r = 0; r < 2000; r++)
        one_round(&x);
}

int main(void)
{
    if (tu_tsan_skip_file())
        return 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_model),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
