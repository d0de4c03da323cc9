/* Internal keys: user key | ~seq:u64be | kind:u8. Newest version first in
 * memcmp order; user keys (row and index) are prefix-free, so plain memcmp
 * over whole internal keys is the one comparator of the store. */
#ifndef LB_IKEY_H
#define LB_IKEY_H

#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/coding.h"
#include "base/slice.h"

/* A MERGE is a put whose fields are merged into the older versions of its
 * key (rec_merge, model/record.h) instead of replacing them. */
enum ikey_kind { IKEY_DEL = 0, IKEY_PUT = 1, IKEY_MERGE = 2 };

#define IKEY_TRAILER 9
#define IKEY_MAX_SEQ (UINT64_MAX >> 1)

static inline void ikey_put_trailer(char *p, uint64_t seq, int kind)
{
    coding_put_u64be(p, ~seq);
    p[8] = (char)kind;
}

static inline void ikey_append(struct buf *b, struct slice ukey, uint64_t seq, int kind)
{
    buf_reserve(b, ukey.len + IKEY_TRAILER);
    memcpy(b->data + b->len, ukey.ptr, ukey.len);
    ikey_put_trailer(b->data + b->len + ukey.len, seq, kind);
    b->len += ukey.len + IKEY_TRAILER;
}

static inline bool ikey_ok(struct slice ik)
{
    return ik.len > IKEY_TRAILER && (unsigned char)ik.ptr[ik.len - 1] <= IKEY_MERGE;
}

/* REQUIRES: ikey_ok(ik) for these three. */
static inline struct slice ikey_user(struct slice ik)
{
    return slice_make(ik.ptr, ik.len - IKEY_TRAILER);
}
static inline uint64_t ikey_seq(struct slice ik)
{
    return ~coding_get_u64be(ik.ptr + ik.len - IKEY_TRAILER);
}
static inline int ikey_kind(struct slice ik)
{
    return ik.ptr[ik.len - 1];
}

#endif
