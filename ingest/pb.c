/* Protobuf wire-format reading and the little writing the replies need. */
#include "ingest/pb.h"

#include "base/buf.h"
#include "base/err.h"

void pb_init(struct pb_reader *r, const void *data, size_t len)
{
    r->p = data;
    r->end = r->p + len;
    r->error = NULL;
}

/* The varint at p: the byte after it, or NULL (r->error set). */
static const uint8_t *varint_slow(struct pb_reader *r, const uint8_t *p, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (p >= r->end) {
            r->error = "truncated varint";
            return NULL;
        }
        uint8_t b = *p++;
        if (i == 9 && b > 1) {
            r->error = "varint over 64 bits";
            return NULL;
        }
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return p;
        }
    }
    r->error = "varint longer than 10 bytes";
    return NULL;
}

/* Most keys and lengths are one byte. */
static inline const uint8_t *varint(struct pb_reader *r, const uint8_t *p, uint64_t *out)
{
    if (p < r->end && *p < 0x80) {
        *out = *p;
        return p + 1;
    }
    return varint_slow(r, p, out);
}

/* A little-endian fixed value of n bytes at p: the byte after it, or NULL. */
static const uint8_t *fixed(struct pb_reader *r, const uint8_t *p, size_t n, uint64_t *out)
{
    if ((size_t)(r->end - p) < n) {
        r->error = n == 8 ? "truncated 64-bit value" : "truncated 32-bit value";
        return NULL;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    *out = v;
    return p + n;
}

/* A length-delimited value at p: the byte after it, or NULL. */
static const uint8_t *bytes(struct pb_reader *r, const uint8_t *p, struct slice *out)
{
    uint64_t len;
    if (!(p = varint(r, p, &len)))
        return NULL;
    if (len > (uint64_t)(r->end - p)) {
        r->error = "length-delimited field runs past the end";
        return NULL;
    }
    *out = slice_make(p, (size_t)len);
    return p + len;
}

int pb_next_any(struct pb_reader *r, struct pb_field *f)
{
    const uint8_t *p = r->p;
    if (p >= r->end)
        return 0;
    uint64_t key;
    if (!(p = varint(r, p, &key)))
        return ERR_CORRUPT;
    if (key >> 3 == 0 || key >> 3 > 0x1fffffff) {
        r->error = "bad field number";
        return ERR_CORRUPT;
    }
    f->num = (uint32_t)(key >> 3);
    f->wire = (enum pb_wire)(key & 7);
    f->v = 0;
    f->s = slice_make(NULL, 0);
    switch (key & 7) {
    case PB_LEN: p = bytes(r, p, &f->s); break;
    case PB_VARINT: p = varint(r, p, &f->v); break;
    case PB_I64: p = fixed(r, p, 8, &f->v); break;
    case PB_I32: p = fixed(r, p, 4, &f->v); break;
    default:
        r->error = (key & 7) == 3 || (key & 7) == 4 ? "groups are not supported" : "bad wire type";
        return ERR_CORRUPT;
    }
    if (!p)
        return ERR_CORRUPT;
    r->p = p;
    return 1;
}

static void put_raw_varint(struct buf *out, uint64_t v)
{
    while (v >= 0x80) {
        buf_putc(out, (char)(v | 0x80));
        v >>= 7;
    }
    buf_putc(out, (char)v);
}

void pb_put_varint(struct buf *out, uint32_t num, uint64_t v)
{
    put_raw_varint(out, (uint64_t)num << 3 | PB_VARINT);
    put_raw_varint(out, v);
}

void pb_put_bytes(struct buf *out, uint32_t num, const void *p, size_t n)
{
    put_raw_varint(out, (uint64_t)num << 3 | PB_LEN);
    put_raw_varint(out, n);
    buf_append(out, p, n);
}
