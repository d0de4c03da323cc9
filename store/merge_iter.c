/* The k-way merging iterator over sorted children, after LevelDB's
 * table/merger.cc. A tournament (loser) tree over the children, ordered by
 * key for the forward direction and reversed for backward: after the
 * current child moves, one comparison per tree level finds the next one.
 * Switching direction repositions every other child around the current
 * key. The tree reads each child's position from its struct iter (no
 * call through the vtable). */
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "store/iter.h"

struct merge_iter {
    struct iter base;
    int (*cmp)(struct slice, struct slice);
    struct iter **kids;
    size_t n;
    /* tree[0]: the current kid; tree[1..n-1]: the loser at each inner node.
     * Kid i is leaf n + i; the parent of node j is j / 2. */
    size_t *tree;
    size_t *win; /* scratch of tree_build: the winner at each inner node */
    bool forward;
};

/* true when kid a comes before kid b: valid kids first, then by key in the
 * current direction, equal keys in kid order (mirrored backward) */
static bool kid_before(const struct merge_iter *m, size_t a, size_t b)
{
    const struct iter *x = m->kids[a], *y = m->kids[b];
    if (!it_valid(x) || !it_valid(y))
        return it_valid(x);
    int c = m->cmp(it_key(x), it_key(y));
    if (c == 0)
        return m->forward ? a < b : a > b;
    return m->forward ? c < 0 : c > 0;
}

/* Plays every match again from the leaves up. */
static void tree_build(struct merge_iter *m)
{
    size_t n = m->n, *win = m->win;
    for (size_t j = n - 1; j >= 1; j--) {
        size_t l = 2 * j, r = l + 1;
        size_t a = l >= n ? l - n : win[l], b = r >= n ? r - n : win[r];
        bool a_wins = kid_before(m, a, b);
        win[j] = a_wins ? a : b;
        m->tree[j] = a_wins ? b : a;
    }
    m->tree[0] = win[1];
}

/* After the current kid moved: replays its path to the root. */
static void tree_fix_top(struct merge_iter *m)
{
    size_t cur = m->tree[0];
    for (size_t j = (m->n + cur) / 2; j >= 1; j /= 2) {
        if (kid_before(m, m->tree[j], cur)) {
            size_t t = m->tree[j];
            m->tree[j] = cur;
            cur = t;
        }
    }
    m->tree[0] = cur;
}

/* The position after a move: the current kid's. */
static void publish(struct merge_iter *m)
{
    it_set_as(&m->base, m->kids[m->tree[0]]);
}

static void mi_seek_first(struct iter *it)
{
    struct merge_iter *m = (struct merge_iter *)it;
    for (size_t i = 0; i < m->n; i++)
        it_seek_first(m->kids[i]);
    m->forward = true;
    tree_build(m);
    publish(m);
}

static void mi_seek_last(struct iter *it)
{
    struct merge_iter *m = (struct merge_iter *)it;
    for (size_t i = 0; i < m->n; i++)
        it_seek_last(m->kids[i]);
    m->forward = false;
    tree_build(m);
    publish(m);
}

static void mi_seek(struct iter *it, struct slice target)
{
    struct merge_iter *m = (struct merge_iter *)it;
    for (size_t i = 0; i < m->n; i++)
        it_seek(m->kids[i], target);
    m->forward = true;
    tree_build(m);
    publish(m);
}

/* Repositions every kid but the current one for the new direction. The
 * current key is copied first: moving the other kids must not touch it,
 * but the copy keeps the rule simple. */
static void switch_direction(struct merge_iter *m, bool forward)
{
    size_t cur = m->tree[0];
    struct buf k = BUF_INIT;
    buf_append(&k, it_key(m->kids[cur]).ptr, it_key(m->kids[cur]).len);
    struct slice key = slice_make(k.data, k.len);
    for (size_t i = 0; i < m->n; i++) {
        if (i == cur)
            continue;
        struct iter *c = m->kids[i];
        it_seek(c, key);
        if (forward) {
            /* first entry > key, or equal entries of later kids (kept after cur) */
            while (it_valid(c) && m->cmp(it_key(c), key) == 0 && i < cur)
                it_next(c);
        } else {
            /* last entry < key, or equal entries of earlier kids */
            if (it_valid(c)) {
                while (it_valid(c) && m->cmp(it_key(c), key) == 0 && i < cur)
                    it_next(c);
                if (it_valid(c))
                    it_prev(c);
                else
                    it_seek_last(c);
            } else {
                it_seek_last(c);
            }
        }
    }
    buf_destroy(&k);
    m->forward = forward;
    tree_build(m);
}

static void mi_next(struct iter *it)
{
    struct merge_iter *m = (struct merge_iter *)it;
    if (!m->forward)
        switch_direction(m, true);
    it_next(m->kids[m->tree[0]]);
    tree_fix_top(m);
    publish(m);
}

static void mi_prev(struct iter *it)
{
    struct merge_iter *m = (struct merge_iter *)it;
    if (m->forward)
        switch_direction(m, false);
    it_prev(m->kids[m->tree[0]]);
    tree_fix_top(m);
    publish(m);
}

static int mi_status(const struct iter *it)
{
    const struct merge_iter *m = (const struct merge_iter *)it;
    for (size_t i = 0; i < m->n; i++) {
        int rc = it_status(m->kids[i]);
        if (rc)
            return rc;
    }
    return ERR_OK;
}

static void mi_destroy(struct iter *it)
{
    struct merge_iter *m = (struct merge_iter *)it;
    for (size_t i = 0; i < m->n; i++)
        it_destroy(m->kids[i]);
    free(m->kids);
    free(m->tree);
    free(m->win);
    free(m);
}

static const struct it_ops merge_ops = {
    .seek_first = mi_seek_first,
    .seek_last = mi_seek_last,
    .seek = mi_seek,
    .next = mi_next,
    .prev = mi_prev,
    .status = mi_status,
    .destroy = mi_destroy,
};

struct iter *it_merge_new(struct iter **kids, size_t n, int (*cmp)(struct slice a, struct slice b))
{
    if (n == 0)
        return it_new_empty();
    if (n == 1)
        return kids[0];
    struct merge_iter *m = xcalloc(1, sizeof *m);
    it_init(&m->base, &merge_ops);
    m->cmp = cmp ? cmp : slice_cmp;
    m->n = n;
    m->kids = xcalloc(n, sizeof *m->kids);
    m->tree = xcalloc(n, sizeof *m->tree); /* kid 0, not valid before a seek */
    m->win = xcalloc(n, sizeof *m->win);
    memcpy(m->kids, kids, n * sizeof *kids);
    m->forward = true;
    return &m->base;
}
