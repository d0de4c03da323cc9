/* Bump allocation in blocks that grow from 16 KiB to 256 KiB (an empty
 * memtable stays small); an allocation over a quarter of the block size
 * gets a block of its own so the current block's tail is not wasted.
 * Blocks stop growing at 256 KiB because memtables are charged for whole
 * blocks: a partition's memtable is a few MiB when its generation freezes,
 * and blocks that kept doubling to 2 MiB left a third of the charged bytes
 * unused, so generations (and flushed files) were a third smaller than the
 * budget allows (ingest_bench, 2M events: 413 -> 279 flushes). */
#include "store/arena.h"

#include <stdbool.h>
#include <stdlib.h>

#include "base/buf.h"

#define ARENA_BLOCK (256u << 10) /* the full block size */

struct arena_block {
    struct arena_block *next;
    size_t size;
    max_align_t data[];
};

void arena_init(struct arena *a)
{
    a->blocks = NULL;
    a->ptr = NULL;
    a->left = 0;
    a->next_block = 16u << 10;
    atomic_init(&a->bytes, 0);
    a->acct[0] = a->acct[1] = NULL;
    a->pool = NULL;
}

#define FULL_SIZE (ARENA_BLOCK - sizeof(struct arena_block))

void arena_pool_init(struct arena_pool *p, size_t max_bytes)
{
    pthread_mutex_init(&p->mu, NULL);
    for (int i = 0; i < ARENA_POOL_CLASSES; i++)
        p->free[i] = NULL;
    p->bytes = 0;
    p->max_bytes = max_bytes;
}

void arena_pool_destroy(struct arena_pool *p)
{
    for (int i = 0; i < ARENA_POOL_CLASSES; i++) {
        while (p->free[i]) {
            struct arena_block *b = p->free[i];
            p->free[i] = b->next;
            free(b);
        }
    }
    pthread_mutex_destroy(&p->mu);
}

/* The pool list of blocks of size bytes, or -1: the growing sizes 16 KiB
 * << k, then the full size. Dedicated (odd-sized) blocks are not kept. */
static int size_class(size_t size)
{
    if (size == FULL_SIZE)
        return ARENA_POOL_CLASSES - 1;
    for (int k = 0; k < ARENA_POOL_CLASSES - 1; k++)
        if (size == (size_t)(16u << 10) << k)
            return k;
    return -1;
}

static struct arena_block *pool_get(struct arena_pool *p, size_t size)
{
    int c = size_class(size);
    if (!p || c < 0)
        return NULL;
    pthread_mutex_lock(&p->mu);
    struct arena_block *b = p->free[c];
    if (b) {
        p->free[c] = b->next;
        p->bytes -= size;
    }
    pthread_mutex_unlock(&p->mu);
    return b;
}

/* true if the pool took b */
static bool pool_put(struct arena_pool *p, struct arena_block *b)
{
    int c = size_class(b->size);
    if (!p || c < 0)
        return false;
    pthread_mutex_lock(&p->mu);
    bool kept = p->bytes + b->size <= p->max_bytes;
    if (kept) {
        b->next = p->free[c];
        p->free[c] = b;
        p->bytes += b->size;
    }
    pthread_mutex_unlock(&p->mu);
    return kept;
}

void arena_destroy(struct arena *a)
{
    struct arena_block *b = a->blocks;
    if (a->acct[0])
        atomic_fetch_sub(a->acct[0], arena_bytes(a));
    while (b) {
        struct arena_block *next = b->next;
        if (!pool_put(a->pool, b))
            free(b);
        b = next;
    }
    arena_init(a);
}

static struct arena_block *block_alloc(struct arena *a, size_t size)
{
    struct arena_block *b = pool_get(a->pool, size);
    return b ? b : xmalloc(sizeof(struct arena_block) + size);
}

static char *new_block(struct arena *a, size_t size)
{
    struct arena_block *b = block_alloc(a, size);
    b->size = size;
    if (a->blocks && size > a->next_block) {
        /* a dedicated block goes second so the current block stays in use */
        b->next = a->blocks->next;
        a->blocks->next = b;
    } else {
        b->next = a->blocks;
        a->blocks = b;
    }
    atomic_fetch_add_explicit(&a->bytes, sizeof *b + size, memory_order_relaxed);
    for (int i = 0; i < 2; i++)
        if (a->acct[i])
            atomic_fetch_add_explicit(a->acct[i], sizeof *b + size, memory_order_relaxed);
    return (char *)b->data;
}

void *arena_alloc(struct arena *a, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if (n <= a->left) {
        char *p = a->ptr;
        a->ptr += n;
        a->left -= n;
        return p;
    }
    if (n > a->next_block / 4)
        return new_block(a, n);
    size_t size = a->next_block;
    if (size == ARENA_BLOCK)
        size = FULL_SIZE;
    char *p = new_block(a, size);
    if (a->next_block < ARENA_BLOCK)
        a->next_block *= 2;
    a->ptr = p + n;
    a->left = size - n;
    return p;
}
