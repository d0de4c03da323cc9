/* Bloom filter over user keys for point reads: 10 bits per key, 7 probes
 * by double hashing. filter = bits | probes:u8. Building is one-threaded;
 * a finished filter is read-only. */
#ifndef LB_BLOOM_H
#define LB_BLOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"

uint64_t bloom_hash(struct slice key);
/* Appends a filter for the n key hashes to out. */
void bloom_build(const uint64_t *hashes, size_t n, struct buf *out);
/* bloom_build with bits_per_key bits per hash and probes probes (1..30). */
void bloom_build_k(const uint64_t *hashes, size_t n, size_t bits_per_key, int probes,
                   struct buf *out);
/* false only if the key was certainly not added. A malformed filter
 * answers true (the read falls back to the blocks). */
bool bloom_may_match(struct slice filter, uint64_t hash);

#endif
