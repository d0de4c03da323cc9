/* The store glue of ingest: a sink that collects rows in a store batch and
 * applies it with store_write. Kept apart from ingest.c so that the parser
 * and ingest tests link without the store. */
#include <stdlib.h>

#include "base/buf.h"
#include "base/err.h"
#include "ingest/ingest.h"
#include "store/store.h"

struct store_sink {
    struct store_db *db; /* borrowed */
    struct batch *b;
    bool is_no_sync;
};

static void sink_put(void *arg, const struct ingest_row *r)
{
    struct store_sink *s = arg;
    batch_put_id(s->b, r->ts, r->host, r->event, r->id, r->value, r->merge);
}

static int sink_write(void *arg)
{
    struct store_sink *s = arg;
    int rc = s->is_no_sync ? store_write_nosync(s->db, s->b) : store_write(s->db, s->b);
    batch_clear(s->b);
    return rc;
}

static void sink_destroy(void *arg)
{
    struct store_sink *s = arg;
    batch_free(s->b);
    free(s);
}

int ingest_new(const struct ingest_params *params, const struct event_limits *lim,
               struct store_db *db, struct ingest **out)
{
    if (ingest_params_check(params, lim))
        return ERR_INVAL;
    struct store_sink *s = xmalloc(sizeof *s);
    s->db = db;
    s->b = batch_new();
    s->is_no_sync = params->is_no_sync;
    /* rows take about the bytes of their lines: reserve once, up to a
     * whole batch, instead of growing by copies */
    size_t bytes = params->batch_bytes ? params->batch_bytes : INGEST_BATCH_BYTES;
    size_t hint = params->body_hint + params->body_hint / 4;
    batch_reserve(s->b, (hint < bytes ? hint : bytes) + 4096);
    struct ingest_sink sink = {sink_put, sink_write, sink_destroy, s};
    int rc = ingest_new_sink(params, lim, &sink, out);
    if (rc)
        sink_destroy(s);
    return rc;
}
