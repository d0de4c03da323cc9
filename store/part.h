/* A partition (one bucket, or the host index) and its metadata: the files
 * (file_meta), the immutable sets of them (version), the manifest (part.c),
 * and the window iterators over them (window_iter.c). */
#ifndef LB_STORE_PART_H
#define LB_STORE_PART_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "store/env.h"
#include "store/iter.h"
#include "store/memtable.h"
#include "store/table/sst.h"

struct store_db;

/* Compaction window of time-windowed compaction: files never mix rows of
 * two windows. One hour, as InfluxDB's default shard group for short
 * retention; a window older than the TTL is dropped as whole files. */
#define STORE_WINDOW_NS (3600LL * 1000000000LL)
#define STORE_COMPACT_TRIGGER 4 /* files in one window */

/* One SSTable of a partition. Refcounted by the versions that list it; the
 * file is deleted when the last reference goes after it became obsolete. */
struct file_meta {
    atomic_int refs;
    uint64_t number;
    int64_t window;
    struct sst_props props;
    struct sst_table *table;
    char *path;
    struct env *env;
    atomic_bool obsolete;
    /* Compressed for speed (a flush, or a compaction of a window still
     * being written): a cold window holding one such file is rewritten in
     * its final form. Kept in the manifest. */
    bool fast;
    /* Final for a window among the two newest (LZ4HC, while the cold codec
     * is zstd): rewritten with zstd once the window has aged (two windows
     * behind the newest). Kept in the manifest. */
    bool hot;
    /* Set by a whole-window merge (its partition's job only): rows older
     * than cut_at were cut with the event TTL rules of generation cut_gen.
     * In memory only; INT64_MIN for flushed or reopened files. */
    int64_t cut_at;
    uint64_t cut_gen;
    /* Output of a merge that applied every range tombstone up to this
     * sequence (0: none; in memory only). */
    uint64_t tomb_seq;
    /* The table's schema catalog (catalog.h), loaded at open: cat_rc is
     * ERR_OK with cat set, ERR_NOTFOUND (none: the host index, older
     * files), or the load's error (a query that needs it fails with it). */
    struct cat_file *cat;
    int cat_rc;
};

/* An immutable set of files, sorted by (window asc, number desc). */
struct version {
    atomic_int refs;
    size_t n;
    struct file_meta **files;
};

struct part {
    struct store_db *db;
    uint32_t id; /* bucket number; db->buckets for the host index */
    bool is_index;
    char *dir;
    pthread_mutex_t mu;    /* guards mem, imm, nimm, ver */
    struct memtable *mem;  /* active; written under db->write_mu */
    struct memtable **imm; /* frozen, oldest first */
    size_t nimm, capimm;
    struct version *ver;
    /* owned by the partition's one background job (busy, under bg_mu) */
    uint64_t next_file;
    uint64_t flushed_gen;   /* persisted in the manifest */
    uint64_t last_seq;      /* persisted in the manifest */
    atomic_ullong done_gen; /* newest generation flushed, also empty ones */
    bool busy;              /* bg_mu */
    bool want_compact;      /* bg_mu */
    int64_t retry_at_ns;    /* bg_mu: a failed flush waits until then (monotonic) */
    bool force_compact;     /* bg_mu */
    /* writes have left the database (store_opts.settle_after_ns): every
     * window is cold, merged to its final form */
    atomic_bool settle;
};

/* versions and files (part.c) */
struct version *version_new(struct file_meta **files, size_t n);
void version_ref(struct version *v);
void version_unref(struct version *v);
void file_meta_unref(struct file_meta *f);
int64_t part_window(int64_t ts);
/* ts, host and event of a user key of this partition, row or index key
 * (store/key.h owns the layouts); 0 or empty if malformed. */
int64_t part_key_ts(const struct part *p, struct slice ukey);
struct slice part_key_host(const struct part *p, struct slice ukey);
struct slice part_key_event(const struct part *p, struct slice ukey);
int part_open(struct store_db *db, uint32_t id, struct part *p);
void part_close(struct part *p);
/* On failure *replaced says whether the new manifest may be on disk (the
 * rename happened, the directory sync failed): the caller must then keep
 * the new files and stop the database (sticky error). */
int part_write_manifest(struct part *p, struct version *v, uint64_t flushed_gen, uint64_t last_seq,
                        bool *replaced);
void part_install(struct part *p, struct version *v); /* takes ownership of v */
void part_file_path(const struct part *p, uint64_t number, struct buf *out);
uint64_t part_new_file_number(struct part *p);
/* cat: the file's catalog when its writer has it (ownership taken, ERR_OK
 * or ERR_NOTFOUND in cat_rc); NULL: read from the file. */
struct cat_builder;
int part_open_file(struct part *p, uint64_t number, const struct sst_props *props,
                   const struct cat_builder *cat, struct file_meta **out);

/* The files of a bucket partition (not the index), window after window in
 * key order; holds a reference to v. p, and opts (NULL: read every block)
 * with what it points to, must outlive the iterator. */
struct iter *window_iter_new(const struct part *p, struct version *v,
                             const struct sst_read_opts *opts);
/* The files of the index partition restricted to host's keys, window after
 * window in key order; keys of other hosts never show. */
struct iter *window_iter_host(const struct part *p, struct version *v, struct slice host);

#endif
