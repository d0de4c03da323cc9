/* The k-way merging iterator over sorted children, after LevelDB's
 * table/merger.cc. A binary heap of the valid children, ordered by key for
 * the forward direction and reversed for backward; switching direction
 * repositions every other child around the current key. Each child's
 * validity and key are cached so the heap never calls through the vtable. */
#include <stdlib.h>

#include "config/buf.h"
#include "config/err.h"
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
    size_t *heap; /* indices of valid kids */
    size_t hn;
    bool forward;
};

static void kid_sync(struct merge_kid *k)
{
    k->valid = it_valid(k->it);
    if (k->valid)
        k->key = it_key(k->it);
}

/* true when kid a should be above kid b in the heap */
static bool heap_less(const struct merge_iter *m, size_t a, size_t b)
{
    int c = m->cmp(m->kids[a].key, m->kids[b].key);
    if (c == 0)
        return m->forward ? a < b : a > b; /* equal keys: kid order, mirrored */
    return m->forward ? c < 0 : c > 0;
}

static void heap_down(struct merge_iter *m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, best = i;
        if (l < m->hn && heap_less(m, m->heap[l], m->heap[best]))
            best = l;
        if (r < m->hn && heap_less(m, m->heap[r], m->heap[best]))
            best = r;
        if (best == i)
            return;
        size_t t = m->heap[i];
        m->heap[i] = m->heap[best];
        m->heap[best] = t;
        i = best;
    }
}

static void heap_build(struct merge_iter *m)
{
    m->hn = 0;
    for (size_t i = 0; i < m->n; i++) {
        kid_sync(&m->kids[i]);
        if (m->kids[i].valid)
            m->heap[m->hn++] = i;
    }
    for (size_t i = m->hn / 2; i-- > 0;)
        heap_down(m, i);
}

/* After the top kid moved: re-sift it or drop it from the heap. */
static void heap_fix_top(struct merge_iter *m)
{
    struct merge_kid *k = &m->kids[m->heap[0]];
    kid_sync(k);
    if (!k->valid)
        m->heap[0] = m->heap[--m->hn];
    if (m->hn)
        heap_down(m, 0);
}

static bool mi_valid(const struct iter *it)
{
    return ((const struct merge_iter *)it)->hn > 0;
}

static void mi_seek_first(struct iter *it)
{
    struct merge_iter *m = (struct merge_iter *)it;
    for (size_t i = 0; i < m->n; i++)
        it_seek_first(m->kids[i].it);
    m->forward = true;
    heap_build(m);
}

static void mi_seek_last(struct iter *it)
{
    struct merge_iter *m = (struct merge_iter *)it;
    for (size_t i = 0; i < m->n; i++)
        it_seek_last(m->kids[i].it);
    m->forward = false;
    heap_build(m);
}

static void mi_seek(struct iter *it, struct slice target)
{
    struct merge_iter *m = (struct merge_iter *)it;
    for (size_t i = 0; i < m->n; i++)
        it_seek(m->kids[i].it, target);
    m->forward = true;
    heap_build(m);
}

/* Repositions every kid but the current one for the new direction. The
 * current key is copied first: moving the other kids must not touch it,
 * but the copy keeps the rule simple. */
static void switch_direction(struct merge_iter *m, bool forward)
{
    size_t cur = m->heap[0];
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
    heap_build(m);
}

static void mi_next(struct iter *it)
{
    struct merge_iter *m = (struct merge_iter *)it;
    if (!m->forward)
        switch_direction(m, true);
    it_next(m->kids[m->heap[0]].it);
    heap_fix_top(m);
}

static void mi_prev(struct iter *it)
{
    struct merge_iter *m = (struct merge_iter *)it;
    if (m->forward)
        switch_direction(m, false);
    it_prev(m->kids[m->heap[0]].it);
    heap_fix_top(m);
}

static struct slice mi_key(const struct iter *it)
{
    const struct merge_iter *m = (const struct merge_iter *)it;
    return m->kids[m->heap[0]].key;
}

static struct slice mi_value(const struct iter *it)
{
    const struct merge_iter *m = (const struct merge_iter *)it;
    return it_value(m->kids[m->heap[0]].it);
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
    free(m->heap);
    free(m);
}

static const struct it_ops merge_ops = {
    .valid = mi_valid,
    .seek_first = mi_seek_first,
    .seek_last = mi_seek_last,
    .seek = mi_seek,
    .next = mi_next,
    .prev = mi_prev,
    .key = mi_key,
    .value = mi_value,
    .status = mi_status,
    .destroy = mi_destroy,
};

struct iter *it_merge_new(struct iter **kids, size_t n,
                          int (*cmp)(struct slice a, struct slice b))
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
    m->heap = xcalloc(n, sizeof *m->heap);
    for (size_t i = 0; i < n; i++)
        m->kids[i].it = kids[i];
    m->forward = true;
    return &m->base;
}
