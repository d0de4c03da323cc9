/* The live tail: rows streamed to clients as they are committed.
 *
 * The hub subscribes to the store's committed batches (store_set_commit_hook).
 * A writer's cost is one copy of its batch into the hub's queue (bounded:
 * past queue_bytes the batch is not queued and its rows count as dropped
 * for the clients of its database); no writer ever waits for a client. One
 * dispatcher thread decodes the queued batches, checks each row against
 * each client of its database (the query's condition, cond.c, and the TTL
 * rules of reads), encodes it once (encode.c, the shape of /api/v1/query)
 * and appends it to each matching client's buffer. A client's buffer is
 * bounded (client_buffer_bytes): what does not fit is counted, and the
 * client reads a {"dropped":N} marker where the rows are missing.
 *
 * A client may start with the newest `limit` matching rows (since: their
 * oldest ts), read through the query engine and sent oldest first. The
 * client is registered before that read's snapshot is taken, and live rows
 * of sequence <= the snapshot's are skipped: no row is missed or sent twice
 * between the two.
 *
 * Output, per format:
 *   NDJSON: a row per line; {"dropped":N}; {"heartbeat":NS} after
 *           keepalive_ns without output (NS: the wall clock, ns).
 *   SSE:    "data: <row>\n\n"; "event: dropped\ndata: {"dropped":N}\n\n";
 *           ": keep-alive\n\n".
 *
 * Threading: tail_open, tail_read and tail_close of one client come from one
 * thread at a time (its connection's); clients and the dispatcher run in
 * parallel. tail_hub_shutdown may be called from any thread. */
#ifndef LB_TAIL_H
#define LB_TAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/buf.h"
#include "query/query.h"
#include "store/store.h"

enum tail_format { TAIL_NDJSON, TAIL_SSE };

struct tail_hub_opts {
    size_t max_clients;         /* clients at once; more get ERR_BUSY */
    size_t client_buffer_bytes; /* output pending per client */
    size_t queue_bytes;         /* committed batches awaiting the dispatcher */
    int64_t keepalive_ns;       /* a heartbeat after this long without output */
    size_t initial_max_rows;    /* cap of limit (and the default with since alone) */
};

struct tail_hub;
struct tail_client;

/* Starts the dispatcher and subscribes to s (which must outlive the hub).
 * The store's single commit subscription is the hub's until freed. */
int tail_hub_new(struct store *s, const struct tail_hub_opts *o, struct tail_hub **out);
/* Ends every client's stream (their reads return 0 at once) and refuses new
 * clients (ERR_BUSY). Any thread; idempotent. */
void tail_hub_shutdown(struct tail_hub *h);
/* Unsubscribes, stops the dispatcher, frees. REQUIRES: no writer is in
 * store_write and every client was closed. NULL ok. */
void tail_hub_free(struct tail_hub *h);
/* Appends Prometheus text: logbucket_tail_clients, logbucket_tail_rows_sent_total,
 * logbucket_tail_rows_dropped_total, logbucket_tail_batches_lost_total. */
void tail_hub_metrics(struct tail_hub *h, struct buf *out);

/* Opens a client: get(arg, name) gives the parameters db (required), host,
 * event, where, search (query_params_open's filters), since (a time:
 * initial rows from there), limit (initial rows: the newest N), full_scan.
 * o: the query options (rights filter, limits). On failure err says why:
 * ERR_INVAL bad parameter, ERR_NOTFOUND no such database, ERR_BUSY
 * max_clients reached or shutting down, or what the initial read's open
 * returned (query_params_open's errors). */
int tail_open(struct tail_hub *h, const char *(*get)(void *arg, const char *name), void *arg,
              enum tail_format fmt, const struct query_opts *o, struct tail_client **out,
              struct buf *err);
/* Copies up to max (>= 64) bytes of output to buf, waiting up to wait_ns
 * for some (a heartbeat when keepalive_ns passed without output). Returns
 * the byte count; 0 when nothing came within wait_ns; -1 once the stream
 * has ended (shutdown). A row longer than max is handed over in pieces. */
ssize_t tail_read(struct tail_client *c, char *buf, size_t max, int64_t wait_ns);
/* For a reader that cannot block (a thread serving many connections):
 * tail_read with wait_ns 0, and when it gives 0, tail_park. tail_park
 * calls suspend(arg) and returns true if there is still nothing to read
 * (the stream has not ended), else returns false (read again). Once
 * parked, the hub calls the wake function (set once with tail_set_wake,
 * before the first read) from its thread when there is output, when the
 * keep-alive is due or at shutdown. suspend and wake are called with the
 * client's lock held: they must not call back into the hub. */
void tail_set_wake(struct tail_client *c, void (*wake)(void *arg), void *arg);
bool tail_park(struct tail_client *c, void (*suspend)(void *arg), void *arg);
/* Unregisters and frees the client. NULL ok. */
void tail_close(struct tail_client *c);

#endif
