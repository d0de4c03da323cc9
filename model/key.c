/* Encoding and decoding of the row and index keys of key.h. */
#include "model/key.h"

#include <string.h>

#include "base/coding.h"
#include "base/err.h"

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

bool key_host_ok(struct slice name)
{
    return name.len <= KEY_MAX_NAME && (!name.len || !memchr(name.ptr, 0, name.len));
}

/* The first byte below 0x02 (a NUL or a 0x01) in [p, end), or end: 8 bytes
 * at a time (names are checked and keys parsed on every ingested event). */
static const char *find_below2(const char *p, const char *end)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        if ((w - 2 * ones) & ~w & highs) /* some byte < 2 (or a false alarm >= 0x82) */
            break;
        p += 8;
    }
    while (p < end && (unsigned char)*p >= 2)
        p++;
    return p;
}

bool key_event_ok(struct slice name)
{
    return name.len <= KEY_MAX_NAME &&
           find_below2(name.ptr, name.ptr + name.len) == name.ptr + name.len;
}

/* Writes bucket | tskey | host 0 event at p; returns the byte after. */
static char *put_base(char *p, uint32_t bucket, int64_t ts, bool desc, struct slice host,
                      struct slice event)
{
    coding_put_u16be(p, (uint16_t)bucket);
    coding_put_u64be(p + 2, key_tskey(ts, desc));
    p = put_name(p + 10, host);
    if (event.len)
        memcpy(p, event.ptr, event.len);
    return p + event.len;
}

/* Every row and index key is written on each ingested event: one reserve,
 * then plain stores. */
void key_encode_row(struct buf *out, uint32_t bucket, int64_t ts, bool desc, struct slice host,
                    struct slice event)
{
    buf_reserve(out, 12 + host.len + event.len);
    char *p = put_base(out->data + out->len, bucket, ts, desc, host, event);
    *p++ = '\0';
    out->len = (size_t)(p - out->data);
}

void key_encode_row_id(struct buf *out, uint32_t bucket, int64_t ts, bool desc, struct slice host,
                       struct slice event, struct slice id)
{
    if (!id.len) {
        key_encode_row(out, bucket, ts, desc, host, event);
        return;
    }
    buf_reserve(out, 22 + host.len + event.len + id.len);
    char *p = put_base(out->data + out->len, bucket, ts, desc, host, event);
    *p++ = '\1';
    p += coding_varint_enc(p, id.len);
    memcpy(p, id.ptr, id.len);
    out->len = (size_t)(p + id.len - out->data);
}

void key_encode_row_base(struct buf *out, uint32_t bucket, int64_t ts, bool desc, struct slice host,
                         struct slice event)
{
    buf_reserve(out, 11 + host.len + event.len);
    out->len = (size_t)(put_base(out->data + out->len, bucket, ts, desc, host, event) - out->data);
}

/* The end of the host (its 0x00) and of the event (its 0x00 or 0x01) in a
 * row key; false if there are none. */
static bool row_marks(struct slice key, const char **hend, const char **eend)
{
    if (key.len < 12)
        return false;
    const char *p = key.ptr + 10, *end = key.ptr + key.len;
    const char *z = memchr(p, '\0', (size_t)(end - p));
    if (!z)
        return false;
    const char *e = find_below2(z + 1, end);
    if (e == end)
        return false;
    *hend = z;
    *eend = e;
    return true;
}

size_t key_row_base_len(struct slice key)
{
    const char *h, *e;
    return row_marks(key, &h, &e) ? (size_t)(e - key.ptr) : key.len;
}

int key_decode_row(struct slice key, bool desc, struct key_row *out)
{
    struct key_row r;
    const char *hend, *eend, *end = key.ptr + key.len;
    if (!row_marks(key, &hend, &eend))
        return ERR_CORRUPT;
    r.host = slice_make(key.ptr + 10, (size_t)(hend - (key.ptr + 10)));
    r.event = slice_make(hend + 1, (size_t)(eend - hend - 1));
    if (r.host.len > KEY_MAX_NAME || r.event.len > KEY_MAX_NAME)
        return ERR_CORRUPT;
    r.id = slice_make("", 0);
    if (*eend == 0) {
        if (eend + 1 != end)
            return ERR_CORRUPT;
    } else {
        uint64_t n;
        const char *p = coding_varint_dec(eend + 1, end, &n);
        if (!p || n == 0 || n != (uint64_t)(end - p))
            return ERR_CORRUPT;
        r.id = slice_make(p, (size_t)n);
    }
    r.bucket = coding_get_u16be(key.ptr);
    r.ts = key_ts_from_tskey(coding_get_u64be(key.ptr + 2), desc);
    *out = r;
    return ERR_OK;
}

int64_t key_row_ts(struct slice key, bool desc)
{
    if (key.len < 10)
        return 0;
    return key_ts_from_tskey(coding_get_u64be(key.ptr + 2), desc);
}

struct slice key_row_host(struct slice key)
{
    const char *h, *e;
    if (!row_marks(key, &h, &e))
        return slice_make("", 0);
    return slice_make(key.ptr + 10, (size_t)(h - (key.ptr + 10)));
}

struct slice key_row_event(struct slice key)
{
    const char *h, *e;
    if (!row_marks(key, &h, &e))
        return slice_make("", 0);
    return slice_make(h + 1, (size_t)(e - h - 1));
}

void key_encode_index(struct buf *out, struct slice host, struct slice event, int64_t ts, bool desc)
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
    r.id = slice_make("", 0);
    r.ts = key_ts_from_tskey(coding_get_u64be(tk.ptr), desc);
    *out = r;
    return ERR_OK;
}

int64_t key_index_ts(struct slice key, bool desc)
{
    struct slice tk = key_index_tskey(key);
    return tk.len == 8 ? key_ts_from_tskey(coding_get_u64be(tk.ptr), desc) : 0;
}

struct slice key_index_host(struct slice key)
{
    const char *z = memchr(key.ptr, '\0', key.len);
    return z ? slice_make(key.ptr, (size_t)(z - key.ptr)) : slice_make("", 0);
}

struct slice key_index_event(struct slice key)
{
    struct slice tk = key_index_tskey(key);
    if (tk.len != 8)
        return slice_make("", 0);
    const char *s = tk.ptr + 8, *end = key.ptr + key.len;
    if (end - s < 1 || end[-1] != 0)
        return slice_make("", 0);
    return slice_make(s, (size_t)(end - 1 - s));
}

static void tskey_bounds(int64_t lo, int64_t hi, bool desc, uint64_t *kmin, uint64_t *kmax)
{
    uint64_t a = key_tskey(lo, desc), b = key_tskey(hi, desc);
    *kmin = a < b ? a : b;
    *kmax = a < b ? b : a;
}

static void put_u16_u64(struct buf *out, uint32_t bucket, uint64_t tskey)
{
    buf_reserve(out, 10);
    coding_put_u16be(out->data + out->len, (uint16_t)bucket);
    coding_put_u64be(out->data + out->len + 2, tskey);
    out->len += 10;
}

/* Row bounds are bucket|tskey followed by two NULs: no row key continues a
 * bucket|tskey prefix with two NULs unless host and event are both empty,
 * which the bound then includes, so it equals the bare prefix; and a seek
 * to it never depends on how the store orders a prefix against longer
 * keys. */
void key_row_range(struct buf *lo, struct buf *hi, uint32_t bucket, int64_t ts_lo, int64_t ts_hi,
                   bool desc)
{
    uint64_t kmin, kmax;
    tskey_bounds(ts_lo, ts_hi, desc, &kmin, &kmax);
    put_u16_u64(lo, bucket, kmin);
    buf_append(lo, "\0\0", 2);
    if (kmax == UINT64_MAX) {
        buf_reserve(hi, 2);
        coding_put_u16be(hi->data + hi->len, (uint16_t)(bucket + 1));
        hi->len += 2;
    } else {
        put_u16_u64(hi, bucket, kmax + 1);
        buf_append(hi, "\0\0", 2);
    }
}

void key_index_range(struct buf *lo, struct buf *hi, struct slice host, int64_t ts_lo,
                     int64_t ts_hi, bool desc)
{
    uint64_t kmin, kmax;
    tskey_bounds(ts_lo, ts_hi, desc, &kmin, &kmax);
    key_encode_index_prefix(lo, host);
    key_encode_index_prefix(hi, host);
    buf_reserve(lo, 8);
    coding_put_u64be(lo->data + lo->len, kmin);
    lo->len += 8;
    if (kmax == UINT64_MAX) {
        hi->data[hi->len - 1] = 1; /* host 0x01: just past every tskey */
    } else {
        buf_reserve(hi, 8);
        coding_put_u64be(hi->data + hi->len, kmax + 1);
        hi->len += 8;
    }
}

/* Kept out of line: the fast path of key_cmp_row then needs no stack frame. */
static __attribute__((noinline)) int cmp_row_slow(struct slice a, struct slice b)
{
    if (a.len >= 2 && b.len >= 2) {
        int c = slice_cmp(slice_make(a.ptr + 2, a.len - 2), slice_make(b.ptr + 2, b.len - 2));
        if (c)
            return c;
    }
    return slice_cmp(a, b);
}

int key_cmp_row(struct slice a, struct slice b)
{
    if (a.len >= 10 && b.len >= 10) {
        /* the tskey decides almost every comparison: one 8-byte compare */
        uint64_t x = coding_get_u64be(a.ptr + 2), y = coding_get_u64be(b.ptr + 2);
        if (x != y)
            return x < y ? -1 : 1;
    }
    return cmp_row_slow(a, b);
}

int key_cmp_index(struct slice a, struct slice b)
{
    struct slice ta = key_index_tskey(a), tb = key_index_tskey(b);
    if (ta.len != 8 || tb.len != 8)
        return slice_cmp(a, b);
    int c = memcmp(ta.ptr, tb.ptr, 8);
    if (c)
        return c;
    c = slice_cmp(slice_make(a.ptr, (size_t)(ta.ptr - a.ptr)),
                  slice_make(b.ptr, (size_t)(tb.ptr - b.ptr)));
    if (c)
        return c;
    return slice_cmp(slice_make(ta.ptr + 8, (size_t)(a.ptr + a.len - ta.ptr - 8)),
                     slice_make(tb.ptr + 8, (size_t)(b.ptr + b.len - tb.ptr - 8)));
}
