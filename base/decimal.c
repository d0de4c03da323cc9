/* Decimal integers: the long texts (decimal.h inlines the rest). */
#include "base/decimal.h"

/* Each digit checked for overflow, and the whole text read even once the
 * value is too large (a later non-digit is a syntax error). */
int dec_u64_long(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    bool over = false;
    for (size_t i = 0; i < len; i++) {
        unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d > 9)
            return DEC_SYNTAX;
        if (v > (UINT64_MAX - d) / 10)
            over = true;
        else
            v = v * 10 + d;
    }
    if (over)
        return DEC_RANGE;
    *out = v;
    return DEC_OK;
}
