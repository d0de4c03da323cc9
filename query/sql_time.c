/* Times and durations of the SQL subset and of the query parameters:
 * integer ns, RFC 3339, now-relative ("-1h"), and durations ("30d", "1h30m").
 * All arithmetic is overflow-checked: an out-of-range value is ERR_INVAL. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "config/config.h"
#include "base/err.h"
#include "query/sql.h"

#define NS_PER_S 1000000000LL

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Durations follow the config file's syntax (config/config.h): one parser
 * for "ttl = 30d" in logbucket.conf and ttl='30d' in SQL. */
int sql_parse_duration(const char *s, size_t len, int64_t *out)
{
    char tmp[64];
    if (len == 0 || len >= sizeof(tmp) || memchr(s, '\0', len))
        return ERR_INVAL;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    return cfg_parse_duration(tmp, out);
}

void sql_format_duration(int64_t ns, struct buf *out)
{
    char tmp[32];
    cfg_format_duration(ns, tmp, sizeof(tmp));
    buf_puts(out, tmp);
}

/* Reads exactly n digits at s[*i]. */
static int fixed_digits(const char *s, size_t len, size_t *i, size_t n, int *out)
{
    int v = 0;
    for (size_t k = 0; k < n; k++) {
        if (*i >= len || !is_digit(s[*i]))
            return ERR_INVAL;
        v = v * 10 + (s[(*i)++] - '0');
    }
    *out = v;
    return ERR_OK;
}

static int expect_char(const char *s, size_t len, size_t *i, char c)
{
    if (*i >= len || s[*i] != c)
        return ERR_INVAL;
    (*i)++;
    return ERR_OK;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
    static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : dm[m - 1];
}

static int parse_frac(const char *s, size_t len, size_t *i, int64_t *frac)
{
    *frac = 0;
    if (*i >= len || s[*i] != '.')
        return ERR_OK;
    (*i)++;
    int64_t scale = 100000000;
    size_t start = *i;
    while (*i < len && is_digit(s[*i])) {
        *frac += (s[*i] - '0') * scale;
        scale /= 10;
        (*i)++;
    }
    return *i == start || *i - start > 9 ? ERR_INVAL : ERR_OK;
}

static int parse_offset(const char *s, size_t len, size_t *i, int64_t *off_s)
{
    *off_s = 0;
    if (*i < len && (s[*i] == 'Z' || s[*i] == 'z')) {
        (*i)++;
        return ERR_OK;
    }
    if (*i >= len || (s[*i] != '+' && s[*i] != '-'))
        return ERR_INVAL;
    int sign = s[(*i)++] == '-' ? -1 : 1;
    int oh, om;
    if (fixed_digits(s, len, i, 2, &oh) || expect_char(s, len, i, ':') ||
        fixed_digits(s, len, i, 2, &om) || oh > 23 || om > 59)
        return ERR_INVAL;
    *off_s = sign * (oh * 3600 + om * 60);
    return ERR_OK;
}

/* RFC 3339: YYYY-MM-DD('T'|' ')HH:MM:SS[.frac](Z|+HH:MM), or a bare date. */
static int parse_rfc3339(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    int y, mo, d, h = 0, mi = 0, se = 0;
    int64_t frac = 0, off = 0;
    if (fixed_digits(s, len, &i, 4, &y) || expect_char(s, len, &i, '-') ||
        fixed_digits(s, len, &i, 2, &mo) || expect_char(s, len, &i, '-') ||
        fixed_digits(s, len, &i, 2, &d))
        return ERR_INVAL;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
        return ERR_INVAL;
    if (i < len) {
        if (s[i] != 'T' && s[i] != 't' && s[i] != ' ')
            return ERR_INVAL;
        i++;
        if (fixed_digits(s, len, &i, 2, &h) || expect_char(s, len, &i, ':') ||
            fixed_digits(s, len, &i, 2, &mi) || expect_char(s, len, &i, ':') ||
            fixed_digits(s, len, &i, 2, &se) || h > 23 || mi > 59 || se > 60)
            return ERR_INVAL;
        if (parse_frac(s, len, &i, &frac) || parse_offset(s, len, &i, &off) || i != len)
            return ERR_INVAL;
    }
    int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off;
    int64_t ns;
    if (__builtin_mul_overflow(secs, NS_PER_S, &ns) || __builtin_add_overflow(ns, frac, &ns))
        return ERR_INVAL;
    *out = ns;
    return ERR_OK;
}

static int parse_int64(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (i == len)
        return ERR_INVAL;
    int64_t v = 0;
    for (; i < len; i++) {
        if (!is_digit(s[i]))
            return ERR_INVAL;
        int dg = s[i] - '0';
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, neg ? -dg : dg, &v))
            return ERR_INVAL;
    }
    *out = v;
    return ERR_OK;
}

int sql_parse_time(const char *s, size_t len, int64_t now_ns, int64_t *out)
{
    if (len == 3 && memcmp(s, "now", 3) == 0) {
        *out = now_ns;
        return ERR_OK;
    }
    if (parse_int64(s, len, out) == ERR_OK)
        return ERR_OK;
    if (len > 1 && (s[0] == '-' || s[0] == '+')) {
        int64_t d, t;
        if (sql_parse_duration(s + 1, len - 1, &d) != ERR_OK)
            return ERR_INVAL;
        if (s[0] == '-' ? __builtin_sub_overflow(now_ns, d, &t)
                        : __builtin_add_overflow(now_ns, d, &t))
            return ERR_INVAL;
        *out = t;
        return ERR_OK;
    }
    return parse_rfc3339(s, len, out);
}
