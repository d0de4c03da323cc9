/* A bounded view [lo, hi) of a store iterator, and the merge comparators.
 * Each child of a bucket fan-out or of a host-index merge is one of these,
 * so the merge sees exactly the keys of the plan's ranges. */
#include <stdlib.h>
#include <string.h>

#include "query/query_int.h"
#include "store/coding.h"

struct range_iter {
    struct iter base;
    struct iter *in;
    struct buf lo, hi; /* hi.len == 0: unbounded */
    struct buf tmp;    /* translated seek target */
    bool fix_bucket;
    bool valid; /* in stands within [lo, hi); set by every move */
};

static bool above_lo(const struct range_iter *r, struct slice k)
{
    return slice_cmp(k, slice_make(r->lo.data, r->lo.len)) >= 0;
}

static bool below_hi(const struct range_iter *r, struct slice k)
{
    return r->hi.len == 0 || slice_cmp(k, slice_make(r->hi.data, r->hi.len)) < 0;
}

/* After a seek: both bounds. */
static void check_both(struct range_iter *r)
{
    r->valid = it_valid(r->in) && above_lo(r, it_key(r->in)) && below_hi(r, it_key(r->in));
}

static bool rg_valid(const struct iter *it)
{
    return ((const struct range_iter *)it)->valid;
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
    if (r->fix_bucket && t.len >= 2 && r->lo.len >= 2) {
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
    r->valid = it_valid(r->in) && below_hi(r, it_key(r->in));
}

static void rg_prev(struct iter *it)
{
    struct range_iter *r = (struct range_iter *)it;
    it_prev(r->in);
    r->valid = it_valid(r->in) && above_lo(r, it_key(r->in));
}

static struct slice rg_key(const struct iter *it)
{
    return it_key(((const struct range_iter *)it)->in);
}

static struct slice rg_value(const struct iter *it)
{
    return it_value(((const struct range_iter *)it)->in);
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
    rg_valid, rg_seek_first, rg_seek_last, rg_seek, rg_next,
    rg_prev,  rg_key,        rg_value,     rg_status, rg_destroy,
};

struct iter *query_range_new(struct iter *in, struct slice lo, struct slice hi, bool fix_bucket)
{
    struct range_iter *r = xcalloc(1, sizeof(*r));
    it_init(&r->base, &range_ops);
    r->in = in;
    buf_append(&r->lo, lo.ptr, lo.len);
    buf_append(&r->hi, hi.ptr, hi.len);
    r->fix_bucket = fix_bucket;
    return &r->base;
}

/* Kept out of line: the fast path of query_cmp_row then needs no stack frame. */
static __attribute__((noinline)) int cmp_row_slow(struct slice a, struct slice b)
{
    if (a.len >= 2 && b.len >= 2) {
        int c = slice_cmp(slice_make(a.ptr + 2, a.len - 2), slice_make(b.ptr + 2, b.len - 2));
        if (c)
            return c;
    }
    return slice_cmp(a, b);
}

int query_cmp_row(struct slice a, struct slice b)
{
    if (a.len >= 10 && b.len >= 10) {
        /* the tskey decides almost every comparison: one 8-byte compare */
        uint64_t x = coding_get_u64be(a.ptr + 2), y = coding_get_u64be(b.ptr + 2);
        if (x != y)
            return x < y ? -1 : 1;
    }
    return cmp_row_slow(a, b);
}

int query_cmp_index(struct slice a, struct slice b)
{
    struct slice ta = key_index_tskey(a), tb = key_index_tskey(b);
    if (ta.len != 8 || tb.len != 8)
        return slice_cmp(a, b);
    int c = memcmp(ta.ptr, tb.ptr, 8);
    if (c)
        return c;
    c = slice_cmp(slice_make(a.ptr, (size_t)(ta.ptr - a.ptr)),
                  slice_make(b.ptr, (size_t)(tb.ptr - b.ptr)));
    if (c)
        return c;
    return slice_cmp(slice_make(ta.ptr + 8, (size_t)(a.ptr + a.len - ta.ptr - 8)),
                     slice_make(tb.ptr + 8, (size_t)(b.ptr + b.len - tb.ptr - 8)));
}

void query_put_row_prefix(struct buf *out, uint32_t bucket, uint64_t tskey)
{
    unsigned char b[10];
    b[0] = (unsigned char)(bucket >> 8);
    b[1] = (unsigned char)bucket;
    for (int i = 0; i < 8; i++)
        b[2 + i] = (unsigned char)(tskey >> (56 - 8 * i));
    buf_append(out, b, sizeof(b));
}
