/* store_snap_window_counts (store.h): the rows of time windows counted
 * from their tables' counts by event and minute (counts.h): a window held
 * by one table, or by one table and a few late rows beside it, whose keys
 * are looked up in it to correct its counts. */
#include <stdlib.h>
#include <string.h>

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

bool snap_window_tables_only(struct store_snap *snap, uint32_t bucket, int64_t ws, int64_t we)
{
    const struct part_snap *ps = &snap->ps[bucket];
    if (tombs_meet(snap->tombs, ws, we))
        return false;
    struct buf lo = BUF_INIT, hi = BUF_INIT;
    key_row_range(&lo, &hi, bucket, ws, we, snap->db->desc);
    struct slice l = slice_make(lo.data, lo.len), h = slice_make(hi.data, hi.len);
    bool mem = mt_has(ps->mem, l, h);
    for (size_t i = 0; i < ps->nimm && !mem; i++)
        mem = mt_has(ps->imm[i], l, h);
    buf_destroy(&lo);
    buf_destroy(&hi);
    return !mem;
}

/* The counts of file f, the table of window [ws, we] in bucket that
 * holds its rows (others may hold late ones), if the snapshot reads that
 * window from tables alone (see store.h). */
static const struct cnt_file *window_counts(struct store_snap *snap, uint32_t bucket,
                                            const struct file_meta *f, int64_t ws, int64_t we)
{
    if (f->cat_rc != ERR_OK)
        return NULL;
    const struct cnt_file *c = cat_file_counts(f->cat);
    if (!c || cnt_file_max_seq(c) > snap->seq || !snap_window_tables_only(snap, bucket, ws, we))
        return NULL;
    return c;
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

/* --- a window with late rows beside its table --- */

/* Late rows a window's table may have beside it, in tables of their own,
 * looked up in it one by one: at most this many entries, or a quarter of
 * its own. */
#define LATE_MIN_ENTRIES 4096

/* Rows of one event in one minute; name is an offset into names until
 * the list is complete (late rows' names are copied), else a pointer. */
struct wcount {
    size_t name;
    const char *ptr;
    uint32_t len;
    int64_t minute;
    int64_t rows;
};

struct wlist {
    struct wcount *v;
    size_t n, cap;
    struct buf names;
};

static void wlist_push(struct wlist *l, struct wcount c)
{
    if (l->n == l->cap)
        l->v = xrealloc(l->v, (l->cap = l->cap ? 2 * l->cap : 64) * sizeof *l->v);
    l->v[l->n++] = c;
}

static int collect(void *arg, struct slice event, int64_t minute, uint64_t rows)
{
    wlist_push(arg, (struct wcount){0, event.ptr, (uint32_t)event.len, minute, (int64_t)rows});
    return ERR_OK;
}

static int cmp_wcount(const void *x, const void *y)
{
    const struct wcount *a = x, *b = y;
    int c = slice_cmp(slice_make(a->ptr, a->len), slice_make(b->ptr, b->len));
    return c ? c : (a->minute > b->minute) - (a->minute < b->minute);
}

/* The corrections the late tables make to base's counts, one per key they
 * hold whose row base counts wrongly: +1 for a row base lacks (or holds
 * deleted), -1 for one a newer delete of theirs removes; the newest
 * version of a key (no newer than the snapshot) decides. false on damage
 * or an error (the window is then read). */
static bool late_fixes(struct store_snap *snap, const struct file_meta *base,
                       struct file_meta *const *late, size_t nlate, struct wlist *fix)
{
    struct iter **kids = xcalloc(nlate, sizeof *kids);
    for (size_t i = 0; i < nlate; i++)
        kids[i] = sst_iter(late[i]->table);
    struct iter *it = it_merge_new(kids, nlate, NULL);
    free(kids);
    struct buf last = BUF_INIT, val = BUF_INIT;
    bool ok = true, have = false;
    for (it_seek_first(it); ok && it_valid(it); it_next(it)) {
        struct slice ik = it_key(it);
        if (!ikey_ok(ik)) {
            ok = false;
            break;
        }
        struct slice uk = ikey_user(ik);
        uint64_t seq = ikey_seq(ik);
        if (seq > snap->seq || (have && slice_eq(uk, slice_make(last.data, last.len))))
            continue; /* newer than the snapshot, or an older version */
        buf_reset(&last);
        buf_append(&last, uk.ptr, uk.len);
        have = true;
        int kind = ikey_kind(ik), bkind;
        uint64_t bseq;
        buf_reset(&val);
        /* no bloom probe: a row table's filter holds its keys' bases (and a
         * final cold table's none) */
        int rc = sst_find_seq(base->table, uk, snap->seq, &bkind, &val, &bseq);
        if (rc != ERR_OK && rc != ERR_NOTFOUND) {
            ok = false;
            break;
        }
        bool counted = rc == ERR_OK && bkind != IKEY_DEL;
        bool visible = (rc == ERR_OK && bseq > seq ? bkind : kind) != IKEY_DEL;
        if (counted == visible)
            continue;
        struct key_row kr;
        if (key_decode_row(uk, snap->db->desc, &kr) != ERR_OK) {
            ok = false;
            break;
        }
        wlist_push(fix, (struct wcount){fix->names.len, NULL, (uint32_t)kr.event.len,
                                        minute_floor(kr.ts), visible ? 1 : -1});
        buf_append(&fix->names, kr.event.ptr, kr.event.len);
    }
    ok = ok && it_status(it) == ERR_OK;
    it_destroy(it);
    buf_destroy(&last);
    buf_destroy(&val);
    for (size_t i = 0; i < fix->n; i++)
        fix->v[i].ptr = fix->names.data + fix->v[i].name;
    return ok;
}

/* base's counts with the late tables' fixes, into *out (sorted); false
 * if they do not add up (a count below zero) or the fixes failed. */
static bool fixed_counts(struct store_snap *snap, const struct file_meta *base,
                         const struct cnt_file *c, struct file_meta *const *late, size_t nlate,
                         struct wlist *out, struct wlist *fix)
{
    if (!late_fixes(snap, base, late, nlate, fix))
        return false;
    cnt_file_each(c, collect, out); /* events ascending, then minutes: sorted */
    if (fix->n) /* (an empty list may be NULL, which qsort and bsearch may not get) */
        qsort(fix->v, fix->n, sizeof *fix->v, cmp_wcount);
    size_t n = out->n;
    for (size_t i = 0; i < fix->n; i++) {
        struct wcount *hit = n ? bsearch(&fix->v[i], out->v, n, sizeof *out->v, cmp_wcount) : NULL;
        if (hit) {
            hit->rows += fix->v[i].rows;
        } else if (out->n > n && cmp_wcount(&out->v[out->n - 1], &fix->v[i]) == 0) {
            out->v[out->n - 1].rows += fix->v[i].rows;
        } else {
            wlist_push(out, fix->v[i]);
        }
    }
    for (size_t i = 0; i < out->n; i++)
        if (out->v[i].rows < 0)
            return false;
    if (out->n)
        qsort(out->v, out->n, sizeof *out->v, cmp_wcount);
    return true;
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
    struct wlist out = {0}, fix = {0};
    /* files are sorted by window: each window's are a run */
    for (size_t i = 0, j; v && i < v->n && !rc; i = j) {
        int64_t wn = v->files[i]->window;
        size_t base = i;
        uint64_t all = 0;
        for (j = i; j < v->n && v->files[j]->window == wn; j++) {
            all += v->files[j]->props.entries;
            if (v->files[j]->props.entries > v->files[base]->props.entries)
                base = j;
        }
        /* wn is part_window's number: ts / STORE_WINDOW_NS, floored */
        if (wn < INT64_MIN / STORE_WINDOW_NS + 1 || wn > INT64_MAX / STORE_WINDOW_NS - 1)
            continue;
        int64_t ws = wn * STORE_WINDOW_NS, we = ws + (STORE_WINDOW_NS - 1);
        /* the window's whole minutes in [lo, hi] */
        struct in_range k = {fn, arg, ws > first ? ws : first, we < last ? we : last};
        const struct file_meta *bf = v->files[base];
        uint64_t late = all - bf->props.entries;
        if (k.lo > k.hi || late > (bf->props.entries / 4 > LATE_MIN_ENTRIES ? bf->props.entries / 4
                                                                            : LATE_MIN_ENTRIES))
            continue;
        const struct cnt_file *c = window_counts(snap, bucket, bf, ws, we);
        if (!c)
            continue;
        if (j - i == 1) {
            rc = cnt_file_each(c, count_in_range, &k);
        } else {
            struct file_meta **others = xcalloc(j - i, sizeof *others);
            size_t no = 0;
            for (size_t f = i; f < j; f++)
                if (f != base)
                    others[no++] = v->files[f];
            out.n = fix.n = 0;
            buf_reset(&fix.names);
            bool ok = fixed_counts(snap, bf, c, others, no, &out, &fix);
            free(others);
            if (!ok)
                continue; /* the window is read */
            for (size_t w = 0; w < out.n && !rc; w++)
                if (out.v[w].rows > 0)
                    rc = count_in_range(&k, slice_make(out.v[w].ptr, out.v[w].len), out.v[w].minute,
                                        (uint64_t)out.v[w].rows);
        }
        if (rc)
            break;
        if (*n == cap)
            *windows = xrealloc(*windows, (cap = cap ? 2 * cap : 16) * sizeof **windows);
        (*windows)[(*n)++] = (struct store_ts_range){k.lo, k.hi};
    }
    free(out.v);
    free(fix.v);
    buf_destroy(&fix.names);
    return rc;
}
