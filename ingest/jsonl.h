/* JSON lines: one JSON object per line, parsed with jansson.
 *
 *   {"ts": 1700000000000000000, "host": "web-1", "event": "nginx.access",
 *    "status": 200, "took": 0.25, "ok": true, "req": {"path": "/", "m": "GET"}}
 *
 * "ts" is an integer in ns or an RFC 3339 string ("2024-05-01T10:00:00.5Z",
 * "...+02:00"); without it the line takes the daemon-wide strictly increasing
 * stamp (so lines of one request never overwrite each other). "host" is a
 * string (absent or null: the request's host=, else the default host);
 * "event" is a non-empty string, required unless the request gave event=
 * (log shippers that cannot add the key). Every other key is a field: a JSON integer is INT, any
 * other number FLOAT, true/false BOOL, a string STRING; null is skipped; an object is flattened
 * with dots ({"a":{"b":1}} gives field "a.b"); an array is stored as a STRING holding its compact
 * JSON text. Duplicate keys (also after flattening) and a line without fields are errors. Blank
 * lines are skipped.
 *
 * Threading: one parser per request. */
#ifndef LB_JSONL_H
#define LB_JSONL_H

#include <stdbool.h>
#include <stddef.h>

#include "ingest/event.h"

struct jsonl_parser;

/* lim is copied (its strings are borrowed); stamp is borrowed (NULL: lines
 * without "ts" keep has_ts false). host and event (copied; NULL: none) are
 * the defaults of lines without those keys. */
struct jsonl_parser *jsonl_new(const struct event_limits *lim, struct event_stamp *stamp,
                               const char *host, const char *event);
void jsonl_free(struct jsonl_parser *p); /* NULL ok */

/* One complete line, as lp_parse_line. */
enum event_kind jsonl_parse_line(struct jsonl_parser *p, const char *line, size_t len,
                                 struct event *ev, const char **reason);
/* How an Elasticsearch document becomes an event (ingest/README.md). The
 * document is flattened first, so keys name flattened fields ("host.name"
 * for {"host":{"name":..}}); lists are comma-separated; strings borrowed. */
struct jsonl_es_map {
    const char *ts_key;     /* "@timestamp": RFC 3339 or epoch millis; removed */
    const char *host_keys;  /* "host.name,host,hostname,HOST": the first string; removed */
    const char *event_keys; /* "event.dataset,service.name": the event without an index */
    bool prefer_keys;       /* event_keys win over the index when present */
    const char *msg_key;    /* "message,MESSAGE": the first string renamed to the field "msg" */
};

/* The map of the Elasticsearch documents p reads (its strings borrowed
 * for p's life; its lists split here, once). Set before jsonl_parse_es. */
void jsonl_set_es_map(struct jsonl_parser *p, const struct jsonl_es_map *m);

/* One Elasticsearch document (a whole line) of the given index (NULL:
 * none), as jsonl_parse_line, mapped by p's map (jsonl_set_es_map);
 * without its ts_key the event takes the stamp. */
enum event_kind jsonl_parse_es(struct jsonl_parser *p, const char *line, size_t len,
                               const char *index, struct event *ev, const char **reason);

/* Same contract as lp_feed / lp_finish (ingest/lineproto.h). */
size_t jsonl_feed(struct jsonl_parser *p, const char *data, size_t len, struct event_result *out);
bool jsonl_finish(struct jsonl_parser *p, struct event_result *out);
/* The feed jsonl_feed and jsonl_finish drive. */
struct event_feed *jsonl_event_feed(struct jsonl_parser *p);

#endif
