/* SSTables: immutable sorted files of internal keys (format in FORMAT.md):
 * LZ4 data blocks of ~32 KiB, a bloom filter of user keys, an index block
 * and an 80-byte footer with magic, version, entry count and min/max ts.
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

#include "config/buf.h"
#include "store/env.h"
#include "store/iter.h"
#include "store/slice.h"

#define SST_MAGIC 0x6c6f676275636b31ULL /* "logbuck1" */
#define SST_VERSION 1
#define SST_FOOTER 80
#define SST_BLOCK_SIZE (32u << 10)

struct cache;

struct sst_props {
    uint64_t entries;
    uint64_t deletes;
    int64_t min_ts, max_ts;
    uint64_t size; /* file bytes */
};

struct sst_builder;

struct sst_build_opts {
    bool no_bloom; /* no point reads on this table (the host index) */
    bool fast;     /* faster, weaker compression (flushes) */
};

/* Creates path (truncating). env must outlive the builder; opts NULL =
 * defaults. */
int sst_builder_new(struct env *env, const char *path, const struct sst_build_opts *opts,
                    struct sst_builder **out);
/* REQUIRES: ikey > every earlier key; ts is the row's timestamp. */
int sst_add(struct sst_builder *b, struct slice ikey, struct slice value, int64_t ts);
uint64_t sst_builder_bytes(const struct sst_builder *b);
uint64_t sst_builder_entries(const struct sst_builder *b);
/* Writes the bloom, index and footer, fsyncs and frees the builder. */
int sst_builder_finish(struct sst_builder *b, struct sst_props *out);
/* Frees the builder and deletes its file. NULL ok. */
void sst_builder_abandon(struct sst_builder *b);

struct sst_table;

/* cache and corrupt_count are borrowed and must outlive the table (cache may
 * be NULL). */
int sst_open(struct env *env, const char *path, struct cache *cache,
             atomic_ullong *corrupt_count, struct sst_table **out);
void sst_ref(struct sst_table *t);
void sst_unref(struct sst_table *t); /* NULL ok */
const struct sst_props *sst_get_props(const struct sst_table *t);

/* Newest version of ukey with seq <= max_seq: ERR_OK with *kind set and the
 * value appended to out, ERR_NOTFOUND, or ERR_CORRUPT. */
int sst_get(struct sst_table *t, struct slice ukey, uint64_t max_seq, int *kind,
            struct buf *out);
/* sst_get that also sets *seq, the version's sequence. */
int sst_get_seq(struct sst_table *t, struct slice ukey, uint64_t max_seq, int *kind,
                struct buf *out, uint64_t *seq);
/* Iterator over the internal keys; holds its own reference. */
struct iter *sst_iter(struct sst_table *t);
/* The same for one pass over the whole table (compaction): blocks already
 * cached are used, blocks read from disk are not added to the cache, where
 * they would push out the blocks queries use. */
struct iter *sst_iter_once(struct sst_table *t);

#endif
