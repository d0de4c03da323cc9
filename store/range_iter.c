/* A bounded view [lo, hi) of an iterator (store/iter.h, it_range_new). */
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "store/iter.h"

struct range_iter {
    struct iter base;
    struct iter *in;
    struct buf lo, hi; /* hi.len == 0: unbounded */
    struct buf tmp;    /* translated seek target */
    bool fix_prefix;
};

static bool above_lo(const struct range_iter *r, struct slice k)
{
    return slice_cmp(k, slice_make(r->lo.data, r->lo.len)) >= 0;
}

static bool below_hi(const struct range_iter *r, struct slice k)
{
    return r->hi.len == 0 || slice_cmp(k, slice_make(r->hi.data, r->hi.len)) < 0;
}

/* The position after a move: in's, if within [lo, hi). */
static void publish(struct range_iter *r, bool inside)
{
    if (inside)
        it_set_as(&r->base, r->in);
    else
        it_set_end(&r->base);
}

/* After a seek: both bounds. */
static void check_both(struct range_iter *r)
{
    publish(r, it_valid(r->in) && above_lo(r, it_key(r->in)) && below_hi(r, it_key(r->in)));
}

static void rg_seek_first(struct iter *it)
{
    struct range_iter *r = (struct range_iter *)it;
    it_seek(r->in, slice_make(r->lo.data, r->lo.len));
    check_both(r);
}

static void rg_seek_last(struct iter *it)
{
    struct range_iter *r = (struct range_iter *)it;
    if (r->hi.len == 0) {
        it_seek_last(r->in);
    } else {
        it_seek(r->in, slice_make(r->hi.data, r->hi.len));
        if (it_valid(r->in))
            it_prev(r->in);
        else if (it_status(r->in) == 0)
            it_seek_last(r->in);
    }
    check_both(r);
}

static void rg_seek(struct iter *it, struct slice t)
{
    struct range_iter *r = (struct range_iter *)it;
    if (r->fix_prefix && t.len >= 2 && r->lo.len >= 2) {
        buf_reset(&r->tmp);
        buf_append(&r->tmp, r->lo.data, 2);
        buf_append(&r->tmp, t.ptr + 2, t.len - 2);
        t = slice_make(r->tmp.data, r->tmp.len);
    }
    struct slice lo = slice_make(r->lo.data, r->lo.len);
    it_seek(r->in, slice_cmp(t, lo) < 0 ? lo : t);
    check_both(r);
}

/* From a key within the range, next only can pass hi, prev only lo. */
static void rg_next(struct iter *it)
{
    struct range_iter *r = (struct range_iter *)it;
    it_next(r->in);
    publish(r, it_valid(r->in) && below_hi(r, it_key(r->in)));
}

static void rg_prev(struct iter *it)
{
    struct range_iter *r = (struct range_iter *)it;
    it_prev(r->in);
    publish(r, it_valid(r->in) && above_lo(r, it_key(r->in)));
}

static int rg_status(const struct iter *it)
{
    return it_status(((const struct range_iter *)it)->in);
}

static void rg_destroy(struct iter *it)
{
    struct range_iter *r = (struct range_iter *)it;
    it_destroy(r->in);
    buf_destroy(&r->lo);
    buf_destroy(&r->hi);
    buf_destroy(&r->tmp);
    free(r);
}

static const struct it_ops range_ops = {
    .seek_first = rg_seek_first,
    .seek_last = rg_seek_last,
    .seek = rg_seek,
    .next = rg_next,
    .prev = rg_prev,
    .status = rg_status,
    .destroy = rg_destroy,
};

struct iter *it_range_new(struct iter *in, struct slice lo, struct slice hi, bool fix_prefix)
{
    struct range_iter *r = xcalloc(1, sizeof(*r));
    it_init(&r->base, &range_ops);
    r->in = in;
    buf_append(&r->lo, lo.ptr, lo.len);
    buf_append(&r->hi, hi.ptr, hi.len);
    r->fix_prefix = fix_prefix;
    return &r->base;
}
