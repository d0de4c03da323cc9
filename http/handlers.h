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

/* The Loki and OTLP parts of the write path (h_logs.c). logs_db_default:
 * the database without db= (the X-Scope-OrgID header, Loki's tenant, else
 * loki_db or otlp_db). logs_params: the format from Content-Type and the
 * mapping of the config (kept in *map, which must outlive the ingest), or a
 * reason for 415. Replies: an error in the endpoint's shape (Loki plain
 * text, OTLP a google.rpc.Status; 5xx as every path), Loki's 400 naming
 * the refused entries, OTLP's 200 with its partialSuccess. */
struct ingest;
struct ingest_params;
struct logs_map;
const char *logs_db_default(struct MHD_Connection *con, bool is_otlp);
const char *logs_params(struct MHD_Connection *con, bool is_otlp, struct logs_map *map,
                        bool *is_proto, struct ingest_params *p);
enum MHD_Result logs_reply_error(struct MHD_Connection *con, struct srv_req *req, bool is_otlp,
                                 bool is_proto, unsigned status, const char *msg);
enum MHD_Result loki_reply_partial(struct MHD_Connection *con, struct srv_req *req,
                                   struct ingest *in);
enum MHD_Result otlp_reply_ok(struct MHD_Connection *con, struct srv_req *req, bool is_proto,
                              struct ingest *in);

#endif
