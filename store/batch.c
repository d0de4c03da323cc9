/* Write batches: appended as their WAL payload so store_write hands the
 * bytes to the log without copying or re-encoding them. */
#include "store/batch.h"

#include <stdlib.h>

#include "config/err.h"
#include "store/coding.h"
#include "store/ikey.h"
#include "store/key.h"
#include "store/store.h"

struct batch *batch_new(void)
{
    struct batch *b = xcalloc(1, sizeof *b);
    buf_init(&b->rep);
    batch_clear(b);
    return b;
}

void batch_free(struct batch *b)
{
    if (!b)
        return;
    buf_destroy(&b->rep);
    free(b);
}

void batch_clear(struct batch *b)
{
    buf_reset(&b->rep);
    buf_reserve(&b->rep, BATCH_FRAME + BATCH_HEADER);
    memset(b->rep.data, 0, BATCH_FRAME + BATCH_HEADER);
    b->rep.len = BATCH_FRAME + BATCH_HEADER;
    b->count = 0;
    b->bad = false;
}

void batch_reserve(struct batch *b, size_t bytes)
{
    buf_reserve(&b->rep, bytes);
}

size_t batch_count(const struct batch *b)
{
    return b->count;
}

size_t batch_bytes(const struct batch *b)
{
    return b->rep.len;
}

static void add(struct batch *b, int kind, int64_t ts, struct slice host, struct slice event,
                const struct slice *value)
{
    if (host.len > KEY_MAX_NAME || event.len > KEY_MAX_NAME || (host.len && memchr(host.ptr, 0, host.len)) ||
        (event.len && memchr(event.ptr, 0, event.len))) {
        b->bad = true;
        return;
    }
    size_t need = 1 + 8 + 20 + host.len + event.len + (value ? 10 + value->len : 0);
    buf_reserve(&b->rep, need);
    char *p = b->rep.data + b->rep.len;
    *p++ = (char)kind;
    coding_put_u64le(p, (uint64_t)ts);
    p += 8;
    p += coding_varint_enc(p, host.len);
    memcpy(p, host.ptr, host.len);
    p += host.len;
    p += coding_varint_enc(p, event.len);
    memcpy(p, event.ptr, event.len);
    p += event.len;
    if (value) {
        p += coding_varint_enc(p, value->len);
        if (value->len)
            memcpy(p, value->ptr, value->len);
        p += value->len;
    }
    b->rep.len = (size_t)(p - b->rep.data);
    b->count++;
    coding_put_u32le(b->rep.data + BATCH_FRAME + 8, (uint32_t)b->count);
}

void batch_put(struct batch *b, int64_t ts, struct slice host, struct slice event,
               struct slice value)
{
    add(b, IKEY_PUT, ts, host, event, &value);
}

void batch_delete(struct batch *b, int64_t ts, struct slice host, struct slice event)
{
    add(b, IKEY_DEL, ts, host, event, NULL);
}

struct slice batch_payload(const struct batch *b)
{
    return slice_make(b->rep.data + BATCH_FRAME, b->rep.len - BATCH_FRAME);
}

void batch_set_seq(struct batch *b, uint64_t seq)
{
    coding_put_u64le(b->rep.data + BATCH_FRAME, seq);
}

int batch_reader_init(struct batch_reader *r, struct slice payload, uint64_t *seq,
                      uint32_t *count)
{
    if (payload.len < BATCH_HEADER)
        return err_corrupt("batch of %zu bytes", payload.len);
    *seq = coding_get_u64le(payload.ptr);
    *count = coding_get_u32le(payload.ptr + 8);
    r->p = payload.ptr + BATCH_HEADER;
    r->end = payload.ptr + payload.len;
    r->left = *count;
    return ERR_OK;
}

static const char *get_name(const char *p, const char *end, struct slice *out)
{
    uint64_t n;
    p = coding_varint_dec(p, end, &n);
    if (!p || n > (uint64_t)(end - p))
        return NULL;
    *out = slice_make(p, (size_t)n);
    return p + n;
}

int batch_reader_next(struct batch_reader *r, struct batch_entry *e)
{
    if (r->left == 0)
        return r->p == r->end ? 0 : err_corrupt("batch has trailing bytes");
    const char *p = r->p, *end = r->end;
    if (end - p < 9)
        return err_corrupt("batch entry truncated");
    e->kind = *p;
    e->ts = (int64_t)coding_get_u64le(p + 1);
    p = get_name(p + 9, end, &e->host);
    if (p)
        p = get_name(p, end, &e->event);
    e->value = slice_make("", 0);
    if (p && e->kind == IKEY_PUT)
        p = get_name(p, end, &e->value);
    if (!p || (e->kind != IKEY_PUT && e->kind != IKEY_DEL) || e->host.len > KEY_MAX_NAME ||
        e->event.len > KEY_MAX_NAME || (e->host.len && memchr(e->host.ptr, 0, e->host.len)) ||
        (e->event.len && memchr(e->event.ptr, 0, e->event.len)))
        return err_corrupt("bad batch entry");
    r->p = p;
    r->left--;
    return 1;
}
