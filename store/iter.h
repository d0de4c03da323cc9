/* The one iterator interface of logbucket (LevelDB's Iterator). Iterators
 * stack: block -> table -> merge -> version resolution -> query filters.
 *
 * Contracts:
 * - Constructors never return NULL; on failure they return it_new_error(code),
 *   so callers have one path and check it_status() when the loop ends.
 * - key()/value() return slices valid until the next call that moves or
 *   destroys the iterator. Copy what you need longer.
 * - The position (valid, key, value) is kept in struct iter itself: every
 *   move ends with it_set_pos or it_set_end, so that it_valid, it_key and
 *   it_value are loads, not calls down a stack of iterators per row.
 * - status() is the first error seen, sticky; ERR_OK otherwise. "Not valid"
 *   with status ERR_OK means the end of the data.
 * - Composite iterators own their children and destroy them.
 * - Cleanup callbacks registered with it_on_destroy run at destroy, in reverse
 *   order of registration (to release snapshots, tables, memtables). */
#ifndef LB_ITER_H
#define LB_ITER_H

#include <stdbool.h>
#include <stddef.h>

#include "base/slice.h"

struct iter;

/* A run's consumer (it_run): true to take the next entry too. */
typedef bool (*it_run_fn)(void *arg, struct slice key, struct slice value);

/* The moves; each sets the position (it_set_pos, it_set_end) before it
 * returns. */
struct it_ops {
    void (*seek_first)(struct iter *);
    void (*seek_last)(struct iter *);
    void (*seek)(struct iter *, struct slice target); /* first key >= target */
    void (*next)(struct iter *);                      /* REQUIRES: valid */
    void (*prev)(struct iter *);                      /* REQUIRES: valid */
    int (*status)(const struct iter *);               /* first error, sticky */
    void (*destroy)(struct iter *);                   /* frees the iterator itself */
    /* Optional (it_run): NULL where not offered. */
    bool (*run)(struct iter *, size_t keep, it_run_fn fn, void *arg);
};

struct it_cleanup;

/* Every iterator struct embeds this as its first member. */
struct iter {
    const struct it_ops *ops;
    struct it_cleanup *cleanups;
    bool valid;              /* the position after the last move */
    struct slice key, value; /* when valid; borrowed */
};

/* The position an iterator's move ends at: an entry, or none. */
static inline void it_set_pos(struct iter *it, struct slice key, struct slice value)
{
    it->valid = true;
    it->key = key;
    it->value = value;
}
static inline void it_set_end(struct iter *it)
{
    it->valid = false;
    it->key = slice_make("", 0);
    it->value = it->key;
}
/* A pass-through iterator standing where its child stands. */
static inline void it_set_as(struct iter *it, const struct iter *child)
{
    it->valid = child->valid;
    it->key = child->key;
    it->value = child->value;
}

static inline bool it_valid(const struct iter *it)
{
    return it->valid;
}
static inline void it_seek_first(struct iter *it)
{
    it->ops->seek_first(it);
}
static inline void it_seek_last(struct iter *it)
{
    it->ops->seek_last(it);
}
static inline void it_seek(struct iter *it, struct slice t)
{
    it->ops->seek(it, t);
}
static inline void it_next(struct iter *it)
{
    it->ops->next(it);
}
static inline void it_prev(struct iter *it)
{
    it->ops->prev(it);
}
static inline struct slice it_key(const struct iter *it)
{
    return it->key;
}
static inline struct slice it_value(const struct iter *it)
{
    return it->value;
}
static inline int it_status(const struct iter *it)
{
    return it->ops->status(it);
}

/* The entries after the current one (REQUIRES: valid) that keep its key's
 * first keep bytes and its length, given to fn in order, for a reader of
 * many rows of one key prefix (a host section's rows of one host and
 * event) without a move through the stack per entry: as far as the
 * iterator can without a move of its own (a table's: to its block's end),
 * while fn takes them. True when fn refused an entry: the iterator stands
 * there; false when the run ended: the iterator stands at the last entry
 * given (or where it stood), and it_next goes on from there. fn's key is
 * valid during the call, its value as it_value's. Iterators without the
 * move give nothing (false). */
static inline bool it_run(struct iter *it, size_t keep, it_run_fn fn, void *arg)
{
    return it->ops->run && it->ops->run(it, keep, fn, arg);
}
/* Runs the cleanups, then ops->destroy. NULL is a no-op. */
void it_destroy(struct iter *it);

/* Registers fn(arg1, arg2) to run when it is destroyed. */
void it_on_destroy(struct iter *it, void (*fn)(void *, void *), void *arg1, void *arg2);

/* Initialises the embedded header of a new iterator. */
void it_init(struct iter *it, const struct it_ops *ops);

/* An iterator with no entries and status ERR_OK. */
struct iter *it_new_empty(void);
/* An iterator with no entries and the given status (a negative ERR_*). */
struct iter *it_new_error(int code);

/* A k-way merge of sorted children (a loser tree; LevelDB's merger uses a heap): keys come out
 * in cmp order from whichever child holds them; equal keys are all kept.
 * Supports seek, seek_first, seek_last, next and prev with direction
 * switches. Takes ownership of every child (the array itself is copied, the
 * caller keeps it). cmp NULL means slice_cmp. n = 0 gives an empty iterator
 * and n = 1 the child itself. status() is the first error of any child.
 * Not thread-safe, like every iterator. */
struct iter *it_merge_new(struct iter **kids, size_t n, int (*cmp)(struct slice a, struct slice b));

/* An iterator over the keys of in within [lo, hi) (hi empty: unbounded),
 * in memcmp order. Takes ownership of in. With fix_prefix, a seek target's
 * first 2 bytes are replaced by lo's (a merge of buckets seeks every child
 * to "the same" row key: its bucket prefix is the child's own). */
struct iter *it_range_new(struct iter *in, struct slice lo, struct slice hi, bool fix_prefix);

#endif
