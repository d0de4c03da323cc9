/* Block compression. With zdict.c, the only files that know about LZ4 and zstd.
 *
 *   stored block = payload | type:u8 | crc:u32le   (crc32c masked, over payload+type)
 *   type 0: payload is the raw block
 *   type 1: payload = varint raw_len | LZ4 block
 *   type 2: payload = varint raw_len | zstd frame (one frame, raw_len bytes)
 *   type 3: payload = varint raw_len | varint col_len | zstd frame of the
 *           block's columnar form (colblock.h, col_len bytes)
 *   type 4: payload = varint raw_len | varint col_len | varint dict_id | zstd
 *           frame of the columnar form made with the database's dictionary
 *           dict_id (zdict.h)
 * A block that the codec does not shrink by 1/8 is stored raw. Thread-safe. */
#ifndef LB_CODEC_H
#define LB_CODEC_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/slice.h"
#include "store/table/colblock.h"
#include "store/table/zdict.h"

enum codec_type {
    CODEC_RAW = 0,
    CODEC_LZ4 = 1,
    CODEC_ZSTD = 2,
    CODEC_COLZSTD = 3,
    CODEC_COLZSTD_DICT = 4
};

/* How a table's blocks are compressed, by the age of what they hold. */
enum codec_mode {
    /* LZ4 at acceleration 2: files still being written to their final form
     * (flushes, merges of windows being written); the fastest to write */
    CODEC_MODE_FAST = 0,
    /* LZ4HC level 3: a final form about 15% smaller than FAST, as fast to read */
    CODEC_MODE_HC,
    /* zstd at a level (1..19): a final form about 16% (level 3) to 21%
     * (level 6) smaller than HC on log rows, 3 times slower to decode */
    CODEC_MODE_ZSTD,
};

struct codec_opts {
    enum codec_mode mode;
    int level; /* zstd's level, 1..19 (0: 3); ignored otherwise */
    /* zstd mode: the database's dictionaries (NULL: none), which columnar
     * blocks use when the set has one and feed with samples while not */
    struct zdict_set *dicts;
};

#define CODEC_TRAILER 5
#define CODEC_MAX_RAW (64u << 20) /* a block never decodes to more than this */
#define CODEC_ZSTD_MAX_LEVEL 19

/* Appends the stored form (payload, type and crc) of raw to out, compressed
 * as opts says (NULL: FAST). REQUIRES for HC: about 300 KiB of free stack. */
void codec_encode(struct slice raw, const struct codec_opts *opts, struct buf *out);

/* codec_encode for a data block whose keys follow layout: in zstd mode,
 * its columnar form is compressed (type 3, or 4 with opts->dicts' current
 * dictionary) when it has one. */
void codec_encode_data(struct slice raw, const struct codec_opts *opts, enum col_layout layout,
                       struct buf *out);

/* Appends the stored form of raw uncompressed (type 0): for bytes that
 * LZ4 cannot shrink, such as filters. */
void codec_encode_raw(struct slice raw, struct buf *out);

/* Checks the crc of stored (the payload plus trailer) and decodes it into
 * out (reset first). ERR_CORRUPT on a bad crc, type, LZ4 or zstd stream or
 * a length that is not the one announced; what names the file for the log. */
int codec_decode(struct slice stored, const char *what, uint64_t off, struct buf *out);
/* codec_decode of a block that may name a dictionary of dicts (NULL: a
 * type 4 block is ERR_CORRUPT). */
int codec_decode_dict(struct slice stored, const char *what, uint64_t off, struct zdict_set *dicts,
                      struct buf *out);

/* The type byte of a stored block (CODEC_*), or -1 if it is too short. */
int codec_stored_type(struct slice stored);

#endif
