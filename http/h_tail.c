/* GET /api/v1/tail: the live tail (query/tail.h) over HTTP, as NDJSON or,
 * for Accept: text/event-stream (or format=sse), as Server-Sent Events.
 * The response streams through libmicrohttpd's content reader. With a
 * thread per connection (http_threads = 0, the default) the reader blocks
 * for new rows; with a shared pool a blocked reader would hold up the
 * pool's other connections, so it suspends its connection instead and the
 * hub resumes it (MHD_ALLOW_SUSPEND_RESUME, set by server.c). The hub lives
 * in struct server: made at start, shut down (every stream ends) when the
 * server stops accepting, freed after the last connection. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/err.h"
#include "http/handlers.h"
#include "http/reply.h"
#include "query/tail.h"

#define TAIL_BLOCK (16 * 1024)
/* How long a read waits for rows before it looks whether the client hung
 * up (a blocked reader learns of it no other way). */
#define TAIL_WAIT_NS (250LL * 1000 * 1000)

/* The content reader's state: the client and its connection. */
struct tail_stream {
    struct tail_client *c;
    struct MHD_Connection *con;
    int fd;
    bool pooled; /* a thread serves many connections: suspend, never block */
};

int h_tail_start(void)
{
    const struct config *cfg = server.cfg;
    /* A stream silent for request_timeout would be cut as idle: the
     * keep-alive comes well before. */
    int64_t keepalive = cfg->tail_keepalive_ns;
    if (keepalive > cfg->request_timeout_ns / 2)
        keepalive = cfg->request_timeout_ns / 2;
    struct tail_hub_opts o = {
        .max_clients = (size_t)cfg->max_tail_clients,
        .client_buffer_bytes = (size_t)cfg->tail_buffer_bytes,
        .queue_bytes = (size_t)cfg->tail_buffer_bytes * 64,
        .keepalive_ns = keepalive,
        .initial_max_rows = 10000,
    };
    return tail_hub_new(server.store, &o, &server.tail);
}

void h_tail_shutdown(void)
{
    tail_hub_shutdown(server.tail);
}

void h_tail_free(void)
{
    tail_hub_free(server.tail);
    server.tail = NULL;
}

void h_tail_metrics(struct buf *out)
{
    tail_hub_metrics(server.tail, out);
}

/* True if the peer closed its side (or the socket failed). */
static bool hung_up(int fd)
{
    if (fd < 0)
        return false;
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static void stream_suspend(void *arg)
{
    MHD_suspend_connection(arg);
}

static void stream_resume(void *arg)
{
    MHD_resume_connection(arg);
}

/* With a thread pool: reads what there is, else suspends the connection
 * until the hub wakes it (rows, keep-alive, shutdown). */
static ssize_t pooled_read(struct tail_stream *ts, char *out, size_t max)
{
    for (;;) {
        ssize_t n = tail_read(ts->c, out, max, 0);
        if (n > 0)
            return n;
        if (n < 0)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (hung_up(ts->fd)) /* noticed after an output: a keep-alive at the latest */
            return MHD_CONTENT_READER_END_WITH_ERROR;
        if (tail_park(ts->c, stream_suspend, ts->con))
            return 0; /* libmicrohttpd calls again once resumed */
    }
}

static ssize_t tail_stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
    (void)pos;
    struct tail_stream *ts = cls;
    if (ts->pooled)
        return pooled_read(ts, out, max);
    for (;;) {
        ssize_t n = tail_read(ts->c, out, max, TAIL_WAIT_NS);
        if (n > 0)
            return n;
        if (n < 0)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (hung_up(ts->fd))
            return MHD_CONTENT_READER_END_WITH_ERROR;
    }
}

static void tail_stream_free(void *cls)
{
    struct tail_stream *ts = cls;
    tail_close(ts->c);
    free(ts);
}

static const char *param_get(void *arg, const char *name)
{
    return srv_arg(arg, name);
}

/* The output format: format= wins over Accept. -1 for a bad format=. */
static int tail_format(struct MHD_Connection *con)
{
    const char *f = srv_arg(con, "format");
    if (f && *f) {
        if (strcmp(f, "sse") == 0)
            return TAIL_SSE;
        return strcmp(f, "ndjson") == 0 ? TAIL_NDJSON : -1;
    }
    const char *acc = MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    return acc && strcasestr(acc, "text/event-stream") ? TAIL_SSE : TAIL_NDJSON;
}

static void tail_query_opts(const struct srv_req *req, struct query_opts *o)
{
    const struct config *cfg = server.cfg;
    query_opts_default(o);
    if (cfg->ntokens) {
        o->db_visible = auth_may_read;
        o->db_visible_arg = req->token;
    }
    o->max_get_rows = cfg->max_get_rows;
    o->allow_full_scan = cfg->allow_full_scan;
    o->max_groups = cfg->max_groups;
    srv_db_defaults(&o->db_defaults);
}

static enum MHD_Result tail_respond(struct MHD_Connection *con, struct srv_req *req,
                                    struct tail_client *c, int fmt)
{
    struct tail_stream *ts = xcalloc(1, sizeof *ts);
    ts->c = c;
    ts->con = con;
    ts->pooled = server.cfg->http_threads != 0;
    if (ts->pooled)
        tail_set_wake(c, stream_resume, con);
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_CONNECTION_FD);
    ts->fd = ci ? ci->connect_fd : -1;
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, TAIL_BLOCK, tail_stream_read, ts,
                                          tail_stream_free);
    if (!resp) {
        tail_stream_free(ts);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            fmt == TAIL_SSE ? "text/event-stream" : "application/x-ndjson");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no");
    return reply_queue(con, req, MHD_HTTP_OK, resp);
}

enum MHD_Result h_tail(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                       size_t *upload_size)
{
    (void)upload;
    (void)upload_size;
    const char *db = srv_arg(con, "db");
    if (!auth_require(con, req, CFG_RIGHT_READ, db))
        return MHD_YES;
    int fmt = tail_format(con);
    if (fmt < 0)
        return reply_error(con, req, MHD_HTTP_BAD_REQUEST, "format must be ndjson or sse");
    struct query_opts o;
    tail_query_opts(req, &o);
    struct tail_client *c = NULL;
    struct buf err = BUF_INIT;
    int rc = tail_open(server.tail, param_get, con, (enum tail_format)fmt, &o, &c, &err);
    if (rc) {
        unsigned status = rc == ERR_TOOBIG ? MHD_HTTP_BAD_REQUEST : reply_status_for(rc);
        enum MHD_Result r = reply_error(con, req, status, err.len ? buf_cstr(&err) : err_name(rc));
        buf_destroy(&err);
        return r;
    }
    buf_destroy(&err);
    return tail_respond(con, req, c, fmt);
}
