/* Private structures of the store: the store and its databases, shared by
 * the files of store/ (store/README.md has the module map). Partitions,
 * versions and files are in part.h, the pure values of TTL cut-offs and
 * tombstones in ttl.h and tomb.h, compaction in compact.h, a database's
 * durable settings in settings.h.
 *
 * Locks, outermost first: db->write_mu, store->bg_mu, store->mu (the
 * database list; the scheduler's pick_job takes it inside bg_mu), part->mu,
 * db->ttl_mu, wal internals, cache. Nobody takes an outer lock while
 * holding an inner one. store_db_create holds store->mu over the opening of
 * a new database, whose locks nobody else can hold yet; every other user
 * of the list copies it with references (store_all_dbs) and lets go of
 * store->mu before touching a database. */
#ifndef LB_STORE_INT_H
#define LB_STORE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/clock.h"
#include "store/arena.h"
#include "store/batch.h"
#include "store/compact.h"
#include "store/env.h"
#include "store/memtable.h"
#include "store/part.h"
#include "store/settings.h"
#include "store/store.h"
#include "store/table/cache.h"
#include "store/table/sst.h"
#include "store/table/zdict.h"
#include "store/tomb.h"
#include "store/ttl.h"
#include "store/wal.h"

struct db_metrics {
    atomic_ullong flushes, flush_ns, compactions, compact_ns;
    atomic_ullong bytes_flushed, bytes_compacted, bytes_written_user, blocks_copied;
    atomic_ullong corrupt, busy_rejects, nospc, ttl_files_dropped, flush_errors;
    atomic_ullong quarantined; /* damaged files taken out of their partition */
    atomic_ullong stall_ns;    /* writers' waits for the memtable budget */
    atomic_ullong ttl_bytes_reclaimed, ttl_rows_expired, rows_deleted;
    atomic_ullong range_deletes, range_tombs_purged;
    atomic_ullong guard_windows_dropped, guard_bytes_dropped;
    atomic_int last_flush_error;
    atomic_ullong *bucket_rows; /* per bucket */
};

/* A batch's rows while they are applied (db.c): each row's key in text,
 * sorted by key through keys (the first APPLY_PFX_WORDS words of the key
 * cached, so most comparisons stay in the array). */
#define APPLY_PFX_WORDS 3
struct apply_key {
    uint64_t pfx[APPLY_PFX_WORDS];
    uint32_t off, len, row;
};
struct apply_row {
    struct slice value;
    uint64_t seq;
    uint32_t bucket;
    int kind;
};
struct apply_scratch {
    struct buf text;
    struct apply_row *rows;
    struct apply_key *keys, *tmp;
    size_t n, cap;
    uint32_t *last; /* per bucket: the row before, while checking the order */
    size_t nlast;
};

struct store_db {
    struct store *store;
    char *name;
    char *dir;
    char *wal_dir;
    atomic_int refs;
    bool dropped;   /* store->mu */
    char *drop_dir; /* where a dropped database's files went */
    uint32_t buckets;
    bool desc;
    atomic_llong ttl_ns;
    atomic_llong floor_ts;        /* rows below were dropped by the disk guard: hidden */
    atomic_ullong max_disk_bytes; /* 0: the store's default */
    pthread_mutex_t ttl_mu;       /* guards ettl, nettl (taken inside write_mu) */
    struct event_cut *ettl;       /* per-event TTL rules, cutoff = ttl ns */
    size_t nettl;
    uint64_t ettl_gen;       /* ttl_mu: bumped when a rule is added or shortened */
    struct tomb_set *tombs;  /* ttl_mu: range tombstones (replaced under write_mu too) */
    struct part *parts;      /* buckets + 1 (the host index last) */
    struct zdict_set *dicts; /* the zstd dictionaries of cold blocks (dict/) */
    uint32_t nparts;
    pthread_mutex_t write_mu; /* serializes writers; guards last_seq, wal appends, freezes */
    uint64_t last_seq;
    atomic_ullong visible_seq;
    struct wal *wal;
    uint64_t gen; /* generation of the active memtables == WAL segment */
    atomic_size_t active_bytes;
    atomic_int bg_error;        /* sticky: the database turned read-only */
    atomic_llong last_write_ns; /* monotonic time of the last write (or the open) */
    bool settled;               /* the ticker's: its partitions settle (part.settle) */
    struct buf scratch;         /* write_mu: key encoding */
    struct apply_scratch apply; /* write_mu: a batch's rows, sorted (db.c) */
    struct db_metrics m;
};

struct store {
    struct store_opts opts;
    char *dir;
    struct env *env;
    struct env_file *lock;
    struct cache *cache;
    atomic_size_t mem_total;
    struct arena_pool pool; /* free memtable blocks, at most memtable_bytes / 2 */
    pthread_mutex_t mu;     /* guards dbs */
    struct store_db **dbs;
    size_t ndbs;
    struct store_offline *offline; /* under mu */
    size_t noffline;
    pthread_mutex_t bg_mu;    /* guards scheduling state and part.busy */
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
    /* store_set_commit_hook: the subscriber of committed batches */
    _Atomic(store_commit_fn) commit_fn;
    void *_Atomic commit_arg;
    atomic_bool want_relief; /* over budget with no database able to flush itself */
    /* half the budget used: idle databases asked to flush (store.c,
     * relieve_idle), at most every IDLE_ASK_NS */
    atomic_bool want_idle_relief;
    atomic_llong idle_asked_ns;
};

/* A database without a write for this long gives its memtables back when
 * another fills half the budget (store.c, relieve_idle). */
#define IDLE_RELIEF_NS 1000000000LL
#define IDLE_ASK_NS 100000000LL

/* A snapshot (db.c): each partition's memtables and files, and what hides
 * rows (sequence, TTL cut-offs, range tombstones); store_catalog reads it
 * too. */
struct part_snap {
    struct memtable *mem;
    struct memtable **imm;
    size_t nimm;
    struct version *ver;
};

struct store_snap {
    struct store_db *db;
    uint64_t seq;
    int64_t cutoff;
    struct event_cuts cuts;
    struct tomb_set *tombs;
    struct part_snap *ps; /* lazily filled per partition */
    pthread_mutex_t mu;
};

/* Whether the snapshot reads window [ws, we] of bucket from its tables
 * alone: no memtable entry in it and no range tombstone meeting it
 * (window_counts.c). */
bool snap_window_tables_only(struct store_snap *snap, uint32_t bucket, int64_t ws, int64_t we);

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

/* databases (db.c) */
int db_open(struct store *s, const char *name, const struct db_opts *create, struct store_db **out);
void db_close(struct store_db *db);
void db_ref(struct store_db *db);
int db_freeze_locked(struct store_db *db);
/* Freezes db's memtables if they hold rows and none waits for its flush:
 * the store's relief when the budget is full of small databases. Takes
 * write_mu. True if it froze. */
bool db_freeze_for_budget(struct store_db *db);

/* Bytes of the database's WAL segments on disk (stats.c). */
uint64_t db_wal_bytes(struct store_db *db);

/* The open databases, each with a reference; release with store_put_dbs. */
struct store_db **store_all_dbs(struct store *s, size_t *n);
void store_put_dbs(struct store_db **v, size_t n);

#endif
