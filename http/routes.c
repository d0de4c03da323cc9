/* The route table: (method, path) -> handler, with the access right each
 * route requires when tokens are configured. */
#include <string.h>

#include "http/handlers.h"

static const struct route routes[] = {
    {"/ping", "GET,HEAD", ROUTE_PING, h_ping, AUTH_NONE, false},
    {"/health", "GET,HEAD", ROUTE_HEALTH, h_health, AUTH_NONE, false},
    {"/metrics", "GET", ROUTE_METRICS, h_metrics, AUTH_ANY, false},
    {"/write", "POST", ROUTE_WRITE_V1, h_write, AUTH_HANDLER, true},
    {"/api/v2/write", "POST", ROUTE_WRITE_V2, h_write, AUTH_HANDLER, true},
    {"/api/v1/ingest", "POST", ROUTE_INGEST, h_write, AUTH_HANDLER, true},
    {"/api/v1/query", "GET", ROUTE_QUERY, h_query, AUTH_HANDLER, false},
    {"/api/v1/sql", "GET,POST", ROUTE_SQL, h_sql, AUTH_HANDLER, true},
    {"/query", "GET,POST", ROUTE_INFLUXQL, h_influxql, AUTH_HANDLER, true},
    {"/api/v1/tail", "GET", ROUTE_TAIL, h_tail, AUTH_HANDLER, false},
    {"/ui", "GET,HEAD", ROUTE_UI, h_console, AUTH_NONE, false},
    {"/api/v3/write_lp", "POST", ROUTE_WRITE_V3, h_write, AUTH_HANDLER, true},
    {"/", "GET,HEAD", ROUTE_ES_ROOT, h_es_root, AUTH_NONE, false},
    {"/_bulk", "POST,PUT", ROUTE_ES_BULK, h_write, AUTH_HANDLER, true},
    {"/*/_bulk", "POST,PUT", ROUTE_ES_BULK, h_write, AUTH_HANDLER, true},
    {"/_cat/health", "GET,HEAD", ROUTE_ES_PROBE, h_es_probe, AUTH_ANY, true},
    {"/_cluster/health", "GET,HEAD", ROUTE_ES_PROBE, h_es_probe, AUTH_ANY, true},
    {"/_license", "GET,HEAD", ROUTE_ES_PROBE, h_es_probe, AUTH_ANY, true},
    {"/_xpack", "GET,HEAD", ROUTE_ES_PROBE, h_es_probe, AUTH_ANY, true},
    {"/_nodes", "GET,HEAD", ROUTE_ES_PROBE, h_es_probe, AUTH_ANY, true},
    {"/_nodes/*", "GET,HEAD", ROUTE_ES_PROBE, h_es_probe, AUTH_ANY, true},
    {"/_index_template/*", "GET,HEAD,PUT,POST", ROUTE_ES_PROBE, h_es_probe, AUTH_ANY, true},
    {"/_template/*", "GET,HEAD,PUT,POST", ROUTE_ES_PROBE, h_es_probe, AUTH_ANY, true},
    {"/_ilm/policy/*", "GET,HEAD,PUT,POST", ROUTE_ES_PROBE, h_es_probe, AUTH_ANY, true},
    {"/loki/api/v1/push", "POST", ROUTE_LOKI_PUSH, h_write, AUTH_HANDLER, true},
    {"/v1/logs", "POST", ROUTE_OTLP_LOGS, h_write, AUTH_HANDLER, true},
    {"/otlp/v1/logs", "POST", ROUTE_OTLP_LOGS, h_write, AUTH_HANDLER, true},
    {"/_ingest/pipeline/*", "GET,HEAD,PUT,POST", ROUTE_ES_PROBE, h_es_probe, AUTH_ANY, true},
    {"/_alias/*", "GET,HEAD", ROUTE_ES_PROBE, h_es_probe, AUTH_ANY, true},
};

/* path[0..plen) matches pattern, where a '*' stands for one non-empty path
 * segment (no '/'): the pattern of /{index}/_bulk matches "/logs/_bulk". */
static bool path_match(const char *pattern, const char *path, size_t plen)
{
    size_t i = 0;
    for (const char *p = pattern; *p; p++) {
        if (*p != '*') {
            if (i == plen || path[i] != *p)
                return false;
            i++;
            continue;
        }
        size_t start = i;
        while (i < plen && path[i] != '/')
            i++;
        if (i == start)
            return false;
    }
    return i == plen;
}

static bool method_in(const char *method, const char *list)
{
    size_t n = strlen(method);
    const char *p = list;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, method, n) == 0)
            return true;
        if (!comma)
            break;
        p = comma + 1;
    }
    return false;
}

const struct route *route_find(const char *method, const char *path, const char **allow)
{
    static const struct route not_found = {"", "", ROUTE_NOT_FOUND, NULL, AUTH_NONE, false};
    static const struct route bad_method = {"", "", ROUTE_BAD_METHOD, NULL, AUTH_NONE, false};
    /* Every path under /ui/ is a file of the console. */
    if (strncmp(path, "/ui/", 4) == 0)
        path = "/ui/";
    size_t plen = strlen(path);
    /* A trailing slash names the same resource ("/write/"). */
    if (plen > 1 && path[plen - 1] == '/')
        plen--;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (!path_match(routes[i].path, path, plen))
            continue;
        if (method_in(method, routes[i].methods))
            return &routes[i];
        *allow = routes[i].methods;
        return &bad_method;
    }
    return &not_found;
}

const struct route *route_get(enum route_id id)
{
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (routes[i].id == id)
            return &routes[i];
    return NULL;
}
