/* The results of InfluxQL statements (iql_int.h): series and their rows
 * as JSON texts, times as InfluxDB writes them (RFC 3339 with nanoseconds,
 * trailing zeros trimmed, or epoch integers), and opening a statement's
 * database with InfluxDB's errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "query/encode.h"
#include "query/iql_int.h"
#include "query/iql_tz.h"
#include "store/store.h"

void iql_put_time(const struct iql_ctx *c, struct buf *out, int64_t ns)
{
    if (c->o->epoch) {
        enc_i64(out, ns / c->o->epoch);
        return;
    }
    int32_t off = iql_tz_offset(c->tz, ns);
    int64_t sec = ns / 1000000000LL, frac = ns % 1000000000LL;
    if (frac < 0) {
        frac += 1000000000LL;
        sec--;
    }
    time_t t = (time_t)(sec + off);
    struct tm tm;
    gmtime_r(&t, &tm);
    char tmp[64];
    size_t n = strftime(tmp, sizeof tmp, "\"%Y-%m-%dT%H:%M:%S", &tm);
    if (frac) {
        int w = 9;
        while (frac % 10 == 0) {
            frac /= 10;
            w--;
        }
        n += (size_t)snprintf(tmp + n, sizeof tmp - n, ".%0*lld", w, (long long)frac);
    }
    buf_append(out, tmp, n);
    if (off == 0) {
        buf_puts(out, "Z\"");
        return;
    }
    int32_t a = off < 0 ? -off : off;
    buf_printf(out, "%c%02d:%02d\"", off < 0 ? '-' : '+', (int)(a / 3600), (int)(a / 60 % 60));
}

/* --- results --- */

struct iql_series *iql_series_add(struct iql_result *r, const char *name, size_t nlen)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 4;
        r->series = xrealloc(r->series, r->cap * sizeof *r->series);
    }
    struct iql_series *s = &r->series[r->n++];
    memset(s, 0, sizeof *s);
    s->name = name ? xstrndup(name, nlen) : NULL;
    return s;
}

void iql_series_row_end(struct iql_result *r, struct iql_series *s, size_t start)
{
    if (s->nrows == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->ends = xrealloc(s->ends, s->cap * sizeof *s->ends);
    }
    s->ends[s->nrows++] = s->rows.len;
    r->bytes += s->rows.len - start;
}

void iql_result_destroy(struct iql_result *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->series[i].name);
        buf_destroy(&r->series[i].tags);
        buf_destroy(&r->series[i].cols);
        buf_destroy(&r->series[i].rows);
        free(r->series[i].ends);
    }
    free(r->series);
    buf_destroy(&r->err);
    memset(r, 0, sizeof *r);
}

int iql_open_db(const struct iql_ctx *c, const char *db, struct store_db **out,
                struct iql_result *r)
{
    if (!db)
        db = c->o->db;
    if (!db || !*db) {
        buf_puts(&r->err, "database name required");
        return ERR_INVAL;
    }
    int rc = store_db_get(c->s, db, out);
    if (rc == ERR_NOTFOUND)
        buf_printf(&r->err, "database not found: %s", db);
    else if (rc)
        buf_printf(&r->err, "cannot open database %s: %s", db, err_name(rc));
    return rc;
}
