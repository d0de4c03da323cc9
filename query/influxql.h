/* InfluxQL on /query, as InfluxDB 1.x answers it: SELECT translated onto
 * the SQL engine's conditions, plans and executor (measurement = event, the
 * host tag = host, other tags = tags, fields = fields, time = ts), the meta
 * statements (SHOW DATABASES / MEASUREMENTS / TAG KEYS / TAG VALUES / FIELD
 * KEYS / SERIES / RETENTION POLICIES / MEASUREMENT CARDINALITY, CREATE and
 * DROP DATABASE, DROP MEASUREMENT, DELETE), and InfluxDB's reply shape
 * {"results":[{"statement_id":0,"series":[...]}]}. query/README.md
 * ("InfluxQL") lists what differs from InfluxDB. */
#ifndef LB_INFLUXQL_H
#define LB_INFLUXQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "query/query.h"

#define IQL_MAX_STMTS 64
#define IQL_MAX_NAME 255

struct iql_script;

/* Parses len bytes of ';'-separated statements (empty ones skipped). now_ns
 * is now(). ERR_INVAL with InfluxDB's message in err ("error parsing query:
 * ..."); *out is written only on success; free it with iql_script_free. */
int iql_parse(const char *q, size_t len, int64_t now_ns, struct iql_script **out, struct buf *err);
void iql_script_free(struct iql_script *s); /* NULL ok */

/* The statements of s, and the right statement i needs (0 read, 1 write,
 * 2 admin) on the database *db (NULL: the request's db, or none). */
size_t iql_count(const struct iql_script *s);
enum iql_right { IQL_READ, IQL_WRITE, IQL_ADMIN };
enum iql_right iql_right_of(const struct iql_script *s, size_t i, const char **db);

struct iql_opts {
    const struct query_opts *q; /* limits, db_defaults, db_visible */
    const char *db;             /* db=: NULL if none */
    const char *host_tag;       /* the tag that is the host ("host") */
    int64_t epoch;              /* epoch=: ns per unit; 0: RFC 3339 strings */
    size_t chunk_size;          /* chunked=true: rows per chunk; 0 not chunked */
    bool pretty;                /* pretty=true: indented JSON */
};

/* Runs the statements and appends the reply to out: one document
 * {"results":[...]} and a newline, or with chunk_size one document per chunk
 * (each a line, "partial":true on all but a statement's last). A failed
 * statement gives {"statement_id":N,"error":"..."}, and, as in InfluxDB, the
 * statements after it do not run: each gives "error":"not executed". */
struct store;
void iql_exec(struct store *s, const struct iql_script *sc, const struct iql_opts *o,
              struct buf *out);

/* ns per unit of an epoch= value (ns, n, u, µs, ms, s, m, h); 0 and ERR_INVAL
 * for another. */
int iql_epoch_unit(const char *v, int64_t *out);

#endif
