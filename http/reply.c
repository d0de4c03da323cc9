/* ERR_* -> HTTP status, JSON error bodies and the headers every response
 * carries. Nothing else in the daemon chooses a status for an error code. */
#include "http/reply.h"

#include <string.h>

#include "base/err.h"
#include "base/json.h"
#include "base/log.h"
#include "http/server.h"

unsigned reply_status_for(int err)
{
    switch (err) {
    case ERR_OK: return MHD_HTTP_OK;
    case ERR_INVAL: return MHD_HTTP_BAD_REQUEST;
    case ERR_PERM: return MHD_HTTP_FORBIDDEN;
    case ERR_NOTFOUND: return MHD_HTTP_NOT_FOUND;
    case ERR_TOOBIG: return MHD_HTTP_CONTENT_TOO_LARGE;
    case ERR_BUSY: return MHD_HTTP_SERVICE_UNAVAILABLE;
    case ERR_NOSPC: return MHD_HTTP_INSUFFICIENT_STORAGE;
    case ERR_EXISTS: return MHD_HTTP_CONFLICT;
    case ERR_OFFLINE: return MHD_HTTP_SERVICE_UNAVAILABLE;
    default: return MHD_HTTP_INTERNAL_SERVER_ERROR;
    }
}

void reply_json_escape(struct buf *out, const char *s, size_t len)
{
    json_escape(out, s, len);
}

void reply_add_common_headers(struct MHD_Response *resp, struct srv_req *req)
{
    if (req) {
        MHD_add_response_header(resp, "Request-Id", req->id);
        MHD_add_response_header(resp, "X-Request-Id", req->id);
    }
    MHD_add_response_header(resp, "X-Logbucket-Version", LB_VERSION);
    MHD_add_response_header(resp, "X-Influxdb-Version", LB_INFLUX_VERSION);
    MHD_add_response_header(resp, "X-Influxdb-Build", "OSS");
    /* Elasticsearch clients refuse a server whose replies lack it. */
    if (req && (req->route == ROUTE_ES_ROOT || req->route == ROUTE_ES_BULK ||
                req->route == ROUTE_ES_PROBE))
        MHD_add_response_header(resp, "X-Elastic-Product", "Elasticsearch");
    /* While stopping, keep-alive connections are closed after each reply so
     * that no new request starts on them. */
    if (atomic_load(&server.stopping))
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
}

enum MHD_Result reply_queue(struct MHD_Connection *con, struct srv_req *req, unsigned status,
                            struct MHD_Response *resp)
{
    reply_add_common_headers(resp, req);
    enum MHD_Result r = MHD_queue_response(con, status, resp);
    MHD_destroy_response(resp);
    if (req) {
        req->responded = true;
        req->status = status;
    }
    return r;
}

enum MHD_Result reply_send(struct MHD_Connection *con, struct srv_req *req, unsigned status,
                           const char *content_type, const char *body, size_t len)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    if (content_type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    return reply_queue(con, req, status, resp);
}

struct MHD_Response *reply_error_response(const char *msg, const char *extra_json)
{
    struct buf body = BUF_INIT;
    buf_puts(&body, "{\"error\":\"");
    reply_json_escape(&body, msg, strlen(msg));
    buf_putc(&body, '"');
    if (extra_json)
        buf_puts(&body, extra_json);
    buf_puts(&body, "}\n");
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(body.len, body.data, MHD_RESPMEM_MUST_COPY);
    buf_destroy(&body);
    if (!resp)
        return NULL;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    /* A header value must not carry line breaks. */
    char hdr[512];
    size_t n = 0;
    for (const char *p = msg; *p && n < sizeof hdr - 1; p++)
        hdr[n++] = (*p == '\r' || *p == '\n') ? ' ' : *p;
    hdr[n] = '\0';
    MHD_add_response_header(resp, "X-Influxdb-Error", hdr);
    return resp;
}

enum MHD_Result reply_error(struct MHD_Connection *con, struct srv_req *req, unsigned status,
                            const char *msg)
{
    return reply_error_extra(con, req, status, msg, NULL);
}

enum MHD_Result reply_error_extra(struct MHD_Connection *con, struct srv_req *req, unsigned status,
                                  const char *msg, const char *extra_json)
{
    struct MHD_Response *resp = reply_error_response(msg, extra_json);
    if (!resp)
        return MHD_NO;
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    if (status >= 500 && status != MHD_HTTP_SERVICE_UNAVAILABLE &&
        status != MHD_HTTP_INSUFFICIENT_STORAGE)
        log_error("request %s: %u %s", req ? req->id : "-", status, msg);
    return reply_queue(con, req, status, resp);
}

enum MHD_Result reply_err(struct MHD_Connection *con, struct srv_req *req, int err, const char *msg)
{
    return reply_error(con, req, reply_status_for(err), msg);
}

enum MHD_Result reply_no_content(struct MHD_Connection *con, struct srv_req *req)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    return reply_queue(con, req, MHD_HTTP_NO_CONTENT, resp);
}
