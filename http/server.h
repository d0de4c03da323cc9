/* The HTTP server: libmicrohttpd with a thread pool, the route table and the
 * per-request state. struct server is the only global mutable state of the
 * daemon (STYLE.md §10); lower layers get handles.
 *
 * Lifecycle: srv_start() listens and serves; srv_stop() stops accepting,
 * waits for the requests in flight (bounded by request_timeout) and stops. */
#ifndef LB_SERVER_H
#define LB_SERVER_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "config/config.h"
#include "ingest/event.h"

struct store;
struct srv_req;
struct tail_hub;

/* A route handler. It is called as libmicrohttpd calls the access handler:
 * once per upload piece (*upload_size > 0, consume and set it to 0) and once
 * at the end (*upload_size == 0), when it must queue a response. For
 * requests without a body only the final call happens. */
typedef enum MHD_Result (*route_fn)(struct MHD_Connection *con, struct srv_req *req,
                                    const char *upload, size_t *upload_size);

enum route_id {
    ROUTE_PING,
    ROUTE_HEALTH,
    ROUTE_METRICS,
    ROUTE_WRITE_V1,
    ROUTE_WRITE_V2,
    ROUTE_INGEST,
    ROUTE_QUERY,
    ROUTE_SQL,
    ROUTE_INFLUXQL,
    ROUTE_TAIL,
    ROUTE_UI,
    ROUTE_LOKI_PUSH,
    ROUTE_OTLP_LOGS,
    ROUTE_NOT_FOUND,
    ROUTE_BAD_METHOD,
    ROUTE_ES_ROOT,  /* GET / for Elasticsearch clients */
    ROUTE_ES_BULK,  /* /_bulk, /{index}/_bulk */
    ROUTE_ES_PROBE, /* what Elasticsearch shippers ask at start */
    ROUTE_WRITE_V3, /* /api/v3/write_lp */
    ROUTE_COUNT
};

/* Per-request state, hung off MHD's *con_cls and freed when the request
 * completes. Handlers keep their own state in `ctx` and free it with
 * `ctx_free`. */
struct srv_req {
    enum route_id route;
    char id[24];      /* Request-Id */
    int64_t start_ns; /* monotonic */
    bool responded;
    bool body_done;   /* the handler has seen the end of the body */
    bool timeout_cut; /* the connection timeout is cut to the body's deadline */
    unsigned status;  /* queued status, for metrics */
    void *ctx;
    void (*ctx_free)(void *ctx);
    const struct cfg_token *token; /* authenticated token, NULL if none */
    const char *url;               /* the request's path (MHD's, valid until it completes) */
    char *path;                    /* the URL's path (owned) */
    char method[16];               /* the request's method, cut to 15 bytes */
};

/* Status codes counted per route in /metrics. */
#define SRV_STATUS_SLOTS 14

struct server {
    const struct config *cfg; /* read-only after start */
    struct store *store;
    struct MHD_Daemon *mhd;
    int64_t started_ns; /* realtime, for uptime */
    atomic_uint_fast64_t req_seq;
    atomic_int in_flight; /* requests started and not completed */
    atomic_bool stopping;
    struct event_stamp stamp; /* strictly increasing arrival stamps of raw/JSON lines */
    char *tls_cert, *tls_key; /* PEM text with tls_cert set, else NULL */
    /* requests by route and status slot */
    atomic_uint_fast64_t requests[ROUTE_COUNT][SRV_STATUS_SLOTS];

    struct tail_hub *tail; /* the live tail (h_tail.c) */
};

extern struct server server;

/* Starts serving cfg->listen. The store is borrowed and must outlive the
 * server. ERR_OK or an ERR_* (the reason is logged). */
struct db_opts;
int srv_start(const struct config *cfg, struct store *store);
/* The options of a database created without its own: default_buckets,
 * default_ts_order, default_ttl of the config (the one place they are read). */
void srv_db_defaults(struct db_opts *out);
/* Stops accepting, waits up to wait_ns for in-flight requests, stops. */
void srv_stop(int64_t wait_ns);

/* Index of a status in requests[][]; srv_status_code() is its inverse. */
int srv_status_slot(unsigned status);
unsigned srv_status_code(int slot);
const char *srv_route_name(enum route_id r);

/* The value of a URL query argument or NULL. */
const char *srv_arg(struct MHD_Connection *con, const char *name);

#define LB_VERSION "0.1.0"
#define LB_INFLUX_VERSION "1.8.10-logbucket"

#endif
