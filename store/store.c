/* The store facade: the data directory and its databases, the background
 * workers (flushes first, then compactions) and the ticker (WAL interval
 * syncs and the retention sweep). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/log.h"
#include "store/store_int.h"

void store_opts_default(struct store_opts *o)
{
    memset(o, 0, sizeof *o);
    o->dir = "./data";
    o->wal_sync = STORE_SYNC_ALWAYS;
    o->wal_sync_interval_ns = 1000000000LL;
    o->memtable_bytes = 64u << 20;
    o->write_stall_ns = 2000000000LL;
    o->block_cache_bytes = 32u << 20;
    o->background_threads = 2;
    o->retention_check_interval_ns = 60LL * 1000000000LL;
    o->max_file_bytes = 64u << 20;
    o->cold_zstd_level = 3;
    o->host_section = true;
    o->clock = NULL;
    o->clock_arg = NULL;
    o->env = NULL;
}

/* --- background work --- */

/* store_wake: new work for the background threads. */
static void bg_wake(struct store *s)
{
    pthread_mutex_lock(&s->bg_mu);
    pthread_cond_broadcast(&s->bg_cond);
    pthread_mutex_unlock(&s->bg_mu);
}

struct job {
    struct store_db *db;
    struct part *p;
    bool flush;
};

static size_t part_nimm(struct part *p)
{
    pthread_mutex_lock(&p->mu);
    size_t n = p->nimm;
    pthread_mutex_unlock(&p->mu);
    return n;
}

/* With two or more threads, one is always left for flushes: a compaction
 * of a big window takes seconds, and writers stall when no thread is free
 * to flush the memtable they filled. REQUIRES: bg_mu. */
static bool compaction_slot_free(const struct store *s)
{
    return s->nthreads < 2 || s->ncompacting < s->nthreads - 1;
}

/* Picks a job and marks its partition busy. REQUIRES: bg_mu. */
static bool pick_job(struct store *s, struct job *j)
{
    bool found = false;
    int64_t now = clock_mono_ns();
    pthread_mutex_lock(&s->mu);
    for (int pass = 0; pass < 2 && !found; pass++)
        for (size_t d = 0; d < s->ndbs && !found; d++) {
            struct store_db *db = s->dbs[d];
            if (atomic_load(&db->bg_error))
                continue;
            for (uint32_t i = 0; i < db->nparts && !found; i++) {
                struct part *p = &db->parts[i];
                if (p->busy || (pass == 0 && p->retry_at_ns > now))
                    continue;
                if (pass == 1 && !compaction_slot_free(s))
                    break;
                if (pass == 0 ? part_nimm(p) > 0 : p->want_compact) {
                    j->db = db;
                    j->p = p;
                    j->flush = pass == 0;
                    p->busy = true;
                    if (pass == 1) {
                        p->want_compact = false;
                        s->ncompacting++;
                    }
                    db_ref(db);
                    found = true;
                }
            }
        }
    pthread_mutex_unlock(&s->mu);
    return found;
}

static void run_job(struct store *s, struct job *j)
{
    if (j->flush) {
        bool fatal = false;
        int rc = compact_flush(j->p, &fatal);
        if (fatal) {
            db_fail(j->db, rc);
            return;
        }
        if (rc == ERR_NOSPC || rc == ERR_IO) {
            /* The frozen memtable and its WAL segment stay; writers get
             * ERR_BUSY once memory fills. Retry in a second. */
            log_warn("%s: flush failed (%s); retrying in 1 s", j->p->dir, err_name(rc));
            atomic_fetch_add(&j->db->m.flush_errors, 1);
            atomic_store(&j->db->m.last_flush_error, rc);
            pthread_mutex_lock(&s->bg_mu);
            j->p->retry_at_ns = clock_mono_ns() + 1000000000LL;
            pthread_mutex_unlock(&s->bg_mu);
            return;
        }
        if (rc) {
            db_fail(j->db, rc);
            return;
        }
        compact_delete_old_wal(j->db);
        /* tombstones of rows that were only in that memtable can go now */
        if (store_db_range_tombstones(j->db))
            db_purge_tombs(j->db);
        if (compact_wanted(j->p)) {
            pthread_mutex_lock(&s->bg_mu);
            j->p->want_compact = true;
            pthread_mutex_unlock(&s->bg_mu);
        }
    } else {
        bool fatal = false;
        int rc = compact_run(j->p, false, &fatal);
        if (fatal)
            db_fail(j->db, rc);
        else if (rc == ERR_OK && store_db_range_tombstones(j->db))
            db_purge_tombs(j->db);
    }
}

/* The budget is full and writers wait: unless a flush is already coming,
 * freezes the database holding the most memtable bytes, so that its flush
 * frees memory (databases each under their own flush threshold would
 * otherwise hold the budget full forever). */
static void relieve(struct store *s)
{
    size_t n;
    struct store_db **dbs = store_all_dbs(s, &n);
    struct store_db *largest = NULL;
    bool coming = false;
    for (size_t i = 0; i < n && !coming; i++) {
        struct store_db *db = dbs[i];
        for (uint32_t k = 0; k < db->nparts && !coming; k++)
            coming = part_nimm(&db->parts[k]) > 0;
        if (!largest || atomic_load(&db->active_bytes) > atomic_load(&largest->active_bytes))
            largest = db;
    }
    if (!coming && largest)
        db_freeze_for_budget(largest);
    store_put_dbs(dbs, n);
}

/* Half the budget is used (db.c, ask_idle_relief): databases without a
 * write for IDLE_RELIEF_NS that hold a sixteenth of the budget or more are
 * frozen, so that their flush gives the memory to the databases being
 * written. Else rows that writes have left would hold their share until
 * settle_after (a minute by default) while another database's memtables
 * are frozen early and small, and its writers wait for their flushes. */
static void relieve_idle(struct store *s)
{
    int64_t now = clock_mono_ns();
    size_t n;
    struct store_db **dbs = store_all_dbs(s, &n);
    for (size_t i = 0; i < n; i++) {
        struct store_db *db = dbs[i];
        if (now - atomic_load(&db->last_write_ns) >= IDLE_RELIEF_NS &&
            atomic_load(&db->active_bytes) >= s->opts.memtable_bytes / 16)
            db_freeze_for_budget(db);
    }
    store_put_dbs(dbs, n);
}

static void *bg_main(void *arg)
{
    struct store *s = arg;
    pthread_mutex_lock(&s->bg_mu);
    while (!s->stop) {
        if (atomic_exchange(&s->want_relief, false)) {
            pthread_mutex_unlock(&s->bg_mu);
            relieve(s);
            pthread_mutex_lock(&s->bg_mu);
            continue;
        }
        if (atomic_exchange(&s->want_idle_relief, false)) {
            pthread_mutex_unlock(&s->bg_mu);
            relieve_idle(s);
            pthread_mutex_lock(&s->bg_mu);
            continue;
        }
        struct job j;
        if (!pick_job(s, &j)) {
            /* timed: a flush that failed is retried without a signal */
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_nsec += 250000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&s->bg_cond, &s->bg_mu, &ts);
            continue;
        }
        pthread_mutex_unlock(&s->bg_mu);
        run_job(s, &j);
        pthread_mutex_lock(&s->bg_mu);
        j.p->busy = false;
        if (!j.flush)
            s->ncompacting--;
        pthread_cond_broadcast(&s->done_cond);
        pthread_cond_broadcast(&s->bg_cond);
        pthread_mutex_unlock(&s->bg_mu);
        store_db_unref(j.db);
        pthread_mutex_lock(&s->bg_mu);
    }
    pthread_mutex_unlock(&s->bg_mu);
    return NULL;
}

/* Copies the database list with a reference each. */
struct store_db **store_all_dbs(struct store *s, size_t *n)
{
    pthread_mutex_lock(&s->mu);
    struct store_db **v = xcalloc(s->ndbs + 1, sizeof *v);
    for (size_t i = 0; i < s->ndbs; i++) {
        v[i] = s->dbs[i];
        db_ref(v[i]);
    }
    *n = s->ndbs;
    pthread_mutex_unlock(&s->mu);
    return v;
}

void store_put_dbs(struct store_db **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        store_db_unref(v[i]);
    free(v);
}

static int enforce_disk_limit(struct store_db *db);

static void tick(struct store *s, bool sync, bool retention)
{
    size_t n;
    struct store_db **dbs = store_all_dbs(s, &n);
    for (size_t i = 0; i < n; i++) {
        if (sync)
            wal_sync_all(dbs[i]->wal);
        pthread_mutex_lock(&dbs[i]->ttl_mu);
        bool has_event_ttls = dbs[i]->nettl > 0 || dbs[i]->tombs->n > 0;
        pthread_mutex_unlock(&dbs[i]->ttl_mu);
        if (retention && (s->opts.max_disk_bytes || atomic_load(&dbs[i]->max_disk_bytes)))
            enforce_disk_limit(dbs[i]);
        if (retention && (atomic_load(&dbs[i]->ttl_ns) > 0 || has_event_ttls)) {
            pthread_mutex_lock(&s->bg_mu);
            for (uint32_t k = 0; k < dbs[i]->nparts; k++)
                dbs[i]->parts[k].want_compact = true;
            pthread_cond_broadcast(&s->bg_cond);
            pthread_mutex_unlock(&s->bg_mu);
        }
    }
    store_put_dbs(dbs, n);
}

static bool has_active_data(struct store_db *db);

/* How often the ticker looks for databases that writes have left: every
 * 5 s, or twice per settle_after_ns if that is shorter. */
static int64_t settle_every(const struct store *s)
{
    int64_t half = s->opts.settle_after_ns / 2;
    return half > 0 && half < 5000000000LL ? half : 5000000000LL;
}

/* Marks (or unmarks) every partition of db as settling and asks for their
 * compaction; a settling database also freezes its memtables to flush them. */
static void set_settle(struct store *s, struct store_db *db, bool on)
{
    if (on) {
        pthread_mutex_lock(&db->write_mu);
        if (!atomic_load(&db->bg_error) && has_active_data(db))
            db_freeze_locked(db);
        pthread_mutex_unlock(&db->write_mu);
    }
    for (uint32_t k = 0; k < db->nparts; k++)
        atomic_store(&db->parts[k].settle, on);
    db->settled = on;
    if (!on)
        return;
    pthread_mutex_lock(&s->bg_mu);
    for (uint32_t k = 0; k < db->nparts; k++)
        db->parts[k].want_compact = true;
    pthread_cond_broadcast(&s->bg_cond);
    pthread_mutex_unlock(&s->bg_mu);
}

/* Databases without writes for settle_after_ns get every window merged to
 * its final form; a write ends it. */
static void settle_check(struct store *s)
{
    int64_t after = s->opts.settle_after_ns, now = clock_mono_ns();
    if (after <= 0)
        return;
    size_t n;
    struct store_db **dbs = store_all_dbs(s, &n);
    for (size_t i = 0; i < n; i++) {
        bool idle = now - atomic_load(&dbs[i]->last_write_ns) >= after;
        if (idle != dbs[i]->settled)
            set_settle(s, dbs[i], idle);
    }
    store_put_dbs(dbs, n);
}

/* How often the ticker checks that each database's WAL is still on disk. */
#define FILES_CHECK_NS 1000000000LL

/* A database whose WAL file was removed under the daemon (its folder or
 * the whole data folder deleted) would go on acknowledging writes that
 * land in a file nobody can read again: it turns read-only, and writes
 * get an error, until a restart. */
static void files_check(struct store *s)
{
    size_t n;
    struct store_db **dbs = store_all_dbs(s, &n);
    for (size_t i = 0; i < n; i++) {
        bool there = true;
        if (atomic_load(&dbs[i]->bg_error) || wal_at_path(dbs[i]->wal, &there) || there)
            continue;
        /* a drop moves the folder aside (under mu, dropped set first) */
        pthread_mutex_lock(&s->mu);
        bool dropped = dbs[i]->dropped;
        pthread_mutex_unlock(&s->mu);
        if (dropped)
            continue;
        log_error("database %s: its write-ahead log under %s is gone (the folder was removed "
                  "or replaced while the daemon ran); its writes are refused until the daemon is "
                  "restarted",
                  dbs[i]->name, dbs[i]->wal_dir);
        db_fail(dbs[i], ERR_IO);
    }
    store_put_dbs(dbs, n);
}

static void *ticker_main(void *arg)
{
    struct store *s = arg;
    bool interval = s->opts.wal_sync == STORE_SYNC_INTERVAL;
    int64_t sync_every =
        s->opts.wal_sync_interval_ns > 0 ? s->opts.wal_sync_interval_ns : 1000000000LL;
    int64_t ret_every = s->opts.retention_check_interval_ns > 0
                            ? s->opts.retention_check_interval_ns
                            : 60LL * 1000000000LL;
    int64_t next_sync = clock_mono_ns() + sync_every, next_ret = clock_mono_ns() + ret_every;
    int64_t next_settle = clock_mono_ns() + settle_every(s);
    int64_t next_files = clock_mono_ns() + FILES_CHECK_NS;
    pthread_mutex_lock(&s->bg_mu);
    while (!s->stop) {
        int64_t now = clock_mono_ns();
        if (now >= next_files) {
            pthread_mutex_unlock(&s->bg_mu);
            files_check(s);
            pthread_mutex_lock(&s->bg_mu);
            next_files = now + FILES_CHECK_NS;
            continue;
        }
        bool do_sync = interval && now >= next_sync, do_ret = now >= next_ret;
        if (now >= next_settle) {
            pthread_mutex_unlock(&s->bg_mu);
            settle_check(s);
            pthread_mutex_lock(&s->bg_mu);
            next_settle = now + settle_every(s);
            continue;
        }
        if (do_sync || do_ret) {
            pthread_mutex_unlock(&s->bg_mu);
            tick(s, do_sync, do_ret);
            pthread_mutex_lock(&s->bg_mu);
            if (do_sync)
                next_sync = now + sync_every;
            if (do_ret)
                next_ret = now + ret_every;
            continue;
        }
        int64_t wake = next_ret < next_settle ? next_ret : next_settle;
        if (next_files < wake)
            wake = next_files;
        if (interval && next_sync < wake)
            wake = next_sync;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t abs_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec + (wake - now);
        ts.tv_sec = abs_ns / 1000000000LL;
        ts.tv_nsec = abs_ns % 1000000000LL;
        pthread_cond_timedwait(&s->done_cond, &s->bg_mu, &ts);
    }
    pthread_mutex_unlock(&s->bg_mu);
    return NULL;
}

static void start_threads(struct store *s)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->done_cond, &ca);
    pthread_cond_init(&s->bg_cond, &ca);
    pthread_condattr_destroy(&ca);
    s->nthreads = s->opts.background_threads ? s->opts.background_threads : 1;
    s->threads = xcalloc(s->nthreads, sizeof *s->threads);
    /* named, so that top -H and /proc/PID/task show where CPU goes */
    for (unsigned i = 0; i < s->nthreads; i++) {
        pthread_create(&s->threads[i], NULL, bg_main, s);
        pthread_setname_np(s->threads[i], "lb-background");
    }
    pthread_create(&s->ticker, NULL, ticker_main, s);
    pthread_setname_np(s->ticker, "lb-ticker");
    s->has_ticker = true;
}

static void stop_threads(struct store *s)
{
    pthread_mutex_lock(&s->bg_mu);
    s->stop = true;
    pthread_cond_broadcast(&s->bg_cond);
    pthread_cond_broadcast(&s->done_cond);
    pthread_mutex_unlock(&s->bg_mu);
    for (unsigned i = 0; i < s->nthreads; i++)
        pthread_join(s->threads[i], NULL);
    if (s->has_ticker)
        pthread_join(s->ticker, NULL);
    free(s->threads);
    s->threads = NULL;
    s->nthreads = 0;
    s->has_ticker = false;
}

/* --- open and close --- */

static bool valid_name(const char *name)
{
    size_t n = strlen(name);
    if (n < 1 || n > 64 || name[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == '.';
        if (!ok)
            return false;
    }
    return true;
}

static void add_db(struct store *s, struct store_db *db)
{
    s->dbs = xrealloc(s->dbs, (s->ndbs + 1) * sizeof *s->dbs);
    s->dbs[s->ndbs++] = db;
}

/* A directory of the data directory that holds files but no META. */
static void warn_no_meta(struct store *s, const char *name)
{
    struct buf dir = BUF_INIT;
    buf_printf(&dir, "%s/%s/.", s->dir, name);
    bool is_dir = env_exists(s->env, dir.data); /* LOCK and other files are not */
    dir.len -= 2;
    char **names;
    size_t n;
    if (is_dir && env_list(s->env, buf_cstr(&dir), &names, &n) == ERR_OK) {
        if (n)
            log_warn("%s has no META: not opened as a database, and not created over", dir.data);
        env_free_list(names, n);
    }
    buf_destroy(&dir);
}

/* Keeps name offline with the reason db_open left (err_detail). */
static void add_offline(struct store *s, const char *name, int rc)
{
    s->offline = xrealloc(s->offline, (s->noffline + 1) * sizeof *s->offline);
    struct store_offline *o = &s->offline[s->noffline++];
    o->name = xstrdup(name);
    o->rc = rc;
    struct buf why = BUF_INIT;
    buf_printf(&why, "%s", err_name(rc));
    if (err_detail()[0])
        buf_printf(&why, ": %s", err_detail());
    o->why = buf_steal(&why, NULL);
    log_error("database %s is offline (the others serve): %s; fix or restore its files and "
              "restart, or DROP DATABASE %s",
              name, o->why, name);
}

static struct store_offline *find_offline(struct store *s, const char *name, size_t *pos)
{
    for (size_t i = 0; i < s->noffline; i++)
        if (strcmp(s->offline[i].name, name) == 0) {
            if (pos)
                *pos = i;
            return &s->offline[i];
        }
    return NULL;
}

static int offline_cmp(const void *a, const void *b)
{
    return strcmp(((const struct store_offline *)a)->name, ((const struct store_offline *)b)->name);
}

size_t store_offline_list(struct store *s, struct store_offline **out)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->noffline;
    struct store_offline *v = xcalloc(n + 1, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        v[i].name = xstrdup(s->offline[i].name);
        v[i].rc = s->offline[i].rc;
        v[i].why = xstrdup(s->offline[i].why);
    }
    pthread_mutex_unlock(&s->mu);
    qsort(v, n, sizeof *v, offline_cmp);
    *out = v;
    return n;
}

void store_offline_free(struct store_offline *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].why);
    }
    free(v);
}

bool store_db_offline_reason(struct store *s, const char *name, struct buf *why)
{
    pthread_mutex_lock(&s->mu);
    struct store_offline *o = find_offline(s, name, NULL);
    if (o)
        buf_puts(why, o->why);
    pthread_mutex_unlock(&s->mu);
    return o != NULL;
}

/* Drops an offline database: its directory goes aside and is deleted. */
static int drop_offline(struct store *s, size_t pos)
{
    struct store_offline o = s->offline[pos];
    memmove(s->offline + pos, s->offline + pos + 1, (s->noffline - pos - 1) * sizeof o);
    s->noffline--;
    struct buf from = BUF_INIT, to = BUF_INIT;
    buf_printf(&from, "%s/%s", s->dir, o.name);
    buf_printf(&to, "%s/.dropped-%s-%llu", s->dir, o.name, (unsigned long long)clock_mono_ns());
    int rc = env_rename(s->env, from.data, to.data);
    if (rc == ERR_OK) {
        env_sync_dir(s->env, s->dir);
        env_remove_tree(s->env, to.data);
        log_info("offline database %s dropped", o.name);
    }
    buf_destroy(&from);
    buf_destroy(&to);
    free(o.name);
    free(o.why);
    return rc;
}

static int open_all(struct store *s)
{
    char **names;
    size_t n;
    int rc = env_list(s->env, s->dir, &names, &n);
    if (rc)
        return rc;
    struct buf meta = BUF_INIT;
    for (size_t i = 0; i < n && !rc; i++) {
        buf_reset(&meta);
        if (strncmp(names[i], ".dropped-", 9) == 0) {
            buf_printf(&meta, "%s/%s", s->dir, names[i]);
            env_remove_tree(s->env, meta.data); /* a drop interrupted by a crash */
            continue;
        }
        buf_printf(&meta, "%s/%s/META", s->dir, names[i]);
        if (!valid_name(names[i]))
            continue;
        if (!env_exists(s->env, meta.data)) {
            warn_no_meta(s, names[i]);
            continue;
        }
        struct store_db *db;
        int orc = db_open(s, names[i], NULL, &db);
        if (orc == ERR_OK)
            add_db(s, db);
        else
            add_offline(s, names[i], orc);
    }
    buf_destroy(&meta);
    env_free_list(names, n);
    return rc;
}

int store_open(const struct store_opts *opts, struct store **out)
{
    struct store *s = xcalloc(1, sizeof *s);
    s->opts = *opts;
    if (!s->opts.max_file_bytes)
        s->opts.max_file_bytes = 64u << 20;
    if (s->opts.cold_zstd_level < 0 || s->opts.cold_zstd_level > CODEC_ZSTD_MAX_LEVEL)
        s->opts.cold_zstd_level = s->opts.cold_zstd_level < 0 ? 0 : CODEC_ZSTD_MAX_LEVEL;
    s->env = opts->env ? opts->env : env_posix();
    if (!opts->env)
        env_posix_set_max_open(opts->max_open_files);
    env_posix_raise_fd_limit();
    s->dir = xstrdup(opts->dir ? opts->dir : "./data");
    s->opts.dir = s->dir;
    if (s->opts.memtable_bytes < (1u << 20))
        s->opts.memtable_bytes = 1u << 20;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->bg_mu, NULL);
    atomic_init(&s->mem_total, 0);
    s->wake = bg_wake;
    arena_pool_init(&s->pool, s->opts.memtable_bytes / 2);
    s->cache = cache_new(opts->block_cache_bytes);
    struct buf lock = BUF_INIT;
    buf_printf(&lock, "%s/LOCK", s->dir);
    int rc = env_mkdir(s->env, s->dir);
    if (!rc)
        rc = s->env->ops->lock(s->env, lock.data, &s->lock);
    buf_destroy(&lock);
    if (!rc)
        rc = open_all(s);
    start_threads(s);
    if (rc) {
        store_close(s);
        return rc;
    }
    *out = s;
    return ERR_OK;
}

void store_close(struct store *s)
{
    if (!s)
        return;
    size_t n;
    struct store_db **dbs = store_all_dbs(s, &n);
    for (size_t i = 0; i < n; i++)
        if (!atomic_load(&dbs[i]->bg_error))
            store_db_flush(dbs[i]);
    store_put_dbs(dbs, n);
    stop_threads(s);
    for (size_t i = 0; i < s->ndbs; i++)
        store_db_unref(s->dbs[i]);
    free(s->dbs);
    store_offline_free(s->offline, s->noffline);
    if (s->lock)
        s->env->ops->unlock(s->lock);
    cache_free(s->cache);
    arena_pool_destroy(&s->pool);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->bg_mu);
    pthread_cond_destroy(&s->bg_cond);
    pthread_cond_destroy(&s->done_cond);
    free(s->dir);
    free(s);
}

/* --- databases --- */

static struct store_db *find_db(struct store *s, const char *name, size_t *pos)
{
    for (size_t i = 0; i < s->ndbs; i++)
        if (strcmp(s->dbs[i]->name, name) == 0) {
            if (pos)
                *pos = i;
            return s->dbs[i];
        }
    return NULL;
}

int store_db_create(struct store *s, const char *name, const struct db_opts *opts)
{
    if (!valid_name(name) || opts->buckets < 1 || opts->buckets > 1024 || opts->ttl_ns < 0)
        return ERR_INVAL;
    pthread_mutex_lock(&s->mu);
    int rc = find_offline(s, name, NULL) ? ERR_OFFLINE : ERR_EXISTS;
    struct store_db *db;
    if (rc == ERR_EXISTS && !find_db(s, name, NULL)) {
        rc = db_open(s, name, opts, &db);
        if (!rc)
            add_db(s, db);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int store_db_get(struct store *s, const char *name, struct store_db **out)
{
    pthread_mutex_lock(&s->mu);
    struct store_db *db = find_db(s, name, NULL);
    if (db)
        db_ref(db);
    bool offline = !db && find_offline(s, name, NULL);
    pthread_mutex_unlock(&s->mu);
    if (!db)
        return offline ? ERR_OFFLINE : ERR_NOTFOUND;
    *out = db;
    return ERR_OK;
}

static bool db_busy(struct store_db *db)
{
    for (uint32_t i = 0; i < db->nparts; i++)
        if (db->parts[i].busy)
            return true;
    return false;
}

int store_db_drop(struct store *s, const char *name)
{
    size_t pos;
    pthread_mutex_lock(&s->mu);
    if (find_offline(s, name, &pos)) {
        int rc = drop_offline(s, pos);
        pthread_mutex_unlock(&s->mu);
        return rc;
    }
    struct store_db *db = find_db(s, name, &pos);
    if (db) {
        memmove(s->dbs + pos, s->dbs + pos + 1, (s->ndbs - pos - 1) * sizeof *s->dbs);
        s->ndbs--;
        db->dropped = true;
        /* move the files aside at once so the name can be reused while
         * readers still hold the old database; they are deleted with it */
        struct buf to = BUF_INIT;
        buf_printf(&to, "%s/.dropped-%s-%llu", s->dir, name, (unsigned long long)clock_mono_ns());
        if (env_rename(s->env, db->dir, to.data) == ERR_OK) {
            env_sync_dir(s->env, s->dir);
            db->drop_dir = buf_steal(&to, NULL);
        }
        buf_destroy(&to);
    }
    pthread_mutex_unlock(&s->mu);
    if (!db)
        return ERR_NOTFOUND;
    pthread_mutex_lock(&s->bg_mu);
    while (db_busy(db))
        pthread_cond_wait(&s->done_cond, &s->bg_mu);
    pthread_mutex_unlock(&s->bg_mu);
    store_db_unref(db);
    return ERR_OK;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int store_db_list(struct store *s, char ***names, size_t *count)
{
    pthread_mutex_lock(&s->mu);
    char **v = xcalloc(s->ndbs + 1, sizeof *v);
    for (size_t i = 0; i < s->ndbs; i++)
        v[i] = xstrdup(s->dbs[i]->name);
    size_t n = s->ndbs;
    pthread_mutex_unlock(&s->mu);
    qsort(v, n, sizeof *v, name_cmp);
    *names = v;
    *count = n;
    return ERR_OK;
}

/* --- maintenance --- */

static bool has_active_data(struct store_db *db)
{
    for (uint32_t i = 0; i < db->nparts; i++)
        if (mt_count(db->parts[i].mem) > 0)
            return true;
    return false;
}

static bool flush_pending(struct store_db *db)
{
    for (uint32_t i = 0; i < db->nparts; i++)
        if (part_nimm(&db->parts[i]) > 0)
            return true;
    return false;
}

int store_db_flush(struct store_db *db)
{
    struct store *s = db->store;
    pthread_mutex_lock(&db->write_mu);
    int rc = atomic_load(&db->bg_error);
    if (!rc && has_active_data(db))
        rc = db_freeze_locked(db);
    pthread_mutex_unlock(&db->write_mu);
    if (rc)
        return rc;
    unsigned long long failures = atomic_load(&db->m.flush_errors);
    pthread_mutex_lock(&s->bg_mu);
    while (flush_pending(db) && !atomic_load(&db->bg_error) && !s->stop &&
           atomic_load(&db->m.flush_errors) == failures)
        pthread_cond_wait(&s->done_cond, &s->bg_mu);
    pthread_mutex_unlock(&s->bg_mu);
    if (atomic_load(&db->m.flush_errors) != failures)
        return atomic_load(&db->m.last_flush_error);
    rc = atomic_load(&db->bg_error);
    if (!rc) /* the flushing job may not have got to it yet */
        compact_delete_old_wal(db);
    return rc;
}

/* Takes p's job slot, waiting for its running job. */
static void part_claim(struct store *s, struct part *p)
{
    pthread_mutex_lock(&s->bg_mu);
    while (p->busy)
        pthread_cond_wait(&s->done_cond, &s->bg_mu);
    p->busy = true;
    pthread_mutex_unlock(&s->bg_mu);
}

static void part_release(struct store *s, struct part *p)
{
    pthread_mutex_lock(&s->bg_mu);
    p->busy = false;
    pthread_cond_broadcast(&s->done_cond);
    pthread_cond_broadcast(&s->bg_cond);
    pthread_mutex_unlock(&s->bg_mu);
}

/* Oldest and newest window of the bucket partitions' files; false if none. */
static bool window_span(struct store_db *db, int64_t *oldest, int64_t *newest)
{
    bool any = false;
    for (uint32_t i = 0; i < db->buckets; i++) {
        struct part *p = &db->parts[i];
        pthread_mutex_lock(&p->mu);
        struct version *v = p->ver;
        if (v->n) {
            int64_t lo = v->files[0]->window, hi = v->files[v->n - 1]->window;
            if (!any || lo < *oldest)
                *oldest = lo;
            if (!any || hi > *newest)
                *newest = hi;
            any = true;
        }
        pthread_mutex_unlock(&p->mu);
    }
    return any;
}

/* The max_disk_bytes guard: drops the oldest window while over budget. */
static int enforce_disk_limit(struct store_db *db)
{
    struct store *s = db->store;
    uint64_t limit = atomic_load(&db->max_disk_bytes);
    if (!limit)
        limit = s->opts.max_disk_bytes;
    int rc = ERR_OK;
    while (limit && !rc) {
        struct store_db_stats st;
        int64_t oldest = 0, newest = 0;
        store_db_stats(db, &st);
        if (st.bytes <= limit)
            break;
        if (!window_span(db, &oldest, &newest) || oldest >= newest) {
            log_warn("database %s: %llu bytes on disk, over max_disk_bytes %llu, but only the "
                     "newest window is left",
                     db->name, (unsigned long long)st.bytes, (unsigned long long)limit);
            break;
        }
        int64_t floor = (oldest + 1) * STORE_WINDOW_NS;
        long long cur = atomic_load(&db->floor_ts);
        while (cur < floor && !atomic_compare_exchange_weak(&db->floor_ts, &cur, floor))
            ;
        uint64_t dropped = 0;
        for (uint32_t i = 0; i < db->nparts && !rc; i++) {
            part_claim(s, &db->parts[i]);
            bool fatal = false;
            rc = compact_drop_before(&db->parts[i], floor, &dropped, &fatal);
            if (fatal)
                db_fail(db, rc);
            part_release(s, &db->parts[i]);
        }
        atomic_fetch_add(&db->m.guard_windows_dropped, 1);
        atomic_fetch_add(&db->m.guard_bytes_dropped, dropped);
        log_warn("database %s: %llu bytes on disk, over max_disk_bytes %llu: dropped the oldest "
                 "window (rows before %lld ns, %llu bytes)",
                 db->name, (unsigned long long)st.bytes, (unsigned long long)limit,
                 (long long)floor, (unsigned long long)dropped);
    }
    return rc;
}

int store_db_compact(struct store_db *db)
{
    struct store *s = db->store;
    int rc = ERR_OK;
    for (uint32_t i = 0; i < db->nparts; i++) {
        struct part *p = &db->parts[i];
        part_claim(s, p);
        bool fatal = false;
        int prc = compact_run(p, true, &fatal);
        if (fatal)
            db_fail(db, prc);
        if (prc && !rc)
            rc = prc;
        part_release(s, p);
    }
    if (!rc)
        db_purge_tombs(db);
    if (!rc)
        rc = enforce_disk_limit(db);
    return rc;
}
