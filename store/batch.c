/* Write batches: appended as their WAL payload so store_write hands the
 * bytes to the log without copying or re-encoding them. A host or event
 * name is written in full once per batch and referred to by its id after
 * that, through a small hash table of the names written. */
#include "store/batch.h"

#include <stdlib.h>

#include "base/coding.h"
#include "base/err.h"
#include "model/key.h"
#include "store/ikey.h"
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
    free(b->names);
    free(b);
}

#define NAME_FREE UINT32_MAX
#define ENTRY_COMPACT 0x80
#define ENTRY_HOST_REF 0x02
#define ENTRY_EVENT_REF 0x04
#define ENTRY_ID 0x08       /* varint idlen | id follow the event */
#define ENTRY_MERGE 0x10    /* a put of kind IKEY_MERGE */
#define ENTRY_ROW_ONLY 0x20 /* a delete that leaves the host index entry */
#define ENTRY_FLAGS                                                                                \
    (ENTRY_COMPACT | ENTRY_HOST_REF | ENTRY_EVENT_REF | ENTRY_ID | ENTRY_MERGE | ENTRY_ROW_ONLY | 1)

static void names_clear(struct batch *b)
{
    for (uint32_t i = 0; b->nnames && i < b->names_cap; i++)
        b->names[i].len = NAME_FREE;
    b->nnames = 0;
}

void batch_clear(struct batch *b)
{
    buf_reset(&b->rep);
    buf_reserve(&b->rep, BATCH_FRAME + BATCH_HEADER);
    memset(b->rep.data, 0, BATCH_FRAME + BATCH_HEADER);
    b->rep.len = BATCH_FRAME + BATCH_HEADER;
    b->count = 0;
    b->bad = false;
    b->last_ts = 0;
    names_clear(b);
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

/* A hash of a host or event name for the batch's table (not stored): a
 * multiply per 8 bytes, every byte counted (host names often differ only
 * in the middle). */
static uint64_t name_hash(struct slice s)
{
    const unsigned char *p = (const unsigned char *)s.ptr;
    size_t n = s.len;
    uint64_t h = (uint64_t)n * 0x9e3779b97f4a7c15ULL, w;
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&w, p + i, 8);
            h = (h ^ w) * 0xff51afd7ed558ccdULL;
            h ^= h >> 32;
        }
        memcpy(&w, p + n - 8, 8); /* the last 8, overlapping */
    } else if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, p, 4);
        memcpy(&y, p + n - 4, 4);
        w = x | (uint64_t)y << 32;
    } else {
        w = n ? (uint64_t)p[0] | (uint64_t)p[n / 2] << 8 | (uint64_t)p[n - 1] << 16 : 0;
    }
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33; /* the table takes the low bits: bring the high ones down */
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 33);
}

static void names_grow(struct batch *b)
{
    uint32_t cap = b->names_cap ? 2 * b->names_cap : 64;
    struct batch_name *v = xmalloc(cap * sizeof *v);
    for (uint32_t i = 0; i < cap; i++)
        v[i].len = NAME_FREE;
    for (uint32_t i = 0; i < b->names_cap; i++) {
        if (b->names[i].len == NAME_FREE)
            continue;
        uint32_t j = (uint32_t)b->names[i].hash & (cap - 1);
        while (v[j].len != NAME_FREE)
            j = (j + 1) & (cap - 1);
        v[j] = b->names[i];
    }
    free(b->names);
    b->names = v;
    b->names_cap = cap;
}

/* Writes name at p as a reference to the same name written earlier in the
 * batch (returns true) or in full, which gives it the next id. */
static bool put_name(struct batch *b, struct slice name, char **pp)
{
    if (2 * (b->nnames + 1) > b->names_cap)
        names_grow(b);
    uint64_t h = name_hash(name);
    uint32_t j = (uint32_t)h & (b->names_cap - 1);
    for (; b->names[j].len != NAME_FREE; j = (j + 1) & (b->names_cap - 1)) {
        const struct batch_name *n = &b->names[j];
        if (n->hash == h && n->len == name.len &&
            memcmp(b->rep.data + n->off, name.ptr, name.len) == 0) {
            *pp += coding_varint_enc(*pp, n->id);
            return true;
        }
    }
    char *p = *pp;
    p += coding_varint_enc(p, name.len);
    memcpy(p, name.ptr, name.len);
    b->names[j] =
        (struct batch_name){h, (uint32_t)(p - b->rep.data), (uint32_t)name.len, b->nnames++};
    *pp = p + name.len;
    return false;
}

static void add(struct batch *b, int flags, int64_t ts, struct slice host, struct slice event,
                struct slice id, const struct slice *value)
{
    if (!key_host_ok(host) || !key_event_ok(event)) {
        b->bad = true;
        return;
    }
    size_t need = 1 + 10 + 20 + host.len + event.len + (id.len ? 10 + id.len : 0) +
                  (value ? 10 + value->len : 0);
    buf_reserve(&b->rep, need);
    char *p = b->rep.data + b->rep.len;
    char *fp = p++;
    uint64_t d = (uint64_t)ts - (uint64_t)b->last_ts;
    p += coding_varint_enc(p, (d << 1) ^ (0 - (d >> 63))); /* zigzag */
    b->last_ts = ts;
    int f = ENTRY_COMPACT | flags;
    if (put_name(b, host, &p))
        f |= ENTRY_HOST_REF;
    if (put_name(b, event, &p))
        f |= ENTRY_EVENT_REF;
    if (id.len) {
        f |= ENTRY_ID;
        p += coding_varint_enc(p, id.len);
        memcpy(p, id.ptr, id.len);
        p += id.len;
    }
    *fp = (char)f;
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
    add(b, IKEY_PUT, ts, host, event, slice_make("", 0), &value);
}

void batch_put_id(struct batch *b, int64_t ts, struct slice host, struct slice event,
                  struct slice id, struct slice value, bool merge)
{
    add(b, merge ? IKEY_PUT | ENTRY_MERGE : IKEY_PUT, ts, host, event, id, &value);
}

void batch_delete(struct batch *b, int64_t ts, struct slice host, struct slice event)
{
    add(b, IKEY_DEL, ts, host, event, slice_make("", 0), NULL);
}

void batch_delete_id(struct batch *b, int64_t ts, struct slice host, struct slice event,
                     struct slice id)
{
    add(b, IKEY_DEL | ENTRY_ROW_ONLY, ts, host, event, id, NULL);
}

struct slice batch_payload(const struct batch *b)
{
    return slice_make(b->rep.data + BATCH_FRAME, b->rep.len - BATCH_FRAME);
}

void batch_set_seq(struct batch *b, uint64_t seq)
{
    coding_put_u64le(b->rep.data + BATCH_FRAME, seq);
}

int batch_reader_init(struct batch_reader *r, struct slice payload, uint64_t *seq, uint32_t *count)
{
    memset(r, 0, sizeof *r);
    if (payload.len < BATCH_HEADER)
        return err_corrupt("batch of %zu bytes", payload.len);
    *seq = coding_get_u64le(payload.ptr);
    *count = coding_get_u32le(payload.ptr + 8);
    r->p = payload.ptr + BATCH_HEADER;
    r->end = payload.ptr + payload.len;
    r->left = *count;
    return ERR_OK;
}

void batch_reader_done(struct batch_reader *r)
{
    free(r->names);
    r->names = NULL;
}

/* A name of the compact form: a reference to an earlier one, or in full. */
static const char *get_name_ref(struct batch_reader *r, const char *p, bool ref, struct slice *out)
{
    if (ref) {
        uint64_t id;
        p = coding_varint_dec(p, r->end, &id);
        if (!p || id >= r->nnames)
            return NULL;
        *out = r->names[id];
        return p;
    }
    p = coding_bytes_dec(p, r->end, out);
    if (p) {
        if (r->nnames == r->cap) {
            r->cap = r->cap ? 2 * r->cap : 64;
            r->names = xrealloc(r->names, r->cap * sizeof *r->names);
        }
        r->names[r->nnames++] = *out;
    }
    return p;
}

/* The entry's ts, names and id; NULL if malformed. */
static const char *get_head(struct batch_reader *r, const char *p, struct batch_entry *e)
{
    int f = (unsigned char)*p++;
    e->id = slice_make("", 0);
    e->keep_index = false;
    if (!(f & ENTRY_COMPACT)) { /* the first form */
        if (r->end - p < 8 || f > IKEY_PUT)
            return NULL;
        e->kind = f;
        e->ts = (int64_t)coding_get_u64le(p);
        p = coding_bytes_dec(p + 8, r->end, &e->host);
        return p ? coding_bytes_dec(p, r->end, &e->event) : NULL;
    }
    if ((f & ~ENTRY_FLAGS) || ((f & ENTRY_MERGE) && !(f & 1)) || ((f & ENTRY_ROW_ONLY) && (f & 1)))
        return NULL;
    e->kind = f & ENTRY_MERGE ? IKEY_MERGE : f & 1;
    e->keep_index = f & ENTRY_ROW_ONLY;
    uint64_t zz;
    p = coding_varint_dec(p, r->end, &zz);
    if (!p)
        return NULL;
    e->ts = (int64_t)((uint64_t)r->last_ts + ((zz >> 1) ^ (0 - (zz & 1))));
    p = get_name_ref(r, p, f & ENTRY_HOST_REF, &e->host);
    p = p ? get_name_ref(r, p, f & ENTRY_EVENT_REF, &e->event) : NULL;
    if (p && (f & ENTRY_ID)) {
        p = coding_bytes_dec(p, r->end, &e->id);
        if (p && !e->id.len)
            return NULL;
    }
    return p;
}

int batch_reader_next(struct batch_reader *r, struct batch_entry *e)
{
    if (r->left == 0)
        return r->p == r->end ? 0 : err_corrupt("batch has trailing bytes");
    if (r->p == r->end)
        return err_corrupt("batch entry truncated");
    const char *p = get_head(r, r->p, e);
    e->value = slice_make("", 0);
    if (p && e->kind != IKEY_DEL)
        p = coding_bytes_dec(p, r->end, &e->value);
    if (!p || !key_host_ok(e->host) || !key_event_ok(e->event))
        return err_corrupt("bad batch entry");
    r->last_ts = e->ts;
    r->p = p;
    r->left--;
    return 1;
}
