/* Private to the catalog (catalog.c writes, reads and merges catalogs;
 * catalog_query.c answers store_catalog): the loaded form of a catalog
 * block (FORMAT.md, "Catalog block") and the small helpers both use. A
 * cat_file is immutable once loaded. */
#ifndef LB_STORE_CATALOG_INT_H
#define LB_STORE_CATALOG_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/slice.h"
#include "model/key.h"
#include "store/catalog.h"

#define CAT_MAGIC 0x5443424cu /* "LBCT" */
#define CAT_VERSION 1
#define CAT_VERSION_COUNTS 2 /* with the counts by event and minute at the end */
#define CAT_HEADER 22
#define CAT_F_NO_PAIRS 1u         /* the (event, host) pairs were left out (size cap) */
#define CAT_F_NO_SETS 2u          /* the pairs' item sets were left out (size cap) */
#define CAT_MAX_BUILD (64u << 20) /* builder memory past which it gives up */
#define CAT_MAX_SETS 65535u       /* item sets of one event, else none is kept */

enum { CK_TAG_KEY = 1, CK_TAG_VALUE = 2, CK_FIELD = 3 };
#define CI_INCOMPLETE 1u /* a tag key's values went over CAT_MAX_VALUES: none kept */

#define CAT_NONE UINT32_MAX

/* n (1..7) bytes at p as memcpy into a zeroed word puts them (little-endian)
 * without the byte stores whose reload stalls */
static inline uint64_t name_tail(const char *p, size_t n)
{
    if (n >= 4) {
        uint32_t a, c;
        memcpy(&a, p, 4);
        memcpy(&c, p + n - 4, 4);
        return a | (uint64_t)c << (8 * (n - 4));
    }
    if (n >= 2) {
        uint16_t a, c;
        memcpy(&a, p, 2);
        memcpy(&c, p + n - 2, 2);
        return a | (uint64_t)c << (8 * (n - 2));
    }
    return (uint8_t)*p;
}

/* The first 16 bytes of a name, zero-padded, as two words. */
static inline void name_words(struct slice s, uint64_t *w0, uint64_t *w1)
{
    if (s.len >= 16) {
        memcpy(w0, s.ptr, 8);
        memcpy(w1, s.ptr + 8, 8);
        return;
    }
    *w0 = *w1 = 0;
    if (s.len >= 8) {
        memcpy(w0, s.ptr, 8);
        size_t n = s.len - 8; /* 0..7 bytes of w1 */
        if (n)
            *w1 = name_tail(s.ptr + 8, n);
        return;
    }
    if (s.len)
        *w0 = name_tail(s.ptr, s.len);
}

static inline uint64_t hash_bytes(const char *p, size_t n, uint64_t seed)
{
    uint64_t h = seed + n;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = key_mix64(h ^ w);
    }
    /* the tail as memcpy into a zeroed word would put it (little-endian),
     * without the byte stores whose reload stalls */
    uint64_t w = 0;
    if (n >= 4) {
        uint32_t a, c;
        memcpy(&a, p, 4);
        memcpy(&c, p + n - 4, 4);
        w = a | (uint64_t)c << (8 * (n - 4));
    } else if (n >= 2) {
        uint16_t a, c;
        memcpy(&a, p, 2);
        memcpy(&c, p + n - 2, 2);
        w = a | (uint64_t)c << (8 * (n - 2));
    } else if (n) {
        w = (uint8_t)*p;
    }
    return key_mix64(h ^ w ^ ((uint64_t)n << 56));
}

static inline uint32_t hash32(struct slice s)
{
    return (uint32_t)hash_bytes(s.ptr, s.len, 0x5eed);
}

static inline void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t c = *cap ? *cap : 8;
    while (c < need)
        c *= 2;
    *cap = c;
    return xrealloc(p, c * elem);
}

/* --- an open-addressing map of 32-bit hashes to indexes --- */

/* slot = hash << 32 | (index + 1); 0 is empty. Callers probe with their
 * own equality (imap_next) and insert what they did not find. */
struct imap {
    uint64_t *slot;
    size_t cap, n;
};

static inline void imap_destroy(struct imap *m)
{
    free(m->slot);
    memset(m, 0, sizeof *m);
}

static inline void imap_grow(struct imap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *s = xcalloc_written(cap, sizeof *s);
    for (size_t i = 0; i < m->cap; i++) {
        uint64_t v = m->slot[i];
        if (!v)
            continue;
        size_t j = (size_t)(v >> 32) & (cap - 1);
        while (s[j])
            j = (j + 1) & (cap - 1);
        s[j] = v;
    }
    free(m->slot);
    m->slot = s;
    m->cap = cap;
}

static inline void imap_put(struct imap *m, uint32_t h, uint32_t idx)
{
    if (2 * (m->n + 1) > m->cap)
        imap_grow(m);
    size_t j = h & (m->cap - 1);
    while (m->slot[j])
        j = (j + 1) & (m->cap - 1);
    m->slot[j] = (uint64_t)h << 32 | ((uint64_t)idx + 1);
    m->n++;
}

/* The next index stored with hash h from probe position *pos (start it at
 * IMAP_START), or CAT_NONE at the first empty slot. */
#define IMAP_START SIZE_MAX
static inline uint32_t imap_next(const struct imap *m, uint32_t h, size_t *pos)
{
    if (!m->cap)
        return CAT_NONE;
    size_t mask = m->cap - 1;
    size_t j = *pos == IMAP_START ? (h & mask) : ((*pos + 1) & mask);
    for (;; j = (j + 1) & mask) {
        uint64_t v = m->slot[j];
        if (!v) {
            *pos = j;
            return CAT_NONE;
        }
        if ((uint32_t)(v >> 32) == h) {
            *pos = j;
            return (uint32_t)v - 1;
        }
    }
}

static inline void u32_push(uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t x)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        *v = xrealloc(*v, *cap * sizeof **v);
    }
    (*v)[(*n)++] = x;
}

/* --- a loaded catalog --- */

struct cat_str {
    const char *p;
    uint32_t len, hash;
};

struct cat_item {
    uint32_t key, val; /* strings */
    uint64_t mask;
    uint8_t kind, aux;
};

struct cat_pair {
    uint32_t host; /* index into the hosts */
    uint16_t mask;
    uint16_t set; /* index into the event's sets (at most CAT_MAX_SETS) */
};

struct cat_event {
    uint32_t name;
    uint64_t mask;
    uint32_t item0, nitem, set0, nset, pair0, npair;
    uint32_t bits0, nbits; /* mode 1: pair k's item bitmap is bits[bits0 + k * nbits] */
};

struct cat_file {
    int64_t base, width;
    unsigned flags;
    char *chars;
    struct cat_str *str;
    uint32_t nstr;
    uint32_t *host; /* strings, ascending */
    uint64_t *hmask;
    uint32_t nhost;
    struct cat_event *ev;
    uint32_t nev;
    struct cat_item *item;
    uint32_t nitem;
    uint32_t *set_off; /* set s holds set_item[set_off[s] .. set_off[s + 1]) */
    uint32_t nset;
    uint32_t *set_item; /* item indexes within the event */
    uint32_t nset_item;
    struct cat_pair *pair;
    uint32_t npair;
    uint8_t *bits; /* item bitmaps of the pairs of events in mode 1 */
    size_t nbits;
    struct cnt_file *cnt; /* NULL: none (version 1) */
    size_t bytes;
};

static inline struct slice cs(const struct cat_file *c, uint32_t s)
{
    return slice_make(c->str[s].p, c->str[s].len);
}

/* The item positions (within its event) of pair k of event e, ascending:
 * from its set or its bitmap. Returns how many were written to out. */
static inline uint32_t pair_items(const struct cat_file *c, const struct cat_event *e, uint32_t k,
                                  uint32_t **out, uint32_t *cap)
{
    uint32_t n = 0;
    if (e->nbits) {
        const uint8_t *bm = c->bits + e->bits0 + (size_t)k * e->nbits;
        for (uint32_t i = 0; i < e->nitem; i++)
            if (bm[i / 8] >> (i % 8) & 1)
                u32_push(out, &n, cap, i);
        return n;
    }
    if (e->nset == 0) /* an event of no items (empty bitmaps), or a level without sets */
        return 0;
    uint32_t set = e->set0 + c->pair[e->pair0 + k].set;
    for (uint32_t j = c->set_off[set]; j < c->set_off[set + 1]; j++)
        u32_push(out, &n, cap, c->set_item[j]);
    return n;
}

#endif
