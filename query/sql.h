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
    SQL_SHOW_HOSTS,
    SQL_SHOW_EVENTS,
    SQL_SHOW_TAG_KEYS,
    SQL_SHOW_TAG_VALUES,
    SQL_SHOW_FIELDS,
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

/* A set of host or event names; is_set false = unconstrained. Sorted,
 * duplicates removed. n == 0 with is_set means "matches nothing". */
struct sql_strset {
    bool is_set;
    char **v;    /* owned strings */
    size_t *len; /* lengths */
    size_t n;
};

/* SQL_COL_ANY: every string of a row (host, event, tag values, string
 * fields), for MATCH('...') without a column. */
enum sql_col_kind {
    SQL_COL_TS,
    SQL_COL_HOST,
    SQL_COL_EVENT,
    SQL_COL_FIELD,
    SQL_COL_TAG,
    SQL_COL_ANY
};

struct sql_col {
    enum sql_col_kind kind;
    char *name; /* owned, for SQL_COL_FIELD / SQL_COL_TAG */
};

/* A condition (query/cond.h evaluates it). AND and OR have n >= 2
 * children; NOT one; a leaf tests one column:
 *   CMP    col op v                 (ts: v is an integer time in ns)
 *   IN     col IN (list)            (strings, or numbers; ts: times)
 *   LIKE   col LIKE 'pattern'       (% any run, _ one byte, \ escapes; icase: ILIKE)
 *   REGEX  col ~ 're'               (PCRE2, unanchored; icase: ~*)
 *   MATCH  col MATCH 'words "a phrase"'   (every term, whole words, any case)
 *   NULL   col IS NULL              (the row has no such tag or field)
 * Negated forms (NOT LIKE, !~, NOT IN, IS NOT NULL) are a NOT above the leaf.
 * Logic is SQL's three-valued one: a leaf on a column the row lacks, or
 * whose value has another kind (a string against a number), is unknown;
 * NOT unknown is unknown; a row is kept only when the whole is true. */
enum sql_expr_kind { SQL_E_AND, SQL_E_OR, SQL_E_NOT, SQL_E_LEAF };
enum sql_leaf_kind { SQL_L_CMP, SQL_L_IN, SQL_L_LIKE, SQL_L_REGEX, SQL_L_MATCH, SQL_L_NULL };

struct sql_expr {
    enum sql_expr_kind kind;
    size_t pos;             /* 1-based offset in the text (0: built by code) */
    struct sql_expr **kids; /* AND, OR, NOT; owned */
    size_t nkids;
    /* leaf */
    enum sql_leaf_kind leaf;
    struct sql_col col;
    enum sql_op op;     /* CMP */
    struct sql_value v; /* CMP value; LIKE, REGEX, MATCH: the pattern string */
    bool icase;         /* ILIKE, ~* */
    /* IN: sorted, unique */
    char **strs;
    size_t *slens, nstrs;
    int64_t *ints;
    size_t nints;
    double *flts;
    size_t nflts;
    /* MATCH: its terms (a word or a phrase each), all required */
    char **terms;
    size_t *tlens, nterms;
    /* REGEX: compiled (pcre2_code *, pcre2_match_data *), owned */
    void *re, *md;
};

struct sql_where {
    struct sql_expr *cond; /* the whole condition; NULL = every row */
    /* What cond implies, for the planner (sql_where_derive): every row
     * that satisfies cond lies in these bounds, points and sets. */
    bool has_lo, has_hi;
    int64_t ts_lo, ts_hi; /* inclusive bounds, when has_lo / has_hi */
    bool has_ts_set;      /* ts = / IN: the points below (sorted, unique) */
    int64_t *ts;
    size_t nts;
    struct sql_strset host, event;
};

/* SELECT items. */
enum sql_agg {
    SQL_A_NONE,
    SQL_A_COUNT_STAR,
    SQL_A_COUNT,
    SQL_A_SUM,
    SQL_A_AVG,
    SQL_A_MIN,
    SQL_A_MAX,
    SQL_A_FIRST,
    SQL_A_LAST,
    SQL_A_PERCENTILE,
};

enum sql_item_kind { SQL_I_COL, SQL_I_AGG, SQL_I_BUCKET };

struct sql_item {
    enum sql_item_kind kind;
    struct sql_col col;    /* SQL_I_COL; the argument of SQL_I_AGG */
    enum sql_agg agg;      /* SQL_I_AGG */
    double p;              /* SQL_A_PERCENTILE: 0..100 */
    int64_t width, offset; /* SQL_I_BUCKET: time_bucket('5m'[, 'offset']) in ns */
    char *name;            /* owned: the output name (AS alias, or the canonical text) */
    bool hidden;           /* added for HAVING or ORDER BY, not output */
    size_t pos;
};

#define SQL_MAX_GROUP_KEYS 16 /* GROUP BY keys of one query */

/* A GROUP BY key: a column (host, event, tags.k, a field) or a time bucket. */
struct sql_group {
    enum sql_item_kind kind; /* SQL_I_COL or SQL_I_BUCKET */
    struct sql_col col;
    int64_t width, offset;
};

enum sql_fill { SQL_FILL_NONE, SQL_FILL_NULL, SQL_FILL_ZERO, SQL_FILL_PREVIOUS };

struct sql_order {
    size_t item; /* index into items (aggregate queries) */
    bool desc;
};

/* HAVING leaves name item i as the field SQL_HAVING_NAME "i". */
#define SQL_HAVING_NAME "#"

/* HAVING is a struct sql_expr over the output: its leaves are of kind
 * SQL_COL_FIELD and name an item by its output name (sql.c resolves them,
 * adding a hidden item for an aggregate not selected). */

struct sql_select {
    bool star, count, explain, analyze, full_scan_hint;
    struct sql_col *cols; /* owned, when a plain row query names columns */
    size_t ncols;
    struct sql_where where;
    int order; /* rows: 0 = stored order, 1 = ASC, -1 = DESC */
    bool has_limit;
    int64_t limit;
    /* aggregate queries (agg true): items, GROUP BY, HAVING, ORDER BY */
    bool agg;
    struct sql_item *items; /* owned */
    size_t nitems;
    struct sql_group *groups; /* owned */
    size_t ngroups;
    enum sql_fill fill;
    struct sql_expr *having;  /* owned; NULL = none */
    struct sql_order *orders; /* owned */
    size_t norders;
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
    /* SHOW TAG VALUES ... WITH KEY = 'k' */
    char *tag_key; /* owned */
    size_t tag_key_len;
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
/* AND MATCH('q') (words and "phrases" in any string of a row): ERR_INVAL
 * with err set ("error at position N: ...") for a query without words or
 * with an unclosed quote. */
int sql_where_match(struct sql_where *w, const char *q, size_t n, struct buf *err);

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
