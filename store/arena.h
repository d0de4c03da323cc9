/* A bump allocator owned by one memtable: many small allocations, freed all
 * at once. One writer allocates; arena_bytes may be read from any thread. */
#ifndef LB_ARENA_H
#define LB_ARENA_H

#include <stdatomic.h>
#include <stddef.h>

struct arena_block;

struct arena {
    struct arena_block *blocks; /* newest first */
    char *ptr;                  /* free space in the newest block */
    size_t left;
    size_t next_block;          /* size of the next block (grows to 1 MiB) */
    atomic_size_t bytes;        /* total bytes of all blocks */
    /* counters that every new block is added to (NULL: none); the first is
     * decreased again when the arena is destroyed */
    atomic_size_t *acct[2];
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
