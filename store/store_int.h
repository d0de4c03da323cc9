/* Private structures of the store: the store, databases, partitions,
 * versions and file metadata, shared by store.c, db.c, part.c, compact.c
 * and recover.c. Locks, outermost first: db->write_mu, store->bg_mu,
 * part->mu, wal internals, cache. Nobody takes an outer lock while
 * holding an inner one. */
#ifndef LB_STORE_INT_H
#define LB_STORE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/clock.h"
#include "base/buf.h"
#include "store/arena.h"
#include "store/batch.h"
#include "store/table/cache.h"
#include "store/env.h"
#include "store/memtable.h"
#include "store/table/sst.h"
#include "store/store.h"
#include "store/wal.h"

/* Compaction window of time-windowed compaction: files never mix rows of
 * two windows. One hour, as InfluxDB's default shard group for short
 * retention; a window older than the TTL is dropped as whole files. */
#define STORE_WINDOW_NS (3600LL * 1000000000LL)
#define STORE_COMPACT_TRIGGER 4         /* files in one window */

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
     * being written): a cold window holding one such file is rewritten
     * with LZ4HC. Kept in the manifest. */
    bool fast;
    /* Set by a whole-window merge (its partition's job only): rows older
     * than cut_at were cut with the event TTL rules of generation cut_gen.
     * In memory only; INT64_MIN for flushed or reopened files. */
    int64_t cut_at;
    uint64_t cut_gen;
    /* Output of a merge that applied every range tombstone up to this
     * sequence (0: none; in memory only). */
    uint64_t tomb_seq;
};

/* An immutable set of files, sorted by (window asc, number desc). */
struct version {
    atomic_int refs;
    size_t n;
    struct file_meta **files;
};

struct part {
    struct store_db *db;
    uint32_t id;     /* bucket number; db->buckets for the host index */
    bool is_index;
    char *dir;
    pthread_mutex_t mu;     /* guards mem, imm, nimm, ver */
    struct memtable *mem;   /* active; written under db->write_mu */
    struct memtable **imm;  /* frozen, oldest first */
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
};

#define STORE_MAX_EVENT_TTLS 256

/* A per-event cut-off: rows of event older than cutoff are hidden. The
 * database's own rule list (store_db.ettl) reuses it with the TTL in
 * cutoff. event is NUL-terminated, len bytes. */
struct event_cut {
    char *event;
    size_t len;
    int64_t cutoff;
};

struct event_cuts {
    size_t n;
    struct event_cut *v;
    uint64_t gen; /* the rules' generation (store_db.ettl_gen) */
};

/* ttl.c */
void event_cuts_destroy(struct event_cuts *c);
void event_cuts_copy(struct event_cuts *dst, const struct event_cuts *src);
/* max(base, the cut-off of event) */
int64_t event_cuts_get(const struct event_cuts *c, struct slice event, int64_t base);
/* max(base, every cut-off) */
int64_t event_cuts_max(const struct event_cuts *c, int64_t base);
/* max(base, the least aggressive cut-off): every rule has cut below it */
int64_t event_cuts_min(const struct event_cuts *c, int64_t base);
/* The event cut-offs of db at now. */
void db_event_cuts(struct store_db *db, int64_t now, struct event_cuts *out);

/* A range tombstone (tomb.c): rows of host (and event when has_event)
 * with lo <= ts <= hi and a sequence below seq are deleted. */
struct range_tomb {
    uint64_t seq;
    int64_t lo, hi;
    char *host, *event; /* NUL-terminated; event "" without has_event */
    size_t hlen, elen;
    bool has_event;
    uint64_t gen; /* memtables of this generation or older may hold covered rows */
};

/* Immutable once published; refcounted. */
struct tomb_set {
    atomic_int refs;
    size_t n;
    struct range_tomb *v;
};

#define STORE_MAX_TOMBSTONES 4096

struct tomb_set *tomb_set_new(size_t n);
void tomb_set_ref(struct tomb_set *t);   /* NULL ok */
void tomb_set_unref(struct tomb_set *t); /* NULL ok */
uint64_t tomb_set_max_seq(const struct tomb_set *t);
/* Copies src (and its names) into dst, a slot of a new set. */
void tomb_copy(struct range_tomb *dst, const struct range_tomb *src);
/* A tombstone visible at snap_seq covers this row version. */
bool tomb_covers(const struct tomb_set *t, struct slice host, struct slice event, int64_t ts,
                 uint64_t row_seq, uint64_t snap_seq);
/* Some tombstone's names and range match the key, whatever the sequences. */
bool tomb_matches(const struct tomb_set *t, struct slice host, struct slice event, int64_t ts);

struct db_metrics {
    atomic_ullong flushes, flush_ns, compactions, compact_ns;
    atomic_ullong bytes_flushed, bytes_compacted, bytes_written_user, blocks_copied;
    atomic_ullong corrupt, busy_rejects, nospc, ttl_files_dropped, flush_errors;
    atomic_ullong stall_ns; /* writers' waits for the memtable budget */
    atomic_ullong ttl_bytes_reclaimed, ttl_rows_expired, rows_deleted;
    atomic_ullong range_deletes, range_tombs_purged;
    atomic_ullong guard_windows_dropped, guard_bytes_dropped;
    atomic_int last_flush_error;
    atomic_ullong *bucket_rows; /* per bucket */
};

struct store_db {
    struct store *store;
    char *name;
    char *dir;
    char *wal_dir;
    atomic_int refs;
    bool dropped;           /* store->mu */
    char *drop_dir;         /* where a dropped database's files went */
    uint32_t buckets;
    bool desc;
    atomic_llong ttl_ns;
    atomic_llong floor_ts;  /* rows below were dropped by the disk guard: hidden */
    atomic_ullong max_disk_bytes; /* 0: the store's default */
    pthread_mutex_t ttl_mu; /* guards ettl, nettl (taken inside write_mu) */
    struct event_cut *ettl; /* per-event TTL rules, cutoff = ttl ns */
    size_t nettl;
    uint64_t ettl_gen;      /* ttl_mu: bumped when a rule is added or shortened */
    struct tomb_set *tombs; /* ttl_mu: range tombstones (replaced under write_mu too) */
    struct part *parts;     /* buckets + 1 (the host index last) */
    uint32_t nparts;
    pthread_mutex_t write_mu; /* serializes writers; guards last_seq, wal appends, freezes */
    uint64_t last_seq;
    atomic_ullong visible_seq;
    struct wal *wal;
    uint64_t gen;           /* generation of the active memtables == WAL segment */
    atomic_size_t active_bytes;
    atomic_int bg_error;    /* sticky: the database turned read-only */
    struct buf scratch;     /* write_mu: key encoding */
    struct db_metrics m;
};

struct store {
    struct store_opts opts;
    char *dir;
    struct env *env;
    struct env_file *lock;
    struct cache *cache;
    atomic_size_t mem_total;
    struct arena_pool pool;  /* free memtable blocks, at most memtable_bytes / 2 */
    pthread_mutex_t mu;  /* guards dbs */
    struct store_db **dbs;
    size_t ndbs;
    pthread_mutex_t bg_mu; /* guards scheduling state and part.busy */
    pthread_cond_t bg_cond;   /* work to do */
    pthread_cond_t done_cond; /* a job finished */
    bool stop;
    pthread_t *threads;
    unsigned nthreads;
    unsigned ncompacting; /* compaction jobs running; under bg_mu */
    pthread_t ticker;
    bool has_ticker;
    int64_t next_retention_ns;
    void (*wake)(struct store *s); /* store_wake */
};

/* The scheduler's wake-up, installed by store_open: new work (a frozen
 * memtable, a tombstone to purge) or a database failed. */
static inline void store_wake(struct store *s)
{
    s->wake(s);
}

/* The wall clock of the store's databases (store_opts.clock for tests). */
static inline int64_t db_now(const struct store_db *db)
{
    const struct store_opts *o = &db->store->opts;
    return o->clock ? o->clock(o->clock_arg) : clock_real_ns();
}

/* Makes the database read-only with rc as its sticky error (the first one
 * wins; logged) and wakes the scheduler. The owner of bg_error. */
void db_fail(struct store_db *db, int rc);

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
int part_write_manifest(struct part *p, struct version *v, uint64_t flushed_gen,
                        uint64_t last_seq, bool *replaced);
void part_install(struct part *p, struct version *v); /* takes ownership of v */
void part_file_path(const struct part *p, uint64_t number, struct buf *out);
uint64_t part_new_file_number(struct part *p);
int part_open_file(struct part *p, uint64_t number, const struct sst_props *props,
                   struct file_meta **out);

/* The files of a bucket partition (not the index), window after window in
 * key order; holds a reference to v. p must outlive the iterator. */
struct iter *window_iter_new(const struct part *p, struct version *v);
/* The files of the index partition restricted to host's keys, window after
 * window in key order; keys of other hosts never show. */
struct iter *window_iter_host(const struct part *p, struct version *v, struct slice host);

/* flush and compaction (compact.c), run by one job per partition. They
 * return their status and never touch the database's sticky error: *fatal
 * (left alone otherwise) says that a manifest was replaced but its write
 * failed, so the partition's state on disk is uncertain and the caller must
 * stop the database's writes (db_fail). */
int compact_flush(struct part *p, bool *fatal);
int compact_run(struct part *p, bool force, bool *fatal);
void compact_delete_old_wal(struct store_db *db);
/* Whether a compaction of p would find work (a full or cold window). */
bool compact_wanted(struct part *p);
/* Deletes the files of p whose rows are all older than floor (disk guard);
 * adds their bytes to *bytes. REQUIRES: p's job slot (busy). */
int compact_drop_before(struct part *p, int64_t floor, uint64_t *bytes, bool *fatal);

/* databases (db.c) */
int db_open(struct store *s, const char *name, const struct db_opts *create,
            struct store_db **out);
void db_close(struct store_db *db);
void db_ref(struct store_db *db);
int db_freeze_locked(struct store_db *db);

/* Bytes of the database's WAL segments on disk (stats.c). */
uint64_t db_wal_bytes(struct store_db *db);

/* durable settings (settings.c) */
/* Persists META (options and event TTLs). REQUIRES: write_mu. */
int db_write_meta(struct store_db *db);
/* At open: reads META into db (ERR_CORRUPT naming the file if damaged). */
int db_read_meta(struct store_db *db);
/* The current tombstone set, with a reference. */
struct tomb_set *db_tombs(struct store_db *db);
/* At open: reads DATA/<db>/TOMBSTONES (none is an empty set). */
int db_read_tombs(struct store_db *db);
/* Drops tombstones no file or memtable can need any more. */
void db_purge_tombs(struct store_db *db);

/* The open databases, each with a reference; release with store_put_dbs. */
struct store_db **store_all_dbs(struct store *s, size_t *n);
void store_put_dbs(struct store_db **v, size_t n);

#endif
