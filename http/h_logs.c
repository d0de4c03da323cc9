/* The parts of the write path (h_write.c) that are Loki's push API
 * (POST /loki/api/v1/push) and OpenTelemetry's logs (POST /v1/logs,
 * /otlp/v1/logs): their parameters and their reply shapes. The body is
 * gathered, checked whole and written as h_write.c does for every path.
 *
 * Loki: 204; 400 with a plain-text reason for a malformed body or for
 * refused entries (the others are stored, as Loki does). OTLP: 200 with an
 * ExportLogsServiceResponse in the request's encoding (partialSuccess
 * when records were refused); 400 with a google.rpc.Status for a
 * malformed body. Both: 413, 503 + Retry-After, 507 as /write. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/json.h"
#include "http/handlers.h"
#include "http/reply.h"
#include "ingest/ingest.h"
#include "ingest/logrow.h"
#include "ingest/pb.h"

static bool has_word(const char *s, const char *w)
{
    return s && strcasestr(s, w) != NULL;
}

const char *logs_db_default(struct MHD_Connection *con, bool is_otlp)
{
    const char *db = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "X-Scope-OrgID");
    if (!db || !*db)
        db = is_otlp ? server.cfg->otlp_db : server.cfg->loki_db;
    return db;
}

const char *logs_params(struct MHD_Connection *con, bool is_otlp, struct logs_map *map,
                        bool *is_proto, struct ingest_params *p)
{
    const struct config *cfg = server.cfg;
    /* (a push body is written as one batch whatever these say: ingest.c) */
    p->batch_rows = SIZE_MAX;
    p->batch_bytes = SIZE_MAX;
    if (is_otlp)
        *map = (struct logs_map){cfg->otlp_host_attributes, cfg->otlp_event_attributes,
                                 cfg->otlp_default_event};
    else
        *map = (struct logs_map){cfg->loki_host_labels, cfg->loki_event_labels,
                                 cfg->loki_default_event};
    p->map = map;
    /* Loki takes anything but JSON as protobuf, as Loki does */
    const char *ct =
        MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    bool is_json = has_word(ct, "json");
    if (is_otlp && !is_json && !has_word(ct, "protobuf"))
        return "unsupported Content-Type: use application/json or application/x-protobuf";
    *is_proto = !is_json;
    if (is_otlp)
        p->format = is_json ? INGEST_OTLP_JSON : INGEST_OTLP_PROTO;
    else
        p->format = is_json ? INGEST_LOKI_JSON : INGEST_LOKI_PROTO;
    return NULL;
}

/* google.rpc.Status{1: code, 2: message} in the request's encoding. */
static enum MHD_Result otlp_status(struct MHD_Connection *con, struct srv_req *req, bool is_proto,
                                   unsigned status, const char *msg)
{
    struct buf b = BUF_INIT;
    /* gRPC codes: 3 INVALID_ARGUMENT, 8 RESOURCE_EXHAUSTED, 13 INTERNAL */
    unsigned code = status == 400 || status == 415 ? 3 : status == 413 ? 8 : 13;
    if (is_proto) {
        pb_put_varint(&b, 1, code);
        pb_put_bytes(&b, 2, msg, strlen(msg));
    } else {
        buf_printf(&b, "{\"code\":%u,\"message\":", code);
        json_str(&b, msg, strlen(msg));
        buf_putc(&b, '}');
    }
    enum MHD_Result r =
        reply_send(con, req, status, is_proto ? "application/x-protobuf" : "application/json",
                   b.data ? b.data : "", b.len);
    buf_destroy(&b);
    return r;
}

enum MHD_Result logs_reply_error(struct MHD_Connection *con, struct srv_req *req, bool is_otlp,
                                 bool is_proto, unsigned status, const char *msg)
{
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE || status >= 500)
        return reply_error(con, req, status, msg); /* JSON, with Retry-After when busy */
    if (is_otlp)
        return otlp_status(con, req, is_proto, status, msg);
    return reply_send(con, req, status, "text/plain; charset=utf-8", msg, strlen(msg));
}

enum MHD_Result loki_reply_partial(struct MHD_Connection *con, struct srv_req *req,
                                   struct ingest *in)
{
    struct buf msg = BUF_INIT;
    buf_printf(&msg, "%llu of %llu entries refused (the others were stored):\n%s\n",
               (unsigned long long)ingest_dropped(in),
               (unsigned long long)(ingest_dropped(in) + ingest_written(in)),
               ingest_error_text(in));
    enum MHD_Result r =
        reply_send(con, req, MHD_HTTP_BAD_REQUEST, "text/plain; charset=utf-8", msg.data, msg.len);
    buf_destroy(&msg);
    return r;
}

enum MHD_Result otlp_reply_ok(struct MHD_Connection *con, struct srv_req *req, bool is_proto,
                              struct ingest *in)
{
    uint64_t dropped = ingest_dropped(in);
    const char *text = ingest_error_text(in);
    struct buf b = BUF_INIT, inner = BUF_INIT;
    if (is_proto && dropped) {
        pb_put_varint(&inner, 1, dropped);
        pb_put_bytes(&inner, 2, text, strlen(text));
        pb_put_bytes(&b, 1, inner.data, inner.len);
    } else if (!is_proto && dropped) {
        buf_printf(&b, "{\"partialSuccess\":{\"rejectedLogRecords\":\"%llu\",\"errorMessage\":",
                   (unsigned long long)dropped);
        json_str(&b, text, strlen(text));
        buf_puts(&b, "}}");
    } else if (!is_proto) {
        buf_puts(&b, "{}");
    }
    enum MHD_Result r =
        reply_send(con, req, MHD_HTTP_OK, is_proto ? "application/x-protobuf" : "application/json",
                   b.data ? b.data : "", b.len);
    buf_destroy(&b);
    buf_destroy(&inner);
    return r;
}
