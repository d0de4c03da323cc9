/* SSTables: immutable sorted files of internal keys (format in FORMAT.md):
 * LZ4 or zstd data blocks of ~32 KiB (those of log rows each with a word filter),
 * a bloom filter of user keys, an index block and an 80-byte footer with
 * magic, version, entry count and min/max ts.
 *
 * A builder is used by one thread. A table is refcounted (sst_open returns
 * one reference) and may be read from any thread; its blocks go through the
 * shared block cache. Every offset and length read from disk is checked; a
 * damaged block gives ERR_CORRUPT and bumps *corrupt_count. */
#ifndef LB_SST_H
#define LB_SST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"
#include "model/words.h"
#include "store/env.h"
#include "store/iter.h"
#include "store/table/codec.h"

#define SST_MAGIC 0x6c6f676275636b31ULL /* "logbuck1" */
/* Version 2: the bloom filter holds sst_build_opts.bloom_key of each user
 * key (a row table's key base); version 1 (still read) whole user keys.
 * Version 3: data blocks of log rows have word filters (wfilter.h); the
 * blocks of versions 1 and 2 are always read. */
/* Version 4: zstd data blocks in their columnar form (colblock.h).
 * Version 5: a section (below), its trailer between the catalog block and
 * the footer; written only by builders given a section, the rest stay
 * version 4 (SST_VERSION_PLAIN). */
#define SST_VERSION 5
#define SST_VERSION_PLAIN 4
#define SST_FOOTER 80
#define SST_SECTION_TRAILER 36
#define SST_BLOCK_SIZE (32u << 10)

struct cache;

struct sst_props {
    uint64_t entries;
    uint64_t deletes;
    int64_t min_ts, max_ts;
    uint64_t size; /* file bytes */
};

struct sst_builder;

/* Sees every entry added to a table (sst_add, and each entry of a block
 * copied by sst_add_block), in key order, and gives the raw bytes of the
 * catalog block (store/catalog.c), written directly before the footer
 * (FORMAT.md, "Catalog block"). Borrowed: must outlive the builder. */
struct sst_observer {
    void (*entry)(struct sst_observer *o, struct slice ikey, struct slice value, int64_t ts);
    /* At sst_builder_finish: appends the block's raw bytes to out (nothing:
     * no catalog block); data_bytes is the size of the data blocks. */
    void (*finish)(struct sst_observer *o, uint64_t data_bytes, struct buf *out);
};

/* A second sorted run of entries in the same file (FORMAT.md, "Host
 * section"): its own blocks, index block and a raw "names" block, written
 * after the data blocks. A section sees every entry added to the table
 * (as an observer does) and gives its own entries at the finish.
 * Borrowed: must outlive the builder. */
struct sst_section {
    void (*entry)(struct sst_section *s, struct slice ikey, struct slice value, int64_t ts);
    /* At sst_builder_finish: calls put for each of its entries (internal
     * keys, ascending; put's non-zero code stops it and is returned) and
     * appends the names block's bytes to names. ERR_NOTFOUND: the table
     * gets no section (nothing to write, or the section gave up). */
    int (*finish)(struct sst_section *s,
                  int (*put)(void *arg, struct slice ikey, struct slice value), void *arg,
                  struct buf *names);
};

struct sst_build_opts {
    bool no_bloom; /* no point reads on this table (the host index) */
    /* point reads, but no bloom filter (an empty bloom block, which matches
     * every key): a cold window's final file, the last one a read of its
     * window probes, where a filter only spares the reads of absent keys */
    bool empty_bloom;
    /* The bytes of a user key that go into the bloom filter: its first
     * bloom_key(ukey) bytes; NULL: the whole key. */
    size_t (*bloom_key)(struct slice ukey);
    /* compression of every block but word filters (zeroes: fast LZ4, as
     * flushes write) */
    struct codec_opts codec;
    /* the keys of the data blocks, for their columnar form in zstd tables
     * (colblock.h; COL_NONE: none) */
    enum col_layout layout;
    struct sst_observer *observer; /* NULL: none, no catalog block */
    struct sst_section *section;   /* NULL: none (blocks of layout COL_SECTION) */
};

/* Creates path (truncating). env must outlive the builder; opts NULL =
 * defaults. */
int sst_builder_new(struct env *env, const char *path, const struct sst_build_opts *opts,
                    struct sst_builder **out);
/* REQUIRES: ikey > every earlier key; ts is the row's timestamp. */
int sst_add(struct sst_builder *b, struct slice ikey, struct slice value, int64_t ts);
/* Bytes of the blocks finished so far: the finished file is at least this
 * big (a compaction that splits its output at N bytes makes every file but
 * the last at least N, so "full" can be told from the file's size). */
uint64_t sst_builder_bytes(const struct sst_builder *b);
uint64_t sst_builder_entries(const struct sst_builder *b);
/* Appends a data block of another table as it is stored, without
 * recompressing it: stored is its stored form (payload and trailer, as read
 * by sst_scan), raw its decoded bytes, last_key its last internal key and
 * filter the stored form of its word filter (sst_scan_block_filter; empty:
 * none), copied with it. The block's keys are walked for the bloom filter
 * and the properties; ts_of(ctx, user key) gives a row's timestamp.
 * ERR_CORRUPT if a key is bad, the last one is not last_key or the filter
 * is damaged, and the builder is left as it was.
 * REQUIRES: the block's keys > every earlier key. */
int sst_add_block(struct sst_builder *b, struct slice stored, struct slice raw,
                  struct slice last_key, struct slice filter,
                  int64_t (*ts_of)(const void *ctx, struct slice ukey), const void *ctx);
/* Writes the bloom, index and footer, fsyncs and frees the builder. */
int sst_builder_finish(struct sst_builder *b, struct sst_props *out);
/* Frees the builder and deletes its file. NULL ok. */
void sst_builder_abandon(struct sst_builder *b);

struct sst_table;

/* cache and corrupt_count are borrowed and must outlive the table (cache may
 * be NULL). */
int sst_open(struct env *env, const char *path, struct cache *cache, atomic_ullong *corrupt_count,
             struct sst_table **out);
/* The dictionaries the table's type 4 blocks name (held; before the table
 * is shared). Without them such blocks read as ERR_CORRUPT. */
void sst_set_dicts(struct sst_table *t, struct zdict_set *dicts);
void sst_ref(struct sst_table *t);
void sst_unref(struct sst_table *t); /* NULL ok */
const struct sst_props *sst_get_props(const struct sst_table *t);

/* Newest version of ukey with seq <= max_seq: ERR_OK with *kind set and the
 * value appended to out, ERR_NOTFOUND, or ERR_CORRUPT. */
int sst_get(struct sst_table *t, struct slice ukey, uint64_t max_seq, int *kind, struct buf *out);
/* The format version of the file (1 to 5). */
uint32_t sst_version(const struct sst_table *t);
/* Decodes the table's catalog block into out (reset first): ERR_OK,
 * ERR_NOTFOUND if the table has none (footer bytes 68..71 zero), or
 * ERR_CORRUPT (bad handle or checksum; counted). Reads the file. */
int sst_read_catalog(struct sst_table *t, struct buf *out);
/* False if no key whose bloom key is bkey is in the table. */
bool sst_may_contain(const struct sst_table *t, struct slice bkey);
/* sst_get without the bloom probe (the caller made it), setting *seq too. */
int sst_find_seq(struct sst_table *t, struct slice ukey, uint64_t max_seq, int *kind,
                 struct buf *out, uint64_t *seq);
/* sst_get that also sets *seq, the version's sequence. */
int sst_get_seq(struct sst_table *t, struct slice ukey, uint64_t max_seq, int *kind,
                struct buf *out, uint64_t *seq);
/* Iterator over the internal keys; holds its own reference. */
struct iter *sst_iter(struct sst_table *t);
/* Whether the table has a section (sst_section), and an iterator over its
 * entries (as sst_iter; an empty one if it has none). */
bool sst_has_section(const struct sst_table *t);
struct iter *sst_section_iter(struct sst_table *t);
/* sst_section_iter(t) made of it (NULL ok), an iterator of a section of
 * any table, which it then no longer reads: its block iterators and their
 * buffers kept (a host's rows of a dashboard's range open one section
 * after another, a hundred a request). Another iterator is destroyed. */
struct iter *sst_section_iter_again(struct iter *it, struct sst_table *t);
/* What a reader derives from the table's section and keeps, in the block
 * cache beside the table's blocks, under a 64-bit key of its own (a
 * decoded run of rows: store/window_series.c): NULL without a cache or on
 * a miss; a value put takes the place of one of the same key. Released
 * with sst_section_kept_release; gone with the table. */
struct cache_handle *sst_section_kept_get(struct sst_table *t, uint64_t key, void **value);
struct cache_handle *sst_section_kept_put(struct sst_table *t, uint64_t key, void *value,
                                          size_t charge, void (*deleter)(void *value));
void sst_section_kept_release(struct sst_table *t, struct cache_handle *h); /* NULL ok */
/* Whether the block cache holds less than three quarters of its budget
 * (what sst_warm_data fills it to), so that keeping more evicts nothing. */
bool sst_section_kept_room(struct sst_table *t);
/* The section's names block (empty if none); valid while t is. */
struct slice sst_section_names(const struct sst_table *t);
/* Reads every block of the table's section into the block cache (for a
 * table just written: the first aggregates of its hosts find them decoded
 * instead of each decoding its own); nothing without a cache. Stops at
 * the first error, which the reads will meet and report. */
void sst_warm_section(struct sst_table *t);
/* Reads the table's data blocks into the block cache while the cache
 * holds less than three quarters of its budget, so that nothing is
 * evicted for them (RocksDB's prepopulate_block_cache, done by reading
 * back): a window just compacted to its final form is the likeliest to be
 * read next (a dashboard's recent hours), and its first queries then find
 * its blocks decoded. Nothing without a cache. */
void sst_warm_data(struct sst_table *t);

/* What a table iterator may pass over: a data block whose word filter
 * lacks one of the nwords words (both their hashes, model/words.h) is skipped as if it
 * were empty (blocks without a filter are always read). In a block with a
 * filter, whose every entry is a log row (wfilter.h: every version of its
 * keys anywhere has the same bytes, or is a delete), an entry whose key and
 * value bytes lack one of the nneed texts (ASCII-folded, as
 * words_contains_folded takes them) is passed over inside the block, so it
 * never reaches the iterators above. The counters, if not NULL, get the
 * data blocks the iterator decodes (from the cache or the file), those it
 * skips and the entries it passes over added. Everything is borrowed and
 * must outlive the iterator, which updates the counters from the thread
 * that uses it. */
struct sst_read_opts {
    const struct word_hashes *words;
    size_t nwords;
    const struct slice *need;
    size_t nneed;
    /* events (sorted bytewise; nevents > 0): in a table of row keys
     * (model/key.h), an entry of another event is passed over inside its
     * block, whatever the block holds (every version of a key has its
     * event); counted in *rows_passed too */
    const struct slice *events;
    size_t nevents;
    uint64_t *blocks_read, *blocks_skipped, *rows_passed;
};

/* sst_iter with opts (NULL: sst_iter). */
struct iter *sst_iter_opts(struct sst_table *t, const struct sst_read_opts *opts);

/* One forward pass over a table for compaction, block by block, so that a
 * block can be copied whole (sst_add_block) or its entries merged one by
 * one. Blocks are read from the file and not added to the cache, where
 * they would push out the blocks queries use. Created at the first
 * entry; not valid at the end or after an error (sst_scan_status). */
struct sst_scan;

struct sst_scan *sst_scan_new(struct sst_table *t); /* holds a reference to t */
void sst_scan_free(struct sst_scan *s);             /* NULL ok */
bool sst_scan_valid(const struct sst_scan *s);
int sst_scan_status(const struct sst_scan *s);
/* REQUIRES: valid, for the rest. Slices are valid until the scan moves. */
struct slice sst_scan_key(const struct sst_scan *s);
struct slice sst_scan_value(const struct sst_scan *s);
void sst_scan_next(struct sst_scan *s);
/* Whether the scan is at the first entry of its block. */
bool sst_scan_block_start(const struct sst_scan *s);
/* The current block: its stored form, decoded bytes and last internal key. */
struct slice sst_scan_block_stored(const struct sst_scan *s);
struct slice sst_scan_block_raw(const struct sst_scan *s);
struct slice sst_scan_block_last(const struct sst_scan *s);
/* The stored form of the current block's word filter (checked); empty if
 * it has none. */
struct slice sst_scan_block_filter(const struct sst_scan *s);
/* Moves to the first entry of the next block. */
void sst_scan_next_block(struct sst_scan *s);

#endif
