/* The value of a row: a compact binary record of tags and typed fields.
 *
 *   value  = varint ntags  { varint klen key varint vlen val }
 *            varint nfields { varint klen key u8 type payload }
 *   payload: FLOAT 8 bytes little-endian IEEE-754; INT zigzag varint;
 *            UINT varint; BOOL 1 byte (0/1); STRING varint len, bytes.
 *
 * Encoding appends to a buf. Decoding is a cursor over a borrowed value and
 * allocates nothing; every length is bounds-checked (ERR_CORRUPT). */
#ifndef LB_RECORD_H
#define LB_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"

enum rec_type { REC_FLOAT = 1, REC_INT = 2, REC_UINT = 3, REC_BOOL = 4, REC_STRING = 5 };

struct rec_tag {
    struct slice key;
    struct slice value;
};

struct rec_field {
    struct slice key;
    enum rec_type type;
    union {
        double f;
        int64_t i;
        uint64_t u;
        bool b;
        struct slice s;
    } v;
};

/* Appends the encoding of the tags and fields to out. */
void rec_encode(struct buf *out, const struct rec_tag *tags, size_t ntags,
                const struct rec_field *fields, size_t nfields);

struct rec_reader {
    struct slice in; /* the value, borrowed */
    size_t pos;
    uint64_t left; /* items left in the current section */
    int section;   /* 0 tags, 1 fields, 2 done */
};

/* Starts reading value. ERR_OK or ERR_CORRUPT. */
int rec_reader_init(struct rec_reader *r, struct slice value);
/* 1 and *out set, 0 at the end of the tags, or ERR_CORRUPT. */
int rec_next_tag(struct rec_reader *r, struct rec_tag *out);
/* Skips remaining tags if needed. 1 and *out set, 0 at the end, ERR_CORRUPT. */
int rec_next_field(struct rec_reader *r, struct rec_field *out);

/* A row's tags and fields are in two records: its id (in the key) and its
 * value. The row's tags are the id's then the value's, its fields likewise;
 * an empty slice is an empty record. */
struct rec_row_reader {
    struct rec_reader part[2];
    int tag_part, field_part;
};

/* ERR_OK or ERR_CORRUPT. */
int rec_row_init(struct rec_row_reader *rr, struct slice id, struct slice value);
/* As rec_next_tag and rec_next_field over both parts. */
int rec_row_next_tag(struct rec_row_reader *rr, struct rec_tag *out);
int rec_row_next_field(struct rec_row_reader *rr, struct rec_field *out);

/* Appends to out the merge of two versions of one row: every tag and field
 * of newer, then those of older whose names newer does not have (InfluxDB's
 * rule for a point written twice: the union, the new values winning).
 * Either may be empty (an empty record). ERR_OK or ERR_CORRUPT (out is then
 * unchanged in content but may have grown). */
int rec_merge(struct buf *out, struct slice newer, struct slice older);

/* A walk over a record's bytes for the hot paths that read every row a
 * table writes (the word filter, the catalog): inline, without messages.
 * Each step returns the byte after what it read, or NULL for anything it
 * does not take (a truncated or overlong varint, a length past the end, an
 * unknown type or bool byte), which the reader above then reports. */
static inline const char *rec_walk_varint(const char *p, const char *end, uint64_t *v)
{
    if (p < end && !(*p & 0x80)) {
        *v = (uint8_t)*p;
        return p + 1;
    }
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 63 && p < end; shift += 7) {
        uint64_t c = (uint8_t)*p++;
        r |= (c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = r;
            return p;
        }
    }
    return NULL;
}

/* A varint length and that many bytes, borrowed into *out. */
static inline const char *rec_walk_bytes(const char *p, const char *end, struct slice *out)
{
    uint64_t n;
    if (!(p = rec_walk_varint(p, end, &n)) || n > (uint64_t)(end - p))
        return NULL;
    *out = slice_make(p, (size_t)n);
    return p + n;
}

/* A field's type and value (after its key): a STRING's bytes in *s (left
 * alone for the other types, whose payload is only stepped over). */
static inline const char *rec_walk_value(const char *p, const char *end, int *type, struct slice *s)
{
    uint64_t x;
    if (p == end)
        return NULL;
    *type = (uint8_t)*p++;
    switch (*type) {
    case REC_FLOAT: return end - p < 8 ? NULL : p + 8;
    case REC_INT:
    case REC_UINT: return rec_walk_varint(p, end, &x);
    case REC_BOOL: return p == end || (uint8_t)*p > 1 ? NULL : p + 1;
    case REC_STRING: return rec_walk_bytes(p, end, s);
    default: return NULL;
    }
}

/* A field: its key, then as rec_walk_value. */
static inline const char *rec_walk_field(const char *p, const char *end, struct slice *key,
                                         int *type, struct slice *s)
{
    if (!(p = rec_walk_bytes(p, end, key)))
        return NULL;
    return rec_walk_value(p, end, type, s);
}

#endif
