/* The keys of DESIGN.md section 1, in memcmp order.
 *
 * user key  = base | end                        (a row)
 *   base    = bucket:u16be | tskey:u64be | host | 0x00 | event
 *   end     = 0x00                              (no identity: one row per base)
 *           | 0x01 | varint idlen | id          (idlen >= 1)
 *   tskey   = ts ^ (1<<63)                      (ASC databases)
 *           = ~(ts ^ (1<<63))                   (DESC databases)
 * index key = host | 0x00 | tskey:u64be | event | 0x00      (the host index)
 *
 * The id is what makes a row unique among the rows of one (ts, host, event)
 * (store/FORMAT.md, "Row identity"): the store keeps its bytes exactly, so
 * two rows with different ids never share a key. Rows without an id (the
 * first releases wrote only those) end with 0x00 and sort before every row
 * with an id of the same base; all rows of one base lie in [base 0x00,
 * base 0x02). Keys are prefix-free: host never contains 0x00, event never
 * 0x00 or 0x01, and the id's length is written before it.
 *
 * The bucket is a function of ts alone (key_bucket), so an index entry names
 * its row's bucket without a pointer. One index entry stands for every row
 * of its (host, ts, event). */
#ifndef LB_KEY_H
#define LB_KEY_H

#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"

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

/* Whether name can be an event of a key (0..KEY_MAX_NAME bytes, none of
 * them 0x00 or 0x01; the ingest layer also refuses an empty one) or a host
 * (0..KEY_MAX_NAME bytes, no 0x00). */
bool key_event_ok(struct slice name);
bool key_host_ok(struct slice name);

/* Appends the user key of a row without an id to out. */
void key_encode_row(struct buf *out, uint32_t bucket, int64_t ts, bool desc, struct slice host,
                    struct slice event);
/* Appends the user key of a row with id (an empty id: key_encode_row's). */
void key_encode_row_id(struct buf *out, uint32_t bucket, int64_t ts, bool desc, struct slice host,
                       struct slice event, struct slice id);
/* Appends the base (the key without its end): every row of (ts, host,
 * event) has a key in [base 0x00, base 0x02). */
void key_encode_row_base(struct buf *out, uint32_t bucket, int64_t ts, bool desc, struct slice host,
                         struct slice event);
/* Bytes of the base of a row key (its whole length if malformed). */
size_t key_row_base_len(struct slice key);
/* Appends bucket | tskey only: the prefix of every row of that ts. */
void key_encode_row_prefix(struct buf *out, uint32_t bucket, int64_t ts, bool desc);

struct key_row {
    uint32_t bucket;
    int64_t ts;
    struct slice host;  /* borrowed from the key */
    struct slice event; /* borrowed from the key */
    struct slice id;    /* borrowed from the key; empty for a row without */
};
/* ERR_OK or ERR_CORRUPT if the bytes are not a user key. */
int key_decode_row(struct slice key, bool desc, struct key_row *out);

/* Parts of a row key that may be malformed: 0 / empty slices then. */
int64_t key_row_ts(struct slice key, bool desc);
struct slice key_row_host(struct slice key);
struct slice key_row_event(struct slice key);

/* Appends the index key host | 0x00 | tskey | event | 0x00: one host's
 * entries are contiguous and in ts order, whatever their events. */
void key_encode_index(struct buf *out, struct slice host, struct slice event, int64_t ts,
                      bool desc);
/* Appends host | 0x00: the prefix of every index key of host. */
void key_encode_index_prefix(struct buf *out, struct slice host);
/* Appends host | 0x00 | tskey(ts): where host's entries of ts begin. */
void key_encode_index_at(struct buf *out, struct slice host, int64_t ts, bool desc);
int key_decode_index(struct slice key, bool desc, struct key_row *out); /* bucket 0, id empty */
int64_t key_index_ts(struct slice key, bool desc);                      /* 0 if malformed */
struct slice key_index_host(struct slice key);                          /* empty if malformed */
struct slice key_index_event(struct slice key);                         /* empty if malformed */
/* The 8 tskey bytes of an index key (an empty slice if malformed). */
struct slice key_index_tskey(struct slice key);

/* Bounds [lo, hi) (appended to the two bufs) of the row keys of bucket
 * whose ts lies in [ts_lo, ts_hi], in either ts order. */
void key_row_range(struct buf *lo, struct buf *hi, uint32_t bucket, int64_t ts_lo, int64_t ts_hi,
                   bool desc);
/* Bounds [lo, hi) of host's index keys whose ts lies in [ts_lo, ts_hi]. */
void key_index_range(struct buf *lo, struct buf *hi, struct slice host, int64_t ts_lo,
                     int64_t ts_hi, bool desc);

/* Comparators for merging the streams of several buckets or hosts in output
 * order: row keys by tskey, host, event and end, ignoring the bucket; index
 * keys by tskey, then host and event. */
int key_cmp_row(struct slice a, struct slice b);
int key_cmp_index(struct slice a, struct slice b);

#endif
