/* Encoding and decoding of the row and index keys of key.h. */
#include "store/key.h"

#include <string.h>

#include "config/err.h"
#include "store/coding.h"

void key_encode_row_prefix(struct buf *out, uint32_t bucket, int64_t ts, bool desc)
{
    buf_reserve(out, 10);
    coding_put_u16be(out->data + out->len, (uint16_t)bucket);
    coding_put_u64be(out->data + out->len + 2, key_tskey(ts, desc));
    out->len += 10;
}

/* Writes name and its NUL at p; returns the byte after. */
static char *put_name(char *p, struct slice name)
{
    if (name.len)
        memcpy(p, name.ptr, name.len);
    p[name.len] = '\0';
    return p + name.len + 1;
}

/* Every row and index key is written on each ingested event: one reserve,
 * then plain stores. */
void key_encode_row(struct buf *out, uint32_t bucket, int64_t ts, bool desc, struct slice host,
                    struct slice event)
{
    buf_reserve(out, 12 + host.len + event.len);
    char *p = out->data + out->len;
    coding_put_u16be(p, (uint16_t)bucket);
    coding_put_u64be(p + 2, key_tskey(ts, desc));
    p = put_name(p + 10, host);
    p = put_name(p, event);
    out->len = (size_t)(p - out->data);
}

/* Splits "host\0event\0" at p (len bytes); false unless exactly that shape. */
static bool split_names(const char *p, size_t len, struct slice *host, struct slice *event)
{
    const char *z1 = memchr(p, '\0', len);
    if (!z1)
        return false;
    size_t rest = len - (size_t)(z1 + 1 - p);
    const char *z2 = memchr(z1 + 1, '\0', rest);
    if (!z2 || z2 != p + len - 1)
        return false;
    *host = slice_make(p, (size_t)(z1 - p));
    *event = slice_make(z1 + 1, (size_t)(z2 - z1 - 1));
    return host->len <= KEY_MAX_NAME && event->len <= KEY_MAX_NAME;
}

int key_decode_row(struct slice key, bool desc, struct key_row *out)
{
    struct key_row r;
    if (key.len < 12 || !split_names(key.ptr + 10, key.len - 10, &r.host, &r.event))
        return ERR_CORRUPT;
    r.bucket = coding_get_u16be(key.ptr);
    r.ts = key_ts_from_tskey(coding_get_u64be(key.ptr + 2), desc);
    *out = r;
    return ERR_OK;
}

void key_encode_index(struct buf *out, struct slice host, struct slice event, int64_t ts,
                      bool desc)
{
    buf_reserve(out, 10 + host.len + event.len);
    char *p = put_name(out->data + out->len, host);
    coding_put_u64be(p, key_tskey(ts, desc));
    p = put_name(p + 8, event);
    out->len = (size_t)(p - out->data);
}

void key_encode_index_prefix(struct buf *out, struct slice host)
{
    buf_append(out, host.ptr, host.len);
    buf_putc(out, '\0');
}

void key_encode_index_at(struct buf *out, struct slice host, int64_t ts, bool desc)
{
    key_encode_index_prefix(out, host);
    buf_reserve(out, 8);
    coding_put_u64be(out->data + out->len, key_tskey(ts, desc));
    out->len += 8;
}

struct slice key_index_tskey(struct slice key)
{
    const char *z = memchr(key.ptr, '\0', key.len);
    if (!z || (size_t)(key.ptr + key.len - (z + 1)) < 8)
        return slice_make("", 0);
    return slice_make(z + 1, 8);
}

int key_decode_index(struct slice key, bool desc, struct key_row *out)
{
    struct key_row r;
    struct slice tk = key_index_tskey(key);
    if (tk.len != 8)
        return ERR_CORRUPT;
    r.host = slice_make(key.ptr, (size_t)(tk.ptr - 1 - key.ptr));
    const char *ev = tk.ptr + 8, *end = key.ptr + key.len;
    if (ev == end || end[-1] != '\0' || memchr(ev, '\0', (size_t)(end - 1 - ev)))
        return ERR_CORRUPT;
    r.event = slice_make(ev, (size_t)(end - 1 - ev));
    if (r.host.len > KEY_MAX_NAME || r.event.len > KEY_MAX_NAME)
        return ERR_CORRUPT;
    r.bucket = 0;
    r.ts = key_ts_from_tskey(coding_get_u64be(tk.ptr), desc);
    *out = r;
    return ERR_OK;
}
