/* The InfluxQL that write clients send to /query before writing: Telegraf
 * and the InfluxDB 1.x client libraries create their database with
 * CREATE DATABASE "name" [WITH DURATION d ...] and may list databases with
 * SHOW DATABASES. Nothing else of InfluxQL is understood: data is queried
 * with /api/v1/query or /api/v1/sql, and any other statement is refused
 * with a message that says so. */
#ifndef LB_INFLUXQL_H
#define LB_INFLUXQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "query/query.h"

#define IQL_MAX_STMTS 16
#define IQL_MAX_NAME 255

enum iql_kind { IQL_CREATE_DB, IQL_SHOW_DBS };

struct iql_stmt {
    enum iql_kind kind;
    char db[IQL_MAX_NAME + 1]; /* CREATE DATABASE: the name, unquoted */
    bool has_ttl;              /* WITH DURATION given (INF: ttl_ns 0) */
    int64_t ttl_ns;
};

struct iql_script {
    struct iql_stmt stmts[IQL_MAX_STMTS];
    size_t n;
};

/* Parses len bytes of ';'-separated statements (empty ones skipped) into
 * out. ERR_OK, or ERR_INVAL with the reason in err. */
int iql_parse(const char *q, size_t len, struct iql_script *out, struct buf *err);

struct store;
/* Runs the statements against s and appends InfluxDB 1.x's reply,
 * {"results":[{"statement_id":0,...},...]} and a newline, to out: CREATE
 * DATABASE creates with o's db_defaults (WITH DURATION as the TTL) and
 * keeps an existing database as it is, as InfluxDB does; SHOW DATABASES
 * lists those o->db_visible admits; a failed statement carries its "error". */
void iql_exec(struct store *s, const struct iql_script *sc, const struct query_opts *o,
              struct buf *out);

#endif
