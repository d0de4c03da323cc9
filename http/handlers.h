/* Route handlers of the HTTP layer and the route table that picks them.
 * Each handler follows the route_fn contract of server.h. */
#ifndef LB_HANDLERS_H
#define LB_HANDLERS_H

#include "http/server.h"

enum MHD_Result h_ping(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                       size_t *upload_size);
enum MHD_Result h_health(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                         size_t *upload_size);
enum MHD_Result h_metrics(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                          size_t *upload_size);
enum MHD_Result h_write(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                        size_t *upload_size);
enum MHD_Result h_query(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                        size_t *upload_size);
enum MHD_Result h_sql(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                      size_t *upload_size);
enum MHD_Result h_influxql(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                           size_t *upload_size);
enum MHD_Result h_console(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                          size_t *upload_size);

enum MHD_Result h_tail(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                       size_t *upload_size);
/* The live tail's hub (h_tail.c): made at start, its streams ended when
 * the server stops accepting, freed after the last connection. */
int h_tail_start(void);
void h_tail_shutdown(void);
void h_tail_free(void);
void h_tail_metrics(struct buf *out);

/* Elasticsearch: GET / (version document, or 302 to /ui/ for browsers)
 * and the probes shippers make at start (h_es.c). */
enum MHD_Result h_es_root(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                          size_t *upload_size);
enum MHD_Result h_es_probe(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                           size_t *upload_size);
/* Elasticsearch's error body {"error":{"root_cause":[..],"type":..,"reason":..},"status":N}. */
enum MHD_Result es_reply_error(struct MHD_Connection *con, struct srv_req *req, unsigned status,
                               const char *type, const char *reason);

/* What a route needs from the caller's token when tokens are configured. */
enum route_auth { AUTH_NONE, AUTH_ANY, AUTH_READ, AUTH_WRITE, AUTH_HANDLER };

struct route {
    const char *path;
    const char *methods; /* comma list, e.g. "GET,HEAD" */
    enum route_id id;
    route_fn fn;
    enum route_auth auth;
    bool body; /* takes a body: fn sees the headers first, to refuse early */
};

/* The route for (method, path). ROUTE_NOT_FOUND for an unknown path;
 * ROUTE_BAD_METHOD (and *allow set to the allowed methods) for a known path
 * with another method. */
const struct route *route_find(const char *method, const char *path, const char **allow);
const struct route *route_get(enum route_id id);

/* Authentication: the token a request carries (Authorization: Token X,
 * Bearer X, Basic base64(user:X), or u/p URL arguments), or NULL. */
const struct cfg_token *auth_token(struct MHD_Connection *con, const struct config *cfg);
/* ERR_OK if the request may use `right` on db (db NULL = any database),
 * ERR_PERM with a message otherwise. Always ERR_OK without tokens. */
int auth_check(const struct config *cfg, const struct cfg_token *token, bool has_credentials,
               unsigned right, const char *db, struct buf *msg);
/* auth_check for the request; on refusal queues 401 (no or unknown token)
 * or 403 (token without the right) and returns false. */
bool auth_require(struct MHD_Connection *con, struct srv_req *req, unsigned right, const char *db);
/* True if the request carried any credentials at all. */
bool auth_has_credentials(struct MHD_Connection *con);
/* True if token (a const struct cfg_token *) may read db: the filter of
 * SHOW DATABASES (query_opts.db_visible) when tokens are configured. */
bool auth_may_read(const void *token, const char *db);

/* Metrics of the ingest endpoints, appended to /metrics. */
void h_write_metrics(struct buf *out);

/* Log push endpoints (h_logs.c): Loki push and OpenTelemetry logs. */
enum MHD_Result h_logs(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                       size_t *upload_size);
void h_logs_metrics(struct buf *out);
/* Shared with h_write.c: the event limits of the config, and a database
 * opened (created when auto_create_databases allows). */
struct event_limits;
struct store_db;
void h_write_limits(struct event_limits *lim);
int h_write_open_db(const char *name, struct store_db **out);

#endif
