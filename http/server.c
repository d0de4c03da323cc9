/* libmicrohttpd lifecycle and the access handler that gives every request
 * its state (Request-Id, route, auth) before the route's handler sees it.
 * Every request gets a status or a close at request_timeout: what
 * libmicrohttpd 0.9.75 would drop silently (ambiguous framing, too many URL
 * arguments, a body where none is taken) is refused at the headers.
 * Graceful stop: quiesce (stop accepting), wait for in-flight requests,
 * stop the daemon. */
#include "http/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "base/log.h"
#include "http/guard.h"
#include "http/handlers.h"
#include "http/reply.h"

/* URL arguments a request may carry. */
#define SRV_MAX_URL_ARGS 1000
/* Connections kept beyond max_connections for /ping and /health, so that a
 * health check still gets through when clients hold every other slot. */
#define SRV_RESERVE 16

/* *con_cls before the first call of a request whose URL arguments on_uri
 * dropped (more than SRV_MAX_URL_ARGS), or whose path has an encoded NUL
 * (libmicrohttpd decodes it, and the path would end there: "/ping%00x"
 * would be served as "/ping"). */
static char args_cut, path_nul;

static void req_free(struct srv_req *req)
{
    if (!req)
        return;
    if (req->ctx_free)
        req->ctx_free(req->ctx);
    free(req->path);
    free(req);
}

static struct srv_req *req_new(const struct route *route)
{
    struct srv_req *req = xcalloc(1, sizeof *req);
    uint64_t seq = atomic_fetch_add(&server.req_seq, 1);
    snprintf(req->id, sizeof req->id, "%08x%08x", (unsigned)(server.started_ns / 1000000000LL),
             (unsigned)seq);
    req->route = route->id;
    req->start_ns = clock_mono_ns();
    return req;
}

static enum MHD_Result find_nul_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                    size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    const char **bad = cls;
    if (strlen(key) != key_size || (value && strlen(value) != value_size)) {
        *bad = key;
        return MHD_NO;
    }
    return MHD_YES;
}

/* A URL argument with an encoded NUL (%00) would be cut short by every C
 * string reader: refuse it instead of acting on a different value. */
static bool args_have_nul(struct MHD_Connection *con, const char **which)
{
    *which = NULL;
    MHD_get_connection_values_n(con, MHD_GET_ARGUMENT_KIND, find_nul_arg, (void *)which);
    return *which != NULL;
}

/* libmicrohttpd 0.9.75 stores every URL argument in the connection's
 * memory pool before the access handler runs; when they do not fit, its 431
 * is lost and the connection closes without a reply. The URI is still the
 * connection's read buffer when this is called, and its arguments are
 * parsed after: too many, and they are cut off here (libmicrohttpd then
 * parses none), and the request is refused at its first call. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *con)
{
    (void)cls;
    (void)con;
    if (!uri)
        return NULL;
    char *q = strchr(uri, '?');
    for (const char *p = uri; *p && p != q; p++)
        if (p[0] == '%' && p[1] == '0' && p[2] == '0')
            return &path_nul;
    if (!q)
        return NULL;
    size_t n = 1;
    for (const char *p = q + 1; (p = strchr(p, '&')) != NULL; p++)
        if (++n > SRV_MAX_URL_ARGS) {
            q[1] = '\0';
            return &args_cut;
        }
    return NULL;
}

/* The headers that frame a body. */
struct framing {
    const char *length;   /* the first Content-Length */
    bool lengths_differ;  /* another Content-Length with another value */
    const char *encoding; /* the last Transfer-Encoding */
    unsigned encodings;   /* Transfer-Encoding headers */
};

static enum MHD_Result scan_framing(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    struct framing *f = cls;
    if (!value)
        value = "";
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        if (!f->length)
            f->length = value;
        else if (strcmp(f->length, value) != 0)
            f->lengths_differ = true;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        f->encoding = value;
        f->encodings++;
    }
    return MHD_YES;
}

/* True if the last coding of a Transfer-Encoding list is chunked. */
static bool ends_in_chunked(const char *te)
{
    const char *last = strrchr(te, ',');
    last = last ? last + 1 : te;
    last += strspn(last, " \t");
    size_t n = strlen(last);
    while (n && (last[n - 1] == ' ' || last[n - 1] == '\t'))
        n--;
    return n == 7 && strncasecmp(last, "chunked", 7) == 0;
}

static void refuse(struct MHD_Connection *con, struct srv_req *req, unsigned status,
                   const char *msg)
{
    /* Not reply_error: a client's framing is no server error to log. */
    struct MHD_Response *resp = reply_error_response(msg, NULL);
    if (resp)
        reply_queue(con, req, status, resp);
}

/* Refuses a body whose length a proxy in front could read otherwise
 * (request smuggling): Content-Length with Transfer-Encoding (RFC 9112
 * 6.1), Content-Lengths that differ (6.3; equal ones are accepted, as RFC
 * 9110 8.6 allows), Transfer-Encoding repeated or not ending in chunked
 * (400), or with another coding before chunked (501). libmicrohttpd itself
 * takes the first Content-Length and lets chunked win over it. A reply
 * queued at the headers makes libmicrohttpd skip the body and close the
 * connection after the reply. */
static bool framing_ok(struct MHD_Connection *con, struct srv_req *req, const struct framing *f)
{
    char msg[200];
    if (f->length && f->encodings) {
        refuse(con, req, MHD_HTTP_BAD_REQUEST,
               "both Content-Length and Transfer-Encoding: send only one of them");
        return false;
    }
    if (f->lengths_differ) {
        refuse(con, req, MHD_HTTP_BAD_REQUEST,
               "conflicting Content-Length headers: send one Content-Length");
        return false;
    }
    if (f->encodings > 1) {
        refuse(con, req, MHD_HTTP_BAD_REQUEST,
               "more than one Transfer-Encoding header: send one, Transfer-Encoding: chunked");
        return false;
    }
    if (f->encodings && strcasecmp(f->encoding, "chunked") != 0) {
        bool chunked = ends_in_chunked(f->encoding);
        snprintf(msg, sizeof msg,
                 chunked ? "Transfer-Encoding '%.60s' is not supported: use chunked alone "
                           "(Content-Encoding: gzip compresses a write body)"
                         : "Transfer-Encoding '%.60s' does not end in chunked: the body has "
                           "no length",
                 f->encoding);
        refuse(con, req, chunked ? MHD_HTTP_NOT_IMPLEMENTED : MHD_HTTP_BAD_REQUEST, msg);
        return false;
    }
    return true;
}

/* True if the request announces a body (libmicrohttpd has checked that a
 * Content-Length is a number). */
static bool has_body(const struct framing *f)
{
    return f->encodings || (f->length && strtoull(f->length, NULL, 10) != 0);
}

/* Checks what the route needs before any body is read. Queues an error and
 * returns false when the request may not go on. */
static bool req_admit(struct MHD_Connection *con, struct srv_req *req, const struct route *route,
                      const char *method, const char *allow, const char *uri_mark)
{
    struct framing f = {0};
    MHD_get_connection_values(con, MHD_HEADER_KIND, scan_framing, &f);
    if (!framing_ok(con, req, &f))
        return false;
    if (uri_mark == &path_nul) {
        reply_error(con, req, MHD_HTTP_BAD_REQUEST, "the URL path contains a NUL byte (%00)");
        return false;
    }
    if (uri_mark == &args_cut) {
        char msg[80];
        snprintf(msg, sizeof msg, "too many URL parameters: at most %d", SRV_MAX_URL_ARGS);
        reply_error(con, req, MHD_HTTP_URI_TOO_LONG, msg);
        return false;
    }
    if (guard_open() > (int)server.cfg->max_connections && route->id != ROUTE_PING &&
        route->id != ROUTE_HEALTH) {
        struct MHD_Response *resp = reply_error_response(
            "too many connections: every slot (max_connections) is taken; retry later", NULL);
        if (resp) {
            MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
            MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
            reply_queue(con, req, MHD_HTTP_SERVICE_UNAVAILABLE, resp);
        }
        return false;
    }
    if (route->id == ROUTE_NOT_FOUND) {
        reply_error(con, req, MHD_HTTP_NOT_FOUND,
                    "not found: no such endpoint (see README for /write, /api/v2/write, "
                    "/api/v3/write_lp, /api/v1/ingest, /_bulk, /loki/api/v1/push, /v1/logs, "
                    "/api/v1/query, /api/v1/sql, /api/v1/tail, /query, /ui/, /ping, /health, "
                    "/metrics)");
        return false;
    }
    if (route->id == ROUTE_BAD_METHOD) {
        char msg[160];
        snprintf(msg, sizeof msg, "method not allowed: use %s", allow);
        struct MHD_Response *resp = reply_error_response(msg, NULL);
        if (resp) {
            MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
            reply_queue(con, req, MHD_HTTP_METHOD_NOT_ALLOWED, resp);
        }
        return false;
    }
    /* libmicrohttpd cannot queue a reply while a body is read: a handler
     * answering at the first piece would close the connection instead. */
    if (!route->body && has_body(&f)) {
        char msg[160];
        snprintf(msg, sizeof msg, "%.10s %s takes no request body", method, route->path);
        reply_error(con, req, MHD_HTTP_BAD_REQUEST, msg);
        return false;
    }
    const char *nul_arg = NULL;
    if (args_have_nul(con, &nul_arg)) {
        char msg[160];
        snprintf(msg, sizeof msg, "URL argument '%.60s' contains a NUL byte (%%00)", nul_arg);
        reply_error(con, req, MHD_HTTP_BAD_REQUEST, msg);
        return false;
    }
    req->token = auth_token(con, server.cfg);
    if (route->auth == AUTH_ANY) {
        struct buf msg = BUF_INIT;
        int rc = auth_check(server.cfg, req->token, auth_has_credentials(con), 0, NULL, &msg);
        if (rc != ERR_OK)
            reply_error(con, req, MHD_HTTP_UNAUTHORIZED, buf_cstr(&msg));
        buf_destroy(&msg);
        if (rc != ERR_OK)
            return false;
    }
    return true;
}

/* libmicrohttpd's connection timeout, in whole seconds. */
static unsigned conn_timeout_s(void)
{
    unsigned s = (unsigned)(server.cfg->request_timeout_ns / 1000000000LL);
    return s ? s : 1;
}

/* The body must arrive within request_timeout of the headers. The
 * connection timeout only bounds the silence between two reads, so a client
 * sending a byte now and then would hold its request forever: it is cut to
 * the time left, and a piece arriving after the deadline ends the request.
 * Either way the connection closes without a reply (libmicrohttpd 0.9.75
 * queues none while a body is read). */
static bool body_in_time(struct MHD_Connection *con, struct srv_req *req)
{
    int64_t left = req->start_ns + server.cfg->request_timeout_ns - clock_mono_ns();
    if (left <= 0) {
        log_warn("request %s: body not received within request_timeout: connection closed",
                 req->id);
        return false;
    }
    unsigned s = (unsigned)((left + 999999999) / 1000000000LL);
    MHD_set_connection_option(con, MHD_CONNECTION_OPTION_TIMEOUT, s);
    req->timeout_cut = true;
    return true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *con, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)cls;
    (void)version;
    const char *uri_mark = *con_cls == &args_cut || *con_cls == &path_nul ? *con_cls : NULL;
    struct srv_req *req = uri_mark ? NULL : *con_cls;
    if (!req) {
        const char *allow = NULL;
        const struct route *route = route_find(method, url, &allow);
        req = req_new(route);
        req->url = url;
        req->path = xstrdup(url);
        snprintf(req->method, sizeof req->method, "%s", method);
        *con_cls = req;
        guard_headers_done(con);
        atomic_fetch_add(&server.in_flight, 1);
        if (!req_admit(con, req, route, method, allow, uri_mark))
            return MHD_YES;
        /* Handlers of requests with a body see the headers first, so that
         * they can refuse before the body is read. */
        if (route->body)
            return route->fn(con, req, upload_data, upload_data_size);
        /* A body comes in later calls; requests without one are answered
         * at the next call, when MHD allows a response. */
        return MHD_YES;
    }
    if (req->responded) {
        /* An error was queued at the headers: MHD skips the body. */
        *upload_data_size = 0;
        return MHD_YES;
    }
    const struct route *route = route_get(req->route);
    if (*upload_data_size > 0) {
        if (!body_in_time(con, req))
            return MHD_NO;
        if (!route->body) {
            /* req_admit refused any announced body: none can come. */
            *upload_data_size = 0;
            return MHD_YES;
        }
    } else if (req->timeout_cut) {
        /* The whole body is in: a slow reader of the reply gets the
         * connection timeout again. */
        MHD_set_connection_option(con, MHD_CONNECTION_OPTION_TIMEOUT, conn_timeout_s());
    }
    return route->fn(con, req, upload_data, upload_data_size);
}

static void on_completed(void *cls, struct MHD_Connection *con, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    struct srv_req *req = *con_cls;
    *con_cls = NULL;
    guard_request_done(con);
    if (!req || req == (void *)&args_cut || req == (void *)&path_nul)
        return; /* ended before the access handler saw it */
    unsigned status = req->status ? req->status : 0;
    atomic_fetch_add(&server.requests[req->route][srv_status_slot(status)], 1);
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && toe != MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN)
        log_debug("request %s ended early (code %d)", req->id, (int)toe);
    req_free(req);
    atomic_fetch_sub(&server.in_flight, 1);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    log_warn("http: %s", msg);
}

/* Resolves the validated listen address (config's cfg_parse_listen splits
 * it) into a socket address. */
static int resolve_listen(const char *listen, struct sockaddr_storage *ss, socklen_t *len)
{
    struct cfg_addr a;
    struct buf why = BUF_INIT;
    int rc = cfg_parse_listen(listen, &a, &why);
    buf_destroy(&why);
    if (rc != ERR_OK)
        return rc;
    char port[8];
    snprintf(port, sizeof port, "%u", (unsigned)a.port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    if (getaddrinfo(a.host, port, &hints, &res) != 0 || !res)
        return ERR_INVAL;
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return ERR_OK;
}

static bool srv_is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
}

static void format_addr(const struct sockaddr_storage *ss, unsigned port, char *out, size_t n)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    if (ss->ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, ip, sizeof ip);
        snprintf(out, n, "[%s]:%u", ip, port);
    } else {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, ip, sizeof ip);
        snprintf(out, n, "%s:%u", ip, port);
    }
}

static void on_connection(void *cls, struct MHD_Connection *con, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    (void)cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED)
        guard_opened(con, socket_context);
    else
        guard_closed(socket_context);
}

/* The whole of a PEM file, NUL-terminated, or NULL with the reason logged. */
static char *read_pem(const char *what, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        log_error("cannot read %s %s: %s", what, path, strerror(errno));
        return NULL;
    }
    struct buf b = BUF_INIT;
    char piece[4096];
    size_t n;
    while ((n = fread(piece, 1, sizeof piece, f)) > 0)
        buf_append(&b, piece, n);
    bool bad = ferror(f);
    fclose(f);
    if (bad || b.len == 0 || !strstr(buf_cstr(&b), "-----BEGIN ")) {
        log_error("%s %s is %s", what, path, bad ? "unreadable" : "not a PEM file");
        buf_destroy(&b);
        return NULL;
    }
    return buf_steal(&b, NULL);
}

/* With tls_cert and tls_key set: reads both into *cert and *key (freed by
 * srv_stop) and adds MHD_USE_TLS to *flags. ERR_OK, or ERR_INVAL logged. */
static int tls_setup(const struct config *cfg, unsigned *flags)
{
    if (!cfg->tls_cert || !cfg->tls_cert[0])
        return ERR_OK;
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        log_error("tls_cert is set, but this libmicrohttpd was built without TLS");
        return ERR_INVAL;
    }
    server.tls_cert = read_pem("tls_cert", cfg->tls_cert);
    server.tls_key = server.tls_cert ? read_pem("tls_key", cfg->tls_key) : NULL;
    if (!server.tls_key)
        return ERR_INVAL;
    *flags |= MHD_USE_TLS;
    return ERR_OK;
}

static void tls_free(void)
{
    free(server.tls_cert);
    free(server.tls_key);
    server.tls_cert = server.tls_key = NULL;
}

int srv_start(const struct config *cfg, struct store *store)
{
    struct sockaddr_storage ss;
    socklen_t sslen = 0;
    memset(&ss, 0, sizeof ss);
    if (resolve_listen(cfg->listen, &ss, &sslen) != ERR_OK) {
        log_error("cannot resolve listen address %s", cfg->listen);
        return ERR_INVAL;
    }
    server.cfg = cfg;
    server.store = store;
    server.started_ns = clock_real_ns();
    event_stamp_init(&server.stamp, NULL, NULL);
    atomic_store(&server.stopping, false);
    if (h_tail_start() != ERR_OK) {
        log_error("cannot start the live tail's dispatcher thread");
        return ERR_NOMEM;
    }

    /* poll, not epoll: in epoll mode libmicrohttpd 0.9.75 misses a FIN that
     * arrives with the last bytes of an unfinished body, and such a
     * connection lingers (CLOSE-WAIT, a request "in flight") until the
     * connection timeout, which also delays a graceful stop. */
    unsigned flags =
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    /* A write blocks its thread until the WAL fsync: in a shared pool the
     * other connections of that thread wait with it. */
    if (cfg->http_threads == 0)
        flags |= MHD_USE_THREAD_PER_CONNECTION;
    else
        flags |= MHD_ALLOW_SUSPEND_RESUME; /* tail streams wait suspended (h_tail.c) */
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (tls_setup(cfg, &flags) != ERR_OK) {
        tls_free();
        return ERR_INVAL;
    }
    struct MHD_OptionItem extra[] = {{MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)cfg->http_threads,
                                      NULL},
                                     {MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                                      (intptr_t)cfg->max_connections_per_client, NULL},
                                     {MHD_OPTION_HTTPS_MEM_CERT, 0, server.tls_cert},
                                     {MHD_OPTION_HTTPS_MEM_KEY, 0, server.tls_key},
                                     {MHD_OPTION_END, 0, NULL}};
    size_t nextra = 0;
    if (cfg->http_threads != 0)
        extra[nextra++] = extra[0];
    if (cfg->max_connections_per_client != 0)
        extra[nextra++] = extra[1];
    if (server.tls_cert) {
        extra[nextra++] = extra[2];
        extra[nextra++] = extra[3];
    }
    extra[nextra].option = MHD_OPTION_END;
    if (guard_start(cfg->request_timeout_ns) != ERR_OK) {
        tls_free();
        return ERR_NOMEM;
    }
    server.mhd =
        MHD_start_daemon(flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_EXTERNAL_LOGGER,
                         mhd_log, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                         MHD_OPTION_ARRAY, extra, MHD_OPTION_CONNECTION_LIMIT,
                         (unsigned)cfg->max_connections + SRV_RESERVE, MHD_OPTION_NOTIFY_CONNECTION,
                         on_connection, NULL, MHD_OPTION_CONNECTION_TIMEOUT, conn_timeout_s(),
                         MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024),
                         MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL, MHD_OPTION_NOTIFY_COMPLETED,
                         on_completed, NULL, MHD_OPTION_END);
    if (!server.mhd) {
        log_error("cannot listen on %s (address in use, or not allowed%s?)", cfg->listen,
                  server.tls_cert ? ", or a certificate and key that do not match" : "");
        guard_stop();
        tls_free();
        h_tail_free();
        return ERR_IO;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(server.mhd, MHD_DAEMON_INFO_BIND_PORT);
    char where[300];
    format_addr(&ss, info ? info->port : 0, where, sizeof where);
    char threads[48];
    if (cfg->http_threads == 0)
        snprintf(threads, sizeof threads, "a thread per connection");
    else
        snprintf(threads, sizeof threads, "%u threads", (unsigned)cfg->http_threads);
    log_info("listening on %s://%s (%s, %u connections max)", server.tls_cert ? "https" : "http",
             where, threads, (unsigned)cfg->max_connections);
    if (!server.tls_cert && cfg->ntokens > 0 && !srv_is_loopback(&ss))
        log_warn("listening beyond loopback without TLS: tokens and data cross the network in "
                 "clear text (set tls_cert and tls_key)");
    return ERR_OK;
}

void srv_stop(int64_t wait_ns)
{
    if (!server.mhd)
        return;
    atomic_store(&server.stopping, true);
    MHD_socket fd = MHD_quiesce_daemon(server.mhd);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
    h_tail_shutdown(); /* tail streams end now: they would never finish */
    int64_t deadline = clock_mono_ns() + wait_ns;
    while (atomic_load(&server.in_flight) > 0 && clock_mono_ns() < deadline) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    int left = atomic_load(&server.in_flight);
    if (left > 0)
        log_warn("stopping with %d requests still in flight", left);
    MHD_stop_daemon(server.mhd);
    server.mhd = NULL;
    guard_stop();
    tls_free();
    h_tail_free();
}
