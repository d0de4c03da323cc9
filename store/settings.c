/* The durable settings of a database, each file replaced whole and
 * atomically (FORMAT.md): META (bucket count, ts order, TTL, per-event TTL
 * rules, disk budget) and TOMBSTONES (range deletes, their purge). The sets
 * they hold are pure values of ttl.c (event cut-offs) and tomb.c
 * (tombstone sets). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/coding.h"
#include "base/crc32c.h"
#include "base/err.h"
#include "base/log.h"
#include "model/key.h"
#include "store/store_int.h"

#define META_MAGIC 0x42444c4cu /* "LLDB" */
#define META_V1 1              /* fixed 28 bytes, no event TTLs */
#define META_V2 2              /* + event TTL rules */
#define META_V1_SIZE 28
#define META_V2_HEAD 36
#define META_MAX (META_V2_HEAD + STORE_MAX_EVENT_TTLS * (10 + KEY_MAX_NAME) + 4)

#define TS_MAGIC 0x5354424cu /* "LBTS" */
#define TS_VERSION 1
#define TS_MAX_BYTES (64u << 20)

/* --- META --- */

int db_write_meta(struct store_db *db)
{
    struct buf b = BUF_INIT;
    pthread_mutex_lock(&db->ttl_mu);
    /* version 1 while it suffices: older binaries read it */
    bool v2 = db->nettl > 0 || atomic_load(&db->max_disk_bytes) > 0;
    buf_reserve(&b, META_V2_HEAD + 4);
    memset(b.data, 0, META_V2_HEAD);
    coding_put_u32le(b.data, META_MAGIC);
    coding_put_u32le(b.data + 4, v2 ? META_V2 : META_V1);
    coding_put_u32le(b.data + 8, db->buckets);
    b.data[12] = db->desc ? 1 : 0;
    coding_put_u64le(b.data + 16, (uint64_t)atomic_load(&db->ttl_ns));
    b.len = 24;
    if (v2) {
        coding_put_u32le(b.data + 24, (uint32_t)db->nettl);
        coding_put_u64le(b.data + 28, (uint64_t)atomic_load(&db->max_disk_bytes));
        b.len = META_V2_HEAD;
        for (size_t i = 0; i < db->nettl; i++) {
            char h[8];
            coding_put_u32le(h, (uint32_t)db->ettl[i].len);
            buf_append(&b, h, 2);
            buf_append(&b, db->ettl[i].event, db->ettl[i].len);
            coding_put_u64le(h, (uint64_t)db->ettl[i].cutoff);
            buf_append(&b, h, 8);
        }
    }
    pthread_mutex_unlock(&db->ttl_mu);
    char c[4];
    coding_put_u32le(c, crc32c_mask(crc32c(b.data, b.len)));
    buf_append(&b, c, 4);
    int rc = env_write_atomic(db->store->env, db->dir, "META", b.data, b.len, NULL);
    buf_destroy(&b);
    return rc;
}

/* Event TTL rules of a version 2 file: d[0..len) after the fixed head. */
static int read_rules(struct store_db *db, const char *path, const char *d, size_t len)
{
    uint32_t n = coding_get_u32le(d + 24);
    size_t off = META_V2_HEAD;
    if (n > STORE_MAX_EVENT_TTLS)
        return err_corrupt("database metadata %s: %u event TTLs", path, n);
    db->ettl = xcalloc(n ? n : 1, sizeof *db->ettl);
    for (uint32_t i = 0; i < n; i++) {
        if (len - off < 10)
            return err_corrupt("database metadata %s: event TTL %u truncated", path, i);
        size_t el = (size_t)(unsigned char)d[off] | (size_t)(unsigned char)d[off + 1] << 8;
        if (el > KEY_MAX_NAME || len - off - 10 < el)
            return err_corrupt("database metadata %s: event TTL %u truncated", path, i);
        struct event_cut *r = &db->ettl[db->nettl++];
        r->len = el;
        r->event = xmalloc(el + 1);
        memcpy(r->event, d + off + 2, el);
        r->event[el] = 0;
        r->cutoff = (int64_t)coding_get_u64le(d + off + 2 + el);
        off += 10 + el;
    }
    if (off != len)
        return err_corrupt("database metadata %s: %zu stray bytes", path, len - off);
    return ERR_OK;
}

int db_read_meta(struct store_db *db)
{
    struct buf path = BUF_INIT;
    char *m = NULL;
    size_t len;
    buf_printf(&path, "%s/META", db->dir);
    int rc = env_read_all(db->store->env, path.data, META_MAX, &m, &len);
    uint32_t version = 0;
    if (rc == ERR_OK) {
        version = len >= 8 ? coding_get_u32le(m + 4) : 0;
        bool size_ok = version == META_V1 ? len == META_V1_SIZE : len >= META_V2_HEAD + 4;
        if (len < 8 || coding_get_u32le(m) != META_MAGIC || !size_ok ||
            crc32c_unmask(coding_get_u32le(m + len - 4)) != crc32c(m, len - 4) ||
            (version != META_V1 && version != META_V2))
            rc = err_corrupt("database metadata %s is damaged", path.data);
    }
    if (rc == ERR_OK) {
        db->buckets = coding_get_u32le(m + 8);
        db->desc = m[12] != 0;
        atomic_init(&db->ttl_ns, (long long)coding_get_u64le(m + 16));
        if (db->buckets < 1 || db->buckets > 1024)
            rc = err_corrupt("database metadata %s: %u buckets", path.data, db->buckets);
    }
    if (rc == ERR_OK && version == META_V2) {
        atomic_init(&db->max_disk_bytes, (unsigned long long)coding_get_u64le(m + 28));
        rc = read_rules(db, path.data, m, len - 4);
    }
    free(m);
    buf_destroy(&path);
    return rc;
}

uint64_t store_db_max_disk_bytes(struct store_db *db)
{
    return atomic_load(&db->max_disk_bytes);
}

int store_db_set_max_disk_bytes(struct store_db *db, uint64_t bytes)
{
    pthread_mutex_lock(&db->write_mu);
    unsigned long long old = atomic_exchange(&db->max_disk_bytes, bytes);
    int rc = db_write_meta(db);
    if (rc)
        atomic_store(&db->max_disk_bytes, old);
    pthread_mutex_unlock(&db->write_mu);
    return rc;
}

int store_db_set_ttl(struct store_db *db, int64_t ttl_ns)
{
    if (ttl_ns < 0)
        return ERR_INVAL;
    pthread_mutex_lock(&db->write_mu);
    int64_t old = atomic_exchange(&db->ttl_ns, ttl_ns);
    int rc = db_write_meta(db);
    if (rc)
        atomic_store(&db->ttl_ns, old);
    pthread_mutex_unlock(&db->write_mu);
    return rc;
}

/* --- per-event TTL rules --- */

void db_event_cuts(struct store_db *db, int64_t now, struct event_cuts *out)
{
    pthread_mutex_lock(&db->ttl_mu);
    out->gen = db->ettl_gen;
    out->n = db->nettl;
    out->v = db->nettl ? xcalloc(db->nettl, sizeof *out->v) : NULL;
    for (size_t i = 0; i < db->nettl; i++) {
        const struct event_cut *r = &db->ettl[i];
        out->v[i].len = r->len;
        out->v[i].event = xmalloc(r->len + 1);
        memcpy(out->v[i].event, r->event, r->len + 1);
        out->v[i].cutoff = now - r->cutoff; /* rules keep the ttl in cutoff */
    }
    pthread_mutex_unlock(&db->ttl_mu);
}

int store_db_set_event_ttl(struct store_db *db, struct slice event, int64_t ttl_ns)
{
    if (ttl_ns < 0 || event.len > KEY_MAX_NAME || memchr(event.ptr, 0, event.len))
        return ERR_INVAL;
    pthread_mutex_lock(&db->write_mu);
    pthread_mutex_lock(&db->ttl_mu);
    size_t i;
    for (i = 0; i < db->nettl; i++)
        if (db->ettl[i].len == event.len && memcmp(db->ettl[i].event, event.ptr, event.len) == 0)
            break;
    int rc = ERR_OK;
    struct event_cut saved = {0};
    bool existed = i < db->nettl;
    if (existed)
        saved = db->ettl[i];
    if (ttl_ns == 0 && existed) {
        memmove(&db->ettl[i], &db->ettl[i + 1], (db->nettl - i - 1) * sizeof *db->ettl);
        db->nettl--;
    } else if (ttl_ns > 0 && existed) {
        db->ettl[i].cutoff = ttl_ns;
        db->ettl_gen++;
    } else if (ttl_ns > 0) {
        if (db->nettl >= STORE_MAX_EVENT_TTLS) {
            rc = ERR_TOOBIG;
        } else {
            db->ettl = xrealloc(db->ettl, (db->nettl + 1) * sizeof *db->ettl);
            struct event_cut *r = &db->ettl[db->nettl++];
            r->len = event.len;
            r->event = xmalloc(event.len + 1);
            memcpy(r->event, event.ptr, event.len);
            r->event[event.len] = 0;
            r->cutoff = ttl_ns;
            db->ettl_gen++;
        }
    }
    pthread_mutex_unlock(&db->ttl_mu);
    if (!rc && (ttl_ns > 0 || existed)) {
        rc = db_write_meta(db);
        if (rc) { /* put the old rule back */
            pthread_mutex_lock(&db->ttl_mu);
            if (ttl_ns == 0) {
                db->ettl = xrealloc(db->ettl, (db->nettl + 1) * sizeof *db->ettl);
                memmove(&db->ettl[i + 1], &db->ettl[i], (db->nettl - i) * sizeof *db->ettl);
                db->ettl[i] = saved;
                db->nettl++;
                saved.event = NULL;
            } else if (existed) {
                db->ettl[i].cutoff = saved.cutoff;
                saved.event = NULL;
            } else {
                free(db->ettl[--db->nettl].event);
            }
            pthread_mutex_unlock(&db->ttl_mu);
        }
    }
    if (!rc && ttl_ns == 0 && existed)
        free(saved.event);
    pthread_mutex_unlock(&db->write_mu);
    return rc;
}

size_t store_db_event_ttls(struct store_db *db, struct store_event_ttl **out)
{
    pthread_mutex_lock(&db->ttl_mu);
    size_t n = db->nettl;
    struct store_event_ttl *v = xcalloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        v[i].event = xmalloc(db->ettl[i].len + 1);
        memcpy(v[i].event, db->ettl[i].event, db->ettl[i].len + 1);
        v[i].ttl_ns = db->ettl[i].cutoff;
    }
    pthread_mutex_unlock(&db->ttl_mu);
    *out = v;
    return n;
}

void store_event_ttls_free(struct store_event_ttl *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i].event);
    free(v);
}

/* --- TOMBSTONES --- */

struct tomb_set *db_tombs(struct store_db *db)
{
    pthread_mutex_lock(&db->ttl_mu);
    struct tomb_set *t = db->tombs;
    tomb_set_ref(t);
    pthread_mutex_unlock(&db->ttl_mu);
    return t;
}

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

/* Publishes nt (written to TOMBSTONES already) as the current set; takes
 * its reference. */
static void install_tombs(struct store_db *db, struct tomb_set *nt)
{
    pthread_mutex_lock(&db->ttl_mu);
    struct tomb_set *old = db->tombs;
    db->tombs = nt;
    pthread_mutex_unlock(&db->ttl_mu);
    tomb_set_unref(old);
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

int db_add_range_tomb(struct store_db *db, struct slice host, const struct slice *event, int64_t lo,
                      int64_t hi)
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
        install_tombs(db, nt);
        nt = NULL;
        atomic_store(&db->visible_seq, db->last_seq);
        atomic_fetch_add(&db->m.range_deletes, 1);
    }
    pthread_mutex_unlock(&db->write_mu);
    tomb_set_unref(nt);
    tomb_set_unref(cur);
    if (!rc)
        store_wake(db->store);
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
            install_tombs(db, nt);
            nt = NULL;
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
