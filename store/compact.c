/* Flushes and time-windowed compaction, run by the one background job a
 * partition has at a time. A flush writes one SSTable per time window of
 * the memtable; a compaction merges all files of a window into new ones,
 * dropping shadowed versions, tombstones (safe: no older file of the window
 * is left) and rows past the TTL; a file whose newest row is past the TTL
 * is deleted without being read. Each ends by writing the manifest. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "model/key.h"
#include "model/record.h"
#include "store/catalog.h"
#include "store/ikey.h"
#include "store/series.h"
#include "store/store_int.h"

/* The newest windows (hours) whose final files have their data blocks
 * read into the block cache as they are written (sst_warm_data): the last
 * 6 h, a dashboard's default range. Older windows reaching their final
 * form (after a backfill) are read when queried. */
#define WARM_WINDOWS 6

/* Output files being written, one or more per window. */
struct outputs {
    struct part *p;
    /* windows from this one on are still being written: their files are
     * compressed for speed (INT64_MIN: every window, as in a flush) */
    int64_t fast_from;
    /* windows from this one on (and before fast_from) are the newest two,
     * final but still hot: with zstd as the cold codec they get LZ4HC, read
     * three times faster, and are flagged "hot" to be rewritten with zstd
     * once they turn cold (INT64_MAX: none) */
    int64_t hot_from;
    struct win_builder {
        int64_t window;
        uint64_t number;
        struct sst_builder *b;
        struct cat_builder *cat; /* the catalog of a row table */
        struct ser_builder *ser; /* the host section of a final row table */
    } * open;
    size_t nopen, capopen;
    struct file_meta **done;
    size_t ndone, capdone;
    uint64_t bytes;
    uint64_t copied; /* data blocks copied as stored */
    /* the catalog of the next file of merged_window: the union of its
     * inputs' (NULL: built from its rows) */
    struct cat_builder *merged;
    int64_t merged_window;
};

/* Whether a window's output is final but hot: one of the two newest,
 * written with LZ4HC while the cold codec is zstd (rewritten when it ages). */
static bool window_hot(const struct outputs *o, int64_t window)
{
    return window < o->fast_from && window >= o->hot_from &&
           o->p->db->store->opts.cold_zstd_level > 0;
}

/* How a window's output is compressed: fast LZ4 while the window is still
 * being written (it will be merged again); LZ4HC when it is hot (the
 * windows queries read most); else the cold codec the store's options
 * choose (zstd or LZ4HC). */
static struct codec_opts final_codec(const struct outputs *o, int64_t window)
{
    int level = o->p->db->store->opts.cold_zstd_level;
    if (window >= o->fast_from)
        return (struct codec_opts){.mode = CODEC_MODE_FAST};
    if (level > 0 && !window_hot(o, window))
        return (struct codec_opts){.mode = CODEC_MODE_ZSTD,
                                   .level = level,
                                   .dicts = o->p->is_index ? NULL : o->p->db->dicts};
    return (struct codec_opts){.mode = CODEC_MODE_HC};
}

static int finish_one(struct outputs *o, struct win_builder *w)
{
    struct sst_props props;
    struct file_meta *f;
    int rc = sst_builder_finish(w->b, &props);
    w->b = NULL;
    if (!rc)
        rc = part_open_file(o->p, w->number, &props, w->cat, &f);
    cat_builder_free(w->cat);
    w->cat = NULL;
    ser_builder_free(w->ser);
    w->ser = NULL;
    if (rc)
        return rc;
    f->fast = w->window >= o->fast_from;
    f->hot = window_hot(o, w->window);
    sst_warm_section(f->table); /* one host's aggregates read it next */
    if (!f->fast && !o->p->is_index && o->hot_from != INT64_MAX &&
        w->window > o->hot_from - WARM_WINDOWS) {
        /* a recent window in its final form: queried next, its hosts'
         * aggregates (a dashboard's panels) first */
        ser_keep_runs(f->table, o->p->db->desc);
        sst_warm_data(f->table);
    }
    if (o->ndone == o->capdone) {
        o->capdone = o->capdone ? 2 * o->capdone : 8;
        o->done = xrealloc(o->done, o->capdone * sizeof *o->done);
    }
    o->done[o->ndone++] = f;
    o->bytes += props.size;
    return ERR_OK;
}

static int new_builder(struct outputs *o, struct win_builder *w, const char *path)
{
    int64_t window = w->window;
    w->cat = o->p->is_index ? NULL : cat_builder_new(o->p->db->desc);
    if (w->cat && o->merged && window == o->merged_window) {
        cat_builder_free(w->cat);
        w->cat = o->merged;
        o->merged = NULL;
    }
    struct codec_opts codec = final_codec(o, window);
    /* a window in its final form gets its rows again by host (series.h) */
    w->ser = !o->p->is_index && codec.mode != CODEC_MODE_FAST && o->p->db->store->opts.host_section
                 ? ser_builder_new(o->p->db->desc)
                 : NULL;
    struct sst_build_opts opts = {.no_bloom = o->p->is_index,
                                  .empty_bloom = codec.mode == CODEC_MODE_ZSTD,
                                  .bloom_key = o->p->is_index ? NULL : key_row_base_len,
                                  .codec = codec,
                                  .layout = o->p->is_index ? COL_INDEX : COL_ROWS,
                                  .observer = w->cat ? cat_builder_observer(w->cat) : NULL,
                                  .section = w->ser ? ser_builder_section(w->ser) : NULL};
    int rc = sst_builder_new(o->p->db->store->env, path, &opts, &w->b);
    if (rc) {
        cat_builder_free(w->cat);
        w->cat = NULL;
        ser_builder_free(w->ser);
        w->ser = NULL;
    }
    return rc;
}

/* The builder of a window. A full file is finished only between user keys
 * (may_split): versions of one key never straddle two files, so the file
 * numbers of a window keep telling newer from older. */
static int builder_for(struct outputs *o, int64_t window, bool may_split, struct win_builder **out)
{
    for (size_t i = 0; i < o->nopen; i++)
        if (o->open[i].window == window) {
            struct win_builder *w = &o->open[i];
            if (!may_split || sst_builder_bytes(w->b) < o->p->db->store->opts.max_file_bytes) {
                *out = w;
                return ERR_OK;
            }
            int rc = finish_one(o, w);
            if (rc)
                return rc;
            /* reuse the slot for a fresh file below */
            struct buf path = BUF_INIT;
            w->number = part_new_file_number(o->p);
            part_file_path(o->p, w->number, &path);
            rc = new_builder(o, w, path.data);
            buf_destroy(&path);
            *out = w;
            return rc;
        }
    if (o->nopen == o->capopen) {
        o->capopen = o->capopen ? 2 * o->capopen : 4;
        o->open = xrealloc(o->open, o->capopen * sizeof *o->open);
    }
    struct win_builder *w = &o->open[o->nopen];
    struct buf path = BUF_INIT;
    w->window = window;
    w->number = part_new_file_number(o->p);
    part_file_path(o->p, w->number, &path);
    int rc = new_builder(o, w, path.data);
    buf_destroy(&path);
    if (rc)
        return rc;
    o->nopen++;
    *out = w;
    return ERR_OK;
}

static int outputs_add(struct outputs *o, struct slice ik, struct slice value, bool may_split)
{
    int64_t ts = part_key_ts(o->p, ikey_user(ik));
    struct win_builder *w;
    int rc = builder_for(o, part_window(ts), may_split, &w);
    if (!rc)
        rc = sst_add(w->b, ik, value, ts);
    return rc;
}

static int outputs_finish(struct outputs *o)
{
    int rc = ERR_OK;
    for (size_t i = 0; i < o->nopen; i++)
        if (!rc && o->open[i].b)
            rc = finish_one(o, &o->open[i]);
    return rc;
}

/* Frees the outputs; on failure deletes every file written. */
static void outputs_free(struct outputs *o, bool failed)
{
    for (size_t i = 0; i < o->nopen; i++) {
        sst_builder_abandon(o->open[i].b);
        cat_builder_free(o->open[i].cat);
        ser_builder_free(o->open[i].ser);
    }
    cat_builder_free(o->merged);
    for (size_t i = 0; i < o->ndone; i++) {
        if (failed)
            atomic_store(&o->done[i]->obsolete, true);
        file_meta_unref(o->done[i]);
    }
    free(o->open);
    free(o->done);
}

static struct version *current(struct part *p)
{
    pthread_mutex_lock(&p->mu);
    struct version *v = p->ver;
    version_ref(v);
    pthread_mutex_unlock(&p->mu);
    return v;
}

/* A new version: v's files minus drop (where drop[i]) plus add. */
static struct version *edit(struct version *v, const bool *drop, struct file_meta **add,
                            size_t nadd)
{
    struct file_meta **fs = xcalloc(v->n + nadd + 1, sizeof *fs);
    size_t k = 0;
    for (size_t i = 0; i < v->n; i++)
        if (!drop || !drop[i])
            fs[k++] = v->files[i];
    for (size_t i = 0; i < nadd; i++)
        fs[k++] = add[i];
    struct version *nv = version_new(fs, k);
    free(fs);
    return nv;
}

/* --- flush --- */

static void pop_imm(struct part *p, struct memtable *mt)
{
    pthread_mutex_lock(&p->mu);
    /* before the memtable leaves the list: whoever sees it gone (a
     * store_db_flush) also sees its generation done */
    atomic_store(&p->done_gen, mt_gen(mt));
    memmove(p->imm, p->imm + 1, (p->nimm - 1) * sizeof *p->imm);
    p->nimm--;
    pthread_mutex_unlock(&p->mu);
    mt_unref(mt); /* the partition's reference */
}

static int write_memtable(struct memtable *mt, struct outputs *o, uint64_t *max_seq)
{
    struct iter *it = mt_iter_pass(mt);
    struct buf last = BUF_INIT;
    int rc = ERR_OK;
    for (it_seek_first(it); it_valid(it) && !rc; it_next(it)) {
        struct slice ik = it_key(it);
        if (ikey_seq(ik) > *max_seq)
            *max_seq = ikey_seq(ik);
        struct slice uk = ikey_user(ik);
        bool first = !slice_eq(uk, slice_make(last.data, last.len));
        if (first) {
            buf_reset(&last);
            buf_append(&last, uk.ptr, uk.len);
        }
        rc = outputs_add(o, ik, it_value(it), first);
    }
    buf_destroy(&last);
    it_destroy(it);
    return rc ? rc : outputs_finish(o);
}

int compact_flush(struct part *p, bool *fatal)
{
    pthread_mutex_lock(&p->mu);
    struct memtable *mt = p->nimm ? p->imm[0] : NULL;
    pthread_mutex_unlock(&p->mu);
    if (!mt)
        return ERR_OK;
    if (mt_count(mt) == 0) {
        pop_imm(p, mt);
        return ERR_OK;
    }
    int64_t t0 = clock_mono_ns();
    struct outputs o = {.p = p, .fast_from = INT64_MIN, .hot_from = INT64_MAX};
    uint64_t max_seq = p->last_seq;
    struct version *v = current(p), *nv = NULL;
    bool replaced = false;
    int rc = write_memtable(mt, &o, &max_seq);
    if (!rc) {
        nv = edit(v, NULL, o.done, o.ndone);
        rc = part_write_manifest(p, nv, mt_gen(mt), max_seq, &replaced);
    }
    if (rc && replaced) {
        /* the new manifest may be the one on disk: keep its files, keep
         * the memtable and WAL too, and stop writing */
        part_install(p, nv);
        nv = NULL;
        *fatal = true;
        outputs_free(&o, false);
        version_unref(v);
        return rc;
    }
    if (!rc) {
        part_install(p, nv);
        nv = NULL;
        pop_imm(p, mt);
        struct db_metrics *m = &p->db->m;
        atomic_fetch_add(&m->flushes, 1);
        atomic_fetch_add(&m->flush_ns, (unsigned long long)(clock_mono_ns() - t0));
        atomic_fetch_add(&m->bytes_flushed, o.bytes);
    }
    outputs_free(&o, rc != ERR_OK);
    version_unref(nv);
    version_unref(v);
    return rc;
}

/* --- compaction --- */

/* The inputs of a merge, a binary heap on their current keys: the
 * smallest at the root, the second smallest at one of its children. */
struct merge_in {
    struct sst_scan *s;
    bool may_copy; /* its blocks may go to the output as they are stored */
    int64_t window;
    size_t order; /* newer files first among equal keys */
};

struct merge_heap {
    struct merge_in *v;
    size_t n;
};

static bool in_before(const struct merge_in *a, const struct merge_in *b)
{
    int c = slice_cmp(sst_scan_key(a->s), sst_scan_key(b->s));
    return c < 0 || (c == 0 && a->order < b->order);
}

static void heap_down(struct merge_heap *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < h->n && in_before(&h->v[l], &h->v[m]))
            m = l;
        if (l + 1 < h->n && in_before(&h->v[l + 1], &h->v[m]))
            m = l + 1;
        if (m == i)
            return;
        struct merge_in t = h->v[i];
        h->v[i] = h->v[m];
        h->v[m] = t;
        i = m;
    }
}

/* After the root's scan moved: drops it at its end (its error, if any, in
 * *rc) and restores the order. */
static void heap_fix_root(struct merge_heap *h, int *rc)
{
    struct merge_in *r = &h->v[0];
    if (!sst_scan_valid(r->s)) {
        if (!*rc)
            *rc = sst_scan_status(r->s);
        sst_scan_free(r->s);
        *r = h->v[--h->n];
    }
    heap_down(h, 0);
}

/* Whether every key of the root's current block is below the user key of
 * every other input's current row: the block can then be copied whole. */
static bool root_block_first(const struct merge_heap *h)
{
    struct slice last = ikey_user(sst_scan_block_last(h->v[0].s));
    for (size_t i = 1; i <= 2 && i < h->n; i++) {
        struct slice k = sst_scan_key(h->v[i].s);
        if (!ikey_ok(k) || slice_cmp(last, ikey_user(k)) >= 0)
            return false;
    }
    return true;
}

/* Whether the blocks of f may be copied into the merge's output as they
 * are: the output is compressed for speed like them, and no row of f is
 * dropped or rewritten by the rules below (TTL cuts, tombstones). */
static bool file_may_copy(const struct file_meta *f, const struct outputs *o, bool full,
                          int64_t cutoff, const struct event_cuts *cuts,
                          const struct tomb_set *tombs)
{
    if (f->window < o->fast_from || (full && f->props.deletes > 0))
        return false;
    if (f->props.min_ts < event_cuts_max(cuts, cutoff))
        return false;
    for (size_t t = 0; t < tombs->n; t++)
        if (f->props.max_ts >= tombs->v[t].lo && f->props.min_ts <= tombs->v[t].hi)
            return false;
    return true;
}

static int64_t ts_of_key(const void *p, struct slice ukey)
{
    return part_key_ts(p, ukey);
}

/* Copies the root's current block to the output of its window. */
static int copy_block(struct outputs *o, const struct merge_in *in)
{
    struct win_builder *w;
    int rc = builder_for(o, in->window, true, &w);
    if (!rc)
        rc = sst_add_block(w->b, sst_scan_block_stored(in->s), sst_scan_block_raw(in->s),
                           sst_scan_block_last(in->s), sst_scan_block_filter(in->s), ts_of_key,
                           o->p);
    if (!rc)
        o->copied++;
    return rc;
}

/* The rules of a merge for one row (the newest version of its user key). */
struct merge_rules {
    bool full;
    int64_t cutoff;
    const struct event_cuts *cuts;
    const struct tomb_set *tombs;
    uint64_t *expired;
};

/* A row whose newest version is a MERGE: the older versions of its key are
 * folded into it (rec_merge) until a PUT, a delete or a deleted version,
 * and it goes out when its key ends. */
struct pending {
    bool active;
    bool keep_seq; /* written after a tombstone of its range */
    int kind;      /* IKEY_MERGE until a PUT was folded in */
    struct buf ik, value, tmp;
};

/* Whether a version is gone: past a TTL, or covered by a range tombstone. */
static bool version_dropped(struct part *p, const struct merge_rules *r, struct slice ik,
                            bool *tombed)
{
    struct slice uk = ikey_user(ik);
    int64_t ts = part_key_ts(p, uk);
    *tombed = false;
    if (ts < r->cutoff ||
        (r->cuts->n && ts < event_cuts_get(r->cuts, part_key_event(p, uk), r->cutoff))) {
        if (ikey_kind(ik) != IKEY_DEL && !p->is_index)
            (*r->expired)++;
        return true;
    }
    if (r->tombs->n) {
        struct slice h = part_key_host(p, uk), e = part_key_event(p, uk);
        if (tomb_covers(r->tombs, h, e, ts, ikey_seq(ik), UINT64_MAX))
            return true; /* deleted by a range tombstone */
        /* written after a tombstone of its range: keep its sequence */
        *tombed = tomb_matches(r->tombs, h, e, ts);
    }
    return false;
}

/* Writes a row with the newest version's key; in a full merge with
 * sequence 0 unless keep_seq. */
static int put_row(const struct merge_rules *r, struct slice ik, int kind, struct slice value,
                   bool keep_seq, struct outputs *o, struct buf *zero)
{
    if ((!r->full || keep_seq) && kind == ikey_kind(ik))
        return outputs_add(o, ik, value, true);
    /* The output holds the only on-disk version of each key of the
     * window, older than every later write: its sequence can be 0, which
     * makes the trailers identical and cheap to compress. */
    buf_reset(zero);
    ikey_append(zero, ikey_user(ik), r->full && !keep_seq ? 0 : ikey_seq(ik), kind);
    return outputs_add(o, slice_make(zero->data, zero->len), value, true);
}

static int merge_row(struct part *p, const struct merge_rules *r, struct slice ik,
                     struct slice value, struct outputs *o, struct buf *zero, struct pending *pend)
{
    bool tombed;
    if (version_dropped(p, r, ik, &tombed))
        return ERR_OK;
    int kind = ikey_kind(ik);
    if (r->full && kind == IKEY_DEL)
        return ERR_OK;
    if (kind == IKEY_MERGE) {
        pend->active = true;
        pend->keep_seq = tombed;
        pend->kind = IKEY_MERGE;
        buf_reset(&pend->ik);
        buf_append(&pend->ik, ik.ptr, ik.len);
        buf_reset(&pend->value);
        buf_append(&pend->value, value.ptr, value.len);
        return ERR_OK;
    }
    return put_row(r, ik, kind, value, tombed, o, zero);
}

/* An older version of the pending row's key. */
static int pending_fold(struct part *p, const struct merge_rules *r, struct slice ik,
                        struct slice value, struct pending *pend)
{
    bool tombed;
    int kind = ikey_kind(ik);
    if (pend->kind != IKEY_MERGE)
        return ERR_OK; /* a PUT or a delete ended the chain */
    if (kind == IKEY_DEL || version_dropped(p, r, ik, &tombed)) {
        /* nothing older counts: the row is whole, and must not be merged
         * with older versions in files outside this merge */
        pend->kind = IKEY_PUT;
        return ERR_OK;
    }
    buf_reset(&pend->tmp);
    int rc = rec_merge(&pend->tmp, slice_make(pend->value.data, pend->value.len), value);
    if (rc)
        return err_corrupt("%s: bad merge value in compaction input", p->dir);
    struct buf t = pend->value;
    pend->value = pend->tmp;
    pend->tmp = t;
    if (kind == IKEY_PUT)
        pend->kind = IKEY_PUT;
    return ERR_OK;
}

static int pending_flush(const struct merge_rules *r, struct pending *pend, struct outputs *o,
                         struct buf *zero)
{
    pend->active = false;
    /* a full merge holds every on-disk version: the row is whole */
    int kind = r->full ? IKEY_PUT : pend->kind;
    return put_row(r, slice_make(pend->ik.data, pend->ik.len), kind,
                   slice_make(pend->value.data, pend->value.len), pend->keep_seq, o, zero);
}

/* Merges the files idx[0..n) of one window. full: they are all the files
 * of the window, so tombstones can go and sequences become 0. Where a block
 * of one file comes wholly before the rows of the others (files of
 * successive flushes hardly overlap), it is copied as stored rather than
 * decoded row by row and compressed again; its rows keep their sequences.
 * Older versions of a key are dropped, except under a MERGE: folded into
 * it, or, when the MERGE went out in a copied block, copied as they are
 * up to the first PUT (readers merge them). */
static int merge_window(struct part *p, struct version *v, const size_t *idx, size_t n, bool full,
                        int64_t cutoff, const struct event_cuts *cuts, const struct tomb_set *tombs,
                        struct outputs *o, uint64_t *expired)
{
    struct merge_rules r = {full, cutoff, cuts, tombs, expired};
    struct merge_heap h = {xcalloc(n + 1, sizeof *h.v), 0};
    int rc = ERR_OK;
    for (size_t i = 0; i < n; i++) {
        const struct file_meta *f = v->files[idx[i]];
        struct merge_in in = {sst_scan_new(f->table),
                              file_may_copy(f, o, full, cutoff, cuts, tombs), f->window, i};
        if (!sst_scan_valid(in.s)) {
            if (!rc)
                rc = sst_scan_status(in.s);
            sst_scan_free(in.s);
            continue;
        }
        h.v[h.n++] = in;
    }
    for (size_t i = h.n / 2 + 1; i-- > 0;)
        heap_down(&h, i);
    struct buf last = BUF_INIT, zero = BUF_INIT;
    struct pending pend = {false, false, 0, BUF_INIT, BUF_INIT, BUF_INIT};
    bool have_last = false, copy_older = false;
    while (h.n && !rc) {
        struct merge_in *in = &h.v[0];
        struct slice ik = sst_scan_key(in->s);
        if (!ikey_ok(ik)) {
            rc = err_corrupt("%s: bad key in compaction input", p->dir);
            break;
        }
        struct slice uk = ikey_user(ik);
        bool older = have_last && slice_eq(uk, slice_make(last.data, last.len));
        if (!older && pend.active && (rc = pending_flush(&r, &pend, o, &zero)))
            break;
        if (!older && in->may_copy && sst_scan_block_start(in->s) && root_block_first(&h)) {
            rc = copy_block(o, in);
            buf_reset(&last);
            struct slice bl = sst_scan_block_last(in->s);
            buf_append(&last, ikey_user(bl).ptr, ikey_user(bl).len);
            copy_older = ikey_kind(bl) == IKEY_MERGE;
            sst_scan_next_block(in->s);
        } else {
            if (!older) {
                buf_reset(&last);
                buf_append(&last, uk.ptr, uk.len);
                copy_older = false;
                rc = merge_row(p, &r, ik, sst_scan_value(in->s), o, &zero, &pend);
            } else if (pend.active) {
                rc = pending_fold(p, &r, ik, sst_scan_value(in->s), &pend);
            } else if (copy_older) {
                copy_older = ikey_kind(ik) == IKEY_MERGE;
                rc = outputs_add(o, ik, sst_scan_value(in->s), true);
            }
            sst_scan_next(in->s);
        }
        have_last = true;
        heap_fix_root(&h, &rc);
    }
    if (!rc && pend.active)
        rc = pending_flush(&r, &pend, o, &zero);
    while (h.n)
        sst_scan_free(h.v[--h.n].s);
    free(h.v);
    buf_destroy(&last);
    buf_destroy(&zero);
    buf_destroy(&pend.ik);
    buf_destroy(&pend.value);
    buf_destroy(&pend.tmp);
    return rc;
}

/* Size-tiered: the newest files are taken while each is at most twice the
 * biggest taken so far, so files of one size class merge into the next
 * class and every byte is rewritten O(log n) times, not once per flush. A
 * full file (a compaction split its output there) stops the run: merging
 * full files only rewrites them. Returns how many to merge, 0 for fewer
 * than STORE_COMPACT_TRIGGER. */
static size_t tiered_pick(const struct part *p, const struct version *v, const size_t *idx,
                          size_t n)
{
    uint64_t full = p->db->store->opts.max_file_bytes, biggest = 0;
    size_t k = 0;
    while (k < n) {
        uint64_t size = v->files[idx[k]]->props.size;
        if (size >= full || (k > 0 && size > 2 * biggest))
            break;
        if (size > biggest)
            biggest = size;
        k++;
    }
    return k >= STORE_COMPACT_TRIGGER ? k : 0;
}

/* A cold window (two or more windows older than the newest one: writes
 * have moved on) is merged, to its final form, while its newest files are
 * "fast" (a flush, or a merge of the window while it was being written)
 * or, once it has aged (not just settled), "hot" (final for a window among
 * the two newest, not for an older one):
 * all of them, as a whole-window merge (sequences 0) when the window has
 * no other file, else just those (rows that came late), so that a late
 * batch does not rewrite the whole window. Each late merge leaves a small
 * final file; those are merged among themselves size-tiered, so a window
 * that keeps getting late rows holds O(log n) of them, not one per batch.
 * Full files are final. Returns how many to merge; shared by the picker
 * and by compact_wanted, so that a wanted compaction always finds work. */
static size_t cold_window_pick(const struct part *p, const struct version *v, const size_t *idx,
                               size_t n, bool aged)
{
    size_t k = 0;
    while (k < n && (v->files[idx[k]]->fast || (aged && v->files[idx[k]]->hot)))
        k++;
    return k > 0 ? k : tiered_pick(p, v, idx, n);
}

/* How many of the window's files (idx, newest first) to merge; 0 for none.
 * Forced runs take the whole window when that removes something. */
static size_t window_pick(const struct part *p, struct version *v, const size_t *idx, size_t n,
                          bool force, bool cold, bool aged, int64_t cutoff,
                          const struct event_cuts *cuts, const struct tomb_set *tombs)
{
    if (n == 0)
        return 0;
    /* a range tombstone not yet applied to a file it overlaps */
    for (size_t i = 0; i < n; i++) {
        const struct file_meta *f = v->files[idx[i]];
        for (size_t t = 0; t < tombs->n; t++)
            if (f->tomb_seq < tombs->v[t].seq && f->props.max_ts >= tombs->v[t].lo &&
                f->props.min_ts <= tombs->v[t].hi)
                return n;
    }
    /* Event TTLs: a file that may hold rows between the cut it was last
     * merged with and today's cut is rewritten (whole window), so the
     * sweep drops those rows; a window wholly behind its last cut is not
     * read again. */
    for (size_t i = 0; cuts->n && i < n; i++) {
        const struct file_meta *f = v->files[idx[i]];
        int64_t done = f->cut_gen == cuts->gen ? f->cut_at : INT64_MIN;
        if (f->props.min_ts < cutoff && f->props.max_ts >= done && done < cutoff)
            return n;
    }
    if (force) {
        const struct file_meta *f = v->files[idx[0]];
        const struct sst_props *pr = &f->props;
        return n >= 2 || f->fast || (aged && f->hot) || pr->deletes > 0 || pr->min_ts < cutoff ? n
                                                                                               : 0;
    }
    return cold ? cold_window_pick(p, v, idx, n, aged) : tiered_pick(p, v, idx, n);
}

/* A compaction as its picker decides it, before any file is read: what the
 * executor does, and all it needs to do it. */
struct compaction {
    struct version *v;      /* a reference: the files it was picked from */
    int64_t cutoff;         /* rows older go (database TTL, disk guard) */
    struct event_cuts cuts; /* per-event cut-offs at the pick */
    struct tomb_set *tombs; /* a reference */
    int64_t fast_from;      /* windows from here on are compressed for speed */
    int64_t hot_from;       /* windows from here on, before fast_from, get LZ4HC */
    bool *drop_whole;       /* v->n: files wholly past the cutoff */
    size_t ndrop_whole;
    uint64_t reclaimed, expired_whole;
    /* merges: for each, k file indexes of v in idx[off..off+k), and full
     * when they are every file of their window */
    struct merge_pick {
        size_t off, k;
        bool full;
        int64_t window;
    } * merges;
    size_t nmerges;
    size_t *idx;
};

static void compaction_free(struct compaction *c)
{
    version_unref(c->v);
    event_cuts_destroy(&c->cuts);
    tomb_set_unref(c->tombs);
    free(c->drop_whole);
    free(c->merges);
    free(c->idx);
}

/* The picker: whole files past the cutoff, and per window the files
 * window_pick chooses (force: everything worth merging). */
static void compact_pick(struct part *p, bool force, struct compaction *c)
{
    struct store_db *db = p->db;
    memset(c, 0, sizeof *c);
    int64_t ttl = atomic_load(&db->ttl_ns);
    int64_t now = db_now(db);
    c->cutoff = ttl > 0 ? now - ttl : INT64_MIN;
    if (atomic_load(&db->floor_ts) > c->cutoff)
        c->cutoff = atomic_load(&db->floor_ts);
    db_event_cuts(db, now, &c->cuts);
    int64_t pick_cutoff = event_cuts_max(&c->cuts, c->cutoff); /* a window with rows to drop */
    c->tombs = db_tombs(db);
    struct version *v = c->v = current(p);
    c->drop_whole = xcalloc(v->n + 1, sizeof *c->drop_whole);
    c->idx = xcalloc(v->n + 1, sizeof *c->idx);
    c->merges = xcalloc(v->n + 1, sizeof *c->merges);
    for (size_t i = 0; i < v->n; i++)
        if (v->files[i]->props.max_ts < c->cutoff) {
            c->drop_whole[i] = true;
            c->ndrop_whole++;
            c->reclaimed += v->files[i]->props.size;
            if (!p->is_index)
                c->expired_whole += v->files[i]->props.entries - v->files[i]->props.deletes;
        }
    int64_t newest = v->n ? v->files[v->n - 1]->window : 0;
    /* windows still being written will be merged again: compress them for
     * speed; a forced compaction, or a database that writes have left,
     * wants the smallest files */
    bool settle = atomic_load(&p->settle);
    c->fast_from = force || settle ? INT64_MAX : newest - 1;
    c->hot_from = newest - 1;
    size_t used = 0;
    for (size_t i = 0, j; i < v->n; i = j) {
        size_t n = 0, *idx = c->idx + used;
        for (j = i; j < v->n && v->files[j]->window == v->files[i]->window; j++)
            if (!c->drop_whole[j])
                idx[n++] = j;
        bool aged = v->files[i]->window < newest - 1, cold = settle || aged;
        size_t k = window_pick(p, v, idx, n, force, cold, aged, pick_cutoff, &c->cuts, c->tombs);
        if (k == 0)
            continue;
        c->merges[c->nmerges++] = (struct merge_pick){used, k, k == n, v->files[i]->window};
        used += k;
    }
}

/* The executor: runs the merges of c, then installs the new version (one
 * manifest write) with the merged and whole-dropped files gone. */
/* The union of the catalogs of files idx[0..n) of v when their merge keeps
 * every row as it is: no delete among them, no row past a TTL cut, no
 * range tombstone over them, and one output file (well under
 * max_file_bytes). NULL otherwise: the output's catalog is then built from
 * its rows, which costs more CPU than the merge itself. */
static struct cat_builder *merged_catalog(struct part *p, struct version *v, const size_t *idx,
                                          size_t n, const struct compaction *c)
{
    if (p->is_index)
        return NULL;
    int64_t cut = event_cuts_max(&c->cuts, c->cutoff);
    uint64_t bytes = 0;
    struct cat_file **cats = xcalloc(n + 1, sizeof *cats);
    struct cat_builder *b = NULL;
    for (size_t i = 0; i < n; i++) {
        const struct file_meta *f = v->files[idx[i]];
        if (f->cat_rc || f->props.deletes || f->props.min_ts < cut)
            goto done;
        for (size_t t = 0; t < c->tombs->n; t++)
            if (f->props.max_ts >= c->tombs->v[t].lo && f->props.min_ts <= c->tombs->v[t].hi)
                goto done;
        bytes += f->props.size;
        cats[i] = f->cat;
    }
    if (bytes <= p->db->store->opts.max_file_bytes / 2)
        b = cat_builder_merge(p->db->desc, cats, n);
done:
    free(cats);
    return b;
}

/* Whether every entry of f reads (every block's CRC and decoding). */
static bool file_reads_whole(const struct file_meta *f)
{
    struct sst_scan *sc = sst_scan_new(f->table);
    while (sst_scan_valid(sc))
        sst_scan_next(sc);
    int rc = sst_scan_status(sc);
    sst_scan_free(sc);
    return rc == ERR_OK;
}

/* After a merge of files idx[0..k) of v failed with ERR_CORRUPT: the
 * inputs that do not read whole leave the partition (a new manifest
 * without them) and move to its quarantine/ folder, kept for inspection,
 * so that compaction goes on with the others instead of failing at every
 * run while files pile up. Their rows are no longer read; the reads that
 * met the damage failed already. ERR_OK if some file went, ERR_CORRUPT if
 * every input reads whole (the damage is elsewhere), or the manifest's
 * error. */
static int quarantine(struct part *p, struct version *v, const size_t *idx, size_t k, bool *fatal)
{
    bool *drop = xcalloc(v->n + 1, sizeof *drop);
    size_t n = 0;
    for (size_t i = 0; i < k; i++)
        if (!file_reads_whole(v->files[idx[i]])) {
            drop[idx[i]] = true;
            n++;
        }
    if (n == 0) {
        free(drop);
        return ERR_CORRUPT;
    }
    struct version *nv = edit(v, drop, NULL, 0);
    bool replaced = false;
    int rc = part_write_manifest(p, nv, p->flushed_gen, p->last_seq, &replaced);
    if (rc) {
        if (replaced) { /* the new manifest may be live: serve what it lists */
            part_install(p, nv);
            nv = NULL;
            *fatal = true;
        }
        version_unref(nv);
        free(drop);
        return rc;
    }
    part_install(p, nv);
    struct env *env = p->db->store->env;
    struct buf dir = BUF_INIT, to = BUF_INIT;
    buf_printf(&dir, "%s/quarantine", p->dir);
    env_mkdir(env, dir.data);
    for (size_t i = 0; i < v->n; i++) {
        if (!drop[i])
            continue;
        const struct file_meta *f = v->files[i];
        const char *base = strrchr(f->path, '/');
        buf_reset(&to);
        buf_printf(&to, "%s/%s", dir.data, base ? base + 1 : f->path);
        int mrc = env_rename(env, f->path, to.data);
        atomic_fetch_add(&p->db->m.quarantined, 1);
        log_error("%s: damaged, taken out of the partition%s%s (%" PRIu64
                  " entries no longer read); compaction goes on without it",
                  f->path, mrc == ERR_OK ? " and moved to " : "", mrc == ERR_OK ? to.data : "",
                  f->props.entries);
    }
    env_sync_dir(env, p->dir);
    buf_destroy(&dir);
    buf_destroy(&to);
    free(drop);
    return ERR_OK;
}

static int compact_execute(struct part *p, struct compaction *c, bool *fatal)
{
    struct store_db *db = p->db;
    struct version *v = c->v, *nv = NULL;
    uint64_t tomb_seq = tomb_set_max_seq(c->tombs), expired = c->expired_whole;
    int64_t t0 = clock_mono_ns();
    bool *drop = xcalloc(v->n + 1, sizeof *drop);
    memcpy(drop, c->drop_whole, v->n * sizeof *drop);
    struct outputs o = {.p = p, .fast_from = c->fast_from, .hot_from = c->hot_from};
    int rc = ERR_OK;
    for (size_t m = 0; m < c->nmerges && !rc; m++) {
        const struct merge_pick *mp = &c->merges[m];
        const size_t *idx = c->idx + mp->off;
        size_t first_out = o.ndone;
        cat_builder_free(o.merged);
        o.merged = merged_catalog(p, v, idx, mp->k, c);
        o.merged_window = mp->window;
        rc = merge_window(p, v, idx, mp->k, mp->full, c->cutoff, &c->cuts, c->tombs, &o, &expired);
        if (rc == ERR_CORRUPT && quarantine(p, v, idx, mp->k, fatal) == ERR_OK) {
            /* nothing of this run is installed: the next one merges anew */
            outputs_free(&o, true);
            free(drop);
            return ERR_OK;
        }
        /* the window's builder stays open until outputs_finish: finish it
         * now so its files can carry the cut */
        for (size_t b = 0; !rc && b < o.nopen; b++)
            if (o.open[b].b && o.open[b].window == mp->window)
                rc = finish_one(&o, &o.open[b]);
        for (size_t d = first_out; !rc && d < o.ndone; d++) {
            o.done[d]->tomb_seq = tomb_seq; /* every input row checked */
            if (mp->full) {
                o.done[d]->cut_at = event_cuts_min(&c->cuts, c->cutoff);
                o.done[d]->cut_gen = c->cuts.gen;
            }
        }
        for (size_t f = 0; f < mp->k; f++)
            drop[idx[f]] = true;
    }
    if (!rc)
        rc = outputs_finish(&o);
    if (!rc && (c->ndrop_whole || c->nmerges)) {
        nv = edit(v, drop, o.done, o.ndone);
        bool replaced = false;
        rc = part_write_manifest(p, nv, p->flushed_gen, p->last_seq, &replaced);
        if (rc && replaced) {
            /* keep every file (old and new): either manifest may be live */
            part_install(p, nv);
            nv = NULL;
            *fatal = true;
            outputs_free(&o, false);
            free(drop);
            return rc;
        }
        if (!rc) {
            for (size_t i = 0; i < v->n; i++)
                if (drop[i])
                    atomic_store(&v->files[i]->obsolete, true);
            part_install(p, nv);
            nv = NULL;
            atomic_fetch_add(&db->m.compactions, 1);
            atomic_fetch_add(&db->m.compact_ns, (unsigned long long)(clock_mono_ns() - t0));
            atomic_fetch_add(&db->m.bytes_compacted, o.bytes);
            atomic_fetch_add(&db->m.blocks_copied, o.copied);
            atomic_fetch_add(&db->m.ttl_files_dropped, c->ndrop_whole);
            atomic_fetch_add(&db->m.ttl_bytes_reclaimed, c->reclaimed);
            atomic_fetch_add(&db->m.ttl_rows_expired, expired);
        }
    }
    if (rc)
        log_error("%s: compaction failed: %s", p->dir, err_name(rc));
    else if (!p->is_index)
        zdict_set_train(db->dicts); /* from the samples cold blocks gave, if it has none */
    outputs_free(&o, rc != ERR_OK);
    version_unref(nv);
    free(drop);
    return rc;
}

int compact_run(struct part *p, bool force, bool *fatal)
{
    struct compaction c;
    compact_pick(p, force, &c);
    int rc = compact_execute(p, &c, fatal);
    compaction_free(&c);
    return rc;
}

int compact_drop_before(struct part *p, int64_t floor, uint64_t *bytes, bool *fatal)
{
    struct version *v = current(p);
    bool *drop = xcalloc(v->n + 1, sizeof *drop);
    uint64_t sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++)
        if (v->files[i]->props.max_ts < floor) {
            drop[i] = true;
            sum += v->files[i]->props.size;
            n++;
        }
    int rc = ERR_OK;
    if (n) {
        struct version *nv = edit(v, drop, NULL, 0);
        bool replaced = false;
        rc = part_write_manifest(p, nv, p->flushed_gen, p->last_seq, &replaced);
        if (!rc || replaced) {
            if (!rc)
                for (size_t i = 0; i < v->n; i++)
                    if (drop[i])
                        atomic_store(&v->files[i]->obsolete, true);
            part_install(p, nv);
            nv = NULL;
            if (rc)
                *fatal = true;
            else
                *bytes += sum;
        }
        version_unref(nv);
    }
    version_unref(v);
    free(drop);
    return rc;
}

/* A range tombstone overlaps a file not yet merged past it. */
static bool tombs_unapplied(const struct version *v, const struct tomb_set *tombs)
{
    for (size_t i = 0; i < v->n; i++) {
        const struct file_meta *f = v->files[i];
        for (size_t t = 0; t < tombs->n; t++)
            if (f->tomb_seq < tombs->v[t].seq && f->props.max_ts >= tombs->v[t].lo &&
                f->props.min_ts <= tombs->v[t].hi)
                return true;
    }
    return false;
}

bool compact_wanted(struct part *p)
{
    pthread_mutex_lock(&p->mu);
    struct version *v = p->ver;
    version_ref(v);
    pthread_mutex_unlock(&p->mu);
    size_t *idx = xcalloc(v->n + 1, sizeof *idx);
    struct tomb_set *tombs = db_tombs(p->db);
    bool want = tombs_unapplied(v, tombs);
    tomb_set_unref(tombs);
    int64_t newest = v->n ? v->files[v->n - 1]->window : 0;
    bool settle = atomic_load(&p->settle);
    for (size_t i = 0, j; i < v->n && !want; i = j) {
        size_t n = 0;
        for (j = i; j < v->n && v->files[j]->window == v->files[i]->window; j++)
            idx[n++] = j;
        bool aged = v->files[i]->window < newest - 1, cold = settle || aged;
        want = (cold ? cold_window_pick(p, v, idx, n, aged) : tiered_pick(p, v, idx, n)) > 0;
    }
    free(idx);
    version_unref(v);
    return want;
}

/* Deletes WAL segments that every partition has flushed. */
void compact_delete_old_wal(struct store_db *db)
{
    uint64_t done = UINT64_MAX;
    for (uint32_t i = 0; i < db->nparts; i++) {
        uint64_t g = atomic_load(&db->parts[i].done_gen);
        if (g < done)
            done = g;
    }
    char **names;
    size_t count;
    if (env_list(db->store->env, db->wal_dir, &names, &count))
        return;
    struct buf path = BUF_INIT;
    for (size_t i = 0; i < count; i++) {
        unsigned long long seg;
        if (sscanf(names[i], "%llu.log", &seg) != 1 || seg > done)
            continue;
        buf_reset(&path);
        buf_printf(&path, "%s/%s", db->wal_dir, names[i]);
        env_unlink(db->store->env, path.data);
    }
    buf_destroy(&path);
    env_free_list(names, count);
}
