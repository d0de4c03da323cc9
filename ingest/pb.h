/* A protobuf wire-format reader, written from the encoding spec
 * (protobuf.dev/programming-guides/encoding): varints, 64- and 32-bit
 * fixed values and length-delimited fields, read from a borrowed buffer
 * with every length checked against its end. It allocates nothing and
 * knows no schema: the Loki and OTLP decoders walk their messages with it,
 * a nested message being a pb_reader over a length-delimited field.
 *
 * Refused (ERR_CORRUPT, with a static reason): a varint longer than 10
 * bytes or over 64 bits, field number 0, wire types 3, 4 (groups), 6 and 7,
 * a length or fixed value that runs past the end. */
#ifndef LB_PB_H
#define LB_PB_H

#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"

enum pb_wire { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

/* Nested messages deeper than this are refused by the decoders. */
#define PB_MAX_DEPTH 32

struct pb_reader {
    const uint8_t *p, *end;
    const char *error; /* static reason of the last ERR_CORRUPT */
};

struct pb_field {
    uint32_t num;
    enum pb_wire wire;
    uint64_t v;     /* PB_VARINT, PB_I64, PB_I32 */
    struct slice s; /* PB_LEN: the bytes, borrowed from the reader's buffer */
};

void pb_init(struct pb_reader *r, const void *data, size_t len);
/* 1 and *f set, 0 at the end of the buffer, or ERR_CORRUPT (r->error says
 * why; the reader stays at the bad field). */
static inline int pb_next(struct pb_reader *r, struct pb_field *f);
/* pb_next for every field. pb_next itself, inline, reads the fields nearly
 * every message is made of (a one-byte key with a one-byte varint, a
 * fixed64, or a length under 16 KiB) and calls this for the others. */
int pb_next_any(struct pb_reader *r, struct pb_field *f);

static inline int pb_next(struct pb_reader *r, struct pb_field *f)
{
    const uint8_t *p = r->p;
    if (p >= r->end)
        return 0;
    if (r->end - p >= 3 && p[0] >= 8 && p[0] < 0x80) {
        unsigned wire = p[0] & 7;
        if (wire == PB_LEN && (p[1] < 0x80 || p[2] < 0x80)) { /* a length under 16 KiB */
            size_t hdr = p[1] < 0x80 ? 2 : 3;
            size_t len = hdr == 2 ? p[1] : (size_t)(p[1] & 0x7f) | (size_t)p[2] << 7;
            if (len <= (size_t)(r->end - p) - hdr) {
                f->num = p[0] >> 3;
                f->wire = PB_LEN;
                f->v = 0;
                f->s = slice_make(p + hdr, len);
                r->p = p + hdr + len;
                return 1;
            }
        } else if (wire == PB_I64 && r->end - p >= 9) {
            uint64_t v = 0;
            for (int i = 0; i < 8; i++)
                v |= (uint64_t)p[1 + i] << (8 * i);
            f->num = p[0] >> 3;
            f->wire = PB_I64;
            f->v = v;
            f->s = slice_make(NULL, 0);
            r->p = p + 9;
            return 1;
        } else if (wire == PB_VARINT && p[1] < 0x80) {
            f->num = p[0] >> 3;
            f->wire = PB_VARINT;
            f->v = p[1];
            f->s = slice_make(NULL, 0);
            r->p = p + 2;
            return 1;
        }
    }
    return pb_next_any(r, f);
}

/* Appends to out the encoding of a field: a varint, or a length-delimited
 * value (used by the replies the OTLP handler builds). */
struct buf;
void pb_put_varint(struct buf *out, uint32_t num, uint64_t v);
void pb_put_bytes(struct buf *out, uint32_t num, const void *p, size_t n);

#endif
