/* Range tombstones: DELETE of one host (optionally one event) over a ts
 * range as one record, not one tombstone per row. A database's tombstones
 * are an immutable refcounted set, replaced whole under ttl_mu and
 * persisted whole in DATA/<db>/TOMBSTONES (temp file, fsync, rename) before
 * the delete returns. A tombstone hides every row it covers whose sequence
 * is below its own, from snapshots at or after its sequence. Compaction
 * drops covered rows and marks its outputs (file_meta.tomb_seq); a
 * tombstone goes once every file it overlaps carries its mark and every
 * memtable older than it is flushed. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config/err.h"
#include "config/log.h"
#include "store/coding.h"
#include "store/crc32c.h"
#include "store/key.h"
#include "store/store_int.h"

#define TS_MAGIC 0x5354424cu /* "LBTS" */
#define TS_VERSION 1
#define TS_MAX_BYTES (64u << 20)

struct tomb_set *tomb_set_new(size_t n)
{
    struct tomb_set *t = xcalloc(1, sizeof *t);
    atomic_init(&t->refs, 1);
    t->n = n;
    t->v = xcalloc(n ? n : 1, sizeof *t->v);
    return t;
}

void tomb_set_ref(struct tomb_set *t)
{
    if (t)
        atomic_fetch_add(&t->refs, 1);
}

void tomb_set_unref(struct tomb_set *t)
{
    if (!t || atomic_fetch_sub(&t->refs, 1) != 1)
        return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].host);
        free(t->v[i].event);
    }
    free(t->v);
    free(t);
}

static void tomb_copy(struct range_tomb *dst, const struct range_tomb *src)
{
    *dst = *src;
    dst->host = xmalloc(src->hlen + 1);
    memcpy(dst->host, src->host, src->hlen + 1);
    dst->event = xmalloc(src->elen + 1);
    memcpy(dst->event, src->event, src->elen + 1);
}

uint64_t tomb_set_max_seq(const struct tomb_set *t)
{
    uint64_t m = 0;
    for (size_t i = 0; t && i < t->n; i++)
        if (t->v[i].seq > m)
            m = t->v[i].seq;
    return m;
}

static bool names_match(const struct range_tomb *r, struct slice host, struct slice event)
{
    return r->hlen == host.len && memcmp(r->host, host.ptr, host.len) == 0 &&
           (!r->has_event || (r->elen == event.len && memcmp(r->event, event.ptr, event.len) == 0));
}

bool tomb_covers(const struct tomb_set *t, struct slice host, struct slice event, int64_t ts,
                 uint64_t row_seq, uint64_t snap_seq)
{
    for (size_t i = 0; t && i < t->n; i++) {
        const struct range_tomb *r = &t->v[i];
        if (r->seq <= snap_seq && row_seq < r->seq && ts >= r->lo && ts <= r->hi &&
            names_match(r, host, event))
            return true;
    }
    return false;
}

bool tomb_matches(const struct tomb_set *t, struct slice host, struct slice event, int64_t ts)
{
    for (size_t i = 0; t && i < t->n; i++) {
        const struct range_tomb *r = &t->v[i];
        if (ts >= r->lo && ts <= r->hi && names_match(r, host, event))
            return true;
    }
    return false;
}

struct tomb_set *db_tombs(struct store_db *db)
{
    pthread_mutex_lock(&db->ttl_mu);
    struct tomb_set *t = db->tombs;
    tomb_set_ref(t);
    pthread_mutex_unlock(&db->ttl_mu);
    return t;
}

/* --- the TOMBSTONES file --- */

static int write_tombs(struct store_db *db, const struct tomb_set *t)
{
    struct buf b = BUF_INIT;
    char h[32];
    coding_put_u32le(h, TS_MAGIC);
    coding_put_u32le(h + 4, TS_VERSION);
    coding_put_u32le(h + 8, (uint32_t)t->n);
    buf_append(&b, h, 12);
    for (size_t i = 0; i < t->n; i++) {
        const struct range_tomb *r = &t->v[i];
        coding_put_u64le(h, r->seq);
        coding_put_u64le(h + 8, (uint64_t)r->lo);
        coding_put_u64le(h + 16, (uint64_t)r->hi);
        h[24] = r->has_event ? 1 : 0;
        /* 25..26 host length, 27..28 event length (u16le each) */
        coding_put_u32le(h + 25, (uint32_t)r->hlen | (uint32_t)r->elen << 16);
        buf_append(&b, h, 29);
        buf_append(&b, r->host, r->hlen);
        buf_append(&b, r->event, r->elen);
    }
    coding_put_u32le(h, crc32c_mask(crc32c(b.data, b.len)));
    buf_append(&b, h, 4);
    int rc = env_write_atomic(db->store->env, db->dir, "TOMBSTONES", b.data, b.len, NULL);
    buf_destroy(&b);
    return rc;
}

int db_read_tombs(struct store_db *db)
{
    struct buf path = BUF_INIT;
    char *d = NULL;
    size_t len = 0;
    buf_printf(&path, "%s/TOMBSTONES", db->dir);
    int rc = env_read_all(db->store->env, path.data, TS_MAX_BYTES, &d, &len);
    if (rc == ERR_NOTFOUND) {
        db->tombs = tomb_set_new(0);
        buf_destroy(&path);
        return ERR_OK;
    }
    if (!rc && (len < 16 || coding_get_u32le(d) != TS_MAGIC ||
                crc32c_unmask(coding_get_u32le(d + len - 4)) != crc32c(d, len - 4) ||
                coding_get_u32le(d + 4) != TS_VERSION))
        rc = err_corrupt("tombstones %s are damaged", path.data);
    struct tomb_set *t = NULL;
    if (!rc) {
        uint32_t n = coding_get_u32le(d + 8);
        size_t off = 12, end = len - 4;
        t = tomb_set_new(0);
        t->v = xrealloc(t->v, (n ? n : 1) * sizeof *t->v);
        for (uint32_t i = 0; i < n && !rc; i++) {
            if (end - off < 29) {
                rc = err_corrupt("tombstones %s: record %u truncated", path.data, i);
                break;
            }
            const char *p = d + off;
            uint32_t lens = coding_get_u32le(p + 25);
            size_t hl = lens & 0xffff, el = lens >> 16;
            if (end - off - 29 < hl + el) {
                rc = err_corrupt("tombstones %s: record %u truncated", path.data, i);
                break;
            }
            struct range_tomb *r = &t->v[t->n++];
            memset(r, 0, sizeof *r);
            r->seq = coding_get_u64le(p);
            r->lo = (int64_t)coding_get_u64le(p + 8);
            r->hi = (int64_t)coding_get_u64le(p + 16);
            r->has_event = p[24] != 0;
            r->hlen = hl;
            r->elen = el;
            r->host = xmalloc(hl + 1);
            memcpy(r->host, p + 29, hl);
            r->host[hl] = 0;
            r->event = xmalloc(el + 1);
            memcpy(r->event, p + 29 + hl, el);
            r->event[el] = 0;
            r->gen = 0; /* set by the caller: older rows may be in any memtable */
            off += 29 + hl + el;
        }
        if (!rc && off != end)
            rc = err_corrupt("tombstones %s: %zu stray bytes", path.data, end - off);
    }
    if (rc)
        tomb_set_unref(t);
    else
        db->tombs = t;
    free(d);
    buf_destroy(&path);
    return rc;
}

/* --- adding and purging --- */

int store_db_delete_range(struct store_db *db, struct slice host, const struct slice *event,
                          int64_t lo, int64_t hi)
{
    if (host.len > KEY_MAX_NAME || memchr(host.ptr, 0, host.len) ||
        (event && (event->len > KEY_MAX_NAME || memchr(event->ptr, 0, event->len))) || lo > hi)
        return ERR_INVAL;
    pthread_mutex_lock(&db->write_mu);
    int rc = atomic_load(&db->bg_error);
    struct tomb_set *cur = db_tombs(db), *nt = NULL;
    if (!rc && cur->n >= STORE_MAX_TOMBSTONES)
        rc = ERR_BUSY; /* compaction purges them; retry later */
    /* rows acknowledged before the delete must be durable before a reader
     * can see the delete's sequence (visible_seq jumps past them) */
    if (!rc && db->store->opts.wal_sync == STORE_SYNC_ALWAYS)
        rc = wal_sync_all(db->wal);
    if (!rc) {
        nt = tomb_set_new(cur->n + 1);
        for (size_t i = 0; i < cur->n; i++)
            tomb_copy(&nt->v[i], &cur->v[i]);
        struct range_tomb *r = &nt->v[cur->n];
        r->seq = db->last_seq + 1;
        r->lo = lo;
        r->hi = hi;
        r->hlen = host.len;
        r->host = xmalloc(host.len + 1);
        memcpy(r->host, host.ptr, host.len);
        r->host[host.len] = 0;
        r->has_event = event != NULL;
        r->elen = event ? event->len : 0;
        r->event = xmalloc(r->elen + 1);
        if (event)
            memcpy(r->event, event->ptr, event->len);
        r->event[r->elen] = 0;
        r->gen = db->gen;
        rc = write_tombs(db, nt);
        if (rc == ERR_NOSPC)
            atomic_fetch_add(&db->m.nospc, 1);
    }
    if (!rc) {
        db->last_seq++;
        pthread_mutex_lock(&db->ttl_mu);
        struct tomb_set *old = db->tombs;
        db->tombs = nt;
        nt = NULL;
        pthread_mutex_unlock(&db->ttl_mu);
        tomb_set_unref(old);
        atomic_store(&db->visible_seq, db->last_seq);
        atomic_fetch_add(&db->m.range_deletes, 1);
    }
    pthread_mutex_unlock(&db->write_mu);
    tomb_set_unref(nt);
    tomb_set_unref(cur);
    if (!rc)
        store_bg_signal(db->store);
    return rc;
}

/* Whether r may still cover a row of p: a non-empty memtable of its
 * generation or older is not flushed, or an overlapping file has not been
 * merged past it. */
static bool tomb_live_in(struct part *p, const struct range_tomb *r)
{
    bool live = false;
    pthread_mutex_lock(&p->mu);
    struct version *v = p->ver;
    version_ref(v);
    live = mt_gen(p->mem) <= r->gen && mt_count(p->mem) > 0;
    for (size_t i = 0; i < p->nimm && !live; i++)
        live = mt_gen(p->imm[i]) <= r->gen && mt_count(p->imm[i]) > 0;
    pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < v->n && !live; i++) {
        const struct file_meta *f = v->files[i];
        live = f->props.max_ts >= r->lo && f->props.min_ts <= r->hi && f->tomb_seq < r->seq;
    }
    version_unref(v);
    return live;
}

void db_purge_tombs(struct store_db *db)
{
    pthread_mutex_lock(&db->write_mu);
    struct tomb_set *cur = db_tombs(db);
    bool *gone = xcalloc(cur->n + 1, sizeof *gone);
    size_t ngone = 0;
    for (size_t i = 0; i < cur->n; i++) {
        bool live = false;
        for (uint32_t k = 0; k < db->nparts && !live; k++)
            live = tomb_live_in(&db->parts[k], &cur->v[i]);
        if (!live) {
            gone[i] = true;
            ngone++;
        }
    }
    if (ngone) {
        struct tomb_set *nt = tomb_set_new(cur->n - ngone);
        for (size_t i = 0, k = 0; i < cur->n; i++)
            if (!gone[i])
                tomb_copy(&nt->v[k++], &cur->v[i]);
        if (write_tombs(db, nt) == ERR_OK) {
            pthread_mutex_lock(&db->ttl_mu);
            struct tomb_set *old = db->tombs;
            db->tombs = nt;
            nt = NULL;
            pthread_mutex_unlock(&db->ttl_mu);
            tomb_set_unref(old);
            atomic_fetch_add(&db->m.range_tombs_purged, ngone);
            log_info("database %s: %zu range tombstones purged", db->name, ngone);
        }
        tomb_set_unref(nt);
    }
    free(gone);
    tomb_set_unref(cur);
    pthread_mutex_unlock(&db->write_mu);
}

size_t store_db_range_tombstones(struct store_db *db)
{
    struct tomb_set *t = db_tombs(db);
    size_t n = t->n;
    tomb_set_unref(t);
    return n;
}
