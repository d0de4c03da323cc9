/* Raw text lines to events: the splitter hands over each line in place, the
 * event borrows it as the "msg" field; nothing is copied or allocated per
 * line, except a line with invalid UTF-8, which is repaired into a buffer. */
#include "ingest/rawline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/utf8.h"

struct raw_parser {
    struct event_feed feed;
    struct event_stamp *stamp; /* borrowed */
    char *host;
    char *event;
    struct rec_field msg;
    struct buf repaired; /* the current line, if it needed repair */
};

static enum event_kind raw_line(void *arg, const char *text, size_t len, struct event *ev,
                                const char **reason);

int raw_new(const struct event_limits *lim, const char *host, const char *event,
            struct event_stamp *stamp, struct raw_parser **out, const char **why)
{
    if (!host)
        host = lim->default_host ? lim->default_host : "";
    if (!event)
        event = "";
    const char *bad = event_check_names(lim, slice_cstr(host), slice_cstr(event));
    if (bad) {
        *why = bad;
        return ERR_INVAL;
    }
    struct raw_parser *p = xcalloc(1, sizeof *p);
    event_feed_init(&p->feed, lim->max_line_bytes, raw_line, p);
    p->stamp = stamp;
    p->host = xstrdup(host);
    p->event = xstrdup(event);
    p->msg.key = slice_cstr("msg");
    p->msg.type = REC_STRING;
    buf_init(&p->repaired);
    *out = p;
    return ERR_OK;
}

void raw_free(struct raw_parser *p)
{
    if (!p)
        return;
    event_feed_destroy(&p->feed);
    free(p->host);
    free(p->event);
    buf_destroy(&p->repaired);
    free(p);
}

static enum event_kind raw_line(void *arg, const char *text, size_t len, struct event *ev,
                                const char **reason)
{
    struct raw_parser *p = arg;
    struct slice line = slice_make(text, len);
    if (line.len == 0)
        return EVENT_NONE;
    if (memchr(line.ptr, 0, line.len)) {
        *reason = "NUL byte in line";
        return EVENT_BAD;
    }
    if (!utf8_valid(line.ptr, line.len)) {
        /* a log file in another encoding, or a stray byte: keep the line,
         * each bad byte shown as U+FFFD (query results are JSON) */
        buf_reset(&p->repaired);
        utf8_repair(line.ptr, line.len, &p->repaired);
        line = slice_make(p->repaired.data, p->repaired.len);
    }
    ev->has_ts = p->stamp != NULL;
    ev->ts = p->stamp ? event_stamp_next(p->stamp) : 0;
    ev->host = slice_cstr(p->host);
    ev->name = slice_cstr(p->event);
    ev->tags = NULL;
    ev->ntags = 0;
    p->msg.v.s = line;
    ev->fields = &p->msg;
    ev->nfields = 1;
    return EVENT_OK;
}

size_t raw_feed(struct raw_parser *p, const char *data, size_t len, struct event_result *out)
{
    return event_feed_next(&p->feed, data, len, out);
}

bool raw_finish(struct raw_parser *p, struct event_result *out)
{
    return event_feed_finish(&p->feed, out);
}

struct event_feed *raw_event_feed(struct raw_parser *p)
{
    return &p->feed;
}
