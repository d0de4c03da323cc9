/* Decimal integers in ASCII, as every text protocol sends stamps and
 * counters: eight digits at a time (SWAR) where the text has them, so that
 * a 19-digit nanosecond stamp costs two word operations and three digits
 * instead of nineteen loop steps. No sign, blank, '+' or other byte is
 * skipped; leading zeros are digits like any other. */
#ifndef LB_DECIMAL_H
#define LB_DECIMAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Whether the 8 bytes at s are all digits; if so *out is their value, the
 * first byte most significant. */
static inline bool dec_digits8(const char *s, uint32_t *out)
{
    uint64_t v;
    memcpy(&v, s, 8);
    /* a digit's high nibble is 3, and adding 6 keeps it 3 only up to '9' */
    if (((v & 0xf0f0f0f0f0f0f0f0ULL) |
         (((v + 0x0606060606060606ULL) & 0xf0f0f0f0f0f0f0f0ULL) >> 4)) != 0x3333333333333333ULL)
        return false;
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v); /* the first byte lowest, as below expects */
#endif
    v = (v & 0x0f0f0f0f0f0f0f0fULL) * 2561 >> 8;
    v = (v & 0x00ff00ff00ff00ffULL) * 6553601 >> 16;
    *out = (uint32_t)((v & 0x0000ffff0000ffffULL) * 42949672960001ULL >> 32);
    return true;
}

enum { DEC_OK = 1, DEC_SYNTAX = 0, DEC_RANGE = -1 };

/* Up to 19 digits cannot overflow 64 bits (10^19 - 1 < 2^64). */
#define DEC_SAFE_DIGITS 19

/* dec_u64 of a text longer than DEC_SAFE_DIGITS (decimal.c). */
int dec_u64_long(const char *s, size_t len, uint64_t *out);

/* The len bytes at s, [0-9]+, into *out: DEC_OK; DEC_SYNTAX if empty or
 * not all digits; DEC_RANGE if all digits but over UINT64_MAX. Inline:
 * the parsers call it for every stamp and integer they read. */
static inline int dec_u64(const char *s, size_t len, uint64_t *out)
{
    if (len == 0)
        return DEC_SYNTAX;
    if (len > DEC_SAFE_DIGITS)
        return dec_u64_long(s, len, out);
    uint64_t v = 0;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint32_t d8;
        if (!dec_digits8(s + i, &d8))
            return DEC_SYNTAX;
        v = v * 100000000 + d8;
    }
    for (; i < len; i++) {
        unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d > 9)
            return DEC_SYNTAX;
        v = v * 10 + d;
    }
    *out = v;
    return DEC_OK;
}

/* The same for -?[0-9]+ into an int64 (INT64_MIN included). */
static inline int dec_i64(const char *s, size_t len, int64_t *out)
{
    bool neg = len && s[0] == '-';
    uint64_t v;
    int rc = dec_u64(s + neg, len - neg, &v);
    if (rc != DEC_OK)
        return rc;
    if (v > (uint64_t)INT64_MAX + neg)
        return DEC_RANGE;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return DEC_OK;
}

#endif
