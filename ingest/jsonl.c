/* JSON lines and Elasticsearch documents to events, read with jscan in one
 * pass that flattens nested objects as it goes. String fields borrow the
 * line or jscan's scratch (unescaped strings) until the next line;
 * flattened keys and array texts are built in reusable buffers and turned
 * into slices once the line is complete (the buffers may move while they
 * grow). */
#include "ingest/jsonl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "ingest/jscan.h"
#include "ingest/logrow.h"
#include "model/key.h"
#include "model/time.h"

#define NO_OFS ((size_t)-1)

struct jsonl_parser {
    struct event_limits lim;
    struct event_stamp *stamp; /* borrowed */
    char *host;                /* host of lines without one (request's, else lim's) */
    char *event;               /* default event (NULL: "event" required) */
    struct event_feed feed;
    const char *bad_header; /* "ts", "host" or "event" at the top held an object or array */

    struct rec_field *fields;
    size_t *kofs; /* key offset in keys, or NO_OFS: the key is a slice of the line (key) */
    size_t *sofs; /* string offset in strs, or NO_OFS */
    size_t nfields, cap;
    struct buf path; /* the key being built */
    /* a top-level member whose value is no object: its key as read (a
     * slice of the line or of scan), used in place of path */
    bool key_direct;
    struct slice key;
    struct buf keys;
    struct buf strs;
    struct buf dupbuf;
    struct buf scan;             /* jscan's scratch: unescaped strings of the line */
    struct time_memo stamp_memo; /* the last RFC 3339 stamp's date and time of day */
    /* the Elasticsearch map (jsonl_set_es_map) and its lists, split */
    struct jsonl_es_map es_map;
    struct logs_names host_names, event_names, msg_names;
    size_t ts_key_len;
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
    buf_init(&p->scan);
    return p;
}

void jsonl_free(struct jsonl_parser *p)
{
    if (!p)
        return;
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
    buf_destroy(&p->scan);
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
    p->sofs[p->nfields] = NO_OFS;
    if (p->key_direct) {
        p->kofs[p->nfields] = NO_OFS;
        f->key = p->key;
    } else { /* pointed into keys by fields_done, once keys no longer moves */
        p->kofs[p->nfields] = p->keys.len;
        f->key.len = p->path.len;
        buf_append(&p->keys, p->path.data, p->path.len);
    }
    p->nfields++;
    return f;
}

/* Points the fields at the keys and strings gathered while flattening;
 * a reason when two fields ended with one key. */
static const char *fields_done(struct jsonl_parser *p)
{
    for (size_t i = 0; i < p->nfields; i++) {
        if (p->kofs[i] != NO_OFS)
            p->fields[i].key.ptr = p->keys.data + p->kofs[i];
        if (p->sofs[i] != NO_OFS)
            p->fields[i].v.s.ptr = p->strs.data + p->sofs[i];
    }
    long d = event_dup_field(p->fields, p->nfields, &p->dupbuf);
    if (d >= 0)
        return why(p, "duplicate field key after flattening: ", p->fields[d].key.ptr,
                   p->fields[d].key.len);
    return NULL;
}

/* The event of a good line: p's fields, no tags, and a stamp if the line
 * had no ts (only good lines take one). */
static const char *event_done(struct jsonl_parser *p, struct event *ev)
{
    if (!ev->has_ts && p->stamp) {
        ev->ts = event_stamp_next(p->stamp);
        ev->has_ts = true;
    }
    ev->tags = NULL;
    ev->ntags = 0;
    ev->fields = p->fields;
    ev->nfields = p->nfields;
    return NULL;
}

/* --- Elasticsearch documents ------------------------------------------- */

/* Index of the field named key[0..n), or -1. */
static long field_index(const struct jsonl_parser *p, const char *key, size_t n)
{
    for (size_t i = 0; i < p->nfields; i++)
        if (p->fields[i].key.len == n && memcmp(p->fields[i].key.ptr, key, n) == 0)
            return (long)i;
    return -1;
}

static void remove_field(struct jsonl_parser *p, long i)
{
    memmove(&p->fields[i], &p->fields[i + 1], (p->nfields - (size_t)i - 1) * sizeof *p->fields);
    p->nfields--;
}

/* Index of the string field named key[0..n), or -1. */
static long string_index(const struct jsonl_parser *p, const char *key, size_t n)
{
    long i = n ? field_index(p, key, n) : -1;
    return i >= 0 && p->fields[i].type == REC_STRING ? i : -1;
}

/* Index of the first string field among names (in their order), or -1. */
static long first_string(const struct jsonl_parser *p, const struct logs_names *names)
{
    long i;
    for (int k = 0; k < names->n; k++)
        if ((i = string_index(p, names->name[k].ptr, names->name[k].len)) >= 0)
            return i;
    /* over LOGS_NAMES_MAX names: the whole list, read as it goes */
    for (const char *k = names->long_list; k && *k;) {
        const char *comma = strchr(k, ',');
        if ((i = string_index(p, k, comma ? (size_t)(comma - k) : strlen(k))) >= 0)
            return i;
        k = comma ? comma + 1 : NULL;
    }
    return -1;
}

/* The first string field among names, removed from the fields; false if
 * none. */
static bool take_string(struct jsonl_parser *p, const struct logs_names *names, struct slice *out)
{
    long i = first_string(p, names);
    if (i < 0)
        return false;
    *out = p->fields[i].v.s;
    remove_field(p, i);
    return true;
}

/* Whole milliseconds and the fraction apart: ms * 1e6 in one double would
 * lose the nanoseconds (1714557600000.5 ms is ...000499968 ns). */
static bool millis_to_ns(double ms, int64_t *out)
{
    if (!(ms >= -9.2e12 && ms <= 9.2e12))
        return false;
    double whole = floor(ms);
    *out = (int64_t)whole * 1000000 + (int64_t)llround((ms - whole) * 1e6);
    return true;
}

static bool all_digits(struct slice s)
{
    size_t i = s.len && s.ptr[0] == '-' ? 1 : 0;
    if (i == s.len || s.len - i > 18)
        return false;
    for (; i < s.len; i++)
        if (s.ptr[i] < '0' || s.ptr[i] > '9')
            return false;
    return true;
}

/* The timestamp field (RFC 3339 or epoch milliseconds, as a number or a
 * string of digits), removed from the fields. */
static const char *take_ts(struct jsonl_parser *p, struct event *ev)
{
    const char *key = p->es_map.ts_key;
    ev->has_ts = false;
    long i = p->ts_key_len ? field_index(p, key, p->ts_key_len) : -1;
    if (i < 0)
        return NULL;
    const struct rec_field *f = &p->fields[i];
    bool ok = false;
    if (f->type == REC_INT && f->v.i > -9200000000000LL && f->v.i < 9200000000000LL) {
        ev->ts = f->v.i * 1000000;
        ok = true;
    } else if (f->type == REC_FLOAT) {
        ok = millis_to_ns(f->v.f, &ev->ts);
    } else if (f->type == REC_STRING && all_digits(f->v.s)) {
        ok = millis_to_ns((double)strtoll(f->v.s.ptr, NULL, 10), &ev->ts);
    } else if (f->type == REC_STRING) {
        ok = time_parse_rfc3339_memo(&p->stamp_memo, f->v.s.ptr, f->v.s.len, &ev->ts) == ERR_OK;
    }
    if (!ok)
        return why(p, "bad timestamp (want RFC 3339 or epoch milliseconds) in ", key,
                   p->ts_key_len);
    ev->has_ts = true;
    remove_field(p, i);
    return NULL;
}

/* The event: the index, unless the map prefers the document's keys and
 * one is there; without an index, the document's keys. */
static const char *es_event(struct jsonl_parser *p, const struct jsonl_es_map *m, const char *index,
                            struct event *ev)
{
    bool has_index = index && *index;
    if ((m->prefer_keys || !has_index) && take_string(p, &p->event_names, &ev->name))
        return NULL;
    if (!has_index)
        return "index is missing: name it in the URL (/{index}/_bulk), in the action's _index, "
               "or in one of the document's event keys";
    ev->name = slice_cstr(index);
    return NULL;
}

/* The first string among the map's msg keys (a comma list:
 * "message,MESSAGE") becomes the field "msg"; the others stay as they are. */
static void rename_msg(struct jsonl_parser *p)
{
    if (p->msg_names.n == 0 || field_index(p, "msg", 3) >= 0)
        return;
    long i = first_string(p, &p->msg_names);
    if (i >= 0)
        p->fields[i].key = slice_make("msg", 3);
}

/* --- the fast path: documents read with jscan, flattened as they go ----- */

static const char *scan_members(struct jsonl_parser *p, struct jscan *s, int depth);

/* The compact text of the array at s (whitespace outside strings dropped)
 * as a STRING field. */
static const char *scan_array(struct jsonl_parser *p, struct jscan *s, int depth)
{
    const char *start = s->p;
    if (!jscan_skip(s, depth))
        return NULL;
    struct rec_field *f = new_field(p);
    f->type = REC_STRING;
    p->sofs[p->nfields - 1] = p->strs.len;
    bool in_str = false;
    for (const char *q = start; q < s->p; q++) {
        if (in_str) {
            if (*q == '\\') {
                buf_putc(&p->strs, *q++);
            } else if (*q == '"') {
                in_str = false;
            }
        } else if (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n') {
            continue;
        } else if (*q == '"') {
            in_str = true;
        }
        buf_putc(&p->strs, *q);
    }
    f->v.s.len = p->strs.len - p->sofs[p->nfields - 1];
    return NULL;
}

/* A field for the value at s under the key in p->path; the limits first. */
static const char *field_limits(struct jsonl_parser *p)
{
    size_t klen = p->key_direct ? p->key.len : p->path.len;
    if (klen > p->lim.max_key_bytes) {
        snprintf(p->reason, sizeof p->reason, "field key too long (max %zu)", p->lim.max_key_bytes);
        return p->reason;
    }
    if (klen == 0)
        return "empty field key";
    if (p->nfields >= p->lim.max_fields_per_line) {
        snprintf(p->reason, sizeof p->reason, "too many fields (max %zu)",
                 p->lim.max_fields_per_line);
        return p->reason;
    }
    return NULL;
}

static void scan_scalar(struct jsonl_parser *p, struct jscan *s, enum jscan_type t)
{
    struct rec_field *f = new_field(p);
    if (t == JS_STRING) {
        f->type = REC_STRING;
        jscan_string(s, &f->v.s);
    } else if (t == JS_TRUE || t == JS_FALSE) {
        f->type = REC_BOOL;
        f->v.b = t == JS_TRUE;
        jscan_literal(s, t == JS_TRUE ? "true" : "false");
    } else {
        enum jscan_type nt = JS_INT;
        double d = 0;
        int64_t i = 0;
        jscan_number(s, &nt, &i, &d);
        f->type = nt == JS_INT ? REC_INT : REC_FLOAT;
        if (nt == JS_INT)
            f->v.i = i;
        else
            f->v.f = d;
    }
}

/* The value at s under the key in p->path. */
static const char *scan_value(struct jsonl_parser *p, struct jscan *s, int depth)
{
    enum jscan_type t;
    if (!jscan_type(s, &t))
        return NULL;
    if (t == JS_OBJECT)
        return scan_members(p, s, depth + 1);
    if (t == JS_NULL) {
        jscan_literal(s, "null");
        return NULL;
    }
    const char *w = field_limits(p);
    if (w)
        return w;
    if (t == JS_ARRAY)
        return scan_array(p, s, depth + 1);
    scan_scalar(p, s, t);
    return NULL;
}

/* A JSON line's header keys (ts, host, event) take scalars only: notes
 * the key whose value at s is an object or an array. Returns the value's
 * first byte. */
static char note_header_shape(struct jsonl_parser *p, struct jscan *s, struct slice k)
{
    static const char *const names[] = {"ts", "host", "event"};
    char c = jscan_peek(s);
    if (c != '{' && c != '[')
        return c;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (slice_eq(k, slice_cstr(names[i])) && !p->bad_header)
            p->bad_header = names[i];
    return c;
}

/* The members of the object at s, flattened under p->path. */
static const char *scan_members(struct jsonl_parser *p, struct jscan *s, int depth)
{
    if (depth > JSCAN_MAX_DEPTH) {
        jscan_fail(s, "nested too deep");
        return NULL;
    }
    if (!jscan_expect(s, '{'))
        return NULL;
    if (jscan_peek(s) == '}') {
        s->p++;
        return NULL;
    }
    size_t plen = p->path.len;
    for (;;) {
        struct slice k;
        if (!jscan_string(s, &k) || !jscan_expect(s, ':'))
            return NULL;
        p->path.len = plen;
        p->key_direct = false;
        if (plen) {
            buf_putc(&p->path, '.');
            buf_append(&p->path, k.ptr, k.len);
        } else if (note_header_shape(p, s, k) == '{') { /* its members are flattened under k */
            buf_append(&p->path, k.ptr, k.len);
        } else {
            p->key_direct = true;
            p->key = k;
        }
        const char *w = scan_value(p, s, depth);
        if (w || s->err)
            return w;
        char c = jscan_peek(s);
        if (c == '}') {
            s->p++;
            break;
        }
        if (c != ',' || s->p == s->end) {
            jscan_fail(s, "',' or '}' expected");
            return NULL;
        }
        s->p++;
    }
    p->path.len = plen;
    return NULL;
}

/* Reads the document into p->fields as flatten_root does. */
static const char *scan_doc(struct jsonl_parser *p, const char *line, size_t len)
{
    struct jscan s;
    jscan_init(&s, line, len, &p->scan);
    p->nfields = 0;
    p->bad_header = NULL;
    buf_reset(&p->keys);
    buf_reset(&p->strs);
    buf_reset(&p->path);
    char c = jscan_peek(&s);
    if (c != '{') {
        if (s.p == s.end)
            return "empty document";
        return c && strchr("[\"-0123456789", c) ? "line is not a JSON object"
                                                : "invalid JSON: '{' expected at the start";
    }
    const char *w = scan_members(p, &s, 1);
    if (w)
        return w;
    if (!s.err && !jscan_at_end(&s))
        jscan_fail(&s, "text after the document");
    if (s.err)
        return why(p, "invalid JSON: ", s.err, strlen(s.err));
    return fields_done(p);
}

void jsonl_set_es_map(struct jsonl_parser *p, const struct jsonl_es_map *m)
{
    p->es_map = *m;
    p->ts_key_len = m->ts_key ? strlen(m->ts_key) : 0;
    logs_names_init(&p->host_names, m->host_keys);
    logs_names_init(&p->event_names, m->event_keys);
    logs_names_init(&p->msg_names, m->msg_key);
}

static const char *parse_es(struct jsonl_parser *p, const char *line, size_t len, const char *index,
                            struct event *ev)
{
    const struct jsonl_es_map *m = &p->es_map;
    const char *w = scan_doc(p, line, len);
    if (!w)
        w = take_ts(p, ev);
    if (w)
        return w;
    if (!take_string(p, &p->host_names, &ev->host))
        ev->host = slice_cstr(p->host);
    if ((w = es_event(p, m, index, ev)))
        return w;
    if ((w = event_check_names(&p->lim, ev->host, ev->name)))
        return w;
    if (p->nfields == 0)
        return "no fields (a document needs one besides its timestamp, host and event)";
    rename_msg(p);
    return event_done(p, ev);
}

enum event_kind jsonl_parse_es(struct jsonl_parser *p, const char *line, size_t len,
                               const char *index, struct event *ev, const char **reason)
{
    const char *w = parse_es(p, line, len, index, ev);
    if (w) {
        *reason = w;
        return EVENT_BAD;
    }
    return EVENT_OK;
}

/* --- JSON lines -------------------------------------------------------- */

static const char *header_type_error(const char *name)
{
    if (!strcmp(name, "ts"))
        return "\"ts\" must be an integer (ns) or an RFC 3339 string";
    return !strcmp(name, "host") ? "\"host\" must be a string" : "\"event\" must be a string";
}

/* The top-level "ts" (ns or RFC 3339), removed from the fields. */
static const char *take_line_ts(struct jsonl_parser *p, struct event *ev)
{
    ev->has_ts = false;
    ev->ts = 0;
    long i = field_index(p, "ts", 2);
    if (i < 0)
        return NULL;
    const struct rec_field *f = &p->fields[i];
    if (f->type == REC_INT) {
        ev->ts = f->v.i;
    } else if (f->type != REC_STRING) {
        return header_type_error("ts");
    } else if (time_parse_rfc3339_memo(&p->stamp_memo, f->v.s.ptr, f->v.s.len, &ev->ts)) {
        return why(p, "bad \"ts\" (want RFC 3339, e.g. 2024-05-01T10:00:00Z): ", f->v.s.ptr,
                   f->v.s.len);
    }
    ev->has_ts = true;
    remove_field(p, i);
    return NULL;
}

/* The top-level string field name, removed from the fields; dflt (NULL:
 * none) when the line has no such key or it is null. */
static const char *take_line_name(struct jsonl_parser *p, const char *name, const char *dflt,
                                  struct slice *out)
{
    long i = field_index(p, name, strlen(name));
    if (i < 0) {
        if (dflt)
            *out = slice_cstr(dflt);
        return NULL;
    }
    if (p->fields[i].type != REC_STRING)
        return header_type_error(name);
    *out = p->fields[i].v.s;
    remove_field(p, i);
    return NULL;
}

static const char *parse_doc(struct jsonl_parser *p, const char *line, size_t len, struct event *ev)
{
    const char *w = scan_doc(p, line, len);
    if (w)
        return w;
    if (p->bad_header)
        return header_type_error(p->bad_header);
    ev->name = slice_make(NULL, 0);
    if ((w = take_line_ts(p, ev)) || (w = take_line_name(p, "host", p->host, &ev->host)) ||
        (w = take_line_name(p, "event", p->event, &ev->name)))
        return w;
    if (!ev->name.ptr)
        return "missing \"event\" (the event name is required, or event= in the URL)";
    if ((w = event_check_names(&p->lim, ev->host, ev->name)))
        return w;
    if (p->nfields == 0)
        return "no fields (a row needs at least one besides ts, host and event)";
    return event_done(p, ev);
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
