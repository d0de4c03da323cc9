/* Per-request ingest: optional gzip inflate (bounded output buffer, capped
 * totals), the parser of the request's format, row encoding and batching
 * into a sink. Knows nothing of the store: ingest_store.c supplies the sink
 * that writes batches with store_write, so parser tests never link it. */
#include "ingest/ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/clock.h"
#include "base/err.h"
#include "base/json.h"
#include "ingest/esbulk.h"
#include "ingest/jsonl.h"
#include "ingest/lineproto.h"
#include "ingest/logs.h"
#include "ingest/rawline.h"
#include "model/record.h"

#define ZOUT_BYTES (64 * 1024)

struct ingest {
    struct ingest_params prm;
    struct event_limits lim;
    struct ingest_sink sink;

    /* the request's parser (one of the three, by prm.format) and the
     * feed that drives it */
    struct lp_parser *lp;
    struct raw_parser *raw;
    struct jsonl_parser *jsonl;
    struct esbulk_parser *es;
    struct event_feed *feed;
    char last_byte; /* of the (inflated) body, for ESBULK's final newline */

    z_stream z;
    bool is_z_init;
    bool is_z_end; /* the current gzip member is complete */
    char *zout;

    uint64_t body_bytes;
    uint64_t inflated_bytes;
    int64_t lo, hi; /* accepted ts window */
    size_t pend_rows, pend_bytes;
    size_t whole_max; /* whole_request: most pend_bytes */
    uint64_t written, dropped;
    struct buf errors;
    struct buf errors_json;
    size_t nerrors;         /* lines in errors */
    struct buf id, value;   /* encoding of the current row */
    struct rec_tag *sorted; /* the current point's tags, sorted by key */
    size_t sorted_cap;
    int status; /* sticky */

    struct buf body; /* whole-body formats: the (inflated) body */
};

static bool is_whole_body(enum ingest_format f)
{
    return f == INGEST_LOKI_JSON || f == INGEST_LOKI_PROTO || f == INGEST_OTLP_JSON ||
           f == INGEST_OTLP_PROTO;
}

/* --- setup -------------------------------------------------------------- */

void ingest_params_default(struct ingest_params *p)
{
    memset(p, 0, sizeof *p);
    p->format = INGEST_LINEPROTO;
    p->whole_request = true;
}

const char *ingest_params_check(const struct ingest_params *p, const struct event_limits *lim)
{
    if (!lim->max_line_bytes || !lim->max_key_bytes || !lim->max_fields_per_line)
        return "bad limits: max_line_bytes, max_key_bytes and max_fields_per_line must be > 0";
    if ((p->ns_per_unit < 0 && p->ns_per_unit != LP_PRECISION_AUTO) ||
        p->reject_older_than_ns < 0 || p->reject_newer_than_ns < 0)
        return "bad parameters: negative precision or reject window";
    if (p->format == INGEST_LINEPROTO)
        return NULL;
    if (p->format == INGEST_ESBULK)
        return p->es_map ? NULL : "bulk ingest needs a document mapping";
    if (is_whole_body(p->format))
        return p->map && p->map->default_event && *p->map->default_event
                   ? NULL
                   : "log push needs a mapping with a default event";
    if (p->format != INGEST_RAW && p->format != INGEST_JSONL)
        return "unknown ingest format";
    if (p->format == INGEST_RAW && (!p->event || !*p->event))
        return "raw ingest needs event=NAME";
    if (p->event && !*p->event)
        return "event= must not be empty";
    const char *host = p->host ? p->host : lim->default_host ? lim->default_host : "";
    /* JSONL without a default event: a stand-in name, so the host alone is checked */
    return event_check_names(lim, slice_cstr(host), slice_cstr(p->event ? p->event : "x"));
}

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

int ingest_new_sink(const struct ingest_params *params, const struct event_limits *lim,
                    const struct ingest_sink *sink, struct ingest **out)
{
    if (ingest_params_check(params, lim))
        return ERR_INVAL;
    struct ingest *in = xcalloc(1, sizeof *in);
    in->prm = *params;
    in->prm.host = NULL; /* copied into the raw parser; not kept */
    in->prm.event = NULL;
    in->prm.es_index = NULL;
    in->prm.es_map = NULL;
    in->lim = *lim;
    in->sink = *sink;
    if (!in->prm.arrival_ns)
        in->prm.arrival_ns = clock_real_ns();
    if (!in->prm.batch_rows)
        in->prm.batch_rows = INGEST_BATCH_ROWS;
    if (!in->prm.batch_bytes)
        in->prm.batch_bytes = INGEST_BATCH_BYTES;
    in->whole_max = INGEST_WHOLE_MAX_BYTES;
    if (in->prm.max_body_bytes > INGEST_WHOLE_MAX_BYTES / INGEST_WHOLE_FACTOR)
        in->whole_max = in->prm.max_body_bytes < SIZE_MAX / INGEST_WHOLE_FACTOR
                            ? in->prm.max_body_bytes * INGEST_WHOLE_FACTOR
                            : SIZE_MAX;
    if (in->prm.is_atomic) /* one batch, as whole requests are */
        in->prm.whole_request = true;
    in->lo = params->reject_older_than_ns
                 ? sat_add(in->prm.arrival_ns, -params->reject_older_than_ns)
                 : INT64_MIN;
    in->hi = params->reject_newer_than_ns
                 ? sat_add(in->prm.arrival_ns, params->reject_newer_than_ns)
                 : INT64_MAX;
    buf_init(&in->errors);
    buf_init(&in->errors_json);
    buf_init(&in->id);
    buf_init(&in->value);

    const char *why = NULL;
    switch (params->format) {
    case INGEST_LINEPROTO:
        in->lp = lp_new(lim, params->ns_per_unit ? params->ns_per_unit : 1); /* or AUTO */
        in->feed = lp_event_feed(in->lp);
        break;
    case INGEST_RAW: {
        struct raw_parser *rp = NULL;
        if (raw_new(lim, params->host, params->event, params->stamp, &rp, &why)) {
            in->sink.destroy = NULL; /* the caller keeps the sink on failure */
            ingest_free(in);
            return ERR_INVAL;
        }
        in->raw = rp;
        in->feed = raw_event_feed(rp);
        break;
    }
    case INGEST_JSONL:
        in->jsonl = jsonl_new(lim, params->stamp, params->host, params->event);
        in->feed = jsonl_event_feed(in->jsonl);
        break;
    case INGEST_ESBULK:
        in->es =
            esbulk_new(lim, params->es_map, params->es_index, params->stamp, in->prm.arrival_ns);
        in->feed = esbulk_event_feed(in->es);
        if (params->es_filter)
            esbulk_set_filter(in->es, params->es_filter);
        /* one batch: a request Elasticsearch would refuse whole stores nothing */
        in->prm.batch_rows = SIZE_MAX;
        in->prm.batch_bytes = SIZE_MAX;
        in->last_byte = '\n';
        break;
    default: buf_thread_take(&in->body); break;
    }
    if (params->is_gzip) {
        /* 16 + MAX_WBITS: gzip framing only, as Content-Encoding says. */
        if (inflateInit2(&in->z, 16 + MAX_WBITS) != Z_OK) {
            in->sink.destroy = NULL;
            ingest_free(in);
            return ERR_NOMEM;
        }
        in->is_z_init = true;
        in->zout = xmalloc(ZOUT_BYTES);
    }
    *out = in;
    return ERR_OK;
}

void ingest_free(struct ingest *in)
{
    if (!in)
        return;
    lp_free(in->lp);
    raw_free(in->raw);
    jsonl_free(in->jsonl);
    esbulk_free(in->es);
    if (in->is_z_init)
        inflateEnd(&in->z);
    free(in->zout);
    if (in->sink.destroy)
        in->sink.destroy(in->sink.arg);
    buf_destroy(&in->errors);
    buf_destroy(&in->errors_json);
    buf_thread_give(&in->body);
    buf_destroy(&in->id);
    buf_destroy(&in->value);
    free(in->sorted);
    free(in);
}

/* --- rows --------------------------------------------------------------- */

static void drop(struct ingest *in, uint64_t line_no, struct slice line, const char *reason)
{
    in->dropped++;
    if (in->nerrors >= INGEST_MAX_ERRORS)
        return;
    const char *what = in->prm.format == INGEST_LOKI_JSON || in->prm.format == INGEST_LOKI_PROTO
                           ? "entry"
                       : is_whole_body(in->prm.format) ? "log record"
                                                       : "line";
    buf_printf(&in->errors, "%s%s %llu: %s", in->nerrors ? "\n" : "", what,
               (unsigned long long)line_no, reason);
    struct buf *j = &in->errors_json;
    buf_puts(j, in->nerrors ? ",{\"original_line\":" : "{\"original_line\":");
    json_str(j, line.ptr, line.len < INGEST_ORIGINAL_MAX ? line.len : INGEST_ORIGINAL_MAX);
    buf_printf(j, ",\"line_number\":%llu,\"error_message\":", (unsigned long long)line_no);
    json_str(j, reason, strlen(reason));
    buf_putc(j, '}');
    in->nerrors++;
}

static void flush(struct ingest *in)
{
    if (!in->pend_rows)
        return;
    int rc = in->sink.write(in->sink.arg);
    if (rc)
        in->status = rc;
    else
        in->written += in->pend_rows;
    in->pend_rows = 0;
    in->pend_bytes = 0;
}

static void too_many_rows(struct ingest *in)
{
    in->status = ERR_TOOBIG;
    buf_reset(&in->errors);
    buf_printf(&in->errors,
               "the rows of this request take more than %zu MiB of memory (%llu rows so far): "
               "split it into smaller requests",
               in->whole_max >> 20, (unsigned long long)in->pend_rows);
    in->nerrors = 0;
}

/* The tags of ev sorted by key (insertion sort: a handful of tags). */
static const struct rec_tag *sort_tags(struct ingest *in, const struct event *ev)
{
    if (ev->ntags > in->sorted_cap) {
        in->sorted_cap = ev->ntags;
        in->sorted = xrealloc(in->sorted, in->sorted_cap * sizeof *in->sorted);
    }
    for (size_t i = 0; i < ev->ntags; i++) {
        struct rec_tag t = ev->tags[i];
        size_t j = i;
        for (; j > 0 && slice_cmp(in->sorted[j - 1].key, t.key) > 0; j--)
            in->sorted[j] = in->sorted[j - 1];
        in->sorted[j] = t;
    }
    return in->sorted;
}

/* The row's id and value (struct ingest_row): a point's series and fields,
 * or a log entry's whole content. */
static void encode_row(struct ingest *in, const struct event *ev, struct ingest_row *row)
{
    buf_reset(&in->id);
    buf_reset(&in->value);
    if (in->prm.format == INGEST_LINEPROTO) {
        if (ev->ntags)
            rec_encode(&in->id, sort_tags(in, ev), ev->ntags, NULL, 0);
        rec_encode(&in->value, NULL, 0, ev->fields, ev->nfields);
        row->merge = true;
    } else {
        rec_encode(&in->id, ev->tags, ev->ntags, ev->fields, ev->nfields);
    }
    row->id = slice_make(in->id.data, in->id.len);
    row->value = slice_make(in->value.data, in->value.len);
}

/* NULL if the event was added, else why it was dropped. */
static const char *add_event(struct ingest *in, const struct event_result *r)
{
    const struct event *ev = &r->ev;
    int64_t ts = ev->has_ts ? ev->ts : in->prm.arrival_ns;
    const char *why = ts < in->lo   ? "timestamp older than the reject_older_than window"
                      : ts > in->hi ? "timestamp newer than the reject_newer_than window"
                                    : NULL;
    if (why) {
        drop(in, r->line_no, r->line, why);
        return why;
    }
    struct ingest_row row = {ts, ev->host, ev->name, {0}, {0}, false};
    encode_row(in, ev, &row);
    in->sink.put(in->sink.arg, &row);
    in->pend_rows++;
    in->pend_bytes += row.id.len + row.value.len + ev->host.len + ev->name.len + 32;
    if (in->prm.whole_request) {
        if (in->pend_bytes > in->whole_max)
            too_many_rows(in);
    } else if (in->pend_rows >= in->prm.batch_rows || in->pend_bytes >= in->prm.batch_bytes) {
        flush(in);
    }
    return NULL;
}

static void handle(struct ingest *in, const struct event_result *r)
{
    const char *why = NULL;
    if (r->kind == EVENT_OK)
        why = add_event(in, r);
    else if (r->kind == EVENT_BAD)
        drop(in, r->line_no, r->line, why = r->reason);
    if (in->es && r->kind != EVENT_NONE)
        esbulk_item_done(in->es, why);
}

/* A bulk body Elasticsearch refuses whole: the error, nothing written. */
static void check_bulk(struct ingest *in)
{
    const char *fatal = esbulk_fatal(in->es);
    if (!fatal)
        return;
    in->status = ERR_INVAL;
    buf_reset(&in->errors);
    buf_puts(&in->errors, fatal);
    in->nerrors = 0;
}

static void parse_bytes(struct ingest *in, const char *data, size_t len)
{
    if (is_whole_body(in->prm.format)) {
        buf_append(&in->body, data, len);
        return;
    }
    struct event_result r;
    size_t n_total = len;
    char last = len ? data[len - 1] : 0;
    while (len && !in->status) {
        size_t n = event_feed_next(in->feed, data, len, &r);
        handle(in, &r);
        data += n;
        len -= n;
        if (in->es && esbulk_fatal(in->es))
            break; /* the request fails whole: nothing more to read */
    }
    if (in->es) {
        if (n_total)
            in->last_byte = last;
        check_bulk(in);
    }
}

static void gzip_error(struct ingest *in, int status, const char *what)
{
    in->status = status;
    buf_reset(&in->errors);
    buf_printf(&in->errors, "bad gzip body: %s", what);
    in->nerrors = 0;
}

static void inflate_bytes(struct ingest *in, const char *data, size_t len)
{
    z_stream *z = &in->z;
    z->next_in = (unsigned char *)(uintptr_t)data;
    z->avail_in = (uInt)len;
    while (!in->status) {
        if (in->is_z_end) {
            if (z->avail_in == 0)
                break;
            /* another gzip member follows (concatenated gzip is valid) */
            inflateReset(z);
            in->is_z_end = false;
        }
        z->next_out = (unsigned char *)in->zout;
        z->avail_out = ZOUT_BYTES;
        int rc = inflate(z, Z_NO_FLUSH);
        size_t produced = ZOUT_BYTES - z->avail_out;
        if (produced) {
            in->inflated_bytes += produced;
            if (in->prm.max_body_bytes && in->inflated_bytes > in->prm.max_body_bytes) {
                in->status = ERR_TOOBIG;
                break;
            }
            parse_bytes(in, in->zout, produced);
        }
        if (rc == Z_STREAM_END) {
            in->is_z_end = true;
            continue;
        }
        if (rc == Z_BUF_ERROR || (rc == Z_OK && z->avail_in == 0 && z->avail_out != 0))
            break; /* needs more input */
        if (rc != Z_OK) {
            gzip_error(in, rc == Z_MEM_ERROR ? ERR_NOMEM : ERR_INVAL,
                       z->msg ? z->msg : "inflate failed");
            break;
        }
    }
}

int ingest_feed(struct ingest *in, const void *data, size_t len)
{
    if (in->status || len == 0)
        return in->status;
    in->body_bytes += len;
    if (in->prm.max_body_bytes && in->body_bytes > in->prm.max_body_bytes) {
        in->status = ERR_TOOBIG;
        return in->status;
    }
    if (in->is_z_init) {
        /* zlib counts in uInt: feed huge chunks in slices */
        const char *p = data;
        while (len && !in->status) {
            size_t n = len > (1u << 30) ? (1u << 30) : len;
            inflate_bytes(in, p, n);
            p += n;
            len -= n;
        }
    } else {
        parse_bytes(in, data, len);
    }
    return in->status;
}

/* --- whole-body formats ------------------------------------------------ */

static void body_row(void *arg, uint64_t no, const struct event *ev)
{
    struct event_result r = {EVENT_OK, no, *ev, NULL, {0}};
    add_event(arg, &r);
}

static void body_reject(void *arg, uint64_t no, const char *reason)
{
    drop(arg, no, slice_make("", 0), reason);
}

typedef int (*body_decoder)(const char *, size_t, const struct logs_opts *, const struct logs_out *,
                            struct buf *);

static void body_error(struct ingest *in, int status, struct buf *why)
{
    in->status = status;
    buf_reset(&in->errors);
    buf_append(&in->errors, why->data, why->len);
    in->nerrors = 0;
}

/* Decodes the body into pending rows, written in one batch only if the
 * whole body is well-formed: nothing is stored from a malformed one. */
static void decode_body(struct ingest *in)
{
    static const body_decoder decoders[] = {loki_decode_json, loki_decode_proto, otlp_decode_json,
                                            otlp_decode_proto};
    struct buf why = BUF_INIT, raw = BUF_INIT;
    const char *body = in->body.data ? in->body.data : "";
    size_t len = in->body.len;
    int rc = ERR_OK;
    if (in->prm.format == INGEST_LOKI_PROTO) {
        rc = logs_unsnappy(body, len, in->prm.max_body_bytes, &raw, &why);
        body = raw.data ? raw.data : "";
        len = raw.len;
    }
    struct logs_opts o = {*in->prm.map, in->lim, in->prm.stamp, in->prm.arrival_ns};
    struct logs_out out = {body_row, body_reject, in};
    body_decoder fn = decoders[in->prm.format - INGEST_LOKI_JSON];
    if (rc == ERR_OK && in->prm.format == INGEST_OTLP_JSON)
        rc = otlp_decode_json_buf(&in->body, &o, &out, &why); /* parsed in place */
    else if (rc == ERR_OK && in->prm.format == INGEST_LOKI_JSON)
        rc = loki_decode_json_buf(&in->body, &o, &out, &why);
    else if (rc == ERR_OK)
        rc = fn(body, len, &o, &out, &why);
    if (rc != ERR_OK) {
        body_error(in, rc, &why); /* the pending rows are never written */
        in->dropped = 0;
    } else {
        flush(in);
    }
    buf_destroy(&why);
    buf_destroy(&raw);
}

int ingest_finish(struct ingest *in)
{
    if (in->status)
        return in->status;
    if (in->is_z_init && in->body_bytes && !in->is_z_end) {
        gzip_error(in, ERR_INVAL, "truncated gzip body");
        return in->status;
    }
    if (is_whole_body(in->prm.format)) {
        decode_body(in);
        return in->status;
    }
    struct event_result r;
    if (event_feed_finish(in->feed, &r))
        handle(in, &r);
    if (in->es) {
        esbulk_end(in->es, in->last_byte == '\n');
        check_bulk(in);
        if (in->status)
            return in->status;
    }
    if (in->prm.is_atomic && in->dropped)
        return ERR_OK; /* nothing is written; the caller reports the bad lines */
    flush(in);
    return in->status;
}

uint64_t ingest_written(const struct ingest *in)
{
    return in->written;
}

uint64_t ingest_dropped(const struct ingest *in)
{
    return in->dropped;
}

const char *ingest_error_json(struct ingest *in)
{
    return buf_cstr(&in->errors_json);
}

const char *ingest_error_text(struct ingest *in)
{
    return buf_cstr(&in->errors);
}

struct esbulk_parser *ingest_esbulk(struct ingest *in)
{
    return in->es;
}

int ingest_status(const struct ingest *in)
{
    return in->status;
}
