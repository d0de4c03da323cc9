/* store_snap_window_counts (store.h): the rows of whole time windows
 * counted from their tables' counts by event and minute (counts.h), where
 * the snapshot holds them in that one table alone. */
#include <stdlib.h>

#include "base/err.h"
#include "model/key.h"
#include "store/catalog.h"
#include "store/counts.h"
#include "store/ikey.h"
#include "store/store_int.h"
#include "store/tomb.h"
#include "store/ttl.h"

/* Whether memtable mt holds an entry whose user key is in [lo, hi). */
static bool mt_has(struct memtable *mt, struct slice lo, struct slice hi)
{
    if (!mt || !mt_count(mt))
        return false;
    struct iter *it = mt_iter(mt);
    it_seek(it, lo);
    bool has = !it_valid(it) ? it_status(it) != ERR_OK : slice_cmp(ikey_user(it_key(it)), hi) < 0;
    it_destroy(it);
    return has;
}

static bool tombs_meet(const struct tomb_set *t, int64_t lo, int64_t hi)
{
    for (size_t i = 0; t && i < t->n; i++)
        if (t->v[i].lo <= hi && t->v[i].hi >= lo)
            return true;
    return false;
}

/* The counts of file f, the one table of window [ws, we] in bucket, if
 * the snapshot's rows of that window are all its rows (see store.h). */
static const struct cnt_file *window_counts(struct store_snap *snap, uint32_t bucket,
                                            const struct file_meta *f, int64_t ws, int64_t we)
{
    const struct part_snap *ps = &snap->ps[bucket];
    if (f->cat_rc != ERR_OK)
        return NULL;
    const struct cnt_file *c = cat_file_counts(f->cat);
    if (!c || cnt_file_max_seq(c) > snap->seq || tombs_meet(snap->tombs, ws, we))
        return NULL;
    struct buf lo = BUF_INIT, hi = BUF_INIT;
    key_row_range(&lo, &hi, bucket, ws, we, snap->db->desc);
    struct slice l = slice_make(lo.data, lo.len), h = slice_make(hi.data, hi.len);
    bool mem = mt_has(ps->mem, l, h);
    for (size_t i = 0; i < ps->nimm && !mem; i++)
        mem = mt_has(ps->imm[i], l, h);
    buf_destroy(&lo);
    buf_destroy(&hi);
    return mem ? NULL : c;
}

/* REQUIRES: ts >= INT64_MIN + CNT_MINUTE_NS */
static int64_t minute_floor(int64_t ts)
{
    int64_t m = ts / CNT_MINUTE_NS;
    if (ts % CNT_MINUTE_NS < 0)
        m--;
    return m * CNT_MINUTE_NS;
}

/* The counts of one window's minutes in [lo, hi] passed on to fn. */
struct in_range {
    store_count_fn fn;
    void *arg;
    int64_t lo, hi;
};

static int count_in_range(void *arg, struct slice event, int64_t minute, uint64_t rows)
{
    const struct in_range *k = arg;
    if (minute < k->lo || minute > k->hi)
        return ERR_OK;
    return k->fn(k->arg, event, minute, rows);
}

int store_snap_window_counts(struct store_snap *snap, uint32_t bucket, int64_t lo, int64_t hi,
                             store_count_fn fn, void *arg, struct store_ts_range **windows,
                             size_t *n)
{
    *windows = NULL;
    *n = 0;
    if (bucket >= snap->db->buckets)
        return ERR_INVAL;
    /* no minute below a cut-off (database, event or disk guard): some of
     * its rows may be hidden from reads but not yet compacted away */
    int64_t cut = event_cuts_max(&snap->cuts, snap->cutoff);
    if (lo < cut)
        lo = cut;
    /* the whole minutes of [lo, hi]: from first to last (the ends of the
     * ts range are left to the reads) */
    if (lo < INT64_MIN + CNT_MINUTE_NS)
        lo = INT64_MIN + CNT_MINUTE_NS;
    if (hi < lo)
        return ERR_OK;
    int64_t first = minute_floor(lo), last = minute_floor(hi);
    if (first < lo)
        first = first > INT64_MAX - CNT_MINUTE_NS ? INT64_MAX : first + CNT_MINUTE_NS;
    last = hi - last == CNT_MINUTE_NS - 1 ? hi : last - 1;
    const struct version *v = snap->ps[bucket].ver;
    size_t cap = 0;
    int rc = ERR_OK;
    /* files are sorted by window: a window with one file is a run of one */
    for (size_t i = 0; v && i < v->n && !rc; i++) {
        const struct file_meta *f = v->files[i];
        bool alone = (i == 0 || v->files[i - 1]->window != f->window) &&
                     (i + 1 == v->n || v->files[i + 1]->window != f->window);
        /* f->window is part_window's number: ts / STORE_WINDOW_NS, floored */
        if (!alone || f->window < INT64_MIN / STORE_WINDOW_NS + 1 ||
            f->window > INT64_MAX / STORE_WINDOW_NS - 1)
            continue;
        int64_t ws = f->window * STORE_WINDOW_NS, we = ws + (STORE_WINDOW_NS - 1);
        /* the window's whole minutes in [lo, hi] */
        struct in_range k = {fn, arg, ws > first ? ws : first, we < last ? we : last};
        if (k.lo > k.hi)
            continue;
        const struct cnt_file *c = window_counts(snap, bucket, f, ws, we);
        if (!c)
            continue;
        if ((rc = cnt_file_each(c, count_in_range, &k)) != ERR_OK)
            break;
        if (*n == cap)
            *windows = xrealloc(*windows, (cap = cap ? 2 * cap : 16) * sizeof **windows);
        (*windows)[(*n)++] = (struct store_ts_range){k.lo, k.hi};
    }
    return rc;
}
