/* /ping, /health and /metrics. /metrics is Prometheus text: the process,
 * the HTTP layer, jemalloc (read through mallctl: proof that it is the
 * allocator), then the store, ingest and query sections. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#ifndef LB_NO_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#include "base/clock.h"
#include "http/guard.h"
#include "http/handlers.h"
#include "http/reply.h"
#include "http/syslog_listen.h"
#include "query/query.h"
#include "store/store.h"

enum MHD_Result h_ping(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                       size_t *upload_size)
{
    (void)upload;
    (void)upload_size;
    const char *verbose = srv_arg(con, "verbose");
    if (verbose && (strcmp(verbose, "true") == 0 || strcmp(verbose, "1") == 0)) {
        char body[128];
        int n = snprintf(body, sizeof body, "{\"version\":\"%s\",\"influxdb_version\":\"%s\"}\n",
                         LB_VERSION, LB_INFLUX_VERSION);
        return reply_send(con, req, MHD_HTTP_OK, "application/json", body, (size_t)n);
    }
    return reply_no_content(con, req);
}

enum MHD_Result h_health(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                         size_t *upload_size)
{
    (void)upload;
    (void)upload_size;
    int64_t up = (clock_real_ns() - server.started_ns) / 1000000000LL;
    struct store_offline *off;
    size_t noff = store_offline_list(server.store, &off);
    struct buf b = BUF_INIT;
    buf_printf(&b, "{\"name\":\"logbucket\",\"message\":\"%s\",\"status\":\"%s\",\"checks\":[",
               noff ? "ready for queries and writes; some databases are offline"
                    : "ready for queries and writes",
               noff ? "warn" : "pass");
    /* An offline database is a check that fails; the others serve. */
    for (size_t i = 0; i < noff; i++) {
        buf_puts(&b, i ? ",{\"name\":\"database " : "{\"name\":\"database ");
        reply_json_escape(&b, off[i].name, strlen(off[i].name));
        buf_puts(&b, "\",\"status\":\"fail\",\"message\":\"offline: ");
        reply_json_escape(&b, off[i].why, strlen(off[i].why));
        buf_puts(&b, "\"}");
    }
    buf_printf(&b, "],\"version\":\"%s\",\"uptime_s\":%lld}\n", LB_VERSION, (long long)up);
    store_offline_free(off, noff);
    enum MHD_Result r = reply_send(con, req, MHD_HTTP_OK, "application/json", b.data, b.len);
    buf_destroy(&b);
    return r;
}

static void metrics_process(struct buf *out)
{
    double up = (double)(clock_real_ns() - server.started_ns) / 1e9;
    buf_printf(out,
               "# HELP logbucket_uptime_seconds Seconds since the daemon started.\n"
               "# TYPE logbucket_uptime_seconds gauge\nlogbucket_uptime_seconds %.3f\n",
               up);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
        buf_printf(out,
                   "# HELP logbucket_process_cpu_seconds_total User and system CPU time of the "
                   "daemon.\n"
                   "# TYPE logbucket_process_cpu_seconds_total counter\n"
                   "logbucket_process_cpu_seconds_total %.3f\n"
                   "# HELP logbucket_process_max_rss_bytes Peak resident set size of the daemon.\n"
                   "# TYPE logbucket_process_max_rss_bytes gauge\n"
                   "logbucket_process_max_rss_bytes %lld\n",
                   cpu, (long long)ru.ru_maxrss * 1024);
    }
}

static void metrics_http(struct buf *out)
{
    buf_puts(out, "# HELP logbucket_http_requests_total HTTP requests by route and status.\n"
                  "# TYPE logbucket_http_requests_total counter\n");
    for (int r = 0; r < ROUTE_COUNT; r++) {
        for (int s = 0; s < SRV_STATUS_SLOTS; s++) {
            uint64_t n = atomic_load(&server.requests[r][s]);
            if (n == 0)
                continue;
            unsigned code = srv_status_code(s);
            if (code)
                buf_printf(out, "logbucket_http_requests_total{route=\"%s\",status=\"%u\"} %llu\n",
                           srv_route_name((enum route_id)r), code, (unsigned long long)n);
            else
                buf_printf(out,
                           "logbucket_http_requests_total{route=\"%s\",status=\"other\"} %llu\n",
                           srv_route_name((enum route_id)r), (unsigned long long)n);
        }
    }
    buf_printf(out,
               "# HELP logbucket_http_requests_in_flight HTTP requests being served.\n"
               "# TYPE logbucket_http_requests_in_flight gauge\n"
               "logbucket_http_requests_in_flight %d\n",
               atomic_load(&server.in_flight));
    buf_printf(out,
               "# HELP logbucket_http_connections_open HTTP connections open.\n"
               "# TYPE logbucket_http_connections_open gauge\n"
               "logbucket_http_connections_open %d\n"
               "# HELP logbucket_http_slow_clients_closed_total Connections closed because their "
               "request headers did not arrive within request_timeout.\n"
               "# TYPE logbucket_http_slow_clients_closed_total counter\n"
               "logbucket_http_slow_clients_closed_total %llu\n",
               guard_open(), (unsigned long long)guard_cut_total());
}

static void metrics_jemalloc(struct buf *out)
{
#ifndef LB_NO_JEMALLOC
    uint64_t epoch = 1;
    size_t esz = sizeof epoch;
    mallctl("epoch", &epoch, &esz, &epoch, esz);
    static const char *stats[][2] = {{"stats.allocated", "allocated"},
                                     {"stats.active", "active"},
                                     {"stats.resident", "resident"},
                                     {"stats.mapped", "mapped"}};
    buf_puts(out, "# HELP logbucket_jemalloc_bytes Bytes reported by jemalloc's mallctl.\n"
                  "# TYPE logbucket_jemalloc_bytes gauge\n");
    for (size_t i = 0; i < sizeof stats / sizeof stats[0]; i++) {
        size_t v = 0, sz = sizeof v;
        if (mallctl(stats[i][0], &v, &sz, NULL, 0) == 0)
            buf_printf(out, "logbucket_jemalloc_bytes{kind=\"%s\"} %zu\n", stats[i][1], v);
    }
#else
    (void)out;
#endif
}

enum MHD_Result h_metrics(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                          size_t *upload_size)
{
    (void)upload;
    (void)upload_size;
    struct buf out = BUF_INIT;
    metrics_process(&out);
    metrics_http(&out);
    metrics_jemalloc(&out);
    h_write_metrics(&out);
    syslog_listen_metrics(&out);
    query_metrics(&out);
    h_tail_metrics(&out);
    if (server.store)
        store_metrics(server.store, &out);
    enum MHD_Result r = reply_send(con, req, MHD_HTTP_OK, "text/plain; version=0.0.4",
                                   out.data ? out.data : "", out.len);
    buf_destroy(&out);
    return r;
}
