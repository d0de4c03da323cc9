/* The keys of DESIGN.md section 1, in memcmp order.
 *
 * user key  = bucket:u16be | tskey:u64be | host | 0x00 | event | 0x00
 *   tskey   = ts ^ (1<<63)                      (ASC databases)
 *           = ~(ts ^ (1<<63))                   (DESC databases)
 * index key = host | 0x00 | tskey:u64be | event | 0x00      (the host index)
 *
 * The bucket is a function of ts alone (key_bucket), so an index entry names
 * its row's bucket without a pointer. host and event never contain NUL. */
#ifndef LB_KEY_H
#define LB_KEY_H

#include <stdbool.h>
#include <stdint.h>

#include "config/buf.h"
#include "store/slice.h"

#define KEY_MAX_NAME 1024 /* bytes of host or event */

/* splitmix64's finaliser: a bijection on 64 bits that spreads every bit. */
static inline uint64_t key_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* bucket = mix64(ts) % buckets. REQUIRES: buckets > 0. */
static inline uint32_t key_bucket(int64_t ts, uint32_t buckets)
{
    return (uint32_t)(key_mix64((uint64_t)ts) % buckets);
}

static inline uint64_t key_tskey(int64_t ts, bool desc)
{
    uint64_t k = (uint64_t)ts ^ (1ULL << 63);
    return desc ? ~k : k;
}

static inline int64_t key_ts_from_tskey(uint64_t k, bool desc)
{
    if (desc)
        k = ~k;
    return (int64_t)(k ^ (1ULL << 63));
}

/* Appends the user key to out. */
void key_encode_row(struct buf *out, uint32_t bucket, int64_t ts, bool desc, struct slice host,
                    struct slice event);
/* Appends bucket | tskey only: the prefix of every row of that ts. */
void key_encode_row_prefix(struct buf *out, uint32_t bucket, int64_t ts, bool desc);

struct key_row {
    uint32_t bucket;
    int64_t ts;
    struct slice host;  /* borrowed from the key */
    struct slice event; /* borrowed from the key */
};
/* ERR_OK or ERR_CORRUPT if the bytes are not a user key. */
int key_decode_row(struct slice key, bool desc, struct key_row *out);

/* Appends the index key host | 0x00 | tskey | event | 0x00: one host's
 * entries are contiguous and in ts order, whatever their events. */
void key_encode_index(struct buf *out, struct slice host, struct slice event, int64_t ts,
                      bool desc);
/* Appends host | 0x00: the prefix of every index key of host. */
void key_encode_index_prefix(struct buf *out, struct slice host);
/* Appends host | 0x00 | tskey(ts): where host's entries of ts begin. */
void key_encode_index_at(struct buf *out, struct slice host, int64_t ts, bool desc);
int key_decode_index(struct slice key, bool desc, struct key_row *out); /* bucket left 0 */
/* The 8 tskey bytes of an index key (an empty slice if malformed). */
struct slice key_index_tskey(struct slice key);

#endif
