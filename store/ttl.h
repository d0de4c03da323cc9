/* Per-event TTL cut-offs (ttl.c): pure values, copied whole into each
 * snapshot and iterator. The rules they come from are a database's durable
 * settings (settings.c). */
#ifndef LB_STORE_TTL_H
#define LB_STORE_TTL_H

#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"

#define STORE_MAX_EVENT_TTLS 256

/* A per-event cut-off: rows of event older than cutoff are hidden. The
 * database's own rule list (store_db.ettl) reuses it with the TTL in
 * cutoff. event is NUL-terminated, len bytes. */
struct event_cut {
    char *event;
    size_t len;
    int64_t cutoff;
};

struct event_cuts {
    size_t n;
    struct event_cut *v;
    uint64_t gen; /* the rules' generation (store_db.ettl_gen) */
};

/* ttl.c */
void event_cuts_destroy(struct event_cuts *c);
void event_cuts_copy(struct event_cuts *dst, const struct event_cuts *src);
/* max(base, the cut-off of event) */
int64_t event_cuts_get(const struct event_cuts *c, struct slice event, int64_t base);
/* max(base, every cut-off) */
int64_t event_cuts_max(const struct event_cuts *c, int64_t base);
/* max(base, the least aggressive cut-off): every rule has cut below it */
int64_t event_cuts_min(const struct event_cuts *c, int64_t base);

#endif
