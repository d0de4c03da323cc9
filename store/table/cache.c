/* LRU block cache: a chained hash table plus a doubly linked LRU list of
 * the unpinned entries. An entry leaves the table when evicted or replaced
 * and is freed when its last pin goes. */
#include "store/table/cache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

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

struct cache {
    pthread_mutex_t mu;
    size_t capacity, usage;
    struct cache_handle **table;
    size_t nbuckets, count;
    struct cache_handle lru; /* sentinel: lru.next is the oldest */
    uint64_t next_id;
    uint64_t hits, misses;
};

struct cache *cache_new(size_t capacity)
{
    struct cache *c = xcalloc(1, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    c->capacity = capacity;
    c->nbuckets = 1024;
    c->table = xcalloc(c->nbuckets, sizeof *c->table);
    c->lru.next = c->lru.prev = &c->lru;
    c->next_id = 1;
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
    for (size_t i = 0; i < c->nbuckets; i++) {
        struct cache_handle *e = c->table[i];
        while (e) {
            struct cache_handle *n = e->hnext;
            entry_free(e);
            e = n;
        }
    }
    free(c->table);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

uint64_t cache_new_id(struct cache *c)
{
    pthread_mutex_lock(&c->mu);
    uint64_t id = c->next_id++;
    pthread_mutex_unlock(&c->mu);
    return id;
}

static size_t slot(const struct cache *c, uint64_t id, uint64_t off)
{
    return key_mix64(id * 0x9e3779b97f4a7c15ULL ^ off) & (c->nbuckets - 1);
}

static void lru_remove(struct cache_handle *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->prev = e->next = NULL;
}

static void lru_append(struct cache *c, struct cache_handle *e)
{
    e->next = &c->lru;
    e->prev = c->lru.prev;
    e->prev->next = e;
    c->lru.prev = e;
}

static void grow(struct cache *c)
{
    size_t nb = c->nbuckets * 2;
    struct cache_handle **t = xcalloc_written(nb, sizeof *t);
    for (size_t i = 0; i < c->nbuckets; i++) {
        struct cache_handle *e = c->table[i];
        while (e) {
            struct cache_handle *n = e->hnext;
            size_t s = key_mix64(e->id * 0x9e3779b97f4a7c15ULL ^ e->off) & (nb - 1);
            e->hnext = t[s];
            t[s] = e;
            e = n;
        }
    }
    free(c->table);
    c->table = t;
    c->nbuckets = nb;
}

/* Unlinks e from the hash table; frees it if nobody pins it. mu held. */
static void table_remove(struct cache *c, struct cache_handle *e)
{
    struct cache_handle **pp = &c->table[slot(c, e->id, e->off)];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    e->in_table = false;
    c->count--;
    c->usage -= e->charge;
    if (e->prev)
        lru_remove(e);
    if (--e->refs == 0)
        entry_free(e);
}

static void unref_locked(struct cache *c, struct cache_handle *e)
{
    if (--e->refs == 0) {
        entry_free(e);
    } else if (e->refs == 1 && e->in_table) {
        lru_append(c, e);
    }
}

static void evict(struct cache *c)
{
    while (c->usage > c->capacity && c->lru.next != &c->lru)
        table_remove(c, c->lru.next);
}

struct cache_handle *cache_lookup(struct cache *c, uint64_t id, uint64_t off)
{
    pthread_mutex_lock(&c->mu);
    struct cache_handle *e = c->table[slot(c, id, off)];
    while (e && (e->id != id || e->off != off))
        e = e->hnext;
    if (e) {
        if (e->prev)
            lru_remove(e);
        e->refs++;
        c->hits++;
    } else {
        c->misses++;
    }
    pthread_mutex_unlock(&c->mu);
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
    pthread_mutex_lock(&c->mu);
    size_t s = slot(c, id, off);
    for (struct cache_handle *o = c->table[s]; o; o = o->hnext)
        if (o->id == id && o->off == off) {
            table_remove(c, o);
            break;
        }
    s = slot(c, id, off);
    e->hnext = c->table[s];
    c->table[s] = e;
    c->count++;
    c->usage += charge;
    if (c->count > c->nbuckets)
        grow(c);
    evict(c);
    pthread_mutex_unlock(&c->mu);
    return e;
}

void *cache_value(struct cache_handle *h)
{
    return h->value;
}

void cache_release(struct cache *c, struct cache_handle *h)
{
    pthread_mutex_lock(&c->mu);
    unref_locked(c, h);
    evict(c);
    pthread_mutex_unlock(&c->mu);
}

void cache_erase_id(struct cache *c, uint64_t id)
{
    pthread_mutex_lock(&c->mu);
    struct cache_handle *e = c->lru.next;
    while (e != &c->lru) {
        struct cache_handle *n = e->next;
        if (e->id == id)
            table_remove(c, e);
        e = n;
    }
    pthread_mutex_unlock(&c->mu);
}

void cache_stats(struct cache *c, struct cache_stats *out)
{
    pthread_mutex_lock(&c->mu);
    out->hits = c->hits;
    out->misses = c->misses;
    out->bytes = c->usage;
    out->entries = c->count;
    pthread_mutex_unlock(&c->mu);
}
