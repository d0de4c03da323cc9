/* The subscription to committed batches (store.h, "committed batches"):
 * the hook store_write calls once a batch is visible, and the reading of
 * a batch payload's rows for the subscriber, so that nothing above the
 * store learns the WAL record's layout. */
#include "base/err.h"
#include "store/ikey.h"
#include "store/store_int.h"

void store_set_commit_hook(struct store *s, store_commit_fn fn, void *arg)
{
    /* arg first: a writer that sees fn sees its arg */
    atomic_store(&s->commit_arg, arg);
    atomic_store(&s->commit_fn, fn);
}

uint32_t store_commit_count(struct slice payload)
{
    struct batch_reader r;
    uint64_t seq;
    uint32_t count = 0;
    if (batch_reader_init(&r, payload, &seq, &count) != ERR_OK)
        count = 0;
    batch_reader_done(&r);
    return count;
}

int store_commit_rows(struct slice payload, int (*fn)(void *arg, const struct store_row *row),
                      void *arg)
{
    struct batch_reader r;
    struct batch_entry e;
    uint64_t seq;
    uint32_t count;
    int rc = batch_reader_init(&r, payload, &seq, &count);
    while (rc == ERR_OK && (rc = batch_reader_next(&r, &e)) == 1) {
        struct store_row row = {.seq = seq++,
                                .is_delete = e.kind == IKEY_DEL,
                                .ts = e.ts,
                                .host = e.host,
                                .event = e.event,
                                .id = e.id,
                                .value = e.value};
        rc = fn(arg, &row);
    }
    batch_reader_done(&r);
    return rc == 1 ? ERR_OK : rc;
}
