/* libmicrohttpd lifecycle and the access handler that gives every request
 * its state (Request-Id, route, auth) before the route's handler sees it.
 * Graceful stop: quiesce (stop accepting), wait for in-flight requests,
 * stop the daemon. */
#include "http/server.h"

#include <arpa/inet.h>
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
#include "http/handlers.h"
#include "http/reply.h"

static void req_free(struct srv_req *req)
{
    if (!req)
        return;
    if (req->ctx_free)
        req->ctx_free(req->ctx);
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

/* Checks what the route needs before any body is read. Queues an error and
 * returns false when the request may not go on. */
static bool req_admit(struct MHD_Connection *con, struct srv_req *req, const struct route *route,
                      const char *allow)
{
    if (route->id == ROUTE_NOT_FOUND) {
        reply_error(con, req, MHD_HTTP_NOT_FOUND,
                    "not found: no such endpoint (see README for /write, /api/v2/write, "
                    "/api/v1/ingest, /api/v1/query, /api/v1/sql, /query, /ping, /health, "
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *con, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)cls;
    (void)version;
    struct srv_req *req = *con_cls;
    if (!req) {
        const char *allow = NULL;
        const struct route *route = route_find(method, url, &allow);
        req = req_new(route);
        *con_cls = req;
        atomic_fetch_add(&server.in_flight, 1);
        if (!req_admit(con, req, route, allow))
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
    return route_get(req->route)->fn(con, req, upload_data, upload_data_size);
}

static void on_completed(void *cls, struct MHD_Connection *con, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)con;
    struct srv_req *req = *con_cls;
    if (!req)
        return;
    unsigned status = req->status ? req->status : 0;
    atomic_fetch_add(&server.requests[req->route][srv_status_slot(status)], 1);
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && toe != MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN)
        log_debug("request %s ended early (code %d)", req->id, (int)toe);
    req_free(req);
    *con_cls = NULL;
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
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    struct MHD_OptionItem pool[] = {{MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)cfg->http_threads,
                                     NULL},
                                    {MHD_OPTION_END, 0, NULL}};
    if (cfg->http_threads == 0)
        pool[0].option = MHD_OPTION_END;
    unsigned timeout_s = (unsigned)(cfg->request_timeout_ns / 1000000000LL);
    if (timeout_s == 0)
        timeout_s = 1;
    server.mhd =
        MHD_start_daemon(flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_EXTERNAL_LOGGER,
                         mhd_log, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                         MHD_OPTION_ARRAY, pool, MHD_OPTION_CONNECTION_LIMIT,
                         (unsigned)cfg->max_connections, MHD_OPTION_CONNECTION_TIMEOUT, timeout_s,
                         MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024),
                         MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
    if (!server.mhd) {
        log_error("cannot listen on %s (address in use, or not allowed?)", cfg->listen);
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
    log_info("listening on http://%s (%s, %u connections max)", where, threads,
             (unsigned)cfg->max_connections);
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
}
