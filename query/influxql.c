/* The InfluxQL driver: runs each statement of a script into a result
 * (series of rows, or an error), then writes InfluxDB 1.x's reply: one
 * document, one document per chunk, or either indented (pretty). Times are
 * RFC 3339 with nanoseconds (trailing zeros trimmed) or epoch integers. */
#include "query/influxql.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "query/encode.h"
#include "query/iql_int.h"
#include "store/store.h"

int iql_epoch_unit(const char *v, int64_t *out)
{
    static const struct {
        const char *name;
        int64_t ns;
    } u[] = {{"ns", 1},
             {"n", 1},
             {"u", 1000},
             {"us", 1000},
             {"\xc2\xb5", 1000},
             {"\xc2\xb5s", 1000},
             {"ms", 1000000},
             {"s", 1000000000LL},
             {"m", 60000000000LL},
             {"h", 3600000000000LL}};
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        if (strcmp(v, u[i].name) == 0) {
            *out = u[i].ns;
            return ERR_OK;
        }
    *out = 0;
    return ERR_INVAL;
}

/* --- writing --- */

/* One series with rows [from, to); partial: more rows follow. */
static void put_series(struct buf *out, const struct iql_series *s, size_t from, size_t to,
                       bool partial)
{
    buf_putc(out, '{');
    if (s->name) {
        buf_puts(out, "\"name\":");
        enc_json_str(out, s->name, strlen(s->name));
        buf_putc(out, ',');
    }
    if (s->tags.len) {
        buf_puts(out, "\"tags\":");
        buf_append(out, s->tags.data, s->tags.len);
        buf_putc(out, ',');
    }
    buf_puts(out, "\"columns\":");
    buf_append(out, s->cols.data, s->cols.len);
    if (to > from) {
        buf_puts(out, ",\"values\":[");
        size_t a = from ? s->ends[from - 1] : 0;
        for (size_t i = from; i < to; i++) {
            if (i > from)
                buf_putc(out, ',');
            buf_append(out, s->rows.data + a, s->ends[i] - a);
            a = s->ends[i];
        }
        buf_putc(out, ']');
    }
    if (partial)
        buf_puts(out, ",\"partial\":true");
    buf_putc(out, '}');
}

static void put_result(struct buf *out, size_t id, const struct iql_result *r)
{
    buf_printf(out, "{\"statement_id\":%zu", id);
    if (r->err.len) {
        buf_puts(out, ",\"error\":");
        enc_json_str(out, r->err.data, r->err.len);
    } else if (r->n) {
        buf_puts(out, ",\"series\":[");
        for (size_t i = 0; i < r->n; i++) {
            if (i)
                buf_putc(out, ',');
            put_series(out, &r->series[i], 0, r->series[i].nrows, false);
        }
        buf_putc(out, ']');
    }
    buf_putc(out, '}');
}

/* Chunked: one line per chunk of at most size rows of one series. */
static void put_chunks(struct buf *out, size_t id, const struct iql_result *r, size_t size)
{
    if (r->err.len || r->n == 0) {
        buf_puts(out, "{\"results\":[");
        put_result(out, id, r);
        buf_puts(out, "]}\n");
        return;
    }
    for (size_t i = 0; i < r->n; i++) {
        const struct iql_series *s = &r->series[i];
        size_t from = 0;
        do {
            size_t to = s->nrows - from > size ? from + size : s->nrows;
            bool more_rows = to < s->nrows;
            bool last = !more_rows && i + 1 == r->n;
            buf_printf(out, "{\"results\":[{\"statement_id\":%zu,\"series\":[", id);
            put_series(out, s, from, to, more_rows);
            buf_puts(out, last ? "]}]}\n" : "],\"partial\":true}]}\n");
            from = to;
        } while (from < s->nrows);
    }
}

/* Go's json.MarshalIndent(v, "", "    ") layout of compact JSON. */
static void indent(const char *s, size_t n, struct buf *out)
{
    int depth = 0;
    bool str = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (str) {
            buf_putc(out, c);
            if (c == '\\' && i + 1 < n)
                buf_putc(out, s[++i]);
            else if (c == '"')
                str = false;
            continue;
        }
        if (c == '"') {
            str = true;
            buf_putc(out, c);
        } else if (c == '{' || c == '[') {
            buf_putc(out, c);
            if (i + 1 < n && (s[i + 1] == '}' || s[i + 1] == ']')) {
                buf_putc(out, s[++i]);
                continue;
            }
            depth++;
            buf_putc(out, '\n');
            for (int k = 0; k < depth; k++)
                buf_puts(out, "    ");
        } else if (c == '}' || c == ']') {
            depth--;
            buf_putc(out, '\n');
            for (int k = 0; k < depth; k++)
                buf_puts(out, "    ");
            buf_putc(out, c);
        } else if (c == ',') {
            buf_puts(out, ",\n");
            for (int k = 0; k < depth; k++)
                buf_puts(out, "    ");
        } else if (c == ':') {
            buf_puts(out, ": ");
        } else {
            buf_putc(out, c);
        }
    }
}

static void run_stmt(const struct iql_ctx *c, const struct iql_stmt *st, struct iql_result *r)
{
    int rc = st->kind == IQL_SELECT ? iql_exec_select(c, st, r) : iql_exec_meta(c, st, r);
    if (rc && r->err.len == 0)
        buf_printf(&r->err, "%s", err_name(rc));
    if (r->err.len) { /* a failed statement shows no partial output */
        struct buf keep = r->err;
        memset(&r->err, 0, sizeof r->err);
        iql_result_destroy(r);
        r->err = keep;
    }
}

void iql_exec(struct store *s, const struct iql_script *sc, const struct iql_opts *o,
              struct buf *out)
{
    struct iql_ctx c = {s, o, o->q->now_ns ? o->q->now_ns : 0, NULL};
    if (!c.now) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        c.now = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    }
    struct buf doc = BUF_INIT;
    if (!o->chunk_size)
        buf_puts(&doc, "{\"results\":[");
    bool failed = false;
    for (size_t i = 0; i < sc->n; i++) {
        struct iql_result r;
        memset(&r, 0, sizeof r);
        if (failed) /* InfluxDB runs no statement after a failed one */
            buf_puts(&r.err, "not executed");
        else
            run_stmt(&c, &sc->stmts[i], &r);
        failed |= r.err.len > 0;
        if (o->chunk_size) {
            put_chunks(&doc, i, &r, o->chunk_size);
        } else {
            if (i)
                buf_putc(&doc, ',');
            put_result(&doc, i, &r);
        }
        iql_result_destroy(&r);
    }
    if (!o->chunk_size)
        buf_puts(&doc, "]}\n");
    if (!o->pretty) {
        buf_append(out, doc.data, doc.len);
    } else {
        size_t a = 0;
        for (size_t i = 0; i < doc.len; i++)
            if (doc.data[i] == '\n') {
                indent(doc.data + a, i - a, out);
                buf_putc(out, '\n');
                a = i + 1;
            }
    }
    buf_destroy(&doc);
}
