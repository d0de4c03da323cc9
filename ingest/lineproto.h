/* Incremental InfluxDB line-protocol parser.
 *
 *   measurement[,tag=value...] field=value[,field=value...] [timestamp]
 *
 * Escapes (InfluxDB reference): the measurement escapes comma and space; tag
 * keys, tag values and field keys escape comma, equals sign and space; string
 * field values escape '"'; everywhere "\\" is one backslash and a backslash
 * before any other byte is literal. A backslash that ends a line is a bad
 * escape. Field values: float (1, -1.5, 1e3, .5), integer 12i (int64),
 * unsigned 12u (uint64), boolean t/T/true/True/TRUE/f/F/false/False/FALSE,
 * string "...". The timestamp is an integer in the request's precision.
 *
 * Choices (documented in the README): a newline always ends a line, even
 * inside quotes (an open quote there is "unbalanced quotes"); duplicate tag
 * keys and duplicate field keys reject the line (as influxdata/line-protocol
 * does); keys, tag values and string values must be UTF-8; a NUL byte
 * anywhere rejects the line; blank lines and lines starting with '#' (after
 * spaces) are skipped; leading spaces and repeated separating spaces are
 * accepted. The tag named limits->host_tag becomes the event's host.
 *
 * Threading: one parser per request; no shared state. */
#ifndef LB_LINEPROTO_H
#define LB_LINEPROTO_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/event.h"

struct lp_parser;

/* Parses a precision name: "ns"/"n" (also NULL or ""), "us"/"u", "ms", "s",
 * "m", "h". *ns_per_unit is 1, 1000, ... ERR_OK or ERR_INVAL. */
int lp_precision_parse(const char *name, int64_t *ns_per_unit);
/* InfluxDB 3 also names "nanosecond", "microsecond", "millisecond",
 * "second" and "auto": LP_PRECISION_AUTO, the unit chosen per timestamp by
 * its magnitude (below 5e9 s, 5e12 ms, 5e15 us, else ns). */
#define LP_PRECISION_AUTO (-1)

/* A parser for one request body. lim is copied (its strings are borrowed and
 * must outlive the parser). ns_per_unit from lp_precision_parse. */
struct lp_parser *lp_new(const struct event_limits *lim, int64_t ns_per_unit);
void lp_free(struct lp_parser *p); /* NULL ok */

/* Parses one complete line (without its "\n"; a trailing "\r" is allowed).
 * Returns EVENT_OK with *ev set, EVENT_BAD with *reason set, or EVENT_NONE
 * for a blank or comment line. Results borrow line and the parser's scratch
 * until the next call. */
enum event_kind lp_parse_line(struct lp_parser *p, const char *line, size_t len, struct event *ev,
                              const char **reason);

/* Streaming: consumes bytes of data (returns how many; > 0 unless len is 0)
 * and fills *out with at most one line's result. Call again with the rest
 * until everything is consumed; a line cut at the end of data is kept
 * (bounded by max_line_bytes) and completed by the next call. */
size_t lp_feed(struct lp_parser *p, const char *data, size_t len, struct event_result *out);
/* At the end of the body: parses an unterminated last line. Returns true
 * when *out holds a result. */
bool lp_finish(struct lp_parser *p, struct event_result *out);
/* The feed lp_feed and lp_finish drive (to drive it directly). */
struct event_feed *lp_event_feed(struct lp_parser *p);

#endif
