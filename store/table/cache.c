/* LRU block cache: shards, each a chained hash table plus a doubly linked
 * LRU list of the unpinned entries under a mutex of its own (two threads
 * reading blocks, a query's two halves or two queries, then rarely wait on
 * each other). An entry leaves its table when evicted or replaced and is
 * freed when its last pin goes. */
#include "store/table/cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "model/key.h"

struct cache_handle {
    uint64_t id, off;
    void *value;
    void (*deleter)(void *);
    size_t charge;
    int refs; /* pins, plus 1 while in the table */
    bool in_table;
    struct cache_handle *hnext;       /* hash chain */
    struct cache_handle *prev, *next; /* LRU list, only while refs == 1 and in_table */
};

struct shard {
    pthread_mutex_t mu;
    size_t capacity, usage;
    struct cache_handle **table;
    size_t nbuckets, count;
    struct cache_handle lru; /* sentinel: lru.next is the oldest */
    uint64_t hits, misses;
    char pad[64]; /* the next shard's mutex on a line of its own */
};

/* Below this many bytes a shard, the cache is one shard: a shard holds
 * whole blocks, and a small cache split 16 ways would hold none. */
#define SHARD_MIN_BYTES (4u << 20)
#define MAX_SHARDS 16

struct cache {
    struct shard *shard;
    unsigned nshards; /* a power of 2 */
    atomic_uint_fast64_t next_id;
};

struct cache *cache_new(size_t capacity)
{
    struct cache *c = xcalloc(1, sizeof *c);
    c->nshards = 1;
    while (c->nshards < MAX_SHARDS && capacity / (2 * c->nshards) >= SHARD_MIN_BYTES)
        c->nshards *= 2;
    c->shard = xcalloc(c->nshards, sizeof *c->shard);
    for (unsigned i = 0; i < c->nshards; i++) {
        struct shard *sh = &c->shard[i];
        pthread_mutex_init(&sh->mu, NULL);
        sh->capacity = capacity / c->nshards;
        sh->nbuckets = 1024;
        sh->table = xcalloc(sh->nbuckets, sizeof *sh->table);
        sh->lru.next = sh->lru.prev = &sh->lru;
    }
    atomic_init(&c->next_id, 1);
    return c;
}

static void entry_free(struct cache_handle *e)
{
    e->deleter(e->value);
    free(e);
}

void cache_free(struct cache *c)
{
    if (!c)
        return;
    for (unsigned k = 0; k < c->nshards; k++) {
        struct shard *sh = &c->shard[k];
        for (size_t i = 0; i < sh->nbuckets; i++) {
            struct cache_handle *e = sh->table[i];
            while (e) {
                struct cache_handle *n = e->hnext;
                entry_free(e);
                e = n;
            }
        }
        free(sh->table);
        pthread_mutex_destroy(&sh->mu);
    }
    free(c->shard);
    free(c);
}

uint64_t cache_new_id(struct cache *c)
{
    return atomic_fetch_add(&c->next_id, 1);
}

static uint64_t key_hash(uint64_t id, uint64_t off)
{
    return key_mix64(id * 0x9e3779b97f4a7c15ULL ^ off);
}

/* The shard of a key: the hash's high bits (its low bits pick the slot). */
static struct shard *shard_of(const struct cache *c, uint64_t h)
{
    return &c->shard[(h >> 58) & (c->nshards - 1)];
}

static size_t slot(const struct shard *sh, uint64_t h)
{
    return h & (sh->nbuckets - 1);
}

static void lru_remove(struct cache_handle *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->prev = e->next = NULL;
}

static void lru_append(struct shard *sh, struct cache_handle *e)
{
    e->next = &sh->lru;
    e->prev = sh->lru.prev;
    e->prev->next = e;
    sh->lru.prev = e;
}

static void grow(struct shard *sh)
{
    size_t nb = sh->nbuckets * 2;
    struct cache_handle **t = xcalloc_written(nb, sizeof *t);
    for (size_t i = 0; i < sh->nbuckets; i++) {
        struct cache_handle *e = sh->table[i];
        while (e) {
            struct cache_handle *n = e->hnext;
            size_t s = key_hash(e->id, e->off) & (nb - 1);
            e->hnext = t[s];
            t[s] = e;
            e = n;
        }
    }
    free(sh->table);
    sh->table = t;
    sh->nbuckets = nb;
}

/* Unlinks e from its shard's table; frees it if nobody pins it. mu held. */
static void table_remove(struct shard *sh, struct cache_handle *e)
{
    struct cache_handle **pp = &sh->table[slot(sh, key_hash(e->id, e->off))];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    e->in_table = false;
    sh->count--;
    sh->usage -= e->charge;
    if (e->prev)
        lru_remove(e);
    if (--e->refs == 0)
        entry_free(e);
}

static void unref_locked(struct shard *sh, struct cache_handle *e)
{
    if (--e->refs == 0) {
        entry_free(e);
    } else if (e->refs == 1 && e->in_table) {
        lru_append(sh, e);
    }
}

static void evict(struct shard *sh)
{
    while (sh->usage > sh->capacity && sh->lru.next != &sh->lru)
        table_remove(sh, sh->lru.next);
}

struct cache_handle *cache_lookup(struct cache *c, uint64_t id, uint64_t off)
{
    uint64_t h = key_hash(id, off);
    struct shard *sh = shard_of(c, h);
    pthread_mutex_lock(&sh->mu);
    struct cache_handle *e = sh->table[slot(sh, h)];
    while (e && (e->id != id || e->off != off))
        e = e->hnext;
    if (e) {
        if (e->prev)
            lru_remove(e);
        e->refs++;
        sh->hits++;
    } else {
        sh->misses++;
    }
    pthread_mutex_unlock(&sh->mu);
    return e;
}

struct cache_handle *cache_insert(struct cache *c, uint64_t id, uint64_t off, void *value,
                                  size_t charge, void (*deleter)(void *value))
{
    struct cache_handle *e = xcalloc(1, sizeof *e);
    e->id = id;
    e->off = off;
    e->value = value;
    e->deleter = deleter;
    e->charge = charge;
    e->refs = 2; /* the table and the caller */
    e->in_table = true;
    uint64_t h = key_hash(id, off);
    struct shard *sh = shard_of(c, h);
    pthread_mutex_lock(&sh->mu);
    for (struct cache_handle *o = sh->table[slot(sh, h)]; o; o = o->hnext)
        if (o->id == id && o->off == off) {
            table_remove(sh, o);
            break;
        }
    size_t s = slot(sh, h);
    e->hnext = sh->table[s];
    sh->table[s] = e;
    sh->count++;
    sh->usage += charge;
    if (sh->count > sh->nbuckets)
        grow(sh);
    evict(sh);
    pthread_mutex_unlock(&sh->mu);
    return e;
}

void *cache_value(struct cache_handle *h)
{
    return h->value;
}

void cache_release(struct cache *c, struct cache_handle *h)
{
    struct shard *sh = shard_of(c, key_hash(h->id, h->off));
    pthread_mutex_lock(&sh->mu);
    unref_locked(sh, h);
    evict(sh);
    pthread_mutex_unlock(&sh->mu);
}

void cache_erase_id(struct cache *c, uint64_t id)
{
    for (unsigned k = 0; k < c->nshards; k++) {
        struct shard *sh = &c->shard[k];
        pthread_mutex_lock(&sh->mu);
        struct cache_handle *e = sh->lru.next;
        while (e != &sh->lru) {
            struct cache_handle *n = e->next;
            if (e->id == id)
                table_remove(sh, e);
            e = n;
        }
        pthread_mutex_unlock(&sh->mu);
    }
}

void cache_stats(struct cache *c, struct cache_stats *out)
{
    memset(out, 0, sizeof *out);
    for (unsigned k = 0; k < c->nshards; k++) {
        struct shard *sh = &c->shard[k];
        pthread_mutex_lock(&sh->mu);
        out->hits += sh->hits;
        out->misses += sh->misses;
        out->bytes += sh->usage;
        out->entries += sh->count;
        out->capacity += sh->capacity;
        pthread_mutex_unlock(&sh->mu);
    }
}
