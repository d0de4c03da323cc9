/* Per-event TTL overrides of a database and the cut-offs derived from
 * them. An override only shortens retention: a row is hidden (and dropped
 * by compaction) once it is older than the database TTL or its event's
 * TTL, whichever cuts first. The rule list is small (STORE_MAX_EVENT_TTLS)
 * and copied whole into each snapshot and iterator as cut-offs. */
#include <stdlib.h>
#include <string.h>

#include "config/err.h"
#include "store/key.h"
#include "store/store_int.h"

void event_cuts_destroy(struct event_cuts *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].event);
    free(c->v);
    c->v = NULL;
    c->n = 0;
}

void event_cuts_copy(struct event_cuts *dst, const struct event_cuts *src)
{
    dst->n = src->n;
    dst->gen = src->gen;
    dst->v = src->n ? xcalloc(src->n, sizeof *dst->v) : NULL;
    for (size_t i = 0; i < src->n; i++) {
        dst->v[i] = src->v[i];
        dst->v[i].event = xmalloc(src->v[i].len + 1);
        memcpy(dst->v[i].event, src->v[i].event, src->v[i].len + 1);
    }
}

int64_t event_cuts_get(const struct event_cuts *c, struct slice event, int64_t base)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i].len == event.len && memcmp(c->v[i].event, event.ptr, event.len) == 0)
            return c->v[i].cutoff > base ? c->v[i].cutoff : base;
    return base;
}

int64_t event_cuts_max(const struct event_cuts *c, int64_t base)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i].cutoff > base)
            base = c->v[i].cutoff;
    return base;
}

int64_t event_cuts_min(const struct event_cuts *c, int64_t base)
{
    int64_t m = INT64_MAX;
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i].cutoff < m)
            m = c->v[i].cutoff;
    return c->n && m > base ? m : base;
}

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
