/* JSON lines to events with jansson. The parsed document of the current line
 * is kept until the next line so that string fields can borrow jansson's
 * strings; flattened keys and array texts are built in reusable buffers and
 * turned into slices once the line is complete (the buffers may move while
 * they grow). */
#include "ingest/jsonl.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "model/key.h"
#include "model/time.h"

#define NO_OFS ((size_t)-1)

struct jsonl_parser {
    struct event_limits lim;
    struct event_stamp *stamp; /* borrowed */
    char *host;                /* host of lines without one (request's, else lim's) */
    char *event;               /* default event (NULL: "event" required) */
    struct event_feed feed;
    json_t *root; /* document of the current line */

    struct rec_field *fields;
    size_t *kofs; /* key offset in keys */
    size_t *sofs; /* string offset in strs, or NO_OFS */
    size_t nfields, cap;
    struct buf path; /* the key being built */
    struct buf keys;
    struct buf strs;
    struct buf dupbuf;
    char reason[200];
};

static enum event_kind jsonl_line(void *p, const char *line, size_t len, struct event *ev,
                                  const char **reason)
{
    return jsonl_parse_line(p, line, len, ev, reason);
}

struct jsonl_parser *jsonl_new(const struct event_limits *lim, struct event_stamp *stamp,
                               const char *host, const char *event)
{
    struct jsonl_parser *p = xcalloc(1, sizeof *p);
    p->lim = *lim;
    p->stamp = stamp;
    p->host = xstrdup(host ? host : lim->default_host ? lim->default_host : "");
    p->event = event ? xstrdup(event) : NULL;
    event_feed_init(&p->feed, lim->max_line_bytes, jsonl_line, p);
    buf_init(&p->path);
    buf_init(&p->keys);
    buf_init(&p->strs);
    buf_init(&p->dupbuf);
    return p;
}

void jsonl_free(struct jsonl_parser *p)
{
    if (!p)
        return;
    json_decref(p->root);
    free(p->host);
    free(p->event);
    event_feed_destroy(&p->feed);
    free(p->fields);
    free(p->kofs);
    free(p->sofs);
    buf_destroy(&p->path);
    buf_destroy(&p->keys);
    buf_destroy(&p->strs);
    buf_destroy(&p->dupbuf);
    free(p);
}

/* --- fields ------------------------------------------------------------- */

static const char *why(struct jsonl_parser *p, const char *what, const char *detail, size_t dlen)
{
    char d[80];
    size_t n = dlen < 64 ? dlen : 64;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)detail[i];
        d[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (dlen > 64) {
        memcpy(d + n, "...", 3);
        n += 3;
    }
    d[n] = '\0';
    snprintf(p->reason, sizeof p->reason, "%s%s", what, d);
    return p->reason;
}

static struct rec_field *new_field(struct jsonl_parser *p)
{
    if (p->nfields == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 16;
        p->fields = xrealloc(p->fields, p->cap * sizeof *p->fields);
        p->kofs = xrealloc(p->kofs, p->cap * sizeof *p->kofs);
        p->sofs = xrealloc(p->sofs, p->cap * sizeof *p->sofs);
    }
    struct rec_field *f = &p->fields[p->nfields];
    p->kofs[p->nfields] = p->keys.len;
    p->sofs[p->nfields] = NO_OFS;
    buf_append(&p->keys, p->path.data, p->path.len);
    p->nfields++;
    return f;
}

/* Adds v under the key in p->path (flattening objects). */
static const char *flatten(struct jsonl_parser *p, json_t *v)
{
    if (p->path.len > p->lim.max_key_bytes) {
        snprintf(p->reason, sizeof p->reason, "field key too long (max %zu)", p->lim.max_key_bytes);
        return p->reason;
    }
    if (json_is_null(v))
        return NULL;
    if (json_is_object(v)) {
        size_t plen = p->path.len;
        const char *k;
        json_t *child;
        json_object_foreach(v, k, child)
        {
            p->path.len = plen;
            buf_putc(&p->path, '.');
            buf_puts(&p->path, k);
            const char *w = flatten(p, child);
            if (w)
                return w;
        }
        p->path.len = plen;
        return NULL;
    }
    if (p->path.len == 0)
        return "empty field key";
    if (p->nfields >= p->lim.max_fields_per_line) {
        snprintf(p->reason, sizeof p->reason, "too many fields (max %zu)",
                 p->lim.max_fields_per_line);
        return p->reason;
    }
    struct rec_field *f = new_field(p);
    switch (json_typeof(v)) {
    case JSON_INTEGER:
        f->type = REC_INT;
        f->v.i = (int64_t)json_integer_value(v);
        break;
    case JSON_REAL:
        f->type = REC_FLOAT;
        f->v.f = json_real_value(v);
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        f->type = REC_BOOL;
        f->v.b = json_is_true(v);
        break;
    case JSON_STRING:
        f->type = REC_STRING;
        f->v.s = slice_make(json_string_value(v), json_string_length(v));
        break;
    case JSON_ARRAY: {
        f->type = REC_STRING;
        size_t n = json_dumpb(v, NULL, 0, JSON_COMPACT);
        buf_reserve(&p->strs, n);
        p->sofs[p->nfields - 1] = p->strs.len;
        p->strs.len += json_dumpb(v, p->strs.data + p->strs.len, n, JSON_COMPACT);
        f->v.s.len = n;
        break;
    }
    default: return "unsupported JSON value";
    }
    return NULL;
}

static const char *header_keys(struct jsonl_parser *p, json_t *root, struct event *ev)
{
    json_t *ts = json_object_get(root, "ts");
    json_t *host = json_object_get(root, "host");
    json_t *name = json_object_get(root, "event");
    ev->has_ts = false;
    ev->ts = 0;
    if (json_is_integer(ts)) {
        ev->ts = (int64_t)json_integer_value(ts);
        ev->has_ts = true;
    } else if (json_is_string(ts)) {
        if (time_parse_rfc3339(json_string_value(ts), json_string_length(ts), &ev->ts))
            return why(p, "bad \"ts\" (want RFC 3339, e.g. 2024-05-01T10:00:00Z): ",
                       json_string_value(ts), json_string_length(ts));
        ev->has_ts = true;
    } else if (ts && !json_is_null(ts)) {
        return "\"ts\" must be an integer (ns) or an RFC 3339 string";
    }
    if (json_is_string(host))
        ev->host = slice_make(json_string_value(host), json_string_length(host));
    else if (!host || json_is_null(host))
        ev->host = slice_cstr(p->host);
    else
        return "\"host\" must be a string";
    if (json_is_string(name))
        ev->name = slice_make(json_string_value(name), json_string_length(name));
    else if ((!name || json_is_null(name)) && p->event)
        ev->name = slice_cstr(p->event);
    else if (!name || json_is_null(name))
        return "missing \"event\" (the event name is required, or event= in the URL)";
    else
        return "\"event\" must be a string";
    return event_check_names(&p->lim, ev->host, ev->name);
}

static const char *parse_doc(struct jsonl_parser *p, const char *line, size_t len, struct event *ev)
{
    json_error_t jerr;
    json_decref(p->root);
    p->root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!p->root)
        return why(p, "invalid JSON: ", jerr.text, strlen(jerr.text));
    if (!json_is_object(p->root))
        return "line is not a JSON object";
    const char *w = header_keys(p, p->root, ev);
    if (w)
        return w;
    p->nfields = 0;
    buf_reset(&p->keys);
    buf_reset(&p->strs);
    const char *k;
    json_t *v;
    json_object_foreach(p->root, k, v)
    {
        if (!strcmp(k, "ts") || !strcmp(k, "host") || !strcmp(k, "event"))
            continue;
        buf_reset(&p->path);
        buf_puts(&p->path, k);
        if ((w = flatten(p, v)))
            return w;
    }
    if (p->nfields == 0)
        return "no fields (a row needs at least one besides ts, host and event)";
    for (size_t i = 0; i < p->nfields; i++) {
        size_t end = i + 1 < p->nfields ? p->kofs[i + 1] : p->keys.len;
        p->fields[i].key = slice_make(p->keys.data + p->kofs[i], end - p->kofs[i]);
        if (p->sofs[i] != NO_OFS)
            p->fields[i].v.s.ptr = p->strs.data + p->sofs[i];
    }
    long d = event_dup_field(p->fields, p->nfields, &p->dupbuf);
    if (d >= 0)
        return why(p, "duplicate field key after flattening: ", p->fields[d].key.ptr,
                   p->fields[d].key.len);
    if (!ev->has_ts && p->stamp) {
        /* only good lines take a stamp */
        ev->ts = event_stamp_next(p->stamp);
        ev->has_ts = true;
    }
    ev->tags = NULL;
    ev->ntags = 0;
    ev->fields = p->fields;
    ev->nfields = p->nfields;
    return NULL;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

enum event_kind jsonl_parse_line(struct jsonl_parser *p, const char *line, size_t len,
                                 struct event *ev, const char **reason)
{
    if (blank(line, len))
        return EVENT_NONE;
    const char *w = parse_doc(p, line, len, ev);
    if (w) {
        *reason = w;
        return EVENT_BAD;
    }
    return EVENT_OK;
}

size_t jsonl_feed(struct jsonl_parser *p, const char *data, size_t len, struct event_result *out)
{
    return event_feed_next(&p->feed, data, len, out);
}

bool jsonl_finish(struct jsonl_parser *p, struct event_result *out)
{
    return event_feed_finish(&p->feed, out);
}

struct event_feed *jsonl_event_feed(struct jsonl_parser *p)
{
    return &p->feed;
}
