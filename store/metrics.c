/* Prometheus text for store_metrics. Samples are gathered per metric
 * family across all databases (one buffer per family), so each family's
 * # HELP / # TYPE lines and samples come out as one group. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "store/ikey.h"
#include "store/store_int.h"

enum fam {
    F_BUCKET_ROWS,
    F_PART_FILES,
    F_PART_BYTES,
    F_PART_MEM,
    F_PART_BACKLOG,
    F_DISK,
    F_WAL_DISK,
    F_ACTIVE,
    F_FLUSHES,
    F_FLUSH_SECS,
    F_FLUSH_BYTES,
    F_COMPACTIONS,
    F_COMPACT_SECS,
    F_COMPACT_BYTES,
    F_COMPACT_COPIED,
    F_COMPACT_BACKLOG,
    F_FLUSH_ERRORS,
    F_WRITE_BYTES,
    F_CORRUPT,
    F_QUARANTINED,
    F_BUSY,
    F_STALL_SECS,
    F_NOSPC,
    F_TTL_FILES,
    F_WAL_SYNCS,
    F_WAL_BYTES,
    F_WAL_RECORDS,
    F_DB_ROWS,
    F_OLDEST,
    F_NEWEST,
    F_RECLAIMED,
    F_EXPIRED,
    F_DELETED,
    F_TOMBSTONES,
    F_RANGE_DELETES,
    F_RANGE_TOMBS,
    F_GUARD_WINDOWS,
    F_GUARD_BYTES,
    F_AGE_BYTES,
    F_AGE_EVENTS,
    F_AGE_PER_EVENT,
    F_COUNT
};

static const char *const fam_info[F_COUNT][3] = {
    {"bucket_rows_total", "counter", "Rows written per bucket."},
    {"partition_files", "gauge", "SSTables per partition."},
    {"partition_bytes", "gauge", "SSTable bytes per partition."},
    {"partition_memtable_bytes", "gauge", "Memtable bytes per partition (active and frozen)."},
    {"partition_flush_backlog", "gauge", "Frozen memtables waiting to be flushed."},
    {"disk_bytes", "gauge", "Bytes of the database on disk (SSTables and WAL)."},
    {"wal_disk_bytes", "gauge", "Bytes of WAL segments on disk."},
    {"memtable_active_bytes", "gauge", "Bytes of the active memtables."},
    {"flushes_total", "counter", "Memtable flushes (per partition)."},
    {"flush_seconds_total", "counter", "Time spent flushing."},
    {"flush_bytes_total", "counter", "SSTable bytes written by flushes."},
    {"compactions_total", "counter", "Compactions (per partition run)."},
    {"compaction_seconds_total", "counter", "Time spent compacting."},
    {"compaction_bytes_total", "counter", "SSTable bytes written by compactions."},
    {"compaction_blocks_copied_total", "counter",
     "Data blocks compactions copied as stored, without decoding and compressing them again."},
    {"compaction_backlog", "gauge", "Partitions waiting for a compaction."},
    {"flush_errors_total", "counter", "Flushes that failed and will be retried."},
    {"write_bytes_total", "counter", "Bytes of write batches accepted."},
    {"corruption_errors_total", "counter", "Damaged blocks or files found by readers."},
    {"quarantined_files_total", "counter",
     "Damaged SSTables a compaction took out of their partition (moved to its quarantine/ "
     "folder)."},
    {"write_busy_total", "counter", "Writes refused with ERR_BUSY (memtable budget full)."},
    {"write_stall_seconds_total", "counter",
     "Time writes waited for flushes to bring the memtables under budget (raise memtable_bytes if "
     "it grows fast)."},
    {"write_nospc_total", "counter", "Writes refused with ERR_NOSPC."},
    {"ttl_files_dropped_total", "counter", "Whole SSTables deleted by the TTL."},
    {"wal_syncs_total", "counter", "WAL fsyncs."},
    {"wal_bytes_total", "counter", "Bytes appended to the WAL."},
    {"wal_records_total", "counter", "Records (batches) appended to the WAL."},
    {"db_rows", "gauge", "Rows of the database (estimated from file and memtable entry counts)."},
    {"db_oldest_ts_seconds", "gauge", "Oldest stored timestamp (0 when empty)."},
    {"db_newest_ts_seconds", "gauge", "Newest stored timestamp (0 when empty)."},
    {"retention_bytes_reclaimed_total", "counter", "SSTable bytes deleted by the TTL sweep."},
    {"retention_rows_expired_total", "counter", "Rows dropped by compaction past the TTL."},
    {"rows_deleted_total", "counter", "Delete rows (tombstones) written."},
    {"tombstones", "gauge", "Tombstones still stored in files and memtables."},
    {"range_deletes_total", "counter", "DELETEs stored as range tombstones."},
    {"range_tombstones", "gauge", "Range tombstones outstanding (purged by compaction)."},
    {"disk_guard_windows_dropped_total", "counter", "Oldest windows dropped over max_disk_bytes."},
    {"disk_guard_bytes_dropped_total", "counter", "SSTable bytes dropped over max_disk_bytes."},
    {"stored_bytes", "gauge",
     "SSTable bytes (rows and host index) by the age of their hour window behind the newest: "
     "0-2h still being written (fast LZ4 unless settled), older ones in their final form."},
    {"stored_events", "gauge", "Rows in SSTables by the age of their window (as stored_bytes)."},
    {"stored_bytes_per_event", "gauge",
     "stored_bytes / stored_events by the age of their window (0 without rows)."},
};

/* Window age classes of the stored_* families, in hours behind the newest
 * window: [0, 2), [2, 24), [24, 168), [168, ...). */
#define NAGES 4
static const char *const age_name[NAGES] = {"0-2h", "2-24h", "1-7d", "7d+"};

static int age_class(int64_t hours)
{
    return hours < 2 ? 0 : hours < 24 ? 1 : hours < 168 ? 2 : 3;
}

/* "logbucket_NAME{db="D",age="A"} " */
static void age_line(struct buf *b, int f, const struct store_db *db, int a)
{
    buf_printf(b, "logbucket_%s{db=\"%s\",age=\"%s\"} ", fam_info[f][0], db->name, age_name[a]);
}

/* The stored_* families of db: its files' bytes and rows by window age. */
static void age_metrics(struct store_db *db, struct buf *fam)
{
    struct version **v = xcalloc(db->nparts, sizeof *v);
    int64_t newest = INT64_MIN;
    for (uint32_t i = 0; i < db->nparts; i++) {
        pthread_mutex_lock(&db->parts[i].mu);
        v[i] = db->parts[i].ver;
        version_ref(v[i]);
        pthread_mutex_unlock(&db->parts[i].mu);
        if (v[i]->n && v[i]->files[v[i]->n - 1]->window > newest)
            newest = v[i]->files[v[i]->n - 1]->window;
    }
    uint64_t bytes[NAGES] = {0}, events[NAGES] = {0};
    for (uint32_t i = 0; i < db->nparts; i++) {
        for (size_t k = 0; k < v[i]->n; k++) {
            const struct file_meta *f = v[i]->files[k];
            int a = age_class(newest - f->window);
            bytes[a] += f->props.size;
            if (!db->parts[i].is_index)
                events[a] += f->props.entries - f->props.deletes;
        }
        version_unref(v[i]);
    }
    free(v);
    for (int a = 0; a < NAGES; a++) {
        age_line(&fam[F_AGE_BYTES], F_AGE_BYTES, db, a);
        buf_printf(&fam[F_AGE_BYTES], "%" PRIu64 "\n", bytes[a]);
        age_line(&fam[F_AGE_EVENTS], F_AGE_EVENTS, db, a);
        buf_printf(&fam[F_AGE_EVENTS], "%" PRIu64 "\n", events[a]);
        age_line(&fam[F_AGE_PER_EVENT], F_AGE_PER_EVENT, db, a);
        buf_printf(&fam[F_AGE_PER_EVENT], "%.2f\n",
                   events[a] ? (double)bytes[a] / (double)events[a] : 0.0);
    }
}

static void part_metrics(struct store_db *db, struct part *p, struct buf *fam, uint64_t *disk)
{
    pthread_mutex_lock(&p->mu);
    struct version *v = p->ver;
    version_ref(v);
    size_t mem = mt_bytes(p->mem);
    for (size_t i = 0; i < p->nimm; i++)
        mem += mt_bytes(p->imm[i]);
    size_t nimm = p->nimm;
    pthread_mutex_unlock(&p->mu);
    uint64_t bytes = 0;
    for (size_t i = 0; i < v->n; i++)
        bytes += v->files[i]->props.size;
    *disk += bytes;
    char label[16];
    if (p->is_index)
        snprintf(label, sizeof label, "index");
    else
        snprintf(label, sizeof label, "%u", p->id);
#define PART_LINE(f, fmt, val)                                                                     \
    buf_printf(&fam[f], "logbucket_%s{db=\"%s\",partition=\"%s\"} " fmt "\n", fam_info[f][0],      \
               db->name, label, val)
    PART_LINE(F_PART_FILES, "%zu", v->n);
    PART_LINE(F_PART_BYTES, "%" PRIu64, bytes);
    PART_LINE(F_PART_MEM, "%zu", mem);
    PART_LINE(F_PART_BACKLOG, "%zu", nimm);
#undef PART_LINE
    version_unref(v);
}

static void db_line(struct buf *fam, enum fam f, struct store_db *db, unsigned long long v)
{
    buf_printf(&fam[f], "logbucket_%s{db=\"%s\"} %llu\n", fam_info[f][0], db->name, v);
}

static void db_line_secs(struct buf *fam, enum fam f, struct store_db *db, unsigned long long ns)
{
    buf_printf(&fam[f], "logbucket_%s{db=\"%s\"} %.6f\n", fam_info[f][0], db->name,
               (double)ns / 1e9);
}

static void db_metrics(struct store_db *db, struct buf *fam)
{
    struct db_metrics *m = &db->m;
    uint64_t disk = 0;
    for (uint32_t b = 0; b < db->buckets; b++)
        buf_printf(&fam[F_BUCKET_ROWS],
                   "logbucket_bucket_rows_total{db=\"%s\",bucket=\"%u\"} %llu\n", db->name, b,
                   (unsigned long long)atomic_load(&m->bucket_rows[b]));
    for (uint32_t i = 0; i < db->nparts; i++)
        part_metrics(db, &db->parts[i], fam, &disk);
    uint64_t wal = db_wal_bytes(db);
    db_line(fam, F_DISK, db, disk + wal);
    db_line(fam, F_WAL_DISK, db, wal);
    db_line(fam, F_ACTIVE, db, atomic_load(&db->active_bytes));
    db_line(fam, F_FLUSHES, db, atomic_load(&m->flushes));
    db_line_secs(fam, F_FLUSH_SECS, db, atomic_load(&m->flush_ns));
    db_line(fam, F_FLUSH_BYTES, db, atomic_load(&m->bytes_flushed));
    db_line(fam, F_COMPACTIONS, db, atomic_load(&m->compactions));
    db_line_secs(fam, F_COMPACT_SECS, db, atomic_load(&m->compact_ns));
    db_line(fam, F_COMPACT_BYTES, db, atomic_load(&m->bytes_compacted));
    db_line(fam, F_COMPACT_COPIED, db, atomic_load(&m->blocks_copied));
    unsigned long long want = 0;
    pthread_mutex_lock(&db->store->bg_mu);
    for (uint32_t i = 0; i < db->nparts; i++)
        want += db->parts[i].want_compact;
    pthread_mutex_unlock(&db->store->bg_mu);
    db_line(fam, F_COMPACT_BACKLOG, db, want);
    db_line(fam, F_FLUSH_ERRORS, db, atomic_load(&m->flush_errors));
    db_line(fam, F_WRITE_BYTES, db, atomic_load(&m->bytes_written_user));
    db_line(fam, F_CORRUPT, db, atomic_load(&m->corrupt));
    db_line(fam, F_QUARANTINED, db, atomic_load(&m->quarantined));
    db_line(fam, F_BUSY, db, atomic_load(&m->busy_rejects));
    db_line_secs(fam, F_STALL_SECS, db, atomic_load(&m->stall_ns));
    db_line(fam, F_NOSPC, db, atomic_load(&m->nospc));
    db_line(fam, F_TTL_FILES, db, atomic_load(&m->ttl_files_dropped));
    struct wal_stats ws;
    wal_stats(db->wal, &ws);
    db_line(fam, F_WAL_SYNCS, db, ws.syncs);
    db_line(fam, F_WAL_BYTES, db, ws.bytes);
    db_line(fam, F_WAL_RECORDS, db, ws.records);
    struct store_db_stats st;
    store_db_stats(db, &st);
    db_line(fam, F_DB_ROWS, db, st.rows);
    buf_printf(&fam[F_OLDEST], "logbucket_%s{db=\"%s\"} %.9f\n", fam_info[F_OLDEST][0], db->name,
               (double)st.oldest_ts / 1e9);
    buf_printf(&fam[F_NEWEST], "logbucket_%s{db=\"%s\"} %.9f\n", fam_info[F_NEWEST][0], db->name,
               (double)st.newest_ts / 1e9);
    db_line(fam, F_RECLAIMED, db, st.bytes_reclaimed);
    db_line(fam, F_EXPIRED, db, st.rows_expired);
    db_line(fam, F_DELETED, db, st.rows_deleted);
    db_line(fam, F_TOMBSTONES, db, st.tombstones);
    db_line(fam, F_RANGE_DELETES, db, atomic_load(&m->range_deletes));
    db_line(fam, F_RANGE_TOMBS, db, st.range_tombstones);
    db_line(fam, F_GUARD_WINDOWS, db, atomic_load(&m->guard_windows_dropped));
    db_line(fam, F_GUARD_BYTES, db, atomic_load(&m->guard_bytes_dropped));
    age_metrics(db, fam);
}

static void family(struct buf *out, const char *name, const char *type, const char *help)
{
    buf_printf(out, "# HELP logbucket_%s %s\n# TYPE logbucket_%s %s\n", name, help, name, type);
}

void store_metrics(struct store *s, struct buf *out)
{
    struct buf fam[F_COUNT];
    for (int f = 0; f < F_COUNT; f++)
        buf_init(&fam[f]);
    size_t n;
    struct store_db **dbs = store_all_dbs(s, &n);
    for (size_t i = 0; i < n; i++)
        db_metrics(dbs[i], fam);
    store_put_dbs(dbs, n);
    for (int f = 0; f < F_COUNT; f++) {
        family(out, fam_info[f][0], fam_info[f][1], fam_info[f][2]);
        buf_append(out, fam[f].data, fam[f].len);
        buf_destroy(&fam[f]);
    }
    struct store_offline *off;
    size_t noff = store_offline_list(s, &off);
    family(out, "database_offline", "gauge",
           "1 for a database that could not open at start (see /health for why).");
    for (size_t i = 0; i < noff; i++)
        buf_printf(out, "logbucket_database_offline{db=\"%s\"} 1\n", off[i].name);
    store_offline_free(off, noff);
    struct cache_stats cs;
    cache_stats(s->cache, &cs);
    family(out, "memtable_bytes", "gauge", "Bytes of all memtables of all databases.");
    buf_printf(out, "logbucket_memtable_bytes %zu\n", atomic_load(&s->mem_total));
    family(out, "block_cache_hits_total", "counter", "Block cache hits.");
    buf_printf(out, "logbucket_block_cache_hits_total %" PRIu64 "\n", cs.hits);
    family(out, "block_cache_misses_total", "counter", "Block cache misses.");
    buf_printf(out, "logbucket_block_cache_misses_total %" PRIu64 "\n", cs.misses);
    family(out, "block_cache_bytes", "gauge", "Bytes held by the block cache.");
    buf_printf(out, "logbucket_block_cache_bytes %" PRIu64 "\n", cs.bytes);
}
