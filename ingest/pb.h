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
int pb_next(struct pb_reader *r, struct pb_field *f);

/* Appends to out the encoding of a field: a varint, or a length-delimited
 * value (used by the replies the OTLP handler builds). */
struct buf;
void pb_put_varint(struct buf *out, uint32_t num, uint64_t v);
void pb_put_bytes(struct buf *out, uint32_t num, const void *p, size_t n);

#endif
