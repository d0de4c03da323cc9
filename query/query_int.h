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
/* 1: a row is available through query_exec_row until the next call;
 * 0: the end; negative ERR_*: a store or decoding error. */
int query_exec_next(struct exec *e);
struct exec_row {
    int64_t ts;
    struct slice host, event;
    struct slice id;    /* the row's id record (store/key.h), empty if none */
    struct slice value; /* the row's value record */
};
const struct exec_row *query_exec_row(const struct exec *e);
uint64_t query_exec_scanned(const struct exec *e); /* entries read so far */
void query_exec_free(struct exec *e);

/* Test hook: the byte cap of one buffered ts group (0 restores 4 MiB). */
void query_test_set_group_cap(size_t bytes);

/* True if the row of records id and value (rec_row_init) satisfies every
 * predicate of w. A malformed record sets *rc to ERR_CORRUPT and returns
 * false. */
bool query_preds_match(const struct sql_where *w, struct slice id, struct slice value, int *rc);

/* Metrics (metrics.c). plan: 0..3 = enum plan_kind, 4 admin, 5 none (the
 * statement failed before planning). outcome: 0 ok, 1 error, 2 refused,
 * 3 invalid. */
enum { QM_ADMIN = 4, QM_NONE = 5 };
enum { QM_OK, QM_ERROR, QM_REFUSED, QM_INVALID };
void query_metrics_record(int plan, int outcome, uint64_t rows_scanned, uint64_t rows_returned,
                          int64_t ns);

#endif
