/* JSON string encoding shared by every layer that writes JSON (query
 * results, error bodies, /metrics-free replies). */
#ifndef LB_JSON_H
#define LB_JSON_H

#include <stddef.h>

#include "base/buf.h"

/* Appends s[0..n) escaped for the inside of a JSON string: '"' and '\\'
 * escaped, \n \r \t \b \f short, other bytes below 0x20 as \u00XX, each
 * byte that does not begin a well-formed UTF-8 sequence (overlong,
 * surrogate, truncated, over U+10FFFF) as \ufffd; the rest as it is. */
void json_escape(struct buf *out, const char *s, size_t n);
/* The same between quotes. */
void json_str(struct buf *out, const char *s, size_t n);

#endif
