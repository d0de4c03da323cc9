/* Result encoders: JSON strings (escaped, invalid UTF-8 replaced by U+FFFD),
 * numbers (a float always shows a decimal point or an exponent; non-finite is
 * null) and whole rows in the NDJSON shape of DESIGN.md section 5:
 *   {"ts":N,"host":"h","event":"e","tags":{...},"fields":{...}}
 * Everything appends to a struct buf owned by the caller. */
#ifndef LB_ENCODE_H
#define LB_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"
#include "model/record.h"
#include "query/sql.h"

/* Appends "..." with JSON escapes. */
void enc_json_str(struct buf *out, const char *s, size_t n);
/* Appends a double: the shortest of %.15g, %.16g and %.17g that reads back
 * as d, plus ".0" when it would read as an integer; null if not finite. */
void enc_double(struct buf *out, double d);
/* Appends exactly what printf("%.<prec>g", d) gives, prec 15..17 (faster
 * for common values). */
void enc_double_g(struct buf *out, double d, int prec);
/* Appends a decimal integer. */
void enc_i64(struct buf *out, int64_t v);
/* Appends a typed field value. */
void enc_field_value(struct buf *out, const struct rec_field *f);

/* Which columns a row shows. all = SELECT *; otherwise the named columns
 * (cols borrowed, must outlive the projection). */
struct enc_proj {
    bool all;
    const struct sql_col *cols;
    size_t ncols;
};

/* Appends one row object (no newline): its tags and fields are those of
 * the records id and value (store/record.h, rec_row_init). ERR_OK, or
 * ERR_CORRUPT if one is not a valid record (out may then hold a partial
 * row: callers roll back). */
int enc_row(struct buf *out, int64_t ts, struct slice host, struct slice event, struct slice id,
            struct slice value, const struct enc_proj *proj);

#endif
