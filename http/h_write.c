/* Write endpoints: POST /write (InfluxDB 1.x), /api/v2/write (2.x),
 * /api/v3/write_lp (3.x), /api/v1/ingest (raw lines or JSON lines), the
 * Elasticsearch bulk API (/_bulk, /{index}/_bulk), Loki's push and
 * OpenTelemetry's logs (their parameters and replies in h_logs.c). The body is fed to the
 * ingest layer piece by piece as it arrives; the reply comes after the last
 * batch is durable under wal_sync: 204, or 400 "partial write" naming the
 * bad lines, 413, 503 + Retry-After under back-pressure, 507 on a full disk.
 * InfluxDB 3, Elasticsearch, Loki and OTLP get their own reply shapes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/clock.h"
#include "base/err.h"
#include "base/histogram.h"
#include "http/handlers.h"
#include "http/reply.h"
#include "ingest/esbulk.h"
#include "ingest/ingest.h"
#include "ingest/lineproto.h"
#include "ingest/logrow.h"
#include "store/store.h"

enum write_ep { EP_V1, EP_V2, EP_INGEST, EP_V3, EP_ES, EP_LOKI, EP_OTLP, EP_COUNT };
static const char *ep_names[EP_COUNT] = {"write",   "v2_write", "ingest", "v3_write_lp",
                                         "es_bulk", "loki",     "otlp"};

enum write_outcome {
    OUT_OK,
    OUT_PARTIAL,
    OUT_UNPARSABLE,
    OUT_BAD_REQUEST,
    OUT_UNAUTHORIZED,
    OUT_NOT_FOUND,
    OUT_TOO_BIG,
    OUT_BUSY,
    OUT_NOSPC,
    OUT_ERROR,
    OUT_COUNT
};
static const char *outcome_names[OUT_COUNT] = {"ok",          "partial",      "unparsable",
                                               "bad_request", "unauthorized", "not_found",
                                               "too_big",     "busy",         "disk_full",
                                               "error"};

static struct {
    atomic_uint_fast64_t requests[EP_COUNT][OUT_COUNT];
    atomic_uint_fast64_t lines_written[EP_COUNT];
    atomic_uint_fast64_t lines_dropped[EP_COUNT];
    atomic_uint_fast64_t body_bytes[EP_COUNT];
    struct histogram latency;
} wm;

struct write_ctx {
    enum write_ep ep;
    struct store_db *db;
    struct ingest *in;
    int error; /* sticky error of feeding */
    uint64_t body_bytes;
    struct jsonl_es_map es_map; /* EP_ES: borrowed by the ingest */
    char es_index[256];
    bool is_atomic; /* EP_V3 with accept_partial=false */
    bool is_proto;  /* EP_LOKI, EP_OTLP: a protobuf body */
    struct logs_map logs_map;
};

static void write_ctx_free(void *p)
{
    struct write_ctx *c = p;
    if (!c)
        return;
    ingest_free(c->in);
    if (c->db)
        store_db_unref(c->db);
    free(c);
}

static enum write_ep ep_of(enum route_id r)
{
    switch (r) {
    case ROUTE_WRITE_V2: return EP_V2;
    case ROUTE_INGEST: return EP_INGEST;
    case ROUTE_WRITE_V3: return EP_V3;
    case ROUTE_ES_BULK: return EP_ES;
    case ROUTE_LOKI_PUSH: return EP_LOKI;
    case ROUTE_OTLP_LOGS: return EP_OTLP;
    default: return EP_V1;
    }
}

static void count(struct write_ctx *c, struct srv_req *req, enum write_outcome o)
{
    atomic_fetch_add(&wm.requests[c->ep][o], 1);
    atomic_fetch_add(&wm.body_bytes[c->ep], c->body_bytes);
    if (c->in) {
        atomic_fetch_add(&wm.lines_written[c->ep], ingest_written(c->in));
        atomic_fetch_add(&wm.lines_dropped[c->ep], ingest_dropped(c->in));
    }
    histogram_record(&wm.latency, clock_mono_ns() - req->start_ns);
}

/* Elasticsearch's error type for a status. */
static const char *es_type(unsigned status)
{
    switch (status) {
    case MHD_HTTP_BAD_REQUEST: return "illegal_argument_exception";
    case MHD_HTTP_UNAUTHORIZED: return "security_exception";
    case MHD_HTTP_FORBIDDEN: return "security_exception";
    case MHD_HTTP_NOT_FOUND: return "index_not_found_exception";
    case MHD_HTTP_CONTENT_TOO_LARGE: return "content_too_long_exception";
    case MHD_HTTP_SERVICE_UNAVAILABLE: return "es_rejected_execution_exception";
    case MHD_HTTP_INSUFFICIENT_STORAGE: return "cluster_block_exception";
    default: return "exception";
    }
}

static enum MHD_Result fail(struct MHD_Connection *con, struct srv_req *req, struct write_ctx *c,
                            enum write_outcome o, unsigned status, const char *msg)
{
    count(c, req, o);
    if (c->ep == EP_ES)
        return es_reply_error(con, req, status, es_type(status), msg);
    if (c->ep == EP_LOKI || c->ep == EP_OTLP)
        return logs_reply_error(con, req, c->ep == EP_OTLP, c->is_proto, status, msg);
    return reply_error(con, req, status, msg);
}

static enum write_outcome outcome_of(int err)
{
    switch (err) {
    case ERR_TOOBIG: return OUT_TOO_BIG;
    case ERR_BUSY: return OUT_BUSY;
    case ERR_NOSPC: return OUT_NOSPC;
    case ERR_INVAL: return OUT_BAD_REQUEST;
    case ERR_NOTFOUND: return OUT_NOT_FOUND;
    default: return OUT_ERROR;
    }
}

/* The database name of the request (copied into out), or false. */
static bool db_name(struct MHD_Connection *con, enum write_ep ep, char *out, size_t cap)
{
    const char *db = srv_arg(con, ep == EP_V2 ? "bucket" : "db");
    if (ep == EP_ES && (!db || !*db))
        db = server.cfg->es_database;
    if ((ep == EP_LOKI || ep == EP_OTLP) && (!db || !*db))
        db = logs_db_default(con, ep == EP_OTLP);
    if (!db || !*db)
        return false;
    size_t n = strlen(db);
    /* InfluxDB 2.x maps a bucket "db/rp" to database db. */
    const char *slash = ep == EP_V2 ? strchr(db, '/') : NULL;
    if (slash)
        n = (size_t)(slash - db);
    if (n == 0 || n >= cap)
        return false;
    memcpy(out, db, n);
    out[n] = '\0';
    return true;
}

/* Opens the database, creating it with the configured defaults when
 * auto_create_databases allows. */
static int open_db(const char *name, struct store_db **out)
{
    const struct config *cfg = server.cfg;
    int rc = store_db_get(server.store, name, out);
    if (rc != ERR_NOTFOUND || !cfg->auto_create_databases)
        return rc;
    struct db_opts o;
    srv_db_defaults(&o);
    rc = store_db_create(server.store, name, &o);
    if (rc != ERR_OK && rc != ERR_EXISTS)
        return rc;
    return store_db_get(server.store, name, out);
}

/* "database D is offline since the start: WHY" */
static void offline_msg(const char *db, char *msg, size_t n)
{
    struct buf why = BUF_INIT;
    store_db_offline_reason(server.store, db, &why);
    snprintf(msg, n, "database %s is offline since the start: %s", db, buf_cstr(&why));
    buf_destroy(&why);
}

static void limits_from_config(struct event_limits *lim)
{
    const struct config *cfg = server.cfg;
    event_limits_default(lim);
    lim->max_line_bytes = (size_t)cfg->max_line_bytes;
    lim->max_key_bytes = (size_t)cfg->max_key_bytes;
    lim->max_tags_per_line = (size_t)cfg->max_tags_per_line;
    lim->max_fields_per_line = (size_t)cfg->max_fields_per_line;
    lim->host_tag = cfg->host_tag;
    lim->default_host = cfg->default_host;
}

/* A boolean URL argument: absent = dflt; false and *bad if not true/false. */
static bool bool_arg(struct MHD_Connection *con, const char *name, bool dflt, bool *bad)
{
    const char *v = srv_arg(con, name);
    if (!v || !*v)
        return dflt;
    if (strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0)
        return true;
    if (strcasecmp(v, "false") != 0 && strcmp(v, "0") != 0)
        *bad = true;
    return false;
}

/* /api/v3/write_lp: precision names (default auto), accept_partial, no_sync. */
static const char *v3_params(struct MHD_Connection *con, const char *prec, struct ingest_params *p)
{
    if (lp_precision_parse(prec && *prec ? prec : "auto", &p->ns_per_unit) != ERR_OK)
        return "precision must be one of auto, nanosecond, microsecond, millisecond, second "
               "(or ns, us, ms, s)";
    bool bad = false;
    p->is_atomic = !bool_arg(con, "accept_partial", true, &bad);
    p->is_no_sync = bool_arg(con, "no_sync", false, &bad);
    return bad ? "accept_partial and no_sync must be true or false" : NULL;
}

/* /_bulk and /{index}/_bulk: the index and the mapping from the config
 * (kept in c, which outlives the ingest). */
static const char *es_params(struct MHD_Connection *con, struct write_ctx *c, const char *path,
                             struct ingest_params *p)
{
    const struct config *cfg = server.cfg;
    p->format = INGEST_ESBULK;
    c->es_map =
        (struct jsonl_es_map){cfg->es_timestamp_field, cfg->es_host_fields, cfg->es_event_fields,
                              cfg->es_event_from_document, cfg->es_message_field};
    p->es_map = &c->es_map;
    p->es_filter = esbulk_filter_parse(srv_arg(con, "filter_path"));
    const char *end = path ? strstr(path, "/_bulk") : NULL;
    if (!end || end == path)
        return NULL; /* /_bulk */
    size_t n = (size_t)(end - path - 1);
    if (n >= sizeof c->es_index)
        return "index name too long";
    memcpy(c->es_index, path + 1, n);
    c->es_index[n] = '\0';
    p->es_index = c->es_index;
    return NULL;
}

/* Fills params from the URL and headers; a reason on a bad request. The
 * log push endpoints answer an unsupported Content-Type or -Encoding with
 * 415, as their clients expect; the others with 400. */
static const char *params_from_request(struct MHD_Connection *con, struct write_ctx *c,
                                       const char *path, struct ingest_params *p)
{
    enum write_ep ep = c->ep;
    const struct config *cfg = server.cfg;
    ingest_params_default(p);
    p->max_body_bytes = (size_t)cfg->max_body_bytes;
    p->arrival_ns = clock_real_ns();
    p->reject_older_than_ns = cfg->reject_older_than_ns;
    p->reject_newer_than_ns = cfg->reject_newer_than_ns;
    p->stamp = &server.stamp;
    const char *enc =
        MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_ENCODING);
    if (enc && strcasecmp(enc, "gzip") == 0)
        p->is_gzip = true;
    else if (enc && *enc && strcasecmp(enc, "identity") != 0 &&
             !(ep == EP_LOKI && strcasecmp(enc, "snappy") == 0)) /* Loki's protobuf */
        return "unsupported Content-Encoding: use gzip or none";
    if (ep == EP_INGEST) {
        const char *fmt = srv_arg(con, "format");
        if (!fmt || strcmp(fmt, "raw") == 0) {
            p->format = INGEST_RAW;
            p->host = srv_arg(con, "host");
            p->event = srv_arg(con, "event");
        } else if (strcmp(fmt, "jsonl") == 0 || strcmp(fmt, "ndjson") == 0) {
            p->format = INGEST_JSONL;
            p->host = srv_arg(con, "host"); /* defaults for lines without them */
            p->event = srv_arg(con, "event");
        } else {
            return "format must be raw or jsonl";
        }
        return NULL;
    }
    if (ep == EP_ES)
        return es_params(con, c, path, p);
    if (ep == EP_LOKI || ep == EP_OTLP)
        return logs_params(con, ep == EP_OTLP, &c->logs_map, &c->is_proto, p);
    p->format = INGEST_LINEPROTO;
    const char *prec = srv_arg(con, "precision");
    if (ep == EP_V3)
        return v3_params(con, prec, p);
    if (prec && *prec && lp_precision_parse(prec, &p->ns_per_unit) != ERR_OK)
        return "precision must be one of ns, us, ms, s, m, h (or n, u)";
    return NULL;
}

/* The first call, at the headers: everything that can be refused before a
 * byte of the body is read. */
static enum MHD_Result write_begin(struct MHD_Connection *con, struct srv_req *req)
{
    struct write_ctx *c = xcalloc(1, sizeof *c);
    c->ep = ep_of(req->route);
    req->ctx = c;
    req->ctx_free = write_ctx_free;
    char db[256];
    if (!db_name(con, c->ep, db, sizeof db))
        return fail(con, req, c, OUT_BAD_REQUEST, MHD_HTTP_BAD_REQUEST,
                    c->ep == EP_V2 ? "bucket is required (bucket=NAME)"
                                   : "database is required (db=NAME)");
    if (!auth_require(con, req, CFG_RIGHT_WRITE, db)) {
        count(c, req, OUT_UNAUTHORIZED);
        return MHD_YES;
    }
    const char *cl =
        MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoull(cl, NULL, 10) > server.cfg->max_body_bytes) {
        char msg[160];
        snprintf(msg, sizeof msg, "request body too large: over max_body_bytes (%llu bytes)",
                 (unsigned long long)server.cfg->max_body_bytes);
        return fail(con, req, c, OUT_TOO_BIG, MHD_HTTP_CONTENT_TOO_LARGE, msg);
    }
    struct ingest_params p;
    const char *why = params_from_request(con, c, req->path, &p);
    unsigned bad_params = c->ep == EP_LOKI || c->ep == EP_OTLP ? MHD_HTTP_UNSUPPORTED_MEDIA_TYPE
                                                               : MHD_HTTP_BAD_REQUEST;
    if (cl && !p.is_gzip)
        p.body_hint = (size_t)strtoull(cl, NULL, 10);
    c->is_atomic = p.is_atomic;
    struct event_limits lim;
    limits_from_config(&lim);
    if (why)
        return fail(con, req, c, OUT_BAD_REQUEST, bad_params, why);
    if ((why = ingest_params_check(&p, &lim)))
        return fail(con, req, c, OUT_BAD_REQUEST, MHD_HTTP_BAD_REQUEST, why);
    int rc = open_db(db, &c->db);
    if (rc != ERR_OK) {
        char msg[400];
        if (rc == ERR_NOTFOUND)
            snprintf(msg, sizeof msg,
                     "database not found: %s (create it, or set "
                     "auto_create_databases = true)",
                     db);
        else if (rc == ERR_INVAL)
            snprintf(msg, sizeof msg, "invalid database name: %s (" STORE_DB_NAME_RULE ")", db);
        else if (rc == ERR_OFFLINE)
            offline_msg(db, msg, sizeof msg);
        else
            snprintf(msg, sizeof msg, "cannot open database %s: %s", db, err_name(rc));
        return fail(con, req, c, outcome_of(rc), reply_status_for(rc), msg);
    }
    rc = ingest_new(&p, &lim, c->db, &c->in);
    if (rc != ERR_OK)
        return fail(con, req, c, outcome_of(rc), reply_status_for(rc), err_name(rc));
    return MHD_YES;
}

static enum MHD_Result write_error(struct MHD_Connection *con, struct srv_req *req,
                                   struct write_ctx *c, int rc)
{
    /* A request is written in one batch at its end (ingest.h,
     * whole_request): whatever failed, nothing of it is stored. */
    const char *text = ingest_error_text(c->in);
    char msg[400];
    switch (rc) {
    case ERR_TOOBIG:
        if (*text)
            snprintf(msg, sizeof msg, "request too large: %s; nothing of it was stored", text);
        else
            snprintf(msg, sizeof msg,
                     "request body too large: over max_body_bytes (%llu bytes); nothing of it "
                     "was stored",
                     (unsigned long long)server.cfg->max_body_bytes);
        break;
    case ERR_BUSY:
        snprintf(msg, sizeof msg,
                 "the store is flushing behind writes: nothing of this request was stored; "
                 "retry later");
        break;
    case ERR_NOSPC:
        snprintf(msg, sizeof msg,
                 "disk full: nothing of this request was stored; writes are refused until space "
                 "is freed");
        break;
    case ERR_INVAL:
        snprintf(msg, sizeof msg, "bad request body: %s; nothing of it was stored",
                 *text ? text : "invalid encoding");
        break;
    default:
        snprintf(msg, sizeof msg, "write failed: %s; nothing of this request was stored",
                 err_name(rc));
        break;
    }
    return fail(con, req, c, outcome_of(rc), reply_status_for(rc), msg);
}

/* 400 with the bad lines and the counts, as InfluxDB's partial write. */
static enum MHD_Result write_partial(struct MHD_Connection *con, struct srv_req *req,
                                     struct write_ctx *c)
{
    uint64_t written = ingest_written(c->in);
    uint64_t dropped = ingest_dropped(c->in);
    const char *text = ingest_error_text(c->in);
    const char *what = written ? "partial write: " : "unable to parse: ";
    struct buf msg = BUF_INIT;
    buf_printf(&msg, "%s%s", what, text);
    char counts[64];
    snprintf(counts, sizeof counts, ",\"written\":%llu,\"dropped\":%llu",
             (unsigned long long)written, (unsigned long long)dropped);
    struct MHD_Response *resp = reply_error_response(buf_cstr(&msg), counts);
    buf_destroy(&msg);
    if (!resp)
        return MHD_NO;
    count(c, req, written ? OUT_PARTIAL : OUT_UNPARSABLE);
    return reply_queue(con, req, MHD_HTTP_BAD_REQUEST, resp);
}

/* InfluxDB 3: 204; with bad lines 400 and their list ("partial write of
 * line protocol occurred"), or with accept_partial=false, when nothing was
 * stored, the first bad line ("parsing failed for write_lp endpoint"). */
static enum MHD_Result write_reply_v3(struct MHD_Connection *con, struct srv_req *req,
                                      struct write_ctx *c)
{
    if (ingest_dropped(c->in) == 0) {
        count(c, req, OUT_OK);
        return reply_no_content(con, req);
    }
    bool is_atomic = c->is_atomic && ingest_written(c->in) == 0;
    const char *items = ingest_error_json(c->in);
    struct buf b = BUF_INIT;
    if (is_atomic) {
        const char *end = strstr(items, "},{");
        size_t n = end ? (size_t)(end - items) + 1 : strlen(items);
        buf_puts(&b, "{\"error\":\"parsing failed for write_lp endpoint\",\"data\":");
        buf_append(&b, items, n);
        buf_puts(&b, "}\n");
    } else {
        buf_printf(&b, "{\"error\":\"partial write of line protocol occurred\",\"data\":[%s]}\n",
                   items);
    }
    count(c, req, ingest_written(c->in) ? OUT_PARTIAL : OUT_UNPARSABLE);
    enum MHD_Result r =
        reply_send(con, req, MHD_HTTP_BAD_REQUEST, "application/json", b.data, b.len);
    buf_destroy(&b);
    return r;
}

/* Elasticsearch: 200 with an item per action, whatever their fate. */
static enum MHD_Result write_reply_es(struct MHD_Connection *con, struct srv_req *req,
                                      struct write_ctx *c)
{
    struct buf b = BUF_INIT;
    esbulk_reply(ingest_esbulk(c->in), (clock_mono_ns() - req->start_ns) / 1000000, &b);
    count(c, req, ingest_dropped(c->in) ? OUT_PARTIAL : OUT_OK);
    enum MHD_Result r = reply_send(con, req, MHD_HTTP_OK, "application/json", b.data, b.len);
    buf_destroy(&b);
    return r;
}

enum MHD_Result h_write(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                        size_t *upload_size)
{
    struct write_ctx *c = req->ctx;
    if (!c)
        return write_begin(con, req);
    if (*upload_size > 0) {
        c->body_bytes += *upload_size;
        if (c->error == ERR_OK)
            c->error = ingest_feed(c->in, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    int rc = c->error != ERR_OK ? c->error : ingest_finish(c->in);
    if (rc != ERR_OK)
        return write_error(con, req, c, rc);
    if (c->ep == EP_V3)
        return write_reply_v3(con, req, c);
    if (c->ep == EP_ES)
        return write_reply_es(con, req, c);
    if (c->ep == EP_OTLP || (c->ep == EP_LOKI && ingest_dropped(c->in) > 0)) {
        count(c, req, ingest_dropped(c->in) ? OUT_PARTIAL : OUT_OK);
        if (c->ep == EP_OTLP)
            return otlp_reply_ok(con, req, c->is_proto, c->in);
        return loki_reply_partial(con, req, c->in);
    }
    if (ingest_dropped(c->in) > 0)
        return write_partial(con, req, c);
    count(c, req, OUT_OK);
    return reply_no_content(con, req);
}

void h_write_metrics(struct buf *out)
{
    buf_puts(out, "# HELP logbucket_write_requests_total Write requests by endpoint and outcome.\n"
                  "# TYPE logbucket_write_requests_total counter\n");
    for (int e = 0; e < EP_COUNT; e++)
        for (int o = 0; o < OUT_COUNT; o++) {
            uint64_t n = atomic_load(&wm.requests[e][o]);
            if (n)
                buf_printf(out,
                           "logbucket_write_requests_total{endpoint=\"%s\",outcome=\"%s\"} %llu\n",
                           ep_names[e], outcome_names[o], (unsigned long long)n);
        }
    buf_puts(out,
             "# HELP logbucket_write_lines_total Lines of write requests, written or dropped.\n"
             "# TYPE logbucket_write_lines_total counter\n");
    for (int e = 0; e < EP_COUNT; e++) {
        buf_printf(out, "logbucket_write_lines_total{endpoint=\"%s\",result=\"written\"} %llu\n",
                   ep_names[e], (unsigned long long)atomic_load(&wm.lines_written[e]));
        buf_printf(out, "logbucket_write_lines_total{endpoint=\"%s\",result=\"dropped\"} %llu\n",
                   ep_names[e], (unsigned long long)atomic_load(&wm.lines_dropped[e]));
    }
    buf_puts(out,
             "# HELP logbucket_write_body_bytes_total Bytes of write request bodies as received "
             "(before gzip decoding).\n"
             "# TYPE logbucket_write_body_bytes_total counter\n");
    for (int e = 0; e < EP_COUNT; e++)
        buf_printf(out, "logbucket_write_body_bytes_total{endpoint=\"%s\"} %llu\n", ep_names[e],
                   (unsigned long long)atomic_load(&wm.body_bytes[e]));
    histogram_write(&wm.latency, "logbucket_write_duration_seconds", "Write request latency.", out);
}
