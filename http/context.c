/* The daemon's state that handlers read (struct server, the only global
 * mutable state) and the small helpers they share: status slots for the
 * request counters, route names, clocks, URL arguments, database defaults.
 * Kept apart from server.c, which drives libmicrohttpd and calls the
 * handlers, so that handlers never call back into it. */
#include "http/server.h"

#include "base/clock.h"
#include "store/store.h"

struct server server;

static const unsigned status_codes[SRV_STATUS_SLOTS] = {200, 204, 400, 401, 403, 404, 405,
                                                        413, 414, 500, 501, 503, 507, 0};

int srv_status_slot(unsigned status)
{
    for (int i = 0; i < SRV_STATUS_SLOTS - 1; i++)
        if (status_codes[i] == status)
            return i;
    return SRV_STATUS_SLOTS - 1; /* "other" */
}

unsigned srv_status_code(int slot)
{
    return status_codes[slot];
}

const char *srv_route_name(enum route_id r)
{
    static const char *names[ROUTE_COUNT] = {"ping",      "health",    "metrics",    "write",
                                             "v2_write",  "ingest",    "query",      "sql",
                                             "influxql",  "tail",      "ui",         "loki_push",
                                             "otlp_logs", "not_found", "bad_method", "es_root",
                                             "es_bulk",   "es_probe",  "v3_write"};
    return names[r];
}

const char *srv_arg(struct MHD_Connection *con, const char *name)
{
    return MHD_lookup_connection_value(con, MHD_GET_ARGUMENT_KIND, name);
}

void srv_db_defaults(struct db_opts *out)
{
    const struct config *cfg = server.cfg;
    *out = (struct db_opts){.buckets = (uint32_t)cfg->default_buckets,
                            .ts_desc = cfg->default_ts_desc,
                            .ttl_ns = cfg->default_ttl_ns};
}
