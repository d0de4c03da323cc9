/* Private interfaces of query/: the row executor that query.c drives. Not for use outside query/
 * (and its tests). */
#ifndef LB_QUERY_INT_H
#define LB_QUERY_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "model/key.h"
#include "query/plan.h"
#include "query/sql.h"
#include "store/iter.h"
#include "store/store.h"

struct exec;

/* Streams the rows of a plan from a snapshot, in output order, with every
 * filter applied (ts bounds and points, host/event sets, field and tag
 * predicates); every row is read whole, also for INDEX (an index entry may
 * stand for several rows, or none). snap, p and where must
 * outlive the exec. Errors: ERR_TOOBIG when a host has too many events
 * to merge, or a store error. */
int query_exec_open(struct store_snap *snap, const struct plan *p, struct exec **out,
                    struct buf *err);
/* query_exec_open over a share of an unordered SCAN or FULL plan's ranges
 * (part, part + nparts, ...), so that nparts execs, each in a thread of
 * its own, read the plan's rows between them; ERR_INVAL for another plan.
 * The condition is read by every part: it must hold no regular
 * expression (cond_thread_safe). */
int query_exec_open_part(struct store_snap *snap, const struct plan *p, size_t part, size_t nparts,
                         struct exec **out, struct buf *err);
/* 1: a row is available through query_exec_row until the next call;
 * 0: the end; negative ERR_*: a store or decoding error. */
int query_exec_next(struct exec *e);
/* Gives fn the rows of the host sections (plan.series) still to read,
 * a run of one host and event a call (store_series_each's), when the plan's keys decide which rows
 * match (no condition left to check on them): a caller that needs of a row only its ts, host, event
 * and numeric fields (no order, no id: store_series_open) spares each row the way through
 * query_exec_next. Before any query_exec_next; the rows it does not give (the condition's to check,
 * or read through the host index) are query_exec_next's. ERR_OK, or the
 * first error of the store or of fn (nonzero stops). */
typedef int (*query_section_fn)(void *arg, const struct store_series_rows *rows);
int query_exec_each_section(struct exec *e, query_section_fn fn, void *arg);
/* query_exec_each_section for threads that read one exec's sections
 * together: each call takes the next cursor no call has taken (*next,
 * from 0, shared, changed atomically) until none is left, its rows given
 * to its own fn; the threads call nothing else of the exec until every
 * call has returned. */
int query_exec_each_section_shared(struct exec *e, size_t *next, query_section_fn fn, void *arg);
/* Cursors of host sections left to read (query_exec_each_section). */
size_t query_exec_sections_left(const struct exec *e);
/* Whether the first section cursor left finds its first run kept
 * (store_series_kept): its reads are then lookups, not seeks. */
bool query_exec_sections_kept(const struct exec *e);
/* The caller only counts the rows (COUNT(*)): when the plan's ranges alone
 * decide which rows match, query_exec_next no longer decodes them, and
 * query_exec_row is not set. */
void query_exec_count_only(struct exec *e);
struct exec_row {
    int64_t ts;
    struct slice host, event;
    struct slice id;    /* the row's id record (store/key.h), empty if none */
    struct slice value; /* the row's value record */
};
const struct exec_row *query_exec_row(const struct exec *e);
uint64_t query_exec_scanned(const struct exec *e); /* entries read so far */
/* SSTable data blocks read and skipped (word filters) so far, and rows
 * passed over without being decoded (their bytes lack a searched word). */
struct exec_stats {
    uint64_t blocks_read, blocks_skipped, rows_skipped;
    uint64_t section_rows; /* rows read from host sections (plan.series) */
};
struct exec_stats query_exec_stats(const struct exec *e);
void query_exec_free(struct exec *e);

/* Test hook: the byte cap of one buffered ts group (0 restores 4 MiB). */
void query_test_set_group_cap(size_t bytes);

/* The current row as the condition saw it (tags and fields decoded at
 * most once): aggregation reads its columns from it. */
struct cond_row;
struct cond_row *query_exec_cond_row(struct exec *e);

/* GROUP BY and aggregates (group.c) over the rows of a plan, for a SELECT
 * with sel->agg. Rows are added in the plan's output order; output rows
 * are JSON objects of the select list's items (hidden ones left out).
 * Errors carry their message in err: ERR_TOOBIG for more groups than
 * max_groups (<= 0: 100,000), ERR_INVAL for a FILL without a bounded ts
 * range. sel and p must outlive the grouper. */
struct grouper;
int group_new(const struct sql_select *sel, const struct plan *p, int64_t max_groups, bool stream,
              struct grouper **out, struct buf *err);
void group_free(struct grouper *g); /* NULL ok */
/* Whether output rows come while rows are added (stream asked and
 * group_streams): a bucket's groups are written once a row of the next
 * bucket arrives. Otherwise every group is held until the end. */
bool group_streaming(const struct grouper *g);
/* group_streaming of a grouper of sel over a database stored in that
 * order, before one exists: a time bucket, no FILL, and no ORDER BY but
 * the bucket's in the stored direction. */
bool group_streams(const struct sql_select *sel, bool db_desc);
int group_add(struct grouper *g, struct cond_row *row, struct buf *err);
/* Adds n rows of event at ts that were counted, not read (store's counts by
 * event and minute), to a grouper that is not streaming and whose keys are
 * the event and time buckets only and whose aggregates are COUNT(*):
 * ERR_INVAL otherwise. ERR_TOOBIG past max_groups, as group_add. */
int group_add_counted(struct grouper *g, struct slice event, int64_t ts, uint64_t n,
                      struct buf *err);
/* Whether two groupers of this kind may each take part of the rows, from
 * threads of their own, and be merged (group_merge): not streaming, and
 * only counts among the aggregates. */
bool group_mergeable(const struct grouper *g);
/* Adds the groups of from to into (group_mergeable, the same SELECT);
 * ERR_TOOBIG past max_groups, with its message in err. */
int group_merge(struct grouper *into, const struct grouper *from, struct buf *err);
/* No more rows: the groups left become output (fill, HAVING, ORDER BY). */
int group_finish(struct grouper *g, struct buf *err);
/* Appends the next output row to out: 1, or 0 if none is ready now. */
int group_next(struct grouper *g, struct buf *out);
uint64_t group_count(const struct grouper *g); /* groups made so far */
/* True if every aggregate of the group of the last row added has a value
 * (the latest-per-host reader stops there). */
bool group_last_full(struct grouper *g);

/* Metrics (metrics.c). plan: 0..3 = enum plan_kind, 4 admin, 5 none (the
 * statement failed before planning). outcome: 0 ok, 1 error, 2 refused,
 * 3 invalid. */
enum { QM_ADMIN = 4, QM_NONE = 5 };
enum { QM_OK, QM_ERROR, QM_REFUSED, QM_INVALID };
void query_metrics_record(int plan, int outcome, uint64_t rows_scanned, uint64_t rows_returned,
                          int64_t ns);
void query_metrics_blocks(uint64_t read, uint64_t skipped, uint64_t rows_skipped);
/* Rows an aggregate query took from the store's counts (not read). */
void query_metrics_counted(uint64_t rows);
/* Their total since the start (tests). */
uint64_t query_metrics_rows_counted(void);
/* Rows aggregates read from host sections (store/series.h). */
void query_metrics_sections(uint64_t rows);
uint64_t query_metrics_rows_from_sections(void);

/* The SELECT of the parameter form (query_params_open's parameters but
 * db and full_scan) into st->sel: ERR_INVAL with err set for a bad one.
 * The live tail builds its filter with it. */
int query_params_select(const char *(*get)(void *, const char *), void *arg, int64_t now,
                        struct sql_stmt *st, struct buf *err);

#endif
