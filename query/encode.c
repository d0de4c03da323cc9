/* JSON encoders for rows and scalar values. Strings are validated as UTF-8
 * byte by byte: a malformed sequence becomes one U+FFFD per offending byte,
 * so the output is always valid JSON whatever bytes were ingested. */
#include "query/encode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/json.h"

/* Inline appends: the row encoder's hot path (buf_append's capacity check
 * is a call into another file). */
static inline void put(struct buf *b, const void *p, size_t n)
{
    if (b->len + n < b->cap) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
    } else {
        buf_append(b, p, n);
    }
}

/* Appends a string literal without measuring it. */
#define PUT_LIT(b, lit) put((b), (lit), sizeof(lit) - 1)

static inline void putch(struct buf *b, char c)
{
    if (b->len + 1 < b->cap)
        b->data[b->len++] = c;
    else
        buf_putc(b, c);
}

void enc_json_str(struct buf *out, const char *s, size_t n)
{
    json_str(out, s, n);
}

/* "00" .. "99": two digits per division */
static const char digit_pairs[] = "0001020304050607080910111213141516171819"
                                  "2021222324252627282930313233343536373839"
                                  "4041424344454647484950515253545556575859"
                                  "6061626364656667686970717273747576777879"
                                  "8081828384858687888990919293949596979899";

/* Writes the 8 digits of v < 10^8 ending at end, in 32-bit arithmetic. */
static void put_8_digits(char *end, uint32_t v)
{
    for (int i = 0; i < 4; i++, v /= 100)
        memcpy(end - 2 * (i + 1), digit_pairs + 2 * (v % 100), 2);
}

static void put_u64(struct buf *out, uint64_t v)
{
    char tmp[24];
    size_t i = sizeof(tmp);
    while (v >= 100000000) { /* 8 digits per 64-bit division */
        put_8_digits(tmp + i, (uint32_t)(v % 100000000));
        v /= 100000000;
        i -= 8;
    }
    uint32_t x = (uint32_t)v;
    while (x >= 100) {
        i -= 2;
        memcpy(tmp + i, digit_pairs + 2 * (x % 100), 2);
        x /= 100;
    }
    if (x >= 10) {
        i -= 2;
        memcpy(tmp + i, digit_pairs + 2 * x, 2);
    } else {
        tmp[--i] = (char)('0' + x);
    }
    put(out, tmp + i, sizeof(tmp) - i);
}

void enc_i64(struct buf *out, int64_t v)
{
    if (v < 0) {
        putch(out, '-');
        put_u64(out, (uint64_t)0 - (uint64_t)v);
        return;
    }
    put_u64(out, (uint64_t)v);
}

/* 10^k for k = 0..22 as 128-bit integers. */
static unsigned __int128 pow10_128(int k)
{
    static const uint64_t p10[20] = {
        1ULL,
        10ULL,
        100ULL,
        1000ULL,
        10000ULL,
        100000ULL,
        1000000ULL,
        10000000ULL,
        100000000ULL,
        1000000000ULL,
        10000000000ULL,
        100000000000ULL,
        1000000000000ULL,
        10000000000000ULL,
        100000000000000ULL,
        1000000000000000ULL,
        10000000000000000ULL,
        100000000000000000ULL,
        1000000000000000000ULL,
        10000000000000000000ULL,
    };
    if (k < 20)
        return p10[k];
    return (unsigned __int128)p10[19] * p10[k - 19];
}

/* q = round-half-even(m * 10^k / 2^s). REQUIRES: k <= 22, 1 <= s <= 100. */
static uint64_t scaled_digits(uint64_t m, int k, int s)
{
    unsigned __int128 n = (unsigned __int128)m * pow10_128(k);
    unsigned __int128 q = n >> s, rem = n & ((((unsigned __int128)1) << s) - 1);
    unsigned __int128 half = ((unsigned __int128)1) << (s - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    return (uint64_t)q;
}

/* The prec significant digits of a positive, non-integral d in [1e-4, 2^53)
 * as printf("%.<prec>g") rounds them: d ~ q / 10^k with q of exactly prec
 * digits, computed in 128-bit integers (glibc's multi-precision printf is
 * the costliest part of encoding a row). false: not handled. */
static bool fast_digits(double d, int prec, uint64_t *q_out, int *k_out)
{
    static const uint64_t first_of[] = {100000000000000ULL, 1000000000000000ULL,
                                        10000000000000000ULL}; /* 10^(prec-1) */
    uint64_t bits;
    memcpy(&bits, &d, sizeof(bits));
    int exp = (int)((bits >> 52) & 0x7ff);
    if (!(d >= 1e-4 && d < 9007199254740992.0) || exp == 0 || prec < 15 || prec > 17)
        return false;
    const uint64_t lo = first_of[prec - 15], hi = lo * 10; /* prec digits exactly */
    uint64_t m = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);
    int s = 1075 - exp; /* d = m / 2^s */
    if (s < 1 || s > 100)
        return false;
    /* k: the largest scale whose rounded digits d * 10^k stay below 10^prec.
     * floor(e2 * log10(2)) is floor(log10(d)) or one less; the loops below
     * settle the last step either way. */
    int e2 = exp - 1023;
    int k = prec - 1 - (e2 * 78913 >> 18);
    if (k < 0 || k > 22)
        return false;
    uint64_t q = scaled_digits(m, k, s);
    for (int tries = 0; q >= hi && tries < 2; tries++) {
        if (--k < 0)
            return false;
        q = scaled_digits(m, k, s);
    }
    /* A larger scale can fit only when q is 10^(prec-1) exactly: for any
     * larger q, d * 10^(k+1) >= 10 * (q - 1/2) >= hi + 5. */
    for (int tries = 0; tries < 2 && k < 22 && q <= lo; tries++) {
        uint64_t up = scaled_digits(m, k + 1, s);
        if (up >= hi)
            break;
        k++;
        q = up;
    }
    if (q < lo || q >= hi)
        return false;
    *q_out = q;
    *k_out = k;
    return true;
}

/* Writes q / 10^k (q of prec digits) as %g does without an exponent: 0 if
 * %g would use one. */
static size_t put_g_digits(uint64_t q, int k, int prec, char *out)
{
    char dg[17];
    int i = prec;
    for (; i >= 2; i -= 2, q /= 100)
        memcpy(dg + i - 2, digit_pairs + 2 * (q % 100), 2);
    if (i == 1)
        dg[0] = (char)('0' + q);
    int x = prec - 1 - k; /* decimal exponent of dg[0] */
    if (x < -4 || x >= prec)
        return 0;
    int last = prec - 1; /* %g drops trailing zeros of the fraction */
    while (last > x && last > 0 && dg[last] == '0')
        last--;
    size_t n = 0;
    if (x < 0) {
        out[n++] = '0';
        out[n++] = '.';
        for (int z = -1; z > x; z--)
            out[n++] = '0';
        memcpy(out + n, dg, (size_t)last + 1);
        return n + (size_t)last + 1;
    }
    memcpy(out, dg, (size_t)x + 1);
    n = (size_t)x + 1;
    if (last > x) {
        out[n++] = '.';
        memcpy(out + n, dg + x + 1, (size_t)(last - x));
        n += (size_t)(last - x);
    }
    return n;
}

/* Exactly what printf("%.<prec>g") prints (prec 15..17) for a positive,
 * non-integral d in [1e-4, 2^53). false: not handled. */
static bool fast_g(double d, int prec, char *out, size_t *n_out)
{
    uint64_t q;
    int k;
    if (!fast_digits(d, prec, &q, &k))
        return false;
    size_t n = put_g_digits(q, k, prec, out);
    if (n == 0)
        return false;
    *n_out = n;
    return true;
}

/* printf("%.<prec>g", d) into tmp (at least 40 bytes, NUL-terminated). */
static size_t format_g(double d, int prec, char *tmp)
{
    size_t n = 0;
    if (d < 0 && fast_g(-d, prec, tmp + 1, &n)) {
        tmp[0] = '-';
        n++;
    } else if (d <= 0 || !fast_g(d, prec, tmp, &n)) {
        n = (size_t)snprintf(tmp, 40, "%.*g", prec, d);
    }
    tmp[n] = '\0';
    return n;
}

void enc_double_g(struct buf *out, double d, int prec)
{
    char tmp[48];
    put(out, tmp, format_g(d, prec, tmp));
}

/* Whether q / 10^k reads back as d. REQUIRES: q <= 2^53, 0 <= k <= 22:
 * both are then exact doubles, so one correctly rounded division gives what
 * strtod gives for the decimal (Clinger's fast path). */
static bool reads_back(uint64_t q, int k, double d)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    return (double)q / pow10[k] == d;
}

/* %.<prec>g's digits (prec 15 or 16) from the 17 of q17 / 10^k17: the
 * exact value lies within half a unit of q17, so the digits dropped decide
 * the rounding unless they are exactly half (then, or when the rounding
 * carries into another digit, fast_digits computes them). */
static bool fewer_digits(double a, uint64_t q17, int k17, int prec, uint64_t *q, int *k)
{
    uint64_t div = prec == 15 ? 100 : 10, r = q17 % div;
    *q = q17 / div + (r > div / 2);
    *k = k17 - (17 - prec);
    if (r != div / 2 && *q != (prec == 15 ? 1000000000000000ULL : 10000000000000000ULL) && *k >= 0)
        return true;
    return fast_digits(a, prec, q, k);
}

/* The shortest of %.15g, %.16g and %.17g that reads back as d, for the
 * values fast_digits handles; 0 otherwise. */
static size_t shortest_fast(double d, char *tmp)
{
    double a = d < 0 ? -d : d;
    size_t sign = d < 0;
    uint64_t q17;
    int k17;
    if (!fast_digits(a, 17, &q17, &k17))
        return 0;
    for (int prec = 15; prec <= 17; prec++) {
        uint64_t q = q17;
        int k = k17;
        if (prec < 17 && !fewer_digits(a, q17, k17, prec, &q, &k))
            return 0;
        if (prec < 17 && q > (1ULL << 53))
            return 0; /* not decidable by one division */
        if (prec < 17 && !reads_back(q, k, a))
            continue;
        size_t n = put_g_digits(q, k, prec, tmp + sign);
        if (n == 0)
            return 0;
        tmp[0] = sign ? '-' : tmp[0];
        return n + sign;
    }
    return 0;
}

/* The same through printf and strtod, for every other value. */
static size_t shortest_slow(double d, char *tmp)
{
    size_t n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = format_g(d, prec, tmp);
        if (prec == 17 || strtod(tmp, NULL) == d)
            break;
    }
    return n;
}

void enc_double(struct buf *out, double d)
{
    if (!isfinite(d)) {
        PUT_LIT(out, "null");
        return;
    }
    if (d >= -1e15 && d <= 1e15 && d == (double)(int64_t)d && (d != 0 || !signbit(d))) {
        /* an integral value, without the cost of formatting */
        enc_i64(out, (int64_t)d);
        put(out, ".0", 2);
        return;
    }
    /* The shortest of 15, 16 and 17 significant digits that reads back as
     * the same double: what was written as 397.15 reads back as 397.15. */
    char tmp[48];
    size_t n = shortest_fast(d, tmp);
    if (n == 0)
        n = shortest_slow(d, tmp);
    put(out, tmp, n);
    if (!memchr(tmp, '.', n) && !memchr(tmp, 'e', n))
        put(out, ".0", 2);
}

void enc_field_value(struct buf *out, const struct rec_field *f)
{
    switch (f->type) {
    case REC_FLOAT: enc_double(out, f->v.f); break;
    case REC_INT: enc_i64(out, f->v.i); break;
    case REC_UINT: put_u64(out, f->v.u); break;
    case REC_BOOL:
        if (f->v.b)
            PUT_LIT(out, "true");
        else
            PUT_LIT(out, "false");
        break;
    case REC_STRING: enc_json_str(out, f->v.s.ptr, f->v.s.len); break;
    default: PUT_LIT(out, "null"); break;
    }
}

static bool proj_has(const struct enc_proj *p, enum sql_col_kind kind, struct slice name)
{
    if (p->all)
        return true;
    for (size_t i = 0; i < p->ncols; i++) {
        if (p->cols[i].kind != kind)
            continue;
        if (kind != SQL_COL_FIELD && kind != SQL_COL_TAG)
            return true;
        if (strlen(p->cols[i].name) == name.len && memcmp(p->cols[i].name, name.ptr, name.len) == 0)
            return true;
    }
    return false;
}

static bool proj_wants_kind(const struct enc_proj *p, enum sql_col_kind kind)
{
    if (p->all)
        return true;
    for (size_t i = 0; i < p->ncols; i++)
        if (p->cols[i].kind == kind)
            return true;
    return false;
}

/* Appends ',' unless this is the first member of the object. */
static void sep(struct buf *out, bool *first)
{
    if (!*first)
        putch(out, ',');
    *first = false;
}

static int enc_tags(struct buf *out, struct rec_row_reader *r, const struct enc_proj *p,
                    bool *first)
{
    struct rec_tag t;
    bool want = proj_wants_kind(p, SQL_COL_TAG), open = false;
    int rc;
    while ((rc = rec_row_next_tag(r, &t)) == 1) {
        if (!want || !proj_has(p, SQL_COL_TAG, t.key))
            continue;
        if (!open) {
            sep(out, first);
            PUT_LIT(out, "\"tags\":{");
            open = true;
        } else {
            putch(out, ',');
        }
        enc_json_str(out, t.key.ptr, t.key.len);
        putch(out, ':');
        enc_json_str(out, t.value.ptr, t.value.len);
    }
    if (rc < 0)
        return rc;
    if (!open && p->all) {
        sep(out, first);
        PUT_LIT(out, "\"tags\":{");
        open = true;
    }
    if (open)
        putch(out, '}');
    return ERR_OK;
}

static int enc_fields(struct buf *out, struct rec_row_reader *r, const struct enc_proj *p,
                      bool *first)
{
    struct rec_field f;
    bool want = proj_wants_kind(p, SQL_COL_FIELD), open = false;
    int rc;
    if (!want)
        return ERR_OK;
    while ((rc = rec_row_next_field(r, &f)) == 1) {
        if (!proj_has(p, SQL_COL_FIELD, f.key))
            continue;
        if (!open) {
            sep(out, first);
            PUT_LIT(out, "\"fields\":{");
            open = true;
        } else {
            putch(out, ',');
        }
        enc_json_str(out, f.key.ptr, f.key.len);
        putch(out, ':');
        enc_field_value(out, &f);
    }
    if (rc < 0)
        return rc;
    if (!open && p->all) {
        sep(out, first);
        PUT_LIT(out, "\"fields\":{");
        open = true;
    }
    if (open)
        putch(out, '}');
    return ERR_OK;
}

int enc_row(struct buf *out, int64_t ts, struct slice host, struct slice event, struct slice id,
            struct slice value, const struct enc_proj *proj)
{
    bool first = true;
    putch(out, '{');
    if (proj_has(proj, SQL_COL_TS, host)) {
        sep(out, &first);
        put(out, "\"ts\":", 5);
        enc_i64(out, ts);
    }
    if (proj_has(proj, SQL_COL_HOST, host)) {
        sep(out, &first);
        PUT_LIT(out, "\"host\":");
        enc_json_str(out, host.ptr, host.len);
    }
    if (proj_has(proj, SQL_COL_EVENT, host)) {
        sep(out, &first);
        PUT_LIT(out, "\"event\":");
        enc_json_str(out, event.ptr, event.len);
    }
    if (proj->all || proj_wants_kind(proj, SQL_COL_TAG) || proj_wants_kind(proj, SQL_COL_FIELD)) {
        struct rec_row_reader r;
        int rc = rec_row_init(&r, id, value);
        if (rc == ERR_OK)
            rc = enc_tags(out, &r, proj, &first);
        if (rc == ERR_OK)
            rc = enc_fields(out, &r, proj, &first);
        if (rc < 0)
            return ERR_CORRUPT;
    }
    putch(out, '}');
    return ERR_OK;
}
