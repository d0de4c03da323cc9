/* The encoding-independent parts of the OTLP log mapping (otlp_int.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "ingest/otlp_int.h"

void otlp_dec_init(struct otlp_dec *d, const struct logs_opts *o, const struct logs_out *out,
                   struct buf *err)
{
    d->o = o;
    d->out = out;
    d->err = err;
    d->no = 0;
    d->rec_error = NULL;
    logrow_init(&d->row);
    buf_init(&d->scratch);
    logs_names_init(&d->host_keys, o->map.host_keys);
    logs_names_init(&d->event_keys, o->map.event_keys);
    d->res = NULL;
    d->nres = d->res_cap = 0;
    buf_init(&d->res_text);
    otlp_res_clear(d);
}

void otlp_dec_destroy(struct otlp_dec *d)
{
    logrow_destroy(&d->row);
    buf_destroy(&d->scratch);
    buf_destroy(&d->res_text);
    free(d->res);
}

int otlp_fail(struct otlp_dec *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(d->err, fmt, ap);
    va_end(ap);
    return ERR_INVAL;
}

const char *otlp_severity_name(int64_t n)
{
    static const char *numbered[6][4] = {{"TRACE", "TRACE2", "TRACE3", "TRACE4"},
                                         {"DEBUG", "DEBUG2", "DEBUG3", "DEBUG4"},
                                         {"INFO", "INFO2", "INFO3", "INFO4"},
                                         {"WARN", "WARN2", "WARN3", "WARN4"},
                                         {"ERROR", "ERROR2", "ERROR3", "ERROR4"},
                                         {"FATAL", "FATAL2", "FATAL3", "FATAL4"}};
    if (n < 1 || n > 24)
        return NULL;
    return numbered[(n - 1) / 4][(n - 1) % 4];
}

void otlp_base64(struct buf *out, const char *s, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)u[i] << 16 | (uint32_t)u[i + 1] << 8 | u[i + 2];
        char b[4] = {tab[v >> 18], tab[(v >> 12) & 63], tab[(v >> 6) & 63], tab[v & 63]};
        buf_append(out, b, 4);
    }
    if (i < n) {
        uint32_t v = (uint32_t)u[i] << 16 | (i + 1 < n ? (uint32_t)u[i + 1] << 8 : 0);
        char b[4] = {tab[v >> 18], tab[(v >> 12) & 63], i + 1 < n ? tab[(v >> 6) & 63] : '=', '='};
        buf_append(out, b, 4);
    }
}

void otlp_hex(struct buf *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        buf_putc(out, hex[c >> 4]);
        buf_putc(out, hex[c & 15]);
    }
}

void otlp_json_double(struct buf *out, double v)
{
    if (!isfinite(v)) {
        buf_puts(out, "null");
        return;
    }
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%.17g", v);
    buf_append(out, tmp, (size_t)n);
}

void otlp_add_attr(struct otlp_dec *d, struct slice key, const struct otlp_attr *a,
                   bool is_resource)
{
    struct logrow *r = &d->row;
    if (is_resource && a->kind == OTLP_STRING) {
        int rank = logs_names_rank(&d->host_keys, key);
        if (rank >= 0) {
            logrow_set_host(r, a->s, rank);
            return;
        }
        rank = logs_names_rank(&d->event_keys, key);
        if (rank >= 0) {
            logrow_set_event(r, a->s, rank);
            return;
        }
    }
    switch (a->kind) {
    case OTLP_NONE: break;
    case OTLP_STRING:
    case OTLP_TEXT: logrow_tag(r, key, a->s); break;
    case OTLP_BOOL: logrow_bool(r, key, a->b); break;
    case OTLP_INT: logrow_int(r, key, a->i); break;
    case OTLP_DOUBLE:
        if (!isfinite(a->f)) {
            if (!d->rec_error)
                d->rec_error = "attribute is a NaN or infinite double";
            break;
        }
        logrow_float(r, key, a->f);
        break;
    }
}

void otlp_res_clear(struct otlp_dec *d)
{
    d->nres = 0;
    d->res_records = 0;
    buf_reset(&d->res_text);
}

bool otlp_res_decode(const struct otlp_dec *d)
{
    return d->res_records < 2;
}

void otlp_res_attr(struct otlp_dec *d, struct slice key, const struct otlp_attr *a)
{
    if (d->res_records == 0) {
        otlp_add_attr(d, key, a, true);
        return;
    }
    if (d->nres == d->res_cap) {
        d->res_cap = d->res_cap ? d->res_cap * 2 : 8;
        d->res = xrealloc(d->res, d->res_cap * sizeof *d->res);
    }
    struct otlp_res_attr *ra = &d->res[d->nres++];
    ra->key = key;
    ra->a = *a;
    if (a->kind == OTLP_TEXT) {
        ra->text_off = d->res_text.len;
        buf_append(&d->res_text, a->s.ptr, a->s.len);
    }
}

void otlp_res_done(struct otlp_dec *d)
{
    if (d->res_records++ == 0)
        return;
    for (size_t i = 0; i < d->nres; i++) {
        const struct otlp_res_attr *ra = &d->res[i];
        if (ra->a.kind != OTLP_TEXT) {
            otlp_add_attr(d, ra->key, &ra->a, true);
            continue;
        }
        struct otlp_attr a = ra->a;
        a.s = slice_make(d->res_text.data + ra->text_off, a.s.len);
        otlp_add_attr(d, ra->key, &a, true);
    }
}

void otlp_end_record(struct otlp_dec *d, uint64_t time_ns, uint64_t observed_ns)
{
    uint64_t t = time_ns ? time_ns : observed_ns;
    struct event ev;
    memset(&ev, 0, sizeof ev);
    const char *why = d->rec_error;
    if (!why && t > (uint64_t)INT64_MAX)
        why = "timeUnixNano out of range";
    if (!why)
        why = logrow_event(&d->row, &d->o->lim, d->o->map.default_event, &ev);
    if (why) {
        d->out->reject(d->out->arg, d->no, why);
        return;
    }
    if (t)
        ev.ts = (int64_t)t;
    else
        ev.ts = d->o->stamp ? event_stamp_next(d->o->stamp) : d->o->arrival_ns;
    ev.has_ts = true;
    d->out->row(d->out->arg, d->no, &ev);
}
