/* 64-bit mixing shared by the hashes of the daemon (word filters, group
 * tables): MurmurHash3's finaliser, a bijection that spreads every input
 * bit over the whole word. Values that reach files (model/words.h) depend
 * on it: never change it. */
#ifndef LB_HASH_H
#define LB_HASH_H

#include <stdint.h>

static inline uint64_t hash_fmix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

#endif
