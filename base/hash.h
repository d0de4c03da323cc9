/* 64-bit mixing shared by the hashes of the daemon (word filters, group
 * tables): MurmurHash3's finaliser, a bijection that spreads every input
 * bit over the whole word. Values that reach files (model/words.h) depend
 * on it: never change it. */
#ifndef LB_HASH_H
#define LB_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t hash_fmix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

/* A seeded 64-bit hash of n bytes for the in-memory tables (groups): 8
 * bytes at a time, one multiply each, the last 1-7 by a byte loop (no call
 * for a short copy), then the finaliser. Not a keyed PRF: the tables'
 * group limits bound what colliding keys could cost. Not stored anywhere. */
static inline uint64_t hash_mem(uint64_t seed, const void *data, size_t n)
{
    const uint64_t mul = 0x9e3779b97f4a7c15ULL;
    const unsigned char *p = (const unsigned char *)data;
    uint64_t h = seed ^ ((uint64_t)n * mul);
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * mul;
        h ^= h >> 29;
    }
    if (n) {
        uint64_t w = 0;
        for (size_t i = 0; i < n; i++)
            w |= (uint64_t)p[i] << (8 * i);
        h = (h ^ w) * mul;
        h ^= h >> 29;
    }
    return hash_fmix64(h ^ seed);
}

#endif
