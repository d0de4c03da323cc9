/* The block cache: an LRU of decoded blocks within a byte budget, keyed by
 * (table id, block offset). Entries are refcounted: a lookup or insert
 * returns a handle that pins the entry until cache_release; eviction only
 * frees entries nobody pins. Thread-safe (a mutex per shard: up to 16
 * shards of at least 4 MiB, by the key's hash; each evicts on its own). */
#ifndef LB_CACHE_H
#define LB_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct cache;
struct cache_handle;

struct cache *cache_new(size_t capacity);
void cache_free(struct cache *c); /* NULL ok; REQUIRES: no handles held */
/* A fresh id for a newly opened table. */
uint64_t cache_new_id(struct cache *c);

/* NULL on a miss. */
struct cache_handle *cache_lookup(struct cache *c, uint64_t id, uint64_t off);
/* Takes ownership of value (freed with deleter when evicted); charge is its
 * size in bytes. Replaces an entry with the same key. */
struct cache_handle *cache_insert(struct cache *c, uint64_t id, uint64_t off, void *value,
                                  size_t charge, void (*deleter)(void *value));
void *cache_value(struct cache_handle *h);
void cache_release(struct cache *c, struct cache_handle *h);
/* Drops unpinned entries of a table (its file was deleted). */
void cache_erase_id(struct cache *c, uint64_t id);

struct cache_stats {
    uint64_t hits, misses, bytes, entries;
    uint64_t capacity; /* the budget: bytes may reach it */
};
void cache_stats(struct cache *c, struct cache_stats *out);

#endif
