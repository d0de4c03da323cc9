/* Block compression. The only file that knows about LZ4.
 *
 *   stored block = payload | type:u8 | crc:u32le   (crc32c masked, over payload+type)
 *   type 0: payload is the raw block
 *   type 1: payload = varint raw_len | LZ4 block
 * A block that LZ4 does not shrink by 1/8 is stored raw. Thread-safe. */
#ifndef LB_CODEC_H
#define LB_CODEC_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/slice.h"

enum codec_type { CODEC_RAW = 0, CODEC_LZ4 = 1 };

#define CODEC_TRAILER 5
#define CODEC_MAX_RAW (64u << 20) /* a block never decodes to more than this */

/* Appends the stored form (payload, type and crc) of raw to out. fast:
 * LZ4 at acceleration 2 (flushes); otherwise LZ4HC level 3 (compactions: about 20%
 * smaller, several times slower to write, as fast to read). REQUIRES for
 * !fast: about 300 KiB of free stack. */
void codec_encode(struct slice raw, bool fast, struct buf *out);

/* Appends the stored form of raw uncompressed (type 0): for bytes that
 * LZ4 cannot shrink, such as filters. */
void codec_encode_raw(struct slice raw, struct buf *out);

/* Checks the crc of stored (the payload plus trailer) and decodes it into
 * out (reset first). ERR_CORRUPT on a bad crc, type or LZ4 stream; what
 * names the file for the log. */
int codec_decode(struct slice stored, const char *what, uint64_t off, struct buf *out);

#endif
