/* Replies: the only place that maps ERR_* codes to HTTP statuses, and that
 * builds the JSON error bodies every non-2xx carries ({"error": "..."} plus
 * an X-Influxdb-Error header, as InfluxDB clients expect). */
#ifndef LB_REPLY_H
#define LB_REPLY_H

#include <microhttpd.h>
#include <stddef.h>

#include "base/buf.h"

struct srv_req;

/* INVAL 400, PERM 403, NOTFOUND 404, TOOBIG 413, BUSY 503 (+Retry-After),
 * NOSPC 507, anything else 500. */
unsigned reply_status_for(int err);

/* Appends s to out as the inside of a JSON string (escapes " \ and control
 * characters; invalid UTF-8 bytes become \ufffd). */
void reply_json_escape(struct buf *out, const char *s, size_t len);

/* Queues a response with the given status and body (copied). Adds the
 * common headers (Request-Id, versions). Returns MHD's result. */
enum MHD_Result reply_send(struct MHD_Connection *con, struct srv_req *req, unsigned status,
                           const char *content_type, const char *body, size_t len);
/* A response {"error":"<msg>"<extra_json>} (extra_json: more members such
 * as ,"written":3, or NULL) with Content-Type and X-Influxdb-Error set; the
 * caller adds headers and queues it. NULL if MHD cannot allocate it. */
struct MHD_Response *reply_error_response(const char *msg, const char *extra_json);
/* Queues {"error":"<msg>"} with X-Influxdb-Error: msg. */
enum MHD_Result reply_error(struct MHD_Connection *con, struct srv_req *req, unsigned status,
                            const char *msg);
/* reply_error with more members after "error" (extra_json as in
 * reply_error_response; NULL for none). */
enum MHD_Result reply_error_extra(struct MHD_Connection *con, struct srv_req *req, unsigned status,
                                  const char *msg, const char *extra_json);
/* reply_error with the status for an ERR_* code. */
enum MHD_Result reply_err(struct MHD_Connection *con, struct srv_req *req, int err,
                          const char *msg);
/* Queues an empty 204. */
enum MHD_Result reply_no_content(struct MHD_Connection *con, struct srv_req *req);

/* Adds the headers every response carries. */
void reply_add_common_headers(struct MHD_Response *resp, struct srv_req *req);

/* Queues resp (adding common headers), records the status for /metrics and
 * destroys our reference. */
enum MHD_Result reply_queue(struct MHD_Connection *con, struct srv_req *req, unsigned status,
                            struct MHD_Response *resp);

#endif
