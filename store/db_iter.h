/* The version-resolving iterator (LevelDB's DBIter): turns a merged stream
 * of internal keys into user keys, newest version with seq <= snapshot,
 * tombstones and rows older than the TTL cut-off hidden. Takes ownership of
 * inner. Keys and values are borrowed until the next move. */
#ifndef LB_DB_ITER_H
#define LB_DB_ITER_H

#include <stdbool.h>
#include <stdint.h>

#include "store/iter.h"

struct part;
struct event_cuts;
struct tomb_set;

/* p (borrowed, must outlive the iterator) says how to find ts in a key.
 * cuts (copied; NULL = none) are per-event cut-offs on top of cutoff.
 * tombs (NULL = none; the iterator takes its own reference) hide the row
 * versions they cover at seq. */
struct iter *db_iter_new(struct iter *inner, const struct part *p, uint64_t seq, int64_t cutoff,
                         const struct event_cuts *cuts, struct tomb_set *tombs);

#endif
