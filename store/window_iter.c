/* The SSTables of a bucket partition as one iterator, window after window.
 * Row keys sort by bucket then tskey, so the files of different time
 * windows never overlap: instead of merging every file of the partition,
 * windows are visited in key order (ascending windows for ASC databases,
 * descending for DESC) and only the current window's files are open and
 * merged. "The newest 100 rows" then touches one or two windows however
 * long the retention is.
 * The host index partition's keys (host 0 tskey event 0) interleave
 * windows across hosts, but one host's keys do not: over the index, the
 * iterator is bounded to one host's prefix and visits windows in the same
 * way. */
#include <stdlib.h>

#include "base/buf.h"
#include "base/coding.h"
#include "base/err.h"
#include "model/key.h"
#include "store/store_int.h"

struct win_it {
    struct iter base;
    const struct part *p;
    struct version *v;
    size_t *start; /* window i = files [start[i], start[i + 1]) of v, i by window asc */
    size_t nwin;
    long cur; /* key-order index of the open window; -1 none */
    struct iter *it;
    int status;
    struct buf pre;     /* every key of this iterator starts with it */
    struct buf pre_end; /* pre with its last byte plus one: past every key */
    bool whole;         /* every key of the files starts with pre (rows) */
    /* the tables' iterators skip blocks by these (NULL: none) */
    const struct sst_read_opts *opts;
};

static bool in_prefix(const struct win_it *w, struct slice k)
{
    return w->whole || slice_starts_with(k, slice_make(w->pre.data, w->pre.len));
}

static bool at_entry(const struct win_it *w)
{
    return w->it && it_valid(w->it) && in_prefix(w, it_key(w->it));
}

/* Positions the open window's iterator at its first (step > 0) or last
 * key of the prefix. */
static void enter_window(struct win_it *w, int step)
{
    if (w->whole) {
        if (step > 0)
            it_seek_first(w->it);
        else
            it_seek_last(w->it);
        return;
    }
    if (step > 0) {
        it_seek(w->it, slice_make(w->pre.data, w->pre.len));
        return;
    }
    it_seek(w->it, slice_make(w->pre_end.data, w->pre_end.len));
    if (it_valid(w->it))
        it_prev(w->it);
    else if (it_status(w->it) == ERR_OK)
        it_seek_last(w->it);
}

static size_t win_index(const struct win_it *w, long k)
{
    return w->p->db->desc ? w->nwin - 1 - (size_t)k : (size_t)k;
}

static void open_window(struct win_it *w, long k)
{
    if (w->it && !w->status)
        w->status = it_status(w->it);
    it_destroy(w->it);
    w->it = NULL;
    w->cur = k;
    if (k < 0 || (size_t)k >= w->nwin)
        return;
    size_t i = win_index(w, k);
    size_t from = w->start[i], n = w->start[i + 1] - from;
    struct iter **kids = xcalloc(n, sizeof *kids);
    for (size_t j = 0; j < n; j++)
        kids[j] = sst_iter_opts(w->v->files[from + j]->table, w->opts);
    w->it = it_merge_new(kids, n, NULL);
    free(kids);
}

static bool failed(struct win_it *w)
{
    if (!w->status && w->it)
        w->status = it_status(w->it);
    return w->status != ERR_OK;
}

/* From window k on (step +1 or -1), the first window with an entry. */
static void settle(struct win_it *w, long k, int step)
{
    for (;;) {
        if (at_entry(w))
            return;
        if (failed(w))
            return;
        k += step;
        if (k < 0 || (size_t)k >= w->nwin) {
            open_window(w, -1);
            return;
        }
        open_window(w, k);
        enter_window(w, step);
    }
}

/* The position after a move: the open window's entry, or none. */
static void publish(struct win_it *w)
{
    if (!w->status && at_entry(w))
        it_set_as(&w->base, w->it);
    else
        it_set_end(&w->base);
}

static void wi_seek_first(struct iter *it)
{
    struct win_it *w = (struct win_it *)it;
    open_window(w, -1);
    settle(w, -1, 1);
    publish(w);
}

static void wi_seek_last(struct iter *it)
{
    struct win_it *w = (struct win_it *)it;
    open_window(w, -1);
    settle(w, (long)w->nwin, -1);
    publish(w);
}

/* Key-order index of the first window that may hold keys >= target, which
 * starts with the prefix. */
static long first_window(const struct win_it *w, struct slice target)
{
    char k[8] = {0};
    size_t rest = target.len - w->pre.len;
    memcpy(k, target.ptr + w->pre.len, rest < 8 ? rest : 8);
    bool desc = w->p->db->desc;
    int64_t win = part_window(key_ts_from_tskey(coding_get_u64be(k), desc));
    for (long kk = 0; (size_t)kk < w->nwin; kk++) {
        int64_t ww = w->v->files[w->start[win_index(w, kk)]]->window;
        if (desc ? ww <= win : ww >= win)
            return kk;
    }
    return (long)w->nwin;
}

static void wi_seek(struct iter *it, struct slice target)
{
    struct win_it *w = (struct win_it *)it;
    struct slice pre = slice_make(w->pre.data, w->pre.len);
    long k;
    if (slice_starts_with(target, pre)) {
        k = first_window(w, target);
    } else if (slice_cmp(target, pre) < 0) {
        k = 0;
        target = pre;
    } else {
        k = (long)w->nwin;
    }
    /* a seek within the open window keeps its tables' iterators and the
     * blocks they hold */
    if (k != w->cur || !w->it || failed(w))
        open_window(w, k);
    if (w->it)
        it_seek(w->it, target);
    settle(w, k, 1);
    publish(w);
}

static void wi_next(struct iter *it)
{
    struct win_it *w = (struct win_it *)it;
    it_next(w->it);
    settle(w, w->cur, 1);
    publish(w);
}

static void wi_prev(struct iter *it)
{
    struct win_it *w = (struct win_it *)it;
    it_prev(w->it);
    settle(w, w->cur, -1);
    publish(w);
}

static int wi_status(const struct iter *it)
{
    const struct win_it *w = (const struct win_it *)it;
    if (w->status)
        return w->status;
    return w->it ? it_status(w->it) : ERR_OK;
}

static void wi_destroy(struct iter *it)
{
    struct win_it *w = (struct win_it *)it;
    it_destroy(w->it);
    version_unref(w->v);
    free(w->start);
    buf_destroy(&w->pre);
    buf_destroy(&w->pre_end);
    free(w);
}

static const struct it_ops win_ops = {
    .seek_first = wi_seek_first,
    .seek_last = wi_seek_last,
    .seek = wi_seek,
    .next = wi_next,
    .prev = wi_prev,
    .status = wi_status,
    .destroy = wi_destroy,
};

static struct iter *new_iter(const struct part *p, struct version *v, struct slice pre, bool whole)
{
    struct win_it *w = xcalloc(1, sizeof *w);
    it_init(&w->base, &win_ops);
    w->p = p;
    version_ref(v);
    w->v = v;
    w->start = xcalloc(v->n + 1, sizeof *w->start);
    for (size_t i = 0; i < v->n; i++)
        if (i == 0 || v->files[i]->window != v->files[i - 1]->window)
            w->start[w->nwin++] = i;
    w->start[w->nwin] = v->n;
    w->cur = -1;
    buf_init(&w->pre);
    buf_init(&w->pre_end);
    buf_append(&w->pre, pre.ptr, pre.len);
    buf_append(&w->pre_end, pre.ptr, pre.len);
    w->whole = whole;
    return &w->base;
}

struct iter *window_iter_new(const struct part *p, struct version *v,
                             const struct sst_read_opts *opts)
{
    char b[2] = {(char)(p->id >> 8), (char)p->id};
    struct iter *it = new_iter(p, v, slice_make(b, 2), true);
    ((struct win_it *)it)->opts = opts;
    return it;
}

struct iter *window_iter_host(const struct part *p, struct version *v, struct slice host)
{
    struct buf pre = BUF_INIT;
    key_encode_index_prefix(&pre, host);
    struct iter *it = new_iter(p, v, slice_make(pre.data, pre.len), false);
    struct win_it *w = (struct win_it *)it;
    w->pre_end.data[w->pre_end.len - 1] = 1; /* host 0x01: past host 0x00 ... */
    buf_destroy(&pre);
    return it;
}
