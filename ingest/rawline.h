/* Raw text lines: each non-blank line of the body becomes one event with the
 * request's host and event and a single string field "msg" holding the line
 * (its trailing "\r" stripped). Timestamps come from the daemon-wide
 * strictly increasing stamp (DESIGN.md section 7), one per line.
 *
 * A line with a NUL byte or invalid UTF-8 is dropped with a reason (query
 * results are JSON, which cannot carry either). Blank lines are skipped.
 * Threading: one parser per request; the stamp is shared and thread-safe. */
#ifndef LB_RAWLINE_H
#define LB_RAWLINE_H

#include <stdbool.h>
#include <stddef.h>

#include "ingest/event.h"

struct raw_parser;

/* host may be NULL (the limits' default host); event is required. Both are
 * copied. stamp is borrowed and must outlive the parser; NULL leaves has_ts
 * false. ERR_OK, or ERR_INVAL with *why set to a static reason when host or
 * event cannot be a row key. */
int raw_new(const struct event_limits *lim, const char *host, const char *event,
            struct event_stamp *stamp, struct raw_parser **out, const char **why);
void raw_free(struct raw_parser *p); /* NULL ok */

/* Same contract as lp_feed / lp_finish (ingest/lineproto.h). */
size_t raw_feed(struct raw_parser *p, const char *data, size_t len, struct event_result *out);
bool raw_finish(struct raw_parser *p, struct event_result *out);
/* The feed raw_feed and raw_finish drive. */
struct event_feed *raw_event_feed(struct raw_parser *p);

#endif
