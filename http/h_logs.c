/* Log push endpoints: Loki's POST /loki/api/v1/push and OpenTelemetry's
 * POST /v1/logs (/otlp/v1/logs). The body is gathered by the ingest layer
 * (gzip inflated, capped by max_body_bytes), checked whole, decoded and
 * written; the reply comes after the rows are durable under wal_sync.
 *
 * Loki: 204; 400 with a plain-text reason for a malformed body or for
 * refused entries (the others are stored, as Loki does). OTLP: 200 with an
 * ExportLogsServiceResponse in the request's encoding (partialSuccess
 * when records were refused); 400 with a google.rpc.Status for a
 * malformed body. Both: 413, 503 + Retry-After, 507 as /write. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/clock.h"
#include "base/err.h"
#include "base/json.h"
#include "http/handlers.h"
#include "http/reply.h"
#include "ingest/ingest.h"
#include "ingest/logrow.h"
#include "ingest/pb.h"
#include "store/store.h"

enum logs_ep { LEP_LOKI, LEP_OTLP, LEP_COUNT };
static const char *lep_names[LEP_COUNT] = {"loki", "otlp"};

enum logs_outcome {
    LO_OK,
    LO_PARTIAL,
    LO_BAD,
    LO_UNAUTHORIZED,
    LO_TOO_BIG,
    LO_BUSY,
    LO_ERROR,
    LO_COUNT
};
static const char *lo_names[LO_COUNT] = {"ok",      "partial", "bad_request", "unauthorized",
                                         "too_big", "busy",    "error"};

static struct {
    atomic_uint_fast64_t requests[LEP_COUNT][LO_COUNT];
    atomic_uint_fast64_t written[LEP_COUNT];
    atomic_uint_fast64_t dropped[LEP_COUNT];
    atomic_uint_fast64_t body_bytes[LEP_COUNT];
} lm;

struct logs_ctx {
    enum logs_ep ep;
    bool is_proto;
    struct logs_map map;
    struct store_db *db;
    struct ingest *in;
    int error;
    uint64_t body_bytes;
};

static void logs_ctx_free(void *p)
{
    struct logs_ctx *c = p;
    if (!c)
        return;
    ingest_free(c->in);
    if (c->db)
        store_db_unref(c->db);
    free(c);
}

static void count(struct logs_ctx *c, enum logs_outcome o)
{
    atomic_fetch_add(&lm.requests[c->ep][o], 1);
    atomic_fetch_add(&lm.body_bytes[c->ep], c->body_bytes);
    if (c->in) {
        atomic_fetch_add(&lm.written[c->ep], ingest_written(c->in));
        atomic_fetch_add(&lm.dropped[c->ep], ingest_dropped(c->in));
    }
}

static enum logs_outcome outcome_of(int err)
{
    switch (err) {
    case ERR_INVAL:
    case ERR_NOTFOUND: return LO_BAD;
    case ERR_TOOBIG: return LO_TOO_BIG;
    case ERR_BUSY: return LO_BUSY;
    default: return LO_ERROR;
    }
}

/* google.rpc.Status{1: code, 2: message} in the request's encoding. */
static enum MHD_Result otlp_status(struct MHD_Connection *con, struct srv_req *req,
                                   struct logs_ctx *c, unsigned status, const char *msg)
{
    struct buf b = BUF_INIT;
    /* gRPC codes: 3 INVALID_ARGUMENT, 8 RESOURCE_EXHAUSTED, 14 UNAVAILABLE, 13 INTERNAL */
    unsigned code = status == 400 || status == 415 ? 3
                    : status == 413                ? 8
                    : status == 503                ? 14
                                                   : 13;
    if (c->is_proto) {
        pb_put_varint(&b, 1, code);
        pb_put_bytes(&b, 2, msg, strlen(msg));
    } else {
        buf_printf(&b, "{\"code\":%u,\"message\":", code);
        json_str(&b, msg, strlen(msg));
        buf_putc(&b, '}');
    }
    enum MHD_Result r =
        reply_send(con, req, status, c->is_proto ? "application/x-protobuf" : "application/json",
                   b.data ? b.data : "", b.len);
    buf_destroy(&b);
    return r;
}

static enum MHD_Result fail(struct MHD_Connection *con, struct srv_req *req, struct logs_ctx *c,
                            enum logs_outcome o, unsigned status, const char *msg)
{
    count(c, o);
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE || status >= 500)
        return reply_error(con, req, status, msg); /* JSON, with Retry-After when busy */
    if (c->ep == LEP_OTLP)
        return otlp_status(con, req, c, status, msg);
    return reply_send(con, req, status, "text/plain; charset=utf-8", msg, strlen(msg));
}

/* db= in the URL, else the X-Scope-OrgID header (Loki's tenant), else the
 * configured database of the endpoint. */
static const char *db_name(struct MHD_Connection *con, enum logs_ep ep)
{
    const char *db = srv_arg(con, "db");
    if (!db || !*db)
        db = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "X-Scope-OrgID");
    if (!db || !*db)
        db = ep == LEP_LOKI ? server.cfg->loki_db : server.cfg->otlp_db;
    return db;
}

static bool has_word(const char *s, const char *w)
{
    return s && strcasestr(s, w) != NULL;
}

/* The body's format from Content-Type: NULL or a reason for 415. Loki
 * takes anything but JSON as protobuf, as Loki does. */
static const char *format_of(struct MHD_Connection *con, struct logs_ctx *c,
                             struct ingest_params *p)
{
    const char *ct =
        MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    bool is_json = has_word(ct, "json");
    if (c->ep == LEP_OTLP && !is_json && !has_word(ct, "protobuf"))
        return "unsupported Content-Type: use application/json or application/x-protobuf";
    c->is_proto = !is_json;
    if (c->ep == LEP_LOKI)
        p->format = is_json ? INGEST_LOKI_JSON : INGEST_LOKI_PROTO;
    else
        p->format = is_json ? INGEST_OTLP_JSON : INGEST_OTLP_PROTO;
    return NULL;
}

static const char *params_of(struct MHD_Connection *con, struct logs_ctx *c,
                             struct ingest_params *p)
{
    const struct config *cfg = server.cfg;
    ingest_params_default(p);
    p->max_body_bytes = (size_t)cfg->max_body_bytes;
    p->arrival_ns = clock_real_ns();
    p->reject_older_than_ns = cfg->reject_older_than_ns;
    p->reject_newer_than_ns = cfg->reject_newer_than_ns;
    p->stamp = &server.stamp;
    /* (a push body is written as one batch whatever these say: ingest.c) */
    p->batch_rows = SIZE_MAX;
    p->batch_bytes = SIZE_MAX;
    if (c->ep == LEP_LOKI)
        c->map = (struct logs_map){cfg->loki_host_labels, cfg->loki_event_labels,
                                   cfg->loki_default_event};
    else
        c->map = (struct logs_map){cfg->otlp_host_attributes, cfg->otlp_event_attributes,
                                   cfg->otlp_default_event};
    p->map = &c->map;
    const char *enc =
        MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_ENCODING);
    if (enc && strcasecmp(enc, "gzip") == 0)
        p->is_gzip = true;
    else if (enc && *enc && strcasecmp(enc, "identity") != 0 &&
             !(c->ep == LEP_LOKI && strcasecmp(enc, "snappy") == 0))
        return "unsupported Content-Encoding: use gzip or none";
    return format_of(con, c, p);
}

static enum MHD_Result open_failed(struct MHD_Connection *con, struct srv_req *req,
                                   struct logs_ctx *c, const char *db, int rc)
{
    char msg[400];
    if (rc == ERR_NOTFOUND)
        snprintf(msg, sizeof msg,
                 "database not found: %s (create it, or set auto_create_databases = true)", db);
    else if (rc == ERR_INVAL)
        snprintf(msg, sizeof msg, "invalid database name: %s (" STORE_DB_NAME_RULE ")", db);
    else
        snprintf(msg, sizeof msg, "cannot open database %s: %s", db, err_name(rc));
    return fail(con, req, c, outcome_of(rc), reply_status_for(rc), msg);
}

static enum MHD_Result logs_begin(struct MHD_Connection *con, struct srv_req *req)
{
    struct logs_ctx *c = xcalloc(1, sizeof *c);
    c->ep = req->route == ROUTE_LOKI_PUSH ? LEP_LOKI : LEP_OTLP;
    req->ctx = c;
    req->ctx_free = logs_ctx_free;
    struct ingest_params p;
    const char *why = params_of(con, c, &p);
    if (why)
        return fail(con, req, c, LO_BAD, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, why);
    const char *db = db_name(con, c->ep);
    if (!auth_require(con, req, CFG_RIGHT_WRITE, db)) {
        count(c, LO_UNAUTHORIZED);
        return MHD_YES;
    }
    const char *cl =
        MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoull(cl, NULL, 10) > server.cfg->max_body_bytes) {
        char msg[160];
        snprintf(msg, sizeof msg, "request body too large: over max_body_bytes (%llu bytes)",
                 (unsigned long long)server.cfg->max_body_bytes);
        return fail(con, req, c, LO_TOO_BIG, MHD_HTTP_CONTENT_TOO_LARGE, msg);
    }
    struct event_limits lim;
    h_write_limits(&lim);
    if ((why = ingest_params_check(&p, &lim)))
        return fail(con, req, c, LO_BAD, MHD_HTTP_BAD_REQUEST, why);
    int rc = h_write_open_db(db, &c->db);
    if (rc != ERR_OK)
        return open_failed(con, req, c, db, rc);
    rc = ingest_new(&p, &lim, c->db, &c->in);
    if (rc != ERR_OK)
        return fail(con, req, c, outcome_of(rc), reply_status_for(rc), err_name(rc));
    return MHD_YES;
}

static enum MHD_Result logs_error(struct MHD_Connection *con, struct srv_req *req,
                                  struct logs_ctx *c, int rc)
{
    const char *text = ingest_error_text(c->in);
    struct buf msg = BUF_INIT;
    switch (rc) {
    case ERR_TOOBIG:
        buf_printf(&msg, "request body too large: over max_body_bytes (%llu bytes)%s%s",
                   (unsigned long long)server.cfg->max_body_bytes, *text ? ": " : "", text);
        break;
    case ERR_BUSY: buf_puts(&msg, "the store is flushing behind writes: retry later"); break;
    case ERR_NOSPC: buf_puts(&msg, "disk full: writes are refused until space is freed"); break;
    case ERR_INVAL:
        buf_printf(&msg, "bad request body: %s", *text ? text : "invalid encoding");
        break;
    default: buf_printf(&msg, "write failed: %s", err_name(rc)); break;
    }
    enum MHD_Result r = fail(con, req, c, outcome_of(rc), reply_status_for(rc), buf_cstr(&msg));
    buf_destroy(&msg);
    return r;
}

/* Loki: 400 naming the refused entries; the others were stored. */
static enum MHD_Result loki_partial(struct MHD_Connection *con, struct srv_req *req,
                                    struct logs_ctx *c)
{
    struct buf msg = BUF_INIT;
    buf_printf(&msg, "%llu of %llu entries refused (the others were stored):\n%s\n",
               (unsigned long long)ingest_dropped(c->in),
               (unsigned long long)(ingest_dropped(c->in) + ingest_written(c->in)),
               ingest_error_text(c->in));
    count(c, LO_PARTIAL);
    enum MHD_Result r =
        reply_send(con, req, MHD_HTTP_BAD_REQUEST, "text/plain; charset=utf-8", msg.data, msg.len);
    buf_destroy(&msg);
    return r;
}

/* OTLP: 200 with ExportLogsServiceResponse{1: partial_success{1:
 * rejected_log_records, 2: error_message}}; empty when all were kept. */
static enum MHD_Result otlp_ok(struct MHD_Connection *con, struct srv_req *req, struct logs_ctx *c)
{
    uint64_t dropped = ingest_dropped(c->in);
    const char *text = ingest_error_text(c->in);
    struct buf b = BUF_INIT, inner = BUF_INIT;
    if (c->is_proto && dropped) {
        pb_put_varint(&inner, 1, dropped);
        pb_put_bytes(&inner, 2, text, strlen(text));
        pb_put_bytes(&b, 1, inner.data, inner.len);
    } else if (!c->is_proto && dropped) {
        buf_printf(&b, "{\"partialSuccess\":{\"rejectedLogRecords\":\"%llu\",\"errorMessage\":",
                   (unsigned long long)dropped);
        json_str(&b, text, strlen(text));
        buf_puts(&b, "}}");
    } else if (!c->is_proto) {
        buf_puts(&b, "{}");
    }
    count(c, dropped ? LO_PARTIAL : LO_OK);
    enum MHD_Result r = reply_send(con, req, MHD_HTTP_OK,
                                   c->is_proto ? "application/x-protobuf" : "application/json",
                                   b.data ? b.data : "", b.len);
    buf_destroy(&b);
    buf_destroy(&inner);
    return r;
}

enum MHD_Result h_logs(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                       size_t *upload_size)
{
    struct logs_ctx *c = req->ctx;
    if (!c)
        return logs_begin(con, req);
    if (*upload_size > 0) {
        c->body_bytes += *upload_size;
        if (c->error == ERR_OK)
            c->error = ingest_feed(c->in, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    int rc = c->error != ERR_OK ? c->error : ingest_finish(c->in);
    if (rc != ERR_OK)
        return logs_error(con, req, c, rc);
    if (c->ep == LEP_OTLP)
        return otlp_ok(con, req, c);
    if (ingest_dropped(c->in) > 0)
        return loki_partial(con, req, c);
    count(c, LO_OK);
    return reply_no_content(con, req);
}

void h_logs_metrics(struct buf *out)
{
    buf_puts(out, "# HELP logbucket_push_requests_total Log push requests (Loki, OTLP) by endpoint "
                  "and outcome.\n"
                  "# TYPE logbucket_push_requests_total counter\n");
    for (int e = 0; e < LEP_COUNT; e++)
        for (int o = 0; o < LO_COUNT; o++) {
            uint64_t n = atomic_load(&lm.requests[e][o]);
            if (n)
                buf_printf(out,
                           "logbucket_push_requests_total{endpoint=\"%s\",outcome=\"%s\"} %llu\n",
                           lep_names[e], lo_names[o], (unsigned long long)n);
        }
    buf_puts(out, "# HELP logbucket_push_rows_total Log entries of push requests, written or "
                  "refused.\n"
                  "# TYPE logbucket_push_rows_total counter\n");
    for (int e = 0; e < LEP_COUNT; e++) {
        buf_printf(out, "logbucket_push_rows_total{endpoint=\"%s\",result=\"written\"} %llu\n",
                   lep_names[e], (unsigned long long)atomic_load(&lm.written[e]));
        buf_printf(out, "logbucket_push_rows_total{endpoint=\"%s\",result=\"dropped\"} %llu\n",
                   lep_names[e], (unsigned long long)atomic_load(&lm.dropped[e]));
    }
    buf_puts(out, "# HELP logbucket_push_body_bytes_total Bytes of push request bodies as "
                  "received.\n"
                  "# TYPE logbucket_push_body_bytes_total counter\n");
    for (int e = 0; e < LEP_COUNT; e++)
        buf_printf(out, "logbucket_push_body_bytes_total{endpoint=\"%s\"} %llu\n", lep_names[e],
                   (unsigned long long)atomic_load(&lm.body_bytes[e]));
}
