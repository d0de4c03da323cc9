/* Per-request ingest state used by the HTTP write handlers: body bytes in
 * (optionally gzip), events parsed as they arrive, rows written to the store
 * in bounded batches, per-line errors collected for the reply.
 *
 * How the HTTP layer drives it (http/h_write.c):
 *   1. ingest_params_check() -> 400 with its reason if not NULL;
 *      ingest_new(params, limits, db, &in).
 *   2. for every body chunk: rc = ingest_feed(in, chunk, n); on rc != ERR_OK
 *      stop feeding (drain the rest) and reply from rc: ERR_TOOBIG 413 (body
 *      or inflated body over max_body_bytes, or its rows too large: the
 *      text is ingest_error_text()), ERR_INVAL 400 (bad gzip: the
 *      text is ingest_error_text()), ERR_BUSY 503 + Retry-After, ERR_NOSPC
 *      507, other 500.
 *   3. at the end of the body: rc = ingest_finish(in); same mapping. With
 *      ERR_OK: ingest_dropped() == 0 -> 204; else 400 "partial write" with
 *      ingest_error_text() ("line N: reason", first 100 bad lines, one per
 *      line) and the counts ingest_written() / ingest_dropped().
 *   4. ingest_free(in) in the request-completed callback.
 *
 * A request is stored whole or not at all (whole_request, the default): its
 * rows are collected as the body is parsed and written in one batch (one
 * WAL record) by ingest_finish, after the body has ended well. A body cut
 * off by its client, a truncated or damaged gzip body, a body over
 * max_body_bytes or a store error stores nothing, so the client's retry
 * stores each row once, even rows whose identity is their arrival stamp
 * (raw lines). Memory is bounded by the body size limit: rows over
 * INGEST_WHOLE_FACTOR x max_body_bytes (at least INGEST_WHOLE_MAX_BYTES)
 * fail the request with ERR_TOOBIG.
 * Without whole_request (tests, loaders), rows are flushed whenever a
 * batch reaches batch_rows rows or batch_bytes bytes. Either way a line is
 * one row, stored whole or not at all.
 *
 * Lines without a timestamp: line protocol takes params.arrival_ns (one
 * value for the whole request); raw and JSON lines take the shared strictly
 * increasing stamp (params.stamp). The optional reject window drops lines
 * whose ts is older than arrival - reject_older_than_ns or newer than
 * arrival + reject_newer_than_ns, with a reason.
 *
 * Threading: one ingest per request, used by one thread at a time. */
#ifndef LB_INGEST_H
#define LB_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"
#include "ingest/event.h"
#include "ingest/jsonl.h"

struct store_db;
struct ingest;
struct logs_map;

enum ingest_format {
    INGEST_LINEPROTO, /* /write, /api/v2/write */
    INGEST_RAW,       /* /api/v1/ingest?host=H&event=E */
    INGEST_JSONL,     /* /api/v1/ingest?format=jsonl */
    INGEST_ESBULK,    /* /_bulk, /{index}/_bulk (ingest/esbulk.h) */
    /* whole-body formats (ingest/logs.h): the body is gathered (capped by
     * max_body_bytes), checked whole, then decoded; a malformed body stores
     * nothing (ERR_INVAL, the reason in ingest_error_text) */
    INGEST_LOKI_JSON,  /* /loki/api/v1/push, JSON */
    INGEST_LOKI_PROTO, /* /loki/api/v1/push, snappy-compressed protobuf */
    INGEST_OTLP_JSON,  /* /v1/logs, OTLP/JSON */
    INGEST_OTLP_PROTO, /* /v1/logs, protobuf */
};

#define INGEST_MAX_ERRORS 100
#define INGEST_BATCH_ROWS 5000
#define INGEST_BATCH_BYTES (4u << 20)
/* A whole request's rows may take this many times max_body_bytes of
 * memory (rows cost more than their lines: keys, lengths, a sequence). */
#define INGEST_WHOLE_FACTOR 4
/* ... and at least this much (also without max_body_bytes). */
#define INGEST_WHOLE_MAX_BYTES (256u << 20)

struct ingest_params {
    enum ingest_format format;
    int64_t ns_per_unit;               /* LINEPROTO: lp_precision_parse(); 0 = ns */
    const char *host;                  /* RAW: host of every line; NULL = default host.
                                        * JSONL: of lines without "host" */
    const char *event;                 /* RAW: event of every line; required.
                                        * JSONL: of lines without "event"; NULL = none */
    bool is_gzip;                      /* Content-Encoding: gzip */
    size_t body_hint;                  /* the body's size if known (Content-Length), else 0 */
    size_t max_body_bytes;             /* cap on the body and on the inflated body; 0 = none */
    int64_t arrival_ns;                /* request arrival time; 0 = now */
    int64_t reject_older_than_ns;      /* 0 = off */
    int64_t reject_newer_than_ns;      /* 0 = off */
    bool whole_request;                /* true (the default): every row goes to the store
                                        * in one batch at ingest_finish, so a request is
                                        * stored whole or not at all; batch_rows and
                                        * batch_bytes do not apply, and rows over
                                        * INGEST_WHOLE_FACTOR x max_body_bytes (at least
                                        * INGEST_WHOLE_MAX_BYTES) of memory fail with
                                        * ERR_TOOBIG */
    size_t batch_rows;                 /* without whole_request; 0 = INGEST_BATCH_ROWS */
    size_t batch_bytes;                /* without whole_request; 0 = INGEST_BATCH_BYTES */
    struct event_stamp *stamp;         /* shared stamp for RAW/JSONL; NULL = arrival_ns */
    bool is_atomic;                    /* one batch, written only if no line is bad
                                        * (InfluxDB 3's accept_partial=false) */
    bool is_no_sync;                   /* reply before the fsync (store_write_nosync) */
    const char *es_index;              /* ESBULK: the URL's index (copied); NULL = none */
    const struct jsonl_es_map *es_map; /* ESBULK: the document mapping (copied) */
    unsigned es_filter;                /* ESBULK: esbulk_filter_parse(); 0 = all */
    const struct logs_map *map;        /* LOKI/OTLP: the host and event keys; borrowed */
};

/* Zeroes p (LINEPROTO, ns, no gzip, no limits, defaults) and sets
 * whole_request. */
void ingest_params_default(struct ingest_params *p);
/* NULL if params and limits can start a request, else a static reason
 * ("raw ingest needs event=NAME", "host too long", ...). */
const char *ingest_params_check(const struct ingest_params *p, const struct event_limits *lim);

/* Where rows go. put adds a row to the pending batch (slices are borrowed
 * for the call only); write applies the pending rows atomically, clears
 * them and returns ERR_OK or ERR_*. ingest_new (ingest_store.c) builds one
 * over a store_db; tests use their own. */
/* One row as the store keeps it (store/FORMAT.md, "Row identity"). A
 * line-protocol point is identified by its series, so id holds its tags
 * sorted by key (empty without tags), value its fields, and merge is set:
 * a point written again with the same series and ts merges its fields into
 * the stored one. A log entry (raw lines, JSON lines) is identified by its
 * whole content: id holds its tags and fields, value is empty, merge is
 * false, and an exact duplicate is the same row. */
struct ingest_row {
    int64_t ts;
    struct slice host, event;
    struct slice id;    /* a record (store/record.h), or empty */
    struct slice value; /* a record, or empty */
    bool merge;
};

struct ingest_sink {
    void (*put)(void *arg, const struct ingest_row *row);
    int (*write)(void *arg);
    void (*destroy)(void *arg); /* may be NULL; called by ingest_free */
    void *arg;
};

/* Starts a request writing to db (borrowed: must outlive the ingest).
 * params and lim are copied; their strings are copied or must outlive the
 * ingest (lim's host_tag and default_host are borrowed). ERR_INVAL if
 * ingest_params_check fails. Defined in ingest_store.c. */
int ingest_new(const struct ingest_params *params, const struct event_limits *lim,
               struct store_db *db, struct ingest **out);
/* The same over any sink (copied; ingest_free calls sink->destroy; on
 * failure the sink is left to the caller). */
int ingest_new_sink(const struct ingest_params *params, const struct event_limits *lim,
                    const struct ingest_sink *sink, struct ingest **out);
void ingest_free(struct ingest *in); /* NULL ok */

/* Consumes a body chunk. ERR_OK, or a sticky error (every later call
 * returns it): ERR_TOOBIG, ERR_INVAL (bad gzip), ERR_NOMEM, or the store's
 * error from a batch written meanwhile. Bad lines are not errors here. */
int ingest_feed(struct ingest *in, const void *data, size_t len);
/* Ends the body: parses the last line, writes the last batch. ERR_OK or
 * the sticky error (ERR_INVAL for a truncated gzip body). */
int ingest_finish(struct ingest *in);

uint64_t ingest_written(const struct ingest *in); /* rows acknowledged by the store */
uint64_t ingest_dropped(const struct ingest *in); /* bad lines */
/* "line N: reason" for the first INGEST_MAX_ERRORS bad lines (Loki:
 * "entry N", OTLP: "log record N"), joined by "\n"; or the message of a gzip error. "" if none.
 * Valid until ingest_free. */
const char *ingest_error_text(struct ingest *in);
/* ESBULK: the bulk parser (for esbulk_reply), else NULL. The whole body
 * of a bulk request is one batch, written at ingest_finish, so a request
 * that fails (esbulk_fatal: ERR_INVAL from ingest_finish) stores nothing. */
struct esbulk_parser *ingest_esbulk(struct ingest *in);
/* The first INGEST_MAX_ERRORS bad lines as JSON objects joined by commas:
 * {"original_line":"..","line_number":N,"error_message":".."} (InfluxDB
 * 3's shape; original_line cut to INGEST_ORIGINAL_MAX bytes). "" if none. */
const char *ingest_error_json(struct ingest *in);
#define INGEST_ORIGINAL_MAX 256
/* The sticky error (ERR_OK if none). */
int ingest_status(const struct ingest *in);

#endif
