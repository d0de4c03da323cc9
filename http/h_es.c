/* The Elasticsearch handshake: GET / answers a version document that the
 * clients accept (8.x numbers, the tagline, X-Elastic-Product on every
 * reply of these routes, added by reply.c), or sends a browser to the
 * console; the probes shippers make before their first bulk request
 * (cluster health, license, xpack, nodes, index templates, ILM policies)
 * are answered so that they start. Templates and policies are not kept:
 * a lookup says none exists, a PUT is acknowledged. */
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/json.h"
#include "http/handlers.h"
#include "http/reply.h"

#define ES_VERSION "8.11.0"
#define ES_UUID "bG9nYnVja2V0LWNsdXN0ZXI"

enum MHD_Result es_reply_error(struct MHD_Connection *con, struct srv_req *req, unsigned status,
                               const char *type, const char *reason)
{
    struct buf b = BUF_INIT;
    buf_printf(&b, "{\"error\":{\"root_cause\":[{\"type\":\"%s\",\"reason\":", type);
    json_str(&b, reason, strlen(reason));
    buf_printf(&b, "}],\"type\":\"%s\",\"reason\":", type);
    json_str(&b, reason, strlen(reason));
    buf_printf(&b, "},\"status\":%u}\n", status);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(b.len, b.data, MHD_RESPMEM_MUST_COPY);
    buf_destroy(&b);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE || status == MHD_HTTP_TOO_MANY_REQUESTS)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    return reply_queue(con, req, status, resp);
}

static enum MHD_Result send_json(struct MHD_Connection *con, struct srv_req *req, unsigned status,
                                 const char *body)
{
    return reply_send(con, req, status, "application/json", body, strlen(body));
}

/* A browser asks for HTML and not JSON. */
static bool is_browser(struct MHD_Connection *con)
{
    const char *acc = MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    return acc && strstr(acc, "text/html") && !strstr(acc, "application/json");
}

enum MHD_Result h_es_root(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                          size_t *upload_size)
{
    (void)upload;
    (void)upload_size;
    if (is_browser(con)) {
        struct MHD_Response *resp =
            MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
        if (!resp)
            return MHD_NO;
        MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, "/ui/");
        return reply_queue(con, req, MHD_HTTP_FOUND, resp);
    }
    return send_json(
        con, req, MHD_HTTP_OK,
        "{\"name\":\"logbucket\",\"cluster_name\":\"logbucket\",\"cluster_uuid\":\"" ES_UUID
        "\",\"version\":{\"number\":\"" ES_VERSION "\",\"build_flavor\":\"default\","
        "\"build_type\":\"logbucket\",\"build_hash\":\"logbucket-" LB_VERSION "\","
        "\"build_date\":\"2023-11-04T10:04:57.184859352Z\",\"build_snapshot\":false,"
        "\"lucene_version\":\"9.8.0\",\"minimum_wire_compatibility_version\":\"7.17.0\","
        "\"minimum_index_compatibility_version\":\"7.0.0\"},"
        "\"tagline\":\"You Know, for Search\"}\n");
}

static enum MHD_Result cat_health(struct MHD_Connection *con, struct srv_req *req)
{
    char body[160];
    int64_t now = clock_real_ns() / 1000000000LL;
    int n = snprintf(body, sizeof body,
                     "%lld %02lld:%02lld:%02lld logbucket green 1 1 0 0 0 0 0 0 - 100.0%%\n",
                     (long long)now, (long long)(now / 3600 % 24), (long long)(now / 60 % 60),
                     (long long)(now % 60));
    return reply_send(con, req, MHD_HTTP_OK, "text/plain; charset=UTF-8", body, (size_t)n);
}

static enum MHD_Result nodes(struct MHD_Connection *con, struct srv_req *req)
{
    struct buf b = BUF_INIT;
    buf_puts(&b, "{\"_nodes\":{\"total\":1,\"successful\":1,\"failed\":0},\"cluster_name\":"
                 "\"logbucket\",\"nodes\":{\"bG9nYnVja2V0\":{\"name\":\"logbucket\",\"version\":"
                 "\"" ES_VERSION
                 "\",\"roles\":[\"data\",\"ingest\",\"master\"],\"http\":{\"publish_address\":");
    json_str(&b, server.cfg->listen, strlen(server.cfg->listen));
    buf_puts(&b, "}}}}\n");
    enum MHD_Result r = reply_send(con, req, MHD_HTTP_OK, "application/json", b.data, b.len);
    buf_destroy(&b);
    return r;
}

static bool starts(const char *path, const char *prefix)
{
    return strncmp(path, prefix, strlen(prefix)) == 0;
}

/* Index templates, legacy templates, ILM policies, ingest pipelines: none
 * is kept. */
static enum MHD_Result templates(struct MHD_Connection *con, struct srv_req *req,
                                 const char *method)
{
    if (strcmp(method, "PUT") == 0 || strcmp(method, "POST") == 0)
        return send_json(con, req, MHD_HTTP_OK, "{\"acknowledged\":true}\n");
    return es_reply_error(con, req, MHD_HTTP_NOT_FOUND, "resource_not_found_exception",
                          "logbucket keeps no templates or policies: events are stored as sent");
}

static enum MHD_Result probe_reply(struct MHD_Connection *con, struct srv_req *req)
{
    const char *path = req->path;
    if (starts(path, "/_cat/health"))
        return cat_health(con, req);
    if (starts(path, "/_cluster/health"))
        return send_json(con, req, MHD_HTTP_OK,
                         "{\"cluster_name\":\"logbucket\",\"status\":\"green\",\"timed_out\":false,"
                         "\"number_of_nodes\":1,\"number_of_data_nodes\":1,\"active_primary_"
                         "shards\":0,"
                         "\"active_shards\":0,\"relocating_shards\":0,\"initializing_shards\":0,"
                         "\"unassigned_shards\":0,\"active_shards_percent_as_number\":100.0}\n");
    if (starts(path, "/_license"))
        return send_json(con, req, MHD_HTTP_OK,
                         "{\"license\":{\"status\":\"active\",\"uid\":\"" ES_UUID "\","
                         "\"type\":\"basic\",\"issue_date\":\"2023-11-04T00:00:00.000Z\","
                         "\"issue_date_in_millis\":1699056000000,\"max_nodes\":1000,"
                         "\"issued_to\":\"logbucket\",\"issuer\":\"logbucket\","
                         "\"start_date_in_millis\":-1}}\n");
    if (starts(path, "/_xpack"))
        return send_json(con, req, MHD_HTTP_OK,
                         "{\"build\":{\"hash\":\"logbucket\",\"date\":\"2023-11-04T10:04:57."
                         "184859352Z\"},"
                         "\"license\":{\"uid\":\"" ES_UUID
                         "\",\"type\":\"basic\",\"mode\":\"basic\","
                         "\"status\":\"active\"},\"features\":{\"ilm\":{\"available\":true,"
                         "\"enabled\":true},\"security\":{\"available\":false,\"enabled\":false}},"
                         "\"tagline\":\"You know, for X\"}\n");
    if (starts(path, "/_nodes"))
        return nodes(con, req);
    if (starts(path, "/_alias/"))
        /* Logstash's rollover alias: said to exist, so it writes to it
         * (the index is only the event's name here) */
        return send_json(con, req, MHD_HTTP_OK, "{}\n");
    return templates(con, req, req->method);
}

enum MHD_Result h_es_probe(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                           size_t *upload_size)
{
    (void)upload;
    if (!req->ctx) {
        /* the headers: a template's body is read and dropped */
        req->ctx = req;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    return probe_reply(con, req);
}
