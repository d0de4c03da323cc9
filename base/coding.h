/* Fixed-width and varint encodings with explicit byte order. Encoders append
 * to a buf or write into a caller buffer; decoders are bounds-checked and
 * return NULL (or false) on truncated input instead of reading past it. */
#ifndef LB_CODING_H
#define LB_CODING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/buf.h"
#include "base/slice.h"

/* The stores below are one memcpy of the word in the wanted byte order
 * (a single store; the byte loops they replace were not merged into one). */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CODING_LE32(v) (v)
#define CODING_LE64(v) (v)
#define CODING_BE64(v) __builtin_bswap64(v)
#else
#define CODING_LE32(v) __builtin_bswap32(v)
#define CODING_LE64(v) __builtin_bswap64(v)
#define CODING_BE64(v) (v)
#endif

static inline void coding_put_u32le(char *p, uint32_t v)
{
    v = CODING_LE32(v);
    memcpy(p, &v, 4);
}

static inline uint32_t coding_get_u32le(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
}

static inline void coding_put_u64le(char *p, uint64_t v)
{
    v = CODING_LE64(v);
    memcpy(p, &v, 8);
}

static inline uint64_t coding_get_u64le(const char *p)
{
    return (uint64_t)coding_get_u32le(p) | (uint64_t)coding_get_u32le(p + 4) << 32;
}

static inline void coding_put_u64be(char *p, uint64_t v)
{
    v = CODING_BE64(v);
    memcpy(p, &v, 8);
}

/* Written out (not a loop) so the compiler makes it one load and a byte
 * swap: row keys are compared by their tskey this way. */
static inline uint64_t coding_get_u64be(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint64_t)u[0] << 56 | (uint64_t)u[1] << 48 | (uint64_t)u[2] << 40 |
           (uint64_t)u[3] << 32 | (uint64_t)u[4] << 24 | (uint64_t)u[5] << 16 |
           (uint64_t)u[6] << 8 | (uint64_t)u[7];
}

/* The first n bytes at p (at most 8 of them) zero padded to 8, big-endian:
 * such words order as the bytes do under memcmp (sort and seek keys). */
static inline uint64_t coding_get_u64be_padded(const char *p, size_t n)
{
    char w[8] = {0};
    memcpy(w, p, n < 8 ? n : 8);
    return coding_get_u64be(w);
}

static inline void coding_put_u16be(char *p, uint16_t v)
{
    p[0] = (char)(v >> 8);
    p[1] = (char)v;
}

static inline uint16_t coding_get_u16be(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint16_t)(u[0] << 8 | u[1]);
}

/* Writes v as a varint at p (room for 10 bytes); returns bytes written. */
static inline size_t coding_varint_enc(char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (char)v;
    return n;
}

static inline size_t coding_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline void coding_put_varint(struct buf *b, uint64_t v)
{
    buf_reserve(b, 10);
    b->len += coding_varint_enc(b->data + b->len, v);
}

/* Decodes a varint from [p, end); returns the byte after it, or NULL when
 * the input is truncated or the varint is longer than 10 bytes. */
static inline const char *coding_varint_dec(const char *p, const char *end, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; shift <= 63 && p < end; shift += 7) {
        uint64_t byte = (unsigned char)*p++;
        r |= (byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *v = r;
            return p;
        }
    }
    return NULL;
}

/* Zigzag: signed integers as unsigned ones small when their magnitude is
 * (0, -1, 1, -2 ... as 0, 1, 2, 3 ...), for varints. */
static inline uint64_t coding_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t coding_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Length-prefixed bytes (varint length, then the bytes) from [p, end) into
 * *out (borrowed); returns the byte after them, or NULL when truncated. */
static inline const char *coding_bytes_dec(const char *p, const char *end, struct slice *out)
{
    uint64_t n;
    p = coding_varint_dec(p, end, &n);
    if (!p || n > (uint64_t)(end - p))
        return NULL;
    *out = slice_make(p, (size_t)n);
    return p + n;
}

/* A varint that must fit in 32 bits. */
static inline const char *coding_varint32_dec(const char *p, const char *end, uint32_t *v)
{
    uint64_t x;
    p = coding_varint_dec(p, end, &x);
    if (!p || x > UINT32_MAX)
        return NULL;
    *v = (uint32_t)x;
    return p;
}

#endif
