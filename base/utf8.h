/* Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing
 * over U+10FFFF. */
#ifndef LB_UTF8_H
#define LB_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* Length (1..4) of the well-formed sequence at s[0..n) (n > 0), or 0 if
 * s[0] does not begin one. */
size_t utf8_seq_len(const unsigned char *s, size_t n);
/* Whether every byte of s belongs to a well-formed sequence. */
bool utf8_valid(const char *s, size_t n);
/* Appends s with each byte that does not begin a well-formed sequence
 * replaced by U+FFFD. */
void utf8_repair(const char *s, size_t n, struct buf *out);
/* Writes the encoding of code point cp (<= U+10FFFF) to out; returns its
 * length, 1..4. */
size_t utf8_encode(uint32_t cp, char out[4]);
/* The value of the 4 hex digits at s (a JSON \uXXXX escape), or -1. */
int utf8_hex4(const char *s);

#endif
