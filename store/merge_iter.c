/* The k-way merging iterator over sorted children, after LevelDB's
 * table/merger.cc. A tournament (loser) tree over the children, ordered by
 * key for the forward direction and reversed for backward: after the
 * current child moves, one comparison per tree level finds the next one.
 * Switching direction repositions every other child around the current
 * key. Each child's validity and key are cached so the tree never calls
 * through the vtable. */
#include <stdlib.h>

#include "base/buf.h"
#include "base/err.h"
#include "store/iter.h"

struct merge_kid {
    struct iter *it;
    bool valid;
    struct slice key;
};

struct merge_iter {
    struct iter base;
    int (*cmp)(struct slice, struct slice);
    struct merge_kid *kids;
    size_t n;
    /* tree[0]: the current kid; tree[1..n-1]: the loser at each inner node.
     * Kid i is leaf n + i; the parent of node j is j / 2. */
    size_t *tree;
    size_t *win; /* scratch of tree_build: the winner at each inner node */
    bool forward;
};

static void kid_sync(struct merge_kid *k)
{
    k->valid = it_valid(k->it);
    if (k->valid)
        k->key = it_key(k->it);
}

/* true when kid a comes before kid b: valid kids first, then by key in the
 * current direction, equal keys in kid order (mirrored backward) */
static bool kid_before(const struct merge_iter *m, size_t a, size_t b)
{
    if (!m->kids[a].valid || !m->kids[b].valid)
        return m->kids[a].valid;
    int c = m->cmp(m->kids[a].key, m->kids[b].key);
    if (c == 0)
        return m->forward ? a < b : a > b;
    return m->forward ? c < 0 : c > 0;
}

/* Plays every match again from the leaves up. */
static void tree_build(struct merge_iter *m)
{
    size_t n = m->n, *win = m->win;
    for (size_t i = 0; i < n; i++)
        kid_sync(&m->kids[i]);
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
    kid_sync(&m->kids[cur]);
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
    it_set_as(&m->base, m->kids[m->tree[0]].it);
}

static void mi_seek_first(struct iter *it)
{
    struct merge_iter *m = (struct merge_iter *)it;
    for (size_t i = 0; i < m->n; i++)
        it_seek_first(m->kids[i].it);
    m->forward = true;
    tree_build(m);
    publish(m);
}

static void mi_seek_last(struct iter *it)
{
    struct merge_iter *m = (struct merge_iter *)it;
    for (size_t i = 0; i < m->n; i++)
        it_seek_last(m->kids[i].it);
    m->forward = false;
    tree_build(m);
    publish(m);
}

static void mi_seek(struct iter *it, struct slice target)
{
    struct merge_iter *m = (struct merge_iter *)it;
    for (size_t i = 0; i < m->n; i++)
        it_seek(m->kids[i].it, target);
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
    buf_append(&k, m->kids[cur].key.ptr, m->kids[cur].key.len);
    struct slice key = slice_make(k.data, k.len);
    for (size_t i = 0; i < m->n; i++) {
        if (i == cur)
            continue;
        struct iter *c = m->kids[i].it;
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
    it_next(m->kids[m->tree[0]].it);
    tree_fix_top(m);
    publish(m);
}

static void mi_prev(struct iter *it)
{
    struct merge_iter *m = (struct merge_iter *)it;
    if (m->forward)
        switch_direction(m, false);
    it_prev(m->kids[m->tree[0]].it);
    tree_fix_top(m);
    publish(m);
}

static int mi_status(const struct iter *it)
{
    const struct merge_iter *m = (const struct merge_iter *)it;
    for (size_t i = 0; i < m->n; i++) {
        int rc = it_status(m->kids[i].it);
        if (rc)
            return rc;
    }
    return ERR_OK;
}

static void mi_destroy(struct iter *it)
{
    struct merge_iter *m = (struct merge_iter *)it;
    for (size_t i = 0; i < m->n; i++)
        it_destroy(m->kids[i].it);
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
    for (size_t i = 0; i < n; i++)
        m->kids[i].it = kids[i];
    m->forward = true;
    return &m->base;
}
