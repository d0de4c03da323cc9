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

static int read_varint(struct pb_reader *r, const uint8_t **p, uint64_t *out)
{
    if (*p < r->end && !(**p & 0x80)) { /* most keys and lengths: one byte */
        *out = *(*p)++;
        return ERR_OK;
    }
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (*p >= r->end) {
            r->error = "truncated varint";
            return ERR_CORRUPT;
        }
        uint8_t b = *(*p)++;
        if (i == 9 && b > 1) {
            r->error = "varint over 64 bits";
            return ERR_CORRUPT;
        }
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return ERR_OK;
        }
    }
    r->error = "varint longer than 10 bytes";
    return ERR_CORRUPT;
}

static int read_fixed(struct pb_reader *r, const uint8_t **p, size_t n, uint64_t *out)
{
    if ((size_t)(r->end - *p) < n) {
        r->error = n == 8 ? "truncated 64-bit value" : "truncated 32-bit value";
        return ERR_CORRUPT;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)(*p)[i] << (8 * i);
    *p += n;
    *out = v;
    return ERR_OK;
}

static int read_value(struct pb_reader *r, const uint8_t **p, struct pb_field *f)
{
    uint64_t len;
    switch (f->wire) {
    case PB_VARINT: return read_varint(r, p, &f->v);
    case PB_I64: return read_fixed(r, p, 8, &f->v);
    case PB_I32: return read_fixed(r, p, 4, &f->v);
    case PB_LEN:
        if (read_varint(r, p, &len))
            return ERR_CORRUPT;
        if (len > (uint64_t)(r->end - *p)) {
            r->error = "length-delimited field runs past the end";
            return ERR_CORRUPT;
        }
        f->s = slice_make(*p, (size_t)len);
        *p += len;
        return ERR_OK;
    }
    r->error = "unsupported wire type";
    return ERR_CORRUPT;
}

int pb_next(struct pb_reader *r, struct pb_field *f)
{
    if (r->p >= r->end)
        return 0;
    const uint8_t *p = r->p;
    uint64_t key;
    if (read_varint(r, &p, &key))
        return ERR_CORRUPT;
    unsigned wire = (unsigned)(key & 7);
    if (key >> 3 == 0 || key >> 3 > 0x1fffffff) {
        r->error = "bad field number";
        return ERR_CORRUPT;
    }
    if (wire != PB_VARINT && wire != PB_I64 && wire != PB_LEN && wire != PB_I32) {
        r->error = wire == 3 || wire == 4 ? "groups are not supported" : "bad wire type";
        return ERR_CORRUPT;
    }
    f->num = (uint32_t)(key >> 3);
    f->wire = (enum pb_wire)wire;
    f->v = 0;
    f->s = slice_make(NULL, 0);
    if (read_value(r, &p, f))
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
