/* The store facade: databases of bucket-partitioned LSM trees.
 *
 * A store is a data directory holding databases (DATA/<db>/). A database has
 * fixed options (bucket count, ts order) and a changeable TTL; each bucket is
 * one partition (DATA/<db>/p<NN>/) with its own memtable, SSTables and
 * compaction, plus the host index partition (DATA/<db>/hidx/). One WAL per
 * database. The store knows nothing of HTTP, SQL or line protocol: rows are
 * (ts, host, event[, id]) keys with values that are opaque unless written
 * as merges (store/record.h encodes them).
 *
 * Threading: every function here may be called from any thread. Writers to
 * one database are serialized inside store_write (group commit); readers take
 * snapshots and never block writers. */
#ifndef LB_STORE_H
#define LB_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"
#include "model/words.h"
#include "store/iter.h"

enum store_wal_sync {
    STORE_SYNC_ALWAYS,   /* store_write returns after the record is fsynced */
    STORE_SYNC_INTERVAL, /* fsync every wal_sync_interval_ns in the background */
    STORE_SYNC_NONE,     /* never fsync (the OS decides) */
};

struct store_opts {
    const char *dir; /* data directory, created if missing */
    enum store_wal_sync wal_sync;
    int64_t wal_sync_interval_ns; /* for STORE_SYNC_INTERVAL */
    size_t memtable_bytes;        /* budget for all memtables of all databases */
    /* Over the budget, a write waits up to this long for flushes to free
     * memory before it fails with ERR_BUSY (a stall costs the client less
     * than a refused batch it must send again). 0: fail at once. */
    int64_t write_stall_ns;
    size_t block_cache_bytes;
    size_t max_open_files;               /* the POSIX env's table cache (0: its default) */
    unsigned background_threads;         /* flush + compaction threads, >= 1 */
    int64_t retention_check_interval_ns; /* how often the TTL sweep runs */
    /* Disk budget of each database (SSTables + WAL), 0 = none. Over it, the
     * retention sweep (and store_db_compact) drops the oldest hour windows
     * whole, never the newest one, and hides rows older than what it
     * dropped; each drop is logged and counted in metrics. */
    uint64_t max_disk_bytes;
    /* A compaction splits its output into files of about this size; such a
     * full file of a window still being written is not merged again until
     * the window turns cold. */
    uint64_t max_file_bytes;
    /* A database without writes for this long settles: its memtables are
     * flushed and every window, the two newest included, is merged to its
     * final form (FORMAT.md, "Time windows"); a write ends it. 0 (the
     * default here; the daemon's config sets 1m): only windows two behind
     * the newest are. */
    int64_t settle_after_ns;
    /* The final form of a cold window (two or more behind the newest):
     * zstd at this level (1..19; default 3), or LZ4HC when 0. The two
     * newest windows, when a settle or store_db_compact finishes them, get
     * LZ4HC (rewritten with zstd once they age); flushes and windows still
     * being written, fast LZ4. Files of every form are read whatever this
     * is (store/FORMAT.md). */
    int cold_zstd_level;
    /* A window's final form also keeps its rows by host (store/series.h,
     * store_series_open); default true. */
    bool host_section;
    /* Wall clock in ns since the epoch, for TTL; NULL = CLOCK_REALTIME.
     * Tests inject a clock here. */
    int64_t (*clock)(void *arg);
    void *clock_arg;
    /* File system to use; NULL = the POSIX env (store/env.h). Tests pass a
     * fault-injecting env here. Must outlive the store. */
    struct env *env;
};

/* Fills opts with defaults (dir "./data", ALWAYS, 1 s interval, 64 MiB
 * memtables, 32 MiB block cache, 2 background threads, 1 min retention
 * sweep, 64 MiB files, real clock, POSIX env). Call it first, then set fields. */
void store_opts_default(struct store_opts *opts);

struct db_opts {
    uint32_t buckets; /* 1..1024, fixed at creation */
    bool ts_desc;     /* true: newest first (the default); fixed at creation */
    int64_t ttl_ns;   /* 0 keeps rows forever; changeable */
};

struct store;
struct store_db;
struct store_snap;
struct batch;
struct env;

/* Opens (creating if needed) the data directory, opens every database in it
 * and replays their WALs. A torn WAL tail is cut and logged; damage before
 * the tail fails with ERR_CORRUPT and a log line naming file and offset. */
int store_open(const struct store_opts *opts, struct store **out);
/* Stops background work, flushes memtables, closes everything. NULL ok.
 * REQUIRES: no store_db references or snapshots are still held. */
void store_close(struct store *s);

/* The names store_db_create accepts, worded for error messages. */
#define STORE_DB_NAME_RULE "1 to 64 of A-Z a-z 0-9 _ - ., not starting with ."

/* Creates a database. ERR_EXISTS if it exists, ERR_OFFLINE if a database
 * of that name is offline, ERR_INVAL for a bad name (STORE_DB_NAME_RULE)
 * or bad options. */
int store_db_create(struct store *s, const char *name, const struct db_opts *opts);
/* Borrows a reference to an open database; release with store_db_unref.
 * ERR_NOTFOUND if it does not exist, ERR_OFFLINE if it is offline. */
int store_db_get(struct store *s, const char *name, struct store_db **out);
void store_db_unref(struct store_db *db);
/* Drops a database and deletes its files once the last reference is gone.
 * An offline database is dropped too: its files are deleted. */
int store_db_drop(struct store *s, const char *name);

/* Offline databases: one that cannot open at start (a damaged or missing
 * file, META, TOMBSTONES, WAL damage before its tail) does not stop the
 * store; it is kept offline, its files untouched, with the reason, and the
 * others serve. It stays offline until the daemon restarts (after a fix)
 * or it is dropped. */
struct store_offline {
    char *name;
    int rc;    /* what opening it returned */
    char *why; /* "CORRUPT: wal 000003.log: bad record at offset 80", ... */
};
/* The offline databases, sorted by name; free with store_offline_free. */
size_t store_offline_list(struct store *s, struct store_offline **out);
void store_offline_free(struct store_offline *v, size_t n);
/* The reason database name is offline, in why; false if it is not. */
bool store_db_offline_reason(struct store *s, const char *name, struct buf *why);
/* Names of all databases, sorted; the caller frees each and the array. */
int store_db_list(struct store *s, char ***names, size_t *count);

const char *store_db_name(const struct store_db *db);
void store_db_opts(const struct store_db *db, struct db_opts *out);
/* Persists a new disk budget (0: the store's default); the next retention
 * sweep or store_db_compact enforces it. */
int store_db_set_max_disk_bytes(struct store_db *db, uint64_t bytes);
/* The database's own budget (0: none, the store's default applies). */
uint64_t store_db_max_disk_bytes(struct store_db *db);
/* Persists a new TTL; takes effect for reads at once. */
int store_db_set_ttl(struct store_db *db, int64_t ttl_ns);

/* Per-event TTL: rows whose event is `event` are hidden (and dropped by
 * compaction) once older than now - ttl_ns, even if the database TTL keeps
 * them. An override can only shorten retention: a row goes once it is
 * past either TTL. ttl_ns 0 removes the override. Persisted in META and
 * effective for reads at once. ERR_INVAL for a bad event name or ttl,
 * ERR_TOOBIG past 256 overrides. */
int store_db_set_event_ttl(struct store_db *db, struct slice event, int64_t ttl_ns);

struct store_event_ttl {
    char *event; /* NUL-terminated */
    int64_t ttl_ns;
};
/* The overrides, in the order they were added; *out is always set (free it
 * with store_event_ttls_free even when the count is 0). */
size_t store_db_event_ttls(struct store_db *db, struct store_event_ttl **out);
void store_event_ttls_free(struct store_event_ttl *v, size_t n);

/* Size and content of a database, gathered without blocking writers. */
struct store_db_stats {
    uint64_t rows;             /* ESTIMATED: entries of the bucket SSTables and
                                * memtables minus their tombstones; shadowed
                                * versions and expired rows not yet compacted
                                * away are counted */
    uint64_t bytes;            /* on disk: SSTables of every partition + WAL */
    uint64_t sst_bytes;        /* SSTables only */
    uint64_t wal_bytes;        /* WAL segments only */
    int64_t oldest_ts;         /* min ts over files and memtables (0 if empty) */
    int64_t newest_ts;         /* max ts, same sources; an upper/lower bound:
                                * deleted or expired rows may still count */
    bool is_empty;             /* no files and no memtable entries */
    uint64_t bytes_reclaimed;  /* since open: SSTable bytes deleted by the
                                * TTL sweep (whole files) or the disk guard */
    uint64_t rows_expired;     /* since open: rows dropped by compaction for TTL */
    uint64_t rows_deleted;     /* since open: delete rows written (tombstones) */
    uint64_t tombstones;       /* point tombstones still stored (files + memtables) */
    uint64_t range_tombstones; /* range tombstones outstanding */
};

/* Fills *out for db. Never fails (returns ERR_OK); cost: a walk over the
 * file lists and the WAL directory. Any thread. */
int store_db_stats(struct store_db *db, struct store_db_stats *out);

/* --- writes --- */

struct batch *batch_new(void);
void batch_free(struct batch *b);
void batch_clear(struct batch *b);
/* Makes room for about bytes of rows at once (a batch grown row by row
 * copies itself at every doubling). */
void batch_reserve(struct batch *b, size_t bytes);
size_t batch_count(const struct batch *b);
size_t batch_bytes(const struct batch *b);
/* Adds a row without an id (a newer version replaces an older one with the
 * same key). REQUIRES: key_host_ok(host), key_event_ok(event) (store/key.h:
 * at most KEY_MAX_NAME bytes, no NUL, no 0x01 in the event). */
void batch_put(struct batch *b, int64_t ts, struct slice host, struct slice event,
               struct slice value);
/* Adds the row of (ts, host, event, id) (store/FORMAT.md, "Row identity"):
 * rows of one (ts, host, event) with different ids are different rows. With
 * merge false a newer version replaces an older one of the same key; with
 * merge true its value is merged into the older versions: the value is a
 * record (store/record.h) and the row reads as the union of the versions'
 * tags and fields, the newest value of each name winning (InfluxDB's rule
 * for a point written twice). Same REQUIRES as batch_put. */
void batch_put_id(struct batch *b, int64_t ts, struct slice host, struct slice event,
                  struct slice id, struct slice value, bool merge);
/* Deletes the row without an id and its host index entry (one row per
 * (ts, host, event), as the first releases stored). */
void batch_delete(struct batch *b, int64_t ts, struct slice host, struct slice event);
/* Deletes the row of (ts, host, event, id) only: the host index entry of
 * (host, ts, event) stays, for the other rows it may stand for (a host
 * query that finds no row there skips it). */
void batch_delete_id(struct batch *b, int64_t ts, struct slice host, struct slice event,
                     struct slice id);

/* Applies the batch atomically: one WAL record, then the memtables of its
 * buckets and the host index. Returns once durable under wal_sync.
 * ERR_BUSY when flushing has fallen behind (back-pressure: retry later);
 * ERR_NOSPC when the disk is full; nothing of the batch is applied then.
 * ERR_INVAL (nothing applied) if a row broke batch_put's REQUIRES (a NUL in
 * host or event, or a name over KEY_MAX_NAME): validate rows before adding
 * them so one bad row does not reject its batch. After a background
 * failure the database is read-only and every write returns that error.
 * Readers see a batch once it is durable (with ALWAYS: after its fsync).
 * The batch is not consumed; batch_clear it to reuse it. */
int store_write(struct store_db *db, struct batch *b);
/* store_write that returns (and makes the batch visible) without waiting
 * for its fsync under wal_sync = always: InfluxDB 3's no_sync. A crash
 * may lose the batch until the next fsync of the WAL. */
int store_write_nosync(struct store_db *db, struct batch *b);

/* Deletes every row of host (and of *event when event is not NULL) with
 * lo <= ts <= hi written before this call, as one range tombstone: at
 * once invisible to every later snapshot, iterator and point read; durable
 * (DATA/<db>/TOMBSTONES, fsynced) when this returns. Compaction drops the
 * covered rows and then the tombstone. Rows written afterwards are not
 * affected. ERR_INVAL for bad names or lo > hi; ERR_BUSY with
 * STORE_MAX_RANGE_DELETES tombstones outstanding after freezing the
 * memtables and waiting write_stall_ns for the flush and compactions to
 * purge some; ERR_NOSPC on a full disk. */
#define STORE_MAX_RANGE_DELETES 4096
int store_db_delete_range(struct store_db *db, struct slice host, const struct slice *event,
                          int64_t lo, int64_t hi);
/* Range tombstones outstanding. */
size_t store_db_range_tombstones(struct store_db *db);

/* --- reads --- */

/* Point read of the newest version. ERR_NOTFOUND if absent, deleted or past
 * the TTL. The value is appended to out. */
int store_get(struct store_db *db, int64_t ts, struct slice host, struct slice event,
              struct buf *out);

/* A consistent view of the database; release with store_snap_release. */
struct store_snap *store_snapshot(struct store_db *db);
void store_snap_release(struct store_snap *snap);
/* Point read within a snapshot (same contract as store_get). */
int store_snap_get(struct store_snap *snap, int64_t ts, struct slice host, struct slice event,
                   struct buf *out);
/* The rows of (ts, host, event), whatever their ids, in key order: a
 * cursor within the snapshot (which must outlive it). ERR_INVAL for bad
 * names. store_rows_next gives 1 with the row's key (store/key.h,
 * key_decode_row) and value, valid until the next call; 0 at the end; or
 * an error (ERR_CORRUPT). Same rules as the iterators below: versions
 * resolved, deleted rows and rows past the TTL hidden. */
struct store_rows;
int store_rows_open(struct store_snap *snap, int64_t ts, struct slice host, struct slice event,
                    struct store_rows **out);
int store_rows_next(struct store_rows *r, struct slice *key, struct slice *value);
void store_rows_close(struct store_rows *r); /* NULL ok */

/* Rows of one bucket in stored key order (key.h user keys; newest version
 * only; deleted rows hidden; rows past the TTL hidden). Supports seek, next
 * and prev. The iterator holds its own reference to the snapshot's data. */
struct iter *store_iter_bucket(struct store_snap *snap, uint32_t bucket);
/* The host index, keys of key.h index layout, values empty. Same rules.
 * It merges every index file: for one host, use store_iter_index_host. */
struct iter *store_iter_index(struct store_snap *snap);
/* The index entries of one host (keys starting with host 0x00), in key
 * order; only the time windows it reaches are opened, newest first in a
 * DESC database. Keys of other hosts are undefined: bound every seek and
 * scan to the host's prefix. */
struct iter *store_iter_index_host(struct store_snap *snap, struct slice host);

/* Data blocks of SSTables read and skipped by iterators (store_read_opts). */
struct store_read_stats {
    uint64_t blocks_read;    /* decoded for the iterator, from the cache or disk */
    uint64_t blocks_skipped; /* passed over by their word filter, not read */
    uint64_t rows_passed;    /* rows of blocks read lacking a needed text or event */
};

/* What a row iterator may leave out (store/FORMAT.md, "Word filters").
 * words: the words' hashes (model/words.h); a data block whose word filter
 * lacks one of them holds no row having all of them and is skipped
 * without being read. Blocks without a filter (memtables, files of
 * versions 1 and 2, blocks that are not all log rows) are always read. So
 * the iterator yields every row that has all the words, and maybe other
 * rows: the caller still matches each row (words_find). With or without
 * words, the rows it would have yielded that have all the words are the
 * same. need: texts (ASCII-folded) a row must hold somewhere in its key or
 * value bytes (words_contains_folded); in a block of log rows, a row that
 * lacks one is not yielded (the caller would pass over it unread), and
 * counted in stats. words and need are copied; stats (NULL ok) gets the
 * counts added while the iterator runs and must outlive it; iterators
 * sharing one stats must be used from one thread. */
struct store_read_opts {
    const struct word_hashes *words;
    size_t nwords;
    struct store_read_stats *stats;
    const struct slice *need;
    size_t nneed;
    /* the events a row may have (sorted bytewise; nevents 0: any): the
     * rows of others are not yielded (and counted in stats) */
    const struct slice *events;
    size_t nevents;
};

/* The rows of bucket with ts_lo <= ts <= ts_hi, and the index entries of
 * host with ts in that range: bounded iterators in stored key order whose
 * seeks stay within the range (a row-key seek target's bucket is replaced
 * by the bucket's, so that the streams of several buckets merged with
 * key_cmp_row can all be seeked to one key). Keys are key.h's. opts: NULL
 * reads every block. */
struct iter *store_iter_bucket_range(struct store_snap *snap, uint32_t bucket, int64_t ts_lo,
                                     int64_t ts_hi, const struct store_read_opts *opts);
struct iter *store_iter_host_range(struct store_snap *snap, struct slice host, int64_t ts_lo,
                                   int64_t ts_hi);

/* --- committed batches (live tail) ---
 *
 * A subscriber learns of every batch store_write commits, once it is
 * visible to snapshots (after its fsync under ALWAYS): fn is called in the
 * writer's thread, after the batch's sequences are visible and before
 * store_write returns, with the batch's payload (borrowed for the call).
 * It must be short (copy and enqueue) and must not call store_write. The
 * rows are read with store_commit_rows. One subscriber at a time: set it
 * before writes start, clear it (fn NULL) once they are over. */
typedef void (*store_commit_fn)(void *arg, struct store_db *db, struct slice payload);
void store_set_commit_hook(struct store *s, store_commit_fn fn, void *arg);

/* One row of a committed batch. seq: its sequence (a snapshot whose
 * store_snap_seq is >= seq sees it). is_delete: a tombstone. Slices point
 * into the payload. */
struct store_row {
    uint64_t seq;
    bool is_delete;
    int64_t ts;
    struct slice host, event, id, value;
};
/* The row count of a payload (0 if damaged). */
uint32_t store_commit_count(struct slice payload);
/* Calls fn for each row of payload in order; stops at fn's non-zero
 * return (returned). ERR_CORRUPT for a damaged payload. */
int store_commit_rows(struct slice payload, int (*fn)(void *arg, const struct store_row *row),
                      void *arg);
/* The sequence a snapshot reads at: it sees exactly the committed rows of
 * sequence <= this. */
uint64_t store_snap_seq(const struct store_snap *snap);
/* About how many entries of the snapshot's row partitions have a ts in
 * [lo, hi]: each table's entries in proportion to the part of its
 * [min_ts, max_ts] the range covers, each memtable's likewise by the ts of
 * its first and last keys. Versions and deletes count; no row is read.
 * A guide to how a query reads (on one thread or two), never an answer. */
uint64_t store_snap_rows_estimate(struct store_snap *snap, int64_t lo, int64_t hi);
/* The oldest ts a read of db shows for a row of event now: the TTL,
 * per-event TTL and disk-guard cut-off (INT64_MIN if none). */
int64_t store_db_cutoff(struct store_db *db, struct slice event);

/* --- counts by event and minute --- */

/* Rows of one event in one minute, [minute, minute + 60 s). */
typedef int (*store_count_fn)(void *arg, struct slice event, int64_t minute, uint64_t rows);

/* Counts rows of bucket with ts in [lo, hi] without reading them, where
 * the snapshot allows: the whole minutes in [lo, hi] of each time window
 * whose rows are all in one table that keeps counts by event and minute
 * (FORMAT.md, "Catalog block"), with no memtable entry and no range
 * tombstone in the window, no entry newer than the snapshot, and no
 * minute below a TTL cut-off (database, per event or disk guard). For
 * each such window, fn gets every (event, minute start, rows) of those
 * minutes (rows as a read would return them: every visible row once);
 * the ts ranges so counted are put in *windows (malloc'd, ascending; the
 * caller frees it; NULL if none) and their number in *n. The rest of
 * [lo, hi] is the caller's to read. Any thread; the snapshot must outlive
 * the call. ERR_INVAL for a bucket out of range, else fn's first non-zero
 * code or ERR_OK. */
struct store_ts_range {
    int64_t lo, hi; /* inclusive */
};
int store_snap_window_counts(struct store_snap *snap, uint32_t bucket, int64_t lo, int64_t hi,
                             store_count_fn fn, void *arg, struct store_ts_range **windows,
                             size_t *n);

/* The rows of one host (*host; NULL: of every host) read from the host
 * sections (store/series.h) of the windows of bucket whose rows of that
 * host the snapshot reads from their final files: a window whose final
 * file has a section (or whose files one whole-window merge split by size
 * all have one) and whose other files (late rows) hold no row of host and no
 * delete (for every host: none at all, and only windows wholly in
 * [lo, hi]), with no memtable
 * entry and no range tombstone in the window, no entry newer than the
 * snapshot, none of the nfields fields holding a string in any of its
 * rows, clipped to [lo, hi] and to the TTL cut-offs (database, per event
 * and disk guard). Each row comes once, as a read would return it, but
 * with only its ts, host, event and a value record of its numeric
 * fields (no tags, no string fields, an empty id), of the nevents events
 * (sorted bytewise, borrowed; events NULL: every event): for a caller that
 * needs nothing else of a row and no order (rows come window by window,
 * by ts within one in the stored order, events mixed). The ts ranges so
 * served go to *windows (malloc'd, ascending; NULL if none) and their
 * number to *n; the rest of [lo, hi] is the caller's to read (the host
 * index). Any thread; the snapshot must outlive the cursor. ERR_INVAL for
 * a bucket out of range. */
struct store_series;
struct store_series_row {
    int64_t ts;
    struct slice host, event, value; /* valid until the next call */
};
int store_series_open(struct store_snap *snap, uint32_t bucket, const struct slice *host,
                      int64_t lo, int64_t hi, const struct slice *events, size_t nevents,
                      const struct slice *fields, size_t nfields, struct store_series **out,
                      struct store_ts_range **windows, size_t *n);
/* 1 and *row set, 0 at the end, or an error (ERR_CORRUPT: a damaged block;
 * the caller fails its query, as a read of the rows would). */
int store_series_next(struct store_series *s, struct store_series_row *row);
/* Rows of one host and event in stored order (store_series_each): n of
 * them, the i-th at ts[i] with value[i]; all valid during the call. */
struct store_series_rows {
    struct slice host, event;
    size_t n; /* at least 1 */
    const int64_t *ts;
    const struct slice *value;
};
/* Every row store_series_next would give, from where it stands, given to
 * fn in runs: the rows of one host and event that follow one another in a
 * block, taken without a move through the iterators each. For one host
 * and an event set, from the start: a window's rows of one event at a
 * time, from a run of them kept in the block cache (the next read of the
 * same host and event in that table, a dashboard's next refresh, looks it
 * up instead of seeking; a part of a window under half of it is read by
 * itself); store_series_next is not called after. ERR_OK at the end, or
 * the first error of the store or of fn (nonzero stops; a call after goes
 * on with the next run). */
typedef int (*store_series_fn)(void *arg, const struct store_series_rows *rows);
int store_series_each(struct store_series *s, store_series_fn fn, void *arg);
void store_series_close(struct store_series *s); /* NULL ok */
/* Whether the cursor (one host and an event set) finds its first run, its
 * first window's first event, kept (store_series_each): a dashboard's
 * refresh then reads it as a few lookups, its first read by seeks. */
bool store_series_kept(struct store_series *s);

/* --- schema catalog (discovery statements) --- */

enum store_cat_kind {
    STORE_CAT_HOSTS,
    STORE_CAT_EVENTS,
    STORE_CAT_TAG_KEYS,
    STORE_CAT_TAG_VALUES,
    STORE_CAT_FIELDS,
};

struct store_cat_query {
    enum store_cat_kind kind;
    int64_t lo, hi;            /* inclusive ts range of the rows considered */
    const struct slice *host;  /* NULL: every host */
    const struct slice *event; /* NULL: every event */
    struct slice tag_key;      /* STORE_CAT_TAG_VALUES: the key */
    size_t limit;              /* 0: no limit */
};

/* The distinct names of the rows of the snapshot (files and memtables)
 * with lo <= ts <= hi, of the host and event when set: hosts, events, tag
 * keys, the values of tag_key, or field names. Calls fn(arg, name, type)
 * for each in bytewise order, each once, at most limit of them; type is
 * the field's REC_* type (model/record.h) for STORE_CAT_FIELDS (a name
 * stored with two types gives two calls, in type order) and 0 otherwise.
 * name is valid during the call only. fn returning non-zero stops with
 * that code. The names are all gathered before the first call: limit
 * bounds the calls, not the work or the memory (one copy of each name).
 *
 * Every name a visible row in range carries is listed, and no other,
 * except names whose only rows are deleted, replaced or past a per-event
 * TTL but not yet compacted away (the database TTL is applied). Answered
 * from the tables' catalogs (FORMAT.md, "Catalog block", time slots of
 * 1/64 hour) and a scan of the memtables; rows of the tables are read only
 * where a catalog leaves a name undecided (a slot the range cuts, a tag
 * key over the catalog's cap, a table without catalog), so that cost grows
 * with those rows, not with the database. Any thread; the snapshot must
 * outlive the call. ERR_INVAL for a bad kind or host/event name,
 * ERR_CORRUPT for a damaged catalog block or row, else fn's code or
 * ERR_OK. */
int store_catalog(struct store_snap *snap, const struct store_cat_query *q,
                  int (*fn)(void *arg, struct slice name, int type), void *arg);

/* --- maintenance --- */

/* Flushes every memtable of the database and waits. */
int store_db_flush(struct store_db *db);
/* Runs compaction (and the TTL sweep and the max_disk_bytes guard) of
 * every partition to completion. */
int store_db_compact(struct store_db *db);

/* Appends Prometheus text lines (all names start with logbucket_) for every
 * database: logbucket_bucket_rows_total{db,bucket}, logbucket_disk_bytes{db},
 * logbucket_db_rows{db} (estimated), logbucket_db_oldest_ts_seconds{db},
 * logbucket_db_newest_ts_seconds{db}, logbucket_retention_bytes_reclaimed_total,
 * logbucket_rows_deleted_total, logbucket_tombstones{db}, memtable bytes, flushes, compactions, WAL
 * syncs, cache hits, errors, ... */
void store_metrics(struct store *s, struct buf *out);

#endif
