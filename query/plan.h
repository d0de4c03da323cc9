/* The planner (DESIGN.md section 5, as LindormTable chooses):
 *   GET   ts, host and event all fixed (IN lists multiply): point reads.
 *   INDEX host fixed: the host index [host][event][ts], event optional.
 *   SCAN  a ts condition, host free: every bucket over the range, merged.
 *   FULL  anything else; refused unless asked for (hint or flag).
 * The TTL cut-off (now - ttl) is folded into the ts lower bound here, so no
 * plan ever reads or returns an expired row. */
#ifndef LB_PLAN_H
#define LB_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "query/sql.h"
#include "store/store.h"

enum plan_kind { PLAN_GET, PLAN_SCAN, PLAN_INDEX, PLAN_FULL };

/* One ts range [lo, hi] (inclusive) of one bucket: SCAN and FULL. */
struct plan_range {
    uint32_t bucket;
    int64_t lo, hi;
};

/* One point read: indexes into where->host / where->event. */
struct plan_key {
    int64_t ts;
    size_t host, event;
};

struct plan {
    enum plan_kind kind;
    bool is_empty;             /* the conditions contradict: no row can match */
    uint32_t buckets;          /* of the database */
    bool db_desc;              /* stored ts order of the database */
    bool out_desc;             /* requested (or stored) output ts order */
    bool reverse;              /* out_desc != db_desc: read against stored order */
    bool unordered;            /* the caller needs the rows in no order (a count, a grouping that
                                * sorts at the end): SCAN and FULL read bucket after bucket, each
                                * in stored order, instead of merging them (rows of one ts, all in
                                * one bucket, still come in key order) */
    int64_t lo, hi;            /* effective inclusive ts bounds (TTL folded in) */
    struct plan_range *ranges; /* SCAN/FULL, owned */
    size_t nranges;
    struct plan_key *keys; /* GET, owned, sorted in output order */
    size_t nkeys;
    int64_t max_rows; /* GET: rows a SELECT may return (max_get_rows); COUNT(*) and DELETE read them
                         all */
    const struct sql_where *where; /* borrowed from the statement */
    /* INDEX, unordered: the caller needs of each row only its ts, host,
     * event and these fields, numeric (set after plan_build): windows
     * whose host sections have them are read from there (store.h,
     * store_series_open). Borrowed. */
    bool series;
    const struct slice *series_fields;
    size_t nseries_fields;
};

struct plan_opts {
    int64_t max_get_rows; /* GET key limit; <= 0 means 2000 */
    bool allow_full_scan; /* config: FULL allowed without a hint */
    bool full_scan;       /* the request asked for a full scan */
    int64_t now_ns;       /* for the TTL cut-off */
};

/* Plans sel against a database with options dbo. Returns ERR_OK, ERR_INVAL
 * for a refused full scan, or ERR_TOOBIG for too many GET keys; err then
 * says how to narrow the query. *out written only on success; sel must
 * outlive it. */
int plan_build(const struct sql_select *sel, const struct db_opts *dbo, const struct plan_opts *o,
               struct plan *out, struct buf *err);
void plan_destroy(struct plan *p);

/* Host sections (plan.series): plan_series_begin, then every column the
 * query reads (a field by name, a column, a condition's leaves); series
 * stays set (for an INDEX plan) unless one cannot come from a section: a
 * tag, or the whole row's text. plan_series_select does it all for an
 * aggregate SELECT (a row query: never). */
void plan_series_begin(struct plan *p);
void plan_series_field(struct plan *p, const char *name, size_t len);
void plan_series_col(struct plan *p, const struct sql_col *c);
void plan_series_cond(struct plan *p, const struct sql_expr *e);
void plan_series_select(struct plan *p, const struct sql_select *sel);

const char *plan_kind_name(enum plan_kind k);
/* Appends the EXPLAIN object: {"plan":..,"buckets":[..],"ranges":[..],...}. */
void plan_explain(const struct plan *p, const struct sql_select *sel, struct buf *out);

#endif
