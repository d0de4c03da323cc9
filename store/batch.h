/* The write batch, encoded once as the WAL record it becomes (FORMAT.md):
 *
 *   rep = frame:12 (filled by the WAL) | seq:u64le | count:u32le | entries
 *   entry = kind:u8 | ts:i64le | varint hlen | host | varint elen | event
 *           [ | varint vlen | value ]   (puts only)
 *
 * A batch belongs to one thread at a time. batch_put/batch_delete are in
 * store.h; the decoder below is what recovery and store_write use. */
#ifndef LB_BATCH_H
#define LB_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "config/buf.h"
#include "store/slice.h"

#define BATCH_FRAME 12  /* room for the WAL frame header */
#define BATCH_HEADER 12 /* seq + count */

struct batch {
    struct buf rep;
    size_t count;
    bool bad; /* a row broke a REQUIRES of batch_put; store_write says INVAL */
};

struct batch_entry {
    int kind; /* IKEY_PUT or IKEY_DEL */
    int64_t ts;
    struct slice host, event, value;
};

/* The payload the WAL stores (rep without the frame room). */
struct slice batch_payload(const struct batch *b);
void batch_set_seq(struct batch *b, uint64_t seq);

struct batch_reader {
    const char *p, *end;
    uint32_t left;
};

/* Parses a payload's header. ERR_OK or ERR_CORRUPT. */
int batch_reader_init(struct batch_reader *r, struct slice payload, uint64_t *seq,
                      uint32_t *count);
/* 1 with *e set, 0 at the end, or ERR_CORRUPT. */
int batch_reader_next(struct batch_reader *r, struct batch_entry *e);

#endif
