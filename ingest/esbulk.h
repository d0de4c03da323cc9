/* The Elasticsearch bulk API body: NDJSON pairs of an action line and a
 * document line.
 *
 *   {"index":{"_index":"nginx","_id":"a1"}}
 *   {"@timestamp":"2024-05-01T10:00:00Z","host":{"name":"web-1"},"message":"GET /"}
 *
 * index and create take the next line as their document (jsonl_parse_es
 * maps it to an event); delete (no document) and update (its document is
 * skipped) are answered per item with an error, since events are never
 * replaced. A malformed or unknown action line fails the whole request
 * (as Elasticsearch does), and so do a body that ends after an action or
 * without its final newline: esbulk_fatal() says why.
 *
 * The driver (ingest.c) feeds the body through esbulk_event_feed(); after
 * every EVENT_OK or EVENT_BAD result it calls esbulk_item_done with the
 * item's fate, and at the end esbulk_end(); esbulk_reply() then writes
 * Elasticsearch's reply: {"took":..,"errors":..,"items":[..]}, one item
 * per action in order.
 *
 * Threading: one parser per request. */
#ifndef LB_ESBULK_H
#define LB_ESBULK_H

#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "ingest/event.h"
#include "ingest/jsonl.h"

struct esbulk_parser;

/* lim and map are copied (their strings borrowed: they must outlive the
 * parser); index is the URL's /{index}/_bulk (copied; NULL: none); stamp
 * as jsonl_new; arrival_ns seeds the generated _id values. */
struct esbulk_parser *esbulk_new(const struct event_limits *lim, const struct jsonl_es_map *map,
                                 const char *index, struct event_stamp *stamp, int64_t arrival_ns);
void esbulk_free(struct esbulk_parser *p); /* NULL ok */

struct event_feed *esbulk_event_feed(struct esbulk_parser *p);

/* The fate of the item whose result the feed returned last: reason NULL
 * for stored (201), else the reason of a 400. */
void esbulk_item_done(struct esbulk_parser *p, const char *reason);
/* At the end of the body; is_newline_end: the body's last byte was '\n'
 * (or the body was empty). */
void esbulk_end(struct esbulk_parser *p, bool is_newline_end);
/* The reason the whole request fails, or NULL. */
const char *esbulk_fatal(const struct esbulk_parser *p);
/* Appends the reply of a request that did not fail. */
void esbulk_reply(const struct esbulk_parser *p, int64_t took_ms, struct buf *out);
/* Every action of the body (the reply's items before any filter). */
uint64_t esbulk_items(const struct esbulk_parser *p);

/* The parts of the reply Elasticsearch's filter_path keeps. Shippers ask
 * for less than the whole reply (Filebeat and Logstash:
 * "errors,items.*.error,items.*.status"), which saves most of its bytes. */
enum {
    ESBULK_TOOK = 1,
    ESBULK_ERRORS = 2,
    ESBULK_ITEMS = 4, /* whole items */
    ESBULK_ITEM_STATUS = 8,
    ESBULK_ITEM_ERROR = 16,
    ESBULK_ITEM_ID = 32,
    ESBULK_ITEM_INDEX = 64,
    ESBULK_ALL = 127,
    ESBULK_FILTERED = 128, /* a filter was given (so never 0) */
};
/* The bits of a filter_path value (NULL or "": ESBULK_ALL). The paths
 * understood: took, errors, items, items.*, items.*.status,
 * items.*.error, items.*._id, items.*._index; others keep nothing. */
unsigned esbulk_filter_parse(const char *filter_path);
/* Before the first item. */
void esbulk_set_filter(struct esbulk_parser *p, unsigned bits);

#endif
