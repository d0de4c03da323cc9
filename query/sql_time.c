/* Times and durations of the SQL subset and of the query parameters:
 * integer ns, RFC 3339 (model/time.h, the rule JSON lines' "ts" follows too),
 * now-relative ("-1h"), and durations ("30d", "1h30m").
 * All arithmetic is overflow-checked: an out-of-range value is ERR_INVAL. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/err.h"
#include "config/config.h"
#include "model/time.h"
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
    return time_parse_rfc3339(s, len, out);
}
