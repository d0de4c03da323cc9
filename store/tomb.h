/* Range tombstones (tomb.c): immutable refcounted sets, pure values. The
 * TOMBSTONES file and the purge are a database's durable settings
 * (settings.c). */
#ifndef LB_STORE_TOMB_H
#define LB_STORE_TOMB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"
#include "store/store.h"

/* A range tombstone (tomb.c): rows of host (and event when has_event)
 * with lo <= ts <= hi and a sequence below seq are deleted. */
struct range_tomb {
    uint64_t seq;
    int64_t lo, hi;
    char *host, *event; /* NUL-terminated; event "" without has_event */
    size_t hlen, elen;
    bool has_event;
    uint64_t gen; /* memtables of this generation or older may hold covered rows */
};

/* Immutable once published; refcounted. */
struct tomb_set {
    atomic_int refs;
    size_t n;
    struct range_tomb *v;
};

#define STORE_MAX_TOMBSTONES STORE_MAX_RANGE_DELETES

struct tomb_set *tomb_set_new(size_t n);
void tomb_set_ref(struct tomb_set *t);   /* NULL ok */
void tomb_set_unref(struct tomb_set *t); /* NULL ok */
uint64_t tomb_set_max_seq(const struct tomb_set *t);
/* Copies src (and its names) into dst, a slot of a new set. */
void tomb_copy(struct range_tomb *dst, const struct range_tomb *src);
/* A tombstone visible at snap_seq covers this row version. */
bool tomb_covers(const struct tomb_set *t, struct slice host, struct slice event, int64_t ts,
                 uint64_t row_seq, uint64_t snap_seq);
/* Some tombstone's names and range match the key, whatever the sequences. */
bool tomb_matches(const struct tomb_set *t, struct slice host, struct slice event, int64_t ts);

#endif
