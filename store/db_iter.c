/* Version resolution over a merged internal-key stream. Forward: the first
 * visible entry of a user key is its newest version; when it is a MERGE the
 * older versions are folded into it (rec_merge) up to a PUT, a delete or a
 * hidden version, into saved_key/saved_value. Backward: versions arrive
 * oldest first, so the row is built in saved_key/saved_value until the user
 * key changes: a PUT replaces it, a MERGE merges into it, a delete clears it. */
#include "store/db_iter.h"

#include <stdlib.h>

#include "base/buf.h"
#include "base/err.h"
#include "model/record.h"
#include "store/ikey.h"
#include "store/store_int.h"

struct db_it {
    struct iter base;
    struct iter *in;
    const struct part *p;
    uint64_t seq;
    int64_t cutoff;
    struct event_cuts cuts;
    struct tomb_set *tombs; /* NULL or a set with n > 0; a reference */
    bool forward;
    bool valid;
    bool merged; /* forward: the row is in saved_key/saved_value */
    int status;
    struct buf saved_key;   /* forward: key to skip or merged key; backward: current key */
    struct buf saved_value; /* backward or merged: current value */
    struct buf merge_buf;
};

static struct slice saved(const struct buf *b)
{
    return slice_make(b->data, b->len);
}

static void save(struct buf *b, struct slice s)
{
    buf_reset(b);
    buf_append(b, s.ptr, s.len);
}

/* false and status set when the entry is not an internal key */
static bool parse(struct db_it *d, struct slice ik)
{
    if (ikey_ok(ik) && ik.len - IKEY_TRAILER >= 10)
        return true;
    if (!d->status)
        d->status = err_corrupt("%s: bad internal key of %zu bytes", d->p->dir, ik.len);
    d->valid = false;
    return false;
}

/* Past a TTL, or covered by a range tombstone (ik: the version's key). */
static bool expired(const struct db_it *d, struct slice ukey, struct slice ik)
{
    int64_t ts = part_key_ts(d->p, ukey);
    if (ts < d->cutoff)
        return true;
    if (d->cuts.n && ts < event_cuts_get(&d->cuts, part_key_event(d->p, ukey), d->cutoff))
        return true;
    return d->tombs && tomb_covers(d->tombs, part_key_host(d->p, ukey), part_key_event(d->p, ukey),
                                   ts, ikey_seq(ik), d->seq);
}

/* Merges value, an older version, into saved_value; false on damage. */
static bool merge_older(struct db_it *d, struct slice newer, struct slice older)
{
    buf_reset(&d->merge_buf);
    int rc = rec_merge(&d->merge_buf, newer, older);
    if (rc) {
        if (!d->status)
            d->status = rc;
        d->valid = false;
        return false;
    }
    struct buf t = d->saved_value;
    d->saved_value = d->merge_buf;
    d->merge_buf = t;
    return true;
}

/* The newest visible version of the current key is a MERGE: folds the
 * older versions into it while they are visible MERGEs, and the first PUT. */
static void merge_forward(struct db_it *d, struct slice uk)
{
    save(&d->saved_key, uk);
    save(&d->saved_value, it_value(d->in));
    d->merged = true;
    d->valid = true;
    for (it_next(d->in); it_valid(d->in); it_next(d->in)) {
        struct slice ik = it_key(d->in);
        if (!parse(d, ik))
            return;
        struct slice k = ikey_user(ik);
        if (!slice_eq(k, saved(&d->saved_key)))
            return;
        int kind = ikey_kind(ik);
        if (kind == IKEY_DEL || expired(d, k, ik))
            return;
        if (!merge_older(d, saved(&d->saved_value), it_value(d->in)) || kind == IKEY_PUT)
            return;
    }
}

static void find_next(struct db_it *d, bool skipping)
{
    d->merged = false;
    while (it_valid(d->in)) {
        struct slice ik = it_key(d->in);
        if (!parse(d, ik))
            return;
        if (ikey_seq(ik) <= d->seq) {
            struct slice uk = ikey_user(ik);
            if (!skipping || slice_cmp(uk, saved(&d->saved_key)) > 0) {
                int kind = ikey_kind(ik);
                if (kind != IKEY_DEL && !expired(d, uk, ik)) {
                    if (kind == IKEY_MERGE)
                        merge_forward(d, uk);
                    else
                        d->valid = true; /* di_next saves the key before moving on */
                    return;
                }
                save(&d->saved_key, uk);
                skipping = true;
            }
        }
        it_next(d->in);
    }
    d->valid = false;
}

static void find_prev(struct db_it *d)
{
    int kind = IKEY_DEL;
    buf_reset(&d->saved_key);
    buf_reset(&d->saved_value);
    while (it_valid(d->in)) {
        struct slice ik = it_key(d->in);
        if (!parse(d, ik))
            return;
        if (ikey_seq(ik) <= d->seq) {
            struct slice uk = ikey_user(ik);
            if (kind != IKEY_DEL && slice_cmp(uk, saved(&d->saved_key)) < 0)
                break;
            int k = ikey_kind(ik);
            if (k != IKEY_DEL && expired(d, uk, ik))
                k = IKEY_DEL;
            if (k == IKEY_DEL) {
                buf_reset(&d->saved_key);
                buf_reset(&d->saved_value);
            } else if (k == IKEY_MERGE && kind != IKEY_DEL) {
                if (!merge_older(d, it_value(d->in), saved(&d->saved_value)))
                    return;
            } else {
                save(&d->saved_key, uk);
                save(&d->saved_value, it_value(d->in));
            }
            kind = k;
        }
        it_prev(d->in);
    }
    d->valid = kind != IKEY_DEL;
}

/* The position after a move: the row found, as the inner entry stands
 * (its user key) or as saved (merged, or read backward). */
static void publish(struct db_it *d)
{
    if (!d->valid || d->status)
        it_set_end(&d->base);
    else if (d->forward && !d->merged)
        it_set_pos(&d->base, ikey_user(it_key(d->in)), it_value(d->in));
    else
        it_set_pos(&d->base, saved(&d->saved_key), saved(&d->saved_value));
}

static void di_seek_first(struct iter *it)
{
    struct db_it *d = (struct db_it *)it;
    d->forward = true;
    it_seek_first(d->in);
    find_next(d, false);
    publish(d);
}

static void di_seek_last(struct iter *it)
{
    struct db_it *d = (struct db_it *)it;
    d->forward = false;
    it_seek_last(d->in);
    find_prev(d);
    publish(d);
}

static void di_seek(struct iter *it, struct slice target)
{
    struct db_it *d = (struct db_it *)it;
    /* target may be any byte string (a prefix such as bucket|tskey), so
     * the inner seek uses it bare: every internal key whose user key is
     * >= target sorts after it. A user key that is a proper prefix of the
     * target may sort after it too and is skipped here. */
    d->forward = true;
    it_seek(d->in, target);
    while (it_valid(d->in)) {
        struct slice ik = it_key(d->in);
        if (!parse(d, ik)) {
            publish(d);
            return;
        }
        if (slice_cmp(ikey_user(ik), target) >= 0)
            break;
        it_next(d->in);
    }
    find_next(d, false);
    publish(d);
}

static void di_next(struct iter *it)
{
    struct db_it *d = (struct db_it *)it;
    if (!d->forward) {
        /* in is just before the current key's entries */
        d->forward = true;
        if (it_valid(d->in))
            it_next(d->in);
        else
            it_seek_first(d->in);
    } else if (!d->merged) {
        save(&d->saved_key, ikey_user(it_key(d->in)));
        it_next(d->in);
    } /* merged: saved_key is the row's key and in is past its last version */
    find_next(d, true);
    publish(d);
}

static void di_prev(struct iter *it)
{
    struct db_it *d = (struct db_it *)it;
    if (d->forward) {
        /* move in before every entry of the current key */
        if (!d->merged)
            save(&d->saved_key, ikey_user(it_key(d->in)));
        else if (!it_valid(d->in))
            it_seek_last(d->in); /* the merge read the key's versions to the end */
        for (;;) {
            it_prev(d->in);
            if (!it_valid(d->in))
                break;
            struct slice ik = it_key(d->in);
            if (!parse(d, ik)) {
                publish(d);
                return;
            }
            if (slice_cmp(ikey_user(ik), saved(&d->saved_key)) < 0)
                break;
        }
        d->forward = false;
    }
    find_prev(d);
    publish(d);
}

static int di_status(const struct iter *it)
{
    const struct db_it *d = (const struct db_it *)it;
    return d->status ? d->status : it_status(d->in);
}

static void di_destroy(struct iter *it)
{
    struct db_it *d = (struct db_it *)it;
    it_destroy(d->in);
    buf_destroy(&d->saved_key);
    buf_destroy(&d->saved_value);
    buf_destroy(&d->merge_buf);
    event_cuts_destroy(&d->cuts);
    tomb_set_unref(d->tombs);
    free(d);
}

static const struct it_ops db_it_ops = {
    .seek_first = di_seek_first,
    .seek_last = di_seek_last,
    .seek = di_seek,
    .next = di_next,
    .prev = di_prev,
    .status = di_status,
    .destroy = di_destroy,
};

struct iter *db_iter_new(struct iter *inner, const struct part *p, uint64_t seq, int64_t cutoff,
                         const struct event_cuts *cuts, struct tomb_set *tombs)
{
    struct db_it *d = xcalloc(1, sizeof *d);
    it_init(&d->base, &db_it_ops);
    d->in = inner;
    d->p = p;
    d->seq = seq;
    d->cutoff = cutoff;
    if (cuts)
        event_cuts_copy(&d->cuts, cuts);
    if (tombs && tombs->n) {
        tomb_set_ref(tombs);
        d->tombs = tombs;
    }
    d->forward = true;
    buf_init(&d->saved_key);
    buf_init(&d->saved_value);
    buf_init(&d->merge_buf);
    return &d->base;
}
