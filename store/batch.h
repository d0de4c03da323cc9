/* The write batch, encoded once as the WAL record it becomes (FORMAT.md):
 *
 *   rep   = frame:12 (filled by the WAL) | seq:u64le | count:u32le | entries
 *   entry = flags:u8 | ts | host | event [ | varint idlen | id ]
 *           [ | varint vlen | value ]                             (puts only)
 *   flags: 0x80 | kind (bit 0) | 0x02 host is a reference | 0x04 event is one
 *          | 0x08 an id follows (idlen >= 1) | 0x10 a put is a MERGE
 *          | 0x20 a delete leaves the host index entry
 *   ts    = zigzag varint of ts minus the previous entry's ts (0 before the first)
 *   name  = varint len | bytes, which takes the batch's next name id (from 0,
 *           hosts and events alike), or a reference: varint id of such a name
 * Entries written before this form (flags 0 or 1: kind:u8 | ts:i64le |
 * varint hlen | host | varint elen | event) are still read.
 *
 * A batch belongs to one thread at a time. batch_put/batch_delete are in
 * store.h; the decoder below is what recovery and store_write use. */
#ifndef LB_BATCH_H
#define LB_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"

#define BATCH_FRAME 12  /* room for the WAL frame header */
#define BATCH_HEADER 12 /* seq + count */

/* A name the batch wrote in full: its bytes are rep.data[off, off + len). */
struct batch_name {
    uint64_t hash;
    uint32_t off, len, id;
};

struct batch {
    struct buf rep;
    size_t count;
    bool bad; /* a row broke a REQUIRES of batch_put; store_write says INVAL */
    int64_t last_ts;
    struct batch_name *names;   /* open addressing, len UINT32_MAX: free */
    uint32_t names_cap, nnames; /* cap: 0 or a power of 2 */
};

struct batch_entry {
    int kind;        /* IKEY_PUT, IKEY_MERGE or IKEY_DEL */
    bool keep_index; /* a delete of the row only */
    int64_t ts;
    struct slice host, event, id, value;
};

/* The payload the WAL stores (rep without the frame room). */
struct slice batch_payload(const struct batch *b);
void batch_set_seq(struct batch *b, uint64_t seq);

struct batch_reader {
    const char *p, *end;
    uint32_t left;
    int64_t last_ts;
    struct slice *names; /* by id, into the payload */
    size_t nnames, cap;
};

/* Parses a payload's header. ERR_OK or ERR_CORRUPT; either way release the
 * reader with batch_reader_done. */
int batch_reader_init(struct batch_reader *r, struct slice payload, uint64_t *seq, uint32_t *count);
/* 1 with *e set, 0 at the end, or ERR_CORRUPT. */
int batch_reader_next(struct batch_reader *r, struct batch_entry *e);
void batch_reader_done(struct batch_reader *r);

#endif
