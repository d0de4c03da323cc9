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
#include "http/handlers.h"
#include "http/reply.h"
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
    char body[256];
    int64_t up = (clock_real_ns() - server.started_ns) / 1000000000LL;
    int n = snprintf(body, sizeof body,
                     "{\"name\":\"logbucket\",\"message\":\"ready for queries and writes\","
                     "\"status\":\"pass\",\"checks\":[],\"version\":\"%s\",\"uptime_s\":%lld}\n",
                     LB_VERSION, (long long)up);
    return reply_send(con, req, MHD_HTTP_OK, "application/json", body, (size_t)n);
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
    h_logs_metrics(&out);
    query_metrics(&out);
    if (server.store)
        store_metrics(server.store, &out);
    enum MHD_Result r = reply_send(con, req, MHD_HTTP_OK, "text/plain; version=0.0.4",
                                   out.data ? out.data : "", out.len);
    buf_destroy(&out);
    return r;
}
