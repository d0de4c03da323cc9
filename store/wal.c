/* WAL writer, group commit and replay. A record's header carries a crc of
 * its length so a damaged length is told apart from a torn tail: a record
 * cut short at the end of the file is a crash during a write (cut and
 * logged), anything else that fails its crc is corruption (fatal). */
#include "store/wal.h"

#include <pthread.h>
#include <stdlib.h>

#include "base/coding.h"
#include "base/crc32c.h"
#include "base/err.h"
#include "base/log.h"

struct wal {
    struct env *env;
    const char *dir;
    pthread_mutex_t mu; /* guards everything below */
    pthread_cond_t cond;
    struct env_file *f;
    uint64_t seg;
    uint64_t seg_base; /* logical position of the segment's first byte */
    uint64_t written;  /* logical end of data written */
    uint64_t ready_pos, ready_seq;
    uint64_t synced_pos, synced_seq;
    bool syncing;
    int sync_error;
    uint64_t syncs, bytes, records;
};

static void seg_path(struct buf *b, const char *dir, uint64_t seg)
{
    buf_printf(b, "%s/%06llu.log", dir, (unsigned long long)seg);
}

static int open_seg(struct wal *w, uint64_t seg)
{
    struct buf p = BUF_INIT;
    seg_path(&p, w->dir, seg);
    int rc = env_open_append(w->env, p.data, true, &w->f);
    if (!rc)
        rc = env_sync_dir(w->env, w->dir);
    buf_destroy(&p);
    if (!rc)
        w->seg = seg;
    return rc;
}

int wal_open(struct env *env, const char *dir, uint64_t seg, struct wal **out)
{
    struct wal *w = xcalloc(1, sizeof *w);
    w->env = env;
    w->dir = dir;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cond, NULL);
    int rc = open_seg(w, seg);
    if (rc) {
        wal_close(w);
        return rc;
    }
    *out = w;
    return ERR_OK;
}

void wal_close(struct wal *w)
{
    if (!w)
        return;
    env_close(w->f);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cond);
    free(w);
}

static void put_header(char *rec, size_t plen)
{
    const char *payload = rec + WAL_HEADER;
    coding_put_u32le(rec, (uint32_t)plen);
    coding_put_u32le(rec + 4, crc32c_mask(crc32c(rec, 4)));
    coding_put_u32le(rec + 8, crc32c_mask(crc32c(payload, plen)));
}

void wal_frame(struct slice payload, struct buf *out)
{
    buf_reserve(out, WAL_HEADER + payload.len);
    char *rec = out->data + out->len;
    memcpy(rec + WAL_HEADER, payload.ptr, payload.len);
    put_header(rec, payload.len);
    out->len += WAL_HEADER + payload.len;
}

int wal_append(struct wal *w, char *rec, size_t len, uint64_t *end)
{
    if (len < WAL_HEADER || len - WAL_HEADER > WAL_MAX_RECORD)
        return ERR_TOOBIG;
    put_header(rec, len - WAL_HEADER);
    pthread_mutex_lock(&w->mu);
    struct env_file *f = w->f;
    uint64_t off = w->written - w->seg_base;
    pthread_mutex_unlock(&w->mu);
    int rc = env_append(f, rec, len);
    if (rc) {
        /* cut a partial record off so later records follow a clean end */
        int trc = env_truncate(f, off);
        if (trc) {
            log_error("wal %s/%06llu.log: cannot cut a failed record: %s", w->dir,
                      (unsigned long long)w->seg, err_name(trc));
            rc = ERR_IO;
        }
        return rc;
    }
    pthread_mutex_lock(&w->mu);
    w->written += len;
    w->bytes += len;
    w->records++;
    *end = w->written;
    pthread_mutex_unlock(&w->mu);
    return ERR_OK;
}

void wal_mark_ready(struct wal *w, uint64_t pos, uint64_t seq)
{
    pthread_mutex_lock(&w->mu);
    if (pos > w->ready_pos)
        w->ready_pos = pos;
    if (seq > w->ready_seq)
        w->ready_seq = seq;
    pthread_mutex_unlock(&w->mu);
}

/* One leader round. mu held on entry and exit. */
static int lead_sync(struct wal *w)
{
    w->syncing = true;
    uint64_t target = w->ready_pos, tseq = w->ready_seq;
    struct env_file *f = w->f;
    pthread_mutex_unlock(&w->mu);
    int rc = env_sync(f);
    pthread_mutex_lock(&w->mu);
    w->syncing = false;
    w->syncs++;
    if (rc) {
        w->sync_error = rc;
    } else {
        if (target > w->synced_pos)
            w->synced_pos = target;
        if (tseq > w->synced_seq)
            w->synced_seq = tseq;
    }
    pthread_cond_broadcast(&w->cond);
    return rc;
}

int wal_sync_to(struct wal *w, uint64_t pos, uint64_t *seq)
{
    int rc = ERR_OK;
    pthread_mutex_lock(&w->mu);
    while (w->synced_pos < pos && !w->sync_error) {
        if (w->syncing)
            pthread_cond_wait(&w->cond, &w->mu);
        else
            lead_sync(w);
    }
    if (w->synced_pos < pos)
        rc = w->sync_error;
    *seq = w->synced_seq;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

int wal_sync_all(struct wal *w)
{
    uint64_t seq;
    pthread_mutex_lock(&w->mu);
    uint64_t pos = w->ready_pos;
    pthread_mutex_unlock(&w->mu);
    return wal_sync_to(w, pos, &seq);
}

int wal_at_path(struct wal *w, bool *out)
{
    pthread_mutex_lock(&w->mu); /* wal_roll swaps the file under it */
    int rc = env_at_path(w->f, out);
    pthread_mutex_unlock(&w->mu);
    return rc;
}

int wal_roll(struct wal *w, uint64_t seg, bool sync_old)
{
    pthread_mutex_lock(&w->mu);
    while (w->syncing)
        pthread_cond_wait(&w->cond, &w->mu);
    int rc = sync_old ? env_sync(w->f) : ERR_OK;
    if (!rc) {
        struct env_file *old = w->f;
        rc = open_seg(w, seg);
        if (!rc) {
            env_close(old);
            w->seg_base = w->written;
            w->synced_pos = w->written;
            if (w->ready_seq > w->synced_seq)
                w->synced_seq = w->ready_seq;
            w->syncs += sync_old;
        } else {
            w->f = old;
        }
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}

uint64_t wal_segment(struct wal *w)
{
    pthread_mutex_lock(&w->mu);
    uint64_t s = w->seg;
    pthread_mutex_unlock(&w->mu);
    return s;
}

void wal_stats(struct wal *w, struct wal_stats *out)
{
    pthread_mutex_lock(&w->mu);
    out->syncs = w->syncs;
    out->bytes = w->bytes;
    out->records = w->records;
    pthread_mutex_unlock(&w->mu);
}

/* --- replay --- */

static bool all_zero(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* Classifies the record at off: 1 good (*plen set), 0 torn tail, or
 * ERR_CORRUPT. */
static int check_record(const char *path, const char *d, size_t size, size_t off, size_t *plen)
{
    size_t left = size - off;
    if (left < WAL_HEADER)
        return 0;
    const char *h = d + off;
    uint32_t len = coding_get_u32le(h);
    if (crc32c_unmask(coding_get_u32le(h + 4)) != crc32c(h, 4)) {
        if (all_zero(h, left))
            return 0; /* preallocated or zero-filled tail */
        return err_corrupt("wal %s: bad record header at offset %zu", path, off);
    }
    if (len > WAL_MAX_RECORD)
        return err_corrupt("wal %s: record length %u at offset %zu", path, len, off);
    if (len > left - WAL_HEADER)
        return 0; /* the last write did not finish */
    if (crc32c_unmask(coding_get_u32le(h + 8)) != crc32c(h + WAL_HEADER, len)) {
        if (off + WAL_HEADER + len == size)
            return 0; /* the last record's bytes did not all reach the disk */
        return err_corrupt("wal %s: checksum mismatch in record at offset %zu", path, off);
    }
    *plen = len;
    return 1;
}

static int cut_tail(struct env *env, const char *path, size_t off, size_t size)
{
    log_warn("wal %s: torn tail at offset %zu (%zu bytes) cut off", path, off, size - off);
    struct env_file *f;
    int rc = env_open_append(env, path, false, &f);
    if (rc)
        return rc;
    rc = env_truncate(f, off);
    if (!rc)
        rc = env_sync(f);
    env_close(f);
    return rc;
}

int wal_replay(struct env *env, const char *path, bool tail_ok,
               int (*fn)(void *ctx, struct slice payload), void *ctx)
{
    char *d = NULL;
    size_t size = 0, off = 0;
    int rc = env_read_all(env, path, (size_t)1 << 40, &d, &size);
    if (rc)
        return rc;
    while (off < size) {
        size_t plen = 0;
        int c = check_record(path, d, size, off, &plen);
        if (c < 0) {
            rc = c;
            break;
        }
        if (c == 0 && !tail_ok) {
            rc = err_corrupt("wal %s: damaged or incomplete record at offset %zu of a sealed "
                             "segment (a newer one follows): nothing was cut",
                             path, off);
            break;
        }
        if (c == 0) {
            rc = cut_tail(env, path, off, size);
            break;
        }
        rc = fn(ctx, slice_make(d + off + WAL_HEADER, plen));
        if (rc) {
            if (rc == ERR_CORRUPT)
                log_error("wal %s: bad batch in record at offset %zu", path, off);
            break;
        }
        off += WAL_HEADER + plen;
    }
    free(d);
    return rc;
}
