/* Test helper for the ingest unit tests: renders parser results as one text
 * line each, so tables can state expected events and errors compactly:
 *   "L<n> <event>|<host>|<k>=<v>;...|<k>:<T><v>;...|<ts or ->"
 *   "L<n> BAD <reason>"
 * T is F (float, %.17g), I, U, B (t/f) or S (raw bytes in quotes). */
#ifndef LB_TEST_RENDER_H
#define LB_TEST_RENDER_H

#include <inttypes.h>

#include "base/buf.h"
#include "ingest/event.h"

static void render_slice(struct buf *b, struct slice s)
{
    buf_append(b, s.ptr, s.len);
}

static void render_event(struct buf *b, const struct event *ev)
{
    render_slice(b, ev->name);
    buf_putc(b, '|');
    render_slice(b, ev->host);
    buf_putc(b, '|');
    for (size_t i = 0; i < ev->ntags; i++) {
        if (i)
            buf_putc(b, ';');
        render_slice(b, ev->tags[i].key);
        buf_putc(b, '=');
        render_slice(b, ev->tags[i].value);
    }
    buf_putc(b, '|');
    for (size_t i = 0; i < ev->nfields; i++) {
        const struct rec_field *f = &ev->fields[i];
        if (i)
            buf_putc(b, ';');
        render_slice(b, f->key);
        buf_putc(b, ':');
        switch (f->type) {
        case REC_FLOAT: buf_printf(b, "F%.17g", f->v.f); break;
        case REC_INT: buf_printf(b, "I%" PRId64, f->v.i); break;
        case REC_UINT: buf_printf(b, "U%" PRIu64, f->v.u); break;
        case REC_BOOL: buf_printf(b, "B%c", f->v.b ? 't' : 'f'); break;
        case REC_STRING:
            buf_putc(b, 'S');
            buf_putc(b, '"');
            render_slice(b, f->v.s);
            buf_putc(b, '"');
            break;
        }
    }
    buf_putc(b, '|');
    if (ev->has_ts)
        buf_printf(b, "%" PRId64, ev->ts);
    else
        buf_putc(b, '-');
}

/* Appends one rendered line (with '\n') for r; nothing for EVENT_NONE. */
static void render_result(struct buf *b, const struct event_result *r)
{
    if (r->kind == EVENT_NONE)
        return;
    buf_printf(b, "L%" PRIu64 " ", r->line_no);
    if (r->kind == EVENT_BAD)
        buf_printf(b, "BAD %s", r->reason);
    else
        render_event(b, &r->ev);
    buf_putc(b, '\n');
}

#endif
