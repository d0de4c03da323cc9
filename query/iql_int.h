/* Private parts of the InfluxQL engine (influxql.h): the statement tree the
 * parser (iql_parse.c) builds, the WHERE translation onto query/cond.h's
 * conditions (iql_where.c), the aggregate functions and transformations
 * (iql_func.c), SELECT (iql_select.c) and the meta statements (iql_meta.c).
 * Every tree is owned by its statement and freed with it. */
#ifndef LB_IQL_INT_H
#define LB_IQL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "query/influxql.h"
#include "query/sql.h"

/* --- expressions --- */

enum iql_ex_kind {
    IQL_X_NUM,   /* number (is_int: an integer literal) */
    IQL_X_STR,   /* 'string' */
    IQL_X_BOOL,  /* true / false */
    IQL_X_DUR,   /* 5m, 1700000000000ms: ns in i */
    IQL_X_REGEX, /* /re/ */
    IQL_X_VAR,   /* an identifier ("time", a tag or a field) */
    IQL_X_STAR,  /* * in a select list or a call */
    IQL_X_CALL,  /* name(args) */
    IQL_X_BIN,   /* l op r */
    IQL_X_NOW,   /* now() */
};

enum iql_op {
    IQL_O_ADD,
    IQL_O_SUB,
    IQL_O_MUL,
    IQL_O_DIV,
    IQL_O_EQ,
    IQL_O_NE,
    IQL_O_LT,
    IQL_O_LE,
    IQL_O_GT,
    IQL_O_GE,
    IQL_O_RE,  /* =~ */
    IQL_O_NRE, /* !~ */
    IQL_O_AND,
    IQL_O_OR,
};

/* What a VAR's ::cast names: a tag or a field where one name is both
 * (InfluxDB's `x::tag`, `x::field`; a type cast, ::float and the rest,
 * names a field). */
enum iql_cast {
    IQL_CAST_NONE,
    IQL_CAST_TAG,
    IQL_CAST_FIELD,
};

struct iql_ex {
    enum iql_ex_kind kind;
    enum iql_cast cast; /* VAR */
    enum iql_op op;
    bool is_int;
    double f;
    int64_t i;
    bool b;
    char *s; /* STR, REGEX, VAR, CALL name: owned */
    struct iql_ex *l, *r;
    struct iql_ex **args; /* CALL: owned */
    size_t nargs;
};

void iql_ex_free(struct iql_ex *e);

/* --- statements --- */

enum iql_kind {
    IQL_SELECT,
    IQL_SHOW_DBS,
    IQL_SHOW_MEASUREMENTS,
    IQL_SHOW_TAG_KEYS,
    IQL_SHOW_TAG_VALUES,
    IQL_SHOW_FIELD_KEYS,
    IQL_SHOW_SERIES,
    IQL_SHOW_RPS,
    IQL_SHOW_MEAS_CARD,
    IQL_CREATE_DB,
    IQL_DROP_DB,
    IQL_DROP_MEASUREMENT,
    IQL_DELETE,
};

/* A FROM source: a name (with its database when "db"."rp"."m" says one)
 * or a /regex/. */
struct iql_source {
    char *db; /* owned; NULL: the request's db */
    char *name;
    bool is_regex;
};

struct iql_field {
    struct iql_ex *ex;
    char *alias; /* owned; NULL: derived from the expression */
};

enum iql_fill { IQL_FILL_NULL, IQL_FILL_NONE, IQL_FILL_VALUE, IQL_FILL_PREVIOUS, IQL_FILL_LINEAR };

struct iql_stmt {
    enum iql_kind kind;
    char *db; /* owned: ON db, CREATE/DROP DATABASE's name */
    /* SELECT and the FROM of SHOW / DELETE / DROP MEASUREMENT */
    struct iql_field *fields;
    size_t nfields;
    struct iql_source *from;
    size_t nfrom;
    struct iql_ex *where;
    bool has_time_group;
    int64_t interval, offset;
    char **group_tags; /* owned */
    size_t ngroup_tags;
    bool group_all; /* GROUP BY * */
    enum iql_fill fill;
    double fill_value;
    bool desc;
    int64_t limit, offset_rows, slimit, soffset; /* 0: none */
    bool has_tz;
    char *tz;
    /* SHOW TAG VALUES WITH KEY = k | IN (...) | =~ /re/; SHOW MEASUREMENTS
     * WITH MEASUREMENT = m | =~ /re/ */
    char **keys; /* owned */
    size_t nkeys;
    char *key_re; /* owned */
    bool key_neg; /* != or !~ */
    bool exact;   /* SHOW MEASUREMENT EXACT CARDINALITY */
    /* CREATE DATABASE WITH DURATION */
    bool has_ttl;
    int64_t ttl_ns;
};

struct iql_script {
    struct iql_stmt *stmts; /* owned */
    size_t n;
};

/* --- the statement's run --- */

/* One output series: name, tags (a JSON object's text or empty), columns
 * (a JSON array's text), rows (JSON arrays' texts, each ending at ends[i]). */
struct iql_series {
    char *name;
    struct buf tags;
    struct buf cols;
    struct buf rows;
    size_t *ends;
    size_t nrows, cap;
};

/* The result of one statement. */
struct iql_result {
    struct iql_series *series;
    size_t n, cap;
    struct buf err; /* non-empty: the statement failed */
    size_t bytes;   /* output held, bounded by IQL_MAX_RESULT */
};

#define IQL_MAX_RESULT (64u << 20) /* bytes of rows one statement may hold */

struct iql_series *iql_series_add(struct iql_result *r, const char *name, size_t nlen);
void iql_series_row_end(struct iql_result *r, struct iql_series *s, size_t start);
void iql_result_destroy(struct iql_result *r);

/* The run's context. */
struct iql_tz;
struct iql_ctx {
    struct store *s;
    const struct iql_opts *o;
    int64_t now;
    const struct iql_tz *tz; /* tz('...') of the statement; NULL: UTC */
};

/* Appends a time: epoch units or RFC 3339 (with c->tz's offset). */
void iql_put_time(const struct iql_ctx *c, struct buf *out, int64_t ns);

int iql_exec_select(const struct iql_ctx *c, const struct iql_stmt *st, struct iql_result *r);
/* [*lo, *hi] widened to the shard groups InfluxDB would keep it in (the
 * names SELECT * lists are those of the shards a statement meets). */
void iql_shard_range(struct store_db *db, int64_t *lo, int64_t *hi);
int iql_exec_meta(const struct iql_ctx *c, const struct iql_stmt *st, struct iql_result *r);

/* Opens the statement's database (st->db, else the request's), setting
 * r->err when it fails. */
struct store_db;
int iql_open_db(const struct iql_ctx *c, const char *db, struct store_db **out,
                struct iql_result *r);

/* --- WHERE --- */

/* The measurements of FROM that exist in the snapshot (regexes matched
 * against the events listed by the catalog), sorted, unique. */
struct store_snap;
int iql_measurements(struct store_snap *snap, const struct iql_stmt *st, char ***out, size_t *n,
                     struct buf *err);
void iql_names_free(char **v, size_t n);
/* Sorts v[0..*n) by strcmp and frees and removes the duplicates. */
void iql_names_unique(char **v, size_t *n);

/* Translates st's WHERE for measurement m into w (a condition of query/
 * cond.h plus its implied bounds): time against ts, the host tag against
 * host, tags (names listed in tagkeys, sorted) against tags, the rest
 * against fields. ERR_INVAL with err set for what cannot be translated.
 * need_time: SELECT's full-scan rule. */
int iql_where(const struct iql_ctx *c, const struct iql_ex *where, const char *m, char **tagkeys,
              size_t ntagkeys, struct sql_where *w, struct buf *err);

/* The time range that the top-level AND of a WHERE bounds, in [*lo, *hi]
 * (INT64_MIN and INT64_MAX where open): a superset of the rows' ts (time
 * conditions under an OR, or that cannot be read, leave it open). A
 * statement's tag and field keys are those of its time range: InfluxDB
 * maps a query to the shards of its range and takes them from those. */
void iql_where_time(const struct iql_ctx *c, const struct iql_ex *where, int64_t *lo, int64_t *hi);

/* The tag keys of measurement m (the host tag included) in rows of ts
 * [lo, hi], sorted. */
int iql_tag_keys(const struct iql_ctx *c, struct store_snap *snap, const char *m, int64_t lo,
                 int64_t hi, char ***out, size_t *n);

/* Evaluates a time expression (now() - 1h, '2024-01-01T00:00:00Z',
 * 1700000000000ms, an integer in ns). */
int iql_time_value(const struct iql_ctx *c, const struct iql_ex *e, int64_t *out);

bool iql_is_time(const struct iql_ex *e);
bool iql_str_in(char *const *v, size_t n, const char *s);

#endif
