/* Prefix-compressed sorted blocks with restart points (LevelDB's block).
 *
 *   entry   = varint shared | varint unshared | varint vlen | key[unshared] | value
 *   trailer = restart:u32le * n | n:u32le
 * Every BLK_RESTART_EVERY entries the key is stored whole (a restart point),
 * so a seek binary-searches the restarts. A builder is used by one thread.
 * A reader never trusts the bytes: a bad entry makes the iterator invalid
 * with status ERR_CORRUPT. */
#ifndef LB_BLOCK_H
#define LB_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"
#include "store/iter.h"

#define BLK_RESTART_EVERY 16

struct blk_builder {
    struct buf data;
    struct buf last_key;
    uint32_t *restarts;
    size_t nrestarts, cap;
    int counter;
    size_t count;
};

void blk_builder_init(struct blk_builder *b);
void blk_builder_destroy(struct blk_builder *b);
void blk_builder_reset(struct blk_builder *b);
/* REQUIRES: key > every key added since the last reset. */
void blk_add(struct blk_builder *b, struct slice key, struct slice value);
size_t blk_size(const struct blk_builder *b); /* bytes if finished now */
/* Appends the trailer; the slice (borrowed) is valid until the next reset. */
struct slice blk_finish(struct blk_builder *b);

/* A parsed block over borrowed bytes. */
struct blk {
    const char *data;
    size_t restart_off; /* entries end here */
    uint32_t nrestarts;
    /* Set by blk_index_restarts (else NULL): for each restart point the 8
     * key bytes after the prefix every key of the block shares (pfx_len
     * bytes at pfx), as a big-endian word, so that a seek's binary search
     * compares words in one array instead of reading a key spread over the
     * block at each step. */
    const uint64_t *rpfx;
    const char *pfx;
    size_t pfx_len;
    /* the next 8 key bytes likewise, when many restart points share their
     * first word (a host section's block: one host and event's rows
     * differ only in their stamps, past it); else NULL */
    const uint64_t *rpfx2;
};

/* ERR_OK or ERR_CORRUPT if the trailer is impossible. */
int blk_parse(struct slice data, struct blk *out);
/* Indexes the restart keys of a parsed block for seeks, the array in space
 * (which must outlive the block's use; for a block that is kept and sought
 * many times, as a cached one). Leaves the block as it was if an entry at a
 * restart point is bad (the reader reports it). */
void blk_index_restarts(struct blk *b, struct buf *space);
/* Iterator over the block; blk and its bytes must outlive it (attach a
 * cleanup with it_on_destroy to release them). */
struct iter *blk_iter(const struct blk *b);
/* Points it, an iterator blk_iter made, at b instead, unpositioned (its
 * status cleared, its key's memory kept for the new block's keys, and no
 * blk_keep). REQUIRES: it has no cleanups (it_on_destroy). */
void blk_iter_on(struct iter *it, const struct blk *b);

/* Which entries an iterator stops at: those keep(arg, key, value) admits.
 * The others are passed over inside the block, in either direction, as if
 * the block did not hold them (a caller's per-entry test without the
 * layers above the block seeing the entry), and counted in *passed (if
 * not NULL). need, if not empty, is bytes every entry keep admits holds in
 * its key or its value (ASCII-folded, as words_contains_folded finds
 * them): moving forward, the block's bytes are searched for it once, and
 * an entry without it is passed over without its key being built or keep
 * called. Borrowed: must outlive its use. */
struct blk_keep {
    bool (*keep)(const void *arg, struct slice key, struct slice value);
    const void *arg;
    uint64_t *passed;
    struct slice need;
};

/* From the next move of it on, stops only at the entries k admits (NULL:
 * at every entry). */
void blk_iter_keep(struct iter *it, const struct blk_keep *k);

#endif
