/* The SQL subset of logbucket: a hand-written tokenizer and recursive-descent
 * parser that turn statement text into a struct sql_script. No planning here:
 * the WHERE clause is normalised (ts bounds and point sets, host/event sets,
 * field/tag predicates) and plan.c decides how to read it.
 *
 * Column rule: `ts`, `host`, `event` are the key; `tags.k` is a tag; `fields.x`
 * or any other bare name (`value`) is a field. Double quotes quote a name. */
#ifndef LB_SQL_H
#define LB_SQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

enum sql_kind {
    SQL_SELECT,
    SQL_DELETE,
    SQL_CREATE_DB,
    SQL_ALTER_DB,
    SQL_DROP_DB,
    SQL_SHOW_DBS,
};

enum sql_vtype { SQL_V_INT, SQL_V_FLOAT, SQL_V_STRING, SQL_V_BOOL };

struct sql_value {
    enum sql_vtype type;
    int64_t i;
    double f;
    bool b;
    char *s; /* owned, NUL-terminated; slen bytes */
    size_t slen;
};

enum sql_op { SQL_EQ, SQL_NE, SQL_LT, SQL_LE, SQL_GT, SQL_GE };

/* A filter on one field (is_tag false) or tag (is_tag true). A row without
 * the field or tag, or with a value of another kind (string vs number), does
 * not match. Numbers of any type compare by value. */
struct sql_pred {
    bool is_tag;
    char *name; /* owned */
    enum sql_op op;
    struct sql_value v;
};

/* A set of host or event names; is_set false = unconstrained. Sorted,
 * duplicates removed. n == 0 with is_set means "matches nothing". */
struct sql_strset {
    bool is_set;
    char **v;    /* owned strings */
    size_t *len; /* lengths */
    size_t n;
};

struct sql_where {
    bool has_lo, has_hi;
    int64_t ts_lo, ts_hi; /* inclusive bounds, when has_lo / has_hi */
    bool has_ts_set;      /* ts = / IN: the points below (sorted, unique) */
    int64_t *ts;
    size_t nts;
    struct sql_strset host, event;
    struct sql_pred *preds;
    size_t npreds;
};

enum sql_col_kind { SQL_COL_TS, SQL_COL_HOST, SQL_COL_EVENT, SQL_COL_FIELD, SQL_COL_TAG };

struct sql_col {
    enum sql_col_kind kind;
    char *name; /* owned, for SQL_COL_FIELD / SQL_COL_TAG */
};

struct sql_select {
    bool star, count, explain, full_scan_hint;
    struct sql_col *cols; /* owned, when !star && !count */
    size_t ncols;
    struct sql_where where;
    int order; /* 0 = stored order, 1 = ASC, -1 = DESC */
    bool has_limit;
    int64_t limit;
};

struct sql_stmt {
    enum sql_kind kind;
    size_t pos;            /* 1-based position of the statement in the text */
    char *db;              /* owned; NULL for SHOW DATABASES */
    struct sql_select sel; /* SELECT, and the WHERE of DELETE */
    /* CREATE DATABASE ... WITH (...) and ALTER DATABASE ... SET ttl=... */
    bool has_buckets, has_ts_order, has_ttl, if_not_exists, if_exists;
    int64_t buckets;
    bool ts_desc;
    int64_t ttl_ns;
    bool has_max_disk; /* max_disk_bytes='10GiB' (CREATE and ALTER) */
    uint64_t max_disk_bytes;
    /* ALTER DATABASE ... SET ttl=... FOR EVENT 'e': the override's event */
    char *event; /* owned; NULL without FOR EVENT */
    size_t event_len;
};

struct sql_script {
    struct sql_stmt *stmts; /* owned */
    size_t n;
};

/* Parses one or more statements separated by ';'. now_ns is the value of
 * now(). On error returns ERR_INVAL and appends to err a message of the form
 * "syntax error at position N: expected X, found 'Y'" (positions are 1-based
 * byte offsets). *out is written only on success; free it with
 * sql_script_destroy. */
int sql_parse(const char *sql, size_t len, int64_t now_ns, struct sql_script *out, struct buf *err);
void sql_script_destroy(struct sql_script *s);

/* Parses a bare condition list ("ts > 5 AND host = 'a'"), as in where=. */
int sql_parse_where(const char *s, size_t len, int64_t now_ns, struct sql_where *out,
                    struct buf *err);
void sql_where_init(struct sql_where *w);
void sql_where_destroy(struct sql_where *w);

/* ts constraint helpers used by the parser and query_params_open. */
void sql_where_ts_lo(struct sql_where *w, int64_t lo); /* ts >= lo */
void sql_where_ts_hi(struct sql_where *w, int64_t hi); /* ts <= hi */
/* host = name / event = name, intersected with any earlier constraint. */
void sql_where_host_eq(struct sql_where *w, const char *s, size_t n);
void sql_where_event_eq(struct sql_where *w, const char *s, size_t n);

/* A time: integer ns, RFC 3339 ("2024-01-01T00:00:00Z", fraction and offset
 * allowed), "now", or a signed duration relative to now ("-1h", "+30m").
 * ERR_INVAL if none of these. */
int sql_parse_time(const char *s, size_t len, int64_t now_ns, int64_t *out);
/* A duration: "0", or digits with a unit, repeated ("1h30m"); units ns us ms
 * s m h d w. ERR_INVAL otherwise or on overflow. */
int sql_parse_duration(const char *s, size_t len, int64_t *out);
/* Appends the shortest exact form ("30d", "90m", "0"). */
void sql_format_duration(int64_t ns, struct buf *out);

const char *sql_op_name(enum sql_op op);

#endif
