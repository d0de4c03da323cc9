/* A memtable: a skiplist of internal keys (ikey.h) with values, in an arena.
 *
 * Refcounted: mt_new returns one reference; the last mt_unref frees it.
 * Threading: one writer at a time (callers serialize mt_add under the
 * database write lock); any number of readers concurrently and without a
 * lock (nodes are published with release stores and never change). */
#ifndef LB_MEMTABLE_H
#define LB_MEMTABLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"
#include "store/iter.h"

struct memtable;

struct arena_pool;

/* Every arena block is also added to *total and *active (either may be
 * NULL); *total is decreased again when the memtable is freed. Blocks come
 * from and return to pool (NULL: none). Counters and pool must outlive the
 * memtable. grouped: keys are host index keys ("host\0tskey event\0"), kept
 * as one short list per host (same order, cheaper inserts). */
struct memtable *mt_new(uint64_t gen, atomic_size_t *total, atomic_size_t *active,
                        struct arena_pool *pool, bool grouped);
/* Stops counting into *active and takes this memtable's bytes off it (at
 * freeze). REQUIRES: the writer lock. */
void mt_detach_active(struct memtable *mt);
void mt_ref(struct memtable *mt);
void mt_unref(struct memtable *mt); /* NULL ok */

/* Adds one version. REQUIRES: the caller is the only writer. */
void mt_add(struct memtable *mt, struct slice ukey, uint64_t seq, int kind, struct slice value);

/* Newest version of ukey with seq <= max_seq. Returns false if none; else
 * sets *kind and *value (borrowed; valid while a reference is held). */
bool mt_get(struct memtable *mt, struct slice ukey, uint64_t max_seq, int *kind,
            struct slice *value);

/* mt_get that also sets *seq, the version's sequence. */
bool mt_get_seq(struct memtable *mt, struct slice ukey, uint64_t max_seq, int *kind,
                struct slice *value, uint64_t *seq);

/* Iterator over internal keys; holds its own reference. */
struct iter *mt_iter(struct memtable *mt);
/* The same, faster for one forward pass from seek_first (a flush): over a
 * grouped memtable it follows the lists of the next few groups together,
 * so that their cache misses overlap instead of coming one after another.
 * Any other move makes it a plain mt_iter from where it stands. */
struct iter *mt_iter_pass(struct memtable *mt);

size_t mt_bytes(const struct memtable *mt);   /* arena bytes, any thread */
size_t mt_count(const struct memtable *mt);   /* entries, any thread */
size_t mt_deletes(const struct memtable *mt); /* tombstone entries, any thread */
uint64_t mt_gen(const struct memtable *mt);

#endif
