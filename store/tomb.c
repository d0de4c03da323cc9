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

#include "base/coding.h"
#include "base/crc32c.h"
#include "base/err.h"
#include "base/log.h"
#include "model/key.h"
#include "store/tomb.h"

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

void tomb_copy(struct range_tomb *dst, const struct range_tomb *src)
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

/* --- the TOMBSTONES file --- */

/* --- adding and purging --- */
