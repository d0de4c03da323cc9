/* Per-event TTL overrides of a database and the cut-offs derived from
 * them. An override only shortens retention: a row is hidden (and dropped
 * by compaction) once it is older than the database TTL or its event's
 * TTL, whichever cuts first. The rule list is small (STORE_MAX_EVENT_TTLS)
 * and copied whole into each snapshot and iterator as cut-offs. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "model/key.h"
#include "store/ttl.h"

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
