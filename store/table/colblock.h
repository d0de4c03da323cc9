/* Column-wise form of a data block of row keys or of host index keys
 * (store/FORMAT.md, "Columnar data blocks"): the same entries as a row
 * block (block.h), with the keys taken apart (bucket, ts and sequence
 * deltas, host and event dictionaries, kinds) and the records of ids and values split into one
 * column per tag key and field name, so that a compressor sees like values side by side. Decoding
 * gives back the row block byte for byte, so every reader works on row blocks as before; only the
 * stored form changes. Thread-safe. */
#ifndef LB_COLBLOCK_H
#define LB_COLBLOCK_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/slice.h"

/* Appends the columnar form of raw (a finished row block) to out. false,
 * out unchanged, if raw is not a block of internal row keys or of host
 * index keys (a damaged block, a test's keys): it is then stored as rows. */
bool colblock_encode(struct slice raw, struct buf *out);

/* Decodes a columnar form into the row block it was made from (out reset
 * first). ERR_CORRUPT if col is malformed, holds keys out of order or
 * decodes to more than max bytes; never reads outside col. */
int colblock_decode(struct slice col, size_t max, struct buf *out);

#endif
