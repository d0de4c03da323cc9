/* tz('Area/City') of InfluxQL: the zone's UTC offsets read from the
 * system's TZif file (/usr/share/zoneinfo, RFC 8536; the 64-bit data of
 * version 2 and later, else the 32-bit one). After the last transition the
 * last offset holds (the files carry transitions well ahead). Used for the
 * times of the reply and the start of GROUP BY time buckets, as InfluxDB
 * does. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "query/agg.h"
#include "query/iql_tz.h"

#define TZ_DIR "/usr/share/zoneinfo/"
#define TZ_MAX_FILE (1 << 20)

struct iql_tz {
    int64_t *at;  /* transition times, UTC seconds, ascending */
    int32_t *off; /* the offset (seconds east) from at[i] on */
    size_t n;
    int32_t off0; /* before the first transition */
};

static bool name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 128 || name[0] == '/' || strstr(name, ".."))
        return false;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              *p == '/' || *p == '_' || *p == '-' || *p == '+'))
            return false;
    return true;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

/* Reads the data block at p (of len bytes) whose times are tsize bytes. */
static int parse_block(const unsigned char *p, size_t len, size_t tsize, struct iql_tz *z)
{
    if (len < 44 || memcmp(p, "TZif", 4) != 0)
        return ERR_INVAL;
    uint32_t isut = be32(p + 20), isstd = be32(p + 24), leap = be32(p + 28);
    uint32_t timecnt = be32(p + 32), typecnt = be32(p + 36), charcnt = be32(p + 40);
    size_t need = 44 + (size_t)timecnt * (tsize + 1) + (size_t)typecnt * 6 + charcnt +
                  (size_t)leap * (tsize + 4) + isstd + isut;
    if (typecnt == 0 || typecnt > 256 || timecnt > 100000 || need > len)
        return ERR_INVAL;
    const unsigned char *times = p + 44, *idx = times + (size_t)timecnt * tsize;
    const unsigned char *types = idx + timecnt;
    z->at = malloc((timecnt ? timecnt : 1) * sizeof *z->at);
    z->off = malloc((timecnt ? timecnt : 1) * sizeof *z->off);
    if (!z->at || !z->off)
        return ERR_NOMEM;
    z->n = timecnt;
    z->off0 = (int32_t)be32(types);
    for (uint32_t k = 0; k < typecnt; k++) /* the first standard-time type */
        if (types[k * 6 + 4] == 0) {
            z->off0 = (int32_t)be32(types + k * 6);
            break;
        }
    for (uint32_t i = 0; i < timecnt; i++) {
        if (idx[i] >= typecnt)
            return ERR_INVAL;
        z->at[i] = tsize == 8 ? be64(times + i * 8) : (int32_t)be32(times + i * 4);
        z->off[i] = (int32_t)be32(types + idx[i] * 6);
    }
    return ERR_OK;
}

static size_t block_len(const unsigned char *p)
{
    return 44 + (size_t)be32(p + 32) * 5 + (size_t)be32(p + 36) * 6 + be32(p + 40) +
           (size_t)be32(p + 28) * 8 + be32(p + 24) + be32(p + 20);
}

static int parse(const unsigned char *p, size_t len, struct iql_tz *z)
{
    if (len < 44 || memcmp(p, "TZif", 4) != 0)
        return ERR_INVAL;
    if (p[4] >= '2') {
        size_t v1 = block_len(p);
        if (v1 < len)
            return parse_block(p + v1, len - v1, 8, z);
        return ERR_INVAL;
    }
    return parse_block(p, len, 4, z);
}

void iql_tz_free(struct iql_tz *z)
{
    if (!z)
        return;
    free(z->at);
    free(z->off);
    free(z);
}

int iql_tz_load(const char *name, struct iql_tz **out, struct buf *err)
{
    char path[256];
    if (!name_ok(name)) {
        buf_printf(err, "unable to find time zone %s", name);
        return ERR_INVAL;
    }
    snprintf(path, sizeof path, TZ_DIR "%s", name);
    FILE *f = fopen(path, "rb");
    unsigned char *data = malloc(TZ_MAX_FILE);
    size_t len = f && data ? fread(data, 1, TZ_MAX_FILE, f) : 0;
    if (f)
        fclose(f);
    struct iql_tz *z = calloc(1, sizeof *z);
    int rc = z && data ? parse(data, len, z) : ERR_NOMEM;
    free(data);
    if (rc) {
        iql_tz_free(z);
        buf_printf(err, "unable to find time zone %s", name);
        return ERR_INVAL;
    }
    *out = z;
    return ERR_OK;
}

int32_t iql_tz_offset(const struct iql_tz *z, int64_t ns)
{
    if (!z)
        return 0;
    int64_t s = ns / 1000000000LL - (ns % 1000000000LL < 0);
    size_t lo = 0, hi = z->n;
    while (lo < hi) { /* the first transition after s */
        size_t mid = (lo + hi) / 2;
        if (z->at[mid] <= s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? z->off0 : z->off[lo - 1];
}

static int64_t floor_mod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

int64_t iql_tz_bucket(const struct iql_tz *z, int64_t ts, int64_t interval, int64_t offset)
{
    if (ts < INT64_MIN / 2 || ts > INT64_MAX / 2) /* no zone arithmetic near the ends */
        return agg_time_bucket(ts, interval, offset);
    int64_t t = ts - offset;
    int64_t zone = (int64_t)iql_tz_offset(z, t) * 1000000000LL;
    int64_t start = t - floor_mod(t + zone, interval);
    int64_t zone2 = (int64_t)iql_tz_offset(z, start) * 1000000000LL;
    if (zone2 != zone)
        start = t - floor_mod(t + zone2, interval);
    return start + offset;
}
