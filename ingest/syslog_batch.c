/* Syslog rows for the store: a log entry is identified by its whole content
 * (DESIGN.md section 1), so its tags and fields form the row's id and the
 * value is empty, exactly as ingest.c encodes raw and JSON lines; an exact
 * duplicate (a sender that resends) is one row. */
#include <stdlib.h>

#include "base/err.h"
#include "ingest/syslog.h"
#include "model/record.h"
#include "store/store.h"

struct syslog_batch {
    struct batch *b;
    struct buf id;
    size_t rows, bytes;
};

struct syslog_batch *syslog_batch_new(void)
{
    struct syslog_batch *sb = xcalloc(1, sizeof *sb);
    sb->b = batch_new();
    buf_init(&sb->id);
    return sb;
}

void syslog_batch_free(struct syslog_batch *sb)
{
    if (!sb)
        return;
    batch_free(sb->b);
    buf_destroy(&sb->id);
    free(sb);
}

void syslog_batch_add(struct syslog_batch *sb, const struct event *ev)
{
    buf_reset(&sb->id);
    rec_encode(&sb->id, ev->tags, ev->ntags, ev->fields, ev->nfields);
    struct slice id = slice_make(sb->id.data, sb->id.len);
    batch_put_id(sb->b, ev->ts, ev->host, ev->name, id, slice_make(NULL, 0), false);
    sb->rows++;
    sb->bytes += id.len + ev->host.len + ev->name.len + 32;
}

size_t syslog_batch_rows(const struct syslog_batch *sb)
{
    return sb->rows;
}

size_t syslog_batch_bytes(const struct syslog_batch *sb)
{
    return sb->bytes;
}

void syslog_batch_clear(struct syslog_batch *sb)
{
    batch_clear(sb->b);
    sb->rows = 0;
    sb->bytes = 0;
}

int syslog_batch_write(struct syslog_batch *sb, struct store_db *db)
{
    if (!sb->rows)
        return ERR_OK;
    int rc = store_write(db, sb->b);
    if (rc == ERR_OK)
        syslog_batch_clear(sb);
    return rc;
}
