/* RFC 3339 timestamps (model/time.h). */
#include "model/time.h"

#include <stdbool.h>
#include <string.h>

#include "base/decimal.h"
#include "base/err.h"

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static bool digits(const char *s, size_t n, unsigned *out)
{
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    *out = v;
    return true;
}

static bool valid_date(unsigned y, unsigned mo, unsigned d)
{
    static const unsigned mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1])
        return false;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return !(mo == 2 && d == 29 && !leap);
}

/* The fraction at s[*i] (after its '.'), as ns; false if it has no digit.
 * Digits past the ninth are read and dropped. A nanosecond fraction's
 * first eight digits are read as one word (base/decimal.h). */
static bool fraction(const char *s, size_t n, size_t *i, int64_t *frac)
{
    static const int64_t scale[10] = {1000000000, 100000000, 10000000, 1000000, 100000,
                                      10000,      1000,      100,      10,      1};
    size_t j = *i, nd = 0;
    int64_t v = 0;
    uint32_t d8;
    if (n - j >= 8 && dec_digits8(s + j, &d8)) {
        v = d8;
        j += 8;
        nd = 8;
    }
    for (; j < n && s[j] >= '0' && s[j] <= '9'; j++, nd++)
        if (nd < 9)
            v = v * 10 + (s[j] - '0');
    *i = j;
    if (nd == 0)
        return false;
    *frac = v * scale[nd < 9 ? nd : 9];
    return true;
}

/* The zone at s[i..n) to its end: Z, or +HH:MM / -HH:MM as seconds east. */
static bool zone(const char *s, size_t n, size_t i, int64_t *off)
{
    *off = 0;
    if (i + 1 == n && (s[i] == 'Z' || s[i] == 'z'))
        return true;
    unsigned oh, om;
    if (i + 6 != n || (s[i] != '+' && s[i] != '-') || s[i + 3] != ':' ||
        !digits(s + i + 1, 2, &oh) || !digits(s + i + 4, 2, &om) || oh > 23 || om > 59)
        return false;
    *off = (int64_t)(oh * 3600 + om * 60) * (s[i] == '-' ? -1 : 1);
    return true;
}

/* The days since the epoch of s[0..10), "YYYY-MM-DD", a valid date. */
static bool date_days(const char *s, int64_t *days)
{
    unsigned y, mo, d;
    if (!digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) || s[7] != '-' ||
        !digits(s + 8, 2, &d) || !valid_date(y, mo, d))
        return false;
    *days = days_from_civil(y, mo, d);
    return true;
}

/* The seconds of s[0..19), "YYYY-MM-DDTHH:MM:SS" (or 't' or ' ' between
 * date and time), before any zone offset. REQUIRES: n >= 19. */
static bool head_secs(const char *s, int64_t *secs)
{
    int64_t days;
    unsigned h, mi, sec;
    if (!date_days(s, &days) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
        !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
        !digits(s + 17, 2, &sec) || h > 23 || mi > 59 || sec > 60)
        return false;
    *secs = days * 86400 + h * 3600 + mi * 60 + sec;
    return true;
}

/* ns of secs (before the offset) and what follows the seconds at s[19..n):
 * [.fraction] and the zone. */
static int tail_ns(const char *s, size_t n, int64_t secs, int64_t *out)
{
    int64_t frac = 0, off = 0;
    size_t i = 19;
    if (s[i] == '.' && (++i, !fraction(s, n, &i, &frac)))
        return ERR_INVAL;
    if (i >= n || !zone(s, n, i, &off))
        return ERR_INVAL;
    secs -= off;
    int64_t ns;
    if (secs < 0 && frac > 0) {
        /* keep the product in range down to INT64_MIN */
        secs++;
        frac -= 1000000000;
    }
    if (__builtin_mul_overflow(secs, (int64_t)1000000000, &ns) ||
        __builtin_add_overflow(ns, frac, &ns))
        return ERR_INVAL;
    *out = ns;
    return ERR_OK;
}

int time_parse_rfc3339(const char *s, size_t n, int64_t *out)
{
    if (n == 10) {
        int64_t days, ns;
        if (!date_days(s, &days) || __builtin_mul_overflow(days * 86400, (int64_t)1000000000, &ns))
            return ERR_INVAL;
        *out = ns;
        return ERR_OK;
    }
    int64_t secs;
    if (n < 20 || !head_secs(s, &secs))
        return ERR_INVAL;
    return tail_ns(s, n, secs, out);
}

int time_parse_rfc3339_memo(struct time_memo *m, const char *s, size_t n, int64_t *out)
{
    if (n < 20)
        return time_parse_rfc3339(s, n, out);
    if (!m->set || memcmp(m->head, s, sizeof m->head) != 0) {
        int64_t secs;
        if (!head_secs(s, &secs))
            return ERR_INVAL;
        memcpy(m->head, s, sizeof m->head);
        m->secs = secs;
        m->set = true;
    }
    return tail_ns(s, n, m->secs, out);
}
