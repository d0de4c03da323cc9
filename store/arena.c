/* Bump allocation in blocks that grow from 16 KiB to 2 MiB (an empty
 * memtable stays small); an allocation over a quarter of the block size
 * gets a block of its own so the current block's tail is not wasted. Full
 * size blocks are 2 MiB aligned and asked to be huge pages: a big skiplist
 * is pointer chasing, and fewer TLB misses and page faults pay off. */
#include "store/arena.h"

#include <stdlib.h>
#include <sys/mman.h>

#include "config/buf.h"

#define ARENA_BLOCK (2u << 20)

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
}

void arena_destroy(struct arena *a)
{
    struct arena_block *b = a->blocks;
    if (a->acct[0])
        atomic_fetch_sub(a->acct[0], arena_bytes(a));
    while (b) {
        struct arena_block *next = b->next;
        free(b);
        b = next;
    }
    arena_init(a);
}

static struct arena_block *block_alloc(size_t size)
{
    if (size != ARENA_BLOCK - sizeof(struct arena_block))
        return xmalloc(sizeof(struct arena_block) + size);
    void *p = aligned_alloc(ARENA_BLOCK, ARENA_BLOCK);
    if (!p)
        return xmalloc(ARENA_BLOCK); /* xmalloc aborts if this fails too */
#ifdef MADV_HUGEPAGE
    madvise(p, ARENA_BLOCK, MADV_HUGEPAGE);
#endif
    return p;
}

static char *new_block(struct arena *a, size_t size)
{
    struct arena_block *b = block_alloc(size);
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
        size -= sizeof(struct arena_block);
    char *p = new_block(a, size);
    if (a->next_block < ARENA_BLOCK)
        a->next_block *= 2;
    a->ptr = p + n;
    a->left = size - n;
    return p;
}
