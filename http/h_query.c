/* Query endpoints: GET /api/v1/query (parameters), POST /api/v1/sql (the
 * statement as the body, or q= as a URL argument or form field), and
 * /query, the InfluxQL that write clients send (influxql.h), taking its
 * statement the same ways. The query
 * layer plans and opens the query first, so every refusal is a 4xx before
 * any output; rows then stream out through libmicrohttpd's content reader,
 * chunked, with memory bounded by one read. A client that disconnects frees
 * the cursor, which stops the query. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/clock.h"
#include "base/err.h"
#include "http/handlers.h"
#include "http/reply.h"
#include "query/influxql.h"
#include "query/query.h"
#include "query/sql.h"

#define SQL_MAX_BODY (1024 * 1024)
#define STREAM_BLOCK (64 * 1024)

struct sql_ctx {
    struct buf body;
    struct buf form; /* a form body as it came, for its other fields */
    bool too_big;
};

static void sql_ctx_free(void *p)
{
    struct sql_ctx *c = p;
    if (!c)
        return;
    buf_destroy(&c->body);
    buf_destroy(&c->form);
    free(c);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
    (void)pos;
    ssize_t n = query_cursor_read(cls, out, max);
    if (n > 0)
        return n;
    if (n == 0)
        return MHD_CONTENT_READER_END_OF_STREAM;
    return MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_free(void *cls)
{
    query_cursor_free(cls);
}

/* Fills o from the config and the request's arguments; ERR_INVAL with err
 * set for a bad argument. */
static int opts_from_request(struct MHD_Connection *con, const struct srv_req *req,
                             struct query_opts *o, struct buf *err)
{
    const struct config *cfg = server.cfg;
    query_opts_default(o);
    if (cfg->ntokens) { /* a token sees only the databases it may read */
        o->db_visible = auth_may_read;
        o->db_visible_arg = req->token;
    }
    o->max_get_rows = cfg->max_get_rows;
    o->allow_full_scan = cfg->allow_full_scan;
    srv_db_defaults(&o->db_defaults);
    const char *fs = srv_arg(con, "full_scan");
    o->full_scan = fs && (strcmp(fs, "true") == 0 || strcmp(fs, "1") == 0);
    const char *fmt = srv_arg(con, "format");
    o->format = fmt && strcmp(fmt, "json") == 0 ? QUERY_JSON : QUERY_NDJSON;
    o->max_groups = cfg->max_groups;
    const char *mg = srv_arg(con, "max_groups");
    if (mg && *mg) { /* a request may only lower the config's limit */
        char *end;
        errno = 0;
        long long v = strtoll(mg, &end, 10);
        if (errno || *end || v < 1) {
            buf_printf(err, "bad max_groups '%s': a positive integer", mg);
            return ERR_INVAL;
        }
        if (v < o->max_groups)
            o->max_groups = v;
    }
    return ERR_OK;
}

static bool bad_format(struct MHD_Connection *con)
{
    const char *fmt = srv_arg(con, "format");
    return fmt && strcmp(fmt, "json") != 0 && strcmp(fmt, "ndjson") != 0;
}

/* The error of a failed open. cur (NULL if parsing failed) tells, for a
 * statement list, how many statements were applied before the failing
 * one: the client must learn that they stay applied. */
static enum MHD_Result open_error(struct MHD_Connection *con, struct srv_req *req, int rc,
                                  const struct query_cursor *cur, struct buf *err)
{
    unsigned status = reply_status_for(rc);
    if (rc == ERR_TOOBIG)
        status = MHD_HTTP_BAD_REQUEST; /* too many GET keys: the query, not a body */
    const char *msg = err->len ? buf_cstr(err) : err_name(rc);
    bool list = cur && query_cursor_stmt(cur, 1);
    if (!list)
        return reply_error(con, req, status, msg);
    char applied[48];
    snprintf(applied, sizeof applied, ",\"applied\":%zu", query_cursor_applied(cur));
    return reply_error_extra(con, req, status, msg, applied);
}

/* Streams an opened cursor, or replies with the error of the open and
 * frees the cursor. */
static enum MHD_Result respond(struct MHD_Connection *con, struct srv_req *req, int rc,
                               struct query_cursor *cur, const struct query_opts *o,
                               struct buf *err)
{
    if (rc != ERR_OK) {
        enum MHD_Result r = open_error(con, req, rc, cur, err);
        query_cursor_free(cur);
        return r;
    }
    struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK,
                                                                  stream_read, cur, stream_free);
    if (!resp) {
        query_cursor_free(cur);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            o->format == QUERY_JSON ? "application/json" : "application/x-ndjson");
    return reply_queue(con, req, MHD_HTTP_OK, resp);
}

static const char *param_get(void *arg, const char *name)
{
    return srv_arg(arg, name);
}

enum MHD_Result h_query(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                        size_t *upload_size)
{
    (void)upload;
    (void)upload_size;
    const char *db = srv_arg(con, "db");
    if (!auth_require(con, req, CFG_RIGHT_READ, db))
        return MHD_YES;
    if (bad_format(con))
        return reply_error(con, req, MHD_HTTP_BAD_REQUEST, "format must be ndjson or json");
    struct query_opts o;
    struct query_cursor *cur = NULL;
    struct buf err = BUF_INIT;
    int rc = opts_from_request(con, req, &o, &err);
    if (!rc)
        rc = query_params_open(server.store, param_get, con, &o, &cur, &err);
    enum MHD_Result r = respond(con, req, rc, cur, &o, &err);
    buf_destroy(&err);
    return r;
}

static unsigned right_for(enum sql_kind kind)
{
    switch (kind) {
    case SQL_SELECT:
    case SQL_SHOW_DBS:
    case SQL_SHOW_HOSTS:
    case SQL_SHOW_EVENTS:
    case SQL_SHOW_TAG_KEYS:
    case SQL_SHOW_TAG_VALUES:
    case SQL_SHOW_FIELDS: return CFG_RIGHT_READ;
    case SQL_DELETE: return CFG_RIGHT_WRITE;
    default: return CFG_RIGHT_ADMIN;
    }
}

/* With tokens configured, every statement of the prepared (parsed once)
 * cursor is checked before any runs. */
static bool sql_authorized(struct MHD_Connection *con, struct srv_req *req,
                           const struct query_cursor *cur)
{
    if (server.cfg->ntokens == 0)
        return true;
    if (!auth_require(con, req, 0, NULL))
        return false;
    const struct sql_stmt *st;
    bool ok = true;
    for (size_t i = 0; ok && (st = query_cursor_stmt(cur, i)) != NULL; i++)
        ok = auth_require(con, req, right_for(st->kind), st->db);
    return ok;
}

/* Whether a form body has an encoded NUL (%00). */
static bool form_has_nul(const struct buf *body)
{
    for (size_t i = 0; i + 2 < body->len; i++)
        if (body->data[i] == '%' && body->data[i + 1] == '0' && body->data[i + 2] == '0')
            return true;
    return false;
}

/* The statement of a form body "q=...&..." (URL-decoded in place), or NULL. */
static char *form_field_q(struct buf *body)
{
    char *s = (char *)buf_cstr(body);
    for (char *p = s; p && *p;) {
        char *amp = strchr(p, '&');
        if (amp)
            *amp = '\0';
        if (strncmp(p, "q=", 2) == 0) {
            for (char *c = p + 2; *c; c++)
                if (*c == '+')
                    *c = ' ';
            MHD_http_unescape(p + 2);
            return p + 2;
        }
        p = amp ? amp + 1 : NULL;
    }
    return NULL;
}

static enum MHD_Result sql_run(struct MHD_Connection *con, struct srv_req *req, const char *sql,
                               size_t len)
{
    if (bad_format(con))
        return reply_error(con, req, MHD_HTTP_BAD_REQUEST, "format must be ndjson or json");
    if (server.cfg->ntokens && !auth_require(con, req, 0, NULL))
        return MHD_YES; /* no credentials: not even parsed */
    struct query_opts o;
    struct query_cursor *cur = NULL;
    struct buf err = BUF_INIT;
    int rc = opts_from_request(con, req, &o, &err);
    if (!rc)
        rc = query_sql_prepare(server.store, sql, len, &o, &cur, &err);
    if (!rc && !sql_authorized(con, req, cur)) {
        query_cursor_free(cur);
        buf_destroy(&err);
        return MHD_YES;
    }
    if (!rc)
        rc = query_cursor_start(cur, &err);
    enum MHD_Result r = respond(con, req, rc, cur, &o, &err);
    buf_destroy(&err);
    return r;
}

typedef enum MHD_Result (*stmt_fn)(struct MHD_Connection *con, struct srv_req *req,
                                   const char *stmt, size_t len);

/* Collects the body, then runs the statement: q= (URL argument), else the
 * q field of a form body, else the body itself. */
static enum MHD_Result with_statement(struct MHD_Connection *con, struct srv_req *req,
                                      const char *upload, size_t *upload_size, stmt_fn run,
                                      const char *missing)
{
    struct sql_ctx *c = req->ctx;
    if (!c) {
        c = xcalloc(1, sizeof *c);
        req->ctx = c;
        req->ctx_free = sql_ctx_free;
        const char *cl =
            MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > SQL_MAX_BODY)
            return reply_error(con, req, MHD_HTTP_CONTENT_TOO_LARGE,
                               "statement body too large: at most 1 MiB");
        return MHD_YES;
    }
    if (*upload_size > 0) {
        if (c->body.len + *upload_size > SQL_MAX_BODY)
            c->too_big = true;
        else
            buf_append(&c->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (c->too_big)
        return reply_error(con, req, MHD_HTTP_CONTENT_TOO_LARGE,
                           "statement body too large: at most 1 MiB");
    const char *ct =
        MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    bool form = ct && strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0;
    /* decoded, %00 would end a field early: "q=DROP DATABASE a%00b" must
     * not drop a */
    if (form && form_has_nul(&c->body))
        return reply_error(con, req, MHD_HTTP_BAD_REQUEST,
                           "a form field contains a NUL byte (%00)");
    if (form)
        buf_append(&c->form, c->body.data, c->body.len);
    const char *q = srv_arg(con, "q");
    if (q && *q)
        return run(con, req, q, strlen(q));
    if (form) {
        char *fq = form_field_q(&c->body);
        if (fq)
            return run(con, req, fq, strlen(fq));
    }
    if (c->body.len == 0)
        return reply_error(con, req, MHD_HTTP_BAD_REQUEST, missing);
    return run(con, req, c->body.data, c->body.len);
}

enum MHD_Result h_sql(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                      size_t *upload_size)
{
    return with_statement(con, req, upload, upload_size, sql_run,
                          "missing statement: send SQL as the body or as q=");
}

/* --- /query: InfluxQL, as InfluxDB 1.x answers --- */

static unsigned iql_right_flag(enum iql_right r)
{
    return r == IQL_ADMIN ? CFG_RIGHT_ADMIN : r == IQL_WRITE ? CFG_RIGHT_WRITE : CFG_RIGHT_READ;
}

/* Every statement's right, checked before any runs. */
static bool iql_authorized(struct MHD_Connection *con, struct srv_req *req,
                           const struct iql_script *s, const char *db)
{
    for (size_t i = 0; i < iql_count(s); i++) {
        const char *sdb;
        enum iql_right r = iql_right_of(s, i, &sdb);
        if (!auth_require(con, req, iql_right_flag(r), sdb ? sdb : db))
            return false;
    }
    return true;
}

/* A parameter as InfluxDB reads it: the URL's, else a form body's field
 * (URL-decoded into vals, which keeps it: iql_run reserves its room). */
static const char *iql_arg(struct MHD_Connection *con, struct srv_req *req, const char *name,
                           struct buf *vals)
{
    const char *v = srv_arg(con, name);
    const struct sql_ctx *c = req->ctx;
    if (v || !c || c->form.len == 0)
        return v;
    size_t nl = strlen(name);
    const char *p = c->form.data, *end = p + c->form.len;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *fe = amp ? amp : end;
        if ((size_t)(fe - p) > nl && memcmp(p, name, nl) == 0 && p[nl] == '=') {
            size_t at = vals->len;
            buf_append(vals, p + nl + 1, (size_t)(fe - p - nl - 1));
            buf_putc(vals, '\0');
            for (char *ch = vals->data + at; *ch; ch++)
                if (*ch == '+')
                    *ch = ' ';
            MHD_http_unescape(vals->data + at);
            return vals->data + at;
        }
        p = fe + 1;
    }
    return NULL;
}

/* db, epoch, chunked, chunk_size, pretty (URL or form): ERR_INVAL with err
 * for a bad one. */
static int iql_opts_from_request(struct MHD_Connection *con, struct srv_req *req,
                                 struct iql_opts *io, struct buf *vals, struct buf *err)
{
    io->db = iql_arg(con, req, "db", vals);
    io->host_tag = server.cfg->host_tag ? server.cfg->host_tag : "host";
    const char *ep = iql_arg(con, req, "epoch", vals);
    if (ep && *ep && iql_epoch_unit(ep, &io->epoch)) {
        buf_printf(err, "invalid epoch '%s': one of ns, u, µs, ms, s, m, h", ep);
        return ERR_INVAL;
    }
    const char *pr = iql_arg(con, req, "pretty", vals);
    io->pretty = pr && strcmp(pr, "true") == 0;
    const char *ch = iql_arg(con, req, "chunked", vals);
    if (ch && strcmp(ch, "true") == 0) {
        io->chunk_size = 10000; /* InfluxDB's default */
        const char *cs = iql_arg(con, req, "chunk_size", vals);
        if (cs && *cs) {
            char *end;
            errno = 0;
            long long v = strtoll(cs, &end, 10);
            if (errno || *end || v < 1) {
                buf_printf(err, "invalid chunk_size '%s': a positive integer", cs);
                return ERR_INVAL;
            }
            io->chunk_size = (size_t)v;
        }
    }
    return ERR_OK;
}

static enum MHD_Result iql_run(struct MHD_Connection *con, struct srv_req *req, const char *q,
                               size_t len)
{
    struct iql_script *s = NULL;
    struct buf out = BUF_INIT, vals = BUF_INIT;
    struct query_opts o;
    struct iql_opts io = {&o, NULL, "host", 0, 0, false};
    const struct sql_ctx *c = req->ctx;
    /* the form's values are decoded into vals, which must not move */
    buf_reserve(&vals, c ? c->form.len + 64 : 64);
    int rc = opts_from_request(con, req, &o, &out);
    if (rc == ERR_OK)
        rc = iql_opts_from_request(con, req, &io, &vals, &out);
    if (rc == ERR_OK)
        rc = iql_parse(q, len, o.now_ns ? o.now_ns : clock_real_ns(), &s, &out);
    enum MHD_Result r = MHD_YES;
    if (rc != ERR_OK) {
        r = reply_error(con, req, MHD_HTTP_BAD_REQUEST, buf_cstr(&out));
    } else if (iql_authorized(con, req, s, io.db)) {
        iql_exec(server.store, s, &io, &out);
        r = reply_send(con, req, MHD_HTTP_OK, "application/json", out.data, out.len);
    }
    iql_script_free(s);
    buf_destroy(&out);
    buf_destroy(&vals);
    return r;
}

enum MHD_Result h_influxql(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                           size_t *upload_size)
{
    return with_statement(con, req, upload, upload_size, iql_run,
                          "missing required parameter \"q\"");
}
