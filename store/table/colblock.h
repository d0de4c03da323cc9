/* The columnar form of a data block: what a cold window's blocks are
 * compressed from (codec type 3, store/FORMAT.md "Columnar blocks").
 *
 * A data block (block.h) holds its rows one after the other, each key
 * prefix-compressed against the one before: the compressor sees a row's
 * timestamp, host, event, fields and message side by side with the next
 * row's, and each kind of value far from its kind in the other rows. The
 * columnar form takes the block's entries apart by what their bytes mean
 * (key layout model/key.h, record layout model/record.h) and stores each
 * part with its kind: timestamps as deltas, hosts and events as indexes
 * into the block's dictionaries, each record's names once per distinct
 * shape, then one column per tag or field name with the values of every
 * row together (floats byte-plane by byte-plane, strings' lengths apart
 * from their bytes).
 *
 * It is a lossless transform of the block's bytes: col_decode gives back
 * exactly the raw block col_encode was given (col_encode checks it and
 * declines otherwise), so every reader, the block cache and the block
 * iterator see the same raw block whatever the stored form. */
#ifndef LB_COLBLOCK_H
#define LB_COLBLOCK_H

#include <stdbool.h>

#include "base/buf.h"
#include "base/slice.h"

enum col_layout {
    COL_NONE = 0,    /* not a data block of rows or index entries: no columnar form */
    COL_ROWS = 1,    /* internal keys of rows: bucket | tskey | host 0 event end */
    COL_INDEX = 2,   /* internal keys of the host index: host 0 tskey event 0 */
    COL_SECTION = 3, /* internal keys of host sections: host 0 event 0 tskey */
};

/* Appends the columnar form of raw, a block blk_builder made whose keys
 * follow layout, to out: true if done; false (out as it was) if a key does
 * not follow the layout, the block is not well formed, or the form would
 * not decode to raw byte for byte. Thread-safe. */
bool col_encode(struct slice raw, enum col_layout layout, struct buf *out);

/* Decodes a columnar form into the raw block (out reset first; at most
 * max_raw bytes). ERR_OK or ERR_CORRUPT for any malformed input, without
 * reading outside col. Thread-safe. */
int col_decode(struct slice col, size_t max_raw, struct buf *out);

#endif
