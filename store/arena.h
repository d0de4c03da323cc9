/* A bump allocator owned by one memtable: many small allocations, freed all
 * at once. One writer allocates; arena_bytes may be read from any thread. */
#ifndef LB_ARENA_H
#define LB_ARENA_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

struct arena_block;

#define ARENA_POOL_CLASSES 5 /* 16 KiB, 32 KiB, 64 KiB, 128 KiB, and full size */

/* Free blocks kept for reuse, one list per block size, so a new memtable
 * does not pay for page faults and zeroing again (a partition's memtable
 * is mostly growing blocks, not full ones). Thread-safe; bounded in bytes. */
struct arena_pool {
    pthread_mutex_t mu;
    struct arena_block *free[ARENA_POOL_CLASSES];
    size_t bytes, max_bytes;
};

void arena_pool_init(struct arena_pool *p, size_t max_bytes);
void arena_pool_destroy(struct arena_pool *p); /* frees the kept blocks */

struct arena {
    struct arena_block *blocks; /* newest first */
    char *ptr;                  /* free space in the newest block */
    size_t left;
    size_t next_block;   /* size of the next block (grows to 1 MiB) */
    atomic_size_t bytes; /* total bytes of all blocks */
    /* counters that every new block is added to (NULL: none); the first is
     * decreased again when the arena is destroyed */
    atomic_size_t *acct[2];
    struct arena_pool *pool; /* NULL: none; must outlive the arena */
};

void arena_init(struct arena *a);
void arena_destroy(struct arena *a);
/* n bytes aligned to 8; aborts when memory is exhausted. */
void *arena_alloc(struct arena *a, size_t n);
static inline size_t arena_bytes(const struct arena *a)
{
    return atomic_load_explicit(&a->bytes, memory_order_relaxed);
}

#endif
