/* Bloom filter: a 64-bit hash of the key, split into two 32-bit halves for
 * double hashing (Kirsch-Mitzenmacher). */
#include "store/table/bloom.h"

#include <string.h>

#include "model/key.h"

#define BLOOM_BITS_PER_KEY 10
#define BLOOM_PROBES 7

uint64_t bloom_hash(struct slice key)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ key.len;
    size_t i = 0;
    for (; i + 8 <= key.len; i += 8) {
        uint64_t w;
        memcpy(&w, key.ptr + i, 8);
        h = key_mix64(h ^ w);
    }
    /* the 0-7 bytes left as a zero-padded word in memory order, as a memcpy
     * into w gives them (the filters on disk depend on this value) */
    size_t rest = key.len - i;
    uint64_t w = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (rest && key.len >= 8) {
        memcpy(&w, key.ptr + key.len - 8, 8); /* the word that ends the key */
        w >>= 8 * (8 - rest);
    } else {
        for (size_t j = 0; j < rest; j++)
            w |= (uint64_t)(unsigned char)key.ptr[i + j] << (8 * j);
    }
#else
    memcpy(&w, key.ptr + i, rest);
#endif
    return key_mix64(h ^ w ^ 0x5bd1e995);
}

/* h % bits without a division (Lemire, Kaser and Kurz, "Faster remainder
 * by direct computation", 2019): exact for every 32-bit h and bits, with
 * m = probe_m(bits); the bits it picks are the ones files on disk hold.
 * 9.2 against 10.2 ns per key for a 30,000-key filter here. A filter of
 * 2^32 bits or more (never written: 430 million keys in a file) takes h
 * itself, which is then h % bits. */
static uint64_t probe_m(size_t bits)
{
    return bits > UINT32_MAX ? 0 : UINT64_MAX / bits + 1;
}

static size_t probe_bit(uint32_t h, uint64_t m, size_t bits)
{
    if (bits > UINT32_MAX)
        return h;
    return (size_t)(((unsigned __int128)(m * h) * bits) >> 64);
}

void bloom_build(const uint64_t *hashes, size_t n, struct buf *out)
{
    bloom_build_k(hashes, n, BLOOM_BITS_PER_KEY, BLOOM_PROBES, out);
}

/* Sets the probes bits of hash in f, a filter of bits <= UINT32_MAX bits:
 * probe_bit without its test. */
static inline void set_probes(unsigned char *f, uint64_t hash, uint64_t m, size_t bits, int probes)
{
    uint32_t h = (uint32_t)hash, delta = (uint32_t)(hash >> 32) | 1;
    for (int k = 0; k < probes; k++, h += delta) {
        size_t pos = (size_t)(((unsigned __int128)(m * h) * bits) >> 64);
        f[pos >> 3] |= (unsigned char)(1u << (pos & 7));
    }
}

/* set_probes of 7 probes (BLOOM_PROBES, WFILTER_PROBES), unrolled: a
 * word filter's bloom_build_k took 48.2 M instructions in wfilter_bench
 * under callgrind through probe_bit's loop, 33.0 M so. */
static inline void set_probes_7(unsigned char *f, uint64_t hash, uint64_t m, size_t bits)
{
    uint32_t h = (uint32_t)hash, delta = (uint32_t)(hash >> 32) | 1;
#pragma GCC unroll 7
    for (int k = 0; k < 7; k++, h += delta) {
        size_t pos = (size_t)(((unsigned __int128)(m * h) * bits) >> 64);
        f[pos >> 3] |= (unsigned char)(1u << (pos & 7));
    }
}

void bloom_build_k(const uint64_t *hashes, size_t n, size_t bits_per_key, int probes,
                   struct buf *out)
{
    size_t bits = n * bits_per_key;
    if (bits < 64)
        bits = 64;
    size_t bytes = (bits + 7) / 8;
    bits = bytes * 8;
    buf_reserve(out, bytes + 1);
    unsigned char *f = (unsigned char *)out->data + out->len;
    memset(f, 0, bytes);
    uint64_t m = probe_m(bits);
    if (bits > UINT32_MAX) {
        for (size_t i = 0; i < n; i++) {
            uint32_t h = (uint32_t)hashes[i], delta = (uint32_t)(hashes[i] >> 32) | 1;
            for (int k = 0; k < probes; k++, h += delta)
                f[h / 8] |= (unsigned char)(1u << (h % 8));
        }
    } else if (probes == 7) {
        for (size_t i = 0; i < n; i++)
            set_probes_7(f, hashes[i], m, bits);
    } else {
        for (size_t i = 0; i < n; i++)
            set_probes(f, hashes[i], m, bits, probes);
    }
    f[bytes] = (unsigned char)probes;
    out->len += bytes + 1;
}

bool bloom_may_match(struct slice filter, uint64_t hash)
{
    if (filter.len < 2)
        return true;
    size_t bits = (filter.len - 1) * 8;
    int probes = (unsigned char)filter.ptr[filter.len - 1];
    if (probes < 1 || probes > 30)
        return true;
    uint32_t h = (uint32_t)hash, delta = (uint32_t)(hash >> 32) | 1;
    uint64_t m = probe_m(bits);
    for (int k = 0; k < probes; k++) {
        size_t pos = probe_bit(h, m, bits);
        if (!(filter.ptr[pos / 8] & (1 << (pos % 8))))
            return false;
        h += delta;
    }
    return true;
}
