/* One database: opening (its settings through settings.c, partitions, WAL
 * replay), the write path (one WAL record per batch, then the memtables of
 * the rows and of the host index), memtable freezing with WAL segment rolls,
 * snapshots and reads. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/coding.h"
#include "base/crc32c.h"
#include "base/err.h"
#include "base/log.h"
#include "model/key.h"
#include "store/db_iter.h"
#include "store/ikey.h"
#include "store/store_int.h"

/* --- applying batches --- */

/* Rows of a batch go into their memtables in key order, not in the order
 * they came: rows that share a ts (millisecond log stamps: a batch of a
 * shipper is often one ts) are ordered by host, which a batch mixes, and a
 * random insert searches the skiplist from high up; in key order each row
 * lands beside the last one (the splice). The index keys are inserted as
 * they come, since their groups (hosts) take them at the head. */

/* The first 8 * APPLY_PFX_WORDS bytes of the key, zero padded, as
 * big-endian words: their order is the bytes' memcmp order. */
static void sort_key_set(struct apply_key *a, const char *key, size_t len)
{
    for (size_t i = 0; i < APPLY_PFX_WORDS; i++)
        a->pfx[i] = 8 * i < len ? coding_get_u64be_padded(key + 8 * i, len - 8 * i) : 0;
}

/* memcmp order of the two keys (their prefixes zero padded), then the
 * batch order. */
static int sort_key_cmp(const struct apply_key *a, const struct apply_key *b, const char *keys)
{
    for (size_t w = 0; w < APPLY_PFX_WORDS; w++)
        if (a->pfx[w] != b->pfx[w])
            return a->pfx[w] < b->pfx[w] ? -1 : 1;
    size_t skip = 8 * APPLY_PFX_WORDS;
    if (a->len > skip && b->len > skip) {
        size_t n = (a->len < b->len ? a->len : b->len) - skip;
        int c = memcmp(keys + a->off + skip, keys + b->off + skip, n);
        if (c)
            return c;
    }
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return (a->row > b->row) - (a->row < b->row);
}

/* Bottom-up merge sort of n keys through tmp. */
static void sort_keys(struct apply_key *v, struct apply_key *tmp, size_t n, const char *keys)
{
    struct apply_key *src = v, *dst = tmp;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = sort_key_cmp(&src[j], &src[i], keys) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        struct apply_key *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, n * sizeof *v);
}

static void scratch_reserve(struct apply_scratch *a, size_t n)
{
    if (n <= a->cap)
        return;
    size_t cap = a->cap ? a->cap : 256;
    while (cap < n)
        cap *= 2;
    free(a->tmp);
    a->rows = xrealloc(a->rows, cap * sizeof *a->rows);
    a->keys = xrealloc(a->keys, cap * sizeof *a->keys);
    a->tmp = xmalloc(cap * sizeof *a->tmp);
    a->cap = cap;
}

/* A database keeps its scratch between batches, but not the memory of an
 * unusually large one (its rows' keys and arrays). */
#define APPLY_KEEP_ROWS 16384
#define APPLY_KEEP_TEXT (4u << 20)

static void apply_scratch_trim(struct apply_scratch *a)
{
    if (a->cap > APPLY_KEEP_ROWS) {
        free(a->rows);
        free(a->keys);
        free(a->tmp);
        a->rows = NULL;
        a->keys = a->tmp = NULL;
        a->cap = 0;
    }
    if (a->text.cap > APPLY_KEEP_TEXT) {
        buf_destroy(&a->text);
        buf_init(&a->text);
    }
}

/* The row of e (sequence seq) kept for the sorted pass, unless its
 * partition flushed segment seg already; its index entry added now. */
static void take_row(struct store_db *db, const struct batch_entry *e, uint64_t seq, uint64_t seg)
{
    struct apply_scratch *a = &db->apply;
    uint32_t bucket = key_bucket(e->ts, db->buckets);
    struct part *ix = &db->parts[db->buckets];
    if (seg == 0 || seg > db->parts[bucket].flushed_gen) {
        scratch_reserve(a, a->n + 1);
        struct apply_key *k = &a->keys[a->n];
        k->off = a->text.len;
        key_encode_row_id(&a->text, bucket, e->ts, db->desc, e->host, e->event, e->id);
        k->len = (uint32_t)(a->text.len - k->off);
        k->row = (uint32_t)a->n;
        a->rows[a->n] = (struct apply_row){e->value, seq, bucket, e->kind};
        a->n++;
    }
    if ((seg == 0 || seg > ix->flushed_gen) && !e->keep_index) {
        struct buf *k = &db->scratch;
        buf_reset(k);
        key_encode_index(k, e->host, e->event, e->ts, db->desc);
        mt_add(ix->mem, slice_make(k->data, k->len), seq, e->kind == IKEY_DEL ? IKEY_DEL : IKEY_PUT,
               slice_make("", 0));
    }
}

/* Whether the rows of every bucket already come in key order, all of them
 * ascending or all descending (line protocol and syslog stamps that grow
 * through a batch): each lands beside the last through the splice, and
 * the sort would only cost. */
static bool in_bucket_order(struct store_db *db)
{
    struct apply_scratch *a = &db->apply;
    if (a->nlast < db->buckets) {
        free(a->last);
        a->last = xmalloc(db->buckets * sizeof *a->last);
        a->nlast = db->buckets;
    }
    memset(a->last, 0xff, db->buckets * sizeof *a->last);
    bool up = true, down = true;
    for (size_t i = 0; i < a->n && (up || down); i++) {
        const struct apply_key *k = &a->keys[i];
        uint32_t b = a->rows[i].bucket, prev = a->last[b];
        a->last[b] = (uint32_t)i;
        if (prev == UINT32_MAX)
            continue;
        const struct apply_key *p = &a->keys[prev];
        size_t n = p->len < k->len ? p->len : k->len;
        int c = memcmp(a->text.data + p->off, a->text.data + k->off, n);
        if (!c)
            c = (p->len > k->len) - (p->len < k->len);
        up = up && c <= 0;
        down = down && c >= 0;
    }
    return up || down;
}

/* The kept rows into their partitions' memtables, in key order (or in the
 * batch's order when that is already it, bucket by bucket). */
static void add_rows(struct store_db *db, uint64_t seg)
{
    struct apply_scratch *a = &db->apply;
    if (!in_bucket_order(db)) {
        for (size_t i = 0; i < a->n; i++)
            sort_key_set(&a->keys[i], a->text.data + a->keys[i].off, a->keys[i].len);
        sort_keys(a->keys, a->tmp, a->n, a->text.data);
    }
    for (size_t i = 0; i < a->n; i++) {
        const struct apply_key *k = &a->keys[i];
        const struct apply_row *r = &a->rows[k->row];
        mt_add(db->parts[r->bucket].mem, slice_make(a->text.data + k->off, k->len), r->seq, r->kind,
               r->value);
        /* write_mu holds other writers off: a plain increment, no locked add */
        atomic_ullong *c =
            r->kind != IKEY_DEL ? &db->m.bucket_rows[r->bucket] : &db->m.rows_deleted;
        if (seg == 0)
            atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
    }
    a->n = 0;
    buf_reset(&a->text);
    apply_scratch_trim(a);
}

/* Applies a batch payload with sequences seq, seq+1, ...; seg > 0 during
 * recovery (partitions that flushed that segment skip it). REQUIRES:
 * write_mu (or the single-threaded open). */
static int apply_batch(struct store_db *db, struct slice payload, uint64_t seg, uint64_t *last)
{
    struct batch_reader r;
    struct batch_entry e;
    uint64_t seq;
    uint32_t count;
    int rc = batch_reader_init(&r, payload, &seq, &count);
    if (rc)
        return rc;
    while ((rc = batch_reader_next(&r, &e)) == 1)
        take_row(db, &e, seq++, seg);
    batch_reader_done(&r);
    add_rows(db, seg);
    if (rc == 0 && count)
        *last = seq - 1;
    return rc;
}

/* --- open, recovery, close --- */

struct replay_ctx {
    struct store_db *db;
    uint64_t seg;
    uint64_t last;
};

static int replay_record(void *arg, struct slice payload)
{
    struct replay_ctx *c = arg;
    uint64_t last = 0;
    int rc = apply_batch(c->db, payload, c->seg, &last);
    if (last > c->last)
        c->last = last;
    return rc;
}

static int seg_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Segment numbers in the WAL directory, sorted. */
static int list_segments(struct store_db *db, uint64_t **segs, size_t *n)
{
    char **names;
    size_t count, k = 0;
    int rc = env_list(db->store->env, db->wal_dir, &names, &count);
    if (rc)
        return rc;
    uint64_t *v = xcalloc(count ? count : 1, sizeof *v);
    for (size_t i = 0; i < count; i++) {
        unsigned long long s;
        char tail[8];
        if (sscanf(names[i], "%llu.%7s", &s, tail) == 2 && strcmp(tail, "log") == 0)
            v[k++] = s;
    }
    env_free_list(names, count);
    qsort(v, k, sizeof *v, seg_cmp);
    *segs = v;
    *n = k;
    return ERR_OK;
}

static int recover(struct store_db *db)
{
    uint64_t *segs = NULL, maxgen = 0, last = 0;
    size_t n = 0;
    for (uint32_t i = 0; i < db->nparts; i++) {
        if (db->parts[i].flushed_gen > maxgen)
            maxgen = db->parts[i].flushed_gen;
        if (db->parts[i].last_seq > last)
            last = db->parts[i].last_seq;
    }
    int rc = list_segments(db, &segs, &n);
    if (rc)
        return rc;
    if (n && segs[n - 1] > maxgen)
        maxgen = segs[n - 1];
    db->gen = maxgen + 1;
    for (uint32_t i = 0; i < db->nparts; i++)
        db->parts[i].mem = mt_new(db->gen, &db->store->mem_total, &db->active_bytes,
                                  &db->store->pool, db->parts[i].is_index);
    struct buf path = BUF_INIT;
    for (size_t i = 0; i < n && !rc; i++) {
        struct replay_ctx c = {db, segs[i], 0};
        buf_reset(&path);
        buf_printf(&path, "%s/%06" PRIu64 ".log", db->wal_dir, segs[i]);
        /* a roll syncs the old segment (unless wal_sync = none): only the
         * newest can have a torn tail */
        bool tail_ok = i + 1 == n || db->store->opts.wal_sync == STORE_SYNC_NONE;
        rc = wal_replay(db->store->env, path.data, tail_ok, replay_record, &c);
        if (c.last > last)
            last = c.last;
    }
    buf_destroy(&path);
    free(segs);
    if (rc)
        return rc;
    /* a delete's sequence is not in the WAL: later writes must sort after it */
    uint64_t tseq = tomb_set_max_seq(db->tombs);
    if (tseq > last)
        last = tseq;
    for (size_t i = 0; i < db->tombs->n; i++)
        db->tombs->v[i].gen = db->gen; /* older rows may be in the replayed memtables */
    db->last_seq = last;
    atomic_store(&db->visible_seq, last);
    return wal_open(db->store->env, db->wal_dir, db->gen, &db->wal);
}

static struct store_db *db_alloc(struct store *s, const char *name)
{
    struct store_db *db = xcalloc(1, sizeof *db);
    struct buf b = BUF_INIT;
    db->store = s;
    db->name = xstrdup(name);
    buf_printf(&b, "%s/%s", s->dir, name);
    db->dir = buf_steal(&b, NULL);
    buf_printf(&b, "%s/wal", db->dir);
    db->wal_dir = buf_steal(&b, NULL);
    atomic_init(&db->refs, 1);
    atomic_init(&db->floor_ts, INT64_MIN);
    atomic_init(&db->last_write_ns, clock_mono_ns());
    pthread_mutex_init(&db->write_mu, NULL);
    pthread_mutex_init(&db->ttl_mu, NULL);
    buf_init(&db->scratch);
    buf_init(&db->apply.text);
    return db;
}

static int open_parts(struct store_db *db)
{
    struct buf dict_dir = BUF_INIT;
    buf_printf(&dict_dir, "%s/dict", db->dir);
    db->dicts = zdict_set_open(db->store->env, dict_dir.data, db->store->opts.cold_zstd_level,
                               &db->m.corrupt);
    buf_destroy(&dict_dir);
    db->nparts = db->buckets + 1;
    db->parts = xcalloc(db->nparts, sizeof *db->parts);
    db->m.bucket_rows = xcalloc(db->buckets, sizeof *db->m.bucket_rows);
    for (uint32_t i = 0; i < db->nparts; i++) {
        int rc = part_open(db, i, &db->parts[i]);
        if (rc)
            return rc;
    }
    return ERR_OK;
}

/* Databases of the first development versions kept the host index keyed
 * host|event|ts in DATA/<db>/idx/; it is now host|ts|event in hidx/ and is
 * rebuilt from the rows at open. While idx/ exists the rebuild has not
 * finished: a hidx/ left by an interrupted one is discarded first. */
static bool old_index_path(struct store_db *db, struct buf *path)
{
    buf_printf(path, "%s/idx", db->dir);
    return env_exists(db->store->env, path->data);
}

static int discard_partial_index(struct store_db *db)
{
    struct buf path = BUF_INIT;
    int rc = ERR_OK;
    if (old_index_path(db, &path)) {
        buf_reset(&path);
        buf_printf(&path, "%s/hidx", db->dir);
        if (env_exists(db->store->env, path.data))
            rc = env_remove_tree(db->store->env, path.data);
    }
    buf_destroy(&path);
    return rc;
}

/* Freezes every memtable and flushes them in this thread. REQUIRES: the
 * single-threaded open (no background threads yet). */
static int flush_now(struct store_db *db)
{
    int rc = db_freeze_locked(db);
    bool fatal = false;
    for (uint32_t i = 0; i < db->nparts && !rc; i++)
        while (!rc && db->parts[i].nimm)
            rc = compact_flush(&db->parts[i], &fatal);
    if (fatal)
        db_fail(db, rc);
    return rc;
}

/* One index entry per row version of the bucket's files, with the row's
 * sequence and kind (the memtables got theirs from the WAL replay). */
static int index_files(struct store_db *db, struct part *p, size_t flush_at)
{
    struct part *ix = &db->parts[db->buckets];
    struct version *v = p->ver; /* flushes below install new versions */
    version_ref(v);
    struct buf k = BUF_INIT;
    int rc = ERR_OK;
    for (size_t f = 0; f < v->n && !rc; f++) {
        struct iter *it = sst_iter(v->files[f]->table);
        for (it_seek_first(it); it_valid(it) && !rc; it_next(it)) {
            struct slice ik = it_key(it);
            struct key_row r;
            if ((rc = key_decode_row(ikey_user(ik), db->desc, &r)) != ERR_OK)
                break;
            buf_reset(&k);
            key_encode_index(&k, r.host, r.event, r.ts, db->desc);
            mt_add(ix->mem, slice_make(k.data, k.len), ikey_seq(ik),
                   ikey_kind(ik) == IKEY_DEL ? IKEY_DEL : IKEY_PUT, slice_make("", 0));
            if (mt_bytes(ix->mem) >= flush_at)
                rc = flush_now(db);
        }
        if (!rc)
            rc = it_status(it);
        it_destroy(it);
    }
    version_unref(v);
    buf_destroy(&k);
    return rc;
}

static int rebuild_old_index(struct store_db *db)
{
    struct buf path = BUF_INIT;
    if (!old_index_path(db, &path)) {
        buf_destroy(&path);
        return ERR_OK;
    }
    log_info("database %s: rebuilding the host index from the rows (the layout changed from "
             "host, event, ts to host, ts, event)",
             db->name);
    size_t flush_at = db->store->opts.memtable_bytes / 2;
    int rc = ERR_OK;
    for (uint32_t b = 0; b < db->buckets && !rc; b++)
        rc = index_files(db, &db->parts[b], flush_at);
    if (!rc)
        rc = flush_now(db);
    if (!rc)
        rc = env_remove_tree(db->store->env, path.data);
    if (!rc)
        rc = env_sync_dir(db->store->env, db->dir);
    if (!rc)
        log_info("database %s: host index rebuilt", db->name);
    buf_destroy(&path);
    return rc;
}

/* A new database's directory must be absent or empty: one holding files
 * but no META lost it, and creating over it with other options (buckets,
 * order) would misread every row. The one exception is what a creation
 * killed before its META was renamed into place leaves (META is the first
 * file written, through META.tmp): that temporary file alone is removed. */
static int check_new_dir(struct store_db *db)
{
    char **names;
    size_t n;
    struct env *env = db->store->env;
    if (env_list(env, db->dir, &names, &n) != ERR_OK)
        return ERR_OK; /* absent */
    bool only_tmp = n == 1 && strcmp(names[0], "META.tmp") == 0;
    env_free_list(names, n);
    if (n == 0)
        return ERR_OK;
    if (only_tmp) {
        struct buf path = BUF_INIT;
        buf_printf(&path, "%s/META.tmp", db->dir);
        int rc = env_unlink(env, path.data);
        buf_destroy(&path);
        if (rc == ERR_OK)
            log_info("database %s: the META.tmp of an interrupted creation removed", db->name);
        return rc;
    }
    return err_corrupt("%s holds %zu entries but no META: the database is not created over it "
                       "(restore its META, or move the directory away)",
                       db->dir, n);
}

int db_open(struct store *s, const char *name, const struct db_opts *create, struct store_db **out)
{
    struct store_db *db = db_alloc(s, name);
    struct env *env = s->env;
    int rc;
    err_clear();
    if (create) {
        db->buckets = create->buckets;
        db->desc = create->ts_desc;
        atomic_init(&db->ttl_ns, create->ttl_ns);
        rc = check_new_dir(db);
        if (!rc)
            rc = env_mkdir(env, db->dir);
        if (!rc)
            rc = db_write_meta(db);
        if (!rc)
            rc = env_sync_dir(env, s->dir);
    } else {
        rc = db_read_meta(db);
    }
    if (!rc)
        rc = discard_partial_index(db);
    if (!rc)
        rc = db_read_tombs(db);
    if (!rc)
        rc = env_mkdir(env, db->wal_dir);
    if (!rc)
        rc = open_parts(db);
    if (!rc)
        rc = recover(db);
    if (!rc)
        rc = rebuild_old_index(db);
    if (rc) {
        log_error("database %s: cannot open: %s%s%s", name, err_name(rc),
                  err_detail()[0] ? ": " : "", err_detail());
        db_close(db);
        return rc;
    }
    *out = db;
    return ERR_OK;
}

void db_close(struct store_db *db)
{
    wal_close(db->wal);
    for (uint32_t i = 0; db->parts && i < db->nparts; i++)
        if (db->parts[i].dir)
            part_close(&db->parts[i]);
    zdict_set_unref(db->dicts);
    if (db->dropped)
        env_remove_tree(db->store->env, db->drop_dir ? db->drop_dir : db->dir);
    free(db->drop_dir);
    free(db->parts);
    free(db->m.bucket_rows);
    buf_destroy(&db->scratch);
    buf_destroy(&db->apply.text);
    free(db->apply.rows);
    free(db->apply.keys);
    free(db->apply.tmp);
    free(db->apply.last);
    pthread_mutex_destroy(&db->write_mu);
    tomb_set_unref(db->tombs);
    for (size_t i = 0; i < db->nettl; i++)
        free(db->ettl[i].event);
    free(db->ettl);
    pthread_mutex_destroy(&db->ttl_mu);
    free(db->wal_dir);
    free(db->dir);
    free(db->name);
    free(db);
}

void db_fail(struct store_db *db, int rc)
{
    int zero = 0;
    if (atomic_compare_exchange_strong(&db->bg_error, &zero, rc))
        log_error("database %s: background error %s; the database is now read-only", db->name,
                  err_name(rc));
    store_wake(db->store);
}

void db_ref(struct store_db *db)
{
    atomic_fetch_add(&db->refs, 1);
}

void store_db_unref(struct store_db *db)
{
    if (db && atomic_fetch_sub(&db->refs, 1) == 1)
        db_close(db);
}

const char *store_db_name(const struct store_db *db)
{
    return db->name;
}

void store_db_opts(const struct store_db *db, struct db_opts *out)
{
    out->buckets = db->buckets;
    out->ts_desc = db->desc;
    out->ttl_ns = atomic_load(&((struct store_db *)db)->ttl_ns);
}

/* --- writes --- */

/* Freezes every partition's memtable and starts a new WAL segment.
 * REQUIRES: write_mu. */
int db_freeze_locked(struct store_db *db)
{
    struct store *s = db->store;
    uint64_t gen = db->gen + 1;
    int rc = wal_roll(db->wal, gen, s->opts.wal_sync != STORE_SYNC_NONE);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < db->nparts; i++) {
        struct part *p = &db->parts[i];
        struct memtable *fresh =
            mt_new(gen, &s->mem_total, &db->active_bytes, &s->pool, p->is_index);
        mt_detach_active(p->mem);
        pthread_mutex_lock(&p->mu);
        if (p->nimm == p->capimm) {
            p->capimm = p->capimm ? 2 * p->capimm : 4;
            p->imm = xrealloc(p->imm, p->capimm * sizeof *p->imm);
        }
        p->imm[p->nimm++] = p->mem;
        p->mem = fresh;
        pthread_mutex_unlock(&p->mu);
    }
    db->gen = gen;
    atomic_store(&db->visible_seq, db->last_seq);
    store_wake(s);
    return ERR_OK;
}

/* Half the budget: one generation fills while the previous one flushes. */
static size_t freeze_threshold(const struct store *s)
{
    size_t t = s->opts.memtable_bytes / 2;
    return t < (256u << 10) ? (256u << 10) : t;
}

/* Whether a frozen memtable of this database still waits for its flush. */
static bool flush_pending_locked(struct store_db *db)
{
    for (uint32_t i = 0; i < db->nparts; i++) {
        struct part *p = &db->parts[i];
        pthread_mutex_lock(&p->mu);
        size_t n = p->nimm;
        pthread_mutex_unlock(&p->mu);
        if (n)
            return true;
    }
    return false;
}

/* ERR_BUSY when memtables are over budget. REQUIRES: write_mu. */
static int check_budget(struct store_db *db)
{
    struct store *s = db->store;
    size_t total = atomic_load(&s->mem_total), active = atomic_load(&db->active_bytes);
    if (total < s->opts.memtable_bytes)
        return ERR_OK;
    if (active >= s->opts.memtable_bytes / 8 && !flush_pending_locked(db)) {
        db_freeze_locked(db); /* make this database's memory flushable */
    } else {
        /* the budget may be full of databases each too small to flush on
         * its own: the store flushes the largest (store.c, relieve) */
        atomic_store(&s->want_relief, true);
        store_wake(s);
    }
    return ERR_BUSY;
}

bool db_freeze_for_budget(struct store_db *db)
{
    pthread_mutex_lock(&db->write_mu);
    bool froze = atomic_load(&db->active_bytes) > 0 && !atomic_load(&db->bg_error) &&
                 !flush_pending_locked(db) && db_freeze_locked(db) == ERR_OK;
    pthread_mutex_unlock(&db->write_mu);
    return froze;
}

/* Takes write_mu once the memtables are within budget, waiting up to
 * write_stall_ns for flushes to make room. Returns with write_mu held,
 * whatever the result. */
static int lock_within_budget(struct store_db *db)
{
    const int64_t step_ns = 1000000; /* 1 ms */
    int64_t waited = 0;
    for (;;) {
        pthread_mutex_lock(&db->write_mu);
        int rc = atomic_load(&db->bg_error);
        if (!rc)
            rc = check_budget(db);
        if (rc != ERR_BUSY || waited >= db->store->opts.write_stall_ns) {
            if (waited)
                atomic_fetch_add(&db->m.stall_ns, (unsigned long long)waited);
            return rc;
        }
        pthread_mutex_unlock(&db->write_mu);
        struct timespec ts = {0, step_ns};
        nanosleep(&ts, NULL);
        waited += step_ns;
    }
}

/* Half the budget used: asks the store to flush the memtables of
 * databases that writes have left (store.c, relieve_idle), at most every
 * IDLE_ASK_NS, before this one's own rule below freezes its memtables
 * early for their rows. */
static void ask_idle_relief(struct store *s)
{
    if (atomic_load(&s->mem_total) < s->opts.memtable_bytes / 2)
        return;
    int64_t now = clock_mono_ns();
    long long last = atomic_load(&s->idle_asked_ns);
    if (now - last < IDLE_ASK_NS || !atomic_compare_exchange_strong(&s->idle_asked_ns, &last, now))
        return;
    atomic_store(&s->want_idle_relief, true);
    store_wake(s);
}

static void maybe_freeze(struct store_db *db)
{
    struct store *s = db->store;
    ask_idle_relief(s);
    size_t active = atomic_load(&db->active_bytes);
    size_t thr = freeze_threshold(s);
    /* Over three quarters of the budget with other databases' data: free
     * this one's share early, unless its last generation is still being
     * flushed (tiny generations would only multiply the flushes). */
    bool pressure = atomic_load(&s->mem_total) >= s->opts.memtable_bytes / 4 * 3 &&
                    active >= thr / 4 && !flush_pending_locked(db);
    if (active >= thr || pressure) {
        int rc = db_freeze_locked(db);
        if (rc)
            log_warn("database %s: cannot roll the WAL: %s", db->name, err_name(rc));
    }
}

static void raise_visible(struct store_db *db, uint64_t seq)
{
    unsigned long long cur = atomic_load(&db->visible_seq);
    while (cur < seq && !atomic_compare_exchange_weak(&db->visible_seq, &cur, seq))
        ;
}

/* Hands a visible batch to the subscriber, if any (store.h). */
static void notify_commit(struct store_db *db, const struct batch *b)
{
    store_commit_fn fn = atomic_load(&db->store->commit_fn);
    if (fn)
        fn(atomic_load(&db->store->commit_arg), db, batch_payload(b));
}

/* store_write, or with is_sync false store_write_nosync. */
static int write_batch(struct store_db *db, struct batch *b, bool is_sync)
{
    if (b->bad)
        return ERR_INVAL;
    if (b->count == 0)
        return ERR_OK;
    uint64_t end = 0, seq = 0;
    int rc = lock_within_budget(db);
    if (rc == ERR_BUSY)
        atomic_fetch_add(&db->m.busy_rejects, 1);
    if (!rc) {
        batch_set_seq(b, db->last_seq + 1);
        rc = wal_append(db->wal, b->rep.data, b->rep.len, &end);
        if (rc == ERR_NOSPC)
            atomic_fetch_add(&db->m.nospc, 1);
    }
    if (!rc) {
        uint64_t last = db->last_seq;
        apply_batch(db, batch_payload(b), 0, &last);
        db->last_seq = last;
        seq = last;
        atomic_fetch_add(&db->m.bytes_written_user, b->rep.len);
        atomic_store_explicit(&db->last_write_ns, clock_mono_ns(), memory_order_relaxed);
        wal_mark_ready(db->wal, end, last);
        if (db->store->opts.wal_sync != STORE_SYNC_ALWAYS)
            atomic_store(&db->visible_seq, last);
        maybe_freeze(db);
    }
    pthread_mutex_unlock(&db->write_mu);
    if (rc || db->store->opts.wal_sync != STORE_SYNC_ALWAYS) {
        if (!rc)
            notify_commit(db, b);
        return rc;
    }
    if (!is_sync) {
        raise_visible(db, seq);
        notify_commit(db, b);
        return ERR_OK;
    }
    uint64_t durable;
    rc = wal_sync_to(db->wal, end, &durable);
    if (rc) {
        db_fail(db, rc);
        return rc;
    }
    raise_visible(db, durable > seq ? durable : seq);
    notify_commit(db, b);
    return ERR_OK;
}

int store_write(struct store_db *db, struct batch *b)
{
    return write_batch(db, b, true);
}

int store_write_nosync(struct store_db *db, struct batch *b)
{
    return write_batch(db, b, false);
}

/* The generation of the newest tombstone of t (0 if none). */
static uint64_t tombs_max_gen(const struct tomb_set *t)
{
    uint64_t g = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].gen > g)
            g = t->v[i].gen;
    return g;
}

/* With STORE_MAX_TOMBSTONES outstanding, makes room: a tombstone goes once
 * the rows it may cover are flushed and the files it overlaps merged past
 * it, so the memtables that may hold such rows are frozen now (their flush
 * and the compactions and the purge after it start at once, not when the
 * memtables fill); then waits as a write waits for memory (up to
 * write_stall_ns). */
static void wait_for_tomb_room(struct store_db *db)
{
    const int64_t step_ns = 2000000; /* 2 ms */
    if (store_db_range_tombstones(db) < STORE_MAX_TOMBSTONES)
        return;
    pthread_mutex_lock(&db->write_mu);
    struct tomb_set *cur = db_tombs(db);
    if (db->gen <= tombs_max_gen(cur))
        db_freeze_locked(db);
    tomb_set_unref(cur);
    pthread_mutex_unlock(&db->write_mu);
    for (int64_t waited = 0; waited < db->store->opts.write_stall_ns; waited += step_ns) {
        if (store_db_range_tombstones(db) < STORE_MAX_TOMBSTONES)
            return;
        store_wake(db->store);
        struct timespec ts = {0, step_ns};
        nanosleep(&ts, NULL);
    }
}

int store_db_delete_range(struct store_db *db, struct slice host, const struct slice *event,
                          int64_t lo, int64_t hi)
{
    wait_for_tomb_room(db);
    return db_add_range_tomb(db, host, event, lo, hi);
}

/* --- snapshots and reads --- */

static void part_snap_take(struct part *p, struct part_snap *ps)
{
    pthread_mutex_lock(&p->mu);
    ps->mem = p->mem;
    mt_ref(ps->mem);
    ps->nimm = p->nimm;
    ps->imm = xcalloc(p->nimm ? p->nimm : 1, sizeof *ps->imm);
    for (size_t i = 0; i < p->nimm; i++) {
        ps->imm[i] = p->imm[i];
        mt_ref(ps->imm[i]);
    }
    ps->ver = p->ver;
    version_ref(ps->ver);
    pthread_mutex_unlock(&p->mu);
}

static void part_snap_drop(struct part_snap *ps)
{
    if (!ps->mem)
        return;
    mt_unref(ps->mem);
    for (size_t i = 0; i < ps->nimm; i++)
        mt_unref(ps->imm[i]);
    free(ps->imm);
    version_unref(ps->ver);
    ps->mem = NULL;
}

static int64_t ttl_cutoff(struct store_db *db)
{
    int64_t ttl = atomic_load(&db->ttl_ns);
    int64_t floor = atomic_load(&db->floor_ts);
    if (ttl <= 0)
        return floor;
    int64_t now = db_now(db);
    return now - ttl > floor ? now - ttl : floor;
}

struct store_snap *store_snapshot(struct store_db *db)
{
    struct store_snap *s = xcalloc(1, sizeof *s);
    db_ref(db);
    s->db = db;
    s->seq = atomic_load(&db->visible_seq);
    s->cutoff = ttl_cutoff(db);
    db_event_cuts(db, db_now(db), &s->cuts);
    s->tombs = db_tombs(db);
    s->ps = xcalloc(db->nparts, sizeof *s->ps);
    for (uint32_t i = 0; i < db->nparts; i++)
        part_snap_take(&db->parts[i], &s->ps[i]);
    return s;
}

uint64_t store_snap_seq(const struct store_snap *snap)
{
    return snap->seq;
}

/* n entries spread over [a, b] (either order), the share of them in [lo, hi]. */
static double share_in(double n, int64_t a, int64_t b, int64_t lo, int64_t hi)
{
    int64_t min = a < b ? a : b, max = a < b ? b : a;
    int64_t from = min > lo ? min : lo, to = max < hi ? max : hi;
    if (from > to)
        return 0;
    return n * (((double)to - (double)from + 1) / ((double)max - (double)min + 1));
}

/* A memtable's entries in [lo, hi], by the ts of its first and last keys. */
static double mt_share(const struct part *p, struct memtable *mt, int64_t lo, int64_t hi)
{
    size_t n = mt_count(mt);
    if (n == 0)
        return 0;
    struct iter *it = mt_iter(mt);
    double got = 0;
    it_seek_first(it);
    if (it_valid(it)) {
        int64_t a = part_key_ts(p, ikey_user(it_key(it)));
        it_seek_last(it);
        if (it_valid(it))
            got = share_in((double)n, a, part_key_ts(p, ikey_user(it_key(it))), lo, hi);
    }
    it_destroy(it);
    return got;
}

uint64_t store_snap_rows_estimate(struct store_snap *snap, int64_t lo, int64_t hi)
{
    const struct store_db *db = snap->db;
    double n = 0;
    for (uint32_t b = 0; b < db->buckets; b++) {
        const struct part_snap *ps = &snap->ps[b];
        const struct part *p = &db->parts[b];
        if (ps->mem)
            n += mt_share(p, ps->mem, lo, hi);
        for (size_t i = 0; i < ps->nimm; i++)
            n += mt_share(p, ps->imm[i], lo, hi);
        for (size_t i = 0; ps->ver && i < ps->ver->n; i++) {
            const struct sst_props *pr = &ps->ver->files[i]->props;
            n += share_in((double)pr->entries, pr->min_ts, pr->max_ts, lo, hi);
        }
    }
    return n < 1.8e19 ? (uint64_t)n : UINT64_MAX;
}

int64_t store_db_cutoff(struct store_db *db, struct slice event)
{
    struct event_cuts cuts;
    int64_t now = db_now(db);
    db_event_cuts(db, now, &cuts);
    int64_t cut = event_cuts_get(&cuts, event, ttl_cutoff(db));
    event_cuts_destroy(&cuts);
    return cut;
}

void store_snap_release(struct store_snap *snap)
{
    if (!snap)
        return;
    for (uint32_t i = 0; i < snap->db->nparts; i++)
        part_snap_drop(&snap->ps[i]);
    free(snap->ps);
    event_cuts_destroy(&snap->cuts);
    tomb_set_unref(snap->tombs);
    store_db_unref(snap->db);
    free(snap);
}

/* Whether file f may hold rows of the key base (store/key.h): its window
 * and ts range hold ts, and its bloom filter admits the base (version 1
 * files filtered whole keys, all of them base 0x00). */
static bool file_may_have(const struct file_meta *f, int64_t ts, struct slice base, struct buf *tmp)
{
    if (f->window != part_window(ts) || ts < f->props.min_ts || ts > f->props.max_ts)
        return false;
    if (sst_version(f->table) >= 2)
        return sst_may_contain(f->table, base);
    buf_reset(tmp);
    buf_append(tmp, base.ptr, base.len);
    buf_putc(tmp, '\0');
    return sst_may_contain(f->table, slice_make(tmp->data, tmp->len));
}

/* The versions of the rows of base in a partition's snapshot, resolved:
 * its memtables and the files that may hold them. */
static struct iter *base_iter(struct part *p, struct part_snap *ps, uint64_t seq, int64_t cutoff,
                              const struct event_cuts *cuts, struct tomb_set *tombs, int64_t ts,
                              struct slice base)
{
    size_t n = 1 + ps->nimm + ps->ver->n, k = 0;
    struct iter **kids = xcalloc(n, sizeof *kids);
    struct buf tmp = BUF_INIT;
    if (mt_count(ps->mem))
        kids[k++] = mt_iter(ps->mem);
    for (size_t i = 0; i < ps->nimm; i++)
        if (mt_count(ps->imm[i]))
            kids[k++] = mt_iter(ps->imm[i]);
    for (size_t i = 0; i < ps->ver->n; i++)
        if (file_may_have(ps->ver->files[i], ts, base, &tmp))
            kids[k++] = sst_iter(ps->ver->files[i]->table);
    buf_destroy(&tmp);
    struct iter *m = it_merge_new(kids, k, NULL);
    free(kids);
    return db_iter_new(m, p, seq, cutoff, cuts, tombs);
}

/* Point read of ukey (a row key) in one partition's snapshot: the newest
 * version from the memtables or the files, newest first; a MERGE is
 * resolved with the older versions through base_iter. */
static int get_in(struct part *p, struct part_snap *ps, uint64_t seq, struct slice ukey, int64_t ts,
                  const struct tomb_set *tombs, struct buf *out)
{
    int kind;
    struct slice v;
    uint64_t vseq = 0;
    bool found = mt_get_seq(ps->mem, ukey, seq, &kind, &v, &vseq);
    for (size_t i = ps->nimm; !found && i-- > 0;)
        found = mt_get_seq(ps->imm[i], ukey, seq, &kind, &v, &vseq);
    bool check = tombs && tombs->n;
    struct slice base = slice_make(ukey.ptr, key_row_base_len(ukey));
    size_t start = out->len;
    if (!found) {
        struct buf tmp = BUF_INIT;
        int rc = ERR_NOTFOUND;
        for (size_t i = 0; i < ps->ver->n && rc == ERR_NOTFOUND; i++) {
            struct file_meta *f = ps->ver->files[i];
            if (file_may_have(f, ts, base, &tmp))
                rc = sst_find_seq(f->table, ukey, seq, &kind, out, &vseq);
        }
        buf_destroy(&tmp);
        if (rc)
            return rc;
        v = slice_make(out->data + start, out->len - start);
    }
    if (kind == IKEY_DEL || (check && tomb_covers(tombs, part_key_host(p, ukey),
                                                  part_key_event(p, ukey), ts, vseq, seq))) {
        out->len = start;
        return ERR_NOTFOUND;
    }
    if (kind == IKEY_MERGE) {
        out->len = start;
        struct iter *it =
            base_iter(p, ps, seq, INT64_MIN, NULL, (struct tomb_set *)tombs, ts, base);
        it_seek(it, ukey);
        int rc = it_status(it) ? it_status(it) : ERR_NOTFOUND;
        if (it_valid(it) && slice_eq(it_key(it), ukey)) {
            buf_append(out, it_value(it).ptr, it_value(it).len);
            rc = ERR_OK;
        }
        it_destroy(it);
        return rc;
    }
    if (found)
        buf_append(out, v.ptr, v.len);
    return ERR_OK;
}

static int snap_get(struct store_db *db, struct part_snap *all, uint64_t seq, int64_t cutoff,
                    const struct event_cuts *cuts, const struct tomb_set *tombs, int64_t ts,
                    struct slice host, struct slice event, struct buf *out)
{
    if (!key_host_ok(host) || !key_event_ok(event))
        return ERR_INVAL;
    if (ts < cutoff || (cuts && ts < event_cuts_get(cuts, event, cutoff)))
        return ERR_NOTFOUND;
    uint32_t bucket = key_bucket(ts, db->buckets);
    struct part *p = &db->parts[bucket];
    struct part_snap local = {0}, *ps = all ? &all[bucket] : &local;
    if (!all)
        part_snap_take(p, &local);
    struct buf k = BUF_INIT;
    key_encode_row(&k, bucket, ts, db->desc, host, event);
    int rc = get_in(p, ps, seq, slice_make(k.data, k.len), ts, tombs, out);
    buf_destroy(&k);
    part_snap_drop(&local);
    return rc;
}

int store_get(struct store_db *db, int64_t ts, struct slice host, struct slice event,
              struct buf *out)
{
    struct event_cuts cuts;
    db_event_cuts(db, db_now(db), &cuts);
    struct tomb_set *tombs = db_tombs(db);
    int rc = snap_get(db, NULL, atomic_load(&db->visible_seq), ttl_cutoff(db), &cuts, tombs, ts,
                      host, event, out);
    tomb_set_unref(tombs);
    event_cuts_destroy(&cuts);
    return rc;
}

int store_snap_get(struct store_snap *snap, int64_t ts, struct slice host, struct slice event,
                   struct buf *out)
{
    return snap_get(snap->db, snap->ps, snap->seq, snap->cutoff, &snap->cuts, snap->tombs, ts, host,
                    event, out);
}

struct store_rows {
    struct iter *it;
    struct buf lo, hi; /* [base 0x00, base 0x02) */
    bool started;
};

int store_rows_open(struct store_snap *snap, int64_t ts, struct slice host, struct slice event,
                    struct store_rows **out)
{
    struct store_db *db = snap->db;
    if (!key_host_ok(host) || !key_event_ok(event))
        return ERR_INVAL;
    struct store_rows *r = xcalloc(1, sizeof *r);
    *out = r;
    if (ts < snap->cutoff || ts < event_cuts_get(&snap->cuts, event, snap->cutoff)) {
        r->it = it_new_empty();
        return ERR_OK;
    }
    uint32_t bucket = key_bucket(ts, db->buckets);
    key_encode_row_base(&r->lo, bucket, ts, db->desc, host, event);
    buf_append(&r->hi, r->lo.data, r->lo.len);
    struct slice base = slice_make(r->lo.data, r->lo.len);
    r->it = base_iter(&db->parts[bucket], &snap->ps[bucket], snap->seq, snap->cutoff, &snap->cuts,
                      snap->tombs, ts, base);
    buf_putc(&r->lo, '\0');
    buf_putc(&r->hi, '\2');
    return ERR_OK;
}

int store_rows_next(struct store_rows *r, struct slice *key, struct slice *value)
{
    if (!r->started) {
        it_seek(r->it, slice_make(r->lo.data, r->lo.len));
        r->started = true;
    } else if (it_valid(r->it)) {
        it_next(r->it);
    }
    if (!it_valid(r->it))
        return it_status(r->it);
    *key = it_key(r->it);
    if (slice_cmp(*key, slice_make(r->hi.data, r->hi.len)) >= 0)
        return 0;
    *value = it_value(r->it);
    return 1;
}

void store_rows_close(struct store_rows *r)
{
    if (!r)
        return;
    it_destroy(r->it);
    buf_destroy(&r->lo);
    buf_destroy(&r->hi);
    free(r);
}

static void unref_db_cb(void *db, void *unused)
{
    (void)unused;
    store_db_unref(db);
}

/* host: bounds the index partition's files to one host (NULL: all); rd:
 * what a bucket's files may skip (NULL: nothing), outliving the iterator. */
static struct iter *part_iter(struct store_snap *snap, uint32_t id, const struct slice *host,
                              const struct sst_read_opts *rd)
{
    struct part_snap *ps = &snap->ps[id];
    struct part *p = &snap->db->parts[id];
    size_t n = 1 + ps->nimm + ps->ver->n, k = 0;
    struct iter **kids = xcalloc(n, sizeof *kids);
    /* empty memtables stay out, so that a partition with only files (a
     * settled database) is read without a merge; a memtable only grows,
     * so one empty now held no row of the snapshot */
    if (mt_count(ps->mem))
        kids[k++] = mt_iter(ps->mem);
    for (size_t i = 0; i < ps->nimm; i++)
        if (mt_count(ps->imm[i]))
            kids[k++] = mt_iter(ps->imm[i]);
    if (p->is_index && host) {
        if (ps->ver->n)
            kids[k++] = window_iter_host(p, ps->ver, *host);
    } else if (p->is_index) {
        /* index keys interleave windows across hosts: merge every file */
        for (size_t i = 0; i < ps->ver->n; i++)
            kids[k++] = sst_iter(ps->ver->files[i]->table);
    } else if (ps->ver->n) {
        kids[k++] = window_iter_new(p, ps->ver, rd);
    }
    struct iter *m = it_merge_new(kids, k, NULL);
    free(kids);
    struct iter *it = db_iter_new(m, p, snap->seq, snap->cutoff, &snap->cuts, snap->tombs);
    db_ref(snap->db);
    it_on_destroy(it, unref_db_cb, snap->db, NULL);
    return it;
}

struct iter *store_iter_bucket(struct store_snap *snap, uint32_t bucket)
{
    if (bucket >= snap->db->buckets)
        return it_new_error(ERR_INVAL);
    return part_iter(snap, bucket, NULL, NULL);
}

struct iter *store_iter_index(struct store_snap *snap)
{
    return part_iter(snap, snap->db->buckets, NULL, NULL);
}

struct iter *store_iter_index_host(struct store_snap *snap, struct slice host)
{
    return part_iter(snap, snap->db->buckets, &host, NULL);
}

/* n slices and their bytes in one allocation. */
static struct slice *slices_copy(const struct slice *v, size_t n)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += v[i].len;
    struct slice *out = xmalloc(n * sizeof *out + bytes + 1);
    char *at = (char *)(out + n);
    for (size_t i = 0; i < n; i++) {
        if (v[i].len)
            memcpy(at, v[i].ptr, v[i].len);
        out[i] = slice_make(at, v[i].len);
        at += v[i].len;
    }
    return out;
}

/* A copy of store_read_opts for the SSTable iterators of one bucket
 * iterator, freed with it. */
static struct sst_read_opts *read_opts_new(const struct store_read_opts *o)
{
    struct sst_read_opts *rd = xcalloc(1, sizeof *rd);
    if (o->words && o->nwords) {
        struct word_hashes *w = xmalloc(o->nwords * sizeof *w);
        memcpy(w, o->words, o->nwords * sizeof *w);
        rd->words = w;
        rd->nwords = o->nwords;
    }
    if (o->need && o->nneed) {
        rd->need = slices_copy(o->need, o->nneed);
        rd->nneed = o->nneed;
    }
    if (o->events && o->nevents) {
        rd->events = slices_copy(o->events, o->nevents);
        rd->nevents = o->nevents;
    }
    if (o->stats) {
        rd->blocks_read = &o->stats->blocks_read;
        rd->blocks_skipped = &o->stats->blocks_skipped;
        rd->rows_passed = &o->stats->rows_passed;
    }
    return rd;
}

static void read_opts_free(void *p, void *unused)
{
    (void)unused;
    struct sst_read_opts *rd = p;
    free((void *)rd->words);
    free((void *)rd->need);
    free((void *)rd->events);
    free(rd);
}

struct iter *store_iter_bucket_range(struct store_snap *snap, uint32_t bucket, int64_t ts_lo,
                                     int64_t ts_hi, const struct store_read_opts *opts)
{
    if (bucket >= snap->db->buckets)
        return it_new_error(ERR_INVAL);
    struct sst_read_opts *rd = opts ? read_opts_new(opts) : NULL;
    struct buf lo = BUF_INIT, hi = BUF_INIT;
    key_row_range(&lo, &hi, bucket, ts_lo, ts_hi, snap->db->desc);
    struct iter *it = it_range_new(part_iter(snap, bucket, NULL, rd), slice_make(lo.data, lo.len),
                                   slice_make(hi.data, hi.len), true);
    if (rd) /* the tables' iterators do not look at it while destroyed */
        it_on_destroy(it, read_opts_free, rd, NULL);
    buf_destroy(&lo);
    buf_destroy(&hi);
    return it;
}

struct iter *store_iter_host_range(struct store_snap *snap, struct slice host, int64_t ts_lo,
                                   int64_t ts_hi)
{
    struct buf lo = BUF_INIT, hi = BUF_INIT;
    key_index_range(&lo, &hi, host, ts_lo, ts_hi, snap->db->desc);
    struct iter *it = it_range_new(part_iter(snap, snap->db->buckets, &host, NULL),
                                   slice_make(lo.data, lo.len), slice_make(hi.data, hi.len), false);
    buf_destroy(&lo);
    buf_destroy(&hi);
    return it;
}
