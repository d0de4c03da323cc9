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

#include "config/buf.h"

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

#endif
